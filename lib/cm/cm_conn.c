/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Connection establishment and release (IBA ch. 12; the states of
 * droce_cm.h): the REQ/MRA/REP/RTU/REJ handshake on both sides and the
 * DREQ/DREP release with TIMEWAIT. Each received message is handled by one
 * function that switches on the id's state, in the order Linux's ib_cm
 * checks: find the id (by our comm ID, from the same peer), answer
 * duplicates from the last MAD sent, refuse stale connections, then step.
 * An event, if any, is the last thing a step does: the owner may destroy
 * the id from its handler. Single-threaded, like the rest of the CM.
 */

#include <errno.h>
#include <string.h>

#include "cm_priv.h"

#define PERMISSIVE_LID	0xffff	/* RoCE has no LIDs: the permissive one, as Linux sends */
#define IBV_MTU_MIN	1	/* 256 */
#define IBV_MTU_MAX	5	/* 4096 */
#define TIME_MAX	31	/* IBA time exponents are 5 bits */

/* How long to wait for the peer's answer: its response time plus a round trip. */
static uint64_t
wait_ns(const struct droce_cm_id *id)
{
	return droce_cm_time_ns(id->rt.peer_response_timeout) +
	       2 * droce_cm_time_ns(id->rt.packet_life_time);
}

/*
 * TIMEWAIT lasts the local ACK timeout, long enough for packets of the old
 * connection still in flight to die (Linux waits the same).
 */
static uint64_t
timewait_ns(const struct droce_cm_id *id)
{
	uint8_t t = id->conn.local_ack_timeout;

	if (t == 0)	/* no ACK timeout: fall back on the packet lifetime */
		t = id->rt.packet_life_time < TIME_MAX ? id->rt.packet_life_time + 1 : TIME_MAX;
	return droce_cm_time_ns(t);
}

static bool
is_established_or_closing(enum droce_cm_state s)
{
	return s == DROCE_CM_ESTABLISHED || s == DROCE_CM_DREQ_SENT || s == DROCE_CM_DREQ_RCVD;
}

/* States in which the id knows its peer's comm ID and QPN. */
static bool
knows_peer(enum droce_cm_state s)
{
	switch (s) {
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
	case DROCE_CM_REP_SENT:
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
	case DROCE_CM_TIMEWAIT:
		return true;
	default:
		return is_established_or_closing(s);
	}
}

/* The id of a connection with the peer's comm ID @p remote_id on CA @p guid. */
static struct droce_cm_id *
find_by_remote_id(struct droce_cm *cm, uint32_t remote_id, uint64_t guid)
{
	uint32_t i;

	for (i = 0; i < cm->n_ids; i++) {
		struct droce_cm_id *id = &cm->ids[i];

		if (knows_peer(id->state) && id->remote_id != 0 && id->remote_id == remote_id &&
		    id->remote_ca_guid == guid)
			return id;
	}
	return NULL;
}

/* The id of a connection to QPN @p qpn on CA @p guid, other than @p self. */
static struct droce_cm_id *
find_by_remote_qpn(struct droce_cm *cm, uint32_t qpn, uint64_t guid,
		   const struct droce_cm_id *self)
{
	uint32_t i;

	for (i = 0; i < cm->n_ids; i++) {
		struct droce_cm_id *id = &cm->ids[i];

		if (id != self && knows_peer(id->state) && id->conn.remote_qpn != 0 &&
		    id->conn.remote_qpn == qpn && id->remote_ca_guid == guid)
			return id;
	}
	return NULL;
}

/* ---- the QP ---- */

static int
qp_step(struct droce_cm_id *id, enum droce_cm_qp_step step)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_qp_attr a;
	int ret;

	if (cm->ops->qp_modify == NULL)
		return 0;
	ret = droce_cm_qp_attr(id, step, &a);
	if (ret == 0)
		ret = cm->ops->qp_modify(cm->ops_ctx, id, &a);
	if (ret == 0 && step != DROCE_CM_QP_ERR)
		id->qp_live = true;
	return ret;
}

/* A connection whose QP went to RTR ends: flush it (once). */
static void
qp_err(struct droce_cm_id *id)
{
	if (!id->qp_live)
		return;
	id->qp_live = false;
	(void)qp_step(id, DROCE_CM_QP_ERR);
}

static int
qp_rtr_rts(struct droce_cm_id *id)
{
	int ret = qp_step(id, DROCE_CM_QP_RTR);

	if (ret == 0)
		ret = qp_step(id, DROCE_CM_QP_RTS);
	if (ret != 0)
		qp_err(id);
	return ret;
}

