/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rpma_check: Debian's librpma, unmodified, across the namespace pair.
 *
 *   rpma_check server ADDR PORT [mixed:]FILE
 *   rpma_check client ADDR PORT [BENCH_SECONDS]
 *
 * The server maps FILE MAP_SHARED (librpma's "persistent memory" is such a
 * mapping), registers it for WRITE_DST, READ_SRC and both flush types, and
 * hands its descriptor and a peer configuration with direct write to pmem
 * on to the client in the private data of the connection's REP, as
 * librpma's examples do ("mixed:": with a private page after the file in
 * the same registration, which librpma then registers on demand). Then:
 *
 * 1. separate receive CQs on both sides (rpma_conn_cfg_set_rcq_size), the
 *    client's CQ and RCQ on one shared completion channel (rpma_conn_wait):
 *    rpma_write + rpma_flush VISIBILITY, rpma_write + rpma_flush PERSISTENT,
 *    two rpma_atomic_writes, rpma_read of everything back, rpma_send,
 *    rpma_send_with_imm, rpma_write_with_imm (RECV_RDMA_WITH_IMM on the
 *    server's RCQ) and a reply rpma_send_with_imm; then the 4 KiB and
 *    64 KiB rpma_write + rpma_flush loops, and a DONE message after which
 *    the server compares its whole memory, and the file read back with
 *    pread(2), with the image both sides compute, and says so.
 * 2. the server's receives on a shared receive queue (rpma_srq) with its
 *    own RCQ, the client's on its main CQ: rpma_send, rpma_send_with_imm,
 *    rpma_write_with_imm, each seen on the SRQ's RCQ with the connection's
 *    QP number, then the same comparison.
 *
 * Every completion's status, opcode, wr_id, length and immediate is
 * checked, and every byte of the server's memory. Exit 0 only if all of it
 * held; each check prints one "ok"/"FAIL" line.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <librpma.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The server's memory: one fixed layout both sides know. */
#define MEM_SIZE	(1u << 20)
#define W_VIS_OFF	0u		/* write + flush VISIBILITY */
#define W_VIS_LEN	(64u << 10)
#define W_PERS_OFF	(64u << 10)	/* write + flush PERSISTENT */
#define W_PERS_LEN	(64u << 10)
#define ATOMIC_OFF	(128u << 10)	/* two 8-byte atomic writes */
#define SRC_OFF		(192u << 10)	/* filled by the server, READ by the client */
#define SRC_LEN		(64u << 10)
#define IMM_OFF		(256u << 10)	/* write_with_imm, connection 1 */
#define IMM_LEN		(16u << 10)
#define SRQ_IMM_OFF	(272u << 10)	/* write_with_imm, connection 2 */
#define SRQ_IMM_LEN	(4u << 10)
#define BENCH_OFF	(512u << 10)	/* the write + flush loops' slots */
#define BENCH_LEN	(512u << 10)
#define READ_LEN	(SRQ_IMM_OFF)	/* what the client reads back */

#define SEND_LEN	1000u
#define SEND_IMM_LEN	500u
#define REPLY_LEN	300u
#define SRQ_SEND_LEN	2000u
#define SRQ_IMM_SEND_LEN 100u
#define MSG_SLOT	4096u		/* one receive buffer */
#define MSG_SLOTS	8u
#define VERDICT_LEN	64u

#define IMM_SEND	0x12345678u
#define IMM_WRITE	0xa1b2c3d4u
#define IMM_REPLY	0xcafef00du
#define IMM_SRQ_SEND	0x0badcafeu
#define IMM_SRQ_WRITE	0xfeedbeefu

static const char atomic_1[8] = "ATOMIC-1";
static const char atomic_2[8] = "atomic-2";
/* The client's private data in its REQ: who it is, and which connection. */
struct hello {
	char text[18];
	uint8_t index;
};
static const char hello_text[18] = "rpma_check client";

#define MULTI		3		/* connections at once on one SRQ */
#define MULTI_SEND_LEN	256u
#define MULTI_IMM_LEN	64u
#define MULTI_REPLY_LEN	128u
#define IMM_MULTI	0x5eed0000u

static int fails;

static void
verdict(bool good, const char *what)
{
	printf("%s %s\n", good ? "ok  " : "FAIL", what);
	fflush(stdout);
	if (!good)
		fails++;
}

static void
die(const char *what, int ret)
{
	fprintf(stderr, "FAIL %s: %s (%d)\n", what, rpma_err_2str(ret), ret);
	exit(1);
}

#define CHECK(call) do { int ret_ = (call); if (ret_) die(#call, ret_); } while (0)

/* A byte pattern no two seeds share at any offset. */
static void
fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131u + (i >> 9) * 7u + seed * 29u + 1u) ^ (seed << 4));
}

/* The server's memory as it must be after connection 1 (and 2, if srq). */
static void
expected_image(uint8_t *img, bool srq)
{
	memset(img, 0, MEM_SIZE);
	fill(img + W_VIS_OFF, W_VIS_LEN, 1);
	fill(img + W_PERS_OFF, W_PERS_LEN, 2);
	memcpy(img + ATOMIC_OFF, atomic_1, 8);
	memcpy(img + ATOMIC_OFF + 8, atomic_2, 8);
	fill(img + SRC_OFF, SRC_LEN, 3);
	fill(img + IMM_OFF, IMM_LEN, 4);
	fill(img + BENCH_OFF, BENCH_LEN, 5);
	if (srq)
		fill(img + SRQ_IMM_OFF, SRQ_IMM_LEN, 8);
}

/* The first differing offset, or -1. */
static long
first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

static bool
same(const void *got, size_t len, uint32_t seed)
{
	uint8_t *want = malloc(len);
	bool eq;

	fill(want, len, seed);
	eq = memcmp(got, want, len) == 0;
	free(want);
	return eq;
}

static void *
aligned(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len) != 0) {
		fprintf(stderr, "FAIL out of memory\n");
		exit(1);
	}
	memset(p, 0, len);
	return p;
}

