/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Not one man page but the refusals of doc/verbs.md: each verb droce does
 * not offer fails exactly as the table says (NULL + errno, or the returned
 * value), as rdma-core answers on a device without the feature, and the
 * capability that would announce it is clear in ibv_query_device_ex. A
 * refusal that starts to succeed, or fails another way, fails here, so the
 * table cannot drift from the shim.
 */

#include <errno.h>
#include <string.h>

#include "verbs_test.h"

/* A pointer verb refused as NULL + EOPNOTSUPP. */
#define REFUSED_PTR(call, name)						\
	do {								\
		void *p_;						\
									\
		errno = 0;						\
		p_ = (void *)(call);					\
		vt_check(p_ == NULL && errno == EOPNOTSUPP, name ": NULL, EOPNOTSUPP", \
			 "returned %p errno %d", p_, errno);		\
	} while (0)

/* An int verb refused by returning EOPNOTSUPP. */
#define REFUSED_INT(call, want, name)					\
	do {								\
		int r_ = (call);					\
									\
		vt_check(r_ == (want), name, "returned %d", r_);	\
	} while (0)

static void
capabilities(void)
{
	struct ibv_device_attr_ex dx;

	memset(&dx, 0, sizeof(dx));
	vt_require(ibv_query_device_ex(vt.ctx, NULL, &dx) == 0, "query_device_ex");
	vt_check(!(dx.orig_attr.device_cap_flags & IBV_DEVICE_XRC),
		 "IBV_DEVICE_XRC clear", "set");
	vt_check(!(dx.device_cap_flags_ex & IBV_DEVICE_MANAGED_FLOW_STEERING) &&
		 dx.raw_packet_caps == 0, "no flow steering, no raw packet capabilities",
		 "flags_ex %#llx raw %#x", (unsigned long long)dx.device_cap_flags_ex,
		 dx.raw_packet_caps);
	vt_check(dx.rss_caps.supported_qpts == 0 && dx.max_wq_type_rq == 0,
		 "no RSS, no WQs", "qpts %#x wq %u", dx.rss_caps.supported_qpts,
		 dx.max_wq_type_rq);
	vt_check(dx.tso_caps.max_tso == 0 && dx.tm_caps.max_num_tags == 0,
		 "no TSO, tag matching", "tso %u",
		 dx.tso_caps.max_tso);
	vt_check(dx.cq_mod_caps.max_cq_count == 0 && dx.cq_mod_caps.max_cq_period == 0,
		 "no completion moderation (cq_mod_caps 0)", "count %u",
		 dx.cq_mod_caps.max_cq_count);
	vt_check(!(dx.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_ATOMIC) &&
		 dx.xrc_odp_caps == 0, "no ODP atomics, no XRC ODP (odp_mr tests the rest)",
		 "rc 0x%x xrc 0x%x", dx.odp_caps.per_transport_caps.rc_odp_caps, dx.xrc_odp_caps);
}

