/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Neighbours of a port: the table (GID -> MAC), ARP (RFC 826) and IPv6
 * neighbour discovery (RFC 4861) for our own addresses and for peers we
 * resolve.
 *
 * The table is open addressing with linear probing over NEIGH_SLOTS slots,
 * at most half full, keyed by the 16-byte GID (IPv4 as ::ffff:a.b.c.d).
 * Removal shifts the rest of a cluster back (no tombstones). States:
 *
 *   (none) --resolve--> INCOMPLETE --answer--> REACHABLE --reachable_ms--> (used)
 *                          |  no answer after       ^                          |
 *                          v  neigh_probes          |answer                    v
 *                        FAILED --retrans_ms--> (none)   <--no answer--      PROBE
 *
 * STATIC entries come from the configuration or droce_port_neigh_add() and
 * never change from the wire. Learned entries are created only by an ARP
 * request or a neighbour solicitation for one of our addresses (the asker
 * will talk to us) and by answers to our own requests; other traffic only
 * refreshes entries that exist.
 *
 * Timers run from droce_port_rx_burst() when entries wait for an answer
 * (n_pending > 0); the scan costs one pass over the table every quarter
 * of neigh_retrans_ms. Polling lcore only.
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>

#include "port_priv.h"

#define DEFAULT_REACHABLE_MS	30000	/* RFC 4861 REACHABLE_TIME */
#define DEFAULT_RETRANS_MS	1000	/* RFC 4861 RETRANS_TIMER */
#define DEFAULT_PROBES		3	/* RFC 4861 MAX_MULTICAST_SOLICIT */

#define ARP_HDR_BYTES		28	/* Ethernet/IPv4 ARP */
#define ARP_OP_REQUEST		1
#define ARP_OP_REPLY		2
#define ND_MSG_BYTES		24	/* type, code, cksum, flags/reserved, target */
#define ND_OPT_SLLA		1
#define ND_OPT_TLLA		2
#define NA_FLAG_ROUTER		0x80
#define NA_FLAG_SOLICITED	0x40
#define NA_FLAG_OVERRIDE	0x20

static const struct rte_ether_addr bcast_mac = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
static const struct rte_ether_addr zero_mac;
static const struct rte_ether_addr all_nodes_mac = {
	.addr_bytes = { 0x33, 0x33, 0, 0, 0, 1 } };
static const uint8_t all_nodes_ip[16] = { 0xff, 0x02, [15] = 1 };

static const char *const state_names[] = {
	[DROCE_PORT_NEIGH_INCOMPLETE] = "INCOMPLETE",
	[DROCE_PORT_NEIGH_REACHABLE] = "REACHABLE",
	[DROCE_PORT_NEIGH_PROBE] = "PROBE",
	[DROCE_PORT_NEIGH_FAILED] = "FAILED",
	[DROCE_PORT_NEIGH_STATIC] = "STATIC",
};

const char *
droce_port_neigh_state_name(enum droce_port_neigh_state s)
{
	return (unsigned int)s < RTE_DIM(state_names) ? state_names[s] : "UNKNOWN";
}

static bool
state_pending(uint8_t s)
{
	return s == NEIGH_INCOMPLETE || s == NEIGH_PROBE || s == NEIGH_FAILED;
}

/* ---- the table ---- */

static inline uint32_t
neigh_hash(const uint8_t gid[16])
{
	uint64_t w[2];

	/* GIDs come from anywhere, unaligned: copy before the 8-byte CRC steps */
	memcpy(w, gid, 16);
	return rte_hash_crc_8byte(w[1], rte_hash_crc_8byte(w[0], 0)) & (NEIGH_SLOTS - 1);
}

static struct neigh_entry *
neigh_find(struct droce_port *port, const uint8_t gid[16])
{
	uint32_t i = neigh_hash(gid);

	for (;;) {
		struct neigh_entry *e = &port->neigh[i];

		if (e->state == NEIGH_FREE)
			return NULL;
		if (memcmp(e->gid, gid, 16) == 0)
			return e;
		i = (i + 1) & (NEIGH_SLOTS - 1);
	}
}

static void
neigh_set_state(struct droce_port *port, struct neigh_entry *e, uint8_t s)
{
	port->n_pending += (uint32_t)state_pending(s) - (uint32_t)state_pending(e->state);
	e->state = s;
	e->probes = 0;
}

