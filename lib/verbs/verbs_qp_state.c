/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The modify_qp transition table and attribute value checks
 * (droce_verbs_qp_state.h). The table is constant data; every function is
 * pure, so the control thread (which admits ibv_modify_qp requests) and any
 * worker may call them at any time.
 *
 * The table lists, per transition and per QP type, the attributes the IBA
 * requires and the ones it allows (IBA vol 1 table "QP State Transition
 * Properties"), the same facts the Linux kernel's ib_modify_qp_is_ok()
 * encodes. Only RC, UC and UD exist in droce.
 */

#include <errno.h>
#include <stdbool.h>

#include "droce_core.h"
#include "droce_verbs_qp_state.h"

static const char *const qp_state_name[] = {
#define X(s) [IBV_QPS_##s] = #s,
	DROCE_QP_STATES(X)
#undef X
};

/* Attribute names by bit number. */
static const char *const qp_attr_name[32] = {
#define X(a) [__builtin_ctz(IBV_QP_##a)] = #a,
	DROCE_QP_ATTRS(X)
#undef X
};

const char *
droce_qp_state_name(enum ibv_qp_state s)
{
	return (unsigned int)s < DROCE_DIM(qp_state_name) ? qp_state_name[s] : "UNKNOWN";
}

const char *
droce_qp_attr_name(enum ibv_qp_attr_mask bit)
{
	unsigned int b = (unsigned int)bit;

	if (b == 0 || (b & (b - 1)) != 0 || qp_attr_name[__builtin_ctz(b)] == NULL)
		return "?";
	return qp_attr_name[__builtin_ctz(b)];
}

/* QP types droce has, as table columns. */
enum qp_col {
	COL_RC,
	COL_UC,
	COL_UD,
	COL_COUNT
};

struct qp_trans {
	bool valid;
	uint32_t req[COL_COUNT];
	uint32_t opt[COL_COUNT];
};

#define A(x) IBV_QP_##x

/* Attribute groups that recur in the table. */
#define INIT_RC_UC	(A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS))
#define INIT_UD		(A(PKEY_INDEX) | A(PORT) | A(QKEY))
#define TO_RTS_RC_OPT	(A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) | \
			 A(PATH_MIG_STATE))
#define TO_RTS_UC_OPT	(A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE))
#define TO_RTS_UD_OPT	(A(CUR_STATE) | A(QKEY))

/*
 * One row per transition: required then optional attributes for RC, UC, UD.
 * A transition with no row is invalid.
 */
#define TR(from, to, rc_req, rc_opt, uc_req, uc_opt, ud_req, ud_opt) \
	[IBV_QPS_##from][IBV_QPS_##to] = { \
		.valid = true, \
		.req = { [COL_RC] = (rc_req), [COL_UC] = (uc_req), [COL_UD] = (ud_req) }, \
		.opt = { [COL_RC] = (rc_opt), [COL_UC] = (uc_opt), [COL_UD] = (ud_opt) }, \
	},
#define TR_BARE(from, to) TR(from, to, 0, 0, 0, 0, 0, 0)

static const struct qp_trans qp_trans[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	TR_BARE(RESET, RESET)
	TR(RESET, INIT,
	   INIT_RC_UC, 0,
	   INIT_RC_UC, 0,
	   INIT_UD, 0)

	TR_BARE(INIT, RESET)
	TR_BARE(INIT, ERR)
	TR(INIT, INIT,
	   0, INIT_RC_UC,
	   0, INIT_RC_UC,
	   0, INIT_UD)
	TR(INIT, RTR,
	   A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) |
	   A(MIN_RNR_TIMER),
	   A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
	   A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
	   A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
	   0, A(PKEY_INDEX) | A(QKEY))

	TR_BARE(RTR, RESET)
	TR_BARE(RTR, ERR)
	TR(RTR, RTS,
	   A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) | A(MAX_QP_RD_ATOMIC),
	   TO_RTS_RC_OPT,
	   A(SQ_PSN), TO_RTS_UC_OPT,
	   A(SQ_PSN), TO_RTS_UD_OPT)

	TR_BARE(RTS, RESET)
	TR_BARE(RTS, ERR)
	TR(RTS, RTS,
	   0, TO_RTS_RC_OPT,
	   0, TO_RTS_UC_OPT,
	   0, TO_RTS_UD_OPT)
	TR(RTS, SQD,
	   0, A(EN_SQD_ASYNC_NOTIFY),
	   0, A(EN_SQD_ASYNC_NOTIFY),
	   0, A(EN_SQD_ASYNC_NOTIFY))

	TR_BARE(SQD, RESET)
	TR_BARE(SQD, ERR)
	TR(SQD, RTS,
	   0, TO_RTS_RC_OPT,
	   0, TO_RTS_UC_OPT,
	   0, TO_RTS_UD_OPT)
	/* While drained the path and the RC timers may change. */
	TR(SQD, SQD,
	   0, A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
	      A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
	      A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
	   0, A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(PATH_MIG_STATE),
	   0, A(PKEY_INDEX) | A(QKEY))

	TR_BARE(SQE, RESET)
	TR_BARE(SQE, ERR)
	/* Only UC and UD QPs reach SQE; RC errors go straight to ERR. */
	TR(SQE, RTS,
	   0, 0,
	   0, A(CUR_STATE) | A(ACCESS_FLAGS),
	   0, A(CUR_STATE) | A(QKEY))

	TR_BARE(ERR, RESET)
	TR_BARE(ERR, ERR)
};

#undef TR_BARE
#undef TR

static int
qp_col(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return COL_RC;
	case IBV_QPT_UC:
		return COL_UC;
	case IBV_QPT_UD:
		return COL_UD;
	default:
		return -1;
	}
}