int
droce_cm_qp_attr(const struct droce_cm_id *id, enum droce_cm_qp_step step,
		 struct droce_cm_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->step = step;
	a->qpn = id->conn.local_qpn;
	if (step == DROCE_CM_QP_ERR)
		return 0;
	if (!knows_peer(id->state))
		return -EINVAL;
	a->transport = id->conn.transport;
	a->dest_qpn = id->conn.remote_qpn;
	/* a REQ's or REP's Starting PSN is what its sender receives: the
	 * PSN the other side sends with (Linux: the active side's sq_psn
	 * comes from the REP, the passive side's from the REQ) */
	a->rq_psn = id->conn.local_psn;
	a->sq_psn = id->conn.remote_psn;
	a->path_mtu = id->conn.mtu;
	a->max_dest_rd_atomic = id->conn.responder_resources;
	a->max_rd_atomic = id->conn.initiator_depth;
	a->timeout = id->conn.local_ack_timeout;
	a->retry_cnt = id->conn.retry_count;
	a->rnr_retry = id->conn.rnr_retry_count;
	a->path = id->conn.path;
	return 0;
}

/* ---- leaving a connection ---- */

static void
enter_timewait(struct droce_cm_id *id, uint64_t now)
{
	qp_err(id);
	cm_set_state(id, DROCE_CM_TIMEWAIT);
	id->rt.retries_left = 0;
	id->rt.deadline = now + timewait_ns(id);
}

/* The 8-byte ARI of a REJ Timeout: our CA GUID, as Linux sends it. */
static void
rej_timeout_ari(const struct droce_cm *cm, struct droce_cm_rej_info *rej)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		rej->ari[i] = (uint8_t)(cm->cfg.ca_guid >> (56 - 8 * i));
	rej->ari_len = 8;
}

static void
send_rej(struct droce_cm_id *id, uint8_t msg_rejected, uint16_t reason, const void *ari,
	 uint8_t ari_len, const void *pdata, uint8_t pdata_len)
{
	struct droce_cm_msg m;

	cm_msg_init(&m, DROCE_CM_MSG_REJ, id->rt.tid);
	m.rej.local_comm_id = id->local_id;
	m.rej.remote_comm_id = id->remote_id;
	m.rej.msg_rejected = msg_rejected;
	m.rej.reason = reason;
	if (reason == DROCE_CM_REJ_TIMEOUT && ari == NULL) {
		rej_timeout_ari(id->cm, &m.rej);
	} else {
		(void)cm_copy_pdata(m.rej.ari, DROCE_CM_ARI_BYTES, ari, ari_len);
		m.rej.ari_len = ari_len;
	}
	(void)cm_copy_pdata(m.rej.private_data, DROCE_CM_REJ_PDATA_BYTES, pdata, pdata_len);
	/* kept: a duplicate REP in TIMEWAIT is answered with it again */
	cm_send(id, &m, true);
}

static void
send_dreq(struct droce_cm_id *id, const void *pdata, uint8_t pdata_len, uint64_t now)
{
	struct droce_cm_msg m;

	qp_err(id);
	id->rt.tid = cm_new_tid(id->cm);
	cm_msg_init(&m, DROCE_CM_MSG_DREQ, id->rt.tid);
	m.dreq.local_comm_id = id->local_id;
	m.dreq.remote_comm_id = id->remote_id;
	m.dreq.remote_qpn = id->conn.remote_qpn;
	(void)cm_copy_pdata(m.dreq.private_data, DROCE_CM_DREQ_PDATA_BYTES, pdata, pdata_len);
	cm_send(id, &m, true);
	cm_timer_start(id, wait_ns(id), id->rt.max_cm_retries, now);
	cm_set_state(id, DROCE_CM_DREQ_SENT);
}

static void
send_drep(struct droce_cm_id *id, const void *pdata, uint8_t pdata_len, uint64_t now)
{
	struct droce_cm_msg m;

	qp_err(id);
	cm_msg_init(&m, DROCE_CM_MSG_DREP, id->rt.tid);
	m.drep.local_comm_id = id->local_id;
	m.drep.remote_comm_id = id->remote_id;
	(void)cm_copy_pdata(m.drep.private_data, DROCE_CM_DREP_PDATA_BYTES, pdata, pdata_len);
	cm_send(id, &m, true);	/* kept: duplicate DREQs in TIMEWAIT get it again */
	enter_timewait(id, now);
}

static void
send_mra(struct droce_cm_id *id, uint8_t msg_mraed, uint8_t service_timeout, const void *pdata,
	 uint8_t pdata_len)
{
	struct droce_cm_msg m;

	cm_msg_init(&m, DROCE_CM_MSG_MRA, id->rt.tid);
	m.mra.local_comm_id = id->local_id;
	m.mra.remote_comm_id = id->remote_id;
	m.mra.msg_mraed = msg_mraed;
	m.mra.service_timeout = service_timeout;
	(void)cm_copy_pdata(m.mra.private_data, DROCE_CM_MRA_PDATA_BYTES, pdata, pdata_len);
	cm_send(id, &m, true);	/* kept: answers duplicates of the message it MRAs */
}

