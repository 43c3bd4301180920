/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_resize_cq(3): a CQ grows and shrinks while completions are pending,
 * and none is lost, duplicated or reordered (each receive's wr_id and the
 * sender's immediate data count up); cq->cqe reads the new size, at least
 * the one asked for. Fewer entries than are pending fail with EINVAL and
 * leave the CQ as it was (Soft-RoCE refuses the same: cqe below the number
 * of unpolled entries); so do 0, a negative size and one above max_cqe. A
 * grown CQ holds more than the old size could; indices carry on across the
 * new ring's wrap; an arm made before the resize still raises its event;
 * an extended CQ is resized through ibv_cq_ex_to_cq().
 */

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "verbs_test.h"

static struct ibv_mr *lmr;
static struct vt_remote_mr rmr;
static uint32_t next_seq;	/* wr_id and immediate of the next message */
static uint32_t polled;		/* the next sequence number we expect to poll */

/* Wait for the solicited completion event of @p cq (armed by the caller). */
static bool
solicited_event(struct ibv_cq *cq)
{
	struct pollfd pfd = { .fd = cq->channel->fd, .events = POLLIN };
	struct ibv_cq *ecq;
	void *ectx;

	if (poll(&pfd, 1, VT_WAIT_MS) != 1 || ibv_get_cq_event(cq->channel, &ecq, &ectx) != 0)
		return false;
	ibv_ack_cq_events(ecq, 1);
	return ecq == cq;
}

/*
 * @p n receives completed on @p qp's CQ and left there unpolled: the agent
 * SENDs n messages with immediates next_seq...; the last is solicited, so
 * its event says every one is in (a QP's completions arrive in order).
 */
static void
pend(struct ibv_qp *qp, const struct vt_pair *p, uint32_t n, bool arm)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		vt_recv(qp, next_seq + i, (uintptr_t)lmr->addr, 64, lmr->lkey);
	if (arm)
		vt_require(ibv_req_notify_cq(qp->recv_cq, 1) == 0, "req_notify_cq");
	for (i = 0; i < n; i++, next_seq++)
		vt_require(vt_remote_send(p, IBV_WR_SEND_WITH_IMM, rmr.id, next_seq, 8,
					  i + 1 == n ? IBV_SEND_SOLICITED : 0) == 0, "agent send");
	vt_require(solicited_event(qp->recv_cq), "the solicited event");
}

/* Poll everything: exactly @p n completions, in sequence. */
static bool
drain(struct ibv_cq *cq, uint32_t n)
{
	struct ibv_wc wc[8];
	uint32_t got = 0;
	int k, i;
	bool ok = true;

	while ((k = ibv_poll_cq(cq, (int)VT_DIM(wc), wc)) > 0) {
		for (i = 0; i < k; i++, got++, polled++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != polled ||
			    ntohl(wc[i].imm_data) != polled) {
				printf("     completion %u: status %d wr_id %llu imm %u, want %u\n",
				       got, wc[i].status, (unsigned long long)wc[i].wr_id,
				       ntohl(wc[i].imm_data), polled);
				ok = false;
				polled = (uint32_t)wc[i].wr_id;
			}
		}
	}
	if (k < 0 || got != n)
		printf("     polled %u completions (ret %d), want %u\n", got, k, n);
	return ok && k == 0 && got == n;
}

