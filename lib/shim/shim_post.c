/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The data path: posting work requests into the SQ, RQ and SRQ rings, and
 * the ibv_qp_ex work-request builders. No system call (DESIGN decision 3).
 *
 * Posting copies each work request into the next free slot (the engine
 * trusts none of it and copies it again), publishes the producer index
 * with a release store, then rings the context's doorbell for the QP (or
 * SRQ) unless its flag is already set. The slot of index i is free again
 * once the engine's consumer index passed it (acquire load). A full ring
 * fails with ENOMEM and *bad_wr at the first request not posted; those
 * before it are posted. A QP the engine moved to the error state still
 * accepts work: the engine completes it with IBV_WC_WR_FLUSH_ERR. Which
 * states take work at all: sq_may_post(), rq_may_post().
 *
 * Each ring has its own spinlock: several threads may post on one QP,
 * unless the QP was created on a parent domain with a thread domain (the
 * application promised one thread per QP: no lock, ibv_alloc_td(3)). The
 * ibv_wr_start() .. ibv_wr_complete()/ibv_wr_abort() critical region holds
 * the SQ lock throughout; builders fill slots past the published producer
 * index, so nothing reaches the engine before ibv_wr_complete(), and an
 * abort or an error anywhere in the batch simply does not publish them.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "droce_shm_ops.h"
#include "shim_priv.h"

#define OPB(op) (1u << (op))

static inline void
sq_lock(struct shim_qp *qp)
{
	if (!qp->lockless)
		pthread_spin_lock(&qp->sq_lock);
}

static inline void
sq_unlock(struct shim_qp *qp)
{
	if (!qp->lockless)
		pthread_spin_unlock(&qp->sq_lock);
}

/* Opcodes that carry data which IBV_SEND_INLINE may put in the WQE. */
#define SHIM_INLINE_OPS \
	(OPB(IBV_WR_SEND) | OPB(IBV_WR_SEND_WITH_IMM) | OPB(IBV_WR_SEND_WITH_INV) | \
	 OPB(IBV_WR_RDMA_WRITE) | OPB(IBV_WR_RDMA_WRITE_WITH_IMM))
#define SHIM_IMM_OPS (OPB(IBV_WR_SEND_WITH_IMM) | OPB(IBV_WR_RDMA_WRITE_WITH_IMM))
#define SHIM_RDMA_OPS \
	(OPB(IBV_WR_RDMA_WRITE) | OPB(IBV_WR_RDMA_WRITE_WITH_IMM) | OPB(IBV_WR_RDMA_READ))
#define SHIM_ATOMIC_OPS (OPB(IBV_WR_ATOMIC_CMP_AND_SWP) | OPB(IBV_WR_ATOMIC_FETCH_AND_ADD))

static inline struct shim_context *
qp_sctx(struct shim_qp *qp)
{
	return to_sctx(qp->qp.context);
}

static inline uint32_t
max_sge(uint32_t granted)
{
	return granted < DROCE_SHM_MAX_SGE ? granted : DROCE_SHM_MAX_SGE;
}

/* A slot is free unless the engine has not consumed it yet. */
static inline bool
ring_full(struct droce_shm_view *ring, uint32_t prod)
{
	/* acquire: pairs with the engine's release of cons after copying the slots out */
	return prod - droce_shm_load_cons(ring->r) >= ring->nslots;
}

/* The daemon sleeps in epoll (--idle wait): one eventfd write wakes it. */
static void
shim_wake_daemon(int wake_fd)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is full, so a wake-up is pending anyway */
	(void)!write(wake_fd, &one, sizeof(one));
}

/* @p db: the engine that runs the QP or SRQ (checked at create) */
static inline void
ring_publish(struct shim_context *sctx, uint32_t db, struct droce_shm_view *ring, uint32_t prod,
	     uint32_t handle)
{
	ring->idx = prod;
	/* release: the slot contents happen-before the engine sees prod */
	droce_shm_publish(ring->r, prod);
	/* -EAGAIN (DB ring full) is fine: the engine rescans flagged rings */
	(void)droce_shm_doorbell(sctx->db[db].r, &ring->r->flag, handle);
	if (sctx->wake_fd[db] >= 0 && droce_shm_engine_asleep(sctx->db[db].r))
		shim_wake_daemon(sctx->wake_fd[db]);
}

