/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_droce_fault, a vdev PMD that wraps another ethdev and injects loss,
 * duplication, reordering, corruption and delay, and models a switch's
 * bottleneck queue that drops and marks ECN (droce_fault.h; the queue's
 * model is fault_bottleneck.c).
 *
 * Each queue has one fault stage per direction: a PRNG stream, a FIFO of
 * frames with the time each is due, and a few frames held back for
 * reordering. RX pulls a burst from the wrapped port, runs each frame
 * through the stage and returns the frames that are due; TX runs the
 * caller's frames through the stage and pushes the due ones to the wrapped
 * port, keeping those it refuses for the next call (so a slow wrapped port
 * shows as refused frames here, never as loss). A direction without faults
 * is a straight call into the wrapped port.
 *
 * The control path (configure, start, queues, MAC, MTU, filters) is
 * forwarded to the wrapped port. DPDK 22.11 from Debian installs no driver
 * SDK headers: pmd/fault/sdk/ holds the three this file needs, taken
 * unchanged from DPDK 22.11.11 (see sdk/README).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <rte_cycles.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "droce_fault.h"
#include "fault_bottleneck.h"

RTE_LOG_REGISTER(fault_logtype, pmd.droce.fault, NOTICE);
#define FAULT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, fault_logtype, DROCE_FAULT_DRIVER ": " fmt "\n", ##__VA_ARGS__)

#define FAULT_MAX_QUEUES	16
#define FIFO_SIZE		4096	/* frames in flight per stage (power of 2) */
#define MAX_HELD		16	/* frames held back for reordering per stage */
#define BURST			64
#define REORDER_HOLD_US		1000	/* a held frame waits at most this (+ delay) */
/* a frame can put 2 + MAX_HELD into the FIFO: itself, a duplicate, the held ones */
#define FIFO_RESERVE		(2 + MAX_HELD)

#define ARG_PORT	"port"
#define ARG_SEED	"seed"
#define ARG_LOSS	"loss"
#define ARG_DUP		"dup"
#define ARG_REORDER	"reorder"
#define ARG_CORRUPT	"corrupt"
#define ARG_DELAY	"delay_us"
#define ARG_DIR		"dir"
#define ARG_RATE	"rate"
#define ARG_QUEUE	"queue"
#define ARG_ECN_MIN	"ecn_min"
#define ARG_ECN_MAX	"ecn_max"
#define ARG_ECN_PROB	"ecn_prob"
#define ARG_HOLD	"hold"
#define ARG_ECN_AT	"ecn_at"

static const char *const valid_args[] = {
	ARG_PORT, ARG_SEED, ARG_LOSS, ARG_DUP, ARG_REORDER, ARG_CORRUPT, ARG_DELAY, ARG_DIR,
	ARG_RATE, ARG_QUEUE, ARG_ECN_MIN, ARG_ECN_MAX, ARG_ECN_PROB, ARG_ECN_AT, ARG_HOLD, NULL
};

#define BN_QUEUE_DEFAULT	(1u << 20)	/* bytes: a shallow-buffered switch's port */

enum { DIR_RX, DIR_TX };

struct fault_params {
	uint64_t seed;
	/* probabilities as thresholds on a 32-bit draw: P * 2^32, 2^32 = always */
	uint64_t loss, dup, reorder, corrupt;
	uint64_t delay_us;
	bool dir[2];
	struct fault_bn_params bn;
};

/* The bottleneck of one direction, shared by its queues (their lcores). */
struct fault_link {
	rte_spinlock_t lock;
	struct fault_bn bn;
};

struct fault_frame {
	struct rte_mbuf *m;
	uint64_t due;			/* TSC */
	uint64_t left;			/* TSC: it left the bottleneck's queue */
	int32_t ecn_at;			/* ecn_at=dequeue: its IP header, -1 none */
	bool ect;
};

struct fault_held {
	struct rte_mbuf *m;
	uint32_t after;			/* frames still to overtake it */
	uint64_t deadline;		/* TSC: released then at the latest */
};

/* One direction of one queue. */
struct fault_stage {
	bool active;			/* any fault configured for this direction */
	uint64_t rng;
	uint64_t delay_cyc;
	uint64_t hold_cyc;
	const struct fault_params *p;
	struct fault_link *link;	/* the bottleneck, or NULL */
	struct rte_mempool *mp;		/* copies (RX: the queue's pool; TX: the frame's) */
	uint32_t head, tail;		/* FIFO indices, free-running */
	uint32_t n_held;
	struct fault_held held[MAX_HELD];
	struct droce_fault_dir_stats st;
	uint64_t out_bytes;
	struct fault_frame fifo[FIFO_SIZE];
};

struct fault_priv;

struct fault_rxq {
	struct fault_priv *priv;
	uint16_t qid;
	struct fault_stage s;
};

struct fault_txq {
	struct fault_priv *priv;
	uint16_t qid;
	rte_spinlock_t lock;		/* s, against the RX flush of the same queue */
	struct fault_stage s;
};

struct fault_priv {
	struct rte_eth_dev *dev;
	char lower_name[RTE_ETH_NAME_MAX_LEN];
	uint16_t lower;
	bool have_lower;
	bool owned;
	uint64_t owner_id;
	struct fault_params p;
	struct fault_link link[2];
	struct fault_rxq *rxq[FAULT_MAX_QUEUES];
	struct fault_txq *txq[FAULT_MAX_QUEUES];
};

static const struct eth_dev_ops fault_ops;

/* ---- PRNG: splitmix64 (fault_bottleneck.h) seeds xorshift64* streams (Vigna) ---- */

static inline uint64_t
rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* ---- stage ---- */

static void
stage_init(struct fault_stage *s, struct fault_priv *priv, unsigned int dir, uint16_t qid,
	   struct rte_mempool *mp)
{
	const struct fault_params *p = &priv->p;
	uint64_t hz = rte_get_tsc_hz();