/* A new entry for @p gid (not in the table) in state @p s, or NULL if full. */
static struct neigh_entry *
neigh_insert(struct droce_port *port, const uint8_t gid[16], uint8_t s)
{
	uint32_t i = neigh_hash(gid);
	struct neigh_entry *e;

	if (port->n_neigh >= NEIGH_MAX)
		return NULL;
	while (port->neigh[i].state != NEIGH_FREE)
		i = (i + 1) & (NEIGH_SLOTS - 1);
	e = &port->neigh[i];
	memset(e, 0, sizeof(*e));
	memcpy(e->gid, gid, 16);
	port->n_neigh++;
	neigh_set_state(port, e, s);
	return e;
}

/* Remove @p e and shift the rest of its cluster back (Knuth 6.4 algorithm R). */
static void
neigh_remove(struct droce_port *port, struct neigh_entry *e)
{
	uint32_t hole = (uint32_t)(e - port->neigh), i = hole;

	neigh_set_state(port, e, NEIGH_FREE);
	port->n_neigh--;
	for (;;) {
		uint32_t home;

		i = (i + 1) & (NEIGH_SLOTS - 1);
		if (port->neigh[i].state == NEIGH_FREE)
			break;
		home = neigh_hash(port->neigh[i].gid);
		/* move it if its home is not cyclically within (hole, i] */
		if (((i - home) & (NEIGH_SLOTS - 1)) >= ((i - hole) & (NEIGH_SLOTS - 1))) {
			port->neigh[hole] = port->neigh[i];
			port->neigh[i].state = NEIGH_FREE;
			hole = i;
		}
	}
}

/* ---- frames ---- */

/* Our address to ask from: one whose prefix holds @p target, else the first. */
static bool
pick_src4(const struct droce_port *port, rte_be32_t target, rte_be32_t *src)
{
	unsigned int i;

	if (port->info.n_ipv4 == 0)
		return false;
	*src = port->info.ipv4[0].addr;
	for (i = 0; i < port->info.n_ipv4; i++) {
		const struct droce_port_ipv4 *a = &port->info.ipv4[i];
		uint32_t mask = a->prefix ? ~0u << (32 - a->prefix) : 0;

		if (((rte_be_to_cpu_32(a->addr) ^ rte_be_to_cpu_32(target)) & mask) == 0) {
			*src = a->addr;
			break;
		}
	}
	return true;
}

static bool
prefix_match(const uint8_t a[16], const uint8_t b[16], unsigned int bits)
{
	unsigned int bytes = bits / 8, rem = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	return rem == 0 || ((a[bytes] ^ b[bytes]) & (0xff << (8 - rem))) == 0;
}

static bool
is_link_local(const uint8_t ip[16])
{
	return ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80;
}

static const uint8_t *
pick_src6(const struct droce_port *port, const uint8_t target[16])
{
	const uint8_t *fallback = NULL;
	unsigned int i;

	for (i = 0; i < port->info.n_ipv6; i++) {
		const struct droce_port_ipv6 *a = &port->info.ipv6[i];

		if (is_link_local(target) ? is_link_local(a->addr) :
		    prefix_match(a->addr, target, a->prefix))
			return a->addr;
		/* off-prefix targets: prefer a global address to a link-local one */
		if (fallback == NULL || (is_link_local(fallback) && !is_link_local(a->addr)))
			fallback = a->addr;
	}
	return fallback;
}

static void
send_arp(struct droce_port *port, uint16_t op, const struct rte_ether_addr *eth_dst,
	 rte_be32_t spa, const struct rte_ether_addr *tha, rte_be32_t tpa)
{
	struct rte_mbuf *m = port_own_alloc(port, RTE_ETHER_HDR_LEN + ARP_HDR_BYTES);
	uint8_t *p;

	if (m == NULL)
		return;
	p = port_put_eth(rte_pktmbuf_mtod(m, uint8_t *), eth_dst, &port->mac, ETHERTYPE_ARP);
	port_store_be16(p, 1);			/* hardware: Ethernet */
	port_store_be16(p + 2, ETHERTYPE_IPV4);
	p[4] = 6;
	p[5] = 4;
	port_store_be16(p + 6, op);
	memcpy(p + 8, port->mac.addr_bytes, 6);
	memcpy(p + 14, &spa, 4);
	memcpy(p + 18, tha->addr_bytes, 6);
	memcpy(p + 24, &tpa, 4);
	if (op == ARP_OP_REPLY)
		PORT_CNT(port, ARP_REPLY_TX);
	else if (spa == tpa)
		PORT_CNT(port, ARP_ANNOUNCE_TX);
	else
		PORT_CNT(port, ARP_REQ_TX);
	port_xmit_own(port, m);
}

