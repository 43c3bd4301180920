/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Error paths: RNR (the requester waits the advertised delay, retries,
 * exhausts), protection (NAK remote access error on the wire, error
 * completion, target untouched; a receive SGE failing its check: NAK
 * remote operational error), READs and atomics beyond max_dest_rd_atomic
 * (Invalid Request), retry exhaustion, one NAK per PSN gap
 * and behind the READ responses owed, a duplicated NAK retried once,
 * flushing on the error state, a UC or UD send error entering SQE, CQ
 * overflow, the fence, SQD's drain.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test_transport.h"

#define BUF_BYTES TEST_PAIR_BYTES

/* What the sniffer saw, and what it should drop. */
struct wire_log {
	unsigned int rnr_naks;
	unsigned int seq_naks;
	unsigned int access_naks;
	unsigned int invreq_naks;
	unsigned int remop_naks;
	uint64_t last_rnr_ns;
	uint64_t first_retry_after_rnr_ns;
	unsigned int requests;		/* packets node 0 sent */
	uint32_t drop_psn;		/* drop node 0's first packet with this PSN */
	bool drop_armed;
	bool drop_all;
	uint64_t no_path_until_ns;	/* node 0's requests find no MAC until then */
	uint32_t drop_resp_psn;		/* drop node 1's first READ response with this PSN */
	bool drop_resp_armed;
	bool dup_seq_naks;		/* the link delivers node 1's sequence NAKs twice */
};

static bool
log_pkt(struct sim *sim, int from, const struct droce_pkt *pkt, void *arg)
{
	struct wire_log *l = arg;
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);

	if (l->dup_seq_naks)
		sim->link.dup = 0;	/* the link copies the frames set below, no others */
	if (from == 0 && (d->flags & DROCE_OPF_REQ)) {
		l->requests++;
		if (l->last_rnr_ns && !l->first_retry_after_rnr_ns)
			l->first_retry_after_rnr_ns = sim->now;
		if (sim->now < l->no_path_until_ns) {
			/* as the device does when the neighbour is unresolved */
			droce_tqp_path_pending(&sim->node[0].qp[0]);
			return true;
		}
		if (l->drop_armed && pkt->psn == l->drop_psn) {
			l->drop_armed = false;
			return true;
		}
		return l->drop_all;
	}
	if (from == 1 && l->drop_resp_armed && pkt->psn == l->drop_resp_psn &&
	    (droce_opcode(pkt->opcode)->flags & DROCE_OPF_READ_RESP)) {
		l->drop_resp_armed = false;
		return true;
	}
	if (from == 1 && pkt->opcode == DROCE_OP_RC_ACKNOWLEDGE) {
		uint8_t syn = pkt->aeth.syndrome;

		if (droce_aeth_type(syn) == DROCE_AETH_RNR_NAK) {
			l->rnr_naks++;
			l->last_rnr_ns = sim->now;
			l->first_retry_after_rnr_ns = 0;
		} else if (syn == droce_aeth_syn_nak(DROCE_NAK_PSN_SEQ)) {
			l->seq_naks++;
			if (l->dup_seq_naks)
				sim->link.dup = 1.0;	/* this frame only: see above */
		} else if (syn == droce_aeth_syn_nak(DROCE_NAK_REM_ACCESS)) {
			l->access_naks++;
		} else if (syn == droce_aeth_syn_nak(DROCE_NAK_INVALID_REQ)) {
			l->invreq_naks++;
		} else if (syn == droce_aeth_syn_nak(DROCE_NAK_REM_OP)) {
			l->remop_naks++;
		}
	}
	return false;
}

static void
pair_setup(struct test_pair *p, struct wire_log *log)
{
	test_pair_setup(p, IBV_QPT_RC, 1024, 99, 0x5a);
	memset(log, 0, sizeof(*log));
	p->sim->sniff = log_pkt;
	p->sim->sniff_arg = log;
}

static bool
rnr_seen(struct sim *sim, void *arg)
{
	struct wire_log *l = arg;

	(void)sim;
	return l->rnr_naks >= 3 && l->first_retry_after_rnr_ns != 0;
}

START_TEST(test_rnr_nak_makes_requester_wait_the_advertised_delay)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;
	uint64_t delay;

	pair_setup(&p, &log);
	/* RNR delay 5.12 ms (code 18), far above the ~1 ms retransmit timeout */
	p.sim->node[1].qp[0].attr.min_rnr_timer = 18;
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 100, p.key[0]);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(sim_run(p.sim, rnr_seen, &log, 100ull * 1000 * 1000));
	delay = log.first_retry_after_rnr_ns - log.last_rnr_ns;
	ck_assert_msg(delay >= 5120000, "retried after %lu ns", (unsigned long)delay);
	ck_assert_uint_lt(delay, 5120000 + 100000);
	ck_assert_uint_eq(p.sim->node[0].qp[0].cnt[DROCE_TQP_CNT_TIMEOUTS], 0);
	/* a receive buffer appears: the next retry succeeds */
	sim_post_recv(&p.sim->node[1], 0, 5, p.buf[1], 4096, p.key[1]);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.byte_len, 100);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_rnr_retry_exhaustion_fails_wqe_and_flushes_rest)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;

	pair_setup(&p, &log);
	p.sim->node[0].qp[0].attr.rnr_retry = 2;
	p.sim->node[0].qp[0].comp.rnr_left = 2;
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 100, p.key[0]);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	w.wr_id = 2;
	w.flags = 0;	/* unsignaled, yet flushed with an error completion */
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 2));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.wr_id, 1);
	ck_assert_uint_eq(c.status, IBV_WC_RNR_RETRY_EXC_ERR);
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.wr_id, 2);
	ck_assert_uint_eq(c.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(log.rnr_naks, 3);	/* the first try and two retries */
	ck_assert_int_eq(p.sim->node[0].qp[0].state, DROCE_TQP_ERR);
	ck_assert(p.sim->node[0].qp_error[0]);
	test_pair_teardown(&p);
}
END_TEST

