/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_post_send(3) and ibv_post_recv(3), with ibv_wr_complete() (the same
 * posting, through ibv_wr_post(3)): in which QP states posting is allowed.
 * The IBA's table of QP states (vol 1, 10.3.1 and the verbs of 11.4.1), as
 * Soft-RoCE and the kernel apply it:
 *
 *   state         send queue                 receive queue
 *   RESET         EINVAL, nothing posted     EINVAL, nothing posted
 *   INIT, RTR     EINVAL, nothing posted     posted, used once in RTR
 *   RTS           posted and executed        posted
 *   SQD           posted, executed in RTS    posted
 *   SQE           posted, flushed            posted (droce never enters SQE)
 *   ERR           posted and flushed         posted and flushed
 *
 * For RC, UC and UD in each state droce enters (RESET fresh and after RTS,
 * INIT, RTR, RTS, SQD, ERR): the return value of each call; then, once the
 * QP is in RTS, a refused SEND never reaches the peer (every SEND carries
 * an immediate saying whether it was refused) and a receive accepted in
 * INIT or RTR takes the peer's SEND. And which opcodes each QP type may post
 * (UC: no SEND_WITH_INV, the IBA has no UC opcode with an invalidate).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_test.h"

#define IMM_REFUSED	0xbad	/* a SEND that must never arrive */
#define IMM_OK		0x600d	/* one that must */
#define LEN		8

static struct ibv_mr *lmr;		/* 4 KiB local buffer */
static struct vt_remote_mr rmr;		/* 4 KiB on the agent */

/* The states a QP is put in before posting. */
enum where { W_RESET, W_INIT, W_RTR, W_RTS, W_SQD, W_ERR, W_RESET_AFTER_RTS, W_COUNT };

static const char *const where_name[W_COUNT] = {
	[W_RESET] = "RESET", [W_INIT] = "INIT", [W_RTR] = "RTR", [W_RTS] = "RTS",
	[W_SQD] = "SQD", [W_ERR] = "ERR", [W_RESET_AFTER_RTS] = "RESET (after RTS)",
};

static const char *
type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

static bool
send_allowed(enum where w)
{
	return w == W_RTS || w == W_SQD || w == W_ERR;
}

static bool
recv_allowed(enum where w)
{
	return w != W_RESET && w != W_RESET_AFTER_RTS;
}

static void
modify(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	vt_require(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "modify_qp");
}

/* RESET -> INIT only, with vt_qp_up()'s INIT attributes. */
static void
to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = VT_QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	vt_require(ibv_modify_qp(qp, &a, mask) == 0, "modify_qp INIT");
}

/* The agent's QP of @p qp's type, up towards @p qp, which stays in RESET. */
static struct vt_remote_qp
remote_for(struct ibv_qp *qp)
{
	uint64_t a[1] = { qp->qp_type };
	struct vt_msg m = vt_call(VT_QP_NEW, 0, a, 1, NULL, 0);
	struct vt_remote_qp r;

	vt_require(m.status == 0, "remote QP");
	r.id = m.id;
	r.qpn = (uint32_t)m.a[0];
	memcpy(&r.gid, m.data, sizeof(r.gid));
	a[0] = qp->qp_num;
	vt_require(vt_call(VT_QP_UP, r.id, a, 1, &vt.gid, sizeof(vt.gid)).status == 0,
		   "remote QP up");
	return r;
}

static void
put_in(struct ibv_qp *qp, const struct vt_remote_qp *r, enum where w)
{
	switch (w) {
	case W_RESET:
		break;
	case W_INIT:
		to_init(qp);
		break;
	case W_RTR:
		vt_qp_up_to(qp, r->qpn, &r->gid, IBV_QPS_RTR);
		break;
	default:
		vt_qp_up(qp, r->qpn, &r->gid);
		if (w == W_SQD)
			modify(qp, IBV_QPS_SQD);
		else if (w == W_ERR)
			modify(qp, IBV_QPS_ERR);
		else if (w == W_RESET_AFTER_RTS)
			modify(qp, IBV_QPS_RESET);
		break;
	}
}

/* On to RTS from where put_in() left @p qp (ERR stays). */
static void
on_to_rts(struct ibv_qp *qp, const struct vt_remote_qp *r, enum where w)
{
	if (w == W_RTR)
		vt_qp_rts(qp);
	else if (w == W_SQD)
		modify(qp, IBV_QPS_RTS);
	else if (w != W_RTS && w != W_ERR)
		vt_qp_up(qp, r->qpn, &r->gid);	/* from RESET or INIT (INIT -> INIT is valid) */
}

/* ibv_post_send() of a signaled 8-byte SEND with immediate @p imm. */
static int
post_send(struct ibv_qp *qp, struct ibv_ah *ah, const struct vt_remote_qp *r, uint64_t wr_id,
	  uint32_t imm)
{
	struct ibv_sge sge = { (uintptr_t)lmr->addr, LEN, lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm),
	}, *bad = NULL;
	int ret;

	if (ah != NULL) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = r->qpn;
		wr.wr.ud.remote_qkey = VT_QKEY;
	}
	ret = ibv_post_send(qp, &wr, &bad);
	return ret != 0 && bad != &wr ? -1 : ret;	/* a failure names the WR */
}

