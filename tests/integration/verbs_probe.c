/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Small probes of droced's rules through the plain verbs API (run with
 * droce-run):
 *   verbs_probe qkey     a UD QP asks for a privileged Q_Key (high bit set):
 *                        prints "qkey ok" or "qkey EPERM" (CAP_NET_RAW rule)
 *   verbs_probe fatal    prints "waiting", then the next async event:
 *                        "event DEVICE_FATAL" when the daemon stops
 *   verbs_probe srq      an SRQ armed with a limit raises
 *                        IBV_EVENT_SRQ_LIMIT_REACHED once it drains below it
 *   verbs_probe mw       memory windows type 1 and 2 on a looped-back RC
 *                        pair: access inside/outside the window, invalidation,
 *                        dereg while bound
 * srq and mw print "ok NAME" per check and "FAIL NAME ..." otherwise.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int failures;

static void
check(int cond, const char *name, const char *detail)
{
	printf("%s %s%s%s\n", cond ? "ok  " : "FAIL", name, cond ? "" : ": ", cond ? "" : detail);
	failures += !cond;
}

/* Two RC QPs on one device connected to each other (never on the wire). */
struct rc_pair {
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
};

static void
rc_pair(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_srq *srq, struct rc_pair *p)
{
	union ibv_gid gid;
	int i;

	p->pd = pd;
	if (ibv_query_gid(ctx, 1, 1, &gid))
		exit(2);
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr init = {
			.qp_type = IBV_QPT_RC,
			.srq = i == 1 ? srq : NULL,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		p->cq[i] = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		init.send_cq = init.recv_cq = p->cq[i];
		p->qp[i] = ibv_create_qp(pd, &init);
		if (p->qp[i] == NULL)
			exit(2);
	}
	for (i = 0; i < 2; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		};

		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
			exit(2);
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = p->qp[!i]->qp_num;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.sgid_index = 1;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			exit(2);
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 10;
		a.retry_cnt = 2;
		a.rnr_retry = 2;
		a.max_rd_atomic = 1;
		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
			exit(2);
	}
}

static struct ibv_wc
wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	int i;

	for (i = 0; i < 5000 && ibv_poll_cq(cq, 1, &wc) == 0; i++)
		usleep(1000);		/* up to 5 s */
	return wc;
}

/* RDMA WRITE of @len bytes from @src to @raddr under @rkey; its status. */
static int
rdma_write(struct rc_pair *p, struct ibv_mr *src, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)src->addr, len, src->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	if (ibv_post_send(p->qp[0], &wr, &bad))
		return -1;
	return wait_wc(p->cq[0]).status;
}

static int
probe_srq(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	char *buf = calloc(1, 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_srq_attr sa = { .srq_limit = 8 };
	struct ibv_async_event ev;
	struct rc_pair p;
	int i;

	if (srq == NULL || mr == NULL)
		return 2;
	rc_pair(ctx, pd, srq, &p);
	for (i = 0; i < 10; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + 64u * (unsigned int)i, 64, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			return 2;
	}
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0, "srq arm limit 8", "modify_srq");
	sa.srq_limit = 100;
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == EINVAL, "srq limit above max_wr is EINVAL",
	      "accepted");
	for (i = 0; i < 3; i++) {	/* 10 posted, 3 used: 7 < 8 */
		struct ibv_sge sge = { (uintptr_t)buf + 2048, 16, mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		if (ibv_post_send(p.qp[0], &wr, &bad))
			return 2;
		check(wait_wc(p.cq[0]).status == IBV_WC_SUCCESS, "srq send", "status");
		check(wait_wc(p.cq[1]).status == IBV_WC_SUCCESS, "srq receive", "status");
	}
	check(ibv_get_async_event(ctx, &ev) == 0 && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
	      ev.element.srq == srq, "IBV_EVENT_SRQ_LIMIT_REACHED", "other event");
	ibv_ack_async_event(&ev);
	check(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 0, "srq disarmed after the event",
	      "still armed");
	return failures ? 1 : 0;
}

