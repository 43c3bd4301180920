/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_cm.h: the connection state machines, both sides, between two CM
 * instances over the simulated link of cm_sim.c. Each test scripts one
 * path of IBA ch. 12: the handshake and what the QPs are told, release from
 * either side or both at once, rejects, timeouts with their exact timing,
 * MRA, lost and duplicated messages answered from the last one sent, stale
 * connections, COMM_EST, an owner that disappears mid-way, and misuse of
 * the API. Node 0 is the active side unless a test says otherwise.
 */

#include <stdalign.h>
#include <string.h>

#include "cm_golden.h"
#include "cm_sim.h"
#include "droce_cm_ip.h"
#include "test_cm.h"

#define SEC	1000000000ull
#define SID	0x0000000001061c06ull	/* RDMA_PS_TCP, port 7174: rping's */

/* Linux's timers as cms_req_param() sets them: REQ wait and TIMEWAIT. */
#define WAIT_NS		(droce_cm_time_ns(20) + 2 * droce_cm_time_ns(18))	/* 6.44 s */
#define TIMEWAIT_NS	droce_cm_time_ns(19)					/* 2.15 s */

static struct droce_cm_id *
passive_id(struct cms *sim)
{
	const struct cms_ev *e = cms_last(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL);

	ck_assert_ptr_nonnull(e);
	return e->id;
}

/* One connection, node 0 active with QPN 0x100, up on both sides. */
static struct droce_cm_id *
connect_up(struct cms *sim, struct droce_cm_id **passive)
{
	struct droce_cm_id *a = cms_connect(sim, 0, SID, 0x100);

	cms_settle(sim, sim->now + 60 * SEC);
	ck_assert_str_eq(droce_cm_state_name(a->state), "ESTABLISHED");
	*passive = passive_id(sim);
	ck_assert_str_eq(droce_cm_state_name((*passive)->state), "ESTABLISHED");
	return a;
}

START_TEST(test_handshake_establishes_both_sides_with_negotiated_qp_attributes)
{
	struct cms *sim = cms_new(1);
	struct droce_cm_id *l = cms_listen(sim, 1, SID, 8), *a, *p;
	const struct cms_ev *req, *rep;
	const struct cms_qp *q;

	a = cms_connect(sim, 0, SID, 0x100);
	ck_assert_int_eq(a->state, DROCE_CM_REQ_SENT);
	cms_settle(sim, 60 * SEC);

	/* exactly REQ, REP, RTU on a clean link */
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REQ], 1);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 1);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_RTU], 1);
	ck_assert_uint_eq(sim->mads_sent, 3);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	req = cms_last(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL);
	ck_assert_ptr_nonnull(req);
	ck_assert_ptr_eq(req->listen, l);
	p = req->id;
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_RTU_RECEIVED, p), 1);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_REP_RECEIVED, a), 1);
	ck_assert_uint_eq(l->pending, 0);	/* answered: out of the backlog */

	/* what each side learnt from the other */
	ck_assert_uint_eq(req->msg.req.service_id, SID);
	ck_assert_uint_eq(req->msg.req.local_qpn, 0x100);
	ck_assert_str_eq((const char *)req->msg.req.private_data, "hello");
	ck_assert_uint_eq(p->remote_id, a->local_id);
	ck_assert_uint_eq(a->remote_id, p->local_id);
	ck_assert_uint_eq(a->remote_ca_guid, sim->node[1].cm.cfg.ca_guid);
	ck_assert_uint_eq(p->remote_ca_guid, sim->node[0].cm.cfg.ca_guid);
	rep = cms_last(&sim->node[0], DROCE_CM_EV_REP_RECEIVED, a);
	ck_assert_str_eq((const char *)rep->msg.rep.private_data, "accepted");
	ck_assert_uint_eq(rep->msg.rep.local_qpn, 0x300);
	/* the accept's depths as given (4 and 4, above the REQ's 2 and 1), as Linux's ib_cm */
	ck_assert_uint_eq(rep->msg.rep.responder_resources, 4);
	ck_assert_uint_eq(rep->msg.rep.initiator_depth, 4);

	/* active QP: RTR then RTS, with the passive side's numbers. Each
	 * message's Starting PSN is what its sender receives, as Linux reads
	 * it: in the rxe rping capture (tests/golden) the active side's first
	 * SEND carries the REP's PSN and the passive side's READ the REQ's */
	q = cms_qp_last(&sim->node[0], 0x100, DROCE_CM_QP_RTR);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(q->attr.dest_qpn, 0x300);
	ck_assert_uint_eq(q->attr.rq_psn, 0x45c325);
	ck_assert_uint_eq(q->attr.path_mtu, 3);
	ck_assert_uint_eq(q->attr.max_dest_rd_atomic, 4);	/* the REP's initiator depth */
	ck_assert_mem_eq(q->attr.path.dgid, sim->node[1].gid, 16);
	q = cms_qp_last(&sim->node[0], 0x100, DROCE_CM_QP_RTS);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(q->attr.sq_psn, 0x222223);
	ck_assert_uint_eq(q->attr.max_rd_atomic, 4);	/* the REP's responder resources */
	ck_assert_uint_eq(q->attr.timeout, 19);
	ck_assert_uint_eq(q->attr.retry_cnt, 7);
	ck_assert_uint_eq(q->attr.rnr_retry, 6);	/* what the REP asked for */

	/* passive QP: from the REQ; RTS before the REP left, as Linux's rdma_accept */
	q = cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_RTR);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(q->attr.dest_qpn, 0x100);
	ck_assert_uint_eq(q->attr.rq_psn, 0x222223);
	ck_assert_uint_eq(q->attr.path_mtu, 3);
	ck_assert_uint_eq(q->attr.max_dest_rd_atomic, 4);
	ck_assert_mem_eq(q->attr.path.sgid, sim->node[1].gid, 16);
	ck_assert_mem_eq(q->attr.path.dgid, sim->node[0].gid, 16);
	ck_assert_uint_eq(q->attr.path.flow_label, 0x71456);
	ck_assert_uint_eq(q->attr.path.hop_limit, 64);
	q = cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_RTS);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(q->attr.sq_psn, 0x45c325);
	ck_assert_uint_eq(q->attr.max_rd_atomic, 4);
	ck_assert_uint_eq(q->attr.timeout, 19);
	ck_assert_uint_eq(q->attr.retry_cnt, 7);
	ck_assert_uint_eq(q->attr.rnr_retry, 7);	/* what the REQ asked for */
	ck_assert_uint_le(q->t, cms_last(&sim->node[0], DROCE_CM_EV_REP_RECEIVED, a)->t);
	cms_free(sim);
}
END_TEST