	memset(s, 0, offsetof(struct fault_stage, fifo));
	s->p = p;
	s->mp = mp;
	if (p->dir[dir] && p->bn.rate_bps > 0)
		s->link = &priv->link[dir];
	s->active = p->dir[dir] && (p->loss || p->dup || p->reorder || p->corrupt || p->delay_us ||
				    s->link != NULL);
	s->rng = splitmix64(p->seed ^ splitmix64(((uint64_t)qid << 1) | dir));
	if (s->rng == 0)
		s->rng = 1;		/* xorshift's one forbidden state */
	s->delay_cyc = hz * p->delay_us / 1000000;
	s->hold_cyc = hz * REORDER_HOLD_US / 1000000 + s->delay_cyc;
}

static inline uint32_t
stage_room(const struct fault_stage *s)
{
	return FIFO_SIZE - (s->tail - s->head);
}

/* @p m itself if its data is ours to change, else a copy (NULL: no memory). */
static struct rte_mbuf *
stage_writable(struct fault_stage *s, struct rte_mbuf *m)
{
	struct rte_mbuf *seg, *c;

	for (seg = m; seg != NULL; seg = seg->next)
		if (RTE_MBUF_CLONED(seg) || RTE_MBUF_HAS_EXTBUF(seg) ||
		    rte_mbuf_refcnt_read(seg) > 1)
			break;
	if (seg == NULL)
		return m;
	c = rte_pktmbuf_copy(m, s->mp ? s->mp : m->pool, 0, UINT32_MAX);
	if (c == NULL) {
		s->st.nomem++;
		return NULL;
	}
	rte_pktmbuf_free(m);
	return c;
}

/*
 * Through the bottleneck: @return false if its queue dropped *@p m, else
 * *@p due is when it has left the link (and *@p m may be a marked copy);
 * *@p ecn_at its IP header, for a mark decided as it leaves (ecn_at=dequeue).
 */
static bool
stage_bottleneck(struct fault_stage *s, struct rte_mbuf **mp, uint64_t now, uint64_t *due,
		 int32_t *ecn_at, bool *ect)
{
	struct rte_mbuf *m = *mp, *w;
	enum fault_bn_verdict v;
	uint8_t ecn = 0;
	int at = fault_ecn_find(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, &ecn);

	*ect = at >= 0 && ecn != 0;
	rte_spinlock_lock(&s->link->lock);
	v = fault_bn_admit(&s->link->bn, m->pkt_len, *ect, now, due);
	rte_spinlock_unlock(&s->link->lock);
	*ecn_at = s->link->bn.p->ecn_dequeue && s->link->bn.p->ecn ? at : -1;
	if (v == FAULT_BN_DROP) {
		rte_pktmbuf_free(m);
		return false;
	}
	if (v == FAULT_BN_MARK && (w = stage_writable(s, m)) != NULL) {
		/* a copy keeps the headers in its first segment */
		fault_ecn_set_ce(rte_pktmbuf_mtod(w, uint8_t *), at);
		*mp = w;
	}
	return true;
}

/* hold=1: a frame the link's queue has no room for stays the sender's. */
static bool
link_takes(struct fault_link *l, const struct rte_mbuf *m, uint64_t now)
{
	bool ok;

	rte_spinlock_lock(&l->lock);
	ok = fault_bn_takes(&l->bn, m->pkt_len, now);
	rte_spinlock_unlock(&l->lock);
	return ok;
}

/* A frame the stage cannot hold: a bottleneck's queue drops it. */
static void
stage_overflow(struct fault_stage *s, struct rte_mbuf *m)
{
	rte_spinlock_lock(&s->link->lock);
	s->link->bn.st.dropped++;
	rte_spinlock_unlock(&s->link->lock);
	s->st.in++;
	rte_pktmbuf_free(m);
}

static inline void
stage_push(struct fault_stage *s, struct rte_mbuf *m, uint64_t now)
{
	struct fault_frame *f;
	uint64_t due = now;
	int32_t ecn_at = -1;
	bool ect = false;

	if (s->link != NULL && !stage_bottleneck(s, &m, now, &due, &ecn_at, &ect))
		return;
	f = &s->fifo[s->tail++ & (FIFO_SIZE - 1)];
	f->m = m;
	f->left = due;
	f->ecn_at = ecn_at;
	f->ect = ect;
	f->due = due + s->delay_cyc;	/* the delay is the wire's, past the bottleneck */
	if (s->delay_cyc)
		s->st.delayed++;
}

static void
stage_release_held(struct fault_stage *s, uint64_t now, bool one_passed)
{
	uint32_t i = 0;

	while (i < s->n_held) {
		struct fault_held *h = &s->held[i];

		if (one_passed && h->after > 0)
			h->after--;
		if (h->after == 0 || now >= h->deadline) {
			stage_push(s, h->m, now);
			*h = s->held[--s->n_held];	/* order among held ones is not kept */
			continue;
		}
		i++;
	}
}

/* Flip byte @p off of @p m (XOR @p val); copies first if the data is shared. */
static struct rte_mbuf *
stage_corrupt(struct fault_stage *s, struct rte_mbuf *m, uint32_t off, uint8_t val)
{
	struct rte_mbuf *seg, *w = stage_writable(s, m);

	if (w == NULL)
		return m;
	m = w;
	for (seg = m; seg != NULL && off >= seg->data_len; seg = seg->next)
		off -= seg->data_len;
	if (seg == NULL)
		return m;
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= val;
	s->st.corrupt++;
	return m;
}

