/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_wr_post(3) and ibv_create_qp_ex(3)'s send_ops_flags: creation
 * refuses what a QP type cannot do, every builder and setter on RC, UC and
 * UD with what the peer sees, wr_id/wr_flags taken per builder, nothing
 * on the wire before ibv_wr_complete(), abort, a bad argument failing the
 * whole batch, batches from several threads, and ibv_post_send()
 * interleaved with the builders.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "verbs_test.h"

#define OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
/* UC has no SEND_WITH_INV: the IBA defines no UC opcode with an IETH (doc/verbs.md) */
#define OPS_UC (OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define OPS_RC (OPS_UC | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV)
/* IBV_QP_EX_WITH_FLUSH of rdma-core 43+, missing from this machine's verbs.h */
#define OPS_FLUSH (1ull << 11)
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	    IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_mr *lmr;		/* 8 KiB local buffer */
static struct vt_remote_mr rmr;		/* 8 KiB on the agent */

static char *
lbuf(size_t off)
{
	return (char *)lmr->addr + off;
}

static void
creation(void)
{
	struct ibv_cq *cq = vt_cq(8);
	static const struct {
		enum ibv_qp_type type;
		uint64_t ops;
		const char *name;
	} bad[] = {
		{ IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, "UC cannot RDMA READ" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "UC cannot do atomics" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, "UD cannot RDMA WRITE" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW, "UD cannot bind windows" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_SEND_WITH_INV, "UD cannot SEND_WITH_INV" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV,
		  "UC cannot SEND_WITH_INV (no UC opcode carries an invalidate)" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_TSO, "no TSO (RAW_PACKET only): EOPNOTSUPP" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE, "no ATOMIC_WRITE: EOPNOTSUPP" },
		{ IBV_QPT_RC, OPS_FLUSH, "no FLUSH: EOPNOTSUPP" },
		{ IBV_QPT_RAW_PACKET, IBV_QP_EX_WITH_SEND, "no RAW_PACKET QPs: EOPNOTSUPP" },
		{ IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_SEND, "no XRC QPs: EOPNOTSUPP" },
	};
	struct ibv_qp *qp;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		qp = vt_qp_ex(bad[i].type, cq, bad[i].ops);
		vt_check(qp == NULL && errno == EOPNOTSUPP, bad[i].name, "qp %p errno %d", (void *)qp,
			 errno);
	}
	qp = vt_qp_ex(IBV_QPT_RC, cq, OPS_RC);
	vt_check(qp != NULL && ibv_qp_to_qp_ex(qp) != NULL, "RC with every RC operation",
		 "errno %d", errno);
	if (qp != NULL)
		ibv_destroy_qp(qp);
	qp = vt_qp_ex(IBV_QPT_UC, cq, OPS_UC);
	vt_check(qp != NULL, "UC with every UC operation", "errno %d", errno);
	if (qp != NULL)
		ibv_destroy_qp(qp);
	qp = vt_qp_ex(IBV_QPT_UD, cq, OPS_UD);
	vt_check(qp != NULL, "UD with SEND and SEND_WITH_IMM", "errno %d", errno);
	if (qp != NULL)
		ibv_destroy_qp(qp);
	qp = vt_qp(IBV_QPT_RC, cq);
	vt_check(ibv_qp_to_qp_ex(qp) == NULL, "ibv_qp_to_qp_ex without send_ops_flags is NULL",
		 "not NULL");
	ibv_destroy_qp(qp);
}

/* One builder batch of one signaled WR: @p build adds it; returns the WC status or -errno. */
static int
post1(struct vt_pair *p, uint64_t wr_id, void (*build)(struct ibv_qp_ex *x, void *arg),
      void *arg)
{
	struct ibv_wc wc;
	int ret;

	ibv_wr_start(p->x);
	p->x->wr_id = wr_id;
	p->x->wr_flags = IBV_SEND_SIGNALED;
	build(p->x, arg);
	ret = ibv_wr_complete(p->x);
	if (ret != 0)
		return -ret;
	if (!vt_wait(p->cq, &wc, VT_WAIT_MS))
		return -ETIMEDOUT;
	if (wc.wr_id != wr_id)
		return -EBADMSG;
	return (int)wc.status;
}

