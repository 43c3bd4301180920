/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Control requests: HELLO (the client's doorbell ring and async pipe), body
 * sizes checked exactly, and each request handed to its object's handler.
 * A malformed request (-EPROTO) drops the client.
 */

#include <errno.h>
#include <endian.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "verbs_dev_priv.h"

_Static_assert(DEV_MAX_ENGINES <= DROCE_SHM_MAX_DB, "a DB ring per engine");
_Static_assert(1 + DEV_MAX_ENGINES <= DROCE_CTRL_MAX_FDS, "HELLO: DB memfd, wake eventfds");

static int
dev_hello(struct droce_client *cl, const struct droce_ctrl_hello_req *req, int async_fd,
	  struct droce_ctrl_hello_rep *rep, int *fds, unsigned int *nfds)
{
	unsigned int n_eng = cl->dev->n_eng;
	int ret;

	if (req->abi_version != DROCE_SHM_ABI_VERSION)
		return EPROTO;
	if (cl->db[0].r != NULL)
		return EINVAL;		/* once per connection */
	/* a DB ring per engine, whose worker alone takes it: one memfd */
	ret = dev_ring_create_n(cl->db, n_eng, DROCE_SHM_DB, cl->id, DEV_DB_SLOTS,
				sizeof(struct droce_shm_db), &fds[0]);
	if (ret < 0)
		return -ret;
	if (async_fd >= 0) {
		cl->async_fd = fcntl(async_fd, F_DUPFD_CLOEXEC, 0);
		fcntl(cl->async_fd, F_SETFL, O_NONBLOCK);
	}
	*nfds = 1;
	if (dev_client_wake_open(cl, &fds[1]) == 0)
		*nfds = 1 + n_eng;	/* --idle wait: the shim's wake eventfds */
	rep->ctx_handle = cl->id;
	rep->db_nslots = DEV_DB_SLOTS;
	rep->db_map_len = cl->db[0].map_len;
	rep->n_db = n_eng;
	snprintf(rep->dev_name, sizeof(rep->dev_name), "%s", cl->dev->conf.name);
	rep->node_guid = htobe64(cl->dev->conf.node_guid);
	return 0;
}

/* Request body sizes, checked exactly: a short or long body is malformed. */
static const uint32_t req_len[DROCE_CTRL_TYPE_COUNT] = {
	[DROCE_CTRL_HELLO] = sizeof(struct droce_ctrl_hello_req),
	[DROCE_CTRL_QUERY_DEVICE] = 0,
	[DROCE_CTRL_QUERY_PORT] = sizeof(struct droce_ctrl_query_port_req),
	[DROCE_CTRL_QUERY_GID] = sizeof(struct droce_ctrl_query_gid_req),
	[DROCE_CTRL_ALLOC_PD] = 0,
	[DROCE_CTRL_DEALLOC_PD] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_REG_MR] = sizeof(struct droce_ctrl_reg_mr_req),
	[DROCE_CTRL_DEREG_MR] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_ALLOC_MW] = sizeof(struct droce_ctrl_alloc_mw_req),
	[DROCE_CTRL_DEALLOC_MW] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_CQ] = sizeof(struct droce_ctrl_create_cq_req),
	[DROCE_CTRL_DESTROY_CQ] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_SRQ] = sizeof(struct droce_ctrl_create_srq_req),
	[DROCE_CTRL_MODIFY_SRQ] = sizeof(struct droce_ctrl_modify_srq_req),
	[DROCE_CTRL_QUERY_SRQ] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_DESTROY_SRQ] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_QP] = sizeof(struct droce_ctrl_create_qp_req),
	[DROCE_CTRL_MODIFY_QP] = sizeof(struct droce_ctrl_modify_qp_req),
	[DROCE_CTRL_QUERY_QP] = sizeof(struct droce_ctrl_query_qp_req),
	[DROCE_CTRL_DESTROY_QP] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_AH] = sizeof(struct droce_ctrl_create_ah_req),
	[DROCE_CTRL_DESTROY_AH] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_ATTACH_MCAST] = sizeof(struct droce_ctrl_mcast_req),
	[DROCE_CTRL_DETACH_MCAST] = sizeof(struct droce_ctrl_mcast_req),
	[DROCE_CTRL_REREG_MR] = sizeof(struct droce_ctrl_rereg_mr_req),
	[DROCE_CTRL_RESIZE_CQ] = sizeof(struct droce_ctrl_resize_cq_req),
	[DROCE_CTRL_MODIFY_QP_RATE_LIMIT] = sizeof(struct droce_ctrl_modify_qp_rate_limit_req),
	[DROCE_CTRL_ADVISE_MR] = sizeof(struct droce_ctrl_advise_mr_req),
	[DROCE_CTRL_OPEN_MAPPING] = sizeof(struct droce_ctrl_open_mapping_req),
};

