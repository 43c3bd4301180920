/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_cm.h against a peer that does things wrong: REQs beyond the
 * listener's backlog or the id table, REQs the CM cannot serve (RD, XRC,
 * bad MTU), malformed MADs of every kind, and a storm of random but
 * well-formed MADs aimed at ids in every state. The CM answers what IBA
 * says, counts the rest, never grows past its table, and every id it gave
 * out is freed again once its owner is done.
 */

#include <stdlib.h>
#include <string.h>

#include "cm_sim.h"
#include "test_cm.h"

#define SEC	1000000000ull
#define SID	0x0000000001061c06ull

START_TEST(test_backlog_bounds_unanswered_reqs_and_frees_as_they_are_answered)
{
	struct cms *sim = cms_new(70);
	struct droce_cm_id *l, *a[6], *p;
	unsigned int i;

	sim->node[1].pol.accept = false;	/* the owner answers nothing by itself */
	l = cms_listen(sim, 1, SID, 2);
	for (i = 0; i < 4; i++)
		a[i] = cms_connect(sim, 0, SID, 0x100 + i);
	cms_advance(sim, SEC);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 2);
	ck_assert_uint_eq(l->pending, 2);
	for (i = 2; i < 4; i++) {
		const struct cms_ev *e = cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED, a[i]);

		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->msg.rej.reason, DROCE_CM_REJ_NO_RESOURCES);
	}
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_BACKLOG_FULL], 2);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), 3);

	/* answering one (either way) makes room for one more */
	p = cms_last(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL)->id;
	ck_assert_int_eq(droce_cm_reject(p, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0,
					 sim->now), 0);
	ck_assert_uint_eq(l->pending, 1);
	a[4] = cms_connect(sim, 0, SID, 0x104);
	a[5] = cms_connect(sim, 0, SID, 0x105);
	cms_advance(sim, sim->now + SEC);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 3);
	ck_assert_uint_eq(cms_last(&sim->node[0], DROCE_CM_EV_REJ_RECEIVED,
				   a[5])->msg.rej.reason, DROCE_CM_REJ_NO_RESOURCES);
	ck_assert_uint_eq(l->pending, 2);
	/* an MRA'd request still counts; an accepted one does not */
	p = cms_last(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL)->id;
	ck_assert_int_eq(droce_cm_send_mra(p, 20, NULL, 0, sim->now), 0);
	ck_assert_uint_eq(l->pending, 2);
	{
		struct droce_cm_rep_param rp = { .qpn = 0x777, .responder_resources = 1,
						 .initiator_depth = 1 };

		ck_assert_int_eq(droce_cm_accept(p, &rp, sim->now), 0);
	}
	ck_assert_uint_eq(l->pending, 1);
	cms_free(sim);
}
END_TEST

/* A REQ from a host that is not there, with its own comm ID and QPN. */
static void
fake_req(struct cms *sim, uint32_t comm_id, uint32_t qpn, uint8_t tst, uint8_t ett, uint8_t mtu)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_BYTES];

	cms_msg(&m, DROCE_CM_MSG_REQ, comm_id, 0);
	m.req.service_id = SID;
	m.req.local_ca_guid = 0xabcdef00ull + comm_id;
	m.req.local_qpn = qpn;
	m.req.transport_type = tst;
	m.req.ext_transport_type = ett;
	m.req.path_mtu = mtu;
	m.req.max_cm_retries = 15;
	m.req.remote_cm_response_timeout = 20;
	m.req.local_cm_response_timeout = 20;
	m.req.primary_local_ack_timeout = 19;
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, sizeof(mad)), DROCE_CM_MAD_OK);
}

START_TEST(test_req_flood_never_takes_more_than_the_backlog_or_the_table)
{
	struct cms *sim = cms_new(71);
	unsigned int i;

	sim->node[1].pol.accept = false;
	(void)cms_listen(sim, 1, SID, 16);
	for (i = 0; i < 1000; i++)
		fake_req(sim, 0x10000 + i, 0x1000 + i, DROCE_CM_TRANSPORT_RC, 0, 3);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 16);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), 17);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_BACKLOG_FULL], 1000 - 16);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REJ], 1000 - 16);
	/* the same flood retransmitted: duplicates, MRA'd, no new ids */
	for (i = 0; i < 16; i++)
		fake_req(sim, 0x10000 + i, 0x1000 + i, DROCE_CM_TRANSPORT_RC, 0, 3);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_REQ], 16);
	ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_MRA], 16);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), 17);
	cms_free(sim);

	/* a backlog larger than the table: the table is the bound */
	sim = cms_new(72);
	sim->node[1].pol.accept = false;
	(void)cms_listen(sim, 1, SID, 100000);
	for (i = 0; i < 1000; i++)
		fake_req(sim, 0x10000 + i, 0x1000 + i, DROCE_CM_TRANSPORT_RC, 0, 3);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), CMS_IDS);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_NO_IDS], 1000 - (CMS_IDS - 1));
	cms_free(sim);
}
END_TEST

