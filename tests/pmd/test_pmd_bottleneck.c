/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Suite "pmd_bottleneck": net_droce_fault's bottleneck. First its model
 * alone (fault_bottleneck.h) on a made-up clock: departures at the link's
 * rate, tail drop, RED marking, the ECN field of IPv4 and IPv6 headers
 * with IPv4's checksum mended. Then the vdev over a net_ring loopback, in
 * each direction: a burst far faster than a 1 Mbit/s link fills the queue,
 * what does not fit is dropped, ECN-capable frames past ecn_max arrive
 * marked CE with a valid checksum, the others never are, and the last
 * frame cannot arrive before the link could have carried them all; with
 * hold=1 (TX) nothing is dropped: the sender keeps what does not fit.
 */

#include <check.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "droce_fault.h"
#include "fault_bottleneck.h"
#include "pmd_test.h"

#define HZ		1000000000ull	/* the model's clock: 1 ns per cycle */
#define P32		(1ull << 32)	/* probability 1 */

static struct rte_mempool *mp;
static unsigned int scenario_no;

static void
bn_setup(struct fault_bn *b, struct fault_bn_params *p, uint64_t rate, uint64_t queue)
{
	memset(p, 0, sizeof(*p));
	p->rate_bps = rate;
	p->queue = queue;
	fault_bn_init(b, p, HZ, 42);
}

START_TEST(test_model_departs_at_the_rate)
{
	struct fault_bn_params p;
	struct fault_bn b;
	uint64_t due, prev = 0;
	unsigned int i;

	bn_setup(&b, &p, 8000000, 1 << 20);	/* 8 Mbit/s: a byte per 1 000 ns */
	for (i = 0; i < 10; i++) {
		/* 976 bytes + 24 on the wire: 1 000 bytes, 1 ms each */
		ck_assert_int_eq(fault_bn_admit(&b, 976, true, 0, &due), FAULT_BN_PASS);
		ck_assert_uint_eq(due, (i + 1) * 1000000ull);
		ck_assert_uint_gt(due, prev);
		prev = due;
	}
	ck_assert_uint_eq(fault_bn_depth(&b, 0), 10000);
	ck_assert_uint_eq(fault_bn_depth(&b, 4000000), 6000);
	ck_assert_uint_eq(fault_bn_depth(&b, 20000000), 0);
	ck_assert_uint_eq(b.st.max_queue, 10000);
	/* an idle link sends at once */
	ck_assert_int_eq(fault_bn_admit(&b, 976, true, 50000000, &due), FAULT_BN_PASS);
	ck_assert_uint_eq(due, 51000000);
}
END_TEST

START_TEST(test_model_tail_drop)
{
	struct fault_bn_params p;
	struct fault_bn b;
	uint64_t due;
	unsigned int i, passed = 0;

	bn_setup(&b, &p, 8000000, 5000);
	for (i = 0; i < 8; i++)
		passed += fault_bn_admit(&b, 976, false, 0, &due) != FAULT_BN_DROP;
	ck_assert_uint_eq(passed, 5);
	ck_assert_uint_eq(b.st.dropped, 3);
	ck_assert_uint_eq(b.st.max_queue, 5000);
	/* one frame's time later there is room for one */
	ck_assert_int_ne(fault_bn_admit(&b, 976, false, 1000000, &due), FAULT_BN_DROP);
	ck_assert_int_eq(fault_bn_admit(&b, 976, false, 1000000, &due), FAULT_BN_DROP);
	ck_assert_uint_eq(due, 6000000);	/* the drop leaves *due alone */
}
END_TEST

/* hold: what would be dropped is refused instead, and counted; none is dropped */
START_TEST(test_model_hold_refuses)
{
	struct fault_bn_params p;
	struct fault_bn b;
	uint64_t due;
	unsigned int i;

	bn_setup(&b, &p, 8000000, 5000);
	p.hold = true;
	for (i = 0; i < 5; i++) {
		ck_assert(fault_bn_takes(&b, 976, 0));
		ck_assert_int_eq(fault_bn_admit(&b, 976, false, 0, &due), FAULT_BN_PASS);
	}
	ck_assert(!fault_bn_takes(&b, 976, 0));
	ck_assert(!fault_bn_takes(&b, 976, 999000));
	ck_assert_uint_eq(b.st.held, 2);
	ck_assert(fault_bn_takes(&b, 976, 1000000));
	ck_assert_uint_eq(b.st.dropped, 0);
}
END_TEST

