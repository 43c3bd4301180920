/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* The simulated QP1 link and CM nodes of cm_sim.h. Single-threaded. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm_sim.h"
#include "sim_timeq.h"

struct cms_mad {
	struct sim_timeq_item q;	/* first: the queue hands it back */
	int from;
	int to;
	uint8_t mad[DROCE_MAD_BYTES];
};

static struct cms_mad *
queue_pop(struct sim_timeq *q)
{
	return (struct cms_mad *)sim_timeq_pop(q);
}

uint64_t
cms_rand(struct cms *sim)
{
	return sim_rand64(&sim->rng);
}

static bool
chance(struct cms *sim, double p)
{
	return sim_chance(&sim->rng, p);
}

/* ---- the ops table of a node ---- */

static void
node_send(void *ctx, const struct droce_cm_addr *to, const uint8_t *mad)
{
	struct cms_node *n = ctx;
	struct cms *sim = n->sim;
	struct sim_timeq *q = sim->queue;
	struct droce_cm_msg msg;
	int dst, copies, c;

	if (droce_cm_mad_parse(mad, DROCE_MAD_BYTES, &msg) != DROCE_CM_MAD_OK)
		abort();	/* the CM built something its own parser refuses */
	n->sent[msg.type]++;
	sim->mads_sent++;
	if (sim->sniff != NULL && sim->sniff(sim, n->idx, &msg, sim->sniff_arg))
		return;
	for (dst = 0; dst < 2; dst++)
		if (memcmp(to->remote_gid, sim->node[dst].gid, 16) == 0)
			break;
	if (dst == 2 || memcmp(to->local_gid, n->gid, 16) != 0 || to->remote_qpn != 1)
		return;		/* addressed to nobody: gone */
	if (chance(sim, sim->link.loss)) {
		sim->mads_lost++;
		return;
	}
	copies = chance(sim, sim->link.dup) ? 2 : 1;
	if (copies == 2)
		sim->mads_duplicated++;
	for (c = 0; c < copies; c++) {
		struct cms_mad *m = malloc(sizeof(*m));

		if (m == NULL)
			abort();
		m->q.t = sim->now + sim->link.delay_ns;
		if (sim->link.reorder_ns && chance(sim, sim->link.reorder))
			m->q.t += cms_rand(sim) % sim->link.reorder_ns;
		m->from = n->idx;
		m->to = dst;
		memcpy(m->mad, mad, DROCE_MAD_BYTES);
		sim_timeq_push(q, &m->q);
	}
}

static bool
ends(enum droce_cm_event_type t)
{
	switch (t) {
	case DROCE_CM_EV_TIMEWAIT_EXIT:
	case DROCE_CM_EV_REQ_ERROR:
	case DROCE_CM_EV_SIDR_REQ_ERROR:
	case DROCE_CM_EV_SIDR_REP_RECEIVED:
		return true;
	default:
		return false;
	}
}

