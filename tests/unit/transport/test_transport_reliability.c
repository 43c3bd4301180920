/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Reliability over a hostile link: 4% loss and 1% corruption plus
 * reordering and duplication, both directions. RC must deliver every
 * message exactly once, in order, intact; READs must return the right
 * bytes; atomics must execute exactly once (their results prove it).
 *
 * Not more loss: a go-back-N round fails (its first packet or the one
 * answer covering it lost) about twice as often as a frame, and retry_cnt 7
 * ends the QP after eight failed rounds in a row, on any IBA device. At 10%
 * loss and 2% corruption that ended the QP of the READ and atomic test for
 * 3 seeds in 12; at 4% and 1%, rounds fail about 1 in 10 and the runs of 12
 * seeds reached five failed rounds in a row 12 times, none further.
 */

#include <stdlib.h>
#include <string.h>

#include "test_transport.h"

#define NQP		4
#define DEPTH		16		/* messages in flight per QP */
#define MAX_MSG		(1u << 20)
#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static void
hostile_link(struct sim *sim)
{
	sim->link.loss = 0.04;
	sim->link.dup = 0.02;
	sim->link.corrupt = 0.01;
	sim->link.reorder = 0.10;
	sim->link.reorder_ns = 20000;
}

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Mostly 1 B .. 16 KiB (log-uniform), one in 300 up to 1 MiB. */
static uint32_t
msg_size(unsigned int q, uint64_t seq)
{
	uint64_t h = mix(seq * NQP + q + 1);

	if (h % 300 == 0)
		return (uint32_t)(64 * 1024 + (h >> 16) % (MAX_MSG - 64 * 1024 + 1));
	return (uint32_t)(1u << ((h >> 8) % 14)) + (uint32_t)((h >> 24) % (1u << ((h >> 8) % 14)));
}

struct stream {
	struct sim *sim;
	uint64_t total;			/* messages per QP */
	uint8_t *sbuf[NQP];		/* DEPTH slots of MAX_MSG */
	uint8_t *rbuf[NQP];
	uint32_t skey[NQP];
	uint32_t rkey[NQP];
	uint64_t posted[NQP];
	uint64_t sent_done[NQP];
	uint64_t recv_done[NQP];
	uint64_t recv_posted[NQP];
	bool bad;
};

static void
stream_post(struct stream *st, unsigned int q)
{
	struct sim_node *a = &st->sim->node[0], *b = &st->sim->node[1];

	while (st->recv_posted[q] < st->total && st->recv_posted[q] - st->recv_done[q] < DEPTH) {
		uint64_t seq = st->recv_posted[q]++;

		sim_post_recv(b, q, seq, st->rbuf[q] + (seq % DEPTH) * MAX_MSG, MAX_MSG, st->rkey[q]);
	}
	while (st->posted[q] < st->total && st->posted[q] - st->sent_done[q] < DEPTH) {
		uint64_t seq = st->posted[q]++;
		uint32_t len = msg_size(q, seq), i;
		uint8_t *slot = st->sbuf[q] + (seq % DEPTH) * MAX_MSG;
		struct droce_send_wqe w;

		for (i = 0; i < len; i++)
			slot[i] = test_pattern(seq * NQP + q, i);
		memset(&w, 0, sizeof(w));
		w.wr_id = seq;
		w.opcode = IBV_WR_SEND;
		w.flags = IBV_SEND_SIGNALED;
		w.num_sge = 1;
		w.sge[0].addr = (uint64_t)(uintptr_t)slot;
		w.sge[0].length = len;
		w.sge[0].lkey = st->skey[q];
		w.length = len;
		if (droce_tqp_post_send(&a->qp[q], &w) != 0)
			st->bad = true;
	}
}

static bool
stream_step(struct sim *sim, void *arg)
{
	struct stream *st = arg;
	bool all = true;
	unsigned int q;

	for (q = 0; q < NQP; q++) {
		struct droce_cqe c;

		while (sim_poll_cq(&sim->node[0].scq[q], &c)) {
			if (c.status != IBV_WC_SUCCESS || c.wr_id != st->sent_done[q])
				st->bad = true;
			st->sent_done[q]++;
		}
		while (sim_poll_cq(&sim->node[1].rcq[q], &c)) {
			uint64_t seq = st->recv_done[q]++;
			const uint8_t *p = st->rbuf[q] + (seq % DEPTH) * MAX_MSG;
			uint32_t len = msg_size(q, seq), i;

			/* in order, exactly once, the right length and bytes */
			if (c.status != IBV_WC_SUCCESS || c.wr_id != seq || c.byte_len != len) {
				st->bad = true;
				continue;
			}
			for (i = 0; i < len; i++)
				if (p[i] != test_pattern(seq * NQP + q, i)) {
					st->bad = true;
					break;
				}
		}
		stream_post(st, q);
		all &= st->sent_done[q] == st->total && st->recv_done[q] == st->total;
	}
	return all || st->bad;
}

