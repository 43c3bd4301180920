/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_PORT_H
#define DROCE_PORT_H

/**
 * @file
 * The port layer: one DPDK ethdev port as droce's link to the wire.
 *
 * droce_port_open() sets the port up (mempool, one RX and one TX queue, the
 * offloads the port offers, our own MAC, MTU, promiscuous and allmulticast
 * off) and starts it. After that the worker lcore:
 *
 *  - calls droce_port_rx_burst(), which hands back only RoCEv2 candidates
 *    (UDP 4791 to one of our addresses or to a group we joined) and deals
 *    with everything else itself: it answers ARP requests and IPv6
 *    neighbour solicitations for our addresses, learns neighbours from them
 *    and from ARP replies / neighbour advertisements, answers IGMP and MLD
 *    queries for joined groups, retries pending resolutions, and counts and
 *    frees all other frames by reason (DROCE_PORT_DROPS);
 *  - builds frames in mbufs from droce_port_alloc() and sends them with
 *    droce_port_tx_burst(), which never blocks and frees what the PMD
 *    refused;
 *  - asks droce_port_resolve() for the MAC of a peer GID;
 *  - joins and leaves multicast groups (MAC filter + IGMP / MLD reports).
 *
 * The port is not thread-safe: every function except droce_port_stats() and
 * droce_port_info() must be called from the one lcore that polls queue 0.
 * Those two may be called from any thread; counters read there may lag by a
 * burst. With several queue pairs (one per worker lcore), each other queue's
 * lcore has the droce_port_queue_*() calls and droce_port_neigh_peek().
 *
 * Errors are 0 / -errno throughout; bursts return counts.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "droce_wire_gid.h"

/** IPv4 and IPv6 addresses a port may own, each. */
#define DROCE_PORT_MAX_ADDRS		8
/** Static neighbours in a configuration. */
#define DROCE_PORT_MAX_STATIC_NEIGH	32
/** Multicast groups a port may join at once. */
#define DROCE_PORT_MAX_MCAST		64
/** Queue pairs a port may have: one per worker lcore. */
#define DROCE_PORT_MAX_QUEUES		8
/** Length of a devargs string (with its NUL). */
#define DROCE_PORT_DEVARGS_LEN		256
/** Length of an interface name (IFNAMSIZ). */
#define DROCE_PORT_IFNAME_LEN		16

/** An IPv4 address with its prefix length. */
struct droce_port_ipv4 {
	rte_be32_t addr;		/**< network order */
	uint8_t prefix;			/**< 0..32 */
};

/** An IPv6 address with its prefix length. */
struct droce_port_ipv6 {
	uint8_t addr[16];
	uint8_t prefix;			/**< 0..128 */
};

/** A static neighbour: an IP address as a GID (IPv4-mapped for IPv4) and its MAC. */
struct droce_port_neigh {
	uint8_t gid[DROCE_GID_BYTES];
	uint8_t mac[6];
};

/**
 * Port configuration. Start from droce_port_conf_init(); every zero field
 * means "the default" noted beside it.
 */
struct droce_port_conf {
	/**
	 * Which port. If non-empty, either the name of an ethdev that already
	 * exists ("net_af_packet0", e.g. from --vdev) or devargs to hotplug
	 * ("net_af_packet_veth0,iface=veth0"). If empty, @ref port_id.
	 */
	char devargs[DROCE_PORT_DEVARGS_LEN];
	/** EAL port id, used when @ref devargs is empty. */
	uint16_t port_id;
	/**
	 * Kernel interface behind the port (af_packet): its MAC is the default
	 * MAC and its MTU the default MTU. droce_port_conf_iface() sets it.
	 */
	char iface[DROCE_PORT_IFNAME_LEN];
	/**
	 * If non-empty, wrap the port in droce's fault-injection vdev with
	 * these parameters ("seed=1,loss=0.05,dir=both"; see droce_fault.h).
	 */
	char fault[DROCE_PORT_DEVARGS_LEN];

	/**
	 * Our MAC, if @ref has_mac. Otherwise: the kernel interface's for
	 * af_packet / af_xdp ports (or @ref iface's), else a random locally
	 * administered one. PMD defaults are never trusted (net_ring has
	 * 00:00:00:00:00:00, every net_pcap port 02:70:63:61:70:00).
	 */
	uint8_t mac[6];
	bool has_mac;