/*
 * One completion from CQ: polled, and if there is none, waited for on the
 * CQ's channel (or the connection's shared one) for at most 10 s.
 */
static void
next_wc(struct rpma_conn *conn, struct rpma_cq *cq, bool shared, struct ibv_wc *wc)
{
	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, wc, NULL);
		struct pollfd pfd = { .events = POLLIN };
		struct rpma_cq *woken;

		if (ret == 0)
			return;
		if (ret != RPMA_E_NO_COMPLETION)
			die("rpma_cq_get_wc", ret);
		if (shared)
			CHECK(rpma_conn_get_compl_fd(conn, &pfd.fd));
		else
			CHECK(rpma_cq_get_fd(cq, &pfd.fd));
		if (poll(&pfd, 1, 10000) != 1) {
			fprintf(stderr, "FAIL no completion within 10 s\n");
			exit(1);
		}
		if (shared)
			CHECK(rpma_conn_wait(conn, 0, &woken, NULL));
		else
			CHECK(rpma_cq_wait(cq));
	}
}

/* The next completion is OPCODE for CONTEXT with LEN bytes (0: any). */
static void
expect_wc(struct rpma_conn *conn, struct rpma_cq *cq, bool shared, enum ibv_wc_opcode opcode,
	  const void *context, uint32_t len, struct ibv_wc *out, const char *what)
{
	struct ibv_wc wc;
	char line[256];
	bool good;

	next_wc(conn, cq, shared, &wc);
	good = wc.status == IBV_WC_SUCCESS && wc.opcode == opcode &&
	       wc.wr_id == (uint64_t)(uintptr_t)context && (len == 0 || wc.byte_len == len);
	snprintf(line, sizeof(line), "%s: completion %s, opcode %d (want %d), wr_id %#" PRIx64
		 ", byte_len %u", what, ibv_wc_status_str(wc.status), wc.opcode, opcode,
		 wc.wr_id, wc.byte_len);
	verdict(good, line);
	if (!good)
		exit(1);
	if (out)
		*out = wc;
}

static void
check_imm(const struct ibv_wc *wc, bool with, uint32_t imm, const char *what)
{
	char line[160];

	if (with)
		snprintf(line, sizeof(line), "%s: immediate %#x (want %#x)", what,
			 (wc->wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc->imm_data) : 0, imm);
	else
		snprintf(line, sizeof(line), "%s: no immediate", what);
	verdict(with ? (wc->wc_flags & IBV_WC_WITH_IMM) && ntohl(wc->imm_data) == imm :
		       !(wc->wc_flags & IBV_WC_WITH_IMM), line);
}

static void
check_bytes(const void *got, size_t len, uint32_t seed, const char *what)
{
	char line[160];

	snprintf(line, sizeof(line), "%s: %zu bytes as sent", what, len);
	verdict(same(got, len, seed), line);
}

static void
establish(struct rpma_conn *conn)
{
	enum rpma_conn_event ev;

	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "FAIL connection: %s\n", rpma_utils_conn_event_2str(ev));
		exit(1);
	}
}

/* Waits for the peer's disconnect, then disconnects and deletes. */
static void
close_conn(struct rpma_conn **conn, bool initiator)
{
	enum rpma_conn_event ev;

	if (initiator)
		CHECK(rpma_conn_disconnect(*conn));
	CHECK(rpma_conn_next_event(*conn, &ev));
	verdict(ev == RPMA_CONN_CLOSED, "connection closed");
	if (!initiator)
		CHECK(rpma_conn_disconnect(*conn));
	CHECK(rpma_conn_delete(conn));
}

/* ---- server ---- */

/* What the server hands the client in the REP's private data. */
struct server_pdata {
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	uint8_t desc[64];	/* the MR's descriptor, then the peer config's */
};

struct server {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	uint8_t *mem;
	int fd;
	struct rpma_mr_local *mr;
	uint8_t *msgs;		/* MSG_SLOTS receive slots, then a send slot */
	struct rpma_mr_local *msgs_mr;
	struct server_pdata pdata;
	bool mixed;		/* a private page after the file in the registration */
};

/* The connection index a client's REQ carries, or -1. */
static int
hello_index(const struct rpma_conn_private_data *in)
{
	const struct hello *h = in->ptr;

	if (in->len < sizeof(*h) || memcmp(h->text, hello_text, sizeof(hello_text)) != 0)
		return -1;
	return h->index;
}

static void *
slot(unsigned i)
{
	return (void *)(uintptr_t)(i + 1);	/* a receive slot's op_context */
}

/* Compares memory and file with the image; the verdict goes back as text. */
static void
server_compare(struct server *s, bool srq, char *text)
{
	uint8_t *img = malloc(MEM_SIZE), *file = malloc(MEM_SIZE);
	long at_mem, at_file;
	ssize_t got;
	char line[160];

	expected_image(img, srq);
	at_mem = first_diff(s->mem, img, MEM_SIZE);
	snprintf(line, sizeof(line), "server memory: all %u bytes as the client wrote them "
		 "(first difference %ld)", MEM_SIZE, at_mem);
	verdict(at_mem < 0, line);
	verdict(msync(s->mem, MEM_SIZE, MS_SYNC) == 0, "msync(MS_SYNC) of the mapping");
	got = pread(s->fd, file, MEM_SIZE, 0);
	at_file = got == MEM_SIZE ? first_diff(file, img, MEM_SIZE) : 0;
	snprintf(line, sizeof(line), "server file read back: %zd bytes as written (first "
		 "difference %ld)", got, at_file);
	verdict(got == MEM_SIZE && at_file < 0, line);
	snprintf(text, VERDICT_LEN, "%s mem %ld file %ld", at_mem < 0 && at_file < 0 ? "OK" :
		 "BAD", at_mem, at_file);
	free(img);
	free(file);
}