static bool
tx_is(const struct droce_cm_id *id, enum droce_cm_msg_type type)
{
	return id->rt.tx_valid &&
	       droce_cm_mad_hdr_attr_id((const struct droce_cm_mad_hdr *)id->rt.tx) ==
	       droce_cm_msg_desc[type].attr_id;
}

/* ---- active side ---- */

int
droce_cm_connect(struct droce_cm_id *id, const struct droce_cm_req_param *p, uint64_t now)
{
	const struct droce_cm_path *path = &p->path;
	struct droce_cm_msg m;
	struct droce_cm_req_info *r = &m.req;

	if (id->state != DROCE_CM_IDLE || id->orphan)
		return -EINVAL;
	if ((p->transport != DROCE_CM_TRANSPORT_RC && p->transport != DROCE_CM_TRANSPORT_UC) ||
	    path->mtu < IBV_MTU_MIN || path->mtu > IBV_MTU_MAX ||
	    p->pdata_len > DROCE_CM_REQ_PDATA_BYTES || (p->pdata_len && p->pdata == NULL))
		return -EINVAL;

	id->service_id = p->service_id;
	memset(&id->addr, 0, sizeof(id->addr));
	memcpy(id->addr.local_gid, path->sgid, DROCE_CM_GID_BYTES);
	memcpy(id->addr.remote_gid, path->dgid, DROCE_CM_GID_BYTES);
	id->addr.remote_qpn = 1;
	id->addr.pkey = path->pkey;
	id->addr.tclass = path->tclass;
	id->addr.hop_limit = path->hop_limit;
	id->addr.flow_label = path->flow_label;
	id->remote_id = 0;
	id->remote_ca_guid = 0;

	memset(&id->conn, 0, sizeof(id->conn));
	id->conn.transport = p->transport;
	id->conn.local_qpn = p->qpn & 0xffffff;
	id->conn.local_psn = p->starting_psn & 0xffffff;
	id->conn.mtu = path->mtu;
	id->conn.responder_resources = p->responder_resources;
	id->conn.initiator_depth = p->initiator_depth;
	id->conn.retry_count = p->retry_count & 7;
	id->conn.local_ack_timeout = path->local_ack_timeout & TIME_MAX;
	id->conn.srq = p->srq;
	id->conn.path = *path;
	id->conn.local_ece = p->ece;

	id->rt.peer_response_timeout = p->remote_cm_response_timeout & TIME_MAX;
	id->rt.packet_life_time = path->packet_life_time & TIME_MAX;
	id->rt.max_cm_retries = p->max_cm_retries & 0xf;
	id->rt.tid = cm_new_tid(id->cm);

	cm_msg_init(&m, DROCE_CM_MSG_REQ, id->rt.tid);
	r->local_comm_id = id->local_id;
	r->service_id = p->service_id;
	r->local_ca_guid = id->cm->cfg.ca_guid;
	r->local_qpn = id->conn.local_qpn;
	r->responder_resources = p->responder_resources;
	r->initiator_depth = p->initiator_depth;
	r->remote_cm_response_timeout = id->rt.peer_response_timeout;
	r->transport_type = p->transport;
	r->flow_control = p->flow_control;
	r->starting_psn = id->conn.local_psn;
	r->local_cm_response_timeout = p->local_cm_response_timeout & TIME_MAX;
	r->retry_count = id->conn.retry_count;
	r->pkey = path->pkey;
	r->path_mtu = path->mtu;
	r->rnr_retry_count = p->rnr_retry_count & 7;
	r->max_cm_retries = id->rt.max_cm_retries;
	r->srq = p->srq;
	r->primary_local_lid = PERMISSIVE_LID;
	r->primary_remote_lid = PERMISSIVE_LID;
	memcpy(r->primary_local_gid, path->sgid, DROCE_CM_GID_BYTES);
	memcpy(r->primary_remote_gid, path->dgid, DROCE_CM_GID_BYTES);
	r->primary_flow_label = path->flow_label;
	r->primary_traffic_class = path->tclass;
	r->primary_hop_limit = path->hop_limit;
	r->primary_local_ack_timeout = id->conn.local_ack_timeout;
	(void)cm_copy_pdata(r->private_data, DROCE_CM_REQ_PDATA_BYTES, p->pdata, p->pdata_len);
	droce_cm_msg_set_ece(&m, &p->ece);

	cm_send(id, &m, true);
	cm_timer_start(id, wait_ns(id), id->rt.max_cm_retries, now);
	cm_set_state(id, DROCE_CM_REQ_SENT);
	return 0;
}

