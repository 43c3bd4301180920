/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Suite "cc": DCQCN's reaction and notification points against the
 * paper's equations (Zhu et al., SIGCOMM 2015), computed here independently
 * in doubles, and the pacer's rate and burst.
 */

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "droce_cc.h"
#include "droce_core.h"

#define US	1000ull
#define MS	(1000 * US)
#define GBPS	1000000000ull
#define MBPS	1000000ull

static struct droce_dcqcn_params P;

static void
setup(void)
{
	droce_dcqcn_params_default(&P);
}

/* |a - b| within @p rel of b */
#define ck_near(a, b, rel) \
	ck_assert_msg(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1.0, \
		      "%s = %.1f, expected %.1f", #a, (double)(a), (double)(b))

START_TEST(test_defaults_are_connectx)
{
	static const struct { const char *name; uint32_t v; } want[] = {
		{ "rpg_time_reset", 300 }, { "rpg_byte_reset", 32767 }, { "rpg_threshold", 1 },
		{ "rpg_ai_rate", 5 }, { "rpg_hai_rate", 50 }, { "rpg_gd", 11 },
		{ "rpg_min_dec_fac", 50 }, { "rpg_min_rate", 1 }, { "rpg_max_rate", 0 },
		{ "rate_to_set_on_first_cnp", 0 }, { "rate_reduce_monitor_period", 4 },
		{ "dce_tcp_g", 1019 }, { "dce_tcp_rtt", 1 }, { "initial_alpha_value", 1023 },
		{ "clamp_tgt_rate", 0 }, { "clamp_tgt_rate_after_time_inc", 1 },
		{ "min_time_between_cnps", 4 }, { "cnp_dscp", 48 }, { "cnp_802p_prio", 6 },
	};
	unsigned int i, n;
	uint32_t v;

	droce_dcqcn_param_descs(&n);
	ck_assert_uint_eq(n, DROCE_DIM(want));
	for (i = 0; i < DROCE_DIM(want); i++) {
		ck_assert_int_eq(droce_dcqcn_param_get(&P, want[i].name, &v), 0);
		ck_assert_msg(v == want[i].v, "%s = %u, want %u", want[i].name, v, want[i].v);
	}
	ck_assert_int_eq(droce_dcqcn_param_set(&P, "rpg_gd", 16), -ERANGE);
	ck_assert_int_eq(droce_dcqcn_param_set(&P, "rpg_min_dec_fac", 101), -ERANGE);
	ck_assert_int_eq(droce_dcqcn_param_set(&P, "no_such", 1), -ENOENT);
	ck_assert_int_eq(droce_dcqcn_param_set(&P, "rpg_ai_rate", 40), 0);
	ck_assert_uint_eq(P.rpg_ai_rate, 40);
}
END_TEST

START_TEST(test_first_cnp_cuts_by_alpha_half)
{
	struct droce_dcqcn_rp rp;
	double alpha = 1023 / 1024.0;

	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	ck_assert_uint_eq(droce_dcqcn_rp_rate(&rp), 10 * GBPS);
	ck_assert_uint_eq(droce_dcqcn_rp_next_event(&rp), UINT64_MAX);
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, 1000), DROCE_DCQCN_CUT);
	/* RC <- RC (1 - alpha/2), RT <- the rate before */
	ck_near(rp.rc, 10e9 * (1 - alpha / 2), 1e-9);
	ck_assert_uint_eq(rp.rt, 10 * GBPS);
	ck_assert_uint_eq(droce_dcqcn_rp_rate(&rp), rp.rc);
	ck_assert_uint_eq(droce_dcqcn_rp_next_event(&rp), 1000 + 300 * US);
}
END_TEST

/* 1 000-byte packets every @p gap_ns from @p t for @p span_ns; @return the time after */
static uint64_t
send_steady(struct droce_dcqcn_rp *rp, uint64_t t, uint64_t gap_ns, uint64_t span_ns)
{
	uint64_t end = t + span_ns;

	for (; t < end; t += gap_ns)
		droce_dcqcn_rp_meter(rp, 1000, t);
	return t;
}

