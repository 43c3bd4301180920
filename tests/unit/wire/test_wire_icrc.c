/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ICRC (IBA annex A17.3.3): golden values from real captures, the masked
 * LRH constant, which header bits the ICRC covers (every single-bit change
 * outside the variant fields must change it, none inside may), chaining
 * over pieces, and agreement with the bitwise reference in
 * test_wire_frames.c for every opcode, address family and pad count.
 */

#include <string.h>

#include <isa-l/crc.h>

#include "test_wire.h"

/* Bytes covered by the ICRC (IP header to the end of the pad) of a whole frame. */
static uint32_t
icrc_span(const uint8_t *frame, uint32_t *l3_off)
{
	const uint8_t *ip;

	*l3_off = tw_l3_off(frame);
	ip = frame + *l3_off;
	if (ip[0] >> 4 == 6)
		return 40u + (ip[4] << 8 | ip[5]) - DROCE_ICRC_BYTES;
	return ((uint32_t)ip[2] << 8 | ip[3]) - DROCE_ICRC_BYTES;
}

START_TEST(test_icrc_matches_captured_frames)	/* _i: golden frame */
{
	const struct tw_golden *g = tw_golden_good[_i];
	uint32_t l3, len = icrc_span(g->bytes, &l3);
	uint32_t want = droce_icrc_load(g->bytes + l3 + len);

	ck_assert_uint_eq(l3 + len + DROCE_ICRC_BYTES, g->caplen);
	ck_assert_msg(droce_icrc_calc(g->bytes + l3, len) == want, "%s: %#x, want %#x", g->what,
		      droce_icrc_calc(g->bytes + l3, len), want);
	ck_assert_uint_eq(tw_ref_icrc(g->bytes + l3, len), want);
}
END_TEST

START_TEST(test_icrc_pinned_values)
{
	uint32_t l3, len;

	/* rc_send_pingpong.pcap #5; tshark prints the wire bytes: "Invariant CRC: 0xe2823500" */
	len = icrc_span(tw_rc_ack.bytes, &l3);
	ck_assert_uint_eq(droce_icrc_calc(tw_rc_ack.bytes + l3, len), 0x003582e2);
	/* rc_atomic_cswap.pcap #4; tshark: "Invariant CRC: 0x3d2ef25d" */
	len = icrc_span(tw_rc_atomic_ack.bytes, &l3);
	ck_assert_uint_eq(droce_icrc_calc(tw_rc_atomic_ack.bytes + l3, len), 0x5df22e3d);
	/* rdma_cm_rping.pcap #1, a UD SEND_ONLY with a 256-byte MAD */
	len = icrc_span(tw_ud_send.bytes, &l3);
	ck_assert_uint_eq(droce_icrc_calc(tw_ud_send.bytes + l3, len), 0xf22ecd5e);
	/* IPv6, from Python's zlib.crc32 */
	len = icrc_span(tw_ipv6_send.bytes, &l3);
	ck_assert_uint_eq(droce_icrc_calc(tw_ipv6_send.bytes + l3, len), 0x6fd780c1);
}
END_TEST

START_TEST(test_icrc_differs_from_a_deliberately_wrong_captured_icrc)
{
	const struct tw_golden *g = &tw_ud_send_bad_icrc;
	uint32_t l3, len = icrc_span(g->bytes, &l3);

	/* host_ud_pingpong.pcap #1 carries 0x70cd4ac5; the frame's real ICRC is 0x8f32b53a */
	ck_assert_uint_eq(droce_icrc_load(g->bytes + l3 + len), 0x70cd4ac5);
	ck_assert_uint_eq(droce_icrc_calc(g->bytes + l3, len), 0x8f32b53a);
	ck_assert_uint_eq(tw_ref_icrc(g->bytes + l3, len), 0x8f32b53a);
}
END_TEST

