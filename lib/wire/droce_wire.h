/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_WIRE_H
#define DROCE_WIRE_H

/**
 * @file
 * RoCEv2 frames: parse a frame into a struct droce_pkt and build the headers
 * of a frame from one. Parsing validates every length, the opcode, the pad
 * count and the ICRC before it decodes a single field, so a hostile frame is
 * rejected with a counted reason and is never read past its end.
 *
 * Parse and build are inverse: building from a parsed packet reproduces the
 * received headers byte for byte (droce-pcap verify relies on it).
 * Both work on flat buffers; nothing here needs EAL.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_wire_hdr.h"
#include "droce_wire_opcode.h"

/**
 * Why a frame was not accepted. FOREIGN reasons mean "not RoCEv2 at all"
 * (ARP, TCP, ...): the port layer hands those elsewhere. The others are
 * malformed RoCEv2 and are dropped.
 *
 * R(sym, foreign, description)
 */
#define DROCE_WIRE_DROPS(R) \
	R(NOT_IP,          1, "ethertype is neither IPv4 nor IPv6") \
	R(NOT_UDP,         1, "IP payload is not UDP") \
	R(NOT_ROCE_PORT,   1, "UDP destination port is not 4791") \
	R(IP_FRAG_TAIL,    1, "IPv4 fragment after the first (no UDP header)") \
	R(TRUNC_L2,        0, "frame shorter than its Ethernet/VLAN header") \
	R(TRUNC_L3,        0, "frame shorter than its IP header") \
	R(IP_VERSION,      0, "IP version field disagrees with the ethertype") \
	R(IPV4_OPTIONS,    0, "IPv4 header carries options") \
	R(IPV4_CSUM,       0, "IPv4 header checksum is wrong") \
	R(IP_FRAGMENT,     0, "first fragment of a fragmented RoCEv2 packet") \
	R(IP_LEN,          0, "IP length exceeds the frame or cannot hold UDP") \
	R(UDP_LEN,         0, "UDP length disagrees with the IP length") \
	R(TRUNC_BTH,       0, "UDP payload shorter than BTH and ICRC") \
	R(BAD_OPCODE,      0, "BTH opcode is not defined") \
	R(BAD_TVER,        0, "BTH transport header version is not 0") \
	R(TRUNC_XHDR,      0, "packet shorter than its opcode's headers and ICRC") \
	R(BAD_PAD,         0, "pad count larger than the payload or on an empty opcode") \
	R(BAD_PAYLOAD_LEN, 0, "payload length not allowed for the opcode") \
	R(BAD_ICRC,        0, "invariant CRC mismatch")

enum droce_wire_drop {
	DROCE_WIRE_OK = 0,
#define R(sym, foreign, desc) DROCE_WIRE_DROP_##sym,
	DROCE_WIRE_DROPS(R)
#undef R
	DROCE_WIRE_DROP_COUNT
};

/** Identifier of a drop reason ("BAD_ICRC"), "OK" for DROCE_WIRE_OK. */
const char *droce_wire_drop_name(enum droce_wire_drop r);
/** One-line description of a drop reason. */
const char *droce_wire_drop_desc(enum droce_wire_drop r);
/** True if the frame is simply not RoCEv2 (ARP, TCP, other UDP...). */
bool droce_wire_drop_is_foreign(enum droce_wire_drop r);

/** droce_pkt.flags */
enum droce_pkt_flag {
	DROCE_PKT_F_VLAN      = 1u << 0,	/**< has an 802.1Q tag */
	DROCE_PKT_F_IPV6      = 1u << 1,	/**< IPv6, else IPv4 */
	DROCE_PKT_F_TRUNCATED = 1u << 2,	/**< capture holds headers only: no payload, no ICRC check */
	/** IPv4 checksum 0xffff (-0) where 0 sums the same: Linux's nftables writes
	 * it after rewriting a header. Set by the full parse (not parse_rx);
	 * build writes it back, so that it stays parse's inverse */
	DROCE_PKT_F_IPV4_CSUM_NEG0 = 1u << 3,
};