START_TEST(test_first_cnp_starts_from_the_metered_rate)
{
	struct droce_dcqcn_rp rp;
	double alpha = 1023 / 1024.0;
	uint64_t t, rc;

	/* a 100 Gb/s port whose QP sends 1 000 bytes every 40 us: 200 Mb/s */
	droce_dcqcn_rp_init(&rp, 100 * GBPS);
	t = send_steady(&rp, 1 * MS, 40 * US, 2 * MS);
	ck_near(droce_dcqcn_rp_sent_rate(&rp, t), 200e6, 0.05);
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, t), DROCE_DCQCN_CUT);
	/* RT: the rate it sent at; RC: that cut by alpha/2, not 100 Gb/s cut */
	ck_near(rp.rt, 200e6, 0.05);
	ck_near(rp.rc, 200e6 * (1 - alpha / 2), 0.05);
	/* later cuts start from RC, whatever was metered (here less: 40 Mb/s) */
	t = send_steady(&rp, t, 200 * US, 4 * MS);
	droce_dcqcn_rp_advance(&rp, &P, t);
	ck_assert_uint_gt(rp.t_stage, 0);
	rc = rp.rc;
	ck_assert_uint_gt(rc, 100 * MBPS);
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, t), DROCE_DCQCN_CUT);
	ck_assert_uint_eq(rp.rt, rc);
}
END_TEST

START_TEST(test_meter_at_any_rate)
{
	struct droce_dcqcn_rp rp;
	uint64_t t;

	/* a packet every 2 ms (4 Mb/s) and every 100 ns (80 Gb/s) read alike */
	droce_dcqcn_rp_init(&rp, 100 * GBPS);
	t = send_steady(&rp, 1 * MS, 2 * MS, 80 * MS);
	ck_near(droce_dcqcn_rp_sent_rate(&rp, t), 4e6, 0.05);
	t = send_steady(&rp, t, 100, 2 * MS);
	ck_near(droce_dcqcn_rp_sent_rate(&rp, t), 80e9, 0.05);
}
END_TEST

START_TEST(test_no_meter_reading_cuts_rc)
{
	struct droce_dcqcn_rp rp;
	double alpha = 1023 / 1024.0;
	uint64_t t;

	/* never metered: the cut is the paper's, from the line rate */
	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	ck_assert_uint_eq(droce_dcqcn_rp_sent_rate(&rp, 5 * MS), 0);
	/* metered long ago, then idle: no reading either */
	t = send_steady(&rp, 1 * MS, 40 * US, 1 * MS);
	ck_assert_uint_gt(droce_dcqcn_rp_sent_rate(&rp, t), 0);
	ck_assert_uint_eq(droce_dcqcn_rp_sent_rate(&rp, t + 30 * MS), 0);
	/* a few packets after the idle time: too few to tell */
	t = send_steady(&rp, t + 30 * MS, 40 * US, 120 * US);
	ck_assert_uint_eq(droce_dcqcn_rp_sent_rate(&rp, t), 0);
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, t), DROCE_DCQCN_CUT);
	ck_near(rp.rc, 10e9 * (1 - alpha / 2), 1e-9);
	ck_assert_uint_eq(rp.rt, 10 * GBPS);
	/* a QP metered above RC is cut from RC */
	droce_dcqcn_rp_init(&rp, 1 * GBPS);
	t = send_steady(&rp, 1 * MS, 4 * US, 1 * MS);	/* 2 Gb/s: more than the line */
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, t), DROCE_DCQCN_CUT);
	ck_near(rp.rc, 1e9 * (1 - alpha / 2), 1e-9);
}
END_TEST

START_TEST(test_alpha_rises_with_cnps_and_decays_without)
{
	struct droce_dcqcn_rp rp;
	double g = 1 - 1019 / 1024.0;	/* the paper's g */
	double a = 1023 / 1024.0;
	unsigned int i;

	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, 0);
	/* the period that held the CNP: alpha <- (1 - g) alpha + g */
	droce_dcqcn_rp_advance(&rp, &P, 1 * US);
	a = (1 - g) * a + g;
	ck_near(rp.alpha * 1e6, a * 1e6, 1e-9);
	/* 55 periods without one: alpha <- (1 - g) alpha each */
	for (i = 0; i < 55; i++)
		a = (1 - g) * a;
	droce_dcqcn_rp_advance(&rp, &P, 56 * US);
	ck_near(rp.alpha * 1e6, a * 1e6, 1e-9);
	/* a CNP in a period raises it at the period's end */
	droce_dcqcn_rp_cnp(&rp, &P, 56 * US + 500);
	droce_dcqcn_rp_advance(&rp, &P, 57 * US);
	a = (1 - g) * a + g;
	ck_near(rp.alpha * 1e6, a * 1e6, 1e-9);
}
END_TEST

