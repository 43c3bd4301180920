/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_get_async_event(3) and ibv_ack_async_event(3), with the SRQ verbs
 * that arm one (ibv_modify_srq(3), ibv_query_srq(3)): IBV_EVENT_SRQ_LIMIT_REACHED
 * once when the SRQ drops below its limit (then the limit reads 0),
 * IBV_EVENT_CQ_ERR on an overrun CQ, each with its element, read in
 * non-blocking mode as the man page's example does; destroying an object
 * after its event is acknowledged, and before its event is read (the event
 * goes with it: async_fd not left readable, the next object's event given); IBV_EVENT_SQ_DRAINED (SQD with
 * en_sqd_async_notify), IBV_EVENT_QP_LAST_WQE_REACHED (a QP on an SRQ
 * entering ERR); IBV_EVENT_QP_ACCESS_ERR and IBV_EVENT_QP_REQ_ERR (the
 * responder's own errors); IBV_EVENT_COMM_EST (a packet reaching a QP still
 * in RTR); IBV_EVENT_PORT_ERR and
 * IBV_EVENT_PORT_ACTIVE when the driver takes its daemon's interface down
 * and up again (the port's state follows), last because it disturbs the
 * link. A client scribbling on its own receive ring or SRQ (an impossible
 * producer index, written through the ring ABI): IBV_EVENT_QP_FATAL, or
 * IBV_EVENT_SRQ_ERR and its QPs in error (tests/integration/hostile_client.c
 * does the same without the shim, the send ring too).
 */

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "droce_shm.h"	/* the ring ABI: broken_rings() scribbles on its own ring */
#include "verbs_test.h"

static struct ibv_mr *lmr;
static struct vt_remote_mr rmr;

/* The next async event within @p ms, in non-blocking mode. */
static bool
async(struct ibv_async_event *ev, int ms)
{
	struct pollfd pfd = { .fd = vt.ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1)
		return false;
	return ibv_get_async_event(vt.ctx, ev) == 0;
}

static void
srq_limit(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(vt.pd, &sia);
	struct ibv_cq *cq = vt_cq(32);
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};
	struct ibv_srq_attr a;
	struct ibv_async_event ev;
	struct vt_pair p = { .cq = cq };
	int i;

	vt_require(srq != NULL, "create_srq");
	memset(&a, 0, sizeof(a));
	vt_check(ibv_query_srq(srq, &a) == 0 && a.max_wr >= 16 && a.srq_limit == 0,
		 "ibv_query_srq: max_wr as asked or more, no limit yet", "max_wr %u limit %u",
		 a.max_wr, a.srq_limit);
	for (i = 0; i < 8; i++) {
		struct ibv_sge sge = { (uintptr_t)lmr->addr + 64 * (uint64_t)i, 64, lmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 },
				   *bad;

		vt_require(ibv_post_srq_recv(srq, &wr, &bad) == 0, "post_srq_recv");
	}
	a.srq_limit = a.max_wr + 1;
	vt_check(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT) == EINVAL,
		 "ibv_modify_srq: a limit above max_wr is EINVAL", "accepted");
	a.max_wr = 64;
	vt_check(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
		 "ibv_modify_srq: IBV_SRQ_MAX_WR (no IBV_DEVICE_SRQ_RESIZE) is EOPNOTSUPP",
		 "not EOPNOTSUPP");
	a.srq_limit = 6;
	vt_check(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT) == 0, "ibv_modify_srq: limit 6", "failed");
	vt_check(ibv_query_srq(srq, &a) == 0 && a.srq_limit == 6, "ibv_query_srq reads it back",
		 "limit %u", a.srq_limit);
	a.srq_limit = 3;
	a.max_wr = 64;
	vt_check(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT | IBV_SRQ_MAX_WR) == EOPNOTSUPP &&
		 ibv_query_srq(srq, &a) == 0 && a.srq_limit == 6,
		 "ibv_modify_srq: one invalid attribute, none modified (the limit stays 6)",
		 "limit %u", a.srq_limit);
	vt_check(!async(&ev, 200), "8 receives >= limit 6: no event", "event %d", ev.event_type);

	p.qp = ibv_create_qp(vt.pd, &qia);
	vt_require(p.qp != NULL, "create_qp on the SRQ");
	p.r = vt_remote_qp(p.qp);
	for (i = 0; i < 3; i++)
		vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS,
			   "agent send");
	vt_check(async(&ev, VT_WAIT_MS) && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		 ev.element.srq == srq, "below the limit: IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ",
		 "none or wrong");
	ibv_ack_async_event(&ev);
	vt_check(ibv_query_srq(srq, &a) == 0 && a.srq_limit == 0,
		 "the event disarms the limit (it reads 0)", "limit %u", a.srq_limit);
	vt_require(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0) == IBV_WC_SUCCESS, "send");
	vt_check(!async(&ev, 200), "no second event without a new limit", "event");
	vt_check(ibv_destroy_qp(p.qp) == 0 && ibv_destroy_srq(srq) == 0,
		 "ibv_destroy_srq after its event was acknowledged", "failed");
}