static bool
many_rnr(struct sim *sim, void *arg)
{
	(void)sim;
	return ((struct wire_log *)arg)->rnr_naks >= 20;
}

START_TEST(test_rnr_retry_7_retries_forever)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;

	pair_setup(&p, &log);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 10, p.key[0]);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(sim_run(p.sim, many_rnr, &log, 10ull * 1000 * 1000 * 1000));
	ck_assert_int_eq(p.sim->node[0].qp[0].state, DROCE_TQP_RTS);
	sim_post_recv(&p.sim->node[1], 0, 5, p.buf[1], 4096, p.key[1]);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	test_pair_teardown(&p);
}
END_TEST

/* Post @p w on node 0; its completion has @p status. */
static void
post_refused(struct test_pair *p, const struct droce_send_wqe *w, enum ibv_wc_status status)
{
	struct droce_cqe c;

	droce_tqp_post_send(&p->sim->node[0].qp[0], w);
	ck_assert(test_wait(p->sim, &p->sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p->sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, status);
}

/* The responder (node 1) failed its QP, telling its owner @p why. */
static void
responder_failed(struct test_pair *p, enum droce_tqp_fault why)
{
	ck_assert_int_eq(p->sim->node[1].qp[0].state, DROCE_TQP_ERR);
	ck_assert(p->sim->node[1].qp_error[0]);
	ck_assert_int_eq(p->sim->node[1].qp_fault[0], why);
}

/* Protection failures: each gets NAK remote access error and leaves the target alone. */
enum prot_case { PROT_WRITE_PAST_END, PROT_WRITE_NO_ACCESS, PROT_READ_STALE_KEY,
		 PROT_ATOMIC_BAD_KEY, PROT_COUNT };

START_TEST(test_protection_violation_naks_and_leaves_target_untouched)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	uint8_t *snapshot = malloc(BUF_BYTES);
	uint8_t ro[256];
	uint32_t ro_key;

	pair_setup(&p, &log);
	memset(ro, 0x33, sizeof(ro));
	ro_key = sim_reg_mr(&p.sim->node[1], ro, sizeof(ro),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	memcpy(snapshot, p.buf[1], BUF_BYTES);
	switch (_i) {
	case PROT_WRITE_PAST_END:
		w = test_wqe(IBV_WR_RDMA_WRITE, 1, p.buf[0], 2048, p.key[0]);
		w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + BUF_BYTES - 1024;
		w.rkey = p.key[1];
		break;
	case PROT_WRITE_NO_ACCESS:
		w = test_wqe(IBV_WR_RDMA_WRITE, 1, p.buf[0], 64, p.key[0]);
		w.remote_addr = (uint64_t)(uintptr_t)ro;
		w.rkey = ro_key;
		break;
	case PROT_READ_STALE_KEY:
		p.sim->node[1].mr[0].valid = false;	/* invalidated */
		w = test_wqe(IBV_WR_RDMA_READ, 1, p.buf[0], 64, p.key[0]);
		w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
		w.rkey = p.key[1];
		break;
	default:
		w = test_wqe(IBV_WR_ATOMIC_FETCH_AND_ADD, 1, p.buf[0], 8, p.key[0]);
		w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
		w.rkey = p.key[1] ^ 0xff;	/* wrong key byte */
		w.compare_add = 1;
		break;
	}
	post_refused(&p, &w, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(log.access_naks, 1);
	ck_assert_mem_eq(p.buf[1], snapshot, BUF_BYTES);
	ck_assert_uint_eq(ro[0], 0x33);
	/* class C: both ends go to the error state; the requester's completion
	 * says why, the responder's owner hears an async error */
	ck_assert_int_eq(p.sim->node[0].qp[0].state, DROCE_TQP_ERR);
	ck_assert_int_eq(p.sim->node[0].qp_fault[0], DROCE_TQP_FAULT_NONE);
	responder_failed(&p, DROCE_TQP_FAULT_ACCESS);
	free(snapshot);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_misaligned_atomic_is_invalid_request)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;

	pair_setup(&p, &log);
	w = test_wqe(IBV_WR_ATOMIC_CMP_AND_SWP, 1, p.buf[0], 8, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 4;
	w.rkey = p.key[1];
	post_refused(&p, &w, IBV_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(log.invreq_naks, 1);
	responder_failed(&p, DROCE_TQP_FAULT_INV_REQ);
	test_pair_teardown(&p);
}
END_TEST

/* node 0 READs @p n pieces of 2 KiB (two responses each) at once, wr_id first.. */
static void
post_reads(struct test_pair *p, uint32_t n, uint64_t first)
{
	struct droce_send_wqe w;
	uint32_t i;

	for (i = 0; i < n; i++) {
		w = test_wqe(IBV_WR_RDMA_READ, first + i, p->buf[0] + i * 2048, 2048, p->key[0]);
		w.rkey = p->key[1];
		w.remote_addr = (uint64_t)(uintptr_t)p->buf[1] + i * 2048;
		ck_assert_int_eq(droce_tqp_post_send(&p->sim->node[0].qp[0], &w), 0);
	}
}

/*
 * The responder keeps max_dest_rd_atomic READs/atomics (here 2, its ring
 * sized so): that many outstanding are served; one more, while the oldest
 * is still being answered, is the requester's error: Invalid Request NAK.
 */
START_TEST(test_reads_beyond_max_dest_rd_atomic_are_invalid_request)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_cqe c;
	uint32_t i, bad = 0;

	pair_setup(&p, &log);
	ck_assert_int_eq(droce_tqp_set_dest_rd_atomic(&p.sim->node[1].qp[0], 2), 0);
	ck_assert_uint_eq(p.sim->node[1].qp[0].resp.res_slots, 2);
	for (i = 0; i < 3; i++) {	/* two at once, three times over: the ring turns */
		post_reads(&p, 2, 10 * i);
		ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 2));
		ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
		ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
		ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
		ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	}
	ck_assert_int_eq(memcmp(p.buf[0], p.buf[1], 2 * 2048), 0);
	ck_assert_uint_eq(log.invreq_naks, 0);

	post_reads(&p, 3, 100);		/* the requester allows 16: it sends all three */
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 3));
	for (i = 0; i < 3; i++) {
		ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
		ck_assert_uint_ne(c.status, IBV_WC_SUCCESS);
		bad += c.status == IBV_WC_REM_INV_REQ_ERR;
	}
	ck_assert_uint_eq(bad, 1);
	ck_assert_uint_eq(log.invreq_naks, 1);
	responder_failed(&p, DROCE_TQP_FAULT_INV_REQ);
	test_pair_teardown(&p);
}
END_TEST

