/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Queue pairs, shared receive queues, address handles and multicast
 * attachment: the control side (CREATE_QP, MODIFY_QP, QUERY_QP,
 * DESTROY_QP, the SRQ, AH and mcast messages). The data side -- posting
 * into the SQ/RQ/SRQ rings the daemon maps for us here -- is shim_post.c.
 *
 * A QP is registered in its context's handle table so asynchronous events
 * find it; destroy waits until its events are acknowledged, as rdma-core
 * does. The rings are unmapped only after the daemon has destroyed the QP.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_shm_ops.h"
#include "shim_priv.h"

static void
qp_free(struct shim_qp *qp)
{
	shim_parent_put(qp->parent);
	shim_ring_unmap(&qp->sq);
	shim_ring_unmap(&qp->rq);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
}

struct ibv_qp *
shim_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct shim_context *sctx = to_sctx(ctx);
	struct droce_ctrl_create_qp_req req;
	struct droce_ctrl_create_qp_rep rep;
	int fds[2] = { -1, -1 };
	struct shim_qp *qp;
	int ret;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;	/* XRC, RSS, TSO header, source QPN */
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL ||
	    attr->send_cq == NULL || attr->recv_cq == NULL || attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	if (droce_shm_qp_send_ops(attr->qp_type) == 0) {
		errno = EOPNOTSUPP;	/* RAW_PACKET, XRC, DRIVER */
		return NULL;
	}
	/* BLOCK_SELF_MCAST_LB is the one creation flag: multicast is UD's */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags != 0 &&
	    (attr->create_flags != IBV_QP_CREATE_BLOCK_SELF_MCAST_LB ||
	     attr->qp_type != IBV_QPT_UD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* as rdma-core's providers: an operation the QP type lacks (droce_shm_ops.h:
	 * UC has no SEND_WITH_INV), or TSO / ATOMIC_WRITE / FLUSH (not offered) */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~droce_shm_qp_send_ops(attr->qp_type))) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	qp->parent = shim_parent_get(attr->pd);
	qp->lockless = shim_parent_lockless(qp->parent);

	req = (struct droce_ctrl_create_qp_req){
		.pd_handle = attr->pd->handle,
		.send_cq_handle = attr->send_cq->handle,
		.recv_cq_handle = attr->recv_cq->handle,
		.srq_handle = attr->srq != NULL ? attr->srq->handle : 0,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all != 0,
		.create_flags = attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS ?
					attr->create_flags : 0,
		.send_ops_flags = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS ?
					  attr->send_ops_flags : 0,
		.cap = attr->cap,
	};
	ret = shim_call(sctx, DROCE_CTRL_CREATE_QP, &req, sizeof(req), NULL, 0, &rep, sizeof(rep),
			fds, 2);
	if (ret != 0)
		goto err_free;
	qp->db = rep.engine;
	ret = shim_ring_map(&qp->sq, fds[0], rep.sq_map_len, DROCE_SHM_SQ);
	fds[0] = -1;
	if (ret == 0 && attr->srq == NULL) {
		ret = shim_ring_map(&qp->rq, fds[1], rep.rq_map_len, DROCE_SHM_RQ);
		fds[1] = -1;
	}
	if (ret == 0 && rep.engine >= sctx->n_db)
		ret = EPROTO;	/* no DB ring of ours reaches that engine */
	if (ret == 0)
		ret = shim_obj_add(sctx, SHIM_OBJ_QP, rep.qp_handle, qp);
	if (ret != 0)
		goto err_destroy;
	if (fds[1] >= 0)
		close(fds[1]);

	qp->qp.context = ctx;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = attr->pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.srq = attr->srq;
	qp->qp.handle = rep.qp_handle;
	qp->qp.qp_num = rep.qp_num;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	qp->qp.events_completed = 0;
	qp->cap = rep.cap;
	qp->max_inline = rep.cap.max_inline_data < DROCE_SHM_MAX_INLINE ?
				 rep.cap.max_inline_data : DROCE_SHM_MAX_INLINE;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qp->comp_mask |= SHIM_QP_EX;
		qp->send_ops_flags = attr->send_ops_flags;
	}
	shim_qp_ex_init(qp);
	attr->cap = rep.cap;	/* rdma-core reports what was granted */
	return &qp->qp;