START_TEST(test_cut_uses_current_alpha_and_clamps_target)
{
	struct droce_dcqcn_rp rp;
	double g = 1 - 1019 / 1024.0, a = 1023 / 1024.0, rc;
	unsigned int i;

	P.clamp_tgt_rate = 1;		/* the paper: every cut remembers RC as RT */
	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, 0);
	rc = 10e9 * (1 - a / 2);
	a = (1 - g) * a + g;
	for (i = 0; i < 99; i++)
		a = (1 - g) * a;
	droce_dcqcn_rp_cnp(&rp, &P, 100 * US);	/* alpha now as after 100 periods */
	ck_near(rp.rt, rc, 1e-9);
	rc *= 1 - a / 2;
	ck_near(rp.rc, rc, 1e-6);
}
END_TEST

START_TEST(test_cnps_inside_monitor_period_cut_once_at_its_end)
{
	struct droce_dcqcn_rp rp;
	uint64_t after_first;

	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, 0);
	after_first = rp.rc;
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, 1 * US), DROCE_DCQCN_DEFERRED);
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, 2 * US), DROCE_DCQCN_DEFERRED);
	ck_assert_uint_eq(rp.rc, after_first);
	ck_assert_uint_eq(droce_dcqcn_rp_next_event(&rp), 4 * US);
	droce_dcqcn_rp_advance(&rp, &P, 4 * US);
	ck_assert_uint_lt(rp.rc, after_first);
	ck_assert(!rp.cut_pending);
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, 8 * US), DROCE_DCQCN_CUT);
}
END_TEST

/*
 * The paper's increase (F = 5): after a cut, the first F timer expiries
 * are fast recovery (RT kept, RC halfway to it), the next ones additive
 * (RT + R_AI), and once the byte counter has had F events too, hyper
 * (RT + R_HAI).
 */
START_TEST(test_increase_stages)
{
	struct droce_dcqcn_rp rp;
	double rc, rt;
	uint64_t t;
	unsigned int i;

	P.rpg_threshold = 5;
	P.rpg_byte_reset = 0;		/* the timer alone first */
	P.clamp_tgt_rate = 1;
	droce_dcqcn_rp_init(&rp, 40 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, 0);
	rt = 40e9;
	rc = (double)rp.rc;
	for (i = 1, t = 300 * US; i <= 5; i++, t += 300 * US) {	/* fast recovery */
		droce_dcqcn_rp_advance(&rp, &P, t);
		rc = (rt + rc) / 2;
		ck_near(rp.rt, rt, 0);
		ck_near(rp.rc, rc, 1e-9);
	}
	/* a cut in between: RT <- RC, counters restart; then 5 more of fast recovery */
	droce_dcqcn_rp_cnp(&rp, &P, t - 150 * US);
	rt = rc;
	rc = (double)rp.rc;
	for (i = 1, t = t - 150 * US + 300 * US; i <= 5; i++, t += 300 * US) {
		droce_dcqcn_rp_advance(&rp, &P, t);
		rc = (rt + rc) / 2;
	}
	ck_near(rp.rc, rc, 1e-9);
	for (i = 1; i <= 3; i++, t += 300 * US) {			/* additive */
		droce_dcqcn_rp_advance(&rp, &P, t);
		rt += 5e6;
		rc = (rt + rc) / 2;
		ck_near(rp.rt, rt, 1e-9);
		ck_near(rp.rc, rc, 1e-9);
	}
	/* now the byte counter: its first F events, while T >= F, are additive */
	P.rpg_byte_reset = 10000;
	for (i = 1; i <= 5; i++) {
		droce_dcqcn_rp_sent(&rp, &P, 10000, t - 200 * US);
		rt += 5e6;
		rc = (rt + rc) / 2;
	}
	ck_near(rp.rt, rt, 1e-9);
	ck_near(rp.rc, rc, 1e-9);
	for (i = 1; i <= 4; i++) {					/* hyper */
		droce_dcqcn_rp_sent(&rp, &P, 10000, t - 200 * US);
		rt += 50e6;
		rc = (rt + rc) / 2;
		ck_near(rp.rt, rt, 1e-9);
		ck_near(rp.rc, rc, 1e-9);
	}
	droce_dcqcn_rp_advance(&rp, &P, t);			/* the timer's expiry: hyper too */
	rt += 50e6;
	rc = (rt + rc) / 2;
	ck_near(rp.rc, rc, 1e-9);
}
END_TEST

