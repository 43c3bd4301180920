/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Service ID Resolution (SIDR, IBA ch. 12): a SIDR_REQ asks which UD QP and Q_Key
 * serve a service ID, the SIDR_REP answers. rdma_cm uses it to "connect"
 * UD ids (RDMA_PS_UDP, RDMA_PS_IPOIB). The active id retransmits its
 * SIDR_REQ until answered; the passive side keeps an id per request until
 * its owner answers, and drops duplicates of a request it is still
 * answering. Single-threaded, like the rest of the CM.
 */

#include <errno.h>
#include <string.h>

#include "cm_priv.h"

#define TIME_MAX 31

int
droce_cm_sidr_req(struct droce_cm_id *id, const struct droce_cm_sidr_req_param *p, uint64_t now)
{
	struct droce_cm_msg m;

	if (id->state != DROCE_CM_IDLE || id->orphan)
		return -EINVAL;
	if (p->pdata_len > DROCE_CM_SIDR_REQ_PDATA_BYTES || (p->pdata_len && p->pdata == NULL))
		return -EINVAL;
	id->addr = p->addr;
	id->service_id = p->service_id;
	id->remote_id = 0;
	id->rt.max_cm_retries = p->max_cm_retries & 0xf;
	id->rt.tid = cm_new_tid(id->cm);

	cm_msg_init(&m, DROCE_CM_MSG_SIDR_REQ, id->rt.tid);
	m.sidr_req.request_id = id->local_id;
	m.sidr_req.pkey = p->addr.pkey;
	m.sidr_req.service_id = p->service_id;
	(void)cm_copy_pdata(m.sidr_req.private_data, DROCE_CM_SIDR_REQ_PDATA_BYTES, p->pdata,
			    p->pdata_len);
	cm_send(id, &m, true);
	cm_timer_start(id, droce_cm_time_ns(p->timeout & TIME_MAX), id->rt.max_cm_retries, now);
	cm_set_state(id, DROCE_CM_SIDR_REQ_SENT);
	return 0;
}

static void
send_sidr_rep(struct droce_cm *cm, const struct droce_cm_addr *to, uint64_t tid,
	      const struct droce_cm_msg *req, const struct droce_cm_sidr_rep_param *p)
{
	struct droce_cm_msg m;

	cm_msg_init(&m, DROCE_CM_MSG_SIDR_REP, tid);
	m.sidr_rep.request_id = req->sidr_req.request_id;
	m.sidr_rep.service_id = req->sidr_req.service_id;
	m.sidr_rep.status = p->status;
	m.sidr_rep.qpn = p->qpn & 0xffffff;
	m.sidr_rep.qkey = p->qkey;
	m.sidr_rep.info_len = p->info_len;
	(void)cm_copy_pdata(m.sidr_rep.info, DROCE_CM_ARI_BYTES, p->info, p->info_len);
	(void)cm_copy_pdata(m.sidr_rep.private_data, DROCE_CM_SIDR_REP_PDATA_BYTES, p->pdata,
			    p->pdata_len);
	cm_send_to(cm, to, &m);
}

/* The passive id of SIDR request @p request_id from @p from, if one is pending. */
static struct droce_cm_id *
find_pending(struct droce_cm *cm, uint32_t request_id, const struct droce_cm_addr *from)
{
	uint32_t i;

	for (i = 0; i < cm->n_ids; i++) {
		struct droce_cm_id *id = &cm->ids[i];

		if (id->state == DROCE_CM_SIDR_REQ_RCVD && id->remote_id == request_id &&
		    memcmp(id->addr.remote_gid, from->remote_gid, DROCE_CM_GID_BYTES) == 0)
			return id;
	}
	return NULL;
}