static void
rep_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg)
{
	const struct droce_cm_rep_info *r = &msg->rep;
	struct droce_cm_id *id = cm_find_local(cm, r->remote_comm_id, from);

	if (id == NULL) {
		/* Linux does the same: the peer learns we forgot the REQ */
		cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
		cm_issue_rej(cm, from, msg->hdr.tid, 0, r->local_comm_id, DROCE_CM_REF_REP,
			     DROCE_CM_REJ_INVALID_COMM_ID);
		return;
	}
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		break;
	case DROCE_CM_ESTABLISHED:
	case DROCE_CM_MRA_REP_SENT:
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_TIMEWAIT:
		if (r->local_comm_id != id->remote_id) {
			cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
			return;
		}
		/* the RTU, MRA or REJ we answered with was lost: send it again */
		cm->cnt[DROCE_CM_CNT_DUP_REP]++;
		if ((id->state == DROCE_CM_ESTABLISHED && tx_is(id, DROCE_CM_MSG_RTU)) ||
		    id->state == DROCE_CM_MRA_REP_SENT ||
		    (id->state == DROCE_CM_TIMEWAIT && tx_is(id, DROCE_CM_MSG_REJ)))
			cm_resend(id);
		return;
	default:
		cm->cnt[DROCE_CM_CNT_DROP_STATE]++;
		return;
	}

	/* a REP for a connection we already have is stale (Linux: cm_rep_handler) */
	if (find_by_remote_id(cm, r->local_comm_id, r->local_ca_guid) != NULL ||
	    find_by_remote_qpn(cm, r->local_qpn, r->local_ca_guid, id) != NULL) {
		cm->cnt[DROCE_CM_CNT_STALE]++;
		cm_issue_rej(cm, from, msg->hdr.tid, id->local_id, r->local_comm_id,
			     DROCE_CM_REF_REP, DROCE_CM_REJ_STALE_CONN);
		return;
	}
	id->remote_id = r->local_comm_id;
	id->remote_ca_guid = r->local_ca_guid;
	id->conn.remote_qpn = r->local_qpn;
	id->conn.remote_psn = r->starting_psn;
	droce_cm_msg_ece(msg, &id->conn.remote_ece);
	/* the passive side sized these from ours: its answer is our QP's */
	id->conn.initiator_depth = r->responder_resources;
	id->conn.responder_resources = r->initiator_depth;
	id->conn.rnr_retry_count = r->rnr_retry_count;
	cm_timer_stop(id);
	cm_set_state(id, DROCE_CM_REP_RCVD);
	cm_emit(id, DROCE_CM_EV_REP_RECEIVED, NULL, msg, from);
}

int
droce_cm_send_rtu(struct droce_cm_id *id, const void *pdata, uint8_t pdata_len, uint64_t now)
{
	struct droce_cm_msg m;
	int ret;

	(void)now;
	if (id->state != DROCE_CM_REP_RCVD && id->state != DROCE_CM_MRA_REP_SENT)
		return -EINVAL;
	if (pdata_len > DROCE_CM_RTU_PDATA_BYTES || (pdata_len && pdata == NULL))
		return -EINVAL;
	ret = qp_rtr_rts(id);
	if (ret != 0)
		return ret;
	cm_msg_init(&m, DROCE_CM_MSG_RTU, id->rt.tid);
	m.rtu.local_comm_id = id->local_id;
	m.rtu.remote_comm_id = id->remote_id;
	(void)cm_copy_pdata(m.rtu.private_data, DROCE_CM_RTU_PDATA_BYTES, pdata, pdata_len);
	cm_send(id, &m, true);	/* kept: a duplicate REP gets it again */
	cm_timer_stop(id);
	cm_set_state(id, DROCE_CM_ESTABLISHED);
	return 0;
}

/* ---- passive side ---- */

/* A REQ we already have an id for (Linux: cm_dup_req_handler). */
static void
dup_req(struct droce_cm_id *id, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
	uint64_t now)
{
	struct droce_cm *cm = id->cm;

	cm->cnt[DROCE_CM_CNT_DUP_REQ]++;
	switch (id->state) {
	case DROCE_CM_REQ_RCVD:
		/* the owner is still deciding: ask the peer to wait */
		send_mra(id, DROCE_CM_REF_REQ, cm->cfg.mra_service_timeout, NULL, 0);
		cm_set_state(id, DROCE_CM_MRA_REQ_SENT);
		break;
	case DROCE_CM_MRA_REQ_SENT:
		cm_resend(id);	/* the MRA was lost */
		break;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		/* the REP was lost: this resend stands for the next retransmission */
		cm_resend(id);
		if (id->state == DROCE_CM_REP_SENT && id->rt.deadline != 0)
			id->rt.deadline = now + id->rt.timeout_ns;
		break;
	case DROCE_CM_TIMEWAIT:
		/* the connection is gone; the peer must not think it is coming up */
		cm->cnt[DROCE_CM_CNT_STALE]++;
		cm_issue_rej(cm, from, msg->hdr.tid, id->local_id, msg->req.local_comm_id,
			     DROCE_CM_REF_REQ, DROCE_CM_REJ_STALE_CONN);
		break;
	default:
		break;	/* established or closing: an old copy */
	}
}