static struct rpma_conn *
server_accept(struct server *s, struct rpma_conn_cfg *cfg, struct rpma_srq *srq)
{
	struct rpma_conn_private_data in, out = { &s->pdata, sizeof(s->pdata) };
	struct rpma_conn_req *req;
	struct rpma_conn *conn;

	CHECK(rpma_ep_next_conn_req(s->ep, cfg, &req));
	CHECK(rpma_conn_req_get_private_data(req, &in));
	verdict(hello_index(&in) == 0, "server: the client's private data in its REQ");
	/* every receive posted before the accept: no RNR wait */
	for (unsigned i = 0; i < MSG_SLOTS; i++) {
		if (srq)
			CHECK(rpma_srq_recv(srq, s->msgs_mr, i * MSG_SLOT, MSG_SLOT, slot(i)));
		else
			CHECK(rpma_conn_req_recv(req, s->msgs_mr, i * MSG_SLOT, MSG_SLOT,
				slot(i)));
	}
	CHECK(rpma_conn_req_connect(&req, &out, &conn));
	establish(conn);
	return conn;
}

static void
server_send(struct rpma_conn *conn, struct server *s, const void *data, size_t len, bool imm,
	    uint32_t value)
{
	struct rpma_cq *cq;
	uint8_t *buf = s->msgs + MSG_SLOTS * MSG_SLOT;
	static int ctx;

	memcpy(buf, data, len);
	CHECK(rpma_conn_get_cq(conn, &cq));
	if (imm)
		CHECK(rpma_send_with_imm(conn, s->msgs_mr, MSG_SLOTS * MSG_SLOT, len,
			RPMA_F_COMPLETION_ALWAYS, value, &ctx));
	else
		CHECK(rpma_send(conn, s->msgs_mr, MSG_SLOTS * MSG_SLOT, len,
			RPMA_F_COMPLETION_ALWAYS, &ctx));
	expect_wc(conn, cq, false, IBV_WC_SEND, &ctx, 0, NULL, "server send");
}

static void
server_connection_1(struct server *s)
{
	struct rpma_conn_cfg *cfg;
	struct rpma_conn *conn;
	struct rpma_cq *rcq;
	struct ibv_wc wc;
	uint8_t reply[REPLY_LEN];
	char text[VERDICT_LEN];

	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_rcq_size(cfg, 16));
	CHECK(rpma_conn_cfg_set_rq_size(cfg, MSG_SLOTS));
	conn = server_accept(s, cfg, NULL);
	CHECK(rpma_conn_get_rcq(conn, &rcq));
	verdict(rcq != NULL, "server: a separate receive CQ");

	expect_wc(conn, rcq, false, IBV_WC_RECV, slot(0), SEND_LEN, &wc, "server rcq: rpma_send");
	check_imm(&wc, false, 0, "server rcq: rpma_send");
	check_bytes(s->msgs, SEND_LEN, 10, "server: rpma_send's message");
	expect_wc(conn, rcq, false, IBV_WC_RECV, slot(1), SEND_IMM_LEN, &wc,
		  "server rcq: rpma_send_with_imm");
	check_imm(&wc, true, IMM_SEND, "server rcq: rpma_send_with_imm");
	check_bytes(s->msgs + MSG_SLOT, SEND_IMM_LEN, 11, "server: rpma_send_with_imm's message");
	expect_wc(conn, rcq, false, IBV_WC_RECV_RDMA_WITH_IMM, slot(2), IMM_LEN, &wc,
		  "server rcq: rpma_write_with_imm");
	check_imm(&wc, true, IMM_WRITE, "server rcq: rpma_write_with_imm");
	check_bytes(s->mem + IMM_OFF, IMM_LEN, 4, "server: rpma_write_with_imm's data in place");
	check_bytes(s->mem + W_VIS_OFF, W_VIS_LEN, 1, "server: write + flush VISIBILITY");
	check_bytes(s->mem + W_PERS_OFF, W_PERS_LEN, 2, "server: write + flush PERSISTENT");
	verdict(memcmp(s->mem + ATOMIC_OFF, atomic_1, 8) == 0 &&
		memcmp(s->mem + ATOMIC_OFF + 8, atomic_2, 8) == 0,
		"server: both atomic writes' 8 bytes landed");

	fill(reply, REPLY_LEN, 12);
	server_send(conn, s, reply, REPLY_LEN, true, IMM_REPLY);

	/* the client's loops, then its DONE */
	expect_wc(conn, rcq, false, IBV_WC_RECV, slot(3), 4, NULL, "server rcq: DONE");
	server_compare(s, false, text);
	server_send(conn, s, text, VERDICT_LEN, false, 0);
	close_conn(&conn, false);
	CHECK(rpma_conn_cfg_delete(&cfg));
}

