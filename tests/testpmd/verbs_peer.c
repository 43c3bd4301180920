/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The verbs end of droce-testpmd's tests against droced (run it with
 * droce-run): one RC QP and one memory region through the plain verbs API.
 *
 *   verbs_peer sink|udsink REMOTE_IP REMOTE_QPN SIZE
 *       serve a droce-testpmd generator (RC, or UD with Q_Key 0x11111111):
 *       print "qpn Q rkey K addr A", keep receives posted, and at
 *       "check MODE COUNT" on stdin check what the generator did (write:
 *       the region holds one of its messages; send, ud: COUNT messages
 *       arrived, each one of them; fadd: the word is COUNT)
 *   verbs_peer source REMOTE_IP REMOTE_QPN COUNT
 *       drive a droce-testpmd responder (key 0x1000, address 0): print
 *       "qpn Q", wait for "go" on stdin, then WRITE COUNT messages, READ
 *       them back and compare, and FETCH_ADD COUNT times (the word ends at
 *       COUNT, each fetch saw the one before)
 *   verbs_peer udsource REMOTE_IP REMOTE_QPN COUNT
 *       print "qpn Q", wait for "go", send COUNT UD messages of 256 bytes
 *       (for droce-testpmd's raw mode, which checks and counts them)
 * Prints "ok" or what failed; exit 0 only on "ok".
 *
 * droce-testpmd fills its memory with byte i = i mod 251, and posts
 * message n of a QP from offset (n mod depth) * size.
 */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rc_connect.h"

#define GID_INDEX	1		/* droce's first IPv4 GID */
#define DEPTH		16		/* droce-testpmd's default --depth */
#define RECVS		256
#define TP_KEY		0x1000		/* droce-testpmd's default --key */
#define TP_QKEY		0x11111111	/* droce-testpmd's default --qkey */
#define GRH		40		/* UD receives start with the GRH area */

struct peer {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;		/* UD: to the remote */
	uint32_t remote_qpn;
	uint8_t *buf;
	size_t len;
};

static void
die(const char *what)
{
	fprintf(stderr, "FAIL %s\n", what);
	exit(1);
}

static void
setup_ud(struct peer *p, const struct ibv_ah_attr *ah)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = TP_QKEY };

	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE))
		die("UD RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
	p->ah = ibv_create_ah(p->pd, (struct ibv_ah_attr *)ah);
	if (p->ah == NULL)
		die("AH");
}

static void
setup(struct peer *p, enum ibv_qp_type type, const char *remote_ip, uint32_t remote_qpn,
      size_t len)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct in_addr ip;

	if (list == NULL || list[0] == NULL || (p->ctx = ibv_open_device(list[0])) == NULL)
		die("no device");
	ibv_free_device_list(list);
	p->len = len;
	p->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = ibv_create_cq(p->ctx, 2 * RECVS, NULL, NULL, 0);
	if (p->buf == NULL || p->pd == NULL || p->cq == NULL)
		die("pd/cq");
	memset(p->buf, 0, len);
	p->mr = ibv_reg_mr(p->pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	init.send_cq = init.recv_cq = p->cq;
	init.qp_type = type;
	init.cap.max_send_wr = 64;
	init.cap.max_recv_wr = RECVS;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	p->qp = ibv_create_qp(p->pd, &init);
	if (p->mr == NULL || p->qp == NULL)
		die("mr/qp");

	p->remote_qpn = remote_qpn;
	if (inet_pton(AF_INET, remote_ip, &ip) != 1)
		die("remote IP");
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid.raw[10] = a.ah_attr.grh.dgid.raw[11] = 0xff;
	memcpy(&a.ah_attr.grh.dgid.raw[12], &ip, 4);
	a.ah_attr.grh.sgid_index = GID_INDEX;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (type == IBV_QPT_UD) {
		setup_ud(p, &a.ah_attr);
		return;
	}
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS))
		die("INIT");
	{
		struct rc_peer peer = { .gid = a.ah_attr.grh.dgid, .sgid_index = GID_INDEX,
					.qpn = remote_qpn, .rq_psn = 0, .sq_psn = 0,
					.rd_atomic = 16, .timeout = 14 };	/* testpmd's PSNs: 0 */

		if (rc_connect(p->qp, &peer))
			die("RTR/RTS");
	}
}

/* Does @p msg hold one of droce-testpmd's messages of @p size bytes? */
static bool
is_message(const uint8_t *msg, size_t size)
{
	size_t k, j;

	for (k = 0; k < DEPTH; k++) {
		for (j = 0; j < size && msg[j] == (uint8_t)((k * size + j) % 251); j++)
			;
		if (j == size)
			return true;
	}
	return false;
}

static void
post_recv(struct peer *p, uint32_t slot, uint32_t size)
{
	struct ibv_sge sge = { (uintptr_t)p->buf + (size_t)slot * size, size, p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(p->qp, &wr, &bad))
		die("post_recv");
}

