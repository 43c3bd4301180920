/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_wire_psn.h: 24-bit PSN arithmetic across the wrap, the AETH
 * syndrome builders, and the RNR timer and credit tables, which are typed
 * here a second time from IBA vol 1 tables 45 and 46.
 */

#include <string.h>

#include "droce_wire_psn.h"
#include "test_wire.h"

#define PSN_MAX		0xffffffu
#define PSN_HALF	0x7fffffu	/* 2^23 - 1: the furthest cmp can see */

static const uint32_t psn_edges[] = {
	0, 1, 2, 0x7ffffe, 0x7fffff, 0x800000, 0x800001, 0xfffffe, 0xffffff, 0x123456, 0xabcdef,
};

START_TEST(test_psn_add_wraps_at_24_bits)
{
	ck_assert_uint_eq(droce_psn_add(0xffffff, 1), 0);
	ck_assert_uint_eq(droce_psn_add(0xfffffe, 3), 1);
	ck_assert_uint_eq(droce_psn_add(0, 0xffffff), 0xffffff);
	ck_assert_uint_eq(droce_psn_add(0x123456, 0x1000000), 0x123456);
	ck_assert_uint_eq(droce_psn_add(0x800000, 0x800000), 0);
	ck_assert_uint_eq(droce_psn_add(5, 0), 5);
	ck_assert_uint_eq(droce_psn_add(0xffffff, 0xffffffff), 0xfffffe);
}
END_TEST

START_TEST(test_psn_cmp_orders_across_the_wrap)
{
	ck_assert_int_gt(droce_psn_cmp(0, 0xffffff), 0);	/* 0 follows 0xffffff */
	ck_assert_int_lt(droce_psn_cmp(0xffffff, 0), 0);
	ck_assert_int_gt(droce_psn_cmp(2, 0xfffffe), 0);
	ck_assert_int_eq(droce_psn_cmp(0xffffff, 0xffffff), 0);
	ck_assert_int_eq(droce_psn_cmp(0, 0), 0);
	ck_assert_int_gt(droce_psn_cmp(PSN_HALF, 0), 0);	/* 2^23 - 1 ahead */
	ck_assert_int_lt(droce_psn_cmp(0, PSN_HALF), 0);
	ck_assert_int_gt(droce_psn_cmp(0x7ffffe, 0xffffff), 0);	/* 2^23 - 1 ahead, wrapped */
	ck_assert_int_lt(droce_psn_cmp(0xffffff, 0x7ffffe), 0);
	ck_assert_int_lt(droce_psn_cmp(0x800001, 0), 0);	/* 2^23 - 1 behind */
	ck_assert_int_gt(droce_psn_cmp(0, 0x800001), 0);
	/* bits above the 24 are not part of a PSN */
	ck_assert_int_eq(droce_psn_cmp(0x01000005, 5), 0);
	ck_assert_int_gt(droce_psn_cmp(0xff000006, 5), 0);
}
END_TEST

START_TEST(test_psn_cmp_sees_up_to_2_pow_23_minus_1_either_way)
{
	static const uint32_t steps[] = {
		1, 2, 3, 0xff, 0x100, 0xffff, 0x10000, 0x123456, 0x7ffff0, PSN_HALF - 1, PSN_HALF,
	};
	unsigned int a, s;

	for (a = 0; a < DROCE_DIM(psn_edges); a++)
		for (s = 0; s < DROCE_DIM(steps); s++) {
			uint32_t p = psn_edges[a], q = droce_psn_add(p, steps[s]);

			ck_assert_msg(droce_psn_cmp(q, p) > 0, "%#x + %#x after it", p, steps[s]);
			ck_assert_msg(droce_psn_cmp(p, q) < 0, "%#x before + %#x", p, steps[s]);
			ck_assert_uint_eq(droce_psn_diff(q, p), steps[s]);
			ck_assert_uint_eq(droce_psn_diff(p, q), (0x1000000 - steps[s]) & PSN_MAX);
		}
}
END_TEST

START_TEST(test_psn_diff_is_the_forward_distance)
{
	ck_assert_uint_eq(droce_psn_diff(0, 0xffffff), 1);
	ck_assert_uint_eq(droce_psn_diff(0xffffff, 0), 0xffffff);
	ck_assert_uint_eq(droce_psn_diff(5, 5), 0);
	ck_assert_uint_eq(droce_psn_diff(3, 0xfffffe), 5);
	ck_assert_uint_le(droce_psn_diff(0, 1), PSN_MAX);
}
END_TEST

/* IBA table 45, microseconds; code 0 is the longest wait. */
static const uint32_t iba_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

