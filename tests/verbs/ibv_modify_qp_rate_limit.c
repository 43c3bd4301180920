/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_modify_qp_rate_limit(3) and the packet_pacing_caps of
 * ibv_query_device_ex(3): the range and QP types stated, refusals outside
 * them (EINVAL), and an RC QP's RDMA WRITEs held to their limit within 5 %
 * at two rates, while an unlimited QP beside it on the same daemons runs
 * at full speed (a paced QP never holds up another). droce counts the
 * limit in frames as they leave (Ethernet header to ICRC), so the
 * payload rate expected is the limit times payload / frame bytes, computed
 * from the QP's path MTU. 0 lifts the limit.
 *
 * perftest's `ib_write_bw --rate_limit_type=HW` cannot measure this on
 * any RoCE device: perftest 4.5 sets the AH's static_rate and refuses the
 * result unless the port's link layer is InfiniBand; its PP type is for
 * raw Ethernet QPs only (doc/transport.md).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "verbs_test.h"

#define MSG		(64 * 1024)
#define DEPTH		16		/* WRITEs in flight per QP */
#define RUN_NS		(2000ull * 1000 * 1000)
#define FRAME_OVERHEAD	(14 + 20 + 8 + 12 + 4)	/* Ethernet, IPv4, UDP, BTH, ICRC */
#define RETH_BYTES	16

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One QP writing MSG-byte messages into the agent's MR, DEPTH deep. */
struct writer {
	struct vt_pair p;
	struct ibv_mr *mr;
	struct vt_remote_mr rmr;
	unsigned int inflight;
	uint64_t done;			/* bytes completed */
	bool failed;
};

static void
writer_post(struct writer *w)
{
	struct ibv_sge sge = { (uintptr_t)w->mr->addr, MSG, w->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = w->rmr.addr, .rkey = w->rmr.rkey },
	}, *bad;

	if (ibv_post_send(w->p.qp, &wr, &bad) != 0)
		w->failed = true;
	else
		w->inflight++;
}

static void
writer_poll(struct writer *w)
{
	struct ibv_wc wc[DEPTH];
	int n, i;

	n = ibv_poll_cq(w->p.cq, DEPTH, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			w->failed = true;
		w->inflight--;
		w->done += MSG;
	}
}

/*
 * Run every writer of @p ws for RUN_NS; each one's payload rate in bits/s
 * into @p bps (from its first post to the end, completions only).
 */