/* Disconnect from node @closer; both sides pass TIMEWAIT for the local ACK timeout. */
static void
check_release(int closer)
{
	struct cms *sim = cms_new(2 + closer);
	struct droce_cm_id *a, *p, *ids[2];
	uint32_t qpn[2] = { 0x100, 0x300 };
	uint64_t t0;
	int i;

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	ids[0] = a;
	ids[1] = p;
	t0 = sim->now;
	ck_assert_int_eq(droce_cm_disconnect(ids[closer], "bye", 4, sim->now), 0);
	ck_assert_int_eq(ids[closer]->state, DROCE_CM_DREQ_SENT);
	ck_assert_ptr_nonnull(cms_qp_last(&sim->node[closer], qpn[closer], DROCE_CM_QP_ERR));
	cms_advance(sim, t0 + TIMEWAIT_NS / 2);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(ids[i]->state, DROCE_CM_TIMEWAIT);
		ck_assert(droce_cm_qpn_held(&sim->node[i].cm, qpn[i]));
		ck_assert_ptr_nonnull(cms_qp_last(&sim->node[i], qpn[i], DROCE_CM_QP_ERR));
	}
	ck_assert_uint_eq(cms_count(&sim->node[closer], DROCE_CM_EV_DREP_RECEIVED, ids[closer]), 1);
	ck_assert_uint_eq(cms_count(&sim->node[!closer], DROCE_CM_EV_DREQ_RECEIVED, ids[!closer]),
			  1);
	ck_assert_str_eq((const char *)cms_last(&sim->node[!closer], DROCE_CM_EV_DREQ_RECEIVED,
						NULL)->msg.dreq.private_data, "bye");
	cms_settle(sim, t0 + 10 * SEC);
	for (i = 0; i < 2; i++) {
		const struct cms_ev *e = cms_last(&sim->node[i], DROCE_CM_EV_TIMEWAIT_EXIT, ids[i]);

		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(ids[i]->state, DROCE_CM_IDLE);
		ck_assert(!droce_cm_qpn_held(&sim->node[i].cm, qpn[i]));
		/* TIMEWAIT began within a few link delays of t0 and lasted the ACK timeout */
		ck_assert_uint_ge(e->t, t0 + TIMEWAIT_NS);
		ck_assert_uint_le(e->t, t0 + TIMEWAIT_NS + 100 * 1000);
		ck_assert_uint_eq(cms_count(&sim->node[i], DROCE_CM_EV_DREQ_ERROR, NULL), 0);
	}
	ck_assert_uint_eq(sim->mads_sent, 5);	/* REQ REP RTU DREQ DREP */
	for (i = 0; i < 2; i++) {
		droce_cm_id_destroy(ids[i], sim->now);
		ck_assert_uint_eq(cms_ids_used(&sim->node[i]), i == 1 ? 1 : 0);	/* the listener */
	}
	cms_free(sim);
}

START_TEST(test_active_side_disconnects_then_both_leave_timewait)
{
	check_release(0);
}
END_TEST

START_TEST(test_passive_side_disconnects_then_both_leave_timewait)
{
	check_release(1);
}
END_TEST

START_TEST(test_simultaneous_dreqs_both_end_in_timewait)
{
	struct cms *sim = cms_new(4);
	struct droce_cm_id *a, *p;

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	ck_assert_int_eq(droce_cm_disconnect(a, NULL, 0, sim->now), 0);
	ck_assert_int_eq(droce_cm_disconnect(p, NULL, 0, sim->now), 0);
	cms_advance(sim, sim->now + SEC);
	ck_assert_int_eq(a->state, DROCE_CM_TIMEWAIT);
	ck_assert_int_eq(p->state, DROCE_CM_TIMEWAIT);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_DREQ_RECEIVED, a), 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_DREQ_RECEIVED, p), 1);
	cms_settle(sim, sim->now + 100 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_TIMEWAIT_EXIT, a), 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_TIMEWAIT_EXIT, p), 1);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_DREQ_ERROR, NULL), 0);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_DREQ_ERROR, NULL), 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_req_for_a_service_nobody_listens_on_is_rejected_with_reason_8)
{
	struct cms *sim = cms_new(5);
	struct droce_cm_id *a;
	const struct cms_ev *e;

	(void)cms_listen(sim, 1, SID + 1, 8);	/* another port */
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 60 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_INVALID_SERVICE_ID);
	ck_assert_uint_eq(e->msg.rej.msg_rejected, DROCE_CM_REF_REQ);
	ck_assert_uint_eq(e->msg.rej.remote_comm_id, a->local_id);
	ck_assert_int_eq(a->state, DROCE_CM_IDLE);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_NO_LISTENER], 1);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), 1);	/* the listener only */
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REQ], 1);	/* no retries */
	cms_free(sim);
}
END_TEST

/*
 * ECE: the active side's vendor ID and options travel in the REQ, the
 * passive side's in the REP (Linux's places: Vendor ID, AttributeModifier),
 * and each side's connection keeps what it sent and what it heard.
 */
START_TEST(test_ece_travels_in_the_req_and_the_rep)
{
	struct cms *sim = cms_new(61);
	struct droce_cm_req_param rq;
	struct droce_cm_rep_param rp = {
		.qpn = 0x300, .starting_psn = 0x222223, .responder_resources = 1,
		.initiator_depth = 1, .rnr_retry_count = 7,
		.ece = { .vendor_id = 0x02c9, .options = 0x5a5a0001 },
	};
	struct droce_cm_id *a, *p;
	const struct cms_ev *e;
	struct droce_cm_ece ece;

	sim->node[1].pol.accept = false;
	(void)cms_listen(sim, 1, SID, 8);
	ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &a), 0);
	cms_req_param(sim, 0, SID, 0x100, &rq);
	rq.ece.vendor_id = 0x15b3;
	rq.ece.options = 0x80000003;
	ck_assert_int_eq(droce_cm_connect(a, &rq, sim->now), 0);
	cms_advance(sim, SEC);		/* the REQ is in, unanswered */

	e = cms_last(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.req.vendor_id, 0x15b3);
	ck_assert_uint_eq(e->msg.hdr.attr_mod, 0x80000003);
	droce_cm_msg_ece(&e->msg, &ece);
	ck_assert_uint_eq(ece.vendor_id, 0x15b3);
	ck_assert_uint_eq(ece.options, 0x80000003);
	p = e->id;
	ck_assert_uint_eq(p->conn.remote_ece.vendor_id, 0x15b3);
	ck_assert_uint_eq(p->conn.remote_ece.options, 0x80000003);

	ck_assert_int_eq(droce_cm_accept(p, &rp, sim->now), 0);
	cms_settle(sim, sim->now + 60 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REP_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rep.vendor_id_h, 0x00);
	ck_assert_uint_eq(e->msg.rep.vendor_id_m, 0x02);
	ck_assert_uint_eq(e->msg.rep.vendor_id_l, 0xc9);
	ck_assert_uint_eq(e->msg.hdr.attr_mod, 0x5a5a0001);
	ck_assert_uint_eq(e->msg.rep.local_qpn, 0x300);	/* the neighbours are intact */
	ck_assert_uint_eq(e->msg.rep.starting_psn, 0x222223);
	ck_assert_uint_eq(a->conn.remote_ece.vendor_id, 0x02c9);
	ck_assert_uint_eq(a->conn.remote_ece.options, 0x5a5a0001);
	ck_assert_uint_eq(a->conn.local_ece.vendor_id, 0x15b3);
	ck_assert_uint_eq(p->conn.local_ece.vendor_id, 0x02c9);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	cms_free(sim);
}
END_TEST

