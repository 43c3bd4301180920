/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CM_BIND_H
#define DROCE_CM_BIND_H

/**
 * @file
 * RDMA CM's port sharing and listener matching, by the rules of Linux's
 * drivers/infiniband/core/cma.c, so that applications written against the
 * kernel's rdma_cm bind and listen the same way on droce.
 *
 * Binding. Every id bound to a port of a port space is an "owner" of that
 * port. A new owner may join unless, against some owner already there
 * (cma_check_port):
 *   - both asked for REUSEADDR: they share, whatever the addresses (a
 *     listener is never counted as a REUSEADDR id: rdma_listen re-checks
 *     its port as if it had not asked, and clears the flag);
 *   - both are AFONLY and of different families: they share;
 *   - either is the wildcard of its family: -EADDRNOTAVAIL;
 *   - the same family and address: -EADDRINUSE;
 *   - otherwise (distinct specific addresses): they share.
 * AFONLY that was never set is 1 for an AF_INET id and 0 for an AF_INET6
 * one (Linux's net.ipv6.bindv6only default).
 *
 * Listening. All listeners of one service ID share one IB CM listener; a
 * REQ or SIDR_REQ goes to the first whose address takes the destination
 * the cma header names (cma_match_private_data): a wildcard without AFONLY
 * takes every version; otherwise the header's IP version must be the
 * listener's family's (an IPv6 id connecting to ::ffff:a.b.c.d sends
 * version 6), and a specific address must equal the destination.
 *
 * Addresses are 16-byte GID form (IPv4 as ::ffff:a.b.c.d), as elsewhere
 * in lib/cm; families are AF_INET and AF_INET6.
 */

#include <stdbool.h>
#include <stdint.h>

#include "droce_cm_ip.h"

/** What the port-sharing rules look at in one bound id. */
struct droce_cm_bind {
	uint16_t family;		/**< AF_INET or AF_INET6 */
	uint8_t addr[16];		/**< GID form */
	bool afonly;			/**< see droce_cm_bind_afonly() */
	bool reuseaddr;			/**< REUSEADDR, and not listening */
};

/**
 * The AFONLY an id binds with: @p value when the application set
 * RDMA_OPTION_ID_AFONLY (@p set), else Linux's default for @p family.
 */
bool droce_cm_bind_afonly(uint16_t family, bool set, bool value);

/**
 * Is @p b bound to its family's wildcard? (0.0.0.0/8 for AF_INET, as
 * Linux's ipv4_is_zeronet(); :: for AF_INET6.)
 */
bool droce_cm_bind_is_any(const struct droce_cm_bind *b);

/**
 * May @p id own the port beside @p cur, an owner already there?
 * @p reuse: take @p id's REUSEADDR into account (false for the re-check of
 * rdma_listen).
 * @return 0 (they share), -EADDRNOTAVAIL (a wildcard on either side) or
 *         -EADDRINUSE (the same address).
 */
int droce_cm_bind_check(const struct droce_cm_bind *id, const struct droce_cm_bind *cur,
			bool reuse);

/**
 * Does listener @p l take a REQ or SIDR_REQ whose cma header says @p ip?
 */
bool droce_cm_bind_takes(const struct droce_cm_bind *l, const struct droce_cm_ip_info *ip);

#endif /* DROCE_CM_BIND_H */
