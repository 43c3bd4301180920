/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Protection domains, memory regions and memory windows: control calls
 * (ALLOC_PD, REG_MR, REREG_MR, DEREG_MR, ALLOC_MW, DEALLOC_MW). Where the
 * pages of a registration live, and how they become shareable with the
 * daemon, is shim_mem.c's business; this file hands the resulting memfd
 * and offset to REG_MR. No state of its own; any thread.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim_priv.h"

/* IBTA: access flags that need the pages writable (ib_access_writable()). */
#define SHIM_ACCESS_WRITABLE \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_MW_BIND)

/* What ibv_reg_dmabuf_mr() takes (ibv_reg_mr(3)). */
#define SHIM_DMABUF_ACCESS \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING)

/* ---- PD ---- */

struct ibv_pd *
shim_alloc_pd(struct ibv_context *ctx)
{
	struct droce_ctrl_alloc_pd_rep rep;
	struct shim_pd *spd;
	int ret;

	spd = calloc(1, sizeof(*spd));
	if (spd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = shim_call(to_sctx(ctx), DROCE_CTRL_ALLOC_PD, NULL, 0, NULL, 0, &rep, sizeof(rep),
			NULL, 0);
	if (ret != 0) {
		free(spd);
		errno = ret;
		return NULL;
	}
	spd->pd.context = ctx;
	spd->pd.handle = rep.pd_handle;
	return &spd->pd;
}

int
shim_dealloc_pd(struct ibv_pd *pd)
{
	struct shim_pd *spd = to_spd(pd);
	int ret;

	if (spd->base != NULL)
		return shim_dealloc_parent_domain(spd);
	if (atomic_load(&spd->users) != 0)
		return EBUSY;	/* parent domains extend it */
	ret = shim_call_destroy(to_sctx(pd->context), DROCE_CTRL_DEALLOC_PD, pd->handle);
	if (ret == 0)
		free(pd);
	return ret;
}

struct ibv_pd *shim_alloc_pd_1_1(struct ibv_context *ctx);
SHIM_SYMVER_DEFAULT(shim_alloc_pd_1_1, ibv_alloc_pd, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_pd *
shim_alloc_pd_1_1(struct ibv_context *ctx)
{
	return shim_alloc_pd(ctx);
}

int shim_dealloc_pd_1_1(struct ibv_pd *pd);
SHIM_SYMVER_DEFAULT(shim_dealloc_pd_1_1, ibv_dealloc_pd, "IBVERBS_1.1");
SHIM_EXPORT int
shim_dealloc_pd_1_1(struct ibv_pd *pd)
{
	return shim_dealloc_pd(pd);
}

/* ---- MR ---- */

int
shim_check_access(unsigned int access)
{
	/* as the kernel's ib_check_mr_access(): remote write or atomic needs local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

struct ibv_mr *
shim_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		  unsigned int access)
{
	struct droce_ctrl_reg_mr_req req;
	struct droce_ctrl_reg_mr_rep rep;
	struct shim_mem_ref ref;
	struct shim_mr *smr;
	int ret;

	ret = shim_check_access(access);
	if (ret != 0)
		goto err;
	smr = calloc(1, sizeof(*smr));
	if (smr == NULL) {
		ret = ENOMEM;
		goto err;
	}
	if (access & IBV_ACCESS_ON_DEMAND) {
		/* nothing moved or pinned: droced reaches the pages through our mem file */
		ret = shim_mem_get_odp(addr, length, &ref);
		if (ret != 0)
			goto err_free;
	} else {
		ret = shim_mem_get(to_sctx(pd->context), addr, length,
				   access & SHIM_ACCESS_WRITABLE, &ref);
		if (ret != 0)
			goto err_free;
	}

	req = (struct droce_ctrl_reg_mr_req){
		.pd_handle = pd->handle,
		.access = access,
		.addr = (uintptr_t)addr,
		.length = length,
		.iova = iova,
		.fd_offset = ref.fd_offset,
	};
	ret = shim_call(to_sctx(pd->context), DROCE_CTRL_REG_MR, &req, sizeof(req), &ref.fd, 1,
			&rep, sizeof(rep), NULL, 0);
	shim_mem_ref_done(&ref);
	if (ret != 0)
		goto err_put;

	smr->mr.context = pd->context;
	smr->mr.pd = pd;
	smr->mr.addr = addr;
	smr->mr.length = length;
	smr->mr.handle = rep.mr_handle;
	smr->mr.lkey = rep.lkey;
	smr->mr.rkey = rep.rkey;
	smr->access = access;
	smr->in_registry = ref.counted;
	smr->indirect = ref.indirect;
	smr->lo = ref.lo;
	smr->hi = ref.hi;
	return &smr->mr;

err_put:
	shim_mem_put(&ref);
err_free:
	free(smr);
err:
	errno = ret;
	return NULL;
}

static void
shim_mr_put_pages(struct shim_mr *smr)
{
	struct shim_mem_ref ref = {
		.fd = -1, .counted = smr->in_registry, .indirect = smr->indirect, .lo = smr->lo,
		.hi = smr->hi,
	};

	shim_mem_put(&ref);
	smr->in_registry = false;
	smr->indirect = false;
}

int
shim_dereg_mr(struct ibv_mr *mr)
{
	struct shim_mr *smr = to_smr(mr);
	int ret;

	ret = shim_call_destroy(to_sctx(mr->context), DROCE_CTRL_DEREG_MR, mr->handle);
	if (ret != 0)
		return ret;
	shim_mr_put_pages(smr);
	if (smr->dm != NULL)
		atomic_fetch_sub(&smr->dm->mrs, 1);
	free(smr);
	return 0;
}

int
shim_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
	      int access)
{
	struct shim_mr *smr = to_smr(mr);
	struct droce_ctrl_rereg_mr_req req;
	struct droce_ctrl_rereg_mr_rep rep;
	struct shim_mem_ref ref = { .fd = -1 };
	unsigned int new_access;
	int ret;

	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) || flags == 0 ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0)) ||
	    (access != 0 && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && pd == NULL) ||
	    smr->dm != NULL) {	/* a DM MR is not re-registered (kernel: EINVAL) */
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	new_access = flags & IBV_REREG_MR_CHANGE_ACCESS ? (unsigned int)access : smr->access;
	if (shim_check_access(new_access) != 0) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		addr = mr->addr;
		length = mr->length;
	} else if (smr->access & IBV_ACCESS_ON_DEMAND) {
		/* on demand: droced keeps reaching us through the handle it has */
		ret = shim_mem_get_odp(addr, length, &ref);
		if (ret != 0) {
			errno = ret;
			return IBV_REREG_MR_ERR_CMD;
		}
	} else {
		ret = shim_mem_get(to_sctx(mr->context), addr, length,
				   new_access & SHIM_ACCESS_WRITABLE, &ref);
		if (ret != 0) {
			errno = ret;
			return IBV_REREG_MR_ERR_CMD;
		}
	}
	req = (struct droce_ctrl_rereg_mr_req){
		.mr_handle = mr->handle,
		.flags = (uint32_t)flags,
		.pd_handle = flags & IBV_REREG_MR_CHANGE_PD ? pd->handle : mr->pd->handle,
		.access = new_access,
		.addr = (uintptr_t)addr,
		.length = length,
		.fd_offset = ref.fd_offset,
	};
	ret = shim_call(to_sctx(mr->context), DROCE_CTRL_REREG_MR, &req, sizeof(req), &ref.fd,
			ref.fd >= 0 ? 1 : 0, &rep, sizeof(rep), NULL, 0);
	shim_mem_ref_done(&ref);
	if (ret != 0) {
		shim_mem_put(&ref);
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		shim_mr_put_pages(smr);
		smr->in_registry = ref.counted;
		smr->indirect = ref.indirect;
		smr->lo = ref.lo;
		smr->hi = ref.hi;
		mr->addr = addr;
		mr->length = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	smr->access = new_access;
	mr->lkey = rep.lkey;
	mr->rkey = rep.rkey;
	return 0;
}

