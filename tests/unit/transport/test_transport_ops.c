/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Every operation end to end between two engine instances over a clean
 * simulated link, data checked byte for byte.
 */

#include <stdlib.h>
#include <string.h>

#include "droce_wire_gid.h"
#include "test_transport.h"
#include "transport_priv.h"	/* tqp_av_key_eq() */

#define BUF_BYTES TEST_PAIR_BYTES
#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static void
fill(uint8_t *b, uint32_t len, uint64_t seq)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = test_pattern(seq, i);
}

static const uint32_t sizes[] = { 0, 1, 3, 255, 1023, 1024, 1025, 4096, 3 * 1024 + 7, 60000 };

START_TEST(test_rc_send_delivers_every_size_intact)
{
	uint32_t len = sizes[_i];
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	fill(p.buf[0], len, 7);
	ck_assert_int_eq(sim_post_recv(&p.sim->node[1], 0, 99, p.buf[1], BUF_BYTES, p.key[1]), 0);
	w = test_wqe(IBV_WR_SEND, 5, p.buf[0], len, p.key[0]);
	ck_assert_int_eq(droce_tqp_post_send(&p.sim->node[0].qp[0], &w), 0);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.opcode, IBV_WC_SEND);
	ck_assert_uint_eq(c.wr_id, 5);
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(c.byte_len, len);
	ck_assert_uint_eq(c.wr_id, 99);
	ck_assert_uint_eq(c.wc_flags, 0);
	ck_assert_mem_eq(p.buf[1], p.buf[0], len);
	ck_assert_uint_eq(p.sim->frames_rejected, 0);
	test_pair_teardown(&p);
}
END_TEST

/* sim_run() condition: node 1 has the receive's completion */
static bool
recv_done(struct sim *sim, void *arg)
{
	(void)arg;
	return test_cq_count(&sim->node[1].rcq[0]) > 0;
}

