/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Multicast on a port: the groups joined (counted joins), the MAC filter
 * they need, and the membership reports routers and snooping switches
 * expect -- IGMPv3 (RFC 3376) or IGMPv2 (RFC 2236) for IPv4 groups, MLDv2
 * (RFC 3810) for IPv6 groups and for the solicited-node groups of our
 * IPv6 addresses. Queries for groups we are in are answered at once (a
 * host may answer early; we have few groups and no timer to spread them).
 *
 * The accepted multicast MACs (port->mc_mac) are the joined groups', the
 * solicited-node groups', IPv6 all-nodes (neighbour discovery, MLD queries)
 * and IPv4 all-hosts (IGMP queries) when we are in an IPv4 group. The
 * port's filter gets the full list (rte_eth_dev_set_mc_addr_list()), or
 * allmulticast where it has none; RX checks the list in software anyway.
 *
 * Polling lcore only.
 */

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>

#include "port_priv.h"

#define IGMP_QUERY		0x11
#define IGMP_V1_REPORT		0x12
#define IGMP_V2_REPORT		0x16
#define IGMP_V2_LEAVE		0x17
#define IGMP_V3_REPORT		0x22

/* group record types, the same numbers in IGMPv3 and MLDv2 */
#define REC_MODE_IS_EXCLUDE	2	/* current state: answer to a query */
#define REC_TO_INCLUDE		3	/* state change: leave (include nothing) */
#define REC_TO_EXCLUDE		4	/* state change: join (exclude nothing) */

#define IPV4_RA_HDR		24	/* IPv4 header + router alert option (RFC 2113) */
#define MAX_RECORDS		64	/* per report: 64 MLDv2 records fit 1500 bytes */

static const uint8_t all_routers_v3_ip[4] = { 224, 0, 0, 22 };	/* IGMPv3 reports */
static const uint8_t all_routers_ip[4] = { 224, 0, 0, 2 };	/* IGMPv2 leaves */
static const uint8_t mld2_routers_ip[16] = { 0xff, 0x02, [15] = 0x16 };

static struct mcast_group *
group_find(struct droce_port *port, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < port->n_mcast; i++)
		if (memcmp(port->mcast[i].gid, gid, 16) == 0)
			return &port->mcast[i];
	return NULL;
}

bool
mcast_has_ipv4(const struct droce_port *port, rte_be32_t ip)
{
	unsigned int i;

	for (i = 0; i < port->n_mcast; i++)
		if (droce_gid_is_ipv4(port->mcast[i].gid) &&
		    droce_gid_to_ipv4(port->mcast[i].gid) == ip)
			return true;
	return false;
}

bool
mcast_has_ipv6(const struct droce_port *port, const uint8_t ip[16])
{
	unsigned int i;

	for (i = 0; i < port->n_mcast; i++)
		if (memcmp(port->mcast[i].gid, ip, 16) == 0)
			return true;
	return false;
}

static void
mc_mac_add(struct droce_port *port, const struct rte_ether_addr *a)
{
	unsigned int i;

	for (i = 0; i < port->n_mc_mac; i++)
		if (rte_is_same_ether_addr(&port->mc_mac[i], a))
			return;
	if (port->n_mc_mac < RTE_DIM(port->mc_mac))
		port->mc_mac[port->n_mc_mac++] = *a;
}

void
mcast_rebuild_filter_list(struct droce_port *port)
{
	static const struct rte_ether_addr all_nodes = { .addr_bytes = { 0x33, 0x33, 0, 0, 0, 1 } };
	static const struct rte_ether_addr all_hosts = { .addr_bytes = { 1, 0, 0x5e, 0, 0, 1 } };
	bool v4 = false;
	unsigned int i;

	port->n_mc_mac = 0;
	for (i = 0; i < port->n_mcast; i++) {
		mc_mac_add(port, &port->mcast[i].mac);
		v4 |= droce_gid_is_ipv4(port->mcast[i].gid);
	}
	for (i = 0; i < port->info.n_ipv6; i++) {
		struct rte_ether_addr a;
		uint8_t snm[16];

		port_solicited_node(port->info.ipv6[i].addr, snm);
		port_ipv6_mcast_mac(snm, &a);
		mc_mac_add(port, &a);
	}
	if (port->info.n_ipv6 > 0 || port->n_mcast > 0)
		mc_mac_add(port, &all_nodes);
	if (v4)
		mc_mac_add(port, &all_hosts);
}

