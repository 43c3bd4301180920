/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Suite "pmd_ring": the port layer over a net_ring port whose two rings the
 * test holds, so the test is the wire: it enqueues frames the port
 * receives (wire_in) and dequeues what the port sent (wire_out). ARP, ND,
 * foreign frames, RoCEv2 candidates, resolution and its timers, static
 * neighbours, multicast reports, TX refusal, hotplug, the fault wrapper.
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_fault.h"
#include "droce_port.h"
#include "droce_wire.h"
#include "pmd_test.h"

static struct rte_ring *wire_in, *wire_out;
static struct rte_mempool *test_mp;
static uint16_t ring_port;

static const uint8_t our_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t other_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x99 };

static uint32_t our_ip, peer_ip, other_ip;
static uint8_t our_ip6[16], peer_ip6[16], other_ip6[16];

/* ---- the wire ---- */

static void
inject(const struct tframe *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	ck_assert_ptr_nonnull(m);
	memcpy(rte_pktmbuf_append(m, f->len), f->b, f->len);
	ck_assert_int_eq(rte_ring_enqueue(wire_in, m), 0);
}

/* The next frame the port sent, or NULL. The caller frees it. */
static struct rte_mbuf *
sent(void)
{
	void *m;

	return rte_ring_dequeue(wire_out, &m) == 0 ? m : NULL;
}

static unsigned int
drain_sent(void)
{
	struct rte_mbuf *m;
	unsigned int n = 0;

	while ((m = sent()) != NULL) {
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

static void
drain_in(void)
{
	void *m;

	while (rte_ring_dequeue(wire_in, &m) == 0)
		rte_pktmbuf_free(m);
}

/* Receive until the port has nothing more; free the candidates, count them. */
static unsigned int
poll_port(struct droce_port *p)
{
	struct rte_mbuf *pk[32];
	unsigned int n = 0, i, idle = 0;
	uint16_t k;

	while (idle < 2) {
		k = droce_port_rx_burst(p, pk, 32);
		for (i = 0; i < k; i++)
			rte_pktmbuf_free(pk[i]);
		n += k;
		idle = rte_ring_count(wire_in) == 0 ? idle + 1 : 0;
	}
	return n;
}

static const uint8_t *
fb(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, const uint8_t *);
}

static void
base_conf(struct droce_port_conf *c)
{
	droce_port_conf_init(c);
	c->port_id = ring_port;
	memcpy(c->mac, our_mac, 6);
	c->has_mac = true;
	c->ipv4[0].addr = our_ip;
	c->ipv4[0].prefix = 24;
	c->n_ipv4 = 1;
	c->link_wait_ms = 100;
	c->nb_mbufs = 2047;
}

/* The port a test has open, so that teardown closes it after a failure. */
static struct droce_port *cur_port;

static struct droce_port *
open_port(const struct droce_port_conf *c)
{
	struct droce_port *p = NULL;

	drain_in();
	drain_sent();
	ck_assert_int_eq(droce_port_open(c, &p), 0);
	ck_assert_ptr_nonnull(p);
	cur_port = p;
	return p;
}

static void
close_port(struct droce_port *p)
{
	drain_in();
	droce_port_close(p);
	drain_sent();
	if (p == cur_port)
		cur_port = NULL;
}

static void
teardown(void)
{
	if (cur_port != NULL)
		close_port(cur_port);
}

static uint64_t
drop_of(struct droce_port *p, enum droce_port_drop r)
{
	struct droce_port_stats st;

	droce_port_stats(p, &st);
	return st.drop[r];
}

static uint64_t
cnt_of(struct droce_port *p, enum droce_port_counter c)
{
	struct droce_port_stats st;

	droce_port_stats(p, &st);
	return st.counter[c];
}

static void
sleep_ms(unsigned int ms)
{
	rte_delay_us_sleep(ms * 1000u);
}

/* ---- configuration ---- */

START_TEST(test_conf_helpers_parse_and_refuse)
{
	struct droce_port_conf c;

	droce_port_conf_init(&c);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "10.1.2.3/16"), 0);
	ck_assert_uint_eq(c.n_ipv4, 1);
	ck_assert_uint_eq(c.ipv4[0].addr, t_ip4(10, 1, 2, 3));
	ck_assert_uint_eq(c.ipv4[0].prefix, 16);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "fd00::1/64"), 0);
	ck_assert_uint_eq(c.n_ipv6, 1);
	ck_assert_uint_eq(c.ipv6[0].prefix, 64);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "10.0.0.1"), 0);
	ck_assert_uint_eq(c.ipv4[1].prefix, 32);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "10.0.0.1/33"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "224.1.1.1/32"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "0.0.0.0/0"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "ff02::1"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "bogus"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "10.0.0.1/"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_add_neigh(&c, "10.0.0.2=02:00:00:00:00:22"), 0);
	ck_assert_uint_eq(c.n_neigh, 1);
	ck_assert_uint_eq(c.neigh[0].mac[5], 0x22);
	ck_assert_int_eq(droce_port_conf_add_neigh(&c, "10.0.0.2=01:00:5e:00:00:01"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_add_neigh(&c, "10.0.0.2"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_set_mac(&c, "02:11:22:33:44:55"), 0);
	ck_assert(c.has_mac);
	ck_assert_int_eq(droce_port_conf_set_mac(&c, "00:00:00:00:00:00"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_iface(&c, "no-such-if0"), -ENODEV);
	ck_assert_int_eq(droce_port_conf_iface(&c, "a,b"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_iface(&c, "lo"), 0);
	/* lo's MTU (65536) is jumbo: 2048 ring frames as large as the jumbo mbufs */
	ck_assert_str_eq(c.devargs,
			 "net_af_packet_lo,iface=lo,qpairs=1,blocksz=20480,framesz=10240,framecnt=2048");
	ck_assert_str_eq(c.iface, "lo");
}
END_TEST

START_TEST(test_open_uses_configured_mac_and_reports)
{
	struct droce_port_conf c;
	struct droce_port_info in;
	struct rte_ether_addr ea;
	struct droce_port *p;

	base_conf(&c);
	c.ipv6_link_local = true;
	p = open_port(&c);
	ck_assert_int_eq(droce_port_info(p, &in), 0);
	ck_assert_mem_eq(in.mac, our_mac, 6);
	ck_assert_str_eq(in.driver, "net_ring");
	ck_assert_uint_eq(in.port_id, ring_port);
	ck_assert_uint_eq(in.mtu, 1500);
	ck_assert_uint_ge(in.max_frame, 1500 + 14);
	ck_assert(in.link_up);
	ck_assert_uint_eq(in.n_ipv4, 1);
	/* link-local from the MAC: fe80::0000:00ff:fe00:0001 with the U/L bit flipped */
	ck_assert_uint_eq(in.n_ipv6, 1);
	ck_assert_uint_eq(in.ipv6[0].addr[0], 0xfe);
	ck_assert_uint_eq(in.ipv6[0].addr[8], 0x00);	/* 0x02 ^ 0x02 */
	ck_assert_uint_eq(in.ipv6[0].addr[11], 0xff);
	ck_assert_uint_eq(in.ipv6[0].addr[12], 0xfe);
	ck_assert_uint_eq(in.ipv6[0].addr[15], 0x01);
	/* net_ring has no filter: allmulticast is the fallback */
	ck_assert(!in.mc_filter);
	ck_assert(in.allmulti);
	/* net_ring cannot take a MAC (ENOTSUP): tolerated, the port keeps zeros */
	ck_assert_int_eq(rte_eth_macaddr_get(ring_port, &ea), 0);
	close_port(p);
}
END_TEST

START_TEST(test_open_without_mac_is_random_laa)
{
	struct droce_port_conf c;
	struct droce_port_info in;
	struct droce_port *p;
	static const uint8_t zero[6];

	base_conf(&c);
	c.has_mac = false;
	p = open_port(&c);
	droce_port_info(p, &in);
	ck_assert(in.mac[0] & 0x02);		/* locally administered */
	ck_assert(!(in.mac[0] & 0x01));		/* unicast */
	ck_assert(memcmp(in.mac, zero, 6) != 0);
	close_port(p);
}
END_TEST

START_TEST(test_open_refuses_bad_conf)
{
	struct droce_port_conf c;
	struct droce_port *p = NULL;

	base_conf(&c);
	c.mtu = 20;				/* below Ethernet's minimum */
	ck_assert_int_eq(droce_port_open(&c, &p), -EINVAL);
	base_conf(&c);
	c.igmp_version = 1;
	ck_assert_int_eq(droce_port_open(&c, &p), -EINVAL);
	base_conf(&c);
	c.port_id = RTE_MAX_ETHPORTS - 1;
	ck_assert_int_eq(droce_port_open(&c, &p), -ENODEV);
	base_conf(&c);
	snprintf(c.devargs, sizeof(c.devargs), "net_nosuchdriver0");
	ck_assert_int_eq(droce_port_open(&c, &p), -ENODEV);
	/* a vdev whose probe fails does not exist: not a silent success */
	snprintf(c.devargs, sizeof(c.devargs), "net_ring_bad0,nodeaction=bogus");
	ck_assert_int_eq(droce_port_open(&c, &p), -ENODEV);
	ck_assert_ptr_null(p);
}
END_TEST

/* ---- ARP ---- */

START_TEST(test_arp_request_for_us_is_answered)
{
	static const uint8_t zero[6];
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	struct tframe f;
	const uint8_t *b;
	uint8_t gid[16], mac[6];

	base_conf(&c);
	p = open_port(&c);
	t_arp(&f, 1, t_bcast, peer_mac, peer_ip, zero, our_ip);
	inject(&f);
	ck_assert_uint_eq(poll_port(p), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	b = fb(m);
	ck_assert_uint_ge(rte_pktmbuf_pkt_len(m), 42);
	ck_assert_mem_eq(b, peer_mac, 6);		/* to the asker */
	ck_assert_mem_eq(b + 6, our_mac, 6);		/* from our configured MAC */
	ck_assert_uint_eq(b[12], 0x08);
	ck_assert_uint_eq(b[13], 0x06);
	ck_assert_uint_eq(b[14], 0);			/* htype 1 */
	ck_assert_uint_eq(b[15], 1);
	ck_assert_uint_eq(b[16], 0x08);			/* ptype IPv4 */
	ck_assert_uint_eq(b[17], 0x00);
	ck_assert_uint_eq(b[18], 6);
	ck_assert_uint_eq(b[19], 4);
	ck_assert_uint_eq(b[20], 0);			/* op 2: reply */
	ck_assert_uint_eq(b[21], 2);
	ck_assert_mem_eq(b + 22, our_mac, 6);		/* sha */
	ck_assert_mem_eq(b + 28, &our_ip, 4);		/* spa */
	ck_assert_mem_eq(b + 32, peer_mac, 6);		/* tha */
	ck_assert_mem_eq(b + 38, &peer_ip, 4);		/* tpa */
	rte_pktmbuf_free(m);
	/*
	 * then, to the asker only, an announcement (RFC 5227): it replaces
	 * another interface's answer that came first (a bridge's own MAC)
	 */
	m = sent();
	ck_assert_ptr_nonnull(m);
	b = fb(m);
	ck_assert_mem_eq(b, peer_mac, 6);
	ck_assert_mem_eq(b + 6, our_mac, 6);
	ck_assert_uint_eq(b[21], 1);			/* op 1: request */
	ck_assert_mem_eq(b + 22, our_mac, 6);		/* sha */
	ck_assert_mem_eq(b + 28, &our_ip, 4);		/* spa: ours */
	ck_assert_mem_eq(b + 32, zero, 6);		/* tha: unknown */
	ck_assert_mem_eq(b + 38, &our_ip, 4);		/* tpa: ours too */
	rte_pktmbuf_free(m);
	ck_assert_ptr_null(sent());
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_ARP_REQ_RX), 1);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_ARP_REPLY_TX), 1);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_ARP_ANNOUNCE_TX), 1);

	/* a unicast question had no other answer: the reply alone */
	t_arp(&f, 1, our_mac, peer_mac, peer_ip, zero, our_ip);
	inject(&f);
	ck_assert_uint_eq(poll_port(p), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(fb(m)[21], 2);
	rte_pktmbuf_free(m);
	ck_assert_ptr_null(sent());
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_ARP_ANNOUNCE_TX), 1);

	/* the asker was learned: resolving it needs no request */
	t_gid4(gid, peer_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, peer_mac, 6);
	ck_assert_ptr_null(sent());
	close_port(p);
}
END_TEST