/* The agent's next receive: opcode, flags, immediate, length. */
static bool
remote_wc(struct vt_pair *p, enum ibv_wc_opcode op, unsigned int flags, uint32_t imm, uint32_t len)
{
	struct vt_msg m = vt_remote_poll(&p->r, VT_WAIT_MS);

	return m.status == 0 && m.a[VT_WC_STATUS] == IBV_WC_SUCCESS && m.a[VT_WC_OPCODE] == op &&
	       (m.a[VT_WC_FLAGS] & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) == flags &&
	       (!(flags & IBV_WC_WITH_IMM) || ntohl((uint32_t)m.a[VT_WC_IMM]) == imm) &&
	       m.a[VT_WC_LEN] == len;
}

static bool
remote_bytes(uint64_t off, const void *want, size_t len)
{
	char got[VT_DATA];

	vt_remote_read(rmr.id, off, got, len);
	return memcmp(got, want, len) == 0;
}

/* ibv_wr_start() and a signaled 16-byte WRITE from lbuf(0) to @p off of rmr, as @p wr_id. */
static void
begin_write16(struct ibv_qp_ex *x, uint64_t wr_id, uint64_t off)
{
	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, rmr.rkey, rmr.addr + off);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(0), 16);
}

/* ---- builders ---- */

static void
b_send(struct ibv_qp_ex *x, void *arg)
{
	(void)arg;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(0), 16);
}

static void
b_send_imm(struct ibv_qp_ex *x, void *arg)
{
	(void)arg;
	ibv_wr_send_imm(x, htonl(0x1234abcd));
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(0), 16);
}

static void
b_write_list(struct ibv_qp_ex *x, void *arg)
{
	struct ibv_sge sg[2] = {
		{ (uintptr_t)lbuf(100), 8, lmr->lkey }, { (uintptr_t)lbuf(200), 8, lmr->lkey },
	};

	(void)arg;
	ibv_wr_rdma_write(x, rmr.rkey, rmr.addr + 1024);
	ibv_wr_set_sge_list(x, 2, sg);
}

static void
b_write_imm(struct ibv_qp_ex *x, void *arg)
{
	(void)arg;
	ibv_wr_rdma_write_imm(x, rmr.rkey, rmr.addr + 2048, htonl(77));
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(0), 16);
}

static void
b_read(struct ibv_qp_ex *x, void *arg)
{
	(void)arg;
	ibv_wr_rdma_read(x, rmr.rkey, rmr.addr + 3072);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(4096), 32);
}

static void
b_fetch_add(struct ibv_qp_ex *x, void *arg)
{
	(void)arg;
	ibv_wr_atomic_fetch_add(x, rmr.rkey, rmr.addr + 4096, 5);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(5000), 8);
}

static void
b_cmp_swp(struct ibv_qp_ex *x, void *arg)
{
	(void)arg;
	ibv_wr_atomic_cmp_swp(x, rmr.rkey, rmr.addr + 4096, 0x0505050505050505ull + 5, 42);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(5008), 8);
}

/* Inline: the buffer may change right after the setter. */
static void
b_inline(struct ibv_qp_ex *x, void *arg)
{
	char tmp[12];

	(void)arg;
	memcpy(tmp, "inline-data!", 12);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, tmp, 12);
	memset(tmp, 'X', sizeof(tmp));
}

static void
b_inline_list(struct ibv_qp_ex *x, void *arg)
{
	char a[4] = "abcd", b[4] = "efgh";
	struct ibv_data_buf l[2] = { { a, 4 }, { b, 4 } };

	(void)arg;
	ibv_wr_rdma_write(x, rmr.rkey, rmr.addr + 512);
	ibv_wr_set_inline_data_list(x, 2, l);
	memset(a, 'X', 4);
}

static void
b_send_inv(struct ibv_qp_ex *x, void *arg)
{
	ibv_wr_send_inv(x, *(uint32_t *)arg);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(0), 16);
}

static void
b_bind(struct ibv_qp_ex *x, void *arg)
{
	struct ibv_mw *mw = arg;
	struct ibv_mw_bind_info bi = { .mr = lmr, .addr = (uintptr_t)lbuf(6144), .length = 1024,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };

	ibv_wr_bind_mw(x, mw, ibv_inc_rkey(mw->rkey), &bi);
}