err_destroy:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	(void)shim_call_destroy(sctx, DROCE_CTRL_DESTROY_QP, rep.qp_handle);
err_free:
	qp_free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *
shim_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex x = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = shim_create_qp_ex(pd->context, &x);

	if (qp != NULL)
		attr->cap = x.cap;
	return qp;
}

int
shim_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct droce_ctrl_modify_qp_req req = {
		.qp_handle = qp->handle, .mask = (uint32_t)attr_mask, .attr = *attr,
	};
	int ret;

	ret = shim_call(to_sctx(qp->context), DROCE_CTRL_MODIFY_QP, &req, sizeof(req), NULL, 0,
			NULL, 0, NULL, 0);
	if (ret == 0 && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;
	/*
	 * A QP moved to RESET leaves nothing in its CQs, as mlx5 and mthca
	 * clean them: completions of before (the flushes of an error) would
	 * otherwise be read as the first ones of the QP restated.
	 */
	if (ret == 0 && (attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		shim_cq_clean(qp->recv_cq, qp->qp_num);
		if (qp->send_cq != qp->recv_cq)
			shim_cq_clean(qp->send_cq, qp->qp_num);
	}
	return ret;
}

/* The QP's rate limit: droced's engine paces it (packet_pacing_caps states the range). */
int
shim_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr)
{
	struct droce_ctrl_modify_qp_rate_limit_req req = {
		.qp_handle = qp->handle, .rate_limit = attr->rate_limit,
		.max_burst_sz = attr->max_burst_sz, .typical_pkt_sz = attr->typical_pkt_sz,
		.comp_mask = attr->comp_mask,
	};

	return shim_call(to_sctx(qp->context), DROCE_CTRL_MODIFY_QP_RATE_LIMIT, &req, sizeof(req),
			 NULL, 0, NULL, 0, NULL, 0);
}

int
shim_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	      struct ibv_qp_init_attr *init_attr)
{
	struct droce_ctrl_query_qp_req req = {
		.qp_handle = qp->handle, .mask = (uint32_t)attr_mask,
	};
	struct droce_ctrl_query_qp_rep rep;
	int ret;

	ret = shim_call(to_sctx(qp->context), DROCE_CTRL_QUERY_QP, &req, sizeof(req), NULL, 0,
			&rep, sizeof(rep), NULL, 0);
	if (ret != 0)
		return ret;
	*attr = rep.attr;
	if (init_attr != NULL) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = rep.cap;
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = (int)rep.sq_sig_all;
	}
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

int
shim_destroy_qp(struct ibv_qp *ibqp)
{
	struct shim_context *sctx = to_sctx(ibqp->context);
	struct shim_qp *qp = to_sqp(ibqp);
	int ret;

	ret = shim_call_destroy(sctx, DROCE_CTRL_DESTROY_QP, ibqp->handle);
	if (ret != 0)
		return ret;
	shim_obj_del(sctx, SHIM_OBJ_QP, ibqp->handle);
	shim_wait_acks(&ibqp->mutex, &ibqp->cond, &ibqp->events_completed, qp->events_got);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	qp_free(qp);
	return 0;
}

/* ---- SRQ ---- */

struct ibv_srq *
shim_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr)
{
	struct shim_context *sctx = to_sctx(ctx);
	struct droce_ctrl_create_srq_req req;
	struct droce_ctrl_create_srq_rep rep;
	struct shim_srq *srq;
	int fd = -1, ret;

	if (attr->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD)) {
		errno = EOPNOTSUPP;	/* XRC, tag matching */
		return NULL;
	}
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL ||
	    attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	srq->parent = shim_parent_get(attr->pd);
	srq->lockless = shim_parent_lockless(srq->parent);
	req = (struct droce_ctrl_create_srq_req){ .pd_handle = attr->pd->handle,
						  .attr = attr->attr };
	ret = shim_call(sctx, DROCE_CTRL_CREATE_SRQ, &req, sizeof(req), NULL, 0, &rep, sizeof(rep),
			&fd, 1);
	if (ret != 0)
		goto err_free;
	ret = shim_ring_map(&srq->ring, fd, rep.map_len, DROCE_SHM_RQ);
	srq->db = rep.engine;
	if (ret == 0 && rep.engine >= sctx->n_db)
		ret = EPROTO;	/* no DB ring of ours reaches that engine */
	if (ret == 0)
		ret = shim_obj_add(sctx, SHIM_OBJ_SRQ, rep.srq_handle, srq);
	if (ret != 0)
		goto err_destroy;

	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->srq.context = ctx;
	srq->srq.srq_context = attr->srq_context;
	srq->srq.pd = attr->pd;
	srq->srq.handle = rep.srq_handle;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	srq->srq.events_completed = 0;
	srq->max_sge = rep.attr.max_sge;
	attr->attr.max_wr = rep.attr.max_wr;
	attr->attr.max_sge = rep.attr.max_sge;
	return &srq->srq;