/* Run one frame through the stage. Needs stage_room(s) >= FIFO_RESERVE. */
static void
stage_process(struct fault_stage *s, struct rte_mbuf *m, uint64_t now)
{
	const struct fault_params *p = s->p;
	/* always the same three draws per frame, whatever the rates */
	uint64_t r1 = rng_next(&s->rng), r2 = rng_next(&s->rng), r3 = rng_next(&s->rng);
	bool lost = (uint32_t)r1 < p->loss;
	bool dup = (uint32_t)(r1 >> 32) < p->dup;
	bool corrupt = (uint32_t)r2 < p->corrupt;
	bool reorder = (uint32_t)(r2 >> 32) < p->reorder;
	struct rte_mbuf *copy = NULL;

	s->st.in++;
	if (lost) {
		s->st.lost++;
		rte_pktmbuf_free(m);
		return;
	}
	if (corrupt && m->pkt_len > RTE_ETHER_HDR_LEN) {
		uint32_t off = RTE_ETHER_HDR_LEN + (uint32_t)r3 % (m->pkt_len - RTE_ETHER_HDR_LEN);

		m = stage_corrupt(s, m, off, (uint8_t)(1 + ((r3 >> 32) & 0xff) % 255));
	}
	if (dup) {
		copy = rte_pktmbuf_copy(m, s->mp ? s->mp : m->pool, 0, UINT32_MAX);
		if (copy != NULL)
			s->st.dup++;
		else
			s->st.nomem++;
	}
	if (reorder && s->n_held < MAX_HELD) {
		struct fault_held *h = &s->held[s->n_held++];

		h->m = m;
		h->after = 1 + (uint32_t)((r3 >> 40) & 0xff) % 3;
		h->deadline = now + s->hold_cyc;
		s->st.reorder++;
	} else {
		stage_push(s, m, now);
		stage_release_held(s, now, true);
	}
	if (copy != NULL) {
		stage_push(s, copy, now);
		stage_release_held(s, now, true);
	}
}

/*
 * A due frame leaves the stage: with ecn_at=dequeue the mark is decided
 * now, by the queue it left behind (the feedback skips the queue's delay).
 */
static struct rte_mbuf *
stage_frame_out(struct fault_stage *s, struct fault_frame *f)
{
	struct rte_mbuf *w;
	bool mark;

	if (f->ecn_at < 0)
		return f->m;
	rte_spinlock_lock(&s->link->lock);
	mark = fault_bn_mark_leaving(&s->link->bn, f->ect, f->left);
	rte_spinlock_unlock(&s->link->lock);
	if (mark && (w = stage_writable(s, f->m)) != NULL) {
		fault_ecn_set_ce(rte_pktmbuf_mtod(w, uint8_t *), f->ecn_at);
		f->m = w;
	}
	f->ecn_at = -1;			/* decided once, even if the PMD refuses it */
	return f->m;
}

/* Up to @p n frames whose time has come, in order. */
static uint16_t
stage_pop_due(struct fault_stage *s, struct rte_mbuf **out, uint16_t n, uint64_t now)
{
	uint16_t k = 0;

	while (k < n && s->head != s->tail) {
		struct fault_frame *f = &s->fifo[s->head & (FIFO_SIZE - 1)];

		if (f->due > now)
			break;
		out[k++] = stage_frame_out(s, f);
		s->out_bytes += f->m->pkt_len;
		s->head++;
	}
	s->st.out += k;
	return k;
}

/* TX: hand due frames to the wrapped port; keep what it refuses. Lock held. */
static void
tx_flush(struct fault_txq *t, uint64_t now)
{
	struct fault_stage *s = &t->s;
	struct rte_mbuf *burst[BURST];

	stage_release_held(s, now, false);
	while (s->head != s->tail) {
		uint32_t h = s->head;
		uint16_t k = 0, sent;

		while (k < BURST && h != s->tail && s->fifo[h & (FIFO_SIZE - 1)].due <= now)
			burst[k++] = stage_frame_out(s, &s->fifo[h++ & (FIFO_SIZE - 1)]);
		if (k == 0)
			break;
		sent = rte_eth_tx_burst(t->priv->lower, t->qid, burst, k);
		for (h = 0; h < sent; h++)
			s->out_bytes += burst[h]->pkt_len;
		s->head += sent;
		s->st.out += sent;
		if (sent < k)
			break;
	}
}

static void
stage_drain(struct fault_stage *s)
{
	while (s->head != s->tail)
		rte_pktmbuf_free(s->fifo[s->head++ & (FIFO_SIZE - 1)].m);
	while (s->n_held > 0)
		rte_pktmbuf_free(s->held[--s->n_held].m);
}

/* ---- burst functions ---- */

static uint16_t
fault_rx_burst(void *q, struct rte_mbuf **bufs, uint16_t n)
{
	struct fault_rxq *r = q;
	struct fault_priv *priv = r->priv;
	struct fault_txq *t = r->qid < FAULT_MAX_QUEUES ? priv->txq[r->qid] : NULL;
	struct fault_stage *s = &r->s;
	struct rte_mbuf *in[BURST];
	uint16_t got, i, want;
	uint64_t now;

	/* TX frames held for delay or reordering go out even if TX is idle */
	if (t != NULL && t->s.active && (t->s.head != t->s.tail || t->s.n_held > 0) &&
	    rte_spinlock_trylock(&t->lock)) {
		tx_flush(t, rte_get_tsc_cycles());
		rte_spinlock_unlock(&t->lock);
	}
	if (!s->active) {
		got = rte_eth_rx_burst(priv->lower, r->qid, bufs, n);
		s->st.in += got;
		s->st.out += got;
		for (i = 0; i < got; i++)
			s->out_bytes += bufs[i]->pkt_len;
		return got;
	}
	now = rte_get_tsc_cycles();
	/* a switch takes every frame the wire brings, and drops what it cannot hold */
	want = s->link != NULL ? RTE_MIN(n, (uint16_t)BURST) :
	       (uint16_t)RTE_MIN((uint32_t)RTE_MIN(n, (uint16_t)BURST),
				 stage_room(s) > FIFO_RESERVE ?
				 (stage_room(s) - FIFO_RESERVE) / 2 : 0);
	got = want ? rte_eth_rx_burst(priv->lower, r->qid, in, want) : 0;
	for (i = 0; i < got; i++) {
		if (stage_room(s) >= FIFO_RESERVE)
			stage_process(s, in[i], now);
		else
			stage_overflow(s, in[i]);
	}
	stage_release_held(s, now, false);
	return stage_pop_due(s, bufs, n, now);
}