int
mcast_program(struct droce_port *port)
{
	int ret;

	ret = rte_eth_dev_set_mc_addr_list(port->port_id, port->n_mc_mac ? port->mc_mac : NULL,
					   port->n_mc_mac);
	if (ret == 0) {
		port->info.mc_filter = true;
		if (port->info.allmulti) {
			rte_eth_allmulticast_disable(port->port_id);
			port->info.allmulti = false;
		}
		return 0;
	}
	if (ret != -ENOTSUP)
		return ret;
	port->info.mc_filter = false;
	if (port->n_mc_mac == 0) {
		if (port->info.allmulti && rte_eth_allmulticast_disable(port->port_id) == 0)
			port->info.allmulti = false;
		return 0;
	}
	if (port->info.allmulti)
		return 0;
	ret = rte_eth_allmulticast_enable(port->port_id);
	if (ret == 0) {
		port->info.allmulti = true;
		return 0;
	}
	/* no filter at all (af_packet): the port hands us every frame anyway */
	return ret == -ENOTSUP ? 0 : ret;
}

/* ---- reports ---- */

static rte_be32_t
igmp_src(const struct droce_port *port)
{
	/* 0.0.0.0 is a valid IGMPv3 source for a host without an address (RFC 3376 4.2.13) */
	return port->info.n_ipv4 > 0 ? port->info.ipv4[0].addr : 0;
}

/* IPv4 header with a router alert option (RFC 2113), TTL 1, TOS 0xc0 (internetwork control). */
static uint8_t *
put_ipv4_ra(uint8_t *p, rte_be32_t src, const void *dst, uint16_t payload_len)
{
	uint16_t ck;

	p[0] = 0x46;				/* version 4, 6 words */
	p[1] = 0xc0;
	port_store_be16(p + 2, (uint16_t)(IPV4_RA_HDR + payload_len));
	port_store_be16(p + 4, 0);
	port_store_be16(p + 6, 0x4000);		/* DF, as Linux sends them */
	p[8] = 1;				/* TTL: link-local */
	p[9] = IPPROTO_IGMP_;
	port_store_be16(p + 10, 0);
	memcpy(p + 12, &src, 4);
	memcpy(p + 16, dst, 4);
	p[20] = 0x94;				/* router alert: copied, class 0, option 20 */
	p[21] = 4;
	p[22] = 0;
	p[23] = 0;
	ck = (uint16_t)~rte_raw_cksum(p, IPV4_RA_HDR);
	port_store_cksum(p + 10, ck);
	return p + IPV4_RA_HDR;
}

static void
ipv4_mcast_mac(const void *ip, struct rte_ether_addr *mac)
{
	const uint8_t *b = ip;

	mac->addr_bytes[0] = 0x01;
	mac->addr_bytes[1] = 0x00;
	mac->addr_bytes[2] = 0x5e;
	mac->addr_bytes[3] = b[1] & 0x7f;
	mac->addr_bytes[4] = b[2];
	mac->addr_bytes[5] = b[3];
}

/* IGMPv2: one report (or leave) per group. */
static void
send_igmp2(struct droce_port *port, const uint8_t group[4], bool leave)
{
	const void *dst = leave ? all_routers_ip : group;
	struct rte_mbuf *m = port_own_alloc(port, RTE_ETHER_HDR_LEN + IPV4_RA_HDR + 8);
	struct rte_ether_addr dmac;
	uint8_t *p;

	if (m == NULL)
		return;
	ipv4_mcast_mac(dst, &dmac);
	p = port_put_eth(rte_pktmbuf_mtod(m, uint8_t *), &dmac, &port->mac, ETHERTYPE_IPV4);
	p = put_ipv4_ra(p, igmp_src(port), dst, 8);
	p[0] = leave ? IGMP_V2_LEAVE : IGMP_V2_REPORT;
	p[1] = 0;
	memcpy(p + 4, group, 4);
	port_store_cksum(p + 2, (uint16_t)~rte_raw_cksum(p, 8));
	PORT_CNT(port, IGMP_TX);
	port_xmit_own(port, m);
}

