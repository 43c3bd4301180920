/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_reg_mr(3) and ibv_rereg_mr(3): every access flag of the page
 * (accepted and honoured as the agent's RDMA sees it, or refused with the
 * errno rdma-core gives), ibv_reg_mr_iova()/ibv_reg_mr_iova2() addressing,
 * ibv_reg_dmabuf_mr() on a descriptor it can map and on one it cannot,
 * on-demand paging (explicit and implicit), ibv_rereg_mr() of access,
 * translation and PD with its error codes, ibv_dereg_mr(). After
 * ibv_rereg_mr() an MR acts as a fresh registration with the new attributes
 * (every pair of rights, translation, PD, ZERO_BASED: probed by the agent's
 * WRITE, READ, FETCH_AND_ADD and our own READ into it) and keeps its keys.
 * A remote access error breaks an RC pair: the early checks take a fresh
 * one, the probes restate theirs.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/udmabuf.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_test.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW (LW | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
/* IBV_ACCESS_FLUSH_* of rdma-core 43+ (in the man page, not in this machine's verbs.h) */
#define ACCESS_FLUSH_GLOBAL	(1u << 8)
#define ACCESS_FLUSH_PERSISTENT	(1u << 9)
#define IOVA 0x100000000ull	/* an iova far from any buffer address */

static struct vt_remote_mr rmr;	/* the agent's source and sink: 4 KiB of 'p' */

/* A fresh RC pair: an access error leaves the previous one in error. */
static struct vt_pair
pair(void)
{
	return vt_pair(IBV_QPT_RC, 0);
}

/* The agent's @p op on a fresh pair, from its first bytes (refilled with 'p'). */
static int
peer(enum ibv_wr_opcode op, uint64_t addr, uint32_t rkey, uint32_t len)
{
	struct vt_pair p = pair();

	vt_remote_fill(rmr.id, 0, 64, 'p');

	return vt_remote_rdma(&p, op, rmr.id, addr, rkey, len);
}

static struct ibv_mr *
reg(size_t len, unsigned int access)
{
	void *buf = aligned_alloc(4096, len);

	vt_require(buf != NULL, "aligned_alloc");
	memset(buf, 0, len);
	errno = 0;
	return ibv_reg_mr(vt.pd, buf, len, (int)access);
}

static void
accepted(void)
{
	static const struct {
		unsigned int access;
		const char *name;
	} ok[] = {
		{ 0, "access 0 (local read only)" },
		{ LW, "LOCAL_WRITE" },
		{ IBV_ACCESS_REMOTE_READ, "REMOTE_READ" },
		{ LW | IBV_ACCESS_REMOTE_WRITE, "LOCAL_WRITE | REMOTE_WRITE" },
		{ LW | IBV_ACCESS_REMOTE_ATOMIC, "LOCAL_WRITE | REMOTE_ATOMIC" },
		{ IBV_ACCESS_MW_BIND, "MW_BIND" },
		{ RW | IBV_ACCESS_ZERO_BASED, "ZERO_BASED" },
		{ RW | IBV_ACCESS_ON_DEMAND, "ON_DEMAND (explicit range)" },
		{ RW | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB, "ON_DEMAND | HUGETLB" },
		{ RW | IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING" },
	};
	static const struct {
		unsigned int access;
		int err;
		const char *name;
	} bad[] = {
		{ IBV_ACCESS_REMOTE_WRITE, EINVAL, "REMOTE_WRITE without LOCAL_WRITE: EINVAL" },
		{ IBV_ACCESS_REMOTE_ATOMIC, EINVAL, "REMOTE_ATOMIC without LOCAL_WRITE: EINVAL" },
		{ LW | ACCESS_FLUSH_GLOBAL, EOPNOTSUPP, "FLUSH_GLOBAL (no FLUSH): EOPNOTSUPP" },
		{ LW | ACCESS_FLUSH_PERSISTENT, EOPNOTSUPP,
		  "FLUSH_PERSISTENT (no FLUSH): EOPNOTSUPP" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct ibv_mr *mr = reg(4096, ok[i].access);

		vt_check(mr != NULL && mr->pd == vt.pd && mr->context == vt.ctx &&
			 mr->length == 4096 && mr->addr != NULL, ok[i].name, "errno %d", errno);
		if (mr != NULL)
			vt_check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr returns 0", "failed");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ibv_mr *mr = reg(4096, bad[i].access);

		vt_check(mr == NULL && errno == bad[i].err, bad[i].name, "mr %p errno %d",
			 (void *)mr, errno);
	}
	/* implicit ODP (tests/verbs/odp_mr.c uses it): at iova 0 only, as mlx5 */
	errno = 0;
	{
		struct ibv_mr *mr = ibv_reg_mr(vt.pd, NULL, SIZE_MAX, RW | IBV_ACCESS_ON_DEMAND);
		struct ibv_mr *at = ibv_reg_mr_iova(vt.pd, NULL, SIZE_MAX, 0x1000,
						    RW | IBV_ACCESS_ON_DEMAND);

		vt_check(mr != NULL, "implicit ODP (addr 0, SIZE_MAX) registers", "errno %d", errno);
		vt_check(at == NULL && errno == EINVAL, "implicit ODP at iova 0x1000: EINVAL",
			 "mr %p errno %d", (void *)at, errno);
		if (mr != NULL)
			ibv_dereg_mr(mr);
	}
}

/* Each remote right on and off, through the agent's RDMA. */
static void
honoured(void)
{
	struct ibv_mr *w = reg(4096, LW | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *r = reg(4096, IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *a = reg(4096, LW | IBV_ACCESS_REMOTE_ATOMIC);
	struct ibv_mr *none = reg(4096, 0);
	uint64_t v;

	vt_require(w && r && a && none, "reg_mr");
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)w->addr + 8, w->rkey, 16) == IBV_WC_SUCCESS &&
		 ((char *)w->addr)[8] == 'p' && ((char *)w->addr)[23] == 'p' &&
		 ((char *)w->addr)[24] == 0, "REMOTE_WRITE: the peer's WRITE lands", "failed");
	vt_check(peer(IBV_WR_RDMA_READ, (uintptr_t)w->addr, w->rkey, 8) == IBV_WC_REM_ACCESS_ERR,
		 "without REMOTE_READ the peer's READ is a remote access error", "accepted");
	memcpy(r->addr, "readable", 8);
	vt_check(peer(IBV_WR_RDMA_READ, (uintptr_t)r->addr, r->rkey, 8) == IBV_WC_SUCCESS,
		 "REMOTE_READ: the peer's READ succeeds", "failed");
	{
		char back[8];

		vt_remote_read(rmr.id, 0, back, 8);
		vt_check(memcmp(back, "readable", 8) == 0, "the READ brought our bytes", "wrong");
	}
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)r->addr, r->rkey, 8) == IBV_WC_REM_ACCESS_ERR &&
		 memcmp(r->addr, "readable", 8) == 0,
		 "without REMOTE_WRITE the peer's WRITE fails and changes nothing", "accepted");
	vt_check(peer(IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)a->addr, a->rkey, 8) ==
		 IBV_WC_SUCCESS && (memcpy(&v, a->addr, 8), v == 1),
		 "REMOTE_ATOMIC: the peer's FETCH_AND_ADD adds", "failed");
	vt_check(peer(IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)w->addr, w->rkey, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "without REMOTE_ATOMIC the peer's atomic fails",
		 "accepted");
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)none->addr, none->rkey, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "access 0: no remote right at all", "accepted");

	/* local rights: read always, write only with LOCAL_WRITE */
	{
		struct vt_pair p = pair();
		struct ibv_sge sge = { (uintptr_t)none->addr, 8, none->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
					  .num_sge = 1, .wr.rdma = { rmr.addr + 64, rmr.rkey } };
		char back[8];

		memcpy(none->addr, "localrd!", 8);
		vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_SUCCESS, "local read is always enabled",
			 "failed");
		vt_remote_read(rmr.id, 64, back, 8);
		vt_check(memcmp(back, "localrd!", 8) == 0, "the WRITE from it carried its bytes",
			 "wrong");
		wr.opcode = IBV_WR_RDMA_READ;
		sge.addr = (uintptr_t)r->addr;
		sge.lkey = r->lkey;
		vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_LOC_PROT_ERR &&
			 memcmp(r->addr, "readable", 8) == 0,
			 "without LOCAL_WRITE a READ into the MR is a local protection error",
			 "accepted");
	}
	ibv_dereg_mr(w);
	ibv_dereg_mr(r);
	ibv_dereg_mr(a);
	ibv_dereg_mr(none);
}