START_TEST(test_rc_destroy_sends_the_owed_ack)
{
	struct test_pair p;
	struct droce_send_wqe w;
	uint64_t before;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	ck_assert_int_eq(sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], BUF_BYTES, p.key[1]), 0);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 100, p.key[0]);
	ck_assert_int_eq(droce_tqp_post_send(&p.sim->node[0].qp[0], &w), 0);
	/* stop as the receive completes: its ACK is coalesced, not yet sent */
	ck_assert(sim_run(p.sim, recv_done, NULL, p.sim->now + 1000ull * 1000 * 1000));
	ck_assert(p.sim->node[1].qp[0].resp.ack_pending);
	before = p.sim->frames_sent;
	ck_assert_uint_eq(droce_tqp_flush_responder(&p.sim->node[1].qp[0]), 1);
	ck_assert(!p.sim->node[1].qp[0].resp.ack_pending);
	ck_assert_uint_eq(p.sim->frames_sent, before + 1);
	/* the requester completes on that ACK alone: the responder never polls again */
	droce_tqp_fini(&p.sim->node[1].qp[0]);
	p.sim->node[1].qp[0].ops = NULL;
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert_uint_eq(p.sim->node[0].scq[0].c[p.sim->node[0].scq[0].head].status,
			  IBV_WC_SUCCESS);
	ck_assert_uint_eq(droce_tqp_flush_responder(&p.sim->node[0].qp[0]), 0);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_rc_send_with_imm_and_inv_report_flags)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;
	uint8_t target[64];
	uint32_t victim;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	victim = sim_reg_mr(&p.sim->node[1], target, sizeof(target), ALL_ACCESS);
	fill(p.buf[0], 2000, 1);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], BUF_BYTES, p.key[1]);
	sim_post_recv(&p.sim->node[1], 0, 2, p.buf[1] + 4096, BUF_BYTES - 4096, p.key[1]);
	w = test_wqe(IBV_WR_SEND_WITH_IMM, 1, p.buf[0], 2000, p.key[0]);
	w.imm = rte_cpu_to_be_32(0xdeadbeef);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	w = test_wqe(IBV_WR_SEND_WITH_INV, 2, p.buf[0], 10, p.key[0]);
	w.inv_rkey = victim;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 2));

	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(c.wc_flags, IBV_WC_WITH_IMM);
	ck_assert_uint_eq(rte_be_to_cpu_32(c.imm), 0xdeadbeef);
	ck_assert_uint_eq(c.byte_len, 2000);
	ck_assert_mem_eq(p.buf[1], p.buf[0], 2000);

	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.wc_flags, IBV_WC_WITH_INV);
	ck_assert_uint_eq(c.invalidated_rkey, victim);
	ck_assert(!p.sim->node[1].mr[1].valid);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_rc_write_places_data_without_receive_wqe)
{
	uint32_t len = sizes[_i];
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	fill(p.buf[0], len, 3);
	w = test_wqe(IBV_WR_RDMA_WRITE, 8, p.buf[0], len, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 100;
	w.rkey = p.key[1];
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_mem_eq(p.buf[1] + 100, p.buf[0], len);
	ck_assert_uint_eq(test_cq_count(&p.sim->node[1].rcq[0]), 0);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_rc_write_with_imm_consumes_receive_wqe)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	fill(p.buf[0], 5000, 4);
	sim_post_recv(&p.sim->node[1], 0, 77, NULL, 0, 0);
	w = test_wqe(IBV_WR_RDMA_WRITE_WITH_IMM, 8, p.buf[0], 5000, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	w.imm = rte_cpu_to_be_32(42);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(c.wr_id, 77);
	ck_assert_uint_eq(c.byte_len, 5000);
	ck_assert_uint_eq(rte_be_to_cpu_32(c.imm), 42);
	ck_assert_mem_eq(p.buf[1], p.buf[0], 5000);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_rc_read_fetches_every_size)
{
	uint32_t len = sizes[_i];
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	fill(p.buf[1], len, 9);
	w = test_wqe(IBV_WR_RDMA_READ, 11, p.buf[0] + 8, len, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.opcode, IBV_WC_RDMA_READ);
	ck_assert_uint_eq(c.byte_len, len);
	ck_assert_mem_eq(p.buf[0] + 8, p.buf[1], len);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_rc_atomics_return_original_and_update_target)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;
	uint64_t *target, *result;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	target = (uint64_t *)(void *)(p.buf[1] + 64);
	result = (uint64_t *)(void *)p.buf[0];
	*target = 1000;

	w = test_wqe(IBV_WR_ATOMIC_FETCH_AND_ADD, 1, result, 8, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)target;
	w.rkey = p.key[1];
	w.compare_add = 5;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	w = test_wqe(IBV_WR_ATOMIC_CMP_AND_SWP, 2, result + 1, 8, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)target;
	w.rkey = p.key[1];
	w.compare_add = 1005;
	w.swap = 77;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	w = test_wqe(IBV_WR_ATOMIC_CMP_AND_SWP, 3, result + 2, 8, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)target;
	w.rkey = p.key[1];
	w.compare_add = 1005;	/* no longer equal: no swap */
	w.swap = 99;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 3));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.opcode, IBV_WC_FETCH_ADD);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.opcode, IBV_WC_COMP_SWAP);
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(result[0], 1000);
	ck_assert_uint_eq(result[1], 1005);
	ck_assert_uint_eq(result[2], 77);
	ck_assert_uint_eq(*target, 77);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_unsignaled_sends_complete_silently_in_order)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;
	int i;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	for (i = 0; i < 10; i++) {
		sim_post_recv(&p.sim->node[1], 0, (uint64_t)i, p.buf[1] + i * 100, 100, p.key[1]);
		w = test_wqe(IBV_WR_SEND, (uint64_t)i, p.buf[0], 50, p.key[0]);
		if (i != 9)
			w.flags = 0;
		droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	}
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 10));
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.wr_id, 9);
	ck_assert(!sim_poll_cq(&p.sim->node[0].scq[0], &c));
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_inline_send_carries_its_own_bytes)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_RC, 256, 42, 0);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 4096, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, NULL, 200, 0);
	w.flags |= IBV_SEND_INLINE;
	w.num_sge = 0;
	fill(w.inline_data, 200, 5);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.byte_len, 200);
	ck_assert_mem_eq(p.buf[1], w.inline_data, 200);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_uc_send_and_write_without_acks)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_UC, 1024, 42, 0);
	fill(p.buf[0], 3000, 6);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 4096, p.key[1]);
	sim_post_recv(&p.sim->node[1], 0, 2, NULL, 0, 0);
	w = test_wqe(IBV_WR_SEND_WITH_IMM, 1, p.buf[0], 3000, p.key[0]);
	w.imm = rte_cpu_to_be_32(1);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	w = test_wqe(IBV_WR_RDMA_WRITE_WITH_IMM, 2, p.buf[0], 2500, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 8192;
	w.rkey = p.key[1];
	w.imm = rte_cpu_to_be_32(2);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 2));
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 2));
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(c.byte_len, 3000);
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_mem_eq(p.buf[1], p.buf[0], 3000);
	ck_assert_mem_eq(p.buf[1] + 8192, p.buf[0], 2500);
	/* no ACKs on UC: only the requests crossed the link */
	ck_assert_uint_eq(p.sim->frames_sent, 3 + 3);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_ud_send_prepends_grh_and_reports_source)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_UD, 1024, 42, 0);
	fill(p.buf[0], 1000, 8);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 2048, p.key[1]);
	w = test_wqe(IBV_WR_SEND_WITH_IMM, 1, p.buf[0], 1000, p.key[0]);
	sim_av(p.sim, 0, 1, &w.ud.av);
	w.ud.qpn = p.sim->node[1].qp[0].attr.qpn;
	w.ud.qkey = 0x1234;
	w.imm = rte_cpu_to_be_32(3);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.byte_len, 1040);
	ck_assert_uint_eq(c.src_qp, p.sim->node[0].qp[0].attr.qpn);
	ck_assert_uint_eq(c.wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM);
	/* IPv4: 20 zero bytes, then the IPv4 header with the sender's address */
	ck_assert_uint_eq(p.buf[1][0], 0);
	ck_assert_uint_eq(p.buf[1][20], 0x45);
	ck_assert_mem_eq(p.buf[1] + 20 + 12, p.sim->node[0].gid + 12, 4);
	ck_assert_mem_eq(p.buf[1] + 40, p.buf[0], 1000);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_ud_wrong_qkey_is_dropped_and_controlled_qkey_uses_own)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_UD, 1024, 42, 0);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 2048, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 10, p.key[0]);
	sim_av(p.sim, 0, 1, &w.ud.av);
	w.ud.qpn = p.sim->node[1].qp[0].attr.qpn;
	w.ud.qkey = 0x1235;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	sim_run(p.sim, test_cq_reached, &(struct test_wait_cq){ &p.sim->node[1].rcq[0], 1 },
		p.sim->now + 1000000);
	ck_assert_uint_eq(test_cq_count(&p.sim->node[1].rcq[0]), 0);
	ck_assert_uint_eq(p.sim->node[1].qp[0].cnt[DROCE_TQP_CNT_DROP_QKEY], 1);
	/* a controlled Q_Key (high bit set) sends the QP's own, 0x1234 */
	w.ud.qkey = 0x80000000u;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_ud_over_ipv6_puts_the_ipv6_header_in_the_grh_area)
{
	static const uint8_t gid6[2][16] = {
		{ 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 },
	};
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;

	test_pair_setup(&p, IBV_QPT_UD, 1024, 42, 0);
	memcpy(p.sim->node[0].gid, gid6[0], 16);
	memcpy(p.sim->node[1].gid, gid6[1], 16);
	fill(p.buf[0], 300, 11);
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 2048, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 300, p.key[0]);
	sim_av(p.sim, 0, 1, &w.ud.av);
	w.ud.av.ipv6 = true;
	w.ud.av.flow_label = 0x12345;
	w.ud.qpn = p.sim->node[1].qp[0].attr.qpn;
	w.ud.qkey = 0x1234;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.byte_len, 340);
	/* the whole 40 bytes are the IPv6 header: version 6, flow label, addresses */
	ck_assert_uint_eq(p.buf[1][0] >> 4, 6);
	ck_assert_uint_eq(((p.buf[1][1] & 0xf) << 16) | (p.buf[1][2] << 8) | p.buf[1][3], 0x12345);
	ck_assert_uint_eq(p.buf[1][6], 17);
	ck_assert_mem_eq(p.buf[1] + 8, gid6[0], 16);
	ck_assert_mem_eq(p.buf[1] + 24, gid6[1], 16);
	ck_assert_mem_eq(p.buf[1] + 40, p.buf[0], 300);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_local_inv_completes_without_any_traffic)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_send_wqe w;
	uint8_t target[64];
	uint32_t victim;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	victim = sim_reg_mr(&p.sim->node[0], target, sizeof(target), ALL_ACCESS);
	w = test_wqe(IBV_WR_LOCAL_INV, 3, NULL, 0, 0);
	w.num_sge = 0;
	w.inv_rkey = victim;
	ck_assert_int_eq(droce_tqp_post_send(&p.sim->node[0].qp[0], &w), 0);
	droce_tqp_poll(&p.sim->node[0].qp[0], 0, 32);
	/* a local operation owes no ACK: it completes when executed */
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.wr_id, 3);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.opcode, IBV_WC_LOCAL_INV);
	ck_assert(!p.sim->node[0].mr[1].valid);
	ck_assert_uint_eq(p.sim->frames_sent, 0);
	test_pair_teardown(&p);
}
END_TEST