/* max_dest_rd_atomic 0 offers no READ or atomic: each is an Invalid Request, never run. */
START_TEST(test_no_responder_resources_refuse_read_and_atomic)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	int round;

	for (round = 0; round < 2; round++) {
		pair_setup(&p, &log);
		ck_assert_int_eq(droce_tqp_set_dest_rd_atomic(&p.sim->node[1].qp[0], 0), 0);
		ck_assert_ptr_null(p.sim->node[1].qp[0].resp.res);
		memset(p.buf[1], 0, 8);
		if (round == 0) {
			w = test_wqe(IBV_WR_RDMA_READ, 1, p.buf[0], 64, p.key[0]);
		} else {
			w = test_wqe(IBV_WR_ATOMIC_FETCH_AND_ADD, 1, p.buf[0], 8, p.key[0]);
			w.compare_add = 5;
		}
		w.rkey = p.key[1];
		w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
		post_refused(&p, &w, IBV_WC_REM_INV_REQ_ERR);
		ck_assert_uint_eq(log.invreq_naks, 1);
		ck_assert_uint_eq(*(uint64_t *)(void *)p.buf[1], 0);	/* the add never ran */
		responder_failed(&p, DROCE_TQP_FAULT_INV_REQ);
		test_pair_teardown(&p);
	}
}
END_TEST

/* the receive WQE reports it (IBV_WC_LOC_LEN_ERR): no async error besides */
START_TEST(test_send_longer_than_the_receive_buffer)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;

	pair_setup(&p, &log);
	sim_post_recv(&p.sim->node[1], 0, 5, p.buf[1], 16, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 100, p.key[0]);
	post_refused(&p, &w, IBV_WC_REM_INV_REQ_ERR);
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.wr_id, 5);
	ck_assert_uint_eq(c.status, IBV_WC_LOC_LEN_ERR);
	responder_failed(&p, DROCE_TQP_FAULT_NONE);
	test_pair_teardown(&p);
}
END_TEST

/*
 * A receive WQE whose SGE fails its check when a SEND consumes it (an MR
 * moved or sent to another PD after the WQE was posted, a stale key, a
 * buffer without LOCAL_WRITE): IBV_WC_LOC_PROT_ERR for the receive, NAK
 * remote operational error (IBV_WC_REM_OP_ERR), both QPs in error (IBA
 * 9.7.5.2.4). Not a length error: the buffer is long enough.
 */
enum rsge_case { RSGE_OUTSIDE_REGION, RSGE_STALE_KEY, RSGE_NO_LOCAL_WRITE, RSGE_COUNT };

