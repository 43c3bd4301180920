/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_WIRE_GID_H
#define DROCE_WIRE_GID_H

/**
 * @file
 * GIDs and their IP addresses, multicast mapping and the UDP source port.
 * RoCEv2 GIDs are IPv6 addresses; an IPv4 address a.b.c.d is the GID
 * ::ffff:a.b.c.d (IPv4-mapped). A multicast group GID maps to an IP group
 * and to its Ethernet address: 01:00:5e + low 23 bits (RFC 1112) for IPv4,
 * 33:33 + last 32 bits (RFC 2464) for IPv6.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#define DROCE_GID_BYTES 16

/** The first 12 bytes of an IPv4-mapped GID (::ffff:0:0/96), as an initializer. */
#define DROCE_GID_V4MAPPED_PREFIX { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff }

/** Build the IPv4-mapped GID of @p ip (network order). Inline: parse runs it twice a packet. */
static inline void
droce_gid_from_ipv4(uint8_t gid[DROCE_GID_BYTES], rte_be32_t ip)
{
	static const uint8_t prefix[12] = DROCE_GID_V4MAPPED_PREFIX;

	memcpy(gid, prefix, sizeof(prefix));
	memcpy(gid + 12, &ip, 4);
}

/** True if @p gid is IPv4-mapped (::ffff:0:0/96). */
bool droce_gid_is_ipv4(const uint8_t gid[DROCE_GID_BYTES]);

/** The IPv4 address (network order) of an IPv4-mapped GID. */
rte_be32_t droce_gid_to_ipv4(const uint8_t gid[DROCE_GID_BYTES]);

/** True for an IPv4-mapped 224.0.0.0/4 group or an IPv6 ff00::/8 group. */
bool droce_gid_is_mcast(const uint8_t gid[DROCE_GID_BYTES]);

/** Ethernet group address of a multicast GID; -EINVAL if @p gid is not multicast. */
int droce_gid_mcast_mac(const uint8_t gid[DROCE_GID_BYTES], uint8_t mac[6]);

/** Format as IPv4 dotted quad when IPv4-mapped, else as IPv6; returns @p buf. */
const char *droce_gid_str(const uint8_t gid[DROCE_GID_BYTES], char *buf, unsigned int len);

/**
 * Flow label of a QP pair when the address handle gives none: the product of
 * the two QPNs folded to 20 bits, the same from either end, as the kernel's
 * rdma_calc_flow_label() does.
 */
uint32_t droce_flow_label(uint32_t lqpn, uint32_t rqpn);

/** RoCEv2 UDP source port from a flow label, as rdma-core's ibv_flow_label_to_udp_sport(). */
uint16_t droce_flow_label_to_sport(uint32_t flow_label);

#endif /* DROCE_WIRE_GID_H */
