/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_wire_hdr.h: every accessor pair. Each field is described here once,
 * independently of the header, by its first bit (counted from the most
 * significant bit of byte 0, as IBA draws headers) and its width. For each
 * field and several backgrounds (all zeros, all ones, a pattern), set -> get
 * must round-trip 0, 1, the maximum and patterns, and the header's bytes
 * must equal the background with exactly that field replaced: nothing
 * around it may move. Values wider than the field must be masked, never
 * spill into a neighbour. Golden decodes use raw bytes from real captures.
 */

#include <arpa/inet.h>
#include <stdalign.h>
#include <string.h>

#include <rte_ip.h>

#include "bitfield_check.h"
#include "droce_wire_hdr.h"
#include "test_wire.h"

/*      hdr     field     first bit  width  setter parameter width (1 = bool) */
#define HDR_FIELDS(F) \
	F(bth,    opcode,     0,   8,  8) \
	F(bth,    se,         8,   1,  1) \
	F(bth,    mig,        9,   1,  1) \
	F(bth,    padcnt,    10,   2,  8) \
	F(bth,    tver,      12,   4,  8) \
	F(bth,    pkey,      16,  16, 16) \
	F(bth,    fecn,      32,   1,  1) \
	F(bth,    becn,      33,   1,  1) \
	F(bth,    resv6,     34,   6,  8) \
	F(bth,    qpn,       40,  24, 32) \
	F(bth,    ackreq,    64,   1,  1) \
	F(bth,    resv7,     65,   7,  8) \
	F(bth,    psn,       72,  24, 32) \
	F(reth,   va,         0,  64, 64) \
	F(reth,   rkey,      64,  32, 32) \
	F(reth,   len,       96,  32, 32) \
	F(aeth,   syndrome,   0,   8,  8) \
	F(aeth,   msn,        8,  24, 32) \
	F(atmeth, va,         0,  64, 64) \
	F(atmeth, rkey,      64,  32, 32) \
	F(atmeth, swap_add,  96,  64, 64) \
	F(atmeth, cmp,      160,  64, 64) \
	F(atmack, orig,       0,  64, 64) \
	F(ieth,   rkey,       0,  32, 32) \
	F(deth,   qkey,       0,  32, 32) \
	F(deth,   resv8,     32,   8,  8) \
	F(deth,   sqpn,      40,  24, 32) \
	F(feth,   sel,       26,   2,  8) \
	F(feth,   plt,       28,   4,  8) \
	F(feth,   resv,       0,  26, 32)

/* uint64_t wrappers, so that one table can drive every accessor pair */
#define F(hdr, f, start, width, pbits) \
	static void \
	set_##hdr##_##f(void *h, uint64_t v) \
	{ \
		droce_##hdr##_set_##f(h, v); \
	} \
	static uint64_t \
	get_##hdr##_##f(const void *h) \
	{ \
		return droce_##hdr##_##f(h); \
	}
HDR_FIELDS(F)
#undef F