static uint16_t
fault_tx_burst(void *q, struct rte_mbuf **bufs, uint16_t n)
{
	struct fault_txq *t = q;
	struct fault_stage *s = &t->s;
	uint16_t i, sent;
	uint64_t now;

	if (!s->active) {
		sent = rte_eth_tx_burst(t->priv->lower, t->qid, bufs, n);
		s->st.in += sent;
		s->st.out += sent;
		for (i = 0; i < sent; i++)
			s->out_bytes += bufs[i]->pkt_len;
		return sent;
	}
	rte_spinlock_lock(&t->lock);
	now = rte_get_tsc_cycles();
	for (i = 0; i < n && stage_room(s) >= FIFO_RESERVE; i++) {
		if (s->link != NULL && s->p->bn.hold && !link_takes(s->link, bufs[i], now))
			break;
		stage_process(s, bufs[i], now);
	}
	tx_flush(t, now);
	rte_spinlock_unlock(&t->lock);
	return i;			/* the rest stay the caller's */
}

/* ---- the wrapped port ---- */

static int
fault_resolve_lower(struct fault_priv *priv)
{
	struct rte_eth_dev_owner owner;
	char *end;
	unsigned long id;
	uint16_t lower;

	if (priv->have_lower)
		return 0;
	errno = 0;
	id = strtoul(priv->lower_name, &end, 10);
	if (*end == '\0' && errno == 0 && end != priv->lower_name) {
		if (id >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port((uint16_t)id))
			return -ENODEV;
		lower = (uint16_t)id;
	} else if (rte_eth_dev_get_port_by_name(priv->lower_name, &lower) != 0) {
		return -ENODEV;
	}
	if (lower == priv->dev->data->port_id)
		return -EINVAL;

	/* take it, so port iterators skip it and nobody else drives it */
	memset(&owner, 0, sizeof(owner));
	if (rte_eth_dev_owner_new(&owner.id) == 0) {
		snprintf(owner.name, sizeof(owner.name), "%s", priv->dev->data->name);
		if (rte_eth_dev_owner_set(lower, &owner) == 0) {
			priv->owned = true;
			priv->owner_id = owner.id;
		} else {
			FAULT_LOG(WARNING, "%s: cannot own port %u; sharing it",
				  priv->dev->data->name, lower);
		}
	}
	rte_eth_macaddr_get(lower, priv->dev->data->mac_addrs);
	priv->lower = lower;
	priv->have_lower = true;
	FAULT_LOG(INFO, "%s wraps port %u (%s)", priv->dev->data->name, lower, priv->lower_name);
	return 0;
}

#define PRIV(dev) ((struct fault_priv *)(dev)->data->dev_private)

/* Forward to the wrapped port, found on first use if needed. */
#define LOWER_OR_RET(priv) do {					\
		int r_ = fault_resolve_lower(priv);			\
		if (r_ < 0)						\
			return r_;					\
	} while (0)

/* ---- control path ---- */

static int
fault_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct fault_priv *priv = PRIV(dev);
	struct rte_eth_dev_info li;
	int ret;

	LOWER_OR_RET(priv);
	ret = rte_eth_dev_info_get(priv->lower, &li);
	if (ret < 0)
		return ret;
	info->if_index = li.if_index;
	info->min_mtu = li.min_mtu;
	info->max_mtu = li.max_mtu;
	info->min_rx_bufsize = li.min_rx_bufsize;
	info->max_rx_pktlen = li.max_rx_pktlen;
	info->max_lro_pkt_size = li.max_lro_pkt_size;
	info->max_rx_queues = RTE_MIN(li.max_rx_queues, (uint16_t)FAULT_MAX_QUEUES);
	info->max_tx_queues = RTE_MIN(li.max_tx_queues, (uint16_t)FAULT_MAX_QUEUES);
	info->max_mac_addrs = 1;
	info->rx_offload_capa = li.rx_offload_capa & ~RTE_ETH_RX_OFFLOAD_TCP_LRO;
	info->tx_offload_capa = li.tx_offload_capa;
	info->rx_queue_offload_capa = li.rx_queue_offload_capa;
	info->tx_queue_offload_capa = li.tx_queue_offload_capa;
	info->default_rxconf = li.default_rxconf;
	info->default_txconf = li.default_txconf;
	info->rx_desc_lim = li.rx_desc_lim;
	info->tx_desc_lim = li.tx_desc_lim;
	info->speed_capa = li.speed_capa;
	info->default_rxportconf = li.default_rxportconf;
	info->default_txportconf = li.default_txportconf;
	return 0;
}

static int
fault_configure(struct rte_eth_dev *dev)
{
	struct fault_priv *priv = PRIV(dev);

	LOWER_OR_RET(priv);
	return rte_eth_dev_configure(priv->lower, dev->data->nb_rx_queues,
				     dev->data->nb_tx_queues, &dev->data->dev_conf);
}

static int
fault_link_update(struct rte_eth_dev *dev, int wait)
{
	struct fault_priv *priv = PRIV(dev);
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	if (priv->have_lower) {
		if (wait)
			rte_eth_link_get(priv->lower, &link);
		else
			rte_eth_link_get_nowait(priv->lower, &link);
	}
	if (!dev->data->dev_started)
		link.link_status = RTE_ETH_LINK_DOWN;
	return rte_eth_linkstatus_set(dev, &link);
}

static int
fault_start(struct rte_eth_dev *dev)
{
	struct fault_priv *priv = PRIV(dev);
	uint16_t i;
	int ret;

	LOWER_OR_RET(priv);
	ret = rte_eth_dev_start(priv->lower);
	if (ret < 0)
		return ret;
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	dev->data->dev_started = 1;
	fault_link_update(dev, 0);
	return 0;
}

static int
fault_stop(struct rte_eth_dev *dev)
{
	struct fault_priv *priv = PRIV(dev);
	unsigned int i;
	int ret = 0;

	dev->data->dev_started = 0;
	if (priv->have_lower)
		ret = rte_eth_dev_stop(priv->lower);
	for (i = 0; i < FAULT_MAX_QUEUES; i++) {
		if (priv->rxq[i] != NULL)
			stage_drain(&priv->rxq[i]->s);
		if (priv->txq[i] != NULL) {
			rte_spinlock_lock(&priv->txq[i]->lock);
			stage_drain(&priv->txq[i]->s);
			rte_spinlock_unlock(&priv->txq[i]->lock);
		}
	}
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	fault_link_update(dev, 0);
	return ret;
}

