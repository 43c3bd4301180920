/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Suite "pmd_fault": the net_droce_fault vdev over net_ring loopback ports.
 * Two fault ports come from the EAL command line, one after and one before
 * the ring it wraps; the scenarios hotplug a fresh ring + fault pair each,
 * send numbered frames through TX, take them back from RX (the ring loops
 * them) and check what loss, duplication, corruption, reordering and delay
 * did -- and that the same seed does the same thing twice.
 */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "droce_fault.h"
#include "pmd_test.h"

#define FRAME_LEN	64
#define MAX_RX		8192

static struct rte_mempool *mp;
static unsigned int scenario_no;

struct result {
	uint32_t seq[MAX_RX];		/* sequence numbers in arrival order */
	unsigned int n;
	unsigned int corrupt;		/* frames with exactly one byte changed */
	unsigned int header_changed;	/* frames whose Ethernet header changed (never) */
	struct droce_fault_stats fs;
};

static void
frame_fill(uint8_t *b, uint32_t seq)
{
	unsigned int i;

	memset(b, 0xff, 6);			/* broadcast */
	memcpy(b + 6, (const uint8_t[6]){ 0x02, 0, 0, 0, 0, 0x42 }, 6);
	b[12] = 0x88;				/* local experimental ethertype */
	b[13] = 0xb5;
	b[14] = (uint8_t)(seq >> 24);
	b[15] = (uint8_t)(seq >> 16);
	b[16] = (uint8_t)(seq >> 8);
	b[17] = (uint8_t)seq;
	/* every bit of seq shows in the pattern: a flipped seq byte cannot pass for another */
	for (i = 18; i < FRAME_LEN; i++) {
		uint32_t h = seq * 0x9e3779b1u + i * 0x85ebca77u;

		b[i] = (uint8_t)(h >> 24 ^ h >> 11);
	}
}

static unsigned int
frame_diff(const uint8_t *b, uint32_t seq, unsigned int *hdr)
{
	uint8_t want[FRAME_LEN];
	unsigned int i, diff = 0;

	frame_fill(want, seq);
	*hdr = 0;
	for (i = 0; i < FRAME_LEN; i++)
		if (want[i] != b[i]) {
			diff++;
			*hdr += i < 14;
		}
	return diff;
}

/* Which sequence number @p b carries, tolerating one corrupted byte anywhere. */
static uint32_t
frame_check(const uint8_t *b, struct result *r)
{
	uint32_t seq = (uint32_t)b[14] << 24 | b[15] << 16 | b[16] << 8 | b[17], s;
	unsigned int diff, hdr;

	diff = frame_diff(b, seq, &hdr);
	if (diff > 1) {
		/* the flipped byte is in the sequence number: find the one it was */
		for (s = 0; s < 4096; s++)
			if (frame_diff(b, s, &hdr) == 1) {
				seq = s;
				break;
			}
		diff = frame_diff(b, seq, &hdr);
	}
	r->corrupt += diff == 1;
	r->header_changed += hdr > 0;
	return seq;
}

static void
rx_all(uint16_t port, struct result *r)
{
	struct rte_mbuf *m[32];
	uint16_t k, i;

	while ((k = rte_eth_rx_burst(port, 0, m, 32)) > 0)
		for (i = 0; i < k; i++) {
			ck_assert_uint_eq(m[i]->pkt_len, FRAME_LEN);
			if (r->n < MAX_RX)
				r->seq[r->n++] = frame_check(rte_pktmbuf_mtod(m[i], uint8_t *), r);
			rte_pktmbuf_free(m[i]);
		}
}

/* Send @p n numbered frames through @p port and collect what comes back. */
static void
pump(uint16_t port, unsigned int n, struct result *r, unsigned int settle_ms)
{
	struct rte_mbuf *m[32];
	unsigned int seq = 0, i, k;
	uint64_t end;

	while (seq < n) {
		k = RTE_MIN(32u, n - seq);
		for (i = 0; i < k; i++) {
			m[i] = rte_pktmbuf_alloc(mp);
			ck_assert_ptr_nonnull(m[i]);
			frame_fill((uint8_t *)rte_pktmbuf_append(m[i], FRAME_LEN), seq + i);
		}
		/* a fault TX may refuse when its queue is full: offer the rest again */
		for (i = 0; i < k;) {
			i += rte_eth_tx_burst(port, 0, m + i, (uint16_t)(k - i));
			rx_all(port, r);
		}
		seq += k;
	}
	end = rte_get_timer_cycles() + rte_get_timer_hz() * settle_ms / 1000;
	while (rte_get_timer_cycles() < end)
		rx_all(port, r);
}

