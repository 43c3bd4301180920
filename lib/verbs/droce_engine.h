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

/** The engine of @p dev (one today) that the worker polls. */
struct droce_engine *droce_dev_engine(struct droce_dev *dev);

/**
 * Waiting instead of polling (--idle wait, verbs_engine_wait.c). How long
 * the worker may wait from @p now without running a timer late: 0 if
 * there is work now (active QPs, loopback frames, unread send queues),
 * UINT64_MAX if no timer is pending at all.
 */
uint64_t droce_engine_wait_budget(const struct droce_engine *eng, uint64_t now);
/**
 * Tell every client whether the worker may be asleep. After setting it
 * (true), the caller looks at the doorbells once more
 * (droce_engine_doorbells()) and waits only if there were none; it clears
 * it (false) on waking.
 */
void droce_engine_sleep(struct droce_engine *eng, bool asleep);

/** Take doorbells from every client and feed new WQEs to the transports. */
unsigned int droce_engine_doorbells(struct droce_engine *eng, uint64_t now);

/** A received RoCEv2 frame (already parsed into @p pkt). */
void droce_engine_rx(struct droce_engine *eng, const struct droce_pkt *pkt, const uint8_t *frame,
		     uint64_t now);

/** Let every active QP transmit (budget per QP), deliver loopback frames, run timers. */
unsigned int droce_engine_poll(struct droce_engine *eng, uint64_t now);

#endif /* DROCE_ENGINE_H */
