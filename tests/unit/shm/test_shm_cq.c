/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * CQ arming: droce_shm_cq_arm() (client, ibv_req_notify_cq()) against
 * droce_shm_cq_fire() (engine, after publishing a completion).
 *
 * Single-threaded cases pin ibv_req_notify_cq() semantics: one event per
 * arm, a SOLICITED arm ignores ordinary completions, ANY wins over it.
 *
 * The threaded case is ibv_rc_pingpong -e in miniature, one completion in
 * flight at a time: the client asks for a completion, arms, polls once,
 * and if the CQ is empty blocks for the event without polling (re-arming
 * and polling once after each event; a stale one is allowed). The engine
 * publishes the completion and fires. A lost event (the engine missed the arm while the client's
 * poll missed the completion) leaves the client waiting; it gives up after
 * a few seconds and the test fails. This is the race a plain load of the
 * flag after publishing loses on x86, one time in a few hundred thousand.
 */

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_shm.h"

START_TEST(test_cq_arm_gives_one_event)
{
	struct droce_shm_ring *cq = ts_ring_new(DROCE_SHM_CQ, 8, 64);

	ck_assert(!droce_shm_cq_fire(cq, true));	/* not armed: no event */
	droce_shm_cq_arm(cq, false);
	ck_assert_uint_eq(atomic_load(&cq->flag), DROCE_SHM_ARM_ANY);
	ck_assert(droce_shm_cq_fire(cq, false));
	ck_assert_uint_eq(atomic_load(&cq->flag), 0);	/* disarmed */
	ck_assert(!droce_shm_cq_fire(cq, false));	/* one event per arm */
	free(cq);
}
END_TEST

START_TEST(test_cq_solicited_arm_waits_for_solicited_or_error)
{
	struct droce_shm_ring *cq = ts_ring_new(DROCE_SHM_CQ, 8, 64);

	droce_shm_cq_arm(cq, true);
	ck_assert(!droce_shm_cq_fire(cq, false));	/* ordinary: still armed */
	ck_assert_uint_eq(atomic_load(&cq->flag), DROCE_SHM_ARM_SOLICITED);
	ck_assert(droce_shm_cq_fire(cq, true));
	ck_assert_uint_eq(atomic_load(&cq->flag), 0);

	/* armed both ways: the next completion of any kind fires */
	droce_shm_cq_arm(cq, true);
	droce_shm_cq_arm(cq, false);
	ck_assert(droce_shm_cq_fire(cq, false));
	ck_assert_uint_eq(atomic_load(&cq->flag), 0);
	free(cq);
}
END_TEST

#define STALL_NS	(5 * 1000000000ll)

struct pingpong {
	struct droce_shm_ring *cq;
	uint32_t count;
	_Atomic uint32_t want;		/* (client) completions asked for */
	_Atomic uint32_t events;	/* (engine) the "completion channel" */
	_Atomic bool bad;
	char why[96];
};

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Wait a moment: spin first (so the other thread's next step meets ours
 * within nanoseconds, which is where the race lives), yield after a while
 * (so two CPUs are enough for both threads and the rest of the suite).
 */
static void
relax(unsigned int *spins)
{
	if (++*spins < 2000) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		return;
	}
	*spins = 0;
	sched_yield();
}

static void
pp_fail(struct pingpong *pp, const char *why, uint32_t a)
{
	if (!atomic_exchange(&pp->bad, true))
		snprintf(pp->why, sizeof(pp->why), "%s (%u)", why, a);
}

static void *
pp_engine(void *arg)
{
	struct pingpong *pp = arg;
	unsigned int spins = 0;
	uint32_t prod = 0;

	while (prod < pp->count && !atomic_load(&pp->bad)) {
		if (atomic_load_explicit(&pp->want, memory_order_acquire) == prod) {
			relax(&spins);
			continue;
		}
		*(uint64_t *)droce_shm_slot(pp->cq, prod) = prod;	/* the CQE: wr_id */
		droce_shm_publish(pp->cq, ++prod);
		if (droce_shm_cq_fire(pp->cq, false))
			atomic_fetch_add_explicit(&pp->events, 1, memory_order_release);
	}
	return NULL;
}

static void *
pp_client(void *arg)
{
	struct pingpong *pp = arg;
	uint32_t cons = 0, seen_events = 0, i;
	unsigned int spins = 0;

	for (i = 0; i < pp->count; i++) {
		int64_t since = now_ns();

		atomic_store_explicit(&pp->want, i + 1, memory_order_release);
		/*
		 * As ibv_rc_pingpong -e: arm, poll once; if that finds nothing,
		 * block for the event (no polling meanwhile: ibv_get_cq_event()
		 * sleeps in read()), then re-arm and poll once again. An event
		 * that brings nothing is an earlier round's: allowed.
		 */
		droce_shm_cq_arm(pp->cq, false);
		while (droce_shm_load_prod(pp->cq) == cons) {
			while (atomic_load_explicit(&pp->events, memory_order_acquire) ==
			       seen_events) {
				if (atomic_load(&pp->bad))
					return NULL;
				if (now_ns() - since > STALL_NS) {
					pp_fail(pp, "lost event: none for completion", i);
					return NULL;
				}
				relax(&spins);
			}
			seen_events = atomic_load_explicit(&pp->events, memory_order_acquire);
			droce_shm_cq_arm(pp->cq, false);
		}
		if (*(uint64_t *)droce_shm_slot(pp->cq, cons) != i) {
			pp_fail(pp, "wrong completion", i);
			return NULL;
		}
		droce_shm_release(pp->cq, ++cons);
	}
	return NULL;
}

START_TEST(test_cq_pingpong_never_loses_an_event)
{
	static struct pingpong pp;
	pthread_t e, c;

	memset(&pp, 0, sizeof(pp));
	pp.cq = ts_ring_new(DROCE_SHM_CQ, 4, 64);
	pp.count = TS_SCALE(2000000);
	ck_assert_int_eq(pthread_create(&e, NULL, pp_engine, &pp), 0);
	ck_assert_int_eq(pthread_create(&c, NULL, pp_client, &pp), 0);
	ck_assert_int_eq(pthread_join(c, NULL), 0);
	ck_assert_int_eq(pthread_join(e, NULL), 0);	/* it stops at count, or on bad */
	ck_assert_msg(!atomic_load(&pp.bad), "%s", pp.why);
	ck_assert_uint_eq(droce_shm_load_prod(pp.cq), pp.count);
	ck_assert_uint_gt(atomic_load(&pp.events), 0);	/* the event path was taken */
	if (getenv("CK_VERBOSITY") != NULL)
		fprintf(stderr, "cq pingpong: %u completions, %u events\n", pp.count,
			atomic_load(&pp.events));
	free(pp.cq);
}
END_TEST

TCase *
test_shm_cq_tcase(void)
{
	TCase *tc = tcase_create("cq_arm");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_cq_arm_gives_one_event);
	tcase_add_test(tc, test_cq_solicited_arm_waits_for_solicited_or_error);
	tcase_add_test(tc, test_cq_pingpong_never_loses_an_event);
	return tc;
}
