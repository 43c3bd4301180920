/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_WIRE_HDR_H
#define DROCE_WIRE_HDR_H

/**
 * @file
 * InfiniBand transport headers as carried by RoCEv2 (IBA vol 1 ch. 9 and
 * annex A17): the Base Transport Header and every extension header, with
 * accessor pairs. Fields are bytes and big-endian words, never bitfields;
 * accessors are the only code that swaps bytes or masks sub-word fields.
 * A 24-bit field is read and written inside the 32-bit word that holds it.
 *
 * Ethernet, VLAN, IPv4, IPv6 and UDP use DPDK's rte_*_hdr structs.
 */

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#include "droce_core.h"

#define DROCE_ROCEV2_UDP_PORT	4791	/**< IANA port of RoCEv2 */
#define DROCE_24BIT_MASK	0x00ffffffu
#define DROCE_DEFAULT_PKEY	0xffff	/**< full-member default partition */

#define DROCE_ETH_BYTES		14
#define DROCE_VLAN_BYTES	4
#define DROCE_IPV4_BYTES	20
#define DROCE_IPV6_BYTES	40
#define DROCE_UDP_BYTES		8
#define DROCE_BTH_BYTES		12
#define DROCE_RETH_BYTES	16
#define DROCE_AETH_BYTES	4
#define DROCE_ATMETH_BYTES	28
#define DROCE_ATMACK_BYTES	8
#define DROCE_IMMDT_BYTES	4
#define DROCE_IETH_BYTES	4
#define DROCE_DETH_BYTES	8
#define DROCE_FETH_BYTES	4
#define DROCE_CNPPAD_BYTES	16	/**< reserved bytes of a CNP (annex A17.9.3) */
#define DROCE_ICRC_BYTES	4
#define DROCE_GRH_BYTES		40	/**< UD receive buffers start with this area */

/**
 * One's complement sum of a 20-byte IPv4 header's ten 16-bit words as they
 * lie in memory, folded to 16 bits: what rte_raw_cksum(ip, 20) returns, in
 * five 32-bit loads instead of ten 16-bit ones (2^16 = 1 modulo 0xffff, so
 * summing 32-bit words and folding gives the same sum). A correct header
 * sums to 0xffff; a sender stores the complement of the sum over a zero
 * checksum field.
 */
static inline uint16_t
droce_ipv4_hdr_sum(const void *ip)
{
	const uint8_t *p = ip;
	uint32_t w[5];
	uint64_t sum;

	memcpy(w, p, sizeof(w));	/* written out: -O2 does not unroll a loop of 5 */
	sum = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	sum = (sum >> 32) + (sum & 0xffffffffu);
	sum = (sum >> 16) + (sum & 0xffff);
	sum = (sum >> 16) + (sum & 0xffff);
	sum = (sum >> 16) + (sum & 0xffff);
	return (uint16_t)sum;
}

/**
 * droce_ipv4_hdr_sum(ip) == 0xffff: a correct IPv4 header checksum. The
 * fold to 16 bits keeps the sum modulo 0xffff and gives 0xffff exactly when
 * the sum is a non-zero multiple of it, which a multiply-compare tests
 * without folding (half the instructions of a parse's checksum check).
 */
static inline __attribute__((always_inline)) bool
droce_ipv4_hdr_ok(const void *ip)
{
	const uint8_t *p = ip;
	uint32_t a, b, c, d, e;
	uint64_t sum;

	memcpy(&a, p, 4);
	memcpy(&b, p + 4, 4);
	memcpy(&c, p + 8, 4);
	memcpy(&d, p + 12, 4);
	memcpy(&e, p + 16, 4);
	sum = (uint64_t)a + b + c + d + e;
	return sum != 0 && sum % 0xffff == 0;
}

/** Base Transport Header. It follows UDP, so it sits at 2 mod 4. */
struct droce_bth {
	uint8_t    opcode;
	uint8_t    flags;	/* SE:1 M:1 PadCnt:2 TVer:4 */
	rte_be16_t pkey;
	rte_be32_t qpn_w;	/* FECN:1 BECN:1 resv6:6 DestQP:24 */
	rte_be32_t psn_w;	/* AckReq:1 resv7:7 PSN:24 */
} DROCE_WIRE_PACKED;

