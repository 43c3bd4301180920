/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine's side of --idle wait: a worker with nothing to do sleeps in
 * epoll instead of polling. Before it sleeps it sets each client's DB ring
 * flag (the client's ring for this engine), so that a client ringing a
 * doorbell also writes its wake eventfd for this engine
 * (droce_shm_engine_asleep()); the timers bound the sleep. The flag is a
 * hint the client can overwrite: it only decides whether that client's
 * own doorbells wake us at once.
 */

#include <stdint.h>

#include "droce_shm_ops.h"
#include "verbs_engine_priv.h"

void
droce_engine_sleep(struct droce_engine *eng, bool asleep)
{
	struct droce_client *cl;

	for (cl = eng->dev->clients; cl != NULL; cl = cl->next)
		if (cl->db[eng->id].r != NULL && cl->wake_fd[eng->id] >= 0)
			droce_shm_engine_sleep(cl->db[eng->id].r, asleep);
	if (asleep)
		droce_shm_sleep_fence();
}

uint64_t
droce_engine_wait_budget(const struct droce_engine *eng, uint64_t now)
{
	uint64_t deadline = UINT64_MAX;
	uint32_t i;

	if (eng->n_active > 0 || eng->loop_head != eng->loop_tail)
		return 0;
	for (i = 0; i < eng->n_live; i++) {
		const struct dev_qp *qp = eng->live[i];
		uint64_t t;

		/* a post whose doorbell was lost (full DB ring) is found by the timer scan */
		if (droce_shm_load_prod(qp->sq.r) != qp->sq.idx)
			t = now;
		else
			t = droce_tqp_next_deadline(&qp->tqp);
		if (t < deadline)
			deadline = t;
	}
	/* timers run in the scan, at most once per ENG_TIMER_NS */
	if (deadline != UINT64_MAX && deadline < eng->next_timer)
		deadline = eng->next_timer;
	/* a paced QP is woken by the pass itself, at its time */
	if (eng->n_paced > 0 && engine_cc_next_wake(eng) < deadline)
		deadline = engine_cc_next_wake(eng);
	if (deadline == UINT64_MAX)
		return deadline;
	return deadline > now ? deadline - now : 0;
}
