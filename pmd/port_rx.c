/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The receive side of the port (droce_port.h): RX classification.
 * droce_port_rx_burst() sorts each frame with a few loads in the
 * order a frame is laid out -- destination MAC, ethertype, IP version and
 * destination, protocol, UDP port -- and checks each length before it
 * reads: RoCEv2 candidates are compacted into the caller's array, ARP and
 * neighbour discovery go to port_neigh.c, IGMP/MLD queries to
 * port_mcast.c, everything else is counted by reason and freed.
 *
 * Polling lcore only. No per-packet logs: counters.
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "port_priv.h"

#define IPV4_MIN_HDR	20
#define IPV6_HDR	40
#define UDP_HDR		8
#define ROCE_PORT_BE	RTE_BE16(4791)
/*
 * l2_len and l3_len of a RoCEv2 candidate, in one store of the offload
 * word (the rest of it means nothing on receive): two bit-field writes
 * were a read-modify-write each.
 */
static inline void
port_set_hdr_lens(struct rte_mbuf *m, uint32_t l3_len)
{
	m->tx_offload = rte_mbuf_tx_offload(RTE_ETHER_HDR_LEN, l3_len, 0, 0, 0, 0, 0);
}

/* Destination MAC: ours, broadcast, or one of the groups we listen to. */
static enum droce_port_drop
rx_check_dmac(const struct droce_port *port, const struct rte_ether_addr *d)
{
	unsigned int i;

	if (droce_likely(rte_is_same_ether_addr(d, &port->mac)))
		return 0;
	if (rte_is_unicast_ether_addr(d))
		return DROCE_PORT_DROP_DST_MAC;
	if (rte_is_broadcast_ether_addr(d))
		return 0;
	for (i = 0; i < port->n_mc_mac; i++)
		if (rte_is_same_ether_addr(d, &port->mc_mac[i]))
			return 0;
	return DROCE_PORT_DROP_MCAST_MAC;
}

#define RX_PASS		((enum droce_port_drop)-1)	/* a RoCEv2 candidate */
#define RX_CONSUMED	((enum droce_port_drop)-2)	/* handled here, counted elsewhere */

static enum droce_port_drop
rx_ipv4(struct droce_port *port, struct rte_mbuf *m, const uint8_t *ip, uint32_t len)
{
	uint32_t ihl, total;
	rte_be32_t dst;

	if (len < IPV4_MIN_HDR || ip[0] >> 4 != 4)
		return DROCE_PORT_DROP_IPV4_BAD;
	ihl = (ip[0] & 0xfu) * 4;
	total = port_load_be16(ip + 2);
	if (ihl < IPV4_MIN_HDR || total < ihl || total > len)
		return DROCE_PORT_DROP_IPV4_BAD;
	memcpy(&dst, ip + 16, 4);

	switch (ip[9]) {
	case IPPROTO_UDP_:
		if (total < ihl + UDP_HDR)
			return DROCE_PORT_DROP_IPV4_BAD;
		if (!port_owns_ipv4(port, dst) && !mcast_has_ipv4(port, dst))
			return DROCE_PORT_DROP_IP_NOT_OURS;
		if (*(const rte_be16_t *)(const void *)(ip + ihl + 2) != ROCE_PORT_BE)
			return DROCE_PORT_DROP_UDP_PORT;
		port_set_hdr_lens(m, ihl);
		return RX_PASS;
	case IPPROTO_IGMP_:
		mcast_rx_igmp(port, ip, total);
		return RX_CONSUMED;
	default:
		if (!port_owns_ipv4(port, dst) && !mcast_has_ipv4(port, dst))
			return DROCE_PORT_DROP_IP_NOT_OURS;
		return DROCE_PORT_DROP_IP_PROTO;
	}
}