/* An NS (@p type ICMP6_NS) or NA carrying our MAC in its link-layer option. */
static void
send_nd(struct droce_port *port, uint8_t type, uint8_t flags, const struct rte_ether_addr *eth_dst,
	const uint8_t src[16], const uint8_t dst[16], const uint8_t target[16])
{
	const uint16_t icmp_len = ND_MSG_BYTES + 8;
	struct rte_mbuf *m = port_own_alloc(port, RTE_ETHER_HDR_LEN + 40 + icmp_len);
	uint8_t *p, *icmp;
	uint16_t ck;

	if (m == NULL)
		return;
	p = port_put_eth(rte_pktmbuf_mtod(m, uint8_t *), eth_dst, &port->mac, ETHERTYPE_IPV6);
	/* hop limit 255: receivers check that ND never crossed a router (RFC 4861 7.1) */
	icmp = port_put_ipv6(p, src, dst, icmp_len, IPPROTO_ICMPV6_, 255);
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == ICMP6_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	icmp[25] = 1;				/* option length in units of 8 bytes */
	memcpy(icmp + 26, port->mac.addr_bytes, 6);
	ck = port_icmp6_cksum(src, dst, icmp, icmp_len);
	port_store_cksum(icmp + 2, ck);
	if (type == ICMP6_NS)
		PORT_CNT(port, NS_TX);
	else
		PORT_CNT(port, NA_TX);
	port_xmit_own(port, m);
}

/* Ask for @p e's MAC: broadcast / solicited-node multicast, or unicast to
 * the MAC it had (@p unicast, a refresh probe). */
static void
neigh_solicit(struct droce_port *port, struct neigh_entry *e, bool unicast)
{
	if (droce_gid_is_ipv4(e->gid)) {
		rte_be32_t src;

		if (!pick_src4(port, droce_gid_to_ipv4(e->gid), &src))
			return;
		send_arp(port, ARP_OP_REQUEST, unicast ? &e->mac : &bcast_mac, src, &zero_mac,
			 droce_gid_to_ipv4(e->gid));
	} else {
		const uint8_t *src = pick_src6(port, e->gid);
		struct rte_ether_addr dmac;
		uint8_t snm[16];

		if (src == NULL)
			return;
		if (unicast) {
			send_nd(port, ICMP6_NS, 0, &e->mac, src, e->gid, e->gid);
		} else {
			port_solicited_node(e->gid, snm);
			port_ipv6_mcast_mac(snm, &dmac);
			send_nd(port, ICMP6_NS, 0, &dmac, src, snm, e->gid);
		}
	}
	e->probes++;
}

/* ---- learning ---- */

static bool
learnable(const struct droce_port *port, const uint8_t gid[16], const struct rte_ether_addr *mac)
{
	static const uint8_t zero[16];

	if (!rte_is_valid_assigned_ether_addr(mac) || droce_gid_is_mcast(gid))
		return false;
	if (droce_gid_is_ipv4(gid)) {
		rte_be32_t ip = droce_gid_to_ipv4(gid);

		return ip != 0 && ip != RTE_BE32(0xffffffff) && !port_owns_ipv4(port, ip);
	}
	return memcmp(gid, zero, 16) != 0 && !port_owns_ipv6(port, gid);
}

/* @p gid is at @p mac. Creates the entry only if @p create; never touches STATIC.
 * @return true if an entry now holds @p mac. */
static bool
neigh_learn(struct droce_port *port, const uint8_t gid[16], const struct rte_ether_addr *mac,
	    bool create)
{
	struct neigh_entry *e;

	if (!learnable(port, gid, mac))
		return false;
	e = neigh_find(port, gid);
	if (e == NULL) {
		if (!create)
			return false;
		e = neigh_insert(port, gid, NEIGH_REACHABLE);
		if (e == NULL)
			return false;
	} else if (e->state == NEIGH_STATIC) {
		return false;
	}
	e->mac = *mac;
	neigh_set_state(port, e, NEIGH_REACHABLE);
	e->deadline = rte_get_tsc_cycles() + port->reachable_cyc;
	PORT_CNT(port, NEIGH_LEARNED);
	return true;
}

