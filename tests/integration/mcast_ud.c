/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * UD multicast through droce with the plain verbs API (run it with
 * droce-run): receivers attach to a group and check what arrives; a sender
 * sends to the group.
 *
 *   mcast_ud recv GROUP SECONDS [twice|detach|igmp]   prints "got N bad B"
 *   mcast_ud send GROUP COUNT
 *
 * Message i carries i (big-endian) in its first 4 bytes and a pattern that
 * depends on i in the rest. A receiver checks each completion (status,
 * opcode, length, GRH flag) and every payload byte, and that the numbers
 * arrive exactly once and in order from 0: any other message is bad, and
 * the first few problems (gap, duplicate, corrupt byte) are printed. "got N
 * bad 0" thus means messages 0..N-1 exactly once each, in order; a
 * receiver exits 1 if any was bad.
 *
 * GROUP is an IPv4 group (RoCEv2 MGID ::ffff:a.b.c.d). "twice" attaches
 * the QP twice (still one copy per packet); "detach" attaches and detaches
 * again before anything is sent (then nothing may arrive). "igmp" also
 * joins the group in the kernel's IP stack on the interface of GID 1, as
 * rdma_cm does for RoCEv2: Linux Soft-RoCE needs that to receive, since
 * its ibv_attach_mcast only programs a MAC filter (and an IPv6-style one,
 * 33:33:..., for an IPv4 group) and the IP layer drops groups not joined.
 */

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define QKEY	0x11110000u
#define MSG	256
#define DEPTH	256

static void
die(const char *what)
{
	perror(what);
	exit(2);
}

/* Byte i of message seq (i >= 4): 31 is odd, so two messages less than 256
 * apart differ in every byte. */
static uint8_t
pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31u + i * 7u + 1u);
}

static void
fill(uint8_t *p, uint32_t seq)
{
	size_t i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(seq >> (24 - 8 * i));
	for (; i < MSG; i++)
		p[i] = pattern(seq, i);
}

/* The receiver's verdict so far. */
struct tally {
	uint32_t next;		/* the number the next message must carry */
	int got, bad;
};

