/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_req_notify_cq(3) with ibv_get_cq_event(3) and ibv_ack_cq_events(3):
 * an armed CQ raises one event on its channel for the next CQE (with the
 * CQ and its cq_context), the request is one shot, solicited_only waits
 * for a receive with the SE bit or an unsuccessful completion, and
 * ibv_destroy_cq() returns once every event is acknowledged. The agent is
 * the sender; the CQEs are the driver's.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "verbs_test.h"

#define QUIET_MS 300		/* no event within this long: none was raised */

static struct ibv_mr *lmr;
static struct vt_remote_mr rmr;
static int marker;		/* the CQ's cq_context */

/* One event on @p cq's channel within @p ms: the CQ and context checked, not acknowledged. */
static bool
event(struct ibv_cq *cq, int ms, bool *right_cq)
{
	struct pollfd pfd = { .fd = cq->channel->fd, .events = POLLIN };
	struct ibv_cq *ecq = NULL;
	void *ectx = NULL;

	if (poll(&pfd, 1, ms) != 1)
		return false;
	vt_require(ibv_get_cq_event(cq->channel, &ecq, &ectx) == 0, "get_cq_event");
	*right_cq = ecq == cq && ectx == &marker;
	return true;
}

static bool
recv_cqe(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	return ibv_poll_cq(cq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	       wc.opcode == IBV_WC_RECV;
}

static void
any_cqe(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	bool right = false;
	int i;

	p.cq->cq_context = &marker;
	for (i = 0; i < 8; i++)
		vt_recv(p.qp, (uint64_t)i, (uintptr_t)lmr->addr + 64 * (uint64_t)i, 64, lmr->lkey);
	vt_check(ibv_req_notify_cq(p.cq, 0) == 0, "ibv_req_notify_cq(cq, 0) returns 0", "failed");
	vt_check(!event(p.cq, QUIET_MS, &right), "no event before a CQE", "spurious event");
	vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS, "send");
	vt_check(event(p.cq, VT_WAIT_MS, &right) && right,
		 "a new CQE raises an event with the CQ and its cq_context", "none or wrong CQ");
	ibv_ack_cq_events(p.cq, 1);
	vt_check(recv_cqe(p.cq), "the CQE is there to poll", "missing");

	/* one shot: the next CQE without a new request raises nothing */
	vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS, "send");
	vt_check(!event(p.cq, QUIET_MS, &right), "the request is one shot", "second event");
	vt_check(recv_cqe(p.cq), "the CQE was still added", "missing");

	/* a CQE already there when armed: no event for it (only new CQEs count) */
	vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS, "send");
	{
		struct ibv_wc wc;
		int n = 0;

		for (i = 0; i < 100 && n == 0; i++) {	/* the agent's SEND completed: ours too */
			n = ibv_poll_cq(p.cq, 1, &wc);
			if (n == 0)
				poll(NULL, 0, 10);
		}
		vt_check(n == 1, "the third CQE arrived", "missing");
	}

	/* solicited only: an unsolicited receive raises nothing, a solicited one does */
	vt_check(ibv_req_notify_cq(p.cq, 1) == 0, "ibv_req_notify_cq(cq, 1) returns 0", "failed");
	vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS, "send");
	vt_check(!event(p.cq, QUIET_MS, &right),
		 "solicited only: a receive without the SE bit raises no event", "event");
	vt_check(recv_cqe(p.cq), "but its CQE is added", "missing");
	vt_require(vt_remote_send(&p, IBV_WR_SEND_WITH_IMM, rmr.id, 5, 8, IBV_SEND_SOLICITED) ==
		   IBV_WC_SUCCESS, "send");
	vt_check(event(p.cq, VT_WAIT_MS, &right) && right,
		 "solicited only: a receive with the SE bit (IBV_SEND_SOLICITED) raises it",
		 "no event");
	ibv_ack_cq_events(p.cq, 1);
	vt_check(recv_cqe(p.cq), "the solicited CQE", "missing");

	/* solicited only: a successful send completion does not, an unsuccessful one does */
	vt_remote_recv(&p.r, rmr.id, 0, 64, 1);
	vt_check(ibv_req_notify_cq(p.cq, 1) == 0, "armed solicited only again", "failed");
	{
		struct ibv_sge sge = { (uintptr_t)lmr->addr, 8, lmr->lkey };
		struct ibv_send_wr wr = { .wr_id = 7, .opcode = IBV_WR_SEND, .sg_list = &sge,
					  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;

		vt_require(ibv_post_send(p.qp, &wr, &bad) == 0, "post_send");
		vt_check(!event(p.cq, QUIET_MS, &right),
			 "solicited only: a successful send completion raises no event", "event");
		vt_check(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 7 && wc.status == 0,
			 "its CQE is added", "missing");
		sge.lkey = lmr->lkey ^ 0x5a5a00;	/* no such key */
		wr.wr_id = 8;
		vt_require(ibv_post_send(p.qp, &wr, &bad) == 0, "post_send");
		vt_check(event(p.cq, VT_WAIT_MS, &right) && right,
			 "solicited only: an unsuccessful completion raises it", "no event");
		ibv_ack_cq_events(p.cq, 1);
		vt_check(ibv_poll_cq(p.cq, 1, &wc) == 1 && wc.wr_id == 8 &&
			 wc.status != IBV_WC_SUCCESS, "the error CQE", "missing");
	}
}