	struct droce_port_ipv4 ipv4[DROCE_PORT_MAX_ADDRS];
	unsigned int n_ipv4;
	struct droce_port_ipv6 ipv6[DROCE_PORT_MAX_ADDRS];
	unsigned int n_ipv6;
	/**
	 * Also own the link-local address fe80::/64 derived from our MAC
	 * (EUI-64, as the kernel forms it); it becomes the source of MLD
	 * reports, as RFC 3810 5.2.13 requires. Off by default.
	 */
	bool ipv6_link_local;

	/**
	 * Ethernet MTU (IP packet bytes). 0: the kernel interface's MTU, or
	 * the port's current one, capped at what the port accepts. An
	 * explicit value the port cannot take fails droce_port_open().
	 */
	uint16_t mtu;
	/**
	 * Queue pairs, one per worker lcore; 0 or 1: one. Queue 0's lcore
	 * runs everything above; each other queue's lcore only
	 * droce_port_queue_rx(), droce_port_queue_tx(), droce_port_queue_alloc()
	 * and droce_port_neigh_peek() (set before droce_port_conf_iface()).
	 */
	uint16_t n_queues;
	uint16_t nb_rxd;		/**< RX descriptors; 0: 1024 */
	uint16_t nb_txd;		/**< TX descriptors; 0: 1024 */
	uint32_t nb_mbufs;		/**< mbufs in the pool; 0: 8191 */

	struct droce_port_neigh neigh[DROCE_PORT_MAX_STATIC_NEIGH];	/**< static */
	unsigned int n_neigh;

	/**
	 * Default gateways in GID form (IPv4 as ::ffff:a.b.c.d), one per
	 * family; all zero: none. A unicast destination outside every prefix
	 * of ours (for IPv6: and not link-local) resolves to its family's
	 * gateway's MAC, the GID staying the destination's (RoCEv2 is routed
	 * on its IP header). With no gateway such a destination is asked for
	 * on the link itself, where proxy ARP / ND may answer.
	 */
	uint8_t gateway4[16];
	uint8_t gateway6[16];

	/** A learned entry is trusted this long, then re-probed; 0: 30000 ms. */
	uint32_t neigh_reachable_ms;
	/** Time between ARP requests / solicitations; 0: 1000 ms. */
	uint32_t neigh_retrans_ms;
	/** Requests before an address is declared unreachable; 0: 3. */
	uint32_t neigh_probes;
	/** How long droce_port_open() waits for link up; 0: 3000 ms. */
	uint32_t link_wait_ms;
	/** IGMP version of membership reports, 2 or 3; 0: 3. MLD is always v2. */
	uint8_t igmp_version;
};

/** Counters that are not drops. C(sym, description) */
#define DROCE_PORT_COUNTERS(C) \
	C(RX_FRAMES,        "frames received from the PMD") \
	C(RX_ROCE,          "RoCEv2 candidates handed to the caller") \
	C(TX_FRAMES,        "frames the PMD accepted (the caller's and our own)") \
	C(TX_REFUSED,       "frames the PMD refused, freed") \
	C(TX_NOMBUF,        "own frames (replies, requests, reports) not built: no mbuf") \
	C(ARP_REQ_RX,       "ARP requests for one of our addresses") \
	C(ARP_REPLY_TX,     "ARP replies sent") \
	C(ARP_REQ_TX,       "ARP requests sent") \
	C(ARP_ANNOUNCE_TX,  "ARP announcements sent to an asker after the reply") \
	C(ARP_REPLY_RX,     "ARP replies received") \
	C(NS_RX,            "neighbour solicitations for one of our addresses") \
	C(NA_TX,            "neighbour advertisements sent") \
	C(NS_TX,            "neighbour solicitations sent") \
	C(NA_RX,            "neighbour advertisements received") \
	C(NEIGH_LEARNED,    "neighbour entries created or updated from the wire") \
	C(NEIGH_FAILED,     "resolutions given up after the last probe") \
	C(NEIGH_EXPIRED,    "entries removed: no answer to the refresh probes") \
	C(IGMP_TX,          "IGMP membership reports and leaves sent") \
	C(MLD_TX,           "MLDv2 reports sent") \
	C(MCAST_QUERY_RX,   "IGMP / MLD queries answered")

