/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_PMD_TEST_H
#define DROCE_PMD_TEST_H

/*
 * Shared by the pmd tests: EAL start and cleanup, a Check runner without
 * fork (EAL lives in this process), and frame builders that compute their
 * checksums with code of their own, not the port layer's.
 */

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#define PMD_TEST_SKIP 77	/* Meson: skipped */

/*
 * Start EAL: --no-pci --no-huge -m 256 --no-shconf, a --file-prefix unique
 * to this process (removed again by pmd_test_eal_cleanup()), one lcore, and
 * @p extra (e.g. "--vdev=net_ring0"). --in-memory cannot go with --no-huge.
 * @return 0, or -1 after printing why.
 */
int pmd_test_eal_init(const char *name, int n_extra, const char *const *extra);
void pmd_test_eal_cleanup(void);

/* Run @p s without forking. @return the number of failed tests. */
int pmd_test_run(Suite *s);

/* ---- a fault port over a hotplugged net_ring loop ---- */

struct rte_mempool;

/* One RX and one TX queue of 512 (RX from @p mp), started, link up. */
void pmd_test_port_start(uint16_t port, struct rte_mempool *mp);

/*
 * Hotplug net_ring_<tag><no> and net_droce_fault_<tag><no> over it with
 * @p params, and start it. @return the fault port; @p ring (32 bytes) gets
 * the ring's name for pmd_test_fault_down().
 */
uint16_t pmd_test_fault_up(const char *tag, unsigned int no, const char *params,
			   struct rte_mempool *mp, char ring[32]);

/* Stop the fault port and remove it and its ring. */
void pmd_test_fault_down(uint16_t port, const char *ring);

/* ---- frames ---- */

struct tframe {
	uint8_t b[1600];
	uint16_t len;
};

extern const uint8_t t_bcast[6];

/* ones' complement sum of @p n bytes, folded, not inverted */
uint16_t t_sum(const void *p, unsigned int n, uint32_t acc);
/* ICMPv6 checksum over the pseudo-header and @p len bytes: 0 when valid */
uint16_t t_icmp6_check(const uint8_t src[16], const uint8_t dst[16], const void *l4,
		       unsigned int len);
/* IPv4 address a.b.c.d in network order */
uint32_t t_ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d);
void t_gid4(uint8_t gid[16], uint32_t ip_be);
void t_gid6(uint8_t gid[16], const char *s);

void t_arp(struct tframe *f, uint16_t op, const uint8_t edst[6], const uint8_t sha[6],
	   uint32_t spa_be, const uint8_t tha[6], uint32_t tpa_be);
/* NS (135) or NA (136) with a link-layer option carrying @p lla (NULL: none) */
void t_nd(struct tframe *f, uint8_t type, uint8_t flags, const uint8_t edst[6],
	  const uint8_t esrc[6], const uint8_t src[16], const uint8_t dst[16],
	  const uint8_t target[16], const uint8_t *lla, uint8_t hop_limit);
/* IPv4 packet with protocol @p proto and 8 bytes of L4 (UDP ports if 17) */
void t_ip4_l4(struct tframe *f, const uint8_t edst[6], const uint8_t esrc[6], uint32_t src_be,
	      uint32_t dst_be, uint8_t proto, uint16_t dport);
void t_ip6_l4(struct tframe *f, const uint8_t edst[6], const uint8_t esrc[6],
	      const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint16_t dport);
/* A RoCEv2 UD SEND_ONLY with a 16-byte payload, ICRC set (lib/wire builds it) */
void t_roce(struct tframe *f, const uint8_t dmac[6], const uint8_t smac[6],
	    const uint8_t sgid[16], const uint8_t dgid[16]);
/* The same with @p opcode and @p payload_len bytes, padded to Ethernet's 60 */
void t_roce_op(struct tframe *f, const uint8_t dmac[6], const uint8_t smac[6],
	       const uint8_t sgid[16], const uint8_t dgid[16], uint8_t opcode,
	       uint32_t payload_len);

#endif /* DROCE_PMD_TEST_H */
