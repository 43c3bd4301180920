/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* The two-node fixture and work-request helper the transport tests share. */

#include <stdlib.h>
#include <string.h>

#include "test_transport.h"

void
test_pair_setup(struct test_pair *p, enum ibv_qp_type type, uint32_t mtu, uint64_t seed,
		uint8_t fill)
{
	const uint32_t all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	int s;

	p->sim = sim_new(seed);
	for (s = 0; s < 2; s++) {
		p->buf[s] = aligned_alloc(64, TEST_PAIR_BYTES);
		memset(p->buf[s], fill, TEST_PAIR_BYTES);
		p->key[s] = sim_reg_mr(&p->sim->node[s], p->buf[s], TEST_PAIR_BYTES, all);
	}
	sim_connect(p->sim, type, 0, mtu);
}

void
test_pair_teardown(struct test_pair *p)
{
	free(p->buf[0]);
	free(p->buf[1]);
	sim_free(p->sim);
}

struct droce_send_wqe
test_wqe(uint32_t op, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct droce_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.opcode = op;
	w.flags = IBV_SEND_SIGNALED;
	w.num_sge = 1;
	w.sge[0].addr = (uint64_t)(uintptr_t)addr;
	w.sge[0].length = len;
	w.sge[0].lkey = lkey;
	w.length = len;
	return w;
}