START_TEST(test_arp_for_others_is_dropped_and_learns_nothing)
{
	static const uint8_t zero[6];
	struct droce_port_conf c;
	struct droce_port *p;
	struct tframe f;
	uint8_t gid[16], mac[6];

	base_conf(&c);
	p = open_port(&c);
	t_arp(&f, 1, t_bcast, peer_mac, peer_ip, zero, other_ip);	/* not ours */
	inject(&f);
	t_arp(&f, 2, our_mac, peer_mac, peer_ip, our_mac, our_ip);	/* unasked reply */
	inject(&f);
	t_arp(&f, 7, t_bcast, peer_mac, peer_ip, zero, our_ip);		/* unknown op */
	inject(&f);
	t_arp(&f, 1, t_bcast, peer_mac, peer_ip, zero, our_ip);
	f.b[14 + 5] = 16;						/* plen 16: bad */
	inject(&f);
	ck_assert_uint_eq(poll_port(p), 0);
	ck_assert_uint_eq(drain_sent(), 0);
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_ARP_NOT_OURS), 1);
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_ARP_OTHER), 2);
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_ARP_BAD), 1);
	t_gid4(gid, peer_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);	/* nothing learned */
	close_port(p);
}
END_TEST

/* ---- IPv6 neighbour discovery ---- */

static void
check_na(struct rte_mbuf *m, const uint8_t edst[6], const uint8_t ipdst[16],
	 const uint8_t target[16], uint8_t flags)
{
	const uint8_t *b = fb(m), *ip = b + 14, *icmp = ip + 40;

	ck_assert_mem_eq(b, edst, 6);
	ck_assert_mem_eq(b + 6, our_mac, 6);
	ck_assert_uint_eq(b[12], 0x86);
	ck_assert_uint_eq(b[13], 0xdd);
	ck_assert_uint_eq(ip[0] >> 4, 6);
	ck_assert_uint_eq(ip[6], 58);
	ck_assert_uint_eq(ip[7], 255);
	ck_assert_mem_eq(ip + 8, target, 16);		/* from the solicited address */
	ck_assert_mem_eq(ip + 24, ipdst, 16);
	ck_assert_uint_eq((ip[4] << 8 | ip[5]), 32);
	ck_assert_uint_eq(icmp[0], 136);
	ck_assert_uint_eq(icmp[1], 0);
	ck_assert_uint_eq(icmp[4], flags);
	ck_assert_mem_eq(icmp + 8, target, 16);
	ck_assert_uint_eq(icmp[24], 2);			/* target link-layer address */
	ck_assert_uint_eq(icmp[25], 1);
	ck_assert_mem_eq(icmp + 26, our_mac, 6);
	ck_assert_uint_eq(t_icmp6_check(ip + 8, ip + 24, icmp, 32), 0);
}

