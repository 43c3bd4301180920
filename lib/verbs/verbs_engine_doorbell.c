/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Doorbells: which QPs and SRQs of each client have new work (each client
 * has a DB ring per engine, ours is read here only); a QP's new
 * SQ slots go into its transport (ring indices checked: an impossible one
 * fails that QP or SRQ, nothing else).
 */

#include <stdatomic.h>
#include <string.h>

#include "droce_idle.h"
#include "verbs_engine_priv.h"

/* Move new SQ slots into the transport, and check the RQ ring's index. */
void
engine_qp_drain(struct droce_engine *eng, struct dev_qp *qp, uint64_t now)
{
	struct droce_shm_swqe s;
	struct droce_send_wqe w;
	uint32_t prod, status;

	(void)now;
	/* an impossible index on either ring fails this QP, nothing else */
	if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_ERR && qp->rq.r != NULL &&
	    dev_ring_impossible(&qp->rq)) {
		ENG_CNT(eng, BAD_RING);
		engine_qp_fail(eng, qp);
		dev_async_event(qp->o.cl, IBV_EVENT_QP_FATAL, qp->o.handle);
	}
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT || qp->state == IBV_QPS_RTR)
		return;		/* posted WQEs wait for RTS (or are dropped by RESET) */
	droce_shm_doorbell_clear(&qp->sq.r->flag);
	prod = droce_shm_load_prod(qp->sq.r);
	if (prod - qp->sq.idx > qp->sq.nslots) {
		ENG_CNT(eng, BAD_RING);
		qp->sq.idx = prod;
		engine_qp_fail(eng, qp);
		dev_async_event(qp->o.cl, IBV_EVENT_QP_FATAL, qp->o.handle);
		return;
	}
	while (qp->sq.idx != prod) {
		/* room in the transport's queue: it holds WQEs until they retire */
		if (qp->tqp.sq_post - qp->tqp.comp.idx >= qp->tqp.sq_size)
			break;
		memcpy(&s, droce_shm_view_slot(&qp->sq, qp->sq.idx), sizeof(s));
		if (!engine_swqe_convert(eng, qp, &s, &w, &status)) {
			ENG_CNT(eng, BAD_WQE);
			w.local_done = true;
			w.local_status = status;
		}
		if (droce_tqp_post_send(&qp->tqp, &w) < 0)
			break;
		qp->sq.idx++;
		engine_qp_activate(eng, qp);
	}
	droce_shm_release(qp->sq.r, qp->sq.idx);
	if (qp->state == IBV_QPS_ERR)
		engine_rq_flush(qp);
}

/*
 * A UD QP about to be destroyed: its posted sends go out now (datagrams
 * posted before ibv_destroy_qp were valid; mckey's sender exits right
 * after posting unsignaled ones, and with several workers its engine may
 * not have polled in between). Called with the engine's worker parked.
 */
void
engine_qp_send_out(struct droce_engine *eng, struct dev_qp *qp)
{
	uint64_t now = droce_now_ns();
	unsigned int i;

	if (qp->tqp.attr.type == IBV_QPT_RC) {
		/* not its requests: only what it owes its peer (the last ACK) */
		if (qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS ||
		    qp->state == IBV_QPS_SQD)
			(void)droce_tqp_flush_responder(&qp->tqp);
		return;
	}
	if (qp->tqp.attr.type != IBV_QPT_UD || qp->state != IBV_QPS_RTS)
		return;
	engine_qp_drain(eng, qp, now);
	for (i = 0; i < 1024 && droce_tqp_has_work(&qp->tqp); i++)
		(void)droce_tqp_poll(&qp->tqp, now, 32);
}

unsigned int
droce_engine_doorbells(struct droce_engine *eng, uint64_t now)
{
	struct droce_client *cl;
	uint32_t handles[64];
	unsigned int n, i, total = 0;

	for (cl = eng->dev->clients; cl != NULL; cl = cl->next) {
		struct droce_shm_view *db = &cl->db[eng->id];

		if (db->r == NULL || cl->n_placed[eng->id] == 0)
			continue;
		n = droce_shm_doorbell_take_view(db, handles, DROCE_DIM(handles));
		for (i = 0; i < n; i++) {
			struct dev_qp *qp = dev_obj_get(cl, handles[i], OBJ_QP);
			struct dev_srq *srq;

			/* a handle on the wrong engine's ring is another worker's: ignored */
			if (qp != NULL) {
				if (qp->eng == eng)
					engine_qp_drain(eng, qp, now);
				continue;
			}
			/* an SRQ's ring is read by the responder; only its index is checked */
			srq = dev_obj_get(cl, handles[i], OBJ_SRQ);
			if (srq != NULL && srq->eng == eng && !srq->broken &&
			    dev_ring_impossible(&srq->ring)) {
				ENG_CNT(eng, BAD_RING);
				engine_srq_fail(eng, srq, NULL);
			}
		}
		total += n;
	}
	return total;
}
