/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ICRC (IBA annex A17.3.3, RoCEv2). Only the variant header fields need
 * masking, and they all sit in the IP, UDP and BTH headers: those (at most
 * 60 bytes) are copied and masked, everything after is read in place.
 * ISA-L's crc32_gzip_refl() is the IEEE 802.3 CRC-32 (reflected, zlib
 * compatible), PCLMUL-accelerated, and takes the previous result as its
 * seed, so the CRC chains over the header copy, the payload and any
 * further segments. Stateless: any thread may call it.
 */

#include <string.h>

#include <isa-l/crc.h>

#include "droce_wire.h"

/*
 * The CRC after the 8 bytes of 0xff that stand for the masked LRH: zlib's
 * crc32(0, "\xff" x 8) = 0x2144df1c (its raw register, ~0x2144df1c, is the
 * 0xdebb20e3 seed rxe uses). A unit test recomputes it.
 */
#define ICRC_LRH_CRC 0x2144df1cu

/* Mask the variant fields of a copy of IP + UDP + BTH. @return the bytes covered. */
static uint32_t
icrc_mask(uint8_t *hdr)
{
	uint8_t *udp;
	uint32_t n;

	if (hdr[0] >> 4 == 6) {
		n = DROCE_IPV6_BYTES + DROCE_UDP_BYTES + DROCE_BTH_BYTES;
		hdr[0] |= 0x0f;			/* traffic class ... */
		hdr[1] = 0xff;
		hdr[2] = 0xff;			/* ... and flow label */
		hdr[3] = 0xff;
		hdr[7] = 0xff;			/* hop limit */
		udp = hdr + DROCE_IPV6_BYTES;
	} else {
		n = DROCE_IPV4_BYTES + DROCE_UDP_BYTES + DROCE_BTH_BYTES;
		hdr[1] = 0xff;			/* TOS */
		hdr[8] = 0xff;			/* TTL */
		hdr[10] = 0xff;			/* header checksum */
		hdr[11] = 0xff;
		udp = hdr + DROCE_IPV4_BYTES;
	}
	udp[6] = 0xff;				/* UDP checksum */
	udp[7] = 0xff;
	udp[DROCE_UDP_BYTES + 4] = 0xff;	/* BTH FECN, BECN, resv6 */
	return n;
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
	uint8_t hdr[DROCE_IPV6_BYTES + DROCE_UDP_BYTES + DROCE_BTH_BYTES];

	memcpy(hdr, l3, icrc_hdr_bytes(l3));
	return crc32_gzip_refl(ICRC_LRH_CRC, hdr, icrc_mask(hdr));
}

uint32_t
droce_icrc_update(uint32_t crc, const void *buf, uint32_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

/*
 * Small packets (ACKs, short messages) in one CRC pass over a masked copy:
 * each call of the folding CRC costs a fixed setup, which dominates below
 * a few hundred bytes (profiled: 15% of a core sending 64-byte WRITEs).
 */
#define ICRC_ONE_PASS_MAX	256

uint32_t
droce_icrc_calc(const void *l3, uint32_t len)
{
	const uint8_t *ip = l3;
	uint32_t n = icrc_hdr_bytes(ip);

	if (len <= ICRC_ONE_PASS_MAX && len >= n) {
		uint8_t copy[ICRC_ONE_PASS_MAX];

		memcpy(copy, ip, len);
		icrc_mask(copy);
		return crc32_gzip_refl(ICRC_LRH_CRC, copy, len);
	}
	return droce_icrc_update(droce_icrc_begin(l3), ip + n, len - n);
}

/*
 * The frame is the caller's and writable: its variant fields are masked in
 * place, the CRC taken in one pass over the frame as it lies, and the saved
 * header put back. No copy of the payload, unlike droce_icrc_calc(), whose
 * input is read-only (profiled: the copy and mask cost ~70 instructions of
 * a 64-byte WRITE's ~180 for its ICRC).
 */
static inline __attribute__((always_inline)) uint32_t
icrc_in_place(uint8_t *l3, uint32_t len, uint32_t hdr_len)
{
	uint8_t save[DROCE_IPV6_BYTES + DROCE_UDP_BYTES + DROCE_BTH_BYTES];
	uint32_t crc;

	memcpy(save, l3, hdr_len);
	icrc_mask(l3);
	crc = crc32_gzip_refl(ICRC_LRH_CRC, l3, len);
	memcpy(l3, save, hdr_len);
	return crc;
}

void
droce_icrc_set(const struct droce_pkt *pkt, void *frame)
{
	uint8_t *f = frame, *l3 = f + pkt->l3_off;
	uint32_t len = pkt->frame_len - DROCE_ICRC_BYTES - pkt->l3_off;
	uint32_t crc;

	/* constant sizes: the save and restore compile to a few vector moves */
	if (l3[0] >> 4 == 6)
		crc = icrc_in_place(l3, len, DROCE_IPV6_BYTES + DROCE_UDP_BYTES + DROCE_BTH_BYTES);
	else
		crc = icrc_in_place(l3, len, DROCE_IPV4_BYTES + DROCE_UDP_BYTES + DROCE_BTH_BYTES);
	droce_icrc_store(l3 + len, crc);
}
