/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_create_cq_ex(3): what creation accepts and refuses, and the polling
 * iterator (ibv_start_poll / ibv_next_poll / ibv_end_poll) with every
 * ibv_wc_read_*() of the wc_flags droce offers (IBV_WC_STANDARD_FLAGS,
 * COMPLETION_TIMESTAMP and _WALLCLOCK: the timestamps count in the clock of
 * ibv_query_rt_values_ex() and go forward, the wall clock is CLOCK_REALTIME
 * at the same moment), on completions the agent's SENDs cause (RC and
 * UD, SEND_WITH_INV) and on an error completion of our own; comp_vector's
 * range and cq_context in the completion event.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "verbs_test.h"

#define WC_FLAGS (IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define NS_PER_S 1000000000ull

static uint64_t
ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * NS_PER_S + (uint64_t)t->tv_nsec;
}

static struct ibv_mr *lmr;
static struct vt_remote_mr rmr;

static struct ibv_cq_ex *
cq_ex(int cqe, uint64_t wc_flags, uint32_t comp_mask, uint32_t flags)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = (uint32_t)cqe, .wc_flags = wc_flags, .comp_mask = comp_mask,
		.flags = flags, .channel = NULL,
	};

	errno = 0;
	return ibv_create_cq_ex(vt.ctx, &a);
}

static void
creation(void)
{
	static const struct {
		uint64_t wc_flags;
		uint32_t comp_mask, flags;
		int err;
		const char *name;
	} bad[] = {
		{ IBV_WC_EX_WITH_CVLAN, 0, 0, EOPNOTSUPP, "WITH_CVLAN: EOPNOTSUPP" },
		{ IBV_WC_EX_WITH_FLOW_TAG, 0, 0, EOPNOTSUPP, "WITH_FLOW_TAG: EOPNOTSUPP" },
		{ 0, IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, EOPNOTSUPP,
		  "IGNORE_OVERRUN: EOPNOTSUPP" },
		{ 0, IBV_CQ_INIT_ATTR_MASK_PD, 0, EINVAL,
		  "IBV_CQ_INIT_ATTR_MASK_PD without a parent domain: EINVAL (ibv_alloc_td tests one)" },
		{ 0, 1u << 7, 0, EINVAL, "an unknown comp_mask bit: EINVAL" },
	};
	struct ibv_device_attr_ex dx;
	struct ibv_cq_ex *cq;
	unsigned int i;

	cq = cq_ex(10, WC_FLAGS, IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	vt_check(cq != NULL && ibv_cq_ex_to_cq(cq)->cqe >= 10,
		 "every offered wc_flag, SINGLE_THREADED: created with cqe >= the request",
		 "errno %d", errno);
	if (cq != NULL) {
		struct ibv_poll_cq_attr pa = { 0 };

		vt_check(ibv_start_poll(cq, &pa) == ENOENT,
			 "ibv_start_poll on an empty CQ: ENOENT", "not ENOENT");
		vt_check(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "destroyed by ibv_destroy_cq",
			 "failed");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cq = cq_ex(10, bad[i].wc_flags, bad[i].comp_mask, bad[i].flags);
		vt_check(cq == NULL && errno == bad[i].err, bad[i].name, "cq %p errno %d",
			 (void *)cq, errno);
	}
	memset(&dx, 0, sizeof(dx));
	vt_check(ibv_query_device_ex(vt.ctx, NULL, &dx) == 0 && dx.hca_core_clock == 1000000 &&
		 dx.completion_timestamp_mask == UINT64_MAX,
		 "ibv_query_device_ex: hca_core_clock 1000000 kHz (timestamps are ns), "
		 "completion_timestamp_mask all 64 bits", "clock %llu mask %#llx",
		 (unsigned long long)dx.hca_core_clock,
		 (unsigned long long)dx.completion_timestamp_mask);
	{
		struct ibv_values_ex v1 = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK }, v2 = v1;
		struct ibv_values_ex bad = { .comp_mask = IBV_VALUES_MASK_RESERVED };
		struct ibv_values_ex none = { .comp_mask = 0 };

		vt_check(ibv_query_rt_values_ex(vt.ctx, &v1) == 0 &&
			 ibv_query_rt_values_ex(vt.ctx, &v2) == 0 &&
			 ts_ns(&v1.raw_clock) != 0 && ts_ns(&v2.raw_clock) >= ts_ns(&v1.raw_clock),
			 "ibv_query_rt_values_ex RAW_CLOCK: set, never goes back", "failed");
		vt_check(ibv_query_rt_values_ex(vt.ctx, &bad) == EINVAL &&
			 ibv_query_rt_values_ex(vt.ctx, &none) == 0,
			 "ibv_query_rt_values_ex: an unknown mask bit EINVAL, mask 0 nothing to do",
			 "failed");
	}
}