/* What a REQ tells the passive side. */
static void
req_take(struct droce_cm_id *id, const struct droce_cm_addr *from, const struct droce_cm_msg *msg)
{
	const struct droce_cm_req_info *r = &msg->req;
	struct droce_cm_path *path = &id->conn.path;

	id->remote_id = r->local_comm_id;
	id->remote_ca_guid = r->local_ca_guid;
	id->service_id = r->service_id;
	id->addr = *from;

	memset(&id->conn, 0, sizeof(id->conn));
	id->conn.transport = (uint8_t)r->transport_type;
	id->conn.remote_qpn = r->local_qpn;
	id->conn.remote_psn = r->starting_psn;
	id->conn.mtu = r->path_mtu;
	droce_cm_msg_ece(msg, &id->conn.remote_ece);
	/* the REQ says how the active side wants our QP to retry */
	id->conn.retry_count = (uint8_t)r->retry_count;
	id->conn.rnr_retry_count = r->rnr_retry_count;
	id->conn.local_ack_timeout = r->primary_local_ack_timeout;
	memcpy(path->sgid, r->primary_remote_gid, DROCE_CM_GID_BYTES);
	memcpy(path->dgid, r->primary_local_gid, DROCE_CM_GID_BYTES);
	path->flow_label = r->primary_flow_label;
	path->tclass = r->primary_traffic_class;
	path->hop_limit = r->primary_hop_limit;
	path->pkey = r->pkey;
	path->mtu = r->path_mtu;
	/* the ACK timeout covers a round trip: Linux takes one less as the lifetime */
	path->packet_life_time = r->primary_local_ack_timeout ? r->primary_local_ack_timeout - 1 : 0;
	path->local_ack_timeout = r->primary_local_ack_timeout;

	id->rt.tid = msg->hdr.tid;
	id->rt.peer_response_timeout = (uint8_t)r->local_cm_response_timeout;
	id->rt.packet_life_time = path->packet_life_time;
	id->rt.max_cm_retries = r->max_cm_retries;
}

static void
req_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
       uint64_t now)
{
	const struct droce_cm_req_info *r = &msg->req;
	struct droce_cm_id *id, *listen;
	uint16_t reason;

	id = find_by_remote_id(cm, r->local_comm_id, r->local_ca_guid);
	if (id != NULL) {
		dup_req(id, from, msg, now);
		return;
	}
	/* a new REQ from a QP we are connected to is stale (Linux: cm_match_req) */
	id = find_by_remote_qpn(cm, r->local_qpn, r->local_ca_guid, NULL);
	if (id != NULL) {
		cm->cnt[DROCE_CM_CNT_STALE]++;
		cm_issue_rej(cm, from, msg->hdr.tid, 0, r->local_comm_id, DROCE_CM_REF_REQ,
			     DROCE_CM_REJ_STALE_CONN);
		/* and the old connection cannot be trusted either (Linux does the same) */
		if (id->state == DROCE_CM_ESTABLISHED)
			send_dreq(id, NULL, 0, now);
		return;
	}
	listen = cm_find_listener(cm, r->service_id);
	if (listen == NULL) {
		cm->cnt[DROCE_CM_CNT_NO_LISTENER]++;
		reason = DROCE_CM_REJ_INVALID_SERVICE_ID;
		goto reject;
	}
	if (r->transport_type != DROCE_CM_TRANSPORT_RC &&
	    r->transport_type != DROCE_CM_TRANSPORT_UC) {
		cm->cnt[DROCE_CM_CNT_BAD_REQ]++;
		reason = DROCE_CM_REJ_INVALID_TRANSPORT_TYPE;	/* RD, XRC */
		goto reject;
	}
	if (r->path_mtu < IBV_MTU_MIN || r->path_mtu > IBV_MTU_MAX) {
		cm->cnt[DROCE_CM_CNT_BAD_REQ]++;
		reason = DROCE_CM_REJ_INVALID_MTU;
		goto reject;
	}
	if (listen->pending >= listen->backlog) {
		cm->cnt[DROCE_CM_CNT_BACKLOG_FULL]++;
		reason = DROCE_CM_REJ_NO_RESOURCES;
		goto reject;
	}
	id = cm_id_alloc(cm);
	if (id == NULL) {
		cm->cnt[DROCE_CM_CNT_NO_IDS]++;
		reason = DROCE_CM_REJ_NO_RESOURCES;
		goto reject;
	}
	(void)cm_backlog_take(listen, id);
	req_take(id, from, msg);
	cm_set_state(id, DROCE_CM_REQ_RCVD);
	cm_emit(id, DROCE_CM_EV_REQ_RECEIVED, listen, msg, from);
	return;

reject:
	cm_issue_rej(cm, from, msg->hdr.tid, 0, r->local_comm_id, DROCE_CM_REF_REQ, reason);
}

