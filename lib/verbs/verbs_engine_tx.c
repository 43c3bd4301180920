/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Transmit: to one of the device's own GIDs through the engine's loopback
 * queue, to a multicast group also to local members, else to the port once
 * the peer's MAC is known; QP1's MADs as UD SENDs.
 */

#include <errno.h>
#include <string.h>

#include "droce_wire_gid.h"
#include "verbs_engine_priv.h"

bool
engine_gid_is_local(const struct droce_engine *eng, const uint8_t *gid)
{
	unsigned int i;

	for (i = 0; i < eng->dev->conf.n_gids; i++)
		if (memcmp(eng->dev->conf.gid[i], gid, 16) == 0)
			return true;
	return false;
}

static void
loop_push(struct droce_engine *eng, struct droce_pkt *pkt, const struct droce_iov *iov,
	  unsigned int n_iov)
{
	struct engine_loop_frame *f;
	int len;

	if (eng->loop_tail - eng->loop_head >= ENG_LOOP_SLOTS) {
		ENG_CNT(eng, TX_FAIL);
		return;		/* the transports recover as from any loss */
	}
	f = &eng->loop[eng->loop_tail % ENG_LOOP_SLOTS];
	len = droce_tqp_frame_build(pkt, iov, n_iov, f->data, sizeof(f->data));
	if (len < 0) {
		ENG_CNT(eng, TX_FAIL);
		return;
	}
	f->len = (uint32_t)len;
	eng->loop_tail++;
}

/*
 * Transmit one packet: to one of our GIDs through the loopback queue, to
 * a group also to local members, else to the wire once the peer's MAC is
 * known (@p cache keeps it for a connected QP).
 * @return 0, -EAGAIN (no MAC yet: the sender's timers try again) or -EIO.
 */
int
engine_xmit(struct droce_engine *eng, struct droce_pkt *pkt, const struct droce_iov *iov,
	    unsigned int n_iov, uint8_t *cache)
{
	bool mcast = droce_gid_is_mcast(pkt->dgid);

	/* to ourselves: never the wire; a group may also have members here */
	if (engine_gid_is_local(eng, pkt->dgid) ||
	    (mcast && droce_mcast_members(eng->dev->mcast, pkt->dgid, NULL, 0) > 0)) {
		uint8_t wire_dmac[6];

		memcpy(wire_dmac, pkt->dmac, 6);
		memcpy(pkt->dmac, eng->dev->conf.mac, 6);
		loop_push(eng, pkt, iov, n_iov);
		/* put it back: @p pkt may be the QP's own description, kept (tr_ops.xmit) */
		memcpy(pkt->dmac, wire_dmac, 6);	/* and a group's MAC on the wire */
		if (!mcast)
			return 0;
	}
	if (!mcast && memcmp(pkt->dmac, (uint8_t[6]){ 0 }, 6) == 0) {
		if (eng->dev->conf.port_ops->resolve(eng->port_arg, pkt->dgid, pkt->dmac) < 0) {
			ENG_CNT(eng, TX_NO_NEIGH);
			return -EAGAIN;
		}
		if (cache != NULL)
			memcpy(cache, pkt->dmac, 6);
	}
	if (eng->dev->conf.port_ops->frame_out(eng->port_arg, pkt, iov, n_iov) < 0) {
		ENG_CNT(eng, TX_FAIL);
		return -EIO;
	}
	return 0;
}


/* A MAD from QP1 (droce_dev_gsi_send()). */
int
engine_gsi_send(struct droce_engine *eng, const uint8_t sgid[16], const uint8_t dgid[16],
		uint32_t dqpn, uint8_t tclass, uint8_t hop_limit, const void *payload,
		uint32_t len)
{
	struct droce_iov iov = { .base = payload, .len = len };
	struct droce_pkt pkt;
	uint32_t fl;

	if (!engine_gid_is_local(eng, sgid) || len > dev_mtu_bytes(eng->dev->port.active_mtu))
		return -EINVAL;
	memset(&pkt, 0, sizeof(pkt));
	memcpy(pkt.smac, eng->dev->conf.mac, 6);
	memcpy(pkt.sgid, sgid, 16);
	memcpy(pkt.dgid, dgid, 16);
	if (!droce_gid_is_ipv4(dgid))
		pkt.flags |= DROCE_PKT_F_IPV6;
	pkt.tclass = tclass;
	pkt.ttl = hop_limit ? hop_limit : 64;
	pkt.ip_frag = 0x4000;			/* DF: RoCEv2 is never fragmented */
	fl = droce_flow_label(DROCE_GSI_QPN, dqpn);
	pkt.flow_label = (pkt.flags & DROCE_PKT_F_IPV6) ? fl : 0;
	pkt.sport = droce_flow_label_to_sport(fl);
	pkt.dport = DROCE_ROCEV2_UDP_PORT;
	pkt.opcode = DROCE_OP_UD_SEND_ONLY;
	pkt.pkey = DROCE_DEFAULT_PKEY;
	pkt.dqpn = dqpn & DROCE_24BIT_MASK;
	pkt.deth.qkey = DROCE_GSI_QKEY;
	pkt.deth.sqpn = DROCE_GSI_QPN;
	pkt.payload_len = len;
	pkt.padcnt = droce_pad_bytes(len);
	return engine_xmit(eng, &pkt, &iov, 1, NULL);
}
