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

int
droced_wait_init(struct droced *d, struct droce_dev_conf *conf)
{
	struct epoll_event ev = { .events = EPOLLIN };

	d->wait_epfd = -1;
	d->wait_ctrl_fd = -1;
	d->wait_port_fd = -1;
	if (d->opts.idle != DROCE_IDLE_WAIT)
		return 0;
	d->wait_epfd = epoll_create1(EPOLL_CLOEXEC);
	d->wait_ctrl_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wait_epfd < 0 || d->wait_ctrl_fd < 0)
		goto fail;
	ev.data.fd = d->wait_ctrl_fd;
	if (epoll_ctl(d->wait_epfd, EPOLL_CTL_ADD, d->wait_ctrl_fd, &ev) < 0)
		goto fail;
	d->wait_port_fd = droced_port_wait_open(d);
	if (d->wait_port_fd >= 0) {
		ev.data.fd = d->wait_port_fd;
		if (epoll_ctl(d->wait_epfd, EPOLL_CTL_ADD, d->wait_port_fd, &ev) < 0)
			goto fail;
	}
	conf->wait_epfd = d->wait_epfd;
	return 0;
fail:
	fprintf(stderr, "droced: --idle wait: %s\n", strerror(errno));
	return -1;
}

void
droced_wait_kick(struct droced *d)
{
	uint64_t one = 1;

	if (d->wait_ctrl_fd >= 0)
		(void)!write(d->wait_ctrl_fd, &one, sizeof(one));
}

const char *const droced_wait_counter_name[DROCED_WAIT_CNT_COUNT] = {
#define C(sym, name) name,
	DROCED_WAIT_COUNTERS(C)
#undef C
};

/* Empty what woke us, so that the level-triggered set sleeps again. */
static void
wait_drain(struct droced *d, const struct epoll_event *ev, int n)
{
	uint64_t v;
	int i;

	for (i = 0; i < n; i++) {
		int fd = ev[i].data.fd;

		if (fd == d->wait_port_fd) {
			d->wait_cnt[DROCED_WAIT_PORT]++;
			droced_port_wait_drain(fd);
			continue;
		}
		d->wait_cnt[fd == d->wait_ctrl_fd ? DROCED_WAIT_CTRL : DROCED_WAIT_CLIENT]++;
		(void)!read(fd, &v, sizeof(v));
	}
}

void
droced_wait(struct droced *d, uint64_t now, uint64_t last_work)
{
	struct epoll_event ev[DROCED_WAIT_EVENTS];
	uint64_t ns = droce_engine_wait_budget(d->eng, now), cap = DROCED_WAIT_MAX_NS;
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
	droce_engine_sleep(d->eng, true);
	if (d->wait_port_fd >= 0)
		droced_port_wait_drain(d->wait_port_fd);
	/* a last look: what came before the flags were up raised no wake-up */
	work = droced_worker_mailbox(d) != DROCED_MAIL_NONE;
	work += droce_engine_doorbells(d->eng, now);
	work += droced_port_rx(d, now);
	if (work == 0) {
		ts.tv_sec = (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		d->wait_cnt[DROCED_WAIT_SLEEPS]++;
		n = epoll_pwait2(d->wait_epfd, ev, DROCED_WAIT_EVENTS, &ts, NULL);
		if (n > 0)
			wait_drain(d, ev, n);
		else if (n == 0)
			d->wait_cnt[DROCED_WAIT_TIMEOUT]++;
	}
	droce_engine_sleep(d->eng, false);
}

void
droced_wait_close(struct droced *d)
{
	if (d->wait_port_fd >= 0)
		close(d->wait_port_fd);
	if (d->wait_ctrl_fd >= 0)
		close(d->wait_ctrl_fd);
	if (d->wait_epfd >= 0)
		close(d->wait_epfd);
}
