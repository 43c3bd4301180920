/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * TCases "qp_state" (the modify_qp transition and attribute-mask table) and
 * "qp_attr" (attribute value ranges).
 *
 * The oracle below is written from the IBA's QP state transition table as
 * the Linux kernel's ib_modify_qp_is_ok() encodes it, independently of the
 * table in verbs_qp_state.c, and pinned by the exact masks rdma-core's
 * ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong pass.
 */

#include "droce_verbs_qp_state.h"	/* first: the header stands alone */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <check.h>

#include "test_verbs.h"

#define M(x) IBV_QP_##x

enum { RC, UC, UD, NTYPES };

static const enum ibv_qp_type qpt[NTYPES] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
static const char *const qpt_name[NTYPES] = { "RC", "UC", "UD" };

struct expect {
	enum ibv_qp_state from, to;
	uint32_t req[NTYPES];
	uint32_t opt[NTYPES];
};

#define RTS_OPT_RC (M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) | \
		    M(PATH_MIG_STATE))
#define RTS_OPT_UC (M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) | M(PATH_MIG_STATE))
#define RTS_OPT_UD (M(CUR_STATE) | M(QKEY))

static const struct expect oracle[] = {
	{ IBV_QPS_RESET, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_RESET, IBV_QPS_INIT,
	  { M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
	    M(PKEY_INDEX) | M(PORT) | M(QKEY) },
	  { 0 } },
	{ IBV_QPS_INIT, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_INIT, IBV_QPS_ERR, { 0 }, { 0 } },
	{ IBV_QPS_INIT, IBV_QPS_INIT, { 0 },
	  { M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
	    M(PKEY_INDEX) | M(PORT) | M(QKEY) } },
	{ IBV_QPS_INIT, IBV_QPS_RTR,
	  { M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) |
	    M(MIN_RNR_TIMER),
	    M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN), 0 },
	  { M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX),
	    M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX), M(PKEY_INDEX) | M(QKEY) } },
	{ IBV_QPS_RTR, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_RTR, IBV_QPS_ERR, { 0 }, { 0 } },
	{ IBV_QPS_RTR, IBV_QPS_RTS,
	  { M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(SQ_PSN) | M(MAX_QP_RD_ATOMIC),
	    M(SQ_PSN), M(SQ_PSN) },
	  { RTS_OPT_RC, RTS_OPT_UC, RTS_OPT_UD } },
	{ IBV_QPS_RTS, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_RTS, IBV_QPS_ERR, { 0 }, { 0 } },
	{ IBV_QPS_RTS, IBV_QPS_RTS, { 0 }, { RTS_OPT_RC, RTS_OPT_UC, RTS_OPT_UD } },
	{ IBV_QPS_RTS, IBV_QPS_SQD, { 0 },
	  { M(EN_SQD_ASYNC_NOTIFY), M(EN_SQD_ASYNC_NOTIFY), M(EN_SQD_ASYNC_NOTIFY) } },
	{ IBV_QPS_SQD, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_SQD, IBV_QPS_ERR, { 0 }, { 0 } },
	{ IBV_QPS_SQD, IBV_QPS_RTS, { 0 }, { RTS_OPT_RC, RTS_OPT_UC, RTS_OPT_UD } },
	{ IBV_QPS_SQD, IBV_QPS_SQD, { 0 },
	  { M(PORT) | M(AV) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC) |
	    M(MAX_DEST_RD_ATOMIC) | M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX) |
	    M(MIN_RNR_TIMER) | M(PATH_MIG_STATE),
	    M(AV) | M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX) | M(PATH_MIG_STATE),
	    M(PKEY_INDEX) | M(QKEY) } },
	{ IBV_QPS_SQE, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_SQE, IBV_QPS_ERR, { 0 }, { 0 } },
	{ IBV_QPS_SQE, IBV_QPS_RTS, { 0 },
	  { 0, M(CUR_STATE) | M(ACCESS_FLAGS), M(CUR_STATE) | M(QKEY) } },
	{ IBV_QPS_ERR, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_ERR, IBV_QPS_ERR, { 0 }, { 0 } },
};

static const struct expect *
oracle_find(enum ibv_qp_state from, enum ibv_qp_state to)
{
	for (unsigned int i = 0; i < sizeof(oracle) / sizeof(oracle[0]); i++)
		if (oracle[i].from == from && oracle[i].to == to)
			return &oracle[i];
	return NULL;
}