/* ibv_ack_cq_events(cq, n) acknowledges n at once; then ibv_destroy_cq() returns. */
static void
acks(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	struct ibv_comp_channel *ch = p.cq->channel;
	bool right = false;
	int got = 0, i;

	p.cq->cq_context = &marker;
	for (i = 0; i < 2; i++) {
		vt_recv(p.qp, (uint64_t)i, (uintptr_t)lmr->addr + 64 * (uint64_t)i, 64, lmr->lkey);
		vt_require(ibv_req_notify_cq(p.cq, 0) == 0, "arm");
		vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS,
			   "send");
		got += event(p.cq, VT_WAIT_MS, &right) && right;
		(void)recv_cqe(p.cq);
	}
	vt_check(got == 2, "two requests, two events", "%d", got);
	ibv_ack_cq_events(p.cq, (unsigned int)got);
	vt_check(ibv_destroy_qp(p.qp) == 0 && ibv_destroy_cq(p.cq) == 0,
		 "ibv_destroy_cq returns once both are acknowledged in one call", "failed");
	vt_check(ibv_destroy_comp_channel(ch) == 0, "then the channel can go", "failed");
}

static atomic_bool destroyed;

static void *
destroy_cq_thread(void *cq)
{
	int ret = ibv_destroy_cq(cq);

	atomic_store(&destroyed, ret == 0);
	return NULL;
}

/*
 * ibv_get_cq_event(): blocking, it returns the event that is there; with
 * O_NONBLOCK on the channel and nothing pending, -1 (EAGAIN). ibv_destroy_cq()
 * waits for the acknowledgement of an event it handed out.
 */
static void
blocking_and_destroy_wait(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	struct ibv_comp_channel *ch = p.cq->channel;
	struct ibv_cq *ecq = NULL;
	void *ectx = NULL;
	pthread_t th;
	int fl, ret;

	p.cq->cq_context = &marker;
	vt_recv(p.qp, 1, (uintptr_t)lmr->addr, 64, lmr->lkey);
	vt_require(ibv_req_notify_cq(p.cq, 0) == 0, "arm");
	vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS, "send");
	vt_check(ibv_get_cq_event(ch, &ecq, &ectx) == 0 && ecq == p.cq && ectx == &marker,
		 "ibv_get_cq_event (blocking) returns 0 with the CQ and its cq_context", "failed");
	fl = fcntl(ch->fd, F_GETFL);
	vt_require(fl >= 0 && fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0, "O_NONBLOCK");
	errno = 0;
	ret = ibv_get_cq_event(ch, &ecq, &ectx);
	vt_check(ret == -1 && errno == EAGAIN,
		 "non-blocking channel, nothing pending: -1 (EAGAIN)", "ret %d errno %d", ret,
		 errno);
	(void)recv_cqe(p.cq);
	vt_require(ibv_destroy_qp(p.qp) == 0, "destroy_qp");
	atomic_store(&destroyed, false);
	vt_require(pthread_create(&th, NULL, destroy_cq_thread, p.cq) == 0, "thread");
	usleep(QUIET_MS * 1000);
	vt_check(!atomic_load(&destroyed),
		 "ibv_destroy_cq waits while an event it handed out is unacknowledged", "returned");
	ibv_ack_cq_events(p.cq, 1);
	pthread_join(th, NULL);
	vt_check(atomic_load(&destroyed), "... and returns 0 once it is acknowledged", "failed");
	vt_check(ibv_destroy_comp_channel(ch) == 0, "then the channel can go", "failed");
}

static void
drive(void)
{
	lmr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	rmr = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	any_cqe();
	acks();
	blocking_and_destroy_wait();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