/* ZERO_BASED and the iova variants: where the peer's address lands. */
static void
addressing(void)
{
	char *buf = aligned_alloc(4096, 8192);
	struct ibv_mr *mr;

	vt_require(buf != NULL, "aligned_alloc");
	memset(buf, 0, 8192);
	mr = ibv_reg_mr(vt.pd, buf, 4096, RW | IBV_ACCESS_ZERO_BASED);
	vt_require(mr != NULL, "reg_mr ZERO_BASED");
	vt_check(peer(IBV_WR_RDMA_WRITE, 16, mr->rkey, 8) == IBV_WC_SUCCESS && buf[16] == 'p' &&
		 buf[15] == 0, "ZERO_BASED: the peer's address 16 is byte 16 of the MR", "failed");
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)buf, mr->rkey, 8) == IBV_WC_REM_ACCESS_ERR,
		 "ZERO_BASED: the buffer's own address is out of range", "accepted");
	ibv_dereg_mr(mr);

	memset(buf, 0, 8192);
	mr = ibv_reg_mr_iova(vt.pd, buf + 4096, 4096, IOVA, RW);
	vt_require(mr != NULL, "reg_mr_iova");
	vt_check(mr->addr == buf + 4096, "ibv_reg_mr_iova keeps mr->addr", "%p", mr->addr);
	vt_check(peer(IBV_WR_RDMA_WRITE, IOVA + 32, mr->rkey, 8) == IBV_WC_SUCCESS &&
		 buf[4096 + 32] == 'p' && buf[4096 + 31] == 0,
		 "ibv_reg_mr_iova: offset = addr + (iova - hca_va)", "failed");
	vt_check(peer(IBV_WR_RDMA_WRITE, IOVA + 4096 - 4, mr->rkey, 8) == IBV_WC_REM_ACCESS_ERR,
		 "ibv_reg_mr_iova: the length counts from hca_va", "accepted");
	ibv_dereg_mr(mr);

	memset(buf, 0, 8192);
	mr = ibv_reg_mr_iova2(vt.pd, buf, 4096, 0, RW);
	vt_require(mr != NULL, "reg_mr_iova2");
	vt_check(peer(IBV_WR_RDMA_WRITE, 100, mr->rkey, 8) == IBV_WC_SUCCESS && buf[100] == 'p',
		 "ibv_reg_mr_iova2 with hca_va 0 acts as ZERO_BASED", "failed");
	ibv_dereg_mr(mr);

	memset(buf, 0, 8192);
	mr = ibv_reg_mr(vt.pd, buf, 4096, RW | IBV_ACCESS_ON_DEMAND);
	vt_require(mr != NULL, "reg_mr ODP");
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)buf + 200, mr->rkey, 8) == IBV_WC_SUCCESS &&
		 buf[200] == 'p', "ON_DEMAND (explicit): the peer writes into it", "failed");
	ibv_dereg_mr(mr);
	free(buf);
}