void
neigh_rx_arp(struct droce_port *port, const struct rte_ether_hdr *eth, const uint8_t *arp,
	     uint32_t len)
{
	struct rte_ether_addr sha;
	rte_be32_t spa, tpa;
	uint8_t gid[16];
	uint16_t op;

	if (len < ARP_HDR_BYTES || port_load_be16(arp) != 1 ||
	    port_load_be16(arp + 2) != ETHERTYPE_IPV4 || arp[4] != 6 || arp[5] != 4) {
		port->drop[DROCE_PORT_DROP_ARP_BAD]++;
		return;
	}
	op = port_load_be16(arp + 6);
	memcpy(sha.addr_bytes, arp + 8, 6);
	memcpy(&spa, arp + 14, 4);
	memcpy(&tpa, arp + 24, 4);
	if (!rte_is_valid_assigned_ether_addr(&sha)) {
		port->drop[DROCE_PORT_DROP_ARP_BAD]++;
		return;
	}
	droce_gid_from_ipv4(gid, spa);

	if (op == ARP_OP_REQUEST) {
		if (!port_owns_ipv4(port, tpa)) {
			/* RFC 826 merge: refresh what we know, create nothing */
			if (spa != 0)
				neigh_learn(port, gid, &sha, false);
			port->drop[DROCE_PORT_DROP_ARP_NOT_OURS]++;
			return;
		}
		PORT_CNT(port, ARP_REQ_RX);
		if (spa != 0)		/* 0.0.0.0: an address probe (RFC 5227) */
			neigh_learn(port, gid, &sha, true);
		send_arp(port, ARP_OP_REPLY, &sha, tpa, &sha, spa);
		/*
		 * A broadcast question may have had another answer first: a
		 * Linux bridge holding our kernel port answers for the port's
		 * address with its own MAC (arp_ignore 0), and the asker keeps
		 * the first answer for a second (its locktime). An announcement
		 * (RFC 5227: sender and target address ours) replaces any entry
		 * at once, so the asker's frames reach us.
		 */
		if (spa != 0 && rte_is_broadcast_ether_addr(&eth->dst_addr))
			send_arp(port, ARP_OP_REQUEST, &sha, tpa, &zero_mac, tpa);
		return;
	}
	if (op == ARP_OP_REPLY && neigh_learn(port, gid, &sha, false)) {
		PORT_CNT(port, ARP_REPLY_RX);
		return;
	}
	port->drop[DROCE_PORT_DROP_ARP_OTHER]++;
}

/* The link-layer address option @p want in ND options, or NULL. *bad on a malformed option. */
static const uint8_t *
nd_find_lla(const uint8_t *opt, uint32_t len, uint8_t want, bool *bad)
{
	const uint8_t *found = NULL;

	*bad = false;
	while (len > 0) {
		uint32_t olen;

		if (len < 2 || opt[1] == 0) {	/* length 0 is invalid (RFC 4861 4.6) */
			*bad = true;
			return NULL;
		}
		olen = opt[1] * 8u;
		if (olen > len) {
			*bad = true;
			return NULL;
		}
		if (opt[0] == want && olen >= 8)
			found = opt + 2;
		opt += olen;
		len -= olen;
	}
	return found;
}

