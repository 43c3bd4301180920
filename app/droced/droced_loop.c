/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The workers' loop: one pass after another, the mailbox that runs the
 * control calls between two passes, and the idle modes between passes
 * without work. Worker i runs engine i (the QPs of the clients placed on
 * it, lib/verbs) and port queue i; worker 0, on the main lcore, also runs
 * the control calls, rdma_cm and the port's slow path. Nothing on the
 * data path is shared or locked:
 *
 *  - a frame for another worker's engine goes whole to its hand-off ring
 *    (droced_port.c);
 *  - a control call changes objects every engine may read (keys, groups,
 *    QP lists): worker 0 runs it only while every other worker is parked
 *    at the top of its loop (droced_workers_pause), holding nothing.
 *    Calls are rare next to packets; a pass is microseconds.
 *
 * --idle wait: after DROCE_IDLE_SPIN_NS without work a worker sleeps in
 * epoll until something can have work for it, instead of timed naps:
 *
 *   - a client rang a doorbell (its wake eventfd, lib/verbs/verbs_dev_wait.c)
 *   - a control call or a hand-off came (the worker's kick eventfd)
 *   - a frame reached the port: on af_packet a packet socket of our own on
 *     the interface (DPDK 22.11's net_af_packet has no RX interrupt and
 *     keeps its socket private); other PMDs (memif, ring: no RX interrupt
 *     in 22.11 either) are looked at after SLEEP's naps
 *   - a transport timer is due (droce_engine_wait_budget()), or
 *     DROCED_WAIT_MAX_NS passed (CM timers, link watch, neighbour probes).
 */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "droced.h"

#define MAILBOX_SLOTS	64	/* callers: the control and telemetry threads, one call each */
#define MAILBOX_BURST	8

/* the longest sleep: the CM's and the port's timers run at this grain */
#define DROCED_WAIT_MAX_NS	(10ull * 1000 * 1000)
/* a worker sleeping to a paced QP's time still looks at its port this often */
#define PACE_SLEEP_MAX_NS	(1000ull * 1000)
#define DROCED_WAIT_EVENTS	16

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

		w->d = d;
		w->id = i;
		w->wait_epfd = -1;
		w->wait_kick_fd = -1;
	}
	/* any caller in; RTS as the hand-off rings: a preempted caller blocks nobody */
	d->mailbox = rte_ring_create("droced_mailbox", MAILBOX_SLOTS, SOCKET_ID_ANY,
				     RING_F_MP_RTS_ENQ | RING_F_SC_DEQ);
	if (d->mailbox == NULL) {
		fprintf(stderr, "droced: mailbox: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* ---- the mailbox ---- */

/*
 * Each calling thread waits on its own eventfd, which the worker writes
 * once the call ran: the caller sleeps in poll(), not in timed naps. The
 * timeout only lets it notice a worker that is gone.
 */
void
droced_call_worker(struct droced *d, struct droced_call *c)
{
	static __thread int done_fd = -1;
	struct pollfd pfd;
	uint64_t v;

	if (done_fd < 0)
		done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->done_fd = done_fd;
	atomic_store(&c->done, 0);
	while (rte_ring_enqueue(d->mailbox, c) != 0) {
		if (atomic_load(&d->worker_gone))
			return;
		sched_yield();		/* full: MAILBOX_SLOTS callers at once */
	}
	droced_worker_kick(&d->workers[0]);	/* asleep in --idle wait */
	pfd.fd = done_fd;
	pfd.events = POLLIN;
	while (!atomic_load_explicit(&c->done, memory_order_acquire)) {
		/* the worker stopped before taking it: nothing will run it now */
		if (atomic_load(&d->worker_gone))
			return;
		if (done_fd < 0) {
			sched_yield();
			continue;
		}
		/* a token left by an earlier call costs one more turn, no more */
		if (poll(&pfd, 1, 100) > 0 && read(done_fd, &v, sizeof(v)) < 0)
			continue;
	}
}

/* Worker 0: run the pending calls, a few at most, the other workers parked. */
static enum droced_mail
mailbox_run(struct droced *d)
{
	void *calls[MAILBOX_BURST];
	unsigned int n = rte_ring_sc_dequeue_burst(d->mailbox, calls, MAILBOX_BURST, NULL), i;
	enum droced_mail mail = DROCED_MAIL_NONE;
	static const uint64_t one = 1;

	if (n == 0)
		return DROCED_MAIL_NONE;
	droced_workers_pause(d);	/* the calls change what every engine reads */
	for (i = 0; i < n; i++) {
		struct droced_call *c = calls[i];
		int fd = c->done_fd;
		bool quiet = c->quiet;

		c->fn(c);
		/* c may be gone once done is set: its fd and kind were read before */
		atomic_store_explicit(&c->done, 1, memory_order_release);
		if (quiet && mail == DROCED_MAIL_NONE)
			mail = DROCED_MAIL_QUIET;
		else if (!quiet)
			mail = DROCED_MAIL_ACTIVE;
		if (fd >= 0 && write(fd, &one, sizeof(one)) != sizeof(one))
			continue;	/* the caller sees done at its next poll timeout */
	}
	droced_workers_resume(d);
	return mail;
}

/* ---- one pass ---- */

/*
 * What may have come for the worker: calls (worker 0), doorbells, frames
 * from its queue and from the others. A pass starts with it, and a wait
 * ends with it before it sleeps (what came before the flags were up
 * raised no wake-up).
 */
static unsigned int
worker_take_in(struct droced_worker *w, uint64_t now, enum droced_mail *mail)
{
	unsigned int work = 0;

	*mail = DROCED_MAIL_NONE;
	if (w->id == 0) {
		/*
		 * A client's request is a conversation (a perftest server binds,
		 * listens, ... while its peer's REQ is on the way): the next one
		 * must not wait out a nap. sysfs' snapshot, once a second, is no
		 * traffic and must not keep the idle modes from their deep naps.
		 */
		*mail = mailbox_run(w->d);
		work += *mail == DROCED_MAIL_ACTIVE;
	}
	work += droce_engine_doorbells(w->eng, now);
	work += droced_port_rx(w, now);
	work += droced_port_handoff_take(w, now);
	return work;
}

/* @return work done; sets *mail (worker 0: what its mailbox ran). */
static unsigned int
worker_pass(struct droced_worker *w, uint64_t now, enum droced_mail *mail)
{
	struct droced *d = w->d;
	unsigned int work = worker_take_in(w, now, mail);

	work += droce_engine_poll(w->eng, now);
	if (w->id == 0) {
		work += droced_cm_poll(d, now);
		droced_port_watch(d, now);
	}
	droced_port_flush(w);
	return work;
}

/* ---- parking around control calls ---- */

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

/* Around a nap or sleep that touches nothing of its engine: parked meanwhile. */
static void
worker_idle_begin(struct droced_worker *w)
{
	if (w->id != 0)
		atomic_store(&w->parked, true);
}

static void
worker_idle_end(struct droced_worker *w)
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
				droced_worker_kick(w);
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

/* ---- --idle wait ---- */

static int
wait_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int
droced_wait_init(struct droced *d, struct droce_dev_conf *conf)
{
	unsigned int i;

	d->wait_port_fd = -1;
	if (d->opts.idle != DROCE_IDLE_WAIT)
		return 0;
	for (i = 0; i < d->n_workers; i++) {
		struct droced_worker *w = &d->workers[i];

		w->wait_epfd = epoll_create1(EPOLL_CLOEXEC);
		w->wait_kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->wait_epfd < 0 || w->wait_kick_fd < 0 || wait_add(w->wait_epfd, w->wait_kick_fd) < 0)
			goto fail;
		conf->wait_epfd[i] = w->wait_epfd;
	}
	/* worker 0 wakes on the port and wakes the others: their queues may have frames too */
	d->wait_port_fd = droced_port_wait_open(d);
	if (d->wait_port_fd >= 0 && wait_add(d->workers[0].wait_epfd, d->wait_port_fd) < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "droced: --idle wait: %s\n", strerror(errno));
	return -1;
}

const char *const droced_wait_counter_name[DROCED_WAIT_CNT_COUNT] = {
#define C(sym, name) name,
	DROCED_WAIT_COUNTERS(C)
#undef C
};

/* Empty what woke us, so that the level-triggered set sleeps again. */
static void
wait_drain(struct droced_worker *w, const struct epoll_event *ev, int n)
{
	struct droced *d = w->d;
	uint64_t v;
	unsigned int k;
	int i;

	for (i = 0; i < n; i++) {
		int fd = ev[i].data.fd;

		if (fd == d->wait_port_fd) {
			w->wait_cnt[DROCED_WAIT_PORT]++;
			droced_port_wait_drain(fd);
			for (k = 1; k < d->n_workers; k++)
				if (atomic_load_explicit(&d->workers[k].asleep, memory_order_relaxed))
					droced_worker_kick(&d->workers[k]);
			continue;
		}
		w->wait_cnt[fd == w->wait_kick_fd ? DROCED_WAIT_CTRL : DROCED_WAIT_CLIENT]++;
		(void)!read(fd, &v, sizeof(v));
	}
}

/* Sleep until work may have come for @p w (or its timers are due). */
static void
worker_wait(struct droced_worker *w, uint64_t now, uint64_t last_work)
{
	struct droced *d = w->d;
	struct epoll_event ev[DROCED_WAIT_EVENTS];
	uint64_t ns = droce_engine_wait_budget(w->eng, now), cap = DROCED_WAIT_MAX_NS;
	enum droced_mail mail;
	struct timespec ts;
	unsigned int work;
	int n;

	if (ns == 0) {
		sched_yield();
		return;
	}
	if (d->wait_port_fd < 0) {
		/* nothing says a frame came: sleep's schedule (yield, then naps) */
		unsigned int us = droce_idle_nap_us(now - last_work);

		if (us == 0) {
			sched_yield();
			return;
		}
		cap = 1000ull * us;
	}
	if (ns > cap)
		ns = cap;
	droce_engine_sleep(w->eng, true);
	atomic_store(&w->asleep, true);		/* seq_cst: the hand-off's pair (droced_port.c) */
	if (w->id == 0 && d->wait_port_fd >= 0)
		droced_port_wait_drain(d->wait_port_fd);
	work = worker_take_in(w, now, &mail);
	if (work == 0 && mail == DROCED_MAIL_NONE) {
		ts.tv_sec = (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		w->wait_cnt[DROCED_WAIT_SLEEPS]++;
		droced_port_flush(w);
		worker_idle_begin(w);
		n = epoll_pwait2(w->wait_epfd, ev, DROCED_WAIT_EVENTS, &ts, NULL);
		worker_idle_end(w);
		if (n > 0)
			wait_drain(w, ev, n);
		else if (n == 0)
			w->wait_cnt[DROCED_WAIT_TIMEOUT]++;
	}
	atomic_store(&w->asleep, false);
	droced_port_flush(w);
	droce_engine_sleep(w->eng, false);
}

void
droced_wait_close(struct droced *d)
{
	unsigned int i;

	if (d->wait_port_fd >= 0)
		close(d->wait_port_fd);
	for (i = 0; i < d->n_workers; i++) {
		if (d->workers[i].wait_kick_fd >= 0)
			close(d->workers[i].wait_kick_fd);
		if (d->workers[i].wait_epfd >= 0)
			close(d->workers[i].wait_epfd);
	}
}

/* ---- the loop ---- */

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
		if (worker_pass(w, now, &mail) > 0) {
			last_work = now;
			continue;
		}
		if (mail != DROCED_MAIL_NONE)
			continue;	/* sysfs' snapshot: no traffic, but no nap either */
		if (d->opts.idle == DROCE_IDLE_WAIT && now - last_work >= DROCE_IDLE_SPIN_NS) {
			worker_wait(w, now, last_work);
			continue;
		}
		/* a paced QP's next packet: sleep to it, woken on time (not a yield) */
		if (d->opts.idle == DROCE_IDLE_SLEEP || d->opts.idle == DROCE_IDLE_WAIT) {
			uint64_t ns = droce_engine_pace_wait(w->eng, now);

			if (ns > 0) {
				if (ns > PACE_SLEEP_MAX_NS)
					ns = PACE_SLEEP_MAX_NS;
				worker_idle_begin(w);
				nanosleep(&(struct timespec){ 0, (long)ns }, NULL);
				worker_idle_end(w);
				continue;
			}
		}
		/* napping it holds nothing: a control call need not wait for it */
		worker_idle_begin(w);
		if (d->opts.idle == DROCE_IDLE_WAIT)
			sched_yield();
		else
			droce_idle(d->opts.idle, now, last_work);
		worker_idle_end(w);
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