/* Marks among @p n ECN-capable frames each arriving at depth @p depth. */
static unsigned int
marks_at(struct fault_bn *b, uint64_t depth, unsigned int n, bool ect)
{
	unsigned int i, marks = 0;
	uint64_t due;

	for (i = 0; i < n; i++) {
		b->free_at = 1000000000ull + depth * 1000;	/* 8 Mbit/s: 1 000 cycles a byte */
		marks += fault_bn_admit(b, 64, ect, 1000000000ull, &due) == FAULT_BN_MARK;
	}
	return marks;
}

START_TEST(test_model_red_marking)
{
	struct fault_bn_params p;
	struct fault_bn b;
	unsigned int m;

	bn_setup(&b, &p, 8000000, 1 << 20);
	p.ecn = true;
	p.ecn_min = 10000;
	p.ecn_max = 30000;
	p.ecn_prob = P32 / 2;
	ck_assert_uint_eq(marks_at(&b, 9999, 2000, true), 0);
	/* halfway: ecn_prob / 2 = 0.25 */
	m = marks_at(&b, 20000, 20000, true);
	ck_assert_msg(m > 4500 && m < 5500, "%u of 20000 marked at the midpoint", m);
	/* a quarter of the way: 0.125 */
	m = marks_at(&b, 15000, 20000, true);
	ck_assert_msg(m > 2000 && m < 3000, "%u of 20000 marked a quarter up", m);
	ck_assert_uint_eq(marks_at(&b, 30000, 500, true), 500);
	ck_assert_uint_eq(marks_at(&b, 100000, 500, true), 500);
	/* not ECN-capable: never marked, counted */
	b.st.not_ect = 0;
	ck_assert_uint_eq(marks_at(&b, 100000, 300, false), 0);
	ck_assert_uint_eq(b.st.not_ect, 300);
	/* without ecn: no marks at any depth */
	p.ecn = false;
	ck_assert_uint_eq(marks_at(&b, 100000, 300, true), 0);
}
END_TEST

START_TEST(test_model_step_marking)
{
	struct fault_bn_params p;
	struct fault_bn b;

	bn_setup(&b, &p, 8000000, 1 << 20);
	p.ecn = true;
	p.ecn_min = p.ecn_max = 8000;
	p.ecn_prob = P32;
	ck_assert_uint_eq(marks_at(&b, 7999, 100, true), 0);
	ck_assert_uint_eq(marks_at(&b, 8000, 100, true), 100);
}
END_TEST

/*
 * ecn_at=dequeue: nothing is marked as it arrives; as it leaves, a frame
 * is marked by the bytes queued behind it. A burst of 20 frames of 1 000
 * wire bytes: the first leave with 19 000 behind them, the last with none.
 */
START_TEST(test_model_dequeue_marking)
{
	struct fault_bn_params p;
	struct fault_bn b;
	uint64_t due[20];
	unsigned int i;

	bn_setup(&b, &p, 8000000, 1 << 20);
	p.ecn = p.ecn_dequeue = true;
	p.ecn_min = p.ecn_max = 8000;
	p.ecn_prob = P32;
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(fault_bn_admit(&b, 976, i % 2 == 0, 0, &due[i]), FAULT_BN_PASS);
	ck_assert_uint_eq(b.st.marked, 0);
	/* frame i leaves at (i + 1) ms with (19 - i) * 1 000 bytes behind it */
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(fault_bn_mark_leaving(&b, i % 2 == 0, due[i]),
				 i % 2 == 0 && i <= 11);
	ck_assert_uint_eq(b.st.marked, 6);
	ck_assert_uint_eq(b.st.not_ect, 6);
}
END_TEST

/* IPv4 header checksum over @p ip: 0 when valid */
static uint16_t
ip4_check(const uint8_t *ip)
{
	return (uint16_t)~t_sum(ip, 20, 0);
}

