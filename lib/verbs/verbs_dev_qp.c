/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * QPs of the device: create, modify (the IBA state table of
 * verbs_qp_state.c decides what is allowed), query, destroy; the transport
 * ops (keys through the key table, receive WQEs from the RQ or SRQ ring,
 * completions into the CQ ring, frames to the port or the loopback queue);
 * doorbells (SQ/RQ slots copied, checked and turned into transport WQEs);
 * receive dispatch by QPN and to multicast members; the poll loop.
 * Runs on the device's worker thread.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_shm_ops.h"
#include "droce_wire_gid.h"
#include "verbs_dev_priv.h"

static struct dev_qp *
tqp_to_qp(struct droce_tqp *t)
{
	return (struct dev_qp *)((char *)t - offsetof(struct dev_qp, tqp));
}

static uint32_t
mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 1024;
}

/* ---- transport ops ---- */

/* The QP may have packets to send: poll it until it has none. */
static inline void
qp_activate(struct droce_dev *dev, struct dev_qp *qp)
{
	if (!qp->active) {
		qp->active = true;
		dev->active[dev->n_active++] = qp;
	}
}

static enum droce_mem_err
ops_mem_resolve(void *ctx, struct droce_tqp *t, uint32_t key, uint64_t va, uint32_t len,
		uint32_t access, uint8_t **host)
{
	struct droce_dev *dev = ctx;
	struct dev_qp *qp = tqp_to_qp(t);
	enum droce_acc_op op = DROCE_ACC_LOCAL_READ;
	void *p = NULL;

	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		op = DROCE_ACC_REMOTE_ATOMIC;
	else if (access & IBV_ACCESS_REMOTE_WRITE)
		op = DROCE_ACC_REMOTE_WRITE;
	else if (access & IBV_ACCESS_REMOTE_READ)
		op = DROCE_ACC_REMOTE_READ;
	else if (access & IBV_ACCESS_LOCAL_WRITE)
		op = DROCE_ACC_LOCAL_WRITE;
	switch (droce_access_check(dev->keys, key, qp->pd->o.handle, t->attr.qpn, va, len, op, &p)) {
	case DROCE_ACC_OK:
		*host = p;
		return DROCE_MEM_OK;
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
ops_mem_invalidate(void *ctx, struct droce_tqp *t, uint32_t rkey, bool remote)
{
	struct droce_dev *dev = ctx;
	struct dev_qp *qp = tqp_to_qp(t);

	return droce_mw_invalidate(dev->keys, rkey, qp->pd->o.handle, t->attr.qpn, remote) == 0 ?
	       DROCE_MEM_OK : DROCE_MEM_BAD_KEY;
}

/* Copy a receive WQE out of a ring the client writes; check what we keep. */
static int
rwqe_take(struct dev_ring *ring, uint32_t max_sge, struct droce_recv_wqe *w)
{
	struct droce_shm_rwqe s;
	uint32_t prod = droce_shm_load_prod(ring->r), i;

	if (prod - ring->idx > ring->nslots)
		return -EBADMSG;	/* impossible index: the client is broken */
	if (prod == ring->idx)
		return -EAGAIN;
	memcpy(&s, dev_slot(ring, ring->idx), sizeof(s));
	ring->idx++;
	droce_shm_release(ring->r, ring->idx);
	if (s.num_sge > max_sge)
		s.num_sge = 0;		/* zero-length buffer: the message will not fit */
	memset(w, 0, sizeof(*w));
	w->wr_id = s.wr_id;
	w->num_sge = s.num_sge;
	for (i = 0; i < s.num_sge; i++) {
		w->sge[i].addr = s.sge[i].addr;
		w->sge[i].length = s.sge[i].length;
		w->sge[i].lkey = s.sge[i].lkey;
	}
	return 0;
}

void
dev_srq_check_limit(struct dev_srq *srq)
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
	struct droce_dev *dev = ctx;
	struct dev_qp *qp = tqp_to_qp(t);
	int ret;

	if (qp->srq != NULL) {
		ret = qp->srq->broken ? -EBADMSG :
		      rwqe_take(&qp->srq->ring, qp->srq->max_sge, w);
		if (ret == 0)
			dev_srq_check_limit(qp->srq);
	} else {
		ret = rwqe_take(&qp->rq, qp->cap.max_recv_sge, w);
	}
	if (ret == -EBADMSG)
		DEV_CNT(dev, BAD_RING);
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

static int
ops_cq_push(void *ctx, struct droce_tqp *t, bool recv, const struct droce_cqe *c)
{
	struct dev_qp *qp = tqp_to_qp(t);
	struct dev_cq *cq = recv ? qp->rcq : qp->scq;
	struct droce_shm_cqe *s;

	(void)ctx;
	if (cq->error)
		return -ENOSPC;
	if (cq->ring.idx - droce_shm_load_cons(cq->ring.r) >= cq->ring.nslots) {
		/* overflow is an error event, never silent loss (IBA 11.4.2.1) */
		cq->error = true;
		atomic_store_explicit(&cq->ring.r->error, 1, memory_order_release);
		dev_async_event(cq->o.cl, IBV_EVENT_CQ_ERR, cq->o.handle);
		return -ENOSPC;
	}
	s = dev_slot(&cq->ring, cq->ring.idx);
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
	cq->ring.idx++;
	droce_shm_publish(cq->ring.r, cq->ring.idx);
	cq_signal(cq, c->solicited || c->status != IBV_WC_SUCCESS);
	return 0;
}

static bool
gid_is_local(const struct droce_dev *dev, const uint8_t *gid)
{
	unsigned int i;

	for (i = 0; i < dev->conf.n_gids; i++)
		if (memcmp(dev->conf.gid[i], gid, 16) == 0)
			return true;
	return false;
}

static void
loop_push(struct droce_dev *dev, struct droce_pkt *pkt, const struct droce_iov *iov,
	  unsigned int n_iov)
{
	struct dev_loop_frame *f;
	int len;

	if (dev->loop_tail - dev->loop_head >= DEV_LOOP_SLOTS) {
		DEV_CNT(dev, TX_FAIL);
		return;		/* the transports recover as from any loss */
	}
	f = &dev->loop[dev->loop_tail % DEV_LOOP_SLOTS];
	len = droce_tqp_frame_build(pkt, iov, n_iov, f->data, sizeof(f->data));
	if (len < 0) {
		DEV_CNT(dev, TX_FAIL);
		return;
	}
	f->len = (uint32_t)len;
	dev->loop_tail++;
}

/*
 * Transmit one packet: to one of our GIDs through the loopback queue, to
 * a group also to local members, else to the wire once the peer's MAC is
 * known (@p cache keeps it for a connected QP).
 * @return 0, -EAGAIN (no MAC yet: the sender's timers try again) or -EIO.
 */
static int
dev_xmit(struct droce_dev *dev, struct droce_pkt *pkt, const struct droce_iov *iov,
	 unsigned int n_iov, uint8_t *cache)
{
	bool mcast = droce_gid_is_mcast(pkt->dgid);

	/* to ourselves: never the wire; a group may also have members here */
	if (gid_is_local(dev, pkt->dgid) ||
	    (mcast && droce_mcast_members(dev->mcast, pkt->dgid, NULL, 0) > 0)) {
		uint8_t wire_dmac[6];

		memcpy(wire_dmac, pkt->dmac, 6);
		memcpy(pkt->dmac, dev->conf.mac, 6);
		loop_push(dev, pkt, iov, n_iov);
		if (!mcast)
			return 0;
		memcpy(pkt->dmac, wire_dmac, 6);	/* the group's MAC on the wire */
	}
	if (!mcast && memcmp(pkt->dmac, (uint8_t[6]){ 0 }, 6) == 0) {
		if (dev->conf.port_ops->resolve(dev->conf.port_arg, pkt->dgid, pkt->dmac) < 0) {
			DEV_CNT(dev, TX_NO_NEIGH);
			return -EAGAIN;
		}
		if (cache != NULL)
			memcpy(cache, pkt->dmac, 6);
	}
	if (dev->conf.port_ops->frame_out(dev->conf.port_arg, pkt, iov, n_iov) < 0) {
		DEV_CNT(dev, TX_FAIL);
		return -EIO;
	}
	return 0;
}

static void
ops_xmit(void *ctx, struct droce_tqp *t, struct droce_pkt *pkt, const struct droce_iov *iov,
	 unsigned int n_iov)
{
	if (dev_xmit(ctx, pkt, iov, n_iov, t->attr.type == IBV_QPT_UD ? NULL : t->attr.av.dmac) ==
	    -EAGAIN)
		droce_tqp_path_pending(t);
}

void
droce_dev_qpn_held_set(struct droce_dev *dev, droce_qpn_held_fn fn, void *arg)
{
	dev->qpn_held = fn;
	dev->qpn_held_arg = arg;
}

/* ---- QP1 ---- */

void
droce_dev_gsi_set(struct droce_dev *dev, droce_gsi_rx_fn fn, void *arg)
{
	dev->gsi_rx = fn;
	dev->gsi_arg = arg;
}

int
droce_dev_gsi_send(struct droce_dev *dev, const uint8_t sgid[16], const uint8_t dgid[16],
		   uint32_t dqpn, uint8_t tclass, uint8_t hop_limit, const void *payload,
		   uint32_t len)
{
	struct droce_iov iov = { .base = payload, .len = len };
	struct droce_pkt pkt;
	uint32_t fl;

	if (!gid_is_local(dev, sgid) || len > mtu_bytes(dev->port.active_mtu))
		return -EINVAL;
	memset(&pkt, 0, sizeof(pkt));
	memcpy(pkt.smac, dev->conf.mac, 6);
	memcpy(pkt.sgid, sgid, 16);
	memcpy(pkt.dgid, dgid, 16);
	if (!droce_gid_is_ipv4(dgid))
		pkt.flags |= DROCE_PKT_F_IPV6;
	pkt.tclass = tclass;
	pkt.ttl = hop_limit ? hop_limit : 64;
	pkt.ip_frag = 0x4000;			/* DF: RoCEv2 is never fragmented */
	fl = droce_flow_label(DROCE_GSI_QPN, dqpn);
	pkt.flow_label = (pkt.flags & DROCE_PKT_F_IPV6) ? fl : 0;
	pkt.sport = droce_flow_label_to_sport(fl);
	pkt.dport = DROCE_ROCEV2_UDP_PORT;
	pkt.opcode = DROCE_OP_UD_SEND_ONLY;
	pkt.pkey = DROCE_DEFAULT_PKEY;
	pkt.dqpn = dqpn & DROCE_24BIT_MASK;
	pkt.deth.qkey = DROCE_GSI_QKEY;
	pkt.deth.sqpn = DROCE_GSI_QPN;
	pkt.payload_len = len;
	pkt.padcnt = droce_pad_bytes(len);
	return dev_xmit(dev, &pkt, &iov, 1, NULL);
}

enum ibv_mtu
droce_dev_active_mtu(const struct droce_dev *dev)
{
	return dev->port.active_mtu;
}

bool
droce_dev_qpn_of_pid(const struct droce_dev *dev, uint32_t qpn, uint32_t pid)
{
	uint32_t idx = qpn - DEV_QPN_BASE;

	return qpn >= DEV_QPN_BASE && idx < DEV_MAX_QP && dev->qpn[idx] != NULL &&
	       !dev->qpn[idx]->dead && dev->qpn[idx]->o.cl->cred.pid == pid;
}

/* A packet for QP1: only a UD SEND_ONLY with the GSI Q_Key and the default P_Key (IBA C9-xx). */
static void
rx_gsi(struct droce_dev *dev, const struct droce_pkt *pkt, const uint8_t *frame, uint64_t now)
{
	if (dev->gsi_rx == NULL) {
		DEV_CNT(dev, RX_NO_QP);
		return;
	}
	if (pkt->opcode != DROCE_OP_UD_SEND_ONLY || pkt->deth.qkey != DROCE_GSI_QKEY ||
	    (pkt->pkey & 0x7fff) != 0x7fff) {
		DEV_CNT(dev, RX_GSI_BAD);
		return;
	}
	dev->gsi_rx(dev->gsi_arg, pkt, frame + pkt->payload_off, pkt->payload_len, now);
}

static void
rq_flush(struct dev_qp *qp)
{
	struct droce_recv_wqe w;

	if (qp->srq != NULL || qp->rq.r == NULL)
		return;		/* SRQ WQEs belong to every QP on it: never flushed */
	while (rwqe_take(&qp->rq, DROCE_SHM_MAX_SGE, &w) == 0) {
		struct droce_cqe c = {
			.wr_id = w.wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = qp->tqp.attr.qpn,
		};

		if (ops_cq_push(qp->o.cl->dev, &qp->tqp, true, &c) < 0)
			break;
	}
}

/*
 * The QP has entered the error state (the transport's ERR is set): tell the
 * client's posting side, flush the receive queue, and for a QP on an SRQ
 * raise Last WQE Reached -- it will take no more WQEs from the SRQ
 * (IBA 10.3.1, 11.6.3).
 */
static void
qp_entered_error(struct dev_qp *qp)
{
	qp->state = IBV_QPS_ERR;
	qp->sqd_notify = false;
	atomic_store_explicit(&qp->sq.r->error, 1, memory_order_release);
	rq_flush(qp);
	if (qp->srq != NULL)
		dev_async_event(qp->o.cl, IBV_EVENT_QP_LAST_WQE_REACHED, qp->o.handle);
}

/* The QP fails outside the transport's own processing: the ring paths. */
static void
qp_fail(struct droce_dev *dev, struct dev_qp *qp)
{
	if (qp->tqp.state == DROCE_TQP_ERR)
		return;
	droce_tqp_set_state(&qp->tqp, DROCE_TQP_ERR, 0, 0);
	qp_entered_error(qp);
	qp_activate(dev, qp);
}

/*
 * An SRQ whose ring index is impossible is in error for good (IBA 10.2.9):
 * IBV_EVENT_SRQ_ERR, and every QP taking WQEs from it fails too (each then
 * says Last WQE Reached, qp_entered_error()). @p except is failing already:
 * the transport is doing it.
 */
static void
srq_fail(struct droce_dev *dev, struct dev_srq *srq, struct dev_qp *except)
{
	uint32_t i;

	if (srq->broken)
		return;
	srq->broken = true;
	atomic_store_explicit(&srq->ring.r->error, 1, memory_order_release);
	dev_async_event(srq->o.cl, IBV_EVENT_SRQ_ERR, srq->o.handle);
	for (i = 0; i < dev->n_live; i++)
		if (dev->live[i]->srq == srq && dev->live[i] != except)
			qp_fail(dev, dev->live[i]);
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
	struct droce_dev *dev = ctx;
	struct dev_qp *qp = tqp_to_qp(t);

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
		srq_fail(dev, qp->srq, qp);
	else if (why == DROCE_TQP_FAULT_RQ)
		dev_async_event(qp->o.cl, IBV_EVENT_QP_FATAL, qp->o.handle);
	qp_entered_error(qp);
}

/* SQD entered with en_sqd_async_notify: SQ Drained once nothing is under way. */
static void
qp_check_drained(struct dev_qp *qp)
{
	if (qp->sqd_notify && qp->state == IBV_QPS_SQD && droce_tqp_sq_drained(&qp->tqp)) {
		qp->sqd_notify = false;
		dev_async_event(qp->o.cl, IBV_EVENT_SQ_DRAINED, qp->o.handle);
	}
}

const struct droce_tr_ops dev_tr_ops = {
	.mem_resolve = ops_mem_resolve,
	.mem_invalidate = ops_mem_invalidate,
	.recv_get = ops_recv_get,
	.cq_push = ops_cq_push,
	.xmit = ops_xmit,
	.qp_error = ops_qp_error,
};

/* ---- create / modify / query / destroy ---- */

int
dev_create_qp(struct droce_client *cl, const struct droce_ctrl_create_qp_req *req,
	      struct droce_ctrl_create_qp_rep *rep, int *fds, unsigned int *nfds)
{
	struct droce_dev *dev = cl->dev;
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct dev_cq *scq = dev_obj_get(cl, req->send_cq_handle, OBJ_CQ);
	struct dev_cq *rcq = dev_obj_get(cl, req->recv_cq_handle, OBJ_CQ);
	struct dev_srq *srq = req->srq_handle ? dev_obj_get(cl, req->srq_handle, OBJ_SRQ) : NULL;
	struct droce_tqp_attr ta;
	struct ibv_qp_cap cap = req->cap;
	struct dev_qp *qp;
	uint32_t sq_slots, i;
	int ret;

	if (req->qp_type != IBV_QPT_RC && req->qp_type != IBV_QPT_UC && req->qp_type != IBV_QPT_UD)
		return req->qp_type == IBV_QPT_RAW_PACKET || req->qp_type == IBV_QPT_XRC_SEND ||
		       req->qp_type == IBV_QPT_XRC_RECV ? EOPNOTSUPP : EINVAL;
	if (pd == NULL || scq == NULL || rcq == NULL || (req->srq_handle && srq == NULL))
		return EINVAL;
	if (srq != NULL) {	/* ibv_create_qp_ex(3): ignored with an SRQ */
		cap.max_recv_wr = 0;
		cap.max_recv_sge = 0;
	}
	if (cap.max_send_wr > DEV_MAX_QP_WR || cap.max_recv_wr > DEV_MAX_QP_WR ||
	    cap.max_send_sge > DROCE_SHM_MAX_SGE || cap.max_recv_sge > DROCE_SHM_MAX_SGE ||
	    cap.max_inline_data > DROCE_SHM_MAX_INLINE)
		return EINVAL;
	if (req->create_flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)
		return EOPNOTSUPP;

	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return ENOMEM;
	for (i = 0; i < DEV_MAX_QP; i++) {
		uint32_t slot = (dev->next_qpn + i) % DEV_MAX_QP;

		if (dev->qpn[slot] == NULL &&
		    (dev->qpn_held == NULL || !dev->qpn_held(dev->qpn_held_arg, DEV_QPN_BASE + slot)))
			break;
	}
	ret = ENOMEM;
	if (i == DEV_MAX_QP)
		goto err_free;
	i = (dev->next_qpn + i) % DEV_MAX_QP;
	dev->next_qpn = i + 1;		/* a QPN is not reused at once */

	if (dev_obj_add(dev, cl, &qp->o, OBJ_QP) < 0)
		goto err_free;
	cap.max_send_wr = DROCE_MAX(cap.max_send_wr, 1u);
	cap.max_recv_wr = srq ? 0 : DROCE_MAX(cap.max_recv_wr, 1u);
	cap.max_send_sge = DROCE_MAX(cap.max_send_sge, 1u);
	cap.max_recv_sge = srq ? 0 : DROCE_MAX(cap.max_recv_sge, 1u);
	cap.max_inline_data = DROCE_SHM_MAX_INLINE;
	sq_slots = dev_pow2(cap.max_send_wr);
	cap.max_send_wr = sq_slots;
	ret = -dev_ring_create(&qp->sq, DROCE_SHM_SQ, qp->o.handle, sq_slots, DEV_SWQE_SLOT, &fds[0]);
	if (ret)
		goto err_obj;
	*nfds = 1;
	if (srq == NULL) {
		cap.max_recv_wr = dev_pow2(cap.max_recv_wr);
		ret = -dev_ring_create(&qp->rq, DROCE_SHM_RQ, qp->o.handle, cap.max_recv_wr,
				       DEV_RWQE_SLOT, &fds[1]);
		if (ret)
			goto err_sq;
		*nfds = 2;
	}
	/* the transport's private SQ holds every posted WQE until retired */
	qp->swqe = calloc(sq_slots, sizeof(*qp->swqe));
	ret = ENOMEM;
	if (qp->swqe == NULL)
		goto err_rq;

	memset(&ta, 0, sizeof(ta));
	ta.type = (enum ibv_qp_type)req->qp_type;
	ta.qpn = DEV_QPN_BASE + i;
	ta.mtu = mtu_bytes(dev->port.active_mtu);
	ta.sq_sig_all = req->sq_sig_all;
	ta.pkey = DROCE_DEFAULT_PKEY;
	memcpy(ta.av.smac, dev->conf.mac, 6);
	if (droce_tqp_init(&qp->tqp, &ta, qp->swqe, sq_slots, &dev_tr_ops, dev) < 0)
		goto err_swqe;
	qp->pd = pd;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = srq;
	qp->cap = cap;
	qp->create_flags = req->create_flags;
	qp->sq_sig_all = req->sq_sig_all;
	qp->state = IBV_QPS_RESET;
	pd->refs++;
	scq->refs++;
	rcq->refs++;
	if (srq)
		srq->refs++;
	dev->qpn[i] = qp;
	qp->live_idx = dev->n_live;
	dev->live[dev->n_live++] = qp;

	rep->qp_handle = qp->o.handle;
	rep->qp_num = ta.qpn;
	rep->cap = cap;
	rep->sq_nslots = sq_slots;
	rep->sq_map_len = qp->sq.map_len;
	rep->rq_nslots = srq ? 0 : cap.max_recv_wr;
	rep->rq_map_len = srq ? 0 : qp->rq.map_len;
	return 0;

err_swqe:
	free(qp->swqe);
err_rq:
	if (srq == NULL) {
		dev_ring_free(&qp->rq);
		close(fds[1]);
	}
err_sq:
	dev_ring_free(&qp->sq);
	close(fds[0]);
	*nfds = 0;
err_obj:
	dev_obj_del(dev, &qp->o);
err_free:
	free(qp);
	return ret;
}

static enum droce_tqp_state
tqp_state(enum ibv_qp_state s)
{
	switch (s) {
	case IBV_QPS_INIT:
		return DROCE_TQP_INIT;
	case IBV_QPS_RTR:
		return DROCE_TQP_RTR;
	case IBV_QPS_RTS:
		return DROCE_TQP_RTS;
	case IBV_QPS_SQD:
		return DROCE_TQP_SQD;
	case IBV_QPS_SQE:
		return DROCE_TQP_SQE;
	case IBV_QPS_ERR:
		return DROCE_TQP_ERR;
	default:
		return DROCE_TQP_RESET;
	}
}

int
dev_modify_qp(struct droce_client *cl, const struct droce_ctrl_modify_qp_req *req)
{
	struct droce_dev *dev = cl->dev;
	struct dev_qp *qp = dev_obj_get(cl, req->qp_handle, OBJ_QP);
	const struct ibv_qp_attr *a = &req->attr;
	struct droce_tqp_attr *ta;
	enum ibv_qp_state next;
	uint32_t m = req->mask;
	struct droce_av av;
	int ret;

	if (qp == NULL)
		return EINVAL;
	ret = droce_qp_modify_check(qp->tqp.attr.type, qp->state, a, (int)m, &dev->qp_lim, &next);
	if (ret < 0)
		return -ret;
	/* privileged Q_Keys (high bit) only for CAP_NET_RAW, as the kernel rules */
	if ((m & IBV_QP_QKEY) && (a->qkey & 0x80000000u) && !cl->cred.cap_net_raw)
		return EPERM;
	if (m & IBV_QP_AV) {
		ret = dev_av_from_ah_attr(dev, &a->ah_attr, &av);
		if (ret)
			return ret;
	}

	ta = &qp->tqp.attr;
	if (m & IBV_QP_AV)
		ta->av = av;
	if (m & IBV_QP_ACCESS_FLAGS)
		ta->access = a->qp_access_flags;
	if (m & IBV_QP_QKEY)
		ta->qkey = a->qkey;
	if (m & IBV_QP_PATH_MTU)
		ta->mtu = mtu_bytes(a->path_mtu);
	if (m & IBV_QP_DEST_QPN)
		ta->dest_qpn = a->dest_qp_num & DROCE_24BIT_MASK;
	if (m & IBV_QP_TIMEOUT)
		ta->timeout = a->timeout;
	if (m & IBV_QP_RETRY_CNT) {
		ta->retry_cnt = a->retry_cnt;
		qp->tqp.comp.retry_left = a->retry_cnt;
	}
	if (m & IBV_QP_RNR_RETRY) {
		ta->rnr_retry = a->rnr_retry;
		qp->tqp.comp.rnr_left = a->rnr_retry;
	}
	if (m & IBV_QP_MIN_RNR_TIMER)
		ta->min_rnr_timer = a->min_rnr_timer;
	if (m & IBV_QP_MAX_QP_RD_ATOMIC)
		ta->max_rd_atomic = a->max_rd_atomic;
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC)
		ta->max_dest_rd_atomic = a->max_dest_rd_atomic;

	if (m & IBV_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = a->qp_access_flags;
	if (m & IBV_QP_QKEY)
		qp->attr.qkey = a->qkey;
	if (m & IBV_QP_AV)
		qp->attr.ah_attr = a->ah_attr;
	if (m & IBV_QP_PATH_MTU)
		qp->attr.path_mtu = a->path_mtu;
	if (m & IBV_QP_DEST_QPN)
		qp->attr.dest_qp_num = a->dest_qp_num;
	if (m & IBV_QP_RQ_PSN)
		qp->attr.rq_psn = a->rq_psn & DROCE_24BIT_MASK;
	if (m & IBV_QP_SQ_PSN)
		qp->attr.sq_psn = a->sq_psn & DROCE_24BIT_MASK;
	if (m & IBV_QP_TIMEOUT)
		qp->attr.timeout = a->timeout;
	if (m & IBV_QP_RETRY_CNT)
		qp->attr.retry_cnt = a->retry_cnt;
	if (m & IBV_QP_RNR_RETRY)
		qp->attr.rnr_retry = a->rnr_retry;
	if (m & IBV_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = a->min_rnr_timer;
	if (m & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = a->max_rd_atomic;
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (m & IBV_QP_PKEY_INDEX)
		qp->attr.pkey_index = a->pkey_index;
	if (m & IBV_QP_PORT)
		qp->attr.port_num = a->port_num;

	if (next != qp->state) {
		if (next == IBV_QPS_RESET) {
			/* discard what was posted: our indices catch up with the client's */
			qp->sq.idx = droce_shm_load_prod(qp->sq.r);
			droce_shm_release(qp->sq.r, qp->sq.idx);
			if (qp->rq.r != NULL) {
				qp->rq.idx = droce_shm_load_prod(qp->rq.r);
				droce_shm_release(qp->rq.r, qp->rq.idx);
			}
			atomic_store_explicit(&qp->sq.r->error, 0, memory_order_release);
			qp->comm_est = false;
		}
		qp->state = next;
		droce_tqp_set_state(&qp->tqp, tqp_state(next), qp->attr.sq_psn, qp->attr.rq_psn);
		qp_activate(dev, qp);
		if (next == IBV_QPS_ERR)
			qp_entered_error(qp);
		dev_qp_drain(dev, qp, 0);	/* WQEs posted before RTS may go now */
	}
	if (next != IBV_QPS_SQD)
		qp->sqd_notify = false;
	else if ((m & IBV_QP_EN_SQD_ASYNC_NOTIFY) && a->en_sqd_async_notify)
		qp->sqd_notify = true;
	qp_check_drained(qp);	/* nothing under way: at once */
	return 0;
}

int
dev_query_qp(struct droce_client *cl, const struct droce_ctrl_query_qp_req *req,
	     struct droce_ctrl_query_qp_rep *rep)
{
	struct dev_qp *qp = dev_obj_get(cl, req->qp_handle, OBJ_QP);

	if (qp == NULL)
		return EINVAL;
	memset(rep, 0, sizeof(*rep));
	rep->attr = qp->attr;
	rep->attr.qp_state = qp->state;
	rep->attr.cur_qp_state = qp->state;
	rep->attr.cap = qp->cap;
	rep->attr.port_num = 1;
	rep->attr.sq_draining = qp->state == IBV_QPS_SQD && !droce_tqp_sq_drained(&qp->tqp);
	rep->cap = qp->cap;
	rep->sq_sig_all = qp->sq_sig_all;
	return 0;
}

/* A group the destroyed QP left empty is left on the wire too. */
static void
group_gone(const uint8_t mgid[16], void *arg)
{
	struct droce_dev *dev = arg;

	dev->conf.port_ops->mcast_leave(dev->conf.port_arg, mgid);
}

void
dev_qp_free(struct droce_dev *dev, struct dev_qp *qp)
{
	unsigned int c;

	droce_mcast_detach_all(dev->mcast, qp, group_gone, dev);
	for (c = 0; c < DROCE_TQP_CNT_COUNT; c++)
		dev->tqp_dead[c] += qp->tqp.cnt[c];
	dev->qpn[qp->tqp.attr.qpn - DEV_QPN_BASE] = NULL;
	dev->live[qp->live_idx] = dev->live[--dev->n_live];
	dev->live[qp->live_idx]->live_idx = qp->live_idx;
	if (qp->active) {	/* rare: a linear search of the active ones */
		uint32_t k;

		for (k = 0; k < dev->n_active && dev->active[k] != qp; k++)
			;
		dev->active[k] = dev->active[--dev->n_active];
	}
	qp->pd->refs--;
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	dev_ring_free(&qp->sq);
	dev_ring_free(&qp->rq);
	free(qp->swqe);
	dev_obj_del(dev, &qp->o);
	free(qp);
}

int
dev_destroy_qp(struct droce_client *cl, uint32_t handle)
{
	struct dev_qp *qp = dev_obj_get(cl, handle, OBJ_QP);

	if (qp == NULL)
		return EINVAL;
	/* ibv_create_qp_ex(3): destroy fails while the QP is attached to a group */
	if (droce_mcast_qp_attached(cl->dev->mcast, qp))
		return EBUSY;
	dev_qp_free(cl->dev, qp);
	return 0;
}

/* ---- doorbells: client rings to transport ---- */

/* A send WQE from the SQ ring, checked; false with *status for a bad one. */
static bool
swqe_convert(struct droce_dev *dev, struct dev_qp *qp, const struct droce_shm_swqe *s,
	     struct droce_send_wqe *w, uint32_t *status)
{
	enum ibv_qp_type type = qp->tqp.attr.type;
	uint64_t len = 0;
	uint32_t i, op = s->opcode;

	memset(w, 0, offsetof(struct droce_send_wqe, inline_data));
	w->local_done = false;
	w->wr_id = s->wr_id;
	w->opcode = op;
	w->flags = s->send_flags;
	*status = IBV_WC_LOC_QP_OP_ERR;

	if (!droce_shm_qp_op_allowed(type, op))
		return false;	/* the shim's own table: it refused this at post time */
	w->imm = s->imm_data;
	w->inv_rkey = s->invalidate_rkey;
	w->remote_addr = s->remote_addr;
	w->rkey = s->rkey;
	w->compare_add = s->compare_add;
	w->swap = s->swap;

	if (op == IBV_WR_BIND_MW) {
		struct dev_mw *mw = dev_obj_get(qp->o.cl, s->bind.mw_handle, OBJ_MW);
		struct droce_mw_bind b = {
			.new_rkey = s->bind.new_rkey,
			/* the MR named, also for a zero-length (unbinding) bind */
			.mr = droce_mr_get(dev->keys, s->bind.mr_lkey),
			.addr = s->bind.addr,
			.length = s->bind.length,
			.access = s->bind.access,
			.qp_pd = qp->pd->o.handle,
			.qpn = qp->tqp.attr.qpn,
			.qp_type = type,
		};

		/* executed here, completed in order by the transport */
		w->local_done = true;
		w->local_status = mw != NULL && droce_mw_bind(dev->keys, &mw->mw, &b) == 0 ?
				  IBV_WC_SUCCESS : IBV_WC_MW_BIND_ERR;
		return true;
	}
	if (s->send_flags & IBV_SEND_INLINE) {
		if (s->inline_len > qp->cap.max_inline_data || s->inline_len > DROCE_SHM_MAX_INLINE ||
		    op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			*status = IBV_WC_LOC_LEN_ERR;
			return false;
		}
		memcpy(w->inline_data, s->inline_data, s->inline_len);
		len = s->inline_len;
	} else {
		if (s->num_sge > qp->cap.max_send_sge)
			return false;
		w->num_sge = s->num_sge;
		for (i = 0; i < s->num_sge; i++) {
			w->sge[i].addr = s->sge[i].addr;
			w->sge[i].length = s->sge[i].length;
			w->sge[i].lkey = s->sge[i].lkey;
			len += s->sge[i].length;
		}
	}
	if (len > dev->port.max_msg_sz) {
		*status = IBV_WC_LOC_LEN_ERR;
		return false;
	}
	w->length = (uint32_t)len;
	if ((op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) && len != 8) {
		*status = IBV_WC_LOC_LEN_ERR;
		return false;
	}
	if (type == IBV_QPT_UD) {
		struct dev_ah *ah = dev_obj_get(qp->o.cl, s->ah_handle, OBJ_AH);

		if (ah == NULL || ah->pd != qp->pd)
			return false;
		if (len > qp->tqp.attr.mtu) {
			*status = IBV_WC_LOC_LEN_ERR;
			return false;
		}
		w->ud.av = ah->av;
		w->ud.qpn = s->remote_qpn & DROCE_24BIT_MASK;
		w->ud.qkey = s->remote_qkey;
	}
	return true;
}

/* Move new SQ slots into the transport, and check the RQ ring's index. */
void
dev_qp_drain(struct droce_dev *dev, struct dev_qp *qp, uint64_t now)
{
	struct droce_shm_swqe s;
	struct droce_send_wqe w;
	uint32_t prod, status;

	(void)now;
	/* an impossible index on either ring fails this QP, nothing else */
	if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_ERR && qp->rq.r != NULL &&
	    dev_ring_impossible(&qp->rq)) {
		DEV_CNT(dev, BAD_RING);
		qp_fail(dev, qp);
		dev_async_event(qp->o.cl, IBV_EVENT_QP_FATAL, qp->o.handle);
	}
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT || qp->state == IBV_QPS_RTR)
		return;		/* posted WQEs wait for RTS (or are dropped by RESET) */
	droce_shm_doorbell_clear(&qp->sq.r->flag);
	prod = droce_shm_load_prod(qp->sq.r);
	if (prod - qp->sq.idx > qp->sq.nslots) {
		DEV_CNT(dev, BAD_RING);
		qp->sq.idx = prod;
		qp_fail(dev, qp);
		dev_async_event(qp->o.cl, IBV_EVENT_QP_FATAL, qp->o.handle);
		return;
	}
	while (qp->sq.idx != prod) {
		/* room in the transport's queue: it holds WQEs until they retire */
		if (qp->tqp.sq_post - qp->tqp.comp.idx >= qp->tqp.sq_size)
			break;
		memcpy(&s, dev_slot(&qp->sq, qp->sq.idx), sizeof(s));
		if (!swqe_convert(dev, qp, &s, &w, &status)) {
			DEV_CNT(dev, BAD_WQE);
			w.local_done = true;
			w.local_status = status;
		}
		if (droce_tqp_post_send(&qp->tqp, &w) < 0)
			break;
		qp->sq.idx++;
		qp_activate(dev, qp);
	}
	droce_shm_release(qp->sq.r, qp->sq.idx);
	if (qp->state == IBV_QPS_ERR)
		rq_flush(qp);
}

unsigned int
droce_dev_doorbells(struct droce_dev *dev, uint64_t now)
{
	struct droce_client *cl;
	uint32_t handles[64];
	unsigned int n, i, total = 0;

	for (cl = dev->clients; cl != NULL; cl = cl->next) {
		if (cl->db.r == NULL)
			continue;
		struct droce_shm_view v = {
			.r = cl->db.r,
			.idx = cl->db.idx,
			.nslots = cl->db.nslots,
			.log2_slot_size = cl->db.slot_shift,
		};

		n = droce_shm_doorbell_take_view(&v, handles, DROCE_DIM(handles));
		cl->db.idx = v.idx;
		for (i = 0; i < n; i++) {
			struct dev_qp *qp = dev_obj_get(cl, handles[i], OBJ_QP);
			struct dev_srq *srq;

			if (qp != NULL) {
				dev_qp_drain(dev, qp, now);
				continue;
			}
			/* an SRQ's ring is read by the responder; only its index is checked */
			srq = dev_obj_get(cl, handles[i], OBJ_SRQ);
			if (srq != NULL && !srq->broken && dev_ring_impossible(&srq->ring)) {
				DEV_CNT(dev, BAD_RING);
				srq_fail(dev, srq, NULL);
			}
		}
		total += n;
	}
	return total;
}

/* ---- receive ---- */

static void
rx_mcast(struct droce_dev *dev, const struct droce_pkt *pkt, const uint8_t *frame, uint64_t now)
{
	void *members[64];
	unsigned int n, i;
	bool from_us = gid_is_local(dev, pkt->sgid);

	n = droce_mcast_members(dev->mcast, pkt->dgid, members, DROCE_DIM(members));
	if (n == 0) {
		DEV_CNT(dev, RX_MCAST_NO_GRP);
		return;
	}
	for (i = 0; i < n && i < DROCE_DIM(members); i++) {
		struct dev_qp *qp = members[i];

		/* the sender itself, if it asked not to hear its own multicast */
		if (from_us && pkt->deth.sqpn == qp->tqp.attr.qpn &&
		    (qp->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB))
			continue;
		droce_tqp_rx(&qp->tqp, pkt, frame, now);
		qp_activate(dev, qp);
	}
}

/*
 * Communication Established (IBA 11.6.3.1): the first packet a connected QP
 * accepts while still in RTR -- its peer is up before it moved to RTS.
 */
static void
qp_check_comm_est(struct dev_qp *qp, uint64_t rx_before)
{
	if (qp->state == IBV_QPS_RTR && !qp->comm_est &&
	    (qp->tqp.attr.type == IBV_QPT_RC || qp->tqp.attr.type == IBV_QPT_UC) &&
	    qp->tqp.cnt[DROCE_TQP_CNT_RX_PKTS] != rx_before) {
		qp->comm_est = true;
		dev_async_event(qp->o.cl, IBV_EVENT_COMM_EST, qp->o.handle);
	}
}

void
droce_dev_rx(struct droce_dev *dev, const struct droce_pkt *pkt, const uint8_t *frame,
	     uint64_t now)
{
	uint32_t idx = pkt->dqpn - DEV_QPN_BASE;
	uint64_t rx_before;

	if (pkt->dqpn == 0xffffff && droce_gid_is_mcast(pkt->dgid)) {
		rx_mcast(dev, pkt, frame, now);
		return;
	}
	if (pkt->dqpn == DROCE_GSI_QPN) {
		rx_gsi(dev, pkt, frame, now);
		return;
	}
	if (pkt->dqpn < DEV_QPN_BASE || idx >= DEV_MAX_QP || dev->qpn[idx] == NULL) {
		DEV_CNT(dev, RX_NO_QP);
		return;
	}
	rx_before = dev->qpn[idx]->tqp.cnt[DROCE_TQP_CNT_RX_PKTS];
	droce_tqp_rx(&dev->qpn[idx]->tqp, pkt, frame, now);
	qp_check_comm_est(dev->qpn[idx], rx_before);
	qp_activate(dev, dev->qpn[idx]);
}

unsigned int
droce_dev_poll(struct droce_dev *dev, uint64_t now)
{
	unsigned int work = 0;
	uint32_t i, keep, n;

	/* loopback frames: parsed as if they came from the wire */
	while (dev->loop_head != dev->loop_tail) {
		struct dev_loop_frame *f = &dev->loop[dev->loop_head % DEV_LOOP_SLOTS];
		struct droce_pkt pkt;

		if (droce_pkt_parse(&pkt, f->data, f->len, f->len) == DROCE_WIRE_OK) {
			DEV_CNT(dev, RX_LOOPBACK);
			droce_dev_rx(dev, &pkt, f->data, now);
		}
		dev->loop_head++;
		work++;
	}
	dev->polls++;
	if (now >= dev->next_timer) {
		dev->next_timer = now + DEV_TIMER_NS;
		for (i = 0; i < dev->n_live; i++) {
			struct dev_qp *qp = dev->live[i];

			/* a client that forgot its doorbell is found here too */
			if (droce_shm_load_prod(qp->sq.r) != qp->sq.idx)
				dev_qp_drain(dev, qp, now);
			droce_tqp_timer(&qp->tqp, now);
			if (droce_tqp_has_work(&qp->tqp))
				qp_activate(dev, qp);
		}
	}
	/* QPs activated during the walk are polled on the next pass */
	for (i = 0, keep = 0, n = dev->n_active; i < n; i++) {
		struct dev_qp *qp = dev->active[i];

		work += droce_tqp_poll(&qp->tqp, now, 32);
		qp_check_drained(qp);	/* an ACK received activates the QP */
		if (droce_tqp_has_work(&qp->tqp))
			dev->active[keep++] = qp;
		else
			qp->active = false;
	}
	for (; i < dev->n_active; i++)
		dev->active[keep++] = dev->active[i];
	dev->n_active = keep;
	return work;
}