START_TEST(test_ns_for_us_gets_na)
{
	static const uint8_t unspec[16];
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	struct tframe f;
	uint8_t snm[16], snm_mac[6] = { 0x33, 0x33, 0xff }, mac[6];

	base_conf(&c);
	memcpy(c.ipv6[0].addr, our_ip6, 16);
	c.ipv6[0].prefix = 64;
	c.n_ipv6 = 1;
	p = open_port(&c);
	drain_sent();				/* the MLD report of the solicited-node group */
	/* solicited-node multicast of our address: ff02::1:ffXX:XXXX */
	memcpy(snm, (const uint8_t[16]){ 0xff, 0x02, [11] = 1, [12] = 0xff }, 16);
	memcpy(snm + 13, our_ip6 + 13, 3);
	memcpy(snm_mac + 3, our_ip6 + 13, 3);

	t_nd(&f, 135, 0, snm_mac, peer_mac, peer_ip6, snm, our_ip6, peer_mac, 255);
	inject(&f);
	ck_assert_uint_eq(poll_port(p), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	check_na(m, peer_mac, peer_ip6, our_ip6, 0x40 | 0x20);	/* solicited, override */
	rte_pktmbuf_free(m);
	ck_assert_ptr_null(sent());
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_NS_RX), 1);
	/* the solicitor was learned from its source link-layer option */
	ck_assert_int_eq(droce_port_resolve(p, peer_ip6, mac), 0);
	ck_assert_mem_eq(mac, peer_mac, 6);

	/* duplicate address detection (source ::): defended to all nodes, not solicited */
	t_nd(&f, 135, 0, snm_mac, other_mac, unspec, snm, our_ip6, NULL, 255);
	inject(&f);
	poll_port(p);
	m = sent();
	ck_assert_ptr_nonnull(m);
	check_na(m, all_nodes_mac, all_nodes, our_ip6, 0x20);
	rte_pktmbuf_free(m);

	/* invalid: hop limit 64, bad checksum, NS for another address */
	t_nd(&f, 135, 0, snm_mac, peer_mac, peer_ip6, snm, our_ip6, peer_mac, 64);
	inject(&f);
	t_nd(&f, 135, 0, snm_mac, peer_mac, peer_ip6, snm, our_ip6, peer_mac, 255);
	f.b[14 + 40 + 2] ^= 0x55;
	inject(&f);
	t_nd(&f, 135, 0, snm_mac, peer_mac, peer_ip6, snm, other_ip6, peer_mac, 255);
	inject(&f);
	/* an option of length 0 is invalid (RFC 4861 4.6) */
	t_nd(&f, 135, 0, snm_mac, peer_mac, peer_ip6, snm, our_ip6, peer_mac, 255);
	f.b[14 + 40 + 25] = 0;
	f.b[14 + 40 + 2] = 0;
	f.b[14 + 40 + 3] = 0;
	{
		uint16_t ck = t_icmp6_check(peer_ip6, snm, f.b + 54, 32);

		f.b[14 + 40 + 2] = (uint8_t)(ck >> 8);
		f.b[14 + 40 + 3] = (uint8_t)ck;
	}
	inject(&f);
	poll_port(p);
	ck_assert_uint_eq(drain_sent(), 0);
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_ICMP6_BAD), 3);
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_NS_NOT_OURS), 1);
	close_port(p);
}
END_TEST

/* ---- foreign frames ---- */

START_TEST(test_foreign_frames_are_counted_by_reason)
{
	static const uint8_t lldp_mac[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e };
	static const uint8_t ip4mc_mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	struct droce_port_conf c;
	struct droce_port_stats st;
	struct droce_port *p;
	struct tframe f;
	unsigned int i;

	base_conf(&c);
	memcpy(c.ipv6[0].addr, our_ip6, 16);
	c.ipv6[0].prefix = 64;
	c.n_ipv6 = 1;
	p = open_port(&c);
	drain_sent();
	droce_port_stats_reset(p);

	t_ip4_l4(&f, our_mac, peer_mac, peer_ip, our_ip, 6, 80);	/* TCP */
	inject(&f);
	t_ip4_l4(&f, our_mac, peer_mac, peer_ip, our_ip, 17, 53);	/* UDP, DNS */
	inject(&f);
	t_ip4_l4(&f, our_mac, peer_mac, peer_ip, other_ip, 17, 4791);	/* RoCE, not our IP */
	inject(&f);
	t_ip4_l4(&f, other_mac, peer_mac, peer_ip, our_ip, 17, 4791);	/* another MAC */
	inject(&f);
	t_ip4_l4(&f, ip4mc_mac, peer_mac, peer_ip, t_ip4(239, 1, 2, 3), 17, 4791); /* not joined */
	inject(&f);
	t_ip6_l4(&f, our_mac, peer_mac, peer_ip6, our_ip6, 6, 22);	/* TCP over IPv6 */
	inject(&f);
	t_ip6_l4(&f, our_mac, peer_mac, peer_ip6, our_ip6, 58, 0);	/* ICMPv6 echo-ish */
	f.b[54] = 128;
	inject(&f);
	t_ip4_l4(&f, our_mac, peer_mac, peer_ip, our_ip, 17, 4791);
	f.b[14] = 0x65;							/* IP version 6 in IPv4 */
	inject(&f);
	t_ip6_l4(&f, our_mac, peer_mac, peer_ip6, our_ip6, 17, 4791);
	f.b[14 + 5] = 200;						/* payload beyond the frame */
	inject(&f);
	memset(&f, 0, sizeof(f));					/* LLDP */
	memcpy(f.b, lldp_mac, 6);
	memcpy(f.b + 6, peer_mac, 6);
	f.b[12] = 0x88;
	f.b[13] = 0xcc;
	f.len = 60;
	inject(&f);
	t_ip4_l4(&f, our_mac, peer_mac, peer_ip, our_ip, 17, 4791);	/* VLAN-tagged */
	f.b[12] = 0x81;
	f.b[13] = 0x00;
	inject(&f);
	f.len = 10;							/* runt */
	inject(&f);

	ck_assert_uint_eq(poll_port(p), 0);
	ck_assert_uint_eq(drain_sent(), 0);
	droce_port_stats(p, &st);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_IP_PROTO], 2);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_UDP_PORT], 1);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_IP_NOT_OURS], 1);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_DST_MAC], 1);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_MCAST_MAC], 2);	/* + LLDP */
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_ICMP6_OTHER], 1);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_IPV4_BAD], 1);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_IPV6_BAD], 1);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_VLAN], 1);
	ck_assert_uint_eq(st.drop[DROCE_PORT_DROP_RUNT], 1);
	ck_assert_uint_eq(st.drops, 12);
	ck_assert_uint_eq(st.counter[DROCE_PORT_CNT_RX_FRAMES], 12);
	ck_assert_uint_eq(st.counter[DROCE_PORT_CNT_RX_ROCE], 0);
	/* every reason has a name and a description */
	for (i = 0; i < DROCE_PORT_DROP_COUNT; i++) {
		ck_assert_str_ne(droce_port_drop_name(i), "UNKNOWN");
		ck_assert(strlen(droce_port_drop_desc(i)) > 10);
	}
	ck_assert_str_eq(droce_port_drop_name(DROCE_PORT_DROP_DST_MAC), "DST_MAC");
	ck_assert_str_eq(droce_port_counter_name(DROCE_PORT_CNT_RX_ROCE), "RX_ROCE");
	ck_assert_str_eq(droce_port_drop_name(DROCE_PORT_DROP_COUNT), "UNKNOWN");
	/* all test mbufs came back */
	ck_assert_uint_eq(rte_mempool_in_use_count(test_mp), 0);
	close_port(p);
}
END_TEST

/* ---- RoCEv2 ---- */

