/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * TCase "ops": the table of operations each QP type may post
 * (droce_shm_ops.h), which the shim and droced both read. Pinned columns,
 * the IBA's word on UC and SEND_WITH_INV, and the two views of the table
 * (opcodes, send_ops_flags) agreeing.
 */

#include "droce_shm_ops.h"	/* first: the header stands alone */

#include "test_shm.h"

/* Every opcode value a send slot could carry, known or not. */
#define OPCODE_SPAN 64u

static unsigned int
count_ops(enum ibv_qp_type type)
{
	unsigned int op, n = 0;

	for (op = 0; op < OPCODE_SPAN; op++)
		n += droce_shm_qp_op_allowed(type, op);
	return n;
}

START_TEST(test_ops_rc_has_all_ten_ud_sends_only)
{
	ck_assert_uint_eq(count_ops(IBV_QPT_RC), 10);
	ck_assert_uint_eq(count_ops(IBV_QPT_UD), 2);
	ck_assert(droce_shm_qp_op_allowed(IBV_QPT_UD, IBV_WR_SEND));
	ck_assert(droce_shm_qp_op_allowed(IBV_QPT_UD, IBV_WR_SEND_WITH_IMM));
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_UD, IBV_WR_RDMA_WRITE));
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_UD, IBV_WR_BIND_MW));
}
END_TEST

/* The IBA has no UC opcode carrying an IETH: UC cannot SEND with invalidate. */
START_TEST(test_ops_uc_has_no_send_with_invalidate_read_or_atomics)
{
	ck_assert_uint_eq(count_ops(IBV_QPT_UC), 6);
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_UC, IBV_WR_SEND_WITH_INV));
	ck_assert(!(droce_shm_qp_send_ops(IBV_QPT_UC) & IBV_QP_EX_WITH_SEND_WITH_INV));
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_UC, IBV_WR_RDMA_READ));
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_UC, IBV_WR_ATOMIC_FETCH_AND_ADD));
	ck_assert(droce_shm_qp_op_allowed(IBV_QPT_UC, IBV_WR_RDMA_WRITE_WITH_IMM));
	ck_assert(droce_shm_qp_op_allowed(IBV_QPT_UC, IBV_WR_LOCAL_INV));
	ck_assert(droce_shm_qp_op_allowed(IBV_QPT_UC, IBV_WR_BIND_MW));
}
END_TEST

START_TEST(test_ops_other_types_and_opcodes_are_refused)
{
	static const enum ibv_qp_type none[] = { IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND,
						 IBV_QPT_XRC_RECV, IBV_QPT_DRIVER };
	unsigned int i;

	for (i = 0; i < DROCE_DIM(none); i++) {
		ck_assert_uint_eq(count_ops(none[i]), 0);
		ck_assert_uint_eq(droce_shm_qp_send_ops(none[i]), 0);
	}
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_RC, IBV_WR_TSO));
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_RC, IBV_WR_DRIVER1));
	ck_assert(!droce_shm_qp_op_allowed(IBV_QPT_RC, UINT32_MAX));
	ck_assert(!(droce_shm_qp_send_ops(IBV_QPT_RC) & IBV_QP_EX_WITH_TSO));
	ck_assert(!(droce_shm_qp_send_ops(IBV_QPT_RC) & IBV_QP_EX_WITH_ATOMIC_WRITE));
}
END_TEST

/* An opcode is allowed exactly when its send_ops_flag is. */
START_TEST(test_ops_opcodes_and_send_ops_flags_agree)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	unsigned int t;

	for (t = 0; t < DROCE_DIM(types); t++) {
		uint64_t ops = droce_shm_qp_send_ops(types[t]);

#define X(op, flag, rc, uc, ud) \
		ck_assert_msg(droce_shm_qp_op_allowed(types[t], op) == !!(ops & (flag)), \
			      "type %d %s", (int)types[t], #op);
		DROCE_SHM_SEND_OPS(X)
#undef X
	}
}
END_TEST

TCase *
test_shm_ops_tcase(void)
{
	TCase *tc = tcase_create("ops");

	tcase_add_test(tc, test_ops_rc_has_all_ten_ud_sends_only);
	tcase_add_test(tc, test_ops_uc_has_no_send_with_invalidate_read_or_atomics);
	tcase_add_test(tc, test_ops_other_types_and_opcodes_are_refused);
	tcase_add_test(tc, test_ops_opcodes_and_send_ops_flags_agree);
	return tc;
}
