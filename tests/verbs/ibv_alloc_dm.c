/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_alloc_dm(3): device memory. Allocation within max_dm_size (0 or
 * more: EINVAL); ibv_memcpy_to_dm / _from_dm within it, in 4-byte words
 * (past its end: EFAULT, an offset or length not a multiple of 4: EINVAL,
 * as mlx5); ibv_reg_dm_mr with IBV_ACCESS_ZERO_BASED (without: EINVAL), of
 * length 0 (registered, as mlx5 does), on a
 * part of it, which the peer then reads and writes by RDMA at addresses
 * from 0 and which serves as a local SGE; ibv_free_dm refused (EBUSY)
 * while an MR is on it, ibv_rereg_mr of a DM MR refused.
 */

#include <errno.h>
#include <string.h>

#include "verbs_test.h"

#define DM_LEN	8192
#define MR_OFF	4096	/* the MR covers the second half of the DM */
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static void
drive(void)
{
	struct ibv_alloc_dm_attr da = { .length = 0 };
	struct ibv_device_attr_ex dx;
	struct vt_remote_mr rmr = vt_remote_mr(4096, RW);
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	uint8_t pat[256], back[256];
	struct ibv_mr *mr;
	struct ibv_dm *dm;
	unsigned int i;

	memset(&dx, 0, sizeof(dx));
	vt_require(ibv_query_device_ex(vt.ctx, NULL, &dx) == 0, "query_device_ex");
	vt_check(dx.max_dm_size >= DM_LEN, "max_dm_size announces device memory", "%llu",
		 (unsigned long long)dx.max_dm_size);
	errno = 0;
	vt_check(ibv_alloc_dm(vt.ctx, &da) == NULL && errno == EINVAL, "length 0: EINVAL",
		 "errno %d", errno);
	da.length = dx.max_dm_size + 1;
	errno = 0;
	vt_check(ibv_alloc_dm(vt.ctx, &da) == NULL && errno == EINVAL,
		 "more than max_dm_size: EINVAL", "errno %d", errno);
	da.length = DM_LEN;
	dm = ibv_alloc_dm(vt.ctx, &da);
	vt_require(dm != NULL, "alloc_dm");

	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 1);
	vt_check(ibv_memcpy_to_dm(dm, MR_OFF, pat, sizeof(pat)) == 0 &&
		 ibv_memcpy_from_dm(back, dm, MR_OFF, sizeof(back)) == 0 &&
		 memcmp(pat, back, sizeof(pat)) == 0, "ibv_memcpy_to_dm then _from_dm",
		 "differs");
	vt_check(ibv_memcpy_to_dm(dm, DM_LEN - 8, pat, 16) == EFAULT &&
		 ibv_memcpy_from_dm(back, dm, DM_LEN + 4, 4) == EFAULT,
		 "copies past the end: EFAULT", "accepted");
	vt_check(ibv_memcpy_to_dm(dm, MR_OFF + 2, pat, 8) == EINVAL &&
		 ibv_memcpy_from_dm(back, dm, MR_OFF + 1, 4) == EINVAL,
		 "copies at an offset not a multiple of 4: EINVAL", "accepted");
	vt_check(ibv_memcpy_to_dm(dm, MR_OFF, pat, 6) == EINVAL &&
		 ibv_memcpy_from_dm(back, dm, MR_OFF, 3) == EINVAL,
		 "copies of a length not a multiple of 4: EINVAL", "accepted");
	mr = ibv_reg_dm_mr(vt.pd, dm, MR_OFF, 0, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	vt_check(mr != NULL && mr->length == 0 && ibv_dereg_mr(mr) == 0,
		 "ibv_reg_dm_mr of length 0 (ZERO_BASED | LOCAL_WRITE)", "errno %d", errno);

	errno = 0;
	vt_check(ibv_reg_dm_mr(vt.pd, dm, MR_OFF, 4096, RW) == NULL && errno == EINVAL,
		 "ibv_reg_dm_mr without ZERO_BASED: EINVAL", "errno %d", errno);
	errno = 0;
	vt_check(ibv_reg_dm_mr(vt.pd, dm, MR_OFF, DM_LEN, RW | IBV_ACCESS_ZERO_BASED) == NULL &&
		 errno == EINVAL, "ibv_reg_dm_mr past the DM's end: EINVAL", "errno %d", errno);
	mr = ibv_reg_dm_mr(vt.pd, dm, MR_OFF, 4096, RW | IBV_ACCESS_ZERO_BASED);
	vt_require(mr != NULL, "reg_dm_mr");

	/* the peer reads from address 0 of the MR: the DM at MR_OFF */
	vt_check(vt_remote_rdma(&p, IBV_WR_RDMA_READ, rmr.id, 0, mr->rkey, sizeof(pat)) ==
		 IBV_WC_SUCCESS, "the peer's RDMA READ of the DM MR at address 0", "failed");
	vt_remote_read(rmr.id, 0, back, sizeof(back));
	vt_check(memcmp(back, pat, sizeof(pat)) == 0, "reads what ibv_memcpy_to_dm put there",
		 "differs");
	/* the peer writes at address 100: ibv_memcpy_from_dm sees it at MR_OFF + 100 */
	vt_remote_fill(rmr.id, 0, 64, 0xa5);
	vt_check(vt_remote_rdma(&p, IBV_WR_RDMA_WRITE, rmr.id, 100, mr->rkey, 64) ==
		 IBV_WC_SUCCESS, "the peer's RDMA WRITE into the DM MR", "failed");
	memset(back, 0, sizeof(back));
	vt_check(ibv_memcpy_from_dm(back, dm, MR_OFF + 100, 64) == 0 && back[0] == 0xa5 &&
		 back[63] == 0xa5, "ibv_memcpy_from_dm reads what the peer wrote", "%#x",
		 back[0]);
	vt_check(vt_remote_rdma(&p, IBV_WR_RDMA_READ, rmr.id, 4096 - 8, mr->rkey, 16) ==
		 IBV_WC_REM_ACCESS_ERR, "past the MR's end: remote access error", "not refused");
	vt_pair_restate(&p);

	/* the DM MR as a local SGE: our RDMA WRITE from its address 0 */
	{
		struct ibv_sge sge = { 0, 32, mr->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
					  .num_sge = 1 };

		wr.wr.rdma.remote_addr = rmr.addr + 512;
		wr.wr.rdma.rkey = rmr.rkey;
		vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_SUCCESS,
			 "a local SGE in the DM MR (address 0)", "failed");
		vt_remote_read(rmr.id, 512, back, 32);
		vt_check(memcmp(back, pat, 32) == 0, "the peer got the DM's bytes", "differs");
	}

	vt_check(ibv_free_dm(dm) == EBUSY, "ibv_free_dm with an MR on it: EBUSY", "not EBUSY");
	vt_check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      IBV_ACCESS_LOCAL_WRITE) == IBV_REREG_MR_ERR_INPUT,
		 "ibv_rereg_mr of a DM MR: refused", "accepted");
	vt_check(ibv_dereg_mr(mr) == 0 && ibv_free_dm(dm) == 0,
		 "deregistered, then freed", "failed");
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
