/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* The simulated link and nodes of sim.h. Single-threaded. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire_gid.h"
#include "sim.h"
#include "sim_timeq.h"

struct sim_frame {
	struct sim_timeq_item q;	/* first: the queue hands it back */
	int to;
	uint32_t len;
	uint8_t data[];
};

static struct sim_frame *
queue_pop(struct sim_timeq *q)
{
	return (struct sim_frame *)sim_timeq_pop(q);
}

uint64_t
sim_rand(struct sim *sim)
{
	return sim_rand64(&sim->rng);
}

static bool
chance(struct sim *sim, double p)
{
	return sim_chance(&sim->rng, p);
}

static struct sim_node *
qp_node(struct droce_tqp *qp)
{
	return qp->ops_ctx;
}

static unsigned int
qp_index(struct droce_tqp *qp)
{
	return (unsigned int)(qp - qp_node(qp)->qp);
}

static enum droce_mem_err
sim_mem_resolve(void *ctx, struct droce_tqp *qp, uint32_t key, uint64_t va, uint32_t len,
		uint32_t access, uint8_t **host)
{
	struct sim_node *n = ctx;
	unsigned int i;

	(void)qp;
	for (i = 0; i < n->nmr; i++) {
		struct sim_mr *m = &n->mr[i];

		if (m->key != key)
			continue;
		if (!m->valid)
			return DROCE_MEM_BAD_KEY;
		if (va < m->va || len > m->len || va - m->va > m->len - len)
			return DROCE_MEM_RANGE;
		if ((access & m->access) != access)
			return DROCE_MEM_ACCESS;
		if (m->odp)
			return (access & IBV_ACCESS_REMOTE_ATOMIC) ? DROCE_MEM_ACCESS :
								     DROCE_MEM_INDIRECT;
		*host = m->base + (va - m->va);
		return DROCE_MEM_OK;
	}
	return DROCE_MEM_BAD_KEY;
}