START_TEST(test_consumer_reject_reaches_the_active_side_with_private_data)
{
	struct cms *sim = cms_new(6);
	struct droce_cm_id *a, *p;
	const struct cms_ev *e;

	sim->node[1].pol.accept = false;
	sim->node[1].pol.reject = DROCE_CM_REJ_CONSUMER_DEFINED;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 60 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, 28);
	ck_assert_str_eq((const char *)e->msg.rej.private_data, "go away");
	ck_assert_int_eq(a->state, DROCE_CM_IDLE);
	p = passive_id(sim);
	ck_assert_int_eq(p->state, DROCE_CM_IDLE);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REQ], 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_req_is_retried_max_cm_retries_times_then_times_out)	/* _i: max CM retries */
{
	struct cms *sim = cms_new(7);
	struct droce_cm_req_param p;
	struct droce_cm_id *a;
	const struct cms_ev *e;
	uint32_t retries = _i ? 15 : 2;

	sim->node[1].down = true;
	cms_req_param(sim, 0, SID, 0x100, &p);
	p.max_cm_retries = (uint8_t)retries;
	ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &a), 0);
	ck_assert_int_eq(droce_cm_connect(a, &p, sim->now), 0);
	ck_assert_uint_eq(droce_cm_next_timer(&sim->node[0].cm), WAIT_NS);
	cms_settle(sim, 1000 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REQ_ERROR, a);
	ck_assert_ptr_nonnull(e);
	/* one REQ and its retries, each after the peer's response time plus a round trip */
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REQ], retries + 1);
	ck_assert_uint_eq(e->t, (retries + 1) * WAIT_NS);
	/* and a REJ Timeout so that the passive side forgets its half */
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REJ], 1);
	ck_assert_int_eq(a->state, DROCE_CM_IDLE);
	ck_assert_uint_eq(sim->node[0].cm.cnt[DROCE_CM_CNT_RETRANSMITS], retries);
	ck_assert_uint_eq(sim->node[0].cm.cnt[DROCE_CM_CNT_TIMEOUTS], 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_duplicate_req_while_undecided_gets_mra_that_keeps_the_active_side_waiting)
{
	struct cms *sim = cms_new(8);
	struct droce_cm_id *a, *p;
	struct droce_cm_rep_param rp = { .qpn = 0x333, .starting_psn = 9, .responder_resources = 1,
					 .initiator_depth = 1 };
	const struct cms_ev *e;

	sim->node[1].pol.accept = false;	/* the owner takes its time */
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	/* the first retransmission is a duplicate: the passive CM answers it with an MRA */
	cms_advance(sim, WAIT_NS + SEC);
	p = passive_id(sim);
	ck_assert_int_eq(p->state, DROCE_CM_MRA_REQ_SENT);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_MRA], 1);
	e = cms_last(&sim->node[0], DROCE_CM_EV_MRA_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.mra.service_timeout, 24);
	ck_assert_uint_eq(e->msg.mra.msg_mraed, DROCE_CM_REF_REQ);
	ck_assert_int_eq(a->state, DROCE_CM_MRA_REQ_RCVD);
	/* the wait is now the service timeout (68.7 s) plus a round trip */
	ck_assert_uint_eq(droce_cm_next_timer(&sim->node[0].cm),
			  e->t + droce_cm_time_ns(24) + 2 * droce_cm_time_ns(18));
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_REQ], 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 1);

	/* long past 16 plain waits (103 s): still waiting, kept alive by MRAs */
	cms_advance(sim, 140 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_REQ_ERROR, NULL), 0);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REQ], 3);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_MRA], 2);	/* resent for the 2nd dup */
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 1);

	ck_assert_int_eq(droce_cm_accept(p, &rp, sim->now), 0);
	cms_settle(sim, sim->now + 60 * SEC);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	cms_free(sim);
}
END_TEST

static bool
drop_first_of(struct cms *sim, int from, const struct droce_cm_msg *msg, void *arg)
{
	int *want = arg;	/* { message type, copies still to drop, node } */

	(void)sim;
	if ((int)msg->type == want[0] && from == want[2] && want[1] > 0) {
		want[1]--;
		return true;
	}
	return false;
}

START_TEST(test_owner_sends_mra_for_a_req_and_the_wait_stretches)
{
	struct cms *sim = cms_new(9);
	struct droce_cm_id *a, *p;
	const struct cms_ev *e;

	sim->node[1].pol.accept = false;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, SEC);
	p = passive_id(sim);
	ck_assert_int_eq(droce_cm_send_mra(p, 22, "wait", 5, sim->now), 0);
	ck_assert_int_eq(droce_cm_send_mra(p, 22, NULL, 0, sim->now), -EINVAL);	/* sent */
	cms_advance(sim, 2 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_MRA_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq((const char *)e->msg.mra.private_data, "wait");
	ck_assert_uint_eq(droce_cm_next_timer(&sim->node[0].cm),
			  e->t + droce_cm_time_ns(22) + 2 * droce_cm_time_ns(18));
	ck_assert_int_eq(droce_cm_reject(p, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0,
					 sim->now), 0);
	cms_settle(sim, sim->now + 60 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_rep_unanswered_times_out_with_rej_and_both_enter_timewait)
{
	struct cms *sim = cms_new(10);
	struct droce_cm_id *a, *p;
	const struct cms_ev *e;

	sim->node[0].pol.rtu = false;	/* the active owner never answers its REP */
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 1000 * SEC);
	p = passive_id(sim);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 16);
	ck_assert_uint_eq(sim->node[0].cm.cnt[DROCE_CM_CNT_DUP_REP], 15);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REP_ERROR, p), 1);
	ck_assert_ptr_nonnull(cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_ERR));
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_TIMEOUT);
	ck_assert_uint_eq(e->msg.rej.ari_len, 8);	/* the GUID of who gave up */
	ck_assert_uint_eq(e->msg.rej.ari[7], 0x02);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_TIMEWAIT_EXIT, a), 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_TIMEWAIT_EXIT, p), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_lost_rtu_is_resent_for_the_duplicate_rep)
{
	struct cms *sim = cms_new(11);
	int drop[3] = { DROCE_CM_MSG_RTU, 1, 0 };
	struct droce_cm_id *a, *p;

	sim->sniff = drop_first_of;
	sim->sniff_arg = drop;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 60 * SEC);
	p = passive_id(sim);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 2);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_RTU], 2);
	ck_assert_uint_eq(sim->node[0].cm.cnt[DROCE_CM_CNT_DUP_REP], 1);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_REP_RECEIVED, a), 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_RTU_RECEIVED, p), 1);
	ck_assert_uint_eq(cms_last(&sim->node[1], DROCE_CM_EV_RTU_RECEIVED, p)->t,
			  WAIT_NS + 3 * sim->link.delay_ns);
	cms_free(sim);
}
END_TEST

