/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Completion queues (create, resize) and shared receive queues (create,
 * modify): their rings and limits. Completions are written by the engine.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_engine_priv.h"

int
dev_create_cq(struct droce_client *cl, const struct droce_ctrl_create_cq_req *req, int chan_fd,
	      struct droce_ctrl_create_cq_rep *rep, int *fds, unsigned int *nfds)
{
	struct dev_cq *cq;
	int ret;

	if (req->cqe == 0 || req->cqe > (uint32_t)cl->dev->attr.max_cqe)
		return EINVAL;
	if (req->has_channel && chan_fd < 0)
		return EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return ENOMEM;
	cq->chan_fd = -1;
	cq->shared = cl->dev->n_eng > 1;	/* its QPs may run on several engines */
	ret = dev_obj_add(cl->dev, cl, &cq->o, OBJ_CQ);
	if (ret < 0)
		goto err_free;
	ret = dev_ring_create(&cq->ring, DROCE_SHM_CQ, cq->o.handle, droce_pow2_at_least(req->cqe),
			      DEV_CQE_SLOT, &fds[0]);
	if (ret < 0)
		goto err_obj;
	if (req->has_channel) {
		cq->chan_fd = fcntl(chan_fd, F_DUPFD_CLOEXEC, 0);
		fcntl(cq->chan_fd, F_SETFL, O_NONBLOCK);
	}
	cq->cqe = cq->ring.nslots;
	*nfds = 1;
	rep->cq_handle = cq->o.handle;
	rep->cqe = cq->cqe;
	rep->nslots = cq->ring.nslots;
	rep->map_len = cq->ring.map_len;
	return 0;

err_obj:
	dev_obj_del(cl->dev, &cq->o);
err_free:
	free(cq);
	return -ret;
}

/*
 * ibv_resize_cq: a new ring that takes the pending completions at the
 * indices they had, so the client's consumer index stays valid. Fewer
 * entries than are pending: EINVAL (Soft-RoCE and ibv_resize_cq(3) alike).
 * The client's cons is read once; an impossible one fails the call.
 */
int
dev_resize_cq(struct droce_client *cl, const struct droce_ctrl_resize_cq_req *req,
	      struct droce_ctrl_resize_cq_rep *rep, int *fds, unsigned int *nfds)
{
	struct dev_cq *cq = dev_obj_get(cl, req->cq_handle, OBJ_CQ);
	struct droce_shm_view nr;
	uint32_t prod, cons, pending, i;
	int ret;

	if (cq == NULL || req->cqe == 0 || req->cqe > (uint32_t)cl->dev->attr.max_cqe)
		return EINVAL;
	/* the workers are parked: nothing is reserved and not yet published */
	prod = atomic_load_explicit(&cq->reserved, memory_order_relaxed);
	cons = droce_shm_load_cons(cq->ring.r);
	pending = prod - cons;
	if (pending > cq->ring.nslots || req->cqe < pending)
		return EINVAL;
	ret = dev_ring_create(&nr, DROCE_SHM_CQ, cq->o.handle, droce_pow2_at_least(req->cqe), DEV_CQE_SLOT,
			      &fds[0]);
	if (ret < 0)
		return -ret;
	for (i = cons; i != prod; i++)
		memcpy(droce_shm_view_slot(&nr, i), droce_shm_view_slot(&cq->ring, i), DEV_CQE_SLOT);
	droce_shm_release(nr.r, cons);
	droce_shm_publish(nr.r, prod);
	/* an arm the client set before asking (it arms no more until it has the new ring) */
	atomic_store_explicit(&nr.r->flag, atomic_load_explicit(&cq->ring.r->flag,
								 memory_order_acquire),
			      memory_order_release);
	atomic_store_explicit(&nr.r->error, atomic_load(&cq->error) ? 1 : 0, memory_order_release);
	dev_ring_free(&cq->ring);
	cq->ring = nr;
	cq->cqe = nr.nslots;
	*nfds = 1;
	rep->cqe = cq->cqe;
	rep->nslots = nr.nslots;
	rep->map_len = nr.map_len;
	return 0;
}

int
dev_create_srq(struct droce_client *cl, const struct droce_ctrl_create_srq_req *req,
	       struct droce_ctrl_create_srq_rep *rep, int *fds, unsigned int *nfds)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct dev_srq *srq;
	int ret;

	if (pd == NULL || req->attr.max_wr == 0 || req->attr.max_wr > DEV_MAX_SRQ_WR ||
	    req->attr.max_sge > DROCE_SHM_MAX_SGE || req->attr.srq_limit > req->attr.max_wr)
		return EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return ENOMEM;
	ret = dev_obj_add(cl->dev, cl, &srq->o, OBJ_SRQ);
	if (ret < 0)
		goto err_free;
	/* its doorbells are that engine's to check, and its QPs run there */
	srq->eng = engine_place(cl);
	ret = dev_ring_create(&srq->ring, DROCE_SHM_RQ, srq->o.handle, droce_pow2_at_least(req->attr.max_wr),
			      DEV_RWQE_SLOT, &fds[0]);
	if (ret < 0)
		goto err_obj;
	srq->pd = pd;
	pd->refs++;
	srq->max_wr = srq->ring.nslots;
	srq->max_sge = req->attr.max_sge ? req->attr.max_sge : 1;
	srq->limit = req->attr.srq_limit;
	*nfds = 1;
	rep->srq_handle = srq->o.handle;
	rep->attr.max_wr = srq->max_wr;
	rep->attr.max_sge = srq->max_sge;
	rep->attr.srq_limit = srq->limit;
	rep->nslots = srq->ring.nslots;
	rep->map_len = srq->ring.map_len;
	rep->engine = engine_id(srq->eng);
	return 0;

err_obj:
	engine_unplace(cl, srq->eng);
	dev_obj_del(cl->dev, &srq->o);
err_free:
	free(srq);
	return -ret;
}

int
dev_modify_srq(struct droce_client *cl, const struct droce_ctrl_modify_srq_req *req)
{
	struct dev_srq *srq = dev_obj_get(cl, req->srq_handle, OBJ_SRQ);

	if (srq == NULL || (req->mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if (req->mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;	/* no IBV_DEVICE_SRQ_RESIZE */
	if (req->mask & IBV_SRQ_LIMIT) {
		if (req->attr.srq_limit > srq->max_wr)
			return EINVAL;
		srq->limit = req->attr.srq_limit;
		engine_srq_check_limit(srq);
	}
	return 0;
}