static bool
qp_state_ok(enum ibv_qp_state s)
{
	return (unsigned int)s <= IBV_QPS_ERR;
}

int
droce_qp_state_masks(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
		     uint32_t *req, uint32_t *opt)
{
	int col = qp_col(type);
	const struct qp_trans *tr;

	if (col < 0 || !qp_state_ok(cur) || !qp_state_ok(next))
		return -EINVAL;
	tr = &qp_trans[cur][next];
	if (!tr->valid)
		return -EINVAL;
	if (req != NULL)
		*req = tr->req[col];
	if (opt != NULL)
		*opt = tr->opt[col];
	return 0;
}

int
droce_qp_state_check(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
		     int attr_mask)
{
	uint32_t mask = (uint32_t)attr_mask;
	uint32_t req, opt;

	if (droce_qp_state_masks(type, cur, next, &req, &opt) < 0)
		return -EINVAL;
	/* The current-state modifier exists for leaving RTR, RTS, SQD and SQE. */
	if ((mask & A(CUR_STATE)) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return -EINVAL;
	if ((mask & req) != req)
		return -EINVAL;
	if (mask & ~(req | opt | A(STATE)))
		return -EINVAL;
	return 0;
}

/* Largest values of the small fields of struct ibv_qp_attr (bit widths in
 * the IBA: 5-bit Local ACK Timeout and RNR timer codes, 3-bit counts). */
#define QP_TIMEOUT_MAX		31
#define QP_RETRY_MAX		7
#define QP_MIN_RNR_TIMER_MAX	31
#define QP_QPN_MAX		0xffffffu

static bool
qp_port_ok(uint8_t port, const struct droce_qp_limits *lim)
{
	return port >= 1 && port <= lim->phys_port_cnt;
}

int
droce_qp_attr_check(enum ibv_qp_type type, const struct ibv_qp_attr *attr, int attr_mask,
		    const struct droce_qp_limits *lim)
{
	uint32_t mask = (uint32_t)attr_mask;
	/* Every access bit rdma-core has defined: LOCAL_WRITE .. HUGETLB are
	 * bits 0-7, FLUSH_GLOBAL and FLUSH_PERSISTENT bits 8 and 9; plus the
	 * optional range. A provider ignores those that do not apply to a QP. */
	const unsigned int access_known = ((1u << 10) - 1) |
					  (unsigned int)IBV_ACCESS_OPTIONAL_RANGE;

	if (qp_col(type) < 0)
		return -EINVAL;
	if ((mask & A(STATE)) && !qp_state_ok(attr->qp_state))
		return -EINVAL;
	if ((mask & A(CUR_STATE)) && !qp_state_ok(attr->cur_qp_state))
		return -EINVAL;
	if ((mask & A(ACCESS_FLAGS)) && (attr->qp_access_flags & ~access_known))
		return -EINVAL;
	if ((mask & A(PKEY_INDEX)) && attr->pkey_index >= lim->pkey_tbl_len)
		return -EINVAL;
	if ((mask & A(PORT)) && !qp_port_ok(attr->port_num, lim))
		return -EINVAL;
	if (mask & A(AV)) {
		const struct ibv_ah_attr *ah = &attr->ah_attr;

		if (!ah->is_global || !qp_port_ok(ah->port_num, lim) ||
		    ah->grh.sgid_index >= lim->gid_tbl_len)
			return -EINVAL;
	}
	if ((mask & A(PATH_MTU)) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > lim->max_mtu))
		return -EINVAL;
	if ((mask & A(TIMEOUT)) && attr->timeout > QP_TIMEOUT_MAX)
		return -EINVAL;
	if ((mask & A(RETRY_CNT)) && attr->retry_cnt > QP_RETRY_MAX)
		return -EINVAL;
	if ((mask & A(RNR_RETRY)) && attr->rnr_retry > QP_RETRY_MAX)
		return -EINVAL;
	if ((mask & A(MAX_QP_RD_ATOMIC)) && attr->max_rd_atomic > lim->max_rd_atomic)
		return -EINVAL;
	if ((mask & A(MAX_DEST_RD_ATOMIC)) && attr->max_dest_rd_atomic > lim->max_dest_rd_atomic)
		return -EINVAL;
	if ((mask & A(MIN_RNR_TIMER)) && attr->min_rnr_timer > QP_MIN_RNR_TIMER_MAX)
		return -EINVAL;
	/* Alternate paths exist only on InfiniBand (kernel _ib_modify_qp()). */
	if (mask & A(ALT_PATH))
		return -EINVAL;
	if ((mask & A(PATH_MIG_STATE)) && (unsigned int)attr->path_mig_state > IBV_MIG_ARMED)
		return -EINVAL;
	if ((mask & A(DEST_QPN)) && attr->dest_qp_num > QP_QPN_MAX)
		return -EINVAL;
	return 0;
}

int
droce_qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state qp_state,
		      const struct ibv_qp_attr *attr, int attr_mask,
		      const struct droce_qp_limits *lim, enum ibv_qp_state *next)
{
	uint32_t mask = (uint32_t)attr_mask;
	enum ibv_qp_state to;
	int ret;

	/* The consumer's idea of the current state must be the real one. */
	if ((mask & A(CUR_STATE)) && attr->cur_qp_state != qp_state)
		return -EINVAL;
	to = (mask & A(STATE)) ? attr->qp_state : qp_state;
	ret = droce_qp_state_check(type, qp_state, to, attr_mask);
	if (ret < 0)
		return ret;
	ret = droce_qp_attr_check(type, attr, attr_mask, lim);
	if (ret < 0)
		return ret;
	if (next != NULL)
		*next = to;
	return 0;
}
