/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_PORT_WORKER_H
#define DROCE_PORT_WORKER_H

/**
 * @file
 * A worker's data path on one queue of a port: what droced's workers and
 * droce-testpmd's share. One object per worker lcore, touched by that
 * lcore only, except its hand-off ring (any worker in, the owner out).
 *
 *  - droce_port_worker_rx(): a burst of RoCEv2 candidates from its queue.
 *    Queue 0 sorts everything itself (droce_port_rx_burst()); another
 *    queue keeps the unicast RoCEv2 frames and hands the rest, tagged
 *    SLOW, to its sorter (the worker on queue 0 of the same port), whose
 *    droce_port_worker_take() sorts them. A worker on queue 0 of a port
 *    of its own (a net_ring or memif per worker) is its own sorter.
 *  - droce_port_worker_hand(): a received frame for another worker. While
 *    that worker's ring is full the frames wait here, in order, and
 *    droce_port_worker_rx() reads no more of the queue until they went:
 *    the backlog stays in the port's queue, as on a NIC whose host is slow.
 *  - droce_port_worker_tx(): a built frame into the TX backlog, sent a
 *    burst at a time. While the PMD's queue is full the frames wait in
 *    order and droce_port_worker_tx_room() shrinks, so that the caller
 *    stops transmitting (backpressure): a loss only when the backlog
 *    itself is full (TX_FULL). Dropping instead would turn a full queue
 *    into retransmissions and, with thousands of QPs, a storm.
 *  - droce_port_worker_flush(): at the end of every pass.
 *
 * Counters are written by the worker alone (plain adds); any thread reads
 * them with droce_port_worker_counters(), which may lag by a burst.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_port.h"

/** Frames a burst holds: RX, hand-off take, TX flush. */
#define DROCE_PORT_WORKER_BURST		32
/** Most frames the TX backlog may hold. */
#define DROCE_PORT_WORKER_TX_MAX	1024
/** Received frames held for full hand-off rings. */
#define DROCE_PORT_WORKER_HELD		(4 * DROCE_PORT_WORKER_BURST)
/** mbufs it keeps for its next frames (as the port's PORT_STASH). */
#define DROCE_PORT_WORKER_STASH		32

/** Tags of a handed frame (the mbuf pointer's low bits). */
#define DROCE_PORT_WORKER_LOCAL	1u	/**< a group's frame: the receiver's members only */
#define DROCE_PORT_WORKER_SLOW	2u	/**< not sorted yet: for the sorter's full sort */
#define DROCE_PORT_WORKER_TAGS	(DROCE_PORT_WORKER_LOCAL | DROCE_PORT_WORKER_SLOW)

/** Counters of one worker. C(sym, description) */
#define DROCE_PORT_WORKER_COUNTERS(C) \
	C(RX_FRAMES,     "RoCEv2 candidates received from its queue") \
	C(TX_FRAMES,     "frames the PMD accepted") \
	C(TX_FULL,       "frames dropped: the TX backlog was full") \
	C(HANDOFF,       "frames received for another worker, handed to it") \
	C(HANDOFF_HELD,  "received frames (for another worker or the sorter) held: its ring was full") \
	C(HANDOFF_DROP,  "received frames dropped: the held frames were full too")

enum droce_port_worker_counter {
#define C(sym, desc) DROCE_PORT_WORKER_CNT_##sym,
	DROCE_PORT_WORKER_COUNTERS(C)
#undef C
	DROCE_PORT_WORKER_CNT_COUNT
};

/** Name of a counter ("HANDOFF"); "UNKNOWN" if out of range. */
const char *droce_port_worker_counter_name(enum droce_port_worker_counter c);

struct droce_port_worker;

/** Called after a frame went into @p to's ring (e.g. to wake it from a sleep). */
typedef void (*droce_port_worker_kick_fn)(struct droce_port_worker *to, void *arg);

/** What droce_port_worker_init() takes. */
struct droce_port_worker_conf {
	struct droce_port *port;
	uint16_t queue;			/**< its queue of @ref port */
	/**
	 * The worker on queue 0 of @ref port, which sorts what other queues
	 * cannot (NULL: this one, which must then be on queue 0).
	 */
	struct droce_port_worker *sorter;
	/** Slots of its hand-off ring; 0: no ring (nothing is handed to it). */
	unsigned int handoff_slots;
	/** TX backlog, in frames (up to DROCE_PORT_WORKER_TX_MAX); 0: the most. */
	unsigned int tx_backlog;
	/** Called after each hand-off to this worker; NULL: none. */
	droce_port_worker_kick_fn kick;
	void *kick_arg;
	/** Name of the ring (unique in the process). */
	const char *name;
};

/** One worker's data path. Public for the inline calls only: use the functions. */
struct droce_port_worker {
	struct droce_port *port;
	uint16_t q;
	unsigned int tx_cap;
	unsigned int n_tx;
	struct droce_port_worker *sorter;
	struct rte_ring *handoff;	/* frames for us from the others (tagged) */
	droce_port_worker_kick_fn kick;
	void *kick_arg;
	uint64_t cnt[DROCE_PORT_WORKER_CNT_COUNT];
	/* mbufs for its next frames: received ones it is done with, or the pool's */
	struct rte_mempool *mp;
	unsigned int n_stash;
	struct rte_mbuf *stash[DROCE_PORT_WORKER_STASH];
	unsigned int n_held;
	struct {
		struct rte_mbuf *m;
		struct droce_port_worker *to;
		unsigned int tag;
	} held[DROCE_PORT_WORKER_HELD];
	struct rte_mbuf *tx[DROCE_PORT_WORKER_TX_MAX];
} __rte_cache_aligned;

