/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * On-demand paged memory (mem_resolve answers DROCE_MEM_INDIRECT, bytes
 * move through mem_copy): every transfer end to end, data checked byte for
 * byte, and a page that is not there failing as IBA says for the side
 * that meets it.
 */

#include <stdlib.h>
#include <string.h>

#include "test_transport.h"

static const uint32_t sizes[] = { 1, 255, 1024, 1025, 4096, 3 * 1024 + 7, 60000 };

static void
fill(uint8_t *b, uint32_t len, uint64_t seq)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = test_pattern(seq, i);
}

/* Both nodes' regions on demand. */
static void
odp_pair(struct test_pair *p, enum ibv_qp_type type)
{
	test_pair_setup(p, type, 1024, 42, 0);
	p->sim->node[0].mr[0].odp = true;
	p->sim->node[1].mr[0].odp = true;
}

/* Node @n's region faults over [off, off + len). */
static void
hole(struct test_pair *p, int n, uint32_t off, uint32_t len)
{
	p->sim->node[n].mr[0].hole_va = (uint64_t)(uintptr_t)p->buf[n] + off;
	p->sim->node[n].mr[0].hole_len = len;
}

static struct droce_cqe
post_wait(struct test_pair *p, struct droce_send_wqe *w, int node, bool recv)
{
	struct sim_cq *cq = recv ? &p->sim->node[node].rcq[0] : &p->sim->node[node].scq[0];
	struct droce_cqe c;

	if (w != NULL)
		droce_tqp_post_send(&p->sim->node[0].qp[0], w);
	ck_assert(test_wait(p->sim, cq, 1));
	ck_assert(sim_poll_cq(cq, &c));
	return c;
}

START_TEST(test_odp_rc_write_read_send_every_size)
{
	uint32_t len = sizes[_i];
	struct test_pair p;
	struct droce_send_wqe w;
	struct droce_cqe c;

	odp_pair(&p, IBV_QPT_RC);
	fill(p.buf[0], len, 1);
	w = test_wqe(IBV_WR_RDMA_WRITE, 1, p.buf[0], len, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 3;
	w.rkey = p.key[1];
	c = post_wait(&p, &w, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[1] + 3, p.buf[0], len);

	memset(p.buf[0], 0, len);
	w = test_wqe(IBV_WR_RDMA_READ, 2, p.buf[0] + 5, len, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 3;
	w.rkey = p.key[1];
	c = post_wait(&p, &w, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[0] + 5, p.buf[1] + 3, len);

	fill(p.buf[0], len, 3);
	sim_post_recv(&p.sim->node[1], 0, 9, p.buf[1] + 7, len, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 3, p.buf[0], len, p.key[0]);
	c = post_wait(&p, &w, 1, true);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.byte_len, len);
	ck_assert_mem_eq(p.buf[1] + 7, p.buf[0], len);
	ck_assert_uint_gt(p.sim->node[0].odp_copies, 0);
	ck_assert_uint_gt(p.sim->node[1].odp_copies, 0);
	test_pair_teardown(&p);
}
END_TEST

/* A gather of an on-demand piece and a mapped one, into a scatter of two. */
START_TEST(test_odp_mixed_sges_gather_and_scatter)
{
	struct test_pair p;
	struct droce_send_wqe w;
	struct droce_recv_wqe *r;
	struct droce_cqe c;
	uint8_t *plain = aligned_alloc(64, 4096), *want = malloc(3000);
	uint32_t pkey;

	odp_pair(&p, IBV_QPT_RC);
	pkey = sim_reg_mr(&p.sim->node[0], plain, 4096, IBV_ACCESS_LOCAL_WRITE);
	fill(p.buf[0], 1000, 4);
	fill(plain, 2000, 5);
	memcpy(want, p.buf[0], 1000);
	memcpy(want + 1000, plain, 2000);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 1500, p.key[1]);
	r = &p.sim->node[1].rq[0][(p.sim->node[1].rq_tail[0] - 1) % SIM_RQ_SIZE];
	r->num_sge = 2;
	r->sge[1].addr = (uint64_t)(uintptr_t)p.buf[1] + 20000;
	r->sge[1].length = 1500;
	r->sge[1].lkey = p.key[1];
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 1000, p.key[0]);
	w.num_sge = 2;
	w.sge[1].addr = (uint64_t)(uintptr_t)plain;
	w.sge[1].length = 2000;
	w.sge[1].lkey = pkey;
	w.length = 3000;
	c = post_wait(&p, &w, 1, true);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.byte_len, 3000);
	ck_assert_mem_eq(p.buf[1], want, 1500);
	ck_assert_mem_eq(p.buf[1] + 20000, want + 1500, 1500);
	free(plain);
	free(want);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_odp_ud_and_uc)
{
	struct test_pair p;
	struct droce_send_wqe w;
	struct droce_cqe c;

	odp_pair(&p, IBV_QPT_UD);
	fill(p.buf[0], 1000, 6);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 2048, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 1000, p.key[0]);
	sim_av(p.sim, 0, 1, &w.ud.av);
	w.ud.qpn = p.sim->node[1].qp[0].attr.qpn;
	w.ud.qkey = 0x1234;
	c = post_wait(&p, &w, 1, true);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.byte_len, 1040);	/* the GRH went through mem_copy too */
	ck_assert_uint_eq(p.buf[1][20], 0x45);
	ck_assert_mem_eq(p.buf[1] + 40, p.buf[0], 1000);
	test_pair_teardown(&p);

	odp_pair(&p, IBV_QPT_UC);
	fill(p.buf[0], 5000, 7);
	w = test_wqe(IBV_WR_RDMA_WRITE_WITH_IMM, 1, p.buf[0], 5000, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	sim_post_recv(&p.sim->node[1], 0, 1, NULL, 0, 0);
	c = post_wait(&p, &w, 1, true);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[1], p.buf[0], 5000);
	test_pair_teardown(&p);
}
END_TEST

