/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_QP_STATE_H
#define DROCE_VERBS_QP_STATE_H

/**
 * @file
 * The ibv_modify_qp() rules: which state transitions exist for RC, UC and UD
 * QPs, which attributes each requires and allows (IBA vol 1 section 10.3 and
 * 11.2.5, as the Linux kernel's ib_modify_qp_is_ok() table encodes them, the
 * check every rdma-core provider passes through), and the range of each
 * attribute value. Pure functions, callable from any thread.
 *
 * Transitions (anything else is -EINVAL):
 *
 *     RESET -> RESET, INIT          INIT -> RESET, ERR, INIT, RTR
 *     RTR   -> RESET, ERR, RTS      RTS  -> RESET, ERR, RTS, SQD
 *     SQD   -> RESET, ERR, RTS, SQD SQE  -> RESET, ERR, RTS
 *     ERR   -> RESET, ERR
 *
 * RESET -> ERR is not a transition: the kernel table leaves it out, so every
 * kernel-backed provider refuses it, and droce does the same.
 *
 * IBV_QP_CUR_STATE is accepted only where the table lists it as optional
 * (out of RTR, RTS, SQD and SQE, towards RTS), and droce_qp_modify_check()
 * refuses it when it names a state other than the QP's real one.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

/** QP states, in enum ibv_qp_state order (X-macro: names and tables). */
#define DROCE_QP_STATES(X) \
	X(RESET) \
	X(INIT) \
	X(RTR) \
	X(RTS) \
	X(SQD) \
	X(SQE) \
	X(ERR)

/** ibv_modify_qp() attribute mask bits droce knows, in enum ibv_qp_attr_mask order. */
#define DROCE_QP_ATTRS(X) \
	X(STATE) \
	X(CUR_STATE) \
	X(EN_SQD_ASYNC_NOTIFY) \
	X(ACCESS_FLAGS) \
	X(PKEY_INDEX) \
	X(PORT) \
	X(QKEY) \
	X(AV) \
	X(PATH_MTU) \
	X(TIMEOUT) \
	X(RETRY_CNT) \
	X(RNR_RETRY) \
	X(RQ_PSN) \
	X(MAX_QP_RD_ATOMIC) \
	X(ALT_PATH) \
	X(MIN_RNR_TIMER) \
	X(SQ_PSN) \
	X(MAX_DEST_RD_ATOMIC) \
	X(PATH_MIG_STATE) \
	X(CAP) \
	X(DEST_QPN) \
	X(RATE_LIMIT)

/** Name of a QP state ("RTS"), "UNKNOWN" for anything else. */
const char *droce_qp_state_name(enum ibv_qp_state s);

/** Name of one attribute mask bit ("PATH_MTU"), "?" for anything else. */
const char *droce_qp_attr_name(enum ibv_qp_attr_mask bit);

/**
 * The attributes a transition requires and allows besides IBV_QP_STATE.
 *
 * @param[out] req  required mask bits; may be NULL
 * @param[out] opt  optional mask bits; may be NULL
 * @return 0; -EINVAL if @p type is not RC, UC or UD, a state is out of range,
 *   or @p cur -> @p next is not a transition.
 */
int droce_qp_state_masks(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
			 uint32_t *req, uint32_t *opt);

/**
 * Is @p attr_mask right for @p cur -> @p next on a @p type QP, as
 * ib_modify_qp_is_ok() decides: the transition exists, every required bit is
 * set, nothing outside required, optional and IBV_QP_STATE is set, and
 * IBV_QP_CUR_STATE appears only out of RTR, RTS, SQD or SQE.
 *
 * @p cur is the state the transition starts from (the caller's
 * attr->cur_qp_state when IBV_QP_CUR_STATE is set); @p next is
 * attr->qp_state when IBV_QP_STATE is set, else @p cur.
 *
 * @return 0; -EINVAL otherwise.
 */
int droce_qp_state_check(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
			 int attr_mask);

/** Device and port limits attribute values are checked against. */
struct droce_qp_limits {
	enum ibv_mtu max_mtu;		/**< the port's active MTU */
	uint8_t max_rd_atomic;		/**< max_qp_init_rd_atom (DROCE_MAX_QP_RD_ATOM) */
	uint8_t max_dest_rd_atomic;	/**< max_qp_rd_atom (DROCE_MAX_QP_RD_ATOM) */
	uint8_t phys_port_cnt;		/**< valid port numbers are 1..phys_port_cnt */
	uint16_t pkey_tbl_len;		/**< valid P_Key indices are 0..len-1 */
	int gid_tbl_len;		/**< valid source GID indices are 0..len-1 */
};

/**
 * Check the values of the attributes @p attr_mask selects.
 *
 * - ACCESS_FLAGS: any IBV_ACCESS_* bit rdma-core defines (providers ignore
 *   those that do not apply to a QP);
 * - PKEY_INDEX: below pkey_tbl_len;
 * - PORT: 1 .. phys_port_cnt;
 * - QKEY: any (the controlled-Q_Key bit is the transport's business);
 * - AV: is_global set (RoCE needs a GRH: kernel rdma_check_ah_attr()),
 *   port_num 1 .. phys_port_cnt, sgid_index below gid_tbl_len;
 * - PATH_MTU: IBV_MTU_256 .. max_mtu;
 * - TIMEOUT: 0 .. 31 (5-bit exponent, 0 = infinite);
 * - RETRY_CNT, RNR_RETRY: 0 .. 7 (3-bit fields; RNR 7 = retry forever);
 * - RQ_PSN, SQ_PSN: any; only the low 24 bits count (the kernel masks them
 *   and warns);
 * - MAX_QP_RD_ATOMIC: 0 .. max_rd_atomic;
 * - MAX_DEST_RD_ATOMIC: 0 .. max_dest_rd_atomic;
 * - MIN_RNR_TIMER: 0 .. 31 (5-bit code);
 * - ALT_PATH: never: no automatic path migration on RoCE (the kernel bans
 *   it in _ib_modify_qp());
 * - PATH_MIG_STATE: IBV_MIG_MIGRATED, REARM or ARMED;
 * - DEST_QPN: 0 .. 0xffffff (24-bit QPN);
 * - STATE, CUR_STATE: RESET .. ERR;
 * - EN_SQD_ASYNC_NOTIFY: any;
 * - CAP, RATE_LIMIT: not checked here, no RC, UC or UD transition allows
 *   them.
 *
 * @return 0; -EINVAL for the first value out of range.
 */
int droce_qp_attr_check(enum ibv_qp_type type, const struct ibv_qp_attr *attr, int attr_mask,
			const struct droce_qp_limits *lim);

/**
 * The whole ibv_modify_qp() admission check for a QP now in @p qp_state:
 * resolves IBV_QP_CUR_STATE (it must name @p qp_state) and IBV_QP_STATE, then
 * droce_qp_state_check() and droce_qp_attr_check().
 *
 * @param[out] next  the state the QP moves to on success; may be NULL
 * @return 0; -EINVAL if any check fails.
 */
int droce_qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state qp_state,
			  const struct ibv_qp_attr *attr, int attr_mask,
			  const struct droce_qp_limits *lim, enum ibv_qp_state *next);

#endif /* DROCE_VERBS_QP_STATE_H */
