/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_ctrl_send() and droce_ctrl_recv(): message type names, round trips
 * (header, body, descriptors that really are the sender's files), and every
 * malformed datagram a peer can send, each of which must come back as
 * -EPROTO with no received descriptor left open.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test_ctrl.h"

/* ---- names ---- */

static const char *const expect_name[] = {
	"NONE",
#define M(sym) #sym,
	DROCE_CTRL_MSGS(M)
#undef M
};

START_TEST(test_type_name_covers_every_type)	/* once per type _i */
{
	const char *n = droce_ctrl_type_name((uint32_t)_i);
	uint32_t j;

	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(n, expect_name[_i]);
	ck_assert_str_ne(n, "UNKNOWN");
	for (j = 0; j < DROCE_CTRL_TYPE_COUNT; j++)	/* names tell types apart */
		if (j != (uint32_t)_i)
			ck_assert_str_ne(n, droce_ctrl_type_name(j));
}
END_TEST

START_TEST(test_type_values_are_stable)
{
	/* values are ABI between shim and daemon: add at the end only */
	ck_assert_int_eq(DROCE_CTRL_HELLO, 1);
	ck_assert_int_eq(DROCE_CTRL_REG_MR, 7);
	ck_assert_int_eq(DROCE_CTRL_CREATE_QP, 17);
	ck_assert_int_eq(DROCE_CTRL_REREG_MR, 25);
	ck_assert_str_eq(droce_ctrl_type_name(DROCE_CTRL_CREATE_QP), "CREATE_QP");
	ck_assert_uint_eq(DROCE_DIM(expect_name), DROCE_CTRL_TYPE_COUNT);
}
END_TEST

START_TEST(test_type_name_of_unknown_values)
{
	ck_assert_str_eq(droce_ctrl_type_name(DROCE_CTRL_TYPE_COUNT), "UNKNOWN");
	ck_assert_str_eq(droce_ctrl_type_name(0xffff), "UNKNOWN");
	ck_assert_str_eq(droce_ctrl_type_name(UINT32_MAX), "UNKNOWN");
}
END_TEST

TCase *
test_ctrl_names_tcase(void)
{
	TCase *tc = tcase_create("names");

	tcase_add_loop_test(tc, test_type_name_covers_every_type, 0, DROCE_CTRL_TYPE_COUNT);
	tcase_add_test(tc, test_type_values_are_stable);
	tcase_add_test(tc, test_type_name_of_unknown_values);
	return tc;
}

/* ---- round trips ---- */

START_TEST(test_message_with_body_and_two_fds_round_trips)
{
	struct droce_ctrl_reg_mr_req req = {
		.pd_handle = 3, .access = 7, .addr = 0x7f0012345000, .length = 1 << 20,
		.iova = 0x1000, .fd_offset = 0x5000,
	};
	struct droce_ctrl_hdr hdr;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	int sv[2], pipefd[2], fds[2], got[DROCE_CTRL_MAX_FDS];
	unsigned int n = 99;
	char text[16] = { 0 };

	tc_pair(sv);
	fds[0] = tc_memfd("memfd text");
	ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
	fds[1] = pipefd[1];

	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_REG_MR, 0x01020304, -5, &req,
					 sizeof(req), fds, 2), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), (int)sizeof(req));
	ck_assert_uint_eq(hdr.version, DROCE_CTRL_VERSION);
	ck_assert_uint_eq(hdr.type, DROCE_CTRL_REG_MR);
	ck_assert_uint_eq(hdr.seq, 0x01020304);
	ck_assert_int_eq(hdr.status, -5);	/* carried as is; call() judges it */
	ck_assert_uint_eq(hdr.len, sizeof(req));
	ck_assert_mem_eq(buf, &req, sizeof(req));
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(got[2], -1);

	/* new descriptors, close-on-exec, for the very same files */
	ck_assert_int_ne(got[0], fds[0]);
	ck_assert_int_ne(got[1], fds[1]);
	ck_assert(fcntl(got[0], F_GETFD) & FD_CLOEXEC);
	ck_assert(fcntl(got[1], F_GETFD) & FD_CLOEXEC);
	ck_assert(tc_same_file(got[0], fds[0]));
	ck_assert(tc_same_file(got[1], fds[1]));
	/* memfd: written through the sender's, read through the received one */
	ck_assert_int_eq(pread(got[0], text, sizeof(text) - 1, 0), 10);
	ck_assert_str_eq(text, "memfd text");
	/* and the other way round */
	ck_assert_int_eq(pwrite(got[0], "MEMFD", 5, 0), 5);
	memset(text, 0, sizeof(text));
	ck_assert_int_eq(pread(fds[0], text, sizeof(text) - 1, 0), 10);
	ck_assert_str_eq(text, "MEMFD text");
	/* pipe: the received write end feeds the sender's read end */
	ck_assert_int_eq(write(got[1], "via pipe", 8), 8);
	memset(text, 0, sizeof(text));
	ck_assert_int_eq(read(pipefd[0], text, sizeof(text)), 8);
	ck_assert_str_eq(text, "via pipe");
}
END_TEST