static const struct bitfield_case fields[] = {
#define F(hdr, f, st, w, pb) \
	{ .name = #hdr "." #f, .bytes = sizeof(struct droce_##hdr), .start = (st), \
	  .width = (w), .pbits = (pb), .set = set_##hdr##_##f, .get = get_##hdr##_##f },
	HDR_FIELDS(F)
#undef F
};

START_TEST(test_accessor_round_trips_and_leaves_neighbours_untouched)	/* _i: field */
{
	bitfield_check_round_trips(&fields[_i]);
}
END_TEST

START_TEST(test_accessor_masks_values_wider_than_the_field)	/* _i: field */
{
	bitfield_check_masks(&fields[_i]);
}
END_TEST

START_TEST(test_bth_set_psn_max_leaves_ackreq_and_resv7)
{
	alignas(4) uint8_t raw[2 + DROCE_BTH_BYTES] = { 0 };
	struct droce_bth *bth = (void *)(raw + 2);

	droce_bth_set_ackreq(bth, true);
	droce_bth_set_resv7(bth, 0x55);
	droce_bth_set_psn(bth, 0xffffff);
	ck_assert(droce_bth_ackreq(bth));
	ck_assert_uint_eq(droce_bth_resv7(bth), 0x55);
	ck_assert_uint_eq(droce_bth_psn(bth), 0xffffff);
	droce_bth_set_psn(bth, 0);
	ck_assert(droce_bth_ackreq(bth));
	ck_assert_uint_eq(droce_bth_resv7(bth), 0x55);
	ck_assert_uint_eq(droce_bth_psn(bth), 0);
	droce_bth_set_ackreq(bth, false);
	droce_bth_set_psn(bth, 0x1ffffff);	/* bit 24 must not become AckReq */
	ck_assert(!droce_bth_ackreq(bth));
	ck_assert_uint_eq(droce_bth_resv7(bth), 0x55);
	ck_assert_uint_eq(droce_bth_psn(bth), 0xffffff);
	ck_assert_uint_eq(raw[2 + 8], 0x55);
}
END_TEST

START_TEST(test_bth_set_qpn_max_leaves_fecn_becn_resv6)
{
	alignas(4) uint8_t raw[2 + DROCE_BTH_BYTES] = { 0 };
	struct droce_bth *bth = (void *)(raw + 2);

	droce_bth_set_fecn(bth, true);
	droce_bth_set_resv6(bth, 0x15);
	droce_bth_set_qpn(bth, 0xffffff);
	ck_assert(droce_bth_fecn(bth));
	ck_assert(!droce_bth_becn(bth));
	ck_assert_uint_eq(droce_bth_resv6(bth), 0x15);
	ck_assert_uint_eq(droce_bth_qpn(bth), 0xffffff);
	droce_bth_set_qpn(bth, 0xff000000);	/* only bits above 24: QPN 0, flags kept */
	ck_assert(droce_bth_fecn(bth));
	ck_assert(!droce_bth_becn(bth));
	ck_assert_uint_eq(droce_bth_resv6(bth), 0x15);
	ck_assert_uint_eq(droce_bth_qpn(bth), 0);
	droce_bth_set_becn(bth, true);
	droce_bth_set_fecn(bth, false);
	ck_assert(droce_bth_becn(bth));
	ck_assert_uint_eq(raw[2 + 4], 0x40 | 0x15);
}
END_TEST

START_TEST(test_bth_decode_golden)
{
	/* SEND_ONLY, SE, PadCnt=2, P_Key=0xffff, BECN, DestQP=0x12, AckReq, PSN=0xfffffe */
	static const alignas(2) uint8_t raw[DROCE_BTH_BYTES] = {
		0x04, 0xa0, 0xff, 0xff,  0x40, 0x00, 0x00, 0x12,  0x80, 0xff, 0xff, 0xfe,
	};
	const struct droce_bth *bth = (const void *)raw;

	ck_assert_uint_eq(droce_bth_opcode(bth), 0x04);
	ck_assert(droce_bth_se(bth));
	ck_assert(!droce_bth_mig(bth));
	ck_assert_uint_eq(droce_bth_padcnt(bth), 2);
	ck_assert_uint_eq(droce_bth_tver(bth), 0);
	ck_assert_uint_eq(droce_bth_pkey(bth), 0xffff);
	ck_assert(!droce_bth_fecn(bth));
	ck_assert(droce_bth_becn(bth));
	ck_assert_uint_eq(droce_bth_resv6(bth), 0);
	ck_assert_uint_eq(droce_bth_qpn(bth), 0x12);
	ck_assert(droce_bth_ackreq(bth));
	ck_assert_uint_eq(droce_bth_resv7(bth), 0);
	ck_assert_uint_eq(droce_bth_psn(bth), 0xfffffe);
}
END_TEST

/* The BTH sits at offset 42 of an untagged IPv4 frame. */
#define BTH_AT(g) ((const struct droce_bth *)((g)->bytes + 42))
#define XHDR_AT(g, off) ((const void *)((g)->bytes + 42 + (off)))

START_TEST(test_hdrs_decode_captured_cmp_swap)
{
	/* tshark: CmpSwap, AckReq, QP 0x1a, PSN 2473243, VA 0x0000557f94c37000,
	 * R_Key 0xb41, Swap 0, Compare 0 */
	const struct droce_bth *bth = BTH_AT(&tw_rc_cmp_swap);
	const struct droce_atmeth *a = XHDR_AT(&tw_rc_cmp_swap, DROCE_BTH_BYTES);

	ck_assert_uint_eq(droce_bth_opcode(bth), DROCE_OP_RC_COMPARE_SWAP);
	ck_assert(droce_bth_ackreq(bth));
	ck_assert_uint_eq(droce_bth_qpn(bth), 0x1a);
	ck_assert_uint_eq(droce_bth_psn(bth), 2473243);
	ck_assert_uint_eq(droce_atmeth_va(a), 0x0000557f94c37000ull);
	ck_assert_uint_eq(droce_atmeth_rkey(a), 0xb41);
	ck_assert_uint_eq(droce_atmeth_swap_add(a), 0);
	ck_assert_uint_eq(droce_atmeth_cmp(a), 0);
}
END_TEST

START_TEST(test_hdrs_decode_captured_atomic_ack)
{
	/* tshark: ATOMIC Acknowledge, QP 0x1a, PSN 2473243, Syndrome 31 (ACK,
	 * credits 31), MSN 1, Original Remote Data 478949352583418250 */
	const struct droce_bth *bth = BTH_AT(&tw_rc_atomic_ack);
	const struct droce_aeth *aeth = XHDR_AT(&tw_rc_atomic_ack, DROCE_BTH_BYTES);
	const struct droce_atmack *ack = XHDR_AT(&tw_rc_atomic_ack,
						 DROCE_BTH_BYTES + DROCE_AETH_BYTES);

	ck_assert_uint_eq(droce_bth_opcode(bth), DROCE_OP_RC_ATOMIC_ACKNOWLEDGE);
	ck_assert(!droce_bth_ackreq(bth));
	ck_assert_uint_eq(droce_bth_psn(bth), 2473243);
	ck_assert_uint_eq(droce_aeth_syndrome(aeth), 31);
	ck_assert_uint_eq(droce_aeth_msn(aeth), 1);
	ck_assert_uint_eq(droce_atmack_orig(ack), 478949352583418250ull);
}
END_TEST

START_TEST(test_hdrs_decode_captured_read_request_and_ud_send)
{
	/* tshark: RDMA READ Request, QP 0x17, AckReq, PSN 8218096,
	 * VA 0x00005624c57dc000, R_Key 0x842, DMA Length 4096 */
	const struct droce_bth *bth = BTH_AT(&tw_rc_read_req);
	const struct droce_reth *r = XHDR_AT(&tw_rc_read_req, DROCE_BTH_BYTES);
	/* tshark: UD SEND only, QP 1, AckReq, PSN 0, Q_Key 0x80010000, SrcQP 1 */
	const struct droce_bth *ud = BTH_AT(&tw_ud_send);
	const struct droce_deth *deth = XHDR_AT(&tw_ud_send, DROCE_BTH_BYTES);

	ck_assert_uint_eq(droce_bth_qpn(bth), 0x17);
	ck_assert_uint_eq(droce_bth_psn(bth), 8218096);
	ck_assert_uint_eq(droce_reth_va(r), 0x00005624c57dc000ull);
	ck_assert_uint_eq(droce_reth_rkey(r), 0x842);
	ck_assert_uint_eq(droce_reth_len(r), 4096);

	ck_assert_uint_eq(droce_bth_opcode(ud), DROCE_OP_UD_SEND_ONLY);
	ck_assert_uint_eq(droce_bth_qpn(ud), 1);
	ck_assert(droce_bth_ackreq(ud));
	ck_assert_uint_eq(droce_bth_psn(ud), 0);
	ck_assert_uint_eq(droce_deth_qkey(deth), 0x80010000u);
	ck_assert_uint_eq(droce_deth_resv8(deth), 0);
	ck_assert_uint_eq(droce_deth_sqpn(deth), 1);
}
END_TEST

START_TEST(test_immdt_keeps_network_order)
{
	alignas(4) uint8_t raw[2 + DROCE_IMMDT_BYTES + 2];
	struct droce_immdt *h = (void *)(raw + 2);
	static const uint8_t want[] = { 0xee, 0xee, 0x01, 0x02, 0x03, 0x04, 0xee, 0xee };

	memset(raw, 0xee, sizeof(raw));
	droce_immdt_set_imm(h, htonl(0x01020304));
	ck_assert_mem_eq(raw, want, sizeof(want));
	ck_assert_uint_eq(droce_immdt_imm(h), htonl(0x01020304));
	ck_assert_uint_eq(ntohl(droce_immdt_imm(h)), 0x01020304);
}
END_TEST

START_TEST(test_wire_structs_have_on_wire_sizes_and_2_byte_alignment)
{
	ck_assert_uint_eq(sizeof(struct droce_bth), 12);
	ck_assert_uint_eq(sizeof(struct droce_reth), 16);
	ck_assert_uint_eq(sizeof(struct droce_aeth), 4);
	ck_assert_uint_eq(sizeof(struct droce_atmeth), 28);
	ck_assert_uint_eq(sizeof(struct droce_atmack), 8);
	ck_assert_uint_eq(sizeof(struct droce_immdt), 4);
	ck_assert_uint_eq(sizeof(struct droce_ieth), 4);
	ck_assert_uint_eq(sizeof(struct droce_deth), 8);
	ck_assert_uint_eq(sizeof(struct droce_feth), 4);
	ck_assert_uint_eq(alignof(struct droce_bth), 2);
	ck_assert_uint_eq(alignof(struct droce_reth), 2);
	ck_assert_uint_eq(alignof(struct droce_aeth), 2);
	ck_assert_uint_eq(alignof(struct droce_atmeth), 2);
	ck_assert_uint_eq(alignof(struct droce_atmack), 2);
	ck_assert_uint_eq(alignof(struct droce_immdt), 2);
	ck_assert_uint_eq(alignof(struct droce_ieth), 2);
	ck_assert_uint_eq(alignof(struct droce_deth), 2);
	ck_assert_uint_eq(alignof(struct droce_feth), 2);
}
END_TEST

/*
 * droce_ipv4_hdr_sum() is DPDK's rte_raw_cksum() over 20 bytes, bit for bit,
 * and droce_ipv4_hdr_ok() says whether it is 0xffff (20 000 headers, every
 * third given a correct checksum)
 */
START_TEST(test_ipv4_hdr_sum_equals_rte_raw_cksum)
{
	uint8_t h[DROCE_IPV4_BYTES + 1];
	uint32_t x = 12345;
	unsigned int n, i;

	for (n = 0; n < 20000; n++) {
		for (i = 0; i < sizeof(h); i++) {
			x = x * 1103515245u + 12345u;
			h[i] = (uint8_t)(x >> 16);
		}
		if (n % 7 == 0)		/* sums that wrap: mostly 0xff */
			memset(h, 0xff, n % 21);
		if (n == 1)
			memset(h, 0, sizeof(h));
		if (n % 3 == 0 && n != 0) {	/* a correct checksum, as a sender stores it */
			uint16_t csum;

			memset(h + n % 2 + 10, 0, 2);
			csum = (uint16_t)~rte_raw_cksum(h + n % 2, 20);
			memcpy(h + n % 2 + 10, &csum, 2);
		}
		/* unaligned too: the parser reads the header where the frame put it */
		ck_assert_uint_eq(droce_ipv4_hdr_sum(h + n % 2), rte_raw_cksum(h + n % 2, 20));
		ck_assert_uint_eq(droce_ipv4_hdr_ok(h + n % 2),
				  rte_raw_cksum(h + n % 2, 20) == 0xffff);
		if (n % 3 == 0 && n != 0)
			ck_assert(droce_ipv4_hdr_ok(h + n % 2));
	}
}
END_TEST

TCase *
test_wire_hdr_tcase(void)
{
	TCase *tc = tcase_create("hdr");

	tcase_add_loop_test(tc, test_accessor_round_trips_and_leaves_neighbours_untouched,
			    0, DROCE_DIM(fields));
	tcase_add_loop_test(tc, test_accessor_masks_values_wider_than_the_field,
			    0, DROCE_DIM(fields));
	tcase_add_test(tc, test_bth_set_psn_max_leaves_ackreq_and_resv7);
	tcase_add_test(tc, test_bth_set_qpn_max_leaves_fecn_becn_resv6);
	tcase_add_test(tc, test_bth_decode_golden);
	tcase_add_test(tc, test_hdrs_decode_captured_cmp_swap);
	tcase_add_test(tc, test_hdrs_decode_captured_atomic_ack);
	tcase_add_test(tc, test_hdrs_decode_captured_read_request_and_ud_send);
	tcase_add_test(tc, test_immdt_keeps_network_order);
	tcase_add_test(tc, test_wire_structs_have_on_wire_sizes_and_2_byte_alignment);
	tcase_add_test(tc, test_ipv4_hdr_sum_equals_rte_raw_cksum);
	return tc;
}
