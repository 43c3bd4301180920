/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine's scheduler, one pass per call: loopback frames delivered,
 * the timers of every live QP once a millisecond, paced QPs that are due
 * woken, then each active QP polled with a budget until it has nothing
 * left to send (a paced one until its pacer says wait: verbs_engine_cc.c)
 * while the port has room for what a poll may send; then a quiescent
 * point (verbs_dev_reclaim.c).
 */

#include <string.h>

#include <rte_rcu_qsbr.h>

#include "verbs_engine_priv.h"

static void
active_reverse(struct dev_qp **a, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n / 2; i++) {
		struct dev_qp *t = a[i];

		a[i] = a[n - 1 - i];
		a[n - 1 - i] = t;
	}
}

/*
 * The walk stopped at @p stop of @p n for a full link, @p keep of the QPs
 * before it still active: those not reached go first next pass, then
 * the ones polled, then those activated meanwhile, so that a link that
 * fills every pass starves no QP.
 */
static void
active_defer_polled(struct droce_engine *eng, uint32_t keep, uint32_t stop, uint32_t n)
{
	struct dev_qp **a = eng->active;
	uint32_t waiting = n - stop;

	memmove(a + keep, a + stop, (eng->n_active - stop) * sizeof(*a));
	eng->n_active -= stop - keep;
	/* [polled][waiting] -> [waiting][polled] */
	active_reverse(a, keep);
	active_reverse(a + keep, waiting);
	active_reverse(a, keep + waiting);
}

unsigned int
droce_engine_poll(struct droce_engine *eng, uint64_t now)
{
	unsigned int (*room)(void *) = eng->dev->conf.port_ops->tx_room;
	unsigned int work = 0;
	uint32_t i, keep, n;

	eng->now = now;
	/* loopback frames: parsed as if they came from the wire */
	while (eng->loop_head != eng->loop_tail) {
		struct engine_loop_frame *f = &eng->loop[eng->loop_head % ENG_LOOP_SLOTS];
		struct droce_pkt pkt;

		if (droce_pkt_parse(&pkt, f->data, f->len, f->len) == DROCE_WIRE_OK) {
			int owner = droce_engine_owner(eng, &pkt);

			/* another engine's QP: if its ring is full the frame waits here, not lost */
			if (owner >= 0 && (unsigned int)owner != eng->id &&
			    engine_handoff(eng, (unsigned int)owner, f->data, f->len, false) < 0)
				break;
			ENG_CNT(eng, RX_LOOPBACK);
			if (owner < 0 || (unsigned int)owner == eng->id)
				droce_engine_rx(eng, &pkt, f->data, f->len, false, now);
		}
		eng->loop_head++;
		work++;
	}
	eng->polls++;
	if (now >= eng->next_timer) {
		eng->next_timer = now + ENG_TIMER_NS;
		for (i = 0; i < eng->n_live; i++) {
			struct dev_qp *qp = eng->live[i];

			/* a client that forgot its doorbell is found here too */
			if (droce_shm_load_prod(qp->sq.r) != qp->sq.idx)
				engine_qp_drain(eng, qp, now);
			droce_tqp_timer(&qp->tqp, now);
			if (droce_tqp_has_work(&qp->tqp))
				engine_qp_activate(eng, qp);
		}
	}
	if (eng->n_paced > 0)
		engine_cc_wake(eng, now);
	/* QPs activated during the walk are polled on the next pass */
	for (i = 0, keep = 0, n = eng->n_active; i < n; i++) {
		struct dev_qp *qp = eng->active[i];
		bool more;

		if (room != NULL && room(eng->port_arg) < ENG_TX_MARGIN) {
			ENG_CNT(eng, TX_HELD);
			active_defer_polled(eng, keep, i, n);
			goto done;
		}
		if (engine_qp_paced(qp)) {
			more = engine_cc_poll(eng, qp, now, &work);
		} else {
			work += droce_tqp_poll(&qp->tqp, now, 32);
			more = true;
		}
		engine_qp_check_drained(qp);	/* an ACK received activates the QP */
		if (more && droce_tqp_has_work(&qp->tqp))
			eng->active[keep++] = qp;
		else
			qp->active = false;
	}
	for (; i < eng->n_active; i++)
		eng->active[keep++] = eng->active[i];
	eng->n_active = keep;
done:
	/* it holds no key, record or host pointer between passes */
	rte_rcu_qsbr_quiescent(eng->dev->qsbr, eng->id);
	return work;
}