/* Every mask bit verbs.h defines (bits 21-24 were never exposed). */
#define ALL_BITS ((uint32_t)((1u << 21) - 1) | M(RATE_LIMIT))

static const struct droce_qp_limits lim = {
	.max_mtu = IBV_MTU_1024,
	.max_rd_atomic = 16,
	.max_dest_rd_atomic = 8,
	.phys_port_cnt = 1,
	.pkey_tbl_len = 1,
	.gid_tbl_len = 4,
};

/* Attribute values every check accepts. */
static struct ibv_qp_attr
good_attr(void)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	a.port_num = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 3;
	a.ah_attr.grh.hop_limit = 64;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0xabcdef;
	a.rq_psn = 0x123456;
	a.sq_psn = 0x654321;
	a.max_dest_rd_atomic = 1;
	a.max_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.qkey = 0x11111111;
	return a;
}

/* One modify step as a pingpong example does it. */
static void
step(enum ibv_qp_type type, enum ibv_qp_state *state, enum ibv_qp_state to, int mask)
{
	struct ibv_qp_attr a = good_attr();
	enum ibv_qp_state next = IBV_QPS_UNKNOWN;

	a.qp_state = to;
	a.cur_qp_state = *state;
	ck_assert_msg(droce_qp_modify_check(type, *state, &a, mask, &lim, &next) == 0,
		      "%s -> %s mask %#x", droce_qp_state_name(*state), droce_qp_state_name(to),
		      (unsigned int)mask);
	ck_assert_int_eq(next, to);
	*state = next;
}

/* -------------------------------------------------------------- qp_state */

START_TEST(test_qp_rc_pingpong_modify_sequence_is_accepted)
{
	enum ibv_qp_state s = IBV_QPS_RESET;

	/* libibverbs/examples/rc_pingpong.c */
	step(IBV_QPT_RC, &s, IBV_QPS_INIT, M(STATE) | M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS));
	step(IBV_QPT_RC, &s, IBV_QPS_RTR, M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) |
	     M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER));
	step(IBV_QPT_RC, &s, IBV_QPS_RTS, M(STATE) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) |
	     M(SQ_PSN) | M(MAX_QP_RD_ATOMIC));
	step(IBV_QPT_RC, &s, IBV_QPS_ERR, M(STATE));
	step(IBV_QPT_RC, &s, IBV_QPS_RESET, M(STATE));
}
END_TEST

START_TEST(test_qp_uc_and_ud_pingpong_modify_sequences_are_accepted)
{
	enum ibv_qp_state s = IBV_QPS_RESET;

	/* libibverbs/examples/uc_pingpong.c */
	step(IBV_QPT_UC, &s, IBV_QPS_INIT, M(STATE) | M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS));
	step(IBV_QPT_UC, &s, IBV_QPS_RTR, M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) |
	     M(RQ_PSN));
	step(IBV_QPT_UC, &s, IBV_QPS_RTS, M(STATE) | M(SQ_PSN));

	/* libibverbs/examples/ud_pingpong.c */
	s = IBV_QPS_RESET;
	step(IBV_QPT_UD, &s, IBV_QPS_INIT, M(STATE) | M(PKEY_INDEX) | M(PORT) | M(QKEY));
	step(IBV_QPT_UD, &s, IBV_QPS_RTR, M(STATE));
	step(IBV_QPT_UD, &s, IBV_QPS_RTS, M(STATE) | M(SQ_PSN));
	step(IBV_QPT_UD, &s, IBV_QPS_SQD, M(STATE) | M(EN_SQD_ASYNC_NOTIFY));
	step(IBV_QPT_UD, &s, IBV_QPS_SQD, M(QKEY));
	step(IBV_QPT_UD, &s, IBV_QPS_RTS, M(STATE) | M(CUR_STATE));
}
END_TEST

/* A pair that is no transition refuses every mask. */
static void
check_no_transition(int t, enum ibv_qp_state from, enum ibv_qp_state to)
{
	ck_assert_msg(droce_qp_state_check(qpt[t], from, to, M(STATE)) == -EINVAL,
		      "%s %s -> %s", qpt_name[t], droce_qp_state_name(from),
		      droce_qp_state_name(to));
	ck_assert_int_eq(droce_qp_state_check(qpt[t], from, to, (int)ALL_BITS), -EINVAL);
	ck_assert_int_eq(droce_qp_state_masks(qpt[t], from, to, NULL, NULL), -EINVAL);
}