#define DROCE_BTH_SE_MASK	0x80
#define DROCE_BTH_MIG_MASK	0x40
#define DROCE_BTH_PAD_MASK	0x30
#define DROCE_BTH_PAD_SHIFT	4
#define DROCE_BTH_TVER_MASK	0x0f
#define DROCE_BTH_FECN_MASK	0x80000000u
#define DROCE_BTH_BECN_MASK	0x40000000u
#define DROCE_BTH_RESV6_MASK	0x3f000000u
#define DROCE_BTH_RESV6_SHIFT	24
#define DROCE_BTH_ACKREQ_MASK	0x80000000u
#define DROCE_BTH_RESV7_MASK	0x7f000000u
#define DROCE_BTH_RESV7_SHIFT	24

/** RDMA Extended Transport Header: first/only packet of WRITE, READ request. */
struct droce_reth {
	rte_be32_t va_hi;	/* split: a 64-bit word here would be 2-aligned */
	rte_be32_t va_lo;
	rte_be32_t rkey;
	rte_be32_t dma_len;
} DROCE_WIRE_PACKED;

/** ACK Extended Transport Header: responses. */
struct droce_aeth {
	rte_be32_t smsn;	/* Syndrome:8 MSN:24 */
} DROCE_WIRE_PACKED;

/** Atomic Extended Transport Header: CMP_SWP and FETCH_ADD requests. */
struct droce_atmeth {
	rte_be32_t va_hi;
	rte_be32_t va_lo;
	rte_be32_t rkey;
	rte_be32_t swap_add_hi;
	rte_be32_t swap_add_lo;
	rte_be32_t cmp_hi;
	rte_be32_t cmp_lo;
} DROCE_WIRE_PACKED;

/** Atomic Acknowledge Extended Transport Header: the original remote value. */
struct droce_atmack {
	rte_be32_t orig_hi;
	rte_be32_t orig_lo;
} DROCE_WIRE_PACKED;

/** Immediate data: opaque to the transport, carried in network order. */
struct droce_immdt {
	rte_be32_t imm;
} DROCE_WIRE_PACKED;

/** Invalidate Extended Transport Header: the R_Key SEND_WITH_INV invalidates. */
struct droce_ieth {
	rte_be32_t rkey;
} DROCE_WIRE_PACKED;

/** Datagram Extended Transport Header: UD. */
struct droce_deth {
	rte_be32_t qkey;
	rte_be32_t sqp_w;	/* resv8:8 SrcQP:24 */
} DROCE_WIRE_PACKED;

/** Flush Extended Transport Header (IBA 1.5): FLUSH requests. */
struct droce_feth {
	rte_be32_t bits;	/* resv:26 SEL:2 PLT:4 */
} DROCE_WIRE_PACKED;

#define DROCE_FETH_PLT_MASK	0x0000000fu
#define DROCE_FETH_SEL_MASK	0x00000030u
#define DROCE_FETH_SEL_SHIFT	4
#define DROCE_FETH_RESV_MASK	0xffffffc0u
#define DROCE_FETH_RESV_SHIFT	6

static_assert(sizeof(struct droce_bth) == DROCE_BTH_BYTES, "BTH is 12 bytes");
static_assert(alignof(struct droce_bth) == 2, "BTH must tolerate 2 mod 4");
static_assert(sizeof(struct droce_reth) == DROCE_RETH_BYTES, "RETH is 16 bytes");
static_assert(sizeof(struct droce_aeth) == DROCE_AETH_BYTES, "AETH is 4 bytes");
static_assert(sizeof(struct droce_atmeth) == DROCE_ATMETH_BYTES, "AtomicETH is 28 bytes");
static_assert(sizeof(struct droce_atmack) == DROCE_ATMACK_BYTES, "AtomicAckETH is 8 bytes");
static_assert(sizeof(struct droce_immdt) == DROCE_IMMDT_BYTES, "ImmDt is 4 bytes");
static_assert(sizeof(struct droce_ieth) == DROCE_IETH_BYTES, "IETH is 4 bytes");
static_assert(sizeof(struct droce_deth) == DROCE_DETH_BYTES, "DETH is 8 bytes");
static_assert(sizeof(struct droce_feth) == DROCE_FETH_BYTES, "FETH is 4 bytes");

