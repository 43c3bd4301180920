/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * What an application tunes on an id: rdma_set_option (type of service,
 * ACK timeout, REUSEADDR, AFONLY), rdma_notify (the passive side's
 * COMM_EST before the RTU), and an SRQ made on the id for its QP
 * (rdma_create_srq, rdma_create_srq_ex, rdma_destroy_srq). The rules are
 * rdma_set_option(3), rdma_notify(3), rdma_create_srq(3) and, where those
 * are silent, what Linux's rdma_cm does.
 */

#include <errno.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "rdmacm_priv.h"

void
rdmacm_options_apply(const struct rdmacm_id *i, struct ibv_qp_attr *a, int mask)
{
	if (i->tos_set && (mask & IBV_QP_AV))
		a->ah_attr.grh.traffic_class = i->tos;
	if (i->ack_timeout_set && (mask & IBV_QP_TIMEOUT))
		a->timeout = i->ack_timeout;
}

/* An int-sized boolean option's value, or -1 if @p optlen is not an int's. */
static int
opt_bool(const void *optval, size_t optlen)
{
	int v;

	if (optval == NULL || optlen != sizeof(int))
		return -1;
	memcpy(&v, optval, sizeof(v));
	return v != 0;
}

static int
set_id_option(struct rdmacm_id *i, int optname, const void *optval, size_t optlen)
{
	uint32_t flag;
	int on;

	switch (optname) {
	case RDMA_OPTION_ID_TOS:	/* the traffic class of the id's path and QP */
		if (optval == NULL || optlen != sizeof(uint8_t))
			return EINVAL;
		i->tos = *(const uint8_t *)optval;
		i->tos_set = true;
		if (i->id.route.path_rec != NULL)
			i->path.traffic_class = i->tos;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:	/* the QP's local ACK timeout, RC only */
		if (optval == NULL || optlen != sizeof(uint8_t) || i->id.qp_type != IBV_QPT_RC)
			return EINVAL;
		i->ack_timeout = *(const uint8_t *)optval;
		i->ack_timeout_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:	/* before the id is bound */
	case RDMA_OPTION_ID_AFONLY:
		flag = optname == RDMA_OPTION_ID_REUSEADDR ? DROCE_CTRL_CM_BIND_REUSEADDR :
							    DROCE_CTRL_CM_BIND_AFONLY;
		on = opt_bool(optval, optlen);
		if (on < 0 || i->bound)
			return EINVAL;
		i->bind_flags = on ? i->bind_flags | flag : i->bind_flags & ~flag;
		if (optname == RDMA_OPTION_ID_AFONLY)	/* else the family decides */
			i->bind_flags |= DROCE_CTRL_CM_BIND_AFONLY_SET;
		return 0;
	default:
		return ENOSYS;
	}
}

RDMACM_EXPORT int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	/* RDMA_OPTION_IB_PATH (an SA's path records) has no meaning on RoCE */
	ret = level == RDMA_OPTION_ID ? set_id_option(i, optname, optval, optlen) : ENOSYS;
	return ret != 0 ? rdmacm_err(ret) : 0;
}

RDMACM_EXPORT int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_id req = { .arg = 1 };
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	switch (event) {
	case IBV_EVENT_COMM_EST:	/* the QP heard the peer before the RTU */
		ret = rdmacm_id_call(i, DROCE_CTRL_CM_ESTABLISH, &req, sizeof(req), NULL, 0);
		return ret != 0 ? rdmacm_err(ret) : 0;
	case IBV_EVENT_LID_CHANGE:	/* nothing to do on RoCE */
		return 0;
	default:			/* no alternate path to migrate to */
		return rdmacm_err(EINVAL);
	}
}

RDMACM_EXPORT int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;

	if (id == NULL || attr == NULL || id->verbs == NULL || id->srq != NULL)
		return rdmacm_err(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
		attr->pd = id->pd;
	}
	if (attr->pd == NULL)
		return rdmacm_err(EINVAL);
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (srq == NULL)
		return rdmacm_err(errno);
	id->srq = srq;		/* rdma_create_qp puts the QP on it */
	return 0;
}

RDMACM_EXPORT int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	int ret;

	if (attr == NULL)
		return rdmacm_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | (pd != NULL ? IBV_SRQ_INIT_ATTR_PD : 0);
	ex.srq_type = IBV_SRQT_BASIC;
	ex.pd = pd;
	ret = rdma_create_srq_ex(id, &ex);
	if (ret == 0)
		attr->attr = ex.attr;	/* the sizes granted */
	return ret;
}

RDMACM_EXPORT void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}
