/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Unit tests for lib/ctrl: one Suite, one TCase per topic (type names,
 * messages, malformed input, request/reply calls), over socketpairs. libc
 * and pthreads only. Check forks each test (CK_FORK=no to run under gdb).
 */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_ctrl.h"

void
tc_pair(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

unsigned int
tc_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;	/* includes ".", ".." and the DIR's own: constant */
}

int
tc_send_raw(int sock, const void *data, size_t len, const int *fds, unsigned int nfds)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)data, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * 16)];
		struct cmsghdr align;
	} cm;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	ck_assert_uint_le(nfds, 16);
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

int
tc_memfd(const char *text)
{
	int fd = memfd_create("test_ctrl", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	return fd;
}

bool
tc_same_file(int a, int b)
{
	struct stat sa, sb;

	ck_assert_int_eq(fstat(a, &sa), 0);
	ck_assert_int_eq(fstat(b, &sb), 0);
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static Suite *
ctrl_suite(void)
{
	Suite *s = suite_create("ctrl");

	suite_add_tcase(s, test_ctrl_names_tcase());
	suite_add_tcase(s, test_ctrl_msg_tcase());
	suite_add_tcase(s, test_ctrl_malformed_tcase());
	suite_add_tcase(s, test_ctrl_call_tcase());
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(ctrl_suite());
	int failed;

	/* a send to a closed peer must come back as -EPIPE, never kill us */
	signal(SIGPIPE, SIG_DFL);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
