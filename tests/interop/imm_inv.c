/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RDMA WRITE with immediate and SEND with invalidate between two RoCE
 * stacks (droce through droce-run, Linux Soft-RoCE in a VM: the same
 * binary, linked against the system's libibverbs, runs on both).
 *
 *   imm_inv server PORT [lenient-inv]
 *   imm_inv client SERVER_IP PORT
 *
 * The server binds a type 2 memory window over its buffer and hands its
 * R_Key to the client over TCP. The client writes 64 bytes with immediate
 * through the window, sends 16 bytes with invalidate of the window's R_Key,
 * then writes through the window again. The server checks the data, the
 * first completion (IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM, the value)
 * and the second (IBV_WC_RECV, IBV_WC_WITH_INV, the invalidated R_Key);
 * the client checks that the last write fails with a remote access error.
 * "lenient-inv" only reports a missing IBV_WC_WITH_INV: Linux Soft-RoCE
 * leaves it out (the man pages and verbs.h call for it). Prints "ok"; exit
 * 0 only then.
 */

#include <arpa/inet.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rc_connect.h"

#define GID_INDEX	1		/* the IPv4 RoCEv2 GID on droce and on rxe */
#define IMM		0x12345678u
#define WLEN		64
#define SLEN		16

struct info {				/* what each side tells the other */
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct info me;
};

static void
die(const char *what)
{
	fprintf(stderr, "FAIL %s\n", what);
	exit(1);
}

static void
open_side(struct side *s)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (list == NULL || list[0] == NULL || (s->ctx = ibv_open_device(list[0])) == NULL)
		die("no RDMA device");
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	s->buf = calloc(1, 4096);
	if (s->pd == NULL || s->cq == NULL || s->buf == NULL)
		die("pd/cq");
	s->mr = ibv_reg_mr(s->pd, s->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							 IBV_ACCESS_MW_BIND);
	init.send_cq = init.recv_cq = s->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = init.cap.max_recv_wr = 8;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	s->qp = ibv_create_qp(s->pd, &init);
	if (s->mr == NULL || s->qp == NULL)
		die("mr/qp");
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS))
		die("INIT");
	if (ibv_query_gid(s->ctx, 1, GID_INDEX, &s->me.gid))
		die("query_gid");
	s->me.qpn = s->qp->qp_num;
	s->me.psn = (uint32_t)lrand48() & 0xffffff;
	s->me.addr = (uintptr_t)s->buf;
}

static void
connect_qp(struct side *s, const struct info *peer)
{
	struct rc_peer p = { .gid = peer->gid, .sgid_index = GID_INDEX, .qpn = peer->qpn,
			     .rq_psn = peer->psn, .sq_psn = s->me.psn, .rd_atomic = 1,
			     .timeout = 18 };	/* rxe under emulation: generous */

	if (rc_connect(s->qp, &p))
		die("RTR/RTS");
}

/* The next completion, within 30 s (emulated peers are slow). */
static struct ibv_wc
next_wc(struct side *s)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 300000; i++) {
		int n = ibv_poll_cq(s->cq, 1, &wc);

		if (n < 0)
			die("poll_cq");
		if (n == 1)
			return wc;
		usleep(100);
	}
	die("no completion within 30 s");
	return wc;
}

static int
tcp(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = host ? 0 : AI_PASSIVE }, *ai;
	int fd, one = 1, i;

	if (getaddrinfo(host, port, &hints, &ai) != 0)
		die("getaddrinfo");
	fd = socket(ai->ai_family, ai->ai_socktype, 0);
	if (host == NULL) {
		int l;

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1))
			die("listen");
		l = fd;
		fd = accept(l, NULL, NULL);
		close(l);
	} else {
		for (i = 0; i < 100 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0; i++)
			usleep(100000);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		die("tcp");
	return fd;
}

static void
xchg(int fd, const struct info *mine, struct info *peer)
{
	if (write(fd, mine, sizeof(*mine)) != sizeof(*mine) ||
	    recv(fd, peer, sizeof(*peer), MSG_WAITALL) != sizeof(*peer))
		die("exchange");
}

