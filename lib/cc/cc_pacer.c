/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The per-QP token bucket, kept as a virtual clock (droce_cc.h). A
 * charge's time is bytes * 8e9 / rate nanoseconds; the remainder is
 * carried so that the long-run rate is exact however small the packets.
 */

#include "droce_cc.h"

#define NS_PER_S	1000000000ull

void
droce_pacer_set(struct droce_pacer *pc, uint64_t rate_bps, uint64_t burst_bytes, uint64_t now)
{
	if (rate_bps != pc->rate) {
		/*
		 * the bytes still owed are owed at the new rate: a debt run up
		 * at 1 Mb/s would otherwise stall the QP long after DCQCN let
		 * it go faster (and unpaced, it owed nothing)
		 */
		if (pc->rate == 0 || rate_bps == 0 || pc->tat <= now)
			pc->tat = now;
		else
			pc->tat = now + (uint64_t)((unsigned __int128)(pc->tat - now) * pc->rate /
						   rate_bps);
		pc->rem = 0;
	}
	pc->rate = rate_bps;
	pc->burst_ns = rate_bps == 0 ? 0 : burst_bytes * 8 * NS_PER_S / rate_bps;
}

void
droce_pacer_charge(struct droce_pacer *pc, uint64_t bytes, uint64_t now)
{
	uint64_t bit_ns;

	if (pc->rate == 0)
		return;
	/* idle time banks at most the burst: the bucket is full, not fuller */
	if (pc->tat < now)
		pc->tat = now;
	bit_ns = bytes * 8 * NS_PER_S + pc->rem;
	pc->tat += bit_ns / pc->rate;
	pc->rem = bit_ns % pc->rate;
}
