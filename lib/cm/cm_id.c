/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The CM's ids and plumbing (droce_cm.h): the id table and comm IDs, MAD
 * dispatch, sending and retransmission, timers, events, listeners and
 * their backlogs, destroy. The protocol steps are in cm_conn.c and
 * cm_sidr.c.
 *
 * Ids live in a table the owner gives droce_cm_init(). A comm ID is
 * ((generation << id_bits) | slot) ^ seed: the slot is found from the ID
 * in O(1), a reused slot gets a new ID, and a restarted engine (new seed)
 * does not hand out the IDs of its previous life, which a peer would take
 * for a stale connection. Searches by the peer's IDs or QPN are linear
 * scans: the table is small and this is the slow path. Single-threaded:
 * the CM's owner calls everything.
 */

#include <errno.h>
#include <string.h>

#include "cm_priv.h"

const char *const droce_cm_counter_name[DROCE_CM_CNT_COUNT] = {
#define C(sym, desc) [DROCE_CM_CNT_##sym] = #sym,
	DROCE_CM_COUNTERS(C)
#undef C
};

static const char *const state_name[DROCE_CM_NSTATES] = {
#define S(st) [DROCE_CM_##st] = #st,
	DROCE_CM_STATES(S)
#undef S
};

static const char *const event_name[DROCE_CM_EV_COUNT] = {
#define E(sym, desc) [DROCE_CM_EV_##sym] = #sym,
	DROCE_CM_EVENTS(E)
#undef E
};

const char *
droce_cm_state_name(enum droce_cm_state s)
{
	return (unsigned int)s < DROCE_CM_NSTATES ? state_name[s] : "?";
}

const char *
droce_cm_event_name(enum droce_cm_event_type t)
{
	return (unsigned int)t < DROCE_CM_EV_COUNT ? event_name[t] : "?";
}

int
droce_cm_init(struct droce_cm *cm, const struct droce_cm_config *cfg, struct droce_cm_id *ids,
	      uint32_t n_ids, const struct droce_cm_ops *ops, void *ops_ctx)
{
	uint32_t i;

	if (n_ids == 0 || n_ids > 65536 || (n_ids & (n_ids - 1)) || ops == NULL ||
	    ops->send == NULL || ops->event == NULL)
		return -EINVAL;
	memset(cm, 0, sizeof(*cm));
	cm->cfg = *cfg;
	cm->ops = ops;
	cm->ops_ctx = ops_ctx;
	cm->ids = ids;
	cm->n_ids = n_ids;
	cm->id_bits = (uint32_t)__builtin_ctz(n_ids);
	cm->tid_seq = cfg->comm_id_seed;
	memset(ids, 0, n_ids * sizeof(*ids));
	for (i = 0; i < n_ids; i++) {
		ids[i].cm = cm;
		ids[i].state = DROCE_CM_FREE;
	}
	return 0;
}

static bool
state_in_backlog(enum droce_cm_state s)
{
	return s == DROCE_CM_REQ_RCVD || s == DROCE_CM_MRA_REQ_SENT || s == DROCE_CM_SIDR_REQ_RCVD;
}

void
cm_set_state(struct droce_cm_id *id, enum droce_cm_state s)
{
	/* an answered REQ frees its place in the listener's backlog */
	if (id->in_backlog && !state_in_backlog(s)) {
		if (id->listen != NULL)
			id->listen->pending--;
		id->in_backlog = false;
	}
	id->state = (uint8_t)s;
}

static uint32_t
comm_id_of(const struct droce_cm *cm, uint32_t slot, uint32_t gen)
{
	return ((gen << cm->id_bits) | slot) ^ cm->cfg.comm_id_seed;
}

struct droce_cm_id *
cm_id_alloc(struct droce_cm *cm)
{
	uint32_t n, slot;

	for (n = 0; n < cm->n_ids; n++) {
		struct droce_cm_id *id;
		uint32_t gen;

		slot = (cm->cursor + n) & (cm->n_ids - 1);
		id = &cm->ids[slot];
		if (id->state != DROCE_CM_FREE)
			continue;
		cm->cursor = slot + 1;	/* spread reuse over the table */
		gen = id->gen + 1;
		if (comm_id_of(cm, slot, gen) == 0)	/* 0 means "unknown" on the wire */
			gen++;
		memset(id, 0, sizeof(*id));
		id->cm = cm;
		id->gen = gen;
		id->local_id = comm_id_of(cm, slot, gen);
		id->state = DROCE_CM_IDLE;
		return id;
	}
	return NULL;
}

void
cm_id_free(struct droce_cm_id *id)
{
	cm_set_state(id, DROCE_CM_FREE);
	id->rt.deadline = 0;
	id->context = NULL;
}

void
cm_go_idle(struct droce_cm_id *id)
{
	id->rt.deadline = 0;
	if (id->orphan)
		cm_id_free(id);
	else
		cm_set_state(id, DROCE_CM_IDLE);
}

void
cm_msg_init(struct droce_cm_msg *m, enum droce_cm_msg_type type, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	droce_cm_mad_hdr_init(&m->hdr, type, tid);
}