static void
b_local_inv(struct ibv_qp_ex *x, void *arg)
{
	ibv_wr_local_inv(x, *(uint32_t *)arg);
}

static int
remote_write(struct vt_pair *p, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	return vt_remote_rdma(p, IBV_WR_RDMA_WRITE, rmr.id, raddr, rkey, len);
}

/* wr_send and wr_send_imm on a connected QP (@p qpt "RC" or "UC"), ids @p id, @p id + 1 */
static void
sends(struct vt_pair *p, const char *qpt, uint64_t id, const char *msg16)
{
	char name[96];

	memcpy(lbuf(0), msg16, 16);
	vt_remote_recv(&p->r, rmr.id, 0, 64, 1);
	snprintf(name, sizeof(name), "%s wr_send + set_sge: the peer gets the bytes", qpt);
	vt_check(post1(p, id, b_send, NULL) == IBV_WC_SUCCESS &&
		 remote_wc(p, IBV_WC_RECV, 0, 0, 16) && remote_bytes(0, msg16, 16), name, "wrong");
	vt_remote_recv(&p->r, rmr.id, 64, 64, 2);
	snprintf(name, sizeof(name), "%s wr_send_imm: the peer gets IBV_WC_RECV with IBV_WC_WITH_IMM",
		 qpt);
	vt_check(post1(p, id + 1, b_send_imm, NULL) == IBV_WC_SUCCESS &&
		 remote_wc(p, IBV_WC_RECV, IBV_WC_WITH_IMM, 0x1234abcd, 16), name, "wrong WC");
}

