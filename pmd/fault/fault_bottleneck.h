/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_FAULT_BOTTLENECK_H
#define DROCE_FAULT_BOTTLENECK_H

/*
 * The bottleneck of net_droce_fault: a switch's egress queue in front of a
 * link of fixed rate, with tail drop and RED-style ECN marking, as a
 * datacenter switch marks for DCQCN. The model is I/O-free: time is in TSC
 * cycles passed in, frames are lengths and header bytes; fault.c locks it
 * and feeds it the frames of every queue of one direction of a port.
 *
 * The queue is kept as the moment the link will have sent everything
 * admitted (free_at): its depth at any time is what remains to send then,
 * so there is no queue of frames here, only each frame's departure time.
 */

#include <stdbool.h>
#include <stdint.h>

/* What a frame costs on the wire beside its bytes: preamble and start
 * delimiter 8, FCS 4 (not in an mbuf), inter-frame gap 12. */
#define FAULT_BN_WIRE_OVERHEAD	24

struct fault_bn_params {
	uint64_t rate_bps;		/* 0: no bottleneck */
	uint64_t queue;			/* bytes the queue holds; past it, tail drop */
	bool ecn;			/* mark at all */
	uint64_t ecn_min, ecn_max;	/* marking thresholds, bytes */
	uint64_t ecn_prob;		/* P at ecn_max, as a threshold on a 32-bit draw */
	bool ecn_dequeue;		/* marks decided as frames leave, by the depth behind them */
	bool hold;			/* a full queue refuses frames instead of dropping them */
};

struct fault_bn_stats {
	uint64_t marked;		/* ECT frames marked CE */
	uint64_t dropped;		/* frames the queue had no room for */
	uint64_t not_ect;		/* frames that would have been marked: not ECN-capable */
	uint64_t max_queue;		/* deepest queue seen, bytes */
	uint64_t held;			/* hold: frames refused while the queue was full */
};

struct fault_bn {
	const struct fault_bn_params *p;
	uint64_t cyc_per_byte;		/* TSC cycles per wire byte, << FAULT_BN_FRAC */
	uint64_t free_at;		/* TSC: the link has sent everything admitted */
	uint64_t rng;
	struct fault_bn_stats st;
};

#define FAULT_BN_FRAC	16

/* Vigna's splitmix64: seeds the fault streams, and is the marking draws' stream */
static inline uint64_t
splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

enum fault_bn_verdict {
	FAULT_BN_PASS,			/* queued */
	FAULT_BN_MARK,			/* queued; set CE in its IP header */
	FAULT_BN_DROP,			/* tail drop */
};

/* @p hz: TSC cycles per second; @p seed: the marking draws' stream. */
void fault_bn_init(struct fault_bn *b, const struct fault_bn_params *p, uint64_t hz,
		   uint64_t seed);

/* Bytes waiting at @p now (the frame on the wire included). */
uint64_t fault_bn_depth(const struct fault_bn *b, uint64_t now);

/* A frame of @p len bytes fits the queue at @p now (else held: counted). */
bool fault_bn_takes(struct fault_bn *b, uint32_t len, uint64_t now);

/*
 * A frame of @p len bytes (its mbuf length) arrives at @p now; @p ect: its
 * IP header says ECN-capable. Unless dropped, *@p due is when its last bit
 * has left the link.
 */
enum fault_bn_verdict fault_bn_admit(struct fault_bn *b, uint32_t len, bool ect, uint64_t now,
				     uint64_t *due);

/*
 * ecn_dequeue: a frame admitted leaves the queue at @p left (its due):
 * true if it is to be marked CE then, by the bytes queued behind it.
 */
bool fault_bn_mark_leaving(struct fault_bn *b, bool ect, uint64_t left);

/*
 * The ECN field of an Ethernet frame's IPv4 or IPv6 header (behind up to
 * two VLAN tags). @return the offset of the byte holding it and *@p ecn,
 * or -1 for a frame that is not IP or too short.
 */
int fault_ecn_find(const uint8_t *frame, uint32_t len, uint8_t *ecn);

/* Set CE in the header found by fault_ecn_find(), mending IPv4's checksum. */
void fault_ecn_set_ce(uint8_t *frame, int at);

#endif /* DROCE_FAULT_BOTTLENECK_H */
