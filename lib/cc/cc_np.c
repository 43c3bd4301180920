/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The notification point's pacing of CNPs: ConnectX answers CE-marked
 * packets of a QP with at most one CNP per min_time_between_cnps; the
 * marks in between are counted, not answered.
 */

#include "droce_cc.h"

bool
droce_cc_np_cnp_due(struct droce_cc_np *np, uint64_t min_time_ns, uint64_t now)
{
	if (np->sent && now - np->last_cnp < min_time_ns)
		return false;
	np->sent = true;
	np->last_cnp = now;
	return true;
}