static void
grow_and_shrink(void)
{
	struct vt_pair p = { .cq = vt_cq(4) };
	struct ibv_device_attr da;
	int old;

	p.qp = vt_qp(IBV_QPT_RC, p.cq);
	vt_require(p.qp != NULL, "create_qp");
	p.r = vt_remote_qp(p.qp);
	vt_require(ibv_query_device(vt.ctx, &da) == 0, "query_device");

	pend(p.qp, &p, 3, true);
	vt_check(ibv_resize_cq(p.cq, 40) == 0 && p.cq->cqe >= 40,
		 "grow 4 -> 40 with 3 completions pending: cq->cqe >= 40", "cqe %d", p.cq->cqe);
	pend(p.qp, &p, 20, true);
	vt_check(drain(p.cq, 23),
		 "the 3 from before and 20 after (more than the old size): in order, once each",
		 "see above");

	pend(p.qp, &p, 10, true);
	old = p.cq->cqe;
	errno = 0;
	vt_check(ibv_resize_cq(p.cq, 9) == EINVAL && p.cq->cqe == old,
		 "shrink below the 10 pending: EINVAL, cq->cqe unchanged", "cqe %d", p.cq->cqe);
	vt_check(ibv_resize_cq(p.cq, 10) == 0 && p.cq->cqe >= 10 && p.cq->cqe < old,
		 "shrink to exactly the 10 pending: smaller, cq->cqe >= 10", "cqe %d (was %d)",
		 p.cq->cqe, old);
	vt_check(drain(p.cq, 10), "the 10 survive the failed and the done shrink, in order",
		 "see above");
	/* three rounds past the new ring's end: indices carry on across its wrap */
	pend(p.qp, &p, p.cq->cqe, true);
	vt_check(drain(p.cq, (uint32_t)p.cq->cqe), "a full shrunk CQ, first round", "see above");
	pend(p.qp, &p, p.cq->cqe - 1, true);
	vt_check(drain(p.cq, (uint32_t)p.cq->cqe - 1), "second round, across the wrap",
		 "see above");

	vt_check(ibv_resize_cq(p.cq, 1) == 0 && p.cq->cqe >= 1, "shrink an empty CQ to 1",
		 "cqe %d", p.cq->cqe);
	pend(p.qp, &p, 1, true);
	vt_check(drain(p.cq, 1), "a CQ of 1 takes its completion", "see above");

	old = p.cq->cqe;
	vt_check(ibv_resize_cq(p.cq, 0) == EINVAL && ibv_resize_cq(p.cq, -1) == EINVAL &&
		 ibv_resize_cq(p.cq, da.max_cqe + 1) == EINVAL && p.cq->cqe == old,
		 "cqe 0, -1 or above max_cqe: EINVAL, CQ unchanged", "cqe %d", p.cq->cqe);

	/* armed before the resize: the event comes from the new ring */
	vt_recv(p.qp, next_seq, (uintptr_t)lmr->addr, 64, lmr->lkey);
	vt_require(ibv_req_notify_cq(p.cq, 0) == 0, "req_notify_cq");
	vt_check(ibv_resize_cq(p.cq, 16) == 0, "grow an armed CQ", "failed");
	vt_require(vt_remote_send(&p, IBV_WR_SEND_WITH_IMM, rmr.id, next_seq, 8, 0) == 0,
		   "agent send");
	next_seq++;
	vt_check(solicited_event(p.cq), "an arm made before ibv_resize_cq raises its event",
		 "no event");
	vt_check(drain(p.cq, 1), "and its completion is there", "see above");

	vt_check(ibv_destroy_qp(p.qp) == 0 && ibv_destroy_cq(p.cq) == 0,
		 "a resized CQ is destroyed", "failed");
}

/* An extended CQ: resized through ibv_cq_ex_to_cq, polled with the iterator. */
static void
extended(void)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 2, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.channel = ibv_create_comp_channel(vt.ctx),
	};
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cq;
	struct vt_pair p;
	uint32_t got = 0;
	bool ok = true;
	int ret;

	vt_require(a.channel != NULL, "channel");
	cq = ibv_create_cq_ex(vt.ctx, &a);
	vt_require(cq != NULL, "create_cq_ex");
	p.cq = ibv_cq_ex_to_cq(cq);
	p.qp = vt_qp(IBV_QPT_RC, p.cq);
	vt_require(p.qp != NULL, "create_qp");
	p.r = vt_remote_qp(p.qp);
	pend(p.qp, &p, 2, true);
	vt_check(ibv_resize_cq(p.cq, 8) == 0 && p.cq->cqe >= 8,
		 "an extended CQ grows with 2 pending", "cqe %d", p.cq->cqe);
	pend(p.qp, &p, 5, true);
	for (ret = ibv_start_poll(cq, &pa); ret == 0; ret = ibv_next_poll(cq), got++, polled++)
		if (cq->status != IBV_WC_SUCCESS || cq->wr_id != polled ||
		    ntohl(ibv_wc_read_imm_data(cq)) != polled)
			ok = false;
	if (got > 0)
		ibv_end_poll(cq);
	vt_check(ok && ret == ENOENT && got == 7,
		 "ibv_start_poll/ibv_next_poll read the 7 in order", "%u polled", got);
	ibv_destroy_qp(p.qp);
	vt_check(ibv_destroy_cq(p.cq) == 0, "destroyed", "failed");
	ibv_destroy_comp_channel(a.channel);
}

static void
drive(void)
{
	lmr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	rmr = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	next_seq = polled = 1;
	grow_and_shrink();
	extended();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