static void
fault_rxq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct fault_priv *priv = PRIV(dev);

	if (qid >= FAULT_MAX_QUEUES || priv->rxq[qid] == NULL)
		return;
	stage_drain(&priv->rxq[qid]->s);
	rte_free(priv->rxq[qid]);
	priv->rxq[qid] = NULL;
	dev->data->rx_queues[qid] = NULL;
}

static void
fault_txq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct fault_priv *priv = PRIV(dev);

	if (qid >= FAULT_MAX_QUEUES || priv->txq[qid] == NULL)
		return;
	stage_drain(&priv->txq[qid]->s);
	rte_free(priv->txq[qid]);
	priv->txq[qid] = NULL;
	dev->data->tx_queues[qid] = NULL;
}

static int
fault_close(struct rte_eth_dev *dev)
{
	struct fault_priv *priv = PRIV(dev);
	uint16_t i;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	if (dev->data->dev_started)
		fault_stop(dev);
	for (i = 0; i < FAULT_MAX_QUEUES; i++) {
		fault_rxq_release(dev, i);
		fault_txq_release(dev, i);
	}
	if (priv->owned) {
		/* at EAL cleanup the wrapped vdev may have gone first */
		if (rte_eth_dev_is_valid_port(priv->lower))
			rte_eth_dev_owner_unset(priv->lower, priv->owner_id);
		rte_eth_dev_owner_delete(priv->owner_id);
		priv->owned = false;
	}
	priv->have_lower = false;
	return 0;
}

static int
fault_rxq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc, unsigned int socket,
		const struct rte_eth_rxconf *conf, struct rte_mempool *mp)
{
	struct fault_priv *priv = PRIV(dev);
	struct fault_rxq *r;
	int ret;

	LOWER_OR_RET(priv);
	if (qid >= FAULT_MAX_QUEUES)
		return -EINVAL;
	ret = rte_eth_rx_queue_setup(priv->lower, qid, nb_desc, socket, conf, mp);
	if (ret < 0)
		return ret;
	fault_rxq_release(dev, qid);
	r = rte_zmalloc_socket("droce_fault_rxq", sizeof(*r), RTE_CACHE_LINE_SIZE, (int)socket);
	if (r == NULL)
		return -ENOMEM;
	r->priv = priv;
	r->qid = qid;
	stage_init(&r->s, priv, DIR_RX, qid, mp);
	priv->rxq[qid] = r;
	dev->data->rx_queues[qid] = r;
	return 0;
}

static int
fault_txq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc, unsigned int socket,
		const struct rte_eth_txconf *conf)
{
	struct fault_priv *priv = PRIV(dev);
	struct fault_txq *t;
	int ret;

	LOWER_OR_RET(priv);
	if (qid >= FAULT_MAX_QUEUES)
		return -EINVAL;
	ret = rte_eth_tx_queue_setup(priv->lower, qid, nb_desc, socket, conf);
	if (ret < 0)
		return ret;
	fault_txq_release(dev, qid);
	t = rte_zmalloc_socket("droce_fault_txq", sizeof(*t), RTE_CACHE_LINE_SIZE, (int)socket);
	if (t == NULL)
		return -ENOMEM;
	t->priv = priv;
	t->qid = qid;
	rte_spinlock_init(&t->lock);
	stage_init(&t->s, priv, DIR_TX, qid, NULL);
	priv->txq[qid] = t;
	dev->data->tx_queues[qid] = t;
	return 0;
}

static int
fault_promisc_on(struct rte_eth_dev *dev)
{
	LOWER_OR_RET(PRIV(dev));
	return rte_eth_promiscuous_enable(PRIV(dev)->lower);
}

static int
fault_promisc_off(struct rte_eth_dev *dev)
{
	LOWER_OR_RET(PRIV(dev));
	return rte_eth_promiscuous_disable(PRIV(dev)->lower);
}

static int
fault_allmulti_on(struct rte_eth_dev *dev)
{
	LOWER_OR_RET(PRIV(dev));
	return rte_eth_allmulticast_enable(PRIV(dev)->lower);
}

static int
fault_allmulti_off(struct rte_eth_dev *dev)
{
	LOWER_OR_RET(PRIV(dev));
	return rte_eth_allmulticast_disable(PRIV(dev)->lower);
}

static int
fault_mac_set(struct rte_eth_dev *dev, struct rte_ether_addr *addr)
{
	int ret;

	LOWER_OR_RET(PRIV(dev));
	ret = rte_eth_dev_default_mac_addr_set(PRIV(dev)->lower, addr);
	return ret == -ENOTSUP ? 0 : ret;	/* the MAC is ours to claim, as for net_ring */
}

static int
fault_mc_list(struct rte_eth_dev *dev, struct rte_ether_addr *list, uint32_t n)
{
	LOWER_OR_RET(PRIV(dev));
	return rte_eth_dev_set_mc_addr_list(PRIV(dev)->lower, list, n);
}

static int
fault_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	LOWER_OR_RET(PRIV(dev));
	return rte_eth_dev_set_mtu(PRIV(dev)->lower, mtu);
}

/* ---- counters ---- */

static void
fault_sum(const struct fault_priv *priv, struct droce_fault_stats *st, uint64_t bytes[2])
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	bytes[0] = bytes[1] = 0;
	for (i = 0; i < FAULT_MAX_QUEUES; i++) {
		const struct fault_stage *s[2] = {
			priv->rxq[i] ? &priv->rxq[i]->s : NULL,
			priv->txq[i] ? &priv->txq[i]->s : NULL,
		};
		struct droce_fault_dir_stats *d[2] = { &st->rx, &st->tx };
		unsigned int k;

		for (k = 0; k < 2; k++) {
			if (s[k] == NULL)
				continue;
			d[k]->in += s[k]->st.in;
			d[k]->out += s[k]->st.out;
			d[k]->lost += s[k]->st.lost;
			d[k]->dup += s[k]->st.dup;
			d[k]->corrupt += s[k]->st.corrupt;
			d[k]->reorder += s[k]->st.reorder;
			d[k]->delayed += s[k]->st.delayed;
			d[k]->nomem += s[k]->st.nomem;
			bytes[k] += s[k]->out_bytes;
		}
	}
	for (i = 0; i < 2; i++) {
		const struct fault_bn_stats *b = &priv->link[i].bn.st;
		struct droce_fault_dir_stats *d = i == 0 ? &st->rx : &st->tx;

		d->bn_marked = b->marked;
		d->bn_dropped = b->dropped;
		d->bn_not_ect = b->not_ect;
		d->bn_max_queue = b->max_queue;
		d->bn_held = b->held;
		d->bn_queue = fault_bn_depth(&priv->link[i].bn, rte_get_tsc_cycles());
	}
}

