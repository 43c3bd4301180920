/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_SHM_OPS_H
#define DROCE_SHM_OPS_H

/**
 * @file
 * Which operations each QP type may post: the one table the shim (at
 * ibv_post_send(), in the ibv_wr_* builders, at ibv_create_qp_ex() for
 * send_ops_flags) and droced (for every send slot it takes off a ring)
 * both read, so they never disagree. A send slot's opcode is part of the
 * ring ABI (struct droce_shm_swqe), hence its place here.
 *
 * The columns follow the IBA's BTH opcode table per transport:
 * RC has every one; UC has SEND and RDMA WRITE (with and without
 * immediate) but no READ, no atomics and -- unlike ibv_wr_post(3)'s table,
 * which lists it -- no SEND with invalidate: the IBA defines no UC opcode
 * carrying an IETH (0x16/0x17 are RC's, there is no UC counterpart), so a
 * UC SEND_WITH_INV could not be sent as what it is. UD has SEND only.
 * LOCAL_INV and BIND_MW never reach the wire: they go where windows do
 * (RC and UC, ibv_bind_mw(3)). ibv_post_send() refuses an opcode outside
 * its QP's column with EINVAL; ibv_create_qp_ex() refuses such a
 * send_ops_flag with EOPNOTSUPP, as rdma-core's providers do for an
 * operation the device lacks.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/*      work request opcode          send_ops_flags bit                    RC UC UD */
#define DROCE_SHM_SEND_OPS(X) \
	X(IBV_WR_RDMA_WRITE,           IBV_QP_EX_WITH_RDMA_WRITE,           1, 1, 0) \
	X(IBV_WR_RDMA_WRITE_WITH_IMM,  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,  1, 1, 0) \
	X(IBV_WR_SEND,                 IBV_QP_EX_WITH_SEND,                 1, 1, 1) \
	X(IBV_WR_SEND_WITH_IMM,        IBV_QP_EX_WITH_SEND_WITH_IMM,        1, 1, 1) \
	X(IBV_WR_RDMA_READ,            IBV_QP_EX_WITH_RDMA_READ,            1, 0, 0) \
	X(IBV_WR_ATOMIC_CMP_AND_SWP,   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,   1, 0, 0) \
	X(IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, 1, 0, 0) \
	X(IBV_WR_LOCAL_INV,            IBV_QP_EX_WITH_LOCAL_INV,            1, 1, 0) \
	X(IBV_WR_BIND_MW,              IBV_QP_EX_WITH_BIND_MW,              1, 1, 0) \
	X(IBV_WR_SEND_WITH_INV,        IBV_QP_EX_WITH_SEND_WITH_INV,        1, 0, 0)

/**
 * @return true if a QP of @p type may post work request opcode @p opcode
 * (an enum ibv_wr_opcode, or any value read from a ring); false for a type
 * droce has no QPs of.
 */
static inline bool
droce_shm_qp_op_allowed(enum ibv_qp_type type, uint32_t opcode)
{
	switch (opcode) {
#define X(op, flag, rc, uc, ud) \
	case op: \
		return type == IBV_QPT_RC ? (rc) : type == IBV_QPT_UC ? (uc) : \
		       type == IBV_QPT_UD ? (ud) : false;
	DROCE_SHM_SEND_OPS(X)
#undef X
	default:
		return false;
	}
}

/**
 * @return the IBV_QP_EX_WITH_* send_ops_flags a QP of @p type may ask for at
 * ibv_create_qp_ex(); 0 for a type droce has no QPs of.
 */
static inline uint64_t
droce_shm_qp_send_ops(enum ibv_qp_type type)
{
	uint64_t ops = 0;

#define X(op, flag, rc, uc, ud) \
	if (type == IBV_QPT_RC ? (rc) : type == IBV_QPT_UC ? (uc) : \
	    type == IBV_QPT_UD ? (ud) : false) \
		ops |= (uint64_t)(flag);
	DROCE_SHM_SEND_OPS(X)
#undef X
	return ops;
}

#endif /* DROCE_SHM_OPS_H */