START_TEST(test_qp_transitions_outside_the_table_are_einval)
{
	int t, from, to, n = 0;

	for (t = 0; t < NTYPES; t++) {
		for (from = IBV_QPS_RESET; from <= IBV_QPS_ERR; from++) {
			for (to = IBV_QPS_RESET; to <= IBV_QPS_ERR; to++) {
				if (oracle_find(from, to) != NULL)
					continue;
				check_no_transition(t, from, to);
				n++;
			}
		}
	}
	ck_assert_int_eq(n, NTYPES * (49 - 22));	/* 22 transitions exist */
}
END_TEST

/* One transition for one QP type: required set alone and with all of its
 * optional set pass; dropping any required bit or adding any bit outside
 * both sets fails. */
static void
check_transition(const struct expect *e, int t)
{
	const uint32_t req = e->req[t], opt = e->opt[t];
	const char *from = droce_qp_state_name(e->from), *to = droce_qp_state_name(e->to);
	unsigned int b;

	ck_assert_msg(droce_qp_state_check(qpt[t], e->from, e->to, (int)(M(STATE) | req)) == 0,
		      "%s %s -> %s with its required set", qpt_name[t], from, to);
	ck_assert_int_eq(droce_qp_state_check(qpt[t], e->from, e->to,
					      (int)(M(STATE) | req | opt)), 0);
	for (b = 0; b < 32; b++) {
		uint32_t bit = 1u << b, mask;
		int want;

		if (bit == M(STATE))
			continue;
		if (req & bit) {
			mask = (M(STATE) | req) & ~bit;
			want = -EINVAL;
		} else {
			mask = M(STATE) | req | bit;
			want = (opt & bit) ? 0 : -EINVAL;
		}
		ck_assert_msg(droce_qp_state_check(qpt[t], e->from, e->to, (int)mask) == want,
			      "%s %s -> %s, %s %s: want %d", qpt_name[t], from, to,
			      (req & bit) ? "without" : "with", droce_qp_attr_name(bit), want);
	}
}

START_TEST(test_qp_each_transition_takes_exactly_its_required_and_optional_attrs)
{
	unsigned int i;
	int t;

	for (i = 0; i < sizeof(oracle) / sizeof(oracle[0]); i++)
		for (t = 0; t < NTYPES; t++)
			check_transition(&oracle[i], t);
}
END_TEST

START_TEST(test_qp_state_masks_report_the_table)
{
	uint32_t req = 0, opt = 0;
	unsigned int i, t;

	for (i = 0; i < sizeof(oracle) / sizeof(oracle[0]); i++) {
		for (t = 0; t < NTYPES; t++) {
			ck_assert_int_eq(droce_qp_state_masks(qpt[t], oracle[i].from, oracle[i].to,
							      &req, &opt), 0);
			ck_assert_uint_eq(req, oracle[i].req[t]);
			ck_assert_uint_eq(opt, oracle[i].opt[t]);
		}
	}
	/* pinned: RC needs MIN_RNR_TIMER and MAX_DEST_RD_ATOMIC to reach RTR */
	ck_assert_int_eq(droce_qp_state_masks(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, &req, NULL),
			 0);
	ck_assert_uint_eq(req & (M(MIN_RNR_TIMER) | M(MAX_DEST_RD_ATOMIC)),
			  M(MIN_RNR_TIMER) | M(MAX_DEST_RD_ATOMIC));
}
END_TEST

START_TEST(test_qp_reset_to_err_is_einval_as_in_the_kernel)
{
	int t, from;

	for (t = 0; t < NTYPES; t++) {
		ck_assert_int_eq(droce_qp_state_check(qpt[t], IBV_QPS_RESET, IBV_QPS_ERR, M(STATE)),
				 -EINVAL);
		for (from = IBV_QPS_INIT; from <= IBV_QPS_ERR; from++)
			ck_assert_int_eq(droce_qp_state_check(qpt[t], from, IBV_QPS_ERR,
							      M(STATE)), 0);
		for (from = IBV_QPS_RESET; from <= IBV_QPS_ERR; from++)
			ck_assert_int_eq(droce_qp_state_check(qpt[t], from, IBV_QPS_RESET,
							      M(STATE)), 0);
	}
}
END_TEST