/* An ODP region's copy: the sim's "kernel" copies, and a hole faults. */
static enum droce_mem_err
sim_mem_copy(void *ctx, struct droce_tqp *qp, uint32_t key, uint64_t va, void *buf, uint32_t len,
	     uint32_t access)
{
	struct sim_node *n = ctx;
	uint8_t *host;
	enum droce_mem_err e = sim_mem_resolve(ctx, qp, key, va, len, access, &host);
	unsigned int i;

	if (e != DROCE_MEM_INDIRECT)
		return e == DROCE_MEM_OK ? DROCE_MEM_FAULT : e;
	for (i = 0; i < n->nmr; i++) {
		struct sim_mr *m = &n->mr[i];

		if (m->key != key)
			continue;
		if (m->hole_len > 0 && va < m->hole_va + m->hole_len && m->hole_va < va + len)
			return DROCE_MEM_FAULT;
		n->odp_copies++;
		if (access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
			memcpy(m->base + (va - m->va), buf, len);
		else
			memcpy(buf, m->base + (va - m->va), len);
		return DROCE_MEM_OK;
	}
	return DROCE_MEM_BAD_KEY;
}

static enum droce_mem_err
sim_mem_invalidate(void *ctx, struct droce_tqp *qp, uint32_t rkey, bool remote)
{
	struct sim_node *n = ctx;
	unsigned int i;

	(void)qp;
	(void)remote;
	for (i = 0; i < n->nmr; i++)
		if (n->mr[i].key == rkey && n->mr[i].valid) {
			n->mr[i].valid = false;
			return DROCE_MEM_OK;
		}
	return DROCE_MEM_BAD_KEY;
}

static int
sim_recv_get(void *ctx, struct droce_tqp *qp, struct droce_recv_wqe *wqe)
{
	struct sim_node *n = ctx;
	unsigned int i = qp_index(qp);

	if (n->rq_broken[i])
		return -EBADMSG;
	if (n->rq_head[i] == n->rq_tail[i])
		return -EAGAIN;
	*wqe = n->rq[i][n->rq_head[i]++ % SIM_RQ_SIZE];
	return 0;
}

static int
sim_cq_push(void *ctx, struct droce_tqp *qp, bool recv, const struct droce_cqe *cqe)
{
	struct sim_node *n = ctx;
	struct sim_cq *cq = recv ? &n->rcq[qp_index(qp)] : &n->scq[qp_index(qp)];

	if (cq->tail - cq->head >= cq->size) {
		cq->overflow = true;
		return -ENOSPC;
	}
	cq->c[cq->tail++ % SIM_CQ_SIZE] = *cqe;
	return 0;
}

static void
sim_enqueue(struct sim *sim, int to, const uint8_t *frame, uint32_t len, uint64_t extra)
{
	struct sim_frame *f = malloc(sizeof(*f) + len);

	f->q.t = sim->now + sim->link.delay_ns + extra;
	f->to = to;
	f->len = len;
	memcpy(f->data, frame, len);
	sim_timeq_push(sim->queue, &f->q);
}

static void
sim_xmit(void *ctx, struct droce_tqp *qp, struct droce_pkt *pkt, const struct droce_iov *iov,
	 unsigned int n_iov)
{
	static uint8_t buf[DROCE_MAX_FRAME_BYTES];
	struct sim_node *n = ctx;
	struct sim *sim = n->sim;
	uint64_t extra = 0;
	int len;

	(void)qp;
	len = droce_tqp_frame_build(pkt, iov, n_iov, buf, sizeof(buf));
	if (len < 0)
		abort();
	sim->frames_sent++;
	if ((sim->sniff != NULL && sim->sniff(sim, n->id, pkt, sim->sniff_arg)) ||
	    chance(sim, sim->link.loss)) {
		sim->frames_lost++;
		return;
	}
	if (chance(sim, sim->link.corrupt)) {
		sim->frames_corrupted++;
		buf[14 + sim_rand(sim) % (uint64_t)(len - 14)] ^= 0x10;
	}
	if (chance(sim, sim->link.reorder) && sim->link.reorder_ns > 0)
		extra = sim_rand(sim) % sim->link.reorder_ns;
	sim_enqueue(sim, !n->id, buf, (uint32_t)len, extra);
	if (chance(sim, sim->link.dup)) {
		sim->frames_duplicated++;
		sim_enqueue(sim, !n->id, buf, (uint32_t)len, extra + 100);
	}
}

static void
sim_qp_error(void *ctx, struct droce_tqp *qp, enum droce_tqp_fault why)
{
	struct sim_node *n = ctx;
	unsigned int i = qp_index(qp);

	n->qp_error[i] = true;
	n->qp_fault[i] = why;
	/* the owner flushes the receive queue (not an SRQ) */
	while (n->rq_head[i] != n->rq_tail[i]) {
		struct droce_recv_wqe *w = &n->rq[i][n->rq_head[i]++ % SIM_RQ_SIZE];
		struct droce_cqe c = {
			.wr_id = w->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = qp->attr.qpn,
		};

		sim_cq_push(n, qp, true, &c);
	}
}

static const struct droce_tr_ops sim_ops = {
	.mem_resolve = sim_mem_resolve,
	.mem_copy = sim_mem_copy,
	.mem_invalidate = sim_mem_invalidate,
	.recv_get = sim_recv_get,
	.cq_push = sim_cq_push,
	.xmit = sim_xmit,
	.qp_error = sim_qp_error,
};

struct sim *
sim_new(uint64_t seed)
{
	struct sim *sim = calloc(1, sizeof(*sim));
	int i;

	sim->rng = seed ? seed : 1;
	sim->queue = calloc(1, sizeof(struct sim_timeq));
	sim->link.delay_ns = 2000;
	for (i = 0; i < 2; i++) {
		struct sim_node *n = &sim->node[i];
		unsigned int q;

		n->sim = sim;
		n->id = i;
		memcpy(n->mac, (uint8_t[6]){ 0x02, 0, 0, 0, 0, (uint8_t)(i + 1) }, 6);
		droce_gid_from_ipv4(n->gid, rte_cpu_to_be_32(0x0a000001u + (uint32_t)i));
		for (q = 0; q < SIM_MAX_QP; q++) {
			n->scq[q].size = SIM_CQ_SIZE;
			n->rcq[q].size = SIM_CQ_SIZE;
		}
	}
	return sim;
}

void
sim_free(struct sim *sim)
{
	struct sim_timeq *q = sim->queue;
	struct sim_frame *f;

	int s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < SIM_MAX_QP; i++)
			droce_tqp_fini(&sim->node[s].qp[i]);
	while ((f = queue_pop(q)) != NULL)
		free(f);
	free(q->heap);
	free(q);
	free(sim);
}