/* Header fields of a send WQE; everything the engine reads is written. */
static inline void
swqe_init(struct droce_shm_swqe *w, uint64_t wr_id, uint32_t opcode, uint32_t send_flags)
{
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->send_flags = send_flags;
	w->imm_data = 0;
	w->invalidate_rkey = 0;
	w->remote_addr = 0;
	w->rkey = 0;
	w->num_sge = 0;
	w->compare_add = 0;
	w->swap = 0;
	w->ah_handle = 0;
	w->remote_qpn = 0;
	w->remote_qkey = 0;
	w->inline_len = 0;
	memset(&w->bind, 0, sizeof(w->bind));
}

static int
swqe_set_sges(struct shim_qp *qp, struct droce_shm_swqe *w, const struct ibv_sge *sg, size_t n)
{
	size_t i;

	if (n > max_sge(qp->cap.max_send_sge))
		return EINVAL;
	for (i = 0; i < n; i++) {
		w->sge[i].addr = sg[i].addr;
		w->sge[i].length = sg[i].length;
		w->sge[i].lkey = sg[i].lkey;
	}
	w->num_sge = (uint32_t)n;
	return 0;
}

/* IBV_SEND_INLINE: the bytes go into the WQE; lkeys are not looked at. */
static int
swqe_set_inline(struct shim_qp *qp, struct droce_shm_swqe *w, const struct ibv_data_buf *buf,
		size_t n)
{
	size_t i, total = 0;

	if (!(OPB(w->opcode) & SHIM_INLINE_OPS))
		return EINVAL;
	for (i = 0; i < n; i++) {
		if (buf[i].length > qp->max_inline - total)
			return EINVAL;
		memcpy(w->inline_data + total, buf[i].addr, buf[i].length);
		total += buf[i].length;
	}
	w->inline_len = (uint32_t)total;
	w->num_sge = 0;
	w->send_flags |= IBV_SEND_INLINE;
	return 0;
}

static void
swqe_set_bind(struct droce_shm_swqe *w, struct ibv_mw *mw, uint32_t rkey,
	      const struct ibv_mw_bind_info *bi)
{
	w->bind.mw_handle = mw->handle;
	w->bind.mr_lkey = bi->mr != NULL ? bi->mr->lkey : 0;
	w->bind.new_rkey = rkey;
	w->bind.access = bi->mw_access_flags;
	w->bind.addr = bi->addr;
	w->bind.length = bi->length;
}

/* struct ibv_send_wr -> slot. @return 0 or EINVAL. */
static int
swqe_fill(struct shim_qp *qp, struct droce_shm_swqe *w, const struct ibv_send_wr *wr,
	  bool type1_bind)
{
	uint32_t op = (uint32_t)wr->opcode;
	int ret;

	if (!droce_shm_qp_op_allowed(qp->qp.qp_type, op))
		return EINVAL;	/* not an operation of this QP type (droce_shm_ops.h) */
	if (wr->num_sge < 0)
		return EINVAL;
	swqe_init(w, wr->wr_id, op, wr->send_flags);
	if (OPB(op) & SHIM_IMM_OPS)
		w->imm_data = (uint32_t)wr->imm_data;
	if (op == IBV_WR_SEND_WITH_INV || op == IBV_WR_LOCAL_INV)
		w->invalidate_rkey = wr->invalidate_rkey;
	if (OPB(op) & SHIM_RDMA_OPS) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	} else if (OPB(op) & SHIM_ATOMIC_OPS) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else if (op == IBV_WR_BIND_MW) {
		if (wr->bind_mw.mw == NULL ||
		    (wr->bind_mw.mw->type == IBV_MW_TYPE_1) != type1_bind)
			return EINVAL;
		swqe_set_bind(w, wr->bind_mw.mw, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
	}
	if (qp->qp.qp_type == IBV_QPT_UD) {
		if (wr->wr.ud.ah == NULL)
			return EINVAL;
		w->ah_handle = wr->wr.ud.ah->handle;
		w->remote_qpn = wr->wr.ud.remote_qpn & 0xffffff;	/* QPNs are 24 bits */
		w->remote_qkey = wr->wr.ud.remote_qkey;
	}
	if ((wr->send_flags & IBV_SEND_INLINE) && (OPB(op) & SHIM_INLINE_OPS)) {
		struct ibv_data_buf buf[DROCE_SHM_MAX_SGE];
		int i;

		if (wr->num_sge > DROCE_SHM_MAX_SGE)
			return EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			buf[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
			buf[i].length = wr->sg_list[i].length;
		}
		return swqe_set_inline(qp, w, buf, (size_t)wr->num_sge);
	}
	w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
	ret = swqe_set_sges(qp, w, wr->sg_list, (size_t)wr->num_sge);
	return ret;
}