START_TEST(test_lost_rep_is_resent_for_the_duplicate_req)
{
	struct cms *sim = cms_new(12);
	int drop[3] = { DROCE_CM_MSG_REP, 1, 1 };
	struct droce_cm_id *a;

	sim->sniff = drop_first_of;
	sim->sniff_arg = drop;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 60 * SEC);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	ck_assert_int_eq(passive_id(sim)->state, DROCE_CM_ESTABLISHED);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REQ], 2);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 2);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 1);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_REQ], 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_lost_drep_is_resent_for_the_duplicate_dreq)
{
	struct cms *sim = cms_new(13);
	int drop[3] = { DROCE_CM_MSG_DREP, 1, 1 };
	struct droce_cm_id *a, *p;

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	sim->sniff = drop_first_of;
	sim->sniff_arg = drop;
	ck_assert_int_eq(droce_cm_disconnect(a, NULL, 0, sim->now), 0);
	cms_advance(sim, sim->now + SEC);
	ck_assert_int_eq(a->state, DROCE_CM_DREQ_SENT);
	ck_assert_int_eq(p->state, DROCE_CM_TIMEWAIT);
	/* the passive TIMEWAIT (2.1 s) ends before the DREQ is retried (6.4 s): the
	 * retry finds no id there and is still answered, as Linux answers it */
	cms_settle(sim, sim->now + 100 * SEC);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_DREQ], 2);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_DREP], 2);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_DREP_RECEIVED, a), 1);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_TIMEWAIT_EXIT, a), 1);
	cms_free(sim);
}
END_TEST

/*
 * The real REQ of an rxe rping (tests/golden/rdma_cm_rping.pcap, Starting
 * PSN 0x45c325): the passive side's QP must send from that PSN, as the
 * capture's passive rxe did (its first READ request, frame 6, has PSN
 * 0x45c325), and receive from the PSN of its own REP. Read the other way
 * round, every first packet is a duplicate to the kernel (doc/interop.md).
 */
START_TEST(test_passive_side_sends_from_the_reqs_psn_as_linux)
{
	struct cms *sim = cms_new(40);
	alignas(8) uint8_t mad[DROCE_MAD_BYTES] = { 0 };
	const struct cms_qp *q;

	(void)cms_listen(sim, 1, 0x0000000001061c06ull, 8);	/* RDMA_PS_TCP, port 7174 */
	memcpy(mad, golden_req, sizeof(golden_req));
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	q = cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_RTR);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(q->attr.dest_qpn, 0x1b);
	ck_assert_uint_eq(q->attr.rq_psn, 0x222223);	/* what our REP says */
	q = cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_RTS);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(q->attr.sq_psn, 0x45c325);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_duplicate_dreq_in_timewait_gets_the_drep_again)
{
	struct cms *sim = cms_new(14);
	struct droce_cm_msg dreq;
	struct droce_cm_id *a, *p;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	ck_assert_int_eq(droce_cm_disconnect(a, NULL, 0, sim->now), 0);
	cms_advance(sim, sim->now + SEC / 10);
	ck_assert_int_eq(p->state, DROCE_CM_TIMEWAIT);
	/* replay the DREQ as if it came again */
	memcpy(&dreq, &cms_last(&sim->node[1], DROCE_CM_EV_DREQ_RECEIVED, p)->msg, sizeof(dreq));
	ck_assert_int_eq(droce_cm_mad_build(&dreq, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_DREP], 2);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_DREQ], 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_DREQ_RECEIVED, p), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_dreq_overtaking_the_rtu_closes_the_passive_side)
{
	struct cms *sim = cms_new(15);
	int drop[3] = { DROCE_CM_MSG_RTU, 100, 0 };
	struct droce_cm_id *a, *p;

	sim->sniff = drop_first_of;
	sim->sniff_arg = drop;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, SEC / 10);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	p = passive_id(sim);
	ck_assert_int_eq(p->state, DROCE_CM_REP_SENT);
	ck_assert_int_eq(droce_cm_disconnect(a, NULL, 0, sim->now), 0);
	cms_settle(sim, sim->now + 100 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_DREQ_RECEIVED, p), 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REP_ERROR, NULL), 0);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_TIMEWAIT_EXIT, p), 1);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_DREP_RECEIVED, a), 1);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_comm_est_establishes_without_the_rtu_and_stops_rep_retries)
{
	struct cms *sim = cms_new(16);
	int drop[3] = { DROCE_CM_MSG_RTU, 100, 0 };
	struct droce_cm_id *a, *p;

	sim->sniff = drop_first_of;
	sim->sniff_arg = drop;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, SEC / 10);
	p = passive_id(sim);
	ck_assert_int_eq(droce_cm_establish(p, sim->now), 0);	/* data arrived first */
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	ck_assert_int_eq(droce_cm_establish(p, sim->now), -EINVAL);
	cms_settle(sim, sim->now + 100 * SEC);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_RTU_RECEIVED, NULL), 0);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	cms_free(sim);
}
END_TEST

START_TEST(test_duplicate_req_after_establishment_is_ignored)
{
	struct cms *sim = cms_new(17);
	struct droce_cm_id *a, *p;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	uint64_t sent;

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	(void)a;
	ck_assert_int_eq(droce_cm_mad_build(&cms_last(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED,
						      p)->msg, mad, sizeof(mad)), DROCE_MAD_BYTES);
	sent = sim->mads_sent;
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	ck_assert_uint_eq(sim->mads_sent, sent);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_REQ], 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 1);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	cms_free(sim);
}
END_TEST