/* The same SEND as a one-WQE ibv_wr_* batch: ibv_wr_complete()'s answer. */
static int
post_wr(struct ibv_qp *qp, struct ibv_ah *ah, const struct vt_remote_qp *r, uint64_t wr_id,
	uint32_t imm)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htonl(imm));
	if (ah != NULL)
		ibv_wr_set_ud_addr(x, ah, r->qpn, VT_QKEY);
	ibv_wr_set_sge(x, lmr->lkey, (uintptr_t)lmr->addr, LEN);
	return ibv_wr_complete(x);
}

static int
post_recv(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)lmr->addr + 1024, 512, lmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	int ret = ibv_post_recv(qp, &wr, &bad);

	return ret != 0 && bad != &wr ? -1 : ret;
}

/* Our next completion within @p ms: its wr_id and status, or false. */
static bool
next_wc(struct ibv_cq *cq, int ms, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	return vt_wait(cq, wc, ms);
}

/* The immediate of the agent's next receive, or -1 if none comes within @p ms. */
static long
remote_imm(const struct vt_remote_qp *r, int ms)
{
	struct vt_msg m = vt_remote_poll(r, ms);

	if (m.status != 0 || m.a[VT_WC_STATUS] != IBV_WC_SUCCESS)
		return -1;
	return (long)ntohl((uint32_t)m.a[VT_WC_IMM]);
}

static void
one_case(enum ibv_qp_type type, enum where w)
{
	struct ibv_cq *cq = vt_cq(16);
	struct ibv_qp *qp = vt_qp_ex(type, cq, IBV_QP_EX_WITH_SEND_WITH_IMM);
	struct vt_remote_qp r;
	struct ibv_ah *ah = NULL;
	bool ok_send = send_allowed(w), ok_recv = recv_allowed(w);
	int rs, rw, rr, n;
	struct ibv_wc wc;
	char name[200];

	vt_require(qp != NULL, "create_qp_ex");
	r = remote_for(qp);
	if (type == IBV_QPT_UD)
		ah = vt_ah(&r.gid);
	/* two receives on the agent: room for whatever might arrive */
	vt_remote_recv(&r, rmr.id, 0, 512, 1);
	vt_remote_recv(&r, rmr.id, 512, 512, 2);
	put_in(qp, &r, w);

	rs = post_send(qp, ah, &r, 10, ok_send ? IMM_OK : IMM_REFUSED);
	rw = post_wr(qp, ah, &r, 11, ok_send ? IMM_OK : IMM_REFUSED);
	rr = post_recv(qp, 12);
	snprintf(name, sizeof(name), "%s in %s: ibv_post_send %s, ibv_wr_complete %s, "
		 "ibv_post_recv %s", type_name(type), where_name[w], ok_send ? "0" : "EINVAL",
		 ok_send ? "0" : "EINVAL", ok_recv ? "0" : "EINVAL");
	vt_check(rs == (ok_send ? 0 : EINVAL) && rw == (ok_send ? 0 : EINVAL) &&
		 rr == (ok_recv ? 0 : EINVAL), name, "post_send %d, wr_complete %d, post_recv %d",
		 rs, rw, rr);

	if (w == W_ERR) {
		/* posted in ERR: each completes at once with IBV_WC_WR_FLUSH_ERR */
		unsigned int seen = 0;

		for (n = 0; n < 3 && next_wc(cq, VT_WAIT_MS, &wc); n++)
			if (wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id >= 10 && wc.wr_id <= 12)
				seen |= 1u << (wc.wr_id - 10);
		snprintf(name, sizeof(name), "%s in ERR: the two sends and the receive are flushed",
			 type_name(type));
		vt_check(seen == 7, name, "flushed %#x", seen);
		snprintf(name, sizeof(name), "%s in ERR: nothing reaches the peer", type_name(type));
		vt_check(remote_imm(&r, 200) == -1, name, "a SEND arrived");
		return;
	}

	on_to_rts(qp, &r, w);
	if (!ok_send) {
		/* refused: not even RTS sends them; a new SEND is the first to arrive */
		bool any = next_wc(cq, 300, &wc);

		snprintf(name, sizeof(name), "%s refused in %s: in RTS nothing completes for them",
			 type_name(type), where_name[w]);
		vt_check(!any, name, "wr_id %llu status %d", (unsigned long long)wc.wr_id,
			 wc.status);
		vt_require(post_send(qp, ah, &r, 20, IMM_OK) == 0, "post_send in RTS");
		snprintf(name, sizeof(name), "%s refused in %s: the peer's first SEND is the one "
			 "posted in RTS", type_name(type), where_name[w]);
		{
			long imm = remote_imm(&r, VT_WAIT_MS);

			vt_check(imm == IMM_OK, name, "immediate %#lx", imm);
		}
	} else {
		/* RTS sends them now, SQD once back in RTS: both arrive */
		long a = remote_imm(&r, VT_WAIT_MS), b = remote_imm(&r, VT_WAIT_MS);

		snprintf(name, sizeof(name), "%s posted in %s: both SENDs reach the peer",
			 type_name(type), where_name[w]);
		vt_check(a == IMM_OK && b == IMM_OK, name, "immediates %#lx %#lx", a, b);
	}
	if (ok_recv) {
		/* the receive posted back then takes the peer's SEND */
		int st = vt_remote_send(&(struct vt_pair){ .r = r }, IBV_WR_SEND, rmr.id, 0, LEN,
					0);
		bool got = false;

		for (n = 0; n < 4 && next_wc(cq, VT_WAIT_MS, &wc); n++)
			if (wc.wr_id == 12) {
				got = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV;
				break;
			}
		snprintf(name, sizeof(name), "%s: the receive posted in %s takes the peer's SEND",
			 type_name(type), where_name[w]);
		vt_check(st == IBV_WC_SUCCESS && got, name, "agent send %d, receive %s", st,
			 got ? "ok" : "missing");
	}
}

