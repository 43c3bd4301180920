/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_ENGINE_H
#define DROCE_ENGINE_H

/**
 * @file
 * The engine: the data plane of a device, run by one worker thread. It
 * owns a shard of the device's QPs (their transport state, the live and
 * active lists, timers), the loopback queue and its counters; it takes
 * doorbells, turns client WQEs into transport WQEs, dispatches received
 * frames by QPN, and transmits through the device's port ops.
 *
 * The device (droce_verbs_dev.h) is the control plane: objects, handles,
 * clients and requests. It places every QP on an engine when the QP is
 * created; the QP stays there for its life.
 */

#include <stdbool.h>
#include <stdint.h>

#include "droce_wire.h"

struct droce_dev;
struct droce_engine;

/** Engine @p i of @p dev (each run by its own worker thread), or NULL. */
struct droce_engine *droce_dev_engine(struct droce_dev *dev, unsigned int i);
/** How many engines @p dev has (droce_dev_conf.n_engines). */
unsigned int droce_dev_n_engines(const struct droce_dev *dev);

/** The port ops' argument for this engine's calls (its worker's port queue). */
void droce_engine_set_port_arg(struct droce_engine *eng, void *arg);

/**
 * Which engine a received frame is for: its QPN's shard, 0 for QP1, -1
 * for a multicast group (any engine: droce_engine_rx() hands copies to
 * the others that have members). A frame for another engine goes to it
 * whole (the daemon's hand-off ring), to be received there.
 */
int droce_engine_owner(const struct droce_engine *eng, const struct droce_pkt *pkt);

/**
 * Waiting instead of polling (--idle wait, verbs_engine_wait.c). How long
 * the worker may wait from @p now without running a timer late: 0 if
 * there is work now (active QPs, loopback frames, unread send queues),
 * UINT64_MAX if no timer is pending at all.
 */
uint64_t droce_engine_wait_budget(const struct droce_engine *eng, uint64_t now);
/**
 * How long the worker may sleep from @p now because its only work is
 * paced QPs waiting for their time (verbs_engine_cc.c): the time to the
 * first of them, or 0 if anything else may need it now (active QPs,
 * loopback frames) or no QP waits. A worker that sleeps this long instead
 * of yielding is woken by the kernel on time, where a yield under load
 * gives the core away for a whole time slice.
 */
uint64_t droce_engine_pace_wait(const struct droce_engine *eng, uint64_t now);
/**
 * Tell every client whether the worker may be asleep. After setting it
 * (true), the caller looks at the doorbells once more
 * (droce_engine_doorbells()) and waits only if there were none; it clears
 * it (false) on waking.
 */
void droce_engine_sleep(struct droce_engine *eng, bool asleep);

/** Take doorbells from every client and feed new WQEs to the transports. */
unsigned int droce_engine_doorbells(struct droce_engine *eng, uint64_t now);

/**
 * Start loading the lines droce_engine_rx() will read for @p pkt (its
 * QP's transport state), a burst of frames ahead of it.
 */
void droce_engine_prefetch_rx(const struct droce_engine *eng, const struct droce_pkt *pkt);

/**
 * A received RoCEv2 frame (already parsed into @p pkt) for this engine
 * (droce_engine_owner()). A group's frame reaches this engine's members
 * and, unless @p local_only (it was handed over by another engine), a copy
 * goes to every other engine with members.
 */
void droce_engine_rx(struct droce_engine *eng, const struct droce_pkt *pkt, const uint8_t *frame,
		     uint32_t len, bool local_only, uint64_t now);

/** Let every active QP transmit (budget per QP), deliver loopback frames, run timers. */
unsigned int droce_engine_poll(struct droce_engine *eng, uint64_t now);

#endif /* DROCE_ENGINE_H */
