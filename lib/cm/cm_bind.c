/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RDMA CM's port-sharing and listener-matching rules (droce_cm_bind.h).
 * Pure functions: the owner keeps the ids and asks about pairs of them.
 */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "droce_cm_bind.h"

/* An IPv4 address is the last 4 bytes of its GID form. */
#define BIND_V4_OFF 12

bool
droce_cm_bind_afonly(uint16_t family, bool set, bool value)
{
	if (set)
		return value;
	/* Linux: IPv4 ids are IPv4-only; IPv6 ones follow bindv6only, 0 by default */
	return family == AF_INET;
}

bool
droce_cm_bind_is_any(const struct droce_cm_bind *b)
{
	static const uint8_t zero[16];

	if (b->family == AF_INET)
		return b->addr[BIND_V4_OFF] == 0;	/* 0.0.0.0/8 */
	return memcmp(b->addr, zero, sizeof(zero)) == 0;
}

static bool
bind_same_addr(const struct droce_cm_bind *a, const struct droce_cm_bind *b)
{
	if (a->family != b->family)
		return false;	/* 10.0.0.1 and ::ffff:10.0.0.1 are two addresses */
	if (a->family == AF_INET)
		return memcmp(&a->addr[BIND_V4_OFF], &b->addr[BIND_V4_OFF], 4) == 0;
	return memcmp(a->addr, b->addr, 16) == 0;
}

int
droce_cm_bind_check(const struct droce_cm_bind *id, const struct droce_cm_bind *cur,
		    bool reuse)
{
	if (reuse && id->reuseaddr && cur->reuseaddr)
		return 0;
	if (id->afonly && cur->afonly && id->family != cur->family)
		return 0;
	if (droce_cm_bind_is_any(id) || droce_cm_bind_is_any(cur))
		return -EADDRNOTAVAIL;
	if (bind_same_addr(id, cur))
		return -EADDRINUSE;
	return 0;
}

bool
droce_cm_bind_takes(const struct droce_cm_bind *l, const struct droce_cm_ip_info *ip)
{
	bool any = droce_cm_bind_is_any(l);

	if (any && !l->afonly)
		return true;
	if (l->family == AF_INET)
		return ip->ip_version == 4 &&
		       (any || memcmp(&l->addr[BIND_V4_OFF], &ip->dst[BIND_V4_OFF], 4) == 0);
	if (l->family == AF_INET6)
		return ip->ip_version == 6 && (any || memcmp(l->addr, ip->dst, 16) == 0);
	return false;
}