START_TEST(test_receive_sge_failing_its_check_is_remote_operational_error)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;
	uint8_t ro[256];
	uint32_t key;
	uint64_t addr;

	pair_setup(&p, &log);
	key = p.key[1];
	addr = (uint64_t)(uintptr_t)p.buf[1];
	switch (_i) {
	case RSGE_OUTSIDE_REGION:
		addr += BUF_BYTES;		/* just past its region, same key */
		break;
	case RSGE_STALE_KEY:
		p.sim->node[1].mr[0].valid = false;
		break;
	default:
		key = sim_reg_mr(&p.sim->node[1], ro, sizeof(ro), IBV_ACCESS_REMOTE_READ);
		addr = (uint64_t)(uintptr_t)ro;
		break;
	}
	sim_post_recv(&p.sim->node[1], 0, 5, (void *)(uintptr_t)addr, 128, key);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 100, p.key[0]);
	post_refused(&p, &w, IBV_WC_REM_OP_ERR);
	ck_assert_uint_eq(log.remop_naks, 1);
	ck_assert_uint_eq(log.invreq_naks, 0);
	ck_assert(sim_poll_cq(&p.sim->node[1].rcq[0], &c));
	ck_assert_uint_eq(c.wr_id, 5);
	ck_assert_uint_eq(c.status, IBV_WC_LOC_PROT_ERR);
	ck_assert_int_eq(p.sim->node[0].qp[0].state, DROCE_TQP_ERR);
	responder_failed(&p, DROCE_TQP_FAULT_NONE);	/* the receive WQE told it */
	test_pair_teardown(&p);
}
END_TEST

/*
 * The receive queue is broken (the owner found an impossible ring index):
 * the responder fails its QP -- RC with NAK remote operational error, so the
 * peer learns at once instead of hearing RNR forever -- and tells the owner
 * (DROCE_TQP_FAULT_RQ), which raises the event. For every request that takes
 * a receive WQE: RC SEND and WRITE_WITH_IMM, UC SEND, UD SEND.
 */
enum rqb_case { RQB_RC_SEND, RQB_RC_WRITE_IMM, RQB_UC_SEND, RQB_UD_SEND, RQB_COUNT };

static bool
responder_down(struct sim *sim, void *arg)
{
	(void)arg;
	return sim->node[1].qp_error[0];
}

START_TEST(test_broken_receive_queue_fails_the_qp_never_rnr)
{
	static const enum ibv_qp_type type[RQB_COUNT] = { IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC,
							  IBV_QPT_UD };
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;

	test_pair_setup(&p, type[_i], 1024, 99, 0x5a);
	memset(&log, 0, sizeof(log));
	p.sim->sniff = log_pkt;
	p.sim->sniff_arg = &log;
	sim_post_recv(&p.sim->node[1], 0, 5, p.buf[1], 4096, p.key[1]);
	p.sim->node[1].rq_broken[0] = true;
	w = test_wqe(_i == RQB_RC_WRITE_IMM ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_SEND, 1,
		     p.buf[0], 100, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	if (type[_i] == IBV_QPT_UD) {
		sim_av(p.sim, 0, 1, &w.ud.av);
		w.ud.qpn = p.sim->node[1].qp[0].attr.qpn;
		w.ud.qkey = 0x1234;
	}
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	if (type[_i] == IBV_QPT_RC) {
		ck_assert_uint_eq(c.status, IBV_WC_REM_OP_ERR);
		ck_assert_uint_eq(log.remop_naks, 1);
		ck_assert_int_eq(p.sim->node[0].qp[0].state, DROCE_TQP_ERR);
	} else {
		ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);	/* done once sent */
		ck_assert(sim_run(p.sim, responder_down, NULL, p.sim->now + 10ull * 1000 * 1000));
	}
	ck_assert_uint_eq(log.rnr_naks, 0);
	/* the WQE was never taken: at most the sim owner's flush of its list */
	ck_assert(!sim_poll_cq(&p.sim->node[1].rcq[0], &c) || c.status == IBV_WC_WR_FLUSH_ERR);
	responder_failed(&p, DROCE_TQP_FAULT_RQ);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_retry_exhaustion_after_retry_cnt_timeouts)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;

	pair_setup(&p, &log);
	log.drop_all = true;
	p.sim->node[0].qp[0].attr.retry_cnt = 3;
	p.sim->node[0].qp[0].comp.retry_left = 3;
	sim_post_recv(&p.sim->node[1], 0, 5, p.buf[1], 4096, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 10, p.key[0]);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	w.wr_id = 2;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 2));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_RETRY_EXC_ERR);
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(p.sim->node[0].qp[0].cnt[DROCE_TQP_CNT_TIMEOUTS], 4);
	ck_assert_uint_eq(log.requests, 2 * 4);	/* first try + 3 retries, 2 packets each */
	test_pair_teardown(&p);
}
END_TEST