/* Register @p fd (16 KiB, its bytes visible at @p map) and let the peer WRITE into it. */
static void
dmabuf_write(int fd, const char *map, const char *what)
{
	struct ibv_mr *mr = ibv_reg_dmabuf_mr(vt.pd, 4096 + 512, 4096, IOVA + 512, fd, RW);

	vt_check(mr != NULL && mr->length == 4096, what, "errno %d", errno);
	if (mr != NULL) {
		vt_check(peer(IBV_WR_RDMA_WRITE, IOVA + 512 + 8, mr->rkey, 8) == IBV_WC_SUCCESS &&
			 map[4096 + 512 + 8] == 'p' && map[4096 + 512 + 7] == 0,
			 "the peer's WRITE at iova + 8 lands at offset + 8 of the buffer",
			 "failed");
		vt_check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr of a dma-buf MR", "failed");
	}
}

/* A real dma-buf from /dev/udmabuf over a sealed memfd, where the kernel has it. */
static void
udmabuf(void)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = 16384 };
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC), buf;
	char *map;

	if (dev < 0) {
		printf("note no /dev/udmabuf here: real dma-buf registration not exercised\n");
		return;
	}
	uc.memfd = (uint32_t)memfd_create("vt-udmabuf", MFD_ALLOW_SEALING);
	vt_require((int)uc.memfd >= 0 && ftruncate((int)uc.memfd, 16384) == 0 &&
		   fcntl((int)uc.memfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0, "memfd for udmabuf");
	buf = ioctl(dev, UDMABUF_CREATE, &uc);
	vt_require(buf >= 0, "UDMABUF_CREATE");
	map = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, (int)uc.memfd, 0);
	vt_require(map != MAP_FAILED, "mmap");
	dmabuf_write(buf, map, "ibv_reg_dmabuf_mr on a udmabuf dma-buf");
	munmap(map, 16384);
	close(buf);
	close((int)uc.memfd);
	close(dev);
}

static void
dmabuf(void)
{
	int fd = memfd_create("vt-dmabuf", MFD_ALLOW_SEALING);
	int pfd[2];
	char *map;
	struct ibv_mr *mr;

	/* a sealed memfd is a buffer both sides can map, like a dma-buf */
	vt_require(fd >= 0 && ftruncate(fd, 16384) == 0 &&
		   fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0, "memfd");
	map = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	vt_require(map != MAP_FAILED, "mmap");
	dmabuf_write(fd, map, "ibv_reg_dmabuf_mr on a mappable descriptor (sealed memfd)");
	{
		static const struct {
			unsigned int access;
			const char *name;
		} only[] = {
			{ IBV_ACCESS_MW_BIND, "a dma-buf MR takes no MW_BIND: EINVAL" },
			{ IBV_ACCESS_ZERO_BASED, "a dma-buf MR takes no ZERO_BASED: EINVAL" },
			{ IBV_ACCESS_ON_DEMAND, "a dma-buf MR takes no ON_DEMAND: EINVAL" },
		};
		unsigned int i;

		for (i = 0; i < sizeof(only) / sizeof(only[0]); i++) {
			errno = 0;
			mr = ibv_reg_dmabuf_mr(vt.pd, 0, 4096, 0, fd, (int)(LW | only[i].access));
			vt_check(mr == NULL && errno == EINVAL, only[i].name, "mr %p errno %d",
				 (void *)mr, errno);
		}
		mr = ibv_reg_dmabuf_mr(vt.pd, 0, 4096, 0x10000, fd,
				       LW | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
					       IBV_ACCESS_RELAXED_ORDERING);
		vt_check(mr != NULL && ibv_dereg_mr(mr) == 0,
			 "a dma-buf MR with every flag of the page's list", "errno %d", errno);
		errno = 0;
		mr = ibv_reg_dmabuf_mr(vt.pd, 100, 4096, 0x10000, fd, LW);
		vt_check(mr == NULL && errno == EINVAL,
			 "iova with a page offset other than offset's: EINVAL", "mr %p errno %d",
			 (void *)mr, errno);
		mr = ibv_reg_dmabuf_mr(vt.pd, 100, 4096, 0x10000 + 100, fd, LW);
		vt_check(mr != NULL && mr->length == 4096 && ibv_dereg_mr(mr) == 0,
			 "iova with offset's page offset (offset 100)", "errno %d", errno);
	}
	munmap(map, 16384);
	close(fd);
	udmabuf();

	vt_require(pipe(pfd) == 0, "pipe");
	errno = 0;
	mr = ibv_reg_dmabuf_mr(vt.pd, 0, 4096, 0, pfd[0], LW);
	vt_check(mr == NULL && errno == EOPNOTSUPP,
		 "ibv_reg_dmabuf_mr on a descriptor that cannot be mapped: EOPNOTSUPP",
		 "mr %p errno %d", (void *)mr, errno);
	close(pfd[0]);
	close(pfd[1]);
}