START_TEST(test_roce_frames_to_us_pass)
{
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *pk[8];
	struct droce_pkt pkt;
	struct tframe f;
	uint8_t sg[16], dg[16];
	uint16_t n;

	base_conf(&c);
	memcpy(c.ipv6[0].addr, our_ip6, 16);
	c.ipv6[0].prefix = 64;
	c.n_ipv6 = 1;
	p = open_port(&c);
	drain_sent();
	t_gid4(sg, peer_ip);
	t_gid4(dg, our_ip);
	t_roce(&f, our_mac, peer_mac, sg, dg);
	inject(&f);
	t_roce(&f, our_mac, peer_mac, peer_ip6, our_ip6);
	inject(&f);
	n = droce_port_rx_burst(p, pk, 8);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(pk[0]->l2_len, 14);
	ck_assert_uint_eq(pk[0]->l3_len, 20);
	ck_assert_uint_eq(pk[1]->l3_len, 40);
	/* untouched: the wire parser accepts them */
	ck_assert_int_eq(droce_pkt_parse(&pkt, fb(pk[0]), pk[0]->data_len, pk[0]->data_len),
			 DROCE_WIRE_OK);
	ck_assert_mem_eq(pkt.dgid, dg, 16);
	ck_assert_int_eq(droce_pkt_parse(&pkt, fb(pk[1]), pk[1]->data_len, pk[1]->data_len),
			 DROCE_WIRE_OK);
	ck_assert(pkt.flags & DROCE_PKT_F_IPV6);
	rte_pktmbuf_free(pk[0]);
	rte_pktmbuf_free(pk[1]);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_RX_ROCE), 2);
	ck_assert_uint_eq(drain_sent(), 0);
	close_port(p);
}
END_TEST

/* ---- resolution ---- */

static void
check_arp_request(struct rte_mbuf *m, const uint8_t edst[6], uint32_t tpa)
{
	const uint8_t *b = fb(m);
	static const uint8_t zero[6];

	ck_assert_mem_eq(b, edst, 6);
	ck_assert_mem_eq(b + 6, our_mac, 6);
	ck_assert_uint_eq(b[12], 0x08);
	ck_assert_uint_eq(b[13], 0x06);
	ck_assert_uint_eq(b[21], 1);			/* request */
	ck_assert_mem_eq(b + 22, our_mac, 6);
	ck_assert_mem_eq(b + 28, &our_ip, 4);
	ck_assert_mem_eq(b + 32, zero, 6);
	ck_assert_mem_eq(b + 38, &tpa, 4);
}

START_TEST(test_resolve_ipv4_by_arp)
{
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	struct tframe f;
	uint8_t gid[16], mac[6];

	base_conf(&c);
	c.neigh_retrans_ms = 20;
	c.neigh_probes = 2;
	p = open_port(&c);
	t_gid4(gid, peer_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	m = sent();
	ck_assert_ptr_nonnull(m);
	check_arp_request(m, t_bcast, peer_ip);
	rte_pktmbuf_free(m);
	/* asking again at once sends nothing more: rate-limited */
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	poll_port(p);
	ck_assert_ptr_null(sent());
	/* the reply completes it */
	t_arp(&f, 2, our_mac, peer_mac, peer_ip, our_mac, our_ip);
	inject(&f);
	poll_port(p);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, peer_mac, 6);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_ARP_REPLY_RX), 1);

	/* nobody answers for other_ip: retransmit, then unreachable, then afresh */
	t_gid4(gid, other_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	ck_assert_uint_eq(drain_sent(), 1);
	sleep_ms(25);
	poll_port(p);
	m = sent();
	ck_assert_ptr_nonnull(m);			/* second request, from the timer */
	check_arp_request(m, t_bcast, other_ip);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	sleep_ms(25);
	poll_port(p);
	ck_assert_uint_eq(drain_sent(), 0);		/* two probes were the limit */
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EHOSTUNREACH);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_NEIGH_FAILED), 1);
	sleep_ms(25);
	poll_port(p);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);	/* a new round */
	ck_assert_uint_eq(drain_sent(), 1);
	close_port(p);
}
END_TEST

/* Off our prefix with a gateway: the gateway's MAC, asked for by ARP; the
 * gateway is asked once for every such destination; on-link peers and
 * destinations of a family with no gateway are asked for themselves. */
START_TEST(test_resolve_through_gateway)
{
	static const uint8_t gw_mac[6] = { 0x02, 0, 0, 0, 0, 0xfe };
	uint32_t gw_ip = t_ip4(10, 11, 12, 254), far_ip = t_ip4(10, 98, 0, 2);
	uint32_t far2_ip = t_ip4(192, 0, 2, 7);
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	struct tframe f;
	uint8_t gid[16], mac[6], far6[16];

	base_conf(&c);
	ck_assert_int_eq(droce_port_conf_set_gateway(&c, "10.11.12.254"), 0);
	ck_assert_int_eq(droce_port_conf_set_gateway(&c, "239.1.1.1"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_set_gateway(&c, "0.0.0.0"), -EINVAL);
	ck_assert_int_eq(droce_port_conf_set_gateway(&c, "10.11.12"), -EINVAL);
	p = open_port(&c);
	t_gid4(gid, far_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	m = sent();
	ck_assert_ptr_nonnull(m);
	check_arp_request(m, t_bcast, gw_ip);		/* the gateway, not 10.98.0.2 */
	rte_pktmbuf_free(m);
	ck_assert_ptr_null(sent());
	t_arp(&f, 2, our_mac, gw_mac, gw_ip, our_mac, our_ip);
	inject(&f);
	poll_port(p);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, gw_mac, 6);
	/* another subnet behind it: no new request */
	t_gid4(gid, far2_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, gw_mac, 6);
	ck_assert_ptr_null(sent());
	/* the gateway itself, and an on-link peer: asked for themselves */
	t_gid4(gid, gw_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, gw_mac, 6);
	t_gid4(gid, peer_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	m = sent();
	ck_assert_ptr_nonnull(m);
	check_arp_request(m, t_bcast, peer_ip);
	rte_pktmbuf_free(m);
	close_port(p);

	/* no gateway: an off-prefix destination is asked for on the link */
	base_conf(&c);
	p = open_port(&c);
	t_gid4(gid, far_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	m = sent();
	ck_assert_ptr_nonnull(m);
	check_arp_request(m, t_bcast, far_ip);
	rte_pktmbuf_free(m);
	close_port(p);

	/* an IPv4 gateway does nothing for IPv6 */
	base_conf(&c);
	memcpy(c.ipv6[0].addr, our_ip6, 16);
	c.ipv6[0].prefix = 64;
	c.n_ipv6 = 1;
	ck_assert_int_eq(droce_port_conf_set_gateway(&c, "10.11.12.254"), 0);
	p = open_port(&c);
	t_gid6(far6, "fd00:98::2");
	ck_assert_int_eq(droce_port_resolve(p, far6, mac), -EAGAIN);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_ARP_REQ_TX), 0);
	drain_sent();
	close_port(p);
}
END_TEST

START_TEST(test_resolve_ipv6_by_ns)
{
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	struct tframe f;
	const uint8_t *b, *ip, *icmp;
	uint8_t mac[6];

	base_conf(&c);
	c.n_ipv4 = 0;
	memcpy(c.ipv6[0].addr, our_ip6, 16);
	c.ipv6[0].prefix = 64;
	c.n_ipv6 = 1;
	p = open_port(&c);
	drain_sent();
	ck_assert_int_eq(droce_port_resolve(p, peer_ip6, mac), -EAGAIN);
	m = sent();
	ck_assert_ptr_nonnull(m);
	b = fb(m);
	ip = b + 14;
	icmp = ip + 40;
	/* to the solicited-node group of the target: 33:33:ff + its low 24 bits */
	ck_assert_uint_eq(b[0], 0x33);
	ck_assert_uint_eq(b[1], 0x33);
	ck_assert_uint_eq(b[2], 0xff);
	ck_assert_mem_eq(b + 3, peer_ip6 + 13, 3);
	ck_assert_uint_eq(ip[7], 255);
	ck_assert_mem_eq(ip + 8, our_ip6, 16);
	ck_assert_uint_eq(ip[24], 0xff);
	ck_assert_uint_eq(ip[25], 0x02);
	ck_assert_uint_eq(ip[35], 0x01);
	ck_assert_uint_eq(ip[36], 0xff);
	ck_assert_mem_eq(ip + 37, peer_ip6 + 13, 3);
	ck_assert_uint_eq(icmp[0], 135);
	ck_assert_mem_eq(icmp + 8, peer_ip6, 16);
	ck_assert_uint_eq(icmp[24], 1);			/* source link-layer address */
	ck_assert_mem_eq(icmp + 26, our_mac, 6);
	ck_assert_uint_eq(t_icmp6_check(ip + 8, ip + 24, icmp, 32), 0);
	rte_pktmbuf_free(m);

	/* an NA for an address nobody asked about is dropped */
	t_nd(&f, 136, 0x60, our_mac, other_mac, other_ip6, our_ip6, other_ip6, other_mac, 255);
	inject(&f);
	/* the answer */
	t_nd(&f, 136, 0x60, our_mac, peer_mac, peer_ip6, our_ip6, peer_ip6, peer_mac, 255);
	inject(&f);
	poll_port(p);
	ck_assert_int_eq(droce_port_resolve(p, peer_ip6, mac), 0);
	ck_assert_mem_eq(mac, peer_mac, 6);
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_NA_UNSOLICITED), 1);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_NA_RX), 1);
	/* no IPv4 address: nothing to ask from */
	{
		uint8_t g4[16];

		t_gid4(g4, peer_ip);
		ck_assert_int_eq(droce_port_resolve(p, g4, mac), -EADDRNOTAVAIL);
	}
	close_port(p);
}
END_TEST

