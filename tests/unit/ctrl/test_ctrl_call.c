/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_ctrl_call(): a request and its reply against a scripted daemon on
 * the other end of a socketpair (a thread). It returns 0 with the body and
 * descriptors, the daemon's errno, or a positive errno for a transport
 * failure, and whenever it does not return 0 no reply descriptor is open.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_ctrl.h"

enum answer {
	ANS_OK,			/* the reply body and one memfd */
	ANS_STATUS,		/* status ENOMEM, and (wrongly) a memfd */
	ANS_NEG_STATUS,		/* status -1 */
	ANS_WRONG_SEQ,
	ANS_WRONG_TYPE,
	ANS_SHORT,		/* one byte less than the reply struct */
	ANS_LONG,
	ANS_BAD_VERSION,	/* framing error, with a memfd */
	ANS_HANG_UP,		/* close without answering */
};

struct daemon {
	int sock;
	enum answer ans;
	/* what it received */
	struct droce_ctrl_hdr hdr;
	struct droce_ctrl_query_gid_req req;
	int req_len;
	unsigned int nfds;
	bool fd_ok;		/* the request's descriptor was the client's memfd */
};

static void *
daemon_thread(void *arg)
{
	struct daemon *d = arg;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	struct droce_ctrl_query_gid_rep rep = { .gid_type = 2, .valid = 1 };
	int fds[DROCE_CTRL_MAX_FDS], mfd, i;
	uint32_t seq;
	uint16_t type;
	char text[8] = { 0 };

	d->req_len = droce_ctrl_recv(d->sock, &d->hdr, buf, fds, &d->nfds);
	if (d->req_len < 0)
		return NULL;
	memcpy(&d->req, buf, sizeof(d->req));
	if (d->nfds == 1)
		d->fd_ok = pread(fds[0], text, 7, 0) == 7 && strcmp(text, "request") == 0;
	for (i = 0; i < (int)d->nfds; i++)
		close(fds[i]);

	for (i = 0; i < 16; i++)
		rep.gid.raw[i] = (uint8_t)(0xf0 + i);
	seq = d->hdr.seq;
	type = d->hdr.type;
	mfd = tc_memfd("reply");
	switch (d->ans) {
	case ANS_OK:
		droce_ctrl_send(d->sock, type, seq, 0, &rep, sizeof(rep), &mfd, 1);
		break;
	case ANS_STATUS:
		droce_ctrl_send(d->sock, type, seq, ENOMEM, NULL, 0, &mfd, 1);
		break;
	case ANS_NEG_STATUS:
		droce_ctrl_send(d->sock, type, seq, -1, NULL, 0, NULL, 0);
		break;
	case ANS_WRONG_SEQ:
		droce_ctrl_send(d->sock, type, seq + 1, 0, &rep, sizeof(rep), &mfd, 1);
		break;
	case ANS_WRONG_TYPE:
		droce_ctrl_send(d->sock, type + 1, seq, 0, &rep, sizeof(rep), &mfd, 1);
		break;
	case ANS_SHORT:
		droce_ctrl_send(d->sock, type, seq, 0, &rep, sizeof(rep) - 1, &mfd, 1);
		break;
	case ANS_LONG:
		droce_ctrl_send(d->sock, type, seq, 0, buf, sizeof(rep) + 1, &mfd, 1);
		break;
	case ANS_BAD_VERSION: {
		struct droce_ctrl_hdr h = { .version = 7, .type = type, .seq = seq };

		tc_send_raw(d->sock, &h, sizeof(h), &mfd, 1);
		break;
	}
	case ANS_HANG_UP:
		shutdown(d->sock, SHUT_RDWR);
		break;
	}
	close(mfd);
	return NULL;
}

/* Run one call against a daemon answering @p ans. */
static int
call(enum answer ans, struct daemon *d, struct droce_ctrl_query_gid_rep *rep, int *rep_fds,
     unsigned int *rep_nfds)
{
	struct droce_ctrl_query_gid_req req = { .port_num = 1, .index = 3 };
	int sv[2], mfd = tc_memfd("request"), ret;
	pthread_t t;

	tc_pair(sv);
	memset(d, 0, sizeof(*d));
	d->sock = sv[1];
	d->ans = ans;
	ck_assert_int_eq(pthread_create(&t, NULL, daemon_thread, d), 0);
	ret = droce_ctrl_call(sv[0], DROCE_CTRL_QUERY_GID, &req, sizeof(req), &mfd, 1, rep,
			      sizeof(*rep), rep_fds, rep_nfds);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	close(mfd);
	close(sv[0]);
	close(sv[1]);
	return ret;
}

START_TEST(test_call_returns_body_and_fd)
{
	struct droce_ctrl_query_gid_rep rep;
	struct daemon d;
	int fds[DROCE_CTRL_MAX_FDS];
	unsigned int n = 99;
	char text[8] = { 0 };

	ck_assert_int_eq(call(ANS_OK, &d, &rep, fds, &n), 0);
	/* the daemon got the request as sent */
	ck_assert_int_eq(d.req_len, (int)sizeof(d.req));
	ck_assert_uint_eq(d.hdr.type, DROCE_CTRL_QUERY_GID);
	ck_assert_uint_ne(d.hdr.seq, 0);
	ck_assert_int_eq(d.hdr.status, 0);
	ck_assert_uint_eq(d.req.port_num, 1);
	ck_assert_uint_eq(d.req.index, 3);
	ck_assert_uint_eq(d.nfds, 1);
	ck_assert(d.fd_ok);
	/* and we got its reply */
	ck_assert_uint_eq(rep.gid_type, 2);
	ck_assert_uint_eq(rep.valid, 1);
	ck_assert_uint_eq(rep.gid.raw[15], 0xff);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_ge(fds[0], 0);
	ck_assert_int_eq(fds[1], -1);
	ck_assert_int_eq(fds[2], -1);
	ck_assert_int_eq(pread(fds[0], text, 5, 0), 5);
	ck_assert_str_eq(text, "reply");
	close(fds[0]);
}
END_TEST