static int
sink(struct peer *p, uint32_t size, uint32_t grh)
{
	char line[64], mode[16];
	unsigned long long count, got = 0;
	uint32_t i;
	int bad = 0;

	for (i = 0; i < RECVS; i++)
		post_recv(p, i, size + grh);
	printf("qpn %u rkey %u addr %llu\n", p->qp->qp_num, p->mr->rkey,
	       (unsigned long long)(uintptr_t)p->buf);
	fflush(stdout);
	/* receives are checked as they come; stdin says when the generator is done */
	for (;;) {
		struct ibv_wc wc[16];
		fd_set in;
		struct timeval tv = { 0, 2000 };
		int n = ibv_poll_cq(p->cq, 16, wc), k;

		for (k = 0; k < n; k++) {
			uint8_t *slot = p->buf + wc[k].wr_id * (size + grh);

			if (wc[k].status != IBV_WC_SUCCESS || wc[k].byte_len != size + grh ||
			    !is_message(slot + grh, size))
				bad++;
			got++;
			post_recv(p, (uint32_t)wc[k].wr_id, size + grh);
		}
		FD_ZERO(&in);
		FD_SET(0, &in);
		if (n == 0 && select(1, &in, NULL, NULL, &tv) > 0)
			break;
	}
	if (fgets(line, sizeof(line), stdin) == NULL ||
	    sscanf(line, "check %15s %llu", mode, &count) != 2)
		die("no check command");
	if (strcmp(mode, "write") == 0 && !is_message(p->buf, size)) {
		fprintf(stderr, "FAIL write: the region holds no message of the generator's\n");
		return 1;
	}
	if ((strcmp(mode, "send") == 0 || strcmp(mode, "ud") == 0) && (got != count || bad)) {
		fprintf(stderr, "FAIL %s: %llu received, %d bad, %llu expected\n", mode, got, bad,
			count);
		return 1;
	}
	if (strcmp(mode, "fadd") == 0 && *(uint64_t *)p->buf != count) {
		fprintf(stderr, "FAIL fadd: word %llu, expected %llu\n",
			(unsigned long long)*(uint64_t *)p->buf, count);
		return 1;
	}
	printf("ok\n");
	return 0;
}

/* Post one send WR and wait for its completion. */
static void
one(struct peer *p, enum ibv_wr_opcode op, uint64_t laddr, uint32_t len, uint64_t raddr,
    uint64_t add)
{
	struct ibv_sge sge = { laddr, len, p->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = TP_KEY;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = TP_KEY;
	}
	if (ibv_post_send(p->qp, &wr, &bad))
		die("post_send");
	while ((n = ibv_poll_cq(p->cq, 1, &wc)) == 0)
		usleep(50);
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "FAIL %s: %s\n", op == IBV_WR_RDMA_READ ? "read" : "write/fadd",
			ibv_wc_status_str(wc.status));
		exit(1);
	}
}

static int
source(struct peer *p, unsigned long long count)
{
	const uint32_t size = 1000;	/* one packet each at MTU 1024 */
	char line[16];
	unsigned long long i;

	printf("qpn %u\n", p->qp->qp_num);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "go", 2) != 0)
		die("no go");
	for (i = 0; i < count; i++) {
		uint8_t *msg = p->buf + 8;
		uint32_t j;

		for (j = 0; j < size; j++)
			msg[j] = (uint8_t)(i * 7 + j);
		one(p, IBV_WR_RDMA_WRITE, (uintptr_t)msg, size, 4096 + (i % 16) * size, 0);
		memset(msg, 0, size);
		one(p, IBV_WR_RDMA_READ, (uintptr_t)msg, size, 4096 + (i % 16) * size, 0);
		for (j = 0; j < size && msg[j] == (uint8_t)(i * 7 + j); j++)
			;
		if (j != size) {
			fprintf(stderr, "FAIL message %llu read back differs at byte %u\n", i, j);
			return 1;
		}
		one(p, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)p->buf, 8, 0, 1);
		if (*(uint64_t *)p->buf != i) {
			fprintf(stderr, "FAIL fetch-add %llu returned %llu\n", i,
				(unsigned long long)*(uint64_t *)p->buf);
			return 1;
		}
	}
	printf("ok\n");
	return 0;
}

static int
udsource(struct peer *p, unsigned long long count)
{
	struct ibv_sge sge = { (uintptr_t)p->buf, 256, p->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned long long i, done = 0;
	char line[16];

	wr.wr.ud.ah = p->ah;
	wr.wr.ud.remote_qpn = p->remote_qpn;
	wr.wr.ud.remote_qkey = TP_QKEY;
	printf("qpn %u\n", p->qp->qp_num);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "go", 2) != 0)
		die("no go");
	for (i = 0; i < count; i++) {
		struct ibv_wc wc;
		int n;

		if (ibv_post_send(p->qp, &wr, &bad))
			die("post_send");
		while ((n = ibv_poll_cq(p->cq, 1, &wc)) == 0)
			usleep(20);	/* one at a time: the raw peer sees every one */
		if (n < 0 || wc.status != IBV_WC_SUCCESS)
			die("UD send completion");
		done++;
	}
	printf("ok\n");
	return done == count ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct peer p = { 0 };
	const char *mode = argc == 5 ? argv[1] : "";
	bool ud = strncmp(mode, "ud", 2) == 0;
	bool sinks = strcmp(mode, "sink") == 0 || strcmp(mode, "udsink") == 0;
	unsigned long long n;

	if (!sinks && strcmp(mode, "source") != 0 && strcmp(mode, "udsource") != 0)
		return 2;
	n = strtoull(argv[4], NULL, 0);
	setup(&p, ud ? IBV_QPT_UD : IBV_QPT_RC, argv[2], (uint32_t)strtoul(argv[3], NULL, 0),
	      sinks ? RECVS * (n + GRH) : 1 << 16);
	if (sinks)
		return sink(&p, (uint32_t)n, ud ? GRH : 0);
	return ud ? udsource(&p, n) : source(&p, n);
}