int
droce_cm_accept(struct droce_cm_id *id, const struct droce_cm_rep_param *p, uint64_t now)
{
	struct droce_cm_msg m;
	struct droce_cm_rep_info *r = &m.rep;
	int ret;

	if (id->state != DROCE_CM_REQ_RCVD && id->state != DROCE_CM_MRA_REQ_SENT)
		return -EINVAL;
	if (p->pdata_len > DROCE_CM_REP_PDATA_BYTES || (p->pdata_len && p->pdata == NULL))
		return -EINVAL;
	id->conn.local_qpn = p->qpn & 0xffffff;
	id->conn.local_psn = p->starting_psn & 0xffffff;
	/*
	 * As given, into the QP and the REP, as Linux's ib_cm: the consumer
	 * chose them from the REQ's (librdmacm lowers only "the most")
	 */
	id->conn.responder_resources = p->responder_resources;
	id->conn.initiator_depth = p->initiator_depth;
	id->conn.srq = p->srq;
	ret = qp_rtr_rts(id);
	if (ret != 0)
		return ret;

	cm_msg_init(&m, DROCE_CM_MSG_REP, id->rt.tid);
	r->local_comm_id = id->local_id;
	r->remote_comm_id = id->remote_id;
	r->local_qpn = id->conn.local_qpn;
	r->starting_psn = id->conn.local_psn;
	r->responder_resources = id->conn.responder_resources;
	r->initiator_depth = id->conn.initiator_depth;
	r->target_ack_delay = p->target_ack_delay & TIME_MAX;
	r->flow_control = p->flow_control;
	r->rnr_retry_count = p->rnr_retry_count & 7;
	r->srq = p->srq;
	r->local_ca_guid = id->cm->cfg.ca_guid;
	(void)cm_copy_pdata(r->private_data, DROCE_CM_REP_PDATA_BYTES, p->pdata, p->pdata_len);
	id->conn.local_ece = p->ece;
	droce_cm_msg_set_ece(&m, &p->ece);
	cm_send(id, &m, true);
	cm_timer_start(id, wait_ns(id), id->rt.max_cm_retries, now);
	cm_set_state(id, DROCE_CM_REP_SENT);
	return 0;
}

static void
rtu_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg)
{
	struct droce_cm_id *id = cm_find_local(cm, msg->rtu.remote_comm_id, from);

	if (id == NULL || msg->rtu.local_comm_id != id->remote_id) {
		cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
		return;
	}
	if (id->state != DROCE_CM_REP_SENT && id->state != DROCE_CM_MRA_REP_RCVD) {
		cm->cnt[DROCE_CM_CNT_DROP_STATE]++;	/* a duplicate, or after COMM_EST */
		return;
	}
	cm_timer_stop(id);
	cm_set_state(id, DROCE_CM_ESTABLISHED);
	cm_emit(id, DROCE_CM_EV_RTU_RECEIVED, NULL, msg, from);
}

int
droce_cm_establish(struct droce_cm_id *id, uint64_t now)
{
	(void)now;
	if (id->state != DROCE_CM_REP_SENT && id->state != DROCE_CM_MRA_REP_RCVD)
		return -EINVAL;
	cm_timer_stop(id);
	cm_set_state(id, DROCE_CM_ESTABLISHED);
	return 0;
}

/* ---- either side ---- */

int
droce_cm_send_mra(struct droce_cm_id *id, uint8_t service_timeout, const void *pdata,
		  uint8_t pdata_len, uint64_t now)
{
	(void)now;
	if (pdata_len > DROCE_CM_MRA_PDATA_BYTES || (pdata_len && pdata == NULL))
		return -EINVAL;
	switch (id->state) {
	case DROCE_CM_REQ_RCVD:
		send_mra(id, DROCE_CM_REF_REQ, service_timeout & TIME_MAX, pdata, pdata_len);
		cm_set_state(id, DROCE_CM_MRA_REQ_SENT);
		return 0;
	case DROCE_CM_REP_RCVD:
		send_mra(id, DROCE_CM_REF_REP, service_timeout & TIME_MAX, pdata, pdata_len);
		cm_set_state(id, DROCE_CM_MRA_REP_SENT);
		return 0;
	default:
		return -EINVAL;
	}
}

static void
mra_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
       uint64_t now)
{
	const struct droce_cm_mra_info *r = &msg->mra;
	struct droce_cm_id *id = cm_find_local(cm, r->remote_comm_id, from);
	enum droce_cm_state next;

	if (id == NULL || (id->remote_id != 0 && r->local_comm_id != id->remote_id)) {
		cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
		return;
	}
	if (r->msg_mraed == DROCE_CM_REF_REQ &&
	    (id->state == DROCE_CM_REQ_SENT || id->state == DROCE_CM_MRA_REQ_RCVD))
		next = DROCE_CM_MRA_REQ_RCVD;
	else if (r->msg_mraed == DROCE_CM_REF_REP &&
		 (id->state == DROCE_CM_REP_SENT || id->state == DROCE_CM_MRA_REP_RCVD))
		next = DROCE_CM_MRA_REP_RCVD;
	else {
		cm->cnt[DROCE_CM_CNT_DROP_STATE]++;	/* LAP was never sent: MRA of it is bogus */
		return;
	}
	/* wait the service timeout plus a round trip before sending again */
	id->rt.deadline = now + droce_cm_time_ns((uint8_t)r->service_timeout) +
			  2 * droce_cm_time_ns(id->rt.packet_life_time);
	cm_set_state(id, next);
	cm_emit(id, DROCE_CM_EV_MRA_RECEIVED, NULL, msg, from);
}