static int
fault_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct fault_priv *priv = PRIV(dev);
	struct droce_fault_stats st;
	struct rte_eth_stats ls;
	uint64_t bytes[2];

	fault_sum(priv, &st, bytes);
	stats->ipackets = st.rx.out;
	stats->ibytes = bytes[0];
	stats->opackets = st.tx.out;
	stats->obytes = bytes[1];
	if (priv->have_lower && rte_eth_stats_get(priv->lower, &ls) == 0) {
		stats->imissed = ls.imissed;
		stats->ierrors = ls.ierrors;
		stats->oerrors = ls.oerrors;
		stats->rx_nombuf = ls.rx_nombuf;
	}
	return 0;
}

static int
fault_stats_reset(struct rte_eth_dev *dev)
{
	struct fault_priv *priv = PRIV(dev);
	unsigned int i;

	for (i = 0; i < FAULT_MAX_QUEUES; i++) {
		if (priv->rxq[i] != NULL) {
			memset(&priv->rxq[i]->s.st, 0, sizeof(priv->rxq[i]->s.st));
			priv->rxq[i]->s.out_bytes = 0;
		}
		if (priv->txq[i] != NULL) {
			memset(&priv->txq[i]->s.st, 0, sizeof(priv->txq[i]->s.st));
			priv->txq[i]->s.out_bytes = 0;
		}
	}
	for (i = 0; i < 2; i++) {
		rte_spinlock_lock(&priv->link[i].lock);
		memset(&priv->link[i].bn.st, 0, sizeof(priv->link[i].bn.st));
		rte_spinlock_unlock(&priv->link[i].lock);
	}
	if (priv->have_lower)
		rte_eth_stats_reset(priv->lower);
	return 0;
}

#define XSTATS(X) X(in) X(out) X(lost) X(dup) X(corrupt) X(reorder) X(delayed) X(nomem) \
	X(bn_marked) X(bn_dropped) X(bn_not_ect) X(bn_max_queue) X(bn_held) \
	X(bn_queue)
#define X_COUNT(f) + 1
#define N_XSTATS (2 * (0 XSTATS(X_COUNT)))

static int
fault_xstats_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names, unsigned int size)
{
	static const char *const dirs[2] = { "rx", "tx" };
	unsigned int k, n = 0;

	RTE_SET_USED(dev);
	if (names == NULL || size < N_XSTATS)
		return N_XSTATS;
	for (k = 0; k < 2; k++) {
#define X_NAME(f) snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "%s_fault_" #f, dirs[k]);
		XSTATS(X_NAME)
#undef X_NAME
	}
	return (int)n;
}

static int
fault_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int size)
{
	struct droce_fault_stats st;
	uint64_t bytes[2];
	unsigned int k, n = 0;

	if (xs == NULL || size < N_XSTATS)
		return N_XSTATS;
	fault_sum(PRIV(dev), &st, bytes);
	for (k = 0; k < 2; k++) {
		const struct droce_fault_dir_stats *d = k == 0 ? &st.rx : &st.tx;

#define X_VAL(f) do { xs[n].id = n; xs[n].value = d->f; n++; } while (0);
		XSTATS(X_VAL)
#undef X_VAL
	}
	return (int)n;
}

static const struct eth_dev_ops fault_ops = {
	.dev_configure = fault_configure,
	.dev_start = fault_start,
	.dev_stop = fault_stop,
	.dev_close = fault_close,
	.link_update = fault_link_update,
	.promiscuous_enable = fault_promisc_on,
	.promiscuous_disable = fault_promisc_off,
	.allmulticast_enable = fault_allmulti_on,
	.allmulticast_disable = fault_allmulti_off,
	.mac_addr_set = fault_mac_set,
	.set_mc_addr_list = fault_mc_list,
	.mtu_set = fault_mtu_set,
	.stats_get = fault_stats_get,
	.stats_reset = fault_stats_reset,
	.xstats_get = fault_xstats_get,
	.xstats_get_names = fault_xstats_names,
	.dev_infos_get = fault_infos_get,
	.rx_queue_setup = fault_rxq_setup,
	.rx_queue_release = fault_rxq_release,
	.tx_queue_setup = fault_txq_setup,
	.tx_queue_release = fault_txq_release,
};

/* ---- public helpers ---- */

static struct fault_priv *
fault_priv_of(uint16_t port_id)
{
	struct rte_eth_dev *dev;

	if (!rte_eth_dev_is_valid_port(port_id))
		return NULL;
	dev = &rte_eth_devices[port_id];
	return dev->dev_ops == &fault_ops ? dev->data->dev_private : NULL;
}

int
droce_fault_stats(uint16_t port_id, struct droce_fault_stats *st)
{
	struct fault_priv *priv = fault_priv_of(port_id);
	uint64_t bytes[2];

	if (st == NULL)
		return -EINVAL;
	if (priv == NULL)
		return -ENODEV;
	fault_sum(priv, st, bytes);
	return 0;
}

int
droce_fault_lower_port(uint16_t port_id, uint16_t *lower)
{
	struct fault_priv *priv = fault_priv_of(port_id);

	if (priv == NULL || fault_resolve_lower(priv) < 0)
		return -ENODEV;
	*lower = priv->lower;
	return 0;
}

/* ---- probe / remove ---- */