/*
 * Where posting is allowed (IBA 10.3.1's QP states, as Soft-RoCE and the
 * kernel apply them): the send queue takes work from RTS on -- RTS executes
 * it, SQD holds it for RTS, SQE and ERR flush it -- and refuses it before
 * (RESET, INIT, RTR: EINVAL, nothing posted); the receive queue takes work
 * from INIT on (ERR flushes it) and refuses it in RESET. The state is the one
 * this process last set or read; one droced moved to ERR still posts.
 */
static bool
sq_may_post(enum ibv_qp_state s)
{
	return s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_RTR;
}

static bool
rq_may_post(enum ibv_qp_state s)
{
	return s != IBV_QPS_RESET;
}

static int
sq_post(struct shim_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr, bool type1_bind)
{
	uint32_t prod;
	int ret = 0;

	if (!sq_may_post(qp->qp.state)) {
		*bad_wr = wr;
		return EINVAL;
	}
	sq_lock(qp);
	prod = qp->sq.idx;
	for (; wr != NULL; wr = wr->next) {
		if (ring_full(&qp->sq, prod)) {
			ret = ENOMEM;
			break;
		}
		ret = swqe_fill(qp, droce_shm_slot(qp->sq.r, prod), wr, type1_bind);
		if (ret != 0)
			break;
		prod++;
	}
	if (prod != qp->sq.idx)
		ring_publish(qp_sctx(qp), qp->db, &qp->sq, prod, qp->qp.handle);
	sq_unlock(qp);
	if (ret != 0)
		*bad_wr = wr;
	return ret;
}

int
shim_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return sq_post(to_sqp(ibqp), wr, bad_wr, false);
}

/* Type 1 windows bind through a send WQE; the new R_Key is in mw->rkey once posted. */
int
shim_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	}, *bad;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int ret;

	if (ibqp->qp_type != IBV_QPT_RC && ibqp->qp_type != IBV_QPT_UC)
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = sq_post(to_sqp(ibqp), &wr, &bad, true);
	if (ret == 0)
		mw->rkey = rkey;
	return ret;
}

/* ---- receive ---- */

static int
rq_post(struct shim_context *sctx, uint32_t db, struct droce_shm_view *ring,
	pthread_spinlock_t *lock, uint32_t handle, uint32_t max, struct ibv_recv_wr *wr,
	struct ibv_recv_wr **bad_wr)
{
	uint32_t prod;
	int ret = 0, i;

	if (lock != NULL)
		pthread_spin_lock(lock);
	prod = ring->idx;
	for (; wr != NULL; wr = wr->next) {
		struct droce_shm_rwqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max) {
			ret = EINVAL;
			break;
		}
		if (ring_full(ring, prod)) {
			ret = ENOMEM;
			break;
		}
		w = droce_shm_slot(ring->r, prod);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->reserved = 0;
		for (i = 0; i < wr->num_sge; i++) {
			w->sge[i].addr = wr->sg_list[i].addr;
			w->sge[i].length = wr->sg_list[i].length;
			w->sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	if (prod != ring->idx)
		ring_publish(sctx, db, ring, prod, handle);
	if (lock != NULL)
		pthread_spin_unlock(lock);
	if (ret != 0)
		*bad_wr = wr;
	return ret;
}

int
shim_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct shim_qp *qp = to_sqp(ibqp);