static void
node_event(void *ctx, struct droce_cm_id *id, const struct droce_cm_event *ev)
{
	struct cms_node *n = ctx;
	struct cms_ev *e;

	if (n->n_ev == CMS_MAX_EV) {	/* keep the latest: only the chaos test fills it */
		memmove(n->ev, n->ev + 1, (CMS_MAX_EV - 1) * sizeof(n->ev[0]));
		n->n_ev--;
	}
	e = &n->ev[n->n_ev++];
	memset(e, 0, sizeof(*e));
	e->type = ev->type;
	e->id = id;
	e->local_id = id->local_id;
	e->listen = ev->listen;
	e->t = n->sim->now;
	if (ev->msg != NULL) {
		e->has_msg = true;
		e->msg = *ev->msg;
	}

	switch (ev->type) {
	case DROCE_CM_EV_REQ_RECEIVED:
		if (n->pol.accept) {
			struct droce_cm_rep_param p = {
				.qpn = n->pol.next_qpn++,
				.starting_psn = 0x222222 + n->idx,
				.responder_resources = 4,
				.initiator_depth = 4,
				.target_ack_delay = 15,
				.rnr_retry_count = 6,
				.pdata = "accepted",
				.pdata_len = 9,
			};

			if (droce_cm_accept(id, &p, n->sim->now) != 0)
				(void)droce_cm_reject(id, DROCE_CM_REJ_NO_QP, NULL, 0, NULL, 0,
						      n->sim->now);
		} else if (n->pol.reject) {
			(void)droce_cm_reject(id, n->pol.reject, NULL, 0, "go away", 8,
					      n->sim->now);
		}
		break;
	case DROCE_CM_EV_REP_RECEIVED:
		if (n->pol.rtu && droce_cm_send_rtu(id, NULL, 0, n->sim->now) != 0)
			(void)droce_cm_reject(id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0,
					      n->sim->now);
		break;
	case DROCE_CM_EV_DREQ_RECEIVED:
		if (n->pol.drep)
			(void)droce_cm_disconnect(id, NULL, 0, n->sim->now);
		break;
	case DROCE_CM_EV_SIDR_REQ_RECEIVED:
		if (n->pol.sidr_answer) {
			struct droce_cm_sidr_rep_param p = {
				.status = DROCE_CM_SIDR_SUCCESS,
				.qpn = 0x300 + n->idx,
				.qkey = 0x01234567,	/* RDMA_UDP_QKEY */
				.pdata = "sidr",
				.pdata_len = 5,
			};

			(void)droce_cm_sidr_rep(id, &p, n->sim->now);
		}
		break;
	case DROCE_CM_EV_REJ_RECEIVED:
		/* a REQ that ends in IDLE is done; one in TIMEWAIT ends at its exit */
		if (n->pol.destroy_done && id->state == DROCE_CM_IDLE)
			droce_cm_id_destroy(id, n->sim->now);
		break;
	default:
		break;
	}
	if (n->pol.destroy_done && ends(ev->type))
		droce_cm_id_destroy(id, n->sim->now);
}

static int
node_qp_modify(void *ctx, struct droce_cm_id *id, const struct droce_cm_qp_attr *attr)
{
	struct cms_node *n = ctx;
	struct cms_qp *q;

	if ((int)attr->step == n->pol.qp_fail)
		return -EIO;
	if (n->n_qp == CMS_MAX_QP) {
		memmove(n->qp, n->qp + 1, (CMS_MAX_QP - 1) * sizeof(n->qp[0]));
		n->n_qp--;
	}
	q = &n->qp[n->n_qp++];
	q->id = id;
	q->attr = *attr;
	q->t = n->sim->now;
	return 0;
}

static const struct droce_cm_ops node_ops = {
	.send = node_send,
	.event = node_event,
	.qp_modify = node_qp_modify,
};

struct cms *
cms_new(uint64_t seed)
{
	struct cms *sim = calloc(1, sizeof(*sim));
	int i;

	if (sim == NULL)
		abort();
	sim->queue = calloc(1, sizeof(struct sim_timeq));
	sim->rng = seed ? seed : 1;
	sim->link.delay_ns = 10 * 1000;
	sim->link.reorder_ns = 1000 * 1000;
	for (i = 0; i < 2; i++) {
		struct cms_node *n = &sim->node[i];
		struct droce_cm_config cfg = {
			.ca_guid = 0x50540afffe4d0001ull + (uint64_t)i,
			.comm_id_seed = (uint32_t)(seed * 2654435761u) ^ (uint32_t)(i * 0x9e3779b9u),
			.mra_service_timeout = 24,
		};

		n->sim = sim;
		n->idx = i;
		n->gid[10] = 0xff;
		n->gid[11] = 0xff;
		n->gid[12] = 10;
		n->gid[15] = (uint8_t)(i + 1);
		n->pol.accept = true;
		n->pol.rtu = true;
		n->pol.drep = true;
		n->pol.sidr_answer = true;
		n->pol.qp_fail = -1;
		n->pol.next_qpn = 0x200 + 0x100 * (uint32_t)i;
		if (droce_cm_init(&n->cm, &cfg, n->ids, CMS_IDS, &node_ops, n) != 0)
			abort();
	}
	return sim;
}