START_TEST(test_rc_sends_survive_loss_reorder_dup_corruption)
{
	struct stream st;
	unsigned int q;
	uint64_t received = 0, extra = 0;

	memset(&st, 0, sizeof(st));
	st.sim = sim_new(20261122);
	st.total = 25000;		/* x NQP = 100 000 messages */
	hostile_link(st.sim);
	for (q = 0; q < NQP; q++) {
		st.sbuf[q] = malloc((size_t)DEPTH * MAX_MSG);
		st.rbuf[q] = malloc((size_t)DEPTH * MAX_MSG);
		st.skey[q] = sim_reg_mr(&st.sim->node[0], st.sbuf[q], (uint64_t)DEPTH * MAX_MSG,
					ALL_ACCESS);
		st.rkey[q] = sim_reg_mr(&st.sim->node[1], st.rbuf[q], (uint64_t)DEPTH * MAX_MSG,
					ALL_ACCESS);
		sim_connect(st.sim, IBV_QPT_RC, q, q < 2 ? 1024 : 4096);
	}
	ck_assert(sim_run(st.sim, stream_step, &st, UINT64_MAX / 2));
	ck_assert_msg(!st.bad, "a message was lost, duplicated, reordered or damaged");
	for (q = 0; q < NQP; q++) {
		received += st.recv_done[q];
		extra += st.sim->node[1].qp[q].cnt[DROCE_TQP_CNT_DUP_REQS];
		ck_assert(!st.sim->node[0].qp_error[q] && !st.sim->node[1].qp_error[q]);
		/* nothing more arrived after the last message */
		ck_assert_uint_eq(test_cq_count(&st.sim->node[1].rcq[q]), 0);
	}
	ck_assert_uint_eq(received, 100000);
	/* the impairments really happened */
	ck_assert_uint_gt(st.sim->frames_lost, 1000);
	ck_assert_uint_gt(st.sim->frames_rejected, 100);	/* corrupted: bad ICRC */
	ck_assert_uint_gt(st.sim->frames_duplicated, 100);
	ck_assert_uint_gt(extra, 0);
	for (q = 0; q < NQP; q++) {
		free(st.sbuf[q]);
		free(st.rbuf[q]);
	}
	sim_free(st.sim);
}
END_TEST

/* READs of random sizes and atomics, interleaved, over the same link. */
struct rdat {
	struct sim *sim;
	uint8_t *remote;		/* node 1: pattern to read, counters */
	uint8_t *local;			/* node 0: READ targets and atomic results */
	uint32_t rkey, lkey;
	uint64_t total, posted, done;
	uint64_t *results;		/* FETCH_ADD originals, by wr_id */
	bool bad;
};

#define REMOTE_BYTES	(2u << 20)
#define COUNTER_OFF	(REMOTE_BYTES - 64)

static bool
rdat_step(struct sim *sim, void *arg)
{
	struct rdat *t = arg;
	struct droce_cqe c;

	while (sim_poll_cq(&sim->node[0].scq[0], &c)) {
		uint64_t seq = c.wr_id;

		if (c.status != IBV_WC_SUCCESS || seq != t->done)
			t->bad = true;
		t->done++;
		if (seq % 2 == 0) {		/* READ: compare with the remote pattern */
			uint32_t len = msg_size(0, seq) % (64 * 1024), i;
			uint32_t roff = (uint32_t)(mix(seq) % (REMOTE_BYTES / 2));
			const uint8_t *p = t->local + (seq % DEPTH) * 128 * 1024;

			for (i = 0; i < len; i++)
				if (p[i] != t->remote[roff + i]) {
					t->bad = true;
					break;
				}
		} else {
			t->results[seq / 2] = *(uint64_t *)(void *)(t->local + 16u * 128 * 1024 +
								   (seq % DEPTH) * 8);
		}
	}
	while (t->posted < t->total && t->posted - t->done < DEPTH) {
		uint64_t seq = t->posted++;
		struct droce_send_wqe w;

		memset(&w, 0, sizeof(w));
		w.wr_id = seq;
		w.flags = IBV_SEND_SIGNALED;
		w.num_sge = 1;
		w.rkey = t->rkey;
		w.sge[0].lkey = t->lkey;
		if (seq % 2 == 0) {
			w.opcode = IBV_WR_RDMA_READ;
			w.length = msg_size(0, seq) % (64 * 1024);
			w.remote_addr = (uint64_t)(uintptr_t)t->remote + mix(seq) % (REMOTE_BYTES / 2);
			w.sge[0].addr = (uint64_t)(uintptr_t)t->local + (seq % DEPTH) * 128 * 1024;
		} else {
			w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			w.length = 8;
			w.compare_add = 1;
			w.remote_addr = (uint64_t)(uintptr_t)t->remote + COUNTER_OFF;
			w.sge[0].addr = (uint64_t)(uintptr_t)t->local + 16u * 128 * 1024 +
					(seq % DEPTH) * 8;
		}
		w.sge[0].length = w.length;
		if (droce_tqp_post_send(&sim->node[0].qp[0], &w) != 0)
			t->bad = true;
	}
	return t->done == t->total || t->bad;
}

