/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine's side of the transports (struct droce_tr_ops): keys through the
 * device's key table, receive WQEs from the RQ or SRQ ring, completions into
 * the CQ ring (and its channel; a CQ may have producers on several engines),
 * frames to engine_xmit(), errors to the
 * owner as asynchronous events.
 */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_pause.h>

#include "verbs_engine_priv.h"

static inline enum droce_acc_op
acc_op_of(uint32_t access)
{
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		return DROCE_ACC_REMOTE_ATOMIC;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		return DROCE_ACC_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		return DROCE_ACC_REMOTE_READ;
	if (access & IBV_ACCESS_LOCAL_WRITE)
		return DROCE_ACC_LOCAL_WRITE;
	return DROCE_ACC_LOCAL_READ;
}

static enum droce_mem_err
mem_err_of(enum droce_acc_result r)
{
	switch (r) {
	case DROCE_ACC_OK:
		return DROCE_MEM_OK;
	case DROCE_ACC_ODP:
		return DROCE_MEM_INDIRECT;
	case DROCE_ACC_PD:
	case DROCE_ACC_QP:
		return DROCE_MEM_BAD_PD;
	case DROCE_ACC_ACCESS:
		return DROCE_MEM_ACCESS;
	case DROCE_ACC_ALIGN:
		return DROCE_MEM_ALIGN;
	case DROCE_ACC_RANGE:
		return DROCE_MEM_RANGE;
	default:
		return DROCE_MEM_BAD_KEY;
	}
}

static enum droce_mem_err
ops_mem_resolve(void *ctx, struct droce_tqp *t, uint32_t key, uint64_t va, uint32_t len,
		uint32_t access, uint8_t **host)
{
	struct droce_engine *eng = ctx;
	struct dev_qp *qp = engine_tqp_to_qp(t);
	void *p = NULL;
	enum droce_acc_result r = droce_access_check(eng->dev->keys, key, qp->pd->o.handle,
						     t->attr.qpn, va, len, acc_op_of(access), &p);

	if (r == DROCE_ACC_OK) {
		*host = p;
		return DROCE_MEM_OK;
	}
	return mem_err_of(r);	/* ODP: INDIRECT, the transport calls ops_mem_copy() */
}

/*
 * On-demand paged memory: the client's own /proc/self/mem, handed over at
 * registration, read or written at the client's address (doc/architecture.md).
 * A page that is not there (unmapped, PROT_NONE for the kernel's reasons, the
 * process gone: EIO, or a short count) fails this access only.
 */
