/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_bind_mw(3) and ibv_alloc_mw(3): windows of type 1 and 2 on the
 * driver's memory, used by the agent (the remote peer) through RDMA WRITE
 * and READ: range, access flags, ZERO_BASED, the MR's own rights,
 * invalidation by LOCAL_INV, SEND_WITH_INV, rebinding and ibv_dealloc_mw,
 * ibv_dereg_mr while bound, the page's send_flags and notes (unsignaled
 * binds, ordering, FENCE, atomic windows). An access error breaks the pair, so each such
 * check takes a fresh one.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "verbs_test.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct ibv_mr *mr;		/* 16 KiB, MW_BIND */
static struct vt_remote_mr rmr;		/* the agent's source and sink */

static char *
at(size_t off)
{
	return (char *)mr->addr + off;
}

/* UC WRITEs complete when sent: give the bytes up to a second to land. */
static bool
lands(const char *p, char want)
{
	int i;

	for (i = 0; i < 100 && *(volatile const char *)p != want; i++)
		usleep(10000);
	return *p == want;
}

static int
agent_rdma(struct vt_pair *p, enum ibv_wr_opcode op, uint64_t addr, uint32_t rkey, uint32_t len)
{
	return vt_remote_rdma(p, op, rmr.id, addr, rkey, len);
}

/* Type 1 bind on @p p's QP of [off, off + len) of @p m; the completion status, or -errno. */
static int
bind1(struct vt_pair *p, struct ibv_mw *mw, struct ibv_mr *m, size_t off, size_t len,
      unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = m, .addr = (uintptr_t)m->addr + off, .length = len,
			       .mw_access_flags = access },
	};
	struct ibv_wc wc;
	int ret = ibv_bind_mw(p->qp, mw, &b);

	if (ret != 0)
		return -ret;
	if (!vt_wait(p->cq, &wc, VT_WAIT_MS))
		return -ETIMEDOUT;
	return wc.wr_id == 0xb1 ? (int)wc.status : -EBADMSG;
}

/* Type 2 bind through ibv_post_send(IBV_WR_BIND_MW); the new R_Key in *rkey. */
static int
bind2(struct vt_pair *p, struct ibv_mw *mw, size_t off, size_t len, unsigned int access,
      uint32_t *rkey)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW };

	*rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = *rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)at(off), .length = len, .mw_access_flags = access,
	};
	return vt_post_wait(p->qp, &wr);
}

static void
alloc(void)
{
	struct ibv_mw *mw;

	mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_1);
	vt_check(mw != NULL && mw->type == IBV_MW_TYPE_1 && mw->pd == vt.pd, "alloc_mw type 1",
		 "errno %d", errno);
	vt_check(mw != NULL && ibv_dealloc_mw(mw) == 0, "dealloc_mw of an unbound window", "failed");
	mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_2);
	vt_check(mw != NULL && mw->type == IBV_MW_TYPE_2, "alloc_mw type 2", "errno %d", errno);
	if (mw != NULL)
		ibv_dealloc_mw(mw);
	errno = 0;
	mw = ibv_alloc_mw(vt.pd, (enum ibv_mw_type)7);
	vt_check(mw == NULL && errno == EINVAL, "alloc_mw of an unknown type is EINVAL",
		 "errno %d", errno);
}