START_TEST(test_rnr_timer_table_matches_iba_table_45)
{
	unsigned int c;

	ck_assert_uint_eq(droce_rnr_timer_usec(0), 655360);
	ck_assert_uint_eq(droce_rnr_timer_usec(1), 10);
	ck_assert_uint_eq(droce_rnr_timer_usec(25), 61440);	/* rxe has 61410 */
	ck_assert_uint_eq(droce_rnr_timer_usec(31), 491520);
	for (c = 0; c < 32; c++)
		ck_assert_msg(droce_rnr_timer_usec((uint8_t)c) == iba_rnr_usec[c], "code %u: %u",
			      c, droce_rnr_timer_usec((uint8_t)c));
}
END_TEST

START_TEST(test_rnr_timer_grows_with_the_code_and_code_0_is_longest)
{
	unsigned int c;

	for (c = 2; c < 32; c++)
		ck_assert_uint_gt(droce_rnr_timer_usec((uint8_t)c),
				  droce_rnr_timer_usec((uint8_t)(c - 1)));
	for (c = 1; c < 32; c++)
		ck_assert_uint_gt(droce_rnr_timer_usec(0), droce_rnr_timer_usec((uint8_t)c));
}
END_TEST

START_TEST(test_rnr_timer_takes_a_whole_rnr_syndrome)
{
	ck_assert_uint_eq(droce_rnr_timer_usec(droce_aeth_syn_rnr(25)), 61440);
	ck_assert_uint_eq(droce_rnr_timer_usec(DROCE_AETH_RNR_NAK | 1), 10);
}
END_TEST

START_TEST(test_rnr_timer_code_is_the_inverse)
{
	unsigned int c;

	for (c = 0; c < 32; c++)
		ck_assert_msg(droce_rnr_timer_code(droce_rnr_timer_usec((uint8_t)c)) == c,
			      "code %u", c);
	/* smallest code whose delay is at least the request */
	for (c = 1; c < 31; c++)
		ck_assert_uint_eq(droce_rnr_timer_code(iba_rnr_usec[c] + 1), c + 1);
	ck_assert_uint_eq(droce_rnr_timer_code(0), 1);
	ck_assert_uint_eq(droce_rnr_timer_code(1), 1);
	ck_assert_uint_eq(droce_rnr_timer_code(11), 2);
	ck_assert_uint_eq(droce_rnr_timer_code(61439), 25);
	ck_assert_uint_eq(droce_rnr_timer_code(491521), 0);	/* only code 0 waits longer */
	ck_assert_uint_eq(droce_rnr_timer_code(655360), 0);
	ck_assert_uint_eq(droce_rnr_timer_code(UINT32_MAX), 0);	/* none: the longest */
}
END_TEST

/* IBA table 46 */
static const uint32_t iba_credits[31] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768,
	1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
};

START_TEST(test_credit_table_matches_iba_table_46)
{
	unsigned int c;

	for (c = 0; c < 31; c++)
		ck_assert_msg(droce_aeth_credits((uint8_t)c) == iba_credits[c], "code %u: %u", c,
			      droce_aeth_credits((uint8_t)c));
	ck_assert_uint_eq(droce_aeth_credits(30), 32768);
	ck_assert_uint_eq(droce_aeth_credits(DROCE_AETH_CREDITS_UNLIMITED), UINT32_MAX);
	ck_assert_uint_eq(DROCE_AETH_CREDITS_UNLIMITED, 31);
	/* a whole ACK syndrome works too */
	ck_assert_uint_eq(droce_aeth_credits(droce_aeth_syn_ack(7)), 12);
}
END_TEST

START_TEST(test_credit_code_is_the_largest_not_above_the_count)
{
	unsigned int c;

	for (c = 0; c < 31; c++)
		ck_assert_msg(droce_aeth_credit_code(iba_credits[c]) == c, "code %u", c);
	for (c = 5; c < 31; c++)	/* between two counts: round down */
		ck_assert_uint_eq(droce_aeth_credit_code(iba_credits[c] - 1), c - 1);
	ck_assert_uint_eq(droce_aeth_credit_code(0), 0);
	ck_assert_uint_eq(droce_aeth_credit_code(5), 4);
	ck_assert_uint_eq(droce_aeth_credit_code(7), 5);
	ck_assert_uint_eq(droce_aeth_credit_code(100000), 30);
}
END_TEST

