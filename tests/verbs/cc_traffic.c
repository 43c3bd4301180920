/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Traffic for tests/verbs/cc_routed.sh: two RC QPs writing into the
 * agent's memory, one limited to $CC_LIMIT_KBPS by ibv_modify_qp_rate_limit,
 * the other unlimited, one 1 KiB WRITE (one packet) in flight on each so
 * that a QP DCQCN slows to its minimum rate never waits past its
 * retransmission timeout. The driver prints "qps LIMITED FREE" (their
 * numbers) and writes until the file $CC_STOP exists; every WRITE must
 * complete. The script reads the QPs' rates through droce-ctl meanwhile.
 */

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "verbs_test.h"

#define MSG		1024
#define RUN_MAX_S	100	/* the script's stop comes well before */

struct writer {
	struct vt_pair p;
	struct ibv_mr *mr;
	struct vt_remote_mr rmr;
	bool busy;
	uint64_t done;
	bool failed;
};

static void
writer_new(struct writer *w)
{
	/*
	 * vt_pair()'s RTS with a longer timeout (268 ms) and more retries: a
	 * daemon starved of CPU (sanitized, on a loaded machine) stalls for
	 * tens of ms, past vt's 4 x 16.7 ms
	 */
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 16, .retry_cnt = 7, .rnr_retry = 7,
		.max_rd_atomic = 1,
	};

	w->p.cq = vt_cq(64);
	w->p.qp = vt_qp(IBV_QPT_RC, w->p.cq);
	w->p.r = vt_remote_qp_to(w->p.qp, IBV_QPS_RTR);
	vt_require(ibv_modify_qp(w->p.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_MAX_QP_RD_ATOMIC) == 0, "modify_qp RTS");
	w->mr = vt_mr(MSG, IBV_ACCESS_LOCAL_WRITE);
	w->rmr = vt_remote_mr(MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

/* The WRITE in flight, if it completed. */
static void
writer_reap(struct writer *w)
{
	struct ibv_wc wc;

	if (!w->busy || ibv_poll_cq(w->p.cq, 1, &wc) != 1)
		return;
	w->busy = false;
	w->done++;
	if (wc.status != IBV_WC_SUCCESS) {
		w->failed = true;
		printf("# qp 0x%x: %s\n", w->p.qp->qp_num, ibv_wc_status_str(wc.status));
	}
}

/* Reap, then post a WRITE if none is in flight. */
static void
writer_step(struct writer *w)
{
	struct ibv_sge sge = { (uintptr_t)w->mr->addr, MSG, w->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = w->rmr.addr, .rkey = w->rmr.rkey },
	}, *bad;

	writer_reap(w);
	if (!w->busy && !w->failed) {
		if (ibv_post_send(w->p.qp, &wr, &bad) != 0)
			w->failed = true;
		else
			w->busy = true;
	}
}

static void
drive(void)
{
	static struct writer lim, free_qp;
	struct ibv_qp_rate_limit_attr a = { 0 };
	const char *stop = getenv("CC_STOP"), *kbps = getenv("CC_LIMIT_KBPS");
	struct stat st;
	time_t end = time(NULL) + RUN_MAX_S;
	unsigned int n = 0;

	vt_require(stop != NULL && kbps != NULL, "CC_STOP and CC_LIMIT_KBPS");
	writer_new(&lim);
	writer_new(&free_qp);
	a.rate_limit = (uint32_t)strtoul(kbps, NULL, 10);
	vt_require(ibv_modify_qp_rate_limit(lim.p.qp, &a) == 0, "ibv_modify_qp_rate_limit");
	printf("qps 0x%06x 0x%06x\n", lim.p.qp->qp_num, free_qp.p.qp->qp_num);
	while (!lim.failed && !free_qp.failed && time(NULL) < end) {
		writer_step(&lim);
		writer_step(&free_qp);
		if (++n % 64 == 0 && stat(stop, &st) == 0)
			break;
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);	/* the daemons share our cores */
	}
	/* the last WRITEs in flight complete too (10 s at most) */
	for (n = 0; n < 10000 && (lim.busy || free_qp.busy); n++) {
		writer_reap(&lim);
		writer_reap(&free_qp);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	vt_check(stat(stop, &st) == 0, "written until told to stop", "ran out of time");
	vt_check(!lim.failed && !lim.busy && lim.done > 0,
		 "the limited QP's WRITEs all completed", "%lu done, %s",
		 (unsigned long)lim.done, lim.failed ? "failed" : "one still in flight");
	vt_check(!free_qp.failed && !free_qp.busy && free_qp.done > 0,
		 "the unlimited QP's WRITEs all completed", "%lu done, %s",
		 (unsigned long)free_qp.done, free_qp.failed ? "failed" : "one still in flight");
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
