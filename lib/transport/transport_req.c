/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Requester and completer (IBA 9.7.4 - 9.7.6, 9.9.2).
 *
 * The requester walks the private send queue from req.idx, turning each WQE
 * into packets: segmentation by path MTU, opcode by position, AckReq on the
 * last packet (and every DROCE_ACKREQ_INTERVAL packets so long messages keep
 * the window moving, more often on a slowly paced QP: droce_tqp_set_pace()),
 * at most max_rd_atomic READ/atomic requests in flight, fences, a window of
 * DROCE_MAX_UNACKED_PSNS.
 *
 * The completer consumes ACKs, NAKs, READ responses and atomic ACKs, retires
 * WQEs strictly in order (comp.idx), and runs go-back-N: a PSN sequence NAK,
 * a retransmit timeout, an RNR delay expiring or a READ response gap moves
 * the requester back to comp.psn. PSNs of a WQE never change, so an ACK for
 * an old transmission still completes it. Retry counters reset on progress.
 * An RNR NAK stops the retransmit timer and waits exactly the advertised
 * delay (the rxe bug of retrying on the retransmit timer is not repeated).
 *
 * Runs on the worker thread that owns the QP.
 */

#include <string.h>

#include "transport_priv.h"

/* Opcode for a packet of a SEND/WRITE message at a position. */
static uint8_t
req_opcode(const struct droce_tqp *qp, uint32_t op, bool first, bool last)
{
	uint8_t base = qp->attr.type == IBV_QPT_UC ? DROCE_TR_UC :
		       qp->attr.type == IBV_QPT_UD ? DROCE_TR_UD : DROCE_TR_RC;
	uint8_t code;

	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		code = first && last ? DROCE_OP_RC_SEND_ONLY : first ? DROCE_OP_RC_SEND_FIRST :
		       last ? DROCE_OP_RC_SEND_LAST : DROCE_OP_RC_SEND_MIDDLE;
		if (last && op == IBV_WR_SEND_WITH_IMM)
			code = first ? DROCE_OP_RC_SEND_ONLY_IMM : DROCE_OP_RC_SEND_LAST_IMM;
		if (last && op == IBV_WR_SEND_WITH_INV)
			return first ? DROCE_OP_RC_SEND_ONLY_INV : DROCE_OP_RC_SEND_LAST_INV;
		break;
	default:	/* RDMA WRITE family */
		code = first && last ? DROCE_OP_RC_WRITE_ONLY : first ? DROCE_OP_RC_WRITE_FIRST :
		       last ? DROCE_OP_RC_WRITE_LAST : DROCE_OP_RC_WRITE_MIDDLE;
		if (last && op == IBV_WR_RDMA_WRITE_WITH_IMM)
			code = first ? DROCE_OP_RC_WRITE_ONLY_IMM : DROCE_OP_RC_WRITE_LAST_IMM;
		break;
	}
	return base | code;
}

static void
comp_arm_timer(struct droce_tqp *qp, uint64_t now)
{
	uint64_t t = droce_tqp_timeout_ns(qp->attr.timeout);

	/* a QP that failed meanwhile (say, its CQ overflowed) keeps no timer */
	qp->comp.timer = t && qp->state != DROCE_TQP_ERR ? now + t : 0;
}