int
droce_cm_reject(struct droce_cm_id *id, uint16_t reason, const void *ari, uint8_t ari_len,
		const void *pdata, uint8_t pdata_len, uint64_t now)
{
	if (ari_len > DROCE_CM_ARI_BYTES || (ari_len && ari == NULL) ||
	    pdata_len > DROCE_CM_REJ_PDATA_BYTES || (pdata_len && pdata == NULL))
		return -EINVAL;
	switch (id->state) {
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
		send_rej(id, DROCE_CM_REF_REQ, reason, ari, ari_len, pdata, pdata_len);
		cm_go_idle(id);
		return 0;
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
		send_rej(id, DROCE_CM_REF_REP, reason, ari, ari_len, pdata, pdata_len);
		enter_timewait(id, now);
		return 0;
	default:
		return -EINVAL;
	}
}

/* The id a REJ is about. */
static struct droce_cm_id *
rej_find(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_rej_info *r)
{
	struct droce_cm_id *id;
	uint64_t guid = 0;
	unsigned int i;

	if (r->remote_comm_id != 0) {
		id = cm_find_local(cm, r->remote_comm_id, from);
		if (id != NULL && id->remote_id != 0 && r->local_comm_id != 0 &&
		    r->local_comm_id != id->remote_id)
			return NULL;
		return id;
	}
	/* a REJ Timeout from a peer that never learnt our ID names its own and its GUID */
	if (r->reason != DROCE_CM_REJ_TIMEOUT || r->ari_len < 8)
		return NULL;
	for (i = 0; i < 8; i++)
		guid = (guid << 8) | r->ari[i];
	id = find_by_remote_id(cm, r->local_comm_id, guid);
	if (id != NULL && memcmp(id->addr.remote_gid, from->remote_gid, DROCE_CM_GID_BYTES))
		return NULL;
	return id;
}

static void
rej_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
       uint64_t now)
{
	const struct droce_cm_rej_info *r = &msg->rej;
	struct droce_cm_id *id = rej_find(cm, from, r);

	if (id == NULL) {
		cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
		return;
	}
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		/* a stale REJ means the QPN is still known over there: hold it a while */
		if (r->reason == DROCE_CM_REJ_STALE_CONN)
			enter_timewait(id, now);
		else
			cm_go_idle(id);
		break;
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
		cm_go_idle(id);		/* the active side gave up */
		break;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
	case DROCE_CM_DREQ_SENT:
		enter_timewait(id, now);
		break;
	case DROCE_CM_ESTABLISHED:
		/* our RTUs were lost and the passive side gave up on its REP */
		if (r->msg_rejected != DROCE_CM_REF_REP) {
			cm->cnt[DROCE_CM_CNT_DROP_STATE]++;
			return;
		}
		enter_timewait(id, now);
		break;
	default:
		cm->cnt[DROCE_CM_CNT_DROP_STATE]++;
		return;
	}
	cm_emit(id, DROCE_CM_EV_REJ_RECEIVED, NULL, msg, from);
}

int
droce_cm_disconnect(struct droce_cm_id *id, const void *pdata, uint8_t pdata_len, uint64_t now)
{
	switch (id->state) {
	case DROCE_CM_ESTABLISHED:
		if (pdata_len > DROCE_CM_DREQ_PDATA_BYTES || (pdata_len && pdata == NULL))
			return -EINVAL;
		send_dreq(id, pdata, pdata_len, now);
		return 0;
	case DROCE_CM_DREQ_RCVD:
		if (pdata_len > DROCE_CM_DREP_PDATA_BYTES || (pdata_len && pdata == NULL))
			return -EINVAL;
		send_drep(id, pdata, pdata_len, now);
		return 0;
	default:
		return -EINVAL;
	}
}