/* Hotplug a ring and a fault port over it with @p params; run @p n frames. */
static void
scenario(const char *params, unsigned int n, struct result *r, unsigned int settle_ms)
{
	char ring[32];
	uint16_t port;

	memset(r, 0, sizeof(*r));
	port = pmd_test_fault_up("sc", scenario_no++, params, mp, ring);
	pump(port, n, r, settle_ms);
	ck_assert_int_eq(droce_fault_stats(port, &r->fs), 0);
	pmd_test_fault_down(port, ring);
	ck_assert_uint_eq(rte_mempool_in_use_count(mp), 0);	/* nothing leaked */
	ck_assert_uint_eq(r->header_changed, 0);
}

static struct result res_a, res_b, res_c;

START_TEST(test_eal_order_either_way)
{
	struct rte_eth_dev_owner owner;
	uint16_t f0, f1, r0, r1, lower, p;
	unsigned int listed = 0;

	ck_assert_int_eq(rte_eth_dev_get_port_by_name("net_droce_fault0", &f0), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name("net_droce_fault1", &f1), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name("net_ring0", &r0), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name("net_ring1", &r1), 0);
	/* ring0 came first: found at probe; ring1 came after its fault port: found now */
	ck_assert_int_eq(droce_fault_lower_port(f0, &lower), 0);
	ck_assert_uint_eq(lower, r0);
	ck_assert_int_eq(droce_fault_lower_port(f1, &lower), 0);
	ck_assert_uint_eq(lower, r1);
	ck_assert_int_eq(rte_eth_dev_owner_get(r0, &owner), 0);
	ck_assert_str_eq(owner.name, "net_droce_fault0");
	ck_assert_int_eq(rte_eth_dev_owner_get(r1, &owner), 0);
	ck_assert_str_eq(owner.name, "net_droce_fault1");
	/* the wrapped rings are hidden from the port iterator */
	RTE_ETH_FOREACH_DEV(p) {
		ck_assert_uint_ne(p, r0);
		ck_assert_uint_ne(p, r1);
		listed++;
	}
	ck_assert_uint_eq(listed, 2);
	ck_assert_int_eq(droce_fault_lower_port(r0, &lower), -ENODEV);	/* not a fault port */
}
END_TEST

START_TEST(test_no_faults_passes_everything_in_order)
{
	struct rte_eth_xstat_name names[40];
	struct rte_eth_stats st;
	uint16_t f1;
	unsigned int i;
	int n;

	ck_assert_int_eq(rte_eth_dev_get_port_by_name("net_droce_fault1", &f1), 0);
	pmd_test_port_start(f1, mp);
	memset(&res_a, 0, sizeof(res_a));
	pump(f1, 500, &res_a, 5);
	ck_assert_uint_eq(res_a.n, 500);
	for (i = 0; i < res_a.n; i++)
		ck_assert_uint_eq(res_a.seq[i], i);
	ck_assert_uint_eq(res_a.corrupt, 0);
	ck_assert_int_eq(rte_eth_stats_get(f1, &st), 0);
	ck_assert_uint_eq(st.opackets, 500);
	ck_assert_uint_eq(st.ipackets, 500);
	ck_assert_uint_eq(st.obytes, 500 * FRAME_LEN);
	/* ethdev's 8 basic xstats, then ours */
	n = rte_eth_xstats_get_names(f1, names, 40);
	ck_assert_int_eq(n, 8 + 28);
	ck_assert_str_eq(names[8].name, "rx_fault_in");
	ck_assert_str_eq(names[8 + 11].name, "rx_fault_bn_max_queue");
	ck_assert_str_eq(names[8 + 13].name, "rx_fault_bn_queue");
	ck_assert_str_eq(names[8 + 16].name, "tx_fault_lost");
	{
		uint64_t id, v;

		ck_assert_int_eq(rte_eth_xstats_get_id_by_name(f1, "tx_fault_in", &id), 0);
		ck_assert_int_eq(rte_eth_xstats_get_by_id(f1, &id, &v, 1), 1);
		ck_assert_uint_eq(v, 500);
	}
	ck_assert_int_eq(rte_eth_dev_stop(f1), 0);
}
END_TEST

