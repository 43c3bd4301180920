/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Device memory (ibv_alloc_dm(3)): a sealed memfd of the allocation's size,
 * mapped here for ibv_memcpy_to_dm / _from_dm and, once ibv_reg_dm_mr()
 * registers it, mapped by droced too, which reaches it for peers' RDMA and
 * for local SGEs as it reaches any registered memory. A DM MR is always
 * ZERO_BASED (the verb requires it). ibv_free_dm fails with EBUSY while an
 * MR is registered on it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim_priv.h"

/* What ibv_reg_dm_mr() takes: ZERO_BASED, required, and the usual rights. */
#define SHIM_DM_ACCESS \
	(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static inline struct shim_dm *to_sdm(struct ibv_dm *dm) { return (struct shim_dm *)dm; }

static bool
dm_range(const struct shim_dm *sdm, uint64_t off, size_t len)
{
	return off <= sdm->len && len <= sdm->len - off;
}

/*
 * A copy's checks as mlx5, the other provider of device memory, makes
 * them: past the end EFAULT, then offset and length in 4-byte words
 * (its memory takes nothing smaller) EINVAL.
 */
static int
dm_copy_check(const struct shim_dm *sdm, uint64_t off, size_t len)
{
	if (!dm_range(sdm, off, len))
		return EFAULT;
	return ((off | len) & 3) ? EINVAL : 0;
}

static int
dm_copy_to(struct ibv_dm *dm, uint64_t off, const void *src, size_t len)
{
	struct shim_dm *sdm = to_sdm(dm);
	int ret = dm_copy_check(sdm, off, len);

	if (ret == 0)
		memcpy((uint8_t *)sdm->map + off, src, len);
	return ret;
}

static int
dm_copy_from(void *dst, struct ibv_dm *dm, uint64_t off, size_t len)
{
	struct shim_dm *sdm = to_sdm(dm);
	int ret = dm_copy_check(sdm, off, len);

	if (ret == 0)
		memcpy(dst, (uint8_t *)sdm->map + off, len);
	return ret;
}

struct ibv_dm *
shim_alloc_dm(struct ibv_context *ctx, struct ibv_alloc_dm_attr *attr)
{
	static _Atomic uint32_t next_handle = 1;
	struct shim_dm *sdm;
	int ret;

	if (attr->comp_mask != 0 || attr->length == 0 || attr->length > SHIM_MAX_DM_SIZE ||
	    attr->log_align_req > 12) {
		errno = EINVAL;	/* 4 KiB alignment is what a page gives */
		return NULL;
	}
	sdm = calloc(1, sizeof(*sdm));
	if (sdm == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	sdm->len = attr->length;
	sdm->fd = memfd_create("droce-dm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (sdm->fd < 0)
		goto err;
	/* droced maps only memfds that cannot shrink under it */
	if (ftruncate(sdm->fd, (off_t)sdm->len) < 0 ||
	    fcntl(sdm->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto err_close;
	sdm->map = mmap(NULL, sdm->len, PROT_READ | PROT_WRITE, MAP_SHARED, sdm->fd, 0);
	if (sdm->map == MAP_FAILED)
		goto err_close;
	sdm->dm.context = ctx;
	sdm->dm.memcpy_to_dm = dm_copy_to;
	sdm->dm.memcpy_from_dm = dm_copy_from;
	sdm->dm.comp_mask = 0;
	sdm->dm.handle = atomic_fetch_add(&next_handle, 1);
	return &sdm->dm;

err_close:
	ret = errno;
	close(sdm->fd);
	errno = ret;
err:
	ret = errno;
	free(sdm);
	errno = ret;
	return NULL;
}

int
shim_free_dm(struct ibv_dm *dm)
{
	struct shim_dm *sdm = to_sdm(dm);

	if (atomic_load(&sdm->mrs) != 0)
		return EBUSY;
	munmap(sdm->map, sdm->len);
	close(sdm->fd);
	free(sdm);
	return 0;
}

struct ibv_mr *
shim_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len,
	       unsigned int access)
{
	struct shim_dm *sdm = to_sdm(dm);
	struct droce_ctrl_reg_mr_req req;
	struct droce_ctrl_reg_mr_rep rep;
	struct shim_mr *smr;
	int ret;

	ret = shim_check_access(access);
	/* length 0 registers, as on mlx5: a key for nothing */
	if (ret == 0 && (!(access & IBV_ACCESS_ZERO_BASED) || (access & ~SHIM_DM_ACCESS) ||
			 !dm_range(sdm, off, len) || dm->context != pd->context))
		ret = EINVAL;
	if (ret != 0)
		goto err;
	smr = calloc(1, sizeof(*smr));
	if (smr == NULL) {
		ret = ENOMEM;
		goto err;
	}
	req = (struct droce_ctrl_reg_mr_req){
		.pd_handle = pd->handle, .access = access, .addr = 0, .length = len, .iova = 0,
		.fd_offset = off,
	};
	ret = shim_call(to_sctx(pd->context), DROCE_CTRL_REG_MR, &req, sizeof(req), &sdm->fd, 1,
			&rep, sizeof(rep), NULL, 0);
	if (ret != 0) {
		free(smr);
		goto err;
	}
	atomic_fetch_add(&sdm->mrs, 1);
	smr->mr.context = pd->context;
	smr->mr.pd = pd;
	smr->mr.addr = NULL;	/* ZERO_BASED: the region starts at 0 */
	smr->mr.length = len;
	smr->mr.handle = rep.mr_handle;
	smr->mr.lkey = rep.lkey;
	smr->mr.rkey = rep.rkey;
	smr->access = access;
	smr->dm = sdm;
	return &smr->mr;
err:
	errno = ret;
	return NULL;
}