void
neigh_rx_nd(struct droce_port *port, const struct rte_ether_hdr *eth, const uint8_t *ip6,
	    const uint8_t *icmp, uint32_t len)
{
	static const uint8_t unspec[16];
	const uint8_t *src = ip6 + 8, *dst = ip6 + 24, *target = icmp + 8, *lla;
	struct rte_ether_addr mac;
	uint8_t type = icmp[0];
	bool bad;

	/* RFC 4861 7.1.1 / 7.1.2 validity checks */
	if (ip6[7] != 255 || icmp[1] != 0 || len < ND_MSG_BYTES ||
	    port_icmp6_cksum(src, dst, icmp, len) != 0 || target[0] == 0xff) {
		port->drop[DROCE_PORT_DROP_ICMP6_BAD]++;
		return;
	}
	lla = nd_find_lla(icmp + ND_MSG_BYTES, len - ND_MSG_BYTES,
			  type == ICMP6_NS ? ND_OPT_SLLA : ND_OPT_TLLA, &bad);
	if (bad) {
		port->drop[DROCE_PORT_DROP_ICMP6_BAD]++;
		return;
	}

	if (type == ICMP6_NS) {
		bool dad = memcmp(src, unspec, 16) == 0;

		if (dad && lla != NULL) {
			port->drop[DROCE_PORT_DROP_ICMP6_BAD]++;
			return;
		}
		if (!port_owns_ipv6(port, target)) {
			port->drop[DROCE_PORT_DROP_NS_NOT_OURS]++;
			return;
		}
		PORT_CNT(port, NS_RX);
		if (dad) {
			/* someone probes our address: defend it to all nodes (7.2.4) */
			send_nd(port, ICMP6_NA, NA_FLAG_OVERRIDE, &all_nodes_mac, target,
				all_nodes_ip, target);
			return;
		}
		if (lla != NULL) {
			memcpy(mac.addr_bytes, lla, 6);
			neigh_learn(port, src, &mac, true);
		} else {
			mac = eth->src_addr;	/* a unicast probe: answer where it came from */
		}
		send_nd(port, ICMP6_NA, NA_FLAG_SOLICITED | NA_FLAG_OVERRIDE, &mac, target, src,
			target);
		return;
	}

	/* NA */
	{
		struct neigh_entry *e = neigh_find(port, target);
		uint8_t flags = icmp[4];

		if (e == NULL || e->state == NEIGH_FAILED) {
			port->drop[DROCE_PORT_DROP_NA_UNSOLICITED]++;
			return;
		}
		PORT_CNT(port, NA_RX);
		if (e->state == NEIGH_STATIC)
			return;
		if (lla == NULL) {
			/* only confirms the MAC we have (answers to unicast probes omit it) */
			if (e->state != NEIGH_INCOMPLETE && (flags & NA_FLAG_SOLICITED))
				neigh_learn(port, target, &e->mac, false);
			return;
		}
		memcpy(mac.addr_bytes, lla, 6);
		if (e->state == NEIGH_INCOMPLETE || (flags & NA_FLAG_OVERRIDE) ||
		    rte_is_same_ether_addr(&mac, &e->mac))
			neigh_learn(port, target, &mac, false);
	}
}

/* ---- timers ---- */

void
neigh_timer(struct droce_port *port, uint64_t now)
{
	uint32_t i = 0;

	port->next_timer = now + RTE_MAX(port->retrans_cyc / 4, port->hz / 1000);
	while (i < NEIGH_SLOTS && port->n_pending > 0) {
		struct neigh_entry *e = &port->neigh[i];

		if (!state_pending(e->state) || now < e->deadline) {
			i++;
			continue;
		}
		if (e->state == NEIGH_FAILED) {
			neigh_remove(port, e);	/* the next resolve starts afresh */
			continue;		/* slot i may hold a shifted entry now */
		}
		if (e->probes < port->max_probes) {
			neigh_solicit(port, e, e->state == NEIGH_PROBE);
			e->deadline = now + port->retrans_cyc;
			i++;
			continue;
		}
		if (e->state == NEIGH_INCOMPLETE) {
			neigh_set_state(port, e, NEIGH_FAILED);
			e->deadline = now + port->retrans_cyc;
			PORT_CNT(port, NEIGH_FAILED);
			i++;
		} else {
			neigh_remove(port, e);	/* PROBE unanswered: forget the MAC */
			PORT_CNT(port, NEIGH_EXPIRED);
		}
	}
}

/* ---- API ---- */

void
neigh_init(struct droce_port *port, const struct droce_port_conf *conf)
{
	uint32_t reach = conf->neigh_reachable_ms ? conf->neigh_reachable_ms : DEFAULT_REACHABLE_MS;
	uint32_t retrans = conf->neigh_retrans_ms ? conf->neigh_retrans_ms : DEFAULT_RETRANS_MS;
	unsigned int i;

	port->hz = rte_get_tsc_hz();
	port->reachable_cyc = port->hz * reach / 1000;
	port->retrans_cyc = port->hz * retrans / 1000;
	port->max_probes = conf->neigh_probes ? conf->neigh_probes : DEFAULT_PROBES;
	memcpy(port->gateway4, conf->gateway4, 16);
	memcpy(port->gateway6, conf->gateway6, 16);
	for (i = 0; i < conf->n_neigh; i++)
		droce_port_neigh_add(port, conf->neigh[i].gid, conf->neigh[i].mac);
}