/* ---- helpers for the accessors below; not for other callers ---- */

static inline uint64_t
droce_hdr_get64_(rte_be32_t hi, rte_be32_t lo)
{
	return ((uint64_t)rte_be_to_cpu_32(hi) << 32) | rte_be_to_cpu_32(lo);
}

/* a macro: the address of a packed member may not be taken */
#define droce_hdr_set64_(hi, lo, v) do {				\
		uint64_t v_ = (v);					\
		(hi) = rte_cpu_to_be_32((uint32_t)(v_ >> 32));		\
		(lo) = rte_cpu_to_be_32((uint32_t)v_);			\
	} while (0)

static inline uint32_t
droce_hdr_getbits_(rte_be32_t w, uint32_t mask, unsigned int shift)
{
	return (rte_be_to_cpu_32(w) & mask) >> shift;
}

static inline rte_be32_t
droce_hdr_withbits_(rte_be32_t w, uint32_t mask, unsigned int shift, uint32_t v)
{
	uint32_t h = rte_be_to_cpu_32(w);

	return rte_cpu_to_be_32((h & ~mask) | ((v << shift) & mask));
}

/* ---- BTH ---- */

static inline uint8_t droce_bth_opcode(const struct droce_bth *b) { return b->opcode; }
static inline void droce_bth_set_opcode(struct droce_bth *b, uint8_t v) { b->opcode = v; }

static inline bool droce_bth_se(const struct droce_bth *b) { return b->flags & DROCE_BTH_SE_MASK; }
static inline void
droce_bth_set_se(struct droce_bth *b, bool v)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_SE_MASK) | (v ? DROCE_BTH_SE_MASK : 0));
}

static inline bool droce_bth_mig(const struct droce_bth *b) { return b->flags & DROCE_BTH_MIG_MASK; }
static inline void
droce_bth_set_mig(struct droce_bth *b, bool v)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_MIG_MASK) | (v ? DROCE_BTH_MIG_MASK : 0));
}

static inline uint8_t
droce_bth_padcnt(const struct droce_bth *b)
{
	return (b->flags & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
}
static inline void
droce_bth_set_padcnt(struct droce_bth *b, uint8_t v)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_PAD_MASK) |
			     ((v << DROCE_BTH_PAD_SHIFT) & DROCE_BTH_PAD_MASK));
}

static inline uint8_t droce_bth_tver(const struct droce_bth *b) { return b->flags & DROCE_BTH_TVER_MASK; }
static inline void
droce_bth_set_tver(struct droce_bth *b, uint8_t v)
{
	b->flags = (uint8_t)((b->flags & ~DROCE_BTH_TVER_MASK) | (v & DROCE_BTH_TVER_MASK));
}

static inline uint16_t droce_bth_pkey(const struct droce_bth *b) { return rte_be_to_cpu_16(b->pkey); }
static inline void droce_bth_set_pkey(struct droce_bth *b, uint16_t v) { b->pkey = rte_cpu_to_be_16(v); }

static inline bool
droce_bth_fecn(const struct droce_bth *b)
{
	return droce_hdr_getbits_(b->qpn_w, DROCE_BTH_FECN_MASK, 31);
}
static inline void
droce_bth_set_fecn(struct droce_bth *b, bool v)
{
	b->qpn_w = droce_hdr_withbits_(b->qpn_w, DROCE_BTH_FECN_MASK, 31, v);
}

static inline bool
droce_bth_becn(const struct droce_bth *b)
{
	return droce_hdr_getbits_(b->qpn_w, DROCE_BTH_BECN_MASK, 30);
}
static inline void
droce_bth_set_becn(struct droce_bth *b, bool v)
{
	b->qpn_w = droce_hdr_withbits_(b->qpn_w, DROCE_BTH_BECN_MASK, 30, v);
}

static inline uint8_t
droce_bth_resv6(const struct droce_bth *b)
{
	return (uint8_t)droce_hdr_getbits_(b->qpn_w, DROCE_BTH_RESV6_MASK, DROCE_BTH_RESV6_SHIFT);
}
static inline void
droce_bth_set_resv6(struct droce_bth *b, uint8_t v)
{
	b->qpn_w = droce_hdr_withbits_(b->qpn_w, DROCE_BTH_RESV6_MASK, DROCE_BTH_RESV6_SHIFT, v);
}

