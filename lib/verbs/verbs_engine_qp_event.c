/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * What the engine notices about a QP's state and tells its owner: entering
 * the error state (flushing its RQ), failing from a broken ring (the QP, or an
 * SRQ and every QP on it), SQ drained, communication established.
 */

#include <stdatomic.h>

#include "verbs_engine_priv.h"

void
engine_rq_flush(struct dev_qp *qp)
{
	struct droce_recv_wqe w;

	if (qp->srq != NULL || qp->rq.r == NULL)
		return;		/* SRQ WQEs belong to every QP on it: never flushed */
	while (engine_rwqe_take(&qp->rq, DROCE_SHM_MAX_SGE, &w) == 0) {
		struct droce_cqe c = {
			.wr_id = w.wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = qp->tqp.attr.qpn,
		};

		if (engine_cq_push(qp->eng, &qp->tqp, true, &c) < 0)
			break;
	}
}

/*
 * The QP has entered the error state (the transport's ERR is set): tell the
 * client's posting side, flush the receive queue, and for a QP on an SRQ
 * raise Last WQE Reached -- it will take no more WQEs from the SRQ
 * (IBA 10.3.1, 11.6.3).
 */
void
engine_qp_entered_error(struct dev_qp *qp)
{
	qp->state = IBV_QPS_ERR;
	qp->sqd_notify = false;
	atomic_store_explicit(&qp->sq.r->error, 1, memory_order_release);
	engine_rq_flush(qp);
	if (qp->srq != NULL)
		dev_async_event(qp->o.cl, IBV_EVENT_QP_LAST_WQE_REACHED, qp->o.handle);
}

/* The QP fails outside the transport's own processing: the ring paths. */
void
engine_qp_fail(struct droce_engine *eng, struct dev_qp *qp)
{
	if (qp->tqp.state == DROCE_TQP_ERR)
		return;
	droce_tqp_set_state(&qp->tqp, DROCE_TQP_ERR, 0, 0);
	engine_qp_entered_error(qp);
	engine_qp_activate(eng, qp);
}

/*
 * An SRQ whose ring index is impossible is in error for good (IBA 10.2.9):
 * IBV_EVENT_SRQ_ERR, and every QP taking WQEs from it fails too (each then
 * says Last WQE Reached, engine_qp_entered_error()). @p except is failing already:
 * the transport is doing it.
 */
void
engine_srq_fail(struct droce_engine *eng, struct dev_srq *srq, struct dev_qp *except)
{
	uint32_t i;

	if (srq->broken)
		return;
	srq->broken = true;
	atomic_store_explicit(&srq->ring.r->error, 1, memory_order_release);
	dev_async_event(srq->o.cl, IBV_EVENT_SRQ_ERR, srq->o.handle);
	for (i = 0; i < eng->n_live; i++)
		if (eng->live[i]->srq == srq && eng->live[i] != except)
			engine_qp_fail(eng, eng->live[i]);
}


/* SQD entered with en_sqd_async_notify: SQ Drained once nothing is under way. */
void
engine_qp_check_drained(struct dev_qp *qp)
{
	if (qp->sqd_notify && qp->state == IBV_QPS_SQD && droce_tqp_sq_drained(&qp->tqp)) {
		qp->sqd_notify = false;
		dev_async_event(qp->o.cl, IBV_EVENT_SQ_DRAINED, qp->o.handle);
	}
}


/*
 * Communication Established (IBA 11.6.3.1): the first packet a connected QP
 * accepts while still in RTR -- its peer is up before it moved to RTS.
 */
void
engine_qp_check_comm_est(struct dev_qp *qp, uint64_t rx_before)
{
	if (qp->state == IBV_QPS_RTR && !qp->comm_est &&
	    (qp->tqp.attr.type == IBV_QPT_RC || qp->tqp.attr.type == IBV_QPT_UC) &&
	    qp->tqp.cnt[DROCE_TQP_CNT_RX_PKTS] != rx_before) {
		qp->comm_est = true;
		dev_async_event(qp->o.cl, IBV_EVENT_COMM_EST, qp->o.handle);
	}
}