/* A QP on @p cq (its send and receive CQ) posting cqe + 2 signalled WRITEs. */
static struct vt_pair
overrun(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct vt_pair p = { .cq = cq };
	int i, n = cq->cqe + 2;

	vt_require(n <= 64, "small CQ");
	p.qp = ibv_create_qp(vt.pd, &qia);
	vt_require(p.qp != NULL, "create_qp");
	p.r = vt_remote_qp(p.qp);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)lmr->addr, 8, lmr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i, .opcode = IBV_WR_RDMA_WRITE,
					  .sg_list = &sge, .num_sge = 1,
					  .send_flags = IBV_SEND_SIGNALED,
					  .wr.rdma = { rmr.addr, rmr.rkey } }, *bad;

		vt_require(ibv_post_send(p.qp, &wr, &bad) == 0, "post_send");
	}
	return p;
}

static void
cq_overrun(void)
{
	struct ibv_cq *cq = vt_cq(4);
	struct ibv_async_event ev;
	struct vt_pair p = overrun(cq);

	vt_check(async(&ev, VT_WAIT_MS) && ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq,
		 "cqe + 2 unpolled completions: IBV_EVENT_CQ_ERR for the CQ", "none or wrong");
	ibv_ack_async_event(&ev);
	vt_check(ibv_destroy_qp(p.qp) == 0 && ibv_destroy_cq(cq) == 0,
		 "ibv_destroy_cq after its event was acknowledged", "failed");
}

/*
 * An object destroyed before its event was read takes the event with it,
 * as the kernel drops it from its queue: async_fd is not left readable
 * with nothing to give (a blocking ibv_get_async_event() would hang), and
 * another object's event behind it is still given.
 */
