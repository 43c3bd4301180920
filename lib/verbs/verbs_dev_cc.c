/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Congestion control, the control plane's part: ibv_modify_qp_rate_limit
 * checked against what QUERY_DEVICE's packet_pacing_caps states, then
 * handed to the QP's pacer (verbs_engine_cc.c); ECN's switches and
 * DCQCN's parameters changed at run time. Both while the workers are
 * parked, as every control request.
 */

#include <errno.h>

#include "verbs_engine_priv.h"

#define KBPS			1000ull
#define PACING_MIN_KBPS		1u	/* the pacer is exact to the bit: any rate */
#define PACING_QPTS		(1u << IBV_QPT_RC | 1u << IBV_QPT_UC | 1u << IBV_QPT_UD)

/* The port's nominal speed: the IBA speed code's lane rate times the width. */
uint64_t
dev_line_rate_bps(const struct droce_dev *dev)
{
	uint64_t lane, lanes;

	switch (dev->port.active_speed) {
	case 1: lane = 2500; break;		/* SDR */
	case 2: lane = 5000; break;		/* DDR */
	case 4: case 8: lane = 10000; break;	/* QDR, FDR10 */
	case 16: lane = 14000; break;		/* FDR */
	case 32: lane = 25000; break;		/* EDR */
	case 64: lane = 50000; break;		/* HDR */
	case 128: lane = 100000; break;		/* NDR */
	default: lane = 25000; break;
	}
	switch (dev->port.active_width) {
	case 1: lanes = 1; break;
	case 16: lanes = 2; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	default: lanes = 4; break;
	}
	return lane * lanes * 1000000ull;
}

void
dev_packet_pacing_caps(const struct droce_dev *dev, struct ibv_packet_pacing_caps *caps)
{
	caps->qp_rate_limit_min = PACING_MIN_KBPS;
	caps->qp_rate_limit_max = (uint32_t)(dev_line_rate_bps(dev) / KBPS);
	caps->supported_qpts = PACING_QPTS;
}

int
dev_modify_qp_rate_limit(struct droce_client *cl,
			 const struct droce_ctrl_modify_qp_rate_limit_req *req)
{
	struct dev_qp *qp = dev_obj_get(cl, req->qp_handle, OBJ_QP);
	struct ibv_packet_pacing_caps caps;

	if (qp == NULL || req->comp_mask != 0)
		return EINVAL;
	if (!(PACING_QPTS & (1u << qp->tqp.attr.type)))
		return EOPNOTSUPP;
	dev_packet_pacing_caps(cl->dev, &caps);
	/* 0 lifts the limit; anything else must be in the stated range */
	if (req->rate_limit != 0 &&
	    (req->rate_limit < caps.qp_rate_limit_min || req->rate_limit > caps.qp_rate_limit_max))
		return EINVAL;
	qp->cc.limit_bps = req->rate_limit * KBPS;
	qp->cc.max_burst = req->max_burst_sz;
	qp->cc.typical_pkt = req->typical_pkt_sz;
	engine_cc_rate_update(qp->eng, qp);
	return 0;
}

void
droce_dev_cc_get(const struct droce_dev *dev, uint8_t *ecn_np, uint8_t *ecn_rp,
		 struct droce_dcqcn_params *dcqcn)
{
	*ecn_np = dev->conf.ecn_np_enable;
	*ecn_rp = dev->conf.ecn_rp_enable;
	*dcqcn = dev->conf.dcqcn;
}

void
droce_dev_cc_set(struct droce_dev *dev, uint8_t ecn_np, uint8_t ecn_rp,
		 const struct droce_dcqcn_params *dcqcn)
{
	uint8_t rp_was = dev->conf.ecn_rp_enable;
	struct droce_client *cl;
	struct dev_obj *o;

	dev->conf.ecn_np_enable = ecn_np;
	dev->conf.ecn_rp_enable = ecn_rp;
	dev->conf.dcqcn = *dcqcn;
	if (ecn_rp == rp_was)
		return;
	for (cl = dev->clients; cl != NULL; cl = cl->next) {
		for (o = cl->objs[OBJ_AH].next; o != &cl->objs[OBJ_AH]; o = o->next)
			dev_av_ecn(&((struct dev_ah *)(void *)o)->av, rp_was, ecn_rp);
		for (o = cl->objs[OBJ_QP].next; o != &cl->objs[OBJ_QP]; o = o->next) {
			struct dev_qp *qp = (void *)o;

			dev_av_ecn(&qp->tqp.attr.av, rp_was, ecn_rp);
			if (qp->cc.rp.limited &&
			    !(ecn_rp & (1u << DROCE_TCLASS_PRIO(qp->tqp.attr.av.tclass)))) {
				droce_dcqcn_rp_init(&qp->cc.rp, dev_line_rate_bps(dev));
				engine_cc_rate_update(qp->eng, qp);
			}
		}
	}
}