static int
arg_prob(const char *key, const char *value, void *opaque)
{
	uint64_t *thr = opaque;
	char *end;
	double p;

	errno = 0;
	p = strtod(value, &end);
	if (errno != 0 || end == value || *end != '\0' || !(p >= 0.0 && p <= 1.0)) {
		FAULT_LOG(ERR, "%s=%s: want a probability in [0, 1]", key, value);
		return -EINVAL;
	}
	*thr = (uint64_t)(p * 4294967296.0);	/* 1.0 -> 2^32: every draw is below */
	return 0;
}

static int
arg_u64(const char *key, const char *value, void *opaque)
{
	uint64_t *v = opaque;
	char *end;

	errno = 0;
	*v = strtoull(value, &end, 0);
	if (errno != 0 || end == value || *end != '\0' || value[0] == '-') {
		FAULT_LOG(ERR, "%s=%s: want a non-negative integer", key, value);
		return -EINVAL;
	}
	return 0;
}

static int
arg_bool(const char *key, const char *value, void *opaque)
{
	bool *v = opaque;

	if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
		FAULT_LOG(ERR, "%s=%s: want 0 or 1", key, value);
		return -EINVAL;
	}
	*v = value[0] == '1';
	return 0;
}

/* N with an optional k, m or g suffix, each @p unit times the last */
static int
arg_scaled(const char *key, const char *value, uint64_t unit, uint64_t *v)
{
	char *end;
	uint64_t mul = 1;

	errno = 0;
	*v = strtoull(value, &end, 10);
	if (errno == 0 && end != value && value[0] != '-' && end[0] != '\0' && end[1] == '\0') {
		switch (end[0]) {
		case 'g': case 'G': mul *= unit; /* fall through */
		case 'm': case 'M': mul *= unit; /* fall through */
		case 'k': case 'K': mul *= unit; end++; break;
		default: break;
		}
	}
	if (errno != 0 || end == value || *end != '\0' || value[0] == '-' ||
	    *v > UINT64_MAX / mul) {
		FAULT_LOG(ERR, "%s=%s: want a non-negative integer, k, m or g after it", key, value);
		return -EINVAL;
	}
	*v *= mul;
	return 0;
}

static int
arg_bits(const char *key, const char *value, void *opaque)
{
	return arg_scaled(key, value, 1000, opaque);
}

static int
arg_bytes(const char *key, const char *value, void *opaque)
{
	return arg_scaled(key, value, 1024, opaque);
}

static int
arg_dir(const char *key, const char *value, void *opaque)
{
	bool *dir = opaque;

	dir[DIR_RX] = strcmp(value, "rx") == 0 || strcmp(value, "both") == 0;
	dir[DIR_TX] = strcmp(value, "tx") == 0 || strcmp(value, "both") == 0;
	if (!dir[DIR_RX] && !dir[DIR_TX]) {
		FAULT_LOG(ERR, "%s=%s: want rx, tx or both", key, value);
		return -EINVAL;
	}
	return 0;
}

static int
arg_ecn_at(const char *key, const char *value, void *opaque)
{
	bool *dequeue = opaque;

	*dequeue = strcmp(value, "dequeue") == 0;
	if (!*dequeue && strcmp(value, "enqueue") != 0) {
		FAULT_LOG(ERR, "%s=%s: want enqueue or dequeue", key, value);
		return -EINVAL;
	}
	return 0;
}

static int
arg_port(const char *key, const char *value, void *opaque)
{
	char *name = opaque;

	if (value[0] == '\0' || strlen(value) >= RTE_ETH_NAME_MAX_LEN) {
		FAULT_LOG(ERR, "%s=%s: want an ethdev name or port id", key, value);
		return -EINVAL;
	}
	strcpy(name, value);
	return 0;
}

/* The bottleneck's defaults, and what makes no sense. */
static int
bn_params_check(struct rte_kvargs *kv, struct fault_bn_params *bn, const bool dir[2])
{
	bool has_min = rte_kvargs_count(kv, ARG_ECN_MIN) > 0;
	bool has_max = rte_kvargs_count(kv, ARG_ECN_MAX) > 0;

	if (bn->rate_bps == 0) {
		if (rte_kvargs_count(kv, ARG_RATE) > 0 || rte_kvargs_count(kv, ARG_QUEUE) > 0 ||
		    has_min || has_max || rte_kvargs_count(kv, ARG_ECN_PROB) > 0 ||
		    rte_kvargs_count(kv, ARG_ECN_AT) > 0 || rte_kvargs_count(kv, ARG_HOLD) > 0) {
			FAULT_LOG(ERR, "queue=, ecn_*= and hold= need rate= (> 0)");
			return -EINVAL;
		}
		return 0;
	}
	if (bn->rate_bps < 1000) {
		FAULT_LOG(ERR, "rate=%" PRIu64 ": at least 1k (bits per second)", bn->rate_bps);
		return -EINVAL;
	}
	if (rte_kvargs_count(kv, ARG_QUEUE) == 0)
		bn->queue = BN_QUEUE_DEFAULT;
	if (rte_kvargs_count(kv, ARG_ECN_PROB) == 0)
		bn->ecn_prob = 1ull << 32;
	if (has_min && !has_max)
		bn->ecn_max = bn->ecn_min;	/* a step: every ECT frame above it */
	bn->ecn = has_min || has_max;
	if (rte_kvargs_count(kv, ARG_ECN_AT) > 0 && !bn->ecn) {
		FAULT_LOG(ERR, "ecn_at= needs ecn_min= or ecn_max=");
		return -EINVAL;
	}
	if (bn->hold && dir[DIR_RX]) {
		FAULT_LOG(ERR, "hold=1 needs dir=tx: a wire's frames cannot be held back");
		return -EINVAL;
	}
	if (bn->ecn && (bn->ecn_min > bn->ecn_max || bn->ecn_max > bn->queue)) {
		FAULT_LOG(ERR, "want ecn_min <= ecn_max <= queue");
		return -EINVAL;
	}
	return 0;
}