static void
destroyed_unread(void)
{
	struct ibv_cq *a = vt_cq(4), *b = vt_cq(4);
	struct pollfd pfd = { .fd = vt.ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct vt_pair pa = overrun(a), pb;

	vt_require(poll(&pfd, 1, VT_WAIT_MS) == 1, "CQ A's event pending");
	pb = overrun(b);
	vt_check(ibv_destroy_qp(pa.qp) == 0 && ibv_destroy_cq(a) == 0,
		 "ibv_destroy_cq with its event not read", "failed");
	vt_check(async(&ev, VT_WAIT_MS) && ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == b,
		 "the next event is CQ B's, not the destroyed CQ A's", "none or wrong");
	ibv_ack_async_event(&ev);
	errno = 0;
	vt_check(poll(&pfd, 1, 300) == 0 && ibv_get_async_event(vt.ctx, &ev) == -1 &&
		 errno == EAGAIN, "then async_fd is not readable, and nothing is pending",
		 "readable %d, errno %d", poll(&pfd, 1, 0), errno);
	vt_check(ibv_destroy_qp(pb.qp) == 0 && ibv_destroy_cq(b) == 0, "destroy CQ B", "failed");
}

/*
 * IBV_EVENT_SQ_DRAINED: SQD entered with en_sqd_async_notify raises it once
 * nothing is under way (at once here: the WRITE before was acknowledged);
 * without the flag, nothing. A WR posted in SQD waits for RTS.
 */
static void
sq_drained(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0);
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_SQD };
	struct ibv_sge sge = { (uintptr_t)lmr->addr, 8, lmr->lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { rmr.addr + 512, rmr.rkey } }, *bad;
	struct ibv_async_event ev;
	struct ibv_wc wc;
	uint8_t got[8];

	vt_require(ibv_modify_qp(p.qp, &m, IBV_QP_STATE) == 0, "SQD");
	vt_check(!async(&ev, 300), "SQD without en_sqd_async_notify: no event", "event %d",
		 ev.event_type);
	m.qp_state = IBV_QPS_RTS;
	vt_require(ibv_modify_qp(p.qp, &m, IBV_QP_STATE) == 0, "back to RTS");
	vt_require(vt_post_wait(p.qp, &wr) == IBV_WC_SUCCESS, "a WRITE");
	m.qp_state = IBV_QPS_SQD;
	m.en_sqd_async_notify = 1;
	vt_check(ibv_modify_qp(p.qp, &m, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) == 0 &&
		 async(&ev, VT_WAIT_MS) && ev.event_type == IBV_EVENT_SQ_DRAINED &&
		 ev.element.qp == p.qp,
		 "SQD with en_sqd_async_notify, nothing under way: IBV_EVENT_SQ_DRAINED for the QP",
		 "none or wrong (%d)", ev.event_type);
	ibv_ack_async_event(&ev);

	memset(lmr->addr, 0x42, 8);
	vt_require(ibv_post_send(p.qp, &wr, &bad) == 0, "post_send in SQD");
	vt_check(!vt_wait(p.cq, &wc, 300), "a WR posted in SQD does not start", "completed");
	vt_remote_read(rmr.id, 512, got, sizeof(got));
	vt_check(got[0] != 0x42, "nothing of it reached the peer", "it did");
	m.qp_state = IBV_QPS_RTS;
	vt_check(ibv_modify_qp(p.qp, &m, IBV_QP_STATE) == 0 && vt_wait(p.cq, &wc, VT_WAIT_MS) &&
		 wc.status == IBV_WC_SUCCESS, "SQD -> RTS: it goes", "status %d", wc.status);
	vt_remote_read(rmr.id, 512, got, sizeof(got));
	vt_check(got[0] == 0x42, "and reaches the peer", "got %02x", got[0]);
	vt_check(!async(&ev, 200), "one SQ_DRAINED per drain", "event %d", ev.event_type);
	vt_check(ibv_destroy_qp(p.qp) == 0, "ibv_destroy_qp after its event was acknowledged",
		 "failed");
}

/* IBV_EVENT_QP_LAST_WQE_REACHED: a QP on an SRQ entering the error state; others: none. */
static void
last_wqe(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(vt.pd, &sia);
	struct ibv_cq *cq = vt_cq(8);
	/* ibv_create_qp_ex(3): max_recv_wr and max_recv_sge are ignored with an SRQ */
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1, .max_recv_wr = 1u << 30,
			 .max_recv_sge = 1000 },
	};
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_qp *qp, *plain;

	vt_require(srq != NULL, "create_srq");
	qp = ibv_create_qp(vt.pd, &qia);
	vt_check(qp != NULL, "a QP on an SRQ ignores max_recv_wr and max_recv_sge (2^30, 1000)",
		 "errno %d", errno);
	vt_require(qp != NULL, "create_qp on the SRQ");
	(void)vt_remote_qp(qp);
	vt_check(ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 && async(&ev, VT_WAIT_MS) &&
		 ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == qp,
		 "a QP on an SRQ moved to ERR: IBV_EVENT_QP_LAST_WQE_REACHED for it",
		 "none or wrong (%d)", ev.event_type);
	ibv_ack_async_event(&ev);
	plain = vt_qp(IBV_QPT_RC, cq);
	(void)vt_remote_qp(plain);
	vt_check(ibv_modify_qp(plain, &m, IBV_QP_STATE) == 0 && !async(&ev, 300),
		 "a QP without an SRQ moved to ERR: no event", "event %d", ev.event_type);
	vt_check(ibv_destroy_qp(qp) == 0 && ibv_destroy_qp(plain) == 0 &&
		 ibv_destroy_srq(srq) == 0 && ibv_destroy_cq(cq) == 0,
		 "destroyed after the event was acknowledged", "failed");
}

/* Our RC QP in the error state (ibv_query_qp). */
static bool
qp_in_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_ERR;
}

/* The type of the next event, acknowledged, if it is for @p qp; else -1. */
static int
qp_event(struct ibv_qp *qp)
{
	struct ibv_async_event ev;
	int type;

	if (!async(&ev, VT_WAIT_MS))
		return -1;
	type = ev.element.qp == qp ? (int)ev.event_type : -1;
	ibv_ack_async_event(&ev);
	return type;
}

