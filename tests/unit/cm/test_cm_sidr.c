/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_cm.h: Service ID Resolution, as rdma_cm uses it for UD
 * ids: the answer and what it carries, no listener, retries and timeout,
 * duplicates of a request still being answered, a lossy link, an owner
 * that disappears, a full backlog.
 */

#include <errno.h>
#include <string.h>

#include "cm_sim.h"
#include "droce_cm_ip.h"
#include "test_cm.h"

#define SEC	1000000000ull
#define SID_UDP	0x0000000001111c06ull	/* RDMA_PS_UDP, port 7174 */

static struct droce_cm_id *
sidr_start(struct cms *sim, uint64_t sid, uint8_t retries)
{
	struct droce_cm_sidr_req_param p = {
		.service_id = sid,
		.timeout = 20,
		.max_cm_retries = retries,
		.pdata = "who serves this?",
		.pdata_len = 17,
	};
	struct droce_cm_id *id;

	memcpy(p.addr.local_gid, sim->node[0].gid, 16);
	memcpy(p.addr.remote_gid, sim->node[1].gid, 16);
	p.addr.remote_qpn = 1;
	p.addr.pkey = 0xffff;
	ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &id), 0);
	ck_assert_int_eq(droce_cm_sidr_req(id, &p, sim->now), 0);
	ck_assert_int_eq(id->state, DROCE_CM_SIDR_REQ_SENT);
	return id;
}

START_TEST(test_sidr_answers_with_qpn_qkey_and_private_data)
{
	struct cms *sim = cms_new(50);
	struct droce_cm_id *l = cms_listen(sim, 1, SID_UDP, 4), *a;
	const struct cms_ev *req, *rep;

	a = sidr_start(sim, SID_UDP, 15);
	cms_settle(sim, 60 * SEC);
	req = cms_last(&sim->node[1], DROCE_CM_EV_SIDR_REQ_RECEIVED, NULL);
	ck_assert_ptr_nonnull(req);
	ck_assert_ptr_eq(req->listen, l);
	ck_assert_uint_eq(req->msg.sidr_req.service_id, SID_UDP);
	ck_assert_uint_eq(req->msg.sidr_req.pkey, 0xffff);
	ck_assert_str_eq((const char *)req->msg.sidr_req.private_data, "who serves this?");
	ck_assert_int_eq(req->id->state, DROCE_CM_IDLE);	/* answered */
	rep = cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED, a);
	ck_assert_ptr_nonnull(rep);
	ck_assert_uint_eq(rep->msg.sidr_rep.status, DROCE_CM_SIDR_SUCCESS);
	ck_assert_uint_eq(rep->msg.sidr_rep.qpn, 0x301);
	ck_assert_uint_eq(rep->msg.sidr_rep.qkey, 0x01234567);
	ck_assert_uint_eq(rep->msg.sidr_rep.service_id, SID_UDP);
	ck_assert_uint_eq(rep->msg.sidr_rep.request_id, a->local_id);
	ck_assert_str_eq((const char *)rep->msg.sidr_rep.private_data, "sidr");
	ck_assert_uint_eq(rep->msg.hdr.tid, req->msg.hdr.tid);	/* the answer's transaction */
	ck_assert_int_eq(a->state, DROCE_CM_IDLE);
	ck_assert_uint_eq(sim->mads_sent, 2);
	ck_assert_uint_eq(l->pending, 0);
	cms_free(sim);
}
END_TEST

/*
 * What droce's rdma_cm puts in a UD id's SIDR_REQ: the cma header, then the
 * application's 180 bytes. The passive side reads back the addresses,
 * ports and port space from the header and the service ID, and the
 * application's bytes after it; a header of another CMA version is refused
 * by the parser (droced answers that SIDR_REQ with Reject).
 */