/* An unresolved neighbour (a lost ARP answer) costs time, not the budget. */
START_TEST(test_no_path_timeouts_spend_no_retries)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;
	uint64_t no_path;

	pair_setup(&p, &log);
	log.no_path_until_ns = 30ull * 1000 * 1000;	/* ~30 timeouts of ~1 ms */
	p.sim->node[0].qp[0].attr.retry_cnt = 3;
	p.sim->node[0].qp[0].comp.retry_left = 3;
	sim_post_recv(&p.sim->node[1], 0, 5, p.buf[1], 4096, p.key[1]);
	w = test_wqe(IBV_WR_SEND, 1, p.buf[0], 10, p.key[0]);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	no_path = p.sim->node[0].qp[0].cnt[DROCE_TQP_CNT_NO_PATH_RETRIES];
	ck_assert_msg(no_path >= 20, "%lu free retries", (unsigned long)no_path);
	ck_assert_uint_eq(p.sim->node[0].qp[0].cnt[DROCE_TQP_CNT_TIMEOUTS], no_path);
	ck_assert_uint_eq(p.sim->node[0].qp[0].comp.retry_left, 3);
	/* once the path is there, losses count again */
	log.drop_all = true;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_RETRY_EXC_ERR);
	ck_assert_uint_eq(p.sim->node[0].qp[0].cnt[DROCE_TQP_CNT_NO_PATH_RETRIES], no_path);
	test_pair_teardown(&p);
}
END_TEST

/*
 * A READ response lost in the middle: the next one shows the gap, and the
 * requester asks again from the missing PSN at once (as for a sequence
 * NAK), keeping what came ahead, instead of idling out the ACK timeout.
 */
START_TEST(test_lost_read_response_is_asked_again_at_once)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;
	const struct droce_tqp *qp;
	uint32_t i;

	pair_setup(&p, &log);
	qp = &p.sim->node[0].qp[0];
	for (i = 0; i < 8 * 1024; i++)
		p.buf[1][i] = test_pattern(3, i);
	log.drop_resp_psn = droce_psn_add(qp->req.psn, 2);	/* the third of eight */
	log.drop_resp_armed = true;
	w = test_wqe(IBV_WR_RDMA_READ, 1, p.buf[0], 8 * 1024, p.key[0]);
	w.rkey = p.key[1];
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert(!log.drop_resp_armed);
	ck_assert_int_eq(memcmp(p.buf[0], p.buf[1], 8 * 1024), 0);
	ck_assert_uint_eq(qp->cnt[DROCE_TQP_CNT_READ_AHEAD], 5);
	ck_assert_uint_eq(qp->cnt[DROCE_TQP_CNT_RETRANSMITS], 1);
	ck_assert_uint_eq(qp->cnt[DROCE_TQP_CNT_TIMEOUTS], 0);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_one_nak_per_sequence_gap)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;

	pair_setup(&p, &log);
	/* lose the second packet of a 10-packet WRITE: 8 more arrive out of order */
	log.drop_psn = droce_psn_add(p.sim->node[0].qp[0].req.psn, 1);
	log.drop_armed = true;
	w = test_wqe(IBV_WR_RDMA_WRITE, 1, p.buf[0], 10 * 1024, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(log.seq_naks, 1);
	ck_assert_mem_eq(p.buf[1], p.buf[0], 10 * 1024);
	test_pair_teardown(&p);
}
END_TEST

/*
 * The link delivers the sequence NAK twice: the copy names the PSN the
 * round it started went back to, and nothing has been answered since. It
 * is no news: it must not start a second round nor spend retry_cnt (with
 * retry_cnt 1, a copy counted as a retry failed the QP). Loop 1: once that
 * round is answered, a new loss's NAK starts a round again.
 */
START_TEST(test_duplicated_seq_nak_starts_one_round)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;
	struct droce_tqp *qp;
	int k, msgs = 1 + _i;

	pair_setup(&p, &log);
	qp = &p.sim->node[0].qp[0];
	qp->attr.retry_cnt = 1;
	qp->comp.retry_left = 1;
	log.dup_seq_naks = true;
	for (k = 0; k < msgs; k++) {
		/* lose the second packet of a 10-packet WRITE: a NAK names it */
		log.drop_psn = droce_psn_add(qp->req.psn, 1);
		log.drop_armed = true;
		w = test_wqe(IBV_WR_RDMA_WRITE, 1 + k, p.buf[0], 10 * 1024, p.key[0]);
		w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 10 * 1024 * k;
		w.rkey = p.key[1];
		droce_tqp_post_send(qp, &w);
		ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
		ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
		ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(c.wr_id, 1 + k);
	}
	ck_assert_uint_eq(log.seq_naks, msgs);
	ck_assert_uint_eq(qp->cnt[DROCE_TQP_CNT_SEQ_NAKS_RX], 2 * msgs);
	ck_assert_uint_eq(qp->cnt[DROCE_TQP_CNT_RETRANSMITS], msgs);
	ck_assert_uint_eq(qp->cnt[DROCE_TQP_CNT_TIMEOUTS], 0);
	ck_assert_int_eq(qp->state, DROCE_TQP_RTS);
	ck_assert_mem_eq(p.buf[1], p.buf[0], 10 * 1024);
	test_pair_teardown(&p);
}
END_TEST