START_TEST(test_masked_lrh_constant)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	/* zlib crc32(0, 8 x 0xff); its raw register ~0x2144df1c is rxe's 0xdebb20e3 seed */
	ck_assert_uint_eq(crc32_gzip_refl(0, lrh, sizeof(lrh)), 0x2144df1c);
	ck_assert_uint_eq(~0x2144df1cu, 0xdebb20e3u);
	/* droce_icrc_update is that same CRC, so it chains from the constant */
	ck_assert_uint_eq(droce_icrc_update(0, lrh, sizeof(lrh)), 0x2144df1c);
	ck_assert_uint_eq(droce_icrc_update(droce_icrc_update(0, lrh, 3), lrh + 3, 5), 0x2144df1c);
}
END_TEST

/* Is bit @p bit of byte @p off (from the IP header) a variant field the ICRC masks? */
static bool
bit_is_masked(bool ipv6, uint32_t off, unsigned int bit)
{
	uint32_t udp = ipv6 ? 40 : 20;

	if (off == udp + 6 || off == udp + 7)		/* UDP checksum */
		return true;
	if (off == udp + 8 + 4)				/* BTH FECN, BECN, resv6 */
		return true;
	if (ipv6)	/* traffic class (bits 4-11), flow label (12-31), hop limit */
		return (off == 0 && bit < 4) || off == 1 || off == 2 || off == 3 || off == 7;
	return off == 1 || off == 8 || off == 10 || off == 11;	/* TOS, TTL, checksum */
}

static void
check_coverage(const uint8_t *frame, uint32_t caplen, const char *what)
{
	uint8_t f[TW_FRAME_MAX];
	uint32_t l3, len = icrc_span(frame, &l3), off, base;
	bool ipv6;
	unsigned int bit, nmasked = 0;

	ck_assert_uint_le(caplen, sizeof(f));
	memcpy(f, frame, caplen);
	ipv6 = f[l3] >> 4 == 6;
	base = droce_icrc_calc(f + l3, len);
	for (off = 0; off < len; off++) {
		for (bit = 0; bit < 8; bit++) {
			uint32_t crc;

			if (off == 0 && bit >= 4)
				continue;	/* the IP version selects the layout itself */
			f[l3 + off] ^= (uint8_t)(1u << bit);
			crc = droce_icrc_calc(f + l3, len);
			f[l3 + off] ^= (uint8_t)(1u << bit);
			if (bit_is_masked(ipv6, off, bit)) {
				nmasked++;
				ck_assert_msg(crc == base,
					      "%s: masked byte %u bit %u changed the ICRC",
					      what, off, bit);
			} else {
				ck_assert_msg(crc != base, "%s: byte %u bit %u not covered", what,
					      off, bit);
			}
		}
	}
	/* IPv4: TOS, TTL, checksum (4 bytes); IPv6: 4 + 8 + 8 + 8 + 8 bits; both: 3 bytes */
	ck_assert_uint_eq(nmasked, ipv6 ? 36 + 24 : 32 + 24);
}

START_TEST(test_icrc_ignores_variant_fields_and_covers_every_other_bit)
{
	struct droce_pkt pkt;
	uint8_t f[TW_FRAME_MAX];
	uint32_t n;

	check_coverage(tw_rc_ack.bytes, tw_rc_ack.caplen, tw_rc_ack.what);
	check_coverage(tw_ud_send_bad_icrc.bytes, tw_ud_send_bad_icrc.caplen, "UD");
	check_coverage(tw_ipv6_send.bytes, tw_ipv6_send.caplen, tw_ipv6_send.what);

	tw_pkt_fill(&pkt, DROCE_OP_RC_WRITE_ONLY_IMM, DROCE_PKT_F_VLAN, 5, 2);
	n = tw_frame_build(&pkt, f, sizeof(f));
	check_coverage(f, n, "VLAN IPv4 WRITE_ONLY_IMM");
	tw_pkt_fill(&pkt, DROCE_OP_UD_SEND_ONLY_IMM, DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6, 3, 3);
	n = tw_frame_build(&pkt, f, sizeof(f));
	check_coverage(f, n, "VLAN IPv6 UD_SEND_ONLY_IMM");
}
END_TEST