static int
count_static(const uint8_t gid[16], const uint8_t mac[6], enum droce_port_neigh_state s, void *arg)
{
	(void)gid;
	(void)mac;
	if (s == DROCE_PORT_NEIGH_STATIC)
		++*(int *)arg;
	return 0;
}

START_TEST(test_static_neighbour_wins)
{
	static const uint8_t zero[6];
	struct droce_port_conf c;
	struct droce_port *p;
	struct tframe f;
	uint8_t gid[16], mac[6];
	char spec[64];
	int n_static = 0;

	base_conf(&c);
	snprintf(spec, sizeof(spec), "%u.%u.%u.%u=02:00:00:00:00:77", 10, 11, 12, 2);
	ck_assert_int_eq(droce_port_conf_add_neigh(&c, spec), 0);
	p = open_port(&c);
	t_gid4(gid, peer_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_uint_eq(mac[5], 0x77);
	ck_assert_ptr_null(sent());
	/* the peer itself asks for us and claims another MAC: the static entry stays */
	t_arp(&f, 1, t_bcast, peer_mac, peer_ip, zero, our_ip);
	inject(&f);
	poll_port(p);
	ck_assert_uint_eq(drain_sent(), 2);		/* we still answer (and announce) */
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_uint_eq(mac[5], 0x77);
	droce_port_neigh_walk(p, count_static, &n_static);
	ck_assert_int_eq(n_static, 1);
	/* runtime add/del */
	t_gid4(gid, other_ip);
	ck_assert_int_eq(droce_port_neigh_add(p, gid, other_mac), 0);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, other_mac, 6);
	ck_assert_int_eq(droce_port_neigh_del(p, gid), 0);
	ck_assert_int_eq(droce_port_neigh_del(p, gid), -ENOENT);
	ck_assert_int_eq(droce_port_neigh_add(p, gid, (const uint8_t[6]){ 1, 0, 0x5e, 0, 0, 1 }),
			 -EINVAL);
	close_port(p);
}
END_TEST

START_TEST(test_resolve_multicast_and_self)
{
	struct droce_port_conf c;
	struct droce_port *p;
	uint8_t gid[16], mac[6];

	base_conf(&c);
	p = open_port(&c);
	t_gid4(gid, t_ip4(239, 129, 2, 3));
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, ((const uint8_t[6]){ 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 }), 6);
	t_gid6(gid, "ff0e::1234:5678");
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, ((const uint8_t[6]){ 0x33, 0x33, 0x12, 0x34, 0x56, 0x78 }), 6);
	t_gid4(gid, our_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, our_mac, 6);
	t_gid4(gid, 0);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EINVAL);
	ck_assert_uint_eq(drain_sent(), 0);
	close_port(p);
}
END_TEST

START_TEST(test_neighbour_ages_then_reprobes_then_expires)
{
	static const uint8_t zero[6];
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	struct tframe f;
	uint8_t gid[16], mac[6];

	base_conf(&c);
	c.neigh_reachable_ms = 30;
	c.neigh_retrans_ms = 20;
	c.neigh_probes = 2;
	p = open_port(&c);
	t_arp(&f, 1, t_bcast, peer_mac, peer_ip, zero, our_ip);	/* learn the peer */
	inject(&f);
	poll_port(p);
	drain_sent();
	t_gid4(gid, peer_ip);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_ptr_null(sent());
	sleep_ms(40);
	/* aged: still usable, and a unicast probe goes to the MAC we know */
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_mem_eq(mac, peer_mac, 6);
	m = sent();
	ck_assert_ptr_nonnull(m);
	check_arp_request(m, peer_mac, peer_ip);
	rte_pktmbuf_free(m);
	/* the peer answers: REACHABLE again, no more probes */
	t_arp(&f, 2, our_mac, peer_mac, peer_ip, our_mac, our_ip);
	inject(&f);
	poll_port(p);
	sleep_ms(25);
	poll_port(p);
	ck_assert_uint_eq(drain_sent(), 0);
	/* aged again, and this time silence: probe, probe, gone */
	sleep_ms(40);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), 0);
	ck_assert_uint_eq(drain_sent(), 1);
	sleep_ms(25);
	poll_port(p);
	ck_assert_uint_eq(drain_sent(), 1);
	sleep_ms(25);
	poll_port(p);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_NEIGH_EXPIRED), 1);
	ck_assert_int_eq(droce_port_resolve(p, gid, mac), -EAGAIN);
	close_port(p);
}
END_TEST

/* ---- multicast ---- */

/* An IGMPv3 report with one record: returns the record type. */
static uint8_t
check_igmp3(struct rte_mbuf *m, uint32_t group)
{
	static const uint8_t dmac[6] = { 0x01, 0x00, 0x5e, 0, 0, 0x16 };
	const uint8_t *b = fb(m), *ip = b + 14, *ig;
	uint32_t dst = t_ip4(224, 0, 0, 22);

	ck_assert_mem_eq(b, dmac, 6);
	ck_assert_mem_eq(b + 6, our_mac, 6);
	ck_assert_uint_eq(ip[0], 0x46);			/* IHL 6: router alert */
	ck_assert_uint_eq(ip[8], 1);			/* TTL 1 */
	ck_assert_uint_eq(ip[9], 2);
	ck_assert_mem_eq(ip + 12, &our_ip, 4);
	ck_assert_mem_eq(ip + 16, &dst, 4);
	ck_assert_uint_eq(ip[20], 0x94);
	ck_assert_uint_eq(ip[21], 0x04);
	ck_assert_uint_eq(t_sum(ip, 24, 0), 0xffff);	/* header checksum */
	ck_assert_uint_eq((ip[2] << 8 | ip[3]), 24 + 16);
	ig = ip + 24;
	ck_assert_uint_eq(ig[0], 0x22);
	ck_assert_uint_eq(t_sum(ig, 16, 0), 0xffff);	/* IGMP checksum */
	ck_assert_uint_eq((ig[6] << 8 | ig[7]), 1);
	ck_assert_uint_eq(ig[9], 0);			/* aux len */
	ck_assert_uint_eq((ig[10] << 8 | ig[11]), 0);	/* no sources */
	ck_assert_mem_eq(ig + 12, &group, 4);
	return ig[8];
}

