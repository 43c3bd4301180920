/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * GID <-> IP address, multicast group -> Ethernet address, flow label ->
 * UDP source port (droce_wire_gid.h). Pure functions.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "droce_core.h"
#include "droce_wire_gid.h"

static const uint8_t v4mapped_prefix[12] = DROCE_GID_V4MAPPED_PREFIX;

bool
droce_gid_is_ipv4(const uint8_t gid[DROCE_GID_BYTES])
{
	return memcmp(gid, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0;
}

rte_be32_t
droce_gid_to_ipv4(const uint8_t gid[DROCE_GID_BYTES])
{
	rte_be32_t ip;

	memcpy(&ip, gid + 12, 4);
	return ip;
}

bool
droce_gid_is_mcast(const uint8_t gid[DROCE_GID_BYTES])
{
	if (droce_gid_is_ipv4(gid))
		return (gid[12] & 0xf0) == 0xe0;	/* 224.0.0.0/4 */
	return gid[0] == 0xff;
}

int
droce_gid_mcast_mac(const uint8_t gid[DROCE_GID_BYTES], uint8_t mac[6])
{
	if (!droce_gid_is_mcast(gid))
		return -EINVAL;
	if (droce_gid_is_ipv4(gid)) {
		mac[0] = 0x01;			/* RFC 1112 6.4 */
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
	} else {
		mac[0] = 0x33;			/* RFC 2464 7 */
		mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
	}
	return 0;
}

const char *
droce_gid_str(const uint8_t gid[DROCE_GID_BYTES], char *buf, unsigned int len)
{
	const char *r = droce_gid_is_ipv4(gid) ? inet_ntop(AF_INET, gid + 12, buf, len) :
						inet_ntop(AF_INET6, gid, buf, len);

	if (r == NULL && len > 0)
		buf[0] = '\0';		/* too small: inet_ntop leaves buf untouched */
	return buf;
}

uint32_t
droce_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

uint16_t
droce_flow_label_to_sport(uint32_t flow_label)
{
	uint32_t lo = flow_label & 0x3fff;

	lo ^= (flow_label & 0xfc000) >> 14;
	return (uint16_t)(lo | 0xc000);	/* IB_ROCE_UDP_ENCAP_VALID_PORT_MIN */
}
