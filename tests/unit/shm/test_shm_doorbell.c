/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The doorbell ring: many client threads ring, one engine thread takes.
 *
 * Single-threaded cases pin the rules: a set flag suppresses a second
 * doorbell, a full ring says -EAGAIN and leaves the flag clear for the
 * retry, take stops at a reserved but unfilled slot, respects its max and
 * mirrors cons. The engine's view keeps working when the client corrupts
 * the header.
 *
 * Threaded cases: four producers and one consumer on a small ring, so it
 * fills constantly and producers retry on -EAGAIN:
 *  - with a fresh flag per call (no de-duplication), every handle arrives
 *    exactly once and each producer's handles in the order it rang them;
 *  - with shared per-QP flags, as the shim uses them, the consumer clears
 *    a QP's flag and then reads the QP's "producer index" (a counter each
 *    producer bumps before ringing): when all is done it has seen every
 *    bump (no lost wake-up), having taken fewer doorbells than there were
 *    posts (de-duplication).
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_shm.h"

#define NPROD 4

/* A DB ring of @p nslots with the default start or indices moved to @p start. */
static struct droce_shm_ring *
db_new(uint32_t nslots, bool near_wrap)
{
	struct droce_shm_ring *db = ts_ring_new(DROCE_SHM_DB, nslots, sizeof(struct droce_shm_db));

	if (near_wrap)
		ts_db_ring_start_at(db, UINT32_MAX - 3 * nslots / 2);
	return db;
}

START_TEST(test_doorbell_rings_once_while_the_flag_is_set)
{
	struct droce_shm_ring *db = db_new(8, false);
	_Atomic uint32_t flag = 0;
	uint32_t cons = 0, h[8];

	ck_assert_int_eq(droce_shm_doorbell(db, &flag, 42), 0);
	ck_assert_uint_eq(atomic_load(&flag), 1);
	ck_assert_int_eq(droce_shm_doorbell(db, &flag, 42), 0);	/* already pending */
	ck_assert_int_eq(droce_shm_doorbell(db, &flag, 42), 0);
	ck_assert_uint_eq(atomic_load(&db->reserve), 1);

	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 1);
	ck_assert_uint_eq(h[0], 42);
	ck_assert_uint_eq(cons, 1);
	ck_assert_uint_eq(droce_shm_load_cons(db), 1);	/* mirrored */
	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 0);

	/* still set: the engine has not cleared it, so no new doorbell */
	ck_assert_int_eq(droce_shm_doorbell(db, &flag, 42), 0);
	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 0);

	droce_shm_doorbell_clear(&flag);
	ck_assert_uint_eq(atomic_load(&flag), 0);
	ck_assert_int_eq(droce_shm_doorbell(db, &flag, 42), 0);
	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 1);
	ck_assert_uint_eq(h[0], 42);
	free(db);
}
END_TEST

START_TEST(test_doorbell_full_ring_says_eagain_and_clears_the_flag)	/* _i: near wrap */
{
	struct droce_shm_ring *db = db_new(4, _i != 0);
	_Atomic uint32_t flag[6] = { 0 };
	uint32_t start = atomic_load(&db->reserve), cons = start, h[8], i;

	for (i = 0; i < 4; i++)
		ck_assert_int_eq(droce_shm_doorbell(db, &flag[i], 100 + i), 0);
	ck_assert_int_eq(droce_shm_doorbell(db, &flag[4], 104), -EAGAIN);
	ck_assert_uint_eq(atomic_load(&flag[4]), 0);	/* a retry will ring */
	ck_assert_uint_eq(atomic_load(&db->reserve), start + 4);	/* nothing reserved */
	ck_assert_int_eq(droce_shm_doorbell(db, &flag[4], 104), -EAGAIN);

	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 1), 1);	/* max respected */
	ck_assert_uint_eq(h[0], 100);
	ck_assert_int_eq(droce_shm_doorbell(db, &flag[4], 104), 0);	/* room again */
	ck_assert_int_eq(droce_shm_doorbell(db, &flag[5], 105), -EAGAIN);

	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 4);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(h[i], 101 + i);
	ck_assert_uint_eq(cons, start + 5);
	ck_assert_uint_eq(droce_shm_load_cons(db), start + 5);
	free(db);
}
END_TEST

