/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce's librdmacm has no rsocket (doc/cm.md): every rsocket call must
 * fail at once with ENOSYS, as its contract returns errors (-1, or 0 for
 * riowrite), never pretend, block or crash; rpoll and rselect pass
 * ordinary fds through to poll() and select(). Linked against the system's
 * librdmacm and run through droce-run, so that droce's is the one loaded
 * (the test checks that it is: a real rsocket() would not say ENOSYS).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <netinet/in.h>
#include <rdma/rsocket.h>

static int failures;

static void
check(const char *name, long ret, long want)
{
	if (ret == want && errno == ENOSYS) {
		printf("ok   %s: %ld, ENOSYS\n", name, ret);
		return;
	}
	printf("FAIL %s: %ld, errno %d (%s)\n", name, ret, errno, strerror(errno));
	failures++;
}

#define EXPECT(call, want) do { errno = 0; check(#call, (long)(call), (want)); } while (0)

int
main(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(7471) };
	socklen_t len = sizeof(sa);
	char buf[16] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int one = 1, fds[2];
	struct pollfd pfd;
	fd_set rd;
	struct timeval tv = { 0, 0 };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	EXPECT(rsocket(AF_INET, SOCK_STREAM, 0), -1);
	EXPECT(rbind(3, (struct sockaddr *)&sa, len), -1);
	EXPECT(rlisten(3, 1), -1);
	EXPECT(raccept(3, (struct sockaddr *)&sa, &len), -1);
	EXPECT(rconnect(3, (struct sockaddr *)&sa, len), -1);
	EXPECT(rshutdown(3, SHUT_RDWR), -1);
	EXPECT(rclose(3), -1);
	EXPECT(rrecv(3, buf, sizeof(buf), 0), -1);
	EXPECT(rrecvfrom(3, buf, sizeof(buf), 0, (struct sockaddr *)&sa, &len), -1);
	EXPECT(rrecvmsg(3, &msg, 0), -1);
	EXPECT(rsend(3, buf, sizeof(buf), 0), -1);
	EXPECT(rsendto(3, buf, sizeof(buf), 0, (struct sockaddr *)&sa, len), -1);
	EXPECT(rsendmsg(3, &msg, 0), -1);
	EXPECT(rread(3, buf, sizeof(buf)), -1);
	EXPECT(rreadv(3, &iov, 1), -1);
	EXPECT(rwrite(3, buf, sizeof(buf)), -1);
	EXPECT(rwritev(3, &iov, 1), -1);
	EXPECT(rgetpeername(3, (struct sockaddr *)&sa, &len), -1);
	EXPECT(rgetsockname(3, (struct sockaddr *)&sa, &len), -1);
	EXPECT(rsetsockopt(3, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), -1);
	EXPECT(rgetsockopt(3, SOL_SOCKET, SO_REUSEADDR, &one, &len), -1);
	EXPECT(rfcntl(3, F_GETFL), -1);
	EXPECT(riomap(3, buf, sizeof(buf), PROT_WRITE, 0, -1), -1);
	EXPECT(riounmap(3, buf, sizeof(buf)), -1);
	EXPECT(riowrite(3, buf, sizeof(buf), 0, 0), 0);

	/* an ordinary fd through rpoll and rselect: a pipe with data is readable */
	if (pipe(fds) != 0 || write(fds[1], "x", 1) != 1)
		return 1;
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (rpoll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN)) {
		printf("ok   rpoll: an ordinary fd polled\n");
	} else {
		printf("FAIL rpoll on a readable pipe\n");
		failures++;
	}
	FD_ZERO(&rd);
	FD_SET(fds[0], &rd);
	if (rselect(fds[0] + 1, &rd, NULL, NULL, &tv) == 1 && FD_ISSET(fds[0], &rd)) {
		printf("ok   rselect: an ordinary fd selected\n");
	} else {
		printf("FAIL rselect on a readable pipe\n");
		failures++;
	}
	return failures != 0;
}