static enum droce_port_drop
rx_ipv6(struct droce_port *port, struct rte_mbuf *m, const struct rte_ether_hdr *eth,
	const uint8_t *ip, uint32_t len)
{
	const uint8_t *dst = ip + 24, *l4 = ip + IPV6_HDR;
	uint32_t plen;
	uint8_t nh;

	if (len < IPV6_HDR || ip[0] >> 4 != 6)
		return DROCE_PORT_DROP_IPV6_BAD;
	plen = port_load_be16(ip + 4);
	if (IPV6_HDR + plen > len)
		return DROCE_PORT_DROP_IPV6_BAD;
	nh = ip[6];

	if (nh == IPPROTO_UDP_) {
		if (plen < UDP_HDR)
			return DROCE_PORT_DROP_IPV6_BAD;
		if (!port_owns_ipv6(port, dst) && !mcast_has_ipv6(port, dst))
			return DROCE_PORT_DROP_IP_NOT_OURS;
		if (*(const rte_be16_t *)(const void *)(l4 + 2) != ROCE_PORT_BE)
			return DROCE_PORT_DROP_UDP_PORT;
		port_set_hdr_lens(m, IPV6_HDR);
		return RX_PASS;
	}
	if (nh == IPPROTO_HOPOPTS_) {
		/* MLD queries come after a hop-by-hop header (router alert) */
		uint32_t hlen;

		if (plen < 8)
			return DROCE_PORT_DROP_IPV6_BAD;
		hlen = (uint32_t)(l4[1] + 1) * 8;
		if (hlen + 4 > plen)
			return DROCE_PORT_DROP_IPV6_BAD;
		if (l4[0] != IPPROTO_ICMPV6_)
			return DROCE_PORT_DROP_IP_PROTO;
		if (port_icmp6_cksum(ip + 8, dst, l4 + hlen, plen - hlen) != 0)
			return DROCE_PORT_DROP_ICMP6_BAD;
		if (l4[hlen] == ICMP6_MLD_QUERY) {
			mcast_rx_mld_query(port, l4 + hlen, plen - hlen);
			return RX_CONSUMED;
		}
		if (l4[hlen] == ICMP6_MLD1_REPORT || l4[hlen] == ICMP6_MLD1_DONE ||
		    l4[hlen] == ICMP6_MLD2_REPORT)
			return DROCE_PORT_DROP_IGMP;
		return DROCE_PORT_DROP_ICMP6_OTHER;
	}
	if (nh == IPPROTO_ICMPV6_) {
		if (plen < 4)
			return DROCE_PORT_DROP_ICMP6_BAD;
		if (l4[0] == ICMP6_NS || l4[0] == ICMP6_NA) {
			neigh_write_begin(port);
			neigh_rx_nd(port, eth, ip, l4, plen);
			neigh_write_end(port);
			return RX_CONSUMED;
		}
		if (!port_owns_ipv6(port, dst) && !mcast_has_ipv6(port, dst))
			return DROCE_PORT_DROP_IP_NOT_OURS;
		return DROCE_PORT_DROP_ICMP6_OTHER;
	}
	if (!port_owns_ipv6(port, dst) && !mcast_has_ipv6(port, dst))
		return DROCE_PORT_DROP_IP_NOT_OURS;
	return DROCE_PORT_DROP_IP_PROTO;
}

static enum droce_port_drop
rx_classify(struct droce_port *port, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	const uint8_t *l3;
	uint32_t len = rte_pktmbuf_data_len(m);
	enum droce_port_drop r;

	/* RX is configured without scatter; a chain means a PMD that ignores it */
	if (len < RTE_ETHER_HDR_LEN)
		return DROCE_PORT_DROP_RUNT;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	r = rx_check_dmac(port, &eth->dst_addr);
	if (r != 0)
		return r;
	l3 = (const uint8_t *)(eth + 1);
	len -= RTE_ETHER_HDR_LEN;

	switch (eth->ether_type) {
	case RTE_BE16(ETHERTYPE_IPV4):
		return rx_ipv4(port, m, l3, len);
	case RTE_BE16(ETHERTYPE_IPV6):
		return rx_ipv6(port, m, eth, l3, len);
	case RTE_BE16(ETHERTYPE_ARP):
		neigh_write_begin(port);
		neigh_rx_arp(port, eth, l3, len);
		neigh_write_end(port);
		return RX_CONSUMED;
	case RTE_BE16(ETHERTYPE_VLAN):
	case RTE_BE16(ETHERTYPE_QINQ):
		return DROCE_PORT_DROP_VLAN;
	default:
		return DROCE_PORT_DROP_ETHERTYPE;
	}
}

/*
 * The common case another queue's lcore keeps: a unicast RoCEv2 frame to
 * our MAC and one of our addresses. Header checks as rx_ipv4()/rx_ipv6()
 * make them; whatever fails goes the slow way, to queue 0's full sort.
 */