START_TEST(test_connectx_threshold_one)
{
	struct droce_dcqcn_rp rp;

	/* F = 1: one fast recovery, then additive until the byte counter has had one event */
	P.rate_to_set_on_first_cnp = 1000;
	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, 0);
	droce_dcqcn_rp_advance(&rp, &P, 300 * US);
	ck_assert_uint_eq(rp.rt, 1 * GBPS);
	ck_assert_uint_eq(rp.rc, 1 * GBPS);
	droce_dcqcn_rp_advance(&rp, &P, 600 * US);
	ck_assert_uint_eq(rp.rt, 1 * GBPS + 5 * MBPS);
	droce_dcqcn_rp_sent(&rp, &P, 32767, 700 * US);		/* T 2, B 0: additive */
	ck_assert_uint_eq(rp.rt, 1 * GBPS + 10 * MBPS);
	droce_dcqcn_rp_sent(&rp, &P, 32767, 800 * US);		/* T 2, B 1: hyper */
	ck_assert_uint_eq(rp.rt, 1 * GBPS + 60 * MBPS);
}
END_TEST

START_TEST(test_minimum_rate_and_min_dec_fac)
{
	struct droce_dcqcn_rp rp;
	uint64_t t = 0, before;
	unsigned int i;

	P.rpg_gd = 10;			/* a cut of alpha * RC: near all of it */
	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, t);
	ck_assert_uint_eq(rp.rc, 5 * GBPS);	/* rpg_min_dec_fac 50: at most half */
	P.rpg_min_dec_fac = 0;
	for (i = 0; i < 100; i++) {
		t += 5 * US;
		before = rp.rc;
		droce_dcqcn_rp_cnp(&rp, &P, t);
		ck_assert_uint_le(rp.rc, before);
		ck_assert_uint_ge(rp.rc, 1 * MBPS);
	}
	ck_assert_uint_eq(rp.rc, 1 * MBPS);	/* rpg_min_rate */
	P.rpg_min_dec_fac = 100;		/* no cuts at all */
	t += 5 * US;
	rp.rc = 3 * GBPS;
	droce_dcqcn_rp_cnp(&rp, &P, t);
	ck_assert_uint_eq(rp.rc, 3 * GBPS);
}
END_TEST

START_TEST(test_rate_to_set_on_first_cnp)
{
	struct droce_dcqcn_rp rp;

	P.rate_to_set_on_first_cnp = 2000;
	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, 0), DROCE_DCQCN_FIRST_SET);
	ck_assert_uint_eq(rp.rc, 2 * GBPS);
	ck_assert_uint_eq(rp.rt, 2 * GBPS);
	/* the next is a cut */
	ck_assert_int_eq(droce_dcqcn_rp_cnp(&rp, &P, 10 * US), DROCE_DCQCN_CUT);
	ck_assert_uint_lt(rp.rc, 2 * GBPS);
}
END_TEST

START_TEST(test_target_clamped_only_after_a_timer_increase)
{
	struct droce_dcqcn_rp rp;
	uint64_t rc;

	P.rpg_byte_reset = 1000;
	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, 0);
	droce_dcqcn_rp_sent(&rp, &P, 1000, 10 * US);	/* a byte counter increase only */
	droce_dcqcn_rp_cnp(&rp, &P, 20 * US);
	ck_assert_uint_eq(rp.rt, 10 * GBPS);		/* kept */
	droce_dcqcn_rp_advance(&rp, &P, 320 * US);	/* a timer increase */
	rc = rp.rc;
	droce_dcqcn_rp_cnp(&rp, &P, 330 * US);
	ck_assert_uint_eq(rp.rt, rc);			/* clamped to the rate before */
	P.clamp_tgt_rate_after_time_inc = 0;
	droce_dcqcn_rp_advance(&rp, &P, 630 * US);
	droce_dcqcn_rp_cnp(&rp, &P, 640 * US);
	ck_assert_uint_eq(rp.rt, rc);			/* not clamped again */
}
END_TEST

START_TEST(test_recovers_to_line_rate_then_unlimited)
{
	struct droce_dcqcn_rp rp;
	uint64_t t;

	P.rpg_max_rate = 1000;		/* recover to 1 Gb/s though the line is 10 */
	droce_dcqcn_rp_init(&rp, 10 * GBPS);
	droce_dcqcn_rp_cnp(&rp, &P, 0);
	ck_assert_uint_lt(rp.rc, 600 * MBPS);
	for (t = 300 * US; rp.limited && t < 10000 * MS; t += 300 * US)
		droce_dcqcn_rp_advance(&rp, &P, t);
	ck_assert(!rp.limited);
	ck_assert_uint_eq(rp.rc, 1 * GBPS);
	ck_assert_uint_eq(droce_dcqcn_rp_next_event(&rp), UINT64_MAX);
	/* an idle QP's timers all at once: the same end, bounded work */
	droce_dcqcn_rp_cnp(&rp, &P, t);
	droce_dcqcn_rp_advance(&rp, &P, t + 3600ull * 1000 * MS);
	ck_assert(!rp.limited);
}
END_TEST

