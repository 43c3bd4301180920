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

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "testpmd.h"

#define BURST		32
#define TX_BACKLOG	1024		/* frames held while the port's queue is full */
#define POLL_BUDGET	16		/* packets per QP per pass: fairness */
#define TIMER_NS	(1000 * 1000)	/* timer scan period */

struct tp_qp {
	struct droce_tqp tqp;
	uint32_t outstanding;		/* messages posted, not completed */
	uint64_t seq;			/* messages posted */
	bool active;			/* on the active list */
};

struct tp_engine {
	struct tp_opts o;
	struct droce_port *port;
	struct droce_port_info info;
	uint8_t *mem;
	uint64_t mem_len;
	struct tp_qp *qps;
	struct droce_tqp_swqe *sq_mem;
	uint32_t sq_size;
	uint32_t *active;		/* QP indices */
	uint32_t n_active;
	bool generator;
	struct droce_av av;		/* to the peer */
	struct droce_send_wqe tmpl;	/* what every posted message starts from */

	/*
	 * Frames to send. When the PMD's queue is full they wait here and the
	 * QPs stop transmitting (backpressure): dropping them would turn a
	 * full queue into loss, retransmissions and, with thousands of QPs,
	 * a storm that ends in retry exhaustion.
	 */
	struct rte_mbuf *tx[TX_BACKLOG];
	unsigned int n_tx;
	uint8_t linear[DROCE_MAX_FRAME_BYTES];

	atomic_bool quit;
	bool launched;
	unsigned int lcore;		/* RTE_MAX_LCORE: on a thread */
	pthread_t thread;
	atomic_bool want_run;		/* set by the main thread */
	atomic_bool running;		/* the worker's answer */
	uint64_t run_start;		/* worker: when start took effect */
	_Atomic uint64_t posted_at_start;
	uint64_t next_timer;