static void
type1(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_2);
	uint32_t old;
	char back[8];

	vt_require(mw != NULL && mw2 != NULL, "alloc_mw");
	vt_remote_fill(rmr.id, 0, 64, 'x');
	old = mw->rkey;
	vt_check(bind1(&p, mw, mr, 1024, 1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) ==
		 IBV_WC_SUCCESS, "type 1 bind completes on the CQ when signaled", "failed");
	vt_check(mw->rkey != old && (mw->rkey & 0xff) == ((old + 1) & 0xff),
		 "ibv_bind_mw returns the new R_Key in mw->rkey", "%#x -> %#x", old, mw->rkey);
	vt_check(ibv_dereg_mr(mr) == EBUSY, "ibv_dereg_mr fails (EBUSY) while a window is bound",
		 "not EBUSY");
	vt_check(bind1(&p, mw2, mr, 0, 64, IBV_ACCESS_REMOTE_WRITE) == -EINVAL,
		 "ibv_bind_mw of a type 2 window is EINVAL", "accepted");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(1024), mw->rkey, 64) ==
		 IBV_WC_SUCCESS && at(1024)[0] == 'x' && at(1024)[63] == 'x' && at(1023)[0] == 0,
		 "the peer writes inside the window", "failed");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_READ, (uintptr_t)at(1024), mw->rkey, 8) ==
		 IBV_WC_SUCCESS, "the peer reads inside the window", "failed");
	vt_remote_read(rmr.id, 0, back, 8);
	vt_check(memcmp(back, "xxxxxxxx", 8) == 0, "the READ brought the window's bytes", "wrong");

	/* rebinding gives a new R_Key; the old one stops at once */
	old = mw->rkey;
	vt_check(bind1(&p, mw, mr, 2048, 64, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS &&
		 mw->rkey != old, "rebinding a type 1 window gives a new R_Key", "failed");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(1024), old, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "the old R_Key stops working at once", "still works");

	/* range */
	p = vt_pair(IBV_QPT_RC, 0);
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(2048 + 32), mw->rkey, 64) ==
		 IBV_WC_REM_ACCESS_ERR && at(2048 + 64)[0] == 0,
		 "a WRITE past the window's end: remote access error, memory untouched", "accepted");

	/* access flags: a write-only window refuses READ */
	p = vt_pair(IBV_QPT_RC, 0);
	vt_check(agent_rdma(&p, IBV_WR_RDMA_READ, (uintptr_t)at(2048), mw->rkey, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "a window without REMOTE_READ refuses READ", "accepted");

	/* ibv_dealloc_mw invalidates; then the MR can go */
	p = vt_pair(IBV_QPT_RC, 0);
	old = mw->rkey;
	vt_check(ibv_dealloc_mw(mw) == 0, "dealloc_mw of a bound window", "failed");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(2048), old, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "dealloc_mw invalidates the R_Key", "still works");
	ibv_dealloc_mw(mw2);
}

/* ibv_alloc_mw(3): a window starts unbound; a type 1 bind of length 0 invalidates it. */
static void
unbound_and_zero_length(void)
{
	struct ibv_mr *m = vt_mr(4096, RW | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_1);
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	uint32_t old;

	vt_require(mw != NULL, "alloc_mw");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)m->addr, mw->rkey, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "a new window is not bound: its R_Key is refused",
		 "accepted");
	p = vt_pair(IBV_QPT_RC, 0);
	vt_require(bind1(&p, mw, m, 0, 256, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS &&
		   agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)m->addr, mw->rkey, 8) ==
		   IBV_WC_SUCCESS, "bind and use");
	old = mw->rkey;
	vt_check(bind1(&p, mw, m, 0, 0, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS,
		 "a type 1 bind of length 0 completes", "failed");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)m->addr, old, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "... and invalidates: the earlier R_Key is refused",
		 "still works");
	vt_check(ibv_dereg_mr(m) == 0, "... and unbinds: the MR deregisters", "failed");
	vt_check(ibv_dealloc_mw(mw) == 0, "dealloc_mw of the unbound window", "failed");
}