static int
probe_mw(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *src = calloc(1, 8192), *dst = calloc(1, 8192);
	struct ibv_mr *smr = ibv_reg_mr(pd, src, 8192, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *dmr = ibv_reg_mr(pd, dst, 8192, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mr *nobind = ibv_reg_mr(pd, src + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind bind = { .wr_id = 7, .send_flags = IBV_SEND_SIGNALED };
	uint64_t win = (uintptr_t)dst + 1024;
	struct rc_pair p;
	uint32_t old;

	if (smr == NULL || dmr == NULL || nobind == NULL || mw1 == NULL || mw2 == NULL)
		return 2;
	rc_pair(ctx, pd, NULL, &p);
	memset(src, 'x', 4096);

	/* type 1 through ibv_bind_mw(): a window of 1 KiB at dst + 1024 */
	bind.bind_info.mr = dmr;
	bind.bind_info.addr = win;
	bind.bind_info.length = 1024;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	old = mw1->rkey;
	check(ibv_bind_mw(p.qp[1], mw1, &bind) == 0 && wait_wc(p.cq[1]).status == IBV_WC_SUCCESS,
	      "type 1 bind completes", "failed");
	check(mw1->rkey != old, "bind gives a new R_Key in mw->rkey", "same key");
	check(ibv_dereg_mr(dmr) == EBUSY, "dereg_mr fails while a window is bound", "not EBUSY");
	check(rdma_write(&p, smr, win, mw1->rkey, 1024) == IBV_WC_SUCCESS && dst[1024] == 'x' &&
	      dst[2047] == 'x' && dst[2048] == 0 && dst[1023] == 0, "WRITE inside the window lands",
	      "wrong bytes");
	check(rdma_write(&p, smr, win + 512, mw1->rkey, 1024) == IBV_WC_REM_ACCESS_ERR && dst[2048] == 0,
	      "WRITE past the window's end: remote access error, target untouched", "accepted");

	/* the pair is in error now: a fresh one for type 2 */
	rc_pair(ctx, pd, NULL, &p);
	bind.bind_info.mr = nobind;
	check(ibv_bind_mw(p.qp[1], mw1, &bind) != 0 || wait_wc(p.cq[1]).status != IBV_WC_SUCCESS,
	      "bind to an MR without MW_BIND fails", "bound");
	rc_pair(ctx, pd, NULL, &p);
	{
		struct ibv_send_wr wr = {
			.wr_id = 9, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
			.bind_mw = { .mw = mw2, .rkey = ibv_inc_rkey(mw2->rkey),
				     .bind_info = { .mr = dmr, .addr = win, .length = 1024,
						    .mw_access_flags = IBV_ACCESS_REMOTE_WRITE } },
		}, *bad;
		uint32_t rkey2 = wr.bind_mw.rkey;

		check(ibv_post_send(p.qp[1], &wr, &bad) == 0 && wait_wc(p.cq[1]).status == IBV_WC_SUCCESS,
		      "type 2 bind by work request", "failed");
		memset(src, 'y', 1024);
		check(rdma_write(&p, smr, win, rkey2, 512) == IBV_WC_SUCCESS && dst[1024] == 'y',
		      "WRITE through the type 2 window", "failed");
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = rkey2;
		check(ibv_post_send(p.qp[1], &wr, &bad) == 0 && wait_wc(p.cq[1]).status == IBV_WC_SUCCESS,
		      "LOCAL_INV of the type 2 window", "failed");
		memset(src, 'z', 1024);
		check(rdma_write(&p, smr, win, rkey2, 512) == IBV_WC_REM_ACCESS_ERR && dst[1024] == 'y',
		      "the invalidated R_Key stops working at once", "still works");
	}
	return failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2 || ctx == NULL) {
		fprintf(stderr, "no device\n");
		return 2;
	}
	if (strcmp(argv[1], "qkey") == 0) {
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
		struct ibv_qp_init_attr init = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct ibv_qp *qp = pd && cq ? ibv_create_qp(pd, &init) : NULL;
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					    .qkey = 0x80010000u };
		int ret;

		if (qp == NULL)
			return 2;
		ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY);
		printf("qkey %s\n", ret == 0 ? "ok" : ret == EPERM ? "EPERM" : strerror(ret));
		return 0;
	}
	if (strcmp(argv[1], "srq") == 0)
		return probe_srq(ctx);
	if (strcmp(argv[1], "mw") == 0)
		return probe_mw(ctx);
	if (strcmp(argv[1], "fatal") == 0) {
		struct ibv_async_event ev;

		printf("waiting\n");
		fflush(stdout);
		if (ibv_get_async_event(ctx, &ev) != 0)
			return 1;
		printf("event %s\n", ev.event_type == IBV_EVENT_DEVICE_FATAL ? "DEVICE_FATAL" :
		       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		return 0;
	}
	return 2;
}