	if (qp->rq.r == NULL || !rq_may_post(ibqp->state)) {
		*bad_wr = wr;
		return EINVAL;	/* receives go to the SRQ; RESET takes none */
	}
	return rq_post(qp_sctx(qp), qp->db, &qp->rq, qp->lockless ? NULL : &qp->rq_lock,
		       ibqp->handle, max_sge(qp->cap.max_recv_sge), wr, bad_wr);
}

int
shim_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct shim_srq *srq = to_ssrq(ibsrq);

	return rq_post(to_sctx(ibsrq->context), srq->db, &srq->ring,
		       srq->lockless ? NULL : &srq->lock, ibsrq->handle, max_sge(srq->max_sge), wr,
		       bad_wr);
}

/* ---- ibv_qp_ex: work-request builders ---- */

static inline struct shim_qp *
xqp(struct ibv_qp_ex *x)
{
	return (struct shim_qp *)x;
}

static inline void
wr_fail(struct shim_qp *qp, int err)
{
	if (qp->wr_err == 0)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* The UD address is mandatory: check the WQE being left. */
static inline void
wr_check_prev(struct shim_qp *qp)
{
	if (qp->wr_cur != NULL && qp->qp.qp_type == IBV_QPT_UD && !qp->wr_addr_set)
		wr_fail(qp, EINVAL);
}

/* Start a WQE for @p op, allowed by send_ops_flag @p need. */
static struct droce_shm_swqe *
wr_new(struct ibv_qp_ex *x, uint32_t op, uint64_t need)
{
	struct shim_qp *qp = xqp(x);
	struct droce_shm_swqe *w;

	wr_check_prev(qp);
	qp->wr_cur = NULL;
	if (qp->wr_err != 0)
		return NULL;
	if (!(qp->send_ops_flags & need)) {
		wr_fail(qp, EINVAL);
		return NULL;
	}
	if (ring_full(&qp->sq, qp->wr_prod)) {
		wr_fail(qp, ENOMEM);
		return NULL;
	}
	w = droce_shm_slot(qp->sq.r, qp->wr_prod++);
	swqe_init(w, x->wr_id, op, x->wr_flags & ~(unsigned int)IBV_SEND_INLINE);
	qp->wr_cur = w;
	qp->wr_addr_set = false;
	return w;
}

static void
wr_start(struct ibv_qp_ex *x)
{
	struct shim_qp *qp = xqp(x);

	sq_lock(qp);
	qp->wr_prod = qp->sq.idx;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

static int
wr_complete(struct ibv_qp_ex *x)
{
	struct shim_qp *qp = xqp(x);
	int ret;

	wr_check_prev(qp);
	ret = qp->wr_err;
	if (ret == 0 && !sq_may_post(qp->qp.state))
		ret = EINVAL;	/* as ibv_post_send(): the batch is not posted */
	if (ret == 0 && qp->wr_prod != qp->sq.idx)
		ring_publish(qp_sctx(qp), qp->db, &qp->sq, qp->wr_prod, qp->qp.handle);
	qp->wr_cur = NULL;
	sq_unlock(qp);
	return ret;
}

static void
wr_abort(struct ibv_qp_ex *x)
{
	struct shim_qp *qp = xqp(x);

	qp->wr_cur = NULL;	/* slots past sq.idx were never published */
	sq_unlock(qp);
}

static void
wr_atomic_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr, uint64_t compare,
		  uint64_t swap)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_ATOMIC_CMP_AND_SWP,
					  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);

	if (w == NULL)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->compare_add = compare;
	w->swap = swap;
}

static void
wr_atomic_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr, uint64_t add)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_ATOMIC_FETCH_AND_ADD,
					  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);

	if (w == NULL)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->compare_add = add;
}