START_TEST(test_mcast_join_sends_igmp3_and_filters)
{
	static const uint8_t gmac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m, *pk[4];
	struct tframe f;
	uint32_t group = t_ip4(239, 1, 2, 3);
	uint8_t gid[16], sg[16];

	base_conf(&c);
	p = open_port(&c);
	t_gid4(gid, group);
	t_gid4(sg, peer_ip);
	/* before the join a RoCE frame to the group is not ours */
	t_roce(&f, gmac, peer_mac, sg, gid);
	inject(&f);
	ck_assert_uint_eq(droce_port_rx_burst(p, pk, 4), 0);
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_MCAST_MAC), 1);

	ck_assert_int_eq(droce_port_mcast_join(p, gid), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(check_igmp3(m, group), 4);	/* CHANGE_TO_EXCLUDE: join */
	rte_pktmbuf_free(m);
	ck_assert_ptr_null(sent());
	ck_assert_int_eq(droce_port_mcast_join(p, gid), 0);	/* counted, no second report */
	ck_assert_ptr_null(sent());

	inject(&f);
	ck_assert_uint_eq(droce_port_rx_burst(p, pk, 4), 1);
	rte_pktmbuf_free(pk[0]);

	/* a general query is answered with the current state */
	{
		uint8_t *ig;

		t_ip4_l4(&f, (const uint8_t[6]){ 1, 0, 0x5e, 0, 0, 1 }, peer_mac, peer_ip,
			 t_ip4(224, 0, 0, 1), 2, 0);
		ig = f.b + 34;
		memset(ig, 0, 12);
		ig[0] = 0x11;
		ig[1] = 100;
		ig[2] = ig[3] = 0;
		{
			uint16_t ck = (uint16_t)~t_sum(ig, 12, 0);

			ig[2] = (uint8_t)(ck >> 8);
			ig[3] = (uint8_t)ck;
		}
		f.b[16] = 0;
		f.b[17] = 32;				/* total length 20 + 12 */
		f.b[24] = f.b[25] = 0;
		{
			uint16_t ck = (uint16_t)~t_sum(f.b + 14, 20, 0);

			f.b[24] = (uint8_t)(ck >> 8);
			f.b[25] = (uint8_t)ck;
		}
		inject(&f);
		poll_port(p);
		m = sent();
		ck_assert_ptr_nonnull(m);
		ck_assert_uint_eq(check_igmp3(m, group), 2);	/* MODE_IS_EXCLUDE */
		rte_pktmbuf_free(m);
		ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_MCAST_QUERY_RX), 1);
	}

	ck_assert_int_eq(droce_port_mcast_leave(p, gid), 0);	/* one join left */
	ck_assert_ptr_null(sent());
	ck_assert_int_eq(droce_port_mcast_leave(p, gid), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(check_igmp3(m, group), 3);	/* CHANGE_TO_INCLUDE: leave */
	rte_pktmbuf_free(m);
	ck_assert_int_eq(droce_port_mcast_leave(p, gid), -ENOENT);
	t_gid4(gid, peer_ip);
	ck_assert_int_eq(droce_port_mcast_join(p, gid), -EINVAL);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_IGMP_TX), 3);
	close_port(p);
}
END_TEST

START_TEST(test_mcast_join_igmp2)
{
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	uint32_t group = t_ip4(239, 1, 2, 3), leave_dst = t_ip4(224, 0, 0, 2);
	uint8_t gid[16];
	const uint8_t *b;

	base_conf(&c);
	c.igmp_version = 2;
	p = open_port(&c);
	t_gid4(gid, group);
	ck_assert_int_eq(droce_port_mcast_join(p, gid), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	b = fb(m);
	ck_assert_mem_eq(b, ((const uint8_t[6]){ 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 }), 6);
	ck_assert_mem_eq(b + 14 + 16, &group, 4);	/* to the group itself */
	ck_assert_uint_eq(t_sum(b + 14, 24, 0), 0xffff);
	ck_assert_uint_eq(b[38], 0x16);			/* v2 membership report */
	ck_assert_mem_eq(b + 42, &group, 4);
	ck_assert_uint_eq(t_sum(b + 38, 8, 0), 0xffff);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(droce_port_mcast_leave(p, gid), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	b = fb(m);
	ck_assert_mem_eq(b + 14 + 16, &leave_dst, 4);
	ck_assert_uint_eq(b[38], 0x17);			/* leave group */
	ck_assert_uint_eq(t_sum(b + 38, 8, 0), 0xffff);
	rte_pktmbuf_free(m);
	close_port(p);
}
END_TEST

START_TEST(test_mcast_join_ipv6_sends_mld2)
{
	static const uint8_t mld_routers[16] = { 0xff, 0x02, [15] = 0x16 };
	struct droce_port_conf c;
	struct droce_port_info in;
	struct droce_port *p;
	struct rte_mbuf *m, *pk[4];
	struct tframe f;
	const uint8_t *b, *ip, *hbh, *icmp;
	uint8_t gid[16], snm[16] = { 0xff, 0x02, [11] = 1, [12] = 0xff };

	base_conf(&c);
	memcpy(c.ipv6[0].addr, our_ip6, 16);
	c.ipv6[0].prefix = 64;
	c.n_ipv6 = 1;
	c.ipv6_link_local = true;
	p = open_port(&c);
	droce_port_info(p, &in);
	ck_assert_uint_eq(in.n_ipv6, 2);
	/* at open: one MLDv2 report for the solicited-node groups of our two addresses */
	m = sent();
	ck_assert_ptr_nonnull(m);
	b = fb(m);
	ip = b + 14;
	hbh = ip + 40;
	icmp = hbh + 8;
	ck_assert_mem_eq(b, ((const uint8_t[6]){ 0x33, 0x33, 0, 0, 0, 0x16 }), 6);
	ck_assert_uint_eq(ip[6], 0);			/* hop-by-hop first */
	ck_assert_uint_eq(ip[7], 1);			/* hop limit 1 */
	ck_assert_mem_eq(ip + 8, in.ipv6[1].addr, 16);	/* from the link-local address */
	ck_assert_mem_eq(ip + 24, mld_routers, 16);
	ck_assert_uint_eq(hbh[0], 58);
	ck_assert_uint_eq(hbh[2], 5);			/* router alert */
	ck_assert_uint_eq(icmp[0], 143);
	ck_assert_uint_eq((icmp[6] << 8 | icmp[7]), 2);
	ck_assert_uint_eq(t_icmp6_check(ip + 8, ip + 24, icmp, 8 + 40), 0);
	memcpy(snm + 13, our_ip6 + 13, 3);
	ck_assert_mem_eq(icmp + 12, snm, 16);
	rte_pktmbuf_free(m);
	ck_assert_ptr_null(sent());

	t_gid6(gid, "ff0e::1:2");
	ck_assert_int_eq(droce_port_mcast_join(p, gid), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	b = fb(m);
	ip = b + 14;
	icmp = ip + 48;
	ck_assert_uint_eq(icmp[0], 143);
	ck_assert_uint_eq((icmp[6] << 8 | icmp[7]), 1);
	ck_assert_uint_eq(icmp[8], 4);			/* CHANGE_TO_EXCLUDE: join */
	ck_assert_mem_eq(icmp + 12, gid, 16);
	ck_assert_uint_eq(t_icmp6_check(ip + 8, ip + 24, icmp, 28), 0);
	rte_pktmbuf_free(m);

	/* RoCE to the group passes */
	t_roce(&f, (const uint8_t[6]){ 0x33, 0x33, 0, 1, 0, 2 }, peer_mac, peer_ip6, gid);
	inject(&f);
	ck_assert_uint_eq(droce_port_rx_burst(p, pk, 4), 1);
	rte_pktmbuf_free(pk[0]);
	ck_assert_int_eq(droce_port_mcast_leave(p, gid), 0);
	m = sent();
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(fb(m)[14 + 48 + 8], 3);	/* CHANGE_TO_INCLUDE: leave */
	rte_pktmbuf_free(m);
	close_port(p);
}
END_TEST

START_TEST(test_mld_query_is_answered)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m;
	struct tframe f;
	uint8_t *ip, *hbh, *icmp, snm[16] = { 0xff, 0x02, [11] = 1, [12] = 0xff };
	uint16_t ck;

	base_conf(&c);
	memcpy(c.ipv6[0].addr, our_ip6, 16);
	c.ipv6[0].prefix = 64;
	c.n_ipv6 = 1;
	p = open_port(&c);
	ck_assert_uint_eq(drain_sent(), 1);		/* the report at open */
	/* MLDv2 general query: hop-by-hop with router alert, ICMPv6 130, group :: */
	memset(&f, 0, sizeof(f));
	memcpy(f.b, all_nodes_mac, 6);
	memcpy(f.b + 6, peer_mac, 6);
	f.b[12] = 0x86;
	f.b[13] = 0xdd;
	ip = f.b + 14;
	ip[0] = 0x60;
	ip[5] = 8 + 28;
	ip[6] = 0;
	ip[7] = 1;
	t_gid6(ip + 8, "fe80::2");
	memcpy(ip + 24, all_nodes, 16);
	hbh = ip + 40;
	hbh[0] = 58;
	hbh[2] = 5;
	hbh[3] = 2;
	hbh[6] = 1;
	icmp = hbh + 8;
	icmp[0] = 130;
	icmp[4] = 0x27;				/* max response code */
	icmp[5] = 0x10;
	ck = t_icmp6_check(ip + 8, ip + 24, icmp, 28);
	icmp[2] = (uint8_t)(ck >> 8);
	icmp[3] = (uint8_t)ck;
	f.len = 14 + 40 + 8 + 28;
	inject(&f);
	poll_port(p);
	m = sent();
	ck_assert_ptr_nonnull(m);
	icmp = rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 48);
	ck_assert_uint_eq(icmp[0], 143);
	ck_assert_uint_eq((icmp[6] << 8 | icmp[7]), 1);
	ck_assert_uint_eq(icmp[8], 2);			/* MODE_IS_EXCLUDE: current state */
	memcpy(snm + 13, our_ip6 + 13, 3);
	ck_assert_mem_eq(icmp + 12, snm, 16);
	rte_pktmbuf_free(m);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_MCAST_QUERY_RX), 1);
	/* the same query with a broken checksum is dropped */
	icmp = f.b + 14 + 48;
	icmp[2] ^= 0xff;
	inject(&f);
	poll_port(p);
	ck_assert_ptr_null(sent());
	ck_assert_uint_eq(drop_of(p, DROCE_PORT_DROP_ICMP6_BAD), 1);
	close_port(p);
}
END_TEST