static void
problem(struct tally *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
problem(struct tally *t, const char *fmt, ...)
{
	va_list ap;

	if (t->bad++ >= 5)	/* the first few say enough */
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* One completion with its buffer (GRH area, then the message). */
static void
check(struct tally *t, const struct ibv_wc *wc, const uint8_t *buf)
{
	const uint8_t *p = buf + 40;
	uint32_t seq;
	size_t i;

	t->got++;
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    wc->byte_len != MSG + 40 || !(wc->wc_flags & IBV_WC_GRH)) {
		problem(t, "completion %d: status %s opcode %d byte_len %u wc_flags 0x%x (want "
			"success, RECV, %d, GRH)", t->got, ibv_wc_status_str(wc->status),
			wc->opcode, wc->byte_len, wc->wc_flags, MSG + 40);
		return;
	}
	seq = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	for (i = 4; i < MSG; i++) {
		if (p[i] != pattern(seq, i)) {
			problem(t, "message %u: byte %zu is 0x%02x, want 0x%02x", seq, i, p[i],
				pattern(seq, i));
			return;
		}
	}
	if (seq == t->next) {
		t->next++;
		return;
	}
	if (seq == t->next + 1)
		problem(t, "gap: message %u missing (%u arrived)", t->next, seq);
	else if (seq > t->next)
		problem(t, "gap: messages %u to %u missing (%u arrived)", t->next, seq - 1, seq);
	else
		problem(t, "duplicate or out of order: message %u after %u", seq, t->next - 1);
	if (seq >= t->next)
		t->next = seq + 1;	/* count what follows against this one */
}

/* Join GROUP on the interface that owns the IPv4 address in GID 1. */
static void
igmp_join(struct ibv_context *ctx, struct in_addr group)
{
	struct ip_mreq mr = { .imr_multiaddr = group };
	union ibv_gid gid;
	int fd;

	if (ibv_query_gid(ctx, 1, 1, &gid))
		die("query gid");
	memcpy(&mr.imr_interface, &gid.raw[12], 4);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	/* fd stays open: the membership lasts as long as the process */
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		die("IP_ADD_MEMBERSHIP");
}

static void
post_recv(struct ibv_qp *qp, struct ibv_mr *mr, char *buf, int slot)
{
	struct ibv_sge sge = { (uintptr_t)buf + (size_t)slot * (MSG + 40), MSG + 40, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1 }, *bad_wr;

	if (ibv_post_recv(qp, &wr, &bad_wr))
		die("post recv");
}

int
main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_qp_attr attr = { 0 };
	union ibv_gid mgid = { 0 };
	struct in_addr group;
	bool recv;
	char *buf;
	int n, i;

	if (argc < 4 || inet_pton(AF_INET, argv[2], &group) != 1)
		return 2;
	recv = strcmp(argv[1], "recv") == 0;
	n = atoi(argv[3]);
	mgid.raw[10] = 0xff;
	mgid.raw[11] = 0xff;
	memcpy(&mgid.raw[12], &group, 4);

	list = ibv_get_device_list(NULL);
	if (list == NULL || list[0] == NULL)
		die("no device");
	ctx = ibv_open_device(list[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = aligned_alloc(4096, (size_t)DEPTH * (MSG + 40));
	if (buf == NULL)
		die("aligned_alloc");
	memset(buf, 0, (size_t)DEPTH * (MSG + 40));
	mr = pd ? ibv_reg_mr(pd, buf, (size_t)DEPTH * (MSG + 40), IBV_ACCESS_LOCAL_WRITE) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0) : NULL;
	if (mr == NULL || cq == NULL)
		die("setup");
	init.send_cq = init.recv_cq = cq;
	init.qp_type = IBV_QPT_UD;
	init.cap.max_send_wr = init.cap.max_recv_wr = DEPTH;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &init);
	if (qp == NULL)
		die("create qp");
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = QKEY;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("init");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		die("rtr");
	attr.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("rts");

	if (recv) {
		const char *how = argc > 4 ? argv[4] : "";
		struct ibv_wc wc;
		time_t end = time(NULL) + n;
		struct tally t = { 0 };

		for (i = 0; i < DEPTH; i++)
			post_recv(qp, mr, buf, i);
		if (ibv_attach_mcast(qp, &mgid, 0))
			die("attach");
		if (strcmp(how, "twice") == 0 && ibv_attach_mcast(qp, &mgid, 0))
			die("attach twice");
		if (strcmp(how, "detach") == 0 && ibv_detach_mcast(qp, &mgid, 0))
			die("detach");
		if (strcmp(how, "igmp") == 0)
			igmp_join(ctx, group);
		printf("READY\n");
		fflush(stdout);
		while (time(NULL) < end) {
			while (ibv_poll_cq(cq, 1, &wc) == 1) {
				uint8_t *slot = (uint8_t *)buf + wc.wr_id * (MSG + 40);

				check(&t, &wc, slot);
				memset(slot, 0, MSG + 40);	/* no stale data next time */
				post_recv(qp, mr, buf, (int)wc.wr_id);
			}
			usleep(1000);
		}
		printf("got %d bad %d\n", t.got, t.bad);
		return t.bad ? 1 : 0;
	} else {
		struct ibv_ah_attr ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .dgid = mgid, .sgid_index = 1, .hop_limit = 8 },
		};
		struct ibv_ah *ah = ibv_create_ah(pd, &ah_attr);
		struct ibv_wc wc;

		if (ah == NULL)
			die("create ah");
		for (i = 0; i < n; i++) {
			struct ibv_sge sge = { (uintptr_t)buf, MSG, mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			}, *bad_wr;

			fill((uint8_t *)buf, (uint32_t)i);
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = 0xffffff;
			wr.wr.ud.remote_qkey = QKEY;
			if (ibv_post_send(qp, &wr, &bad_wr))
				die("post send");
			while (ibv_poll_cq(cq, 1, &wc) == 0)
				;
			if (wc.status != IBV_WC_SUCCESS)
				die("send completion");
			usleep(2000);	/* af_packet drops bursts; UD does not retry */
		}
		printf("sent %d\n", n);
		return 0;
	}
}