/* Order on the wire of node 1's READ response and its sequence NAK. */
struct nak_order_log {
	int seq;
	int read_resp;
	int seq_nak;
	uint32_t drop_psn;
	bool drop_armed;
	bool drop_read_resp;	/* lose the READ response too, once */
};

static bool
nak_order_sniff(struct sim *sim, int from, const struct droce_pkt *pkt, void *arg)
{
	struct nak_order_log *l = arg;

	(void)sim;
	l->seq++;
	if (from == 0 && l->drop_armed && pkt->psn == l->drop_psn) {
		l->drop_armed = false;
		return true;
	}
	if (from == 1 && pkt->opcode == DROCE_OP_RC_READ_RESPONSE_ONLY && l->read_resp == 0) {
		l->read_resp = l->seq;
		if (l->drop_read_resp)
			return true;
	}
	if (from == 1 && pkt->opcode == DROCE_OP_RC_ACKNOWLEDGE && l->seq_nak == 0 &&
	    pkt->aeth.syndrome == droce_aeth_syn_nak(DROCE_NAK_PSN_SEQ))
		l->seq_nak = l->seq;
	return false;
}

/*
 * A READ, then two SENDs of which the first is lost: the responder owes the
 * READ response when the gap shows, and its NAK must not overtake it (IBA
 * 9.7.5.1.2: responses in PSN order). A NAK ahead of the response names a
 * PSN past a READ the requester still waits for; it used to be ignored, and
 * with the one NAK per gap spent, only the retransmit timer recovered.
 * Loop 1 also loses the READ response: a NAK past an unanswered READ means
 * its response was lost, and the requester asks again at once, as for an
 * ACK past it.
 */
START_TEST(test_seq_nak_waits_behind_owed_read_responses)
{
	struct nak_order_log log = { .drop_read_resp = _i == 1 };
	struct droce_send_wqe w;
	struct test_pair p;
	struct droce_cqe c;
	int i;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 5, 0);
	p.sim->sniff = nak_order_sniff;
	p.sim->sniff_arg = &log;
	log.drop_psn = droce_psn_add(p.sim->node[0].qp[0].req.psn, 1);
	log.drop_armed = true;
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 100, p.key[1]);
	sim_post_recv(&p.sim->node[1], 0, 2, p.buf[1] + 100, 100, p.key[1]);
	w = test_wqe(IBV_WR_RDMA_READ, 1, p.buf[0], 100, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 8192;
	w.rkey = p.key[1];
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	for (i = 2; i <= 3; i++) {
		w = test_wqe(IBV_WR_SEND, (uint64_t)i, p.buf[0] + 16384, 10, p.key[0]);
		droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	}
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 3));
	for (i = 1; i <= 3; i++) {
		ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
		ck_assert_uint_eq(c.wr_id, (uint64_t)i);
		ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	}
	ck_assert_int_gt(log.read_resp, 0);
	ck_assert_int_gt(log.seq_nak, log.read_resp);
	/* the NAK, not the timer, brought the lost SEND back */
	ck_assert_uint_eq(p.sim->node[0].qp[0].cnt[DROCE_TQP_CNT_TIMEOUTS], 0);
	ck_assert_mem_eq(p.buf[0], p.buf[1] + 8192, 100);
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_error_state_flushes_everything_outstanding)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;
	int i;

	pair_setup(&p, &log);
	log.drop_all = true;
	for (i = 0; i < 5; i++) {
		w = test_wqe(IBV_WR_SEND, (uint64_t)i, p.buf[0], 10, p.key[0]);
		w.flags = i == 2 ? IBV_SEND_SIGNALED : 0;
		droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	}
	sim_post_recv(&p.sim->node[0], 0, 77, p.buf[0], 100, p.key[0]);
	droce_tqp_poll(&p.sim->node[0].qp[0], 0, 64);
	droce_tqp_set_state(&p.sim->node[0].qp[0], DROCE_TQP_ERR, 0, 0);
	for (i = 0; i < 5; i++) {
		ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
		ck_assert_uint_eq(c.wr_id, (uint64_t)i);
		ck_assert_uint_eq(c.status, IBV_WC_WR_FLUSH_ERR);
	}
	/* posting in the error state completes at once, flushed */
	w = test_wqe(IBV_WR_SEND, 9, p.buf[0], 10, p.key[0]);
	ck_assert_int_eq(droce_tqp_post_send(&p.sim->node[0].qp[0], &w), 0);
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.wr_id, 9);
	ck_assert_uint_eq(c.status, IBV_WC_WR_FLUSH_ERR);
	/* RESET refuses sends */
	droce_tqp_set_state(&p.sim->node[0].qp[0], DROCE_TQP_RESET, 0, 0);
	ck_assert_int_eq(droce_tqp_post_send(&p.sim->node[0].qp[0], &w), -EINVAL);
	test_pair_teardown(&p);
}
END_TEST

/*
 * A UC or UD send WQE completing in error moves its QP to SQE, not ERR (IBA
 * 10.3.1; found by the verbs model, tests/model/cases/ud-send-error-sqe.json):
 * later sends flush, receives still complete, and RTS sends again.
 */