static void
rc_builders(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, OPS_RC);
	uint64_t v;
	int i;

	sends(&p, "RC", 11, "droce wr_send 16");
	memcpy(lbuf(100), "01234567", 8);
	memcpy(lbuf(200), "89abcdef", 8);
	vt_check(post1(&p, 13, b_write_list, NULL) == IBV_WC_SUCCESS &&
		 remote_bytes(1024, "0123456789abcdef", 16),
		 "RC wr_rdma_write + set_sge_list (2 SGEs) lands in order", "wrong");
	vt_remote_recv(&p.r, rmr.id, 128, 0, 3);
	vt_check(post1(&p, 14, b_write_imm, NULL) == IBV_WC_SUCCESS &&
		 remote_wc(&p, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM, 77, 16) &&
		 remote_bytes(2048, "droce wr_send 16", 16),
		 "RC wr_rdma_write_imm: data + IBV_WC_RECV_RDMA_WITH_IMM", "wrong");
	vt_remote_fill(rmr.id, 3072, 32, 'r');
	vt_remote_fill(rmr.id, 4096, 8, 5);	/* 0x0505... */
	vt_check(post1(&p, 15, b_read, NULL) == IBV_WC_SUCCESS && lbuf(4096)[0] == 'r' &&
		 lbuf(4096)[31] == 'r' && lbuf(4096)[32] == 0, "RC wr_rdma_read", "wrong bytes");
	vt_check(post1(&p, 16, b_fetch_add, NULL) == IBV_WC_SUCCESS &&
		 memcmp(lbuf(5000), "\5\5\5\5\5\5\5\5", 8) == 0,
		 "RC wr_atomic_fetch_add returns the old value", "wrong");
	vt_check(post1(&p, 17, b_cmp_swp, NULL) == IBV_WC_SUCCESS &&
		 memcmp(lbuf(5008), "\12\5\5\5\5\5\5\5", 8) == 0,
		 "RC wr_atomic_cmp_swp sees the added value", "wrong");
	vt_remote_read(rmr.id, 4096, &v, 8);
	vt_check(v == 42, "RC cmp_swp swapped in 42", "got %#llx", (unsigned long long)v);
	vt_remote_recv(&p.r, rmr.id, 192, 64, 4);
	vt_check(post1(&p, 18, b_inline, NULL) == IBV_WC_SUCCESS &&
		 remote_wc(&p, IBV_WC_RECV, 0, 0, 12) && remote_bytes(192, "inline-data!", 12),
		 "RC wr_set_inline_data copies at the setter", "wrong");
	vt_check(post1(&p, 19, b_inline_list, NULL) == IBV_WC_SUCCESS &&
		 remote_bytes(512, "abcdefgh", 8), "RC wr_set_inline_data_list", "wrong");

	/* windows: bind and invalidate by builders; the agent writes through them */
	{
		struct ibv_mw *mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_2);
		uint32_t rkey;

		vt_require(mw != NULL, "alloc_mw");
		rkey = ibv_inc_rkey(mw->rkey);
		vt_check(post1(&p, 20, b_bind, mw) == IBV_WC_SUCCESS &&
			 remote_write(&p, (uintptr_t)lbuf(6144), rkey, 16) == IBV_WC_SUCCESS &&
			 memcmp(lbuf(6144), "droce wr_send 16", 16) == 0,
			 "RC wr_bind_mw: the peer writes through the window", "failed");
		vt_check(post1(&p, 21, b_local_inv, &rkey) == IBV_WC_SUCCESS,
			 "RC wr_local_inv completes", "failed");
		vt_check(remote_write(&p, (uintptr_t)lbuf(6144), rkey, 16) == IBV_WC_REM_ACCESS_ERR,
			 "RC after wr_local_inv the R_Key fails at once", "still works");
	}
	/* the pair is broken now; SEND_WITH_INV on a fresh one */
	p = vt_pair(IBV_QPT_RC, OPS_RC);
	{
		uint64_t a[1] = { IBV_MW_TYPE_2 };
		struct vt_msg mw = vt_call(VT_MW_ALLOC, 0, a, 1, NULL, 0);
		uint64_t b[5] = { p.r.id, rmr.id, 0, 256, IBV_ACCESS_REMOTE_WRITE };
		struct vt_msg bd = vt_call(VT_MW_BIND, mw.id, b, 5, NULL, 0);
		uint32_t rkey = (uint32_t)bd.a[0];
		struct vt_msg m;

		vt_require(mw.status == 0 && bd.status == 0, "agent window");
		vt_remote_recv(&p.r, rmr.id, 256, 64, 5);
		i = post1(&p, 22, b_send_inv, &rkey);
		m = vt_remote_poll(&p.r, VT_WAIT_MS);
		vt_check(i == IBV_WC_SUCCESS && m.status == 0 && m.a[VT_WC_STATUS] == 0 &&
			 (m.a[VT_WC_FLAGS] & IBV_WC_WITH_INV) && m.a[VT_WC_INV_RKEY] == rkey,
			 "RC wr_send_inv: the peer sees IBV_WC_WITH_INV and the R_Key",
			 "status %d/%d flags %#llx", i, (int)m.a[VT_WC_STATUS],
			 (unsigned long long)m.a[VT_WC_FLAGS]);
		memset(lbuf(0), 'w', 16);
		{
			struct ibv_sge sge = { (uintptr_t)lbuf(0), 16, lmr->lkey };
			struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
						  .num_sge = 1,
						  .wr.rdma = { rmr.addr, rkey } };

			vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_REM_ACCESS_ERR,
				 "RC the window invalidated by SEND_WITH_INV refuses writes",
				 "accepted");
		}
	}
}

static void
uc_builders(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_UC, OPS_UC);

	sends(&p, "UC", 31, "droce uc  send16");
	memcpy(lbuf(100), "UCUCUCUC", 8);
	memcpy(lbuf(200), "ucucucuc", 8);
	vt_check(post1(&p, 33, b_write_list, NULL) == IBV_WC_SUCCESS, "UC wr_rdma_write", "failed");
	/* UC completes on sending: the later WRITE_IMM's receive orders the check */
	vt_remote_recv(&p.r, rmr.id, 128, 0, 3);
	vt_check(post1(&p, 34, b_write_imm, NULL) == IBV_WC_SUCCESS &&
		 remote_wc(&p, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM, 77, 16),
		 "UC wr_rdma_write_imm", "wrong");
	vt_check(remote_bytes(1024, "UCUCUCUCucucucuc", 16), "UC the WRITE landed", "wrong");
	{
		uint32_t rkey = rmr.rkey;

		vt_check(post1(&p, 35, b_send_inv, &rkey) == -EINVAL,
			 "UC wr_send_inv (no UC operation): ibv_wr_complete fails EINVAL",
			 "accepted");
		vt_check(vt_remote_poll(&p.r, 300).status == ETIMEDOUT, "UC nothing sent for it",
			 "something arrived");
	}
}