START_TEST(test_loss_half_is_about_half_and_seeded)
{
	unsigned int i;
	bool differ = false;

	scenario("seed=42,loss=0.5,dir=tx", 2000, &res_a, 5);
	scenario("seed=42,loss=0.5,dir=tx", 2000, &res_b, 5);
	scenario("seed=43,loss=0.5,dir=tx", 2000, &res_c, 5);
	/* 2000 fair coins: 1000 +- 150 is more than 6 sigma */
	ck_assert_uint_ge(res_a.n, 850);
	ck_assert_uint_le(res_a.n, 1150);
	ck_assert_uint_eq(res_a.fs.tx.lost + res_a.n, 2000);
	ck_assert_uint_eq(res_a.fs.tx.in, 2000);
	ck_assert_uint_eq(res_a.fs.rx.lost, 0);
	/* the same seed drops the same frames */
	ck_assert_uint_eq(res_a.n, res_b.n);
	for (i = 0; i < res_a.n; i++)
		ck_assert_uint_eq(res_a.seq[i], res_b.seq[i]);
	/* order is kept */
	for (i = 1; i < res_a.n; i++)
		ck_assert_uint_lt(res_a.seq[i - 1], res_a.seq[i]);
	/* another seed, another pattern */
	for (i = 0; i < RTE_MIN(res_a.n, res_c.n); i++)
		differ |= res_a.seq[i] != res_c.seq[i];
	ck_assert(differ || res_a.n != res_c.n);
}
END_TEST

START_TEST(test_loss_per_direction)
{
	scenario("seed=5,loss=0.5,dir=rx", 2000, &res_a, 5);
	ck_assert_uint_eq(res_a.fs.tx.lost, 0);
	ck_assert_uint_eq(res_a.fs.rx.lost + res_a.n, 2000);
	ck_assert_uint_ge(res_a.n, 850);
	ck_assert_uint_le(res_a.n, 1150);
	/* both ways: each frame crosses two coins, a quarter survives */
	scenario("seed=5,loss=0.5,dir=both", 2000, &res_b, 5);
	ck_assert_uint_ge(res_b.n, 380);
	ck_assert_uint_le(res_b.n, 620);
	ck_assert_uint_gt(res_b.fs.tx.lost, 0);
	ck_assert_uint_gt(res_b.fs.rx.lost, 0);
	/* loss=0 and no other fault: a straight pipe */
	scenario("seed=5,loss=0,dir=both", 300, &res_c, 5);
	ck_assert_uint_eq(res_c.n, 300);
}
END_TEST

START_TEST(test_duplicates_follow_their_original)
{
	unsigned int i, dups = 0;

	scenario("seed=7,dup=0.2,dir=tx", 2000, &res_a, 5);
	ck_assert_uint_eq(res_a.n, 2000 + res_a.fs.tx.dup);
	ck_assert_uint_ge(res_a.fs.tx.dup, 300);
	ck_assert_uint_le(res_a.fs.tx.dup, 500);
	for (i = 1; i < res_a.n; i++) {
		ck_assert_uint_le(res_a.seq[i - 1], res_a.seq[i]);
		dups += res_a.seq[i - 1] == res_a.seq[i];
	}
	ck_assert_uint_eq(dups, res_a.fs.tx.dup);
	ck_assert_uint_eq(res_a.corrupt, 0);
	/* the loss pattern does not depend on the other rates: same draws per frame */
	scenario("seed=7,loss=0.3,dir=tx", 1000, &res_b, 5);
	scenario("seed=7,loss=0.3,corrupt=0.5,dup=0.1,dir=tx", 1000, &res_c, 5);
	ck_assert_uint_eq(res_b.fs.tx.lost, res_c.fs.tx.lost);
}
END_TEST

START_TEST(test_corruption_flips_one_byte_past_ethernet)
{
	unsigned int i;

	scenario("seed=11,corrupt=0.2,dir=rx", 2000, &res_a, 5);
	ck_assert_uint_eq(res_a.n, 2000);
	ck_assert_uint_ge(res_a.fs.rx.corrupt, 300);
	ck_assert_uint_le(res_a.fs.rx.corrupt, 500);
	/* each corrupted frame differs from what was sent in exactly one byte */
	ck_assert_uint_eq(res_a.corrupt, res_a.fs.rx.corrupt);
	for (i = 0; i < res_a.n; i++)
		ck_assert_uint_eq(res_a.seq[i], i);
	scenario("seed=11,corrupt=0.2,dir=rx", 2000, &res_b, 5);
	ck_assert_uint_eq(res_b.corrupt, res_a.corrupt);
}
END_TEST

