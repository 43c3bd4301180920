/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* The bottleneck's queue and marking (fault_bottleneck.h). */

#include <string.h>

#include "fault_bottleneck.h"

#define ETH_HLEN	14
#define ETH_P_IPV4	0x0800
#define ETH_P_IPV6	0x86dd
#define ETH_P_VLAN	0x8100
#define ETH_P_QINQ	0x88a8
#define ECN_CE		3

static uint32_t
draw(struct fault_bn *b)
{
	b->rng = splitmix64(b->rng);
	return (uint32_t)(b->rng >> 32);
}

void
fault_bn_init(struct fault_bn *b, const struct fault_bn_params *p, uint64_t hz, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	b->p = p;
	b->rng = seed;
	if (p->rate_bps > 0)
		b->cyc_per_byte = (uint64_t)(((unsigned __int128)hz * 8 << FAULT_BN_FRAC) /
					     p->rate_bps);
}

uint64_t
fault_bn_depth(const struct fault_bn *b, uint64_t now)
{
	if (b->free_at <= now || b->cyc_per_byte == 0)
		return 0;
	return (uint64_t)(((unsigned __int128)(b->free_at - now) << FAULT_BN_FRAC) /
			  b->cyc_per_byte);
}

/* RED: nothing below ecn_min, rising to ecn_prob at ecn_max, all above. */
static bool
want_mark(struct fault_bn *b, uint64_t depth)
{
	const struct fault_bn_params *p = b->p;
	uint64_t thr;

	if (!p->ecn || depth < p->ecn_min)
		return false;
	if (depth >= p->ecn_max)
		return true;
	thr = (uint64_t)((unsigned __int128)p->ecn_prob * (depth - p->ecn_min) /
			 (p->ecn_max - p->ecn_min));
	return draw(b) < thr;
}

bool
fault_bn_takes(struct fault_bn *b, uint32_t len, uint64_t now)
{
	if (fault_bn_depth(b, now) + len + FAULT_BN_WIRE_OVERHEAD <= b->p->queue)
		return true;
	b->st.held++;
	return false;
}

enum fault_bn_verdict
fault_bn_admit(struct fault_bn *b, uint32_t len, bool ect, uint64_t now, uint64_t *due)
{
	uint64_t wire = (uint64_t)len + FAULT_BN_WIRE_OVERHEAD;
	uint64_t depth = fault_bn_depth(b, now);
	enum fault_bn_verdict v = FAULT_BN_PASS;
	unsigned __int128 send;

	if (depth + wire > b->p->queue) {
		b->st.dropped++;
		return FAULT_BN_DROP;
	}
	if (!b->p->ecn_dequeue && want_mark(b, depth)) {
		if (ect)
			v = FAULT_BN_MARK;
		else
			b->st.not_ect++;
	}
	if (v == FAULT_BN_MARK)
		b->st.marked++;
	if (depth + wire > b->st.max_queue)
		b->st.max_queue = depth + wire;
	/* rounded up: a frame never leaves before its last bit could */
	send = ((unsigned __int128)wire * b->cyc_per_byte + (1u << FAULT_BN_FRAC) - 1) >>
	       FAULT_BN_FRAC;
	b->free_at = (b->free_at > now ? b->free_at : now) + (uint64_t)send;
	*due = b->free_at;
	return v;
}

bool
fault_bn_mark_leaving(struct fault_bn *b, bool ect, uint64_t left)
{
	if (!want_mark(b, fault_bn_depth(b, left)))
		return false;
	if (ect)
		b->st.marked++;
	else
		b->st.not_ect++;
	return ect;
}

int
fault_ecn_find(const uint8_t *f, uint32_t len, uint8_t *ecn)
{
	uint32_t off = ETH_HLEN;
	uint16_t type;
	int tags;

	if (len < ETH_HLEN)
		return -1;
	type = (uint16_t)(f[12] << 8 | f[13]);
	for (tags = 0; tags < 2 && (type == ETH_P_VLAN || type == ETH_P_QINQ); tags++) {
		if (len < off + 4)
			return -1;
		type = (uint16_t)(f[off + 2] << 8 | f[off + 3]);
		off += 4;
	}
	if (type == ETH_P_IPV4 && len >= off + 20 && f[off] >> 4 == 4) {
		*ecn = f[off + 1] & 3;
		return (int)off;
	}
	if (type == ETH_P_IPV6 && len >= off + 40 && f[off] >> 4 == 6) {
		*ecn = (f[off + 1] >> 4) & 3;
		return (int)off;
	}
	return -1;
}

void
fault_ecn_set_ce(uint8_t *f, int at)
{
	uint8_t *ip = f + at;
	uint32_t sum;
	uint16_t old, new;

	if (ip[0] >> 4 == 6) {
		ip[1] |= ECN_CE << 4;
		return;
	}
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the version/IHL/TOS word */
	old = (uint16_t)(ip[0] << 8 | ip[1]);
	ip[1] |= ECN_CE;
	new = (uint16_t)(ip[0] << 8 | ip[1]);
	sum = (uint16_t)~(ip[10] << 8 | ip[11]);
	sum += (uint16_t)~old;
	sum += new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (uint16_t)~sum;
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
}