err_destroy:
	shim_ring_unmap(&srq->ring);
	(void)shim_call_destroy(sctx, DROCE_CTRL_DESTROY_SRQ, rep.srq_handle);
err_free:
	shim_parent_put(srq->parent);
	free(srq);
	errno = ret;
	return NULL;
}

struct ibv_srq *
shim_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex x = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_srq *srq = shim_create_srq_ex(pd->context, &x);

	if (srq != NULL)
		attr->attr = x.attr;
	return srq;
}

int
shim_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct droce_ctrl_modify_srq_req req = {
		.srq_handle = srq->handle, .mask = (uint32_t)attr_mask, .attr = *attr,
	};

	return shim_call(to_sctx(srq->context), DROCE_CTRL_MODIFY_SRQ, &req, sizeof(req), NULL, 0,
			 NULL, 0, NULL, 0);
}

int
shim_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct droce_ctrl_handle req = { .handle = srq->handle };
	struct droce_ctrl_query_srq_rep rep;
	int ret;

	ret = shim_call(to_sctx(srq->context), DROCE_CTRL_QUERY_SRQ, &req, sizeof(req), NULL, 0,
			&rep, sizeof(rep), NULL, 0);
	if (ret == 0)
		*attr = rep.attr;
	return ret;
}

int
shim_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shim_context *sctx = to_sctx(ibsrq->context);
	struct shim_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = shim_call_destroy(sctx, DROCE_CTRL_DESTROY_SRQ, ibsrq->handle);
	if (ret != 0)
		return ret;
	shim_obj_del(sctx, SHIM_OBJ_SRQ, ibsrq->handle);
	shim_wait_acks(&ibsrq->mutex, &ibsrq->cond, &ibsrq->events_completed, srq->events_got);
	shim_ring_unmap(&srq->ring);
	pthread_spin_destroy(&srq->lock);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	shim_parent_put(srq->parent);
	free(srq);
	return 0;
}

/* ---- AH ---- */

struct ibv_ah *
shim_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct droce_ctrl_create_ah_req req = { .pd_handle = pd->handle, .attr = *attr };
	struct droce_ctrl_create_ah_rep rep;
	struct shim_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = shim_call(to_sctx(pd->context), DROCE_CTRL_CREATE_AH, &req, sizeof(req), NULL, 0,
			&rep, sizeof(rep), NULL, 0);
	if (ret != 0) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->ah.handle = rep.ah_handle;
	return &ah->ah;
}

int
shim_destroy_ah(struct ibv_ah *ah)
{
	int ret = shim_call_destroy(to_sctx(ah->context), DROCE_CTRL_DESTROY_AH, ah->handle);

	if (ret == 0)
		free(ah);
	return ret;
}

/* ---- multicast ---- */

static int
mcast_call(struct ibv_qp *qp, uint16_t type, const union ibv_gid *gid, uint16_t lid)
{
	struct droce_ctrl_mcast_req req = { .qp_handle = qp->handle, .lid = lid, .gid = *gid };

	if (qp->qp_type != IBV_QPT_UD)
		return EINVAL;	/* only UD QPs join groups */
	return shim_call(to_sctx(qp->context), type, &req, sizeof(req), NULL, 0, NULL, 0, NULL, 0);
}

int
shim_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, DROCE_CTRL_ATTACH_MCAST, gid, lid);
}

int
shim_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, DROCE_CTRL_DETACH_MCAST, gid, lid);
}

