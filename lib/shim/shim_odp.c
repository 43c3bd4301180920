/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * On-demand paging: the handle droced reaches an ODP region through (this
 * process's own /proc/self/mem, opened once per process and handed over
 * with each ODP registration, and with each ordinary one shim_mem.c could
 * not move), and ibv_advise_mr(3). Nothing is moved or pinned: see
 * doc/architecture.md, "On-demand paging".
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim_priv.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

static pthread_mutex_t odp_lock = PTHREAD_MUTEX_INITIALIZER;
static int odp_fd = -1;
static pid_t odp_pid;		/* whose mem odp_fd is: a forked child opens its own */

int
shim_odp_mem_fd(void)
{
	pid_t me = getpid();
	int fd;

	pthread_mutex_lock(&odp_lock);
	if (odp_fd >= 0 && odp_pid != me) {
		close(odp_fd);	/* the parent's memory, not ours */
		odp_fd = -1;
	}
	if (odp_fd < 0) {
		odp_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		odp_pid = me;
	}
	fd = odp_fd;
	pthread_mutex_unlock(&odp_lock);
	return fd;
}

int
shim_odp_touch(uint64_t addr, uint64_t len, bool write)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = addr & ~(pg - 1), hi = (addr + len + pg - 1) & ~(pg - 1);

	if (madvise((void *)(uintptr_t)lo, hi - lo,
		    write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0)
		return 0;
	/* ENOMEM: not mapped; EFAULT, EINVAL, EPERM: mapped but not so reachable */
	return errno == ENOMEM || errno == EFAULT || errno == EINVAL || errno == EPERM ? EFAULT :
	       errno;
}

/*
 * droced checks the keys, ranges and rights (verbs_dev_odp.c) and gives
 * each SGE's address; PREFETCH and PREFETCH_WRITE then fault the pages in
 * here, where the kernel tells a page that cannot be had (EFAULT).
 * PREFETCH_NO_FAULT only checks. Synchronous either way, so
 * IBV_ADVISE_MR_FLAG_FLUSH asks for nothing more.
 */
int
shim_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
	       struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct droce_ctrl_advise_mr_req req;
	struct droce_ctrl_advise_mr_rep rep;
	uint32_t done = 0, i;
	int ret;

	if (pd == NULL)
		return EINVAL;
	if (num_sge > 0 && sg_list == NULL)
		return EFAULT;
	do {	/* at least one call: droced answers num_sge 0 and the other errors */
		uint32_t n = num_sge - done;

		if (n > DROCE_CTRL_ADVISE_MAX_SGE)
			n = DROCE_CTRL_ADVISE_MAX_SGE;
		memset(&req, 0, sizeof(req));
		req.pd_handle = pd->handle;
		req.advice = (uint32_t)advice;
		req.flags = flags;
		req.num_sge = n;
		for (i = 0; i < n; i++) {
			req.sge[i].addr = sg_list[done + i].addr;
			req.sge[i].length = sg_list[done + i].length;
			req.sge[i].lkey = sg_list[done + i].lkey;
		}
		ret = shim_call(to_sctx(pd->context), DROCE_CTRL_ADVISE_MR, &req, sizeof(req), NULL,
				0, &rep, sizeof(rep), NULL, 0);
		if (ret != 0)
			return ret;
		for (i = 0; i < n && advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT; i++) {
			if (req.sge[i].length == 0)
				continue;
			ret = shim_odp_touch(rep.addr[i], req.sge[i].length,
					advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE);
			if (ret != 0)
				return ret;
		}
		done += n;
	} while (done < num_sge);
	return 0;
}