START_TEST(test_reqs_the_cm_cannot_serve_are_rejected_with_the_reason)
{
	struct cms *sim = cms_new(73);
	static const struct { uint8_t tst, ett, mtu; uint16_t reason; } bad[] = {
		{ DROCE_CM_TRANSPORT_RD,  0, 3, DROCE_CM_REJ_INVALID_TRANSPORT_TYPE },
		{ DROCE_CM_TRANSPORT_EXT, 1, 3, DROCE_CM_REJ_INVALID_TRANSPORT_TYPE },	/* XRC */
		{ DROCE_CM_TRANSPORT_RC,  0, 0, DROCE_CM_REJ_INVALID_MTU },
		{ DROCE_CM_TRANSPORT_RC,  0, 6, DROCE_CM_REJ_INVALID_MTU },
		{ DROCE_CM_TRANSPORT_RC,  0, 15, DROCE_CM_REJ_INVALID_MTU },
	};
	unsigned int i;

	(void)cms_listen(sim, 1, SID, 16);
	for (i = 0; i < DROCE_DIM(bad); i++) {
		fake_req(sim, 0x20000 + i, 0x2000 + i, bad[i].tst, bad[i].ett, bad[i].mtu);
		ck_assert_uint_eq(sim->node[1].sent[DROCE_CM_MSG_REJ], i + 1);
	}
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_BAD_REQ], DROCE_DIM(bad));
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 0);
	/* UC is served */
	fake_req(sim, 0x30000, 0x3000, DROCE_CM_TRANSPORT_UC, 0, 5);
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), 1);
	cms_free(sim);
}
END_TEST

/* Catch the REJs node 1 sends, to read their reasons. */
static bool
keep_rej(struct cms *sim, int from, const struct droce_cm_msg *msg, void *arg)
{
	uint16_t *reason = arg;

	(void)sim;
	if (from == 1 && msg->type == DROCE_CM_MSG_REJ)
		*reason = msg->rej.reason;
	return false;
}

START_TEST(test_rejected_req_reasons_are_iba_numbers)
{
	struct cms *sim = cms_new(74);
	uint16_t reason = 0;

	sim->sniff = keep_rej;
	sim->sniff_arg = &reason;
	(void)cms_listen(sim, 1, SID + 5, 1);
	fake_req(sim, 0x40000, 0x4000, DROCE_CM_TRANSPORT_RC, 0, 3);
	ck_assert_uint_eq(reason, 8);		/* invalid service ID */
	fake_req(sim, 0x40001, 0x4001, DROCE_CM_TRANSPORT_RD, 0, 3);
	ck_assert_uint_eq(reason, 8);		/* no listener comes first */
	cms_free(sim);
}
END_TEST