START_TEST(test_sidr_carries_the_cma_header_and_180_bytes)
{
	struct cms *sim = cms_new(50);
	struct droce_cm_ip_info ip = {
		.ip_version = 4,
		.src_port = 40000,
		.dst_port = 7174,
		.ps = DROCE_RDMA_PS_UDP,
	}, got;
	struct droce_cm_sidr_req_param p = {
		.service_id = SID_UDP,
		.timeout = 20,
		.max_cm_retries = 15,
		.pdata_len = DROCE_CM_SIDR_REQ_PDATA_BYTES,
	};
	uint8_t pdata[DROCE_CM_SIDR_REQ_PDATA_BYTES];
	const struct cms_ev *req;
	struct droce_cm_id *a;
	unsigned int i;

	(void)cms_listen(sim, 1, SID_UDP, 4);
	memcpy(ip.src, (uint8_t[16]){ [10] = 0xff, [11] = 0xff, 10, 99, 0, 1 }, 16);
	memcpy(ip.dst, (uint8_t[16]){ [10] = 0xff, [11] = 0xff, 10, 99, 0, 2 }, 16);
	ck_assert_int_eq(droce_cm_ip_service_id(ip.ps, ip.dst_port), SID_UDP);
	ck_assert_int_eq(droce_cm_ip_hdr_build(&ip, pdata, sizeof(pdata)), DROCE_CMA_HDR_BYTES);
	for (i = DROCE_CMA_HDR_BYTES; i < sizeof(pdata); i++)
		pdata[i] = (uint8_t)(i * 7);
	ck_assert_uint_eq(sizeof(pdata) - DROCE_CMA_HDR_BYTES, DROCE_CM_IP_SIDR_REQ_PDATA_MAX);
	p.pdata = pdata;
	memcpy(p.addr.local_gid, sim->node[0].gid, 16);
	memcpy(p.addr.remote_gid, sim->node[1].gid, 16);
	p.addr.remote_qpn = 1;
	p.addr.pkey = 0xffff;
	ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &a), 0);
	ck_assert_int_eq(droce_cm_sidr_req(a, &p, sim->now), 0);
	cms_settle(sim, 60 * SEC);
	req = cms_last(&sim->node[1], DROCE_CM_EV_SIDR_REQ_RECEIVED, NULL);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(droce_cm_ip_hdr_parse(req->msg.sidr_req.private_data,
					       DROCE_CM_SIDR_REQ_PDATA_BYTES,
					       req->msg.sidr_req.service_id, &got), 0);
	ck_assert_uint_eq(got.ip_version, 4);
	ck_assert_uint_eq(got.src_port, 40000);
	ck_assert_uint_eq(got.dst_port, 7174);
	ck_assert_uint_eq(got.ps, DROCE_RDMA_PS_UDP);
	ck_assert_mem_eq(got.src, ip.src, 16);
	ck_assert_mem_eq(got.dst, ip.dst, 16);
	ck_assert_mem_eq(req->msg.sidr_req.private_data + DROCE_CMA_HDR_BYTES,
			 pdata + DROCE_CMA_HDR_BYTES, DROCE_CM_IP_SIDR_REQ_PDATA_MAX);
	ck_assert_ptr_nonnull(cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED, a));

	pdata[0] = 1;		/* CMA version 1: refused */
	ck_assert_int_eq(droce_cm_ip_hdr_parse(pdata, sizeof(pdata), SID_UDP, &got), -EPROTO);
	cms_free(sim);
}
END_TEST

START_TEST(test_sidr_for_an_unknown_service_is_unsupported)
{
	struct cms *sim = cms_new(51);
	struct droce_cm_id *a;
	const struct cms_ev *rep;

	a = sidr_start(sim, SID_UDP, 15);
	cms_settle(sim, 60 * SEC);
	rep = cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED, a);
	ck_assert_ptr_nonnull(rep);
	ck_assert_uint_eq(rep->msg.sidr_rep.status, DROCE_CM_SIDR_UNSUPPORTED);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_NO_LISTENER], 1);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_sidr_retries_then_times_out)
{
	struct cms *sim = cms_new(52);
	struct droce_cm_id *a;
	const struct cms_ev *e;

	sim->node[1].down = true;
	a = sidr_start(sim, SID_UDP, 3);
	cms_settle(sim, 1000 * SEC);
	e = cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REQ_ERROR, a);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(sim->node[0].sent[DROCE_CM_MSG_SIDR_REQ], 4);
	ck_assert_uint_eq(e->t, 4 * droce_cm_time_ns(20));
	ck_assert_int_eq(a->state, DROCE_CM_IDLE);
	cms_free(sim);
}
END_TEST

START_TEST(test_sidr_duplicates_of_a_pending_request_reach_the_owner_once)
{
	struct cms *sim = cms_new(53);
	struct droce_cm_sidr_rep_param rp = { .status = DROCE_CM_SIDR_SUCCESS, .qpn = 0x42,
					      .qkey = 7 };
	struct droce_cm_id *a, *p;

	sim->node[1].pol.sidr_answer = false;
	(void)cms_listen(sim, 1, SID_UDP, 4);
	a = sidr_start(sim, SID_UDP, 15);
	cms_advance(sim, 3 * droce_cm_time_ns(20) + SEC / 10);	/* three retries */
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_SIDR_REQ_RECEIVED, NULL), 1);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_SIDR_REQ], 3);
	p = cms_last(&sim->node[1], DROCE_CM_EV_SIDR_REQ_RECEIVED, NULL)->id;
	ck_assert_int_eq(droce_cm_sidr_rep(p, &rp, sim->now), 0);
	ck_assert_int_eq(droce_cm_sidr_rep(p, &rp, sim->now), -EINVAL);	/* answered */
	cms_settle(sim, sim->now + 60 * SEC);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED, a), 1);
	ck_assert_uint_eq(cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED, a)->msg.sidr_rep.qpn,
			  0x42);
	cms_free(sim);
}
END_TEST