	_Atomic uint64_t cnt[TP_CNT_COUNT];
	_Atomic uint64_t wire_drop[DROCE_WIRE_DROP_COUNT];
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

/* Single writer: a plain add, no locked instruction, readers see it whole. */
static inline void
cnt_add(struct tp_engine *e, enum tp_counter c, uint64_t n)
{
	atomic_store_explicit(&e->cnt[c], atomic_load_explicit(&e->cnt[c], memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline void
activate(struct tp_engine *e, struct tp_qp *qp)
{
	if (!qp->active) {
		qp->active = true;
		e->active[e->n_active++] = (uint32_t)(qp - e->qps);
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

static uint64_t
local_off(const struct tp_engine *e, uint32_t qi, uint64_t seq)
{
	uint64_t stride = stride_of(e);

	return ((qi * (uint64_t)e->o.depth + seq % e->o.depth) % (e->mem_len / stride)) * stride;
}

static uint64_t
remote_span(const struct tp_engine *e)
{
	return DROCE_MAX(e->o.rlen / stride_of(e), 1u);
}

static uint64_t
remote_off(const struct tp_engine *e, uint64_t seq)
{
	return (seq % remote_span(e)) * stride_of(e);
}

/*
 * The value atomic @p seq finds at the peer, one QP adding 1 (or swapping
 * in one more) each time to words that started as the pattern.
 */
static uint64_t
atomic_expect(const struct tp_engine *e, uint64_t seq)
{
	return pattern_word(remote_off(e, seq)) + seq / remote_span(e);
}

/* --check: is what message @p seq of QP @p qi brought back what the peer holds? */
static bool
result_ok(const struct tp_engine *e, uint32_t qi, uint64_t seq, uint32_t opcode)
{
	const uint8_t *got = e->mem + local_off(e, qi, seq);
	uint64_t word;

	if (opcode == IBV_WC_RDMA_READ)
		return is_pattern(got, remote_off(e, seq), e->o.size);
	if (opcode != IBV_WC_FETCH_ADD && opcode != IBV_WC_COMP_SWAP)
		return true;
	memcpy(&word, got, sizeof(word));
	return word == atomic_expect(e, seq);
}

/* ---- the transport's ops ---- */

static enum droce_mem_err
ops_mem_resolve(void *ctx, struct droce_tqp *t, uint32_t key, uint64_t va, uint32_t len,
		uint32_t access, uint8_t **host)
{
	struct tp_engine *e = ctx;

	(void)t;
	(void)access;		/* the one region grants everything */
	if (key != e->o.key)
		return DROCE_MEM_BAD_KEY;
	if (va > e->mem_len || len > e->mem_len - va)
		return DROCE_MEM_RANGE;
	*host = e->mem + va;
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
	struct tp_engine *e = ctx;

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
	struct tp_engine *e = ctx;
	struct tp_qp *qp = t->owner;

	if (c->status != IBV_WC_SUCCESS) {
		cnt_add(e, TP_CNT_ERRORS, 1);
	} else {
		/* a requester's WRITE/SEND completion carries no byte count */
		bool counted = recv || c->opcode == IBV_WC_RDMA_READ ||
			       c->opcode == IBV_WC_FETCH_ADD || c->opcode == IBV_WC_COMP_SWAP;

		cnt_add(e, TP_CNT_MSGS, 1);
		cnt_add(e, TP_CNT_BYTES, counted ? c->byte_len : e->tmpl.length);
		if (e->o.check && !recv && !result_ok(e, (uint32_t)(qp - e->qps), c->wr_id, c->opcode))
			cnt_add(e, TP_CNT_BAD_DATA, 1);
	}
	if (!recv && qp->outstanding > 0) {
		qp->outstanding--;
		activate(e, qp);
	}
	return 0;
}

/* Hand the PMD what it takes; keep the rest in order. */
static void
tx_flush(struct tp_engine *e)
{
	uint16_t sent;

	if (e->n_tx == 0)
		return;
	sent = droce_port_tx_try(e->port, e->tx, (uint16_t)DROCE_MIN(e->n_tx, UINT16_MAX));
	cnt_add(e, TP_CNT_TX_FRAMES, sent);
	if (sent < e->n_tx)
		memmove(e->tx, e->tx + sent, (e->n_tx - sent) * sizeof(e->tx[0]));
	e->n_tx -= sent;
}

static void
ops_xmit(void *ctx, struct droce_tqp *t, struct droce_pkt *pkt, const struct droce_iov *iov,
	 unsigned int n_iov)
{
	struct tp_engine *e = ctx;
	struct rte_mbuf *m = droce_port_alloc(e->port);
	int len;

	(void)t;
	if (m == NULL) {
		cnt_add(e, TP_CNT_TX_NOMBUF, 1);
		return;		/* the transport recovers as from a loss */
	}
	len = droce_tqp_frame_build(pkt, iov, n_iov, rte_pktmbuf_mtod(m, uint8_t *),
				    rte_pktmbuf_tailroom(m));
	if (len < 0) {
		rte_pktmbuf_free(m);
		cnt_add(e, TP_CNT_TX_NOMBUF, 1);
		return;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	if (e->n_tx == TX_BACKLOG)
		tx_flush(e);
	if (e->n_tx == TX_BACKLOG) {	/* still full: only now a loss */
		rte_pktmbuf_free(m);
		cnt_add(e, TP_CNT_TX_FULL, 1);
		return;
	}
	e->tx[e->n_tx++] = m;
	if (e->n_tx % BURST == 0)
		tx_flush(e);		/* keep the PMD fed during a long pass */
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

/* The WQE every message starts from; post_one() fills in the addresses. */
static void
template_init(struct tp_engine *e)
{
	struct droce_send_wqe *w = &e->tmpl;
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

static int
resolve_peer(struct tp_engine *e)
{
	uint64_t until = droce_now_ns() + 5ull * 1000 * 1000 * 1000;
	struct rte_mbuf *junk[BURST];
	int ret;

	/* the port answers and learns from what it receives: poll while waiting */
	while ((ret = droce_port_resolve(e->port, e->av.dgid, e->av.dmac)) == -EAGAIN &&
	       droce_now_ns() < until) {
		uint16_t n = droce_port_rx_burst(e->port, junk, BURST);

		rte_pktmbuf_free_bulk(junk, n);
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
	e->qps = calloc(o->qps, sizeof(*e->qps));
	e->sq_mem = calloc((size_t)o->qps * e->sq_size, sizeof(*e->sq_mem));
	e->active = calloc(o->qps, sizeof(*e->active));
	if (e->qps == NULL || e->sq_mem == NULL || e->active == NULL)
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
			.timeout = 14,		/* 67 ms */
			.retry_cnt = 7,
			.rnr_retry = 7,
			.min_rnr_timer = 1,
			.max_rd_atomic = 16,
			.max_dest_rd_atomic = 16,
			.av = e->av,
		};

		if (droce_tqp_init(&qp->tqp, &a, e->sq_mem + (size_t)i * e->sq_size, e->sq_size,
				   &tp_ops, e) < 0)
			return -EINVAL;
		qp->tqp.owner = qp;
		qp->tqp.comp.retry_left = a.retry_cnt;
		qp->tqp.comp.rnr_left = a.rnr_retry;
		droce_tqp_set_state(&qp->tqp, DROCE_TQP_INIT, 0, 0);
		droce_tqp_set_state(&qp->tqp, DROCE_TQP_RTR, 0, o->remote_psn);
		droce_tqp_set_state(&qp->tqp, DROCE_TQP_RTS, o->psn, o->remote_psn);
	}
	return 0;
}

int
tp_engine_create(const struct tp_opts *o, struct droce_port *port, struct tp_engine **out)
{
	struct tp_engine *e = calloc(1, sizeof(*e));
	uint64_t i;
	int ret;

	if (e == NULL)
		return -ENOMEM;
	e->o = *o;
	e->port = port;
	droce_port_info(port, &e->info);
	e->generator = o->mode < TP_RESPONDER;
	e->mem_len = o->mem;
	e->mem = rte_zmalloc("droce-testpmd", e->mem_len, 4096);
	if (e->mem == NULL) {
		free(e);
		return -ENOMEM;
	}
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
		ret = resolve_peer(e);
		if (ret == 0)
			ret = qps_create(e);
		if (ret < 0)
			goto fail;
		template_init(e);
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
	if (e == NULL)
		return;
	tp_engine_halt(e);
	rte_pktmbuf_free_bulk(e->tx, e->n_tx);
	rte_free(e->mem);
	free(e->qps);
	free(e->sq_mem);
	free(e->active);
	free(e);
}

/* ---- the poll loop (worker) ---- */

static void
rx_burst(struct tp_engine *e, uint64_t now, unsigned int *work)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = droce_port_rx_burst(e->port, pkts, BURST), i;
	uint64_t ok = 0, no_qp = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t len = rte_pktmbuf_pkt_len(m), idx;
		struct droce_pkt pkt;
		enum droce_wire_drop r;

		if (m->nb_segs > 1)	/* jumbo frames on some PMDs: one copy */
			frame = len <= sizeof(e->linear) ?
				rte_pktmbuf_read(m, 0, len, e->linear) : NULL;
		r = frame == NULL ? DROCE_WIRE_DROP_TRUNC_L2 : droce_pkt_parse(&pkt, frame, len, len);
		if (r != DROCE_WIRE_OK) {
			atomic_store_explicit(&e->wire_drop[r], e->wire_drop[r] + 1,
					      memory_order_relaxed);
		} else if (e->qps != NULL &&
			   (idx = (pkt.dqpn - e->o.qpn_base) & DROCE_24BIT_MASK) < e->o.qps) {
			ok++;
			droce_tqp_rx(&e->qps[idx].tqp, &pkt, frame, now);
			activate(e, &e->qps[idx]);
		} else {
			ok++;
			no_qp += e->qps != NULL;	/* raw mode has no QPs: just checks */
		}
	}
	if (n > 0) {
		rte_pktmbuf_free_bulk(pkts, n);	/* one pool access for the burst */
		cnt_add(e, TP_CNT_RX_FRAMES, n);
		cnt_add(e, TP_CNT_RX_OK, ok);
		cnt_add(e, TP_CNT_RX_NO_QP, no_qp);
		*work += n;
	}
}

/* Messages posted since start (the worker's own field: a relaxed load). */
static inline uint64_t
run_posted(struct tp_engine *e, uint64_t posted)
{
	return posted - atomic_load_explicit(&e->posted_at_start, memory_order_relaxed);
}

/* Will the generator post on this QP without a completion first? */
static bool
wants_post(struct tp_engine *e, struct tp_qp *qp, uint64_t posted)
{
	return e->generator && atomic_load_explicit(&e->running, memory_order_relaxed) &&
	       qp->outstanding < e->o.depth && qp->tqp.state == DROCE_TQP_RTS &&
	       (e->o.count == 0 || run_posted(e, posted) < e->o.count);
}

/* ... and may it post now (the rate limit)? */
static bool
may_post(struct tp_engine *e, struct tp_qp *qp, uint64_t now, uint64_t posted)
{
	return wants_post(e, qp, posted) &&
	       (e->o.rate == 0 || run_posted(e, posted) * 1000000000ull <
				       (now - e->run_start) * e->o.rate);
}

static void
post_one(struct tp_engine *e, struct tp_qp *qp)
{
	uint32_t qi = (uint32_t)(qp - e->qps);
	struct droce_send_wqe *w = &e->tmpl;

	w->wr_id = qp->seq;
	w->sge[0].addr = local_off(e, qi, qp->seq);
	w->remote_addr = e->o.raddr + remote_off(e, qp->seq);
	if (e->o.mode == TP_CSWAP) {	/* a chain: each swap finds the one before */
		w->compare_add = atomic_expect(e, qp->seq);
		w->swap = w->compare_add + 1;
	}
	if (e->o.mode == TP_UD)
		w->ud.qpn = qp->tqp.attr.dest_qpn;
	if (droce_tqp_post_send(&qp->tqp, w) == 0) {
		qp->seq++;
		qp->outstanding++;
	}
}

static unsigned int
serve_active(struct tp_engine *e, uint64_t now)
{
	uint64_t posted = atomic_load_explicit(&e->cnt[TP_CNT_POSTED], memory_order_relaxed);
	uint64_t posted0 = posted;
	unsigned int work = 0;
	uint32_t i, keep = 0, n = e->n_active;

	/* a full port queue: hold on until it drains */
	if (e->n_tx >= TX_BACKLOG - BURST)
		return 1;
	/* completions during the walk may append: they are served next pass */
	for (i = 0; i < n; i++) {
		struct tp_qp *qp = &e->qps[e->active[i]];

		while (may_post(e, qp, now, posted)) {
			uint64_t before = qp->seq;

			post_one(e, qp);
			if (qp->seq == before)
				break;
			posted++;
		}
		work += droce_tqp_poll(&qp->tqp, now, POLL_BUDGET);
		if (droce_tqp_has_work(&qp->tqp) || wants_post(e, qp, posted))
			e->active[keep++] = e->active[i];
		else
			qp->active = false;
	}
	/* keep what was appended during the walk */
	for (; i < e->n_active; i++)
		e->active[keep++] = e->active[i];
	e->n_active = keep;
	cnt_add(e, TP_CNT_POSTED, posted - posted0);
	return work + (unsigned int)(posted - posted0);
}

static void
timers(struct tp_engine *e, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < e->o.qps; i++) {
		struct tp_qp *qp = &e->qps[i];

		if (qp->tqp.comp.timer == 0 && qp->tqp.comp.rnr_until == 0)
			continue;
		droce_tqp_timer(&qp->tqp, now);
		if (droce_tqp_has_work(&qp->tqp))
			activate(e, qp);
	}
}

/* Follow the main thread's start/stop. */
static void
follow_run_state(struct tp_engine *e, uint64_t now)
{
	bool want = atomic_load_explicit(&e->want_run, memory_order_relaxed);
	uint32_t i;

	if (want == atomic_load_explicit(&e->running, memory_order_relaxed))
		return;
	if (want) {
		e->run_start = now;
		atomic_store_explicit(&e->posted_at_start,
				      atomic_load_explicit(&e->cnt[TP_CNT_POSTED],
							   memory_order_relaxed),
				      memory_order_relaxed);
		for (i = 0; e->generator && i < e->o.qps; i++)
			activate(e, &e->qps[i]);
	}
	atomic_store_explicit(&e->running, want, memory_order_release);
}

static int
engine_run(void *arg)
{
	struct tp_engine *e = arg;
	uint64_t last_work = droce_now_ns();

	while (!atomic_load_explicit(&e->quit, memory_order_relaxed)) {
		uint64_t now = droce_now_ns();
		unsigned int work = 0;

		follow_run_state(e, now);
		rx_burst(e, now, &work);
		if (e->qps != NULL) {
			work += serve_active(e, now);
			if (now >= e->next_timer) {
				timers(e, now);
				e->next_timer = now + TIMER_NS;
			}
		}
		tx_flush(e);
		if (work > 0)
			last_work = now;
		else
			droce_idle(e->o.idle, now, last_work);
	}
	return 0;
}

/* ---- control (main thread) ---- */

static void *
engine_thread(void *e)
{
	engine_run(e);
	return NULL;
}

int
tp_engine_launch(struct tp_engine *e)
{
	int ret;

	e->lcore = rte_get_next_lcore(-1, 1, 0);
	ret = e->lcore < RTE_MAX_LCORE ? rte_eal_remote_launch(engine_run, e, e->lcore) :
	      -pthread_create(&e->thread, NULL, engine_thread, e);
	e->launched = ret == 0;
	return ret;
}

void
tp_engine_halt(struct tp_engine *e)
{
	if (!e->launched)
		return;
	atomic_store(&e->quit, true);
	if (e->lcore < RTE_MAX_LCORE)
		rte_eal_wait_lcore(e->lcore);
	else
		pthread_join(e->thread, NULL);
	e->launched = false;
	atomic_store(&e->running, false);
}

static void
wait_running(struct tp_engine *e, bool want)
{
	int i;

	for (i = 0; i < 1000 && atomic_load(&e->running) != want; i++)
		usleep(1000);
}

void
tp_engine_start(struct tp_engine *e)
{
	if (!e->launched)
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
	if (!e->launched)
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
	return atomic_load(&e->running);
}

int
tp_engine_set(struct tp_engine *e, const char *name, uint64_t v)
{
	if (tp_engine_running(e))
		return -EBUSY;
	/* the worker reads these only while running */
	if (strcmp(name, "size") == 0 && v <= e->mem_len && v <= UINT32_MAX &&
	    (e->o.mode == TP_WRITE || e->o.mode == TP_SEND || e->o.mode == TP_READ ||
	     e->o.mode == TP_UD)) {
		e->o.size = (uint32_t)v;
		template_init(e);
	} else if (strcmp(name, "depth") == 0 && v >= 1 && v <= e->sq_size) {
		e->o.depth = (uint32_t)v;
	} else if (strcmp(name, "rate") == 0) {
		e->o.rate = v;
	} else if (strcmp(name, "count") == 0) {
		e->o.count = v;
	} else {
		return -EINVAL;
	}
	return 0;
}

void
tp_engine_snapshot(struct tp_engine *e, struct tp_snapshot *s)
{
	unsigned int c;
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->t_ns = droce_now_ns();
	for (c = 0; c < TP_CNT_COUNT; c++)
		s->cnt[c] = atomic_load_explicit(&e->cnt[c], memory_order_relaxed);
	for (c = 0; c < DROCE_WIRE_DROP_COUNT; c++)
		s->wire_drop[c] = atomic_load_explicit(&e->wire_drop[c], memory_order_relaxed);
	/* the worker's own fields: a report may lag or lead by a pass */
	for (i = 0; e->qps != NULL && i < e->o.qps; i++) {
		const volatile struct tp_qp *qp = &e->qps[i];

		for (c = 0; c < DROCE_TQP_CNT_COUNT; c++)
			s->tqp[c] += qp->tqp.cnt[c];
		s->outstanding += qp->outstanding;
	}
	s->run_posted = run_posted(e, s->cnt[TP_CNT_POSTED]);
	memcpy(&s->atomic_word, (const void *)e->mem, 8);
}

uint64_t
tp_engine_qp_bytes(const struct tp_engine *e)
{
	return sizeof(struct tp_qp) + (uint64_t)e->sq_size * sizeof(struct droce_tqp_swqe) +
	       sizeof(uint32_t);
}

const struct tp_opts *
tp_engine_opts(const struct tp_engine *e)
{
	return &e->o;
}