static void
sidr_req_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg)
{
	struct droce_cm_sidr_rep_param refuse = { .status = DROCE_CM_SIDR_REJECT };
	struct droce_cm_id *id, *listen;

	if (find_pending(cm, msg->sidr_req.request_id, from) != NULL) {
		cm->cnt[DROCE_CM_CNT_DUP_SIDR_REQ]++;	/* the owner is answering it */
		return;
	}
	listen = cm_find_listener(cm, msg->sidr_req.service_id);
	if (listen == NULL) {
		cm->cnt[DROCE_CM_CNT_NO_LISTENER]++;
		refuse.status = DROCE_CM_SIDR_UNSUPPORTED;	/* as Linux answers */
		goto refuse;
	}
	if (listen->pending >= listen->backlog) {
		cm->cnt[DROCE_CM_CNT_BACKLOG_FULL]++;
		goto refuse;
	}
	id = cm_id_alloc(cm);
	if (id == NULL) {
		cm->cnt[DROCE_CM_CNT_NO_IDS]++;
		goto refuse;
	}
	(void)cm_backlog_take(listen, id);
	id->remote_id = msg->sidr_req.request_id;
	id->service_id = msg->sidr_req.service_id;
	id->addr = *from;
	id->rt.tid = msg->hdr.tid;
	cm_set_state(id, DROCE_CM_SIDR_REQ_RCVD);
	cm_emit(id, DROCE_CM_EV_SIDR_REQ_RECEIVED, listen, msg, from);
	return;

refuse:
	send_sidr_rep(cm, from, msg->hdr.tid, msg, &refuse);
}

static void
sidr_rep_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg)
{
	struct droce_cm_id *id = cm_find_local(cm, msg->sidr_rep.request_id, from);

	if (id == NULL) {
		cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
		return;
	}
	if (id->state != DROCE_CM_SIDR_REQ_SENT) {
		cm->cnt[DROCE_CM_CNT_DROP_STATE]++;	/* a duplicate answer */
		return;
	}
	cm_go_idle(id);
	cm_emit(id, DROCE_CM_EV_SIDR_REP_RECEIVED, NULL, msg, from);
}

void
cm_sidr_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
	   uint64_t now)
{
	(void)now;
	if (msg->type == DROCE_CM_MSG_SIDR_REQ)
		sidr_req_rx(cm, from, msg);
	else
		sidr_rep_rx(cm, from, msg);
}

/* Answer the request @p id holds; its service ID and request ID come from it. */
static void
answer(struct droce_cm_id *id, const struct droce_cm_sidr_rep_param *p)
{
	struct droce_cm_msg req;

	memset(&req, 0, sizeof(req));
	req.sidr_req.request_id = id->remote_id;
	req.sidr_req.service_id = id->service_id;
	send_sidr_rep(id->cm, &id->addr, id->rt.tid, &req, p);
}

int
droce_cm_sidr_rep(struct droce_cm_id *id, const struct droce_cm_sidr_rep_param *p, uint64_t now)
{
	(void)now;
	if (id->state != DROCE_CM_SIDR_REQ_RCVD)
		return -EINVAL;
	if (p->info_len > DROCE_CM_ARI_BYTES || (p->info_len && p->info == NULL) ||
	    p->pdata_len > DROCE_CM_SIDR_REP_PDATA_BYTES || (p->pdata_len && p->pdata == NULL))
		return -EINVAL;
	answer(id, p);
	cm_go_idle(id);
	return 0;
}

void
cm_sidr_timeout(struct droce_cm_id *id, uint64_t now)
{
	(void)now;
	cm_go_idle(id);
	cm_emit(id, DROCE_CM_EV_SIDR_REQ_ERROR, NULL, NULL, NULL);
}

void
cm_sidr_destroy(struct droce_cm_id *id, uint64_t now)
{
	struct droce_cm_sidr_rep_param refuse = { .status = DROCE_CM_SIDR_REJECT };

	(void)now;
	if (id->state == DROCE_CM_SIDR_REQ_RCVD)
		answer(id, &refuse);	/* as Linux does for an id destroyed unanswered */
	cm_id_free(id);
}