/*
 * Which opcodes each QP type may post (doc/verbs.md; lib/shm/droce_shm_ops.h):
 * ibv_post_send() refuses the others with EINVAL and *bad_wr at the WR. The
 * QP is in ERR, so an accepted WR is flushed rather than executed.
 */
static void
opcodes(void)
{
	static const struct {
		enum ibv_wr_opcode op;
		const char *name;
		bool rc, uc, ud;
	} ops[] = {
		{ IBV_WR_RDMA_WRITE, "RDMA_WRITE", true, true, false },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM", true, true, false },
		{ IBV_WR_SEND, "SEND", true, true, true },
		{ IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM", true, true, true },
		{ IBV_WR_RDMA_READ, "RDMA_READ", true, false, false },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP", true, false, false },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD", true, false, false },
		{ IBV_WR_LOCAL_INV, "LOCAL_INV", true, true, false },
		{ IBV_WR_SEND_WITH_INV, "SEND_WITH_INV", true, false, false },
		{ IBV_WR_TSO, "TSO", false, false, false },
		{ IBV_WR_DRIVER1, "DRIVER1", false, false, false },
	};
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct ibv_cq *cq = vt_cq(64);
	unsigned int t, i, bad = 0, flushed = 0, want_flushed = 0;
	struct ibv_wc wc;

	for (t = 0; t < VT_DIM(types); t++) {
		struct ibv_qp *qp = vt_qp(types[t], cq);
		struct ibv_ah *ah = vt_ah(&vt.gid);

		to_init(qp);		/* RESET -> ERR is no transition (IBA, kernel) */
		modify(qp, IBV_QPS_ERR);
		for (i = 0; i < VT_DIM(ops); i++) {
			struct ibv_sge sge = { (uintptr_t)lmr->addr, 8, lmr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = ops[i].op,
				.send_flags = IBV_SEND_SIGNALED,
			}, *bp = NULL;
			bool may = types[t] == IBV_QPT_RC ? ops[i].rc :
				   types[t] == IBV_QPT_UC ? ops[i].uc : ops[i].ud;
			int ret;

			wr.wr.rdma.remote_addr = rmr.addr;	/* atomics share the words */
			wr.wr.rdma.rkey = rmr.rkey;
			if (types[t] == IBV_QPT_UD) {
				wr.wr.ud.ah = ah;
				wr.wr.ud.remote_qpn = 1;
				wr.wr.ud.remote_qkey = VT_QKEY;
			}
			ret = ibv_post_send(qp, &wr, &bp);
			if (ret != (may ? 0 : EINVAL) || (ret != 0 && bp != &wr)) {
				printf("note %s %s: ibv_post_send %d, want %d\n", type_name(types[t]),
				       ops[i].name, ret, may ? 0 : EINVAL);
				bad++;
			}
			want_flushed += may;
		}
	}
	while (flushed < want_flushed && next_wc(cq, VT_WAIT_MS, &wc) &&
	       wc.status == IBV_WC_WR_FLUSH_ERR)
		flushed++;
	vt_check(bad == 0, "ibv_post_send takes each opcode exactly on the QP types that have it "
		 "(UC: no SEND_WITH_INV), EINVAL otherwise", "%u wrong", bad);
	vt_check(flushed == want_flushed && !next_wc(cq, 200, &wc),
		 "each accepted one is flushed (the QP is in ERR), nothing more", "%u of %u",
		 flushed, want_flushed);
}

static void
drive(void)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	unsigned int t, w;

	lmr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	memcpy(lmr->addr, "payload!", LEN);
	rmr = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	for (t = 0; t < VT_DIM(types); t++)
		for (w = 0; w < W_COUNT; w++)
			one_case(types[t], (enum where)w);
	opcodes();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