void
cms_free(struct cms *sim)
{
	struct sim_timeq *q = sim->queue;
	struct cms_mad *m;

	while ((m = queue_pop(q)) != NULL)
		free(m);
	free(q->heap);
	free(q);
	free(sim);
}

void
cms_path(struct cms *sim, int from, struct droce_cm_path *path)
{
	memset(path, 0, sizeof(*path));
	memcpy(path->sgid, sim->node[from].gid, 16);
	memcpy(path->dgid, sim->node[!from].gid, 16);
	path->flow_label = 0x71456;
	path->hop_limit = 64;
	path->pkey = 0xffff;
	path->mtu = 3;			/* 1024 */
	path->packet_life_time = 18;	/* Linux's CMA_IBOE_PACKET_LIFETIME (16 in newer kernels) */
	path->local_ack_timeout = 19;
}

void
cms_req_param(struct cms *sim, int from, uint64_t sid, uint32_t qpn, struct droce_cm_req_param *p)
{
	memset(p, 0, sizeof(*p));
	p->service_id = sid;
	cms_path(sim, from, &p->path);
	p->qpn = qpn;
	p->transport = DROCE_CM_TRANSPORT_RC;
	p->starting_psn = 0x45c325;
	p->responder_resources = 1;
	p->initiator_depth = 2;
	p->remote_cm_response_timeout = 20;	/* Linux's CMA_CM_RESPONSE_TIMEOUT */
	p->local_cm_response_timeout = 20;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->max_cm_retries = 15;			/* CMA_MAX_CM_RETRIES */
	p->pdata = "hello";
	p->pdata_len = 6;
}

struct droce_cm_id *
cms_listen(struct cms *sim, int n, uint64_t sid, uint32_t backlog)
{
	struct droce_cm_id *id;

	if (droce_cm_id_create(&sim->node[n].cm, NULL, &id) != 0 ||
	    droce_cm_listen(id, sid, 0, backlog) != 0)
		abort();
	return id;
}

struct droce_cm_id *
cms_connect(struct cms *sim, int n, uint64_t sid, uint32_t qpn)
{
	struct droce_cm_req_param p;
	struct droce_cm_id *id;

	cms_req_param(sim, n, sid, qpn, &p);
	if (droce_cm_id_create(&sim->node[n].cm, NULL, &id) != 0 ||
	    droce_cm_connect(id, &p, sim->now) != 0)
		abort();
	return id;
}

static void
from_addr(struct cms *sim, int from, int to, struct droce_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->local_gid, sim->node[to].gid, 16);
	memcpy(a->remote_gid, sim->node[from].gid, 16);
	a->remote_qpn = 1;
	a->pkey = 0xffff;
	a->hop_limit = 64;
}

enum droce_cm_drop
cms_inject(struct cms *sim, int from, int to, const uint8_t *mad, uint32_t len)
{
	struct droce_cm_addr a;

	from_addr(sim, from, to, &a);
	return droce_cm_rx(&sim->node[to].cm, &a, mad, len, sim->now);
}

static uint64_t
next_time(struct cms *sim)
{
	struct sim_timeq *q = sim->queue;
	uint64_t t = q->n ? q->heap[0]->t : 0;
	int i;

	for (i = 0; i < 2; i++) {
		uint64_t d = droce_cm_next_timer(&sim->node[i].cm);

		if (d != 0 && (t == 0 || d < t))
			t = d;
	}
	return t;
}

