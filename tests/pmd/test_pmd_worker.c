/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Suite "pmd_worker": droce_port_worker.h over a net_ring port of two
 * queue pairs whose rings the test holds (it is the wire). Queue 1's
 * unsortable frames reach queue 0's worker and are sorted there; frames
 * for a full hand-off ring are held in order and stop the queue; the TX
 * backlog keeps frames in order while the PMD's queue is full and loses
 * one only when the backlog itself is full; a worker alone on queue 0 of
 * its port sorts everything itself.
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_port.h"
#include "droce_port_worker.h"
#include "droce_wire.h"
#include "pmd_test.h"

#define WIRE_SLOTS	64	/* each ring of the wire */

static struct rte_ring *in[2], *out[2];
static struct rte_mempool *test_mp;
static int ring_port;
static struct droce_port *port;
static struct droce_port_worker w0, w1;

static const uint8_t our_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static uint32_t our_ip, peer_ip;

static void
inject(unsigned int q, const struct tframe *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	ck_assert_ptr_nonnull(m);
	memcpy(rte_pktmbuf_append(m, f->len), f->b, f->len);
	ck_assert_int_eq(rte_ring_enqueue(in[q], m), 0);
}

static unsigned int
drain(struct rte_ring *r)
{
	void *m;
	unsigned int n = 0;

	while (rte_ring_dequeue(r, &m) == 0) {
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

/* n_queues queue pairs; workers set up with @p slots hand-off slots and @p backlog */
static void
setup_port(uint16_t n_queues, unsigned int slots, unsigned int backlog)
{
	struct droce_port_conf c;
	struct droce_port_worker_conf wc = { .handoff_slots = slots, .tx_backlog = backlog };
	unsigned int q;

	for (q = 0; q < 2; q++) {
		drain(in[q]);
		drain(out[q]);
	}
	droce_port_conf_init(&c);
	c.port_id = (uint16_t)ring_port;
	memcpy(c.mac, our_mac, 6);
	c.has_mac = true;
	c.ipv4[0].addr = our_ip;
	c.ipv4[0].prefix = 24;
	c.n_ipv4 = 1;
	c.link_wait_ms = 100;
	c.nb_mbufs = 2047;
	c.n_queues = n_queues;
	ck_assert_int_eq(droce_port_open(&c, &port), 0);
	wc.port = port;
	wc.name = "pmdw_handoff0";
	ck_assert_int_eq(droce_port_worker_init(&w0, &wc), 0);
	if (n_queues > 1) {
		wc.queue = 1;
		wc.sorter = &w0;
		wc.name = "pmdw_handoff1";
		ck_assert_int_eq(droce_port_worker_init(&w1, &wc), 0);
	}
}

static void
teardown_port(void)
{
	unsigned int q;

	droce_port_worker_fini(&w0);
	droce_port_worker_fini(&w1);
	memset(&w1, 0, sizeof(w1));
	for (q = 0; q < 2; q++) {
		drain(in[q]);
		drain(out[q]);
	}
	/* nothing leaked: every mbuf is back in the pool or a queue's stash (32 each) */
	ck_assert_uint_le(rte_mempool_in_use_count(droce_port_mempool(port)), 2 * 32);
	droce_port_close(port);
	port = NULL;
}

/* What droce_port_worker_take() gave: frames in order, each with its tags. */
struct taken {
	struct rte_mbuf *m[64];
	unsigned int tags[64];
	unsigned int n;
};

static void
take_fn(void *arg, struct rte_mbuf **pkts, uint16_t n, unsigned int tags)
{
	struct taken *t = arg;
	uint16_t i;

	for (i = 0; i < n; i++) {
		ck_assert_uint_lt(t->n, DROCE_DIM(t->m));
		t->m[t->n] = pkts[i];
		t->tags[t->n++] = tags;
	}
}

/* An mbuf of the port's pool with @p seq in its first byte. */
static struct rte_mbuf *
numbered(uint8_t seq)
{
	struct rte_mbuf *m = droce_port_worker_alloc(&w0);
	uint8_t *p;

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, 60);
	ck_assert_ptr_nonnull(p);
	memset(p, 0, 60);
	p[0] = seq;
	return m;
}

START_TEST(test_other_queue_hands_what_it_cannot_sort_to_queue_0)
{
	static const uint8_t zero[6];
	struct rte_mbuf *pk[DROCE_PORT_WORKER_BURST];
	struct taken t = { .n = 0 };
	uint64_t c1[DROCE_PORT_WORKER_CNT_COUNT];
	uint8_t sg[16], dg[16];
	struct tframe f;
	void *reply;
	uint16_t n;

	setup_port(2, 64, 0);
	t_gid4(sg, peer_ip);
	t_gid4(dg, our_ip);
	t_roce(&f, our_mac, peer_mac, sg, dg);
	inject(1, &f);
	t_arp(&f, 1, t_bcast, peer_mac, peer_ip, zero, our_ip);
	inject(1, &f);
	n = droce_port_worker_rx(&w1, pk, DROCE_PORT_WORKER_BURST);
	ck_assert_uint_eq(n, 1);		/* the RoCEv2 frame stays on queue 1 */
	droce_port_worker_free_rx(&w1, pk, n);
	droce_port_worker_counters(&w1, c1);
	ck_assert_uint_eq(c1[DROCE_PORT_WORKER_CNT_RX_FRAMES], 1);
	ck_assert_uint_eq(c1[DROCE_PORT_WORKER_CNT_HANDOFF], 0);	/* SLOW: not a QP's hand-off */
	ck_assert(droce_port_worker_has_handed(&w0));
	/* worker 0 sorts the ARP request: answered on queue 0, nothing for the caller */
	ck_assert_uint_eq(droce_port_worker_take(&w0, take_fn, &t), 1);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_int_eq(rte_ring_dequeue(out[0], &reply), 0);
	ck_assert_uint_eq(rte_be_to_cpu_16(rte_pktmbuf_mtod((struct rte_mbuf *)reply,
							    struct rte_ether_hdr *)->ether_type),
			  0x0806);
	rte_pktmbuf_free(reply);
	/* a RoCEv2 frame queue 1 does not sort (to a group MAC) reaches worker 0 as a candidate
	 * only if it passes the full sort: this one, to a MAC not ours, is dropped there */
	t_roce(&f, peer_mac, peer_mac, sg, dg);
	inject(1, &f);
	ck_assert_uint_eq(droce_port_worker_rx(&w1, pk, DROCE_PORT_WORKER_BURST), 0);
	ck_assert_uint_eq(droce_port_worker_take(&w0, take_fn, &t), 1);
	ck_assert_uint_eq(t.n, 0);
	teardown_port();
}
END_TEST

START_TEST(test_full_ring_holds_frames_in_order_and_stops_the_queue)
{
	struct rte_mbuf *pk[DROCE_PORT_WORKER_BURST];
	struct taken t = { .n = 0 };
	uint64_t c1[DROCE_PORT_WORKER_CNT_COUNT];
	uint8_t sg[16], dg[16];
	struct tframe f;
	unsigned int i, got = 0;
	uint16_t n;

	setup_port(2, 4, 0);		/* worker 0's ring: 4 slots */
	for (i = 0; i < 10; i++)
		droce_port_worker_hand(&w1, &w0, numbered((uint8_t)i), i == 7 ? DROCE_PORT_WORKER_LOCAL : 0);
	ck_assert_uint_eq(droce_port_worker_held(&w1), 6);
	droce_port_worker_counters(&w1, c1);
	ck_assert_uint_eq(c1[DROCE_PORT_WORKER_CNT_HANDOFF], 10);
	ck_assert_uint_eq(c1[DROCE_PORT_WORKER_CNT_HANDOFF_HELD], 6);
	/* while frames are held the queue is not read */
	t_gid4(sg, peer_ip);
	t_gid4(dg, our_ip);
	t_roce(&f, our_mac, peer_mac, sg, dg);
	inject(1, &f);
	ck_assert_uint_eq(droce_port_worker_rx(&w1, pk, DROCE_PORT_WORKER_BURST), 0);
	ck_assert_uint_eq(rte_ring_count(in[1]), 1);
	/* the owner takes; the held go next, in order; then the queue is read again */
	while (t.n < 10) {
		unsigned int before = t.n;

		droce_port_worker_take(&w0, take_fn, &t);
		ck_assert_uint_gt(t.n, before);
		n = droce_port_worker_rx(&w1, pk, DROCE_PORT_WORKER_BURST);
		if (droce_port_worker_held(&w1) > 0)
			ck_assert_uint_eq(n, 0);
		got += n;
		droce_port_worker_free_rx(&w1, pk, n);
	}
	ck_assert_uint_eq(got, 1);
	for (i = 0; i < 10; i++) {
		ck_assert_uint_eq(rte_pktmbuf_mtod(t.m[i], uint8_t *)[0], i);
		ck_assert_uint_eq(t.tags[i], i == 7 ? DROCE_PORT_WORKER_LOCAL : 0);
	}
	rte_pktmbuf_free_bulk(t.m, t.n);
	ck_assert_uint_eq(droce_port_worker_held(&w1), 0);
	/* a copy (droce_port_worker_handoff) is never held: the caller keeps it */
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(droce_port_worker_handoff(&w1, &w0, numbered((uint8_t)i), 0), 0);
	pk[0] = numbered(9);
	ck_assert_int_eq(droce_port_worker_handoff(&w1, &w0, pk[0], 0), -ENOBUFS);
	rte_pktmbuf_free(pk[0]);
	teardown_port();
}
END_TEST

START_TEST(test_tx_backlog_keeps_order_then_loses_only_when_full)
{
	uint64_t c[DROCE_PORT_WORKER_CNT_COUNT];
	unsigned int i, lost = 0;
	void *m;

	setup_port(1, 0, 128);
	ck_assert_uint_eq(droce_port_worker_tx_room(&w0), 128);
	/* the wire takes WIRE_SLOTS - 1 (a ring keeps one slot free), the backlog 128 */
	for (i = 0; i < 250; i++)
		lost += droce_port_worker_tx(&w0, numbered((uint8_t)i)) < 0;
	ck_assert_uint_eq(droce_port_worker_tx_room(&w0), 0);
	droce_port_worker_counters(&w0, c);
	ck_assert_uint_eq(c[DROCE_PORT_WORKER_CNT_TX_FRAMES], WIRE_SLOTS - 1);
	ck_assert_uint_eq(lost, 250 - (WIRE_SLOTS - 1) - 128);
	ck_assert_uint_eq(c[DROCE_PORT_WORKER_CNT_TX_FULL], lost);
	/* as the wire drains, the backlog follows in order: 0 .. 190, none lost in between */
	for (i = 0; i < WIRE_SLOTS - 1 + 128;) {
		while (rte_ring_dequeue(out[0], &m) == 0) {
			ck_assert_uint_eq(rte_pktmbuf_mtod((struct rte_mbuf *)m, uint8_t *)[0], i);
			rte_pktmbuf_free(m);
			i++;
		}
		droce_port_worker_flush(&w0);
	}
	ck_assert_uint_eq(droce_port_worker_tx_room(&w0), 128);
	teardown_port();
}
END_TEST

START_TEST(test_worker_alone_on_queue_0_sorts_itself)
{
	static const uint8_t zero[6];
	struct rte_mbuf *pk[DROCE_PORT_WORKER_BURST];
	uint8_t sg[16], dg[16];
	struct droce_port_stats st;
	struct tframe f;
	uint16_t n;

	setup_port(1, 0, 0);
	t_gid4(sg, peer_ip);
	t_gid4(dg, our_ip);
	t_arp(&f, 1, t_bcast, peer_mac, peer_ip, zero, our_ip);
	inject(0, &f);
	t_roce(&f, our_mac, peer_mac, sg, dg);
	inject(0, &f);
	n = droce_port_worker_rx(&w0, pk, DROCE_PORT_WORKER_BURST);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(pk[0]->l2_len, 14);
	ck_assert_uint_eq(pk[0]->l3_len, 20);
	droce_port_worker_free_rx(&w0, pk, n);
	droce_port_stats(port, &st);
	ck_assert_uint_eq(st.counter[DROCE_PORT_CNT_ARP_REPLY_TX], 1);	/* sorted here */
	ck_assert_uint_ge(drain(out[0]), 1);
	ck_assert(!droce_port_worker_has_handed(&w0));
	teardown_port();
}
END_TEST

static Suite *
worker_suite(void)
{
	Suite *s = suite_create("pmd_worker");
	TCase *tc = tcase_create("worker");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_other_queue_hands_what_it_cannot_sort_to_queue_0);
	tcase_add_test(tc, test_full_ring_holds_frames_in_order_and_stops_the_queue);
	tcase_add_test(tc, test_tx_backlog_keeps_order_then_loses_only_when_full);
	tcase_add_test(tc, test_worker_alone_on_queue_0_sorts_itself);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	unsigned int q;
	int failed;

	if (pmd_test_eal_init("pmd_worker", 0, NULL) < 0)
		return 1;
	our_ip = t_ip4(10, 11, 12, 1);
	peer_ip = t_ip4(10, 11, 12, 2);
	for (q = 0; q < 2; q++) {
		char name[32];

		snprintf(name, sizeof(name), "pmdw_in%u", q);
		in[q] = rte_ring_create(name, WIRE_SLOTS, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "pmdw_out%u", q);
		out[q] = rte_ring_create(name, WIRE_SLOTS, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	}
	test_mp = rte_pktmbuf_pool_create("pmdw_mp", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (in[1] == NULL || out[1] == NULL || test_mp == NULL)
		return 1;
	ring_port = rte_eth_from_rings("pmdw", in, 2, out, 2, 0);
	if (ring_port < 0) {
		fprintf(stderr, "pmd_worker: rte_eth_from_rings: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	failed = pmd_test_run(worker_suite());
	pmd_test_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