START_TEST(test_ecn_field_ipv4_ipv6_vlan)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	uint8_t src6[16] = { 0xfe, 0x80 }, dst6[16] = { 0xfe, 0x80, [15] = 1 };
	struct tframe f;
	uint8_t ecn, v[1600];
	unsigned int e;
	int at;

	for (e = 0; e < 4; e++) {
		t_ip4_l4(&f, mac, mac, t_ip4(10, 0, 0, 1), t_ip4(10, 0, 0, 2), 17, 4791);
		f.b[15] = (uint8_t)(26 << 2 | e);	/* DSCP 26 */
		f.b[24] = f.b[25] = 0;
		{
			uint16_t c = (uint16_t)~t_sum(f.b + 14, 20, 0);

			f.b[24] = (uint8_t)(c >> 8);
			f.b[25] = (uint8_t)c;
		}
		ck_assert_uint_eq(ip4_check(f.b + 14), 0);
		at = fault_ecn_find(f.b, f.len, &ecn);
		ck_assert_int_eq(at, 14);
		ck_assert_uint_eq(ecn, e);
		fault_ecn_set_ce(f.b, at);
		ck_assert_uint_eq(f.b[15], 26 << 2 | 3);
		ck_assert_uint_eq(ip4_check(f.b + 14), 0);
	}
	/* behind a VLAN tag */
	t_ip4_l4(&f, mac, mac, t_ip4(10, 0, 0, 1), t_ip4(10, 0, 0, 2), 17, 4791);
	memcpy(v, f.b, 12);
	v[12] = 0x81;
	v[13] = 0x00;
	v[14] = 0x00;
	v[15] = 0x05;
	memcpy(v + 16, f.b + 12, f.len - 12u);
	v[19] = 0x02;			/* ECT(0), the header's checksum made anew */
	v[28] = v[29] = 0;
	{
		uint16_t c = (uint16_t)~t_sum(v + 18, 20, 0);

		v[28] = (uint8_t)(c >> 8);
		v[29] = (uint8_t)c;
	}
	ck_assert_int_eq(fault_ecn_find(v, f.len + 4u, &ecn), 18);
	ck_assert_uint_eq(ecn, 2);
	fault_ecn_set_ce(v, 18);
	ck_assert_uint_eq(v[19] & 3, 3);
	ck_assert_uint_eq(ip4_check(v + 18), 0);
	/* IPv6: traffic class 0xb6 (DSCP 45, ECT(0)) */
	t_ip6_l4(&f, mac, mac, src6, dst6, 17, 4791);
	f.b[14] = 0x6b;
	f.b[15] = 0x60 | (f.b[15] & 0x0f);
	at = fault_ecn_find(f.b, f.len, &ecn);
	ck_assert_int_eq(at, 14);
	ck_assert_uint_eq(ecn, 2);
	fault_ecn_set_ce(f.b, at);
	ck_assert_uint_eq(f.b[14], 0x6b);
	ck_assert_uint_eq(f.b[15] >> 4, 0x7);	/* TC 0xb7: DSCP kept, CE */
	/* not IP, or cut short */
	f.b[12] = 0x88;
	f.b[13] = 0xb5;
	ck_assert_int_eq(fault_ecn_find(f.b, f.len, &ecn), -1);
	t_ip4_l4(&f, mac, mac, t_ip4(10, 0, 0, 1), t_ip4(10, 0, 0, 2), 17, 4791);
	ck_assert_int_eq(fault_ecn_find(f.b, 30, &ecn), -1);
}
END_TEST

/* ---- the vdev ---- */

#define N_FRAMES	60
#define FRAME_BYTES	1000

/* frame @p seq: IPv4/UDP to 4791, ECT(0) if @p ect, the sequence number in the payload */
static struct rte_mbuf *
ip_frame(uint32_t seq, bool ect)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 7 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct tframe f;
	uint8_t *b;
	uint16_t c;

	ck_assert_ptr_nonnull(m);
	t_ip4_l4(&f, mac, mac, t_ip4(10, 0, 0, 1), t_ip4(10, 0, 0, 2), 17, 4791);
	b = (uint8_t *)rte_pktmbuf_append(m, FRAME_BYTES);
	ck_assert_ptr_nonnull(b);
	memset(b, 0, FRAME_BYTES);
	memcpy(b, f.b, f.len);
	b[15] = (uint8_t)(26 << 2 | (ect ? 2 : 0));
	b[16] = (FRAME_BYTES - 14) >> 8;
	b[17] = (FRAME_BYTES - 14) & 0xff;
	b[24] = b[25] = 0;
	c = (uint16_t)~t_sum(b + 14, 20, 0);
	b[24] = (uint8_t)(c >> 8);
	b[25] = (uint8_t)c;
	memcpy(b + 60, &seq, sizeof(seq));
	return m;
}

struct bn_result {
	unsigned int n, marked, bad_csum, out_of_order, marked_not_ect;
	uint32_t last, marked_first, marked_last;
	uint64_t t_last;
	struct droce_fault_stats fs;
};

