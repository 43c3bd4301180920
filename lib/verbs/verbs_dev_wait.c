/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The device's side of --idle wait: each client gets an eventfd per engine,
 * in that worker's epoll set, that its shim writes after ringing a doorbell
 * on that engine's DB ring while the ring's flag says the engine may be
 * asleep (verbs_engine_wait.c).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_dev_priv.h"

/* Each engine's eventfd, in that engine's epoll set. */
int
dev_client_wake_open(struct droce_client *cl, int *fds_out)
{
	struct droce_dev *dev = cl->dev;
	unsigned int k;
	int ret;

	if (dev->conf.wait_epfd[0] <= 0 || cl->wake_fd[0] >= 0)
		return -EINVAL;
	for (k = 0; k < dev->n_eng; k++) {
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

		if (fd < 0) {
			ret = -errno;
			goto fail;
		}
		/* the control thread closes what it sent: the shim gets a copy */
		fds_out[k] = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (fds_out[k] < 0) {
			ret = -errno;
			close(fd);
			goto fail;
		}
		cl->wake_fd[k] = fd;
		ev.data.fd = fd;
		/* on failure its doorbells wake nobody: the engine's naps still find them */
		(void)epoll_ctl(dev->conf.wait_epfd[k], EPOLL_CTL_ADD, fd, &ev);
	}
	return 0;
fail:
	while (k-- > 0)
		close(fds_out[k]);
	dev_client_wake_close(cl);
	return ret;
}

void
dev_client_wake_close(struct droce_client *cl)
{
	unsigned int k;

	for (k = 0; k < DEV_MAX_ENGINES; k++) {
		if (cl->wake_fd[k] < 0)
			continue;
		/* the shim holds a copy of the file: leave the set explicitly */
		epoll_ctl(cl->dev->conf.wait_epfd[k], EPOLL_CTL_DEL, cl->wake_fd[k], NULL);
		close(cl->wake_fd[k]);
		cl->wake_fd[k] = -1;
	}
}