START_TEST(test_rc_reads_and_atomics_survive_hostile_link_exactly_once)
{
	struct rdat t;
	uint64_t i, n;
	uint8_t *seen;

	memset(&t, 0, sizeof(t));
	t.sim = sim_new(7);
	hostile_link(t.sim);
	t.total = 20000;
	n = t.total / 2;
	t.remote = aligned_alloc(64, REMOTE_BYTES);
	t.local = aligned_alloc(64, 17u * 128 * 1024);
	t.results = calloc(n, sizeof(*t.results));
	for (i = 0; i < REMOTE_BYTES; i++)
		t.remote[i] = test_pattern(i >> 10, i);
	*(uint64_t *)(void *)(t.remote + COUNTER_OFF) = 0;
	t.rkey = sim_reg_mr(&t.sim->node[1], t.remote, REMOTE_BYTES, ALL_ACCESS);
	t.lkey = sim_reg_mr(&t.sim->node[0], t.local, 17u * 128 * 1024, ALL_ACCESS);
	sim_connect(t.sim, IBV_QPT_RC, 0, 1024);

	ck_assert(sim_run(t.sim, rdat_step, &t, UINT64_MAX / 2));
	ck_assert(!t.bad);
	/* every FETCH_ADD ran exactly once: the counter and a permutation of results */
	ck_assert_uint_eq(*(uint64_t *)(void *)(t.remote + COUNTER_OFF), n);
	seen = calloc(n, 1);
	for (i = 0; i < n; i++) {
		ck_assert_uint_lt(t.results[i], n);
		ck_assert(!seen[t.results[i]]);
		seen[t.results[i]] = 1;
	}
	ck_assert_uint_gt(t.sim->node[1].qp[0].cnt[DROCE_TQP_CNT_DUP_REQS], 0);
	/* responses that overtook a lost one were kept, and landed right */
	ck_assert_uint_gt(t.sim->node[0].qp[0].cnt[DROCE_TQP_CNT_READ_AHEAD], 0);
	free(seen);
	free(t.results);
	free(t.remote);
	free(t.local);
	sim_free(t.sim);
}
END_TEST

/*
 * perftest's ib_atomic_bw keeps 128 atomics in flight (max_rd_atomic 128):
 * one lost or late reply stalls everything behind it, and the QP must
 * still finish through the hostile link without exhausting retry_cnt.
 */
struct deep {
	uint64_t total, posted, done;
	uint64_t *counter;
	uint64_t *results;
	uint32_t rkey, lkey;
	bool bad;
};

#define DEEP_WINDOW	128

static bool
deep_step(struct sim *sim, void *arg)
{
	struct deep *t = arg;
	struct droce_cqe c;

	while (sim_poll_cq(&sim->node[0].scq[0], &c)) {
		if (c.status != IBV_WC_SUCCESS || c.wr_id != t->done)
			t->bad = true;
		t->done++;
	}
	while (t->posted < t->total && t->posted - t->done < DEEP_WINDOW) {
		uint64_t seq = t->posted++;
		struct droce_send_wqe w = test_wqe(IBV_WR_ATOMIC_FETCH_AND_ADD, seq,
						   &t->results[seq], 8, t->lkey);

		w.compare_add = 1;
		w.rkey = t->rkey;
		w.remote_addr = (uint64_t)(uintptr_t)t->counter;
		if (droce_tqp_post_send(&sim->node[0].qp[0], &w) != 0)
			t->bad = true;
	}
	return t->done == t->total || t->bad;
}