START_TEST(test_qp_cur_state_only_where_leaving_rtr_rts_sqd_sqe_for_rts)
{
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RTS,
					      M(STATE) | M(CUR_STATE)), 0);
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_UD, IBV_QPS_SQE, IBV_QPS_RTS,
					      M(STATE) | M(CUR_STATE)), 0);
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_SQE, IBV_QPS_RTS,
					      M(STATE) | M(CUR_STATE)), -EINVAL);
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_INIT,
					      M(STATE) | M(CUR_STATE)), -EINVAL);
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_ERR,
					      M(STATE) | M(CUR_STATE)), -EINVAL);
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_SQD, IBV_QPS_SQD,
					      M(STATE) | M(CUR_STATE)), -EINVAL);
}
END_TEST

START_TEST(test_qp_modify_refuses_a_wrong_current_state_claim)
{
	struct ibv_qp_attr a = good_attr();
	enum ibv_qp_state next = IBV_QPS_UNKNOWN;

	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_SQD;	/* the QP is really in RTS */
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_RTS, &a,
					       M(STATE) | M(CUR_STATE), &lim, &next), -EINVAL);
	ck_assert_int_eq(next, IBV_QPS_UNKNOWN);
	a.cur_qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_RTS, &a,
					       M(STATE) | M(CUR_STATE), &lim, &next), 0);
	ck_assert_int_eq(next, IBV_QPS_RTS);
}
END_TEST

START_TEST(test_qp_modify_without_the_state_bit_stays_put)
{
	struct ibv_qp_attr a = good_attr();
	enum ibv_qp_state next = IBV_QPS_UNKNOWN;

	a.qp_state = IBV_QPS_ERR;	/* ignored without IBV_QP_STATE */
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_RTS, &a, M(MIN_RNR_TIMER), &lim,
					       &next), 0);
	ck_assert_int_eq(next, IBV_QPS_RTS);
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_INIT, &a, M(PKEY_INDEX), &lim,
					       &next), 0);
	ck_assert_int_eq(next, IBV_QPS_INIT);
	/* RTR -> RTR is no transition, even with nothing to change */
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_RTR, &a, 0, &lim, &next),
			 -EINVAL);
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_RESET, &a, 0, &lim, &next), 0);
}
END_TEST

START_TEST(test_qp_other_types_and_states_are_einval)
{
	static const enum ibv_qp_type others[] = {
		IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_DRIVER, 0,
	};
	struct ibv_qp_attr a = good_attr();
	unsigned int i;

	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		ck_assert_int_eq(droce_qp_state_check(others[i], IBV_QPS_RESET, IBV_QPS_INIT,
						      M(STATE) | M(PORT)), -EINVAL);
		ck_assert_int_eq(droce_qp_attr_check(others[i], &a, 0, &lim), -EINVAL);
	}
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_UNKNOWN, IBV_QPS_RESET, M(STATE)),
			 -EINVAL);
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_UNKNOWN, M(STATE)),
			 -EINVAL);
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, (enum ibv_qp_state)-1, IBV_QPS_RESET,
					      M(STATE)), -EINVAL);
}
END_TEST