static void
dreq_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
	uint64_t now)
{
	const struct droce_cm_dreq_info *r = &msg->dreq;
	struct droce_cm_id *id = cm_find_local(cm, r->remote_comm_id, from);
	struct droce_cm_msg m;

	if (id == NULL || id->state == DROCE_CM_IDLE || r->local_comm_id != id->remote_id) {
		/* nothing (left) to close here: say so, so the peer need not retry (as Linux) */
		cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
		cm_msg_init(&m, DROCE_CM_MSG_DREP, msg->hdr.tid);
		m.drep.local_comm_id = r->remote_comm_id;
		m.drep.remote_comm_id = r->local_comm_id;
		cm_send_to(cm, from, &m);
		return;
	}
	if (r->remote_qpn != id->conn.local_qpn) {
		cm->cnt[DROCE_CM_CNT_DROP_QPN]++;
		return;
	}
	switch (id->state) {
	case DROCE_CM_REP_SENT:		/* our REP arrived, its RTU did not */
	case DROCE_CM_MRA_REP_RCVD:
	case DROCE_CM_ESTABLISHED:
	case DROCE_CM_DREQ_SENT:	/* both sides disconnect at once */
		cm_timer_stop(id);
		id->rt.tid = msg->hdr.tid;
		cm_set_state(id, DROCE_CM_DREQ_RCVD);
		if (id->orphan) {	/* nobody to ask: answer now */
			send_drep(id, NULL, 0, now);
			return;
		}
		cm_emit(id, DROCE_CM_EV_DREQ_RECEIVED, NULL, msg, from);
		return;
	case DROCE_CM_TIMEWAIT:
		/* our DREP was lost */
		cm->cnt[DROCE_CM_CNT_DUP_DREQ]++;
		cm_msg_init(&m, DROCE_CM_MSG_DREP, msg->hdr.tid);
		m.drep.local_comm_id = id->local_id;
		m.drep.remote_comm_id = id->remote_id;
		cm_send(id, &m, false);
		return;
	case DROCE_CM_DREQ_RCVD:
		cm->cnt[DROCE_CM_CNT_DUP_DREQ]++;	/* the owner is answering */
		return;
	default:
		cm->cnt[DROCE_CM_CNT_DROP_STATE]++;
		return;
	}
}

static void
drep_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
	uint64_t now)
{
	struct droce_cm_id *id = cm_find_local(cm, msg->drep.remote_comm_id, from);

	if (id == NULL || msg->drep.local_comm_id != id->remote_id) {
		cm->cnt[DROCE_CM_CNT_DROP_NO_ID]++;
		return;
	}
	if (id->state != DROCE_CM_DREQ_SENT) {
		cm->cnt[DROCE_CM_CNT_DROP_STATE]++;
		return;
	}
	enter_timewait(id, now);
	cm_emit(id, DROCE_CM_EV_DREP_RECEIVED, NULL, msg, from);
}

void
cm_conn_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const struct droce_cm_msg *msg,
	   uint64_t now)
{
	switch (msg->type) {
	case DROCE_CM_MSG_REQ:
		req_rx(cm, from, msg, now);
		break;
	case DROCE_CM_MSG_MRA:
		mra_rx(cm, from, msg, now);
		break;
	case DROCE_CM_MSG_REJ:
		rej_rx(cm, from, msg, now);
		break;
	case DROCE_CM_MSG_REP:
		rep_rx(cm, from, msg);
		break;
	case DROCE_CM_MSG_RTU:
		rtu_rx(cm, from, msg);
		break;
	case DROCE_CM_MSG_DREQ:
		dreq_rx(cm, from, msg, now);
		break;
	case DROCE_CM_MSG_DREP:
		drep_rx(cm, from, msg, now);
		break;
	default:
		break;
	}
}

void
cm_conn_timeout(struct droce_cm_id *id, uint64_t now)
{
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		/* tell the passive side to drop its half */
		send_rej(id, DROCE_CM_REF_REQ, DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0);
		cm_go_idle(id);
		cm_emit(id, DROCE_CM_EV_REQ_ERROR, NULL, NULL, NULL);
		break;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		send_rej(id, DROCE_CM_REF_REP, DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0);
		enter_timewait(id, now);
		cm_emit(id, DROCE_CM_EV_REP_ERROR, NULL, NULL, NULL);
		break;
	case DROCE_CM_DREQ_SENT:
		enter_timewait(id, now);
		cm_emit(id, DROCE_CM_EV_DREQ_ERROR, NULL, NULL, NULL);
		break;
	default:
		break;
	}
}

void
cm_conn_destroy(struct droce_cm_id *id, uint64_t now)
{
	qp_err(id);	/* now, while the owner's QP still exists */
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		send_rej(id, DROCE_CM_REF_REQ, DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0);
		cm_id_free(id);
		break;
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
		send_rej(id, DROCE_CM_REF_REQ, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		cm_id_free(id);
		break;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
	case DROCE_CM_REP_RCVD:
	case DROCE_CM_MRA_REP_SENT:
		send_rej(id, DROCE_CM_REF_REP, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		enter_timewait(id, now);
		break;
	case DROCE_CM_ESTABLISHED:
		send_dreq(id, NULL, 0, now);	/* retransmitted; then TIMEWAIT; then freed */
		break;
	case DROCE_CM_DREQ_RCVD:
		send_drep(id, NULL, 0, now);
		break;
	case DROCE_CM_DREQ_SENT:
	case DROCE_CM_TIMEWAIT:
		break;		/* finishes alone and is freed when TIMEWAIT ends */
	default:
		cm_id_free(id);
		break;
	}
}
