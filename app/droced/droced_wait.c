/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * --idle wait: after DROCE_IDLE_SPIN_NS without work the worker sleeps in
 * epoll until something can have work for it, instead of timed naps:
 *
 *   - a client rang a doorbell (its wake eventfd, lib/verbs/verbs_dev_wait.c)
 *   - the control thread posted a request (our own eventfd)
 *   - a frame reached the port: on af_packet a packet socket of our own on
 *     the interface (DPDK 22.11's net_af_packet has no RX interrupt and
 *     keeps its socket private); other PMDs (memif, ring: no RX interrupt
 *     in 22.11 either) are looked at after SLEEP's naps
 *   - a transport timer is due (droce_engine_wait_budget()), or
 *     DROCED_WAIT_MAX_NS passed (CM timers, link watch, neighbour probes).
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "droced.h"

/* the longest sleep: the CM's and the port's timers run at this grain */
#define DROCED_WAIT_MAX_NS	(10ull * 1000 * 1000)
#define DROCED_WAIT_EVENTS	16

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

void
droced_wait_kick(struct droced_worker *w)
{
	uint64_t one = 1;

	if (w->wait_kick_fd >= 0)
		(void)!write(w->wait_kick_fd, &one, sizeof(one));
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
					droced_wait_kick(&d->workers[k]);
			continue;
		}
		w->wait_cnt[fd == w->wait_kick_fd ? DROCED_WAIT_CTRL : DROCED_WAIT_CLIENT]++;
		(void)!read(fd, &v, sizeof(v));
	}
}

void
droced_wait(struct droced_worker *w, uint64_t now, uint64_t last_work)
{
	struct droced *d = w->d;
	struct epoll_event ev[DROCED_WAIT_EVENTS];
	uint64_t ns = droce_engine_wait_budget(w->eng, now), cap = DROCED_WAIT_MAX_NS;
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
	atomic_store(&w->asleep, true);		/* seq_cst: droced_handoff()'s pair */
	if (w->id == 0 && d->wait_port_fd >= 0)
		droced_port_wait_drain(d->wait_port_fd);
	/* a last look: what came before the flags were up raised no wake-up */
	work = w->id == 0 && droced_worker_mailbox(d) != DROCED_MAIL_NONE;
	work += droce_engine_doorbells(w->eng, now);
	work += droced_port_rx(w, now);
	work += droced_handoff_take(w, now);
	if (work == 0) {
		ts.tv_sec = (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		w->wait_cnt[DROCED_WAIT_SLEEPS]++;
		droced_port_flush(w);
		droced_worker_idle_begin(w);
		n = epoll_pwait2(w->wait_epfd, ev, DROCED_WAIT_EVENTS, &ts, NULL);
		droced_worker_idle_end(w);
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