START_TEST(test_qp_state_and_attr_names_come_from_the_x_macros)
{
	static const char *const want[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	int s;

	for (s = IBV_QPS_RESET; s <= IBV_QPS_ERR; s++)
		ck_assert_str_eq(droce_qp_state_name(s), want[s]);
	ck_assert_str_eq(droce_qp_state_name(IBV_QPS_UNKNOWN), "UNKNOWN");
	ck_assert_str_eq(droce_qp_state_name((enum ibv_qp_state)-1), "UNKNOWN");
	ck_assert_str_eq(droce_qp_attr_name(IBV_QP_STATE), "STATE");
	ck_assert_str_eq(droce_qp_attr_name(IBV_QP_MIN_RNR_TIMER), "MIN_RNR_TIMER");
	ck_assert_str_eq(droce_qp_attr_name(IBV_QP_RATE_LIMIT), "RATE_LIMIT");
	ck_assert_str_eq(droce_qp_attr_name((enum ibv_qp_attr_mask)(1 << 22)), "?");
	ck_assert_str_eq(droce_qp_attr_name((enum ibv_qp_attr_mask)(IBV_QP_STATE | IBV_QP_PORT)),
			 "?");
	ck_assert_str_eq(droce_qp_attr_name((enum ibv_qp_attr_mask)0), "?");
}
END_TEST

/* --------------------------------------------------------------- qp_attr */

static int
attr_check(const struct ibv_qp_attr *a, int mask)
{
	return droce_qp_attr_check(IBV_QPT_RC, a, mask, &lim);
}

START_TEST(test_qp_attr_good_values_pass_every_check)
{
	struct ibv_qp_attr a = good_attr();
	uint32_t mask = ALL_BITS & ~(M(ALT_PATH) | M(STATE) | M(CUR_STATE));

	ck_assert_int_eq(attr_check(&a, (int)mask), 0);
	ck_assert_int_eq(droce_qp_attr_check(IBV_QPT_UD, &a, (int)mask, &lim), 0);
}
END_TEST

START_TEST(test_qp_attr_small_fields_stop_at_their_bit_width)
{
	struct ibv_qp_attr a = good_attr();

	a.timeout = 31;
	ck_assert_int_eq(attr_check(&a, M(TIMEOUT)), 0);
	a.timeout = 32;
	ck_assert_int_eq(attr_check(&a, M(TIMEOUT)), -EINVAL);
	a.timeout = 0;			/* infinite */
	ck_assert_int_eq(attr_check(&a, M(TIMEOUT)), 0);
	a.retry_cnt = 7;
	ck_assert_int_eq(attr_check(&a, M(RETRY_CNT)), 0);
	a.retry_cnt = 8;
	ck_assert_int_eq(attr_check(&a, M(RETRY_CNT)), -EINVAL);
	a.rnr_retry = 7;		/* retry forever */
	ck_assert_int_eq(attr_check(&a, M(RNR_RETRY)), 0);
	a.rnr_retry = 8;
	ck_assert_int_eq(attr_check(&a, M(RNR_RETRY)), -EINVAL);
	a.min_rnr_timer = 31;
	ck_assert_int_eq(attr_check(&a, M(MIN_RNR_TIMER)), 0);
	a.min_rnr_timer = 32;
	ck_assert_int_eq(attr_check(&a, M(MIN_RNR_TIMER)), -EINVAL);
	a.min_rnr_timer = 0;		/* 655.36 ms, legal */
	ck_assert_int_eq(attr_check(&a, M(MIN_RNR_TIMER)), 0);
}
END_TEST

START_TEST(test_qp_attr_path_mtu_runs_from_256_to_the_port_mtu)
{
	struct ibv_qp_attr a = good_attr();

	a.path_mtu = IBV_MTU_256;
	ck_assert_int_eq(attr_check(&a, M(PATH_MTU)), 0);
	a.path_mtu = IBV_MTU_1024;		/* lim.max_mtu */
	ck_assert_int_eq(attr_check(&a, M(PATH_MTU)), 0);
	a.path_mtu = IBV_MTU_2048;
	ck_assert_int_eq(attr_check(&a, M(PATH_MTU)), -EINVAL);
	a.path_mtu = (enum ibv_mtu)0;
	ck_assert_int_eq(attr_check(&a, M(PATH_MTU)), -EINVAL);
	a.path_mtu = (enum ibv_mtu)6;
	ck_assert_int_eq(attr_check(&a, M(PATH_MTU)), -EINVAL);
}
END_TEST

START_TEST(test_qp_attr_rd_atomic_depths_stop_at_the_device_limits)
{
	struct ibv_qp_attr a = good_attr();

	a.max_rd_atomic = 0;			/* no READ or atomic may be issued */
	ck_assert_int_eq(attr_check(&a, M(MAX_QP_RD_ATOMIC)), 0);
	a.max_rd_atomic = 16;
	ck_assert_int_eq(attr_check(&a, M(MAX_QP_RD_ATOMIC)), 0);
	a.max_rd_atomic = 17;
	ck_assert_int_eq(attr_check(&a, M(MAX_QP_RD_ATOMIC)), -EINVAL);
	a.max_dest_rd_atomic = 8;
	ck_assert_int_eq(attr_check(&a, M(MAX_DEST_RD_ATOMIC)), 0);
	a.max_dest_rd_atomic = 9;
	ck_assert_int_eq(attr_check(&a, M(MAX_DEST_RD_ATOMIC)), -EINVAL);
}
END_TEST

START_TEST(test_qp_attr_port_pkey_index_and_gid_index_must_exist)
{
	struct ibv_qp_attr a = good_attr();

	a.port_num = 0;
	ck_assert_int_eq(attr_check(&a, M(PORT)), -EINVAL);
	a.port_num = 2;
	ck_assert_int_eq(attr_check(&a, M(PORT)), -EINVAL);
	a.port_num = 1;
	ck_assert_int_eq(attr_check(&a, M(PORT)), 0);
	a.pkey_index = 1;
	ck_assert_int_eq(attr_check(&a, M(PKEY_INDEX)), -EINVAL);
	a.pkey_index = 0;
	ck_assert_int_eq(attr_check(&a, M(PKEY_INDEX)), 0);
	a.ah_attr.grh.sgid_index = 4;
	ck_assert_int_eq(attr_check(&a, M(AV)), -EINVAL);
	a.ah_attr.grh.sgid_index = 3;
	a.ah_attr.port_num = 0;
	ck_assert_int_eq(attr_check(&a, M(AV)), -EINVAL);
	a.ah_attr.port_num = 1;
	ck_assert_int_eq(attr_check(&a, M(AV)), 0);
}
END_TEST

START_TEST(test_qp_attr_av_without_a_grh_is_einval_on_roce)
{
	struct ibv_qp_attr a = good_attr();

	a.ah_attr.is_global = 0;
	ck_assert_int_eq(attr_check(&a, M(AV)), -EINVAL);
}
END_TEST

START_TEST(test_qp_attr_alt_path_is_refused_on_roce)
{
	struct ibv_qp_attr a = good_attr();
	enum ibv_qp_state next;

	ck_assert_int_eq(attr_check(&a, M(ALT_PATH)), -EINVAL);
	/* allowed by the mask table, refused by value */
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(droce_qp_state_check(IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RTS,
					      M(STATE) | M(ALT_PATH)), 0);
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_RTS, &a, M(STATE) | M(ALT_PATH),
					       &lim, &next), -EINVAL);
}
END_TEST