struct ud_arg {
	struct ibv_ah *ah;
	uint32_t qpn;
	bool addr;
};

static void
b_ud_send(struct ibv_qp_ex *x, void *arg)
{
	struct ud_arg *u = arg;

	ibv_wr_send_imm(x, htonl(99));
	if (u->addr)
		ibv_wr_set_ud_addr(x, u->ah, u->qpn, VT_QKEY);
	ibv_wr_set_inline_data(x, "ud-inline", 9);
}

static void
ud_builders(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_UD, OPS_UD);
	struct ud_arg u = { .ah = vt_ah(&p.r.gid), .qpn = p.r.qpn, .addr = true };
	struct vt_msg m;

	vt_remote_recv(&p.r, rmr.id, 0, 64 + VT_GRH_BYTES, 1);
	vt_check(post1(&p, 41, b_ud_send, &u) == IBV_WC_SUCCESS, "UD wr_send_imm + set_ud_addr",
		 "failed");
	m = vt_remote_poll(&p.r, VT_WAIT_MS);
	vt_check(m.status == 0 && m.a[VT_WC_OPCODE] == IBV_WC_RECV &&
		 (m.a[VT_WC_FLAGS] & IBV_WC_WITH_IMM) && ntohl((uint32_t)m.a[VT_WC_IMM]) == 99 &&
		 m.a[VT_WC_LEN] == 9 + VT_GRH_BYTES && m.a[VT_WC_SRC_QP] == p.qp->qp_num &&
		 remote_bytes(VT_GRH_BYTES, "ud-inline", 9),
		 "UD the peer gets GRH + data, the immediate and our QPN", "wrong WC");
	u.addr = false;
	vt_check(post1(&p, 42, b_ud_send, &u) == -EINVAL,
		 "UD without wr_set_ud_addr: ibv_wr_complete fails EINVAL", "accepted");
	vt_check(vt_remote_poll(&p.r, 300).status == ETIMEDOUT, "UD nothing sent for it",
		 "something arrived");
}

/* ---- batch rules ---- */

static void
b_two_sends(struct ibv_qp_ex *x, void *arg)
{
	(void)arg;
	x->wr_id = 51;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(0), 4);
	x->wr_id = 52;		/* applies from the next builder on */
	x->wr_flags = 0;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(4), 4);
	x->wr_id = 53;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(8), 4);
}

struct mt_arg {
	struct vt_pair *p;
	int id;
};

#define MT_THREADS 4
#define MT_BATCHES 4

static void *
mt_poster(void *arg)
{
	struct mt_arg *a = arg;
	struct ibv_qp_ex *x = a->p->x;
	int b, part;

	for (b = 0; b < MT_BATCHES; b++) {
		ibv_wr_start(x);
		for (part = 0; part < 2; part++) {
			char msg[4] = { 'T', (char)a->id, (char)b, (char)part };

			x->wr_id = (uint64_t)(a->id * 100 + b * 2 + part);
			x->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send(x);
			ibv_wr_set_inline_data(x, msg, 4);
		}
		if (ibv_wr_complete(x) != 0)
			return (void *)1;
		sched_yield();
	}
	return NULL;
}

/*
 * Inline data is copied by the setter (the buffer may be reused at once)
 * and is for SEND and RDMA_WRITE only; wr_flags IBV_SEND_SOLICITED wakes a
 * solicited-only CQ, IBV_SEND_FENCE is honoured (the WR still completes).
 * Two QPs of this process talk to each other, so both ends are ours.
 */