/* A hole on the responder: WRITE and READ NAK remote access (IBA 9.7.5.2.4). */
START_TEST(test_odp_hole_is_a_remote_access_error)
{
	struct test_pair p;
	struct droce_send_wqe w;
	struct droce_cqe c;

	odp_pair(&p, IBV_QPT_RC);
	hole(&p, 1, 8192, 4096);
	w = test_wqe(IBV_WR_RDMA_WRITE, 1, p.buf[0], 10000, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];	/* its third packet meets the hole */
	w.rkey = p.key[1];
	c = post_wait(&p, &w, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_REM_ACCESS_ERR);
	ck_assert(p.sim->node[1].qp_error[0]);
	test_pair_teardown(&p);

	odp_pair(&p, IBV_QPT_RC);
	hole(&p, 1, 8192, 4096);
	w = test_wqe(IBV_WR_RDMA_READ, 1, p.buf[0], 10000, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	c = post_wait(&p, &w, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_REM_ACCESS_ERR);
	test_pair_teardown(&p);

	odp_pair(&p, IBV_QPT_RC);	/* atomics: never on an ODP region */
	w = test_wqe(IBV_WR_ATOMIC_FETCH_AND_ADD, 1, p.buf[0], 8, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	w.compare_add = 1;
	c = post_wait(&p, &w, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_REM_ACCESS_ERR);
	test_pair_teardown(&p);
}
END_TEST

/* A hole in a local SGE: local protection error (IBA 10.8.3, 11.6.2). */
START_TEST(test_odp_hole_in_a_local_sge_is_a_protection_error)
{
	struct test_pair p;
	struct droce_send_wqe w;
	struct droce_cqe c;

	odp_pair(&p, IBV_QPT_RC);
	hole(&p, 0, 0, 4096);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 100, p.key[0]);
	c = post_wait(&p, &w, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_LOC_PROT_ERR);
	test_pair_teardown(&p);

	odp_pair(&p, IBV_QPT_RC);	/* the receiver's buffer */
	hole(&p, 1, 0, 4096);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 100, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 100, p.key[0]);
	c = post_wait(&p, &w, 1, true);
	ck_assert_uint_eq(c.status, IBV_WC_LOC_PROT_ERR);
	c = post_wait(&p, NULL, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_REM_OP_ERR);
	test_pair_teardown(&p);

	odp_pair(&p, IBV_QPT_RC);	/* a READ's landing place */
	hole(&p, 0, 0, 4096);
	w = test_wqe(IBV_WR_RDMA_READ, 1, p.buf[0], 100, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	c = post_wait(&p, &w, 0, false);
	ck_assert_uint_eq(c.status, IBV_WC_LOC_PROT_ERR);
	test_pair_teardown(&p);
}
END_TEST

TCase *
tcase_transport_odp(void)
{
	TCase *tc = tcase_create("odp");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_odp_rc_write_read_send_every_size, 0,
			    (int)(sizeof(sizes) / sizeof(sizes[0])));
	tcase_add_test(tc, test_odp_mixed_sges_gather_and_scatter);
	tcase_add_test(tc, test_odp_ud_and_uc);
	tcase_add_test(tc, test_odp_hole_is_a_remote_access_error);
	tcase_add_test(tc, test_odp_hole_in_a_local_sge_is_a_protection_error);
	return tc;
}
