/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Frame parser (droce_wire.h). The checks run in the order the receive path
 * of an IBA channel adapter applies them (as rxe_rcv does): every length and
 * the opcode first, then the pad count, then the ICRC, and only then are the
 * fields decoded into struct droce_pkt (droce_pkt_parse_rx(): only those a
 * transport reads; the same checks). Nothing is read past min(caplen,
 * claimed length). Stateless: any thread may call it.
 */

#include <string.h>

#include <rte_byteorder.h>

#include "droce_wire.h"
#include "droce_wire_gid.h"

#define ETHERTYPE_IPV4	0x0800
#define ETHERTYPE_IPV6	0x86dd
#define ETHERTYPE_VLAN	0x8100
#define IPPROTO_UDP_	17
#define IPV4_FRAG_MASK	0x3fff	/* MF flag and fragment offset; DF (0x4000) is fine */
#define IPV4_FRAG_OFF_MASK 0x1fff	/* fragment offset */

static const struct {
	const char *sym;
	const char *desc;
	bool foreign;
} drop_info[DROCE_WIRE_DROP_COUNT] = {
	[DROCE_WIRE_OK] = { "OK", "accepted", false },
#define R(sym, foreign, desc) [DROCE_WIRE_DROP_##sym] = { #sym, desc, foreign },
	DROCE_WIRE_DROPS(R)
#undef R
};

const char *
droce_wire_drop_name(enum droce_wire_drop r)
{
	return (unsigned int)r < DROCE_WIRE_DROP_COUNT ? drop_info[r].sym : "UNKNOWN";
}

const char *
droce_wire_drop_desc(enum droce_wire_drop r)
{
	return (unsigned int)r < DROCE_WIRE_DROP_COUNT ? drop_info[r].desc : "unknown reason";
}

bool
droce_wire_drop_is_foreign(enum droce_wire_drop r)
{
	return (unsigned int)r < DROCE_WIRE_DROP_COUNT && drop_info[r].foreign;
}

/*
 * A failed check. The checks run twice for a frame that fails one: first
 * without their reasons (@p why false: every failure the same value, so no
 * check stores its reason on the way), then, for the reason, with them.
 * The ICRC's check, the last, says its reason both times: a frame with a
 * bad ICRC is not checksummed twice.
 */
#define PARSE_FAILED	DROCE_WIRE_DROP_COUNT
#define DROP(sym)	return why ? DROCE_WIRE_DROP_##sym : PARSE_FAILED

static inline uint16_t
load_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Validate L2..L4. On success *udp_off is the UDP header's offset and
 * *ip_end the end of the IP packet (the Ethernet trailer excluded). */