static void
rereg(void)
{
	struct ibv_mr *mr = reg(4096, RW);
	char *other = aligned_alloc(4096, 4096);
	struct ibv_pd *pd2 = ibv_alloc_pd(vt.ctx);
	uint32_t old;
	int ret;

	vt_require(mr != NULL && other != NULL && pd2 != NULL, "setup");
	memset(other, 0, 4096);

	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	vt_check(ret == IBV_REREG_MR_ERR_INPUT, "flags 0: IBV_REREG_MR_ERR_INPUT", "%d", ret);
	ret = ibv_rereg_mr(mr, 1 << 7, NULL, NULL, 0, 0);
	vt_check(ret == IBV_REREG_MR_ERR_INPUT, "an unknown flag: IBV_REREG_MR_ERR_INPUT", "%d",
		 ret);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE);
	vt_check(ret == IBV_REREG_MR_ERR_INPUT,
		 "new access with REMOTE_WRITE but no LOCAL_WRITE: IBV_REREG_MR_ERR_INPUT", "%d",
		 ret);
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)mr->addr, mr->rkey, 8) == IBV_WC_SUCCESS,
		 "after an input error the old MR is valid", "broken");

	/* access: the new rights apply, the old key is gone */
	old = mr->rkey;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   LW | IBV_ACCESS_REMOTE_READ);
	vt_check(ret == 0, "IBV_REREG_MR_CHANGE_ACCESS returns 0", "%d errno %d", ret, errno);
	vt_check(peer(IBV_WR_RDMA_READ, (uintptr_t)mr->addr, mr->rkey, 8) == IBV_WC_SUCCESS,
		 "the new REMOTE_READ right works", "failed");
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)mr->addr, mr->rkey, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "the dropped REMOTE_WRITE right is refused", "accepted");
	vt_check(old == mr->rkey, "the R_Key stays", "%#x, was %#x", mr->rkey, old);

	/* translation: the same MR now covers another buffer */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL,
			   other, 4096, RW);
	vt_check(ret == 0 && mr->addr == other && mr->length == 4096,
		 "IBV_REREG_MR_CHANGE_TRANSLATION moves the MR", "%d errno %d", ret, errno);
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)other + 40, mr->rkey, 8) == IBV_WC_SUCCESS &&
		 other[40] == 'p', "the peer's WRITE lands in the new buffer", "failed");

	/* PD: a QP of the old PD may no longer use the lkey */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	vt_check(ret == 0 && mr->pd == pd2, "IBV_REREG_MR_CHANGE_PD", "%d errno %d", ret, errno);
	{
		struct vt_pair p = pair();
		struct ibv_sge sge = { (uintptr_t)other, 8, mr->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
					  .num_sge = 1, .wr.rdma = { rmr.addr, rmr.rkey } };

		vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_LOC_PROT_ERR,
			 "a QP of another PD cannot use the MR", "accepted");
		ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, vt.pd, NULL, 0, 0);
		p = pair();
		sge.lkey = mr->lkey;
		vt_check(ret == 0 && vt_post_wait(p.qp, &wr) == IBV_WC_SUCCESS,
			 "back in the QP's PD it can", "failed");
	}

	/* a bound window keeps the MR as it is */
	{
		struct ibv_mr *b = reg(4096, RW | IBV_ACCESS_MW_BIND);
		struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_1);
		struct vt_pair p = pair();
		struct ibv_mw_bind bd = {
			.send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = b, .addr = (uintptr_t)b->addr, .length = 64,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
		};
		struct ibv_wc wc;

		vt_require(b != NULL && mw != NULL && ibv_bind_mw(p.qp, mw, &bd) == 0 &&
			   vt_wait(p.cq, &wc, VT_WAIT_MS) && wc.status == IBV_WC_SUCCESS, "bind");
		errno = 0;
		ret = ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW);
		vt_check(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY,
			 "ibv_rereg_mr while a window is bound: IBV_REREG_MR_ERR_CMD, EBUSY",
			 "%d errno %d", ret, errno);
		vt_check(vt_remote_rdma(&p, IBV_WR_RDMA_WRITE, rmr.id, (uintptr_t)b->addr, mw->rkey,
					8) == IBV_WC_SUCCESS, "and the window still works", "failed");
		ibv_dealloc_mw(mw);
		vt_check(ibv_dereg_mr(b) == 0, "ibv_dereg_mr after the failed rereg", "failed");
	}

	old = mr->rkey;
	vt_check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr of a reregistered MR", "failed");
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)other, old, 8) == IBV_WC_REM_ACCESS_ERR,
		 "after ibv_dereg_mr its R_Key is refused", "still works");
	ibv_dealloc_pd(pd2);
	free(other);
}