START_TEST(test_req_from_a_connected_qpn_is_stale_and_the_old_connection_closes)
{
	struct cms *sim = cms_new(18);
	struct droce_cm_id *a, *p, *a2;
	const struct cms_ev *e;

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	/* the same QPN again with a new comm ID: the peer lost track of it */
	a2 = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, sim->now + SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_STALE_CONN);
	ck_assert_int_eq(a2->state, DROCE_CM_TIMEWAIT);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_STALE], 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 1);
	/* and the passive side disconnects the old one */
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_DREQ_RECEIVED, a), 1);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_DREP_RECEIVED, p), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_req_from_a_qpn_still_in_timewait_is_stale)
{
	struct cms *sim = cms_new(19);
	struct droce_cm_id *a, *p, *a2;
	const struct cms_ev *e;

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	ck_assert_int_eq(droce_cm_disconnect(a, NULL, 0, sim->now), 0);
	cms_advance(sim, sim->now + SEC / 10);
	ck_assert_int_eq(p->state, DROCE_CM_TIMEWAIT);
	/* what the owner must check before reusing the QPN */
	ck_assert(droce_cm_qpn_held(&sim->node[0].cm, 0x100));
	a2 = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, sim->now + SEC / 10);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_STALE_CONN);
	/* after TIMEWAIT the QPN is free on both sides and a new connection comes up */
	cms_settle(sim, sim->now + 100 * SEC);
	ck_assert(!droce_cm_qpn_held(&sim->node[0].cm, 0x100));
	droce_cm_id_destroy(a2, sim->now);
	a2 = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, sim->now + 100 * SEC);
	ck_assert_int_eq(a2->state, DROCE_CM_ESTABLISHED);
	cms_free(sim);
}
END_TEST

START_TEST(test_unknown_comm_ids_are_answered_or_dropped_as_linux_does)
{
	struct cms *sim = cms_new(20);
	struct droce_cm_msg m;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	enum droce_cm_msg_type t;

	for (t = 0; t < DROCE_CM_MSG_COUNT; t++) {
		uint64_t sent = sim->mads_sent;

		if (t == DROCE_CM_MSG_REQ || t == DROCE_CM_MSG_SIDR_REQ)
			continue;
		cms_msg(&m, t, 0x1234, 0x5678);
		ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
		ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
		if (t == DROCE_CM_MSG_REP) {	/* REJ Invalid Comm ID */
			ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REJ], 1);
		} else if (t == DROCE_CM_MSG_DREQ) {	/* DREP: nothing to close */
			ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_DREP], 1);
		} else {
			ck_assert_uint_eq(sim->mads_sent, sent);
		}
	}
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DROP_NO_ID], DROCE_CM_MSG_COUNT - 2);
	ck_assert_uint_eq(sim->node[1].n_ev, 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_messages_about_our_id_from_another_host_are_dropped)
{
	struct cms *sim = cms_new(21);
	struct droce_cm_id *a, *p;
	struct droce_cm_addr other;
	struct droce_cm_msg m;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	/* a DREQ naming the right IDs and QPN, from a third host */
	cms_msg(&m, DROCE_CM_MSG_DREQ, a->local_id, p->local_id);
	m.dreq.remote_qpn = 0x300;
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	memset(&other, 0, sizeof(other));
	memcpy(other.local_gid, sim->node[1].gid, 16);
	memcpy(other.remote_gid, sim->node[0].gid, 16);
	other.remote_gid[15] = 99;
	other.remote_qpn = 1;
	ck_assert_int_eq(droce_cm_rx(&sim->node[1].cm, &other, mad, sizeof(mad), sim->now),
			 DROCE_CM_MAD_OK);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	/* from the right host but naming another QPN */
	m.dreq.remote_qpn = 0x301;
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DROP_QPN], 1);
	/* the right one */
	m.dreq.remote_qpn = 0x300;
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	ck_assert_int_eq(p->state, DROCE_CM_TIMEWAIT);
	cms_free(sim);
}
END_TEST

