/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A worker's data path on its queue (droce_port_worker.h): receive, the
 * hand-off between workers, the TX backlog. The hot calls (alloc, tx) are
 * inline in the header; what is here runs once a burst.
 */

#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_port_worker.h"
#include "port_priv.h"

/* port_free_rx_to() fills a stash up to PORT_STASH */
_Static_assert(DROCE_PORT_WORKER_STASH == PORT_STASH, "the worker's stash is a port queue's");

static const char *const counter_names[DROCE_PORT_WORKER_CNT_COUNT] = {
#define C(sym, desc) #sym,
	DROCE_PORT_WORKER_COUNTERS(C)
#undef C
};

const char *
droce_port_worker_counter_name(enum droce_port_worker_counter c)
{
	return (unsigned int)c < DROCE_PORT_WORKER_CNT_COUNT ? counter_names[c] : "UNKNOWN";
}

int
droce_port_worker_init(struct droce_port_worker *w, const struct droce_port_worker_conf *conf)
{
	if (w == NULL || conf == NULL || conf->port == NULL ||
	    conf->tx_backlog > DROCE_PORT_WORKER_TX_MAX ||
	    (conf->sorter == NULL && conf->queue != 0) ||
	    (conf->handoff_slots > 0 && conf->name == NULL))
		return -EINVAL;
	memset(w, 0, offsetof(struct droce_port_worker, held));
	w->port = conf->port;
	w->q = conf->queue;
	w->mp = droce_port_mempool(conf->port);
	w->sorter = conf->sorter != NULL ? conf->sorter : w;
	w->tx_cap = conf->tx_backlog > 0 ? conf->tx_backlog : DROCE_PORT_WORKER_TX_MAX;
	w->kick = conf->kick;
	w->kick_arg = conf->kick_arg;
	if (conf->handoff_slots > 0) {
		/*
		 * Producers: every other worker. RTS, not DPDK's default MP
		 * ring: a producer preempted mid-enqueue (workers may share a
		 * core) would make the others spin until it runs again.
		 */
		w->handoff = rte_ring_create(conf->name, conf->handoff_slots, SOCKET_ID_ANY,
					     RING_F_MP_RTS_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (w->handoff == NULL)
			return -rte_errno;
	}
	return 0;
}

void
droce_port_worker_fini(struct droce_port_worker *w)
{
	void *m;
	unsigned int i;

	if (w == NULL || w->port == NULL)
		return;
	rte_pktmbuf_free_bulk(w->tx, w->n_tx);
	w->n_tx = 0;
	rte_pktmbuf_free_bulk(w->stash, w->n_stash);
	w->n_stash = 0;
	for (i = 0; i < w->n_held; i++)
		rte_pktmbuf_free(w->held[i].m);
	w->n_held = 0;
	while (w->handoff != NULL && rte_ring_sc_dequeue(w->handoff, &m) == 0)
		rte_pktmbuf_free((struct rte_mbuf *)((uintptr_t)m & ~(uintptr_t)DROCE_PORT_WORKER_TAGS));
	rte_ring_free(w->handoff);
	w->handoff = NULL;
}

/* Into @p to's ring: 0, or -ENOBUFS (still the caller's). Counts nothing. */
static int
handoff_put(struct droce_port_worker *to, struct rte_mbuf *m, unsigned int tag)
{
	if (to->handoff == NULL || rte_ring_enqueue(to->handoff, (void *)((uintptr_t)m | tag)) != 0)
		return -ENOBUFS;
	if (to->kick != NULL)
		to->kick(to, to->kick_arg);
	return 0;
}

int
droce_port_worker_handoff(struct droce_port_worker *w, struct droce_port_worker *to,
			  struct rte_mbuf *m, unsigned int tag)
{
	(void)w;
	return handoff_put(to, m, tag);
}

void
droce_port_worker_hand(struct droce_port_worker *w, struct droce_port_worker *to,
		       struct rte_mbuf *m, unsigned int tag)
{
	if (!(tag & DROCE_PORT_WORKER_SLOW))
		w->cnt[DROCE_PORT_WORKER_CNT_HANDOFF]++;
	/* behind frames already held, so that a flow keeps its order */
	if (w->n_held == 0 && handoff_put(to, m, tag) == 0)
		return;
	if (w->n_held == DROCE_DIM(w->held)) {
		w->cnt[DROCE_PORT_WORKER_CNT_HANDOFF_DROP]++;
		rte_pktmbuf_free(m);
		return;
	}
	w->cnt[DROCE_PORT_WORKER_CNT_HANDOFF_HELD]++;
	w->held[w->n_held].m = m;
	w->held[w->n_held].to = to;
	w->held[w->n_held].tag = tag;
	w->n_held++;
}

/* Hands over the held frames in order, as far as there is room; returns how many wait. */
static __rte_noinline unsigned int
send_held(struct droce_port_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->n_held; i++)
		if (handoff_put(w->held[i].to, w->held[i].m, w->held[i].tag) < 0)
			break;
	w->n_held -= i;
	memmove(w->held, w->held + i, w->n_held * sizeof(w->held[0]));
	return w->n_held;
}