/**
 * Why a received frame was not handed to the caller. Frames the port
 * consumed itself (ARP, neighbour discovery, queries) are counted in
 * DROCE_PORT_COUNTERS instead. R(sym, description)
 */
#define DROCE_PORT_DROPS(R) \
	R(RUNT,             "shorter than an Ethernet header") \
	R(DST_MAC,          "unicast to another MAC") \
	R(MCAST_MAC,        "multicast to a group we did not join") \
	R(VLAN,             "802.1Q tagged (no VLAN configured)") \
	R(ETHERTYPE,        "neither IPv4, IPv6 nor ARP") \
	R(ARP_BAD,          "malformed ARP (not Ethernet/IPv4, short)") \
	R(ARP_NOT_OURS,     "ARP request for an address that is not ours") \
	R(ARP_OTHER,        "ARP reply or gratuitous ARP we did not need, or another opcode") \
	R(IPV4_BAD,         "malformed IPv4 header (short, version, length)") \
	R(IPV6_BAD,         "malformed IPv6 header (short, version, length)") \
	R(IP_NOT_OURS,      "IP destination is neither ours nor a joined group") \
	R(IP_PROTO,         "IP protocol we do not serve (TCP, ICMP, ...)") \
	R(UDP_PORT,         "UDP to a port other than 4791") \
	R(ICMP6_BAD,        "malformed ICMPv6 (checksum, hop limit, length, options)") \
	R(ICMP6_OTHER,      "ICMPv6 other than NS/NA/MLD query (echo, RA, ...)") \
	R(NS_NOT_OURS,      "neighbour solicitation for another address") \
	R(NA_UNSOLICITED,   "neighbour advertisement for an address we did not ask about") \
	R(IGMP,             "IGMP / MLD other than a query for our groups (reports of others)")

enum droce_port_counter {
#define C(sym, desc) DROCE_PORT_CNT_##sym,
	DROCE_PORT_COUNTERS(C)
#undef C
	DROCE_PORT_CNT_COUNT
};

enum droce_port_drop {
#define R(sym, desc) DROCE_PORT_DROP_##sym,
	DROCE_PORT_DROPS(R)
#undef R
	DROCE_PORT_DROP_COUNT
};

/** Identifier of a counter ("RX_ROCE"), "UNKNOWN" if out of range. */
const char *droce_port_counter_name(enum droce_port_counter c);
/** One-line description of a counter. */
const char *droce_port_counter_desc(enum droce_port_counter c);
/** Identifier of a drop reason ("DST_MAC"), "UNKNOWN" if out of range. */
const char *droce_port_drop_name(enum droce_port_drop r);
/** One-line description of a drop reason. */
const char *droce_port_drop_desc(enum droce_port_drop r);

/** A snapshot of a port's counters. */
struct droce_port_stats {
	uint64_t counter[DROCE_PORT_CNT_COUNT];
	uint64_t drop[DROCE_PORT_DROP_COUNT];
	uint64_t drops;			/**< sum of drop[] */
	struct rte_eth_stats eth;	/**< the PMD's own (imissed, rx_nombuf, ...) */
};

/** What droce_port_open() settled on. */
struct droce_port_info {
	uint16_t port_id;
	char name[RTE_ETH_NAME_MAX_LEN];	/**< ethdev name */
	char driver[32];			/**< "net_af_packet", "net_droce_fault", ... */
	uint8_t mac[6];
	uint16_t mtu;			/**< Ethernet MTU: IP packet bytes */
	uint32_t max_frame;		/**< largest frame an mbuf holds in one segment */
	bool link_up;
	uint32_t link_speed;		/**< Mb/s, RTE_ETH_SPEED_NUM_* */
	uint64_t rx_offloads;		/**< RTE_ETH_RX_OFFLOAD_* enabled */
	uint64_t tx_offloads;		/**< RTE_ETH_TX_OFFLOAD_* enabled */
	bool mc_filter;			/**< multicast MAC filter programmed by list */
	bool allmulti;			/**< ... or allmulticast as the fallback */
	struct droce_port_ipv4 ipv4[DROCE_PORT_MAX_ADDRS];
	unsigned int n_ipv4;
	struct droce_port_ipv6 ipv6[DROCE_PORT_MAX_ADDRS + 1];	/**< + link-local */
	unsigned int n_ipv6;
};