static void
flags_and_inline(void)
{
	struct ibv_cq *ca = vt_cq(16), *cb = vt_cq(16);
	struct ibv_qp *a = vt_qp_ex(IBV_QPT_RC, ca, OPS_RC), *b = vt_qp(IBV_QPT_RC, cb);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a);
	struct pollfd pfd = { .fd = cb->channel->fd, .events = POLLIN };
	union ibv_gid g = vt.gid;
	char msg[16] = "INLINE-COPY-0001";
	struct ibv_wc wc;
	struct ibv_cq *ecq = NULL;
	void *ectx;
	int i;

	vt_require(a != NULL && x != NULL, "QP");
	vt_qp_up(a, b->qp_num, &g);
	vt_qp_up(b, a->qp_num, &g);
	for (i = 0; i < 4; i++)
		vt_recv(b, (uint64_t)i, (uintptr_t)lbuf(4096 + 64 * (size_t)i), 64, lmr->lkey);

	ibv_wr_start(x);
	x->wr_id = 80;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, msg, sizeof(msg));
	memset(msg, 'X', sizeof(msg));		/* reused before ibv_wr_complete */
	vt_check(ibv_wr_complete(x) == 0 && vt_wait(ca, &wc, VT_WAIT_MS) &&
		 wc.status == IBV_WC_SUCCESS && vt_wait(cb, &wc, VT_WAIT_MS) &&
		 memcmp(lbuf(4096), "INLINE-COPY-0001", 16) == 0,
		 "inline data is copied by the setter: the buffer may be reused at once", "got %.16s",
		 lbuf(4096));

	ibv_wr_start(x);
	x->wr_id = 81;
	ibv_wr_rdma_read(x, lmr->rkey, (uintptr_t)lbuf(0));
	ibv_wr_set_inline_data(x, msg, 8);
	vt_check(ibv_wr_complete(x) == EINVAL && !vt_wait(ca, &wc, 200),
		 "inline data on an RDMA READ (SEND and RDMA_WRITE only): EINVAL", "accepted");

	/* solicited-only notification: an unsolicited SEND does not wake it, a solicited one does */
	vt_require(ibv_req_notify_cq(cb, 1) == 0, "req_notify_cq solicited");
	for (i = 0; i < 2; i++) {
		ibv_wr_start(x);
		x->wr_id = 82 + (uint64_t)i;
		x->wr_flags = IBV_SEND_SIGNALED | (i == 1 ? IBV_SEND_SOLICITED : 0);
		ibv_wr_send(x);
		ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(0), 8);
		vt_require(ibv_wr_complete(x) == 0 && vt_wait(ca, &wc, VT_WAIT_MS), "send");
		if (i == 0)
			vt_check(poll(&pfd, 1, 300) == 0,
				 "a SEND without IBV_SEND_SOLICITED: no solicited-only event",
				 "event");
	}
	vt_check(poll(&pfd, 1, VT_WAIT_MS) == 1 && ibv_get_cq_event(cb->channel, &ecq, &ectx) == 0 &&
		 ecq == cb, "wr_flags IBV_SEND_SOLICITED: the receiver's solicited-only event",
		 "none");
	if (ecq == cb)
		ibv_ack_cq_events(cb, 1);
	while (ibv_poll_cq(cb, 1, &wc) == 1)
		;

	/* a READ, then a fenced SEND: it waits for the READ, then completes */
	memcpy(lbuf(256), "fenced-read-src!", 16);
	ibv_wr_start(x);
	x->wr_id = 84;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, lmr->rkey, (uintptr_t)lbuf(256));
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(512), 16);
	x->wr_id = 85;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lbuf(512), 16);
	{
		struct ibv_wc w2;

		vt_check(ibv_wr_complete(x) == 0 && vt_wait(ca, &wc, VT_WAIT_MS) &&
			 vt_wait(ca, &w2, VT_WAIT_MS) && wc.wr_id == 84 && w2.wr_id == 85 &&
			 w2.status == IBV_WC_SUCCESS && vt_wait(cb, &wc, VT_WAIT_MS) &&
			 memcmp(lbuf(4096 + 64 * 3), "fenced-read-src!", 16) == 0,
			 "IBV_SEND_FENCE: the SEND after a READ carries what the READ brought",
			 "failed");
	}
	vt_check(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0, "destroyed", "failed");
}