START_TEST(test_message_without_body_or_fds)
{
	struct droce_ctrl_hdr hdr;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	int sv[2], got[DROCE_CTRL_MAX_FDS] = { 5, 5, 5 };
	unsigned int n = 99;

	tc_pair(sv);
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_ALLOC_PD, 1, 0, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), 0);
	ck_assert_uint_eq(hdr.type, DROCE_CTRL_ALLOC_PD);
	ck_assert_uint_eq(hdr.len, 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(got[0], -1);
	ck_assert_int_eq(got[1], -1);
	ck_assert_int_eq(got[2], -1);
}
END_TEST

START_TEST(test_largest_body_round_trips_and_one_more_byte_is_emsgsize)
{
	static uint8_t body[DROCE_CTRL_MAX_BODY + 1], buf[DROCE_CTRL_MAX_MSG];
	struct droce_ctrl_hdr hdr;
	int sv[2], got[DROCE_CTRL_MAX_FDS], fds[DROCE_CTRL_MAX_FDS];
	unsigned int n, i;

	ck_assert_uint_eq(DROCE_CTRL_MAX_BODY + sizeof(hdr), DROCE_CTRL_MAX_MSG);
	for (i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 7);
	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
		fds[i] = tc_memfd("x");
	tc_pair(sv);

	/* the most the protocol allows: whole body and DROCE_CTRL_MAX_FDS fds */
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_QUERY_DEVICE, 2, 0, body,
					 DROCE_CTRL_MAX_BODY, fds, DROCE_CTRL_MAX_FDS), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), DROCE_CTRL_MAX_BODY);
	ck_assert_mem_eq(buf, body, DROCE_CTRL_MAX_BODY);
	ck_assert_uint_eq(n, DROCE_CTRL_MAX_FDS);
	for (i = 0; i < n; i++)
		ck_assert(tc_same_file(got[i], fds[i]));

	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_QUERY_DEVICE, 3, 0, body,
					 DROCE_CTRL_MAX_BODY + 1, NULL, 0), -EMSGSIZE);
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_QUERY_DEVICE, 3, 0, body,
					 UINT32_MAX, NULL, 0), -EMSGSIZE);
}
END_TEST

START_TEST(test_send_refuses_too_many_fds_and_null_arrays)
{
	int sv[2], fds[DROCE_CTRL_MAX_FDS + 1];
	unsigned int i;

	for (i = 0; i < DROCE_DIM(fds); i++)
		fds[i] = tc_memfd("x");
	tc_pair(sv);
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_HELLO, 1, 0, NULL, 0, fds,
					 DROCE_CTRL_MAX_FDS + 1), -EINVAL);
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_HELLO, 1, 0, NULL, 0, NULL, 1),
			 -EINVAL);
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_HELLO, 1, 0, NULL, 4, NULL, 0),
			 -EINVAL);
	/* a bad descriptor is the kernel's to refuse */
	i = (unsigned int)-1;
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_HELLO, 1, 0, NULL, 0, (int *)&i, 1),
			 -EBADF);
	/* nothing was sent by any of these */
	ck_assert_int_eq(recv(sv[1], fds, sizeof(fds), MSG_DONTWAIT), -1);
	ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

START_TEST(test_peer_closed_is_econnreset_and_epipe)
{
	struct droce_ctrl_hdr hdr;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	int sv[2], got[DROCE_CTRL_MAX_FDS];
	unsigned int n;

	tc_pair(sv);
	/* a message already queued is still delivered, then end of file */
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_ALLOC_PD, 1, 0, NULL, 0, NULL, 0), 0);
	close(sv[0]);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), -ECONNRESET);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), -ECONNRESET);
	/* and sending to it: -EPIPE, with no SIGPIPE (SIG_DFL would kill this test) */
	ck_assert_int_eq(droce_ctrl_send(sv[1], DROCE_CTRL_ALLOC_PD, 1, 0, NULL, 0, NULL, 0),
			 -EPIPE);
}
END_TEST

