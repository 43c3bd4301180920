/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ICRC (IBA annex A17.3.3, RoCEv2). Only the variant header fields need
 * masking, and they all sit in the IP, UDP and BTH headers: their masking
 * is folded into the CRC's seed (below), and the packet is read in place.
 * ISA-L's crc32_gzip_refl() is the IEEE 802.3 CRC-32 (reflected, zlib
 * compatible), PCLMUL-accelerated, and takes the previous result as its
 * seed, so the CRC chains over the headers, the payload and any further
 * segments. Stateless after load: any thread may call it.
 */

#include <isa-l/crc.h>

#include "droce_core.h"
#include "droce_wire.h"

/*
 * The CRC after the 8 bytes of 0xff that stand for the masked LRH: zlib's
 * crc32(0, "\xff" x 8) = 0x2144df1c (its raw register, ~0x2144df1c, is the
 * 0xdebb20e3 seed rxe uses). A unit test recomputes it.
 */
#define ICRC_LRH_CRC 0x2144df1cu

/*
 * No copy, no masking: CRC-32 is linear, so setting a header byte to ones
 * changes the CRC by a term that depends only on the byte's value and its
 * place, and the same change comes from XORing a register value into the
 * CRC's initial state instead. The frame is then read once, as it lies,
 * from a seed that stands for the masked LRH and the masking together.
 *
 * Setting byte p of the message to ones XORs it with d = ~byte (within the
 * field's mask). In a reflected CRC the register takes the message one byte
 * at a time into its low byte, so XORing d into byte p is the same as
 * XORing, into the initial register, the value that p zero-byte steps turn
 * into d: d run backwards through 8p bit steps (icrc_unstep). The map is
 * linear in d: one 256-entry table per variant byte, indexed by the byte as
 * it is, built at load time.
 */
#define ICRC_POLY	0xedb88320u	/* IEEE 802.3, reflected */

struct icrc_var {
	uint8_t off;	/* from the IP header */
	uint8_t mask;	/* the bits set to ones */
};

/* IPv4: TOS, TTL, header checksum; UDP checksum; BTH FECN, BECN, resv6 */
static const struct icrc_var icrc_var4[] = {
	{ 1, 0xff }, { 8, 0xff }, { 10, 0xff }, { 11, 0xff },
	{ DROCE_IPV4_BYTES + 6, 0xff }, { DROCE_IPV4_BYTES + 7, 0xff },
	{ DROCE_IPV4_BYTES + DROCE_UDP_BYTES + 4, 0xff },
};
/* IPv6: traffic class and flow label, hop limit; UDP checksum; BTH byte 4 */
static const struct icrc_var icrc_var6[] = {
	{ 0, 0x0f }, { 1, 0xff }, { 2, 0xff }, { 3, 0xff }, { 7, 0xff },
	{ DROCE_IPV6_BYTES + 6, 0xff }, { DROCE_IPV6_BYTES + 7, 0xff },
	{ DROCE_IPV6_BYTES + DROCE_UDP_BYTES + 4, 0xff },
};
#define ICRC_NVAR4	DROCE_DIM(icrc_var4)
#define ICRC_NVAR6	DROCE_DIM(icrc_var6)

static uint32_t icrc_seed4[ICRC_NVAR4][256];
static uint32_t icrc_seed6[ICRC_NVAR6][256];

/* Undo @p bits steps of the reflected CRC register over zero bits. */
static uint32_t
icrc_unstep(uint32_t r, unsigned int bits)
{
	/* a step is r >> 1, XOR POLY if the bit shifted out was 1; POLY's top
	 * bit is 1 and r >> 1's is 0, so the top bit says which happened */
	while (bits-- > 0)
		r = (r & 0x80000000u) ? ((r ^ ICRC_POLY) << 1) | 1u : r << 1;
	return r;
}

static void
icrc_tables_fill(uint32_t (*t)[256], const struct icrc_var *v, unsigned int n)
{
	unsigned int i, d, b;

	for (i = 0; i < n; i++) {
		uint32_t basis[8];

		for (b = 0; b < 8; b++)
			basis[b] = icrc_unstep(1u << b, 8u * v[i].off);
		/* indexed by the byte as received: d is what masking flips in it */
		for (d = 0; d < 256; d++) {
			uint32_t x = 0, flip = ~d & v[i].mask;

			for (b = 0; b < 8; b++)
				if (flip & (1u << b))
					x ^= basis[b];
			t[i][d] = x;
		}
	}
}

__attribute__((constructor)) static void
icrc_tables_init(void)
{
	icrc_tables_fill(icrc_seed4, icrc_var4, ICRC_NVAR4);
	icrc_tables_fill(icrc_seed6, icrc_var6, ICRC_NVAR6);
}

/* The seed for crc32_gzip_refl() over the unmasked IP, UDP and BTH headers at @p ip. */
static inline uint32_t
icrc_seed(const uint8_t *ip)
{
	uint32_t x = ICRC_LRH_CRC;
	unsigned int i;

	if (ip[0] >> 4 == 6) {
#pragma GCC unroll 8
		for (i = 0; i < ICRC_NVAR6; i++)
			x ^= icrc_seed6[i][ip[icrc_var6[i].off]];
	} else {
#pragma GCC unroll 8
		for (i = 0; i < ICRC_NVAR4; i++)
			x ^= icrc_seed4[i][ip[icrc_var4[i].off]];
	}
	return x;
}

static uint32_t
icrc_hdr_bytes(const uint8_t *ip)
{
	return (ip[0] >> 4 == 6 ? DROCE_IPV6_BYTES : DROCE_IPV4_BYTES) + DROCE_UDP_BYTES +
	       DROCE_BTH_BYTES;
}

uint32_t
droce_icrc_begin(const void *l3)
{
	return crc32_gzip_refl(icrc_seed(l3), l3, icrc_hdr_bytes(l3));
}

uint32_t
droce_icrc_update(uint32_t crc, const void *buf, uint32_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

uint32_t
droce_icrc_calc(const void *l3, uint32_t len)
{
	return crc32_gzip_refl(icrc_seed(l3), l3, len);
}

void
droce_icrc_set(const struct droce_pkt *pkt, void *frame)
{
	uint8_t *f = frame, *l3 = f + pkt->l3_off;
	uint32_t len = pkt->frame_len - DROCE_ICRC_BYTES - pkt->l3_off;

	/* droce_icrc_calc() written out: one call less per packet sent */
	droce_icrc_store(l3 + len, crc32_gzip_refl(icrc_seed(l3), l3, len));
}