static inline uint32_t
droce_bth_qpn(const struct droce_bth *b)
{
	return droce_hdr_getbits_(b->qpn_w, DROCE_24BIT_MASK, 0);
}
static inline void
droce_bth_set_qpn(struct droce_bth *b, uint32_t v)
{
	b->qpn_w = droce_hdr_withbits_(b->qpn_w, DROCE_24BIT_MASK, 0, v);
}

static inline bool
droce_bth_ackreq(const struct droce_bth *b)
{
	return droce_hdr_getbits_(b->psn_w, DROCE_BTH_ACKREQ_MASK, 31);
}
static inline void
droce_bth_set_ackreq(struct droce_bth *b, bool v)
{
	b->psn_w = droce_hdr_withbits_(b->psn_w, DROCE_BTH_ACKREQ_MASK, 31, v);
}

static inline uint8_t
droce_bth_resv7(const struct droce_bth *b)
{
	return (uint8_t)droce_hdr_getbits_(b->psn_w, DROCE_BTH_RESV7_MASK, DROCE_BTH_RESV7_SHIFT);
}
static inline void
droce_bth_set_resv7(struct droce_bth *b, uint8_t v)
{
	b->psn_w = droce_hdr_withbits_(b->psn_w, DROCE_BTH_RESV7_MASK, DROCE_BTH_RESV7_SHIFT, v);
}

static inline uint32_t
droce_bth_psn(const struct droce_bth *b)
{
	return droce_hdr_getbits_(b->psn_w, DROCE_24BIT_MASK, 0);
}
static inline void
droce_bth_set_psn(struct droce_bth *b, uint32_t v)
{
	b->psn_w = droce_hdr_withbits_(b->psn_w, DROCE_24BIT_MASK, 0, v);
}

/* ---- RETH ---- */

static inline uint64_t droce_reth_va(const struct droce_reth *h) { return droce_hdr_get64_(h->va_hi, h->va_lo); }
static inline void droce_reth_set_va(struct droce_reth *h, uint64_t v) { droce_hdr_set64_(h->va_hi, h->va_lo, v); }
static inline uint32_t droce_reth_rkey(const struct droce_reth *h) { return rte_be_to_cpu_32(h->rkey); }
static inline void droce_reth_set_rkey(struct droce_reth *h, uint32_t v) { h->rkey = rte_cpu_to_be_32(v); }
static inline uint32_t droce_reth_len(const struct droce_reth *h) { return rte_be_to_cpu_32(h->dma_len); }
static inline void droce_reth_set_len(struct droce_reth *h, uint32_t v) { h->dma_len = rte_cpu_to_be_32(v); }

/* ---- AETH ---- */

static inline uint8_t
droce_aeth_syndrome(const struct droce_aeth *h)
{
	return (uint8_t)droce_hdr_getbits_(h->smsn, 0xff000000u, 24);
}
static inline void
droce_aeth_set_syndrome(struct droce_aeth *h, uint8_t v)
{
	h->smsn = droce_hdr_withbits_(h->smsn, 0xff000000u, 24, v);
}
static inline uint32_t
droce_aeth_msn(const struct droce_aeth *h)
{
	return droce_hdr_getbits_(h->smsn, DROCE_24BIT_MASK, 0);
}
static inline void
droce_aeth_set_msn(struct droce_aeth *h, uint32_t v)
{
	h->smsn = droce_hdr_withbits_(h->smsn, DROCE_24BIT_MASK, 0, v);
}

/* ---- AtomicETH ---- */

static inline uint64_t droce_atmeth_va(const struct droce_atmeth *h) { return droce_hdr_get64_(h->va_hi, h->va_lo); }
static inline void droce_atmeth_set_va(struct droce_atmeth *h, uint64_t v) { droce_hdr_set64_(h->va_hi, h->va_lo, v); }
static inline uint32_t droce_atmeth_rkey(const struct droce_atmeth *h) { return rte_be_to_cpu_32(h->rkey); }
static inline void droce_atmeth_set_rkey(struct droce_atmeth *h, uint32_t v) { h->rkey = rte_cpu_to_be_32(v); }
static inline uint64_t
droce_atmeth_swap_add(const struct droce_atmeth *h)
{
	return droce_hdr_get64_(h->swap_add_hi, h->swap_add_lo);
}
static inline void
droce_atmeth_set_swap_add(struct droce_atmeth *h, uint64_t v)
{
	droce_hdr_set64_(h->swap_add_hi, h->swap_add_lo, v);
}
static inline uint64_t droce_atmeth_cmp(const struct droce_atmeth *h) { return droce_hdr_get64_(h->cmp_hi, h->cmp_lo); }
static inline void droce_atmeth_set_cmp(struct droce_atmeth *h, uint64_t v) { droce_hdr_set64_(h->cmp_hi, h->cmp_lo, v); }