START_TEST(test_call_sequence_numbers_differ)
{
	struct droce_ctrl_query_gid_rep rep;
	struct daemon d;
	uint32_t first;

	ck_assert_int_eq(call(ANS_OK, &d, &rep, NULL, NULL), 0);
	first = d.hdr.seq;
	ck_assert_int_eq(call(ANS_OK, &d, &rep, NULL, NULL), 0);
	ck_assert_uint_ne(d.hdr.seq, first);
}
END_TEST

START_TEST(test_call_without_fd_array_closes_reply_fds)
{
	struct droce_ctrl_query_gid_rep rep;
	struct daemon d;
	unsigned int before = tc_open_fds();

	ck_assert_int_eq(call(ANS_OK, &d, &rep, NULL, NULL), 0);
	ck_assert_uint_eq(tc_open_fds(), before);
}
END_TEST

/* Each failing answer: its errno, and no descriptor left behind. */
static const struct {
	enum answer ans;
	int want;
} failing[] = {
	{ ANS_STATUS, ENOMEM },
	{ ANS_NEG_STATUS, EPROTO },
	{ ANS_WRONG_SEQ, EPROTO },
	{ ANS_WRONG_TYPE, EPROTO },
	{ ANS_SHORT, EPROTO },
	{ ANS_LONG, EPROTO },
	{ ANS_BAD_VERSION, EPROTO },
	{ ANS_HANG_UP, ECONNRESET },
};

START_TEST(test_call_failures_leave_no_fd_open)	/* once per failing answer _i */
{
	struct droce_ctrl_query_gid_rep rep;
	struct daemon d;
	int fds[DROCE_CTRL_MAX_FDS] = { 5, 5, 5 };
	unsigned int n = 99, before = tc_open_fds();

	ck_assert_int_eq(call(failing[_i].ans, &d, &rep, fds, &n), failing[_i].want);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(fds[0], -1);
	ck_assert_int_eq(fds[1], -1);
	ck_assert_int_eq(fds[2], -1);
	ck_assert_uint_eq(tc_open_fds(), before);
}
END_TEST

START_TEST(test_call_to_closed_daemon_is_epipe)
{
	struct droce_ctrl_query_gid_req req = { 0 };
	struct droce_ctrl_query_gid_rep rep;
	int sv[2], fds[DROCE_CTRL_MAX_FDS];
	unsigned int n;

	tc_pair(sv);
	close(sv[1]);
	ck_assert_int_eq(droce_ctrl_call(sv[0], DROCE_CTRL_QUERY_GID, &req, sizeof(req), NULL, 0,
					 &rep, sizeof(rep), fds, &n), EPIPE);
	ck_assert_int_eq(fds[0], -1);
}
END_TEST

START_TEST(test_call_with_oversized_request_sends_nothing)
{
	static uint8_t big[DROCE_CTRL_MAX_BODY + 1];
	int sv[2], fds[DROCE_CTRL_MAX_FDS] = { 0, 1, 2 };
	uint8_t probe;

	tc_pair(sv);
	ck_assert_int_eq(droce_ctrl_call(sv[0], DROCE_CTRL_REG_MR, big, sizeof(big), NULL, 0,
					 NULL, 0, NULL, NULL), EMSGSIZE);
	ck_assert_int_eq(droce_ctrl_call(sv[0], DROCE_CTRL_REG_MR, big, 4, fds,
					 DROCE_CTRL_MAX_FDS + 1, NULL, 0, NULL, NULL), EINVAL);
	/* a reply buffer larger than any reply, or missing, is the caller's bug */
	ck_assert_int_eq(droce_ctrl_call(sv[0], DROCE_CTRL_REG_MR, big, 4, NULL, 0, big,
					 sizeof(big), NULL, NULL), EINVAL);
	ck_assert_int_eq(droce_ctrl_call(sv[0], DROCE_CTRL_REG_MR, big, 4, NULL, 0, NULL, 4,
					 NULL, NULL), EINVAL);
	ck_assert_int_eq(recv(sv[1], &probe, 1, MSG_DONTWAIT), -1);
	ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

TCase *
test_ctrl_call_tcase(void)
{
	TCase *tc = tcase_create("call");

	tcase_add_test(tc, test_call_returns_body_and_fd);
	tcase_add_test(tc, test_call_sequence_numbers_differ);
	tcase_add_test(tc, test_call_without_fd_array_closes_reply_fds);
	tcase_add_loop_test(tc, test_call_failures_leave_no_fd_open, 0, (int)DROCE_DIM(failing));
	tcase_add_test(tc, test_call_to_closed_daemon_is_epipe);
	tcase_add_test(tc, test_call_with_oversized_request_sends_nothing);
	return tc;
}
