/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * DCQCN's two ends in the engine (doc/transport.md):
 *
 *  - notification point: a CE-marked packet for an RC or UC QP, its
 *    priority's NP on, is answered with a CNP to the QP's peer (BTH opcode
 *    0x81, BECN set, the peer's QPN, the QP's P_Key, 16 reserved bytes,
 *    ICRC; DSCP cnp_dscp, not ECN-capable), at most one per QP per
 *    min_time_between_cnps (IBA annex A17.9.3, as ConnectX sends them).
 *  - reaction point: a CNP for an RC or UC QP, its priority's RP on, cuts
 *    the QP's rate (lib/cc) and its pacer follows; otherwise it is counted
 *    and ignored, never handed to the transport.
 */

#include <string.h>

#include "droce_wire_gid.h"
#include "verbs_engine_priv.h"

#define NS_PER_US	1000ull

static bool
connected(const struct dev_qp *qp)
{
	return qp->tqp.attr.type == IBV_QPT_RC || qp->tqp.attr.type == IBV_QPT_UC;
}

static void
cnp_send(struct droce_engine *eng, struct dev_qp *qp)
{
	const struct droce_dcqcn_params *p = &eng->dev->conf.dcqcn;
	const struct droce_av *av = &qp->tqp.attr.av;
	struct droce_pkt pkt;
	uint32_t fl;

	memset(&pkt, 0, sizeof(pkt));
	memcpy(pkt.smac, av->smac, 6);
	memcpy(pkt.dmac, av->dmac, 6);
	memcpy(pkt.sgid, av->sgid, 16);
	memcpy(pkt.dgid, av->dgid, 16);
	if (av->vlan) {
		pkt.flags |= DROCE_PKT_F_VLAN;
		pkt.vlan_tci = (uint16_t)((av->vlan_tci & 0x1fff) | p->cnp_802p_prio << 13);
	}
	if (av->ipv6)
		pkt.flags |= DROCE_PKT_F_IPV6;
	pkt.tclass = (uint8_t)(p->cnp_dscp << 2);	/* not ECN-capable */
	pkt.ttl = av->hop_limit ? av->hop_limit : 64;
	pkt.ip_frag = 0x4000;				/* DF */
	/* the QP's own flow: the same UDP source port as its packets */
	fl = av->flow_label ? av->flow_label : droce_flow_label(qp->tqp.attr.qpn,
							       qp->tqp.attr.dest_qpn);
	pkt.flow_label = av->ipv6 ? fl : 0;
	pkt.sport = droce_flow_label_to_sport(fl);
	pkt.dport = DROCE_ROCEV2_UDP_PORT;
	pkt.opcode = DROCE_OP_CNP;
	pkt.becn = true;
	pkt.pkey = qp->tqp.attr.pkey ? qp->tqp.attr.pkey : DROCE_DEFAULT_PKEY;
	pkt.dqpn = qp->tqp.attr.dest_qpn;
	if (engine_xmit(eng, &pkt, NULL, 0, qp->tqp.attr.av.dmac) == 0) {
		ENG_CNT(eng, NP_CNP_SENT);
		qp->cc.cnp_sent++;
	}
}

/* A CE-marked packet arrived for @p qp. */
void
engine_np_marked(struct droce_engine *eng, struct dev_qp *qp, uint64_t now)
{
	const struct droce_dcqcn_params *p = &eng->dev->conf.dcqcn;

	if (!connected(qp))
		return;
	ENG_CNT(eng, NP_ECN_MARKED_ROCE_PACKETS);
	if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	if (!(eng->dev->conf.ecn_np_enable & (1u << DROCE_TCLASS_PRIO(qp->tqp.attr.av.tclass))))
		return;
	if (droce_cc_np_cnp_due(&qp->cc.np, p->min_time_between_cnps * NS_PER_US, now))
		cnp_send(eng, qp);
}

/* A CNP arrived (for this engine's QP pkt->dqpn). */
void
engine_rp_cnp(struct droce_engine *eng, const struct droce_pkt *pkt, uint64_t now)
{
	struct dev_qp *qp = engine_qp_by_qpn(eng, pkt->dqpn);

	if (qp == NULL || !connected(qp) ||
	    !(eng->dev->conf.ecn_rp_enable & (1u << DROCE_TCLASS_PRIO(qp->tqp.attr.av.tclass)))) {
		ENG_CNT(eng, RP_CNP_IGNORED);
		return;
	}
	ENG_CNT(eng, RP_CNP_HANDLED);
	qp->cc.cnp_handled++;
	droce_dcqcn_rp_cnp(&qp->cc.rp, &eng->dev->conf.dcqcn, now);
	engine_cc_rate_update(eng, qp);
}