/* ---- after ibv_rereg_mr() an MR is what a registration with the new attributes is ---- */

#define RR IBV_ACCESS_REMOTE_READ
#define RWR IBV_ACCESS_REMOTE_WRITE
#define RA IBV_ACCESS_REMOTE_ATOMIC

/* Every valid mix of the rights (REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE). */
static const unsigned int rights[] = {
	0, RR, LW, LW | RR, LW | RWR, LW | RA, LW | RR | RWR, LW | RR | RA, LW | RWR | RA,
	LW | RR | RWR | RA,
};

/* What probe() saw: one bit per operation that worked, with its data. */
enum {
	SAW_PEER_WRITE = 1,	/* the agent's RDMA WRITE landed */
	SAW_PEER_READ = 2,	/* the agent's RDMA READ brought our bytes */
	SAW_PEER_ATOMIC = 4,	/* the agent's FETCH_AND_ADD added */
	SAW_LOCAL_WRITE = 8,	/* our own RDMA READ scattered into the MR */
	SAW_OLD_PLACE = 16,	/* the agent reached @p old (where the MR was before) */
};

/* Did @p st succeed? A failure leaves @p p in error: restate it for the next probe. */
static bool
worked(struct vt_pair *p, int st)
{
	if (st == IBV_WC_SUCCESS)
		return true;
	vt_pair_restate(p);
	return false;
}

/*
 * Everything @p mr lets the agent and our own QP do at offset 64 of it, addressed
 * as its iova space says (@p zero_based: from 0); @p old, if not NULL, is
 * another address the agent tries to WRITE through the same key.
 */
static unsigned int
probe(struct vt_pair *p, struct ibv_mr *mr, bool zero_based, char *old)
{
	char *at = (char *)mr->addr + 64;
	uint64_t va = zero_based ? 64 : (uintptr_t)at, v;
	unsigned int saw = 0;
	char back[8];

	memset(at, 0, 16);
	vt_remote_fill(rmr.id, 0, 64, 'p');
	if (worked(p, vt_remote_rdma(p, IBV_WR_RDMA_WRITE, rmr.id, va, mr->rkey, 8)) &&
	    memcmp(at, "pppppppp", 8) == 0 && at[8] == 0)
		saw |= SAW_PEER_WRITE;
	memcpy(at, "readable", 8);
	if (worked(p, vt_remote_rdma(p, IBV_WR_RDMA_READ, rmr.id, va, mr->rkey, 8)) &&
	    (vt_remote_read(rmr.id, 0, back, 8), memcmp(back, "readable", 8) == 0))
		saw |= SAW_PEER_READ;
	memset(at, 0, 8);
	if (worked(p, vt_remote_rdma(p, IBV_WR_ATOMIC_FETCH_AND_ADD, rmr.id, va, mr->rkey, 8)) &&
	    (memcpy(&v, at, 8), v == 1))
		saw |= SAW_PEER_ATOMIC;
	{
		struct ibv_sge sge = { va, 8, mr->lkey };	/* lkeys use the iova space too */
		struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_READ, .sg_list = &sge,
					  .num_sge = 1, .wr.rdma = { rmr.addr, rmr.rkey } };

		memset(at, 0, 8);
		vt_remote_fill(rmr.id, 0, 8, 'q');
		if (worked(p, vt_post_wait(p->qp, &wr)) && memcmp(at, "qqqqqqqq", 8) == 0)
			saw |= SAW_LOCAL_WRITE;
	}
	if (old != NULL) {
		memset(old + 64, 0, 8);
		if (worked(p, vt_remote_rdma(p, IBV_WR_RDMA_WRITE, rmr.id, (uintptr_t)old + 64,
					     mr->rkey, 8)) || old[64] != 0)
			saw |= SAW_OLD_PLACE;
	}
	return saw;
}

/* What a fresh registration of 4 KiB at @p buf in @p pd with @p access lets happen. */
static unsigned int
probe_fresh(struct vt_pair *p, struct ibv_pd *pd, void *buf, unsigned int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, (int)access);
	unsigned int saw;

	vt_require(mr != NULL, "reg_mr");
	saw = probe(p, mr, access & IBV_ACCESS_ZERO_BASED, NULL);
	ibv_dereg_mr(mr);
	return saw;
}

/*
 * rdma-core's tests/test_mr.py (test_mr_rereg_access) hands the peer the
 * R_Key of a LOCAL_WRITE-only MR, adds REMOTE_WRITE with ibv_rereg_mr() and
 * expects the peer's WRITE with that key to land, as on hardware and
 * Soft-RoCE, whose keys survive a reregistration.
 */
