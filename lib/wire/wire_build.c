/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Header builder (droce_wire.h): the inverse of the parser. It writes every
 * field from struct droce_pkt, reserved ones included, so a parsed packet
 * rebuilds byte for byte. Stateless: any thread may call it.
 */

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>

#include "droce_wire.h"
#include "droce_wire_gid.h"

static inline void
store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

uint32_t
droce_pkt_hdrs_len(const struct droce_pkt *pkt)
{
	uint32_t len = DROCE_ETH_BYTES + DROCE_UDP_BYTES + droce_opcode(pkt->opcode)->hdr_len;

	if (pkt->flags & DROCE_PKT_F_VLAN)
		len += DROCE_VLAN_BYTES;
	len += (pkt->flags & DROCE_PKT_F_IPV6) ? DROCE_IPV6_BYTES : DROCE_IPV4_BYTES;
	return len;
}

static inline __attribute__((always_inline)) void
build_xhdrs(const struct droce_pkt *pkt, const struct droce_opcode_desc *d, uint8_t *x)
{
	if (d->xhdrs & DROCE_XH(DETH)) {
		struct droce_deth *h = (void *)(x + d->off[DROCE_X_DETH]);

		droce_deth_set_qkey(h, pkt->deth.qkey);
		h->sqp_w = 0;
		droce_deth_set_resv8(h, pkt->deth.resv8);
		droce_deth_set_sqpn(h, pkt->deth.sqpn);
	}
	if (d->xhdrs & DROCE_XH(FETH)) {
		struct droce_feth *h = (void *)(x + d->off[DROCE_X_FETH]);

		h->bits = 0;
		droce_feth_set_sel(h, pkt->feth.sel);
		droce_feth_set_plt(h, pkt->feth.plt);
		droce_feth_set_resv(h, pkt->feth.resv);
	}
	if (d->xhdrs & DROCE_XH(RETH)) {
		struct droce_reth *h = (void *)(x + d->off[DROCE_X_RETH]);

		droce_reth_set_va(h, pkt->reth.va);
		droce_reth_set_rkey(h, pkt->reth.rkey);
		droce_reth_set_len(h, pkt->reth.len);
	}
	if (d->xhdrs & DROCE_XH(ATMETH)) {
		struct droce_atmeth *h = (void *)(x + d->off[DROCE_X_ATMETH]);

		droce_atmeth_set_va(h, pkt->atmeth.va);
		droce_atmeth_set_rkey(h, pkt->atmeth.rkey);
		droce_atmeth_set_swap_add(h, pkt->atmeth.swap_add);
		droce_atmeth_set_cmp(h, pkt->atmeth.cmp);
	}
	if (d->xhdrs & DROCE_XH(AETH)) {
		struct droce_aeth *h = (void *)(x + d->off[DROCE_X_AETH]);

		h->smsn = 0;
		droce_aeth_set_syndrome(h, pkt->aeth.syndrome);
		droce_aeth_set_msn(h, pkt->aeth.msn);
	}
	if (d->xhdrs & DROCE_XH(ATMACK))
		droce_atmack_set_orig((void *)(x + d->off[DROCE_X_ATMACK]), pkt->atmack_orig);
	if (d->xhdrs & DROCE_XH(IMMDT))
		droce_immdt_set_imm((void *)(x + d->off[DROCE_X_IMMDT]), pkt->imm);
	if (d->xhdrs & DROCE_XH(IETH))
		droce_ieth_set_rkey((void *)(x + d->off[DROCE_X_IETH]), pkt->ieth_rkey);
	if (d->xhdrs & DROCE_XH(CNPPAD))	/* reserved: zero unless rebuilding a parsed CNP */
		memcpy(x + d->off[DROCE_X_CNPPAD], pkt->cnp_resv, DROCE_CNPPAD_BYTES);
}

/*
 * The BTH in three 32-bit stores, each field masked to its width as the
 * droce_bth_set_*() accessors do (a unit test holds the two to the same
 * bytes): thirteen read-modify-writes of the frame cost four times more.
 */