/**
 * Set @p w up (its ring created, if any). @return 0, -EINVAL (bad
 * configuration), or -ENOMEM / -EEXIST (the ring).
 */
int droce_port_worker_init(struct droce_port_worker *w, const struct droce_port_worker_conf *conf);

/** Free what @p w still holds (backlog, held frames, its ring and what is in it). */
void droce_port_worker_fini(struct droce_port_worker *w);

/**
 * A burst of up to @p n (at most DROCE_PORT_WORKER_BURST) RoCEv2
 * candidates from the worker's queue into @p pkts (l2_len and l3_len set);
 * frames its queue cannot sort go to the sorter. While frames are held
 * for a full ring it only retries them: 0, with droce_port_worker_held().
 * @return the candidates in @p pkts[0..ret).
 */
uint16_t droce_port_worker_rx(struct droce_port_worker *w, struct rte_mbuf **pkts, uint16_t n);

/** Frames waiting for room in another worker's ring. */
static inline unsigned int
droce_port_worker_held(const struct droce_port_worker *w)
{
	return w->n_held;
}

/**
 * Received frame @p m for worker @p to, tagged @p tag: into its ring, or
 * held behind those already held (a flow keeps its order). Never fails:
 * a frame is dropped (HANDOFF_DROP) only when the held frames are full.
 */
void droce_port_worker_hand(struct droce_port_worker *w, struct droce_port_worker *to,
			    struct rte_mbuf *m, unsigned int tag);

/**
 * @p m into @p to's ring now, or not at all (a copy the caller may lose:
 * loopback, a group's members). @return 0, or -ENOBUFS: @p m is still
 * the caller's (counted HANDOFF_DROP).
 */
int droce_port_worker_handoff(struct droce_port_worker *w, struct droce_port_worker *to,
			      struct rte_mbuf *m, unsigned int tag);

/** Is anything in @p w's ring? (Any thread.) */
static inline bool
droce_port_worker_has_handed(const struct droce_port_worker *w)
{
	return w->handoff != NULL && !rte_ring_empty(w->handoff);
}

/** What droce_port_worker_take() gives @p fn: frames of one kind of tags. */
typedef void (*droce_port_worker_take_fn)(void *arg, struct rte_mbuf **pkts, uint16_t n,
					  unsigned int tags);

/**
 * Take one burst of the frames other workers handed over and give them to
 * @p fn in runs of the same tags, in order, the tags stripped. A SLOW run
 * is sorted first (droce_port_rx_input()): @p fn gets its candidates only.
 * @return the frames taken from the ring.
 */
unsigned int droce_port_worker_take(struct droce_port_worker *w, droce_port_worker_take_fn fn,
				    void *arg);

/* droce_port_worker_alloc() with an empty stash: refill it from the pool. */
struct rte_mbuf *droce_port_worker_refill(struct droce_port_worker *w);

/**
 * An mbuf for a frame to send, or NULL. From the worker's stash: inline,
 * one trip to the pool per burst (it showed at 5% of a core at 64 B).
 */
static inline struct rte_mbuf *
droce_port_worker_alloc(struct droce_port_worker *w)
{
	if (unlikely(w->n_stash == 0))
		return droce_port_worker_refill(w);
	return w->stash[--w->n_stash];
}

/**
 * Received frames done with: a plain one of the port's pool goes to the
 * stash (as droce_port_free_rx()), the next frame sent; the rest are freed.
 */
void droce_port_worker_free_rx(struct droce_port_worker *w, struct rte_mbuf **pkts,
			       unsigned int n);

/** Hand the PMD what it takes of the backlog; the rest waits, in order. */
void droce_port_worker_flush(struct droce_port_worker *w);

/**
 * Send @p m (built, lengths set): into the backlog, which goes to the PMD
 * every DROCE_PORT_WORKER_BURST frames and at droce_port_worker_flush().
 * @return 0, or -ENOBUFS: the backlog stayed full, @p m freed (TX_FULL).
 */
static inline int
droce_port_worker_tx(struct droce_port_worker *w, struct rte_mbuf *m)
{
	if (unlikely(w->n_tx == w->tx_cap)) {
		droce_port_worker_flush(w);
		if (w->n_tx == w->tx_cap) {	/* still full: only now a loss */
			rte_pktmbuf_free(m);
			w->cnt[DROCE_PORT_WORKER_CNT_TX_FULL]++;
			return -ENOBUFS;
		}
	}
	w->tx[w->n_tx++] = m;
	if (w->n_tx % DROCE_PORT_WORKER_BURST == 0)
		droce_port_worker_flush(w);	/* keep the PMD fed during a long pass */
	return 0;
}

/** Frames the backlog still takes: a caller with many senders stops below a margin. */
static inline unsigned int
droce_port_worker_tx_room(const struct droce_port_worker *w)
{
	return w->tx_cap - w->n_tx;
}

/**
 * The MAC to send to @p gid, as its queue may ask: queue 0's worker
 * resolves (droce_port_resolve(): it may send a request), another's peeks
 * (droce_port_neigh_peek(): what it misses queue 0 asks for). @return as
 * droce_port_resolve().
 */
int droce_port_worker_resolve(struct droce_port_worker *w, const uint8_t gid[DROCE_GID_BYTES],
			      uint8_t mac[6]);

/** Frames in the TX backlog: the PMD refused them so far (or the burst is not full yet). */
static inline unsigned int
droce_port_worker_tx_pending(const struct droce_port_worker *w)
{
	return w->n_tx;
}

/** A snapshot of the counters (any thread; may lag by a burst). */
void droce_port_worker_counters(const struct droce_port_worker *w,
				uint64_t out[DROCE_PORT_WORKER_CNT_COUNT]);

#endif /* DROCE_PORT_WORKER_H */
