/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_query_qp(3) and ibv_query_device_ex(3): every attribute set by
 * ibv_modify_qp() reads back in each state it is valid in (RC through
 * INIT, RTR, RTS, SQD (draining or not), ERR and RESET; UD's Q_Key and SQ PSN), init_attr
 * gives the creation arguments with the capabilities actually granted, and
 * the extended device query agrees with ibv_query_device(), refuses an
 * unknown input comp_mask and tells the truth about clocks and ODP; the
 * vendor ID is the IBA's for a device without an OUI.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_test.h"

#define CAP_SEND	16
#define CAP_RECV	8
#define CAP_SGE		2
#define CAP_INLINE	32

static struct ibv_qp *
qp_create(enum ibv_qp_type type, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.qp_context = &vt,
		.send_cq = cq, .recv_cq = cq, .qp_type = type, .sq_sig_all = 1,
		.cap = { .max_send_wr = CAP_SEND, .max_recv_wr = CAP_RECV,
			 .max_send_sge = CAP_SGE, .max_recv_sge = CAP_SGE,
			 .max_inline_data = CAP_INLINE },
	};
	struct ibv_qp *qp = ibv_create_qp(vt.pd, &ia);

	vt_require(qp != NULL, "create_qp");
	return qp;
}

static bool
query(struct ibv_qp *qp, struct ibv_qp_attr *a, struct ibv_qp_init_attr *ia)
{
	memset(a, 0xee, sizeof(*a));		/* nothing stale passes for an answer */
	memset(ia, 0xee, sizeof(*ia));
	return ibv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN | IBV_QP_CAP |
			    IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_QKEY, ia) == 0;
}

static bool
state_is(struct ibv_qp *qp, enum ibv_qp_state want)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	return query(qp, &a, &ia) && a.qp_state == want && qp->state == want;
}

