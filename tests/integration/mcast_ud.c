/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * UD multicast through droce with the plain verbs API (run it with
 * droce-run): receivers attach to a group and count what arrives; a sender
 * sends to the group.
 *
 *   mcast_ud recv GROUP SECONDS [twice|detach|igmp]   prints "got N"
 *   mcast_ud send GROUP COUNT
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
#include <stdbool.h>
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
		int got = 0, bad = 0;

		for (i = 0; i < DEPTH; i++) {
			struct ibv_sge sge = { (uintptr_t)buf + (size_t)i * (MSG + 40), MSG + 40, mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad_wr;

			if (ibv_post_recv(qp, &wr, &bad_wr))
				die("post recv");
		}
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
				const char *p = buf + wc.wr_id * (MSG + 40) + 40;

				if (wc.status != IBV_WC_SUCCESS || wc.byte_len != MSG + 40 ||
				    strncmp(p, "droce multicast", 15) != 0)
					bad++;
				got++;
			}
			usleep(1000);
		}
		printf("got %d bad %d\n", got, bad);
		return bad ? 1 : 0;
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

			snprintf(buf, MSG, "droce multicast %d", i);
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