#undef ibv_reg_mr
struct ibv_mr *shim_reg_mr_1_1(struct ibv_pd *pd, void *addr, size_t length, int access);
SHIM_SYMVER_DEFAULT(shim_reg_mr_1_1, ibv_reg_mr, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_mr *
shim_reg_mr_1_1(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return shim_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
SHIM_EXPORT struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return shim_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

SHIM_EXPORT struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	return shim_reg_mr_iova2(pd, addr, length, iova, access);
}

int shim_dereg_mr_1_1(struct ibv_mr *mr);
SHIM_SYMVER_DEFAULT(shim_dereg_mr_1_1, ibv_dereg_mr, "IBVERBS_1.1");
SHIM_EXPORT int
shim_dereg_mr_1_1(struct ibv_mr *mr)
{
	return shim_dereg_mr(mr);
}

int shim_rereg_mr_1_1(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		      size_t length, int access);
SHIM_SYMVER_DEFAULT(shim_rereg_mr_1_1, ibv_rereg_mr, "IBVERBS_1.1");
SHIM_EXPORT int
shim_rereg_mr_1_1(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		  int access)
{
	return shim_rereg_mr(mr, flags, pd, addr, length, access);
}

/*
 * A dma-buf is shared memory already: the daemon maps the descriptor
 * itself. One the client cannot map, the daemon cannot either.
 */
SHIM_EXPORT struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
		  int access)
{
	struct droce_ctrl_reg_mr_req req;
	struct droce_ctrl_reg_mr_rep rep;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t aoff = offset & ~(uint64_t)(pg - 1);
	struct shim_mr *smr;
	void *p;
	int ret;

	ret = shim_check_access((unsigned int)access);
	/* ibv_reg_mr(3): only these flags for a dma-buf; iova keeps offset's page offset */
	if (ret == 0 && ((access & ~SHIM_DMABUF_ACCESS) || length == 0 || fd < 0 ||
			 ((iova ^ offset) & (uint64_t)(pg - 1))))
		ret = EINVAL;
	if (ret != 0)
		goto err;
	p = mmap(NULL, length + (offset - aoff), PROT_READ, MAP_SHARED, fd, (off_t)aoff);
	if (p == MAP_FAILED) {
		ret = EOPNOTSUPP;
		goto err;
	}
	munmap(p, length + (offset - aoff));
	smr = calloc(1, sizeof(*smr));
	if (smr == NULL) {
		ret = ENOMEM;
		goto err;
	}
	req = (struct droce_ctrl_reg_mr_req){
		.pd_handle = pd->handle,
		.access = (uint32_t)access,
		.addr = iova,
		.length = length,
		.iova = iova,
		.fd_offset = offset,
	};
	ret = shim_call(to_sctx(pd->context), DROCE_CTRL_REG_MR, &req, sizeof(req), &fd, 1, &rep,
			sizeof(rep), NULL, 0);
	if (ret != 0) {
		free(smr);
		goto err;
	}
	smr->mr.context = pd->context;
	smr->mr.pd = pd;
	smr->mr.addr = (void *)(uintptr_t)offset;	/* as rdma-core reports it */
	smr->mr.length = length;
	smr->mr.handle = rep.mr_handle;
	smr->mr.lkey = rep.lkey;
	smr->mr.rkey = rep.rkey;
	smr->access = (unsigned int)access;
	return &smr->mr;
err:
	errno = ret;
	return NULL;
}