START_TEST(test_qp_failure_on_accept_rejects_with_no_qp)
{
	struct cms *sim = cms_new(22);
	struct droce_cm_id *a;
	const struct cms_ev *e;

	sim->node[1].pol.qp_fail = DROCE_CM_QP_RTS;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 60 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_NO_QP);
	/* the QP that reached RTR is flushed */
	ck_assert_ptr_nonnull(cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_RTR));
	ck_assert_ptr_nonnull(cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_ERR));
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_qp_failure_on_rtu_rejects_the_rep)
{
	struct cms *sim = cms_new(23);
	struct droce_cm_id *a, *p;
	const struct cms_ev *e;

	sim->node[0].pol.qp_fail = DROCE_CM_QP_RTR;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 60 * SEC);
	p = passive_id(sim);
	e = cms_last(&sim->node[1], DROCE_CM_EV_REJ_RECEIVED, p);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.msg_rejected, DROCE_CM_REF_REP);
	ck_assert_ptr_nonnull(cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_ERR));
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_TIMEWAIT_EXIT, p), 1);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_TIMEWAIT_EXIT, a), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_killed_active_owner_mid_handshake_frees_the_passive_half)
{
	struct cms *sim = cms_new(24);
	struct droce_cm_id *a, *p;
	unsigned int n_ev;
	const struct cms_ev *e;

	sim->node[1].pol.accept = false;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, SEC);
	p = passive_id(sim);
	n_ev = sim->node[0].n_ev;
	droce_cm_id_destroy(a, sim->now);	/* the client died before the answer */
	ck_assert_uint_eq(cms_ids_used(&sim->node[0]), 0);
	cms_settle(sim, sim->now + 100 * SEC);
	/* a REJ Timeout that names us by CA GUID, since the passive ID was unknown */
	e = cms_last(&sim->node[1], DROCE_CM_EV_REJ_RECEIVED, p);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_TIMEOUT);
	ck_assert_uint_eq(e->msg.rej.remote_comm_id, 0);
	ck_assert_int_eq(p->state, DROCE_CM_IDLE);
	ck_assert_uint_eq(sim->node[1].ids[0].pending, 0);	/* the listener's backlog */
	ck_assert_uint_eq(sim->node[0].n_ev, n_ev);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REQ], 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_killed_owner_of_a_connection_disconnects_it_despite_loss)	/* _i: which side */
{
	struct cms *sim = cms_new(25 + _i);
	struct droce_cm_id *a, *p, *gone, *peer;
	unsigned int n_ev;

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	gone = _i ? p : a;
	peer = _i ? a : p;
	sim->link.loss = 0.5;
	n_ev = sim->node[_i].n_ev;
	droce_cm_id_destroy(gone, sim->now);
	ck_assert_ptr_nonnull(cms_qp_last(&sim->node[_i], _i ? 0x300 : 0x100, DROCE_CM_QP_ERR));
	cms_settle(sim, sim->now + 1000 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[!_i], DROCE_CM_EV_DREQ_RECEIVED, peer), 1);
	ck_assert_uint_eq(cms_count(&sim->node[!_i], DROCE_CM_EV_TIMEWAIT_EXIT, peer), 1);
	ck_assert_uint_eq(sim->node[_i].n_ev, n_ev);		/* none for a destroyed id */
	ck_assert_int_eq(gone->state, DROCE_CM_FREE);		/* after its TIMEWAIT */
	ck_assert_uint_eq(cms_ids_used(&sim->node[_i]), _i ? 1 : 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_killed_passive_owner_before_answering_rejects_the_req)
{
	struct cms *sim = cms_new(27);
	struct droce_cm_id *a;
	const struct cms_ev *e;

	sim->node[1].pol.accept = false;
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, SEC);
	droce_cm_id_destroy(passive_id(sim), sim->now);
	cms_settle(sim, sim->now + 100 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_CONSUMER_DEFINED);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_destroyed_listener_leaves_its_connections_and_refuses_new_reqs)
{
	struct cms *sim = cms_new(28);
	struct droce_cm_id *l, *a, *p, *a2;
	const struct cms_ev *e;

	l = cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	droce_cm_id_destroy(l, sim->now);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	a2 = cms_connect(sim, 0, SID, 0x101);
	cms_settle(sim, sim->now + 60 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_INVALID_SERVICE_ID);
	ck_assert_int_eq(droce_cm_disconnect(p, NULL, 0, sim->now), 0);
	cms_settle(sim, sim->now + 60 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_TIMEWAIT_EXIT, a), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_api_refuses_calls_in_the_wrong_state_or_with_bad_arguments)
{
	struct cms *sim = cms_new(29);
	struct droce_cm_req_param rq;
	struct droce_cm_rep_param rp = { .qpn = 1 };
	struct droce_cm_qp_attr qa;
	struct droce_cm_id *id, *l, *a, *p;
	uint8_t big[256] = { 0 };
	unsigned int i;

	ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &id), 0);
	ck_assert_int_eq(droce_cm_accept(id, &rp, 0), -EINVAL);
	ck_assert_int_eq(droce_cm_send_rtu(id, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(droce_cm_disconnect(id, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(droce_cm_reject(id, 28, NULL, 0, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(droce_cm_send_mra(id, 10, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(droce_cm_establish(id, 0), -EINVAL);
	ck_assert_int_eq(droce_cm_qp_attr(id, DROCE_CM_QP_RTR, &qa), -EINVAL);
	ck_assert_int_eq(droce_cm_qp_attr(id, DROCE_CM_QP_ERR, &qa), 0);
	cms_req_param(sim, 0, SID, 0x100, &rq);
	rq.pdata = big;
	rq.pdata_len = 93;	/* over the REQ's 92 */
	ck_assert_int_eq(droce_cm_connect(id, &rq, 0), -EINVAL);
	rq.pdata_len = 92;
	rq.path.mtu = 6;
	ck_assert_int_eq(droce_cm_connect(id, &rq, 0), -EINVAL);
	rq.path.mtu = 3;
	rq.transport = DROCE_CM_TRANSPORT_RD;
	ck_assert_int_eq(droce_cm_connect(id, &rq, 0), -EINVAL);
	rq.transport = DROCE_CM_TRANSPORT_UC;
	ck_assert_int_eq(droce_cm_connect(id, &rq, 0), 0);
	ck_assert_int_eq(droce_cm_connect(id, &rq, 0), -EINVAL);
	ck_assert_int_eq(droce_cm_listen(id, SID, 0, 1), -EINVAL);
	ck_assert_int_eq(droce_cm_qp_attr(id, DROCE_CM_QP_RTR, &qa), -EINVAL);	/* no REP yet */

	/* listeners: one per service ID, masks included */
	l = cms_listen(sim, 1, SID, 1);
	ck_assert_int_eq(droce_cm_id_create(&sim->node[1].cm, NULL, &id), 0);
	ck_assert_int_eq(droce_cm_listen(id, SID, 0, 1), -EADDRINUSE);
	ck_assert_int_eq(droce_cm_listen(id, SID & ~0xffffull, 0xffffffffffff0000ull, 1),
			 -EADDRINUSE);
	ck_assert_int_eq(droce_cm_listen(id, SID + 1, 0, 1), 0);
	droce_cm_id_destroy(id, 0);
	droce_cm_id_destroy(l, 0);

	/* private data limits of the other messages */
	(void)cms_listen(sim, 1, SID, 8);
	sim->node[1].pol.accept = false;
	a = cms_connect(sim, 0, SID, 0x101);
	cms_advance(sim, sim->now + SEC);
	p = passive_id(sim);
	rp.pdata = big;
	rp.pdata_len = 197;
	ck_assert_int_eq(droce_cm_accept(p, &rp, sim->now), -EINVAL);
	ck_assert_int_eq(droce_cm_reject(p, 28, big, 73, NULL, 0, sim->now), -EINVAL);
	ck_assert_int_eq(droce_cm_reject(p, 28, NULL, 0, big, 149, sim->now), -EINVAL);
	ck_assert_int_eq(droce_cm_send_mra(p, 1, big, 223, sim->now), -EINVAL);
	rp.pdata_len = 196;
	ck_assert_int_eq(droce_cm_accept(p, &rp, sim->now), 0);
	cms_settle(sim, sim->now + 60 * SEC);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	ck_assert_int_eq(droce_cm_disconnect(a, big, 221, sim->now), -EINVAL);
	ck_assert_int_eq(droce_cm_disconnect(a, big, 220, sim->now), 0);
	cms_free(sim);

	/* every id in use: -ENOMEM */
	sim = cms_new(30);
	for (i = 0; i < CMS_IDS; i++)
		ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &id), 0);
	ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &id), -ENOMEM);
	cms_free(sim);
}
END_TEST

START_TEST(test_comm_ids_are_unique_nonzero_and_depend_on_the_seed)
{
	struct cms *sim = cms_new(31), *other = cms_new(32);
	static uint32_t seen[4096];
	struct droce_cm_id *id, *o;
	unsigned int i, j, bad = 0, same = 0;

	/* plain counting: a ck_assert per pair would cost Check a write each */
	for (i = 0; i < DROCE_DIM(seen); i++) {
		if (droce_cm_id_create(&sim->node[0].cm, NULL, &id) != 0 ||
		    droce_cm_id_create(&other->node[0].cm, NULL, &o) != 0)
			ck_abort_msg("no id at round %u", i);
		bad += id->local_id == 0 || id->local_id == o->local_id;
		seen[i] = id->local_id;
		droce_cm_id_destroy(id, 0);
		droce_cm_id_destroy(o, 0);
	}
	for (i = 0; i < DROCE_DIM(seen); i++)
		for (j = 0; j < i; j++)
			same += seen[i] == seen[j];
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(same, 0);
	cms_free(sim);
	cms_free(other);
}
END_TEST

START_TEST(test_active_side_mra_for_a_rep_stretches_the_passive_wait)
{
	struct cms *sim = cms_new(33);
	struct droce_cm_id *a, *p;
	const struct cms_ev *e;

	sim->node[0].pol.rtu = false;	/* the active owner takes its time */
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, SEC);
	ck_assert_int_eq(a->state, DROCE_CM_REP_RCVD);
	ck_assert_int_eq(droce_cm_send_mra(a, 25, NULL, 0, sim->now), 0);
	ck_assert_int_eq(a->state, DROCE_CM_MRA_REP_SENT);
	cms_advance(sim, sim->now + SEC);
	p = passive_id(sim);
	e = cms_last(&sim->node[1], DROCE_CM_EV_MRA_RECEIVED, p);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.mra.msg_mraed, DROCE_CM_REF_REP);
	ck_assert_int_eq(p->state, DROCE_CM_MRA_REP_RCVD);
	ck_assert_uint_eq(droce_cm_next_timer(&sim->node[1].cm),
			  e->t + droce_cm_time_ns(25) + 2 * droce_cm_time_ns(18));
	/* the REP is retried after the stretched wait; the MRA answers it again */
	cms_advance(sim, e->t + droce_cm_time_ns(25) + 2 * droce_cm_time_ns(18) + SEC);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REP], 2);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_MRA], 2);
	ck_assert_int_eq(droce_cm_send_rtu(a, NULL, 0, sim->now), 0);
	cms_settle(sim, sim->now + 60 * SEC);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REP_ERROR, NULL), 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_slow_owner_of_a_dreq_gets_it_once_and_dying_still_answers)
{
	struct cms *sim = cms_new(34);
	struct droce_cm_id *a, *p;
	struct droce_cm_msg dreq;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];

	sim->node[1].pol.drep = false;
	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	ck_assert_int_eq(droce_cm_disconnect(a, NULL, 0, sim->now), 0);
	cms_advance(sim, sim->now + SEC);
	ck_assert_int_eq(p->state, DROCE_CM_DREQ_RCVD);
	memcpy(&dreq, &cms_last(&sim->node[1], DROCE_CM_EV_DREQ_RECEIVED, p)->msg, sizeof(dreq));
	ck_assert_int_eq(droce_cm_mad_build(&dreq, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_DREQ_RECEIVED, p), 1);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_DREQ], 1);
	droce_cm_id_destroy(p, sim->now);	/* killed: the DREP goes out anyway */
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_DREP], 1);
	ck_assert_int_eq(p->state, DROCE_CM_TIMEWAIT);
	cms_settle(sim, sim->now + 100 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_DREP_RECEIVED, a), 1);
	ck_assert_int_eq(p->state, DROCE_CM_FREE);
	cms_free(sim);
}
END_TEST

