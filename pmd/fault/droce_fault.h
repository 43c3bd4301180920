/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_FAULT_H
#define DROCE_FAULT_H

/**
 * @file
 * net_droce_fault: a virtual ethdev that wraps another port and injects
 * faults into the frames passing through it, deterministically.
 *
 *   --vdev 'net_af_packet0,iface=veth0'
 *   --vdev 'net_droce_fault0,port=net_af_packet0,seed=1,loss=0.05,dup=0.01,
 *           reorder=0.05,corrupt=0.01,delay_us=100,dir=both'
 *
 * Parameters (all optional but port):
 *   port=NAME|ID   the wrapped ethdev, by name or port id. It may be given
 *                  before or after this vdev on the EAL command line; it is
 *                  looked up at probe and again at first use. The fault port
 *                  takes ownership of it (rte_eth_dev_owner_set), so port
 *                  iterators skip it and nobody else drives it.
 *   seed=N         PRNG seed (default 1). Each queue and direction draws
 *                  from its own stream derived from it, so the same seed and
 *                  the same sequence of frames give the same faults.
 *   loss=P         probability a frame vanishes
 *   dup=P          probability a frame is sent twice (the copy right after it)
 *   reorder=P      probability a frame is held back and released after the
 *                  next 1..3 frames (or after 1 ms plus the delay if traffic
 *                  stops), so those overtake it
 *   corrupt=P      probability one byte beyond the Ethernet header is XORed
 *                  with a non-zero value (a copy is made if the mbuf is shared)
 *   delay_us=N     every frame is delivered N microseconds late (order kept)
 *   dir=rx|tx|both which directions the faults apply to (default both)
 *
 * A bottleneck (all optional but rate=): a switch's egress queue in front
 * of a slower link, toward the host whose port this wraps when dir=rx.
 * Each direction it applies to has one, shared by all its queues:
 *   rate=N[k|m|g]  the link's bits per second (k = 1000); a frame costs
 *                  its length plus 24 bytes (preamble, FCS, gap)
 *   queue=N[k|m|g] bytes the queue holds (k = 1024; default 1m); a frame
 *                  that does not fit is dropped (tail drop), as is one
 *                  past 4 096 frames in a queue's stage
 *   ecn_min=N, ecn_max=N (bytes), ecn_prob=P (default 1)
 *                  RED marking: an ECN-capable IPv4/IPv6 frame arriving
 *                  at a queue of depth d is marked CE with probability
 *                  ecn_prob * (d - ecn_min) / (ecn_max - ecn_min) between
 *                  them, always at ecn_max and above (ecn_min alone: a
 *                  step there); frames that are not ECN-capable are never
 *                  marked (counted as bn_not_ect). No ecn_*: no marking.
 *   ecn_at=dequeue the same decision as a frame leaves the queue, d the
 *                  bytes queued behind it then (default enqueue: as it
 *                  arrives): the mark reaches the receiver without the
 *                  queue's delay, as on a switch that marks at dequeue
 *   hold=1         (dir=tx only) a full queue refuses frames instead of
 *                  dropping them: tx_burst returns fewer and the caller
 *                  keeps the rest (counted as bn_held), as a host's own
 *                  link does: its NIC's ring fills and the host waits
 * Frames leave the queue at the link's rate, in order; delay_us is added
 * after it (the wire's own delay). The marking draws come from their own
 * stream, so they never change the other faults' pattern for a seed.
 *
 * For every frame, in this order, the stream draws: lost?, duplicated?,
 * corrupted? (and where, and how), reordered? (and for how long) -- always
 * all of them, so the loss pattern of a seed does not change when other
 * rates do. Corruption happens before duplication: both copies carry it.
 *
 * Counters are ethdev xstats, per direction: "rx_fault_in", "rx_fault_out",
 * "rx_fault_lost", "rx_fault_dup", "rx_fault_corrupt", "rx_fault_reorder",
 * "rx_fault_delayed", "rx_fault_nomem", the bottleneck's "rx_fault_bn_marked",
 * "rx_fault_bn_dropped", "rx_fault_bn_not_ect", "rx_fault_bn_max_queue"
 * (the deepest it held, bytes), "rx_fault_bn_held" (0: hold is TX's),
 * "rx_fault_bn_queue" (its depth when read, bytes), and the same with "tx_"; the basic stats count what was delivered (ipackets) and what reached the wrapped
 * port (opackets). droce_fault_stats() reads them as a struct.
 *
 * Threading: RX and TX of a queue may run on different lcores; the held
 * TX frames of a queue are protected by a lock that RX only try-locks to
 * flush them. Primary process only.
 */

#include <stdint.h>

/** Driver name; vdev names start with it. */
#define DROCE_FAULT_DRIVER "net_droce_fault"

/** What one direction of a fault port did (all queues). */
struct droce_fault_dir_stats {
	uint64_t in;		/**< frames that entered the fault stage */
	uint64_t out;		/**< frames delivered (RX) / handed to the wrapped port (TX) */
	uint64_t lost;		/**< dropped on purpose */
	uint64_t dup;		/**< extra copies made */
	uint64_t corrupt;	/**< frames with a flipped byte */
	uint64_t reorder;	/**< frames held back */
	uint64_t delayed;	/**< frames that waited delay_us */
	uint64_t nomem;		/**< copies not made (mempool empty): the frame went unchanged */
	uint64_t bn_marked;	/**< bottleneck: ECN-capable frames marked CE */
	uint64_t bn_dropped;	/**< bottleneck: frames its queue had no room for */
	uint64_t bn_not_ect;	/**< bottleneck: frames due a mark that were not ECN-capable */
	uint64_t bn_max_queue;	/**< bottleneck: the deepest queue, bytes */
	uint64_t bn_held;	/**< bottleneck, hold=1: frames refused while its queue was full */
	uint64_t bn_queue;	/**< bottleneck: its depth now, bytes (not a counter) */
};

/** Both directions. */
struct droce_fault_stats {
	struct droce_fault_dir_stats rx;
	struct droce_fault_dir_stats tx;
};

/**
 * Counters of the fault port @p port_id.
 * @return 0; -ENODEV if @p port_id is not a net_droce_fault port; -EINVAL
 *         if @p st is NULL.
 */
int droce_fault_stats(uint16_t port_id, struct droce_fault_stats *st);

/**
 * The port a fault port wraps.
 * @return 0 and *@p lower; -ENODEV if @p port_id is not a fault port or
 *         its wrapped port does not exist (yet).
 */
int droce_fault_lower_port(uint16_t port_id, uint16_t *lower);

#endif /* DROCE_FAULT_H */