/*
 * The responder's errors (IBA 11.6.3.1): a request no receive WQE can report
 * fails our QP with an affiliated event -- IBV_EVENT_QP_ACCESS_ERR for a bad
 * R_Key, IBV_EVENT_QP_REQ_ERR for a misaligned atomic (IBA 9.4.5); a SEND
 * longer than the receive buffer is told by that WQE (IBV_WC_LOC_LEN_ERR) alone.
 */
static void
responder_errors(void)
{
	struct ibv_mr *mr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_ATOMIC);
	struct ibv_async_event ev = { .event_type = 0 };
	struct vt_pair p;
	struct ibv_wc wc = { .status = 0 };
	int st, e;

	p = vt_pair(IBV_QPT_RC, 0);
	st = vt_remote_rdma(&p, IBV_WR_RDMA_WRITE, rmr.id, (uintptr_t)mr->addr, mr->rkey + 1, 64);
	e = qp_event(p.qp);
	vt_check(st == IBV_WC_REM_ACCESS_ERR && e == IBV_EVENT_QP_ACCESS_ERR && qp_in_error(p.qp),
		 "a WRITE to us under a bad R_Key: IBV_EVENT_QP_ACCESS_ERR for our QP, now in ERR",
		 "peer's status %d, event %d", st, e);
	vt_check(!async(&ev, 300), "one event", "event %d", ev.event_type);
	vt_check(ibv_destroy_qp(p.qp) == 0, "destroyed after its event was acknowledged", "failed");

	p = vt_pair(IBV_QPT_RC, 0);
	st = vt_remote_rdma(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, rmr.id, (uintptr_t)mr->addr + 4,
			    mr->rkey, 8);
	e = qp_event(p.qp);
	vt_check(st == IBV_WC_REM_INV_REQ_ERR && e == IBV_EVENT_QP_REQ_ERR && qp_in_error(p.qp),
		 "an atomic to us at an address not 8-byte aligned: IBV_EVENT_QP_REQ_ERR, QP in ERR",
		 "peer's status %d, event %d", st, e);
	vt_check(ibv_destroy_qp(p.qp) == 0, "destroyed", "failed");

	p = vt_pair(IBV_QPT_RC, 0);
	vt_recv(p.qp, 7, (uintptr_t)mr->addr, 16, mr->lkey);
	st = vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 100, 0);
	vt_check(st == IBV_WC_REM_INV_REQ_ERR && vt_wait(p.cq, &wc, VT_WAIT_MS) && wc.wr_id == 7 &&
		 wc.status == IBV_WC_LOC_LEN_ERR && qp_in_error(p.qp) && !async(&ev, 300),
		 "a SEND longer than our receive: IBV_WC_LOC_LEN_ERR on that WQE, no async event",
		 "peer's status %d, ours %d", st, wc.status);
	vt_check(ibv_destroy_qp(p.qp) == 0 && ibv_dereg_mr(mr) == 0, "destroyed", "failed");
}

/*
 * IBV_EVENT_COMM_EST: the first packet our RC QP accepts while in RTR (its
 * peer is already in RTS), once; the receive completes as usual.
 */
static void
comm_est(void)
{
	struct vt_pair p = { .cq = vt_cq(8) };
	struct ibv_async_event ev = { .event_type = 0 };
	struct ibv_wc wc = { .status = 0 };
	int st, e;

	p.qp = vt_qp(IBV_QPT_RC, p.cq);
	p.r = vt_remote_qp_to(p.qp, IBV_QPS_RTR);
	vt_check(!async(&ev, 200), "RTR alone: no event", "event %d", ev.event_type);
	vt_recv(p.qp, 1, (uintptr_t)lmr->addr, 64, lmr->lkey);
	vt_recv(p.qp, 2, (uintptr_t)lmr->addr, 64, lmr->lkey);
	st = vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 16, 0);
	e = qp_event(p.qp);
	vt_check(st == IBV_WC_SUCCESS && e == IBV_EVENT_COMM_EST && vt_wait(p.cq, &wc, VT_WAIT_MS) &&
		 wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS,
		 "a SEND reaching our QP in RTR: received, and IBV_EVENT_COMM_EST for the QP",
		 "peer's status %d, event %d", st, e);
	st = vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 16, 0);
	vt_check(st == IBV_WC_SUCCESS && !async(&ev, 300), "a second one: no second event",
		 "status %d, event %d", st, ev.event_type);
	vt_qp_rts(p.qp);
	vt_check(ibv_destroy_qp(p.qp) == 0, "then RTS, and destroyed", "failed");
}

