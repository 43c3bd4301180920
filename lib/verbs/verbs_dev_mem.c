/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Memory objects: protection domains, memory regions (a client's shared
 * file or udmabuf, checked before it is mapped; a file that could shrink is
 * mapped under verbs_dev_guard.c's watch) and memory windows.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "verbs_dev_priv.h"

int
dev_alloc_pd(struct droce_client *cl, struct droce_ctrl_alloc_pd_rep *rep)
{
	struct dev_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return ENOMEM;
	if (dev_obj_add(cl->dev, cl, &pd->o, OBJ_PD) < 0) {
		free(pd);
		return ENOMEM;
	}
	rep->pd_handle = pd->o.handle;
	return 0;
}

/*
 * File systems whose pages an engine may fault in: memory (tmpfs, which
 * holds memfds, shared anonymous memory and System V segments; hugetlbfs)
 * and local disks. A fault on a network or FUSE file waits for a server the
 * client may control: one worker stalled for as long as it likes.
 */
static bool
fs_local(long type)
{
	switch (type) {
	case TMPFS_MAGIC:
	case HUGETLBFS_MAGIC:
	case EXT4_SUPER_MAGIC:		/* ext2, ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:	/* containers: over one of the above */
		return true;
	default:
		return false;
	}
}

/*
 * What the daemon may map of a client's descriptor, and its size now: a
 * regular file on a local file system (a memfd, tmpfs, hugetlbfs or disk
 * file, a System V segment) or a dma-buf from udmabuf (pages of a sealed
 * memfd, pinned: it never changes size). A file not sealed against
 * shrinking may shrink under the mapping: *guard_page is then its page
 * size (dev_client_map()), else 0. Other exporters' dma-bufs may fault on
 * access (eviction): refused.
 */
static bool
fd_mappable(int fd, uint64_t *size, uint64_t *guard_page)
{
	struct statfs sfs;
	struct stat st;
	char path[64], line[128];
	bool udmabuf = false;
	FILE *f;
	int seals;

	if (fstat(fd, &st) < 0)
		return false;
	if (S_ISREG(st.st_mode)) {
		if (fstatfs(fd, &sfs) < 0 || !fs_local((long)sfs.f_type))
			return false;
		seals = fcntl(fd, F_GET_SEALS);
		*size = (uint64_t)st.st_size;
		*guard_page = seals >= 0 && (seals & F_SEAL_SHRINK) ? 0 :
			      sfs.f_type == HUGETLBFS_MAGIC ? (uint64_t)sfs.f_bsize : 4096;
		return true;
	}
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != DMA_BUF_MAGIC)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	*size = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long v;
		char name[32];

		if (sscanf(line, "size: %llu", &v) == 1)
			*size = v;
		else if (sscanf(line, "exp_name: %31s", name) == 1)
			udmabuf = strcmp(name, "udmabuf") == 0;
	}
	fclose(f);
	*guard_page = 0;
	return udmabuf && *size > 0;
}

/*
 * Map @p length bytes at @p fd_offset of the client's file or udmabuf @p fd:
 * *map and *map_len for dev_client_unmap(), *host for the byte at fd_offset,
 * *writable whether the mapping takes writes. Read-write if the descriptor
 * allows it, read-only for a registration without write rights on a
 * descriptor open for reading only. @return 0 or a positive errno.
 */
static int
dev_mr_map(int fd, uint64_t fd_offset, uint64_t length, unsigned int access, void **map,
	   uint64_t *map_len, uint8_t **host, bool *writable)
{
	uint64_t start, end, size;
	uint64_t guard_page;
	int ret;

	if (fd < 0 || !fd_mappable(fd, &size, &guard_page))
		return EINVAL;
	if (fd_offset > size || length > size - fd_offset)
		return EINVAL;
	if (length == 0) {	/* a key for nothing (device memory's MRs may be so) */
		*map = NULL;
		*map_len = 0;
		*host = NULL;
		*writable = true;
		return 0;
	}
	start = fd_offset & ~4095ull;
	end = (fd_offset + length + 4095) & ~4095ull;
	*map_len = end - start;
	*writable = true;
	ret = dev_client_map(fd, start, *map_len, PROT_READ | PROT_WRITE, guard_page, map);
	if ((ret == EACCES || ret == EPERM) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
		*writable = false;
		ret = dev_client_map(fd, start, *map_len, PROT_READ, guard_page, map);
	}
	if (ret != 0)
		return ret;
	*host = (uint8_t *)*map + (fd_offset - start);
	return 0;
}

