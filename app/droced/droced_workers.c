/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Several worker lcores (--workers N). Worker i runs engine i (the QPs of
 * the clients placed on it, lib/verbs) and port queue i; worker 0, on the
 * main lcore, also runs the control requests, rdma_cm and the port's slow
 * path. Nothing on the data path is shared or locked:
 *
 *  - a frame that arrives on another worker's queue (the NIC or the
 *    kernel's fanout spread flows by hash) goes whole to its owner's
 *    hand-off ring (an rte_ring of mbufs: any worker in, the owner out);
 *    the owner is the QPN's shard (QPN % N), QP1's is worker 0, and frames
 *    the fast sort of queues 1..N-1 does not keep (ARP, ND, IGMP/MLD,
 *    groups) go to worker 0's port path;
 *  - a control request changes objects every engine may read (keys,
 *    groups, QP lists): worker 0 runs it only while every other worker is
 *    parked at the top of its loop (droced_workers_pause), holding nothing.
 *    Requests are rare next to packets; a pass is microseconds.
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "droced.h"

#define HANDOFF_BURST	32
/* a worker sleeping to a paced QP's time still looks at its port this often */
#define PACE_SLEEP_MAX_NS	(1000ull * 1000)
#define HANDOFF_TAGS	(DROCED_HANDOFF_LOCAL | DROCED_HANDOFF_SLOW)