/* Finish the WQE at comp.idx: a completion if signaled or failed. */
static void
comp_retire(struct droce_tqp *qp, struct droce_tqp_swqe *w)
{
	static const uint32_t wc_op[] = {
		[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
		[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
		[IBV_WR_SEND] = IBV_WC_SEND,
		[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
		[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
		[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
		[IBV_WR_LOCAL_INV] = IBV_WC_LOCAL_INV,
		[IBV_WR_BIND_MW] = IBV_WC_BIND_MW,
		[IBV_WR_SEND_WITH_INV] = IBV_WC_SEND,
	};

	if (w->rd_counted) {
		w->rd_counted = false;
		qp->req.rd_atomic--;
	}
	qp->comp.idx++;
	if (w->status != IBV_WC_SUCCESS || (w->wr.flags & IBV_SEND_SIGNALED) ||
	    qp->attr.sq_sig_all) {
		struct droce_cqe c = {
			.wr_id = w->wr.wr_id,
			.status = w->status,
			.opcode = w->wr.opcode < DROCE_DIM(wc_op) ? wc_op[w->wr.opcode] : 0,
			.byte_len = w->wr.opcode == IBV_WR_RDMA_READ ? w->wr.length :
				    wr_is_rd_atomic(w->wr.opcode) ? 8 : w->wr.length,
			.qp_num = qp->attr.qpn,
		};

		tqp_cq_push(qp, false, &c);
	}
}

void
comp_retire_ready(struct droce_tqp *qp)
{
	while (qp->comp.idx != qp->sq_post) {
		struct droce_tqp_swqe *w = tqp_swqe(qp, qp->comp.idx);

		if (w->state != DROCE_SWQE_DONE)
			break;
		comp_retire(qp, w);
	}
}

/* Fail the WQE at comp.idx with @status: the QP to ERR (UC, UD: SQE). */
static void
comp_fail(struct droce_tqp *qp, uint32_t status)
{
	if (qp->comp.idx != qp->sq_post) {
		struct droce_tqp_swqe *w = tqp_swqe(qp, qp->comp.idx);

		w->state = DROCE_SWQE_DONE;
		w->status = (uint8_t)status;
		comp_retire(qp, w);
	}
	tqp_send_error(qp);
}

void
comp_flush(struct droce_tqp *qp)
{
	while (qp->comp.idx != qp->sq_post) {
		struct droce_tqp_swqe *w = tqp_swqe(qp, qp->comp.idx);

		if (w->state != DROCE_SWQE_DONE) {
			w->state = DROCE_SWQE_DONE;
			w->status = IBV_WC_WR_FLUSH_ERR;
		}
		comp_retire(qp, w);
	}
	qp->req.idx = qp->sq_post;
	qp->req.rd_atomic = 0;
	qp->comp.timer = 0;
	qp->comp.rnr_until = 0;
}

/* Offset of PSN @psn within WQE @w (bytes already acknowledged). */
static uint32_t
swqe_offset_at(const struct droce_tqp *qp, const struct droce_tqp_swqe *w, uint32_t psn)
{
	if (w->state == DROCE_SWQE_POSTED)
		return 0;
	if (w->wr.opcode == IBV_WR_RDMA_READ)
		return w->read_done;
	if (wr_is_rd_atomic(w->wr.opcode))
		return 0;
	return DROCE_MIN(droce_psn_diff(psn, w->first_psn) * qp->attr.mtu, w->wr.length);
}

/* Go back N: resend from the oldest unacknowledged PSN. */
static void
req_restart(struct droce_tqp *qp, uint64_t now)
{
	struct droce_tqp_swqe *w;
	uint32_t i;

	if (qp->comp.idx == qp->sq_post)
		return;
	for (i = qp->comp.idx; i != qp->req.idx; i++)
		tqp_swqe(qp, i)->rd_counted = false;
	w = tqp_swqe(qp, qp->comp.idx);
	w->rd_counted = false;
	qp->req.idx = qp->comp.idx;
	qp->req.psn = qp->comp.psn;
	qp->req.offset = swqe_offset_at(qp, w, qp->comp.psn);
	qp->req.rd_atomic = 0;
	qp->req.since_ackreq = 0;
	/*
	 * Responses the responder still owes from before this restart will
	 * arrive out of sequence: they must not start another retry (which
	 * would queue the whole READ window at the responder again). The next
	 * in-sequence response ends that; the timer covers its loss.
	 */
	qp->comp.read_gap = true;
	qp->comp.nak_round = false;
	TQP_CNT(qp, RETRANSMITS);
	comp_arm_timer(qp, now);
}

/* A retry-class event: retry if the budget allows, else fail the QP. */
static void
comp_retry(struct droce_tqp *qp, uint64_t now)
{
	if (qp->comp.retry_left == 0) {
		comp_fail(qp, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_left--;
	req_restart(qp, now);
}

static void
comp_progress(struct droce_tqp *qp, uint64_t now)
{
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.no_path = false;
	qp->comp.nak_round = false;
	if (qp->comp.psn == qp->req.psn_max && qp->comp.idx == qp->req.idx)
		qp->comp.timer = 0;	/* nothing outstanding */
	else
		comp_arm_timer(qp, now);
	/* an ACK for an earlier transmission may overtake a restart */
	if (droce_psn_cmp(qp->comp.psn, qp->req.psn) > 0 ||
	    (int32_t)(qp->comp.idx - qp->req.idx) > 0) {
		qp->req.idx = qp->comp.idx;
		qp->req.psn = qp->comp.psn;
		qp->req.offset = qp->comp.idx == qp->sq_post ? 0 :
			swqe_offset_at(qp, tqp_swqe(qp, qp->comp.idx), qp->comp.psn);
	}
}

/*
 * Everything up to and including @psn arrived at the responder. A READ or
 * atomic stops the walk: only its response completes it. With @implicit_nak
 * (a plain ACK), an ACK past a READ/atomic request means its response was
 * lost (IBA 9.7.5.1.2): resend from there.
 */
static void
comp_ack_upto(struct droce_tqp *qp, uint32_t psn, bool implicit_nak, uint64_t now)
{
	bool progress = false;

	if (droce_psn_cmp(psn, qp->comp.psn) < 0 || droce_psn_cmp(psn, qp->req.psn_max) >= 0)
		return;		/* stale, or for a PSN never sent */

	while (qp->comp.idx != qp->sq_post) {
		struct droce_tqp_swqe *w = tqp_swqe(qp, qp->comp.idx);
		uint32_t last;

		if (w->state == DROCE_SWQE_DONE) {
			comp_retire(qp, w);
			continue;
		}
		if (w->state == DROCE_SWQE_POSTED)
			break;
		last = droce_psn_add(w->first_psn, w->npsn - 1);
		if (wr_is_rd_atomic(w->wr.opcode)) {
			if (implicit_nak && droce_psn_cmp(psn, w->first_psn) >= 0) {
				if (progress)
					comp_progress(qp, now);
				req_restart(qp, now);
				return;
			}
			break;
		}
		if (droce_psn_cmp(psn, last) >= 0) {
			qp->comp.psn = droce_psn_add(last, 1);
			w->state = DROCE_SWQE_DONE;
			comp_retire(qp, w);
			progress = true;
			continue;
		}
		if (droce_psn_cmp(psn, qp->comp.psn) >= 0) {
			qp->comp.psn = droce_psn_add(psn, 1);
			progress = true;
		}
		break;
	}
	if (progress)
		comp_progress(qp, now);
}

static void
comp_rnr(struct droce_tqp *qp, const struct droce_pkt *pkt, uint64_t now)
{
	TQP_CNT(qp, RNR_NAKS_RX);
	comp_ack_upto(qp, droce_psn_add(pkt->psn, DROCE_24BIT_MASK), false, now);
	if (qp->state == DROCE_TQP_ERR || pkt->psn != qp->comp.psn)
		return;
	if (qp->attr.rnr_retry != 7) {		/* 7: retry forever (IBA 9.7.5.2.8) */
		if (qp->comp.rnr_left == 0) {
			comp_fail(qp, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->comp.rnr_left--;
	}
	/* wait the advertised delay, with the retransmit timer stopped */
	qp->comp.timer = 0;
	qp->comp.rnr_until = now + 1000ull * droce_rnr_timer_usec(droce_aeth_value(pkt->aeth.syndrome));
	if (qp->comp.rnr_until == 0)
		qp->comp.rnr_until = 1;
	qp->req.idx = qp->comp.idx;	/* nothing more goes out meanwhile */
	qp->req.psn = qp->comp.psn;
}

static void
comp_nak(struct droce_tqp *qp, const struct droce_pkt *pkt, uint64_t now)
{
	uint8_t code = droce_aeth_value(pkt->aeth.syndrome);

	/*
	 * Like an ACK, a sequence NAK says all before its PSN arrived: one past
	 * a READ or atomic still unanswered means that response was lost (the
	 * responder sends its NAK behind the responses it owes), so ask again.
	 */
	comp_ack_upto(qp, droce_psn_add(pkt->psn, DROCE_24BIT_MASK), code == DROCE_NAK_PSN_SEQ,
		      now);
	if (qp->state == DROCE_TQP_ERR)
		return;
	switch (code) {
	case DROCE_NAK_PSN_SEQ:
		TQP_CNT(qp, SEQ_NAKS_RX);
		/*
		 * Another NAK for the PSN the round under way went back to,
		 * with nothing answered since, is old news: a copy the link
		 * made, or a responder that NAKs every packet past a gap. Each
		 * would spend retry_cnt and resend the window; the timer still
		 * covers that round's loss.
		 */
		if (pkt->psn == qp->comp.psn && !qp->comp.nak_round) {
			comp_retry(qp, now);
			qp->comp.nak_round = true;
		}
		break;
	case DROCE_NAK_INVALID_REQ:	/* class C errors: the QP fails (IBA 9.9.2.4) */
		comp_fail(qp, IBV_WC_REM_INV_REQ_ERR);
		break;
	case DROCE_NAK_REM_ACCESS:
		comp_fail(qp, IBV_WC_REM_ACCESS_ERR);
		break;
	case DROCE_NAK_REM_OP:
		comp_fail(qp, IBV_WC_REM_OP_ERR);
		break;
	default:
		comp_fail(qp, IBV_WC_BAD_RESP_ERR);
		break;
	}
}

/* The READ or atomic WQE a response is for, after acking what precedes it. */
static struct droce_tqp_swqe *
comp_rd_atomic_wqe(struct droce_tqp *qp, const struct droce_pkt *pkt, uint64_t now)
{
	struct droce_tqp_swqe *w;

	comp_ack_upto(qp, droce_psn_add(pkt->psn, DROCE_24BIT_MASK), false, now);
	if (qp->state == DROCE_TQP_ERR || qp->comp.idx == qp->sq_post)
		return NULL;
	w = tqp_swqe(qp, qp->comp.idx);
	if (!wr_is_rd_atomic(w->wr.opcode) || w->state == DROCE_SWQE_POSTED)
		return NULL;
	return w;
}

/* A READ response's bit in comp.read_ahead (PSN mod the span). */
static bool
read_ahead_test(const struct droce_tqp *qp, uint32_t psn)
{
	uint32_t b = psn % DROCE_READ_AHEAD_PSNS;

	return (qp->comp.read_ahead[b / 64] >> (b % 64)) & 1;
}

static void
read_ahead_set(struct droce_tqp *qp, uint32_t psn, bool on)
{
	uint32_t b = psn % DROCE_READ_AHEAD_PSNS;

	if (on)
		qp->comp.read_ahead[b / 64] |= 1ull << (b % 64);
	else
		qp->comp.read_ahead[b / 64] &= ~(1ull << (b % 64));
}

/* Bytes READ response @k (0-based within WQE @w) carries. */
static uint32_t
read_resp_len(const struct droce_tqp *qp, const struct droce_tqp_swqe *w, uint32_t k)
{
	return k + 1 < w->npsn ? qp->attr.mtu : w->wr.length - k * qp->attr.mtu;
}

/*
 * A response of the current READ that arrived ahead of a lost one: land
 * its bytes now and remember it, so the go-back-N round that follows has
 * to bring only what is still missing (each round otherwise keeps just
 * the prefix before the first loss, and heavy loss exhausts retry_cnt).
 * The caller has made sure it is not one already kept.
 * @return true if it was kept.
 */
static bool
read_resp_ahead(struct droce_tqp *qp, struct droce_tqp_swqe *w, const struct droce_pkt *pkt,
		const uint8_t *payload)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	uint32_t k = droce_psn_diff(pkt->psn, w->first_psn);

	if (droce_psn_diff(pkt->psn, qp->comp.psn) >= DROCE_READ_AHEAD_PSNS ||
	    k >= w->npsn || (d->flags & DROCE_OPF_START) ||
	    !!(d->flags & DROCE_OPF_END) != (k + 1 == w->npsn) ||
	    pkt->payload_len != read_resp_len(qp, w, k))
		return false;
	if (tqp_scatter(qp, w->wr.sge, w->wr.num_sge, k * qp->attr.mtu, payload,
			pkt->payload_len) != DROCE_MEM_OK)
		return false;	/* reported when it comes in sequence */
	read_ahead_set(qp, pkt->psn, true);
	return true;
}

static void
comp_read_resp(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *payload,
	       uint64_t now)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	struct droce_tqp_swqe *w = comp_rd_atomic_wqe(qp, pkt, now);
	bool first_expected, last;

	if (w == NULL || w->wr.opcode != IBV_WR_RDMA_READ) {
		TQP_CNT(qp, DROP_PSN);
		return;
	}
	if (pkt->psn != qp->comp.psn) {
		bool ahead = droce_psn_cmp(pkt->psn, qp->comp.psn) > 0;
		/* a copy of a response already kept is no news: the go-back-N
		 * round under way answers it, and each retry spends retry_cnt */
		bool copy = ahead && read_ahead_test(qp, pkt->psn);

		if (ahead && !copy && read_resp_ahead(qp, w, pkt, payload)) {
			TQP_CNT(qp, READ_AHEAD);
			/* data flows: the budget is for a silent path */
			qp->comp.retry_left = qp->attr.retry_cnt;
		} else {
			TQP_CNT(qp, DROP_PSN);
		}
		/* a new response past a gap: the one before it was lost, ask
		 * again now rather than after the ACK timeout */
		if (ahead && !copy && !qp->comp.read_gap)
			comp_retry(qp, now);
		return;
	}
	first_expected = w->read_done == 0;
	if (first_expected != !!(d->flags & DROCE_OPF_START) ||
	    pkt->payload_len > qp->attr.mtu ||
	    (!(d->flags & DROCE_OPF_END) && pkt->payload_len != qp->attr.mtu) ||
	    w->read_done + pkt->payload_len > w->wr.length ||
	    ((d->flags & DROCE_OPF_END) && w->read_done + pkt->payload_len != w->wr.length)) {
		comp_fail(qp, IBV_WC_BAD_RESP_ERR);
		return;
	}
	if (pkt->payload_len > 0 &&
	    tqp_scatter(qp, w->wr.sge, w->wr.num_sge, w->read_done, payload,
			pkt->payload_len) != DROCE_MEM_OK) {
		comp_fail(qp, IBV_WC_LOC_PROT_ERR);
		return;
	}
	w->read_done += pkt->payload_len;
	qp->comp.psn = droce_psn_add(pkt->psn, 1);
	qp->comp.read_gap = false;
	last = d->flags & DROCE_OPF_END;
	read_ahead_set(qp, pkt->psn, false);
	/* the responses that came ahead of this one are already in place */
	while (!last && read_ahead_test(qp, qp->comp.psn)) {
		uint32_t k = droce_psn_diff(qp->comp.psn, w->first_psn);

		read_ahead_set(qp, qp->comp.psn, false);
		w->read_done += read_resp_len(qp, w, k);
		last = k + 1 == w->npsn;
		qp->comp.psn = droce_psn_add(qp->comp.psn, 1);
	}
	if (last) {
		memset(qp->comp.read_ahead, 0, sizeof(qp->comp.read_ahead));
		w->state = DROCE_SWQE_DONE;
		qp->comp.psn = droce_psn_add(w->first_psn, w->npsn);
		comp_retire(qp, w);
	}
	comp_progress(qp, now);
	comp_retire_ready(qp);
}

static void
comp_atomic_ack(struct droce_tqp *qp, const struct droce_pkt *pkt, uint64_t now)
{
	struct droce_tqp_swqe *w = comp_rd_atomic_wqe(qp, pkt, now);
	uint64_t orig = pkt->atmack_orig;

	if (w == NULL || w->wr.opcode == IBV_WR_RDMA_READ || pkt->psn != w->first_psn) {
		TQP_CNT(qp, DROP_PSN);
		return;
	}
	/* the original value lands in local memory in host order */
	if (tqp_scatter(qp, w->wr.sge, w->wr.num_sge, 0, &orig, sizeof(orig)) != DROCE_MEM_OK) {
		comp_fail(qp, IBV_WC_LOC_PROT_ERR);
		return;
	}
	w->state = DROCE_SWQE_DONE;
	qp->comp.psn = droce_psn_add(pkt->psn, 1);
	comp_retire(qp, w);
	comp_progress(qp, now);
	comp_retire_ready(qp);
}

void
comp_rx(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *frame, uint64_t now)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);

	if (qp->attr.type != IBV_QPT_RC || droce_opcode_transport(pkt->opcode) != DROCE_TR_RC) {
		TQP_CNT(qp, DROP_OPCODE);
		return;
	}
	if (qp->state != DROCE_TQP_RTS && qp->state != DROCE_TQP_SQD &&
	    qp->state != DROCE_TQP_SQE) {
		TQP_CNT(qp, DROP_STATE);
		return;
	}
	TQP_CNT(qp, RX_PKTS);
	if (d->flags & DROCE_OPF_READ_RESP) {
		/* a NAK may also answer a READ; only ACK syndromes ride on responses */
		comp_read_resp(qp, pkt, frame + pkt->payload_off, now);
		return;
	}
	if (d->flags & DROCE_OPF_ATOMIC_ACK) {
		comp_atomic_ack(qp, pkt, now);
		return;
	}
	switch (droce_aeth_type(pkt->aeth.syndrome)) {
	case DROCE_AETH_ACK:
		comp_ack_upto(qp, pkt->psn, true, now);
		break;
	case DROCE_AETH_RNR_NAK:
		comp_rnr(qp, pkt, now);
		break;
	case DROCE_AETH_NAK:
		comp_nak(qp, pkt, now);
		break;
	default:
		TQP_CNT(qp, DROP_OPCODE);
		break;
	}
	comp_retire_ready(qp);
}

void
comp_timer(struct droce_tqp *qp, uint64_t now)
{
	if (qp->state == DROCE_TQP_ERR || qp->state == DROCE_TQP_RESET)
		return;
	if (qp->comp.rnr_until != 0 && now >= qp->comp.rnr_until) {
		qp->comp.rnr_until = 0;
		req_restart(qp, now);
	}
	if (qp->comp.timer != 0 && now >= qp->comp.timer) {
		if (qp->comp.idx == qp->sq_post) {
			qp->comp.timer = 0;
			return;
		}
		TQP_CNT(qp, TIMEOUTS);
		if (qp->comp.no_path) {
			/* nothing reached the peer: try again, the budget untouched */
			qp->comp.no_path = false;
			TQP_CNT(qp, NO_PATH_RETRIES);
			req_restart(qp, now);
			return;
		}
		comp_retry(qp, now);
	}
}

/* LOCAL_INV runs when the requester reaches it; others come done. */
static void
req_local_op(struct droce_tqp *qp, struct droce_tqp_swqe *w)
{
	w->status = IBV_WC_SUCCESS;
	if (w->wr.local_done) {
		w->status = (uint8_t)w->wr.local_status;
	} else if (w->wr.opcode == IBV_WR_LOCAL_INV) {
		if (qp->ops->mem_invalidate(qp->ops_ctx, qp, w->wr.inv_rkey, false) != DROCE_MEM_OK)
			w->status = IBV_WC_LOC_PROT_ERR;
	} else {
		w->status = IBV_WC_MW_BIND_ERR;	/* binds are done by the verbs layer */
	}
	w->state = DROCE_SWQE_DONE;
	qp->req.idx++;
	/* it completes now unless earlier WQEs still wait for their ACKs */
	comp_retire_ready(qp);
	if (w->status != IBV_WC_SUCCESS)
		tqp_send_error(qp);
}

/* Send the request of a READ or an atomic: one packet, many PSNs for READ. */
static void
req_rd_atomic(struct droce_tqp *qp, struct droce_tqp_swqe *w)
{
	const struct droce_av *av = &qp->attr.av;
	struct droce_pkt local, *pkt;
	uint32_t npsn = 1;

	if (w->wr.opcode == IBV_WR_RDMA_READ) {
		uint32_t off = qp->req.offset;

		pkt = tqp_pkt(qp, &local, DROCE_OP_RC_READ_REQUEST, qp->req.psn, av, qp->attr.dest_qpn);
		pkt->reth.va = w->wr.remote_addr + off;
		pkt->reth.rkey = w->wr.rkey;
		pkt->reth.len = w->wr.length - off;
		npsn = tqp_npsn(w->wr.length - off, qp->attr.mtu);
	} else {
		pkt = tqp_pkt(qp, &local, w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
			      DROCE_OP_RC_COMPARE_SWAP : DROCE_OP_RC_FETCH_ADD,
			      qp->req.psn, av, qp->attr.dest_qpn);
		pkt->atmeth.va = w->wr.remote_addr;
		pkt->atmeth.rkey = w->wr.rkey;
		/* CMP_SWP: swap and compare; FETCH_ADD: the add value (IBA 9.4.5) */
		pkt->atmeth.swap_add = w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
				       w->wr.swap : w->wr.compare_add;
		pkt->atmeth.cmp = w->wr.compare_add;
	}
	pkt->ackreq = true;
	tqp_xmit(qp, pkt, NULL, 0);
	qp->req.since_ackreq = 0;
	if (!w->rd_counted) {
		w->rd_counted = true;
		qp->req.rd_atomic++;
	}
	qp->req.psn = droce_psn_add(qp->req.psn, npsn);
	qp->req.offset = 0;
	qp->req.idx++;
	w->state = DROCE_SWQE_SENT;
}

/* One packet of a SEND or WRITE message (any transport). */
static int
req_send_write(struct droce_tqp *qp, struct droce_tqp_swqe *w)
{
	struct droce_iov iov[DROCE_MAX_SGE];
	const struct droce_av *av = &qp->attr.av;
	uint32_t op = w->wr.opcode, off = qp->req.offset, dqpn = qp->attr.dest_qpn;
	uint32_t n = DROCE_MIN(qp->attr.mtu, w->wr.length - off);
	bool first = off == 0, last = off + n == w->wr.length;
	const struct droce_opcode_desc *d;
	struct droce_pkt local, *pkt;
	unsigned int n_iov = 0;

	if (qp->attr.type == IBV_QPT_UD) {
		av = &w->wr.ud.av;
		dqpn = w->wr.ud.qpn;
	}
	pkt = tqp_pkt(qp, &local, req_opcode(qp, op, first, last), qp->req.psn, av, dqpn);
	d = droce_opcode(pkt->opcode);
	if (d->xhdrs & DROCE_XH(RETH)) {
		pkt->reth.va = w->wr.remote_addr;
		pkt->reth.rkey = w->wr.rkey;
		pkt->reth.len = w->wr.length;
	}
	if (d->xhdrs & DROCE_XH(IMMDT))
		pkt->imm = w->wr.imm;
	if (d->xhdrs & DROCE_XH(IETH))
		pkt->ieth_rkey = w->wr.inv_rkey;
	if (d->xhdrs & DROCE_XH(DETH)) {
		/* IBA C10-15: a controlled Q_Key (high bit) means the QP's own */
		pkt->deth.qkey = (w->wr.ud.qkey & 0x80000000u) ? qp->attr.qkey : w->wr.ud.qkey;
		pkt->deth.sqpn = qp->attr.qpn;
	}
	if (n > 0) {
		if (w->wr.flags & IBV_SEND_INLINE) {
			iov[0].base = w->wr.inline_data + off;
			iov[0].len = n;
			n_iov = 1;
		} else if (w->wr.num_sge == 1 && n <= w->wr.sge[0].length - off &&
			   off < w->wr.sge[0].length) {
			/* tqp_gather()'s usual case, one SGE, without its loop and call */
			uint8_t *host;
			enum droce_mem_err e = qp->ops->mem_resolve(qp->ops_ctx, qp,
				w->wr.sge[0].lkey, w->wr.sge[0].addr + off, n, 0, &host);

			if (e != DROCE_MEM_OK &&
			    (e != DROCE_MEM_INDIRECT ||
			     tqp_copy_out(qp, w->wr.sge[0].lkey, w->wr.sge[0].addr + off, n, 0,
					  &host) != DROCE_MEM_OK)) {
				comp_fail(qp, IBV_WC_LOC_PROT_ERR);
				return -1;
			}
			iov[0].base = host;
			iov[0].len = n;
			n_iov = 1;
		} else {
			if (tqp_gather(qp, w->wr.sge, w->wr.num_sge, off, n, iov, &n_iov) !=
			    DROCE_MEM_OK) {
				comp_fail(qp, IBV_WC_LOC_PROT_ERR);
				return -1;
			}
		}
	}
	pkt->se = last && (w->wr.flags & IBV_SEND_SOLICITED);
	if (qp->attr.type == IBV_QPT_RC &&
	    (last || ++qp->req.since_ackreq >= qp->req.ackreq_every)) {
		pkt->ackreq = true;
		qp->req.since_ackreq = 0;
	}
	tqp_xmit(qp, pkt, iov, n_iov);
	qp->req.psn = droce_psn_add(qp->req.psn, 1);
	qp->req.offset += n;
	if (last) {
		qp->req.offset = 0;
		qp->req.idx++;
		/* UC and UD are done once sent; RC waits for its ACK */
		w->state = qp->attr.type == IBV_QPT_RC ? DROCE_SWQE_SENT : DROCE_SWQE_DONE;
	}
	return 0;
}

unsigned int
req_poll(struct droce_tqp *qp, uint64_t now, unsigned int budget)
{
	unsigned int sent = 0;

	if (!req_may_send(qp) || qp->comp.rnr_until != 0)
		return 0;
	while (sent < budget && qp->req.idx != qp->sq_post && req_may_send(qp)) {
		struct droce_tqp_swqe *w = tqp_swqe(qp, qp->req.idx);
		uint32_t op = w->wr.opcode;

		if (qp->req.offset == 0 && w->state == DROCE_SWQE_POSTED) {
			if (wr_is_local(op) || w->wr.local_done) {
				req_local_op(qp, w);
				continue;
			}
			/* IBA 10.8.3.3: a fenced WQE waits for earlier READs and atomics */
			if ((w->wr.flags & IBV_SEND_FENCE) && qp->req.rd_atomic > 0)
				break;
			w->first_psn = qp->req.psn;
			w->npsn = wr_is_rd_atomic(op) && op != IBV_WR_RDMA_READ ? 1 :
				  tqp_npsn(w->wr.length, qp->attr.mtu);
			w->state = DROCE_SWQE_SENDING;
		} else if (wr_is_local(op) || w->wr.local_done) {
			qp->req.idx++;		/* already executed before a restart */
			continue;
		}
		if (qp->attr.type == IBV_QPT_RC) {
			if (wr_is_rd_atomic(op) &&
			    qp->req.rd_atomic >= DROCE_MAX(qp->attr.max_rd_atomic, 1))
				break;
			if (droce_psn_diff(qp->req.psn, qp->comp.psn) >= DROCE_MAX_UNACKED_PSNS)
				break;
		}
		if (wr_is_rd_atomic(op))
			req_rd_atomic(qp, w);
		else if (req_send_write(qp, w) < 0)
			break;
		sent++;
		if (droce_psn_cmp(qp->req.psn, qp->req.psn_max) > 0)
			qp->req.psn_max = qp->req.psn;
		if (qp->attr.type == IBV_QPT_RC && qp->comp.timer == 0)
			comp_arm_timer(qp, now);
	}
	if (qp->attr.type != IBV_QPT_RC)
		comp_retire_ready(qp);
	return sent;
}
