/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The transmit side of the port (droce_port.h): bursts on a queue, each
 * queue's mbuf stash (received frames reused for the next ones sent), and
 * the helpers the port's own frames (ARP, ND, IGMP/MLD) are built with.
 * Apart from port_rx.c so that neighbours and multicast, which port_rx.c
 * hands frames to, use it without a circle back.
 *
 * Polling lcore of the queue only. No per-packet logs: counters.
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "port_priv.h"

#define IPV6_HDR	40
/*
 * net_af_packet hands a burst to the kernel with one non-blocking
 * sendto(); when the kernel stops early (ENOBUFS, EAGAIN: the socket's
 * send budget) the rest waits in its TX ring, counted as sent, until the
 * next burst on that queue. A queue that goes quiet after a burst (a
 * worker's, a short-lived client's multicast) is kicked this many times,
 * 100 us apart, while idle (a burst of none still calls sendto()).
 */
#define PORT_KICKS	64

bool
port_owns_ipv6(const struct droce_port *port, const uint8_t ip[16])
{
	unsigned int i;

	for (i = 0; i < port->info.n_ipv6; i++)
		if (memcmp(port->info.ipv6[i].addr, ip, 16) == 0)
			return true;
	return false;
}

void
port_solicited_node(const uint8_t ip[16], uint8_t out[16])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff };

	memcpy(out, pfx, sizeof(pfx));
	memcpy(out + 13, ip + 13, 3);
}

uint16_t
port_icmp6_cksum(const uint8_t src[16], const uint8_t dst[16], const void *l4, uint32_t len)
{
	/* pseudo-header: source, destination, upper-layer length, zeros, next header */
	uint8_t tail[8] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
			    (uint8_t)len, 0, 0, 0, IPPROTO_ICMPV6_ };
	uint32_t sum;

	sum = __rte_raw_cksum(src, 16, 0);
	sum = __rte_raw_cksum(dst, 16, sum);
	sum = __rte_raw_cksum(tail, sizeof(tail), sum);
	sum = __rte_raw_cksum(l4, len, sum);
	return (uint16_t)~__rte_raw_cksum_reduce(sum);
}

uint8_t *
port_put_eth(uint8_t *p, const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
	     uint16_t ethertype)
{
	memcpy(p, dst->addr_bytes, 6);
	memcpy(p + 6, src->addr_bytes, 6);
	port_store_be16(p + 12, ethertype);
	return p + RTE_ETHER_HDR_LEN;
}

uint8_t *
port_put_ipv6(uint8_t *p, const uint8_t src[16], const uint8_t dst[16], uint16_t payload_len,
	      uint8_t next_header, uint8_t hop_limit)
{
	memset(p, 0, 4);
	p[0] = 0x60;				/* version 6 */
	port_store_be16(p + 4, payload_len);
	p[6] = next_header;
	p[7] = hop_limit;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	return p + IPV6_HDR;
}

void
port_ipv6_mcast_mac(const uint8_t ip[16], struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(mac->addr_bytes + 2, ip + 12, 4);
}

/* Frames we build are never longer than the pool's room, and sent flat. */
struct rte_mbuf *
port_own_alloc(struct droce_port *port, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->mp);
	uint16_t pad = RTE_MAX(len, (uint16_t)(RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN));
	char *p;

	if (m == NULL) {
		PORT_CNT(port, TX_NOMBUF);
		return NULL;
	}
	/* pad to the 60-byte minimum frame: some NICs do, af_packet does not */
	p = rte_pktmbuf_append(m, pad);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		PORT_CNT(port, TX_NOMBUF);
		return NULL;
	}
	memset(p, 0, pad);
	return m;
}

void
port_xmit_own(struct droce_port *port, struct rte_mbuf *m)
{
	droce_port_tx_burst(port, &m, 1);
}

uint16_t
droce_port_tx_try(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n)
{
	return droce_port_queue_tx_try(port, 0, pkts, n);
}

void
droce_port_queue_kick(struct droce_port *port, uint16_t q)
{
	struct port_queue *pq = &port->q[q];
	uint64_t now;

	if (pq->kicks == 0)
		return;
	now = rte_get_tsc_cycles();
	if (now < pq->next_kick)
		return;
	pq->next_kick = now + port->hz / 10000;	/* 100 us apart: 6.4 ms in all */
	pq->kicks--;
	(void)rte_eth_tx_burst(port->port_id, q, NULL, 0);
}

uint16_t
droce_port_tx_burst(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n)
{
	return droce_port_queue_tx(port, 0, pkts, n);
}

struct rte_mbuf *
droce_port_alloc(struct droce_port *port)
{
	return droce_port_queue_alloc(port, 0);
}

void
port_free_rx_to(struct droce_port *port, struct rte_mbuf **stash, unsigned int *n_stash,
		struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		/* what rte_pktmbuf_free() would give straight back to the pool */
		if (*n_stash < PORT_STASH && m->pool == port->mp &&
		    rte_mbuf_refcnt_read(m) == 1 && m->next == NULL && RTE_MBUF_DIRECT(m)) {
			rte_pktmbuf_reset(m);	/* as rte_pktmbuf_alloc() returns it */
			stash[(*n_stash)++] = m;
		} else {
			pkts[k++] = m;
		}
	}
	if (k > 0)
		rte_pktmbuf_free_bulk(pkts, k);
}

void
droce_port_free_rx(struct droce_port *port, struct rte_mbuf **pkts, unsigned int n)
{
	droce_port_queue_free_rx(port, 0, pkts, n);
}

void
droce_port_queue_free_rx(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts,
			 unsigned int n)
{
	struct port_queue *pq = &port->q[q];

	port_free_rx_to(port, pq->stash, &pq->n_stash, pkts, n);
}

uint16_t
droce_port_queue_tx_try(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct port_queue *pq = &port->q[q];
	uint16_t sent;

	sent = rte_eth_tx_burst(port->port_id, q, pkts, n);
	pq->cnt[DROCE_PORT_CNT_TX_FRAMES] += sent;
	pq->kicks = PORT_KICKS;
	return sent;
}

uint16_t
droce_port_queue_tx(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent;

	sent = droce_port_queue_tx_try(port, q, pkts, n);
	if (droce_unlikely(sent < n)) {	/* refused: freed and counted */
		port->q[q].cnt[DROCE_PORT_CNT_TX_REFUSED] += (uint16_t)(n - sent);
		rte_pktmbuf_free_bulk(pkts + sent, (unsigned int)(n - sent));
	}
	return sent;
}

struct rte_mbuf *
droce_port_queue_alloc(struct droce_port *port, uint16_t q)
{
	struct port_queue *pq = &port->q[q];

	/* one trip to the pool per burst: it showed at 5% of a core sending 64 B frames */
	if (droce_unlikely(pq->n_stash == 0)) {
		if (rte_pktmbuf_alloc_bulk(port->mp, pq->stash, DROCE_DIM(pq->stash)) < 0)
			return rte_pktmbuf_alloc(port->mp);	/* the last few */
		pq->n_stash = DROCE_DIM(pq->stash);
	}
	return pq->stash[--pq->n_stash];
}