START_TEST(test_recv_on_empty_nonblocking_socket_is_eagain)
{
	struct droce_ctrl_hdr hdr;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	int sv[2], got[DROCE_CTRL_MAX_FDS];
	unsigned int n;

	tc_pair(sv);
	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), -EAGAIN);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* EINTR: a signal without SA_RESTART lands while recv() waits. */

static void
on_usr1(int sig)
{
	(void)sig;
}

struct interrupter {
	pthread_t victim;
	int sock;
};

static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *
interrupt_then_send(void *arg)
{
	struct interrupter *it = arg;
	uint32_t body = 0xfeedface;

	sleep_ms(100);
	pthread_kill(it->victim, SIGUSR1);
	sleep_ms(100);
	pthread_kill(it->victim, SIGUSR1);
	sleep_ms(100);
	(void)droce_ctrl_send(it->sock, DROCE_CTRL_QUERY_PORT, 77, 0, &body, sizeof(body), NULL,
			      0);
	return NULL;
}

START_TEST(test_recv_retries_after_a_signal)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct droce_ctrl_hdr hdr;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	int sv[2], got[DROCE_CTRL_MAX_FDS];
	struct interrupter it;
	unsigned int n;
	pthread_t t;

	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	tc_pair(sv);
	it.victim = pthread_self();
	it.sock = sv[0];
	ck_assert_int_eq(pthread_create(&t, NULL, interrupt_then_send, &it), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), 4);
	ck_assert_uint_eq(hdr.seq, 77);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}
END_TEST

TCase *
test_ctrl_msg_tcase(void)
{
	TCase *tc = tcase_create("msg");

	tcase_add_test(tc, test_message_with_body_and_two_fds_round_trips);
	tcase_add_test(tc, test_message_without_body_or_fds);
	tcase_add_test(tc, test_largest_body_round_trips_and_one_more_byte_is_emsgsize);
	tcase_add_test(tc, test_send_refuses_too_many_fds_and_null_arrays);
	tcase_add_test(tc, test_peer_closed_is_econnreset_and_epipe);
	tcase_add_test(tc, test_recv_on_empty_nonblocking_socket_is_eagain);
	tcase_add_test(tc, test_recv_retries_after_a_signal);
	return tc;
}

/* ---- malformed datagrams ---- */

/*
 * Send @p len bytes of @p msg with @p nfds fresh memfds, expect -EPROTO,
 * and check that none of the received descriptors is left open and that
 * the next, well-formed message still comes through.
 */
static void
expect_malformed(const void *msg, size_t len, unsigned int nfds)
{
	static uint8_t buf[DROCE_CTRL_MAX_MSG];
	struct droce_ctrl_hdr hdr;
	int sv[2], fds[16], got[DROCE_CTRL_MAX_FDS] = { 5, 5, 5 };
	unsigned int n = 99, i, before;

	tc_pair(sv);
	for (i = 0; i < nfds; i++)
		fds[i] = tc_memfd("x");
	ck_assert_int_eq(tc_send_raw(sv[0], msg, len, fds, nfds), 0);
	before = tc_open_fds();

	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), -EPROTO);
	ck_assert_uint_eq(n, 0);
	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
		ck_assert_int_eq(got[i], -1);
	ck_assert_uint_eq(tc_open_fds(), before);	/* nothing installed stays open */

	/* the socket is still usable: one bad datagram, not a wedged stream */
	ck_assert_int_eq(droce_ctrl_send(sv[0], DROCE_CTRL_ALLOC_PD, 9, 0, NULL, 0, fds,
					 nfds < 1 ? 0 : 1), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), 0);
	ck_assert_uint_eq(hdr.seq, 9);
	ck_assert_uint_eq(n, nfds < 1 ? 0 : 1);
}

struct raw_msg {
	struct droce_ctrl_hdr hdr;
	uint8_t body[64];
};

static struct raw_msg
raw(uint16_t version, uint32_t len)
{
	struct raw_msg m = {
		.hdr = { .version = version, .type = DROCE_CTRL_QUERY_GID, .seq = 1, .len = len },
	};

	memset(m.body, 0x5a, sizeof(m.body));
	return m;
}