static void
collect(uint16_t port, struct bn_result *r)
{
	struct rte_mbuf *m[32];
	uint16_t k, i;

	while ((k = rte_eth_rx_burst(port, 0, m, 32)) > 0)
		for (i = 0; i < k; i++) {
			const uint8_t *b = rte_pktmbuf_mtod(m[i], const uint8_t *);
			uint32_t seq;

			memcpy(&seq, b + 60, sizeof(seq));
			if (r->n > 0 && seq <= r->last)
				r->out_of_order++;
			r->last = seq;
			r->n++;
			r->t_last = rte_get_timer_cycles();
			r->bad_csum += ip4_check(b + 14) != 0;
			if ((b[15] & 3) == 3) {
				if (r->marked == 0)
					r->marked_first = seq;
				r->marked_last = seq;
				r->marked++;
				r->marked_not_ect += seq & 1;	/* odd frames are not ECT */
			}
			rte_pktmbuf_free(m[i]);
		}
}

/*
 * N_FRAMES frames in one burst into a bottleneck of @p params (dir= in
 * them); even ones ECN-capable. Collected until the link is surely idle.
 */
static void
bn_scenario(const char *params, struct bn_result *r, uint64_t *t_sent)
{
	struct rte_mbuf *m[N_FRAMES];
	unsigned int i, sent = 0;
	char ring[32];
	uint16_t port;
	uint64_t end;

	memset(r, 0, sizeof(*r));
	port = pmd_test_fault_up("bn", scenario_no++, params, mp, ring);
	for (i = 0; i < N_FRAMES; i++)
		m[i] = ip_frame(i, i % 2 == 0);
	*t_sent = rte_get_timer_cycles();
	while (sent < N_FRAMES)
		sent += rte_eth_tx_burst(port, 0, m + sent, (uint16_t)(N_FRAMES - sent));
	/* 60 frames at 1 Mbit/s take 0.5 s: wait up to 5 s for the queue to empty */
	end = rte_get_timer_cycles() + 5 * rte_get_timer_hz();
	do {
		collect(port, r);
		ck_assert_int_eq(droce_fault_stats(port, &r->fs), 0);
	} while (rte_get_timer_cycles() < end && r->n + r->fs.rx.bn_dropped +
		 r->fs.tx.bn_dropped < N_FRAMES);
	pmd_test_fault_down(port, ring);
	ck_assert_uint_eq(rte_mempool_in_use_count(mp), 0);
}

/*
 * 1 Mbit/s, a 20 KiB queue marking from 7 700 bytes (a step): 20 frames
 * of 1 024 wire bytes fit (a 21st if the machine stalled 8 ms in the
 * burst, and the link drained one); those queued behind 8 of them or more
 * are marked if ECN-capable (the even ones).
 */
static void
bn_check(const char *dir, bool dequeue)
{
	const struct droce_fault_dir_stats *d;
	struct bn_result r;
	char params[128];
	uint64_t t_sent, min_cyc;

	snprintf(params, sizeof(params), "rate=1m,queue=20k,ecn_min=7700,dir=%s%s", dir,
		 dequeue ? ",ecn_at=dequeue" : "");
	bn_scenario(params, &r, &t_sent);
	d = strcmp(dir, "rx") == 0 ? &r.fs.rx : &r.fs.tx;
	ck_assert_uint_eq(r.n + d->bn_dropped, N_FRAMES);
	/* the link drains 0.125 bytes a microsecond: the burst meets a full queue */
	ck_assert_msg(r.n >= 20 && r.n <= 22, "%u frames passed", r.n);
	ck_assert_uint_eq(r.out_of_order, 0);
	ck_assert_uint_eq(r.bad_csum, 0);
	ck_assert_uint_eq(r.marked_not_ect, 0);
	/*
	 * at enqueue, frames 8..19 met 8 KiB or more; at dequeue, frames 0..11
	 * of 20 left as much behind them: the even ones marked, the odd counted
	 */
	ck_assert_msg(r.marked >= 6 && r.marked <= 8, "%u marked", r.marked);
	if (dequeue)
		ck_assert_msg(r.marked_first == 0 && r.marked_last <= 12, "marked %u..%u",
			      r.marked_first, r.marked_last);
	else
		ck_assert_msg(r.marked_first >= 8 && r.marked_last <= 21, "marked %u..%u",
			      r.marked_first, r.marked_last);
	ck_assert_uint_eq(d->bn_marked, r.marked);
	ck_assert_msg(d->bn_not_ect >= 6 && d->bn_not_ect <= 8, "%lu not ECT",
		      (unsigned long)d->bn_not_ect);
	ck_assert_uint_ge(d->bn_max_queue, 20 * 1024);
	ck_assert_uint_le(d->bn_max_queue, 20 * 1024 + 1024);
	/* the link cannot have carried r.n frames of 1 024 bytes sooner (a lower bound only) */
	min_cyc = rte_get_timer_hz() * r.n * 1024 * 8 / 1000000;
	ck_assert_msg(r.t_last - t_sent >= min_cyc * 99 / 100, "%u frames in %lu ms", r.n,
		      (unsigned long)((r.t_last - t_sent) * 1000 / rte_get_timer_hz()));
}