/* Is @p gid on our link: inside a prefix of ours (IPv6: or link-local)? */
static bool
on_link(const struct droce_port *port, const uint8_t gid[16], bool v4)
{
	rte_be32_t ip = droce_gid_to_ipv4(gid);
	unsigned int i;

	if (v4) {
		for (i = 0; i < port->info.n_ipv4; i++) {
			const struct droce_port_ipv4 *a = &port->info.ipv4[i];
			uint32_t mask = a->prefix ? ~0u << (32 - a->prefix) : 0;

			if (((rte_be_to_cpu_32(a->addr) ^ rte_be_to_cpu_32(ip)) & mask) == 0)
				return true;
		}
		return false;
	}
	if (is_link_local(gid))
		return true;
	for (i = 0; i < port->info.n_ipv6; i++)
		if (prefix_match(port->info.ipv6[i].addr, gid, port->info.ipv6[i].prefix))
			return true;
	return false;
}

/*
 * A group's MAC or ours for @p gid (0, in @p mac), or the neighbour to ask
 * for (1, in *hop): @p gid itself, or off our link the family's gateway.
 */
static int
neigh_next_hop(const struct droce_port *port, const uint8_t *gid, uint8_t mac[6],
	       const uint8_t **hop)
{
	static const uint8_t none[16];
	bool v4;

	if (droce_gid_is_mcast(gid))
		return droce_gid_mcast_mac(gid, mac);	/* 0 or -errno */
	v4 = droce_gid_is_ipv4(gid);
	if (v4 ? port_owns_ipv4(port, droce_gid_to_ipv4(gid)) : port_owns_ipv6(port, gid)) {
		memcpy(mac, port->mac.addr_bytes, 6);
		return 0;
	}
	*hop = gid;
	if (!on_link(port, gid, v4) && memcmp(v4 ? port->gateway4 : port->gateway6, none, 16) != 0)
		*hop = v4 ? port->gateway4 : port->gateway6;
	return 1;
}

static int
neigh_resolve(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES], uint8_t mac[6])
{
	struct neigh_entry *e;
	uint64_t now;
	bool v4;
	int ret = neigh_next_hop(port, gid, mac, &gid);

	if (ret <= 0)
		return ret;
	v4 = droce_gid_is_ipv4(gid);
	e = neigh_find(port, gid);
	now = rte_get_tsc_cycles();
	if (e != NULL) {
		switch (e->state) {
		case NEIGH_REACHABLE:
			if (now >= e->deadline) {
				/* aged: keep using it while a unicast probe asks again */
				neigh_set_state(port, e, NEIGH_PROBE);
				neigh_solicit(port, e, true);
				e->deadline = now + port->retrans_cyc;
				port->next_timer = RTE_MIN(port->next_timer, e->deadline);
			}
			/* fall through */
		case NEIGH_PROBE:
		case NEIGH_STATIC:
			memcpy(mac, e->mac.addr_bytes, 6);
			return 0;
		case NEIGH_INCOMPLETE:
			return -EAGAIN;
		default:	/* FAILED */
			if (now < e->deadline)
				return -EHOSTUNREACH;
			neigh_remove(port, e);
			break;
		}
	}
	if (!learnable(port, gid, &port->mac))
		return -EINVAL;
	if (v4 ? port->info.n_ipv4 == 0 : port->info.n_ipv6 == 0)
		return -EADDRNOTAVAIL;
	e = neigh_insert(port, gid, NEIGH_INCOMPLETE);
	if (e == NULL)
		return -ENOSPC;
	neigh_solicit(port, e, false);
	e->deadline = now + port->retrans_cyc;
	port->next_timer = RTE_MIN(port->next_timer, e->deadline);
	return -EAGAIN;
}

int
droce_port_resolve(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES], uint8_t mac[6])
{
	int ret;

	neigh_write_begin(port);
	ret = neigh_resolve(port, gid, mac);
	neigh_write_end(port);
	return ret;
}

void
neigh_serve_requests(struct droce_port *port)
{
	uint8_t gids[8][DROCE_GID_BYTES], mac[6];
	unsigned int n, i;

	n = rte_ring_sc_dequeue_burst_elem(port->resolve_ring, gids, DROCE_GID_BYTES,
					   DROCE_DIM(gids), NULL);
	for (i = 0; i < n; i++)
		(void)droce_port_resolve(port, gids[i], mac);
}