/**
 * A RoCEv2 packet, decoded to host order. parse fills it from a frame; build
 * writes a frame's headers from it. Extension-header members are meaningful
 * only when the opcode's descriptor lists that header: parse leaves the
 * others as they were (DETH's excepted, zeroed), so read none unchecked.
 */
struct droce_pkt {
	uint32_t flags;			/**< enum droce_pkt_flag */

	/* Ethernet */
	uint8_t dmac[6];
	uint8_t smac[6];
	uint16_t vlan_tci;		/**< PCP:3 DEI:1 VID:12, if DROCE_PKT_F_VLAN */

	/* IP; addresses as GIDs, IPv4 as ::ffff:a.b.c.d */
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t tclass;			/**< IPv4 TOS or IPv6 traffic class (DSCP:6 ECN:2) */
	uint8_t ttl;			/**< IPv4 TTL or IPv6 hop limit */
	uint16_t ip_id;			/**< IPv4 identification */
	uint16_t ip_frag;		/**< IPv4 flags and fragment offset (DF = 0x4000) */
	uint32_t flow_label;		/**< IPv6 flow label, 20 bits */

	/* UDP */
	uint16_t sport;
	uint16_t dport;
	uint16_t udp_csum;		/**< as on the wire; RoCEv2 senders use 0 */

	/* BTH */
	uint8_t opcode;
	bool se;
	bool mig;
	uint8_t padcnt;
	uint8_t tver;
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint8_t resv6;
	uint32_t dqpn;
	bool ackreq;
	uint8_t resv7;
	uint32_t psn;

	/* extension headers */
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t len;
	} reth;
	struct {
		uint8_t syndrome;
		uint32_t msn;
	} aeth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t cmp;
	} atmeth;
	uint64_t atmack_orig;
	rte_be32_t imm;			/**< network order, as verbs reports it */
	uint32_t ieth_rkey;
	struct {
		uint32_t qkey;
		uint8_t resv8;
		uint32_t sqpn;
	} deth;
	struct {
		uint8_t sel;
		uint8_t plt;
		uint32_t resv;		/**< 26 reserved bits: 0 to send, kept by parse */
	} feth;
	uint8_t cnp_resv[DROCE_CNPPAD_BYTES];	/**< CNP reserved bytes: 0 to send, kept by parse */

	/* where things are in the frame (parse), or will be (build) */
	uint16_t l3_off;		/**< IP header */
	uint16_t bth_off;		/**< BTH */
	uint16_t payload_off;		/**< first payload byte */
	uint32_t payload_len;		/**< payload bytes, pad excluded */
	uint32_t frame_len;		/**< Ethernet header to ICRC inclusive (no trailer) */
	uint32_t icrc;			/**< parse: the received ICRC value */
	/** build: the sender's header template for this flow, or NULL (the transport's) */
	struct droce_hdr_tmpl *tmpl;
};

/**
 * Parse and validate a frame.
 *
 * @param pkt      filled on success; undefined otherwise.
 * @param frame    first byte of the Ethernet header.
 * @param caplen   bytes available at @p frame.
 * @param wire_len length of the frame on the wire; larger than @p caplen
 *                 only for snap-length-limited captures, whose headers are
 *                 then checked against the lengths they claim, without ICRC.
 * @return DROCE_WIRE_OK, or the first reason the frame is unacceptable.
 */
enum droce_wire_drop droce_pkt_parse(struct droce_pkt *pkt, const void *frame,
				     uint32_t caplen, uint32_t wire_len);

/**
 * droce_pkt_parse() for a receiving transport: the same checks and verdict,
 * but of the fields only those a transport reads are decoded -- flags, the
 * offsets and lengths, the ICRC, the BTH's opcode, se, padcnt, pkey, dqpn,
 * ackreq and psn, and the extension headers but the FETH and the CNP's
 * pad. The Ethernet, IP and UDP fields, the BTH's mig, tver, fecn, becn,
 * resv6 and resv7, feth and cnp_resv are left as they were (about a sixth
 * of a 64-byte WRITE's parse);
 * droce_pkt_decode_rest() fills them in.
 */
enum droce_wire_drop droce_pkt_parse_rx(struct droce_pkt *pkt, const void *frame,
					uint32_t caplen, uint32_t wire_len);