/* A queue other than 0: its fast sort, and the rest to the sorter. */
static __rte_noinline uint16_t
rx_other_queue(struct droce_port_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *slow[DROCE_PORT_WORKER_BURST];
	uint16_t n_slow, i;

	n = droce_port_queue_rx(w->port, w->q, pkts, RTE_MIN(n, (uint16_t)DROCE_PORT_WORKER_BURST),
				slow, &n_slow);
	/* ARP, ND, IGMP/MLD, groups, drops: the port's full sort, on queue 0 */
	for (i = 0; i < n_slow; i++)
		droce_port_worker_hand(w, w->sorter, slow[i], DROCE_PORT_WORKER_SLOW);
	return n;
}

uint16_t
droce_port_worker_rx(struct droce_port_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	if (droce_unlikely(w->n_held > 0) && send_held(w) > 0)
		return 0;	/* the queue waits for the held frames' owner */
	/* queue 0 sorts it all itself (droce_port_queue_rx() would too, a call further) */
	n = w->q == 0 ? droce_port_rx_burst(w->port, pkts, n) : rx_other_queue(w, pkts, n);
	w->cnt[DROCE_PORT_WORKER_CNT_RX_FRAMES] += n;
	return n;
}

struct rte_mbuf *
droce_port_worker_refill(struct droce_port_worker *w)
{
	if (rte_pktmbuf_alloc_bulk(w->mp, w->stash, DROCE_PORT_WORKER_STASH) < 0)
		return rte_pktmbuf_alloc(w->mp);	/* the last few */
	w->n_stash = DROCE_PORT_WORKER_STASH - 1;
	return w->stash[DROCE_PORT_WORKER_STASH - 1];
}

void
droce_port_worker_free_rx(struct droce_port_worker *w, struct rte_mbuf **pkts, unsigned int n)
{
	port_free_rx_to(w->port, w->stash, &w->n_stash, pkts, n);
}

/* A run of handed frames of the same tags to @p fn; SLOW ones sorted by the port first. */
static void
take_run(struct droce_port_worker *w, struct rte_mbuf **run, uint16_t n, unsigned int tags,
	 droce_port_worker_take_fn fn, void *arg)
{
	if (tags & DROCE_PORT_WORKER_SLOW)
		n = droce_port_rx_input(w->port, run, n);
	if (n > 0)
		fn(arg, run, n, tags);
}

unsigned int
droce_port_worker_take(struct droce_port_worker *w, droce_port_worker_take_fn fn, void *arg)
{
	void *got[DROCE_PORT_WORKER_BURST];
	struct rte_mbuf *run[DROCE_PORT_WORKER_BURST];
	unsigned int n, i, tags = 0;
	uint16_t n_run = 0;

	if (w->handoff == NULL)
		return 0;
	n = rte_ring_sc_dequeue_burst(w->handoff, got, DROCE_PORT_WORKER_BURST, NULL);
	/* runs of the same kind go together */
	for (i = 0; i < n; i++) {
		unsigned int t = (unsigned int)((uintptr_t)got[i] & DROCE_PORT_WORKER_TAGS);

		if (n_run > 0 && t != tags) {
			take_run(w, run, n_run, tags, fn, arg);
			n_run = 0;
		}
		tags = t;
		run[n_run++] = (struct rte_mbuf *)((uintptr_t)got[i] & ~(uintptr_t)DROCE_PORT_WORKER_TAGS);
	}
	if (n_run > 0)
		take_run(w, run, n_run, tags, fn, arg);
	return n;
}

void
droce_port_worker_flush(struct droce_port_worker *w)
{
	uint16_t sent;

	if (w->n_tx == 0) {
		droce_port_queue_kick(w->port, w->q);	/* frames the PMD may still hold */
		return;
	}
	sent = droce_port_queue_tx_try(w->port, w->q, w->tx,
				       (uint16_t)RTE_MIN(w->n_tx, (unsigned int)UINT16_MAX));
	w->cnt[DROCE_PORT_WORKER_CNT_TX_FRAMES] += sent;
	if (sent < w->n_tx)
		memmove(w->tx, w->tx + sent, (w->n_tx - sent) * sizeof(w->tx[0]));
	w->n_tx -= sent;
}

int
droce_port_worker_resolve(struct droce_port_worker *w, const uint8_t gid[DROCE_GID_BYTES],
			  uint8_t mac[6])
{
	/* only queue 0's lcore may change the table or send a request */
	return w->q == 0 ? droce_port_resolve(w->port, gid, mac) :
			   droce_port_neigh_peek(w->port, gid, mac);
}

void
droce_port_worker_counters(const struct droce_port_worker *w,
			   uint64_t out[DROCE_PORT_WORKER_CNT_COUNT])
{
	unsigned int i;

	/* the worker is the only writer; 64-bit loads do not tear here */
	for (i = 0; i < DROCE_PORT_WORKER_CNT_COUNT; i++)
		out[i] = __atomic_load_n(&w->cnt[i], __ATOMIC_RELAXED);
}
