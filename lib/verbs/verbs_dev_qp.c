/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * QPs as objects: create (a QPN the CM does not hold, its rings, its
 * transport, then placed on an engine), modify (the IBA state table of
 * verbs_qp_state.c decides what is allowed), query, destroy. Once created,
 * the QP's data path is its engine's (verbs_engine_*.c).
 */

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_engine_priv.h"

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
	struct droce_engine *eng;
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

	qp = aligned_alloc(_Alignof(struct dev_qp), sizeof(*qp));	/* tqp's lines */
	if (qp == NULL)
		return ENOMEM;
	memset(qp, 0, sizeof(*qp));
	/*
	 * The least loaded engine, or the SRQ's: an SRQ has one consumer, the
	 * engine that takes its doorbells, so every QP on it runs there.
	 */
	if (srq != NULL) {
		eng = srq->eng;
		engine_place_on(cl, eng);
	} else {
		eng = engine_place(cl);
	}
	for (i = 0; i < DEV_MAX_QP; i++) {
		uint32_t slot = (dev->next_qpn + i) % DEV_MAX_QP;

		/* that engine's shard only: RX finds the engine from the QPN */
		if (dev_qpn_engine(dev, DEV_QPN_BASE + slot) == eng &&
		    !engine_qpn_used(eng, DEV_QPN_BASE + slot) &&
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
	sq_slots = droce_pow2_at_least(cap.max_send_wr);
	cap.max_send_wr = sq_slots;
	ret = -dev_ring_create(&qp->sq, DROCE_SHM_SQ, qp->o.handle, sq_slots, DEV_SWQE_SLOT, &fds[0]);
	if (ret)
		goto err_obj;
	*nfds = 1;
	if (srq == NULL) {
		cap.max_recv_wr = droce_pow2_at_least(cap.max_recv_wr);
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
	ta.mtu = dev_mtu_bytes(dev->port.active_mtu);
	ta.sq_sig_all = req->sq_sig_all;
	ta.pkey = DROCE_DEFAULT_PKEY;
	memcpy(ta.av.smac, dev->conf.mac, 6);
	if (droce_tqp_init(&qp->tqp, &ta, qp->swqe, sq_slots, &engine_tr_ops, eng) < 0)
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
	engine_qp_attach(eng, qp);

	rep->qp_handle = qp->o.handle;
	rep->qp_num = ta.qpn;
	rep->cap = cap;
	rep->sq_nslots = sq_slots;
	rep->sq_map_len = qp->sq.map_len;
	rep->rq_nslots = srq ? 0 : cap.max_recv_wr;
	rep->rq_map_len = srq ? 0 : qp->rq.map_len;
	rep->engine = engine_id(eng);
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
	engine_unplace(cl, eng);
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

	/* first: the one change that can fail (the responder's READ/atomic ring) */
	if ((m & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    droce_tqp_set_dest_rd_atomic(&qp->tqp, a->max_dest_rd_atomic) < 0)
		return ENOMEM;
	ta = &qp->tqp.attr;
	if (m & IBV_QP_AV)
		ta->av = av;
	if (m & IBV_QP_ACCESS_FLAGS)
		ta->access = a->qp_access_flags;
	if (m & IBV_QP_QKEY)
		ta->qkey = a->qkey;
	if (m & IBV_QP_PATH_MTU)
		ta->mtu = dev_mtu_bytes(a->path_mtu);
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
	if (qp->paced && (m & (IBV_QP_TIMEOUT | IBV_QP_PATH_MTU)))
		engine_cc_rate_update(qp->eng, qp);	/* AckReqs by the new timeout and MTU */

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
		engine_qp_activate(qp->eng, qp);
		if (next == IBV_QPS_ERR)
			engine_qp_entered_error(qp);
		engine_qp_drain(qp->eng, qp, 0);	/* WQEs posted before RTS may go now */
	}
	if (next != IBV_QPS_SQD)
		qp->sqd_notify = false;
	else if ((m & IBV_QP_EN_SQD_ASYNC_NOTIFY) && a->en_sqd_async_notify)
		qp->sqd_notify = true;
	engine_qp_check_drained(qp);	/* nothing under way: at once */
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
	engine_qp_send_out(qp->eng, qp);
	droce_mcast_detach_all(dev->mcast, qp, group_gone, dev);
	engine_qp_detach(qp->eng, qp);
	engine_unplace(qp->o.cl, qp->eng);
	qp->pd->refs--;
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	dev_ring_free(&qp->sq);
	dev_ring_free(&qp->rq);
	droce_tqp_fini(&qp->tqp);
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


bool
droce_dev_qpn_of_pid(const struct droce_dev *dev, uint32_t qpn, uint32_t pid)
{
	const struct dev_qp *qp = engine_qp_by_qpn(dev_qpn_engine(dev, qpn), qpn);

	return qp != NULL && !qp->dead && qp->o.cl->cred.pid == pid;
}
