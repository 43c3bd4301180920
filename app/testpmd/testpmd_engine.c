/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine of droce-testpmd: QPs of lib/transport on one port, one
 * memory region, a generator or a responder, and the poll loop.
 *
 * Memory is one buffer with one key (L_Key = R_Key = --key), addressed
 * zero-based: an address is an offset into the buffer, whose byte i holds
 * i mod 251 at the start (the pattern: messages a peer can check, READs and
 * atomics whose results --check can predict). The responder
 * grants every remote access and always has a receive WQE covering the
 * whole buffer, so SEND streams never meet RNR. QP i has QPN qpn_base + i
 * and talks to the peer's remote_qpn + i.
 *
 * Workers (--workers N): QP i belongs to worker i mod N for its life, and
 * each worker polls its own port or its own queue pair of the one port,
 * holds its QPs' state, active list, timers, TX backlog and counters:
 * nothing on the hot path is written by two threads. --count and --rate
 * are shared out between the workers. The link decides which worker a
 * frame reaches: where it keeps each worker's traffic apart (a net_ring or
 * net_memif per worker, or memif's queues, with QPNs of the same index on
 * both sides), every frame lands on its QP's worker; one that does not is
 * handed to the owner through the owner's hand-off ring (several
 * producers, one consumer) and counted (HANDOFF). On one port, what a
 * queue other than 0 cannot sort (ARP, neighbour discovery) goes to
 * worker 0, the port's sorter.
 *
 * Only QPs on the active list are polled, so thousands of idle QPs cost
 * nothing per pass: a QP joins the list when a packet or a completion
 * gives it something to do and leaves it when it has nothing left.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_port_worker.h"
#include "testpmd.h"

#define BURST		DROCE_PORT_WORKER_BURST
#define TX_BACKLOG	DROCE_PORT_WORKER_TX_MAX	/* frames held while the port's queue is full */
#define POLL_BUDGET	16		/* packets per QP per pass: fairness */
#define TIMER_NS	(1000 * 1000)	/* timer scan period, at least */

struct tp_qp {
	struct droce_tqp tqp;
	uint32_t outstanding;		/* messages posted, not completed */
	uint16_t loc_i;			/* seq % depth (--depth is at most 4096) */
	bool active;			/* on the active list */
	uint64_t seq;			/* messages posted */
	/* message seq's local_off() and remote_off() in strides, kept by post_one()
	 * without local_off()'s two divisions and remote_off()'s one (with loc_i,
	 * in the padding the struct had: it keeps its cache lines) */
	uint64_t loc_slot, rem_slot;
} __rte_cache_aligned;			/* QPs of two workers share no line */

#define HANDOFF_RING	1024		/* frames waiting for their worker */

struct tp_engine;

/* One worker: its port, its QPs' lists, its frames, its counters. */
struct tp_worker {
	struct tp_engine *e;		/* shared, read-only while running */
	unsigned int id;
	unsigned int n_workers;
	/* the memory region, copied here: read on every packet */
	uint8_t *mem;
	uint64_t mem_len;
	uint32_t key;
	/*
	 * QPs with something to do, a FIFO of QP indices (each QP at most once:
	 * its active flag): a pass takes from the head, puts back at the tail
	 * those that still have work, and may stop early at no cost.
	 */
	uint32_t *active;
	uint32_t act_head, act_tail;	/* free-running */
	uint32_t act_mask;		/* slots - 1, slots a power of two >= its QPs */
	uint64_t count;			/* our share of --count */
	uint64_t rate;			/* ... and of --rate */
	struct droce_send_wqe tmpl;	/* what every posted message starts from */

	uint8_t linear[DROCE_MAX_FRAME_BYTES];

	bool launched;
	unsigned int lcore;		/* RTE_MAX_LCORE: on a thread */
	pthread_t thread;
	atomic_bool running;		/* the worker's answer to want_run */
	uint64_t run_start;		/* worker: when start took effect */
	_Atomic uint64_t posted_at_start;
	uint64_t next_timer;

	_Atomic uint64_t cnt[TP_CNT_COUNT];
	_Atomic uint64_t wire_drop[DROCE_WIRE_DROP_COUNT];
	/*
	 * Its queue (of its own port, or queue id of the one port), the TX
	 * backlog (the QPs stop transmitting while the PMD's queue is full:
	 * backpressure), the hand-off ring and its frames held.
	 */
	struct droce_port_worker pw;
} __rte_cache_aligned;

struct tp_engine {
	struct tp_opts o;
	struct droce_port_info info;	/* worker 0's port: MAC, MTU, addresses */
	uint8_t *mem;
	uint64_t mem_len;
	uint64_t stride, slots, rspan;	/* stride_of(), local_slots(), remote_span() */
	struct tp_qp *qps;		/* QP i: worker i mod N's alone */
	struct droce_tqp_swqe *sq_mem;
	uint32_t sq_size;
	/*
	 * Timer scan period: a 64th of the retransmit timeout, at least
	 * TIMER_NS. A scan reads every QP, a cost that grows with the QPs
	 * and with time, not with messages (under valgrind, 100 times slower,
	 * it would swamp a per-message count unless --timeout is long).
	 */
	uint64_t timer_ns;
	bool generator;
	struct droce_av av;		/* to the peer */
	unsigned int n_workers;
	struct tp_worker *w[TP_MAX_WORKERS];
	atomic_bool quit;
	atomic_bool want_run;		/* set by the main thread */
};

