/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RDMA WRITE with immediate and SEND with invalidate between two RoCE
 * devices, checked end to end with the plain verbs API. Built against the
 * system rdma-core, so the same binary runs on droce (through droce-run)
 * and in the rxe guest.
 *
 *   imm_inv [-d DEV] [-g GIDX] [-m MTU] [-n ITERS] [-p PORT] [-l] [-w]          server
 *   imm_inv [-d DEV] [-g GIDX] [-m MTU] [-n ITERS] [-p PORT] [-l] [-w] HOST     client
 *
 * Two RC QP pairs, one per direction: first the client sends and the
 * server receives, then the other way round, so each side plays both
 * parts. The receiving side binds two type-2 memory windows (A, B) over a
 * buffer and hands out their rkeys, the MR's rkey and the address. The
 * sending side then does:
 *   1. WRITE into A and into B (both windows work);
 *   2. ITERS x WRITE_WITH_IMM into region i of the MR, 100 B (ONLY_IMM)
 *      and 10000 B (FIRST .. LAST_IMM) alternately, imm 0xc0de0000 + i;
 *   3. SEND_WITH_INV of 200 B invalidating A (SEND_ONLY_WITH_INV);
 *   4. WRITE into B (B was not invalidated: still works);
 *   5. SEND_WITH_INV of 3000 B invalidating B (SEND_LAST_WITH_INV);
 *   6. WRITE into A, which must fail with IBV_WC_REM_ACCESS_ERR.
 * The receiver checks every completion (opcode, byte_len, IBV_WC_WITH_IMM
 * and the value, IBV_WC_WITH_INV and invalidated_rkey), every byte, and that
 * step 6 left A untouched. QPN, PSN, GID and keys go over TCP as text lines.
 *
 * rxe (Linux 6.1) reports SEND_WITH_INV completions without IBV_WC_WITH_INV
 * (it copies the kernel's IB_WC_WITH_INVALIDATE, 4, which is user space's
 * IBV_WC_IP_CSUM_OK), against the man page. On an rxe device a missing flag
 * is reported, not failed; the rkey value is still checked.
 *
 * -w: this side posts its WRITEs, SENDs and binds through the ibv_wr_* API
 * (ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) instead of
 * ibv_post_send; the wire must not tell the difference. (Only for droce:
 * rdma-core 44's rxe provider gets parts of that API wrong.)
 *
 * -l (lossy link): the one NAK answering step 6 may be lost, and the
 * responder, in the error state after it, rightly drops the retries
 * (a QP in the Error state discards what it receives), so the requester can
 * also end with IBV_WC_RETRY_EXC_ERR there; the receiver's check that A
 * stayed untouched is unchanged.
 *
 * Exit status: 0 all checks passed, 1 a check failed, 2 setup failed.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tcp_rendezvous.h"

#define REGION		16384u	/* per WRITE_WITH_IMM iteration */
#define MAX_ITERS	64
#define WIN		4096u	/* each memory window */
#define SLOT		4096u	/* each receive buffer */
#define BIG_IMM		10000u	/* multi-packet WRITE_WITH_IMM */
#define SMALL_IMM	100u
#define INV_A_LEN	200u	/* fits one packet: SEND_ONLY_WITH_INV */
#define INV_B_LEN	3000u	/* spans packets at MTU <= 2048: SEND_LAST_WITH_INV */
#define IMM_BASE	0xc0de0000u
#define POLL_SECONDS	120	/* generous: the rxe peer runs under TCG */

struct opts {
	const char *dev;
	const char *host;
	int gidx;
	enum ibv_mtu mtu;
	int iters;
	int port;
	bool lossy;
	bool wr_api;		/* -w: post through ibv_wr_* */
};

/* One RC QP with its own CQ, and what the peer told us about its end. */
struct link {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* with -w */
	struct ibv_cq *cq;
	uint32_t psn;
	uint32_t rqpn;
	uint32_t rpsn;
};

struct ctx {
	struct opts o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	union ibv_gid rgid;
	bool rxe;		/* local device is rxe: tolerate its WITH_INV quirk */
	int sock;
	struct link link[2];	/* [0] client -> server, [1] server -> client */
	int failures;
};

static void
die(const char *what)
{
	fprintf(stderr, "imm_inv: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void
fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	c->failures++;
}

/* The byte pattern of a message: differs per seed and per position. */
static uint8_t
pat(unsigned int seed, size_t k)
{
	return (uint8_t)(seed * 131u + k * 7u + (k >> 8));
}

static void
fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t k;

	for (k = 0; k < len; k++)
		p[k] = pat(seed, k);
}

static bool
check(struct ctx *c, const char *what, const uint8_t *p, size_t len, unsigned int seed)
{
	size_t k;

	for (k = 0; k < len; k++)
		if (p[k] != pat(seed, k)) {
			fail(c, "%s: byte %zu is 0x%02x, want 0x%02x", what, k, p[k],
			     pat(seed, k));
			return false;
		}
	return true;
}

/* ---- TCP: one text line per message ---- */

static void
line_send(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	if (write(fd, buf, (size_t)n) != n)
		die("tcp write");
}

static void
line_recv(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		ssize_t r = read(fd, &buf[n], 1);

		if (r != 1) {
			errno = r == 0 ? ECONNRESET : errno;
			die("tcp read");
		}
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
}

/* ---- verbs ---- */

/* Next completion on cq, or exit after POLL_SECONDS. */
static void
poll_one(struct link *l, struct ibv_wc *wc)
{
	time_t end = time(NULL) + POLL_SECONDS;
	int n;

	while ((n = ibv_poll_cq(l->cq, 1, wc)) == 0)
		if (time(NULL) > end) {
			fprintf(stderr, "imm_inv: no completion in %d s\n", POLL_SECONDS);
			exit(1);
		}
	if (n < 0) {
		fprintf(stderr, "imm_inv: poll_cq failed\n");
		exit(2);
	}
}

static void
open_dev(struct ctx *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev = NULL;
	int i;

	for (i = 0; list != NULL && list[i] != NULL; i++)
		if (c->o.dev == NULL || strcmp(ibv_get_device_name(list[i]), c->o.dev) == 0) {
			dev = list[i];
			break;
		}
	if (dev == NULL) {
		errno = ENODEV;
		die("no such device");
	}
	c->rxe = strncmp(ibv_get_device_name(dev), "rxe", 3) == 0;
	c->ctx = ibv_open_device(dev);
	if (c->ctx == NULL)
		die("open device");
	ibv_free_device_list(list);
	c->pd = ibv_alloc_pd(c->ctx);
	if (c->pd == NULL)
		die("alloc pd");
	if (ibv_query_gid(c->ctx, 1, c->o.gidx, &c->gid))
		die("query gid");
}

static void
link_create(struct ctx *c, struct link *l)
{
	struct ibv_qp_init_attr_ex init = { 0 };
	struct ibv_qp_attr a = { 0 };

	l->cq = ibv_create_cq(c->ctx, 4 * MAX_ITERS + 16, NULL, NULL, 0);
	if (l->cq == NULL)
		die("create cq");
	init.send_cq = init.recv_cq = l->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = init.cap.max_recv_wr = 2 * MAX_ITERS + 16;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.comp_mask = IBV_QP_INIT_ATTR_PD;
	init.pd = c->pd;
	if (c->o.wr_api) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				      IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW;
	}
	l->qp = ibv_create_qp_ex(c->ctx, &init);
	if (l->qp == NULL)
		die("create qp");
	if (c->o.wr_api && (l->qpx = ibv_qp_to_qp_ex(l->qp)) == NULL)
		die("ibv_qp_to_qp_ex");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(l->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify qp INIT");
	l->psn = (uint32_t)lrand48() & 0xffffff;
}

static void
link_connect(struct ctx *c, struct link *l)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->o.mtu;
	a.dest_qp_num = l->rqpn;
	a.rq_psn = l->rpsn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = c->rgid;
	a.ah_attr.grh.sgid_index = (uint8_t)c->o.gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(l->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify qp RTR");
	a.qp_state = IBV_QPS_RTS;
	/*
	 * 268 ms: a lost packet costs one timeout, and 6 retries outlast a 1.6 s
	 * stall of an emulated guest or a starved droced (with 67 ms, rxe's
	 * requester ran out of retries now and then in the lossy phase on a
	 * loaded machine)
	 */
	a.timeout = 16;
	/* 6, not 7: rxe takes retry_cnt 7 for "retry forever" (only rnr_retry 7
	 * means that in the IBA), so a lost final NAK would hang its requester */
	a.retry_cnt = 6;
	a.rnr_retry = 7;
	a.sq_psn = l->psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(l->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify qp RTS");
}

static void
gid_to_str(const union ibv_gid *g, char *s)
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(&s[2 * i], "%02x", g->raw[i]);
}

static void
gid_from_str(union ibv_gid *g, const char *s)
{
	unsigned int b;
	int i;

	for (i = 0; i < 16; i++) {
		if (sscanf(&s[2 * i], "%2x", &b) != 1) {
			errno = EPROTO;
			die("peer gid");
		}
		g->raw[i] = (uint8_t)b;
	}
}

/* Both QPs to RTS: exchange "QPN0 PSN0 QPN1 PSN1 GID". */
static void
exchange_and_connect(struct ctx *c)
{
	char line[256], gs[33], rgs[40];

	gid_to_str(&c->gid, gs);
	line_send(c->sock, "%06x %06x %06x %06x %s", c->link[0].qp->qp_num, c->link[0].psn,
		  c->link[1].qp->qp_num, c->link[1].psn, gs);
	line_recv(c->sock, line, sizeof(line));
	if (sscanf(line, "%x %x %x %x %39s", &c->link[0].rqpn, &c->link[0].rpsn,
		   &c->link[1].rqpn, &c->link[1].rpsn, rgs) != 5 || strlen(rgs) != 32) {
		errno = EPROTO;
		die("peer QP line");
	}
	gid_from_str(&c->rgid, rgs);
	link_connect(c, &c->link[0]);
	link_connect(c, &c->link[1]);
}

static uint32_t
imm_len(int i)
{
	return i % 2 ? BIG_IMM : SMALL_IMM;
}

static void
post_send(struct link *l, enum ibv_wr_opcode op, struct ibv_sge *sge, uint64_t raddr,
	  uint32_t rkey, uint32_t extra)
{
	struct ibv_send_wr wr = { 0 }, *bad;

	if (l->qpx != NULL) {
		ibv_wr_start(l->qpx);
		l->qpx->wr_id = 0;
		l->qpx->wr_flags = IBV_SEND_SIGNALED;
		if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
			ibv_wr_rdma_write_imm(l->qpx, rkey, raddr, htonl(extra));
		else if (op == IBV_WR_SEND_WITH_INV)
			ibv_wr_send_inv(l->qpx, extra);
		else
			ibv_wr_rdma_write(l->qpx, rkey, raddr);
		ibv_wr_set_sge(l->qpx, sge->lkey, sge->addr, sge->length);
		errno = ibv_wr_complete(l->qpx);
		if (errno)
			die("ibv_wr_complete");
		return;
	}
	wr.opcode = op;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(extra);
	else if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = extra;
	if (ibv_post_send(l->qp, &wr, &bad))
		die("post send");
}

/* Post, wait, and check the requester's completion. */
static void
send_expect(struct ctx *c, struct link *l, const char *what, enum ibv_wr_opcode op,
	    struct ibv_sge *sge, uint64_t raddr, uint32_t rkey, uint32_t extra,
	    enum ibv_wc_status want_status, enum ibv_wc_opcode want_op)
{
	struct ibv_wc wc;

	post_send(l, op, sge, raddr, rkey, extra);
	poll_one(l, &wc);
	if (wc.status != want_status)
		fail(c, "%s: status %s, want %s", what, ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(want_status));
	else if (wc.status == IBV_WC_SUCCESS && wc.opcode != want_op)
		fail(c, "%s: completion opcode %d, want %d", what, wc.opcode, want_op);
}

static void
run_sender(struct ctx *c, struct link *l)
{
	uint32_t rkey_mr, rkey_a, rkey_b;
	uint64_t addr, win_a, win_b;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	char line[256];
	uint8_t *buf;
	int i;

	line_recv(c->sock, line, sizeof(line));
	if (sscanf(line, "%" SCNx64 " %x %x %x", &addr, &rkey_mr, &rkey_a, &rkey_b) != 4) {
		errno = EPROTO;
		die("peer key line");
	}
	win_a = addr + (uint64_t)MAX_ITERS * REGION;
	win_b = win_a + WIN;
	buf = aligned_alloc(4096, REGION);
	mr = buf ? ibv_reg_mr(c->pd, buf, REGION, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (mr == NULL)
		die("reg send mr");
	sge.addr = (uintptr_t)buf;
	sge.lkey = mr->lkey;

	sge.length = WIN;
	fill(buf, WIN, 1);
	send_expect(c, l, "WRITE to window A", IBV_WR_RDMA_WRITE, &sge, win_a, rkey_a, 0,
		    IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	fill(buf, WIN, 2);
	send_expect(c, l, "WRITE to window B", IBV_WR_RDMA_WRITE, &sge, win_b, rkey_b, 0,
		    IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	for (i = 0; i < c->o.iters; i++) {
		sge.length = imm_len(i);
		fill(buf, sge.length, 100u + (unsigned int)i);
		send_expect(c, l, "WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM, &sge,
			    addr + (uint64_t)i * REGION, rkey_mr, IMM_BASE + (uint32_t)i,
			    IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}
	sge.length = INV_A_LEN;
	fill(buf, INV_A_LEN, 3);
	send_expect(c, l, "SEND_WITH_INV A", IBV_WR_SEND_WITH_INV, &sge, 0, 0, rkey_a,
		    IBV_WC_SUCCESS, IBV_WC_SEND);
	sge.length = WIN;
	fill(buf, WIN, 4);
	send_expect(c, l, "WRITE to window B after A's invalidation", IBV_WR_RDMA_WRITE, &sge,
		    win_b, rkey_b, 0, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	sge.length = INV_B_LEN;
	fill(buf, INV_B_LEN, 5);
	send_expect(c, l, "SEND_WITH_INV B", IBV_WR_SEND_WITH_INV, &sge, 0, 0, rkey_b,
		    IBV_WC_SUCCESS, IBV_WC_SEND);
	sge.length = WIN;
	fill(buf, WIN, 6);
	post_send(l, IBV_WR_RDMA_WRITE, &sge, win_a, rkey_a, 0);
	poll_one(l, &wc);
	if (wc.status == IBV_WC_RETRY_EXC_ERR && c->o.lossy)
		printf("note WRITE to invalidated window A: NAK lost, retries dropped\n");
	else if (wc.status != IBV_WC_REM_ACCESS_ERR)
		fail(c, "WRITE to invalidated window A: status %s, want %s",
		     ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	line_send(c->sock, "done");
	line_recv(c->sock, line, sizeof(line));
	ibv_dereg_mr(mr);
	free(buf);
}

/* Bind a type-2 window over [p, p + WIN) of mr; returns its rkey. */
static uint32_t
bind_window(struct link *l, struct ibv_mw *mw, struct ibv_mr *mr, uint8_t *p)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;

	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)p;
	wr.bind_mw.bind_info.length = WIN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (l->qpx != NULL) {
		ibv_wr_start(l->qpx);
		l->qpx->wr_id = 0;
		l->qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(l->qpx, mw, wr.bind_mw.rkey, &wr.bind_mw.bind_info);
		errno = ibv_wr_complete(l->qpx);
		if (errno)
			die("ibv_wr_complete bind mw");
	} else if (ibv_post_send(l->qp, &wr, &bad)) {
		die("post bind mw");
	}
	poll_one(l, &wc);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW) {
		fprintf(stderr, "imm_inv: bind mw%s: %s, opcode %d\n",
			l->qpx != NULL ? " (ibv_wr_bind_mw)" : "", ibv_wc_status_str(wc.status),
			wc.opcode);
		exit(2);
	}
	return wr.bind_mw.rkey;
}

/* One receive completion: opcode, length, flags, imm/rkey. */
static void
recv_expect(struct ctx *c, struct link *l, const char *what, enum ibv_wc_opcode want_op,
	    uint32_t want_len, unsigned int want_flag, uint32_t want_val, struct ibv_wc *wc)
{
	uint32_t val;

	poll_one(l, wc);
	if (wc->status != IBV_WC_SUCCESS) {
		fail(c, "%s: status %s", what, ibv_wc_status_str(wc->status));
		return;
	}
	if (wc->opcode != want_op)
		fail(c, "%s: opcode %d, want %d", what, wc->opcode, want_op);
	if (wc->byte_len != want_len)
		fail(c, "%s: byte_len %u, want %u", what, wc->byte_len, want_len);
	val = want_flag == IBV_WC_WITH_IMM ? ntohl(wc->imm_data) : wc->invalidated_rkey;
	if (!(wc->wc_flags & want_flag)) {
		if (want_flag == IBV_WC_WITH_INV && c->rxe)
			printf("note %s: rxe omits IBV_WC_WITH_INV (wc_flags 0x%x)\n", what,
			       wc->wc_flags);
		else
			fail(c, "%s: wc_flags 0x%x lack 0x%x", what, wc->wc_flags, want_flag);
	}
	if (val != want_val)
		fail(c, "%s: value 0x%08x, want 0x%08x", what, val, want_val);
}

static void
run_receiver(struct ctx *c, struct link *l)
{
	size_t size = (size_t)MAX_ITERS * REGION + 2 * WIN;
	uint32_t rkey_a, rkey_b;
	struct ibv_mr *mr, *rmr;
	struct ibv_mw *mw_a, *mw_b;
	uint8_t *buf, *rbuf, *win_a, *win_b;
	struct ibv_wc wc;
	char line[64], what[64];
	int i, nrecv = c->o.iters + 2;

	buf = aligned_alloc(4096, size);
	rbuf = aligned_alloc(4096, (size_t)nrecv * SLOT);
	if (buf == NULL || rbuf == NULL)
		die("alloc");
	memset(buf, 0, size);
	memset(rbuf, 0, (size_t)nrecv * SLOT);
	win_a = buf + (size_t)MAX_ITERS * REGION;
	win_b = win_a + WIN;
	mr = ibv_reg_mr(c->pd, buf, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_MW_BIND);
	rmr = ibv_reg_mr(c->pd, rbuf, (size_t)nrecv * SLOT, IBV_ACCESS_LOCAL_WRITE);
	mw_a = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2);
	mw_b = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2);
	if (mr == NULL || rmr == NULL || mw_a == NULL || mw_b == NULL)
		die("reg mr / alloc mw");
	rkey_a = bind_window(l, mw_a, mr, win_a);
	rkey_b = bind_window(l, mw_b, mr, win_b);
	for (i = 0; i < nrecv; i++) {
		struct ibv_sge sge = { (uintptr_t)rbuf + (size_t)i * SLOT, SLOT, rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(l->qp, &wr, &bad))
			die("post recv");
	}
	line_send(c->sock, "%" PRIx64 " %x %x %x", (uint64_t)(uintptr_t)buf, mr->rkey, rkey_a,
		  rkey_b);

	for (i = 0; i < c->o.iters; i++) {
		snprintf(what, sizeof(what), "WRITE_WITH_IMM %d (%u B)", i, imm_len(i));
		recv_expect(c, l, what, IBV_WC_RECV_RDMA_WITH_IMM, imm_len(i), IBV_WC_WITH_IMM,
			    IMM_BASE + (uint32_t)i, &wc);
		check(c, what, buf + (size_t)i * REGION, imm_len(i), 100u + (unsigned int)i);
		if (buf[(size_t)i * REGION + imm_len(i)] != 0)
			fail(c, "%s: wrote past its end", what);
	}
	recv_expect(c, l, "SEND_WITH_INV A", IBV_WC_RECV, INV_A_LEN, IBV_WC_WITH_INV, rkey_a, &wc);
	check(c, "SEND_WITH_INV A data", rbuf + wc.wr_id * SLOT, INV_A_LEN, 3);
	recv_expect(c, l, "SEND_WITH_INV B", IBV_WC_RECV, INV_B_LEN, IBV_WC_WITH_INV, rkey_b, &wc);
	check(c, "SEND_WITH_INV B data", rbuf + wc.wr_id * SLOT, INV_B_LEN, 5);
	check(c, "window B", win_b, WIN, 4);

	/* the sender saw its WRITE to the invalidated window A fail */
	line_recv(c->sock, line, sizeof(line));
	check(c, "window A after the refused WRITE", win_a, WIN, 1);
	/* nothing else may have completed successfully (flushes are fine) */
	while (ibv_poll_cq(l->cq, 1, &wc) == 1)
		if (wc.status == IBV_WC_SUCCESS)
			fail(c, "unexpected completion, opcode %d", wc.opcode);
	line_send(c->sock, "checked");
	printf("%s: %d WRITE_WITH_IMM (%u and %u B), SEND_WITH_INV %u and %u B, "
	       "window keys 0x%08x 0x%08x\n", c->failures ? "checked with failures" : "ok",
	       c->o.iters, SMALL_IMM, BIG_IMM, INV_A_LEN, INV_B_LEN, rkey_a, rkey_b);
}

static enum ibv_mtu
mtu_enum(int mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return IBV_MTU_1024;
	}
}

int
main(int argc, char **argv)
{
	struct ctx c = { .o = { .gidx = 1, .mtu = IBV_MTU_1024, .iters = 20, .port = 18600 } };
	int opt;

	while ((opt = getopt(argc, argv, "d:g:lm:n:p:w")) != -1) {
		switch (opt) {
		case 'd': c.o.dev = optarg; break;
		case 'g': c.o.gidx = atoi(optarg); break;
		case 'l': c.o.lossy = true; break;
		case 'm': c.o.mtu = mtu_enum(atoi(optarg)); break;
		case 'n': c.o.iters = atoi(optarg); break;
		case 'p': c.o.port = atoi(optarg); break;
		case 'w': c.o.wr_api = true; break;
		default:
			fprintf(stderr, "usage: imm_inv [-d DEV] [-g GIDX] [-m MTU] [-n ITERS] "
				"[-p PORT] [-l] [-w] [HOST]\n");
			return 2;
		}
	}
	if (c.o.iters < 1 || c.o.iters > MAX_ITERS)
		c.o.iters = MAX_ITERS;
	c.o.host = optind < argc ? argv[optind] : NULL;
	srand48(getpid() ^ time(NULL));
	setvbuf(stdout, NULL, _IOLBF, 0);

	open_dev(&c);
	link_create(&c, &c.link[0]);
	link_create(&c, &c.link[1]);
	c.sock = c.o.host ? tcp_rendezvous_connect(c.o.host, c.o.port) :
			    tcp_rendezvous_accept(c.o.port);
	if (c.sock < 0)
		die(c.o.host ? "connect" : "accept");
	exchange_and_connect(&c);
	if (c.o.host) {
		run_sender(&c, &c.link[0]);
		run_receiver(&c, &c.link[1]);
	} else {
		run_receiver(&c, &c.link[0]);
		run_sender(&c, &c.link[1]);
	}
	close(c.sock);
	return c.failures ? 1 : 0;
}
