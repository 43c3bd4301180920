/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Endpoints (rdma_create_ep, rdma_destroy_ep, rdma_get_request): rdma_cma.h's
 * short way, for rdma_getaddrinfo's results and rdma_verbs.h's helpers. An
 * endpoint is a synchronous id (a NULL channel): an active one is resolved
 * (address, then route, 2 s each, as rdma-core waits) and given its QP; a
 * passive one is bound and keeps the QP attributes it was given, so that
 * rdma_get_request makes each new id's QP from them. IB route data
 * (ai_route) is not used: droced resolves the route itself.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

#define EP_RESOLVE_MS	2000

RDMACM_EXPORT void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_id(id);	/* and the passive endpoint's QP attributes */
}

static int
ep_passive(struct rdmacm_id *i, const struct rdma_addrinfo *res, struct ibv_pd *pd,
	   const struct ibv_qp_init_attr *qp_init_attr)
{
	if (rdma_bind_addr(&i->id, res->ai_src_addr) != 0)
		return errno;
	if (pd != NULL)
		i->id.pd = pd;
	if (qp_init_attr != NULL) {
		i->ep_qp_attr = malloc(sizeof(*i->ep_qp_attr));
		if (i->ep_qp_attr == NULL)
			return ENOMEM;
		*i->ep_qp_attr = *qp_init_attr;
		i->ep_qp_attr->qp_type = res->ai_qp_type;
	}
	return 0;
}

static int
ep_active(struct rdmacm_id *i, const struct rdma_addrinfo *res, struct ibv_pd *pd,
	  struct ibv_qp_init_attr *qp_init_attr)
{
	if (rdma_resolve_addr(&i->id, res->ai_src_addr, res->ai_dst_addr, EP_RESOLVE_MS) != 0 ||
	    rdma_resolve_route(&i->id, EP_RESOLVE_MS) != 0)
		return errno;
	if (qp_init_attr != NULL) {
		qp_init_attr->qp_type = res->ai_qp_type;
		if (rdma_create_qp(&i->id, pd, qp_init_attr) != 0)
			return errno;
	}
	memcpy(i->connect, res->ai_connect, res->ai_connect_len);
	i->connect_len = (uint8_t)res->ai_connect_len;
	return 0;
}

RDMACM_EXPORT int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	struct rdmacm_id *i;
	int ret;

	if (id == NULL || res == NULL || res->ai_connect_len > sizeof(i->connect) ||
	    (res->ai_connect_len > 0 && res->ai_connect == NULL))
		return rdmacm_err(EINVAL);
	if (rdmacm_create_id(NULL, &cm_id, NULL, (enum rdma_port_space)res->ai_port_space,
			     (enum ibv_qp_type)res->ai_qp_type) != 0)
		return -1;
	i = (struct rdmacm_id *)cm_id;
	ret = res->ai_flags & RAI_PASSIVE ? ep_passive(i, res, pd, qp_init_attr) :
					    ep_active(i, res, pd, qp_init_attr);
	if (ret != 0) {
		rdma_destroy_ep(cm_id);
		return rdmacm_err(ret);
	}
	*id = cm_id;
	return 0;
}

/*
 * The next connection request of a synchronous listener: the new id (on a
 * channel of its own, its CONNECT_REQUEST in id->event) with its QP made
 * from the endpoint's attributes. A request whose QP cannot be made is
 * rejected and freed.
 */
RDMACM_EXPORT int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdmacm_id *l = (struct rdmacm_id *)listen;
	struct rdma_cm_event *e;
	struct rdma_cm_id *n;
	int ret;

	if (l == NULL || id == NULL || !l->sync)
		return rdmacm_err(EINVAL);
	if (listen->event != NULL)
		rdma_ack_cm_event(listen->event);
	listen->event = NULL;
	if (rdma_get_cm_event(listen->channel, &e) != 0)
		return -1;
	if (e->status != 0 || e->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = e->status < 0 ? -e->status : e->status != 0 ? e->status : EINVAL;
		listen->event = e;	/* the caller may look at it, as rdma-core leaves it */
		return rdmacm_err(ret);
	}
	n = e->id;
	if (l->ep_qp_attr != NULL) {
		struct ibv_qp_init_attr attr = *l->ep_qp_attr;

		if (rdma_create_qp(n, listen->pd, &attr) != 0) {
			ret = errno;
			(void)rdma_reject(n, NULL, 0);
			rdma_ack_cm_event(e);
			rdma_destroy_id(n);
			return rdmacm_err(ret);
		}
	}
	n->event = e;
	*id = n;
	return 0;
}