START_TEST(test_qp_attr_qpn_is_24_bits_psns_and_qkey_take_any_value)
{
	struct ibv_qp_attr a = good_attr();

	a.dest_qp_num = 0xffffff;
	ck_assert_int_eq(attr_check(&a, M(DEST_QPN)), 0);
	a.dest_qp_num = 0x1000000;
	ck_assert_int_eq(attr_check(&a, M(DEST_QPN)), -EINVAL);
	/* the kernel masks PSNs to 24 bits rather than refusing them */
	a.sq_psn = 0xffffffff;
	a.rq_psn = 0x1000000;
	ck_assert_int_eq(attr_check(&a, M(SQ_PSN) | M(RQ_PSN)), 0);
	a.qkey = 0xffffffff;
	ck_assert_int_eq(droce_qp_attr_check(IBV_QPT_UD, &a, M(QKEY), &lim), 0);
	a.qkey = 0;
	ck_assert_int_eq(droce_qp_attr_check(IBV_QPT_UD, &a, M(QKEY), &lim), 0);
}
END_TEST

START_TEST(test_qp_attr_access_flags_refuse_undefined_bits_only)
{
	struct ibv_qp_attr a = good_attr();

	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			    IBV_ACCESS_RELAXED_ORDERING;
	ck_assert_int_eq(attr_check(&a, M(ACCESS_FLAGS)), 0);
	a.qp_access_flags = 0;
	ck_assert_int_eq(attr_check(&a, M(ACCESS_FLAGS)), 0);
	a.qp_access_flags = 1u << 12;
	ck_assert_int_eq(attr_check(&a, M(ACCESS_FLAGS)), -EINVAL);
	a.qp_access_flags = 1u << 31;
	ck_assert_int_eq(attr_check(&a, M(ACCESS_FLAGS)), -EINVAL);
}
END_TEST