/* ---- queues other than 0 ---- */

/*
 * A worker's queue keeps every unicast RoCEv2 frame to us, the shortest
 * too (a 0-byte UC SEND over IPv4: 58 bytes, padded to 60): one sent the
 * slow way (queue 0, then a hand-off) is overtaken by the frames of its
 * flow behind it, and UC/UD messages arrive out of order.
 */
START_TEST(test_queue_keeps_shortest_roce_frames)
{
	static struct rte_ring *in[2], *out[2];
	struct rte_mbuf *pk[8], *slow[8], *m;
	struct droce_port_conf c;
	struct droce_port *p;
	uint8_t sg[16], dg[16];
	uint16_t n_slow, keep, q;
	struct tframe f;
	int id;

	for (q = 0; q < 2; q++) {
		char name[32];

		snprintf(name, sizeof(name), "pmdt_q_in%u", q);
		in[q] = rte_ring_create(name, 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "pmdt_q_out%u", q);
		out[q] = rte_ring_create(name, 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		ck_assert(in[q] != NULL && out[q] != NULL);
	}
	id = rte_eth_from_rings("pmdtq", in, 2, out, 2, 0);
	ck_assert_int_ge(id, 0);
	base_conf(&c);
	c.port_id = (uint16_t)id;
	c.n_queues = 2;
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "fd00:11::a1/64"), 0);
	p = open_port(&c);
	t_gid4(sg, peer_ip);
	t_gid4(dg, our_ip);
	t_roce_op(&f, our_mac, peer_mac, sg, dg, DROCE_OP_UC_SEND_ONLY, 0);
	ck_assert_uint_eq(f.len, 60);
	m = rte_pktmbuf_alloc(test_mp);
	memcpy(rte_pktmbuf_append(m, f.len), f.b, f.len);
	ck_assert_int_eq(rte_ring_enqueue(in[1], m), 0);
	t_roce_op(&f, our_mac, peer_mac, sg, dg, DROCE_OP_UC_SEND_ONLY, 1);
	m = rte_pktmbuf_alloc(test_mp);
	memcpy(rte_pktmbuf_append(m, f.len), f.b, f.len);
	ck_assert_int_eq(rte_ring_enqueue(in[1], m), 0);
	t_roce_op(&f, our_mac, peer_mac, peer_ip6, our_ip6, DROCE_OP_UC_SEND_ONLY, 0);
	m = rte_pktmbuf_alloc(test_mp);
	memcpy(rte_pktmbuf_append(m, f.len), f.b, f.len);
	ck_assert_int_eq(rte_ring_enqueue(in[1], m), 0);
	keep = droce_port_queue_rx(p, 1, pk, 8, slow, &n_slow);
	ck_assert_uint_eq(keep, 3);	/* IPv4 0 and 1 byte, IPv6 0 byte: in order */
	ck_assert_uint_eq(n_slow, 0);
	ck_assert_uint_eq(rte_pktmbuf_data_len(pk[0]), 60);
	rte_pktmbuf_free_bulk(pk, keep);
	close_port(p);
	rte_eth_dev_close((uint16_t)id);
	for (q = 0; q < 2; q++) {
		rte_ring_free(in[q]);
		rte_ring_free(out[q]);
	}
}
END_TEST

/* ---- TX ---- */

START_TEST(test_tx_refused_frames_are_freed_and_counted)
{
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mbuf *m[64];
	unsigned int i, total = 0, room = rte_ring_free_count(wire_out);
	uint16_t k;

	base_conf(&c);
	p = open_port(&c);
	room = rte_ring_free_count(wire_out);
	while (total < room + 100) {
		for (i = 0; i < 64; i++) {
			m[i] = droce_port_alloc(p);
			ck_assert_ptr_nonnull(m[i]);
			ck_assert_ptr_nonnull(rte_pktmbuf_append(m[i], 60));
		}
		k = droce_port_tx_burst(p, m, 64);
		ck_assert_uint_le(k, 64);
		total += 64;
	}
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_TX_FRAMES), room);
	ck_assert_uint_eq(cnt_of(p, DROCE_PORT_CNT_TX_REFUSED), total - room);
	ck_assert_uint_eq(drain_sent(), room);
	/* nothing leaked: every mbuf is back in the port's pool */
	ck_assert_uint_eq(rte_mempool_in_use_count(droce_port_mempool(p)), 0);
	close_port(p);
}
END_TEST

/*
 * droce_port_free_rx(): a plain mbuf of the port's pool is the next
 * droce_port_alloc()'s, reset as the pool hands mbufs out; a shared one
 * loses a reference, another pool's goes back to it.
 */