static void
rc(struct ibv_cq *cq)
{
	struct ibv_qp *qp = qp_create(IBV_QPT_RC, cq);
	struct ibv_qp_attr m, a;
	struct ibv_qp_init_attr ia;

	vt_check(query(qp, &a, &ia) && a.qp_state == IBV_QPS_RESET, "a new QP is in RESET",
		 "state %d", a.qp_state);
	vt_check(ia.qp_type == IBV_QPT_RC && ia.send_cq == cq && ia.recv_cq == cq &&
		 ia.srq == NULL && ia.sq_sig_all == 1 && ia.qp_context == &vt,
		 "init_attr: type, CQs, no SRQ, sq_sig_all and qp_context as created",
		 "type %d sq_sig_all %d", ia.qp_type, ia.sq_sig_all);
	vt_check(ia.cap.max_send_wr >= CAP_SEND && ia.cap.max_recv_wr >= CAP_RECV &&
		 ia.cap.max_send_sge >= CAP_SGE && ia.cap.max_recv_sge >= CAP_SGE &&
		 ia.cap.max_inline_data >= CAP_INLINE &&
		 memcmp(&ia.cap, &a.cap, sizeof(a.cap)) == 0,
		 "cap: at least what was asked, the same in attr and init_attr",
		 "send %u recv %u inline %u", ia.cap.max_send_wr, ia.cap.max_recv_wr,
		 ia.cap.max_inline_data);

	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_INIT;
	m.pkey_index = 0;
	m.port_num = 1;
	m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	vt_require(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS) == 0, "INIT");
	vt_check(query(qp, &a, &ia) && a.qp_state == IBV_QPS_INIT && a.port_num == 1 &&
		 a.pkey_index == 0 &&
		 a.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
		 "INIT: state, port, P_Key index, access flags", "state %d access 0x%x",
		 a.qp_state, a.qp_access_flags);

	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_512;
	m.dest_qp_num = 0x4321;
	m.rq_psn = 0x123456;
	m.max_dest_rd_atomic = 2;
	m.min_rnr_timer = 14;
	m.ah_attr.is_global = 1;
	m.ah_attr.grh.dgid = vt.gid;
	m.ah_attr.grh.sgid_index = (uint8_t)vt.gid_index;
	m.ah_attr.grh.hop_limit = 5;
	m.ah_attr.grh.traffic_class = 0x20;
	m.ah_attr.grh.flow_label = 0x1234;
	m.ah_attr.port_num = 1;
	{
		struct ibv_port_attr pa;

		vt_require(ibv_query_port(vt.ctx, 1, &pa) == 0, "query_port");
		m.path_mtu = pa.active_mtu + 1;
		vt_check(pa.active_mtu == IBV_MTU_4096 ||
			 ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == EINVAL,
			 "RTR with a path MTU above the port's active MTU: EINVAL", "accepted");
		m.path_mtu = IBV_MTU_512;
	}
	vt_require(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER) == 0, "RTR");
	vt_check(query(qp, &a, &ia) && a.qp_state == IBV_QPS_RTR && a.path_mtu == IBV_MTU_512 &&
		 a.dest_qp_num == 0x4321 && a.rq_psn == 0x123456 && a.max_dest_rd_atomic == 2 &&
		 a.min_rnr_timer == 14,
		 "RTR: path MTU, destination QPN, RQ PSN, responder resources, RNR timer",
		 "mtu %d dqpn 0x%x rq_psn 0x%x rd %u rnr %u", a.path_mtu, a.dest_qp_num,
		 a.rq_psn, a.max_dest_rd_atomic, a.min_rnr_timer);
	vt_check(a.ah_attr.is_global == 1 &&
		 memcmp(&a.ah_attr.grh.dgid, &vt.gid, sizeof(vt.gid)) == 0 &&
		 a.ah_attr.grh.sgid_index == vt.gid_index && a.ah_attr.grh.hop_limit == 5 &&
		 a.ah_attr.grh.traffic_class == 0x20 && a.ah_attr.grh.flow_label == 0x1234 &&
		 a.ah_attr.port_num == 1,
		 "RTR: the address vector (GRH: DGID, SGID index, hop limit, class, flow label)",
		 "global %u hop %u class 0x%x flow 0x%x", a.ah_attr.is_global,
		 a.ah_attr.grh.hop_limit, a.ah_attr.grh.traffic_class, a.ah_attr.grh.flow_label);

	m.qp_state = IBV_QPS_RTS;
	m.sq_psn = 0xabcdef;
	m.timeout = 17;
	m.retry_cnt = 5;
	m.rnr_retry = 6;
	m.max_rd_atomic = 3;
	vt_require(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_MAX_QP_RD_ATOMIC) == 0, "RTS");
	vt_check(query(qp, &a, &ia) && a.qp_state == IBV_QPS_RTS && a.sq_psn == 0xabcdef &&
		 a.timeout == 17 && a.retry_cnt == 5 && a.rnr_retry == 6 && a.max_rd_atomic == 3,
		 "RTS: SQ PSN, timeout, retry count, RNR retry, initiator depth",
		 "sq_psn 0x%x timeout %u retry %u rnr %u rd %u", a.sq_psn, a.timeout,
		 a.retry_cnt, a.rnr_retry, a.max_rd_atomic);
	vt_check(a.rq_psn == 0x123456 && a.dest_qp_num == 0x4321 && a.path_mtu == IBV_MTU_512 &&
		 a.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
		 "RTS: what INIT and RTR set still reads back", "rq_psn 0x%x", a.rq_psn);

	m.qp_state = IBV_QPS_SQD;
	vt_require(ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0, "SQD");
	vt_check(query(qp, &a, &ia) && a.qp_state == IBV_QPS_SQD && a.sq_draining == 0,
		 "SQD with nothing outstanding: sq_draining 0", "state %d draining %u",
		 a.qp_state, a.sq_draining);
	m.qp_state = IBV_QPS_RTS;
	m.min_rnr_timer = 20;
	vt_check(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER) == 0 &&
		 query(qp, &a, &ia) && a.qp_state == IBV_QPS_RTS && a.min_rnr_timer == 20,
		 "SQD -> RTS with a new RNR timer reads it back", "state %d rnr %u",
		 a.qp_state, a.min_rnr_timer);

	{	/* a WRITE to a QP that does not exist is never acknowledged */
		struct ibv_mr *mr = vt_mr(64, IBV_ACCESS_LOCAL_WRITE);
		struct ibv_sge sge = { (uintptr_t)mr->addr, 8, mr->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
					  .num_sge = 1, .wr.rdma = { 0x1000, 0x1234 } }, *bad;

		vt_require(ibv_post_send(qp, &wr, &bad) == 0, "post_send");
		usleep(50000);			/* sent before the state changes */
		m.qp_state = IBV_QPS_SQD;
		vt_check(ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 && query(qp, &a, &ia) &&
			 a.qp_state == IBV_QPS_SQD && a.sq_draining == 1,
			 "SQD with a request unacknowledged: sq_draining 1", "state %d draining %u",
			 a.qp_state, a.sq_draining);
		m.qp_state = IBV_QPS_ERR;
		vt_check(ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 && state_is(qp, IBV_QPS_ERR),
			 "ERR: ibv_query_qp and qp->state say so", "state %d", qp->state);
		ibv_dereg_mr(mr);
	}
	m.qp_state = IBV_QPS_ERR;
	vt_check(ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 && state_is(qp, IBV_QPS_ERR),
		 "ERR -> ERR is allowed", "state %d", qp->state);
	m.qp_state = IBV_QPS_RESET;
	vt_check(ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 && state_is(qp, IBV_QPS_RESET),
		 "RESET again", "state %d", qp->state);
	vt_check(ibv_destroy_qp(qp) == 0, "destroy", "failed");
}