static inline __attribute__((always_inline)) enum droce_wire_drop
parse_l2_l4(const uint8_t *f, uint32_t caplen, uint32_t wire_len,
	    uint32_t *l3_off, uint32_t *udp_off, uint32_t *ip_end, bool *ipv6, bool why)
{
	uint32_t off = DROCE_ETH_BYTES, ip_total;
	const uint8_t *ip;
	uint16_t etype;

	/*
	 * The usual frame, untagged IPv4 without options or fragments to the
	 * RoCEv2 port: what the checks below ask of it but its lengths and
	 * checksum, in three loads; any other frame takes them one by one.
	 */
	if (caplen >= DROCE_ETH_BYTES + DROCE_IPV4_BYTES + DROCE_UDP_BYTES) {
		uint32_t a, b;
		uint16_t dport;

		memcpy(&a, f + 12, 4);	/* ethertype, version and IHL, TOS */
		memcpy(&b, f + 20, 4);	/* flags and fragment offset, TTL, protocol */
		memcpy(&dport, f + DROCE_ETH_BYTES + DROCE_IPV4_BYTES + 2, 2);
		if ((rte_be_to_cpu_32(a) & 0xffffff00u) == (ETHERTYPE_IPV4 << 16 | 0x4500u) &&
		    (rte_be_to_cpu_32(b) & (IPV4_FRAG_MASK << 16 | 0xffu)) == IPPROTO_UDP_ &&
		    dport == RTE_BE16(DROCE_ROCEV2_UDP_PORT)) {
			*l3_off = off;
			ip = f + off;
			goto ipv4_lengths;
		}
	}

	if (caplen < DROCE_ETH_BYTES)
		DROP(TRUNC_L2);
	etype = load_be16(f + 12);
	if (etype == ETHERTYPE_VLAN) {
		if (caplen < DROCE_ETH_BYTES + DROCE_VLAN_BYTES)
			DROP(TRUNC_L2);
		etype = load_be16(f + 16);
		off += DROCE_VLAN_BYTES;
	}
	*l3_off = off;

	if (etype == ETHERTYPE_IPV4) {
		uint32_t ihl;

		ip = f + off;

		if (caplen < off + DROCE_IPV4_BYTES)
			DROP(TRUNC_L3);
		if (ip[0] >> 4 != 4)
			DROP(IP_VERSION);
		ihl = (ip[0] & 0xfu) * 4;
		if (ihl < DROCE_IPV4_BYTES)
			DROP(IP_LEN);
		if (ip[9] != IPPROTO_UDP_)
			DROP(NOT_UDP);
		/* a later fragment has no UDP header: nothing says it is RoCE */
		if (load_be16(ip + 6) & IPV4_FRAG_OFF_MASK)
			DROP(IP_FRAG_TAIL);
		if (caplen < off + ihl + DROCE_UDP_BYTES)
			DROP(TRUNC_L3);
		if (load_be16(ip + ihl + 2) != DROCE_ROCEV2_UDP_PORT)
			DROP(NOT_ROCE_PORT);
		if (load_be16(ip + 6) & IPV4_FRAG_MASK)
			DROP(IP_FRAGMENT);	/* RoCEv2 senders set DF */
		if (ihl != DROCE_IPV4_BYTES)
			DROP(IPV4_OPTIONS);
ipv4_lengths:
		ip_total = load_be16(ip + 2);
		if (ip_total < DROCE_IPV4_BYTES + DROCE_UDP_BYTES || off + ip_total > wire_len)
			DROP(IP_LEN);
		/* a correct header sums to 0xffff, checksum included (RFC 1071),
		 * also with the -0 checksum an incremental update may leave */
		if (!droce_ipv4_hdr_ok(ip))
			DROP(IPV4_CSUM);
		*udp_off = off + DROCE_IPV4_BYTES;
		*ip_end = off + ip_total;
		*ipv6 = false;
	} else if (etype == ETHERTYPE_IPV6) {
		ip = f + off;
		if (caplen < off + DROCE_IPV6_BYTES)
			DROP(TRUNC_L3);
		if (ip[0] >> 4 != 6)
			DROP(IP_VERSION);
		/* RoCEv2 sends no extension headers; anything else is not ours */
		if (ip[6] != IPPROTO_UDP_)
			DROP(NOT_UDP);
		if (caplen < off + DROCE_IPV6_BYTES + DROCE_UDP_BYTES)
			DROP(TRUNC_L3);
		if (load_be16(ip + DROCE_IPV6_BYTES + 2) != DROCE_ROCEV2_UDP_PORT)
			DROP(NOT_ROCE_PORT);
		ip_total = DROCE_IPV6_BYTES + load_be16(ip + 4);
		if (ip_total < DROCE_IPV6_BYTES + DROCE_UDP_BYTES || off + ip_total > wire_len)
			DROP(IP_LEN);
		*udp_off = off + DROCE_IPV6_BYTES;
		*ip_end = off + ip_total;
		*ipv6 = true;
	} else {
		DROP(NOT_IP);
	}

	if (load_be16(f + *udp_off + 4) != *ip_end - *udp_off)
		DROP(UDP_LEN);
	return DROCE_WIRE_OK;
}

/*
 * The fields of validated headers that a receiving transport does not read:
 * Ethernet, IP and UDP, the BTH's migration, version, congestion and
 * reserved bits, the FETH and the CNP's pad (droce_pkt_parse_rx() leaves
 * them out).
 */