START_TEST(test_rc_deep_atomic_window_survives_hostile_link)
{
	uint64_t seed;

	for (seed = 1; seed <= 4; seed++) {
		struct deep t;
		struct sim *sim = sim_new(seed);
		uint64_t *counter = aligned_alloc(64, 64);
		int s;

		memset(&t, 0, sizeof(t));
		hostile_link(sim);
		t.total = 1000;
		t.counter = counter;
		*t.counter = 0;
		t.results = calloc(t.total, sizeof(*t.results));
		t.rkey = sim_reg_mr(&sim->node[1], t.counter, 64, ALL_ACCESS);
		t.lkey = sim_reg_mr(&sim->node[0], t.results, t.total * 8, ALL_ACCESS);
		sim_connect(sim, IBV_QPT_RC, 0, 1024);
		for (s = 0; s < 2; s++) {
			sim->node[s].qp[0].attr.max_rd_atomic = DEEP_WINDOW;
			ck_assert_int_eq(droce_tqp_set_dest_rd_atomic(&sim->node[s].qp[0],
								      DEEP_WINDOW), 0);
		}
		ck_assert_msg(sim_run(sim, deep_step, &t, UINT64_MAX / 2), "seed %lu: stuck", seed);
		ck_assert_msg(!t.bad, "seed %lu: %lu of %lu atomics done before an error", seed,
			      t.done, t.total);
		ck_assert_uint_eq(*t.counter, t.total);
		free(t.results);
		free(counter);
		sim_free(sim);
	}
}
END_TEST

/* node 0's request packets and how many of them asked for an ACK */
struct ackreq_count {
	unsigned int requests;
	unsigned int ackreqs;
};

static bool
count_ackreqs(struct sim *sim, int from, const struct droce_pkt *pkt, void *arg)
{
	struct ackreq_count *c = arg;

	(void)sim;
	if (from == 0 && (droce_opcode(pkt->opcode)->flags & DROCE_OPF_REQ)) {
		c->requests++;
		c->ackreqs += pkt->ackreq;
	}
	return false;
}

/* One 16-packet WRITE at pace @p bps: the AckReqs it carried. */
static unsigned int
paced_write_ackreqs(struct test_pair *p, uint64_t bps)
{
	struct ackreq_count c = { 0 };
	struct droce_send_wqe w = test_wqe(IBV_WR_RDMA_WRITE, 1, p->buf[0], 16 * 1024, p->key[0]);
	struct droce_cqe cqe;

	w.remote_addr = (uint64_t)(uintptr_t)p->buf[1];
	w.rkey = p->key[1];
	p->sim->sniff = count_ackreqs;
	p->sim->sniff_arg = &c;
	droce_tqp_set_pace(&p->sim->node[0].qp[0], bps);
	ck_assert_int_eq(droce_tqp_post_send(&p->sim->node[0].qp[0], &w), 0);
	ck_assert(test_wait(p->sim, &p->sim->node[0].scq[0], 1));
	ck_assert(sim_poll_cq(&p->sim->node[0].scq[0], &cqe));
	ck_assert_uint_eq(cqe.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(c.requests, 16);
	return c.ackreqs;
}

/*
 * The sim's QPs time out after ~1 ms (timeout 8: 4.096 us * 2^8), a
 * quarter of it 262 us: at 10 Mb/s a 1 KiB packet takes 819 us, so every
 * packet asks for its ACK; at 125 Mb/s 65.5 us, every fourth; unpaced
 * (and fast) only the message's last, as DROCE_ACKREQ_INTERVAL > 16.
 */
START_TEST(test_paced_requester_asks_for_acks_within_its_timeout)
{
	struct test_pair p;

	test_pair_setup(&p, IBV_QPT_RC, 1024, 7, 0x3c);
	ck_assert_uint_eq(paced_write_ackreqs(&p, 0), 1);
	ck_assert_uint_eq(paced_write_ackreqs(&p, 10000000), 16);
	ck_assert_uint_eq(paced_write_ackreqs(&p, 125000000), 4);
	ck_assert_uint_eq(paced_write_ackreqs(&p, 100000000000ull), 1);
	/* a reset keeps the pace (the owner's scheduler still paces the QP) */
	droce_tqp_set_pace(&p.sim->node[0].qp[0], 10000000);
	droce_tqp_set_state(&p.sim->node[0].qp[0], DROCE_TQP_RESET, 0, 0);
	ck_assert_uint_eq(p.sim->node[0].qp[0].req.ackreq_every, 1);
	/* no timeout, no pace: as unpaced */
	p.sim->node[0].qp[0].attr.timeout = 0;
	droce_tqp_set_pace(&p.sim->node[0].qp[0], 10000000);
	ck_assert_uint_eq(p.sim->node[0].qp[0].req.ackreq_every, DROCE_ACKREQ_INTERVAL);
	test_pair_teardown(&p);
}
END_TEST

TCase *
tcase_transport_reliability(void)
{
	TCase *tc = tcase_create("reliability");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_rc_sends_survive_loss_reorder_dup_corruption);
	tcase_add_test(tc, test_rc_reads_and_atomics_survive_hostile_link_exactly_once);
	tcase_add_test(tc, test_rc_deep_atomic_window_survives_hostile_link);
	tcase_add_test(tc, test_paced_requester_asks_for_acks_within_its_timeout);
	return tc;
}
