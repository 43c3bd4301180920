/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Multicast on rdma_cm ids: rdma_join_multicast, rdma_join_multicast_ex,
 * rdma_leave_multicast. As rdma-core's librdmacm does with the kernel,
 * droced answers a join with MULTICAST_JOIN (the group's MGID, its Q_Key,
 * our GID index) and this library attaches the id's QP to the MGID itself
 * (ibv_attach_mcast, for which droced sends the IGMP / MLD report), unless
 * the join was send-only; leaving detaches it. The event's
 * param.ud.private_data is the join's context, as rdma-core gives it.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include "rdmacm_priv.h"

void
rdmacm_ud_ah(struct ibv_ah_attr *ah, const uint8_t dgid[16], uint8_t sgid_index,
	     uint8_t hop_limit, uint8_t tclass)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	memcpy(ah->grh.dgid.raw, dgid, 16);
	ah->grh.sgid_index = sgid_index;
	ah->grh.hop_limit = hop_limit;
	ah->grh.traffic_class = tclass;
}

static socklen_t
addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* The membership of @p i for group @p addr (its address only; ports do not count). */
static struct rdmacm_mc **
mc_find(struct rdmacm_id *i, const struct sockaddr *addr)
{
	struct droce_ctrl_cm_addr want, have;
	struct rdmacm_mc **pp;

	if (rdmacm_addr_to_ctrl(addr, &want) != 0)
		return NULL;
	for (pp = &i->mcs; *pp != NULL; pp = &(*pp)->next) {
		(void)rdmacm_addr_to_ctrl((struct sockaddr *)&(*pp)->addr, &have);
		if (have.family == want.family && memcmp(have.gid, want.gid, 16) == 0)
			return pp;
	}
	return NULL;
}

RDMACM_EXPORT int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_join_req req;
	struct rdmacm_mc *mc;
	int ret;

	if (i == NULL || attr == NULL || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    attr->addr == NULL)
		return rdmacm_err(EINVAL);
	if (attr->comp_mask & ~(RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS))
		return rdmacm_err(EINVAL);
	memset(&req, 0, sizeof(req));
	req.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER;
	if (attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)
		req.join_flags = attr->join_flags;
	if (req.join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
	    req.join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return rdmacm_err(EINVAL);
	ret = rdmacm_addr_to_ctrl(attr->addr, &req.addr);
	if (ret != 0)
		return rdmacm_err(ret);
	pthread_mutex_lock(&i->chan->lock);
	mc = mc_find(i, attr->addr) != NULL ? NULL : calloc(1, sizeof(*mc));
	if (mc != NULL) {
		memcpy(&mc->addr, attr->addr, addr_len(attr->addr));
		mc->context = context;
		mc->join_flags = req.join_flags;
		mc->next = i->mcs;
		i->mcs = mc;
	}
	pthread_mutex_unlock(&i->chan->lock);
	if (mc == NULL)
		return rdmacm_err(mc_find(i, attr->addr) != NULL ? EADDRINUSE : ENOMEM);
	req.mc = (uint64_t)(uintptr_t)mc;
	ret = rdmacm_id_call(i, DROCE_CTRL_CM_JOIN_MCAST, &req, sizeof(req), NULL, 0);
	if (ret != 0) {
		struct rdmacm_mc **pp;

		pthread_mutex_lock(&i->chan->lock);
		pp = mc_find(i, attr->addr);
		if (pp != NULL)
			*pp = mc->next;
		pthread_mutex_unlock(&i->chan->lock);
		free(mc);
		return rdmacm_err(ret);
	}
	return 0;
}

RDMACM_EXPORT int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = addr,
	};

	return rdma_join_multicast_ex(id, &attr, context);
}

/* MULTICAST_JOIN for membership @p mc of @p i: the context, and the QP attached. */
void
rdmacm_mc_joined(struct rdmacm_id *i, struct rdma_cm_event *e, uint64_t mc)
{
	struct rdmacm_mc *m;
	int ret = 0;

	pthread_mutex_lock(&i->chan->lock);
	for (m = i->mcs; m != NULL && (uint64_t)(uintptr_t)m != mc; m = m->next)
		;
	pthread_mutex_unlock(&i->chan->lock);
	if (m == NULL) {		/* left meanwhile */
		e->event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->status = -ENOENT;
		return;
	}
	e->param.ud.private_data = m->context;
	e->param.ud.private_data_len = 0;
	m->mgid = e->param.ud.ah_attr.grh.dgid;
	if (i->id.qp == NULL || m->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER ||
	    m->attached)
		return;
	ret = ibv_attach_mcast(i->id.qp, &m->mgid, 0);
	if (ret != 0) {
		e->event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->status = -ret;
		return;
	}
	m->attached = true;
}

RDMACM_EXPORT int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct rdmacm_mc **pp, *m = NULL;

	if (i == NULL || addr == NULL)
		return rdmacm_err(EINVAL);
	pthread_mutex_lock(&i->chan->lock);
	pp = mc_find(i, addr);
	if (pp != NULL) {
		m = *pp;
		*pp = m->next;
	}
	pthread_mutex_unlock(&i->chan->lock);
	if (m == NULL)
		return rdmacm_err(EADDRNOTAVAIL);
	if (m->attached && i->id.qp != NULL)
		(void)ibv_detach_mcast(i->id.qp, &m->mgid, 0);
	free(m);
	return 0;
}

/* rdma_destroy_id: groups not left are forgotten (a destroyed QP left them already). */
void
rdmacm_mc_free_all(struct rdmacm_id *i)
{
	while (i->mcs != NULL) {
		struct rdmacm_mc *m = i->mcs;

		i->mcs = m->next;
		if (m->attached && i->id.qp != NULL)
			(void)ibv_detach_mcast(i->id.qp, &m->mgid, 0);
		free(m);
	}
}