/* IGMPv3: one report with a record of @p type for each of @p n groups. */
static void
send_igmp3(struct droce_port *port, const uint8_t (*groups)[4], unsigned int n, uint8_t type)
{
	uint16_t len = (uint16_t)(8 + 8 * n);
	struct rte_mbuf *m = port_own_alloc(port, RTE_ETHER_HDR_LEN + IPV4_RA_HDR + len);
	struct rte_ether_addr dmac;
	unsigned int i;
	uint8_t *p;

	if (m == NULL)
		return;
	ipv4_mcast_mac(all_routers_v3_ip, &dmac);
	p = port_put_eth(rte_pktmbuf_mtod(m, uint8_t *), &dmac, &port->mac, ETHERTYPE_IPV4);
	p = put_ipv4_ra(p, igmp_src(port), all_routers_v3_ip, len);
	p[0] = IGMP_V3_REPORT;
	port_store_be16(p + 6, (uint16_t)n);
	for (i = 0; i < n; i++) {
		uint8_t *r = p + 8 + 8 * i;

		r[0] = type;			/* aux data length 0, no sources */
		memcpy(r + 4, groups[i], 4);
	}
	port_store_cksum(p + 2, (uint16_t)~rte_raw_cksum(p, len));
	PORT_CNT(port, IGMP_TX);
	port_xmit_own(port, m);
}

/* MLDv2: one report with a record of @p type for each of @p n groups. */
static void
send_mld2(struct droce_port *port, const uint8_t (*groups)[16], unsigned int n, uint8_t type)
{
	static const uint8_t unspec[16];
	uint16_t icmp_len = (uint16_t)(8 + 20 * n);
	struct rte_mbuf *m = port_own_alloc(port, RTE_ETHER_HDR_LEN + 40 + 8 + icmp_len);
	const uint8_t *src = unspec;
	struct rte_ether_addr dmac;
	unsigned int i;
	uint8_t *p;

	if (m == NULL)
		return;
	/* the source must be link-local, or :: before we have one (RFC 3810 5.2.13) */
	for (i = 0; i < port->info.n_ipv6; i++)
		if (port->info.ipv6[i].addr[0] == 0xfe && (port->info.ipv6[i].addr[1] & 0xc0) == 0x80)
			src = port->info.ipv6[i].addr;
	port_ipv6_mcast_mac(mld2_routers_ip, &dmac);
	p = port_put_eth(rte_pktmbuf_mtod(m, uint8_t *), &dmac, &port->mac, ETHERTYPE_IPV6);
	p = port_put_ipv6(p, src, mld2_routers_ip, (uint16_t)(8 + icmp_len), IPPROTO_HOPOPTS_, 1);
	/* hop-by-hop: router alert "MLD" (RFC 2711), then PadN to 8 bytes */
	p[0] = IPPROTO_ICMPV6_;
	p[1] = 0;
	p[2] = 5;
	p[3] = 2;
	p[4] = 0;
	p[5] = 0;
	p[6] = 1;
	p[7] = 0;
	p += 8;
	p[0] = ICMP6_MLD2_REPORT;
	port_store_be16(p + 6, (uint16_t)n);
	for (i = 0; i < n; i++) {
		uint8_t *r = p + 8 + 20 * i;

		r[0] = type;
		memcpy(r + 4, groups[i], 16);
	}
	port_store_cksum(p + 2, port_icmp6_cksum(src, mld2_routers_ip, p, icmp_len));
	PORT_CNT(port, MLD_TX);
	port_xmit_own(port, m);
}

static void
report_ipv4(struct droce_port *port, const uint8_t (*groups)[4], unsigned int n, uint8_t type)
{
	unsigned int i;

	if (port->igmp_version == 2) {
		for (i = 0; i < n; i++)
			send_igmp2(port, groups[i], type == REC_TO_INCLUDE);
		return;
	}
	for (i = 0; i < n; i += MAX_RECORDS)
		send_igmp3(port, groups + i, RTE_MIN(n - i, (unsigned int)MAX_RECORDS), type);
}

static void
report_ipv6(struct droce_port *port, const uint8_t (*groups)[16], unsigned int n, uint8_t type)
{
	unsigned int i;

	for (i = 0; i < n; i += MAX_RECORDS)
		send_mld2(port, groups + i, RTE_MIN(n - i, (unsigned int)MAX_RECORDS), type);
}