static void
server_connection_2(struct server *s)
{
	struct rpma_srq_cfg *srq_cfg;
	struct rpma_conn_cfg *cfg;
	struct rpma_srq *srq;
	struct rpma_conn *conn;
	struct rpma_cq *rcq, *conn_rcq;
	struct ibv_wc wc;
	uint32_t qp_num;
	char text[VERDICT_LEN], line[160];

	CHECK(rpma_srq_cfg_new(&srq_cfg));
	CHECK(rpma_srq_cfg_set_rq_size(srq_cfg, MSG_SLOTS));
	CHECK(rpma_srq_cfg_set_rcq_size(srq_cfg, 16));
	CHECK(rpma_srq_new(s->peer, srq_cfg, &srq));
	CHECK(rpma_srq_get_rcq(srq, &rcq));
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_srq(cfg, srq));
	conn = server_accept(s, cfg, srq);
	CHECK(rpma_conn_get_qp_num(conn, &qp_num));
	CHECK(rpma_conn_get_rcq(conn, &conn_rcq));
	verdict(conn_rcq == NULL, "server: no connection RCQ beside the SRQ's");

	/* the SRQ hands out its receives in the order they were posted */
	expect_wc(NULL, rcq, false, IBV_WC_RECV, slot(0), SRQ_SEND_LEN, &wc,
		  "server srq rcq: rpma_send");
	snprintf(line, sizeof(line), "server srq rcq: qp_num %u is the connection's %u",
		 wc.qp_num, qp_num);
	verdict(wc.qp_num == qp_num, line);
	check_imm(&wc, false, 0, "server srq rcq: rpma_send");
	check_bytes(s->msgs, SRQ_SEND_LEN, 13, "server: rpma_send's message through the SRQ");
	expect_wc(NULL, rcq, false, IBV_WC_RECV, slot(1), SRQ_IMM_SEND_LEN, &wc,
		  "server srq rcq: rpma_send_with_imm");
	check_imm(&wc, true, IMM_SRQ_SEND, "server srq rcq: rpma_send_with_imm");
	check_bytes(s->msgs + MSG_SLOT, SRQ_IMM_SEND_LEN, 14,
		    "server: rpma_send_with_imm's message through the SRQ");
	expect_wc(NULL, rcq, false, IBV_WC_RECV_RDMA_WITH_IMM, slot(2), SRQ_IMM_LEN, &wc,
		  "server srq rcq: rpma_write_with_imm");
	check_imm(&wc, true, IMM_SRQ_WRITE, "server srq rcq: rpma_write_with_imm");
	verdict(wc.qp_num == qp_num, "server srq rcq: write_with_imm's qp_num");

	server_compare(s, true, text);
	server_send(conn, s, text, VERDICT_LEN, false, 0);
	close_conn(&conn, false);
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_srq_delete(&srq));
	CHECK(rpma_srq_cfg_delete(&srq_cfg));
}

/* A REQ refused: rpma_conn_req_delete() of an incoming request rejects it. */
static void
server_refuse(struct server *s)
{
	struct rpma_conn_private_data in;
	struct rpma_conn_req *req;

	CHECK(rpma_ep_next_conn_req(s->ep, NULL, &req));
	CHECK(rpma_conn_req_get_private_data(req, &in));
	verdict(hello_index(&in) == 0, "server: a REQ to refuse, with the client's private data");
	CHECK(rpma_conn_req_delete(&req));
}

static void
set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
		perror("fcntl");
		exit(1);
	}
}

static void
epoll_add(int efd, int fd, uint32_t tag)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u32 = tag };

	set_nonblock(fd);
	if (epoll_ctl(efd, EPOLL_CTL_ADD, fd, &e) != 0) {
		perror("epoll_ctl");
		exit(1);
	}
}

/* The next tag epoll has ready, within 10 s. */
static uint32_t
epoll_next(int efd)
{
	struct epoll_event e;

	if (epoll_wait(efd, &e, 1, 10000) != 1) {
		fprintf(stderr, "FAIL no connection event within 10 s\n");
		exit(1);
	}
	return e.data.u32;
}

/*
 * MULTI clients at once, their receives on one SRQ, their connection
 * requests and events taken through epoll on non-blocking descriptors (as
 * librpma's SRQ example does); each message is told apart by its QP number.
 */
static void
server_connections_3(struct server *s)
{
	struct rpma_conn *conns[MULTI] = { 0 };
	struct rpma_conn_private_data out = { &s->pdata, sizeof(s->pdata) }, in;
	struct rpma_srq_cfg *srq_cfg;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
	struct rpma_srq *srq;
	struct rpma_cq *rcq;
	enum rpma_conn_event ev;
	uint32_t qpn[MULTI];
	unsigned sends[MULTI] = { 0 }, imms[MULTI] = { 0 }, established = 0, closed = 0;
	uint8_t reply[MULTI_REPLY_LEN];
	char line[200];
	int efd, fd, idx;

	CHECK(rpma_srq_cfg_new(&srq_cfg));
	CHECK(rpma_srq_cfg_set_rq_size(srq_cfg, 2 * MULTI));
	CHECK(rpma_srq_cfg_set_rcq_size(srq_cfg, 4 * MULTI));
	CHECK(rpma_srq_new(s->peer, srq_cfg, &srq));
	CHECK(rpma_srq_get_rcq(srq, &rcq));
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_srq(cfg, srq));
	for (unsigned i = 0; i < 2 * MULTI; i++)
		CHECK(rpma_srq_recv(srq, s->msgs_mr, i * MSG_SLOT, MSG_SLOT, slot(i)));

	efd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(rpma_ep_get_fd(s->ep, &fd));
	epoll_add(efd, fd, MULTI);
	while (established < MULTI) {
		uint32_t tag = epoll_next(efd);

		if (tag == MULTI) {
			CHECK(rpma_ep_next_conn_req(s->ep, cfg, &req));
			CHECK(rpma_conn_req_get_private_data(req, &in));
			idx = hello_index(&in);
			if (idx < 0 || idx >= MULTI || conns[idx] != NULL) {
				fprintf(stderr, "FAIL a REQ with index %d\n", idx);
				exit(1);
			}
			CHECK(rpma_conn_req_connect(&req, &out, &conns[idx]));
			CHECK(rpma_conn_get_event_fd(conns[idx], &fd));
			epoll_add(efd, fd, (uint32_t)idx);
			continue;
		}
		CHECK(rpma_conn_next_event(conns[tag], &ev));
		if (ev != RPMA_CONN_ESTABLISHED) {
			fprintf(stderr, "FAIL connection %u: %s\n", tag,
				rpma_utils_conn_event_2str(ev));
			exit(1);
		}
		CHECK(rpma_conn_get_qp_num(conns[tag], &qpn[tag]));
		established++;
	}
	snprintf(line, sizeof(line), "server: %u connections on one SRQ through epoll, QPs %u %u %u",
		 MULTI, qpn[0], qpn[1], qpn[2]);
	verdict(true, line);

	for (unsigned k = 0; k < 2 * MULTI; k++) {
		struct ibv_wc wc;
		unsigned at;
		bool imm;

		next_wc(NULL, rcq, false, &wc);
		for (idx = 0; idx < MULTI && qpn[idx] != wc.qp_num; idx++)
			;
		at = (unsigned)wc.wr_id - 1;
		imm = wc.wc_flags & IBV_WC_WITH_IMM;
		snprintf(line, sizeof(line), "server srq rcq: %s from QP %u (connection %d) in "
			 "slot %u, %u bytes%s", imm ? "rpma_send_with_imm" : "rpma_send",
			 wc.qp_num, idx, at, wc.byte_len, imm ? ", immediate" : "");
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || idx == MULTI ||
		    at >= 2 * MULTI) {
			verdict(false, line);
			exit(1);
		}
		if (imm) {
			imms[idx]++;
			verdict(wc.byte_len == MULTI_IMM_LEN + (unsigned)idx &&
				ntohl(wc.imm_data) == IMM_MULTI + (unsigned)idx &&
				same(s->msgs + at * MSG_SLOT, wc.byte_len, 40 + (uint32_t)idx),
				line);
		} else {
			sends[idx]++;
			verdict(wc.byte_len == MULTI_SEND_LEN + (unsigned)idx &&
				same(s->msgs + at * MSG_SLOT, wc.byte_len, 30 + (uint32_t)idx),
				line);
		}
	}
	for (idx = 0; idx < MULTI; idx++) {
		snprintf(line, sizeof(line), "server: connection %d sent %u message(s) and %u "
			 "with immediate (want 1 and 1)", idx, sends[idx], imms[idx]);
		verdict(sends[idx] == 1 && imms[idx] == 1, line);
		fill(reply, sizeof(reply), 50 + (uint32_t)idx);
		server_send(conns[idx], s, reply, sizeof(reply), false, 0);
	}

	/* the clients disconnect, in any order */
	while (closed < MULTI) {
		uint32_t tag = epoll_next(efd);

		if (tag >= MULTI || conns[tag] == NULL)
			continue;
		CHECK(rpma_conn_next_event(conns[tag], &ev));
		snprintf(line, sizeof(line), "server: connection %u closed", tag);
		verdict(ev == RPMA_CONN_CLOSED, line);
		CHECK(rpma_conn_get_event_fd(conns[tag], &fd));
		epoll_ctl(efd, EPOLL_CTL_DEL, fd, NULL);
		CHECK(rpma_conn_disconnect(conns[tag]));
		CHECK(rpma_conn_delete(&conns[tag]));
		closed++;
	}
	close(efd);
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_srq_delete(&srq));
	CHECK(rpma_srq_cfg_delete(&srq_cfg));
}