int
dev_reg_mr(struct droce_client *cl, const struct droce_ctrl_reg_mr_req *req, int fd,
	   struct droce_ctrl_reg_mr_rep *rep)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct droce_mr_reg reg;
	struct dev_mr *mr;
	uint8_t *host;
	int ret;

	if (pd == NULL)
		return EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return ENOMEM;
	memset(&reg, 0, sizeof(reg));
	reg.mem_fd = -1;
	/*
	 * On demand, or an ordinary region its client could not move onto
	 * shared memory (it hands over its mem file): nothing mapped, the
	 * client's memory reached at each access.
	 */
	if ((req->access & IBV_ACCESS_ON_DEMAND) || dev_fd_is_proc_mem(fd)) {
		ret = dev_odp_fd_take(fd, req->access, &reg.mem_fd, &mr->writable);
		host = NULL;
		reg.indirect = ret == 0;
	} else {
		ret = dev_mr_map(fd, req->fd_offset, req->length, req->access, &mr->map,
				 &mr->map_len, &host, &mr->writable);
	}
	if (ret != 0) {
		free(mr);
		return ret;
	}
	reg.pd = pd->o.handle;
	reg.addr = req->addr;
	reg.length = req->length;
	reg.hca_va = req->iova;
	reg.access = req->access;
	reg.host = host;
	ret = dev_obj_add(cl->dev, cl, &mr->o, OBJ_MR);
	if (ret == 0) {
		ret = droce_mr_register(cl->dev->keys, &reg, &mr->mr);
		if (ret < 0)
			dev_obj_del(cl->dev, &mr->o);
	}
	if (ret < 0) {
		dev_client_unmap(mr->map, mr->map_len);
		if (reg.mem_fd >= 0)
			close(reg.mem_fd);
		free(mr);
		return -ret;
	}
	mr->pd = pd;
	pd->refs++;
	rep->mr_handle = mr->o.handle;
	rep->lkey = mr->mr.lkey;
	rep->rkey = mr->mr.rkey;
	return 0;
}

/*
 * ibv_rereg_mr(3): the MR takes the new attributes under the same handle and
 * the same keys (droce_mr_reregister()). Everything that can fail is checked
 * before anything changes, so a failure leaves the MR as it was.
 */
int
dev_rereg_mr(struct droce_client *cl, const struct droce_ctrl_rereg_mr_req *req, int fd,
	     struct droce_ctrl_rereg_mr_rep *rep)
{
	struct dev_mr *mr = dev_obj_get(cl, req->mr_handle, OBJ_MR);
	bool xlate = req->flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	struct dev_pd *pd;
	struct droce_mr_reg reg;
	void *map = NULL;
	uint64_t map_len = 0;
	uint8_t *host;
	bool writable = mr == NULL || mr->writable;
	int old_fd = mr == NULL || !mr->mr.indirect ? -1 : mr->mr.mem_fd;
	int ret;