START_TEST(test_sidr_over_a_lossy_link_is_answered_once)	/* _i: seed */
{
	struct cms *sim = cms_new(600 + (uint64_t)_i);
	struct droce_cm_id *a[4];
	unsigned int i;

	sim->link.loss = 0.3;
	sim->link.dup = 0.3;
	sim->link.reorder = 0.3;
	sim->link.reorder_ns = droce_cm_time_ns(18) / 2;
	(void)cms_listen(sim, 1, SID_UDP, 8);
	for (i = 0; i < DROCE_DIM(a); i++)
		a[i] = sidr_start(sim, SID_UDP, 15);
	cms_settle(sim, 1000 * SEC);
	for (i = 0; i < DROCE_DIM(a); i++) {
		ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED, a[i]), 1);
		ck_assert_uint_eq(cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED,
					   a[i])->msg.sidr_rep.status, DROCE_CM_SIDR_SUCCESS);
	}
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_SIDR_REQ_ERROR, NULL), 0);
	cms_free(sim);
}
END_TEST

START_TEST(test_sidr_owner_gone_or_backlog_full_answers_reject)
{
	struct cms *sim = cms_new(54);
	struct droce_cm_id *a1, *a2, *p;

	sim->node[1].pol.sidr_answer = false;
	(void)cms_listen(sim, 1, SID_UDP, 1);
	a1 = sidr_start(sim, SID_UDP, 15);
	a2 = sidr_start(sim, SID_UDP, 15);
	cms_advance(sim, SEC);
	/* the backlog holds one unanswered request: the second is refused */
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_SIDR_REQ_RECEIVED, NULL), 1);
	ck_assert_uint_eq(cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED,
				   a2)->msg.sidr_rep.status, DROCE_CM_SIDR_REJECT);
	ck_assert_uint_eq(sim->node[1].cm.cnt[DROCE_CM_CNT_BACKLOG_FULL], 1);
	/* the owner of the first goes away unanswering */
	p = cms_last(&sim->node[1], DROCE_CM_EV_SIDR_REQ_RECEIVED, NULL)->id;
	droce_cm_id_destroy(p, sim->now);
	cms_advance(sim, sim->now + SEC);
	ck_assert_uint_eq(cms_last(&sim->node[0], DROCE_CM_EV_SIDR_REP_RECEIVED,
				   a1)->msg.sidr_rep.status, DROCE_CM_SIDR_REJECT);
	ck_assert_uint_eq(cms_ids_used(&sim->node[1]), 1);
	cms_free(sim);
}
END_TEST

START_TEST(test_sidr_api_refuses_bad_calls)
{
	struct cms *sim = cms_new(55);
	struct droce_cm_sidr_req_param rq = { .service_id = SID_UDP };
	struct droce_cm_sidr_rep_param rp = { 0 };
	uint8_t big[256] = { 0 };
	struct droce_cm_id *id, *p;

	ck_assert_int_eq(droce_cm_id_create(&sim->node[0].cm, NULL, &id), 0);
	ck_assert_int_eq(droce_cm_sidr_rep(id, &rp, 0), -EINVAL);
	rq.pdata = big;
	rq.pdata_len = 217;
	ck_assert_int_eq(droce_cm_sidr_req(id, &rq, 0), -EINVAL);
	droce_cm_id_destroy(id, 0);

	sim->node[1].pol.sidr_answer = false;
	(void)cms_listen(sim, 1, SID_UDP, 4);
	id = sidr_start(sim, SID_UDP, 15);
	ck_assert_int_eq(droce_cm_sidr_req(id, &rq, 0), -EINVAL);	/* already asking */
	cms_advance(sim, SEC);
	p = cms_last(&sim->node[1], DROCE_CM_EV_SIDR_REQ_RECEIVED, NULL)->id;
	rp.info = big;
	rp.info_len = 73;
	ck_assert_int_eq(droce_cm_sidr_rep(p, &rp, sim->now), -EINVAL);
	rp.info_len = 72;
	rp.pdata = big;
	rp.pdata_len = 137;
	ck_assert_int_eq(droce_cm_sidr_rep(p, &rp, sim->now), -EINVAL);
	rp.pdata_len = 136;
	ck_assert_int_eq(droce_cm_sidr_rep(p, &rp, sim->now), 0);
	cms_free(sim);
}
END_TEST

TCase *
test_cm_sidr_tcase(void)
{
	TCase *tc = tcase_create("sidr");

	tcase_add_test(tc, test_sidr_answers_with_qpn_qkey_and_private_data);
	tcase_add_test(tc, test_sidr_carries_the_cma_header_and_180_bytes);
	tcase_add_test(tc, test_sidr_for_an_unknown_service_is_unsupported);
	tcase_add_test(tc, test_sidr_retries_then_times_out);
	tcase_add_test(tc, test_sidr_duplicates_of_a_pending_request_reach_the_owner_once);
	tcase_add_loop_test(tc, test_sidr_over_a_lossy_link_is_answered_once, 0, 20);
	tcase_add_test(tc, test_sidr_owner_gone_or_backlog_full_answers_reject);
	tcase_add_test(tc, test_sidr_api_refuses_bad_calls);
	return tc;
}
