/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_PORT_PRIV_H
#define DROCE_PORT_PRIV_H

/*
 * Internals shared by the port_*.c files: the port object, the neighbour
 * table, the multicast list, frame helpers. Not installed.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_core.h"
#include "droce_port.h"

extern int droce_port_logtype;
#define PORT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, droce_port_logtype, "droce port: " fmt "\n", ##__VA_ARGS__)

#define ETHERTYPE_IPV4		0x0800
#define ETHERTYPE_ARP		0x0806
#define ETHERTYPE_VLAN		0x8100
#define ETHERTYPE_QINQ		0x88a8
#define ETHERTYPE_IPV6		0x86dd

#define IPPROTO_HOPOPTS_	0
#define IPPROTO_IGMP_		2
#define IPPROTO_UDP_		17
#define IPPROTO_ICMPV6_		58

#define ICMP6_MLD_QUERY		130
#define ICMP6_MLD1_REPORT	131
#define ICMP6_MLD1_DONE		132
#define ICMP6_NS		135
#define ICMP6_NA		136
#define ICMP6_MLD2_REPORT	143

/* Neighbour table: open addressing with linear probing, never more than
 * half full so a probe sequence stays short. */
#define NEIGH_SLOTS		1024
#define NEIGH_MAX		(NEIGH_SLOTS / 2)

enum neigh_state {
	NEIGH_FREE = 0,
	NEIGH_INCOMPLETE,
	NEIGH_REACHABLE,
	NEIGH_PROBE,
	NEIGH_FAILED,
	NEIGH_STATIC,
};

struct neigh_entry {
	uint8_t gid[DROCE_GID_BYTES];
	struct rte_ether_addr mac;
	uint8_t state;			/* enum neigh_state */
	uint8_t probes;			/* requests sent in this state */
	uint64_t deadline;		/* TSC: next probe, expiry of REACHABLE or FAILED */
};

struct mcast_group {
	uint8_t gid[DROCE_GID_BYTES];
	struct rte_ether_addr mac;
	uint32_t refs;
};

#define PORT_STASH	32	/* mbufs a queue keeps for its next frames */

/* The state of a queue pair, its worker's alone (droce_port_queue_*; queue 0's: the port's calls). */
struct port_queue {
	struct rte_mbuf *stash[PORT_STASH];	/* for droce_port_queue_alloc() */
	unsigned int n_stash;
	unsigned int kicks;		/* droce_port_queue_kick()s left since the last burst */
	uint64_t next_kick;		/* TSC: not before */
	uint64_t cnt[DROCE_PORT_CNT_COUNT];	/* RX_FRAMES, RX_ROCE, TX_FRAMES, TX_REFUSED */
} __rte_cache_aligned;

struct droce_port {
	uint16_t port_id;
	uint16_t n_queues;		/* queue pairs: one per worker */
	bool hotplugged;		/* we probed it: we remove it */
	bool fault_hotplugged;		/* we probed the fault vdev over it */
	uint16_t lower_port_id;		/* the hotplugged port under the fault vdev */
	char iface[DROCE_PORT_IFNAME_LEN];	/* the Linux interface under it, or "" */
	bool started;
	struct rte_mempool *mp;
	struct droce_port_info info;	/* MAC, MTU, addresses (incl. link-local) */
	struct rte_ether_addr mac;

	/* neighbour discovery */
	uint64_t hz;
	uint64_t reachable_cyc;
	uint64_t retrans_cyc;
	uint32_t max_probes;
	uint32_t n_neigh;		/* entries in use */
	uint32_t n_pending;		/* INCOMPLETE + PROBE + FAILED: the timer has work */
	uint64_t next_timer;		/* TSC of the next neighbour timer scan */
	struct neigh_entry neigh[NEIGH_SLOTS];
	uint8_t gateway4[16];		/* GID form; all zero: none (conf) */
	uint8_t gateway6[16];

	/* multicast */
	uint8_t igmp_version;
	struct mcast_group mcast[DROCE_PORT_MAX_MCAST];
	unsigned int n_mcast;
	/* MACs we accept besides ours and broadcast: joined groups, the
	 * solicited-node groups of our IPv6 addresses, all-nodes */
	struct rte_ether_addr mc_mac[DROCE_PORT_MAX_MCAST + DROCE_PORT_MAX_ADDRS + 2];
	unsigned int n_mc_mac;

	uint64_t cnt[DROCE_PORT_CNT_COUNT];
	uint64_t drop[DROCE_PORT_DROP_COUNT];