	if (mr == NULL || req->flags == 0 || (req->flags & ~(uint32_t)IBV_REREG_MR_FLAGS_SUPPORTED))
		return EINVAL;
	pd = req->flags & IBV_REREG_MR_CHANGE_PD ? dev_obj_get(cl, req->pd_handle, OBJ_PD) :
						  mr->pd;
	if (pd == NULL)
		return EINVAL;
	memset(&reg, 0, sizeof(reg));
	reg.pd = pd->o.handle;
	reg.access = req->flags & IBV_REREG_MR_CHANGE_ACCESS ? req->access : mr->mr.access;
	/* an on-demand region stays one, and an ordinary one ordinary (mlx5 makes a new MR) */
	if ((reg.access ^ mr->mr.access) & IBV_ACCESS_ON_DEMAND)
		return EINVAL;
	reg.indirect = mr->mr.indirect;
	reg.mem_fd = old_fd;
	reg.addr = xlate ? req->addr : mr->mr.addr;
	reg.length = xlate ? req->length : mr->mr.length;
	/* a new range gets iova = addr, as ibv_reg_mr(); otherwise the iova stays */
	reg.hca_va = xlate ? req->addr : mr->mr.iova;
	reg.host = mr->mr.host;
	if (!xlate && (mr->mr.access & IBV_ACCESS_ZERO_BASED) &&
	    !(reg.access & IBV_ACCESS_ZERO_BASED))
		reg.hca_va = mr->mr.addr;
	if (xlate && (reg.access & IBV_ACCESS_ON_DEMAND)) {
		reg.host = NULL;	/* the new range is reached as the old one was */
		if (!writable && (reg.access & IBV_ACCESS_LOCAL_WRITE))
			return EACCES;
	} else if (xlate && dev_fd_is_proc_mem(fd)) {
		/* an ordinary range its client could not move, as at REG_MR */
		ret = dev_odp_fd_take(fd, reg.access, &reg.mem_fd, &writable);
		if (ret != 0)
			return ret;
		reg.indirect = true;
		reg.host = NULL;
	} else if (xlate) {
		ret = dev_mr_map(fd, req->fd_offset, req->length, reg.access, &map, &map_len, &host,
				 &writable);
		if (ret != 0)
			return ret;
		reg.indirect = false;
		reg.host = host;
	} else if (!writable && (reg.access & IBV_ACCESS_LOCAL_WRITE)) {
		return EACCES;	/* the pages were mapped read-only: the file's descriptor allows no more */
	}
	ret = -droce_mr_reregister(cl->dev->keys, &mr->mr, &reg);
	if (ret != 0) {
		if (map != NULL)
			dev_client_unmap(map, map_len);
		if (reg.indirect && reg.mem_fd != old_fd)
			close(reg.mem_fd);
		return ret;	/* EBUSY while a window is bound, as ibv_dereg_mr(3) */
	}
	if (xlate && !(reg.access & IBV_ACCESS_ON_DEMAND)) {
		/* engines may still copy through the old mapping or mem file */
		dev_reclaim_defer_fd(cl->dev, mr->map, mr->map_len, NULL,
				     old_fd != mr->mr.mem_fd ? old_fd : -1);
		mr->map = map;
		mr->map_len = map_len;
		mr->writable = writable;
	}
	mr->pd->refs--;
	mr->pd = pd;
	pd->refs++;
	rep->lkey = mr->mr.lkey;
	rep->rkey = mr->mr.rkey;
	return 0;
}

int
dev_alloc_mw(struct droce_client *cl, const struct droce_ctrl_alloc_mw_req *req,
	     struct droce_ctrl_alloc_mw_rep *rep)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct dev_mw *mw;
	int ret;

	if (pd == NULL)
		return EINVAL;
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL)
		return ENOMEM;
	ret = dev_obj_add(cl->dev, cl, &mw->o, OBJ_MW);
	if (ret == 0) {
		ret = droce_mw_alloc(cl->dev->keys, pd->o.handle, (enum ibv_mw_type)req->type, &mw->mw);
		if (ret < 0)
			dev_obj_del(cl->dev, &mw->o);
	}
	if (ret < 0) {
		free(mw);
		return -ret;
	}
	mw->pd = pd;
	pd->refs++;
	rep->mw_handle = mw->o.handle;
	rep->rkey = mw->mw.rkey;
	return 0;
}