START_TEST(test_syndrome_builders_set_type_and_value)
{
	unsigned int v;

	for (v = 0; v < 32; v++) {
		uint8_t ack = droce_aeth_syn_ack((uint8_t)v);
		uint8_t rnr = droce_aeth_syn_rnr((uint8_t)v);

		ck_assert_uint_eq(ack, v);
		ck_assert_uint_eq(droce_aeth_type(ack), DROCE_AETH_ACK);
		ck_assert_uint_eq(droce_aeth_value(ack), v);
		ck_assert_uint_eq(rnr, 0x20 | v);
		ck_assert_uint_eq(droce_aeth_type(rnr), DROCE_AETH_RNR_NAK);
		ck_assert_uint_eq(droce_aeth_value(rnr), v);
	}
	for (v = DROCE_NAK_PSN_SEQ; v <= DROCE_NAK_INVALID_RD; v++) {
		uint8_t nak = droce_aeth_syn_nak((enum droce_nak_code)v);

		ck_assert_uint_eq(nak, 0x60 | v);
		ck_assert_uint_eq(droce_aeth_type(nak), DROCE_AETH_NAK);
		ck_assert_uint_eq(droce_aeth_value(nak), v);
	}
	/* IBA table 44 pins */
	ck_assert_uint_eq(droce_aeth_syn_ack(DROCE_AETH_CREDITS_UNLIMITED), 0x1f);
	ck_assert_uint_eq(droce_aeth_syn_nak(DROCE_NAK_PSN_SEQ), 0x60);
	ck_assert_uint_eq(droce_aeth_syn_nak(DROCE_NAK_INVALID_REQ), 0x61);
	ck_assert_uint_eq(droce_aeth_syn_nak(DROCE_NAK_REM_ACCESS), 0x62);
	ck_assert_uint_eq(droce_aeth_syn_nak(DROCE_NAK_REM_OP), 0x63);
	ck_assert_uint_eq(droce_aeth_type(0x40), DROCE_AETH_RSVD);
}
END_TEST

START_TEST(test_syndrome_builders_mask_the_value_and_keep_bit_7_clear)
{
	ck_assert_uint_eq(droce_aeth_syn_ack(0xff), 0x1f);
	ck_assert_uint_eq(droce_aeth_syn_rnr(0xff), 0x3f);
	ck_assert_uint_eq(droce_aeth_syn_rnr(0x20 | 3), 0x23);
	ck_assert_uint_eq(droce_aeth_syn_nak((enum droce_nak_code)0xe1), 0x61);
	/* type and value ignore the reserved bit 7 */
	ck_assert_uint_eq(droce_aeth_type(0x80 | 0x60 | 2), DROCE_AETH_NAK);
	ck_assert_uint_eq(droce_aeth_value(0x80 | 0x60 | 2), 2);
}
END_TEST

START_TEST(test_nak_code_names)
{
	ck_assert_str_eq(droce_nak_code_name(DROCE_NAK_PSN_SEQ), "PSN_SEQ");
	ck_assert_str_eq(droce_nak_code_name(DROCE_NAK_INVALID_REQ), "INVALID_REQ");
	ck_assert_str_eq(droce_nak_code_name(DROCE_NAK_REM_ACCESS), "REM_ACCESS");
	ck_assert_str_eq(droce_nak_code_name(DROCE_NAK_REM_OP), "REM_OP");
	ck_assert_str_eq(droce_nak_code_name(DROCE_NAK_INVALID_RD), "INVALID_RD");
	ck_assert_str_eq(droce_nak_code_name(5), "RESERVED");
	ck_assert_str_eq(droce_nak_code_name(31), "RESERVED");
	ck_assert_str_eq(droce_nak_code_name(255), "RESERVED");
}
END_TEST

TCase *
test_wire_psn_tcase(void)
{
	TCase *tc = tcase_create("psn");

	tcase_add_test(tc, test_psn_add_wraps_at_24_bits);
	tcase_add_test(tc, test_psn_cmp_orders_across_the_wrap);
	tcase_add_test(tc, test_psn_cmp_sees_up_to_2_pow_23_minus_1_either_way);
	tcase_add_test(tc, test_psn_diff_is_the_forward_distance);
	tcase_add_test(tc, test_rnr_timer_table_matches_iba_table_45);
	tcase_add_test(tc, test_rnr_timer_grows_with_the_code_and_code_0_is_longest);
	tcase_add_test(tc, test_rnr_timer_takes_a_whole_rnr_syndrome);
	tcase_add_test(tc, test_rnr_timer_code_is_the_inverse);
	tcase_add_test(tc, test_credit_table_matches_iba_table_46);
	tcase_add_test(tc, test_credit_code_is_the_largest_not_above_the_count);
	tcase_add_test(tc, test_syndrome_builders_set_type_and_value);
	tcase_add_test(tc, test_syndrome_builders_mask_the_value_and_keep_bit_7_clear);
	tcase_add_test(tc, test_nak_code_names);
	return tc;
}