START_TEST(test_qp_attr_path_mig_state_and_states_stay_in_their_enums)
{
	struct ibv_qp_attr a = good_attr();

	a.path_mig_state = IBV_MIG_ARMED;
	ck_assert_int_eq(attr_check(&a, M(PATH_MIG_STATE)), 0);
	a.path_mig_state = (enum ibv_mig_state)3;
	ck_assert_int_eq(attr_check(&a, M(PATH_MIG_STATE)), -EINVAL);
	a.qp_state = IBV_QPS_UNKNOWN;
	ck_assert_int_eq(attr_check(&a, M(STATE)), -EINVAL);
	a.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(attr_check(&a, M(STATE)), 0);
	a.cur_qp_state = (enum ibv_qp_state)9;
	ck_assert_int_eq(attr_check(&a, M(CUR_STATE)), -EINVAL);
}
END_TEST

START_TEST(test_qp_attr_values_outside_the_mask_are_not_checked)
{
	struct ibv_qp_attr a;

	memset(&a, 0xff, sizeof(a));	/* every field out of range */
	ck_assert_int_eq(attr_check(&a, 0), 0);
	ck_assert_int_eq(attr_check(&a, M(QKEY) | M(SQ_PSN) | M(RQ_PSN) | M(EN_SQD_ASYNC_NOTIFY)),
			 0);
	ck_assert_int_eq(attr_check(&a, M(TIMEOUT)), -EINVAL);
}
END_TEST

START_TEST(test_qp_modify_rejects_a_bad_value_in_a_valid_transition)
{
	struct ibv_qp_attr a = good_attr();
	const int mask = M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
			 M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER);
	enum ibv_qp_state next;

	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_INIT, &a, mask, &lim, &next), 0);
	a.path_mtu = IBV_MTU_4096;		/* beyond the port */
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_INIT, &a, mask, &lim, &next),
			 -EINVAL);
	a.path_mtu = IBV_MTU_512;
	a.min_rnr_timer = 40;
	ck_assert_int_eq(droce_qp_modify_check(IBV_QPT_RC, IBV_QPS_INIT, &a, mask, &lim, &next),
			 -EINVAL);
}
END_TEST

TCase *
verbs_tcase_qp_state(void)
{
	TCase *tc = tcase_create("qp_state");

	tcase_add_test(tc, test_qp_rc_pingpong_modify_sequence_is_accepted);
	tcase_add_test(tc, test_qp_uc_and_ud_pingpong_modify_sequences_are_accepted);
	tcase_add_test(tc, test_qp_transitions_outside_the_table_are_einval);
	tcase_add_test(tc, test_qp_each_transition_takes_exactly_its_required_and_optional_attrs);
	tcase_add_test(tc, test_qp_state_masks_report_the_table);
	tcase_add_test(tc, test_qp_reset_to_err_is_einval_as_in_the_kernel);
	tcase_add_test(tc, test_qp_cur_state_only_where_leaving_rtr_rts_sqd_sqe_for_rts);
	tcase_add_test(tc, test_qp_modify_refuses_a_wrong_current_state_claim);
	tcase_add_test(tc, test_qp_modify_without_the_state_bit_stays_put);
	tcase_add_test(tc, test_qp_other_types_and_states_are_einval);
	tcase_add_test(tc, test_qp_state_and_attr_names_come_from_the_x_macros);
	return tc;
}

TCase *
verbs_tcase_qp_attr(void)
{
	TCase *tc = tcase_create("qp_attr");

	tcase_add_test(tc, test_qp_attr_good_values_pass_every_check);
	tcase_add_test(tc, test_qp_attr_small_fields_stop_at_their_bit_width);
	tcase_add_test(tc, test_qp_attr_path_mtu_runs_from_256_to_the_port_mtu);
	tcase_add_test(tc, test_qp_attr_rd_atomic_depths_stop_at_the_device_limits);
	tcase_add_test(tc, test_qp_attr_port_pkey_index_and_gid_index_must_exist);
	tcase_add_test(tc, test_qp_attr_av_without_a_grh_is_einval_on_roce);
	tcase_add_test(tc, test_qp_attr_alt_path_is_refused_on_roce);
	tcase_add_test(tc, test_qp_attr_qpn_is_24_bits_psns_and_qkey_take_any_value);
	tcase_add_test(tc, test_qp_attr_access_flags_refuse_undefined_bits_only);
	tcase_add_test(tc, test_qp_attr_path_mig_state_and_states_stay_in_their_enums);
	tcase_add_test(tc, test_qp_attr_values_outside_the_mask_are_not_checked);
	tcase_add_test(tc, test_qp_modify_rejects_a_bad_value_in_a_valid_transition);
	return tc;
}