static void
batch_rules(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, OPS_RC);
	pthread_t th[MT_THREADS];
	struct mt_arg ma[MT_THREADS];
	struct ibv_wc wc[3];
	char zero[16] = { 0 };
	int i, n, ok;

	/* wr_id and wr_flags are read at each builder */
	memcpy(lbuf(0), "aaaabbbbcccc", 12);
	for (i = 0; i < 3; i++)
		vt_remote_recv(&p.r, rmr.id, 300 + 16 * (uint64_t)i, 16, (uint64_t)i);
	ibv_wr_start(p.x);
	b_two_sends(p.x, NULL);
	vt_check(ibv_wr_complete(p.x) == 0, "a batch of three sends", "failed");
	n = vt_wait(p.cq, &wc[0], VT_WAIT_MS) + vt_wait(p.cq, &wc[1], VT_WAIT_MS);
	vt_check(n == 2 && wc[0].wr_id == 51 && wc[1].wr_id == 53 && !vt_wait(p.cq, &wc[2], 200),
		 "wr_id and wr_flags are taken per builder (the unsignaled one is silent)",
		 "n %d ids %llu %llu", n, (unsigned long long)wc[0].wr_id,
		 (unsigned long long)wc[1].wr_id);
	for (i = 0; i < 3; i++)
		(void)vt_remote_poll(&p.r, VT_WAIT_MS);
	vt_check(remote_bytes(300, "aaaa", 4) && remote_bytes(316, "bbbb", 4) &&
		 remote_bytes(332, "cccc", 4), "the peer got all three in order", "wrong");

	/* nothing reaches the wire before ibv_wr_complete() */
	memset(lbuf(0), 'N', 16);
	begin_write16(p.x, 60, 6000);
	usleep(200000);
	ok = remote_bytes(6000, zero, 16);
	vt_check(ibv_wr_complete(p.x) == 0 && ok && vt_wait(p.cq, &wc[0], VT_WAIT_MS) &&
		 remote_bytes(6000, "NNNNNNNNNNNNNNNN", 16),
		 "nothing reaches the peer before ibv_wr_complete", ok ? "lost" : "early");

	/* ibv_wr_abort() discards the batch */
	memset(lbuf(0), 'A', 16);
	begin_write16(p.x, 61, 6100);
	ibv_wr_abort(p.x);
	vt_check(!vt_wait(p.cq, &wc[0], 300) && remote_bytes(6100, zero, 16),
		 "ibv_wr_abort discards everything since ibv_wr_start", "posted");

	/* a bad argument anywhere fails the whole batch */
	begin_write16(p.x, 62, 6200);
	ibv_wr_send(p.x);
	{
		static char big[65536];

		ibv_wr_set_inline_data(p.x, big, sizeof(big));	/* > max_inline_data */
	}
	vt_check(ibv_wr_complete(p.x) == EINVAL, "an oversized inline: ibv_wr_complete is EINVAL",
		 "not EINVAL");
	vt_check(!vt_wait(p.cq, &wc[0], 300) && remote_bytes(6200, zero, 16),
		 "the valid WR before it was not posted either", "posted");
	ibv_wr_start(p.x);
	ibv_wr_send(p.x);
	{
		struct ibv_sge sg[64];

		memset(sg, 0, sizeof(sg));
		ibv_wr_set_sge_list(p.x, 64, sg);	/* > max_send_sge */
	}
	vt_check(ibv_wr_complete(p.x) == EINVAL, "too many SGEs: ibv_wr_complete is EINVAL",
		 "not EINVAL");

	/* builders droce does not offer (TSO, ATOMIC_WRITE, XRC) fail the batch they are in */
	{
		static const char *const name[] = {
			"ibv_wr_send_tso fails the batch (EOPNOTSUPP), the WRITE before it unposted",
			"ibv_wr_atomic_write fails the batch (EOPNOTSUPP), the WRITE before it unposted",
			"ibv_wr_set_xrc_srqn fails the batch (EOPNOTSUPP), the WRITE before it unposted",
		};
		uint8_t hdr[64] = { 0 }, val[8] = { 0 };

		for (i = 0; i < 3; i++) {
			memset(lbuf(0), 'T', 16);
			begin_write16(p.x, 63, 6300);
			if (i == 0) {
				ibv_wr_send_tso(p.x, hdr, sizeof(hdr), 1000);
			} else if (i == 1) {
				ibv_wr_atomic_write(p.x, rmr.rkey, rmr.addr + 6400, val);
			} else {
				ibv_wr_send(p.x);
				ibv_wr_set_xrc_srqn(p.x, 1);
			}
			vt_check(ibv_wr_complete(p.x) == EOPNOTSUPP && !vt_wait(p.cq, &wc[0], 200) &&
				 remote_bytes(6300, zero, 16), name[i], "posted or another error");
		}
	}

	/* ibv_post_send() and the builders interleave on one QP */
	{
		struct ibv_sge sge = { (uintptr_t)lbuf(0), 4, lmr->lkey };
		struct ibv_send_wr wr = { .wr_id = 70, .opcode = IBV_WR_SEND, .sg_list = &sge,
					  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *bad;
		uint64_t ids[3] = { 0 };

		memcpy(lbuf(0), "P1P1B2B2P3P3", 12);
		for (i = 0; i < 3; i++)
			vt_remote_recv(&p.r, rmr.id, 400 + 16 * (uint64_t)i, 16, (uint64_t)i);
		ok = ibv_post_send(p.qp, &wr, &bad) == 0;
		ibv_wr_start(p.x);
		p.x->wr_id = 71;
		p.x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(p.x);
		ibv_wr_set_sge(p.x, lmr->lkey, (uintptr_t)lbuf(4), 4);
		ok &= ibv_wr_complete(p.x) == 0;
		wr.wr_id = 72;
		sge.addr = (uintptr_t)lbuf(8);
		ok &= ibv_post_send(p.qp, &wr, &bad) == 0;
		for (i = 0; i < 3 && vt_wait(p.cq, &wc[0], VT_WAIT_MS); i++)
			ids[i] = wc[0].wr_id;
		for (i = 0; i < 3; i++)
			(void)vt_remote_poll(&p.r, VT_WAIT_MS);
		vt_check(ok && ids[0] == 70 && ids[1] == 71 && ids[2] == 72 &&
			 remote_bytes(400, "P1P1", 4) && remote_bytes(416, "B2B2", 4) &&
			 remote_bytes(432, "P3P3", 4),
			 "ibv_post_send and ibv_wr_* interleave in order", "ids %llu %llu %llu",
			 (unsigned long long)ids[0], (unsigned long long)ids[1],
			 (unsigned long long)ids[2]);
	}

	/* batches from several threads are serialized: a batch's two parts are adjacent */
	for (i = 0; i < MT_THREADS * MT_BATCHES * 2; i++)
		vt_remote_recv(&p.r, rmr.id, 1024 + 8 * (uint64_t)i, 8, (uint64_t)i);
	for (i = 0; i < MT_THREADS; i++) {
		ma[i] = (struct mt_arg){ &p, i };
		pthread_create(&th[i], NULL, mt_poster, &ma[i]);
	}
	ok = 1;
	for (i = 0; i < MT_THREADS; i++) {
		void *r;

		pthread_join(th[i], &r);
		ok &= r == NULL;
	}
	for (i = 0; i < MT_THREADS * MT_BATCHES * 2 && vt_wait(p.cq, &wc[0], VT_WAIT_MS); i++)
		ok &= wc[0].status == IBV_WC_SUCCESS;
	ok &= i == MT_THREADS * MT_BATCHES * 2;
	for (i = 0; i < MT_THREADS * MT_BATCHES * 2; i += 2) {
		char m[16];
		struct vt_msg w0 = vt_remote_poll(&p.r, VT_WAIT_MS);
		struct vt_msg w1 = vt_remote_poll(&p.r, VT_WAIT_MS);

		vt_remote_read(rmr.id, 1024 + 8 * w0.a[VT_WC_ID], m, 4);
		vt_remote_read(rmr.id, 1024 + 8 * w1.a[VT_WC_ID], m + 8, 4);
		ok &= w0.status == 0 && w1.status == 0 && m[0] == 'T' && m[3] == 0 &&
		      m[11] == 1 && m[9] == m[1] && m[10] == m[2];
	}
	vt_check(ok, "batches from 4 threads on one QP arrive whole, never interleaved",
		 "interleaved or lost");
}

static void
drive(void)
{
	lmr = vt_mr(8192, RW | IBV_ACCESS_MW_BIND);
	rmr = vt_remote_mr(8192, RW | IBV_ACCESS_MW_BIND);
	creation();
	rc_builders();
	uc_builders();
	ud_builders();
	batch_rules();
	flags_and_inline();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