static int
server(const char *addr, const char *port, const char *path)
{
	struct server s = { 0 };
	struct ibv_context *ctx;
	struct rpma_peer_cfg *pcfg;
	size_t mr_size, pcfg_size;

	/* "mixed:FILE": the file's mapping with a private page after it, in one
	 * registration: memory droce cannot share as one (EOPNOTSUPP), for which
	 * librpma registers again with IBV_ACCESS_ON_DEMAND */
	if (strncmp(path, "mixed:", 6) == 0) {
		path += 6;
		s.mixed = true;
	}
	s.fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (s.fd < 0 || ftruncate(s.fd, MEM_SIZE) != 0) {
		perror(path);
		return 1;
	}
	s.mem = mmap(NULL, MEM_SIZE + (s.mixed ? 4096 : 0), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.mem == MAP_FAILED ||
	    mmap(s.mem, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s.fd, 0) !=
	    s.mem) {
		perror("mmap");
		return 1;
	}
	fill(s.mem + SRC_OFF, SRC_LEN, 3);
	s.msgs = aligned((MSG_SLOTS + 1) * MSG_SLOT);

	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
	CHECK(rpma_peer_new(ctx, &s.peer));
	CHECK(rpma_mr_reg(s.peer, s.mem, MEM_SIZE + (s.mixed ? 4096 : 0),
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
		RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &s.mr));
	/* librpma's examples prefetch an FsDAX file's on-demand MR so */
	if (s.mixed)
		verdict(rpma_mr_advise(s.mr, 0, MEM_SIZE, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				       IBV_ADVISE_MR_FLAG_FLUSH) == 0,
			"server: rpma_mr_advise PREFETCH_WRITE of the on-demand MR");
	CHECK(rpma_mr_reg(s.peer, s.msgs, (MSG_SLOTS + 1) * MSG_SLOT,
		RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &s.msgs_mr));

	/* the descriptors, as the client will need them */
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	CHECK(rpma_mr_get_descriptor_size(s.mr, &mr_size));
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size));
	if (mr_size + pcfg_size > sizeof(s.pdata.desc)) {
		fprintf(stderr, "FAIL descriptors of %zu + %zu bytes\n", mr_size, pcfg_size);
		return 1;
	}
	s.pdata.mr_desc_size = (uint8_t)mr_size;
	s.pdata.pcfg_desc_size = (uint8_t)pcfg_size;
	CHECK(rpma_mr_get_descriptor(s.mr, s.pdata.desc));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, s.pdata.desc + mr_size));

	CHECK(rpma_ep_listen(s.peer, addr, port, &s.ep));
	printf("server: listening on %s:%s, %u bytes of %s mapped shared\n", addr, port,
	       MEM_SIZE, path);
	fflush(stdout);
	server_refuse(&s);
	server_connection_1(&s);
	server_connection_2(&s);
	server_connections_3(&s);

	CHECK(rpma_ep_shutdown(&s.ep));
	CHECK(rpma_mr_dereg(&s.msgs_mr));
	CHECK(rpma_mr_dereg(&s.mr));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_peer_delete(&s.peer));
	munmap(s.mem, MEM_SIZE + (s.mixed ? 4096 : 0));
	close(s.fd);
	free(s.msgs);
	printf("server: %d failure(s)\n", fails);
	return fails != 0;
}

/* ---- client ---- */