struct droce_cm_id *
cm_find_local(struct droce_cm *cm, uint32_t local_id, const struct droce_cm_addr *from)
{
	struct droce_cm_id *id;

	id = &cm->ids[(local_id ^ cm->cfg.comm_id_seed) & (cm->n_ids - 1)];
	if (id->state == DROCE_CM_FREE || id->local_id != local_id)
		return NULL;
	/* a message about our id from another host is not for it */
	if (from != NULL && memcmp(id->addr.remote_gid, from->remote_gid, DROCE_CM_GID_BYTES))
		return NULL;
	return id;
}

uint64_t
cm_new_tid(struct droce_cm *cm)
{
	/* the high half tells our transactions from those of a previous life */
	return ((uint64_t)cm->cfg.comm_id_seed << 32) | ++cm->tid_seq;
}

void
cm_send_to(struct droce_cm *cm, const struct droce_cm_addr *to, const struct droce_cm_msg *msg)
{
	uint8_t mad[DROCE_MAD_BYTES];

	if (droce_cm_mad_build(msg, mad, sizeof(mad)) < 0)
		return;
	cm->cnt[DROCE_CM_CNT_TX_MADS]++;
	cm->ops->send(cm->ops_ctx, to, mad);
}

void
cm_send(struct droce_cm_id *id, const struct droce_cm_msg *msg, bool keep)
{
	struct droce_cm *cm = id->cm;

	if (!keep) {
		cm_send_to(cm, &id->addr, msg);
		return;
	}
	if (droce_cm_mad_build(msg, id->rt.tx, sizeof(id->rt.tx)) < 0)
		return;
	id->rt.tx_valid = true;
	cm_resend(id);
}

void
cm_resend(struct droce_cm_id *id)
{
	struct droce_cm *cm = id->cm;

	if (!id->rt.tx_valid)
		return;
	cm->cnt[DROCE_CM_CNT_TX_MADS]++;
	cm->ops->send(cm->ops_ctx, &id->addr, id->rt.tx);
}

void
cm_timer_start(struct droce_cm_id *id, uint64_t timeout_ns, uint8_t retries, uint64_t now)
{
	id->rt.timeout_ns = timeout_ns;
	id->rt.retries_left = retries;
	id->rt.deadline = now + timeout_ns;
}

void
cm_timer_stop(struct droce_cm_id *id)
{
	id->rt.deadline = 0;
}

static const uint8_t *
msg_pdata(const struct droce_cm_msg *msg, uint16_t *len)
{
	switch (msg->type) {
#define A(SYM, sym, attr, pdata) \
	case DROCE_CM_MSG_##SYM: \
		*len = pdata; \
		return msg->sym.private_data;
	DROCE_CM_MSGS(A)
#undef A
	default:
		*len = 0;
		return NULL;
	}
}

void
cm_emit(struct droce_cm_id *id, enum droce_cm_event_type type, struct droce_cm_id *listen,
	const struct droce_cm_msg *msg, const struct droce_cm_addr *from)
{
	struct droce_cm_event ev = {
		.type = type,
		.listen = listen,
		.msg = msg,
		.from = from,
	};

	if (id->orphan)
		return;
	if (msg != NULL)
		ev.pdata = msg_pdata(msg, &ev.pdata_len);
	id->cm->ops->event(id->cm->ops_ctx, id, &ev);
}

void
cm_issue_rej(struct droce_cm *cm, const struct droce_cm_addr *to, uint64_t tid, uint32_t local_id,
	     uint32_t remote_id, uint8_t msg_rejected, uint16_t reason)
{
	struct droce_cm_msg m;

	cm_msg_init(&m, DROCE_CM_MSG_REJ, tid);
	m.rej.local_comm_id = local_id;
	m.rej.remote_comm_id = remote_id;
	m.rej.msg_rejected = msg_rejected;
	m.rej.reason = reason;
	cm_send_to(cm, to, &m);
}

struct droce_cm_id *
cm_find_listener(struct droce_cm *cm, uint64_t service_id)
{
	uint32_t i;

	for (i = 0; i < cm->n_ids; i++) {
		struct droce_cm_id *l = &cm->ids[i];

		if (l->state == DROCE_CM_LISTEN && !l->orphan &&
		    ((service_id ^ l->service_id) & l->service_mask) == 0)
			return l;
	}
	return NULL;
}

bool
cm_backlog_take(struct droce_cm_id *listen, struct droce_cm_id *id)
{
	if (listen->pending >= listen->backlog)
		return false;
	listen->pending++;
	id->listen = listen;
	id->in_backlog = true;
	return true;
}

int
cm_copy_pdata(uint8_t *dst, unsigned int max, const void *src, unsigned int len)
{
	if (len > max || (len > 0 && src == NULL))
		return -EINVAL;
	if (len > 0)
		memcpy(dst, src, len);
	return 0;
}

int
droce_cm_id_create(struct droce_cm *cm, void *context, struct droce_cm_id **out)
{
	struct droce_cm_id *id = cm_id_alloc(cm);

	if (id == NULL)
		return -ENOMEM;
	id->context = context;
	*out = id;
	return 0;
}