/* The last WRITE packet node 0 sent, as its transport described it. */
static bool
sniff_write(struct sim *sim, int from, const struct droce_pkt *pkt, void *arg)
{
	(void)sim;
	if (from == 0 && pkt->opcode == DROCE_OP_RC_WRITE_ONLY)
		*(struct droce_pkt *)arg = *pkt;
	return false;
}

/*
 * The sender reuses its last packet description and headers while the
 * path is unchanged (tqp_pkt_init, droce_hdr_tmpl): a path changed between
 * two messages (traffic class, hop limit, flow label, MACs, as modify_qp
 * or a resolved neighbour do) must reach the very next packet, and the
 * peer must still accept it.
 */
START_TEST(test_tx_path_change_reaches_the_next_packet)
{
	struct test_pair p;
	struct droce_cqe c;
	struct droce_pkt seen;
	struct droce_tqp *qp;
	unsigned int round;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 42, 0);
	qp = &p.sim->node[0].qp[0];
	p.sim->sniff = sniff_write;
	p.sim->sniff_arg = &seen;
	for (round = 0; round < 6; round++) {
		struct droce_send_wqe w = test_wqe(IBV_WR_RDMA_WRITE, round, p.buf[0], 64, p.key[0]);

		if (round == 2)
			qp->attr.av.tclass = 0x28;
		if (round == 3) {
			qp->attr.av.hop_limit = 7;
			qp->attr.av.flow_label = 0x12345;
		}
		if (round == 4)
			qp->attr.av.smac[5] ^= 1;
		if (round == 5)
			qp->attr.av.dmac[5] ^= 1;
		w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
		w.rkey = p.key[1];
		memset(&seen, 0, sizeof(seen));
		ck_assert_int_eq(droce_tqp_post_send(qp, &w), 0);
		ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
		ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
		ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(seen.opcode, DROCE_OP_RC_WRITE_ONLY);
		ck_assert_uint_eq(seen.tclass, qp->attr.av.tclass);
		ck_assert_uint_eq(seen.ttl, qp->attr.av.hop_limit ? qp->attr.av.hop_limit : 64);
		ck_assert_uint_eq(seen.sport, droce_flow_label_to_sport(qp->attr.av.flow_label ?
			qp->attr.av.flow_label : droce_flow_label(qp->attr.qpn, qp->attr.dest_qpn)));
		ck_assert_mem_eq(seen.smac, qp->attr.av.smac, 6);
		ck_assert_mem_eq(seen.dmac, qp->attr.av.dmac, 6);
		ck_assert_uint_eq(seen.psn, (qp->req.psn - 1) & DROCE_24BIT_MASK);
	}
	ck_assert_uint_eq(p.sim->frames_rejected, 0);
	test_pair_teardown(&p);
}
END_TEST