static void
run(struct writer **ws, unsigned int n, double *bps)
{
	uint64_t start = now_ns(), t;
	unsigned int i;

	for (i = 0; i < n; i++)
		ws[i]->done = 0;
	do {
		for (i = 0; i < n; i++) {
			writer_poll(ws[i]);
			while (!ws[i]->failed && ws[i]->inflight < DEPTH)
				writer_post(ws[i]);
		}
		nanosleep(&(struct timespec){ 0, 50000 }, NULL);	/* the daemons share our cores */
		t = now_ns();
	} while (t - start < RUN_NS);
	for (i = 0; i < n; i++)
		bps[i] = ws[i]->done * 8e9 / (double)(t - start);
	/* drain, so the next run starts empty */
	for (t = now_ns(); now_ns() - t < 5000ull * 1000 * 1000;) {
		bool busy = false;

		for (i = 0; i < n; i++) {
			writer_poll(ws[i]);
			busy |= ws[i]->inflight > 0 && !ws[i]->failed;
		}
		if (!busy)
			break;
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
}

static void
writer_new(struct writer *w)
{
	memset(w, 0, sizeof(*w));
	w->p = vt_pair(IBV_QPT_RC, 0);
	w->mr = vt_mr(MSG, IBV_ACCESS_LOCAL_WRITE);
	w->rmr = vt_remote_mr(MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

static int
set_limit(struct ibv_qp *qp, uint32_t kbps, uint32_t burst, uint16_t pkt)
{
	struct ibv_qp_rate_limit_attr a = { .rate_limit = kbps, .max_burst_sz = burst,
					    .typical_pkt_sz = pkt };

	return ibv_modify_qp_rate_limit(qp, &a);
}

/* Payload share of the frames of one MSG-byte WRITE at path MTU @p mtu. */
static double
payload_share(uint32_t mtu)
{
	uint32_t pkts = (MSG + mtu - 1) / mtu;

	return (double)MSG / (MSG + (double)pkts * FRAME_OVERHEAD + RETH_BYTES);
}

static void
caps_and_refusals(struct writer *w, struct ibv_packet_pacing_caps *caps)
{
	struct ibv_device_attr_ex dx;
	struct ibv_qp_rate_limit_attr bad = { .rate_limit = 1000, .comp_mask = 1 };
	struct ibv_cq *cq = vt_cq(8);
	struct ibv_qp *ud = vt_qp(IBV_QPT_UD, cq), *uc = vt_qp(IBV_QPT_UC, cq);

	memset(&dx, 0, sizeof(dx));
	vt_require(ibv_query_device_ex(vt.ctx, NULL, &dx) == 0, "query_device_ex");
	*caps = dx.packet_pacing_caps;
	vt_check(caps->qp_rate_limit_min >= 1 && caps->qp_rate_limit_max >= 1000000,
		 "packet_pacing_caps: a range up to the port's speed (kbps)", "min %u max %u",
		 caps->qp_rate_limit_min, caps->qp_rate_limit_max);
	vt_check(caps->supported_qpts == (1u << IBV_QPT_RC | 1u << IBV_QPT_UC | 1u << IBV_QPT_UD),
		 "packet_pacing_caps: RC, UC and UD", "supported_qpts %#x", caps->supported_qpts);
	vt_check(set_limit(w->p.qp, caps->qp_rate_limit_max + 1, 0, 0) == EINVAL,
		 "a limit above qp_rate_limit_max: EINVAL", "not EINVAL");
	vt_check(caps->qp_rate_limit_min <= 1 ||
		 set_limit(w->p.qp, caps->qp_rate_limit_min - 1, 0, 0) == EINVAL,
		 "a limit below qp_rate_limit_min: EINVAL", "not EINVAL");
	vt_check(ibv_modify_qp_rate_limit(w->p.qp, &bad) == EINVAL,
		 "an unknown comp_mask bit: EINVAL", "not EINVAL");
	vt_check(set_limit(ud, 10000, 0, 0) == 0 && set_limit(uc, 10000, 4096, 1024) == 0 &&
		 set_limit(ud, 0, 0, 0) == 0, "UD and UC QPs take a limit and lose it", "refused");
	ibv_destroy_qp(ud);
	ibv_destroy_qp(uc);
	ibv_destroy_cq(cq);
}

static void
drive(void)
{
	static struct writer paced, free_qp;
	struct writer *both[2] = { &paced, &free_qp };
	struct ibv_packet_pacing_caps caps;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	double bps[2], base, share, want, limits[2];
	unsigned int i;

	writer_new(&paced);
	writer_new(&free_qp);
	caps_and_refusals(&paced, &caps);
	vt_require(ibv_query_qp(paced.p.qp, &qa, IBV_QP_PATH_MTU, &qia) == 0, "query_qp");
	share = payload_share(128u << qa.path_mtu);

	run(both, 1, &base);
	printf("# unlimited: %.0f Mb/s payload\n", base / 1e6);
	vt_check(!paced.failed && base > 0, "unlimited WRITEs complete", "failed");
	/* two limits well under what the pair carries unlimited */
	limits[0] = 100e6;
	limits[1] = base / 3 > 100e6 ? (base / 3 < 1e9 ? base / 3 : 1e9) : 50e6;
	for (i = 0; i < 2; i++) {
		uint32_t kbps = (uint32_t)(limits[i] / 1000);
		char name[96];

		vt_require(set_limit(paced.p.qp, kbps, 0, 0) == 0, "ibv_modify_qp_rate_limit");
		run(both, 1, bps);
		want = kbps * 1000.0 * share;
		snprintf(name, sizeof(name), "limit %u kbps: %.1f Mb/s payload, want %.1f (+-5%%)",
			 kbps, bps[0] / 1e6, want / 1e6);
		vt_check(!paced.failed && bps[0] > want * 0.95 && bps[0] < want * 1.05, name,
			 "%.1f%% off", 100.0 * (bps[0] - want) / want);
	}
	/* beside a paced QP, an unlimited one keeps its speed */
	vt_require(set_limit(paced.p.qp, 100000, 0, 0) == 0, "ibv_modify_qp_rate_limit");
	run(both, 2, bps);
	printf("# together: paced %.1f Mb/s, unlimited %.1f Mb/s\n", bps[0] / 1e6, bps[1] / 1e6);
	/*
	 * Beside a QP that fills the link, frames are lost at the receiver's
	 * port and go-back-N costs the paced QP time it may not make up (the
	 * bucket banks 2 ms): it never passes its limit, and keeps most of it.
	 */
	want = 100e6 * share;
	vt_check(bps[0] < want * 1.05 && bps[0] > want * 0.5,
		 "the paced QP stays under its limit beside an unlimited one, and near it",
		 "%.1f Mb/s", bps[0] / 1e6);
	vt_check(bps[1] > base * 0.5, "the unlimited QP runs at its speed beside a paced one",
		 "%.0f Mb/s of %.0f", bps[1] / 1e6, base / 1e6);
	/* 0 lifts the limit */
	vt_require(set_limit(paced.p.qp, 0, 0, 0) == 0, "ibv_modify_qp_rate_limit 0");
	run(both, 1, bps);
	vt_check(!paced.failed && bps[0] > base * 0.5, "rate_limit 0 lifts the limit",
		 "%.0f Mb/s of %.0f", bps[0] / 1e6, base / 1e6);
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