static void
rereg_keeps_keys(void)
{
	struct ibv_mr *mr = reg(4096, LW);
	char *other = aligned_alloc(4096, 4096);
	struct ibv_pd *pd2 = ibv_alloc_pd(vt.ctx);
	uint32_t lkey, rkey;
	int ret;

	vt_require(mr != NULL && other != NULL && pd2 != NULL, "setup");
	memset(other, 0, 4096);
	lkey = mr->lkey;
	rkey = mr->rkey;
	vt_check(rkey == lkey, "every MR has an R_Key (the lkey), remote rights or not",
		 "rkey %#x lkey %#x", rkey, lkey);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   LW | IBV_ACCESS_REMOTE_WRITE);
	vt_check(ret == 0 && mr->lkey == lkey && mr->rkey == rkey,
		 "IBV_REREG_MR_CHANGE_ACCESS keeps lkey and rkey", "%d: lkey %#x rkey %#x", ret,
		 mr->lkey, mr->rkey);
	vt_check(peer(IBV_WR_RDMA_WRITE, (uintptr_t)mr->addr + 8, rkey, 8) == IBV_WC_SUCCESS &&
		 ((char *)mr->addr)[8] == 'p',
		 "REMOTE_WRITE added: the peer's WRITE with the R_Key it had before lands",
		 "failed");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD, pd2,
			   other, 4096, 0);
	vt_check(ret == 0 && mr->lkey == lkey && mr->rkey == rkey,
		 "IBV_REREG_MR_CHANGE_TRANSLATION | CHANGE_PD keeps them too", "%d", ret);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd2);
	free(other);
}

/* Every pair of rights, old and new: the reregistered MR behaves as a fresh one. */
static void
rereg_rights(void)
{
	struct vt_pair p = pair();
	char *buf = aligned_alloc(4096, 4096);
	unsigned int want[VT_DIM(rights)], i, j, bad = 0, moved = 0;
	uint32_t lkey, rkey;

	vt_require(buf != NULL, "aligned_alloc");
	for (j = 0; j < VT_DIM(rights); j++)
		want[j] = probe_fresh(&p, vt.pd, buf, rights[j]);
	vt_check(want[0] == 0 && want[VT_DIM(rights) - 1] == (SAW_PEER_WRITE | SAW_PEER_READ |
		 SAW_PEER_ATOMIC | SAW_LOCAL_WRITE), "the probe tells rights apart",
		 "none: %#x, all: %#x", want[0], want[VT_DIM(rights) - 1]);
	for (i = 0; i < VT_DIM(rights); i++)
		for (j = 0; j < VT_DIM(rights); j++) {
			struct ibv_mr *mr = ibv_reg_mr(vt.pd, buf, 4096, (int)rights[i]);
			unsigned int saw;
			int ret;

			vt_require(mr != NULL, "reg_mr");
			lkey = mr->lkey;
			rkey = mr->rkey;
			ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
					   (int)rights[j]);
			saw = ret == 0 ? probe(&p, mr, false, NULL) : ~0u;
			if (saw != want[j]) {
				printf("note access %#x -> %#x: rereg %d, saw %#x, a fresh MR %#x\n",
				       rights[i], rights[j], ret, saw, want[j]);
				bad++;
			}
			moved += mr->lkey != lkey || mr->rkey != rkey;
			ibv_dereg_mr(mr);
		}
	vt_check(bad == 0, "IBV_REREG_MR_CHANGE_ACCESS between any two sets of rights: the MR "
		 "acts as one registered with the new rights", "%u of %zu pairs differ", bad,
		 VT_DIM(rights) * VT_DIM(rights));
	vt_check(moved == 0, "and its lkey and rkey stay what they were",
		 "changed in %u of %zu", moved, VT_DIM(rights) * VT_DIM(rights));
	free(buf);
}

/*
 * Translation, PD and ZERO_BASED changes, alone and together: the MR acts as a
 * fresh registration of the new range in the new PD, and the old range is
 * out of its reach.
 */