struct droce_port;

/* ---- configuration helpers ---- */

/** Zero @p conf (every field at its default). */
void droce_port_conf_init(struct droce_port_conf *conf);

/**
 * Use the kernel interface @p ifname through net_af_packet (--iface NAME):
 * sets conf->devargs to "net_af_packet_NAME,iface=NAME,qpairs=1" (one
 * queue pair; droce_port_open() hotplugs it and removes it at close) and
 * conf->iface, whose MAC and MTU become the defaults. Call it in the
 * network namespace of the interface. DPDK 22.11's net_af_packet caps the
 * MTU at 1500 whatever the interface's.
 *
 * @return 0; -EINVAL if @p ifname is empty, too long, or holds ',' '=' or
 *         whitespace; -ENODEV if no such interface exists here.
 */
int droce_port_conf_iface(struct droce_port_conf *conf, const char *ifname);

/**
 * Add an address given as "ADDR/PFX" (IPv4 or IPv6; without "/PFX" the
 * prefix is 32 or 128), as --ip takes it.
 * @return 0; -EINVAL if unparsable, multicast or unspecified; -ENOSPC if
 *         DROCE_PORT_MAX_ADDRS of that family are there already.
 */
int droce_port_conf_add_ip(struct droce_port_conf *conf, const char *cidr);

/**
 * Add a static neighbour given as "IP=MAC" ("10.0.0.2=02:00:00:00:00:02",
 * "fd00::2=02:..."), as --neigh takes it.
 * @return 0; -EINVAL if unparsable or the MAC is multicast or zero;
 *         -ENOSPC if the table is full.
 */
int droce_port_conf_add_neigh(struct droce_port_conf *conf, const char *spec);

/**
 * Set the default gateway of the address's family ("10.0.0.254",
 * "fd00::1"), as --gateway takes it.
 * @return 0; -EINVAL if unparsable, multicast or unspecified.
 */
int droce_port_conf_set_gateway(struct droce_port_conf *conf, const char *ip);

/**
 * Parse "aa:bb:cc:dd:ee:ff" into conf->mac and set has_mac.
 * @return 0; -EINVAL if unparsable, multicast or zero.
 */
int droce_port_conf_set_mac(struct droce_port_conf *conf, const char *mac);

/* ---- life cycle ---- */

/**
 * Open, configure and start a port. EAL must be initialised (primary
 * process). A vdev given with --vdev whose probe failed does not exist:
 * that is -ENODEV here, not a silent success.
 *
 * @return 0 and *@p out; -EINVAL (bad configuration, or an MTU the port
 *         cannot take), -ENODEV (no such port, hotplug failed), -EBUSY
 *         (already started by someone else), -ENOMEM (mempool, memory),
 *         or the -errno of the ethdev call that failed.
 */
int droce_port_open(const struct droce_port_conf *conf, struct droce_port **out);

/**
 * Stop and close the port, remove it if droce_port_open() hotplugged it,
 * free the mempool. Every mbuf of the pool must have been freed, including
 * those the caller still holds. NULL is a no-op.
 */
void droce_port_close(struct droce_port *port);

/** Fill @p info. Any thread. @return 0, or -EINVAL if an argument is NULL. */
int droce_port_info(const struct droce_port *port, struct droce_port_info *info);

/**
 * Is the link up: the PMD says so and, for a port on a Linux interface
 * (droce_port_conf_iface()), the interface is up with a carrier. Any
 * thread; a system call for such ports, so poll it rarely.
 */
bool droce_port_link_up(const struct droce_port *port);

/**
 * Snapshot the counters. Any thread.
 * @return 0, -EINVAL if an argument is NULL, or the -errno of
 *         rte_eth_stats_get() (counters are filled all the same).
 */
int droce_port_stats(const struct droce_port *port, struct droce_port_stats *st);

/** Zero droce's counters and the PMD's. Polling lcore. */
void droce_port_stats_reset(struct droce_port *port);

/* ---- data path (polling lcore) ---- */