/* Every group of a family we are in; for IPv6 with the solicited-node groups. */
static void
report_current(struct droce_port *port, bool ipv6, const uint8_t *only, uint8_t type)
{
	uint8_t g6[DROCE_PORT_MAX_MCAST + DROCE_PORT_MAX_ADDRS + 1][16];
	uint8_t g4[DROCE_PORT_MAX_MCAST][4];
	unsigned int i, j, n = 0;

	for (i = 0; i < port->n_mcast; i++) {
		const uint8_t *gid = port->mcast[i].gid;

		if (droce_gid_is_ipv4(gid) == ipv6)
			continue;
		if (only != NULL && memcmp(only, ipv6 ? gid : gid + 12, ipv6 ? 16 : 4) != 0)
			continue;
		if (ipv6)
			memcpy(g6[n++], gid, 16);
		else
			memcpy(g4[n++], gid + 12, 4);
	}
	if (!ipv6) {
		if (n > 0)
			report_ipv4(port, (const uint8_t (*)[4])g4, n, type);
		return;
	}
	for (i = 0; i < port->info.n_ipv6; i++) {
		uint8_t snm[16];

		port_solicited_node(port->info.ipv6[i].addr, snm);
		if (only != NULL && memcmp(only, snm, 16) != 0)
			continue;
		for (j = 0; j < n && memcmp(g6[j], snm, 16) != 0; j++)
			;
		if (j == n)
			memcpy(g6[n++], snm, 16);
	}
	if (n > 0)
		report_ipv6(port, (const uint8_t (*)[16])g6, n, type);
}

void
mcast_report_all(struct droce_port *port, bool ipv6)
{
	report_current(port, ipv6, NULL, REC_TO_EXCLUDE);
}

static void
report_one(struct droce_port *port, const uint8_t gid[16], uint8_t type)
{
	if (droce_gid_is_ipv4(gid))
		report_ipv4(port, (const uint8_t (*)[4])(gid + 12), 1, type);
	else
		report_ipv6(port, (const uint8_t (*)[16])gid, 1, type);
}

/* ---- queries ---- */

void
mcast_rx_igmp(struct droce_port *port, const uint8_t *ip, uint32_t len)
{
	uint32_t ihl = (ip[0] & 0xfu) * 4;
	static const uint8_t zero[4];
	const uint8_t *igmp = ip + ihl;
	uint32_t ilen;

	if (len < ihl + 8) {
		port->drop[DROCE_PORT_DROP_IPV4_BAD]++;
		return;
	}
	ilen = len - ihl;
	if (igmp[0] != IGMP_QUERY || rte_raw_cksum(igmp, ilen) != 0xffff) {
		port->drop[DROCE_PORT_DROP_IGMP]++;
		return;
	}
	if (memcmp(igmp + 4, zero, 4) != 0 && !mcast_has_ipv4(port, *(const rte_be32_t *)
							       (const void *)(igmp + 4))) {
		port->drop[DROCE_PORT_DROP_IGMP]++;
		return;
	}
	PORT_CNT(port, MCAST_QUERY_RX);
	report_current(port, false, memcmp(igmp + 4, zero, 4) ? igmp + 4 : NULL,
		       REC_MODE_IS_EXCLUDE);
}

void
mcast_rx_mld_query(struct droce_port *port, const uint8_t *icmp, uint32_t len)
{
	static const uint8_t unspec[16];
	const uint8_t *group = icmp + 8;

	if (len < 24 || icmp[1] != 0) {		/* MLDv1 query: 24 bytes, v2: 28 and up */
		port->drop[DROCE_PORT_DROP_ICMP6_BAD]++;
		return;
	}
	PORT_CNT(port, MCAST_QUERY_RX);
	report_current(port, true, memcmp(group, unspec, 16) ? group : NULL, REC_MODE_IS_EXCLUDE);
}

/* ---- API ---- */

int
droce_port_mcast_join(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES])
{
	struct mcast_group *g;
	int ret;

	if (!droce_gid_is_mcast(gid))
		return -EINVAL;
	g = group_find(port, gid);
	if (g != NULL) {
		g->refs++;
		return 0;
	}
	if (port->n_mcast >= DROCE_PORT_MAX_MCAST)
		return -ENOSPC;
	g = &port->mcast[port->n_mcast++];
	memcpy(g->gid, gid, 16);
	droce_gid_mcast_mac(gid, g->mac.addr_bytes);
	g->refs = 1;
	mcast_rebuild_filter_list(port);
	ret = mcast_program(port);
	if (ret < 0) {
		port->n_mcast--;
		mcast_rebuild_filter_list(port);
		mcast_program(port);
		return ret;
	}
	report_one(port, gid, REC_TO_EXCLUDE);
	return 0;
}

int
droce_port_mcast_leave(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES])
{
	struct mcast_group *g = group_find(port, gid);
	uint8_t copy[16];

	if (g == NULL)
		return -ENOENT;
	if (--g->refs > 0)
		return 0;
	memcpy(copy, gid, 16);
	*g = port->mcast[--port->n_mcast];
	mcast_rebuild_filter_list(port);
	mcast_program(port);
	report_one(port, copy, REC_TO_INCLUDE);
	return 0;
}