struct client {
	struct rpma_peer *peer;
	uint8_t *src;		/* MEM_SIZE: what the client writes, at the server's offsets */
	struct rpma_mr_local *src_mr;
	uint8_t *dst;		/* READ_LEN: what the client reads back */
	struct rpma_mr_local *dst_mr;
	uint8_t *msgs;		/* MSG_SLOTS receive slots, then a send slot */
	struct rpma_mr_local *msgs_mr;
};

static struct rpma_conn *
client_connect(struct client *c, const char *addr, const char *port, struct rpma_conn_cfg *cfg,
	       struct rpma_mr_remote **mr, struct rpma_peer_cfg **pcfg)
{
	struct hello hello = { .index = 0 };
	struct rpma_conn_private_data out = { &hello, sizeof(hello) }, in;
	const struct server_pdata *pd;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	size_t size;

	memcpy(hello.text, hello_text, sizeof(hello_text));
	CHECK(rpma_conn_req_new(c->peer, addr, port, cfg, &req));
	for (unsigned i = 0; i < MSG_SLOTS; i++)
		CHECK(rpma_conn_req_recv(req, c->msgs_mr, i * MSG_SLOT, MSG_SLOT, slot(i)));
	CHECK(rpma_conn_req_connect(&req, &out, &conn));
	establish(conn);
	CHECK(rpma_conn_get_private_data(conn, &in));
	pd = in.ptr;
	verdict(in.len >= sizeof(*pd), "client: the server's private data in its REP");
	if (in.len < sizeof(*pd))
		exit(1);
	CHECK(rpma_mr_remote_from_descriptor(pd->desc, pd->mr_desc_size, mr));
	CHECK(rpma_mr_remote_get_size(*mr, &size));
	verdict(size == MEM_SIZE || size == MEM_SIZE + 4096,
		"client: the remote MR's size from its descriptor");
	CHECK(rpma_peer_cfg_from_descriptor(pd->desc + pd->mr_desc_size, pd->pcfg_desc_size,
		pcfg));
	return conn;
}

static void
client_send(struct rpma_conn *conn, struct rpma_cq *cq, bool shared, struct client *c,
	    uint32_t seed, size_t len, bool imm, uint32_t value, const char *what)
{
	uint8_t *buf = c->msgs + MSG_SLOTS * MSG_SLOT;

	if (seed)
		fill(buf, len, seed);
	else
		memcpy(buf, "DONE", 4);
	if (imm)
		CHECK(rpma_send_with_imm(conn, c->msgs_mr, MSG_SLOTS * MSG_SLOT, len,
			RPMA_F_COMPLETION_ALWAYS, value, buf));
	else
		CHECK(rpma_send(conn, c->msgs_mr, MSG_SLOTS * MSG_SLOT, len,
			RPMA_F_COMPLETION_ALWAYS, buf));
	expect_wc(conn, cq, shared, IBV_WC_SEND, buf, 0, NULL, what);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* rpma_write of LEN bytes, then a signalled rpma_flush VISIBILITY, waited for. */
static void
bench(struct rpma_conn *conn, struct rpma_cq *cq, struct client *c, struct rpma_mr_remote *mr,
      size_t len, double seconds)
{
	unsigned slots = BENCH_LEN / len;
	double start = now(), elapsed;
	unsigned long n = 0;
	struct ibv_wc wc;
	int flush_ctx;
	char line[200];

	do {
		size_t off = BENCH_OFF + (n % slots) * len;

		CHECK(rpma_write(conn, mr, off, c->src_mr, off, len, RPMA_F_COMPLETION_ON_ERROR,
			NULL));
		CHECK(rpma_flush(conn, mr, off, len, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, &flush_ctx));
		next_wc(conn, cq, true, &wc);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uintptr_t)&flush_ctx) {
			fprintf(stderr, "FAIL bench: completion %s\n", ibv_wc_status_str(wc.status));
			exit(1);
		}
		n++;
		elapsed = now() - start;
	} while (elapsed < seconds || n < slots);
	snprintf(line, sizeof(line), "bench: %lu x (rpma_write %zu B + rpma_flush VISIBILITY) in "
		 "%.2f s: %.1f MiB/s, %.1f us per write+flush", n, len, elapsed,
		 (double)n * (double)len / elapsed / (1 << 20), elapsed / (double)n * 1e6);
	verdict(true, line);
}