uint32_t
sim_reg_mr(struct sim_node *n, void *base, uint64_t len, uint32_t access)
{
	struct sim_mr *m = &n->mr[n->nmr];

	m->key = 0x100u * (n->nmr + 1) + 0x11u * (uint32_t)(n->id + 1);
	m->access = access;
	m->base = base;
	m->va = (uint64_t)(uintptr_t)base;
	m->len = len;
	m->valid = true;
	n->nmr++;
	return m->key;
}

void
sim_av(struct sim *sim, int from, int to, struct droce_av *av)
{
	memset(av, 0, sizeof(*av));
	memcpy(av->smac, sim->node[from].mac, 6);
	memcpy(av->dmac, sim->node[to].mac, 6);
	memcpy(av->sgid, sim->node[from].gid, 16);
	memcpy(av->dgid, sim->node[to].gid, 16);
}

void
sim_connect(struct sim *sim, enum ibv_qp_type type, unsigned int i, uint32_t mtu)
{
	int s;

	for (s = 0; s < 2; s++) {
		struct sim_node *n = &sim->node[s];
		struct droce_tqp_attr a = {
			.type = type,
			.qpn = 0x100u * (uint32_t)(s + 1) + i,
			.dest_qpn = 0x100u * (uint32_t)(2 - s) + i,
			.qkey = 0x1234,
			.mtu = mtu,
			.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC,
			.timeout = 8,		/* ~1 ms of virtual time */
			.retry_cnt = 7,
			.rnr_retry = 7,
			.min_rnr_timer = 1,	/* 10 us */
			.max_rd_atomic = 16,
			.max_dest_rd_atomic = 16,
		};

		sim_av(sim, s, !s, &a.av);
		droce_tqp_fini(&n->qp[i]);	/* connected again */
		if (droce_tqp_init(&n->qp[i], &a, n->sq[i], SIM_SQ_SIZE, &sim_ops, n) != 0)
			abort();
		droce_tqp_set_state(&n->qp[i], DROCE_TQP_INIT, 0, 0);
		droce_tqp_set_state(&n->qp[i], DROCE_TQP_RTR, 0, 0xfffff0u + i);
	}
	for (s = 0; s < 2; s++)
		droce_tqp_set_state(&sim->node[s].qp[i], DROCE_TQP_RTS, 0xfffff0u + i, 0);
}

int
sim_post_recv(struct sim_node *n, unsigned int i, uint64_t wr_id, void *buf, uint32_t len,
	      uint32_t lkey)
{
	struct droce_recv_wqe *w;

	if (n->rq_tail[i] - n->rq_head[i] >= SIM_RQ_SIZE)
		return -ENOMEM;
	w = &n->rq[i][n->rq_tail[i]++ % SIM_RQ_SIZE];
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->sge[0].addr = (uint64_t)(uintptr_t)buf;
	w->sge[0].length = len;
	w->sge[0].lkey = lkey;
	return 0;
}

bool
sim_poll_cq(struct sim_cq *cq, struct droce_cqe *out)
{
	if (cq->head == cq->tail)
		return false;
	*out = cq->c[cq->head++ % SIM_CQ_SIZE];
	return true;
}

