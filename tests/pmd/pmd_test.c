/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* Helpers of the pmd tests (pmd_test.h). */

#include <arpa/inet.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "droce_wire.h"
#include "droce_wire_gid.h"
#include "pmd_test.h"

const uint8_t t_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static char eal_prefix[64];

int
pmd_test_eal_init(const char *name, int n_extra, const char *const *extra)
{
	char prefix_arg[96];
	const char *argv[32];
	int argc = 0, i;

	snprintf(eal_prefix, sizeof(eal_prefix), "droce_%s_%d", name, (int)getpid());
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", eal_prefix);
	argv[argc++] = name;
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-huge";
	argv[argc++] = "-m";
	argv[argc++] = "256";
	argv[argc++] = "--no-shconf";
	argv[argc++] = prefix_arg;
	argv[argc++] = "-l";
	argv[argc++] = "0";
	argv[argc++] = "--log-level=lib.eal:warning";
	for (i = 0; i < n_extra && argc < 31; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;
	if (rte_eal_init(argc, (char **)(uintptr_t)argv) < 0) {
		fprintf(stderr, "%s: EAL init failed\n", name);
		return -1;
	}
	return 0;
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void
pmd_test_eal_cleanup(void)
{
	char dir[160];

	rte_eal_cleanup();
	snprintf(dir, sizeof(dir), "/var/run/dpdk/%s", eal_prefix);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int
pmd_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_fork_status(sr, CK_NOFORK);	/* EAL and the ports live here */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

uint16_t
t_sum(const void *p, unsigned int n, uint32_t acc)
{
	const uint8_t *b = p;
	unsigned int i;

	for (i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (n & 1)
		acc += (uint32_t)b[n - 1] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

uint16_t
t_icmp6_check(const uint8_t src[16], const uint8_t dst[16], const void *l4, unsigned int len)
{
	uint8_t ph[40];
	uint32_t acc;

	memcpy(ph, src, 16);
	memcpy(ph + 16, dst, 16);
	ph[32] = (uint8_t)(len >> 24);
	ph[33] = (uint8_t)(len >> 16);
	ph[34] = (uint8_t)(len >> 8);
	ph[35] = (uint8_t)len;
	ph[36] = ph[37] = ph[38] = 0;
	ph[39] = 58;
	acc = t_sum(ph, sizeof(ph), 0);
	return (uint16_t)~t_sum(l4, len, acc);
}

uint32_t
t_ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return htonl((uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d);
}

void
t_gid4(uint8_t gid[16], uint32_t ip_be)
{
	droce_gid_from_ipv4(gid, ip_be);
}

void
t_gid6(uint8_t gid[16], const char *s)
{
	if (inet_pton(AF_INET6, s, gid) != 1)
		abort();
}

static uint8_t *
put_eth(struct tframe *f, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
	memset(f->b, 0, sizeof(f->b));
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, src, 6);
	f->b[12] = (uint8_t)(type >> 8);
	f->b[13] = (uint8_t)type;
	return f->b + 14;
}

static void
be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void
t_arp(struct tframe *f, uint16_t op, const uint8_t edst[6], const uint8_t sha[6], uint32_t spa_be,
      const uint8_t tha[6], uint32_t tpa_be)
{
	uint8_t *p = put_eth(f, edst, sha, 0x0806);

	be16(p, 1);
	be16(p + 2, 0x0800);
	p[4] = 6;
	p[5] = 4;
	be16(p + 6, op);
	memcpy(p + 8, sha, 6);
	memcpy(p + 14, &spa_be, 4);
	memcpy(p + 18, tha, 6);
	memcpy(p + 24, &tpa_be, 4);
	f->len = 60;
}

static uint8_t *
put_ip6(uint8_t *p, const uint8_t src[16], const uint8_t dst[16], uint16_t plen, uint8_t nh,
	uint8_t hlim)
{
	p[0] = 0x60;
	be16(p + 4, plen);
	p[6] = nh;
	p[7] = hlim;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	return p + 40;
}

void
t_nd(struct tframe *f, uint8_t type, uint8_t flags, const uint8_t edst[6], const uint8_t esrc[6],
     const uint8_t src[16], const uint8_t dst[16], const uint8_t target[16], const uint8_t *lla,
     uint8_t hop_limit)
{
	uint16_t ilen = (uint16_t)(24 + (lla ? 8 : 0));
	uint8_t *icmp = put_ip6(put_eth(f, edst, esrc, 0x86dd), src, dst, ilen, 58, hop_limit);

	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	if (lla != NULL) {
		icmp[24] = type == 135 ? 1 : 2;
		icmp[25] = 1;
		memcpy(icmp + 26, lla, 6);
	}
	be16(icmp + 2, t_icmp6_check(src, dst, icmp, ilen));
	f->len = (uint16_t)(14 + 40 + ilen);
}

void
t_ip4_l4(struct tframe *f, const uint8_t edst[6], const uint8_t esrc[6], uint32_t src_be,
	 uint32_t dst_be, uint8_t proto, uint16_t dport)
{
	uint8_t *ip = put_eth(f, edst, esrc, 0x0800);

	ip[0] = 0x45;
	be16(ip + 2, 20 + 8);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, &src_be, 4);
	memcpy(ip + 16, &dst_be, 4);
	be16(ip + 10, (uint16_t)~t_sum(ip, 20, 0));
	be16(ip + 20, 0xc000);
	be16(ip + 22, dport);
	be16(ip + 24, 8);
	f->len = 60;
}

void
t_ip6_l4(struct tframe *f, const uint8_t edst[6], const uint8_t esrc[6], const uint8_t src[16],
	 const uint8_t dst[16], uint8_t proto, uint16_t dport)
{
	uint8_t *l4 = put_ip6(put_eth(f, edst, esrc, 0x86dd), src, dst, 8, proto, 64);

	be16(l4, 0xc000);
	be16(l4 + 2, dport);
	be16(l4 + 4, 8);
	f->len = 14 + 40 + 8;
}

void
t_roce_op(struct tframe *f, const uint8_t dmac[6], const uint8_t smac[6], const uint8_t sgid[16],
	  const uint8_t dgid[16], uint8_t opcode, uint32_t payload_len)
{
	struct droce_pkt pkt;
	int n;

	memset(&pkt, 0, sizeof(pkt));
	memset(f->b, 0, sizeof(f->b));
	if (!droce_gid_is_ipv4(dgid))
		pkt.flags |= DROCE_PKT_F_IPV6;
	memcpy(pkt.dmac, dmac, 6);
	memcpy(pkt.smac, smac, 6);
	memcpy(pkt.sgid, sgid, 16);
	memcpy(pkt.dgid, dgid, 16);
	pkt.ttl = 64;
	pkt.ip_frag = 0x4000;
	pkt.sport = 0xc001;
	pkt.dport = 4791;
	pkt.opcode = opcode;
	pkt.pkey = 0xffff;
	pkt.dqpn = 0x12;
	pkt.psn = 7;
	pkt.deth.qkey = 0x11111111;
	pkt.deth.sqpn = 0x34;
	pkt.payload_len = payload_len;
	n = droce_pkt_build_hdrs(&pkt, f->b, sizeof(f->b));
	if (n < 0)
		abort();
	memset(f->b + n, 0xab, payload_len);
	droce_icrc_set(&pkt, f->b);
	f->len = (uint16_t)pkt.frame_len;
	if (f->len < 60)
		f->len = 60;	/* Ethernet's minimum: the wire pads (zeros) */
}

void
t_roce(struct tframe *f, const uint8_t dmac[6], const uint8_t smac[6], const uint8_t sgid[16],
       const uint8_t dgid[16])
{
	t_roce_op(f, dmac, smac, sgid, dgid, DROCE_OP_UD_SEND_ONLY, 16);
}

/* ---- a fault port over a hotplugged net_ring loop ---- */

void
pmd_test_port_start(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	struct rte_eth_link link;

	memset(&conf, 0, sizeof(conf));
	ck_assert_int_eq(rte_eth_dev_configure(port, 1, 1, &conf), 0);
	ck_assert_int_eq(rte_eth_rx_queue_setup(port, 0, 512, 0, NULL, mp), 0);
	ck_assert_int_eq(rte_eth_tx_queue_setup(port, 0, 512, 0, NULL), 0);
	ck_assert_int_eq(rte_eth_dev_start(port), 0);
	ck_assert_int_eq(rte_eth_link_get_nowait(port, &link), 0);
	ck_assert_uint_eq(link.link_status, RTE_ETH_LINK_UP);
}

uint16_t
pmd_test_fault_up(const char *tag, unsigned int no, const char *params, struct rte_mempool *mp,
		  char ring[32])
{
	char fault[32], args[256];
	uint16_t port;
	int ret;

	snprintf(ring, 32, "net_ring_%s%u", tag, no);
	snprintf(fault, sizeof(fault), "net_droce_fault_%s%u", tag, no);
	snprintf(args, sizeof(args), "%s,port=%s,%s", fault, ring, params);
	ck_assert_int_eq(rte_dev_probe(ring), 0);
	ret = rte_dev_probe(args);
	ck_assert_msg(ret == 0, "probe %s: %d", args, ret);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name(fault, &port), 0);
	pmd_test_port_start(port, mp);
	return port;
}

void
pmd_test_fault_down(uint16_t port, const char *ring)
{
	struct rte_eth_dev_info di;
	uint16_t rp;

	ck_assert_int_eq(rte_eth_dev_stop(port), 0);
	ck_assert_int_eq(rte_eth_dev_info_get(port, &di), 0);
	ck_assert_int_eq(rte_dev_remove(di.device), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name(ring, &rp), 0);
	ck_assert_int_eq(rte_eth_dev_info_get(rp, &di), 0);
	ck_assert_int_eq(rte_dev_remove(di.device), 0);
}
