/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Receive dispatch: a parsed frame to the QP of its QPN in the engine's
 * shard, to every local member of a multicast group, or to the daemon's
 * QP1 handler; CNPs and CE marks to congestion control (verbs_engine_cnp.c).
 */

#include <errno.h>

#include "droce_wire_gid.h"
#include "verbs_engine_priv.h"

/* A packet for QP1: only a UD SEND_ONLY with the GSI Q_Key and the default P_Key (IBA C9-xx). */
static void
rx_gsi(struct droce_engine *eng, const struct droce_pkt *pkt, const uint8_t *frame, uint64_t now)
{
	if (eng->gsi_rx == NULL) {
		ENG_CNT(eng, RX_NO_QP);
		return;
	}
	if (pkt->opcode != DROCE_OP_UD_SEND_ONLY || pkt->deth.qkey != DROCE_GSI_QKEY ||
	    (pkt->pkey & 0x7fff) != 0x7fff) {
		ENG_CNT(eng, RX_GSI_BAD);
		return;
	}
	eng->gsi_rx(eng->gsi_arg, pkt, frame + pkt->payload_off, pkt->payload_len, now);
}

int
engine_handoff(struct droce_engine *eng, unsigned int to, const uint8_t *frame, uint32_t len,
	       bool local_only)
{
	const struct droce_dev_port_ops *ops = eng->dev->conf.port_ops;

	if (ops->handoff == NULL || ops->handoff(eng->port_arg, to, frame, len, local_only) < 0)
		return -ENOBUFS;
	ENG_CNT(eng, RX_HANDOFF);
	return 0;
}

/* Another engine's frame: a copy goes to it whole, to be received there. */
static void
rx_handoff(struct droce_engine *eng, unsigned int to, const uint8_t *frame, uint32_t len,
	   bool local_only)
{
	if (engine_handoff(eng, to, frame, len, local_only) < 0)
		ENG_CNT(eng, RX_HANDOFF_FAIL);
}

static void
rx_mcast(struct droce_engine *eng, const struct droce_pkt *pkt, const uint8_t *frame, uint32_t len,
	 bool local_only, uint64_t now)
{
	void *members[64];
	unsigned int n, i, e;
	bool from_us = engine_gid_is_local(eng, pkt->sgid);
	uint32_t others = 0;	/* engines with members, by bit */

	n = droce_mcast_members(eng->dev->mcast, pkt->dgid, members, DROCE_DIM(members));
	if (n == 0) {
		ENG_CNT(eng, RX_MCAST_NO_GRP);
		return;
	}
	for (i = 0; i < n && i < DROCE_DIM(members); i++) {
		struct dev_qp *qp = members[i];

		if (qp->eng != eng) {
			others |= 1u << qp->eng->id;
			continue;
		}
		/* the sender itself, if it asked not to hear its own multicast */
		if (from_us && pkt->deth.sqpn == qp->tqp.attr.qpn &&
		    (qp->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB))
			continue;
		droce_tqp_rx(&qp->tqp, pkt, frame, now);
		engine_qp_activate(eng, qp);
		eng->rx_pkts++;
	}
	for (e = 0; !local_only && others != 0; e++, others >>= 1)
		if (others & 1)
			rx_handoff(eng, e, frame, len, true);
}

void
droce_engine_prefetch_rx(const struct droce_engine *eng, const struct droce_pkt *pkt)
{
	const struct dev_qp *qp = engine_qp_by_qpn(eng, pkt->dqpn);

	if (qp != NULL)
		droce_tqp_prefetch_rx(&qp->tqp, pkt);
}

void
droce_engine_rx(struct droce_engine *eng, const struct droce_pkt *pkt, const uint8_t *frame,
		uint32_t len, bool local_only, uint64_t now)
{
	struct dev_qp *qp;
	uint64_t rx_before;
	int owner = droce_engine_owner(eng, pkt);

	eng->now = now;
	if (owner < 0) {
		rx_mcast(eng, pkt, frame, len, local_only, now);
		return;
	}
	if ((unsigned int)owner != eng->id) {	/* a loopback frame to another engine's QP */
		rx_handoff(eng, (unsigned int)owner, frame, len, false);
		return;
	}
	if (pkt->dqpn == DROCE_GSI_QPN) {
		rx_gsi(eng, pkt, frame, now);
		return;
	}
	if (pkt->opcode == DROCE_OP_CNP) {	/* congestion control's, not the transport's */
		engine_rp_cnp(eng, pkt, now);
		return;
	}
	qp = engine_qp_by_qpn(eng, pkt->dqpn);
	if (qp == NULL) {
		ENG_CNT(eng, RX_NO_QP);
		return;
	}
	if ((engine_frame_tclass(pkt, frame) & DROCE_ECN_MASK) == DROCE_ECN_CE)
		engine_np_marked(eng, qp, now);
	eng->rx_pkts++;
	rx_before = qp->tqp.cnt[DROCE_TQP_CNT_RX_PKTS];
	droce_tqp_rx(&qp->tqp, pkt, frame, now);
	engine_qp_check_comm_est(qp, rx_before);
	engine_qp_activate(eng, qp);
}