/**
 * Decode the fields droce_pkt_parse_rx() left out, from the frame it
 * accepted into @p pkt: @p pkt is then what droce_pkt_parse() gives.
 */
void droce_pkt_decode_rest(struct droce_pkt *pkt, const void *frame);

/** Bytes of headers droce_pkt_build_hdrs() writes for @p pkt (Ethernet to last xhdr). */
uint32_t droce_pkt_hdrs_len(const struct droce_pkt *pkt);

/**
 * Write Ethernet, VLAN, IP, UDP, BTH and extension headers for @p pkt into
 * @p buf: lengths come from pkt->payload_len and pkt->padcnt, the IPv4
 * checksum is computed. The payload, pad and ICRC are the caller's
 * (droce_icrc_set() writes the ICRC once the payload is in place).
 * Sets pkt->l3_off, bth_off, payload_off and frame_len.
 *
 * @return bytes written, or -ENOSPC if @p cap is too small, -EINVAL if the
 *         opcode is not defined.
 */
int droce_pkt_build_hdrs(struct droce_pkt *pkt, void *buf, uint32_t cap);

/*
 * A header template: the Ethernet, VLAN, IP and UDP headers of one flow
 * (a QP's path), built once and patched per packet (lengths, IPv4
 * checksum) by droce_pkt_build_hdrs_tmpl(). It keeps a copy of the packet
 * fields it was built from and is rebuilt whenever a packet's differ, so a
 * caller that rewrites a field (a resolved MAC, a loopback's own MAC) never
 * gets stale bytes.
 */
#define DROCE_HDR_TMPL_MAX	(DROCE_ETH_BYTES + DROCE_VLAN_BYTES + DROCE_IPV6_BYTES + \
				 DROCE_UDP_BYTES)
/* struct droce_pkt's fields from dmac to udp_csum: what a template depends on */
#define DROCE_HDR_TMPL_KEY_OFF	offsetof(struct droce_pkt, dmac)
#define DROCE_HDR_TMPL_KEY_LEN	(offsetof(struct droce_pkt, udp_csum) + sizeof(uint16_t) - \
				 DROCE_HDR_TMPL_KEY_OFF)
_Static_assert(DROCE_HDR_TMPL_KEY_LEN == 6 + 6 + 2 + 16 + 16 + 1 + 1 + 2 + 2 + 4 + 2 + 2 + 2,
	       "the template key has no padding: memcmp compares fields only");

/* ICRC states droce_pkt_build_hdrs_fast() keeps, by opcode & 3 (a message's FIRST, MIDDLE, LAST) */
#define DROCE_HDR_TMPL_ICRC_SLOTS	4

struct droce_hdr_tmpl {
	uint8_t bytes[DROCE_HDR_TMPL_MAX];
	uint8_t len;			/**< Ethernet to UDP; 0: not built yet */
	uint8_t l3_off;
	uint16_t ip_sum;		/**< IPv4: header sum with length and checksum 0 */
	uint32_t flags;			/**< the packet's VLAN and IPv6 flags */
	uint8_t key[DROCE_HDR_TMPL_KEY_LEN];	/**< the packet fields it was built from */
	/* the fast path: droce_hdr_tmpl_serve() */
	const struct droce_pkt *fast;	/**< the one description it serves so, or NULL */
	uint32_t bth[3];		/**< its BTH words' constant bits: 0 and 2 in host
					 * order, 1 (all constant) as on the wire */
	/**
	 * The ICRC's state after the IP header to BTH byte 7, which is the same
	 * for every packet of the flow with the same UDP length and BTH word 0
	 * (the key; 0: none): the CRC then reads only from the PSN on.
	 */
	struct {
		uint64_t key;
		uint32_t crc;
	} icrc[DROCE_HDR_TMPL_ICRC_SLOTS];
};

/**
 * droce_pkt_build_hdrs() through template @p t: the same bytes and pkt
 * offsets, the Ethernet to UDP headers copied from @p t, which is first
 * (re)built from @p pkt if it was built from other fields.
 */
int droce_pkt_build_hdrs_tmpl(struct droce_pkt *pkt, struct droce_hdr_tmpl *t, void *buf,
			      uint32_t cap);

