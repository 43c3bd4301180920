/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The device's side of --idle wait: a worker with nothing to do sleeps in
 * epoll instead of polling. Each client gets an eventfd that its shim
 * writes after ringing a doorbell while the DB ring's flag says the engine
 * may be asleep (droce_shm_engine_asleep()); the timers bound the sleep.
 * The flag is a hint the client can overwrite: it only decides whether
 * that client's own doorbells wake us at once.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_dev_priv.h"

int
dev_client_wake_open(struct droce_client *cl, int *fd_out)
{
	int epfd = cl->dev->conf.wait_epfd;
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (epfd <= 0 || cl->wake_fd >= 0)
		return -EINVAL;
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ev.data.fd = fd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return -errno;
	}
	/* the control thread closes what it sent: the shim gets a copy */
	*fd_out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (*fd_out < 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
		close(fd);
		return -errno;
	}
	cl->wake_fd = fd;
	return 0;
}

void
dev_client_wake_close(struct droce_client *cl)
{
	if (cl->wake_fd < 0)
		return;
	/* the shim holds a copy of the file: leave the set explicitly */
	epoll_ctl(cl->dev->conf.wait_epfd, EPOLL_CTL_DEL, cl->wake_fd, NULL);
	close(cl->wake_fd);
	cl->wake_fd = -1;
}

void
droce_dev_sleep(struct droce_dev *dev, bool asleep)
{
	struct droce_client *cl;

	for (cl = dev->clients; cl != NULL; cl = cl->next)
		if (cl->db.r != NULL && cl->wake_fd >= 0)
			droce_shm_engine_sleep(cl->db.r, asleep);
	if (asleep)
		droce_shm_sleep_fence();
}

uint64_t
droce_dev_wait_budget(const struct droce_dev *dev, uint64_t now)
{
	uint64_t deadline = UINT64_MAX;
	uint32_t i;

	if (dev->n_active > 0 || dev->loop_head != dev->loop_tail)
		return 0;
	for (i = 0; i < dev->n_live; i++) {
		const struct dev_qp *qp = dev->live[i];
		uint64_t t;

		/* a post whose doorbell was lost (full DB ring) is found by the timer scan */
		if (droce_shm_load_prod(qp->sq.r) != qp->sq.idx)
			t = now;
		else
			t = droce_tqp_next_deadline(&qp->tqp);
		if (t < deadline)
			deadline = t;
	}
	if (deadline == UINT64_MAX)
		return deadline;
	/* timers run in the scan, at most once per DEV_TIMER_NS */
	if (deadline < dev->next_timer)
		deadline = dev->next_timer;
	return deadline > now ? deadline - now : 0;
}