/* Start or continue the batch, waiting up to VT_WAIT_MS for a completion. */
static int
next(struct ibv_cq_ex *cq, bool first)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int i, ret = ENOENT;

	for (i = 0; i < VT_WAIT_MS / 10 && ret == ENOENT; i++) {
		ret = first ? ibv_start_poll(cq, &pa) : ibv_next_poll(cq);
		if (ret == ENOENT)
			poll(NULL, 0, 10);
	}
	return ret;
}

static void
iterate(void)
{
	struct ibv_cq_ex *cq = cq_ex(16, WC_FLAGS, 0, 0);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct vt_pair p;
	uint64_t ts0, wall0;

	vt_require(cq != NULL, "create_cq_ex");
	init.send_cq = init.recv_cq = ibv_cq_ex_to_cq(cq);
	p.cq = ibv_cq_ex_to_cq(cq);
	p.qp = ibv_create_qp(vt.pd, &init);
	vt_require(p.qp != NULL, "create_qp");
	p.r = vt_remote_qp(p.qp);
	vt_recv(p.qp, 101, (uintptr_t)lmr->addr, 64, lmr->lkey);
	vt_recv(p.qp, 102, (uintptr_t)lmr->addr + 64, 64, lmr->lkey);
	vt_require(vt_remote_send(&p, IBV_WR_SEND_WITH_IMM, rmr.id, 0xc0ffee, 24, 0) == 0 &&
		   vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == 0, "agent sends");

	vt_check(next(cq, true) == 0, "ibv_start_poll returns the first completion", "none");
	vt_check(cq->wr_id == 101 && cq->status == IBV_WC_SUCCESS,
		 "wr_id and status read directly from the CQ", "wr_id %llu status %d",
		 (unsigned long long)cq->wr_id, cq->status);
	vt_check(ibv_wc_read_opcode(cq) == IBV_WC_RECV, "ibv_wc_read_opcode", "%d",
		 ibv_wc_read_opcode(cq));
	vt_check(ibv_wc_read_byte_len(cq) == 24, "ibv_wc_read_byte_len", "%u",
		 ibv_wc_read_byte_len(cq));
	vt_check((ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM) &&
		 ntohl(ibv_wc_read_imm_data(cq)) == 0xc0ffee,
		 "ibv_wc_read_wc_flags and ibv_wc_read_imm_data", "flags %#x",
		 ibv_wc_read_wc_flags(cq));
	vt_check(ibv_wc_read_qp_num(cq) == p.qp->qp_num, "ibv_wc_read_qp_num", "%u",
		 ibv_wc_read_qp_num(cq));
	/* src_qp is defined for UD only (ibv_poll_cq(3)); ibv_wr_post covers UD's */
	(void)ibv_wc_read_src_qp(cq);
	vt_check(ibv_wc_read_vendor_err(cq) == 0, "ibv_wc_read_vendor_err is 0 on success",
		 "%u", ibv_wc_read_vendor_err(cq));
	/* RoCE has no LIDs or path bits: 0, as rdma-core reports them for RoCE */
	vt_check(ibv_wc_read_slid(cq) == 0 && ibv_wc_read_dlid_path_bits(cq) == 0 &&
		 ibv_wc_read_sl(cq) <= 7, "ibv_wc_read_slid, _sl, _dlid_path_bits", "slid %u",
		 ibv_wc_read_slid(cq));
	ts0 = ibv_wc_read_completion_ts(cq);
	wall0 = ibv_wc_read_completion_wallclock_ns(cq);
	{
		struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
		struct timespec rt;
		uint64_t now, wnow;
		int64_t skew;

		vt_require(ibv_query_rt_values_ex(vt.ctx, &v) == 0, "query_rt_values_ex");
		clock_gettime(CLOCK_REALTIME, &rt);
		now = ts_ns(&v.raw_clock);
		wnow = ts_ns(&rt);
		vt_check(ts0 != 0 && ts0 <= now && now - ts0 < 60 * NS_PER_S,
			 "ibv_wc_read_completion_ts: shortly before ibv_query_rt_values_ex's clock",
			 "ts %llu now %llu", (unsigned long long)ts0, (unsigned long long)now);
		vt_check(wall0 != 0 && wall0 <= wnow && wnow - wall0 < 60 * NS_PER_S,
			 "ibv_wc_read_completion_wallclock_ns: shortly before CLOCK_REALTIME",
			 "wall %llu now %llu", (unsigned long long)wall0, (unsigned long long)wnow);
		/* both stamps of one completion are one moment: they differ by the clocks' offset */
		skew = (int64_t)(wall0 - ts0) - (int64_t)(wnow - now);
		vt_check(skew > -(int64_t)NS_PER_S && skew < (int64_t)NS_PER_S,
			 "the wall clock stamp and the raw one are the same moment",
			 "off by %lld ns", (long long)skew);
	}

	vt_check(next(cq, false) == 0 && cq->wr_id == 102 &&
		 ibv_wc_read_opcode(cq) == IBV_WC_RECV && ibv_wc_read_byte_len(cq) == 8 &&
		 !(ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM),
		 "ibv_next_poll advances to the second completion", "wrong");
	vt_check(ibv_wc_read_completion_ts(cq) > ts0, "a later completion has a later timestamp",
		 "%llu after %llu", (unsigned long long)ibv_wc_read_completion_ts(cq),
		 (unsigned long long)ts0);
	vt_check(ibv_wc_read_completion_wallclock_ns(cq) >= wall0,
		 "and a wall clock stamp no earlier", "went back");
	vt_check(ibv_next_poll(cq) == ENOENT, "ibv_next_poll past the last: ENOENT", "not ENOENT");
	ibv_end_poll(cq);

	/* an error completion of our own: status, opcode, vendor_err */
	{
		struct ibv_sge sge = { (uintptr_t)lmr->addr, 8, lmr->lkey ^ 0x5a5a00 };
		struct ibv_send_wr wr = { .wr_id = 103, .opcode = IBV_WR_SEND, .sg_list = &sge,
					  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *bad;

		vt_require(ibv_post_send(p.qp, &wr, &bad) == 0, "post_send");
		vt_check(next(cq, true) == 0 && cq->wr_id == 103 &&
			 cq->status == IBV_WC_LOC_PROT_ERR,
			 "an error completion through the iterator", "wr_id %llu status %d",
			 (unsigned long long)cq->wr_id, cq->status);
		(void)ibv_wc_read_vendor_err(cq);
		ibv_end_poll(cq);
	}
	ibv_destroy_qp(p.qp);
	vt_check(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "ibv_destroy_cq of an extended CQ",
		 "failed");
}

/*
 * The rest of the attributes and reads: comp_vector's range, cq_context in
 * the completion event, and on a UD receive ibv_wc_read_src_qp (the
 * sender's QPN), IBV_WC_GRH and ibv_wc_read_pkey_index; on a SEND_WITH_INV
 * ibv_wc_read_invalidated_rkey.
 */
static void
more_fields(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(vt.ctx);
	struct ibv_mr *bmr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_MW_BIND);
	struct ibv_cq_init_attr_ex a = {
		.cqe = 16, .wc_flags = WC_FLAGS, .channel = ch, .cq_context = &lmr,
	};
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct pollfd pfd;
	struct ibv_cq_ex *cq;
	struct ibv_cq *ecq;
	struct ibv_mw *mw;
	struct vt_pair p;
	void *ectx = NULL;
	uint32_t rkey;

	vt_require(ch != NULL, "channel");
	a.comp_vector = vt.ctx->num_comp_vectors;
	errno = 0;
	vt_check(ibv_create_cq_ex(vt.ctx, &a) == NULL && errno == EINVAL,
		 "comp_vector must be < num_comp_vectors (else EINVAL)", "errno %d", errno);
	a.comp_vector = -1;
	errno = 0;
	vt_check(ibv_create_cq_ex(vt.ctx, &a) == NULL && errno == EINVAL,
		 "comp_vector must be >= 0 (else EINVAL)", "errno %d", errno);
	a.comp_vector = vt.ctx->num_comp_vectors - 1;
	cq = ibv_create_cq_ex(vt.ctx, &a);
	vt_require(cq != NULL, "create_cq_ex with a channel");
	p.cq = ibv_cq_ex_to_cq(cq);
	init.send_cq = init.recv_cq = p.cq;

	/* UD from a second QP of ours: src_qp, GRH; the event carries cq_context */
	init.qp_type = IBV_QPT_UD;
	p.qp = ibv_create_qp(vt.pd, &init);
	vt_require(p.qp != NULL, "UD QP");
	{
		struct ibv_cq *scq = vt_cq(8);
		struct ibv_qp *snd = vt_qp(IBV_QPT_UD, scq);
		struct ibv_ah *ah = vt_ah(&vt.gid);
		struct ibv_sge sge = { (uintptr_t)lmr->addr, 16, lmr->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1 };
		union ibv_gid g = vt.gid;

		vt_qp_up(p.qp, 0, &g);
		vt_qp_up(snd, 0, &g);
		vt_recv(p.qp, 201, (uintptr_t)lmr->addr + 1024, 64 + VT_GRH_BYTES, lmr->lkey);
		vt_require(ibv_req_notify_cq(p.cq, 0) == 0, "req_notify_cq");
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = p.qp->qp_num;
		wr.wr.ud.remote_qkey = VT_QKEY;
		vt_require(vt_post_wait(snd, &wr) == IBV_WC_SUCCESS, "UD send");
		pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
		vt_check(poll(&pfd, 1, VT_WAIT_MS) == 1 && ibv_get_cq_event(ch, &ecq, &ectx) == 0 &&
			 ecq == p.cq && ectx == (void *)&lmr,
			 "the completion event carries the CQ and its cq_context", "ctx %p", ectx);
		if (ectx != NULL)
			ibv_ack_cq_events(p.cq, 1);
		vt_check(next(cq, true) == 0 && cq->wr_id == 201 && cq->status == IBV_WC_SUCCESS &&
			 ibv_wc_read_src_qp(cq) == snd->qp_num &&
			 (ibv_wc_read_wc_flags(cq) & IBV_WC_GRH) &&
			 ibv_wc_read_byte_len(cq) == 16 + VT_GRH_BYTES,
			 "UD: ibv_wc_read_src_qp is the sender's QPN, IBV_WC_GRH set, byte_len "
			 "with the GRH", "src_qp %u want %u", ibv_wc_read_src_qp(cq), snd->qp_num);
		ibv_end_poll(cq);
		ibv_destroy_qp(snd);
		ibv_destroy_ah(ah);
	}
	ibv_destroy_qp(p.qp);

	/* RC: a SEND_WITH_INV of a type 2 window's R_Key */
	init.qp_type = IBV_QPT_RC;
	p.qp = ibv_create_qp(vt.pd, &init);
	vt_require(p.qp != NULL, "RC QP");
	p.r = vt_remote_qp(p.qp);
	mw = ibv_alloc_mw(vt.pd, IBV_MW_TYPE_2);
	vt_require(mw != NULL, "alloc_mw");
	{
		struct ibv_send_wr wr = { .wr_id = 202, .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
			.mr = bmr, .addr = (uintptr_t)bmr->addr, .length = 256,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
		};
		vt_require(ibv_post_send(p.qp, &wr, &bad) == 0 && next(cq, true) == 0 &&
			   cq->wr_id == 202 && cq->status == IBV_WC_SUCCESS, "bind");
		ibv_end_poll(cq);
	}
	vt_recv(p.qp, 203, (uintptr_t)lmr->addr + 2048, 64, lmr->lkey);
	{
		uint64_t args[5] = { IBV_WR_SEND_WITH_INV, rkey, rmr.id, 0, 8 };

		vt_require(vt_call(VT_SEND, p.r.id, args, 5, NULL, 0).status == 0, "agent send_inv");
	}
	vt_check(next(cq, true) == 0 && cq->wr_id == 203 &&
		 (ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_INV) &&
		 ibv_wc_read_invalidated_rkey(cq) == rkey,
		 "ibv_wc_read_invalidated_rkey: the R_Key a SEND_WITH_INV invalidated", "%#x",
		 ibv_wc_read_invalidated_rkey(cq));
	ibv_end_poll(cq);
	ibv_destroy_qp(p.qp);
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(bmr);
	vt_check(ibv_destroy_cq(p.cq) == 0 && ibv_destroy_comp_channel(ch) == 0,
		 "CQ and channel destroyed", "failed");
}

static void
drive(void)
{
	lmr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	rmr = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	creation();
	iterate();
	more_fields();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