/* ---- exported ---- */

struct ibv_qp *shim_create_qp_1_1(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
SHIM_SYMVER_DEFAULT(shim_create_qp_1_1, ibv_create_qp, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_qp *
shim_create_qp_1_1(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	return shim_create_qp(pd, attr);
}

int shim_modify_qp_1_1(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
SHIM_SYMVER_DEFAULT(shim_modify_qp_1_1, ibv_modify_qp, "IBVERBS_1.1");
SHIM_EXPORT int
shim_modify_qp_1_1(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return shim_modify_qp(qp, attr, attr_mask);
}

int shim_query_qp_1_1(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_qp_init_attr *init_attr);
SHIM_SYMVER_DEFAULT(shim_query_qp_1_1, ibv_query_qp, "IBVERBS_1.1");
SHIM_EXPORT int
shim_query_qp_1_1(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr)
{
	return shim_query_qp(qp, attr, attr_mask, init_attr);
}

int shim_destroy_qp_1_1(struct ibv_qp *qp);
SHIM_SYMVER_DEFAULT(shim_destroy_qp_1_1, ibv_destroy_qp, "IBVERBS_1.1");
SHIM_EXPORT int
shim_destroy_qp_1_1(struct ibv_qp *qp)
{
	return shim_destroy_qp(qp);
}

SHIM_EXPORT struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct shim_qp *sqp = to_sqp(qp);

	return sqp->comp_mask & SHIM_QP_EX ? &sqp->qp_ex : NULL;
}

SHIM_EXPORT int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;	/* no ordering guarantee promised to the CPU */
}

SHIM_EXPORT int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

SHIM_EXPORT int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

struct ibv_srq *shim_create_srq_1_1(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
SHIM_SYMVER_DEFAULT(shim_create_srq_1_1, ibv_create_srq, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_srq *
shim_create_srq_1_1(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	return shim_create_srq(pd, attr);
}

int shim_modify_srq_1_1(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
SHIM_SYMVER_DEFAULT(shim_modify_srq_1_1, ibv_modify_srq, "IBVERBS_1.1");
SHIM_EXPORT int
shim_modify_srq_1_1(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	return shim_modify_srq(srq, attr, attr_mask);
}

int shim_query_srq_1_1(struct ibv_srq *srq, struct ibv_srq_attr *attr);
SHIM_SYMVER_DEFAULT(shim_query_srq_1_1, ibv_query_srq, "IBVERBS_1.1");
SHIM_EXPORT int
shim_query_srq_1_1(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	return shim_query_srq(srq, attr);
}

int shim_destroy_srq_1_1(struct ibv_srq *srq);
SHIM_SYMVER_DEFAULT(shim_destroy_srq_1_1, ibv_destroy_srq, "IBVERBS_1.1");
SHIM_EXPORT int
shim_destroy_srq_1_1(struct ibv_srq *srq)
{
	return shim_destroy_srq(srq);
}

struct ibv_ah *shim_create_ah_1_1(struct ibv_pd *pd, struct ibv_ah_attr *attr);
SHIM_SYMVER_DEFAULT(shim_create_ah_1_1, ibv_create_ah, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_ah *
shim_create_ah_1_1(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	return shim_create_ah(pd, attr);
}

int shim_destroy_ah_1_1(struct ibv_ah *ah);
SHIM_SYMVER_DEFAULT(shim_destroy_ah_1_1, ibv_destroy_ah, "IBVERBS_1.1");
SHIM_EXPORT int
shim_destroy_ah_1_1(struct ibv_ah *ah)
{
	return shim_destroy_ah(ah);
}

int shim_attach_mcast_1_1(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
SHIM_SYMVER_DEFAULT(shim_attach_mcast_1_1, ibv_attach_mcast, "IBVERBS_1.1");
SHIM_EXPORT int
shim_attach_mcast_1_1(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return shim_attach_mcast(qp, gid, lid);
}

int shim_detach_mcast_1_1(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
SHIM_SYMVER_DEFAULT(shim_detach_mcast_1_1, ibv_detach_mcast, "IBVERBS_1.1");
SHIM_EXPORT int
shim_detach_mcast_1_1(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return shim_detach_mcast(qp, gid, lid);
}