/*
 * The ring droced mapped into this process for object @p handle of @p kind:
 * every ring starts with its magic, kind and handle (the ring ABI,
 * lib/shm/droce_shm.h), in a memfd droced names droce-ring. NULL if none.
 */
static struct droce_shm_ring *
own_ring(enum droce_shm_kind kind, uint32_t handle)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct droce_shm_ring *found = NULL;
	char line[512];

	vt_require(f != NULL, "/proc/self/maps");
	while (found == NULL && fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo;
		struct droce_shm_ring *r;

		if (strstr(line, "/memfd:droce-ring") == NULL || sscanf(line, "%lx-", &lo) != 1)
			continue;
		r = (struct droce_shm_ring *)lo;
		if (r->magic == DROCE_SHM_MAGIC && r->kind == (uint32_t)kind && r->handle == handle)
			found = r;
	}
	fclose(f);
	return found;
}

/* Make @p r's producer index impossible: a million WQEs more than it holds. */
static void
scribble(struct droce_shm_ring *r)
{
	atomic_store(&r->prod, atomic_load(&r->prod) + 1000000u);
}

/*
 * A client that scribbles on its receive ring: an impossible producer index
 * fails the QP (IBV_EVENT_QP_FATAL) and the peer's SEND ends at once with
 * IBV_WC_REM_OP_ERR, not in RNR retries; on an SRQ the SRQ fails
 * (IBV_EVENT_SRQ_ERR) and every QP on it goes to the error state, each with
 * IBV_EVENT_QP_LAST_WQE_REACHED.
 */
static void
broken_rings(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(vt.pd, &sia);
	struct ibv_cq *cq = vt_cq(16);
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct vt_pair p = vt_pair(IBV_QPT_RC, 0), a = { .cq = cq }, b = { .cq = cq };
	struct droce_shm_ring *r = own_ring(DROCE_SHM_RQ, p.qp->handle);
	struct ibv_async_event ev;
	bool srq_err = false, last_a = false, last_b = false, other = false;
	int st, e;

	/* nothing posted, so no doorbell of ours races the scribble: the SEND finds it
	 * (hostile_client does the doorbell path) */
	vt_require(r != NULL, "our QP's receive ring among our mappings");
	scribble(r);
	st = vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 8, 0);
	e = qp_event(p.qp);
	vt_check(st == IBV_WC_REM_OP_ERR && e == IBV_EVENT_QP_FATAL && qp_in_error(p.qp),
		 "an impossible receive ring index: the peer's SEND fails IBV_WC_REM_OP_ERR (not "
		 "RNR), IBV_EVENT_QP_FATAL for our QP, now in ERR", "peer's status %d, event %d",
		 st, e);
	vt_check(ibv_destroy_qp(p.qp) == 0, "destroyed after its event was acknowledged", "failed");

	vt_require(srq != NULL, "create_srq");
	a.qp = ibv_create_qp(vt.pd, &qia);
	b.qp = ibv_create_qp(vt.pd, &qia);
	vt_require(a.qp != NULL && b.qp != NULL, "create_qp on the SRQ");
	a.r = vt_remote_qp(a.qp);
	b.r = vt_remote_qp(b.qp);
	r = own_ring(DROCE_SHM_RQ, srq->handle);
	vt_require(r != NULL, "the SRQ's ring among our mappings");
	scribble(r);
	st = vt_remote_send(&a, IBV_WR_SEND, rmr.id, 0, 8, 0);
	while (async(&ev, 500)) {
		srq_err |= ev.event_type == IBV_EVENT_SRQ_ERR && ev.element.srq == srq;
		last_a |= ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == a.qp;
		last_b |= ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == b.qp;
		other |= ev.event_type != IBV_EVENT_SRQ_ERR &&
			 ev.event_type != IBV_EVENT_QP_LAST_WQE_REACHED;
		ibv_ack_async_event(&ev);
	}
	vt_check(st == IBV_WC_REM_OP_ERR && srq_err && !other,
		 "an impossible SRQ index: the peer's SEND fails IBV_WC_REM_OP_ERR, "
		 "IBV_EVENT_SRQ_ERR for the SRQ", "peer's status %d, SRQ_ERR %d, others %d", st,
		 srq_err, other);
	vt_check(qp_in_error(a.qp) && qp_in_error(b.qp) && last_a && last_b,
		 "both QPs on it in ERR, each with IBV_EVENT_QP_LAST_WQE_REACHED",
		 "events %d %d", last_a, last_b);
	vt_check(ibv_destroy_qp(a.qp) == 0 && ibv_destroy_qp(b.qp) == 0 &&
		 ibv_destroy_srq(srq) == 0, "all destroyed after the events were acknowledged",
		 "failed");
}