static int
parse_args(const char *args, struct fault_params *p, char *lower_name)
{
	struct rte_kvargs *kv;
	int ret = -EINVAL;

	memset(p, 0, sizeof(*p));
	p->seed = 1;
	p->dir[DIR_RX] = p->dir[DIR_TX] = true;
	kv = rte_kvargs_parse(args ? args : "", valid_args);
	if (kv == NULL) {
		FAULT_LOG(ERR, "cannot parse '%s' (known: port seed loss dup reorder corrupt "
			  "delay_us dir rate queue ecn_min ecn_max ecn_prob ecn_at hold)", args);
		return -EINVAL;
	}
	if (rte_kvargs_count(kv, ARG_PORT) != 1) {
		FAULT_LOG(ERR, "'%s': exactly one port= is needed", args ? args : "");
		goto out;
	}
	if (rte_kvargs_process(kv, ARG_PORT, arg_port, lower_name) < 0 ||
	    rte_kvargs_process(kv, ARG_SEED, arg_u64, &p->seed) < 0 ||
	    rte_kvargs_process(kv, ARG_LOSS, arg_prob, &p->loss) < 0 ||
	    rte_kvargs_process(kv, ARG_DUP, arg_prob, &p->dup) < 0 ||
	    rte_kvargs_process(kv, ARG_REORDER, arg_prob, &p->reorder) < 0 ||
	    rte_kvargs_process(kv, ARG_CORRUPT, arg_prob, &p->corrupt) < 0 ||
	    rte_kvargs_process(kv, ARG_DELAY, arg_u64, &p->delay_us) < 0 ||
	    rte_kvargs_process(kv, ARG_DIR, arg_dir, p->dir) < 0 ||
	    rte_kvargs_process(kv, ARG_RATE, arg_bits, &p->bn.rate_bps) < 0 ||
	    rte_kvargs_process(kv, ARG_QUEUE, arg_bytes, &p->bn.queue) < 0 ||
	    rte_kvargs_process(kv, ARG_ECN_MIN, arg_bytes, &p->bn.ecn_min) < 0 ||
	    rte_kvargs_process(kv, ARG_ECN_MAX, arg_bytes, &p->bn.ecn_max) < 0 ||
	    rte_kvargs_process(kv, ARG_ECN_PROB, arg_prob, &p->bn.ecn_prob) < 0 ||
	    rte_kvargs_process(kv, ARG_ECN_AT, arg_ecn_at, &p->bn.ecn_dequeue) < 0 ||
	    rte_kvargs_process(kv, ARG_HOLD, arg_bool, &p->bn.hold) < 0)
		goto out;
	if (bn_params_check(kv, &p->bn, p->dir) < 0)
		goto out;
	if (p->delay_us > 10 * 1000 * 1000) {
		FAULT_LOG(ERR, "delay_us=%" PRIu64 ": at most 10 s", p->delay_us);
		goto out;
	}
	ret = 0;
out:
	rte_kvargs_free(kv);
	return ret;
}

static int
fault_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct rte_eth_dev *dev;
	struct fault_priv *priv;
	struct fault_params p;
	char lower_name[RTE_ETH_NAME_MAX_LEN];
	unsigned int d;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		FAULT_LOG(ERR, "%s: primary process only", name);
		return -ENOTSUP;
	}
	ret = parse_args(rte_vdev_device_args(vdev), &p, lower_name);
	if (ret < 0)
		return ret;
	dev = rte_eth_dev_allocate(name);
	if (dev == NULL)
		return -ENOMEM;
	priv = rte_zmalloc_socket(name, sizeof(*priv), RTE_CACHE_LINE_SIZE, rte_socket_id());
	dev->data->mac_addrs = rte_zmalloc_socket(name, sizeof(struct rte_ether_addr), 0,
						  rte_socket_id());
	if (priv == NULL || dev->data->mac_addrs == NULL) {
		rte_free(priv);
		rte_eth_dev_release_port(dev);	/* frees mac_addrs */
		return -ENOMEM;
	}
	priv->dev = dev;
	priv->p = p;
	for (d = 0; d < 2; d++) {
		rte_spinlock_init(&priv->link[d].lock);
		/* its own stream: marking never shifts the other faults' draws */
		fault_bn_init(&priv->link[d].bn, &priv->p.bn, rte_get_tsc_hz(),
			      splitmix64(p.seed ^ 0xb0771e4eull ^ d));
	}
	strcpy(priv->lower_name, lower_name);
	dev->data->dev_private = priv;
	dev->device = &vdev->device;
	dev->dev_ops = &fault_ops;
	dev->rx_pkt_burst = fault_rx_burst;
	dev->tx_pkt_burst = fault_tx_burst;
	dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	dev->data->dev_link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	dev->data->numa_node = rte_socket_id();
	/*
	 * The wrapped port may come later on the EAL command line (vdevs are
	 * probed in order): then it is found when the application first uses
	 * this port. Until then the MAC is a random one.
	 */
	rte_eth_random_addr(dev->data->mac_addrs->addr_bytes);
	if (fault_resolve_lower(priv) < 0)
		FAULT_LOG(INFO, "%s: port '%s' not there yet; looking again at first use", name,
			  lower_name);
	rte_eth_dev_probing_finish(dev);
	return 0;
}

static int
fault_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));

	if (dev == NULL)
		return 0;
	if (dev->data->dev_started)
		rte_eth_dev_stop(dev->data->port_id);
	/* closes (queues, ownership) and releases the port */
	return rte_eth_dev_close(dev->data->port_id);
}

static struct rte_vdev_driver fault_vdev_drv = {
	.probe = fault_probe,
	.remove = fault_remove,
};

RTE_PMD_REGISTER_VDEV(net_droce_fault, fault_vdev_drv);
RTE_PMD_REGISTER_PARAM_STRING(net_droce_fault,
	"port=<name|id> seed=<int> loss=<0..1> dup=<0..1> reorder=<0..1> corrupt=<0..1> "
	"delay_us=<int> dir=<rx|tx|both> rate=<bits/s[kmg]> queue=<bytes[kmg]> "
	"ecn_min=<bytes[kmg]> ecn_max=<bytes[kmg]> ecn_prob=<0..1> ecn_at=<enqueue|dequeue> "
	"hold=<0|1>");