/**
 * Let @p t serve @p pkt by the fast path, droce_pkt_build_hdrs_fast(): the
 * caller keeps @p pkt (the connected path's packet description of a QP) and
 * changes it, packet to packet, only in opcode, se, padcnt, ackreq, psn,
 * payload_len and the extension headers' fields; a transmitter may set its
 * dmac (checked per packet). Any other change needs this call again, which
 * also makes the next build rebuild @p t. NULL: no fast path.
 */
void droce_hdr_tmpl_serve(struct droce_hdr_tmpl *t, const struct droce_pkt *pkt);

/** True when droce_pkt_build_hdrs_fast() may build @p pkt through @p t. */
static inline bool
droce_hdr_tmpl_fast_ok(const struct droce_hdr_tmpl *t, const struct droce_pkt *pkt)
{
	uint32_t a, b;
	uint16_t c, d;

	if (t->fast != pkt || t->len == 0)
		return false;
	/* the key starts with dmac: one 4- and one 2-byte compare, no call */
	__builtin_memcpy(&a, t->key, 4);
	__builtin_memcpy(&b, pkt->dmac, 4);
	__builtin_memcpy(&c, t->key + 4, 2);
	__builtin_memcpy(&d, pkt->dmac + 4, 2);
	return a == b && c == d;
}

/**
 * droce_pkt_build_hdrs_tmpl() for the description @p t serves (when
 * droce_hdr_tmpl_fast_ok()): the same bytes and pkt offsets, from the
 * template and the BTH's constant words, and in *icrc_pre the ICRC's state
 * after the IP header to BTH byte 7 (DROCE_HDR_TMPL_ICRC_PRE() bytes from
 * l3_off), for droce_icrc_update() over the rest.
 */
int droce_pkt_build_hdrs_fast(struct droce_pkt *pkt, struct droce_hdr_tmpl *t, void *buf,
			      uint32_t cap, uint32_t *icrc_pre);

/** Bytes from the IP header to BTH byte 7: what the cached ICRC state covers. */
#define DROCE_HDR_TMPL_ICRC_PRE(t)	((uint32_t)(t)->len - (t)->l3_off + 8u)

/** Pad bytes that align a payload of @p len bytes to 4 (IBA 9.2.3). */
static inline uint8_t
droce_pad_bytes(uint32_t len)
{
	return (uint8_t)(-len & 3u);
}

/**
 * ICRC (IBA annex A17.3.3): CRC-32 (IEEE 802.3) over 8 bytes of 0xff standing
 * for the masked LRH, then the IP header to the end of the pad with the
 * variant fields (IPv4 TOS, TTL, checksum; IPv6 traffic class, flow label,
 * hop limit; UDP checksum; BTH FECN/BECN/resv6) set to ones.
 * Nothing is copied or masked: the masking is folded into the CRC's seed
 * (CRC-32 is linear) and the packet read once in place. ISA-L's PCLMUL CRC
 * does the work; the state chains across buffers.
 */

/** CRC state after the masked IP, UDP and BTH (@p l3 points at the IP header). */
uint32_t droce_icrc_begin(const void *l3);
/** Continue the CRC over @p len more bytes (the rest of the packet, in pieces). */
uint32_t droce_icrc_update(uint32_t crc, const void *buf, uint32_t len);
/** ICRC of the @p len bytes from @p l3 (IP header to the end of the pad). */
uint32_t droce_icrc_calc(const void *l3, uint32_t len);
/** Compute the ICRC of a frame built by droce_pkt_build_hdrs() and write it. */
void droce_icrc_set(const struct droce_pkt *pkt, void *frame);

/** The ICRC travels least significant byte first (as the Ethernet FCS). */
static inline uint32_t
droce_icrc_load(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline void
droce_icrc_store(void *p, uint32_t icrc)
{
	uint8_t *b = p;

	b[0] = (uint8_t)icrc;
	b[1] = (uint8_t)(icrc >> 8);
	b[2] = (uint8_t)(icrc >> 16);
	b[3] = (uint8_t)(icrc >> 24);
}

#endif /* DROCE_WIRE_H */