START_TEST(test_uc_ud_send_error_enters_sqe)
{
	static const enum ibv_qp_type type[2] = { IBV_QPT_UC, IBV_QPT_UD };
	struct test_pair p;
	struct droce_send_wqe w;
	struct droce_cqe c;
	int from;

	test_pair_setup(&p, type[_i], 1024, 99, 0x5a);
	for (from = 0; from < 2; from++) {
		w = test_wqe(IBV_WR_SEND, 1, p.buf[from], 100, p.key[from]);
		if (type[_i] == IBV_QPT_UD) {
			sim_av(p.sim, from, 1 - from, &w.ud.av);
			w.ud.qpn = p.sim->node[1 - from].qp[0].attr.qpn;
			w.ud.qkey = 0x1234;
		}
		if (from == 0) {
			w.sge[0].lkey ^= 0xff;		/* resolves to nothing */
			droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
			ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
			ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
			ck_assert_uint_eq(c.status, IBV_WC_LOC_PROT_ERR);
			ck_assert_int_eq(p.sim->node[0].qp[0].state, DROCE_TQP_SQE);
			/* posted in SQE: flushed at once */
			w.sge[0].lkey ^= 0xff;
			w.wr_id = 2;
			ck_assert_int_eq(droce_tqp_post_send(&p.sim->node[0].qp[0], &w), 0);
			ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
			ck_assert_uint_eq(c.wr_id, 2);
			ck_assert_uint_eq(c.status, IBV_WC_WR_FLUSH_ERR);
			continue;
		}
		/* its receive queue still works */
		sim_post_recv(&p.sim->node[0], 0, 7, p.buf[0] + 2048, 1024, p.key[0]);
		droce_tqp_post_send(&p.sim->node[1].qp[0], &w);
		ck_assert(test_wait(p.sim, &p.sim->node[0].rcq[0], 1));
		ck_assert(sim_poll_cq(&p.sim->node[0].rcq[0], &c));
		ck_assert_uint_eq(c.wr_id, 7);
		ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	}
	/* back to RTS: it sends again */
	droce_tqp_set_state(&p.sim->node[0].qp[0], DROCE_TQP_RTS, 0, 0);
	w = test_wqe(IBV_WR_SEND, 3, p.buf[0], 100, p.key[0]);
	if (type[_i] == IBV_QPT_UD) {
		sim_av(p.sim, 0, 1, &w.ud.av);
		w.ud.qpn = p.sim->node[1].qp[0].attr.qpn;
		w.ud.qkey = 0x1234;
	}
	sim_post_recv(&p.sim->node[1], 0, 8, p.buf[1], 1024, p.key[1]);
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert(test_wait(p.sim, &p.sim->node[1].rcq[0], 1));
	test_pair_teardown(&p);
}
END_TEST

START_TEST(test_cq_overflow_moves_qp_to_error)
{
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	int i;

	pair_setup(&p, &log);
	p.sim->node[0].scq[0].size = 2;
	for (i = 0; i < 4; i++) {
		sim_post_recv(&p.sim->node[1], 0, (uint64_t)i, p.buf[1], 100, p.key[1]);
		w = test_wqe(IBV_WR_SEND, (uint64_t)i, p.buf[0], 10, p.key[0]);
		droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	}
	ck_assert(!test_wait(p.sim, &p.sim->node[0].scq[0], 3));
	ck_assert(p.sim->node[0].scq[0].overflow);
	ck_assert(p.sim->node[0].qp_error[0]);
	ck_assert_int_eq(p.sim->node[0].qp[0].state, DROCE_TQP_ERR);
	test_pair_teardown(&p);
}
END_TEST

/* Order of two events on the wire: a READ's last response, the next SEND. */
struct fence_log {
	int seq;
	int read_last;		/* sequence number of the last READ response */
	int send;		/* ... of the SEND request */
};

static bool
fence_sniff(struct sim *sim, int from, const struct droce_pkt *pkt, void *arg)
{
	struct fence_log *l = arg;

	(void)sim;
	l->seq++;
	if (from == 1 && pkt->opcode == DROCE_OP_RC_READ_RESPONSE_LAST)
		l->read_last = l->seq;
	if (from == 0 && pkt->opcode == DROCE_OP_RC_SEND_ONLY && l->send == 0)
		l->send = l->seq;
	return false;
}

START_TEST(test_fence_holds_a_send_until_earlier_reads_complete)
{
	struct test_pair p;
	struct fence_log log = { 0 };
	struct droce_send_wqe w;
	bool fenced = _i == 1;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 5, 0);
	p.sim->sniff = fence_sniff;
	p.sim->sniff_arg = &log;
	sim_post_recv(&p.sim->node[1], 0, 1, p.buf[1], 100, p.key[1]);
	w = test_wqe(IBV_WR_RDMA_READ, 1, p.buf[0], 8192, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 8192;
	w.rkey = p.key[1];
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	w = test_wqe(IBV_WR_SEND, 2, p.buf[0] + 16384, 10, p.key[0]);
	if (fenced)
		w.flags |= IBV_SEND_FENCE;
	droce_tqp_post_send(&p.sim->node[0].qp[0], &w);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 2));
	ck_assert_int_gt(log.read_last, 0);
	ck_assert_int_gt(log.send, 0);
	/* IBA 10.8.3.3: fenced, it waits for the READ; unfenced, it does not */
	if (fenced)
		ck_assert_int_gt(log.send, log.read_last);
	else
		ck_assert_int_lt(log.send, log.read_last);
	test_pair_teardown(&p);
}
END_TEST