START_TEST(test_malformed_mads_are_counted_by_reason_and_change_nothing)
{
	struct cms *sim = cms_new(75);
	struct droce_cm_id *a, *p;
	alignas(8) uint8_t good[DROCE_MAD_BYTES + 8], mad[DROCE_MAD_BYTES + 8];
	struct droce_cm_msg m;
	uint64_t sent;
	unsigned int len;

	(void)cms_listen(sim, 1, SID, 8);
	a = cms_connect(sim, 0, SID, 0x100);
	cms_settle(sim, 60 * SEC);
	p = cms_last(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL)->id;
	sent = sim->mads_sent;

	/* a DREQ that would close the connection, were it well-formed */
	cms_msg(&m, DROCE_CM_MSG_DREQ, a->local_id, p->local_id);
	m.dreq.remote_qpn = 0x300;
	memset(good, 0, sizeof(good));
	ck_assert_int_eq(droce_cm_mad_build(&m, good, sizeof(good)), DROCE_MAD_BYTES);

	for (len = 0; len < DROCE_MAD_BYTES; len++)
		ck_assert_int_eq(cms_inject(sim, 0, 1, good, len), DROCE_CM_DROP_TRUNC);
	ck_assert_int_eq(cms_inject(sim, 0, 1, good, DROCE_MAD_BYTES + 8), DROCE_CM_DROP_LONG);
	memcpy(mad, good, sizeof(mad));
	mad[0] = 2;
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, DROCE_MAD_BYTES), DROCE_CM_DROP_BASE_VERSION);
	memcpy(mad, good, sizeof(mad));
	mad[1] = 0x04;	/* PerfMgt */
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, DROCE_MAD_BYTES), DROCE_CM_DROP_MGMT_CLASS);
	memcpy(mad, good, sizeof(mad));
	mad[2] = 1;
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, DROCE_MAD_BYTES), DROCE_CM_DROP_CLASS_VERSION);
	memcpy(mad, good, sizeof(mad));
	mad[3] = 0x01;	/* Get */
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, DROCE_MAD_BYTES), DROCE_CM_DROP_METHOD);
	memcpy(mad, good, sizeof(mad));
	mad[17] = 0x19;	/* LAP */
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, DROCE_MAD_BYTES), DROCE_CM_DROP_ATTR_REFUSED);
	mad[17] = 0x1a;	/* APR */
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, DROCE_MAD_BYTES), DROCE_CM_DROP_ATTR_REFUSED);
	mad[17] = 0x01;	/* ClassPortInfo */
	ck_assert_int_eq(cms_inject(sim, 0, 1, mad, DROCE_MAD_BYTES), DROCE_CM_DROP_ATTR_UNKNOWN);

	ck_assert_uint_eq(sim->node[1].cm.drops[DROCE_CM_DROP_TRUNC], DROCE_MAD_BYTES);
	ck_assert_uint_eq(sim->node[1].cm.drops[DROCE_CM_DROP_LONG], 1);
	ck_assert_uint_eq(sim->node[1].cm.drops[DROCE_CM_DROP_ATTR_REFUSED], 2);
	ck_assert_uint_eq(sim->node[1].cm.drops[DROCE_CM_DROP_ATTR_UNKNOWN], 1);
	ck_assert_uint_eq(sim->mads_sent, sent);
	ck_assert_int_eq(p->state, DROCE_CM_ESTABLISHED);
	/* and the well-formed one does close it */
	ck_assert_int_eq(cms_inject(sim, 0, 1, good, DROCE_MAD_BYTES), DROCE_CM_MAD_OK);
	ck_assert_int_eq(p->state, DROCE_CM_TIMEWAIT);
	cms_free(sim);
}
END_TEST

/* A random well-formed MAD, aimed (usually) at ids that exist. */
static void
chaos_mad(struct cms *sim, int to, uint8_t mad[DROCE_MAD_BYTES])
{
	const struct cms_node *dst = &sim->node[to], *src = &sim->node[!to];
	enum droce_cm_msg_type t = (enum droce_cm_msg_type)(cms_rand(sim) % DROCE_CM_MSG_COUNT);
	uint32_t recv_id = dst->ids[cms_rand(sim) % CMS_IDS].local_id;
	uint32_t send_id = src->ids[cms_rand(sim) % CMS_IDS].local_id;
	struct droce_cm_msg m;
	unsigned int i;

	if (cms_rand(sim) % 8 == 0)
		recv_id = (uint32_t)cms_rand(sim);
	/* random bytes, then a valid header and the IDs in place */
	for (i = 0; i < DROCE_MAD_BYTES; i++)
		mad[i] = (uint8_t)cms_rand(sim);
	if (droce_cm_mad_parse(mad, DROCE_MAD_BYTES, &m) != DROCE_CM_MAD_OK)
		memset(&m, 0, sizeof(m));
	cms_msg(&m, t, send_id, recv_id);
	/* keep some random fields, within what the parser takes */
	m.req.service_id = cms_rand(sim) % 4 ? SID : cms_rand(sim);
	m.req.local_qpn = 0x100 + (uint32_t)(cms_rand(sim) % 8);
	m.req.path_mtu = (uint8_t)(cms_rand(sim) % 7);
	m.req.local_ca_guid = src->cm.cfg.ca_guid;
	if (t == DROCE_CM_MSG_DREQ)
		m.dreq.remote_qpn = 0x300 + (uint32_t)(cms_rand(sim) % 8);
	if (t == DROCE_CM_MSG_REP) {
		m.rep.local_qpn = 0x300 + (uint32_t)(cms_rand(sim) % 8);
		m.rep.local_ca_guid = src->cm.cfg.ca_guid;
	}
	if (t == DROCE_CM_MSG_REJ) {
		m.rej.reason = (uint16_t)(cms_rand(sim) % 36);
		m.rej.ari_len = (uint8_t)(cms_rand(sim) % 73);
	}
	if (t == DROCE_CM_MSG_MRA)
		m.mra.msg_mraed = (uint8_t)(cms_rand(sim) % 3);
	if (t == DROCE_CM_MSG_SIDR_REP)
		m.sidr_rep.info_len = (uint8_t)(cms_rand(sim) % 73);
	if (droce_cm_mad_build(&m, mad, DROCE_MAD_BYTES) != DROCE_MAD_BYTES)
		ck_abort_msg("build");
}