static void
objects(void)
{
	struct ibv_cq *cq = vt_cq(8);
	struct ibv_qp *qp = vt_qp(IBV_QPT_RC, cq);
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(vt.pd, &sia);
	struct ibv_mr *mr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)mr->addr, 64, mr->lkey };
	struct ibv_xrcd_init_attr xia = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					  IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1, .oflags = 0 };
	struct ibv_qp_open_attr qoa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM |
					IBV_QP_OPEN_ATTR_TYPE, .qp_num = qp->qp_num,
					.qp_type = IBV_QPT_XRC_RECV };
	struct ibv_wq_init_attr wia = { .wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
					.pd = vt.pd, .cq = cq };
	struct ibv_rwq_ind_table_init_attr ria = { .log_ind_tbl_size = 0 };
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(fa),
				    .port = 1 };
	struct ibv_flow_action_esp_attr ea = { 0 };
	struct ibv_counters_init_attr cia = { 0 };
	struct ibv_modify_cq_attr mca = { .attr_mask = IBV_CQ_ATTR_MODERATE,
					  .moderate = { .cq_count = 4, .cq_period = 10 } };
	struct ibv_ece ece = { 0 };
	struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_SYNC }, *bad_op;
	struct ibv_ah_attr aha = { .is_global = 1, .port_num = 1 };
	uint8_t mac[6];
	uint16_t vid;
	uint32_t srqn;

	vt_require(srq != NULL, "create_srq");
	REFUSED_PTR(ibv_import_device(vt.ctx->cmd_fd), "ibv_import_device");
	REFUSED_PTR(ibv_import_pd(vt.ctx, 1), "ibv_import_pd");
	REFUSED_PTR(ibv_import_mr(vt.pd, mr->handle), "ibv_import_mr");
	REFUSED_PTR(ibv_import_dm(vt.ctx, 1), "ibv_import_dm");
	REFUSED_PTR(ibv_alloc_null_mr(vt.pd), "ibv_alloc_null_mr");
	/* ibv_advise_mr is offered (odp_mr.c): of this MR, not ODP, EINVAL */
	vt_check(ibv_advise_mr(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
			       &sge, 1) == EINVAL, "ibv_advise_mr of an MR not ODP: EINVAL",
		 "other");
	REFUSED_PTR(ibv_open_xrcd(vt.ctx, &xia), "ibv_open_xrcd");
	REFUSED_PTR(ibv_open_qp(vt.ctx, &qoa), "ibv_open_qp");
	REFUSED_INT(ibv_get_srq_num(srq, &srqn), EOPNOTSUPP,
		    "ibv_get_srq_num (a basic SRQ has no number): EOPNOTSUPP");
	REFUSED_INT(ibv_post_srq_ops(srq, &op, &bad_op), EOPNOTSUPP,
		    "ibv_post_srq_ops: EOPNOTSUPP");
	REFUSED_PTR(ibv_create_wq(vt.ctx, &wia), "ibv_create_wq");
	REFUSED_PTR(ibv_create_rwq_ind_table(vt.ctx, &ria), "ibv_create_rwq_ind_table");
	REFUSED_PTR(ibv_create_flow(qp, &fa), "ibv_create_flow");
	REFUSED_PTR(ibv_create_flow_action_esp(vt.ctx, &ea), "ibv_create_flow_action_esp");
	REFUSED_PTR(ibv_create_counters(vt.ctx, &cia), "ibv_create_counters");
	REFUSED_INT(ibv_modify_cq(cq, &mca), EOPNOTSUPP, "ibv_modify_cq: EOPNOTSUPP");
	REFUSED_INT(ibv_query_ece(qp, &ece), EOPNOTSUPP, "ibv_query_ece: EOPNOTSUPP");
	REFUSED_INT(ibv_set_ece(qp, &ece), EOPNOTSUPP, "ibv_set_ece: EOPNOTSUPP");
	aha.grh.dgid = vt.gid;
	REFUSED_INT(ibv_resolve_eth_l2_from_gid(vt.ctx, &aha, mac, &vid), -EOPNOTSUPP,
		    "ibv_resolve_eth_l2_from_gid: -EOPNOTSUPP");
	vt_check(ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0) == 0,
		 "ibv_query_qp_data_in_order: 0 (no promise)", "not 0");

	/* object types and creation attributes */
	{
		struct ibv_qp_init_attr_ex qia = {
			.send_cq = cq, .recv_cq = cq, .pd = vt.pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		static const enum ibv_qp_type types[] = {
			IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_DRIVER,
		};
		unsigned int i;

		for (i = 0; i < VT_DIM(types); i++) {
			qia.qp_type = types[i];
			errno = 0;
			vt_check(ibv_create_qp_ex(vt.ctx, &qia) == NULL && errno == EOPNOTSUPP,
				 "ibv_create_qp_ex RAW_PACKET, XRC_SEND, XRC_RECV, DRIVER: "
				 "EOPNOTSUPP", "type %d errno %d", types[i], errno);
		}
	}
	{
		struct ibv_srq_init_attr_ex sx = {
			.attr = { .max_wr = 4, .max_sge = 1 }, .pd = vt.pd, .cq = cq,
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_CQ,
			.srq_type = IBV_SRQT_XRC,
		};

		REFUSED_PTR(ibv_create_srq_ex(vt.ctx, &sx), "ibv_create_srq_ex IBV_SRQT_XRC");
		sx.srq_type = IBV_SRQT_TM;
		REFUSED_PTR(ibv_create_srq_ex(vt.ctx, &sx), "ibv_create_srq_ex IBV_SRQT_TM");
	}
	{
		struct ibv_srq_attr sa = { .max_wr = 64 };

		REFUSED_INT(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EOPNOTSUPP,
			    "ibv_modify_srq IBV_SRQ_MAX_WR (no SRQ resize): EOPNOTSUPP");
	}
	ibv_destroy_srq(srq);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
}

static void
drive(void)
{
	capabilities();
	objects();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