static inline __attribute__((always_inline)) void
build_bth(const struct droce_pkt *pkt, struct droce_bth *bth)
{
	uint32_t flags = (pkt->se ? DROCE_BTH_SE_MASK : 0u) | (pkt->mig ? DROCE_BTH_MIG_MASK : 0u) |
			 (((uint32_t)pkt->padcnt << DROCE_BTH_PAD_SHIFT) & DROCE_BTH_PAD_MASK) |
			 (pkt->tver & DROCE_BTH_TVER_MASK);
	uint32_t w[3];

	w[0] = rte_cpu_to_be_32((uint32_t)pkt->opcode << 24 | flags << 16 | pkt->pkey);
	w[1] = rte_cpu_to_be_32((pkt->fecn ? DROCE_BTH_FECN_MASK : 0u) |
				(pkt->becn ? DROCE_BTH_BECN_MASK : 0u) |
				(((uint32_t)pkt->resv6 << DROCE_BTH_RESV6_SHIFT) & DROCE_BTH_RESV6_MASK) |
				(pkt->dqpn & DROCE_24BIT_MASK));
	w[2] = rte_cpu_to_be_32((pkt->ackreq ? DROCE_BTH_ACKREQ_MASK : 0u) |
				(((uint32_t)pkt->resv7 << DROCE_BTH_RESV7_SHIFT) & DROCE_BTH_RESV7_MASK) |
				(pkt->psn & DROCE_24BIT_MASK));
	memcpy(bth, w, sizeof(w));
}


/* A template's copy gets the packet's lengths, and on IPv4 the checksum patched from its sum. */
static inline void
tmpl_set_lengths(const struct droce_hdr_tmpl *t, uint8_t *ip, uint8_t *udp, uint32_t udp_len)
{
	uint32_t sum;
	uint16_t w;

	if (t->flags & DROCE_PKT_F_IPV6) {
		store_be16(ip + 4, (uint16_t)udp_len);
	} else {
		store_be16(ip + 2, (uint16_t)(DROCE_IPV4_BYTES + udp_len));
		/* the sum of the other words plus the length, as it lies in memory */
		memcpy(&w, ip + 2, 2);
		sum = (uint32_t)t->ip_sum + w;
		sum = (sum >> 16) + (sum & 0xffff);
		w = (uint16_t)~sum;
		memcpy(ip + 10, &w, 2);
	}
	store_be16(udp + 4, (uint16_t)udp_len);
}

int
droce_pkt_build_hdrs(struct droce_pkt *pkt, void *buf, uint32_t cap)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	uint8_t *f = buf, *ip, *udp;
	uint32_t hlen, off = DROCE_ETH_BYTES, udp_len;

	if (!(d->flags & DROCE_OPF_VALID))
		return -EINVAL;
	hlen = droce_pkt_hdrs_len(pkt);
	if (cap < hlen)
		return -ENOSPC;

	memcpy(f, pkt->dmac, 6);
	memcpy(f + 6, pkt->smac, 6);
	if (pkt->flags & DROCE_PKT_F_VLAN) {
		store_be16(f + 12, 0x8100);
		store_be16(f + 14, pkt->vlan_tci);
		off += DROCE_VLAN_BYTES;
	}
	store_be16(f + off - 2, (pkt->flags & DROCE_PKT_F_IPV6) ? 0x86dd : 0x0800);

	ip = f + off;
	pkt->l3_off = (uint16_t)off;
	udp_len = DROCE_UDP_BYTES + d->hdr_len + pkt->payload_len + pkt->padcnt + DROCE_ICRC_BYTES;
	if (pkt->flags & DROCE_PKT_F_IPV6) {
		uint32_t w = 6u << 28 | (uint32_t)pkt->tclass << 20 | (pkt->flow_label & 0xfffff);

		store_be16(ip, (uint16_t)(w >> 16));
		store_be16(ip + 2, (uint16_t)w);
		store_be16(ip + 4, (uint16_t)udp_len);
		ip[6] = 17;
		ip[7] = pkt->ttl;
		memcpy(ip + 8, pkt->sgid, 16);
		memcpy(ip + 24, pkt->dgid, 16);
		udp = ip + DROCE_IPV6_BYTES;
	} else {
		rte_be32_t a;
		uint16_t csum;

		ip[0] = 0x45;
		ip[1] = pkt->tclass;
		store_be16(ip + 2, (uint16_t)(DROCE_IPV4_BYTES + udp_len));
		store_be16(ip + 4, pkt->ip_id);
		store_be16(ip + 6, pkt->ip_frag);
		ip[8] = pkt->ttl;
		ip[9] = 17;
		store_be16(ip + 10, 0);
		a = droce_gid_to_ipv4(pkt->sgid);
		memcpy(ip + 12, &a, 4);
		a = droce_gid_to_ipv4(pkt->dgid);
		memcpy(ip + 16, &a, 4);
		/* the sum is of the words as they lie in memory: store as is */
		csum = (uint16_t)~droce_ipv4_hdr_sum(ip);
		if (csum == 0 && (pkt->flags & DROCE_PKT_F_IPV4_CSUM_NEG0))
			csum = 0xffff;
		memcpy(ip + 10, &csum, 2);
		udp = ip + DROCE_IPV4_BYTES;
	}

	store_be16(udp, pkt->sport);
	store_be16(udp + 2, pkt->dport);
	store_be16(udp + 4, (uint16_t)udp_len);
	store_be16(udp + 6, pkt->udp_csum);

	pkt->bth_off = (uint16_t)(udp + DROCE_UDP_BYTES - f);
	build_bth(pkt, (void *)(f + pkt->bth_off));
	build_xhdrs(pkt, d, f + pkt->bth_off);
	pkt->payload_off = (uint16_t)hlen;
	pkt->frame_len = (uint32_t)(udp - f) + udp_len;
	return (int)hlen;
}