/* tqp_proto_ok()'s AV compare sees a change in every byte of the key, and none past it */
START_TEST(test_av_key_compare_sees_every_byte)
{
	struct droce_av a, b;
	unsigned int i;

	memset(&a, 0x5a, sizeof(a));
	for (i = 0; i < sizeof(a); i++) {
		b = a;
		ck_assert(tqp_av_key_eq(&a, &b));
		((uint8_t *)&b)[i] ^= 0x10;
		ck_assert_msg(tqp_av_key_eq(&a, &b) == (i >= DROCE_AV_KEY_LEN), "byte %u", i);
	}
}
END_TEST

TCase *
tcase_transport_ops(void)
{
	TCase *tc = tcase_create("ops");

	tcase_add_loop_test(tc, test_rc_send_delivers_every_size_intact, 0, DROCE_DIM(sizes));
	tcase_add_test(tc, test_rc_destroy_sends_the_owed_ack);
	tcase_add_test(tc, test_rc_send_with_imm_and_inv_report_flags);
	tcase_add_loop_test(tc, test_rc_write_places_data_without_receive_wqe, 0, DROCE_DIM(sizes));
	tcase_add_test(tc, test_rc_write_with_imm_consumes_receive_wqe);
	tcase_add_loop_test(tc, test_rc_read_fetches_every_size, 0, DROCE_DIM(sizes));
	tcase_add_test(tc, test_rc_atomics_return_original_and_update_target);
	tcase_add_test(tc, test_unsignaled_sends_complete_silently_in_order);
	tcase_add_test(tc, test_inline_send_carries_its_own_bytes);
	tcase_add_test(tc, test_uc_send_and_write_without_acks);
	tcase_add_test(tc, test_ud_send_prepends_grh_and_reports_source);
	tcase_add_test(tc, test_ud_wrong_qkey_is_dropped_and_controlled_qkey_uses_own);
	tcase_add_test(tc, test_local_inv_completes_without_any_traffic);
	tcase_add_test(tc, test_ud_over_ipv6_puts_the_ipv6_header_in_the_grh_area);
	tcase_add_test(tc, test_tx_path_change_reaches_the_next_packet);
	tcase_add_test(tc, test_av_key_compare_sees_every_byte);
	return tc;
}