START_TEST(test_take_stops_at_a_reserved_unfilled_slot)
{
	struct droce_shm_ring *db = db_new(8, false);
	_Atomic uint32_t flag = 0;
	struct droce_shm_db *s0;
	uint32_t cons = 0, h[8];

	/* a producer reserved index 0 and was preempted before filling it */
	atomic_store(&db->reserve, 1);
	/* another rang after it, into index 1 */
	ck_assert_int_eq(droce_shm_doorbell(db, &flag, 9), 0);
	ck_assert_uint_eq(atomic_load(&db->reserve), 2);

	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 0);
	ck_assert_uint_eq(cons, 0);
	ck_assert_uint_eq(droce_shm_load_cons(db), 0);

	/* the first producer resumes: both come out, in ring order */
	s0 = droce_shm_slot(db, 0);
	s0->handle = 8;
	atomic_store_explicit(&s0->seq, 1, memory_order_release);
	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 2);
	ck_assert_uint_eq(h[0], 8);
	ck_assert_uint_eq(h[1], 9);
	free(db);
}
END_TEST

START_TEST(test_take_ignores_a_previous_lap_slot)
{
	struct droce_shm_ring *db = db_new(4, false);
	_Atomic uint32_t flag = 0;
	uint32_t cons = 0, h[8], lap;

	/* go round several times, so every slot holds an old seq */
	for (lap = 0; lap < 12; lap++) {
		ck_assert_int_eq(droce_shm_doorbell(db, &flag, lap), 0);
		ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 1);
		ck_assert_uint_eq(h[0], lap);
		droce_shm_doorbell_clear(&flag);
	}
	/* nothing new: the slots' old seqs are index + 1 - k * nslots, never cons + 1 */
	ck_assert_uint_eq(droce_shm_doorbell_take(db, &cons, h, 8), 0);
	free(db);
}
END_TEST