START_TEST(test_killed_owner_during_the_rep_exchange_rejects_it)	/* _i: 0 passive, 1 active */
{
	struct cms *sim = cms_new(35);
	int drop[3] = { DROCE_CM_MSG_RTU, 100, 0 };
	struct droce_cm_id *a, *p, *gone, *peer;
	const struct cms_ev *e;

	if (_i) {
		sim->node[0].pol.rtu = false;		/* active: in REP_RCVD */
	} else {
		sim->sniff = drop_first_of;		/* passive: in REP_SENT */
		sim->sniff_arg = drop;
	}
	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_advance(sim, SEC / 10);
	p = passive_id(sim);
	gone = _i ? a : p;
	peer = _i ? p : a;
	ck_assert_int_eq(gone->state, _i ? DROCE_CM_REP_RCVD : DROCE_CM_REP_SENT);
	droce_cm_id_destroy(gone, sim->now);
	ck_assert_int_eq(gone->state, DROCE_CM_TIMEWAIT);
	cms_settle(sim, sim->now + 100 * SEC);
	e = cms_last(&sim->node[_i], DROCE_CM_EV_REJ_RECEIVED, peer);	/* peer's node is _i */
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_CONSUMER_DEFINED);
	ck_assert_uint_eq(e->msg.rej.msg_rejected, DROCE_CM_REF_REP);
	/* the passive QP had reached RTS: flushed; the active one (already
	 * established, case 0) is flushed by the REJ too */
	ck_assert_ptr_nonnull(cms_qp_last(&sim->node[1], 0x300, DROCE_CM_QP_ERR));
	if (!_i)
		ck_assert_ptr_nonnull(cms_qp_last(&sim->node[0], 0x100, DROCE_CM_QP_ERR));
	ck_assert_uint_eq(cms_count(&sim->node[_i], DROCE_CM_EV_TIMEWAIT_EXIT, peer), 1);
	ck_assert_int_eq(gone->state, DROCE_CM_FREE);
	cms_free(sim);
}
END_TEST