START_TEST(test_wrong_version_is_eproto)
{
	struct raw_msg m = raw(DROCE_CTRL_VERSION + 1, 8);

	expect_malformed(&m, sizeof(m.hdr) + 8, 0);
	expect_malformed(&m, sizeof(m.hdr) + 8, 2);	/* and its fds are closed */
	m = raw(0, 8);
	expect_malformed(&m, sizeof(m.hdr) + 8, 1);
}
END_TEST

START_TEST(test_len_disagreeing_with_datagram_is_eproto)
{
	struct raw_msg m = raw(DROCE_CTRL_VERSION, 9);	/* says 9, carries 8 */

	expect_malformed(&m, sizeof(m.hdr) + 8, 1);
	m = raw(DROCE_CTRL_VERSION, 7);			/* says 7, carries 8 */
	expect_malformed(&m, sizeof(m.hdr) + 8, 1);
	m = raw(DROCE_CTRL_VERSION, UINT32_MAX);
	expect_malformed(&m, sizeof(m.hdr) + 8, 0);
	m = raw(DROCE_CTRL_VERSION, 8);			/* header only, len 8 */
	expect_malformed(&m, sizeof(m.hdr), 0);
}
END_TEST

START_TEST(test_short_datagram_is_eproto)
{
	struct raw_msg m = raw(DROCE_CTRL_VERSION, 0);

	expect_malformed(&m, sizeof(m.hdr) - 1, 0);
	expect_malformed(&m, 2, 1);
	expect_malformed(&m, 0, 1);		/* empty, with a descriptor: not end of file */
}
END_TEST

START_TEST(test_too_many_fds_are_all_closed)
{
	struct raw_msg m = raw(DROCE_CTRL_VERSION, 4);

	expect_malformed(&m, sizeof(m.hdr) + 4, DROCE_CTRL_MAX_FDS + 1);
	/* more than fit the receive buffer: the kernel truncates (MSG_CTRUNC) */
	expect_malformed(&m, sizeof(m.hdr) + 4, 16);
}
END_TEST

START_TEST(test_truncated_message_is_eproto)
{
	static uint8_t big[DROCE_CTRL_MAX_MSG + 100];
	struct droce_ctrl_hdr *h = (struct droce_ctrl_hdr *)big;

	/* a consistent header, but a datagram larger than any message */
	*h = (struct droce_ctrl_hdr){ .version = DROCE_CTRL_VERSION, .type = DROCE_CTRL_HELLO,
				      .len = sizeof(big) - sizeof(*h) };
	expect_malformed(big, sizeof(big), 0);
	expect_malformed(big, sizeof(big), 2);
	/* one byte over is enough */
	h->len = DROCE_CTRL_MAX_BODY + 1;
	expect_malformed(big, DROCE_CTRL_MAX_MSG + 1, 0);
}
END_TEST

START_TEST(test_unknown_type_is_the_dispatchers_business)
{
	/* recv checks the framing, not the meaning: an unknown type arrives */
	struct raw_msg m = raw(DROCE_CTRL_VERSION, 0);
	struct droce_ctrl_hdr hdr;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	int sv[2], got[DROCE_CTRL_MAX_FDS];
	unsigned int n;

	m.hdr.type = 0xffff;
	tc_pair(sv);
	ck_assert_int_eq(tc_send_raw(sv[0], &m, sizeof(m.hdr), NULL, 0), 0);
	ck_assert_int_eq(droce_ctrl_recv(sv[1], &hdr, buf, got, &n), 0);
	ck_assert_uint_eq(hdr.type, 0xffff);
	ck_assert_str_eq(droce_ctrl_type_name(hdr.type), "UNKNOWN");
}
END_TEST

TCase *
test_ctrl_malformed_tcase(void)
{
	TCase *tc = tcase_create("malformed");

	tcase_add_test(tc, test_wrong_version_is_eproto);
	tcase_add_test(tc, test_len_disagreeing_with_datagram_is_eproto);
	tcase_add_test(tc, test_short_datagram_is_eproto);
	tcase_add_test(tc, test_too_many_fds_are_all_closed);
	tcase_add_test(tc, test_truncated_message_is_eproto);
	tcase_add_test(tc, test_unknown_type_is_the_dispatchers_business);
	return tc;
}