/* An indirect region's copies and faults, counted by its kind: ODP or unmoved. */
#define INDIRECT_CNT(eng, odp, what) do {	\
	if (odp)				\
		ENG_CNT(eng, ODP_##what);	\
	else					\
		ENG_CNT(eng, UNMOVED_##what);	\
} while (0)

static enum droce_mem_err
ops_mem_copy(void *ctx, struct droce_tqp *t, uint32_t key, uint64_t va, void *buf, uint32_t len,
	     uint32_t access)
{
	struct droce_engine *eng = ctx;
	struct dev_qp *qp = engine_tqp_to_qp(t);
	bool write = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	uint64_t addr = 0;
	bool odp = false;
	int fd = -1;
	ssize_t n;
	enum droce_acc_result r = droce_access_odp(eng->dev->keys, key, qp->pd->o.handle,
						   t->attr.qpn, va, len, acc_op_of(access), &addr,
						   &fd, &odp);

	if (r != DROCE_ACC_ODP)
		return r == DROCE_ACC_OK ? DROCE_MEM_FAULT : mem_err_of(r);	/* changed meanwhile */
	if (addr > (uint64_t)INT64_MAX - len) {
		INDIRECT_CNT(eng, odp, FAULTS);
		return DROCE_MEM_FAULT;		/* no file offset reaches it */
	}
	INDIRECT_CNT(eng, odp, COPIES);
	n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	if (n != (ssize_t)len) {
		INDIRECT_CNT(eng, odp, FAULTS);
		return DROCE_MEM_FAULT;
	}
	return DROCE_MEM_OK;
}

/*
 * Atomics, atomic against each other across every engine (IBV_ATOMIC_HCA):
 * a mapped word takes a CPU atomic, an indirect one (a region its client
 * could not move) a read and a write through the client's mem file, which
 * nothing makes atomic but these locks. So every atomic takes the lock of
 * its word's client address, the one name both kinds of region share for
 * that memory (droce_access_atomic()). Mutexes: a worker that finds one
 * taken sleeps rather than spins (doc/architecture.md).
 */
#define ATOMIC_LOCKS 64
static pthread_mutex_t atomic_lock[ATOMIC_LOCKS] = {
	[0 ... ATOMIC_LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER,
};

static enum droce_mem_err
ops_mem_atomic(void *ctx, struct droce_tqp *t, uint32_t key, uint64_t va, bool cas, uint64_t cmp,
	       uint64_t swap_add, uint64_t *orig)
{
	struct droce_engine *eng = ctx;
	struct dev_qp *qp = engine_tqp_to_qp(t);
	uint64_t *host = NULL, addr = 0, v;
	pthread_mutex_t *lk;
	int fd = -1;
	enum droce_acc_result r = droce_access_atomic(eng->dev->keys, key, qp->pd->o.handle,
						      t->attr.qpn, va, &host, &addr, &fd);

	if (r != DROCE_ACC_OK && r != DROCE_ACC_ODP)
		return mem_err_of(r);
	lk = &atomic_lock[(addr >> 3) % ATOMIC_LOCKS];
	pthread_mutex_lock(lk);
	if (host != NULL) {
		*orig = droce_atomic_apply(host, cas, cmp, swap_add);
		pthread_mutex_unlock(lk);
		return DROCE_MEM_OK;
	}
	ENG_CNT(eng, UNMOVED_COPIES);	/* ODP regions take no atomic */
	if (addr > (uint64_t)INT64_MAX - sizeof(v) ||
	    pread(fd, &v, sizeof(v), (off_t)addr) != (ssize_t)sizeof(v)) {
		pthread_mutex_unlock(lk);
		ENG_CNT(eng, UNMOVED_FAULTS);
		return DROCE_MEM_FAULT;
	}
	*orig = v;
	v = cas ? (v == cmp ? swap_add : v) : v + swap_add;
	if (v != *orig && pwrite(fd, &v, sizeof(v), (off_t)addr) != (ssize_t)sizeof(v)) {
		pthread_mutex_unlock(lk);
		ENG_CNT(eng, UNMOVED_FAULTS);
		return DROCE_MEM_FAULT;
	}
	pthread_mutex_unlock(lk);
	return DROCE_MEM_OK;
}

static enum droce_mem_err
ops_mem_invalidate(void *ctx, struct droce_tqp *t, uint32_t rkey, bool remote)
{
	struct droce_engine *eng = ctx;
	struct dev_qp *qp = engine_tqp_to_qp(t);

	return droce_mw_invalidate(eng->dev->keys, rkey, qp->pd->o.handle, t->attr.qpn, remote) == 0 ?
	       DROCE_MEM_OK : DROCE_MEM_BAD_KEY;
}

void
engine_srq_check_limit(struct dev_srq *srq)
{
	uint32_t avail = droce_shm_load_prod(srq->ring.r) - srq->ring.idx;

	/* IBA 10.2.9.3: one event when the level drops below the limit, then disarmed */
	if (srq->limit != 0 && !srq->broken && avail < srq->limit) {
		srq->limit = 0;
		dev_async_event(srq->o.cl, IBV_EVENT_SRQ_LIMIT_REACHED, srq->o.handle);
	}
}

/*
 * -EBADMSG for a ring whose index is impossible (or an SRQ already failed):
 * the transport then fails the QP with DROCE_TQP_FAULT_RQ and ops_qp_error()
 * raises the event -- never "no WQE" forever, which the peer would take for
 * RNR.
 */
static int
ops_recv_get(void *ctx, struct droce_tqp *t, struct droce_recv_wqe *w)
{
	struct droce_engine *eng = ctx;
	struct dev_qp *qp = engine_tqp_to_qp(t);
	int ret;

	if (qp->srq != NULL) {
		ret = qp->srq->broken ? -EBADMSG :
		      engine_rwqe_take(&qp->srq->ring, qp->srq->max_sge, w);
		if (ret == 0)
			engine_srq_check_limit(qp->srq);
	} else {
		ret = engine_rwqe_take(&qp->rq, qp->cap.max_recv_sge, w);
	}
	if (ret == -EBADMSG)
		ENG_CNT(eng, BAD_RING);
	return ret;
}

static void
cq_signal(struct dev_cq *cq, bool solicited_or_error)
{
	uint32_t h = cq->o.handle;

	/* RMW read and CAS disarm: pairs with the shim's droce_shm_cq_arm() */
	if (!droce_shm_cq_fire(cq->ring.r, solicited_or_error))
		return;
	if (cq->chan_fd >= 0 && write(cq->chan_fd, &h, sizeof(h)) != sizeof(h))
		return;		/* pipe full: the client is not reading its channel */
}

/*
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: the shim offers it and reports a
 * 1 GHz clock, so every CQE carries CLOCK_MONOTONIC nanoseconds (a vDSO
 * read; the same clock ibv_query_rt_values_ex() reads in the client).
 * _WALLCLOCK: CLOCK_REALTIME read at the same moment, not derived later, so
 * a step of the wall clock after the completion does not move it.
 */
static uint64_t
cqe_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Overflow is an error event, never silent loss (IBA 11.4.2.1): raised once. */
static int
cq_overflow(struct dev_cq *cq)
{
	if (!atomic_exchange(&cq->error, true)) {
		atomic_store_explicit(&cq->ring.r->error, 1, memory_order_release);
		dev_async_event(cq->o.cl, IBV_EVENT_CQ_ERR, cq->o.handle);
	}
	return -ENOSPC;
}

/* acquire: the client's reads of slot @p idx's last use happen-before we reuse it */
static inline bool
cq_full(struct dev_cq *cq, uint32_t idx)
{
	return idx - droce_shm_load_cons(cq->ring.r) >= cq->ring.nslots;
}

/*
 * Several engines: take the next slot with a CAS, so that a full CQ
 * reserves nothing (every reservation must be published, cq_publish_turn).
 */
static int
cq_reserve_shared(struct dev_cq *cq, uint32_t *idx)
{
	uint32_t r = atomic_load_explicit(&cq->reserved, memory_order_relaxed);

	do {
		if (cq_full(cq, r))
			return cq_overflow(cq);
	} while (!atomic_compare_exchange_weak_explicit(&cq->reserved, &r, r + 1,
							 memory_order_relaxed, memory_order_relaxed));
	*idx = r;
	return 0;
}

/*
 * Several engines: make slot @p idx visible after every slot before it, so
 * the client sees one producer's prod. Another engine that reserved an
 * earlier slot is writing it now (nothing it waits for can wait for us:
 * each waits only for lower slots); the wait is on our own index, never on
 * shared memory.
 */
static void
cq_publish_turn(struct dev_cq *cq, uint32_t idx)
{
	/* acquire: pairs with the release below, so prod moves forward only */
	while (atomic_load_explicit(&cq->published, memory_order_acquire) != idx)
		rte_pause();
	droce_shm_publish(cq->ring.r, idx + 1);
	atomic_store_explicit(&cq->published, idx + 1, memory_order_release);
}

static inline void
cqe_fill(struct droce_shm_cqe *s, const struct droce_cqe *c)
{
	memset(s, 0, sizeof(*s));
	s->wr_id = c->wr_id;
	s->status = c->status;
	s->opcode = c->opcode;
	s->vendor_err = c->vendor_err;
	s->byte_len = c->byte_len;
	s->imm_data = (c->wc_flags & IBV_WC_WITH_INV) ? c->invalidated_rkey : c->imm;
	s->qp_num = c->qp_num;
	s->src_qp = c->src_qp;
	s->sl = c->sl;
	s->wc_flags = c->wc_flags;
	s->timestamp = cqe_now_ns(CLOCK_MONOTONIC);
	s->wallclock = cqe_now_ns(CLOCK_REALTIME);
}

/* Several engines (out of line: one engine's path stays as short as before). */
static __attribute__((noinline)) int
cq_push_shared(struct dev_cq *cq, const struct droce_cqe *c)
{
	uint32_t idx;

	if (cq_reserve_shared(cq, &idx) < 0)
		return -ENOSPC;
	cqe_fill(droce_shm_view_slot(&cq->ring, idx), c);
	cq_publish_turn(cq, idx);
	return 0;
}

int
engine_cq_push(void *ctx, struct droce_tqp *t, bool recv, const struct droce_cqe *c)
{
	struct dev_qp *qp = engine_tqp_to_qp(t);
	struct dev_cq *cq = recv ? qp->rcq : qp->scq;
	uint32_t idx;

	(void)ctx;
	if (atomic_load_explicit(&cq->error, memory_order_relaxed))
		return -ENOSPC;
	if (cq->shared) {
		if (cq_push_shared(cq, c) < 0)
			return -ENOSPC;
	} else {	/* one engine: a single-producer ring, as with one worker */
		idx = atomic_load_explicit(&cq->reserved, memory_order_relaxed);
		if (cq_full(cq, idx))
			return cq_overflow(cq);
		cqe_fill(droce_shm_view_slot(&cq->ring, idx), c);
		atomic_store_explicit(&cq->reserved, idx + 1, memory_order_relaxed);
		/* release: the slot's contents happen-before the client sees prod */
		droce_shm_publish(cq->ring.r, idx + 1);
	}
	cq_signal(cq, c->solicited || c->status != IBV_WC_SUCCESS);
	return 0;
}

static void
ops_xmit(void *ctx, struct droce_tqp *t, struct droce_pkt *pkt, const struct droce_iov *iov,
	 unsigned int n_iov)
{
	int ret = engine_xmit(ctx, pkt, iov, n_iov,
			      t->attr.type == IBV_QPT_UD ? NULL : t->attr.av.dmac);

	if (ret == -EAGAIN)
		droce_tqp_path_pending(t);
	else if (ret == 0)
		engine_cc_sent(ctx, engine_tqp_to_qp(t), pkt);
}


/*
 * The responder refused a request no receive WQE can report: the owner hears
 * of it as an affiliated asynchronous error (IBA 11.6.3.1), as from a NIC. A
 * broken receive queue is a catastrophic error of the QP (its own RQ) or of
 * its SRQ.
 */
static void
ops_qp_error(void *ctx, struct droce_tqp *t, enum droce_tqp_fault why)
{
	struct droce_engine *eng = ctx;
	struct dev_qp *qp = engine_tqp_to_qp(t);

	if (t->state == DROCE_TQP_SQE) {	/* a UC or UD send error: the RQ still works */
		qp->state = IBV_QPS_SQE;
		qp->sqd_notify = false;
		return;
	}
	if (why == DROCE_TQP_FAULT_INV_REQ)
		dev_async_event(qp->o.cl, IBV_EVENT_QP_REQ_ERR, qp->o.handle);
	else if (why == DROCE_TQP_FAULT_ACCESS)
		dev_async_event(qp->o.cl, IBV_EVENT_QP_ACCESS_ERR, qp->o.handle);
	else if (why == DROCE_TQP_FAULT_RQ && qp->srq != NULL)
		engine_srq_fail(eng, qp->srq, qp);
	else if (why == DROCE_TQP_FAULT_RQ)
		dev_async_event(qp->o.cl, IBV_EVENT_QP_FATAL, qp->o.handle);
	engine_qp_entered_error(qp);
}


const struct droce_tr_ops engine_tr_ops = {
	.mem_resolve = ops_mem_resolve,
	.mem_copy = ops_mem_copy,
	.mem_atomic = ops_mem_atomic,
	.mem_invalidate = ops_mem_invalidate,
	.recv_get = ops_recv_get,
	.cq_push = engine_cq_push,
	.xmit = ops_xmit,
	.qp_error = ops_qp_error,
};