static void
qp_types(void)
{
	struct ibv_cq *cq = vt_cq(8);
	struct ibv_qp *ud = vt_qp(IBV_QPT_UD, cq);
	struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind b = { .bind_info = { .mr = mr, .addr = (uintptr_t)mr->addr,
						.length = 64,
						.mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };
	struct vt_pair uc = vt_pair(IBV_QPT_UC, 0);
	union ibv_gid g = vt.gid;

	vt_qp_up(ud, 0, &g);
	vt_check(ibv_bind_mw(ud, mw, &b) == EINVAL, "ibv_bind_mw on a UD QP is EINVAL",
		 "accepted");
	vt_check(bind1(&uc, mw, mr, 4096, 256, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS &&
		 agent_rdma(&uc, IBV_WR_RDMA_WRITE, (uintptr_t)at(4096), mw->rkey, 16) ==
		 IBV_WC_SUCCESS && lands(at(4096), 'x'), "type 1 bind on a UC QP; the peer writes",
		 "failed");
	ibv_dealloc_mw(mw);
}

static void
mr_rights(void)
{
	struct ibv_mr *nobind = vt_mr(4096, RW);
	struct ibv_mr *ronly = vt_mr(4096, IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ);
	struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_1);
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	int st;

	st = bind1(&p, mw, nobind, 0, 64, IBV_ACCESS_REMOTE_WRITE);
	vt_check(st != IBV_WC_SUCCESS, "binding to an MR without IBV_ACCESS_MW_BIND fails",
		 "bound");
	p = vt_pair(IBV_QPT_RC, 0);
	st = bind1(&p, mw, ronly, 0, 64, IBV_ACCESS_REMOTE_WRITE);
	vt_check(st != IBV_WC_SUCCESS,
		 "a REMOTE_WRITE window needs local write on the MR: bind fails", "bound");
	p = vt_pair(IBV_QPT_RC, 0);
	st = bind1(&p, mw, ronly, 0, 64, IBV_ACCESS_REMOTE_READ);
	vt_check(st == IBV_WC_SUCCESS, "a REMOTE_READ window on that MR binds", "status %d", st);
	ibv_dealloc_mw(mw);
}

/*
 * The page's flags and notes: an unsignaled bind (sq_sig_all 0) leaves no
 * CQE yet is done before a later WR of the same QP completes (so a SEND of
 * the new R_Key after it is safe); IBV_SEND_FENCE; REMOTE_ATOMIC windows
 * (local write on the MR needed); a window with no access at all.
 */
static void
flags_and_notes(void)
{
	struct ibv_mr *ronly = vt_mr(4096, IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ);
	struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_1);
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	struct ibv_mw_bind b = {
		.wr_id = 0xb0, .send_flags = 0,
		.bind_info = { .mr = mr, .addr = (uintptr_t)at(13312), .length = 256,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_sge sge = { (uintptr_t)at(0), 8, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e, .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
				  .num_sge = 1, .wr.rdma = { rmr.addr + 1024, rmr.rkey } };
	struct ibv_wc wc;
	uint64_t counter;
	int st;

	vt_require(mw != NULL, "alloc_mw");
	vt_remote_fill(rmr.id, 0, 64, 'n');
	vt_check(ibv_bind_mw(p.qp, mw, &b) == 0 && vt_post_wait(p.qp, &wr) == IBV_WC_SUCCESS,
		 "an unsignaled bind is posted, the WRITE after it completes", "failed");
	vt_check(ibv_poll_cq(p.cq, 1, &wc) == 0 && !vt_wait(p.cq, &wc, 200),
		 "the unsignaled bind left no CQE (sq_sig_all 0)", "wr_id %#llx",
		 (unsigned long long)wc.wr_id);
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(13312), mw->rkey, 16) ==
		 IBV_WC_SUCCESS && at(13312)[0] == 'n',
		 "the bind was done before the later WR completed: its R_Key works", "failed");

	b.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_ATOMIC;
	b.bind_info.addr = (uintptr_t)at(13568);
	memset(at(13568), 0, 8);
	vt_check(ibv_bind_mw(p.qp, mw, &b) == 0 && vt_wait(p.cq, &wc, VT_WAIT_MS) &&
		 wc.wr_id == 0xb0 && wc.status == IBV_WC_SUCCESS,
		 "a bind with IBV_SEND_FENCE | IBV_SEND_SIGNALED completes", "failed");
	vt_check(agent_rdma(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)at(13568), mw->rkey, 8) ==
		 IBV_WC_SUCCESS && (memcpy(&counter, at(13568), 8), counter == 1),
		 "a REMOTE_ATOMIC window takes the peer's FETCH_AND_ADD", "failed");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(13568), mw->rkey, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "... and nothing else (no REMOTE_WRITE)", "accepted");

	p = vt_pair(IBV_QPT_RC, 0);
	st = bind1(&p, mw, ronly, 0, 64, IBV_ACCESS_REMOTE_ATOMIC);
	vt_check(st != IBV_WC_SUCCESS,
		 "a REMOTE_ATOMIC window needs local write on the MR: bind fails", "bound");

	p = vt_pair(IBV_QPT_RC, 0);
	vt_check(bind1(&p, mw, mr, 13312, 256, 0) == IBV_WC_SUCCESS &&
		 agent_rdma(&p, IBV_WR_RDMA_READ, (uintptr_t)at(13312), mw->rkey, 8) ==
		 IBV_WC_REM_ACCESS_ERR, "a window bound with access 0 refuses the peer", "accepted");
	/* with sq_sig_all 1 every bind completes, signaled or not */
	{
		struct ibv_cq *cq = vt_cq(8);
		struct ibv_qp_init_attr qia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
			.cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct ibv_qp *qp = ibv_create_qp(vt.pd, &qia);

		vt_require(qp != NULL, "create_qp sq_sig_all");
		(void)vt_remote_qp(qp);
		b.send_flags = 0;
		b.wr_id = 0xb2;
		b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		vt_check(ibv_bind_mw(qp, mw, &b) == 0 && vt_wait(cq, &wc, VT_WAIT_MS) &&
			 wc.wr_id == 0xb2 && wc.status == IBV_WC_SUCCESS &&
			 wc.opcode == IBV_WC_BIND_MW,
			 "sq_sig_all 1: an unsignaled bind completes (IBV_WC_BIND_MW)", "failed");
		ibv_destroy_qp(qp);
	}
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(ronly);
}