static void
wr_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey,
	   const struct ibv_mw_bind_info *bind_info)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW);

	if (w == NULL)
		return;
	if (mw == NULL || mw->type != IBV_MW_TYPE_2) {
		wr_fail(xqp(x), EINVAL);
		return;
	}
	swqe_set_bind(w, mw, rkey, bind_info);
}

static void
wr_local_inv(struct ibv_qp_ex *x, uint32_t invalidate_rkey)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV);

	if (w != NULL)
		w->invalidate_rkey = invalidate_rkey;
}

static void
wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ);

	if (w == NULL)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
}

static void
wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE);

	if (w == NULL)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
}

static void
wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_RDMA_WRITE_WITH_IMM,
					  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);

	if (w == NULL)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->imm_data = (uint32_t)imm_data;
}

static void
wr_send(struct ibv_qp_ex *x)
{
	(void)wr_new(x, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void
wr_send_imm(struct ibv_qp_ex *x, __be32 imm_data)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM);

	if (w != NULL)
		w->imm_data = (uint32_t)imm_data;
}

static void
wr_send_inv(struct ibv_qp_ex *x, uint32_t invalidate_rkey)
{
	struct droce_shm_swqe *w = wr_new(x, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV);

	if (w != NULL)
		w->invalidate_rkey = invalidate_rkey;
}

static void
wr_send_tso(struct ibv_qp_ex *x, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	wr_check_prev(xqp(x));
	wr_fail(xqp(x), EOPNOTSUPP);	/* no TSO: creation refuses IBV_QP_EX_WITH_TSO */
}

static void
wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct shim_qp *qp = xqp(x);
	struct droce_shm_swqe *w = qp->wr_cur;

	if (w == NULL || qp->qp.qp_type != IBV_QPT_UD || ah == NULL) {
		wr_fail(qp, EINVAL);
		return;
	}
	w->ah_handle = ah->handle;
	w->remote_qpn = remote_qpn & 0xffffff;
	w->remote_qkey = remote_qkey;
	qp->wr_addr_set = true;
}

static void
wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t remote_srqn)
{
	(void)remote_srqn;
	wr_fail(xqp(x), EOPNOTSUPP);	/* no XRC */
}

static void
wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };
	struct shim_qp *qp = xqp(x);
	int ret;

	if (qp->wr_cur == NULL) {
		wr_fail(qp, EINVAL);
		return;
	}
	ret = swqe_set_inline(qp, qp->wr_cur, &buf, 1);
	if (ret != 0)
		wr_fail(qp, ret);
}

static void
wr_set_inline_data_list(struct ibv_qp_ex *x, size_t num_buf, const struct ibv_data_buf *buf_list)
{
	struct shim_qp *qp = xqp(x);
	int ret;

	if (qp->wr_cur == NULL) {
		wr_fail(qp, EINVAL);
		return;
	}
	ret = swqe_set_inline(qp, qp->wr_cur, buf_list, num_buf);
	if (ret != 0)
		wr_fail(qp, ret);
}

static void
wr_set_sge_list(struct ibv_qp_ex *x, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct shim_qp *qp = xqp(x);
	int ret;

	if (qp->wr_cur == NULL) {
		wr_fail(qp, EINVAL);
		return;
	}
	ret = swqe_set_sges(qp, qp->wr_cur, sg_list, num_sge);
	if (ret != 0)
		wr_fail(qp, ret);
}

static void
wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(x, 1, &sge);
}

static void
wr_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr, const void *atomic_wr)
{
	(void)rkey;
	(void)remote_addr;
	(void)atomic_wr;
	wr_check_prev(xqp(x));
	wr_fail(xqp(x), EOPNOTSUPP);	/* creation refuses IBV_QP_EX_WITH_ATOMIC_WRITE */
}

void
shim_qp_ex_init(struct shim_qp *qp)
{
	struct ibv_qp_ex *x = &qp->qp_ex;

	x->comp_mask = 0;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_atomic_write = wr_atomic_write;
}