START_TEST(test_np_one_cnp_per_min_time)
{
	struct droce_cc_np np = { 0 };

	ck_assert(droce_cc_np_cnp_due(&np, 4 * US, 100));
	ck_assert(!droce_cc_np_cnp_due(&np, 4 * US, 100 + 3 * US));
	ck_assert(droce_cc_np_cnp_due(&np, 4 * US, 100 + 4 * US));
	ck_assert(droce_cc_np_cnp_due(&np, 0, 100 + 4 * US));	/* 0: every mark */
}
END_TEST

START_TEST(test_pacer_holds_rate_and_burst)
{
	struct droce_pacer pc = { 0 };
	uint64_t now = 1 * MS, sent = 0, start = now;
	unsigned int burst = 0;

	droce_pacer_set(&pc, 100 * MBPS, 16384, now);
	/* an idle bucket: the burst and one packet go at once */
	while (droce_pacer_ready(&pc, now)) {
		droce_pacer_charge(&pc, 1000, now);
		burst++;
	}
	ck_assert_uint_eq(burst, 17);
	/* then one 1000-byte packet per 80 us, exactly, whatever the step */
	sent = burst * 1000ull;
	while (now < start + 1000 * MS) {
		now = droce_pacer_next(&pc, now) + 7;	/* a little late each time */
		droce_pacer_charge(&pc, 1000, now);
		sent += 1000;
	}
	/* the burst on top of the rate: 1.3 ms of 1 s */
	ck_near(sent * 8.0, 100e6 * (double)(now - start) / 1e9, 0.002);
	/* odd sizes at a rate that does not divide: the remainder is carried */
	droce_pacer_set(&pc, 333333333, 0, now);
	start = now = droce_pacer_next(&pc, now);
	for (sent = 0; sent < 100000000; sent += 77) {
		now = droce_pacer_next(&pc, now);
		droce_pacer_charge(&pc, 77, now);
	}
	ck_near((double)(pc.tat - start), sent * 8e9 / 333333333.0, 1e-9);
	droce_pacer_set(&pc, 0, 0, now);
	ck_assert(droce_pacer_ready(&pc, 0));
}
END_TEST

START_TEST(test_pacer_debt_follows_the_rate)
{
	struct droce_pacer pc = { 0 };
	uint64_t now = 1 * MS;

	/* 64 KiB owed at 1 Mb/s: 524 ms */
	droce_pacer_set(&pc, 1 * MBPS, 2000, now);
	droce_pacer_charge(&pc, 65536, now);
	ck_assert_uint_eq(pc.tat - now, 65536ull * 8 * 1000);
	/* at 100 Mb/s the same bytes are owed for 5.2 ms, not 524 */
	droce_pacer_set(&pc, 100 * MBPS, 2000, now + 24 * MS);
	ck_near(pc.tat - (now + 24 * MS), (65536.0 * 8 * 1000 - 24e6) / 100, 1e-6);
	/* unpaced and paced again: nothing owed */
	droce_pacer_set(&pc, 0, 0, now + 25 * MS);
	droce_pacer_set(&pc, 10 * MBPS, 2000, now + 25 * MS);
	ck_assert(droce_pacer_ready(&pc, now + 25 * MS));
	ck_assert_uint_eq(pc.tat, now + 25 * MS);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cc");
	TCase *tc = tcase_create("dcqcn");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_defaults_are_connectx);
	tcase_add_test(tc, test_first_cnp_cuts_by_alpha_half);
	tcase_add_test(tc, test_alpha_rises_with_cnps_and_decays_without);
	tcase_add_test(tc, test_cut_uses_current_alpha_and_clamps_target);
	tcase_add_test(tc, test_cnps_inside_monitor_period_cut_once_at_its_end);
	tcase_add_test(tc, test_increase_stages);
	tcase_add_test(tc, test_connectx_threshold_one);
	tcase_add_test(tc, test_minimum_rate_and_min_dec_fac);
	tcase_add_test(tc, test_rate_to_set_on_first_cnp);
	tcase_add_test(tc, test_target_clamped_only_after_a_timer_increase);
	tcase_add_test(tc, test_recovers_to_line_rate_then_unlimited);
	tcase_add_test(tc, test_np_one_cnp_per_min_time);
	tcase_add_test(tc, test_pacer_holds_rate_and_burst);
	tcase_add_test(tc, test_first_cnp_starts_from_the_metered_rate);
	tcase_add_test(tc, test_no_meter_reading_cuts_rc);
	tcase_add_test(tc, test_meter_at_any_rate);
	tcase_add_test(tc, test_pacer_debt_follows_the_rate);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
