/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Indirect regions (on-demand paged, or ordinary ones their client could
 * not move): the client's handle on its own memory (checked and kept), and
 * ibv_advise_mr(3)'s checks. The engine reaches the memory
 * in verbs_engine_ops.c (ops_mem_copy); doc/architecture.md says why a
 * descriptor of the client's /proc/self/mem and not its pid.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "verbs_dev_priv.h"

#define ACCESS_WRITES (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)

/*
 * The descriptor must be a process's mem file (/proc/<pid>/mem or its
 * task's): nothing else is read at an address, and anything else could
 * block a worker (a pipe, a FIFO). Whose mem it is matters not: a client
 * that could open another process's mem file may write there itself.
 */
bool
dev_fd_is_proc_mem(int fd)
{
	char path[64], target[256];
	struct statfs sfs;
	struct stat st;
	ssize_t n;

	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 4)
		return false;
	target[n] = '\0';
	return strcmp(target + n - 4, "/mem") == 0;
}

int
dev_odp_fd_take(int fd, unsigned int access, int *out, bool *writable)
{
	int mode;

	if (fd < 0 || !dev_fd_is_proc_mem(fd))
		return EINVAL;
	mode = fcntl(fd, F_GETFL);
	if (mode < 0)
		return EINVAL;
	*writable = (mode & O_ACCMODE) == O_RDWR;
	if (!*writable && ((mode & O_ACCMODE) != O_RDONLY || (access & ACCESS_WRITES)))
		return EACCES;
	*out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return *out < 0 ? EMFILE : 0;
}

/*
 * ibv_advise_mr(3)'s errors: the PD EINVAL, an unknown advice EOPNOTSUPP,
 * unknown flags or no SGE EINVAL; per SGE an unknown lkey EFAULT, a window's
 * key or a region that is not on-demand paged EINVAL, another PD's region
 * EPERM, PREFETCH_WRITE without LOCAL_WRITE EPERM, a range outside the
 * region EFAULT. Each SGE's client address goes back: the shim faults the
 * pages in (PREFETCH, PREFETCH_WRITE) where the kernel answers for them.
 */
int
dev_advise_mr(struct droce_client *cl, const struct droce_ctrl_advise_mr_req *req,
	      struct droce_ctrl_advise_mr_rep *rep)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	unsigned int i;

	memset(rep, 0, sizeof(*rep));
	if (pd == NULL)
		return EINVAL;
	if (req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((req->flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || req->num_sge == 0 ||
	    req->num_sge > DROCE_CTRL_ADVISE_MAX_SGE)
		return EINVAL;
	for (i = 0; i < req->num_sge; i++) {
		const struct droce_ctrl_advise_sge *g = &req->sge[i];
		struct droce_mr *mr = droce_mr_get(cl->dev->keys, g->lkey);
		enum droce_acc_result r;
		uint64_t addr = 0;
		bool odp;
		int fd;

		if (mr == NULL)
			return droce_mw_get(cl->dev->keys, g->lkey) != NULL ? EINVAL : EFAULT;
		if (mr->pd != pd->o.handle)
			return EPERM;
		if (!(mr->access & IBV_ACCESS_ON_DEMAND))
			return EINVAL;
		if (req->advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
		    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return EPERM;
		if (g->length == 0)
			continue;
		r = droce_access_odp(cl->dev->keys, g->lkey, pd->o.handle, 0, g->addr, g->length,
				     DROCE_ACC_LOCAL_READ, &addr, &fd, &odp);
		if (r != DROCE_ACC_ODP)
			return EFAULT;
		rep->addr[i] = addr;
	}
	return 0;
}