START_TEST(test_random_well_formed_mads_never_break_the_state_machines)	/* _i: seed */
{
	struct cms *sim = cms_new(5000 + (uint64_t)_i);
	struct droce_cm_id *l0, *l1;
	unsigned int round, i, n;

	sim->link.loss = 0.1;
	for (i = 0; i < 2; i++)
		sim->node[i].pol.destroy_done = true;
	sim->node[1].pol.accept = _i % 2;
	l0 = cms_listen(sim, 0, SID, 4);
	l1 = cms_listen(sim, 1, SID, 4);
	for (round = 0; round < 40; round++) {
		/* some real traffic, so that ids are in every state */
		int side = (int)(cms_rand(sim) % 2);

		if (cms_ids_used(&sim->node[side]) < CMS_IDS - 4)
			(void)cms_connect(sim, side, SID, 0x100 + (uint32_t)(cms_rand(sim) % 8));
		for (n = 0; n < 50; n++) {
			alignas(8) uint8_t mad[DROCE_MAD_BYTES];
			int to = (int)(cms_rand(sim) % 2);

			chaos_mad(sim, to, mad);
			(void)cms_inject(sim, !to, to, mad, DROCE_MAD_BYTES);
		}
		/* the owner answers or drops what is pending, at random */
		for (i = 0; i < 2; i++)
			for (n = 0; n < CMS_IDS; n++) {
				struct droce_cm_id *id = &sim->node[i].ids[n];

				if ((id->state == DROCE_CM_REQ_RCVD ||
				     id->state == DROCE_CM_ESTABLISHED ||
				     id->state == DROCE_CM_REP_RCVD) && cms_rand(sim) % 3 == 0)
					droce_cm_id_destroy(id, sim->now);
			}
		cms_advance(sim, sim->now + (cms_rand(sim) % 20) * SEC);
		ck_assert_uint_le(l0->pending, l0->backlog);
		ck_assert_uint_le(l1->pending, l1->backlog);
		ck_assert_int_eq(l0->state, DROCE_CM_LISTEN);
		ck_assert_int_eq(l1->state, DROCE_CM_LISTEN);
	}
	/* quiet down: nothing new is accepted, what is in flight lands */
	sim->link.loss = 0;
	for (i = 0; i < 2; i++) {
		sim->node[i].pol.accept = false;
		sim->node[i].pol.reject = DROCE_CM_REJ_CONSUMER_DEFINED;
		sim->node[i].pol.rtu = false;
	}
	cms_settle(sim, sim->now + 10000 * SEC);
	/* the owner lets everything go: every id but the listeners ends up free */
	for (i = 0; i < 2; i++)
		for (n = 0; n < CMS_IDS; n++) {
			struct droce_cm_id *id = &sim->node[i].ids[n];

			if (id != l0 && id != l1 && id->state != DROCE_CM_FREE)
				droce_cm_id_destroy(id, sim->now);
		}
	cms_settle(sim, sim->now + 10000 * SEC);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(cms_ids_used(&sim->node[i]), 1);
		ck_assert_uint_eq(droce_cm_next_timer(&sim->node[i].cm), 0);
	}
	ck_assert_uint_eq(l0->pending, 0);
	ck_assert_uint_eq(l1->pending, 0);
	cms_free(sim);
}
END_TEST

TCase *
test_cm_robust_tcase(void)
{
	TCase *tc = tcase_create("robust");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_backlog_bounds_unanswered_reqs_and_frees_as_they_are_answered);
	tcase_add_test(tc, test_req_flood_never_takes_more_than_the_backlog_or_the_table);
	tcase_add_test(tc, test_reqs_the_cm_cannot_serve_are_rejected_with_the_reason);
	tcase_add_test(tc, test_rejected_req_reasons_are_iba_numbers);
	tcase_add_test(tc, test_malformed_mads_are_counted_by_reason_and_change_nothing);
	tcase_add_loop_test(tc, test_random_well_formed_mads_never_break_the_state_machines, 0, 30);
	return tc;
}
