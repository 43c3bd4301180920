/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * SPSC rings across two threads, the way SQ/RQ (client -> engine) and CQ
 * (engine -> client) rings are used: the producer fills slots and
 * publishes prod with droce_shm_publish(), the consumer reads slots up to
 * droce_shm_load_prod() and gives them back with droce_shm_release().
 * Millions of items; every word of every slot is checked, so a slot read
 * before it was written, or overwritten before it was read, fails. The
 * indices start just below 2^32 so they wrap early. Threads record
 * failures; the test thread asserts (Check's asserts belong to it).
 */

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "test_shm.h"

struct spsc {
	struct droce_shm_ring *r;
	uint32_t start;			/* first index */
	uint32_t count;			/* items to pass */
	uint32_t words;			/* uint64_t per slot */
	/* consumer's findings */
	uint32_t received;
	uint32_t bad_item;		/* index of the first bad item, if any */
	uint32_t bad_word;
	bool bad;
	/* producer's: how often it found the ring full */
	uint64_t full_waits;
};

static uint64_t
pattern(uint32_t item, uint32_t word)
{
	return word == 0 ? item : (item * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)word << 40);
}

static void *
producer(void *arg)
{
	struct spsc *t = arg;
	uint32_t nslots = droce_shm_nslots(t->r);
	uint32_t prod = t->start, end = t->start + t->count;
	uint32_t cons = droce_shm_load_cons(t->r);
	uint32_t item = 0, w;

	while (prod != end) {
		while (prod - cons >= nslots) {
			droce_shm_publish(t->r, prod);	/* never wait on unpublished work */
			cons = droce_shm_load_cons(t->r);
			if (prod - cons >= nslots) {
				t->full_waits++;
				sched_yield();
			}
		}
		uint64_t *slot = droce_shm_slot(t->r, prod);

		for (w = 0; w < t->words; w++)
			slot[w] = pattern(item, w);
		prod++;
		item++;
		/* publish in batches of varying size: every 1 to 8 items */
		if ((item * 2654435761u) >> 29 == 0 || prod == end)
			droce_shm_publish(t->r, prod);
	}
	droce_shm_publish(t->r, prod);
	return NULL;
}

static void *
consumer(void *arg)
{
	struct spsc *t = arg;
	uint32_t cons = t->start, end = t->start + t->count, item = 0, w;

	while (cons != end) {
		uint32_t prod = droce_shm_load_prod(t->r);

		if (prod == cons) {
			sched_yield();
			continue;
		}
		if (prod - cons > droce_shm_nslots(t->r)) {
			t->bad = true;		/* an impossible index */
			t->bad_item = item;
			t->bad_word = UINT32_MAX;
			return NULL;
		}
		while (cons != prod) {
			const uint64_t *slot = droce_shm_slot(t->r, cons);

			for (w = 0; w < t->words; w++)
				if (slot[w] != pattern(item, w) && !t->bad) {
					t->bad = true;
					t->bad_item = item;
					t->bad_word = w;
				}
			cons++;
			item++;
			/* give slots back in batches too: every fourth, and at the end */
			if ((cons & 3) == 0 || cons == prod)
				droce_shm_release(t->r, cons);
		}
	}
	t->received = item;
	return NULL;
}

static const struct {
	uint32_t nslots, slot_size, count;
	enum droce_shm_kind kind;
} spsc_cfg[] = {
	{ 256, 64, 4000000, DROCE_SHM_CQ },	/* CQ-shaped */
	{ 64, 512, 1000000, DROCE_SHM_SQ },	/* SQ-shaped: whole send-WQE slots */
	{ 1, 64, 400000, DROCE_SHM_CQ },	/* one slot: full after every item */
};

START_TEST(test_spsc_passes_every_item_intact_across_threads)	/* once per config _i */
{
	struct spsc t = {
		.r = ts_ring_new(spsc_cfg[_i].kind, spsc_cfg[_i].nslots, spsc_cfg[_i].slot_size),
		.start = UINT32_MAX - 1000,
		.count = TS_SCALE(spsc_cfg[_i].count),
		.words = spsc_cfg[_i].slot_size / 8,
	};
	pthread_t p, c;

	droce_shm_publish(t.r, t.start);
	droce_shm_release(t.r, t.start);
	ck_assert_int_eq(pthread_create(&c, NULL, consumer, &t), 0);
	ck_assert_int_eq(pthread_create(&p, NULL, producer, &t), 0);
	ck_assert_int_eq(pthread_join(p, NULL), 0);
	ck_assert_int_eq(pthread_join(c, NULL), 0);

	ck_assert_msg(!t.bad, "item %u word %u wrong", t.bad_item, t.bad_word);
	ck_assert_uint_eq(t.received, t.count);
	ck_assert_uint_eq(droce_shm_load_prod(t.r), t.start + t.count);
	ck_assert_uint_eq(droce_shm_load_cons(t.r), t.start + t.count);
	/* the ring was small enough to fill (the consumer is slowed by its checks) */
	if (spsc_cfg[_i].nslots == 1)
		ck_assert_uint_gt(t.full_waits, 0);
	free(t.r);
}
END_TEST

TCase *
test_shm_spsc_tcase(void)
{
	TCase *tc = tcase_create("spsc");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_spsc_passes_every_item_intact_across_threads, 0,
			    (int)DROCE_DIM(spsc_cfg));
	return tc;
}