static bool
rx_is_fast(const struct droce_port *port, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const uint8_t *ip = (const uint8_t *)(eth + 1);
	uint32_t len = rte_pktmbuf_data_len(m), total;
	rte_be32_t dst, w;

	/*
	 * The shortest frame is IPv4's (a 0-byte SEND: 58 bytes, padded to
	 * 60): a frame of one flow sent the slow way would be overtaken by the
	 * next ones kept here (UC and UD messages then arrive out of order).
	 */
	if (len < RTE_ETHER_HDR_LEN + IPV4_MIN_HDR + UDP_HDR ||
	    !rte_is_same_ether_addr(&eth->dst_addr, &port->mac))
		return false;
	len -= RTE_ETHER_HDR_LEN;
	/* ethertype, IP version and header length in one word: IPv4 without options */
	memcpy(&w, &eth->ether_type, 4);
	if ((w & RTE_BE32(0xffffff00)) == RTE_BE32(ETHERTYPE_IPV4 << 16 | 0x4500)) {
		total = port_load_be16(ip + 2);
		memcpy(&dst, ip + 16, 4);
		if (ip[9] != IPPROTO_UDP_ || total > len || total < IPV4_MIN_HDR + UDP_HDR ||
		    !port_owns_ipv4(port, dst) ||
		    *(const rte_be16_t *)(const void *)(ip + IPV4_MIN_HDR + 2) != ROCE_PORT_BE)
			return false;
		port_set_hdr_lens(m, IPV4_MIN_HDR);
	} else if (eth->ether_type == RTE_BE16(ETHERTYPE_IPV6)) {
		if (len < IPV6_HDR + UDP_HDR || ip[0] >> 4 != 6 || ip[6] != IPPROTO_UDP_ ||
		    IPV6_HDR + (uint32_t)port_load_be16(ip + 4) > len ||
		    port_load_be16(ip + 4) < UDP_HDR || !port_owns_ipv6(port, ip + 24) ||
		    *(const rte_be16_t *)(const void *)(ip + IPV6_HDR + 2) != ROCE_PORT_BE)
			return false;
		port_set_hdr_lens(m, IPV6_HDR);
	} else {
		return false;
	}
	return true;
}

/* Keep the RoCEv2 candidates of @p pkts[0..nb), consume or free the rest. */
static uint16_t
rx_sort(struct droce_port *port, struct rte_mbuf **pkts, uint16_t nb)
{
	uint16_t i, keep = 0;

	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		enum droce_port_drop r;

		/* the common case's few tests first: what passes them, the full sort passes */
		if (droce_likely(rx_is_fast(port, m)) || (r = rx_classify(port, m)) == RX_PASS) {
			pkts[keep++] = m;
			continue;
		}
		if (r != RX_CONSUMED)
			port->drop[r]++;
		rte_pktmbuf_free(m);
	}
	port->q[0].cnt[DROCE_PORT_CNT_RX_ROCE] += keep;
	return keep;
}

uint16_t
droce_port_rx_burst(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t nb, keep;
	uint64_t now;

	nb = rte_eth_rx_burst(port->port_id, 0, pkts, n);
	port->q[0].cnt[DROCE_PORT_CNT_RX_FRAMES] += nb;
	keep = rx_sort(port, pkts, nb);
	if (port->resolve_ring != NULL && droce_unlikely(!rte_ring_empty(port->resolve_ring)))
		neigh_serve_requests(port);
	if (port->n_pending > 0) {
		now = rte_get_tsc_cycles();
		if (now >= port->next_timer) {
			neigh_write_begin(port);
			neigh_timer(port, now);
			neigh_write_end(port);
		}
	}
	return keep;
}

uint16_t
droce_port_rx_input(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n)
{
	return rx_sort(port, pkts, n);
}

uint16_t
droce_port_queue_rx(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts, uint16_t n,
		    struct rte_mbuf **slow, uint16_t *n_slow)
{
	struct port_queue *pq = &port->q[q];
	uint16_t nb, i, keep = 0;

	*n_slow = 0;
	if (q == 0)	/* the port's sorter: everything is sorted here */
		return droce_port_rx_burst(port, pkts, n);
	nb = rte_eth_rx_burst(port->port_id, q, pkts, n);
	pq->cnt[DROCE_PORT_CNT_RX_FRAMES] += nb;
	for (i = 0; i < nb; i++) {
		if (droce_likely(rx_is_fast(port, pkts[i])))
			pkts[keep++] = pkts[i];
		else
			slow[(*n_slow)++] = pkts[i];
	}
	pq->cnt[DROCE_PORT_CNT_RX_ROCE] += keep;
	return keep;
}