/* The interface holding the IPv4 address of our GID (in this namespace). */
static bool
gid_iface(char name[IFNAMSIZ])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa) != 0)
		return false;
	for (i = ifa; i != NULL && !found; i = i->ifa_next)
		if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
		    memcmp(&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr,
			   &vt.gid.raw[12], 4) == 0) {
			snprintf(name, IFNAMSIZ, "%s", i->ifa_name);
			found = true;
		}
	freeifaddrs(ifa);
	return found;
}

static bool
iface_set_up(const char *name, bool up)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	bool ok;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ok = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
	if (up)
		ifr.ifr_flags |= IFF_UP;
	else
		ifr.ifr_flags &= ~IFF_UP;
	ok = ok && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static enum ibv_port_state
port_state(void)
{
	struct ibv_port_attr pa;

	return ibv_query_port(vt.ctx, 1, &pa) == 0 ? pa.state : IBV_PORT_NOP;
}

/* The daemon follows its link: PORT_ERR when it goes down, PORT_ACTIVE back. */
static void
port_events(void)
{
	struct ibv_async_event ev;
	char ifname[IFNAMSIZ];

	vt_require(gid_iface(ifname), "the interface of our GID");
	vt_check(port_state() == IBV_PORT_ACTIVE, "ibv_query_port: ACTIVE while the link is up",
		 "state %d", port_state());
	vt_require(iface_set_up(ifname, false), "ip link set down");
	vt_check(async(&ev, VT_WAIT_MS) && ev.event_type == IBV_EVENT_PORT_ERR &&
		 ev.element.port_num == 1, "link down: IBV_EVENT_PORT_ERR for port 1",
		 "none or wrong (%d)", ev.event_type);
	ibv_ack_async_event(&ev);
	vt_check(port_state() == IBV_PORT_DOWN, "ibv_query_port: DOWN", "state %d", port_state());
	vt_require(iface_set_up(ifname, true), "ip link set up");
	vt_check(async(&ev, VT_WAIT_MS) && ev.event_type == IBV_EVENT_PORT_ACTIVE &&
		 ev.element.port_num == 1, "link up: IBV_EVENT_PORT_ACTIVE for port 1",
		 "none or wrong (%d)", ev.event_type);
	ibv_ack_async_event(&ev);
	vt_check(port_state() == IBV_PORT_ACTIVE, "ibv_query_port: ACTIVE again", "state %d",
		 port_state());
	vt_check(!async(&ev, 300), "one event per change", "event %d", ev.event_type);
}

static void
drive(void)
{
	struct ibv_async_event ev;
	int fl = fcntl(vt.ctx->async_fd, F_GETFL);

	vt_require(fl >= 0 && fcntl(vt.ctx->async_fd, F_SETFL, fl | O_NONBLOCK) == 0, "O_NONBLOCK");
	lmr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	rmr = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	errno = 0;
	vt_check(ibv_get_async_event(vt.ctx, &ev) == -1 && errno == EAGAIN,
		 "non-blocking with nothing pending: -1 (EAGAIN)", "errno %d", errno);
	{
		struct ibv_device_attr da;

		vt_check(ibv_query_device(vt.ctx, &da) == 0 &&
			 (da.device_cap_flags & IBV_DEVICE_PORT_ACTIVE_EVENT),
			 "IBV_DEVICE_PORT_ACTIVE_EVENT: the device raises port events",
			 "not claimed");
		vt_check(!(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE),
			 "IBV_DEVICE_SRQ_RESIZE not claimed (ibv_modify_srq's IBV_SRQ_MAX_WR fails)",
			 "claimed");
	}
	srq_limit();
	cq_overrun();
	destroyed_unread();
	sq_drained();
	last_wqe();
	responder_errors();
	comm_est();
	broken_rings();
	port_events();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