static void
rereg_places(void)
{
	static const unsigned int all = LW | RR | RWR | RA;
	struct vt_pair p = pair();
	char *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
	struct ibv_pd *pd2 = ibv_alloc_pd(vt.ctx);
	unsigned int want, want_none, want_zb, saw;
	struct ibv_mr *mr;
	int ret;

	vt_require(a != NULL && b != NULL && pd2 != NULL, "setup");
	memset(a, 0, 4096);
	memset(b, 0, 4096);
	want = probe_fresh(&p, vt.pd, b, all);
	want_none = probe_fresh(&p, pd2, b, all);
	{
		struct ibv_mr *zb = ibv_reg_mr(vt.pd, b, 4096, (int)(all | IBV_ACCESS_ZERO_BASED));

		vt_require(zb != NULL, "reg_mr ZERO_BASED");
		want_zb = probe(&p, zb, true, NULL);
		ibv_dereg_mr(zb);
	}
	vt_check(want == (SAW_PEER_WRITE | SAW_PEER_READ | SAW_PEER_ATOMIC | SAW_LOCAL_WRITE) &&
		 want_none == 0 && want_zb == want,
		 "a fresh MR: all rights in the QP's PD, none in another, ZERO_BASED alike",
		 "%#x %#x %#x", want, want_none, want_zb);

	mr = ibv_reg_mr(vt.pd, a, 4096, (int)all);
	vt_require(mr != NULL, "reg_mr");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, 4096, 0);
	saw = ret == 0 ? probe(&p, mr, false, a) : ~0u;
	vt_check(saw == want, "CHANGE_TRANSLATION: as a fresh MR of the new range, the old "
		 "one out of reach", "rereg %d saw %#x", ret, saw);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	saw = ret == 0 ? probe(&p, mr, false, NULL) : ~0u;
	vt_check(saw == want_none, "CHANGE_PD to another PD: as a fresh MR there (no QP of ours "
		 "reaches it)", "rereg %d saw %#x", ret, saw);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
			   IBV_REREG_MR_CHANGE_ACCESS, vt.pd, a, 4096, (int)(LW | RR));
	saw = ret == 0 ? probe(&p, mr, false, b) : ~0u;
	vt_check(saw == (SAW_PEER_READ | SAW_LOCAL_WRITE),
		 "all three at once: the new range, PD and rights, nothing of the old",
		 "rereg %d saw %#x", ret, saw);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
			   NULL, b, 4096, (int)(all | IBV_ACCESS_ZERO_BASED));
	saw = ret == 0 ? probe(&p, mr, true, NULL) : ~0u;
	vt_check(saw == want_zb, "ZERO_BASED added: addressed from 0, as a fresh ZERO_BASED MR",
		 "rereg %d saw %#x", ret, saw);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, (int)all);
	saw = ret == 0 ? probe(&p, mr, false, NULL) : ~0u;
	vt_check(saw == want, "ZERO_BASED dropped: addressed by the buffer's address again",
		 "rereg %d saw %#x", ret, saw);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd2);
	free(a);
	free(b);
}

/* Our QP's state, as ibv_query_qp() reads it. */
static enum ibv_qp_state
qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_UNKNOWN };
	struct ibv_qp_init_attr ia;

	vt_require(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0, "query_qp");
	return a.qp_state;
}

/* A rereg case: a fresh pair, an MR over page a with page b beside, a second PD. */
struct rereg_case {
	struct vt_pair p;
	char *a, *b;
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	const char *what;
};

static struct rereg_case
rereg_case_new(bool pd_change)
{
	struct rereg_case c = {
		.p = pair(), .a = aligned_alloc(4096, 4096), .b = aligned_alloc(4096, 4096),
		.pd2 = ibv_alloc_pd(vt.ctx),
		.what = pd_change ? "CHANGE_PD" : "CHANGE_TRANSLATION",
	};

	vt_require(c.a != NULL && c.b != NULL && c.pd2 != NULL, "setup");
	memset(c.a, 0, 4096);
	memset(c.b, 0, 4096);
	c.mr = ibv_reg_mr(vt.pd, c.a, 4096, LW);
	vt_require(c.mr != NULL, "reg_mr");
	return c;
}

/* The MR away from its posted receives: to page b, or (@p pd_change) to pd2. */
static void
rereg_away(struct rereg_case *c, bool pd_change)
{
	int ret = pd_change ? ibv_rereg_mr(c->mr, IBV_REREG_MR_CHANGE_PD, c->pd2, NULL, 0, 0) :
			      ibv_rereg_mr(c->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, c->b,
					   4096, 0);

	vt_require(ret == 0, "rereg_mr");
}

static void
rereg_case_free(struct rereg_case *c)
{
	ibv_dereg_mr(c->mr);
	ibv_dealloc_pd(c->pd2);
	free(c->a);
	free(c->b);
}

/*
 * A receive posted before its MR moved (IBV_REREG_MR_CHANGE_TRANSLATION) or
 * went to another PD (CHANGE_PD) fails its SGE check when a SEND consumes it:
 * the receive completes with IBV_WC_LOC_PROT_ERR, the requester gets the NAK
 * remote operational error (IBV_WC_REM_OP_ERR), both QPs are in error. Restated
 * and with the MR put back, the pair carries SENDs again (rdma-core's
 * tests/test_mr.py: test_mr_rereg_addr, test_mr_rereg_pd).
 */
