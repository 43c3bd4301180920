/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The device's side of --idle wait: each client gets an eventfd, in the
 * worker's epoll set, that its shim writes after ringing a doorbell while
 * the DB ring's flag says the engine may be asleep (verbs_engine_wait.c).
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
	int fd;

	if (cl->dev->conf.wait_epfd[0] <= 0 || cl->wake_fd >= 0)
		return -EINVAL;
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the control thread closes what it sent: the shim gets a copy */
	*fd_out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (*fd_out < 0) {
		close(fd);
		return -errno;
	}
	cl->wake_fd = fd;
	if (cl->eng != NULL)
		dev_client_wake_join(cl);
	return 0;
}

void
dev_client_wake_join(struct droce_client *cl)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (cl->wake_fd < 0)
		return;
	ev.data.fd = cl->wake_fd;
	/* on failure its doorbells wake nobody: the engine's naps still find them */
	(void)epoll_ctl(cl->dev->conf.wait_epfd[engine_id(cl->eng)], EPOLL_CTL_ADD, cl->wake_fd,
			&ev);
}

void
dev_client_wake_close(struct droce_client *cl)
{
	if (cl->wake_fd < 0)
		return;
	/* the shim holds a copy of the file: leave the set explicitly */
	if (cl->eng != NULL)
		epoll_ctl(cl->dev->conf.wait_epfd[engine_id(cl->eng)], EPOLL_CTL_DEL, cl->wake_fd,
			  NULL);
	close(cl->wake_fd);
	cl->wake_fd = -1;
}