START_TEST(test_reorder_holds_frames_back)
{
	static bool seen[2000];
	unsigned int i, inversions = 0;

	scenario("seed=13,reorder=0.1,dir=tx", 2000, &res_a, 10);
	ck_assert_uint_eq(res_a.n, 2000);			/* nothing lost */
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < res_a.n; i++) {
		ck_assert_uint_lt(res_a.seq[i], 2000);
		ck_assert(!seen[res_a.seq[i]]);
		seen[res_a.seq[i]] = true;
		/* a held frame is overtaken by a few frames, never by many */
		ck_assert_uint_le(abs((int)res_a.seq[i] - (int)i), 16);
	}
	for (i = 1; i < res_a.n; i++)
		inversions += res_a.seq[i - 1] > res_a.seq[i];
	ck_assert_uint_ge(res_a.fs.tx.reorder, 100);
	ck_assert_uint_ge(inversions, 100);
	/*
	 * Which frames are held is the seed's; when they come out also depends
	 * on time (a held frame leaves after 1 ms if nothing overtakes it), so
	 * only the former is compared.
	 */
	scenario("seed=13,reorder=0.1,dir=tx", 2000, &res_b, 10);
	ck_assert_uint_eq(res_a.fs.tx.reorder, res_b.fs.tx.reorder);
	ck_assert_uint_eq(res_b.n, 2000);
}
END_TEST

START_TEST(test_delay_delivers_late)
{
	char ring[32];
	struct rte_mbuf *m[10];
	uint16_t port, i;
	uint64_t t0, t_first = 0;

	memset(&res_a, 0, sizeof(res_a));
	port = pmd_test_fault_up("dl", scenario_no++, "delay_us=20000,dir=tx", mp, ring);
	for (i = 0; i < 10; i++) {
		m[i] = rte_pktmbuf_alloc(mp);
		frame_fill((uint8_t *)rte_pktmbuf_append(m[i], FRAME_LEN), i);
	}
	t0 = rte_get_timer_cycles();
	ck_assert_uint_eq(rte_eth_tx_burst(port, 0, m, 10), 10);
	while (res_a.n < 10 && rte_get_timer_cycles() - t0 < rte_get_timer_hz()) {
		rx_all(port, &res_a);
		if (res_a.n > 0 && t_first == 0)
			t_first = rte_get_timer_cycles();
	}
	ck_assert_uint_eq(res_a.n, 10);
	/* not before 20 ms; generously not after 500 ms */
	ck_assert_uint_ge((t_first - t0) * 1000000 / rte_get_timer_hz(), 20000);
	ck_assert_uint_le((t_first - t0) * 1000 / rte_get_timer_hz(), 500);
	for (i = 0; i < 10; i++)
		ck_assert_uint_eq(res_a.seq[i], i);
	ck_assert_int_eq(droce_fault_stats(port, &res_a.fs), 0);
	ck_assert_uint_eq(res_a.fs.tx.delayed, 10);
	pmd_test_fault_down(port, ring);
}
END_TEST

START_TEST(test_bad_devargs_are_refused)
{
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bad0,loss=0.1"), 0);	/* no port= */
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bad1,port=net_ring0,loss=1.5"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bad2,port=net_ring0,dir=up"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bad3,port=net_ring0,jitter=1"), 0);
}
END_TEST

static Suite *
fault_suite(void)
{
	Suite *s = suite_create("pmd_fault");
	TCase *tc = tcase_create("fault");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_eal_order_either_way);
	tcase_add_test(tc, test_no_faults_passes_everything_in_order);
	tcase_add_test(tc, test_loss_half_is_about_half_and_seeded);
	tcase_add_test(tc, test_loss_per_direction);
	tcase_add_test(tc, test_duplicates_follow_their_original);
	tcase_add_test(tc, test_corruption_flips_one_byte_past_ethernet);
	tcase_add_test(tc, test_reorder_holds_frames_back);
	tcase_add_test(tc, test_delay_delivers_late);
	tcase_add_test(tc, test_bad_devargs_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* ring0 before its fault port, ring1 after its fault port */
	static const char *const extra[] = {
		"--vdev=net_ring0",
		"--vdev=net_droce_fault0,port=net_ring0,seed=1",
		"--vdev=net_droce_fault1,port=net_ring1",
		"--vdev=net_ring1",
	};
	int failed;

	if (pmd_test_eal_init("pmd_fault", 4, extra) < 0)
		return 1;
	mp = rte_pktmbuf_pool_create("pmdf_mp", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (mp == NULL) {
		fprintf(stderr, "pmd_fault: pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	failed = pmd_test_run(fault_suite());
	pmd_test_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