static inline void
decode_rest(struct droce_pkt *pkt, const uint8_t *f)
{
	const struct droce_opcode_desc *d;
	const uint8_t *x, *ip = f + pkt->l3_off;
	const uint8_t *udp;
	uint32_t w0, w1, w2;

	memcpy(pkt->dmac, f, 6);
	memcpy(pkt->smac, f + 6, 6);
	pkt->vlan_tci = (pkt->flags & DROCE_PKT_F_VLAN) ? load_be16(f + 14) : 0;

	if (pkt->flags & DROCE_PKT_F_IPV6) {
		uint32_t w = (uint32_t)load_be16(ip) << 16 | load_be16(ip + 2);

		pkt->tclass = (uint8_t)(w >> 20);
		pkt->flow_label = w & 0xfffff;
		pkt->ttl = ip[7];
		pkt->ip_id = 0;
		pkt->ip_frag = 0;
		memcpy(pkt->sgid, ip + 8, 16);
		memcpy(pkt->dgid, ip + 24, 16);
		udp = ip + DROCE_IPV6_BYTES;
	} else {
		rte_be32_t a;

		pkt->tclass = ip[1];
		pkt->ip_id = load_be16(ip + 4);
		pkt->ip_frag = load_be16(ip + 6);
		pkt->ttl = ip[8];
		pkt->flow_label = 0;
		if ((ip[10] & ip[11]) == 0xff)	/* for build to write back */
			pkt->flags |= DROCE_PKT_F_IPV4_CSUM_NEG0;
		memcpy(&a, ip + 12, 4);
		droce_gid_from_ipv4(pkt->sgid, a);
		memcpy(&a, ip + 16, 4);
		droce_gid_from_ipv4(pkt->dgid, a);
		udp = ip + DROCE_IPV4_BYTES;
	}
	pkt->sport = load_be16(udp);
	pkt->dport = load_be16(udp + 2);
	pkt->udp_csum = load_be16(udp + 6);

	memcpy(&w0, f + pkt->bth_off, 4);
	memcpy(&w1, f + pkt->bth_off + 4, 4);
	memcpy(&w2, f + pkt->bth_off + 8, 4);
	w0 = rte_be_to_cpu_32(w0);
	w1 = rte_be_to_cpu_32(w1);
	w2 = rte_be_to_cpu_32(w2);
	pkt->mig = (w0 >> 16) & DROCE_BTH_MIG_MASK;
	pkt->tver = (w0 >> 16) & DROCE_BTH_TVER_MASK;
	pkt->fecn = w1 & DROCE_BTH_FECN_MASK;
	pkt->becn = w1 & DROCE_BTH_BECN_MASK;
	pkt->resv6 = (uint8_t)((w1 & DROCE_BTH_RESV6_MASK) >> DROCE_BTH_RESV6_SHIFT);
	pkt->resv7 = (uint8_t)((w2 & DROCE_BTH_RESV7_MASK) >> DROCE_BTH_RESV7_SHIFT);

	/* FLUSH's and CNP's headers: nothing droce offers reads them */
	d = droce_opcode((uint8_t)(w0 >> 24));
	x = f + pkt->bth_off;
	if (d->xhdrs & DROCE_XH(FETH)) {
		const struct droce_feth *h = (const void *)(x + d->off[DROCE_X_FETH]);

		pkt->feth.sel = droce_feth_sel(h);
		pkt->feth.plt = droce_feth_plt(h);
		pkt->feth.resv = droce_feth_resv(h);
	}
	if (d->xhdrs & DROCE_XH(CNPPAD))
		memcpy(pkt->cnp_resv, x + d->off[DROCE_X_CNPPAD], DROCE_CNPPAD_BYTES);
}

void
droce_pkt_decode_rest(struct droce_pkt *pkt, const void *frame)
{
	decode_rest(pkt, frame);
}

static inline __attribute__((always_inline)) void
decode_no_deth(struct droce_pkt *pkt)
{
	/* the engine's multicast demux reads the source QP of any opcode */
	pkt->deth.qkey = 0;
	pkt->deth.resv8 = 0;
	pkt->deth.sqpn = 0;
}

static inline __attribute__((always_inline)) void
decode_reth(struct droce_pkt *pkt, const uint8_t *p)
{
	const struct droce_reth *h = (const void *)p;

	pkt->reth.va = droce_reth_va(h);
	pkt->reth.rkey = droce_reth_rkey(h);
	pkt->reth.len = droce_reth_len(h);
}