static void
client_connection_1(struct client *c, const char *addr, const char *port, double seconds)
{
	struct rpma_conn_cfg *cfg;
	struct rpma_conn *conn;
	struct rpma_mr_remote *mr;
	struct rpma_peer_cfg *pcfg;
	struct rpma_cq *cq, *rcq;
	struct ibv_wc wc;
	int flush_type, ret;
	int w_ctx, f_ctx, a_ctx, r_ctx, i_ctx;
	char atomic_buf[8];
	uint8_t *img;
	long at;
	char line[160];

	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_rcq_size(cfg, 16));
	CHECK(rpma_conn_cfg_set_rq_size(cfg, MSG_SLOTS));
	CHECK(rpma_conn_cfg_set_compl_channel(cfg, true));
	conn = client_connect(c, addr, port, cfg, &mr, &pcfg);
	CHECK(rpma_conn_get_cq(conn, &cq));
	CHECK(rpma_conn_get_rcq(conn, &rcq));
	verdict(rcq != NULL, "client: a separate receive CQ on the shared channel");
	CHECK(rpma_mr_remote_get_flush_type(mr, &flush_type));
	verdict((flush_type & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY) &&
		(flush_type & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT),
		"client: the remote MR flushes to visibility and persistence");

	/* PERSISTENT is refused until the server's peer config says pmem (the
	 * error librpma would log for it is expected: not shown) */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	ret = rpma_flush(conn, mr, W_PERS_OFF, W_PERS_LEN, RPMA_FLUSH_TYPE_PERSISTENT,
			 RPMA_F_COMPLETION_ALWAYS, &f_ctx);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);
	verdict(ret == RPMA_E_NOSUPP, "client: flush PERSISTENT refused before the peer config");
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));

	fill(c->src + W_VIS_OFF, W_VIS_LEN, 1);
	CHECK(rpma_write(conn, mr, W_VIS_OFF, c->src_mr, W_VIS_OFF, W_VIS_LEN,
		RPMA_F_COMPLETION_ALWAYS, &w_ctx));
	expect_wc(conn, cq, true, IBV_WC_RDMA_WRITE, &w_ctx, 0, NULL, "client: rpma_write 64 KiB");
	CHECK(rpma_flush(conn, mr, W_VIS_OFF, W_VIS_LEN, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, &f_ctx));
	/* librpma's flush is an 8-byte READ of the flushed range */
	expect_wc(conn, cq, true, IBV_WC_RDMA_READ, &f_ctx, 0, NULL,
		  "client: rpma_flush VISIBILITY");

	fill(c->src + W_PERS_OFF, W_PERS_LEN, 2);
	CHECK(rpma_write(conn, mr, W_PERS_OFF, c->src_mr, W_PERS_OFF, W_PERS_LEN,
		RPMA_F_COMPLETION_ON_ERROR, NULL));
	CHECK(rpma_flush(conn, mr, W_PERS_OFF, W_PERS_LEN, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, &f_ctx));
	expect_wc(conn, cq, true, IBV_WC_RDMA_READ, &f_ctx, 0, NULL,
		  "client: rpma_write (unsignalled) + rpma_flush PERSISTENT");

	/* the fallback is an INLINE write: its 8 bytes are taken at the post,
	 * so a buffer scribbled on right after must not be what lands */
	memcpy(atomic_buf, atomic_1, 8);
	CHECK(rpma_atomic_write(conn, mr, ATOMIC_OFF, atomic_buf, RPMA_F_COMPLETION_ALWAYS,
		&a_ctx));
	memset(atomic_buf, 0xee, 8);
	expect_wc(conn, cq, true, IBV_WC_RDMA_WRITE, &a_ctx, 0, NULL, "client: rpma_atomic_write");
	CHECK(rpma_atomic_write(conn, mr, ATOMIC_OFF + 8, atomic_2, RPMA_F_COMPLETION_ON_ERROR,
		NULL));
	CHECK(rpma_flush(conn, mr, ATOMIC_OFF, 16, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, &f_ctx));
	expect_wc(conn, cq, true, IBV_WC_RDMA_READ, &f_ctx, 0, NULL,
		  "client: rpma_atomic_write (unsignalled) + rpma_flush PERSISTENT");

	CHECK(rpma_read(conn, c->dst_mr, 0, mr, 0, READ_LEN, RPMA_F_COMPLETION_ALWAYS, &r_ctx));
	expect_wc(conn, cq, true, IBV_WC_RDMA_READ, &r_ctx, 0, NULL, "client: rpma_read 256 KiB");
	img = malloc(MEM_SIZE);
	expected_image(img, false);
	memset(img + IMM_OFF, 0, IMM_LEN);	/* not written yet */
	at = first_diff(c->dst, img, READ_LEN);
	snprintf(line, sizeof(line), "client: rpma_read: the server's %u bytes (its own, the "
		 "writes', the atomics') as expected (first difference %ld)", READ_LEN, at);
	verdict(at < 0, line);
	free(img);

	client_send(conn, cq, true, c, 10, SEND_LEN, false, 0, "client: rpma_send");
	client_send(conn, cq, true, c, 11, SEND_IMM_LEN, true, IMM_SEND,
		    "client: rpma_send_with_imm");
	fill(c->src + IMM_OFF, IMM_LEN, 4);
	CHECK(rpma_write_with_imm(conn, mr, IMM_OFF, c->src_mr, IMM_OFF, IMM_LEN,
		RPMA_F_COMPLETION_ALWAYS, IMM_WRITE, &i_ctx));
	expect_wc(conn, cq, true, IBV_WC_RDMA_WRITE, &i_ctx, 0, NULL,
		  "client: rpma_write_with_imm");

	expect_wc(conn, rcq, true, IBV_WC_RECV, slot(0), REPLY_LEN, &wc,
		  "client rcq: the server's rpma_send_with_imm");
	check_imm(&wc, true, IMM_REPLY, "client rcq: the server's rpma_send_with_imm");
	check_bytes(c->msgs, REPLY_LEN, 12, "client: the server's message");

	fill(c->src + BENCH_OFF, BENCH_LEN, 5);
	bench(conn, cq, c, mr, 4096, seconds);
	bench(conn, cq, c, mr, 65536, seconds);

	client_send(conn, cq, true, c, 0, 4, false, 0, "client: DONE");
	expect_wc(conn, rcq, true, IBV_WC_RECV, slot(1), VERDICT_LEN, NULL,
		  "client rcq: the server's verdict");
	snprintf(line, sizeof(line), "server's comparison: %.*s", (int)VERDICT_LEN,
		 (char *)c->msgs + MSG_SLOT);
	verdict(strncmp((char *)c->msgs + MSG_SLOT, "OK ", 3) == 0, line);

	close_conn(&conn, true);
	CHECK(rpma_mr_remote_delete(&mr));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_conn_cfg_delete(&cfg));
}