static int
server(const char *port, bool lenient_inv)
{
	struct side s = { 0 };
	struct info peer;
	struct ibv_mw *mw;
	struct ibv_sge sge = { 0 };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr bind = { .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int fd, fails = 0, i;
	char done;

	open_side(&s);
	fd = tcp(NULL, port);
	if (recv(fd, &peer, sizeof(peer), MSG_WAITALL) != sizeof(peer))
		die("exchange");
	connect_qp(&s, &peer);
	/* a type 2 window over the first 1 KiB, bound through the send queue */
	mw = ibv_alloc_mw(s.pd, IBV_MW_TYPE_2);
	if (mw == NULL)
		die("alloc_mw");
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	bind.bind_mw.bind_info.mr = s.mr;
	bind.bind_mw.bind_info.addr = (uintptr_t)s.buf;
	bind.bind_mw.bind_info.length = 1024;
	bind.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(s.qp, &bind, &bad) || next_wc(&s).status != IBV_WC_SUCCESS)
		die("bind_mw");
	s.me.rkey = bind.bind_mw.rkey;
	for (i = 0; i < 2; i++) {	/* one for WRITE_IMM, one for SEND_INV */
		sge.addr = (uintptr_t)s.buf + 2048 + 64 * i;
		sge.length = 64;
		sge.lkey = s.mr->lkey;
		rwr.wr_id = (uint64_t)i;
		if (ibv_post_recv(s.qp, &rwr, &rbad))
			die("post_recv");
	}
	if (write(fd, &s.me, sizeof(s.me)) != sizeof(s.me))
		die("exchange");

	wc = next_wc(&s);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(wc.wc_flags & IBV_WC_WITH_IMM) || ntohl(wc.imm_data) != IMM || wc.byte_len != WLEN) {
		fprintf(stderr, "FAIL write_imm completion: status %d opcode %d flags %#x imm %#x len %u\n",
			wc.status, wc.opcode, wc.wc_flags, ntohl(wc.imm_data), wc.byte_len);
		fails++;
	}
	for (i = 0; i < WLEN && s.buf[i] == (uint8_t)(i + 1); i++)
		;
	if (i != WLEN) {
		fprintf(stderr, "FAIL write_imm data differs at byte %d\n", i);
		fails++;
	}
	wc = next_wc(&s);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len != SLEN ||
	    memcmp(s.buf + 2048 + 64, "send-with-inval!", SLEN) != 0) {
		fprintf(stderr, "FAIL send_inv completion: status %d opcode %d len %u\n", wc.status,
			wc.opcode, wc.byte_len);
		fails++;
	} else if (!(wc.wc_flags & IBV_WC_WITH_INV) || wc.invalidated_rkey != s.me.rkey) {
		fprintf(stderr, "%s send_inv: flags %#x invalidated_rkey %#x, want IBV_WC_WITH_INV and %#x\n",
			lenient_inv ? "note" : "FAIL", wc.wc_flags, wc.invalidated_rkey, s.me.rkey);
		fails += !lenient_inv;
	}
	/* the client's last write must fail; wait for its verdict */
	if (recv(fd, &done, 1, MSG_WAITALL) != 1 || done != 'y') {
		fprintf(stderr, "FAIL the write after SEND_WITH_INV was not refused\n");
		fails++;
	}
	close(fd);
	if (fails == 0)
		printf("ok\n");
	return fails ? 1 : 0;
}

static void
post(struct side *s, enum ibv_wr_opcode op, uint32_t off, uint32_t len, const struct info *peer)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = peer->addr;
	wr.wr.rdma.rkey = peer->rkey;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(IMM);
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = peer->rkey;
	if (ibv_post_send(s->qp, &wr, &bad))
		die("post_send");
}

static int
client(const char *host, const char *port)
{
	struct side s = { 0 };
	struct info peer;
	struct ibv_wc wc;
	char verdict;
	int fd, i;

	open_side(&s);
	fd = tcp(host, port);
	xchg(fd, &s.me, &peer);
	connect_qp(&s, &peer);
	for (i = 0; i < WLEN; i++)
		s.buf[i] = (uint8_t)(i + 1);
	memcpy(s.buf + 128, "send-with-inval!", SLEN);
	post(&s, IBV_WR_RDMA_WRITE_WITH_IMM, 0, WLEN, &peer);
	if ((wc = next_wc(&s)).status != IBV_WC_SUCCESS)
		die("write_imm completion");
	post(&s, IBV_WR_SEND_WITH_INV, 128, SLEN, &peer);
	if ((wc = next_wc(&s)).status != IBV_WC_SUCCESS)
		die("send_inv completion");
	post(&s, IBV_WR_RDMA_WRITE, 0, WLEN, &peer);
	wc = next_wc(&s);
	verdict = wc.status == IBV_WC_REM_ACCESS_ERR ? 'y' : 'n';
	if (verdict != 'y')
		fprintf(stderr, "FAIL the write through the invalidated window: %s\n",
			ibv_wc_status_str(wc.status));
	if (write(fd, &verdict, 1) != 1)
		die("verdict");
	close(fd);
	if (verdict == 'y')
		printf("ok\n");
	return verdict == 'y' ? 0 : 1;
}

int
main(int argc, char **argv)
{
	srand48((long)time(NULL) ^ getpid());
	if (argc >= 3 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argc > 3 && strcmp(argv[3], "lenient-inv") == 0);
	if (argc == 4 && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: imm_inv server PORT [lenient-inv] | client SERVER_IP PORT\n");
	return 2;
}