int
droce_dev_request(struct droce_client *cl, const struct droce_ctrl_hdr *hdr, const void *body,
		  const int *fds, unsigned int nfds, void *rep, uint32_t *rep_len, int *rep_fds,
		  unsigned int *rep_nfds)
{
	struct droce_dev *dev = cl->dev;
	const struct droce_ctrl_handle *h = body;
	int fd0 = nfds > 0 ? fds[0] : -1;

	*rep_len = 0;
	*rep_nfds = 0;
	droce_dev_reclaim(dev);
	if (hdr->type == DROCE_CTRL_NONE || hdr->type >= DROCE_CTRL_TYPE_COUNT ||
	    hdr->len != req_len[hdr->type])
		return -EPROTO;
	if (hdr->type != DROCE_CTRL_HELLO && cl->db[0].r == NULL)
		return -EPROTO;		/* HELLO comes first */

	switch (hdr->type) {
	case DROCE_CTRL_HELLO:
		*rep_len = sizeof(struct droce_ctrl_hello_rep);
		return dev_hello(cl, body, fd0, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_QUERY_DEVICE: {
		struct droce_ctrl_query_device_rep *r = rep;

		*rep_len = sizeof(*r);
		memset(r, 0, sizeof(*r));
		r->attr = dev->attr;
		r->max_inline_data = DROCE_SHM_MAX_INLINE;
		dev_packet_pacing_caps(dev, &r->packet_pacing_caps);
		return 0;
	}
	case DROCE_CTRL_QUERY_PORT: {
		const struct droce_ctrl_query_port_req *q = body;
		struct droce_ctrl_query_port_rep *r = rep;

		if (q->port_num != 1)
			return EINVAL;
		*rep_len = sizeof(*r);
		r->attr = dev->port;
		return 0;
	}
	case DROCE_CTRL_QUERY_GID: {
		const struct droce_ctrl_query_gid_req *q = body;
		struct droce_ctrl_query_gid_rep *r = rep;

		if (q->port_num != 1 || q->index >= (uint32_t)dev->port.gid_tbl_len)
			return EINVAL;
		*rep_len = sizeof(*r);
		memset(r, 0, sizeof(*r));
		memcpy(r->gid.raw, dev->conf.gid[q->index], 16);
		r->gid_type = IBV_GID_TYPE_ROCE_V2;
		r->valid = 1;
		return 0;
	}
	case DROCE_CTRL_ALLOC_PD:
		*rep_len = sizeof(struct droce_ctrl_alloc_pd_rep);
		return dev_alloc_pd(cl, rep);
	case DROCE_CTRL_DEALLOC_PD:
		return dev_destroy_checked(cl, h->handle, OBJ_PD);
	case DROCE_CTRL_REG_MR:
		*rep_len = sizeof(struct droce_ctrl_reg_mr_rep);
		return dev_reg_mr(cl, body, fd0, rep);
	case DROCE_CTRL_DEREG_MR:
		return dev_destroy_checked(cl, h->handle, OBJ_MR);
	case DROCE_CTRL_ALLOC_MW:
		*rep_len = sizeof(struct droce_ctrl_alloc_mw_rep);
		return dev_alloc_mw(cl, body, rep);
	case DROCE_CTRL_DEALLOC_MW:
		return dev_destroy_checked(cl, h->handle, OBJ_MW);
	case DROCE_CTRL_CREATE_CQ:
		*rep_len = sizeof(struct droce_ctrl_create_cq_rep);
		return dev_create_cq(cl, body, fd0, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_DESTROY_CQ:
		return dev_destroy_checked(cl, h->handle, OBJ_CQ);
	case DROCE_CTRL_CREATE_SRQ:
		*rep_len = sizeof(struct droce_ctrl_create_srq_rep);
		return dev_create_srq(cl, body, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_MODIFY_SRQ:
		return dev_modify_srq(cl, body);
	case DROCE_CTRL_QUERY_SRQ: {
		struct dev_srq *srq = dev_obj_get(cl, h->handle, OBJ_SRQ);
		struct droce_ctrl_query_srq_rep *r = rep;

		if (srq == NULL)
			return EINVAL;
		*rep_len = sizeof(*r);
		r->attr.max_wr = srq->max_wr;
		r->attr.max_sge = srq->max_sge;
		r->attr.srq_limit = srq->limit;
		return 0;
	}
	case DROCE_CTRL_DESTROY_SRQ:
		return dev_destroy_checked(cl, h->handle, OBJ_SRQ);
	case DROCE_CTRL_CREATE_QP:
		*rep_len = sizeof(struct droce_ctrl_create_qp_rep);
		return dev_create_qp(cl, body, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_MODIFY_QP:
		return dev_modify_qp(cl, body);
	case DROCE_CTRL_QUERY_QP:
		*rep_len = sizeof(struct droce_ctrl_query_qp_rep);
		return dev_query_qp(cl, body, rep);
	case DROCE_CTRL_DESTROY_QP:
		return dev_destroy_checked(cl, h->handle, OBJ_QP);
	case DROCE_CTRL_CREATE_AH:
		*rep_len = sizeof(struct droce_ctrl_create_ah_rep);
		return dev_create_ah(cl, body, rep);
	case DROCE_CTRL_DESTROY_AH:
		dev_drain_ud_qps(cl);
		return dev_destroy_checked(cl, h->handle, OBJ_AH);
	case DROCE_CTRL_ATTACH_MCAST:
		return dev_mcast(cl, body, true);
	case DROCE_CTRL_DETACH_MCAST:
		return dev_mcast(cl, body, false);
	case DROCE_CTRL_REREG_MR:
		*rep_len = sizeof(struct droce_ctrl_rereg_mr_rep);
		return dev_rereg_mr(cl, body, fd0, rep);
	case DROCE_CTRL_RESIZE_CQ:
		*rep_len = sizeof(struct droce_ctrl_resize_cq_rep);
		return dev_resize_cq(cl, body, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_MODIFY_QP_RATE_LIMIT:
		return dev_modify_qp_rate_limit(cl, body);
	case DROCE_CTRL_ADVISE_MR:
		*rep_len = sizeof(struct droce_ctrl_advise_mr_rep);
		return dev_advise_mr(cl, body, rep);
	default:
		return EOPNOTSUPP;
	}
}