static bool
all_sent(struct sim *sim, void *arg)
{
	(void)sim;
	return ((struct wire_log *)arg)->requests >= 10;
}

/* IBA 10.8.1: in SQD the message under way finishes, resent as needed; none begins. */
START_TEST(test_sqd_finishes_the_message_under_way_and_starts_none)
{
	struct droce_tqp *qp;
	struct test_pair p;
	struct wire_log log;
	struct droce_send_wqe w;
	struct droce_cqe c;
	unsigned int sent;

	pair_setup(&p, &log);
	qp = &p.sim->node[0].qp[0];
	/* a 10-packet WRITE whose second packet is lost: resent after the drain began */
	log.drop_psn = droce_psn_add(qp->req.psn, 1);
	log.drop_armed = true;
	w = test_wqe(IBV_WR_RDMA_WRITE, 1, p.buf[0], 10 * 1024, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1];
	w.rkey = p.key[1];
	droce_tqp_post_send(qp, &w);
	sim_run(p.sim, all_sent, &log, 1000000000ull);
	droce_tqp_set_state(qp, DROCE_TQP_SQD, 0, 0);
	ck_assert(!droce_tqp_sq_drained(qp));
	w = test_wqe(IBV_WR_RDMA_WRITE, 2, p.buf[0] + 16384, 100, p.key[0]);
	w.remote_addr = (uint64_t)(uintptr_t)p.buf[1] + 16384;
	w.rkey = p.key[1];
	droce_tqp_post_send(qp, &w);

	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.wr_id, 1);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[1], p.buf[0], 10 * 1024);
	ck_assert(droce_tqp_sq_drained(qp));
	/* the second WRITE waits for RTS: nothing more on the wire, no completion */
	sent = log.requests;
	ck_assert(!test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert_uint_eq(log.requests, sent);
	ck_assert(!droce_tqp_has_work(qp));

	droce_tqp_set_state(qp, DROCE_TQP_RTS, 0, 0);
	ck_assert(test_wait(p.sim, &p.sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p.sim->node[0].scq[0], &c));
	ck_assert_uint_eq(c.wr_id, 2);
	ck_assert_uint_eq(c.status, IBV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[1] + 16384, p.buf[0] + 16384, 100);
	test_pair_teardown(&p);
}
END_TEST

TCase *
tcase_transport_errors(void)
{
	TCase *tc = tcase_create("errors");

	tcase_add_test(tc, test_rnr_nak_makes_requester_wait_the_advertised_delay);
	tcase_add_test(tc, test_rnr_retry_exhaustion_fails_wqe_and_flushes_rest);
	tcase_add_test(tc, test_rnr_retry_7_retries_forever);
	tcase_add_loop_test(tc, test_protection_violation_naks_and_leaves_target_untouched, 0,
			    PROT_COUNT);
	tcase_add_test(tc, test_misaligned_atomic_is_invalid_request);
	tcase_add_test(tc, test_reads_beyond_max_dest_rd_atomic_are_invalid_request);
	tcase_add_test(tc, test_no_responder_resources_refuse_read_and_atomic);
	tcase_add_test(tc, test_send_longer_than_the_receive_buffer);
	tcase_add_loop_test(tc, test_receive_sge_failing_its_check_is_remote_operational_error, 0,
			    RSGE_COUNT);
	tcase_add_loop_test(tc, test_broken_receive_queue_fails_the_qp_never_rnr, 0, RQB_COUNT);
	tcase_add_test(tc, test_retry_exhaustion_after_retry_cnt_timeouts);
	tcase_add_test(tc, test_no_path_timeouts_spend_no_retries);
	tcase_add_test(tc, test_lost_read_response_is_asked_again_at_once);
	tcase_add_test(tc, test_one_nak_per_sequence_gap);
	tcase_add_loop_test(tc, test_duplicated_seq_nak_starts_one_round, 0, 2);
	tcase_add_loop_test(tc, test_seq_nak_waits_behind_owed_read_responses, 0, 2);
	tcase_add_test(tc, test_error_state_flushes_everything_outstanding);
	tcase_add_loop_test(tc, test_uc_ud_send_error_enters_sqe, 0, 2);
	tcase_add_test(tc, test_cq_overflow_moves_qp_to_error);
	tcase_add_loop_test(tc, test_fence_holds_a_send_until_earlier_reads_complete, 0, 2);
	tcase_add_test(tc, test_sqd_finishes_the_message_under_way_and_starts_none);
	return tc;
}