START_TEST(test_icrc_unchanged_when_all_variant_fields_change_at_once)
{
	uint8_t f[TW_FRAME_MAX];
	uint32_t l3, len, base;
	uint8_t *ip;

	memcpy(f, tw_rc_ack.bytes, tw_rc_ack.caplen);
	len = icrc_span(f, &l3);
	ip = f + l3;
	base = droce_icrc_calc(ip, len);
	ip[1] = 0xfe;			/* DSCP 63, ECN CE */
	ip[8] = 1;			/* TTL after 63 hops */
	ip[10] = 0x12;			/* stale checksum */
	ip[11] = 0x34;
	ip[20 + 6] = 0xbe;		/* UDP checksum */
	ip[20 + 7] = 0xef;
	ip[28 + 4] |= 0xc0 | 0x3f;	/* FECN, BECN, resv6 */
	ck_assert_uint_eq(droce_icrc_calc(ip, len), base);
	ck_assert_uint_eq(droce_icrc_calc(ip, len), droce_icrc_load(ip + len));

	memcpy(f, tw_ipv6_send.bytes, tw_ipv6_send.caplen);
	len = icrc_span(f, &l3);
	ip = f + l3;
	base = droce_icrc_calc(ip, len);
	ip[0] = 0x60;			/* traffic class 0, flow label 0 */
	ip[1] = 0x00;
	ip[2] = 0x00;
	ip[3] = 0x00;
	ip[7] = 1;			/* hop limit */
	ip[40 + 6] = 0;
	ip[40 + 7] = 0;
	ip[48 + 4] = 0;
	ck_assert_uint_eq(droce_icrc_calc(ip, len), base);
	ck_assert_uint_eq(droce_icrc_calc(ip, len), 0x6fd780c1);
}
END_TEST

static void
check_chaining(const uint8_t *frame, const char *what)
{
	uint32_t l3, len = icrc_span(frame, &l3), hdrs, rest, k, j, crc, want;
	const uint8_t *ip = frame + l3;

	hdrs = (ip[0] >> 4 == 6 ? 40 : 20) + DROCE_UDP_BYTES + DROCE_BTH_BYTES;
	rest = len - hdrs;
	want = droce_icrc_calc(ip, len);
	ck_assert_uint_eq(droce_icrc_update(droce_icrc_begin(ip), ip + hdrs, rest), want);

	/* two pieces, split anywhere */
	for (k = 0; k <= rest; k++) {
		crc = droce_icrc_update(droce_icrc_begin(ip), ip + hdrs, k);
		crc = droce_icrc_update(crc, ip + hdrs + k, rest - k);
		ck_assert_msg(crc == want, "%s: split at %u", what, k);
	}
	/* three pieces */
	for (k = 0; k <= rest; k += 7)
		for (j = k; j <= rest; j += 5) {
			crc = droce_icrc_update(droce_icrc_begin(ip), ip + hdrs, k);
			crc = droce_icrc_update(crc, ip + hdrs + k, j - k);
			crc = droce_icrc_update(crc, ip + hdrs + j, rest - j);
			ck_assert_msg(crc == want, "%s: split at %u and %u", what, k, j);
		}
	/* byte by byte, with empty pieces in between */
	crc = droce_icrc_begin(ip);
	for (k = 0; k < rest; k++) {
		crc = droce_icrc_update(crc, ip + hdrs + k, 1);
		crc = droce_icrc_update(crc, ip + hdrs + k, 0);
	}
	ck_assert_msg(crc == want, "%s: byte by byte", what);
}

START_TEST(test_icrc_update_over_pieces_equals_one_shot)
{
	ck_assert_uint_eq(droce_icrc_update(0x12345678, tw_ud_send.bytes, 0), 0x12345678);
	check_chaining(tw_ud_send.bytes, tw_ud_send.what);
	check_chaining(tw_ipv6_send.bytes, tw_ipv6_send.what);
	check_chaining(tw_rc_ack.bytes, tw_rc_ack.what);	/* nothing after the headers */
}
END_TEST