START_TEST(test_rep_naming_a_connection_we_have_is_stale)
{
	struct cms *sim = cms_new(36);
	struct droce_cm_id *a, *p, *a2;
	struct droce_cm_msg m;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];

	(void)cms_listen(sim, 1, SID, 8);
	a = connect_up(sim, &p);
	sim->node[1].down = true;
	a2 = cms_connect(sim, 0, SID, 0x101);
	/* a REP for a2 that reuses the comm ID of the live connection */
	cms_msg(&m, DROCE_CM_MSG_REP, p->local_id, a2->local_id);
	m.rep.local_ca_guid = sim->node[1].cm.cfg.ca_guid;
	m.rep.local_qpn = 0x999;
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_int_eq(cms_inject(sim, 1, 0, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	ck_assert_uint_eq(sim->node[0].cm.cnt[DROCE_CM_CNT_STALE], 1);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_REJ], 1);
	ck_assert_int_eq(a2->state, DROCE_CM_REQ_SENT);
	/* ... or its QPN */
	cms_msg(&m, DROCE_CM_MSG_REP, 0xbeef, a2->local_id);
	m.rep.local_ca_guid = sim->node[1].cm.cfg.ca_guid;
	m.rep.local_qpn = 0x300;
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_int_eq(cms_inject(sim, 1, 0, mad, sizeof(mad)), DROCE_CM_MAD_OK);
	ck_assert_uint_eq(sim->node[0].cm.cnt[DROCE_CM_CNT_STALE], 2);
	ck_assert_int_eq(a2->state, DROCE_CM_REQ_SENT);
	ck_assert_int_eq(a->state, DROCE_CM_ESTABLISHED);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_REP_RECEIVED, a2), 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_names_of_states_events_and_counters_are_distinct)
{
	unsigned int i, j;

	for (i = 0; i < DROCE_CM_NSTATES; i++)
		for (j = 0; j < i; j++)
			ck_assert_str_ne(droce_cm_state_name(i), droce_cm_state_name(j));
	for (i = 0; i < DROCE_CM_EV_COUNT; i++)
		for (j = 0; j < i; j++)
			ck_assert_str_ne(droce_cm_event_name(i), droce_cm_event_name(j));
	for (i = 0; i < DROCE_CM_CNT_COUNT; i++)
		for (j = 0; j < i; j++)
			ck_assert_str_ne(droce_cm_counter_name[i], droce_cm_counter_name[j]);
	ck_assert_str_eq(droce_cm_state_name(DROCE_CM_TIMEWAIT), "TIMEWAIT");
	ck_assert_str_eq(droce_cm_event_name(DROCE_CM_EV_REQ_RECEIVED), "REQ_RECEIVED");
	ck_assert_str_eq(droce_cm_state_name(DROCE_CM_NSTATES), "?");
	ck_assert_str_eq(droce_cm_event_name(DROCE_CM_EV_COUNT), "?");
}
END_TEST

START_TEST(test_init_refuses_bad_tables)
{
	static struct droce_cm_id ids[8];
	static const struct droce_cm_ops no_send = { 0 };
	struct droce_cm_config cfg = { .ca_guid = 1 };
	struct droce_cm cm;
	struct cms *sim = cms_new(37);

	ck_assert_int_eq(droce_cm_init(&cm, &cfg, ids, 0, sim->node[0].cm.ops, NULL), -EINVAL);
	ck_assert_int_eq(droce_cm_init(&cm, &cfg, ids, 6, sim->node[0].cm.ops, NULL), -EINVAL);
	ck_assert_int_eq(droce_cm_init(&cm, &cfg, ids, 8, &no_send, NULL), -EINVAL);
	ck_assert_int_eq(droce_cm_init(&cm, &cfg, ids, 8, sim->node[0].cm.ops, NULL), 0);
	ck_assert_uint_eq(cm.id_bits, 3);
	cms_free(sim);
}
END_TEST

TCase *
test_cm_conn_tcase(void)
{
	TCase *tc = tcase_create("conn");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_handshake_establishes_both_sides_with_negotiated_qp_attributes);
	tcase_add_test(tc, test_passive_side_sends_from_the_reqs_psn_as_linux);
	tcase_add_test(tc, test_active_side_disconnects_then_both_leave_timewait);
	tcase_add_test(tc, test_passive_side_disconnects_then_both_leave_timewait);
	tcase_add_test(tc, test_simultaneous_dreqs_both_end_in_timewait);
	tcase_add_test(tc, test_req_for_a_service_nobody_listens_on_is_rejected_with_reason_8);
	tcase_add_test(tc, test_consumer_reject_reaches_the_active_side_with_private_data);
	tcase_add_test(tc, test_ece_travels_in_the_req_and_the_rep);
	tcase_add_loop_test(tc, test_req_is_retried_max_cm_retries_times_then_times_out, 0, 2);
	tcase_add_test(tc,
		test_duplicate_req_while_undecided_gets_mra_that_keeps_the_active_side_waiting);
	tcase_add_test(tc, test_owner_sends_mra_for_a_req_and_the_wait_stretches);
	tcase_add_test(tc, test_rep_unanswered_times_out_with_rej_and_both_enter_timewait);
	tcase_add_test(tc, test_lost_rtu_is_resent_for_the_duplicate_rep);
	tcase_add_test(tc, test_lost_rep_is_resent_for_the_duplicate_req);
	tcase_add_test(tc, test_lost_drep_is_resent_for_the_duplicate_dreq);
	tcase_add_test(tc, test_duplicate_dreq_in_timewait_gets_the_drep_again);
	tcase_add_test(tc, test_dreq_overtaking_the_rtu_closes_the_passive_side);
	tcase_add_test(tc, test_comm_est_establishes_without_the_rtu_and_stops_rep_retries);
	tcase_add_test(tc, test_duplicate_req_after_establishment_is_ignored);
	tcase_add_test(tc, test_req_from_a_connected_qpn_is_stale_and_the_old_connection_closes);
	tcase_add_test(tc, test_req_from_a_qpn_still_in_timewait_is_stale);
	tcase_add_test(tc, test_unknown_comm_ids_are_answered_or_dropped_as_linux_does);
	tcase_add_test(tc, test_messages_about_our_id_from_another_host_are_dropped);
	tcase_add_test(tc, test_qp_failure_on_accept_rejects_with_no_qp);
	tcase_add_test(tc, test_qp_failure_on_rtu_rejects_the_rep);
	tcase_add_test(tc, test_killed_active_owner_mid_handshake_frees_the_passive_half);
	tcase_add_loop_test(tc, test_killed_owner_of_a_connection_disconnects_it_despite_loss,
			    0, 2);
	tcase_add_test(tc, test_killed_passive_owner_before_answering_rejects_the_req);
	tcase_add_test(tc, test_destroyed_listener_leaves_its_connections_and_refuses_new_reqs);
	tcase_add_test(tc, test_api_refuses_calls_in_the_wrong_state_or_with_bad_arguments);
	tcase_add_test(tc, test_comm_ids_are_unique_nonzero_and_depend_on_the_seed);
	tcase_add_test(tc, test_active_side_mra_for_a_rep_stretches_the_passive_wait);
	tcase_add_test(tc, test_slow_owner_of_a_dreq_gets_it_once_and_dying_still_answers);
	tcase_add_loop_test(tc, test_killed_owner_during_the_rep_exchange_rejects_it, 0, 2);
	tcase_add_test(tc, test_rep_naming_a_connection_we_have_is_stale);
	tcase_add_test(tc, test_names_of_states_events_and_counters_are_distinct);
	tcase_add_test(tc, test_init_refuses_bad_tables);
	return tc;
}