START_TEST(test_take_view_survives_a_corrupted_header)
{
	struct droce_shm_ring *db = db_new(4, false);
	struct droce_shm_view v;
	_Atomic uint32_t flag[3] = { 0 };
	uint32_t h[8], i;

	ck_assert_int_eq(droce_shm_view_init(&v, db), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(droce_shm_doorbell(db, &flag[i], 50 + i), 0);

	/* the client rewrites the geometry: the engine must not follow it */
	db->log2_nslots = 24;
	db->log2_slot_size = 16;
	ck_assert_uint_eq(droce_shm_doorbell_take_view(&v, h, 8), 3);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(h[i], 50 + i);
	ck_assert_uint_eq(v.idx, 3);
	ck_assert_uint_eq(droce_shm_load_cons(db), 3);

	/* garbage in the slots is only garbage: seq must equal idx + 1 */
	memset(db->slots, 0xff, 4 * sizeof(struct droce_shm_db));
	ck_assert_uint_eq(droce_shm_doorbell_take_view(&v, h, 8), 0);
	/* a forged slot yields the client's handle, which the engine then looks up */
	((struct droce_shm_db *)droce_shm_view_slot(&v, 3))->handle = 0xbad;
	atomic_store(&((struct droce_shm_db *)droce_shm_view_slot(&v, 3))->seq, 4);
	ck_assert_uint_eq(droce_shm_doorbell_take_view(&v, h, 8), 1);
	ck_assert_uint_eq(h[0], 0xbad);
	free(db);
}
END_TEST

/* ---- four producers, one consumer ---- */

/* How long a thread waits for progress before it calls the run hung. */
#define STALL_NS	(5 * 1000000000ll)

struct mpsc {
	struct droce_shm_ring *db;
	struct droce_shm_view v;	/* the consumer's */
	uint32_t per_prod;		/* doorbells (or posts) per producer */
	bool ping_pong;			/* producers wait for each post to be seen */
	_Atomic uint32_t ready;		/* producers waiting for the start */
	_Atomic uint32_t done;		/* producers finished */
	uint64_t eagain[NPROD];		/* each producer's own */
	/* exactly-once run: what the consumer saw */
	uint32_t next[NPROD];
	uint64_t total;
	/* wake-up runs: per-QP flags and "producer indices" */
	_Atomic uint32_t flag[8];
	_Atomic uint32_t posted[8];
	_Atomic uint32_t seen[8];	/* posted[] as the consumer last read it */
	uint64_t rung[8];		/* doorbells taken per QP */
	/* first failure, from any thread; every thread gives up when it is set */
	_Atomic bool bad;
	char why[128];
};

struct prod_arg {
	struct mpsc *m;
	uint32_t id;
};

static void
record_failure(struct mpsc *m, const char *why, uint32_t a, uint32_t b)
{
	if (!atomic_exchange(&m->bad, true))
		snprintf(m->why, sizeof(m->why), "%s (%u, %u)", why, a, b);
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
start_together(struct mpsc *m)
{
	atomic_fetch_add(&m->ready, 1);
	while (atomic_load(&m->ready) < NPROD)
		sched_yield();
}

/* Ring until it is not -EAGAIN; false if the run failed or stalled meanwhile. */
static bool
ring(struct prod_arg *a, _Atomic uint32_t *flag, uint32_t handle)
{
	struct mpsc *m = a->m;
	int64_t since = 0;
	int ret;

	while ((ret = droce_shm_doorbell(m->db, flag, handle)) == -EAGAIN) {
		m->eagain[a->id]++;
		if (atomic_load(&m->bad))
			return false;
		if (since == 0)
			since = now_ns();
		else if (now_ns() - since > STALL_NS) {
			record_failure(m, "ring full for good", a->id, handle);
			return false;
		}
		sched_yield();
	}
	if (ret != 0) {
		record_failure(m, "doorbell failed", a->id, (uint32_t)-ret);
		return false;
	}
	return true;
}

/* Ring with a private flag each time: nothing is de-duplicated. */
static void *
exact_producer(void *arg)
{
	struct prod_arg *a = arg;
	struct mpsc *m = a->m;
	uint32_t i;

	start_together(m);
	for (i = 0; i < m->per_prod; i++) {
		_Atomic uint32_t flag = 0;

		if (!ring(a, &flag, a->id << 24 | i))
			break;
		/* after -EAGAIN the flag must have been clear for the retry */
		if (atomic_load_explicit(&flag, memory_order_relaxed) != 1) {
			record_failure(m, "flag not set by a doorbell", a->id, i);
			break;
		}
	}
	atomic_fetch_add_explicit(&m->done, 1, memory_order_release);
	return NULL;
}

static void *
exact_consumer(void *arg)
{
	struct mpsc *m = arg;
	uint64_t want = (uint64_t)NPROD * m->per_prod;
	int64_t idle_since = 0;
	uint32_t h[32];
	unsigned int n, k;

	while (m->total < want && !atomic_load(&m->bad)) {
		bool finished = atomic_load_explicit(&m->done, memory_order_acquire) == NPROD;

		n = droce_shm_doorbell_take_view(&m->v, h, DROCE_DIM(h));
		if (n == 0) {
			if (finished) {		/* everything rung, and not all of it here */
				record_failure(m, "doorbells lost", (uint32_t)m->total,
					       (uint32_t)want);
				return NULL;
			}
			if (idle_since == 0)
				idle_since = now_ns();
			else if (now_ns() - idle_since > STALL_NS) {
				record_failure(m, "consumer stalled at", m->v.idx, 0);
				return NULL;
			}
			sched_yield();
			continue;
		}
		idle_since = 0;
		for (k = 0; k < n; k++) {
			uint32_t p = h[k] >> 24, i = h[k] & 0xffffff;

			if (p >= NPROD) {
				record_failure(m, "handle from no producer", h[k], 0);
				return NULL;
			}
			if (i != m->next[p]) {	/* lost, duplicated or out of order */
				record_failure(m, "producer's handle out of sequence", p, i);
				return NULL;
			}
			m->next[p]++;
		}
		m->total += n;
	}
	return NULL;
}

static void
run_threads(struct mpsc *m, void *(*prod)(void *), void *(*cons)(void *))
{
	struct prod_arg a[NPROD];
	pthread_t p[NPROD], c;
	uint32_t i;

	ck_assert_int_eq(droce_shm_view_init(&m->v, m->db), 0);
	m->v.idx = atomic_load(&m->db->cons);	/* the engine's index starts where the ring does */
	ck_assert_int_eq(pthread_create(&c, NULL, cons, m), 0);
	for (i = 0; i < NPROD; i++) {
		a[i] = (struct prod_arg){ .m = m, .id = i };
		ck_assert_int_eq(pthread_create(&p[i], NULL, prod, &a[i]), 0);
	}
	for (i = 0; i < NPROD; i++)
		ck_assert_int_eq(pthread_join(p[i], NULL), 0);
	ck_assert_int_eq(pthread_join(c, NULL), 0);
	ck_assert_msg(!atomic_load(&m->bad), "%s", m->why);
}

START_TEST(test_four_producers_every_handle_exactly_once)	/* _i: near wrap */
{
	static struct mpsc m;	/* zeroed; too big for a comfortable stack */
	uint64_t eagain = 0;
	uint32_t i, h[4];

	memset(&m, 0, sizeof(m));
	m.db = db_new(64, _i != 0);
	m.per_prod = TS_SCALE(1000000);
	run_threads(&m, exact_producer, exact_consumer);

	for (i = 0; i < NPROD; i++) {
		ck_assert_uint_eq(m.next[i], m.per_prod);
		eagain += m.eagain[i];
	}
	ck_assert_uint_eq(m.total, (uint64_t)NPROD * m.per_prod);
	ck_assert_uint_eq(droce_shm_doorbell_take_view(&m.v, h, 4), 0);	/* nothing extra */
	ck_assert_uint_eq(atomic_load(&m.db->reserve), m.v.idx);
	ck_assert_uint_eq(atomic_load(&m.db->cons), m.v.idx);
	/* 64 slots against four eager producers: the full path was exercised */
	ck_assert_uint_gt(eagain, 0);
	free(m.db);
}
END_TEST

#define WAKE_QPS 8

/*
 * Post to a QP: bump its index, then ring its flag. Free-running, the
 * producers share all QPs. Ping-pong, each has two QPs of its own (64 posts
 * to one, then 64 to the other) and waits
 * until the engine has seen each post before the next, like a client
 * waiting for a completion: a lost wake-up is then a hang, not hidden by
 * the next post.
 */
static void *
wake_producer(void *arg)
{
	struct prod_arg *a = arg;
	struct mpsc *m = a->m;
	uint32_t i;

	start_together(m);
	for (i = 0; i < m->per_prod; i++) {
		/* ping-pong: 64 posts in a row to one QP, so the next post races the
		 * engine's clear of the flag the previous one set */
		uint32_t qp = m->ping_pong ? a->id * 2 + ((i >> 6) & 1) : (a->id + i) % WAKE_QPS;
		uint32_t mine;
		int64_t since;

		/* release, as droce_shm_publish() stores prod */
		mine = atomic_fetch_add_explicit(&m->posted[qp], 1, memory_order_release) + 1;
		if (!ring(a, &m->flag[qp], qp))
			break;
		if (!m->ping_pong)
			continue;
		since = now_ns();
		while (atomic_load_explicit(&m->seen[qp], memory_order_relaxed) < mine) {
			if (atomic_load(&m->bad))
				goto out;
			if (now_ns() - since > STALL_NS) {
				record_failure(m, "lost wake-up: post never seen", qp, mine);
				goto out;
			}
			sched_yield();
		}
	}
out:
	atomic_fetch_add_explicit(&m->done, 1, memory_order_release);
	return NULL;
}

/* The engine: take a doorbell, clear the QP's flag, then read its index. */
static void *
wake_consumer(void *arg)
{
	struct mpsc *m = arg;
	uint32_t h[16];
	unsigned int n, k;

	for (;;) {
		/* acquire: pairs with the producers' release add; their doorbells are in */
		bool finished = atomic_load_explicit(&m->done, memory_order_acquire) == NPROD;

		n = droce_shm_doorbell_take_view(&m->v, h, DROCE_DIM(h));
		for (k = 0; k < n; k++) {
			uint32_t qp = h[k];

			if (qp >= WAKE_QPS) {
				record_failure(m, "handle of no QP", qp, 0);
				return NULL;
			}
			m->rung[qp]++;
			droce_shm_doorbell_clear(&m->flag[qp]);
			/* acquire: pairs with the producers' release add */
			atomic_store_explicit(&m->seen[qp],
					      atomic_load_explicit(&m->posted[qp],
								   memory_order_acquire),
					      memory_order_relaxed);
		}
		if (n == 0) {
			if (finished || atomic_load(&m->bad))
				return NULL;	/* all rung before, and all taken now */
			sched_yield();
		}
	}
}

static void
check_wake_run(struct mpsc *m)
{
	uint64_t rung = 0, eagain = 0;
	uint32_t i;

	for (i = 0; i < WAKE_QPS; i++) {
		/* every post was followed by a doorbell the engine saw it through */
		ck_assert_uint_eq(atomic_load(&m->posted[i]), NPROD * m->per_prod / WAKE_QPS);
		ck_assert_msg(atomic_load(&m->seen[i]) == atomic_load(&m->posted[i]),
			      "QP %u: engine saw %u of %u posts", i, atomic_load(&m->seen[i]),
			      atomic_load(&m->posted[i]));
		ck_assert_uint_gt(m->rung[i], 0);
		rung += m->rung[i];
	}
	for (i = 0; i < NPROD; i++)
		eagain += m->eagain[i];
	/* no more doorbells than posts, ever */
	ck_assert_uint_le(rung, (uint64_t)NPROD * m->per_prod);
	ck_assert_uint_eq(atomic_load(&m->db->cons), m->v.idx);
	ck_assert_uint_eq(atomic_load(&m->db->reserve), m->v.idx);
	if (getenv("CK_VERBOSITY") != NULL)	/* CK_VERBOSITY=verbose prints it */
		fprintf(stderr, "%s: %u posts, %llu doorbells, %llu -EAGAIN\n",
			m->ping_pong ? "ping-pong" : "free-running", NPROD * m->per_prod,
			(unsigned long long)rung, (unsigned long long)eagain);
}

START_TEST(test_shared_flags_lose_no_wakeup_and_deduplicate)	/* _i: near wrap */
{
	static struct mpsc m;
	uint64_t rung = 0;
	uint32_t i;

	memset(&m, 0, sizeof(m));
	/* fewer slots than QPs: the ring fills even with de-duplication */
	m.db = db_new(4, _i != 0);
	m.per_prod = TS_SCALE(400000) / WAKE_QPS * WAKE_QPS;
	run_threads(&m, wake_producer, wake_consumer);
	check_wake_run(&m);
	for (i = 0; i < WAKE_QPS; i++)
		rung += m.rung[i];
	/* de-duplicated: four threads share each flag, so far fewer doorbells than posts */
	ck_assert_uint_lt(rung, (uint64_t)NPROD * m.per_prod);
	free(m.db);
}
END_TEST

START_TEST(test_waiting_producers_are_always_woken)	/* _i: near wrap */
{
	static struct mpsc m;

	memset(&m, 0, sizeof(m));
	m.db = db_new(4, _i != 0);
	m.ping_pong = true;
	m.per_prod = TS_SCALE(100000) / 128 * 128;	/* both QPs get as many */
	run_threads(&m, wake_producer, wake_consumer);
	check_wake_run(&m);
	free(m.db);
}
END_TEST

TCase *
test_shm_doorbell_tcase(void)
{
	TCase *tc = tcase_create("doorbell");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_doorbell_rings_once_while_the_flag_is_set);
	tcase_add_loop_test(tc, test_doorbell_full_ring_says_eagain_and_clears_the_flag, 0, 2);
	tcase_add_test(tc, test_take_stops_at_a_reserved_unfilled_slot);
	tcase_add_test(tc, test_take_ignores_a_previous_lap_slot);
	tcase_add_test(tc, test_take_view_survives_a_corrupted_header);
	tcase_add_loop_test(tc, test_four_producers_every_handle_exactly_once, 0, 2);
	tcase_add_loop_test(tc, test_shared_flags_lose_no_wakeup_and_deduplicate, 0, 2);
	tcase_add_loop_test(tc, test_waiting_producers_are_always_woken, 0, 2);
	return tc;
}