int
droce_cm_listen(struct droce_cm_id *id, uint64_t service_id, uint64_t mask, uint32_t backlog)
{
	struct droce_cm *cm = id->cm;
	uint32_t i;

	if (id->state != DROCE_CM_IDLE || id->orphan)
		return -EINVAL;
	if (mask == 0)
		mask = UINT64_MAX;
	for (i = 0; i < cm->n_ids; i++) {
		const struct droce_cm_id *l = &cm->ids[i];

		/* some service ID would match both */
		if (l->state == DROCE_CM_LISTEN && !l->orphan &&
		    ((service_id ^ l->service_id) & mask & l->service_mask) == 0)
			return -EADDRINUSE;
	}
	id->service_id = service_id;
	id->service_mask = mask;
	id->backlog = backlog ? backlog : 1;
	id->pending = 0;
	cm_set_state(id, DROCE_CM_LISTEN);
	return 0;
}

static void
listener_destroy(struct droce_cm_id *l)
{
	struct droce_cm *cm = l->cm;
	uint32_t i;

	/* requests already handed to the owner stay its ids; they leave the backlog */
	for (i = 0; i < cm->n_ids; i++) {
		struct droce_cm_id *id = &cm->ids[i];

		if (id->listen == l) {
			id->listen = NULL;
			id->in_backlog = false;
		}
	}
	cm_id_free(l);
}

void
droce_cm_id_destroy(struct droce_cm_id *id, uint64_t now)
{
	if (id->orphan || id->state == DROCE_CM_FREE)
		return;
	id->orphan = true;	/* no events from here on */
	switch (id->state) {
	case DROCE_CM_IDLE:
		cm_id_free(id);
		break;
	case DROCE_CM_LISTEN:
		listener_destroy(id);
		break;
	case DROCE_CM_SIDR_REQ_SENT:
	case DROCE_CM_SIDR_REQ_RCVD:
		cm_sidr_destroy(id, now);
		break;
	default:
		cm_conn_destroy(id, now);
		break;
	}
}

enum droce_cm_drop
droce_cm_rx(struct droce_cm *cm, const struct droce_cm_addr *from, const void *mad, uint32_t len,
	    uint64_t now)
{
	struct droce_cm_msg msg;
	enum droce_cm_drop r;

	r = droce_cm_mad_parse(mad, len, &msg);
	if (r != DROCE_CM_MAD_OK) {
		cm->drops[r]++;
		return r;
	}
	cm->cnt[DROCE_CM_CNT_RX_MADS]++;
	if (msg.type == DROCE_CM_MSG_SIDR_REQ || msg.type == DROCE_CM_MSG_SIDR_REP)
		cm_sidr_rx(cm, from, &msg, now);
	else
		cm_conn_rx(cm, from, &msg, now);
	return DROCE_CM_MAD_OK;
}

static void
timewait_exit(struct droce_cm_id *id)
{
	if (id->orphan) {
		cm_id_free(id);
		return;
	}
	cm_set_state(id, DROCE_CM_IDLE);
	cm_emit(id, DROCE_CM_EV_TIMEWAIT_EXIT, NULL, NULL, NULL);
}

void
droce_cm_timer(struct droce_cm *cm, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < cm->n_ids; i++) {
		struct droce_cm_id *id = &cm->ids[i];

		if (id->state == DROCE_CM_FREE || id->rt.deadline == 0 || id->rt.deadline > now)
			continue;
		id->rt.deadline = 0;
		if (id->state == DROCE_CM_TIMEWAIT) {
			timewait_exit(id);
			continue;
		}
		if (id->rt.retries_left > 0) {
			id->rt.retries_left--;
			cm->cnt[DROCE_CM_CNT_RETRANSMITS]++;
			cm_resend(id);
			id->rt.deadline = now + id->rt.timeout_ns;
			continue;
		}
		cm->cnt[DROCE_CM_CNT_TIMEOUTS]++;
		if (id->state == DROCE_CM_SIDR_REQ_SENT)
			cm_sidr_timeout(id, now);
		else
			cm_conn_timeout(id, now);
	}
}

uint64_t
droce_cm_next_timer(const struct droce_cm *cm)
{
	uint64_t next = 0;
	uint32_t i;

	for (i = 0; i < cm->n_ids; i++) {
		const struct droce_cm_id *id = &cm->ids[i];

		if (id->state != DROCE_CM_FREE && id->rt.deadline != 0 &&
		    (next == 0 || id->rt.deadline < next))
			next = id->rt.deadline;
	}
	return next;
}

bool
droce_cm_qpn_held(const struct droce_cm *cm, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < cm->n_ids; i++) {
		const struct droce_cm_id *id = &cm->ids[i];

		switch (id->state) {
		case DROCE_CM_FREE:
		case DROCE_CM_IDLE:
		case DROCE_CM_LISTEN:
		case DROCE_CM_SIDR_REQ_SENT:
		case DROCE_CM_SIDR_REQ_RCVD:
			continue;
		default:
			if (id->conn.local_qpn == qpn)
				return true;
		}
	}
	return false;
}
