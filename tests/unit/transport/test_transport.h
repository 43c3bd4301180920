/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_TRANSPORT_H
#define DROCE_TEST_TRANSPORT_H

#include <check.h>

#include "droce_wire_psn.h"
#include "sim.h"

TCase *tcase_transport_ops(void);
TCase *tcase_transport_reliability(void);
TCase *tcase_transport_errors(void);
TCase *tcase_transport_odp(void);

/* Deterministic payload byte @off of message @seq. */
static inline uint8_t
test_pattern(uint64_t seq, uint64_t off)
{
	return (uint8_t)((seq * 131u) ^ (off * 7u) ^ (off >> 8));
}

/* Completions waiting in a CQ. */
static inline uint32_t
test_cq_count(const struct sim_cq *cq)
{
	return cq->tail - cq->head;
}

/* sim_run() condition: CQ @a holds at least @b entries. */
struct test_wait_cq {
	struct sim_cq *cq;
	uint32_t n;
};

static inline bool
test_cq_reached(struct sim *sim, void *arg)
{
	struct test_wait_cq *w = arg;

	(void)sim;
	return test_cq_count(w->cq) >= w->n;
}

static inline bool
test_wait(struct sim *sim, struct sim_cq *cq, uint32_t n)
{
	struct test_wait_cq w = { cq, n };

	return sim_run(sim, test_cq_reached, &w, sim->now + 10ull * 1000 * 1000 * 1000);
}

/* Two nodes, one 64 KiB region each (every access right), QP 0 connected. */
struct test_pair {
	struct sim *sim;
	uint8_t *buf[2];
	uint32_t key[2];
};

#define TEST_PAIR_BYTES 65536

void test_pair_setup(struct test_pair *p, enum ibv_qp_type type, uint32_t mtu, uint64_t seed,
		     uint8_t fill);
void test_pair_teardown(struct test_pair *p);

/* A signaled work request with one SGE. */
struct droce_send_wqe test_wqe(uint32_t op, uint64_t wr_id, void *addr, uint32_t len,
			       uint32_t lkey);

#endif /* DROCE_TEST_TRANSPORT_H */