/* Build @p t from @p pkt: its Ethernet to UDP headers for a zero payload. */
static void
tmpl_build(struct droce_hdr_tmpl *t, const struct droce_pkt *pkt)
{
	struct droce_pkt p = *pkt;
	uint8_t f[DROCE_HDR_TMPL_MAX + 64];	/* room for the BTH and xhdrs too */
	uint8_t *ip;

	p.payload_len = 0;
	p.padcnt = 0;
	(void)droce_pkt_build_hdrs(&p, f, sizeof(f));
	t->len = (uint8_t)(p.bth_off);
	t->l3_off = (uint8_t)p.l3_off;
	t->flags = pkt->flags & (DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6);
	memcpy(t->bytes, f, t->len);
	ip = t->bytes + t->l3_off;
	if (!(t->flags & DROCE_PKT_F_IPV6)) {
		memset(ip + 2, 0, 2);		/* total length, patched per packet */
		memset(ip + 10, 0, 2);		/* checksum, likewise */
		t->ip_sum = droce_ipv4_hdr_sum(ip);
	}
	memcpy(t->key, (const uint8_t *)pkt + DROCE_HDR_TMPL_KEY_OFF, DROCE_HDR_TMPL_KEY_LEN);
	memset(t->icrc, 0, sizeof(t->icrc));	/* they cover these bytes */
}

int
droce_pkt_build_hdrs_tmpl(struct droce_pkt *pkt, struct droce_hdr_tmpl *t, void *buf,
			  uint32_t cap)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	uint8_t *f = buf, *ip, *udp;
	uint32_t hlen, udp_len;

	if (!(d->flags & DROCE_OPF_VALID))
		return -EINVAL;
	if (t->len == 0 || t->flags != (pkt->flags & (DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6)) ||
	    memcmp(t->key, (const uint8_t *)pkt + DROCE_HDR_TMPL_KEY_OFF, DROCE_HDR_TMPL_KEY_LEN))
		tmpl_build(t, pkt);
	hlen = t->len + d->hdr_len;
	if (cap < hlen)
		return -ENOSPC;
	memcpy(f, t->bytes, t->len);
	ip = f + t->l3_off;
	udp = f + t->len - DROCE_UDP_BYTES;
	udp_len = DROCE_UDP_BYTES + d->hdr_len + pkt->payload_len + pkt->padcnt + DROCE_ICRC_BYTES;
	tmpl_set_lengths(t, ip, udp, udp_len);

	pkt->l3_off = t->l3_off;
	pkt->bth_off = t->len;
	build_bth(pkt, (void *)(f + t->len));
	build_xhdrs(pkt, d, f + t->len);
	pkt->payload_off = (uint16_t)hlen;
	pkt->frame_len = (uint32_t)(udp - f) + udp_len;
	return (int)hlen;
}

void
droce_hdr_tmpl_serve(struct droce_hdr_tmpl *t, const struct droce_pkt *pkt)
{
	t->fast = pkt;
	t->len = 0;		/* rebuilt from the description at the next build */
	memset(t->icrc, 0, sizeof(t->icrc));
	if (pkt == NULL)
		return;
	/* build_bth()'s fields that the fast path takes as constant */
	t->bth[0] = ((pkt->mig ? DROCE_BTH_MIG_MASK : 0u) | (pkt->tver & DROCE_BTH_TVER_MASK)) << 16 |
		    pkt->pkey;
	t->bth[1] = rte_cpu_to_be_32((pkt->fecn ? DROCE_BTH_FECN_MASK : 0u) |
				     (pkt->becn ? DROCE_BTH_BECN_MASK : 0u) |
				     (((uint32_t)pkt->resv6 << DROCE_BTH_RESV6_SHIFT) &
				      DROCE_BTH_RESV6_MASK) |
				     (pkt->dqpn & DROCE_24BIT_MASK));
	t->bth[2] = ((uint32_t)pkt->resv7 << DROCE_BTH_RESV7_SHIFT) & DROCE_BTH_RESV7_MASK;
}