static void
sim_deliver(struct sim *sim, struct sim_frame *f)
{
	struct sim_node *n = &sim->node[f->to];
	struct droce_pkt pkt;
	unsigned int i;

	if (droce_pkt_parse(&pkt, f->data, f->len, f->len) != DROCE_WIRE_OK) {
		sim->frames_rejected++;
		return;
	}
	for (i = 0; i < SIM_MAX_QP; i++)
		if (n->qp[i].ops != NULL && n->qp[i].attr.qpn == pkt.dqpn) {
			droce_tqp_rx(&n->qp[i], &pkt, f->data, sim->now);
			return;
		}
}

/* Earliest timer deadline of any QP, or UINT64_MAX. */
static uint64_t
sim_next_timer(struct sim *sim)
{
	uint64_t t = UINT64_MAX;
	int s;
	unsigned int i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < SIM_MAX_QP; i++) {
			struct droce_tqp *qp = &sim->node[s].qp[i];

			if (qp->ops == NULL)
				continue;
			if (qp->comp.timer != 0 && qp->comp.timer < t)
				t = qp->comp.timer;
			if (qp->comp.rnr_until != 0 && qp->comp.rnr_until < t)
				t = qp->comp.rnr_until;
		}
	return t;
}

static void
sim_dump(struct sim *sim)
{
	int s;
	unsigned int i;

	fprintf(stderr, "sim stuck at %lu ns\n", (unsigned long)sim->now);
	for (s = 0; s < 2; s++)
		for (i = 0; i < SIM_MAX_QP; i++) {
			struct droce_tqp *qp = &sim->node[s].qp[i];

			if (qp->ops == NULL)
				continue;
			fprintf(stderr, " n%d qp%u st %d post %u req.idx %u psn %u max %u off %u rd %u"
				" comp.idx %u psn %u timer %lu rnr %lu | epsn %u nak %d ack %d\n",
				s, i, qp->state, qp->sq_post, qp->req.idx, qp->req.psn,
				qp->req.psn_max, qp->req.offset, qp->req.rd_atomic, qp->comp.idx,
				qp->comp.psn, (unsigned long)qp->comp.timer,
				(unsigned long)qp->comp.rnr_until, qp->resp.epsn, qp->resp.nak_sent,
				qp->resp.ack_pending);
		}
}

bool
sim_run(struct sim *sim, bool (*done)(struct sim *sim, void *arg), void *arg, uint64_t limit_ns)
{
	struct sim_timeq *q = sim->queue;

	while (sim->now <= limit_ns) {
		unsigned int work = 0, i;
		struct sim_frame *f;
		int s;

		for (s = 0; s < 2; s++)
			for (i = 0; i < SIM_MAX_QP; i++) {
				struct droce_tqp *qp = &sim->node[s].qp[i];

				if (qp->ops == NULL)
					continue;
				droce_tqp_timer(qp, sim->now);
				work += droce_tqp_poll(qp, sim->now, 32);
			}
		while (q->n > 0 && q->heap[0]->t <= sim->now) {
			f = queue_pop(q);
			sim_deliver(sim, f);
			free(f);
			work++;
		}
		if (done(sim, arg))
			return true;
		for (s = 0; s < 2 && work == 0; s++)	/* the step may have posted */
			for (i = 0; i < SIM_MAX_QP; i++)
				if (sim->node[s].qp[i].ops != NULL &&
				    droce_tqp_has_work(&sim->node[s].qp[i]))
					work++;
		if (work > 0) {
			sim->now += 50;		/* time a burst takes */
		} else {
			uint64_t t = sim_next_timer(sim);

			if (q->n > 0 && q->heap[0]->t < t)
				t = q->heap[0]->t;
			if (t == UINT64_MAX) {		/* nothing will ever happen */
				if (getenv("SIM_DEBUG"))
					sim_dump(sim);
				return done(sim, arg);
			}
			sim->now = t > sim->now ? t : sim->now + 1;
		}
	}
	return false;
}