/* Imports need a kernel object shared between processes: droce has none. */
SHIM_EXPORT struct ibv_pd *
ibv_import_pd(struct ibv_context *ctx, uint32_t pd_handle)
{
	(void)ctx;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT void
ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

SHIM_EXPORT struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT void
ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

SHIM_EXPORT struct ibv_dm *
ibv_import_dm(struct ibv_context *ctx, uint32_t dm_handle)
{
	(void)ctx;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SHIM_EXPORT void
ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* ---- MW ---- */

struct ibv_mw *
shim_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct droce_ctrl_alloc_mw_req req = { .pd_handle = pd->handle, .type = type };
	struct droce_ctrl_alloc_mw_rep rep;
	struct shim_mw *smw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	smw = calloc(1, sizeof(*smw));
	if (smw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = shim_call(to_sctx(pd->context), DROCE_CTRL_ALLOC_MW, &req, sizeof(req), NULL, 0,
			&rep, sizeof(rep), NULL, 0);
	if (ret != 0) {
		free(smw);
		errno = ret;
		return NULL;
	}
	smw->mw.context = pd->context;
	smw->mw.pd = pd;
	smw->mw.rkey = rep.rkey;
	smw->mw.handle = rep.mw_handle;
	smw->mw.type = type;
	return &smw->mw;
}

int
shim_dealloc_mw(struct ibv_mw *mw)
{
	int ret = shim_call_destroy(to_sctx(mw->context), DROCE_CTRL_DEALLOC_MW, mw->handle);

	if (ret == 0)
		free(mw);
	return ret;
}