#define PATTERN_PERIOD	251		/* prime: no power-of-two stride repeats it */

/* Byte i of the pattern, twice over: PATTERN_PERIOD bytes from any phase. */
static uint8_t pattern_twice[2 * PATTERN_PERIOD];

const char *const tp_counter_name[TP_CNT_COUNT] = {
#define C(sym, desc) #sym,
	TP_COUNTERS(C)
#undef C
};

static const char *const mode_names[TP_MODE_COUNT] = {
	"write", "send", "read", "fadd", "cswap", "ud", "responder", "raw",
};

const char *
tp_mode_name(enum tp_mode m)
{
	return m < TP_MODE_COUNT ? mode_names[m] : "?";
}

/* Single writer (the worker): a plain add, no locked instruction, readers see it whole. */
static inline void
cnt_add(struct tp_worker *w, enum tp_counter c, uint64_t n)
{
	atomic_store_explicit(&w->cnt[c], atomic_load_explicit(&w->cnt[c], memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* The worker that owns QP @p idx (no division for one worker). */
static inline unsigned int
owner_of(unsigned int n_workers, uint32_t idx)
{
	return n_workers == 1 ? 0 : idx % n_workers;
}

/* Worker @p w's share of @p total: the first total mod N get one more. */
static uint64_t
share_of(const struct tp_engine *e, uint64_t total, unsigned int w)
{
	return total / e->n_workers + (w < total % e->n_workers);
}

static inline void
activate(struct tp_worker *w, struct tp_qp *qp)
{
	if (!qp->active) {
		qp->active = true;
		w->active[w->act_tail++ & w->act_mask] = (uint32_t)(qp - w->e->qps);
	}
}

/* Does @p buf hold the pattern's bytes @p from .. @p from + @p len? */
static bool
is_pattern(const uint8_t *buf, uint64_t from, uint64_t len)
{
	const uint8_t *ref = pattern_twice + from % PATTERN_PERIOD;
	uint64_t j;

	for (j = 0; j < len; j += PATTERN_PERIOD)
		if (memcmp(buf + j, ref, DROCE_MIN(len - j, (uint64_t)PATTERN_PERIOD)) != 0)
			return false;
	return true;
}

/* The 64-bit word (host order) the pattern holds at byte @p from. */
static uint64_t
pattern_word(uint64_t from)
{
	uint64_t w;

	memcpy(&w, pattern_twice + from % PATTERN_PERIOD, sizeof(w));
	return w;
}

/*
 * Where message @p seq of QP @p qi lives: a slot of our memory (its payload,
 * or where its READ data or atomic result lands), and its offset from --raddr
 * in the peer's memory.
 */
static uint64_t
stride_of(const struct tp_engine *e)
{
	return DROCE_MAX(e->o.size, 8u);	/* atomics move 8 bytes */
}

/* Our memory's slots, a message's stride each */
static uint64_t
local_slots(const struct tp_engine *e)
{
	return e->mem_len / stride_of(e);
}

static uint64_t
local_off(const struct tp_engine *e, uint32_t qi, uint64_t seq)
{
	uint64_t stride = stride_of(e);

	return ((qi * (uint64_t)e->o.depth + seq % e->o.depth) % local_slots(e)) * stride;
}

static uint64_t
remote_span(const struct tp_engine *e)
{
	return DROCE_MAX(e->o.rlen / stride_of(e), 1u);
}

static uint64_t
remote_off(const struct tp_engine *e, uint32_t qi, uint64_t seq)
{
	return qi * e->o.rstep + (seq % remote_span(e)) * stride_of(e);
}

/*
 * The value atomic @p seq finds at the peer, one QP adding 1 (or swapping
 * in one more) each time to words that started as the pattern.
 */
static uint64_t
atomic_expect(const struct tp_engine *e, uint32_t qi, uint64_t seq)
{
	return pattern_word(remote_off(e, qi, seq)) + seq / remote_span(e);
}

/* --check: is what message @p seq of QP @p qi brought back what the peer holds?
 * (out of line: ops_cq_push() without it saves no registers) */
static __rte_noinline bool
result_ok(const struct tp_engine *e, uint32_t qi, uint64_t seq, uint32_t opcode)
{
	const uint8_t *got = e->mem + local_off(e, qi, seq);
	uint64_t word;

	if (opcode == IBV_WC_RDMA_READ)
		return is_pattern(got, remote_off(e, qi, seq), e->o.size);
	if (opcode != IBV_WC_FETCH_ADD && opcode != IBV_WC_COMP_SWAP)
		return true;
	memcpy(&word, got, sizeof(word));
	return word == atomic_expect(e, qi, seq);
}

/* ---- the transport's ops ---- */

static enum droce_mem_err
ops_mem_resolve(void *ctx, struct droce_tqp *t, uint32_t key, uint64_t va, uint32_t len,
		uint32_t access, uint8_t **host)
{
	const struct tp_worker *w = ctx;

	(void)t;
	(void)access;		/* the one region grants everything */
	if (key != w->key)
		return DROCE_MEM_BAD_KEY;
	if (va > w->mem_len || len > w->mem_len - va)
		return DROCE_MEM_RANGE;
	*host = w->mem + va;
	return DROCE_MEM_OK;
}

static enum droce_mem_err
ops_mem_invalidate(void *ctx, struct droce_tqp *t, uint32_t rkey, bool remote)
{
	(void)ctx;
	(void)t;
	(void)rkey;
	(void)remote;
	return DROCE_MEM_BAD_KEY;	/* the one key cannot be invalidated */
}

static int
ops_recv_get(void *ctx, struct droce_tqp *t, struct droce_recv_wqe *w)
{
	struct tp_engine *e = ((struct tp_worker *)ctx)->e;

	(void)t;
	w->wr_id = 0;
	w->num_sge = 1;
	w->sge[0].addr = 0;
	w->sge[0].length = (uint32_t)DROCE_MIN(e->mem_len, UINT32_MAX);
	w->sge[0].lkey = e->o.key;
	return 0;
}

static int
ops_cq_push(void *ctx, struct droce_tqp *t, bool recv, const struct droce_cqe *c)
{
	struct tp_worker *w = ctx;
	struct tp_engine *e = w->e;
	struct tp_qp *qp = t->owner;

	if (c->status != IBV_WC_SUCCESS) {
		cnt_add(w, TP_CNT_ERRORS, 1);
	} else {
		/* a requester's WRITE/SEND completion carries no byte count */
		bool counted = recv || c->opcode == IBV_WC_RDMA_READ ||
			       c->opcode == IBV_WC_FETCH_ADD || c->opcode == IBV_WC_COMP_SWAP;

		cnt_add(w, TP_CNT_MSGS, 1);
		cnt_add(w, TP_CNT_BYTES, counted ? c->byte_len : w->tmpl.length);
		if (e->o.check && !recv && !result_ok(e, (uint32_t)(qp - e->qps), c->wr_id, c->opcode))
			cnt_add(w, TP_CNT_BAD_DATA, 1);
	}
	if (!recv && qp->outstanding > 0) {
		qp->outstanding--;
		activate(w, qp);
	}
	return 0;
}

static void
ops_xmit(void *ctx, struct droce_tqp *t, struct droce_pkt *pkt, const struct droce_iov *iov,
	 unsigned int n_iov)
{
	struct tp_worker *w = ctx;
	struct rte_mbuf *m = droce_port_worker_alloc(&w->pw);
	int len;

	(void)t;
	if (m == NULL) {
		cnt_add(w, TP_CNT_TX_NOMBUF, 1);
		return;		/* the transport recovers as from a loss */
	}
	len = droce_tqp_frame_build(pkt, iov, n_iov, rte_pktmbuf_mtod(m, uint8_t *),
				    rte_pktmbuf_tailroom(m));
	if (len < 0) {
		rte_pktmbuf_free(m);
		cnt_add(w, TP_CNT_TX_NOMBUF, 1);
		return;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	(void)droce_port_worker_tx(&w->pw, m);	/* a loss (TX_FULL) only with the backlog full */
}

static void
ops_qp_error(void *ctx, struct droce_tqp *t, enum droce_tqp_fault why)
{
	(void)t;
	(void)why;
	cnt_add(ctx, TP_CNT_QP_ERRORS, 1);
}

static const struct droce_tr_ops tp_ops = {
	.mem_resolve = ops_mem_resolve,
	.mem_invalidate = ops_mem_invalidate,
	.recv_get = ops_recv_get,
	.cq_push = ops_cq_push,
	.xmit = ops_xmit,
	.qp_error = ops_qp_error,
};

/* ---- set-up ---- */

/* The WQE every message of worker @p wk starts from; post_one() fills in the addresses. */
static void
template_init(struct tp_engine *e, struct tp_worker *wk)
{
	struct droce_send_wqe *w = &wk->tmpl;
	static const uint32_t opcode[TP_MODE_COUNT] = {
		[TP_WRITE] = IBV_WR_RDMA_WRITE, [TP_SEND] = IBV_WR_SEND,
		[TP_READ] = IBV_WR_RDMA_READ, [TP_FADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
		[TP_CSWAP] = IBV_WR_ATOMIC_CMP_AND_SWP, [TP_UD] = IBV_WR_SEND,
	};

	memset(w, 0, sizeof(*w));
	w->opcode = opcode[e->o.mode];
	w->flags = IBV_SEND_SIGNALED;
	w->num_sge = e->o.size > 0 ? 1 : 0;
	w->length = e->o.size;
	w->sge[0].length = e->o.size;
	w->sge[0].lkey = e->o.key;
	w->rkey = e->o.rkey;
	w->compare_add = e->o.mode == TP_FADD ? 1 : 0;
	if (e->o.mode == TP_UD) {
		w->ud.av = e->av;
		w->ud.qkey = e->o.qkey;
	}
}

/* An IPv4 or IPv6 address as a GID. @return 0 or -1. */
static int
parse_gid(const char *s, uint8_t gid[16])
{
	struct in_addr v4;

	if (s != NULL && inet_pton(AF_INET, s, &v4) == 1) {
		droce_gid_from_ipv4(gid, v4.s_addr);
		return 0;
	}
	return s != NULL && inet_pton(AF_INET6, s, gid) == 1 ? 0 : -1;
}

/*
 * Resolve the peer's MAC: every port asks, and polls, until one has the
 * answer, which the QPs carry. (net_af_packet ports or queues on one
 * interface share a fanout group: each ARP reply reaches one, by a hash.)
 */
static void
free_taken(void *arg, struct rte_mbuf **pkts, uint16_t n, unsigned int tags)
{
	(void)arg;
	(void)tags;
	rte_pktmbuf_free_bulk(pkts, n);
}

static int
resolve_peer(struct tp_engine *e, struct droce_port *const *ports)
{
	uint64_t until = droce_now_ns() + 5ull * 1000 * 1000 * 1000;
	struct rte_mbuf *junk[BURST];
	unsigned int w;
	int ret;

	for (;;) {
		bool pending = false;

		/* done when one port knows, or none is still asking */
		for (w = 0, ret = -EAGAIN; w < e->n_workers && (w == 0 || ports[w] != ports[0]); w++) {
			ret = droce_port_resolve(ports[w], e->av.dgid, e->av.dmac);
			if (ret == 0)
				break;
			pending |= ret == -EAGAIN;
		}
		if (ret == 0 || !pending || droce_now_ns() >= until)
			break;
		/* the ports answer and learn from what they receive, on every queue */
		for (w = 0; w < e->n_workers; w++)
			rte_pktmbuf_free_bulk(junk, droce_port_worker_rx(&e->w[w]->pw, junk, BURST));
		for (w = 0; w < e->n_workers; w++)	/* what other queues could not sort */
			while (droce_port_worker_take(&e->w[w]->pw, free_taken, NULL) > 0)
				;
		usleep(1000);
	}
	if (ret < 0)
		fprintf(stderr, "droce-testpmd: cannot resolve the peer's MAC: %s\n",
			strerror(-ret));
	return ret;
}

static int
qps_create(struct tp_engine *e)
{
	const struct tp_opts *o = &e->o;
	bool ud = o->mode == TP_UD || (o->mode == TP_RESPONDER && o->ud);
	uint32_t i;

	e->sq_size = droce_pow2_at_least(o->depth);
	e->timer_ns = DROCE_MAX((uint64_t)TIMER_NS, droce_tqp_timeout_ns((uint8_t)o->timeout) / 64);
	e->qps = aligned_alloc(RTE_CACHE_LINE_SIZE, (size_t)o->qps * sizeof(*e->qps));
	e->sq_mem = calloc((size_t)o->qps * e->sq_size, sizeof(*e->sq_mem));
	if (e->qps != NULL)	/* zeroed first: droce_tqp_fini() may see any of them */
		memset(e->qps, 0, (size_t)o->qps * sizeof(*e->qps));
	if (e->qps == NULL || e->sq_mem == NULL)
		return -ENOMEM;
	for (i = 0; i < o->qps; i++) {
		struct tp_qp *qp = &e->qps[i];
		struct droce_tqp_attr a = {
			.type = ud ? IBV_QPT_UD : IBV_QPT_RC,
			.qpn = (o->qpn_base + i) & DROCE_24BIT_MASK,
			.dest_qpn = (o->remote_qpn + i) & DROCE_24BIT_MASK,
			.qkey = o->qkey,
			.mtu = o->path_mtu ? o->path_mtu : droce_path_mtu_bytes(e->info.mtu),
			.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC,
			.timeout = (uint8_t)o->timeout,
			.retry_cnt = 7,
			.rnr_retry = 7,
			.min_rnr_timer = 1,
			.max_rd_atomic = 16,
			.max_dest_rd_atomic = 16,
			.av = e->av,
		};

		/* the transport calls back its owner: counters and frames are the worker's */
		if (droce_tqp_init(&qp->tqp, &a, e->sq_mem + (size_t)i * e->sq_size, e->sq_size,
				   &tp_ops, e->w[owner_of(e->n_workers, i)]) < 0)
			return -EINVAL;
		qp->tqp.owner = qp;
		qp->loc_slot = local_off(e, i, 0) / stride_of(e);
		qp->tqp.comp.retry_left = a.retry_cnt;
		qp->tqp.comp.rnr_left = a.rnr_retry;
		droce_tqp_set_state(&qp->tqp, DROCE_TQP_INIT, 0, 0);
		droce_tqp_set_state(&qp->tqp, DROCE_TQP_RTR, 0, o->remote_psn);
		droce_tqp_set_state(&qp->tqp, DROCE_TQP_RTS, o->psn, o->remote_psn);
	}
	return 0;
}

/* --count and --rate shared out between the workers (main thread, stopped). */
static void
shares_set(struct tp_engine *e)
{
	unsigned int i;

	for (i = 0; i < e->n_workers; i++) {
		e->w[i]->count = share_of(e, e->o.count, i);
		e->w[i]->rate = share_of(e, e->o.rate, i);
	}
}

static int
worker_create(struct tp_engine *e, unsigned int id, struct droce_port *port)
{
	struct tp_worker *w = rte_zmalloc("droce-testpmd-worker", sizeof(*w), RTE_CACHE_LINE_SIZE);
	char name[RTE_RING_NAMESIZE];
	bool shared = id > 0 && port == e->w[0]->pw.port;	/* one port: queue id of it */
	struct droce_port_worker_conf pc = {
		.port = port,
		.queue = (uint16_t)(shared ? id : 0),
		.sorter = shared ? &e->w[0]->pw : NULL,
		.handoff_slots = HANDOFF_RING,
		.tx_backlog = TX_BACKLOG,
		.name = name,
	};
	int ret;

	if (w == NULL)
		return -ENOMEM;
	e->w[id] = w;
	w->e = e;
	w->id = id;
	w->n_workers = e->n_workers;
	w->mem = e->mem;
	w->mem_len = e->mem_len;
	w->key = e->o.key;
	w->lcore = RTE_MAX_LCORE;
	/* its QPs: indices id, id + N, ... */
	w->act_mask = droce_pow2_at_least(e->o.qps / e->n_workers + 1) - 1;
	w->active = calloc((size_t)w->act_mask + 1, sizeof(*w->active));
	snprintf(name, sizeof(name), "tp_handoff_%u", id);
	ret = droce_port_worker_init(&w->pw, &pc);
	if (ret < 0)
		return ret;
	return w->active == NULL ? -ENOMEM : 0;
}

int
tp_engine_create(const struct tp_opts *o, struct droce_port *const *ports, struct tp_engine **out)
{
	struct tp_engine *e = calloc(1, sizeof(*e));
	unsigned int w;
	uint64_t i;
	int ret;

	if (e == NULL)
		return -ENOMEM;
	e->o = *o;
	e->n_workers = o->workers;
	droce_port_info(ports[0], &e->info);
	e->generator = o->mode < TP_RESPONDER;
	e->mem_len = o->mem;
	e->stride = stride_of(e);
	e->slots = local_slots(e);
	e->rspan = remote_span(e);
	e->mem = rte_zmalloc("droce-testpmd", e->mem_len, 4096);
	if (e->mem == NULL) {
		free(e);
		return -ENOMEM;
	}
	for (w = 0; w < e->n_workers; w++) {
		ret = worker_create(e, w, ports[w]);
		if (ret < 0)
			goto fail;
	}
	shares_set(e);
	for (i = 0; i < sizeof(pattern_twice); i++)
		pattern_twice[i] = (uint8_t)(i % PATTERN_PERIOD);
	for (i = 0; i < e->mem_len; i += PATTERN_PERIOD)
		memcpy(e->mem + i, pattern_twice, DROCE_MIN(e->mem_len - i, (uint64_t)PATTERN_PERIOD));

	if (o->mode != TP_RAW) {
		memcpy(e->av.smac, e->info.mac, 6);
		if (e->info.n_ipv4 > 0)
			droce_gid_from_ipv4(e->av.sgid, e->info.ipv4[0].addr);
		else if (e->info.n_ipv6 > 0)
			memcpy(e->av.sgid, e->info.ipv6[0].addr, 16);
		if (parse_gid(o->remote_ip, e->av.dgid) < 0) {
			fprintf(stderr, "droce-testpmd: bad --remote %s\n", o->remote_ip);
			ret = -EINVAL;
			goto fail;
		}
		e->av.ipv6 = !droce_gid_is_ipv4(e->av.dgid);
		e->av.hop_limit = 64;
		ret = resolve_peer(e, ports);
		if (ret == 0)
			ret = qps_create(e);
		if (ret < 0)
			goto fail;
		for (w = 0; w < e->n_workers; w++)
			template_init(e, e->w[w]);
	}
	*out = e;
	return 0;
fail:
	tp_engine_destroy(e);
	return ret;
}

void
tp_engine_destroy(struct tp_engine *e)
{
	unsigned int i;

	if (e == NULL)
		return;
	tp_engine_halt(e);
	for (i = 0; i < e->n_workers; i++) {
		struct tp_worker *w = e->w[i];

		if (w == NULL)
			continue;
		droce_port_worker_fini(&w->pw);
		free(w->active);
		rte_free(w);
	}
	rte_free(e->mem);
	for (i = 0; e->qps != NULL && i < e->o.qps; i++)
		droce_tqp_fini(&e->qps[i].tqp);
	free(e->qps);
	free(e->sq_mem);
	free(e);
}

/* ---- the poll loop (worker) ---- */

/* A frame of the burst, parsed, waiting for its QP's lines to arrive. */
struct rx_slot {
	struct tp_qp *qp;
	const uint8_t *frame;
	struct droce_pkt pkt;
};

/* The transport's stage: each parsed frame to its QP, in arrival order. */
static void
rx_serve(struct tp_worker *w, struct rx_slot *slot, unsigned int n, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		droce_tqp_rx(&slot[i].qp->tqp, &slot[i].pkt, slot[i].frame, now);
		activate(w, slot[i].qp);
	}
}

/*
 * Serve the @p n frames of @p pkts: ours to our QPs, the others' to their
 * owners. Stage by stage: the whole burst is parsed and its QPs' lines
 * prefetched before the transport runs on the first, so that with
 * thousands of QPs their misses overlap instead of coming one by one.
 */
static void
rx_frames(struct tp_worker *w, struct rte_mbuf **pkts, uint16_t n, uint64_t now,
	  unsigned int *work)
{
	struct tp_engine *e = w->e;
	struct rx_slot slot[BURST];
	uint64_t ok = 0, no_qp = 0;
	uint16_t i, handed = 0;
	unsigned int k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t len = rte_pktmbuf_pkt_len(m), idx;
		struct rx_slot *s = &slot[k];
		enum droce_wire_drop r;

		if (m->nb_segs > 1) {	/* jumbo frames on some PMDs: one copy */
			/* the copy's buffer is the worker's one: what waits goes first */
			rx_serve(w, slot, k, now);
			k = 0;
			s = &slot[0];
			frame = len <= sizeof(w->linear) ?
				rte_pktmbuf_read(m, 0, len, w->linear) : NULL;
		}
		r = frame == NULL ? DROCE_WIRE_DROP_TRUNC_L2 :
				    droce_pkt_parse_rx(&s->pkt, frame, len, len);
		if (r != DROCE_WIRE_OK) {
			atomic_store_explicit(&w->wire_drop[r], w->wire_drop[r] + 1,
					      memory_order_relaxed);
		} else if (e->qps != NULL &&
			   (idx = (s->pkt.dqpn - e->o.qpn_base) & DROCE_24BIT_MASK) < e->o.qps) {
			unsigned int to = owner_of(w->n_workers, idx);

			if (likely(to == w->id)) {
				ok++;
				s->qp = &e->qps[idx];
				s->frame = frame;
				droce_tqp_prefetch_rx(&s->qp->tqp, &s->pkt);
				__builtin_prefetch(&s->qp->active);
				k++;
			} else {
				/* held while its ring is full; the owner frees it */
				droce_port_worker_hand(&w->pw, &e->w[to]->pw, m, 0);
				pkts[i] = NULL;
				handed++;
			}
		} else {
			ok++;
			no_qp += e->qps != NULL;	/* raw mode has no QPs: just checks */
		}
	}
	rx_serve(w, slot, k, now);
	if (unlikely(handed > 0)) {	/* keep only what is still ours */
		uint16_t keep = 0;

		for (i = 0; i < n; i++)
			if (pkts[i] != NULL)
				pkts[keep++] = pkts[i];
		droce_port_worker_free_rx(&w->pw, pkts, keep);
	} else if (n > 0) {
		droce_port_worker_free_rx(&w->pw, pkts, n);	/* the next frames we send */
	}
	if (n > 0) {
		cnt_add(w, TP_CNT_RX_OK, ok);
		cnt_add(w, TP_CNT_RX_NO_QP, no_qp);
		*work += n;
	}
}

struct take_ctx {
	struct tp_worker *w;
	uint64_t now;
	unsigned int *work;
};

static void
rx_taken(void *arg, struct rte_mbuf **pkts, uint16_t n, unsigned int tags)
{
	struct take_ctx *c = arg;

	(void)tags;		/* no groups here; the SLOW ones came sorted */
	rx_frames(c->w, pkts, n, c->now, c->work);
}

static void
rx_burst(struct tp_worker *w, uint64_t now, unsigned int *work)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = droce_port_worker_rx(&w->pw, pkts, BURST);

	rx_frames(w, pkts, n, now, work);
	/* what other workers received for us (none where the link keeps queues apart) */
	if (w->n_workers > 1) {
		struct take_ctx c = { w, now, work };

		*work += droce_port_worker_held(&w->pw);	/* the queue waits for them */
		if (droce_port_worker_has_handed(&w->pw))
			(void)droce_port_worker_take(&w->pw, rx_taken, &c);
	}
}

/* Messages posted since start (the worker's own field: a relaxed load). */
static inline uint64_t
run_posted(struct tp_worker *w, uint64_t posted)
{
	return posted - atomic_load_explicit(&w->posted_at_start, memory_order_relaxed);
}

/* Will the generator post on this QP without a completion first? */
static inline __attribute__((always_inline)) bool
wants_post(struct tp_worker *w, struct tp_qp *qp, uint64_t posted)
{
	const struct tp_engine *e = w->e;

	return e->generator && atomic_load_explicit(&w->running, memory_order_relaxed) &&
	       qp->outstanding < e->o.depth && qp->tqp.state == DROCE_TQP_RTS &&
	       (e->o.count == 0 || run_posted(w, posted) < w->count);
}

/* ... and may it post now (the rate limit)? */
static bool
may_post(struct tp_worker *w, struct tp_qp *qp, uint64_t now, uint64_t posted)
{
	return wants_post(w, qp, posted) &&
	       (w->e->o.rate == 0 || run_posted(w, posted) * 1000000000ull <
					     (now - w->run_start) * w->rate);
}

static void
post_one(struct tp_worker *wk, struct tp_qp *qp)
{
	struct tp_engine *e = wk->e;
	uint32_t qi = (uint32_t)(qp - e->qps);
	struct droce_send_wqe *w = &wk->tmpl;

	w->wr_id = qp->seq;
	w->sge[0].addr = qp->loc_slot * e->stride;		/* local_off(e, qi, qp->seq) */
	w->remote_addr = e->o.raddr + qi * e->o.rstep + qp->rem_slot * e->stride; /* remote_off() */
	if (e->o.mode == TP_CSWAP) {	/* a chain: each swap finds the one before */
		w->compare_add = atomic_expect(e, qi, qp->seq);
		w->swap = w->compare_add + 1;
	}
	if (e->o.mode == TP_UD)
		w->ud.qpn = qp->tqp.attr.dest_qpn;
	if (droce_tqp_post_send(&qp->tqp, w) == 0) {
		qp->seq++;
		qp->outstanding++;
		/* the next message's slots, as local_off() and remote_off() give them */
		if (++qp->loc_i == e->o.depth) {
			qp->loc_i = 0;
			qp->loc_slot = qi * (uint64_t)e->o.depth % e->slots;
		} else if (++qp->loc_slot == e->slots) {
			qp->loc_slot = 0;
		}
		if (++qp->rem_slot == e->rspan)
			qp->rem_slot = 0;
	}
}

static unsigned int
serve_active(struct tp_worker *w, uint64_t now)
{
	struct tp_engine *e = w->e;
	uint64_t posted = atomic_load_explicit(&w->cnt[TP_CNT_POSTED], memory_order_relaxed);
	uint64_t posted0 = posted;
	unsigned int work = 0;
	uint32_t i, n = w->act_tail - w->act_head;

	/* a full port queue: hold on until it drains */
	if (droce_port_worker_tx_room(&w->pw) <= BURST)
		return 1;
	/* completions during the walk may append: they are served next pass */
	for (i = 0; i < n; i++) {
		uint32_t idx;
		struct tp_qp *qp;

		/*
		 * Filled during the walk: the rest wait for the next pass. A walk
		 * over thousands of QPs would otherwise overflow the backlog and
		 * lose frames, each then costing a retransmit timeout.
		 */
		if (droce_port_worker_tx_room(&w->pw) < POLL_BUDGET)
			break;
		idx = w->active[w->act_head++ & w->act_mask];
		qp = &e->qps[idx];
		while (may_post(w, qp, now, posted)) {
			uint64_t before = qp->seq;

			post_one(w, qp);
			if (qp->seq == before)
				break;
			posted++;
		}
		work += droce_tqp_poll(&qp->tqp, now, POLL_BUDGET);
		if (droce_tqp_has_work(&qp->tqp) || wants_post(w, qp, posted))
			w->active[w->act_tail++ & w->act_mask] = idx;
		else
			qp->active = false;
	}
	cnt_add(w, TP_CNT_POSTED, posted - posted0);
	return work + (unsigned int)(posted - posted0);
}

static void
timers(struct tp_worker *w, uint64_t now)
{
	struct tp_engine *e = w->e;
	uint32_t i;

	for (i = w->id; i < e->o.qps; i += e->n_workers) {
		struct tp_qp *qp = &e->qps[i];

		/* one line read per QP unless a deadline passed: thousands are scanned */
		if (droce_tqp_next_deadline(&qp->tqp) > now)
			continue;
		droce_tqp_timer(&qp->tqp, now);
		if (droce_tqp_has_work(&qp->tqp))
			activate(w, qp);
	}
}

/* Follow the main thread's start/stop. */
static void
follow_run_state(struct tp_worker *w, uint64_t now)
{
	struct tp_engine *e = w->e;
	bool want = atomic_load_explicit(&e->want_run, memory_order_relaxed);
	uint32_t i;

	if (want == atomic_load_explicit(&w->running, memory_order_relaxed))
		return;
	if (want) {
		w->run_start = now;
		atomic_store_explicit(&w->posted_at_start,
				      atomic_load_explicit(&w->cnt[TP_CNT_POSTED],
							   memory_order_relaxed),
				      memory_order_relaxed);
		for (i = w->id; e->generator && i < e->o.qps; i += e->n_workers)
			activate(w, &e->qps[i]);
	}
	atomic_store_explicit(&w->running, want, memory_order_release);
}

static int
engine_run(void *arg)
{
	struct tp_worker *w = arg;
	struct tp_engine *e = w->e;
	uint64_t last_work = droce_now_ns();

	while (!atomic_load_explicit(&e->quit, memory_order_relaxed)) {
		uint64_t now = droce_now_ns();
		unsigned int work = 0;

		follow_run_state(w, now);
		rx_burst(w, now, &work);
		if (e->qps != NULL) {
			work += serve_active(w, now);
			if (now >= w->next_timer) {
				timers(w, now);
				w->next_timer = now + e->timer_ns;
			}
		}
		droce_port_worker_flush(&w->pw);
		if (work > 0)
			last_work = now;
		else
			droce_idle(e->o.idle, now, last_work);
	}
	return 0;
}

/* ---- control (main thread) ---- */

/*
 * A worker beyond EAL's lcores. Registered, it has an lcore id and so the
 * mempool's per-lcore cache: without one every mbuf it receives or sends
 * is an operation on the pool's shared ring.
 */
static void *
engine_thread(void *w)
{
	bool registered = rte_thread_register() == 0;

	engine_run(w);
	if (registered)
		rte_thread_unregister();
	return NULL;
}

int
tp_engine_launch(struct tp_engine *e)
{
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0), i;
	int ret = 0;

	for (i = 0; i < e->n_workers && ret == 0; i++) {
		struct tp_worker *w = e->w[i];

		w->lcore = lcore;
		ret = lcore < RTE_MAX_LCORE ? rte_eal_remote_launch(engine_run, w, lcore) :
		      -pthread_create(&w->thread, NULL, engine_thread, w);
		w->launched = ret == 0;
		if (lcore < RTE_MAX_LCORE)
			lcore = rte_get_next_lcore(lcore, 1, 0);
	}
	if (ret < 0)
		tp_engine_halt(e);
	return ret;
}

void
tp_engine_halt(struct tp_engine *e)
{
	unsigned int i;

	atomic_store(&e->quit, true);
	for (i = 0; i < e->n_workers; i++) {
		struct tp_worker *w = e->w[i];

		if (w == NULL || !w->launched)
			continue;
		if (w->lcore < RTE_MAX_LCORE)
			rte_eal_wait_lcore(w->lcore);
		else
			pthread_join(w->thread, NULL);
		w->launched = false;
		atomic_store(&w->running, false);
	}
}

/* Have all launched workers answered @p want? */
static bool
all_running(const struct tp_engine *e, bool want)
{
	unsigned int i;

	for (i = 0; i < e->n_workers; i++)
		if (e->w[i]->launched && atomic_load(&e->w[i]->running) != want)
			return false;
	return true;
}

static void
wait_running(struct tp_engine *e, bool want)
{
	int i;

	for (i = 0; i < 1000 && !all_running(e, want); i++)
		usleep(1000);
}

void
tp_engine_start(struct tp_engine *e)
{
	if (!e->w[0]->launched)
		return;
	atomic_store(&e->want_run, true);
	wait_running(e, true);
}

void
tp_engine_stop(struct tp_engine *e)
{
	int i;

	atomic_store(&e->want_run, false);
	wait_running(e, false);
	if (!e->w[0]->launched)
		return;
	/* let what is in flight complete (up to a second) */
	for (i = 0; i < 100; i++) {
		struct tp_snapshot s;

		tp_engine_snapshot(e, &s);
		if (s.outstanding == 0)
			break;
		usleep(10000);
	}
}

bool
tp_engine_running(const struct tp_engine *e)
{
	unsigned int i;

	for (i = 0; i < e->n_workers; i++)
		if (atomic_load(&e->w[i]->running))
			return true;
	return false;
}

int
tp_engine_set(struct tp_engine *e, const char *name, uint64_t v)
{
	unsigned int i;

	if (tp_engine_running(e))
		return -EBUSY;
	/* the workers read these only while running */
	if (strcmp(name, "size") == 0 && v <= e->mem_len && v <= UINT32_MAX &&
	    (e->o.mode == TP_WRITE || e->o.mode == TP_SEND || e->o.mode == TP_READ ||
	     e->o.mode == TP_UD)) {
		e->o.size = (uint32_t)v;
		for (i = 0; i < e->n_workers; i++)
			template_init(e, e->w[i]);
	} else if (strcmp(name, "depth") == 0 && v >= 1 && v <= e->sq_size) {
		e->o.depth = (uint32_t)v;
	} else if (strcmp(name, "rate") == 0) {
		e->o.rate = v;
	} else if (strcmp(name, "count") == 0) {
		e->o.count = v;
	} else {
		return -EINVAL;
	}
	shares_set(e);
	return 0;
}

void
tp_engine_snapshot(struct tp_engine *e, struct tp_snapshot *s)
{
	unsigned int c, k;
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->t_ns = droce_now_ns();
	s->workers = e->n_workers;
	for (k = 0; k < e->n_workers; k++) {
		struct tp_worker *w = e->w[k];

		uint64_t pc[DROCE_PORT_WORKER_CNT_COUNT];

		droce_port_worker_counters(&w->pw, pc);
		for (c = 0; c < TP_CNT_COUNT; c++)
			s->wcnt[k][c] = atomic_load_explicit(&w->cnt[c], memory_order_relaxed);
		/* the data path's own, counted by the port worker */
		s->wcnt[k][TP_CNT_RX_FRAMES] = pc[DROCE_PORT_WORKER_CNT_RX_FRAMES];
		s->wcnt[k][TP_CNT_TX_FRAMES] = pc[DROCE_PORT_WORKER_CNT_TX_FRAMES];
		s->wcnt[k][TP_CNT_TX_FULL] = pc[DROCE_PORT_WORKER_CNT_TX_FULL];
		s->wcnt[k][TP_CNT_HANDOFF] = pc[DROCE_PORT_WORKER_CNT_HANDOFF];
		s->wcnt[k][TP_CNT_HANDOFF_HELD] = pc[DROCE_PORT_WORKER_CNT_HANDOFF_HELD];
		s->wcnt[k][TP_CNT_HANDOFF_FULL] = pc[DROCE_PORT_WORKER_CNT_HANDOFF_DROP];
		for (c = 0; c < TP_CNT_COUNT; c++)
			s->cnt[c] += s->wcnt[k][c];
		for (c = 0; c < DROCE_WIRE_DROP_COUNT; c++)
			s->wire_drop[c] += atomic_load_explicit(&w->wire_drop[c],
								memory_order_relaxed);
		s->run_posted += run_posted(w, s->wcnt[k][TP_CNT_POSTED]);
	}
	/* the workers' own fields: a report may lag or lead by a pass */
	for (i = 0; e->qps != NULL && i < e->o.qps; i++) {
		const volatile struct tp_qp *qp = &e->qps[i];

		for (c = 0; c < DROCE_TQP_CNT_COUNT; c++)
			s->tqp[c] += qp->tqp.cnt[c];
		s->outstanding += qp->outstanding;
	}
	memcpy(&s->atomic_word, (const void *)e->mem, 8);
}

uint64_t
tp_engine_qp_bytes(const struct tp_engine *e)
{
	/* with the responder's READ/atomic ring, allocated apart */
	return sizeof(struct tp_qp) + (uint64_t)e->sq_size * sizeof(struct droce_tqp_swqe) +
	       (e->qps != NULL ? (uint64_t)e->qps[0].tqp.resp.res_slots : 0) *
	       sizeof(struct droce_tqp_res) +
	       sizeof(uint32_t);
}

const struct tp_opts *
tp_engine_opts(const struct tp_engine *e)
{
	return &e->o;
}

struct droce_port *
tp_engine_port(const struct tp_engine *e, unsigned int w)
{
	return w < e->n_workers ? e->w[w]->pw.port : NULL;
}
