/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libFuzzer target for the RoCEv2 parser (lib/wire). Each input is one
 * Ethernet frame. It is parsed twice:
 *   1. whole: caplen == wire_len == size;
 *   2. as a snap-length-limited capture: the first caplen bytes, copied to a
 *      buffer of exactly that size so ASan sees any read past it, with
 *      wire_len == size; caplen is size minus a count taken from byte 0.
 * Whenever the parser accepts a frame, its headers are rebuilt from the
 * decoded struct with droce_pkt_build_hdrs() and must equal the input's
 * bytes, and, unless truncated, the ICRC recomputed over the rebuilt headers
 * and the input's payload must equal the received one (which the parser has
 * already checked). A difference aborts, which libFuzzer reports as a crash.
 * droce_pkt_parse_rx() must give the same verdict, and with
 * droce_pkt_decode_rest() the same description, on every input.
 * Single-threaded, as libFuzzer runs it.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire.h"

/* The largest frame a parse can describe: IPv6 payload length 65535 + headers. */
#define FRAME_MAX_BYTES (DROCE_ETH_BYTES + DROCE_VLAN_BYTES + DROCE_IPV6_BYTES + 65535)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...) do { \
		if (!(cond)) { \
			fprintf(stderr, "fuzz_wire_parse: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

static uint8_t rebuilt[FRAME_MAX_BYTES];

static void
check_one(const uint8_t *f, uint32_t caplen, uint32_t wire_len)
{
	struct droce_pkt pkt, re;
	enum droce_wire_drop r;
	uint32_t i, end;
	int hlen;

	memset(&pkt, 0, sizeof(pkt));
	r = droce_pkt_parse(&pkt, f, caplen, wire_len);
	FUZZ_CHECK(r >= DROCE_WIRE_OK && r < DROCE_WIRE_DROP_COUNT, "reason %d", r);
	/* the receive path's parse: the same verdict, the same fields once completed */
	memset(&re, 0, sizeof(re));
	FUZZ_CHECK(droce_pkt_parse_rx(&re, f, caplen, wire_len) == r, "parse_rx disagrees (%s)",
		   droce_wire_drop_name(r));
	if (r != DROCE_WIRE_OK)
		return;
	droce_pkt_decode_rest(&re, f);
	FUZZ_CHECK(memcmp(&re, &pkt, sizeof(pkt)) == 0, "parse_rx + decode_rest != parse");

	/* what the parser promises about an accepted frame */
	FUZZ_CHECK(pkt.frame_len <= wire_len, "frame_len %u > wire_len %u", pkt.frame_len, wire_len);
	FUZZ_CHECK(pkt.payload_off + pkt.payload_len + pkt.padcnt + DROCE_ICRC_BYTES == pkt.frame_len,
		   "payload_off %u + payload %u + pad %u + ICRC != frame_len %u",
		   pkt.payload_off, pkt.payload_len, pkt.padcnt, pkt.frame_len);
	FUZZ_CHECK(pkt.payload_off <= caplen, "payload_off %u > caplen %u", pkt.payload_off, caplen);
	FUZZ_CHECK(!!(pkt.flags & DROCE_PKT_F_TRUNCATED) == (caplen < pkt.frame_len),
		   "TRUNCATED flag %u, caplen %u, frame_len %u",
		   pkt.flags & DROCE_PKT_F_TRUNCATED, caplen, pkt.frame_len);

	re = pkt;
	hlen = droce_pkt_build_hdrs(&re, rebuilt, sizeof(rebuilt));
	FUZZ_CHECK(hlen > 0, "build_hdrs returned %d", hlen);
	FUZZ_CHECK((uint32_t)hlen == pkt.payload_off && hlen == (int)droce_pkt_hdrs_len(&pkt),
		   "rebuilt %d header bytes, parsed payload_off %u", hlen, pkt.payload_off);
	FUZZ_CHECK(re.l3_off == pkt.l3_off && re.bth_off == pkt.bth_off &&
		   re.payload_off == pkt.payload_off && re.frame_len == pkt.frame_len,
		   "offsets: l3 %u/%u bth %u/%u payload %u/%u frame_len %u/%u",
		   re.l3_off, pkt.l3_off, re.bth_off, pkt.bth_off,
		   re.payload_off, pkt.payload_off, re.frame_len, pkt.frame_len);
	for (i = 0; i < (uint32_t)hlen; i++)
		FUZZ_CHECK(rebuilt[i] == f[i], "%s: rebuilt header byte %u is 0x%02x, input 0x%02x",
			   droce_opcode(pkt.opcode)->name, i, rebuilt[i], f[i]);

	if (pkt.flags & DROCE_PKT_F_TRUNCATED)
		return;
	end = pkt.frame_len - DROCE_ICRC_BYTES;
	memcpy(rebuilt + hlen, f + hlen, end - (uint32_t)hlen);	/* payload and pad */
	FUZZ_CHECK(droce_icrc_calc(rebuilt + re.l3_off, end - re.l3_off) == pkt.icrc,
		   "ICRC over the rebuilt frame differs from the received 0x%08x", pkt.icrc);
	droce_icrc_set(&re, rebuilt);
	FUZZ_CHECK(memcmp(rebuilt + end, f + end, DROCE_ICRC_BYTES) == 0,
		   "droce_icrc_set() wrote different ICRC bytes");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t caplen;
	uint8_t *copy;

	if (size == 0 || size > FRAME_MAX_BYTES)
		return -1;	/* not a frame: keep it out of the corpus */
	check_one(data, (uint32_t)size, (uint32_t)size);

	/* The same frame captured with a snap length: byte 0 picks how much is cut. */
	caplen = (uint32_t)size - data[0] % ((uint32_t)size + 1);
	copy = malloc(caplen ? caplen : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, caplen);
	check_one(copy, caplen, (uint32_t)size);
	free(copy);
	return 0;
}