START_TEST(test_free_rx_reuses_plain_mbufs_of_the_port_only)
{
	struct droce_port_conf c;
	struct droce_port *p;
	struct rte_mempool *other;
	struct rte_mbuf *a, *b, *o, *x[3], *m;
	unsigned int other_free;

	base_conf(&c);
	p = open_port(&c);
	other = rte_pktmbuf_pool_create("t_free_rx", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(other);
	a = droce_port_alloc(p);
	b = droce_port_alloc(p);
	o = rte_pktmbuf_alloc(other);
	ck_assert(a != NULL && b != NULL && o != NULL);
	other_free = rte_mempool_avail_count(other);
	ck_assert_ptr_nonnull(rte_pktmbuf_append(a, 100));
	rte_pktmbuf_adj(a, 10);
	a->l2_len = 14;
	a->l3_len = 20;
	a->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	a->packet_type = RTE_PTYPE_L3_IPV4;
	rte_mbuf_refcnt_update(b, 1);	/* shared: not ours to reuse */
	x[0] = a;
	x[1] = b;
	x[2] = o;
	droce_port_free_rx(p, x, 3);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(b), 1);
	ck_assert_uint_eq(rte_mempool_avail_count(other), other_free + 1);
	m = droce_port_alloc(p);
	ck_assert_ptr_eq(m, a);
	ck_assert_uint_eq(m->data_len, 0);
	ck_assert_uint_eq(m->pkt_len, 0);
	ck_assert_uint_eq(m->data_off, RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, m->buf_len));
	ck_assert_uint_eq(m->nb_segs, 1);
	ck_assert_ptr_null(m->next);
	ck_assert_uint_eq(m->l2_len, 0);
	ck_assert_uint_eq(m->l3_len, 0);
	ck_assert_uint_eq(m->ol_flags, 0);
	ck_assert_uint_eq(m->packet_type, 0);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 1);
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(b);
	rte_mempool_free(other);
	close_port(p);
}
END_TEST

/* ---- hotplug and the fault wrapper ---- */

START_TEST(test_devargs_hotplug_and_remove)
{
	struct droce_port_conf c;
	struct droce_port_info in;
	struct droce_port *p;
	struct rte_mbuf *pk[4];
	uint16_t id;
	uint8_t g4[16], g6[16];
	struct tframe f;

	base_conf(&c);
	snprintf(c.devargs, sizeof(c.devargs), "net_ring_hp0");
	ck_assert_int_eq(droce_port_open(&c, &p), 0);
	droce_port_info(p, &in);
	ck_assert_str_eq(in.name, "net_ring_hp0");
	ck_assert_uint_ne(in.port_id, ring_port);
	/* a lone net_ring port is a loopback: our own RoCE frame comes back to us */
	t_gid4(g4, our_ip);
	t_gid4(g6, our_ip);
	t_roce(&f, our_mac, our_mac, g4, g6);
	{
		struct rte_mbuf *m = droce_port_alloc(p);

		memcpy(rte_pktmbuf_append(m, f.len), f.b, f.len);
		ck_assert_uint_eq(droce_port_tx_burst(p, &m, 1), 1);
	}
	ck_assert_uint_eq(droce_port_rx_burst(p, pk, 4), 1);
	rte_pktmbuf_free(pk[0]);
	droce_port_close(p);
	ck_assert_int_ne(rte_eth_dev_get_port_by_name("net_ring_hp0", &id), 0);
}
END_TEST

START_TEST(test_fault_wrapper_from_conf)
{
	struct droce_port_conf c;
	struct droce_port_info in;
	struct droce_fault_stats fs;
	struct droce_port *p, *q = NULL;
	struct rte_mbuf *m[16];
	uint16_t lower, i;

	base_conf(&c);
	snprintf(c.fault, sizeof(c.fault), "seed=9,loss=1,dir=tx");
	p = open_port(&c);
	droce_port_info(p, &in);
	ck_assert_str_eq(in.driver, DROCE_FAULT_DRIVER);
	ck_assert_int_eq(droce_fault_lower_port(in.port_id, &lower), 0);
	ck_assert_uint_eq(lower, ring_port);
	/* the wrapped port is the fault port's: nobody else may open it */
	base_conf(&c);
	ck_assert_int_eq(droce_port_open(&c, &q), -EBUSY);
	for (i = 0; i < 16; i++) {
		m[i] = droce_port_alloc(p);
		rte_pktmbuf_append(m[i], 60);
	}
	ck_assert_uint_eq(droce_port_tx_burst(p, m, 16), 16);
	ck_assert_uint_eq(drain_sent(), 0);		/* loss=1: all gone */
	ck_assert_int_eq(droce_fault_stats(in.port_id, &fs), 0);
	ck_assert_uint_eq(fs.tx.in, 16);
	ck_assert_uint_eq(fs.tx.lost, 16);
	droce_port_close(p);
	/* the fault vdev went away and gave the ring port back */
	ck_assert_int_eq(droce_fault_stats(in.port_id, &fs), -ENODEV);
	p = open_port(&c);
	close_port(p);
}
END_TEST

static Suite *
ring_suite(void)
{
	Suite *s = suite_create("pmd_ring");
	TCase *tc = tcase_create("port");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_conf_helpers_parse_and_refuse);
	tcase_add_test(tc, test_open_uses_configured_mac_and_reports);
	tcase_add_test(tc, test_open_without_mac_is_random_laa);
	tcase_add_test(tc, test_open_refuses_bad_conf);
	tcase_add_test(tc, test_arp_request_for_us_is_answered);
	tcase_add_test(tc, test_arp_for_others_is_dropped_and_learns_nothing);
	tcase_add_test(tc, test_ns_for_us_gets_na);
	tcase_add_test(tc, test_foreign_frames_are_counted_by_reason);
	tcase_add_test(tc, test_roce_frames_to_us_pass);
	tcase_add_test(tc, test_resolve_ipv4_by_arp);
	tcase_add_test(tc, test_resolve_through_gateway);
	tcase_add_test(tc, test_resolve_ipv6_by_ns);
	tcase_add_test(tc, test_static_neighbour_wins);
	tcase_add_test(tc, test_resolve_multicast_and_self);
	tcase_add_test(tc, test_neighbour_ages_then_reprobes_then_expires);
	tcase_add_test(tc, test_mcast_join_sends_igmp3_and_filters);
	tcase_add_test(tc, test_mcast_join_igmp2);
	tcase_add_test(tc, test_mcast_join_ipv6_sends_mld2);
	tcase_add_test(tc, test_mld_query_is_answered);
	tcase_add_test(tc, test_queue_keeps_shortest_roce_frames);
	tcase_add_test(tc, test_tx_refused_frames_are_freed_and_counted);
	tcase_add_test(tc, test_free_rx_reuses_plain_mbufs_of_the_port_only);
	tcase_add_test(tc, test_devargs_hotplug_and_remove);
	tcase_add_test(tc, test_fault_wrapper_from_conf);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int failed;

	if (pmd_test_eal_init("pmd_ring", 0, NULL) < 0)
		return 1;
	our_ip = t_ip4(10, 11, 12, 1);
	peer_ip = t_ip4(10, 11, 12, 2);
	other_ip = t_ip4(10, 11, 12, 99);
	t_gid6(our_ip6, "fd00:11::a1");	/* not ::1: its solicited-node group would be the link-local one's */
	t_gid6(peer_ip6, "fd00:11::2");
	t_gid6(other_ip6, "fd00:11::99");
	wire_in = rte_ring_create("pmdt_in", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	wire_out = rte_ring_create("pmdt_out", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	test_mp = rte_pktmbuf_pool_create("pmdt_mp", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (wire_in == NULL || wire_out == NULL || test_mp == NULL) {
		fprintf(stderr, "pmd_ring: rings or pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	failed = rte_eth_from_rings("pmdt", &wire_in, 1, &wire_out, 1, 0);
	if (failed < 0) {
		fprintf(stderr, "pmd_ring: rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	ring_port = (uint16_t)failed;
	failed = pmd_test_run(ring_suite());
	pmd_test_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