/* A copy of @p gid's entry, read while the writer may be at work: 0 or -EAGAIN. */
static int
neigh_peek_once(struct droce_port *port, const uint8_t gid[16], uint8_t mac[6])
{
	uint32_t i = neigh_hash(gid), n;

	/* the table is at most half full, but a concurrent shift may move the hole */
	for (n = 0; n < NEIGH_SLOTS; n++, i = (i + 1) & (NEIGH_SLOTS - 1)) {
		const struct neigh_entry *e = &port->neigh[i];
		uint8_t s = e->state;

		if (s == NEIGH_FREE)
			return -EAGAIN;
		if (memcmp(e->gid, gid, 16) != 0)
			continue;
		if (s != NEIGH_REACHABLE && s != NEIGH_PROBE && s != NEIGH_STATIC)
			return -EAGAIN;
		memcpy(mac, e->mac.addr_bytes, 6);
		return 0;
	}
	return -EAGAIN;
}

int
droce_port_neigh_peek(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES], uint8_t mac[6])
{
	const uint8_t *hop = gid;
	uint32_t seq;
	int ret = neigh_next_hop(port, gid, mac, &hop);

	if (ret <= 0)
		return ret;
	/* a table in change is not waited for: its writer may be preempted on our core */
	do {
		seq = atomic_load_explicit(&port->neigh_seq, memory_order_acquire);
		ret = (seq & 1) ? -EAGAIN : neigh_peek_once(port, hop, mac);
		atomic_thread_fence(memory_order_acquire);
	} while (!(seq & 1) && seq != atomic_load_explicit(&port->neigh_seq, memory_order_relaxed));
	/* unknown, pending or failed: queue 0's lcore asks (and ages, and gives up) */
	if (ret < 0 && port->resolve_ring != NULL)
		(void)rte_ring_enqueue_elem(port->resolve_ring, (void *)(uintptr_t)gid,
					       DROCE_GID_BYTES);
	return ret;
}

static int
neigh_add(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES], const uint8_t mac[6])
{
	struct rte_ether_addr a;
	struct neigh_entry *e;

	memcpy(a.addr_bytes, mac, 6);
	if (!learnable(port, gid, &a))
		return -EINVAL;
	e = neigh_find(port, gid);
	if (e == NULL)
		e = neigh_insert(port, gid, NEIGH_STATIC);
	if (e == NULL)
		return -ENOSPC;
	neigh_set_state(port, e, NEIGH_STATIC);
	e->mac = a;
	return 0;
}

int
droce_port_neigh_add(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES],
		     const uint8_t mac[6])
{
	int ret;

	neigh_write_begin(port);
	ret = neigh_add(port, gid, mac);
	neigh_write_end(port);
	return ret;
}

int
droce_port_neigh_del(struct droce_port *port, const uint8_t gid[DROCE_GID_BYTES])
{
	struct neigh_entry *e = neigh_find(port, gid);

	if (e == NULL)
		return -ENOENT;
	neigh_write_begin(port);
	neigh_remove(port, e);
	neigh_write_end(port);
	return 0;
}

unsigned int
droce_port_neigh_walk(struct droce_port *port,
		      int (*fn)(const uint8_t gid[DROCE_GID_BYTES], const uint8_t mac[6],
				enum droce_port_neigh_state state, void *arg),
		      void *arg)
{
	static const enum droce_port_neigh_state map[] = {
		[NEIGH_INCOMPLETE] = DROCE_PORT_NEIGH_INCOMPLETE,
		[NEIGH_REACHABLE] = DROCE_PORT_NEIGH_REACHABLE,
		[NEIGH_PROBE] = DROCE_PORT_NEIGH_PROBE,
		[NEIGH_FAILED] = DROCE_PORT_NEIGH_FAILED,
		[NEIGH_STATIC] = DROCE_PORT_NEIGH_STATIC,
	};
	unsigned int i, n = 0;

	for (i = 0; i < NEIGH_SLOTS; i++) {
		const struct neigh_entry *e = &port->neigh[i];

		if (e->state == NEIGH_FREE)
			continue;
		n++;
		if (fn(e->gid, e->mac.addr_bytes, map[e->state], arg) != 0)
			break;
	}
	return n;
}