/* the fast path's template copy: a constant size, never past the frame's end */
#define TMPL_COPY_SHORT	48u
_Static_assert(TMPL_COPY_SHORT <= DROCE_ETH_BYTES + DROCE_IPV4_BYTES + DROCE_UDP_BYTES +
			   DROCE_BTH_BYTES + DROCE_ICRC_BYTES &&
	       DROCE_HDR_TMPL_MAX <= DROCE_ETH_BYTES + DROCE_IPV6_BYTES + DROCE_UDP_BYTES +
			   DROCE_BTH_BYTES + DROCE_ICRC_BYTES &&
	       TMPL_COPY_SHORT >= DROCE_ETH_BYTES + DROCE_VLAN_BYTES + DROCE_IPV4_BYTES +
			   DROCE_UDP_BYTES,
	       "a frame holds at least its headers, a BTH and the ICRC");

int
droce_pkt_build_hdrs_fast(struct droce_pkt *pkt, struct droce_hdr_tmpl *t, void *buf,
			  uint32_t cap, uint32_t *icrc_pre)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	uint8_t *f = buf, *ip = f + t->l3_off, *udp = f + t->len - DROCE_UDP_BYTES;
	uint32_t hlen = t->len + d->hdr_len, udp_len, frame_len, w0, w[3];
	uint64_t key;
	unsigned int slot;

	if (!(d->flags & DROCE_OPF_VALID))
		return -EINVAL;
	udp_len = DROCE_UDP_BYTES + d->hdr_len + pkt->payload_len + pkt->padcnt + DROCE_ICRC_BYTES;
	frame_len = t->len - DROCE_UDP_BYTES + udp_len;
	if (frame_len > cap)
		return -ENOSPC;
	/* whole vector moves: what lies past t->len the BTH overwrites */
	if (t->len <= TMPL_COPY_SHORT)
		memcpy(f, t->bytes, TMPL_COPY_SHORT);
	else
		memcpy(f, t->bytes, DROCE_HDR_TMPL_MAX);
	tmpl_set_lengths(t, ip, udp, udp_len);

	w0 = t->bth[0] | (uint32_t)pkt->opcode << 24 | (pkt->se ? DROCE_BTH_SE_MASK << 16 : 0u) |
	     (((uint32_t)pkt->padcnt << (DROCE_BTH_PAD_SHIFT + 16)) & (DROCE_BTH_PAD_MASK << 16));
	w[0] = rte_cpu_to_be_32(w0);
	w[1] = t->bth[1];
	w[2] = rte_cpu_to_be_32(t->bth[2] | (pkt->ackreq ? DROCE_BTH_ACKREQ_MASK : 0u) |
				(pkt->psn & DROCE_24BIT_MASK));
	memcpy(f + t->len, w, sizeof(w));
	if (d->xhdrs == DROCE_XH(RETH)) {	/* a WRITE's or READ's first packet */
		struct droce_reth *h = (void *)(f + t->len + DROCE_BTH_BYTES);

		droce_reth_set_va(h, pkt->reth.va);
		droce_reth_set_rkey(h, pkt->reth.rkey);
		droce_reth_set_len(h, pkt->reth.len);
	} else if (d->xhdrs != 0) {
		build_xhdrs(pkt, d, f + t->len);
	}
	pkt->l3_off = t->l3_off;
	pkt->bth_off = t->len;
	pkt->payload_off = (uint16_t)hlen;
	pkt->frame_len = frame_len;

	/* IP to BTH byte 7 depend on the template, the UDP length and BTH word 0 only */
	key = (uint64_t)udp_len << 32 | w0;
	slot = pkt->opcode & (DROCE_HDR_TMPL_ICRC_SLOTS - 1);
	if (t->icrc[slot].key != key) {
		t->icrc[slot].key = key;
		t->icrc[slot].crc = droce_icrc_calc(ip, DROCE_HDR_TMPL_ICRC_PRE(t));
	}
	*icrc_pre = t->icrc[slot].crc;
	return (int)hlen;
}