START_TEST(test_icrc_store_is_least_significant_byte_first)
{
	static const uint8_t want[4] = { 0x44, 0x33, 0x22, 0x11 };
	uint8_t b[6] = { 0xee, 0, 0, 0, 0, 0xee };

	droce_icrc_store(b + 1, 0x11223344);
	ck_assert_mem_eq(b + 1, want, 4);
	ck_assert_uint_eq(b[0], 0xee);
	ck_assert_uint_eq(b[5], 0xee);
	ck_assert_uint_eq(droce_icrc_load(b + 1), 0x11223344);
	/* rc_send_pingpong.pcap #5 ends e2 82 35 00 */
	ck_assert_uint_eq(droce_icrc_load(tw_rc_ack.bytes + tw_rc_ack.caplen - 4), 0x003582e2);
}
END_TEST

START_TEST(test_icrc_set_writes_the_icrc_of_a_built_frame)
{
	struct droce_pkt pkt;
	uint8_t f[TW_FRAME_MAX];
	uint32_t end;

	tw_pkt_fill(&pkt, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 7, 4);
	(void)tw_frame_build(&pkt, f, sizeof(f));
	end = pkt.frame_len - DROCE_ICRC_BYTES;
	memset(f + end, 0, DROCE_ICRC_BYTES);
	f[pkt.frame_len] = 0xee;
	droce_icrc_set(&pkt, f);
	ck_assert_uint_eq(droce_icrc_load(f + end), tw_ref_icrc(f + pkt.l3_off, end - pkt.l3_off));
	ck_assert_uint_eq(f[pkt.frame_len], 0xee);
}
END_TEST

START_TEST(test_icrc_matches_reference_for_every_opcode_and_family)	/* _i: defined opcode */
{
	static const uint32_t variants[] = {
		0, DROCE_PKT_F_IPV6, DROCE_PKT_F_VLAN, DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6,
	};
	const uint8_t op = tw_opcodes[_i];
	const struct droce_opcode_desc *d = droce_opcode(op);
	struct droce_pkt pkt;
	uint8_t f[TW_FRAME_MAX];
	unsigned int v;
	uint32_t len, max_len;

	max_len = (d->flags & DROCE_OPF_PAYLOAD) ? 9 : 0;
	for (v = 0; v < DROCE_DIM(variants); v++)
		for (len = 0; len <= max_len; len++) {
			uint32_t end;

			tw_pkt_fill(&pkt, op, variants[v], len, v + len);
			(void)tw_frame_build(&pkt, f, sizeof(f));
			end = pkt.frame_len - DROCE_ICRC_BYTES;
			ck_assert_msg(droce_icrc_calc(f + pkt.l3_off, end - pkt.l3_off) ==
				      tw_ref_icrc(f + pkt.l3_off, end - pkt.l3_off),
				      "%s variant %u payload %u", d->name, v, len);
		}
}
END_TEST

TCase *
test_wire_icrc_tcase(void)
{
	TCase *tc = tcase_create("icrc");

	tcase_add_loop_test(tc, test_icrc_matches_captured_frames, 0, (int)tw_golden_good_count);
	tcase_add_test(tc, test_icrc_pinned_values);
	tcase_add_test(tc, test_icrc_differs_from_a_deliberately_wrong_captured_icrc);
	tcase_add_test(tc, test_masked_lrh_constant);
	tcase_add_test(tc, test_icrc_ignores_variant_fields_and_covers_every_other_bit);
	tcase_add_test(tc, test_icrc_unchanged_when_all_variant_fields_change_at_once);
	tcase_add_test(tc, test_icrc_update_over_pieces_equals_one_shot);
	tcase_add_test(tc, test_icrc_store_is_least_significant_byte_first);
	tcase_add_test(tc, test_icrc_set_writes_the_icrc_of_a_built_frame);
	tcase_add_loop_test(tc, test_icrc_matches_reference_for_every_opcode_and_family,
			    0, (int)tw_opcode_count);
	return tc;
}
