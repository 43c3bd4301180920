/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_SIM_TIMEQ_H
#define DROCE_TEST_SIM_TIMEQ_H

/*
 * What the simulated links of the unit tests share (tests/unit/transport's
 * frames, tests/unit/cm's MADs): a queue of deliveries ordered by time,
 * ties kept in push order (a binary min-heap on (t, seq)), and the seeded
 * random numbers that decide loss, duplication and reordering.
 * Single-threaded; an item embeds struct sim_timeq_item as its first member.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct sim_timeq_item {
	uint64_t t;		/* delivery time, ns */
	uint64_t seq;		/* set by sim_timeq_push() */
};

struct sim_timeq {
	struct sim_timeq_item **heap;
	size_t n;
	size_t cap;
	uint64_t seq;
};

static inline bool
sim_timeq_before(const struct sim_timeq_item *a, const struct sim_timeq_item *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static inline void
sim_timeq_push(struct sim_timeq *q, struct sim_timeq_item *it)
{
	size_t i;

	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 256;
		q->heap = realloc(q->heap, q->cap * sizeof(*q->heap));
		if (q->heap == NULL)
			abort();
	}
	it->seq = q->seq++;
	i = q->n++;
	while (i > 0 && sim_timeq_before(it, q->heap[(i - 1) / 2])) {
		q->heap[i] = q->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->heap[i] = it;
}

/* @return the earliest item, or NULL when the queue is empty. */
static inline struct sim_timeq_item *
sim_timeq_pop(struct sim_timeq *q)
{
	struct sim_timeq_item *top, *last;
	size_t i = 0;

	if (q->n == 0)
		return NULL;
	top = q->heap[0];
	last = q->heap[--q->n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && sim_timeq_before(q->heap[c + 1], q->heap[c]))
			c++;
		if (!sim_timeq_before(q->heap[c], last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (q->n > 0)
		q->heap[i] = last;
	return top;
}

/* xorshift64*: small, seeded, good enough for test impairments */
static inline uint64_t
sim_rand64(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

/* true with probability @p */
static inline bool
sim_chance(uint64_t *state, double p)
{
	return p > 0 && (double)(sim_rand64(state) >> 11) / (double)(1ull << 53) < p;
}

#endif /* DROCE_TEST_SIM_TIMEQ_H */