static void
ud(struct ibv_cq *cq)
{
	struct ibv_qp *qp = qp_create(IBV_QPT_UD, cq);
	struct ibv_qp_attr m, a;
	struct ibv_qp_init_attr ia;

	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	m.qkey = 0x1234;
	vt_require(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_QKEY) == 0, "UD INIT");
	m.qp_state = IBV_QPS_RTR;
	vt_require(ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0, "UD RTR");
	m.qp_state = IBV_QPS_RTS;
	m.sq_psn = 0x777;
	vt_require(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0, "UD RTS");
	vt_check(query(qp, &a, &ia) && a.qp_state == IBV_QPS_RTS && a.qkey == 0x1234 &&
		 a.sq_psn == 0x777 && ia.qp_type == IBV_QPT_UD,
		 "UD: Q_Key and SQ PSN read back, type UD", "state %d qkey 0x%x sq_psn 0x%x",
		 a.qp_state, a.qkey, a.sq_psn);
	m.qkey = 0x5678;
	vt_check(ibv_modify_qp(qp, &m, IBV_QP_QKEY) == 0 && query(qp, &a, &ia) &&
		 a.qkey == 0x5678, "UD: a new Q_Key in RTS reads back", "qkey 0x%x", a.qkey);
	vt_check(ibv_destroy_qp(qp) == 0, "destroy", "failed");
}

static void
device_ex(void)
{
	struct ibv_device_attr da;
	struct ibv_device_attr_ex dx;
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_mr *mr;
	char *buf;

	memset(&dx, 0, sizeof(dx));
	vt_check(ibv_query_device(vt.ctx, &da) == 0 && ibv_query_device_ex(vt.ctx, NULL, &dx) == 0 &&
		 memcmp(&da, &dx.orig_attr, sizeof(da)) == 0,
		 "ibv_query_device_ex: orig_attr is ibv_query_device's answer", "differs");
	/* no IEEE OUI: IBA A3.3.1's 0xFFFFFF, as Soft-RoCE; part 0 (doc/verbs.md) */
	vt_check(da.vendor_id == 0xffffff && da.vendor_part_id == 0 && da.hw_ver >= 1,
		 "vendor_id 0xFFFFFF (no OUI), vendor_part_id 0, hw_ver the ring ABI (>= 1)",
		 "vendor_id %#x part %u hw_ver %u", da.vendor_id, da.vendor_part_id, da.hw_ver);
	vt_check(dx.phys_port_cnt_ex == da.phys_port_cnt && da.phys_port_cnt == 1,
		 "phys_port_cnt_ex: one port", "%u", dx.phys_port_cnt_ex);
	/* hca_core_clock is in kHz; droce's timestamps count nanoseconds */
	vt_check(dx.hca_core_clock == 1000000 && dx.completion_timestamp_mask != 0,
		 "hca_core_clock 1000000 kHz (ns timestamps) with a timestamp mask",
		 "clock %llu", (unsigned long long)dx.hca_core_clock);
	vt_check(ibv_query_device_ex(vt.ctx, &in, &dx) == EINVAL,
		 "an input comp_mask it does not know: EINVAL", "accepted");

	/* ODP: what odp_caps claims, ibv_reg_mr does */
	buf = calloc(1, 8192);
	vt_require(buf != NULL, "memory");
	mr = ibv_reg_mr(vt.pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	vt_check((mr != NULL) == !!(dx.odp_caps.general_caps & IBV_ODP_SUPPORT),
		 "IBV_ODP_SUPPORT claimed exactly when an ON_DEMAND registration works",
		 "caps 0x%llx mr %p", (unsigned long long)dx.odp_caps.general_caps, (void *)mr);
	vt_check(!(dx.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
		 (dx.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE),
		 "ODP claimed for RC operations too", "rc 0x%x",
		 dx.odp_caps.per_transport_caps.rc_odp_caps);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(vt.pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	vt_check((mr != NULL) == !!(dx.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT) &&
		 (mr != NULL || errno == EOPNOTSUPP),
		 "implicit ODP as IBV_ODP_SUPPORT_IMPLICIT says (else EOPNOTSUPP)",
		 "mr %p errno %d", (void *)mr, errno);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	free(buf);
}

static void
drive(void)
{
	struct ibv_cq *cq = vt_cq(64);

	rc(cq);
	ud(cq);
	device_ex();
	ibv_destroy_cq(cq);
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