static void
rereg_under_a_posted_recv(bool pd_change)
{
	struct rereg_case c = rereg_case_new(pd_change);
	struct ibv_wc wc;
	char name[160];
	bool got;
	int st, ret;

	vt_recv(c.p.qp, 1, (uintptr_t)c.a, 64, c.mr->lkey);
	rereg_away(&c, pd_change);
	vt_remote_fill(rmr.id, 0, 64, 'p');
	st = vt_remote_send(&c.p, IBV_WR_SEND, rmr.id, 0, 8, 0);
	snprintf(name, sizeof(name), "%s under a posted receive: the SEND ends in "
		 "IBV_WC_REM_OP_ERR (NAK remote operational error)", c.what);
	vt_check(st == IBV_WC_REM_OP_ERR, name, "status %d", st);
	snprintf(name, sizeof(name), "%s: the receive completes with IBV_WC_LOC_PROT_ERR", c.what);
	memset(&wc, 0, sizeof(wc));
	got = vt_wait(c.p.cq, &wc, VT_WAIT_MS);
	vt_check(got && wc.wr_id == 1 && wc.status == IBV_WC_LOC_PROT_ERR && c.a[0] == 0, name,
		 "%s wr_id %llu status %d", got ? "got" : "none,", (unsigned long long)wc.wr_id,
		 wc.status);
	snprintf(name, sizeof(name), "%s: both QPs are in the error state", c.what);
	{
		enum ibv_qp_state ours = qp_state(c.p.qp), theirs = vt_remote_qp_state(&c.p.r);

		vt_check(ours == IBV_QPS_ERR && theirs == IBV_QPS_ERR, name,
			 "ours %d, the agent's %d", ours, theirs);
	}

	ret = pd_change ? ibv_rereg_mr(c.mr, IBV_REREG_MR_CHANGE_PD, vt.pd, NULL, 0, 0) :
			  ibv_rereg_mr(c.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, c.a, 4096, 0);
	vt_require(ret == 0, "rereg_mr back");
	vt_pair_restate(&c.p);
	vt_recv(c.p.qp, 2, (uintptr_t)c.a, 64, c.mr->lkey);
	st = vt_remote_send(&c.p, IBV_WR_SEND, rmr.id, 0, 8, 0);
	snprintf(name, sizeof(name), "%s: restated RESET->RTS and the MR put back, the pair "
		 "carries a SEND again", c.what);
	memset(&wc, 0, sizeof(wc));
	got = vt_wait(c.p.cq, &wc, VT_WAIT_MS);
	vt_check(st == IBV_WC_SUCCESS && got && wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS &&
		 wc.byte_len == 8 && memcmp(c.a, "pppppppp", 8) == 0, name, "send %d, recv %s %d",
		 st, got ? "status" : "none", wc.status);
	rereg_case_free(&c);
}

/* RESET, then up to RTS again on both sides, polling nothing (rdma-core's restate_qps) */
static void
restate_undrained(struct vt_pair *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	uint64_t q[1] = { p->qp->qp_num };

	vt_require(ibv_modify_qp(p->qp, &a, IBV_QP_STATE) == 0, "modify_qp RESET");
	vt_require(vt_call(VT_QP_UP, p->r.id, q, 1, &vt.gid, sizeof(vt.gid)).status == 0,
		   "remote QP restated");
	vt_qp_up(p->qp, p->r.qpn, &p->r.gid);
}

/*
 * rdma-core's tests/test_mr.py (test_mr_rereg_addr, test_mr_rereg_pd): the
 * failed transfer's completions are never polled (two receives were
 * posted, one consumed in error, one flushed), the QPs are restated with
 * nothing drained, and the next SEND must succeed and be the first
 * completion read: a QP moved to RESET leaves nothing in its CQ, as mlx5
 * cleans it (droce's shim before 2026-12-01 handed out the old error
 * first: IBV_WC_LOC_PROT_ERR).
 */
static void
rereg_then_restate_undrained(bool pd_change)
{
	struct rereg_case c = rereg_case_new(pd_change);
	struct ibv_wc wc;
	char name[200], *at;
	bool got;
	int st;

	vt_recv(c.p.qp, 1, (uintptr_t)c.a, 64, c.mr->lkey);
	vt_recv(c.p.qp, 2, (uintptr_t)c.a + 64, 64, c.mr->lkey);
	rereg_away(&c, pd_change);
	vt_remote_fill(rmr.id, 0, 64, 'q');
	st = vt_remote_send(&c.p, IBV_WR_SEND, rmr.id, 0, 8, 0);
	snprintf(name, sizeof(name), "%s, rdma-core's flow: the SEND fails (IBV_WC_REM_OP_ERR)",
		 c.what);
	vt_check(st == IBV_WC_REM_OP_ERR, name, "status %d", st);
	restate_undrained(&c.p);
	if (pd_change)
		vt_require(ibv_rereg_mr(c.mr, IBV_REREG_MR_CHANGE_PD, vt.pd, NULL, 0, 0) == 0,
			   "rereg_mr back");
	at = pd_change ? c.a : c.b;
	vt_recv(c.p.qp, 3, (uintptr_t)at, 64, c.mr->lkey);
	st = vt_remote_send(&c.p, IBV_WR_SEND, rmr.id, 0, 8, 0);
	memset(&wc, 0, sizeof(wc));
	got = vt_wait(c.p.cq, &wc, VT_WAIT_MS);
	snprintf(name, sizeof(name), "%s, rdma-core's flow: restated with nothing polled, the "
		 "next SEND succeeds and its receive is the first completion", c.what);
	vt_check(st == IBV_WC_SUCCESS && got && wc.wr_id == 3 && wc.status == IBV_WC_SUCCESS &&
		 memcmp(at, "qqqqqqqq", 8) == 0, name, "send %d, first completion %s wr_id %llu "
		 "status %d", st, got ? "got" : "none,", (unsigned long long)wc.wr_id, wc.status);
	rereg_case_free(&c);
}

static void
drive(void)
{
	rmr = vt_remote_mr(4096, RW | IBV_ACCESS_REMOTE_ATOMIC);
	accepted();
	honoured();
	addressing();
	dmabuf();
	rereg();
	rereg_keeps_keys();
	rereg_rights();
	rereg_places();
	rereg_under_a_posted_recv(false);
	rereg_under_a_posted_recv(true);
	rereg_then_restate_undrained(false);
	rereg_then_restate_undrained(true);
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
