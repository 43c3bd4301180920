/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_IDLE_H
#define DROCE_IDLE_H

/**
 * @file
 * What a poll loop does when a pass found no work, shared by droced and
 * droce-testpmd. Two busy pollers on one core starve each other (measured
 * on a 2-core machine: 0.13 Mpps instead of 17 Mpps through net_memif), so
 * small machines need a loop that gives the core away.
 *
 *   BUSY   spin: lowest latency, a whole core (dedicated cores)
 *   YIELD  sched_yield(): others run, the loop keeps its place
 *   SLEEP  yield through short gaps, nap after DROCE_IDLE_NAP_AFTER_NS
 *          without work, nap longer after DROCE_IDLE_DEEP_AFTER_NS: a few
 *          percent of a core when really idle, at most a millisecond
 *          late for the first packet after a quiet second
 *   WAIT   yield for DROCE_IDLE_SPIN_NS, then sleep until there is work:
 *          droced waits in epoll on its port's file descriptor (af_packet),
 *          the clients' doorbell eventfds, its control thread and its
 *          timers (app/droced/droced_loop.c). With a port that has no
 *          descriptor to wait on (memif, ring in DPDK 22.11) it keeps
 *          SLEEP's schedule, the naps in epoll (a doorbell ends them);
 *          droce-testpmd, which has no clients, behaves as SLEEP.
 */

#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum droce_idle_mode {
	DROCE_IDLE_BUSY,
	DROCE_IDLE_YIELD,
	DROCE_IDLE_SLEEP,
	DROCE_IDLE_WAIT,
};

/*
 * A nap costs a timer tick on kernels with coarse timers (4 ms measured
 * here): too much between packets of a conversation, nothing for a loop
 * that has been idle this long.
 */
#define DROCE_IDLE_NAP_AFTER_NS		(20ull * 1000 * 1000)
#define DROCE_IDLE_NAP_US		100
#define DROCE_IDLE_DEEP_AFTER_NS	(1000ull * 1000 * 1000)
#define DROCE_IDLE_DEEP_US		1000
/* WAIT: an epoll wake-up costs no tick, so the spin before it can be short */
#define DROCE_IDLE_SPIN_NS		(100ull * 1000)

/** "busy", "yield", "sleep" or "wait" into @p mode. @return 0, or -1 if unknown. */
static inline int
droce_idle_parse(const char *s, enum droce_idle_mode *mode)
{
	if (strcmp(s, "busy") == 0)
		*mode = DROCE_IDLE_BUSY;
	else if (strcmp(s, "yield") == 0)
		*mode = DROCE_IDLE_YIELD;
	else if (strcmp(s, "sleep") == 0)
		*mode = DROCE_IDLE_SLEEP;
	else if (strcmp(s, "wait") == 0)
		*mode = DROCE_IDLE_WAIT;
	else
		return -1;
	return 0;
}

/** CLOCK_MONOTONIC in nanoseconds: the time base of the transports. */
static inline uint64_t
droce_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** The nap of SLEEP after @p idle_ns without work, in microseconds (0: yield). */
static inline unsigned int
droce_idle_nap_us(uint64_t idle_ns)
{
	if (idle_ns < DROCE_IDLE_NAP_AFTER_NS)
		return 0;
	return idle_ns < DROCE_IDLE_DEEP_AFTER_NS ? DROCE_IDLE_NAP_US : DROCE_IDLE_DEEP_US;
}

/** Called after a pass without work; @p last_work is when the last one had some. */
static inline void
droce_idle(enum droce_idle_mode mode, uint64_t now, uint64_t last_work)
{
	switch (mode) {
	case DROCE_IDLE_YIELD:
		sched_yield();
		break;
	case DROCE_IDLE_SLEEP:
	case DROCE_IDLE_WAIT: {	/* for a loop with nothing to wait on */
		unsigned int us = droce_idle_nap_us(now - last_work);

		if (us == 0)
			sched_yield();
		else
			usleep(us);
		break;
	}
	default:
		break;
	}
}

#endif /* DROCE_IDLE_H */