static void
client_connection_2(struct client *c, const char *addr, const char *port)
{
	struct rpma_conn *conn;
	struct rpma_mr_remote *mr;
	struct rpma_peer_cfg *pcfg;
	struct rpma_cq *cq, *rcq;
	int i_ctx;
	char line[160];

	conn = client_connect(c, addr, port, NULL, &mr, &pcfg);
	CHECK(rpma_conn_get_cq(conn, &cq));
	CHECK(rpma_conn_get_rcq(conn, &rcq));
	verdict(rcq == NULL, "client: receives on the main CQ");

	client_send(conn, cq, false, c, 13, SRQ_SEND_LEN, false, 0, "client: rpma_send (srq)");
	client_send(conn, cq, false, c, 14, SRQ_IMM_SEND_LEN, true, IMM_SRQ_SEND,
		    "client: rpma_send_with_imm (srq)");
	fill(c->src + SRQ_IMM_OFF, SRQ_IMM_LEN, 8);
	CHECK(rpma_write_with_imm(conn, mr, SRQ_IMM_OFF, c->src_mr, SRQ_IMM_OFF, SRQ_IMM_LEN,
		RPMA_F_COMPLETION_ALWAYS, IMM_SRQ_WRITE, &i_ctx));
	expect_wc(conn, cq, false, IBV_WC_RDMA_WRITE, &i_ctx, 0, NULL,
		  "client: rpma_write_with_imm (srq)");
	expect_wc(conn, cq, false, IBV_WC_RECV, slot(0), VERDICT_LEN, NULL,
		  "client cq: the server's verdict");
	snprintf(line, sizeof(line), "server's comparison (srq): %.*s", (int)VERDICT_LEN,
		 (char *)c->msgs);
	verdict(strncmp((char *)c->msgs, "OK ", 3) == 0, line);

	close_conn(&conn, true);
	CHECK(rpma_mr_remote_delete(&mr));
	CHECK(rpma_peer_cfg_delete(&pcfg));
}

/* A connection that ends REJECTED: refused by the server, or to no listener. */
static void
client_refused(struct client *c, const char *addr, const char *port, const char *what)
{
	struct hello hello = { .index = 0 };
	struct rpma_conn_private_data out = { &hello, sizeof(hello) };
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	char line[160];

	memcpy(hello.text, hello_text, sizeof(hello_text));
	CHECK(rpma_conn_req_new(c->peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, &out, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	snprintf(line, sizeof(line), "client: %s: %s", what, rpma_utils_conn_event_2str(ev));
	verdict(ev == RPMA_CONN_REJECTED, line);
	CHECK(rpma_conn_delete(&conn));
}

static void
client_connections_3(struct client *c, const char *addr, const char *port)
{
	struct rpma_conn *conns[MULTI];
	struct rpma_cq *cqs[MULTI];
	char what[80];

	/* every REQ out before any connection is established */
	for (unsigned i = 0; i < MULTI; i++) {
		struct hello hello = { .index = (uint8_t)i };
		struct rpma_conn_private_data out = { &hello, sizeof(hello) };
		struct rpma_conn_req *req;

		memcpy(hello.text, hello_text, sizeof(hello_text));
		CHECK(rpma_conn_req_new(c->peer, addr, port, NULL, &req));
		CHECK(rpma_conn_req_recv(req, c->msgs_mr, i * MSG_SLOT, MSG_SLOT, slot(i)));
		CHECK(rpma_conn_req_connect(&req, &out, &conns[i]));
	}
	for (unsigned i = 0; i < MULTI; i++) {
		establish(conns[i]);
		CHECK(rpma_conn_get_cq(conns[i], &cqs[i]));
	}
	verdict(true, "client: 3 connections established at once");
	for (unsigned i = 0; i < MULTI; i++) {
		snprintf(what, sizeof(what), "client: connection %u rpma_send", i);
		client_send(conns[i], cqs[i], false, c, 30 + i, MULTI_SEND_LEN + i, false, 0, what);
		snprintf(what, sizeof(what), "client: connection %u rpma_send_with_imm", i);
		client_send(conns[i], cqs[i], false, c, 40 + i, MULTI_IMM_LEN + i, true,
			    IMM_MULTI + i, what);
	}
	for (unsigned i = 0; i < MULTI; i++) {
		snprintf(what, sizeof(what), "client: connection %u the server's reply", i);
		expect_wc(conns[i], cqs[i], false, IBV_WC_RECV, slot(i), MULTI_REPLY_LEN, NULL,
			  what);
		check_bytes(c->msgs + i * MSG_SLOT, MULTI_REPLY_LEN, 50 + i, what);
	}
	for (unsigned i = 0; i < MULTI; i++)
		close_conn(&conns[i], true);
}

static int
client(const char *addr, const char *port, double seconds)
{
	struct client c = { 0 };
	struct ibv_context *ctx;
	char unheard[16];

	c.src = aligned(MEM_SIZE);
	c.dst = aligned(READ_LEN);
	c.msgs = aligned((MSG_SLOTS + 1) * MSG_SLOT);
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
	CHECK(rpma_peer_new(ctx, &c.peer));
	CHECK(rpma_mr_reg(c.peer, c.src, MEM_SIZE, RPMA_MR_USAGE_WRITE_SRC, &c.src_mr));
	CHECK(rpma_mr_reg(c.peer, c.dst, READ_LEN, RPMA_MR_USAGE_READ_DST, &c.dst_mr));
	CHECK(rpma_mr_reg(c.peer, c.msgs, (MSG_SLOTS + 1) * MSG_SLOT,
		RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &c.msgs_mr));

	client_refused(&c, addr, port, "a REQ the server refuses");
	snprintf(unheard, sizeof(unheard), "%d", atoi(port) + 1);
	client_refused(&c, addr, unheard, "a REQ to a port nobody listens on");
	client_connection_1(&c, addr, port, seconds);
	client_connection_2(&c, addr, port);
	client_connections_3(&c, addr, port);

	CHECK(rpma_mr_dereg(&c.msgs_mr));
	CHECK(rpma_mr_dereg(&c.dst_mr));
	CHECK(rpma_mr_dereg(&c.src_mr));
	CHECK(rpma_peer_delete(&c.peer));
	free(c.src);
	free(c.dst);
	free(c.msgs);
	printf("client: %d failure(s)\n", fails);
	return fails != 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* librpma's own notes and errors on stderr (it says so when it falls back) */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);
	if (argc == 5 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3], argv[4]);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3], argc == 5 ? atof(argv[4]) : 1.0);
	fprintf(stderr, "usage: %s server ADDR PORT FILE | client ADDR PORT [BENCH_SECONDS]\n",
		argv[0]);
	return 2;
}