static void
type2(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_2);
	uint32_t rkey;

	vt_require(mw != NULL, "alloc_mw 2");
	vt_remote_fill(rmr.id, 0, 64, 'z');
	vt_check(bind2(&p, mw, 8192, 512, IBV_ACCESS_REMOTE_WRITE, &rkey) == IBV_WC_SUCCESS,
		 "type 2 bind by ibv_post_send(IBV_WR_BIND_MW)", "failed");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(8192), rkey, 16) ==
		 IBV_WC_SUCCESS && at(8192)[0] == 'z', "the peer writes through the type 2 window",
		 "failed");
	{
		struct ibv_send_wr wr = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = rkey };

		vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_SUCCESS, "LOCAL_INV completes",
			 "failed");
	}
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(8192), rkey, 16) ==
		 IBV_WC_REM_ACCESS_ERR, "after LOCAL_INV the R_Key fails at once", "still works");

	/* ZERO_BASED: the peer addresses the window from 0 */
	p = vt_pair(IBV_QPT_RC, 0);
	vt_check(bind2(&p, mw, 9216, 256, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED,
		       &rkey) == IBV_WC_SUCCESS &&
		 agent_rdma(&p, IBV_WR_RDMA_WRITE, 16, rkey, 16) == IBV_WC_SUCCESS &&
		 at(9216 + 16)[0] == 'z' && at(9216)[0] == 0,
		 "a ZERO_BASED window: offset 16 lands 16 bytes into it", "failed");
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, 250, rkey, 16) == IBV_WC_REM_ACCESS_ERR,
		 "a ZERO_BASED window keeps its length", "accepted");

	/* SEND_WITH_INV from the peer (a valid type 2 window cannot be bound again) */
	vt_check(ibv_dealloc_mw(mw) == 0, "dealloc_mw of a bound type 2 window", "failed");
	mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_2);
	vt_require(mw != NULL, "alloc_mw 2");
	p = vt_pair(IBV_QPT_RC, 0);
	vt_require(bind2(&p, mw, 10240, 256, IBV_ACCESS_REMOTE_WRITE, &rkey) == IBV_WC_SUCCESS,
		   "bind 2");
	vt_recv(p.qp, 5, (uintptr_t)at(12288), 64, mr->lkey);
	{
		uint64_t a[5] = { IBV_WR_SEND_WITH_INV, rkey, rmr.id, 0, 8 };
		struct ibv_wc wc;
		int st = vt_call(VT_SEND, p.r.id, a, 5, NULL, 0).status;
		bool got = vt_wait(p.cq, &wc, VT_WAIT_MS);

		vt_check(st == IBV_WC_SUCCESS && got && wc.status == IBV_WC_SUCCESS &&
			 (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey,
			 "SEND_WITH_INV: IBV_WC_WITH_INV with the window's R_Key", "st %d", st);
	}
	vt_check(agent_rdma(&p, IBV_WR_RDMA_WRITE, (uintptr_t)at(10240), rkey, 16) ==
		 IBV_WC_REM_ACCESS_ERR, "SEND_WITH_INV invalidated the window", "still works");
	vt_check(ibv_dealloc_mw(mw) == 0, "dealloc_mw type 2", "failed");
}

static void
drive(void)
{
	mr = vt_mr(16384, RW | IBV_ACCESS_MW_BIND);
	rmr = vt_remote_mr(4096, RW);
	alloc();
	type1();
	unbound_and_zero_length();
	qp_types();
	mr_rights();
	flags_and_notes();
	type2();
	vt_check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr once no window is bound", "failed");
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