bool
cms_run(struct cms *sim, bool (*done)(struct cms *sim, void *arg), void *arg, uint64_t limit_ns)
{
	struct sim_timeq *q = sim->queue;

	for (;;) {
		uint64_t t;
		int i;

		if (done != NULL && done(sim, arg))
			return true;
		t = next_time(sim);
		if (t == 0)		/* nothing in flight, no timer: quiet */
			return done != NULL && done(sim, arg);
		if (t > limit_ns) {
			sim->now = DROCE_MAX(sim->now, limit_ns);
			return done != NULL && done(sim, arg);
		}
		if (t > sim->now)
			sim->now = t;
		while (q->n && q->heap[0]->t <= sim->now) {
			struct cms_mad *m = queue_pop(q);

			if (!sim->node[m->to].down)
				(void)cms_inject(sim, m->from, m->to, m->mad, DROCE_MAD_BYTES);
			free(m);
		}
		for (i = 0; i < 2; i++)
			droce_cm_timer(&sim->node[i].cm, sim->now);
	}
}

void
cms_settle(struct cms *sim, uint64_t limit_ns)
{
	(void)cms_run(sim, NULL, NULL, limit_ns);
}

void
cms_advance(struct cms *sim, uint64_t t)
{
	(void)cms_run(sim, NULL, NULL, t);
	sim->now = DROCE_MAX(sim->now, t);
}

unsigned int
cms_count(const struct cms_node *n, enum droce_cm_event_type type, const struct droce_cm_id *id)
{
	unsigned int i, c = 0;

	for (i = 0; i < n->n_ev; i++)
		if (n->ev[i].type == type && (id == NULL || n->ev[i].id == id))
			c++;
	return c;
}

const struct cms_ev *
cms_last(const struct cms_node *n, enum droce_cm_event_type type, const struct droce_cm_id *id)
{
	unsigned int i;

	for (i = n->n_ev; i-- > 0;)
		if (n->ev[i].type == type && (id == NULL || n->ev[i].id == id))
			return &n->ev[i];
	return NULL;
}

const struct cms_qp *
cms_qp_last(const struct cms_node *n, uint32_t qpn, enum droce_cm_qp_step step)
{
	unsigned int i;

	for (i = n->n_qp; i-- > 0;)
		if (n->qp[i].attr.qpn == qpn && n->qp[i].attr.step == step)
			return &n->qp[i];
	return NULL;
}

struct droce_cm_id *
cms_find_state(struct cms_node *n, enum droce_cm_state state)
{
	unsigned int i;

	for (i = 0; i < CMS_IDS; i++)
		if (n->ids[i].state == state)
			return &n->ids[i];
	return NULL;
}

unsigned int
cms_ids_used(const struct cms_node *n)
{
	unsigned int i, c = 0;

	for (i = 0; i < CMS_IDS; i++)
		c += n->ids[i].state != DROCE_CM_FREE;
	return c;
}

void
cms_msg(struct droce_cm_msg *m, enum droce_cm_msg_type type, uint32_t sender_id,
	uint32_t receiver_id)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	droce_cm_mad_hdr_init(&m->hdr, type, 0x77);
	switch (type) {
	case DROCE_CM_MSG_REQ:
		m->req.local_comm_id = sender_id;
		break;
	case DROCE_CM_MSG_SIDR_REQ:
		m->sidr_req.request_id = sender_id;
		break;
	case DROCE_CM_MSG_SIDR_REP:
		m->sidr_rep.request_id = receiver_id;
		break;
#define A(SYM, sym, attr, pdata) \
	case DROCE_CM_MSG_##SYM: \
		m->sym.local_comm_id = sender_id; \
		m->sym.remote_comm_id = receiver_id; \
		break;
	A(MRA, mra, 0, 0)
	A(REJ, rej, 0, 0)
	A(REP, rep, 0, 0)
	A(RTU, rtu, 0, 0)
	A(DREQ, dreq, 0, 0)
	A(DREP, drep, 0, 0)
#undef A
	default:
		break;
	}
}