static inline __attribute__((always_inline)) void
decode_aeth(struct droce_pkt *pkt, const uint8_t *p)
{
	const struct droce_aeth *h = (const void *)p;

	pkt->aeth.syndrome = droce_aeth_syndrome(h);
	pkt->aeth.msn = droce_aeth_msn(h);
}

/* Copy the fields of validated headers into pkt; @p all: decode_rest()'s too. */
static inline __attribute__((always_inline)) void
decode(struct droce_pkt *pkt, const uint8_t *f, const struct droce_opcode_desc *d, bool all)
{
	const uint8_t *x = f + pkt->bth_off;
	uint32_t w0, w1, w2;

	if (all)
		decode_rest(pkt, f);

	/* the BTH as three words, read once (the droce_bth_*() accessors, unrolled) */
	memcpy(&w0, x, 4);
	memcpy(&w1, x + 4, 4);
	memcpy(&w2, x + 8, 4);
	w0 = rte_be_to_cpu_32(w0);
	w1 = rte_be_to_cpu_32(w1);
	w2 = rte_be_to_cpu_32(w2);
	pkt->opcode = (uint8_t)(w0 >> 24);
	pkt->se = (w0 >> 16) & DROCE_BTH_SE_MASK;
	pkt->padcnt = ((w0 >> 16) & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
	pkt->pkey = (uint16_t)w0;
	pkt->dqpn = w1 & DROCE_24BIT_MASK;
	pkt->ackreq = w2 & DROCE_BTH_ACKREQ_MASK;
	pkt->psn = w2 & DROCE_24BIT_MASK;

	/* the usual packets, a WRITE's first (or a READ request) and an ACK: one test */
	if (d->xhdrs == DROCE_XH(RETH) || d->xhdrs == DROCE_XH(AETH)) {
		decode_no_deth(pkt);
		if (d->xhdrs == DROCE_XH(RETH))
			decode_reth(pkt, x + d->off[DROCE_X_RETH]);
		else
			decode_aeth(pkt, x + d->off[DROCE_X_AETH]);
		return;
	}
	if (d->xhdrs & DROCE_XH(DETH)) {
		const struct droce_deth *h = (const void *)(x + d->off[DROCE_X_DETH]);

		pkt->deth.qkey = droce_deth_qkey(h);
		pkt->deth.resv8 = droce_deth_resv8(h);
		pkt->deth.sqpn = droce_deth_sqpn(h);
	} else {
		decode_no_deth(pkt);
	}
	if (d->xhdrs & DROCE_XH(RETH))
		decode_reth(pkt, x + d->off[DROCE_X_RETH]);
	if (d->xhdrs & DROCE_XH(ATMETH)) {
		const struct droce_atmeth *h = (const void *)(x + d->off[DROCE_X_ATMETH]);

		pkt->atmeth.va = droce_atmeth_va(h);
		pkt->atmeth.rkey = droce_atmeth_rkey(h);
		pkt->atmeth.swap_add = droce_atmeth_swap_add(h);
		pkt->atmeth.cmp = droce_atmeth_cmp(h);
	}
	if (d->xhdrs & DROCE_XH(AETH))
		decode_aeth(pkt, x + d->off[DROCE_X_AETH]);
	if (d->xhdrs & DROCE_XH(ATMACK))
		pkt->atmack_orig = droce_atmack_orig((const void *)(x + d->off[DROCE_X_ATMACK]));
	if (d->xhdrs & DROCE_XH(IMMDT))
		pkt->imm = droce_immdt_imm((const void *)(x + d->off[DROCE_X_IMMDT]));
	if (d->xhdrs & DROCE_XH(IETH))
		pkt->ieth_rkey = droce_ieth_rkey((const void *)(x + d->off[DROCE_X_IETH]));
}

static inline __attribute__((always_inline)) enum droce_wire_drop
parse(struct droce_pkt *pkt, const void *frame, uint32_t caplen, uint32_t wire_len, bool all,
      bool why)
{
	const uint8_t *f = frame;
	const struct droce_opcode_desc *d;
	uint32_t l3_off, udp_off, ip_end, bth_off, rest, body;
	enum droce_wire_drop r;
	bool ipv6;
	uint8_t padcnt;

	if (caplen > wire_len)
		caplen = wire_len;
	r = parse_l2_l4(f, caplen, wire_len, &l3_off, &udp_off, &ip_end, &ipv6, why);
	if (r != DROCE_WIRE_OK)
		return r;

	bth_off = udp_off + DROCE_UDP_BYTES;
	rest = ip_end - bth_off;		/* BTH to ICRC inclusive */
	if (rest < DROCE_BTH_BYTES + DROCE_ICRC_BYTES || caplen < bth_off + DROCE_BTH_BYTES)
		DROP(TRUNC_BTH);
	d = droce_opcode(f[bth_off]);
	if (!(d->flags & DROCE_OPF_VALID))
		DROP(BAD_OPCODE);
	if (droce_bth_tver((const void *)(f + bth_off)) != 0)
		DROP(BAD_TVER);
	if (rest < d->hdr_len + (uint32_t)DROCE_ICRC_BYTES || caplen < bth_off + d->hdr_len)
		DROP(TRUNC_XHDR);

	body = rest - d->hdr_len - DROCE_ICRC_BYTES;	/* payload and pad */
	padcnt = droce_bth_padcnt((const void *)(f + bth_off));
	if (padcnt > body || (body & 3) != 0)
		DROP(BAD_PAD);
	if (!(d->flags & DROCE_OPF_PAYLOAD) && body != 0)
		DROP(BAD_PAYLOAD_LEN);
	/* ATOMIC_WRITE carries exactly one 8-byte value (IBA 1.5, 9.4.7) */
	if ((d->flags & DROCE_OPF_ATOMIC_WR) && (body != 8 || padcnt != 0))
		DROP(BAD_PAYLOAD_LEN);

	/*
	 * Every member is written below, those of an extension header only
	 * when the opcode has it (droce_wire.h): no memset of the whole
	 * description (profiled: a tenth of parsing a 64-byte WRITE). These
	 * before the ICRC's call: fewer values are kept across it.
	 */
	pkt->flags = (l3_off != DROCE_ETH_BYTES ? DROCE_PKT_F_VLAN : 0) |
		     (ipv6 ? DROCE_PKT_F_IPV6 : 0);
	pkt->tmpl = NULL;
	pkt->l3_off = (uint16_t)l3_off;
	pkt->bth_off = (uint16_t)bth_off;
	pkt->payload_off = (uint16_t)(bth_off + d->hdr_len);
	pkt->payload_len = body - padcnt;
	pkt->frame_len = ip_end;
	if (caplen >= ip_end) {
		uint32_t icrc = droce_icrc_load(f + ip_end - DROCE_ICRC_BYTES);

		if (droce_icrc_calc(f + l3_off, ip_end - DROCE_ICRC_BYTES - l3_off) != icrc)
			return DROCE_WIRE_DROP_BAD_ICRC;
		pkt->icrc = icrc;
	} else {
		pkt->icrc = 0;
		pkt->flags |= DROCE_PKT_F_TRUNCATED;
	}
	decode(pkt, f, d, all);
	return DROCE_WIRE_OK;
}

/* A frame that failed a check: which one (the first, as always) */
static __attribute__((noinline, cold)) enum droce_wire_drop
parse_why(struct droce_pkt *pkt, const void *frame, uint32_t caplen, uint32_t wire_len)
{
	return parse(pkt, frame, caplen, wire_len, true, true);
}

enum droce_wire_drop
droce_pkt_parse(struct droce_pkt *pkt, const void *frame, uint32_t caplen, uint32_t wire_len)
{
	enum droce_wire_drop r = parse(pkt, frame, caplen, wire_len, true, false);

	return droce_likely(r != PARSE_FAILED) ? r : parse_why(pkt, frame, caplen, wire_len);
}

enum droce_wire_drop
droce_pkt_parse_rx(struct droce_pkt *pkt, const void *frame, uint32_t caplen, uint32_t wire_len)
{
	enum droce_wire_drop r = parse(pkt, frame, caplen, wire_len, false, false);

	return droce_likely(r != PARSE_FAILED) ? r : parse_why(pkt, frame, caplen, wire_len);
}