START_TEST(test_vdev_bottleneck_tx)
{
	bn_check("tx", false);
}
END_TEST

START_TEST(test_vdev_bottleneck_rx)
{
	bn_check("rx", false);
}
END_TEST

START_TEST(test_vdev_bottleneck_rx_marks_at_dequeue)
{
	bn_check("rx", true);
}
END_TEST

START_TEST(test_vdev_bottleneck_tx_marks_at_dequeue)
{
	bn_check("tx", true);
}
END_TEST

/* hold=1: the sender keeps what the queue cannot take; every frame arrives, in order */
START_TEST(test_vdev_bottleneck_tx_hold)
{
	struct bn_result r;
	uint64_t t_sent, min_cyc;

	bn_scenario("rate=1m,queue=20k,dir=tx,hold=1", &r, &t_sent);
	ck_assert_uint_eq(r.n, N_FRAMES);
	ck_assert_uint_eq(r.fs.tx.bn_dropped, 0);
	ck_assert_uint_gt(r.fs.tx.bn_held, 0);
	ck_assert_uint_eq(r.out_of_order, 0);
	ck_assert_uint_le(r.fs.tx.bn_max_queue, 20 * 1024);
	min_cyc = rte_get_timer_hz() * N_FRAMES * 1024 * 8 / 1000000;
	ck_assert_uint_ge(r.t_last - t_sent, min_cyc * 99 / 100);
}
END_TEST

START_TEST(test_bad_bottleneck_devargs_are_refused)
{
	/* the ring need not exist: arguments are checked first */
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb0,port=x,queue=10k"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb1,port=x,rate=10m,ecn_min=20k,"
				       "ecn_max=10k"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb2,port=x,rate=10m,queue=8k,"
				       "ecn_max=10k"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb3,port=x,rate=10q"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb4,port=x,rate=999"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb5,port=x,rate=1m,ecn_prob=2"), 0);
	/* a wire cannot be held back; hold is 0 or 1 and needs a rate */
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb6,port=x,rate=1m,hold=1"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb7,port=x,rate=1m,hold=1,dir=rx"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb8,port=x,rate=1m,hold=2,dir=tx"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bb9,port=x,hold=1,dir=tx"), 0);
	/* ecn_at is enqueue or dequeue, and only with marking */
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bba,port=x,rate=1m,ecn_min=8k,"
				       "ecn_at=later"), 0);
	ck_assert_int_lt(rte_dev_probe("net_droce_fault_bbb,port=x,rate=1m,ecn_at=dequeue"), 0);
}
END_TEST

static Suite *
bottleneck_suite(void)
{
	Suite *s = suite_create("pmd_bottleneck");
	TCase *tc = tcase_create("bottleneck");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_model_departs_at_the_rate);
	tcase_add_test(tc, test_model_tail_drop);
	tcase_add_test(tc, test_model_hold_refuses);
	tcase_add_test(tc, test_model_red_marking);
	tcase_add_test(tc, test_model_step_marking);
	tcase_add_test(tc, test_model_dequeue_marking);
	tcase_add_test(tc, test_ecn_field_ipv4_ipv6_vlan);
	tcase_add_test(tc, test_vdev_bottleneck_tx);
	tcase_add_test(tc, test_vdev_bottleneck_rx);
	tcase_add_test(tc, test_vdev_bottleneck_rx_marks_at_dequeue);
	tcase_add_test(tc, test_vdev_bottleneck_tx_marks_at_dequeue);
	tcase_add_test(tc, test_vdev_bottleneck_tx_hold);
	tcase_add_test(tc, test_bad_bottleneck_devargs_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int failed;

	if (pmd_test_eal_init("pmd_bottleneck", 0, NULL) < 0)
		return 1;
	mp = rte_pktmbuf_pool_create("pmdb_mp", 1023, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (mp == NULL) {
		fprintf(stderr, "pmd_bottleneck: pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	failed = pmd_test_run(bottleneck_suite());
	pmd_test_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