/* ---- AtomicAckETH ---- */

static inline uint64_t droce_atmack_orig(const struct droce_atmack *h) { return droce_hdr_get64_(h->orig_hi, h->orig_lo); }
static inline void droce_atmack_set_orig(struct droce_atmack *h, uint64_t v) { droce_hdr_set64_(h->orig_hi, h->orig_lo, v); }

/* ---- ImmDt (network order kept: verbs hands it to users as __be32) ---- */

static inline rte_be32_t droce_immdt_imm(const struct droce_immdt *h) { return h->imm; }
static inline void droce_immdt_set_imm(struct droce_immdt *h, rte_be32_t v) { h->imm = v; }

/* ---- IETH ---- */

static inline uint32_t droce_ieth_rkey(const struct droce_ieth *h) { return rte_be_to_cpu_32(h->rkey); }
static inline void droce_ieth_set_rkey(struct droce_ieth *h, uint32_t v) { h->rkey = rte_cpu_to_be_32(v); }

/* ---- DETH ---- */

static inline uint32_t droce_deth_qkey(const struct droce_deth *h) { return rte_be_to_cpu_32(h->qkey); }
static inline void droce_deth_set_qkey(struct droce_deth *h, uint32_t v) { h->qkey = rte_cpu_to_be_32(v); }
static inline uint32_t
droce_deth_sqpn(const struct droce_deth *h)
{
	return droce_hdr_getbits_(h->sqp_w, DROCE_24BIT_MASK, 0);
}
static inline void
droce_deth_set_sqpn(struct droce_deth *h, uint32_t v)
{
	h->sqp_w = droce_hdr_withbits_(h->sqp_w, DROCE_24BIT_MASK, 0, v);
}
static inline uint8_t
droce_deth_resv8(const struct droce_deth *h)
{
	return (uint8_t)droce_hdr_getbits_(h->sqp_w, 0xff000000u, 24);
}
static inline void
droce_deth_set_resv8(struct droce_deth *h, uint8_t v)
{
	h->sqp_w = droce_hdr_withbits_(h->sqp_w, 0xff000000u, 24, v);
}

/* ---- FETH ---- */

static inline uint8_t
droce_feth_plt(const struct droce_feth *h)
{
	return (uint8_t)droce_hdr_getbits_(h->bits, DROCE_FETH_PLT_MASK, 0);
}
static inline void
droce_feth_set_plt(struct droce_feth *h, uint8_t v)
{
	h->bits = droce_hdr_withbits_(h->bits, DROCE_FETH_PLT_MASK, 0, v);
}
static inline uint8_t
droce_feth_sel(const struct droce_feth *h)
{
	return (uint8_t)droce_hdr_getbits_(h->bits, DROCE_FETH_SEL_MASK, DROCE_FETH_SEL_SHIFT);
}
static inline void
droce_feth_set_sel(struct droce_feth *h, uint8_t v)
{
	h->bits = droce_hdr_withbits_(h->bits, DROCE_FETH_SEL_MASK, DROCE_FETH_SEL_SHIFT, v);
}
static inline uint32_t
droce_feth_resv(const struct droce_feth *h)
{
	return droce_hdr_getbits_(h->bits, DROCE_FETH_RESV_MASK, DROCE_FETH_RESV_SHIFT);
}
static inline void
droce_feth_set_resv(struct droce_feth *h, uint32_t v)
{
	h->bits = droce_hdr_withbits_(h->bits, DROCE_FETH_RESV_MASK, DROCE_FETH_RESV_SHIFT, v);
}

#endif /* DROCE_WIRE_HDR_H */