	/*
	 * Other queues' workers read the neighbour table without a lock: the
	 * queue-0 lcore, its only writer, makes this odd while it changes it
	 * (droce_port_neigh_peek()); what they miss they ask for on
	 * resolve_ring (GIDs), which queue 0's RX drains.
	 */
	_Atomic uint32_t neigh_seq;
	struct rte_ring *resolve_ring;
	struct port_queue q[DROCE_PORT_MAX_QUEUES];
};

#define PORT_CNT(p, sym) ((p)->cnt[DROCE_PORT_CNT_##sym]++)

/* port_tx.c */
/* Send one frame the port built itself; counts it. */
void port_xmit_own(struct droce_port *port, struct rte_mbuf *m);
/* An mbuf for an own frame of @p len bytes (zeroed), or NULL (counted). */
struct rte_mbuf *port_own_alloc(struct droce_port *port, uint16_t len);
/* Inline: the RX sort asks it of every IPv4 frame */
static inline bool
port_owns_ipv4(const struct droce_port *port, rte_be32_t ip)
{
	unsigned int i;

	for (i = 0; i < port->info.n_ipv4; i++)
		if (port->info.ipv4[i].addr == ip)
			return true;
	return false;
}

bool port_owns_ipv6(const struct droce_port *port, const uint8_t ip[16]);
/* droce_port_free_rx() into @p stash (@p n_stash of PORT_STASH in it). */
void port_free_rx_to(struct droce_port *port, struct rte_mbuf **stash, unsigned int *n_stash,
		     struct rte_mbuf **pkts, unsigned int n);

/* port_neigh.c */
void neigh_init(struct droce_port *port, const struct droce_port_conf *conf);
/* ARP frame at @p arp (after the Ethernet header), @p len bytes. Consumes nothing. */
void neigh_rx_arp(struct droce_port *port, const struct rte_ether_hdr *eth,
		  const uint8_t *arp, uint32_t len);
/* NS or NA: @p ip6 is the IPv6 header, @p icmp its ICMPv6 message of @p len bytes. */
void neigh_rx_nd(struct droce_port *port, const struct rte_ether_hdr *eth,
		 const uint8_t *ip6, const uint8_t *icmp, uint32_t len);
void neigh_timer(struct droce_port *port, uint64_t now);
/* The writer's side of neigh_seq, around every change of the table. */
static inline void
neigh_write_begin(struct droce_port *port)
{
	atomic_fetch_add_explicit(&port->neigh_seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static inline void
neigh_write_end(struct droce_port *port)
{
	atomic_fetch_add_explicit(&port->neigh_seq, 1, memory_order_release);
}
/* Ask for the GIDs other queues' workers could not resolve. */
void neigh_serve_requests(struct droce_port *port);

/* port_mcast.c */
void mcast_rebuild_filter_list(struct droce_port *port);
int mcast_program(struct droce_port *port);
void mcast_rx_igmp(struct droce_port *port, const uint8_t *ip4, uint32_t len);
void mcast_rx_mld_query(struct droce_port *port, const uint8_t *icmp, uint32_t len);
bool mcast_has_ipv4(const struct droce_port *port, rte_be32_t ip);
bool mcast_has_ipv6(const struct droce_port *port, const uint8_t ip[16]);
void mcast_report_all(struct droce_port *port, bool ipv6);

/* checksums (port_tx.c) */
/* ICMPv6 / MLD checksum: pseudo-header (RFC 8200 8.1) + @p len bytes at @p l4. */
uint16_t port_icmp6_cksum(const uint8_t src[16], const uint8_t dst[16], const void *l4,
			  uint32_t len);

/* Write an Ethernet header; returns the byte after it. */
uint8_t *port_put_eth(uint8_t *p, const struct rte_ether_addr *dst,
		      const struct rte_ether_addr *src, uint16_t ethertype);
/* Write an IPv6 header (no flow label, traffic class 0); returns the byte after it. */
uint8_t *port_put_ipv6(uint8_t *p, const uint8_t src[16], const uint8_t dst[16],
		       uint16_t payload_len, uint8_t next_header, uint8_t hop_limit);
/* 33:33 + the low 32 bits of an IPv6 group (RFC 2464 7). */
void port_ipv6_mcast_mac(const uint8_t ip[16], struct rte_ether_addr *mac);

/* Solicited-node multicast address of @p ip (RFC 4291 2.7.1). */
void port_solicited_node(const uint8_t ip[16], uint8_t out[16]);

static inline uint16_t
port_load_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
port_store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * Store a checksum computed with rte_raw_cksum() and friends: they sum
 * 16-bit words in host order, so the result goes to memory as it is.
 */
static inline void
port_store_cksum(uint8_t *p, uint16_t ck)
{
	memcpy(p, &ck, sizeof(ck));
}

#endif /* DROCE_PORT_PRIV_H */