int
droced_workers_init(struct droced *d)
{
	unsigned int i;

	d->n_workers = d->opts.workers;
	if (d->n_workers > 1 && rte_lcore_count() < d->n_workers) {
		fprintf(stderr, "droced: --workers %u needs %u EAL lcores, EAL has %u (-l/--lcores)\n",
			d->n_workers, d->n_workers, rte_lcore_count());
		return -1;
	}
	for (i = 0; i < d->n_workers; i++) {
		struct droced_worker *w = &d->workers[i];
		char name[32];

		w->d = d;
		w->id = i;
		w->wait_epfd = -1;
		w->wait_kick_fd = -1;
		if (d->n_workers == 1)
			continue;	/* nobody hands anything over */
		snprintf(name, sizeof(name), "droced_handoff%u", i);
		/*
		 * Producers: every other worker. RTS, not DPDK's default MP
		 * ring: a producer preempted mid-enqueue (workers may share a
		 * core) would make the others spin until it runs again.
		 */
		w->handoff = rte_ring_create(name, d->opts.handoff_slots, SOCKET_ID_ANY,
					     RING_F_MP_RTS_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (w->handoff == NULL) {
			fprintf(stderr, "droced: hand-off ring: %s\n", rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

int
droced_handoff(struct droced *d, unsigned int to, struct rte_mbuf *m, unsigned long tag)
{
	struct droced_worker *w = &d->workers[to];

	if (to >= d->n_workers || rte_ring_enqueue(w->handoff, (void *)((uintptr_t)m | tag)) != 0)
		return -ENOBUFS;	/* the caller keeps the frame */
	/* a Dekker pair with droced_wait(): it sets asleep, then looks at the ring */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&w->asleep, memory_order_relaxed))
		droced_wait_kick(w);
	return 0;
}

unsigned int
droced_handoff_take(struct droced_worker *w, uint64_t now)
{
	void *got[HANDOFF_BURST];
	struct rte_mbuf *run[HANDOFF_BURST];
	unsigned int n, i, n_run = 0;
	unsigned long tag = 0;

	if (w->handoff == NULL)
		return 0;
	n = rte_ring_sc_dequeue_burst(w->handoff, got, HANDOFF_BURST, NULL);
	/* runs of the same kind go together */
	for (i = 0; i < n; i++) {
		unsigned long t = (uintptr_t)got[i] & HANDOFF_TAGS;

		if (n_run > 0 && t != tag) {
			droced_port_rx_handed(w, run, n_run, tag, now);
			n_run = 0;
		}
		tag = t;
		run[n_run++] = (struct rte_mbuf *)((uintptr_t)got[i] & ~HANDOFF_TAGS);
	}
	if (n_run > 0)
		droced_port_rx_handed(w, run, n_run, tag, now);
	return n;
}

unsigned int
droced_worker_pass(struct droced_worker *w, uint64_t now, enum droced_mail *mail)
{
	struct droced *d = w->d;
	unsigned int work = 0;

	*mail = DROCED_MAIL_NONE;
	if (w->id == 0) {
		/*
		 * A client's request is a conversation (a perftest server binds,
		 * listens, ... while its peer's REQ is on the way): the next one
		 * must not wait out a nap. sysfs' snapshot, once a second, is no
		 * traffic and must not keep the idle modes from their deep naps.
		 */
		*mail = droced_worker_mailbox(d);
		work += *mail == DROCED_MAIL_ACTIVE;
	}
	work += droce_engine_doorbells(w->eng, now);
	work += droced_port_rx(w, now);
	work += droced_handoff_take(w, now);
	work += droce_engine_poll(w->eng, now);
	if (w->id == 0) {
		work += droced_cm_poll(d, now);
		droced_port_watch(d, now);
	}
	droced_port_flush(w);
	return work;
}

/* Workers 1..n-1: stay parked while worker 0 runs a control call. */
static void
worker_park(struct droced_worker *w)
{
	struct droced *d = w->d;

	if (w->id == 0)
		return;

	/* seq_cst both ways: either worker 0 sees us running or we see its pause */
	while (atomic_load(&d->pause)) {
		atomic_store(&w->parked, true);
		while (atomic_load(&d->pause) && !atomic_load_explicit(&d->stop, memory_order_relaxed))
			sched_yield();
		atomic_store(&w->parked, false);
		if (atomic_load_explicit(&d->stop, memory_order_relaxed))
			return;
	}
}

void
droced_worker_idle_begin(struct droced_worker *w)
{
	if (w->id != 0)
		atomic_store(&w->parked, true);
}

void
droced_worker_idle_end(struct droced_worker *w)
{
	if (w->id == 0)
		return;
	atomic_store(&w->parked, false);
	worker_park(w);		/* a call may have begun while we were out */
}

void
droced_workers_pause(struct droced *d)
{
	unsigned int i;

	if (d->n_workers == 1)
		return;
	atomic_store(&d->pause, true);
	for (i = 1; i < d->n_workers; i++) {
		struct droced_worker *w = &d->workers[i];

		while (!atomic_load(&w->parked)) {
			if (atomic_load_explicit(&w->asleep, memory_order_relaxed))
				droced_wait_kick(w);
			sched_yield();
		}
	}
}

void
droced_workers_resume(struct droced *d)
{
	if (d->n_workers > 1)
		atomic_store(&d->pause, false);
}

int
droced_worker_loop(void *arg)
{
	struct droced_worker *w = arg;
	struct droced *d = w->d;
	uint64_t last_work = droce_now_ns();

	while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
		uint64_t now = droce_now_ns();
		enum droced_mail mail;

		worker_park(w);
		if (droced_worker_pass(w, now, &mail) > 0) {
			last_work = now;
			continue;
		}
		if (mail != DROCED_MAIL_NONE)
			continue;	/* sysfs' snapshot: no traffic, but no nap either */
		if (d->opts.idle == DROCE_IDLE_WAIT && now - last_work >= DROCE_IDLE_SPIN_NS) {
			droced_wait(w, now, last_work);
			continue;
		}
		/* a paced QP's next packet: sleep to it, woken on time (not a yield) */
		if (d->opts.idle == DROCE_IDLE_SLEEP || d->opts.idle == DROCE_IDLE_WAIT) {
			uint64_t ns = droce_engine_pace_wait(w->eng, now);

			if (ns > 0) {
				if (ns > PACE_SLEEP_MAX_NS)
					ns = PACE_SLEEP_MAX_NS;
				droced_worker_idle_begin(w);
				nanosleep(&(struct timespec){ 0, (long)ns }, NULL);
				droced_worker_idle_end(w);
				continue;
			}
		}
		/* napping it holds nothing: a control call need not wait for it */
		droced_worker_idle_begin(w);
		if (d->opts.idle == DROCE_IDLE_WAIT)
			sched_yield();
		else
			droce_idle(d->opts.idle, now, last_work);
		droced_worker_idle_end(w);
	}
	atomic_store(&w->parked, true);
	return 0;
}

int
droced_workers_launch(struct droced *d)
{
	unsigned int i = 1, lcore;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == d->n_workers)
			break;
		if (rte_eal_remote_launch(droced_worker_loop, &d->workers[i], lcore) != 0) {
			fprintf(stderr, "droced: cannot start worker %u on lcore %u\n", i, lcore);
			return -1;
		}
		i++;
	}
	return 0;
}

void
droced_workers_join(struct droced *d)
{
	if (d->n_workers > 1)
		rte_eal_mp_wait_lcore();
}