/**
 * Receive one burst of up to @p n frames and keep the RoCEv2 candidates:
 * UDP destination port 4791, to our MAC (or a joined group's, or
 * broadcast), to one of our addresses or a joined group. Their headers are
 * not validated beyond that: droce_pkt_parse() does it. l2_len and l3_len
 * of each returned mbuf are set.
 *
 * Every other frame is consumed here: ARP and neighbour discovery are
 * answered and learned from, IGMP/MLD queries answered, the rest counted
 * by reason and freed. Pending neighbour resolutions are retried from here
 * too, so call it even when idle.
 *
 * @return the number of candidates now in @p pkts[0..ret) (0 does not mean
 *         the PMD had nothing).
 */
uint16_t droce_port_rx_burst(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n);

/**
 * Hand @p n frames to the PMD. Never keeps an mbuf: what the PMD refused
 * is freed and counted (TX_REFUSED). It does not wait for room; the PMD
 * itself might (net_af_packet poll()s when its TX ring is full).
 * @return the number the PMD accepted.
 */
uint16_t droce_port_tx_burst(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n);

/**
 * Hand @p n frames to the PMD and keep what it refused: pkts[ret..n) stay
 * the caller's, to send again when the queue drains (backpressure instead
 * of loss). @return the number the PMD accepted.
 */
uint16_t droce_port_tx_try(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n);

/** An mbuf from the port's pool for a frame to send, or NULL. */
struct rte_mbuf *droce_port_alloc(struct droce_port *port);

/**
 * Free @p n received frames the caller is done with (droce_port_rx_burst()'s,
 * or any other mbufs): a plain one of the port's pool (one segment, direct,
 * not shared) goes to droce_port_alloc()'s stash while it has room, reset as
 * the pool hands mbufs out, the rest back to their pools. A frame received
 * becomes the next one sent without two trips through the pool.
 */
void droce_port_free_rx(struct droce_port *port, struct rte_mbuf **pkts, unsigned int n);

/** The port's mbuf pool (data room: RTE_PKTMBUF_HEADROOM + max_frame). */
struct rte_mempool *droce_port_mempool(struct droce_port *port);

/* ---- queue pairs: each its own worker lcore's (droce_port_worker.h uses them) ---- */

/**
 * A burst from queue @p q. Queue 0 sorts everything as
 * droce_port_rx_burst() does (*@p n_slow is 0). Another queue: RoCEv2 frames to one of our unicast
 * addresses and MAC are compacted into @p pkts[0..ret); everything else
 * (ARP, neighbour discovery, IGMP/MLD, multicast, frames to drop) goes to
 * @p slow[0..*n_slow), for the caller to hand to queue 0's lcore, which
 * passes them to droce_port_rx_input(). @p slow has room for @p n.
 */
uint16_t droce_port_queue_rx(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts,
			     uint16_t n, struct rte_mbuf **slow, uint16_t *n_slow);

/**
 * Queue 0's lcore: classify @p n frames another queue's lcore handed over,
 * as droce_port_rx_burst() classifies its own. @return the candidates now
 * in @p pkts[0..ret); the rest were consumed or freed.
 */
uint16_t droce_port_rx_input(struct droce_port *port, struct rte_mbuf **pkts, uint16_t n);

/** droce_port_tx_burst() on queue @p q (q's lcore; droce_port_tx_burst() is queue 0's). */
uint16_t droce_port_queue_tx(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts,
			     uint16_t n);

/** droce_port_tx_try() on queue @p q (q's lcore): the refused stay the caller's. */
uint16_t droce_port_queue_tx_try(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts,
				 uint16_t n);

/**
 * Queue @p q's lcore, when it has nothing to send: let the PMD push what
 * it may still hold from the last bursts (net_af_packet leaves frames in
 * its TX ring when the kernel stops early). Does nothing after a while.
 */
void droce_port_queue_kick(struct droce_port *port, uint16_t q);

/** droce_port_free_rx() for queue @p q's lcore (into that queue's stash). */
void droce_port_queue_free_rx(struct droce_port *port, uint16_t q, struct rte_mbuf **pkts,
			      unsigned int n);

/** droce_port_alloc() for queue @p q's lcore. */
struct rte_mbuf *droce_port_queue_alloc(struct droce_port *port, uint16_t q);

/* ---- neighbours ---- */

/**
 * droce_port_resolve() for the lcores of queues other than 0: reads the
 * neighbour table without changing it or sending anything. A GID without
 * a usable entry is handed to queue 0's lcore, which resolves it as
 * droce_port_resolve() would, and -EAGAIN returned: ask again later.
 */
int droce_port_neigh_peek(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES],
			  uint8_t mac[6]);

/**
 * The MAC to send to @p gid. Multicast GIDs map directly
 * (droce_gid_mcast_mac()); static neighbours win over learned ones;
 * IPv4-mapped GIDs resolve by ARP, others by IPv6 neighbour discovery.
 * The first call for an unknown address sends a request and returns
 * -EAGAIN; droce_port_rx_burst() retransmits every neigh_retrans_ms and
 * completes the entry when the answer arrives. A learned entry older than
 * neigh_reachable_ms is still used while a unicast probe refreshes it;
 * without an answer it is removed.
 *
 * @return 0 and @p mac filled; -EAGAIN while resolution is pending;
 *         -EHOSTUNREACH for neigh_retrans_ms after the last probe went
 *         unanswered (then a new resolution starts); -EADDRNOTAVAIL if we
 *         own no address of that family to ask from; -EINVAL for :: and
 *         0.0.0.0; -ENOSPC if the neighbour table is full. One of our own
 *         addresses resolves to our MAC (loopback).
 */
int droce_port_resolve(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES],
		       uint8_t mac[6]);

/**
 * Add or replace a static neighbour at run time.
 * @return 0; -EINVAL for a multicast or unspecified GID, one of our own
 *         addresses, or a multicast or zero MAC; -ENOSPC if the table is full.
 */
int droce_port_neigh_add(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES],
			 const uint8_t mac[6]);

/** Remove a neighbour, static or learned. @return 0 or -ENOENT. */
int droce_port_neigh_del(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES]);

/** Neighbour states, as droce_port_neigh_walk() reports them. */
enum droce_port_neigh_state {
	DROCE_PORT_NEIGH_INCOMPLETE,	/**< asked, no answer yet */
	DROCE_PORT_NEIGH_REACHABLE,	/**< answered within neigh_reachable_ms */
	DROCE_PORT_NEIGH_PROBE,		/**< aged; in use while a probe refreshes it */
	DROCE_PORT_NEIGH_FAILED,	/**< no answer to the last probe */
	DROCE_PORT_NEIGH_STATIC,	/**< configured */
};

/** Name of a neighbour state ("REACHABLE"). */
const char *droce_port_neigh_state_name(enum droce_port_neigh_state s);

/**
 * Call @p fn for each neighbour entry (polling lcore, or while it is not
 * polling). @p fn returning non-zero stops the walk.
 * @return the number of entries visited.
 */
unsigned int droce_port_neigh_walk(struct droce_port *port,
				   int (*fn)(const uint8_t gid[DROCE_GID_BYTES],
					     const uint8_t mac[6],
					     enum droce_port_neigh_state state, void *arg),
				   void *arg);

/* ---- multicast ---- */

/**
 * Join the group @p gid (an IPv4-mapped 224.0.0.0/4 or an IPv6 ff00::/8
 * GID). The first join of a group programs the port's multicast MAC filter
 * with the full list (rte_eth_dev_set_mc_addr_list; allmulticast if the
 * port has no filter) and sends an IGMP membership report (v3, or v2 if
 * configured) or an MLDv2 report. Joins are counted: joining again only
 * counts.
 *
 * @return 0; -EINVAL if @p gid is not multicast; -ENOSPC if
 *         DROCE_PORT_MAX_MCAST groups are joined; the -errno of the
 *         ethdev call if neither filter nor allmulticast could be set
 *         (the group is not joined then).
 */
int droce_port_mcast_join(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES]);

/**
 * Undo one droce_port_mcast_join(). The last leave removes the MAC from
 * the filter and sends an IGMP leave / MLDv2 report.
 * @return 0; -ENOENT if the group is not joined.
 */
int droce_port_mcast_leave(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES]);

#endif /* DROCE_PORT_H */
