/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Responder (IBA 9.7.3 - 9.7.5, 9.9.3) for RC, UC and UD.
 *
 * RC: a packet is checked in the order of the IBA responder (PSN, opcode
 * sequence, QP access, length, R_Key) and then executed: SEND data goes to
 * the receive WQE taken at its first packet, WRITE data through the R_Key
 * of its RETH, a READ is recorded in the resource ring and its responses are
 * produced by resp_poll(), an atomic runs once and its result is kept in the
 * same ring so a duplicate is answered from there, never executed again.
 * Ahead of the expected PSN: one PSN sequence NAK per gap. Behind it: a
 * duplicate, re-ACKed (SEND/WRITE) or replayed (READ/atomic). No receive
 * WQE: RNR NAK with the QP's min_rnr_timer; a receive queue the owner finds
 * broken: the QP fails (RC: NAK remote operational error). ACKs are coalesced: the latest
 * one requested is sent at the next poll. Class C errors (access, invalid
 * request, operational) NAK and move the QP to error.
 *
 * UC: no ACKs; a PSN gap or an error discards the rest of the message.
 * UD: Q_Key check, the 40-byte GRH area in front of the data.
 *
 * Runs on the worker thread that owns the QP.
 */

#include <errno.h>
#include <string.h>

#include "transport_priv.h"

/* Mark a READ/atomic resource as owing responses or not, keeping the count. */
static void
res_set_pending(struct droce_tqp *qp, struct droce_tqp_res *r, bool pending)
{
	if (r->pending != pending)
		qp->resp.res_pending += pending ? 1 : (uint32_t)-1;
	r->pending = pending;
}

static void
resp_send_aeth(struct droce_tqp *qp, uint8_t opcode, uint32_t psn, uint8_t syndrome,
	       const struct droce_iov *iov, unsigned int n_iov)
{
	struct droce_pkt local, *pkt;

	pkt = tqp_pkt(qp, &local, opcode, psn, &qp->attr.av, qp->attr.dest_qpn);
	pkt->aeth.syndrome = syndrome;
	pkt->aeth.msn = qp->resp.msn & DROCE_24BIT_MASK;
	tqp_xmit(qp, pkt, iov, n_iov);
}

static void
resp_ack(struct droce_tqp *qp, uint32_t psn)
{
	TQP_CNT(qp, ACKS_TX);
	resp_send_aeth(qp, DROCE_OP_RC_ACKNOWLEDGE, psn,
		       droce_aeth_syn_ack(DROCE_AETH_CREDITS_UNLIMITED), NULL, 0);
}

/* Class C error: NAK, then the QP fails (IBA 9.9.3.1.2). */
static void
resp_nak_fatal(struct droce_tqp *qp, uint32_t psn, enum droce_nak_code code,
	       enum droce_tqp_fault why)
{
	TQP_CNT(qp, NAKS_TX);
	qp->resp.ack_pending = false;
	resp_send_aeth(qp, DROCE_OP_RC_ACKNOWLEDGE, psn, droce_aeth_syn_nak(code), NULL, 0);
	tqp_to_error(qp, why);
}

static void
resp_complete_recv(struct droce_tqp *qp, uint32_t status, uint32_t opcode, uint32_t byte_len,
		   uint32_t wc_flags, const struct droce_pkt *pkt)
{
	struct droce_cqe c = {
		.wr_id = qp->resp.rwqe.wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->attr.qpn,
		.wc_flags = wc_flags,
	};

	if (pkt != NULL && (wc_flags & IBV_WC_WITH_IMM))
		c.imm = pkt->imm;
	if (pkt != NULL && (wc_flags & IBV_WC_WITH_INV))
		c.invalidated_rkey = pkt->ieth_rkey;
	if (pkt != NULL && qp->attr.type == IBV_QPT_UD) {
		c.src_qp = pkt->deth.sqpn;
		/*
		 * RoCEv2 carries no SL. As Mellanox adapters do (their CQE's SL of
		 * a RoCE UD receive is the L3 header type: 1 IPv6, 2 IPv4), say
		 * which header fills the GRH area: UCX's UD finds the destination
		 * address there by it, and drops what does not match its GIDs.
		 */
		c.sl = (pkt->flags & DROCE_PKT_F_IPV6) ? 1 : 2;
	}
	c.solicited = pkt != NULL && pkt->se;
	qp->resp.have_rwqe = false;
	tqp_cq_push(qp, true, &c);
}

void
resp_flush(struct droce_tqp *qp)
{
	unsigned int i;

	if (qp->resp.have_rwqe)
		resp_complete_recv(qp, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, NULL);
	for (i = 0; i < qp->resp.res_slots; i++)
		res_set_pending(qp, &qp->resp.res[i], false);
	qp->resp.ack_pending = false;
}

/* The receive WQE of the message: 0, -EAGAIN if none (RNR), -EBADMSG if the queue is broken. */
static int
resp_take_rwqe(struct droce_tqp *qp)
{
	int ret;

	if (qp->resp.have_rwqe)
		return 0;
	ret = qp->ops->recv_get(qp->ops_ctx, qp, &qp->resp.rwqe);
	if (ret < 0)
		return ret == -EAGAIN ? -EAGAIN : -EBADMSG;
	qp->resp.have_rwqe = true;
	return 0;
}

static void
resp_rnr(struct droce_tqp *qp, const struct droce_pkt *pkt)
{
	TQP_CNT(qp, RNR_NAKS_TX);
	resp_send_aeth(qp, DROCE_OP_RC_ACKNOWLEDGE, pkt->psn,
		       droce_aeth_syn_rnr(qp->attr.min_rnr_timer), NULL, 0);
}

/*
 * Room for one more READ or atomic? The slot it takes is the oldest; one
 * still answered for the first time means the requester has more than
 * max_dest_rd_atomic outstanding (or we offered none): an Invalid Request
 * NAK (Soft-RoCE answers a QP offering none so too). One being replayed for
 * a duplicate may go: the requester, sending a new request, has its answer.
 */
static bool
resp_res_room(const struct droce_tqp *qp)
{
	const struct droce_tqp_res *r;

	if (qp->resp.res_slots == 0)
		return false;
	r = &qp->resp.res[qp->resp.res_head % qp->resp.res_slots];
	return r->kind == DROCE_RES_FREE || r->served;
}

/* The next slot, after resp_res_room() said there is one. */
static struct droce_tqp_res *
resp_res_alloc(struct droce_tqp *qp)
{
	struct droce_tqp_res *r = &qp->resp.res[qp->resp.res_head % qp->resp.res_slots];

	qp->resp.res_head++;
	res_set_pending(qp, r, false);	/* an overwritten slot owes nothing more */
	memset(r, 0, sizeof(*r));
	return r;
}

/* The saved READ or atomic a duplicate PSN belongs to. */
static struct droce_tqp_res *
resp_res_find(struct droce_tqp *qp, uint32_t psn, uint8_t kind)
{
	unsigned int i;

	for (i = 0; i < qp->resp.res_slots; i++) {
		struct droce_tqp_res *r = &qp->resp.res[i];

		if (r->kind == kind && droce_psn_diff(psn, r->psn) < r->npsn)
			return r;
	}
	return NULL;
}

static void
resp_duplicate(struct droce_tqp *qp, const struct droce_pkt *pkt)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	struct droce_tqp_res *r;

	TQP_CNT(qp, DUP_REQS);
	if (d->flags & DROCE_OPF_READ) {
		/* IBA 9.7.5.1.3: serve again from the PSN the requester asks */
		r = resp_res_find(qp, pkt->psn, DROCE_RES_READ);
		if (r == NULL)
			return;
		r->sent = DROCE_MIN(droce_psn_diff(pkt->psn, r->psn) * qp->attr.mtu, r->len);
		res_set_pending(qp, r, true);
		return;
	}
	if (d->flags & DROCE_OPF_ATOMIC) {
		/* never execute twice: answer again with the saved original value */
		r = resp_res_find(qp, pkt->psn, DROCE_RES_ATOMIC);
		if (r != NULL)
			res_set_pending(qp, r, true);
		return;
	}
	/* SEND/WRITE: acknowledge what we have (IBA 9.7.5.1.2); a NAK queued says it too */
	if (qp->resp.ack_pending && qp->resp.ack_is_nak)
		return;
	qp->resp.ack_pending = true;
	qp->resp.ack_is_nak = false;
	qp->resp.ack_psn = droce_psn_add(qp->resp.epsn, DROCE_24BIT_MASK);
}

/* Opcode allowed here, in this sequence, with these QP access rights? */
static bool
resp_chk_op(struct droce_tqp *qp, const struct droce_opcode_desc *d, uint8_t opcode)
{
	uint8_t tr = droce_opcode_transport(opcode);
	uint32_t kind = d->flags & (DROCE_OPF_SEND | DROCE_OPF_WRITE);

	if ((qp->attr.type == IBV_QPT_RC && tr != DROCE_TR_RC) ||
	    (qp->attr.type == IBV_QPT_UC && tr != DROCE_TR_UC))
		return false;
	if (d->flags & (DROCE_OPF_FLUSH | DROCE_OPF_ATOMIC_WR))
		return false;			/* not offered by droce */
	if (d->flags & DROCE_OPF_START) {
		if (qp->resp.last_opf_mid != 0)
			return false;
	} else if (qp->resp.last_opf_mid != kind) {
		return false;
	}
	if ((d->flags & DROCE_OPF_WRITE) && !(qp->attr.access & IBV_ACCESS_REMOTE_WRITE))
		return false;
	if ((d->flags & DROCE_OPF_READ) && !(qp->attr.access & IBV_ACCESS_REMOTE_READ))
		return false;
	if ((d->flags & DROCE_OPF_ATOMIC) && !(qp->attr.access & IBV_ACCESS_REMOTE_ATOMIC))
		return false;
	return true;
}

enum resp_result {
	RESP_OK,		/* executed: advance ePSN */
	RESP_RNR,		/* no receive WQE */
	RESP_INV_REQ,		/* NAK invalid request */
	RESP_LEN_ERR,		/* NAK invalid request; the receive WQE said why */
	RESP_ACCESS,		/* NAK remote access error */
	RESP_OP_ERR,		/* NAK remote operational error */
	RESP_RQ_BROKEN,		/* the receive queue is broken: NAK remote operational
				 * error, and the owner hears DROCE_TQP_FAULT_RQ */
};

/* Take the message's receive WQE, as a resp_result. */
static enum resp_result
resp_rwqe_result(struct droce_tqp *qp)
{
	int ret = resp_take_rwqe(qp);

	return ret == 0 ? RESP_OK : ret == -EAGAIN ? RESP_RNR : RESP_RQ_BROKEN;
}

static enum resp_result
resp_send(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *payload)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	uint32_t flags = 0;

	if (d->flags & DROCE_OPF_START) {
		enum resp_result r = resp_rwqe_result(qp);

		if (r != RESP_OK)
			return r;
		qp->resp.rcv_len = 0;
	}
	if (!qp->resp.have_rwqe)
		return RESP_INV_REQ;
	if (pkt->payload_len > 0) {
		enum droce_mem_err e = tqp_scatter(qp, qp->resp.rwqe.sge, qp->resp.rwqe.num_sge,
						   qp->resp.rcv_len, payload, pkt->payload_len);

		if (e == DROCE_MEM_SHORT) {	/* message longer than the buffer */
			resp_complete_recv(qp, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, NULL);
			return RESP_LEN_ERR;
		}
		if (e != DROCE_MEM_OK) {
			/* the WQE's SGE fails its check: key, PD, range, LOCAL_WRITE
			 * (an MR moved since it was posted) -- IBA 9.7.5.2.4 */
			resp_complete_recv(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, NULL);
			return RESP_OP_ERR;
		}
	}
	qp->resp.rcv_len += pkt->payload_len;
	if (!(d->flags & DROCE_OPF_END))
		return RESP_OK;
	if (d->flags & DROCE_OPF_IMM)
		flags |= IBV_WC_WITH_IMM;
	if (d->flags & DROCE_OPF_INV) {
		if (qp->ops->mem_invalidate(qp->ops_ctx, qp, pkt->ieth_rkey, true) != DROCE_MEM_OK) {
			resp_complete_recv(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, NULL);
			return RESP_OP_ERR;
		}
		flags |= IBV_WC_WITH_INV;
	}
	qp->resp.msn++;
	resp_complete_recv(qp, IBV_WC_SUCCESS, IBV_WC_RECV, qp->resp.rcv_len, flags, pkt);
	return RESP_OK;
}

/* A WRITE's packet into on-demand paged memory (the RETH's range answered INDIRECT). */
static __attribute__((noinline)) enum resp_result
resp_write_indirect(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *payload)
{
	return qp->ops->mem_copy(qp->ops_ctx, qp, qp->resp.wr_rkey, qp->resp.wr_va,
				 (void *)(uintptr_t)payload, pkt->payload_len,
				 IBV_ACCESS_REMOTE_WRITE) == DROCE_MEM_OK ? RESP_OK : RESP_ACCESS;
}

static enum resp_result
resp_write(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *payload)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	enum droce_mem_err e = DROCE_MEM_OK;
	uint8_t *host = NULL;

	/* WRITE with immediate needs its receive WQE before anything is written */
	if (d->flags & DROCE_OPF_IMM) {
		enum resp_result r = resp_rwqe_result(qp);

		if (r != RESP_OK)
			return r;
	}
	if (d->flags & DROCE_OPF_START) {
		qp->resp.wr_va = pkt->reth.va;
		qp->resp.wr_rkey = pkt->reth.rkey;
		qp->resp.wr_left = pkt->reth.len;
		qp->resp.rcv_len = 0;
		/* a zero-length WRITE checks no key (IBA 9.4.4 C9-88.1) */
		if (pkt->reth.len > 0 &&
		    (e = qp->ops->mem_resolve(qp->ops_ctx, qp, pkt->reth.rkey, pkt->reth.va,
					      pkt->reth.len, IBV_ACCESS_REMOTE_WRITE, &host)) !=
		    DROCE_MEM_OK && e != DROCE_MEM_INDIRECT)
			return RESP_ACCESS;
	}
	if (pkt->payload_len > qp->resp.wr_left ||
	    ((d->flags & DROCE_OPF_END) && pkt->payload_len != qp->resp.wr_left))
		return RESP_INV_REQ;	/* more or less data than the RETH announced */
	if (pkt->payload_len > 0) {
		/* a first packet's host is the RETH's, just resolved for the whole message */
		if (host == NULL && e == DROCE_MEM_OK &&
		    (e = qp->ops->mem_resolve(qp->ops_ctx, qp, qp->resp.wr_rkey, qp->resp.wr_va,
					      pkt->payload_len, IBV_ACCESS_REMOTE_WRITE, &host)) !=
		    DROCE_MEM_OK && e != DROCE_MEM_INDIRECT)
			return RESP_ACCESS;	/* invalidated meanwhile */
		if (e == DROCE_MEM_INDIRECT) {
			if (resp_write_indirect(qp, pkt, payload) != RESP_OK)
				return RESP_ACCESS;
		} else {
			memcpy(host, payload, pkt->payload_len);
		}
	}
	qp->resp.wr_va += pkt->payload_len;
	qp->resp.wr_left -= pkt->payload_len;
	qp->resp.rcv_len += pkt->payload_len;
	if (!(d->flags & DROCE_OPF_END))
		return RESP_OK;
	qp->resp.msn++;
	if (d->flags & DROCE_OPF_IMM)
		resp_complete_recv(qp, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, qp->resp.rcv_len,
				   IBV_WC_WITH_IMM, pkt);
	return RESP_OK;
}

static enum resp_result
resp_read(struct droce_tqp *qp, const struct droce_pkt *pkt)
{
	struct droce_tqp_res *r;
	uint8_t *host;

	if (!resp_res_room(qp))
		return RESP_INV_REQ;
	if (pkt->reth.len > 0) {
		enum droce_mem_err e = qp->ops->mem_resolve(qp->ops_ctx, qp, pkt->reth.rkey,
							    pkt->reth.va, pkt->reth.len,
							    IBV_ACCESS_REMOTE_READ, &host);

		/* on-demand paged memory is read packet by packet, as it is served */
		if (e != DROCE_MEM_OK && e != DROCE_MEM_INDIRECT)
			return RESP_ACCESS;
	}
	r = resp_res_alloc(qp);
	r->kind = DROCE_RES_READ;
	r->psn = pkt->psn;
	r->npsn = tqp_npsn(pkt->reth.len, qp->attr.mtu);
	r->va = pkt->reth.va;
	r->rkey = pkt->reth.rkey;
	r->len = pkt->reth.len;
	res_set_pending(qp, r, true);
	qp->resp.msn++;
	r->msn = qp->resp.msn;
	return RESP_OK;
}

static enum resp_result
resp_atomic(struct droce_tqp *qp, const struct droce_pkt *pkt)
{
	struct droce_tqp_res *r;
	uint64_t orig;
	uint8_t *host;

	if (pkt->atmeth.va & 7)
		return RESP_INV_REQ;	/* IBA 9.4.5: atomics are 8-byte aligned */
	if (!resp_res_room(qp))
		return RESP_INV_REQ;	/* checked before it runs: it must not run */
	if (qp->ops->mem_atomic != NULL) {
		if (qp->ops->mem_atomic(qp->ops_ctx, qp, pkt->atmeth.rkey, pkt->atmeth.va,
					pkt->opcode == DROCE_OP_RC_COMPARE_SWAP, pkt->atmeth.cmp,
					pkt->atmeth.swap_add, &orig) != DROCE_MEM_OK)
			return RESP_ACCESS;
	} else {
		if (qp->ops->mem_resolve(qp->ops_ctx, qp, pkt->atmeth.rkey, pkt->atmeth.va, 8,
					 IBV_ACCESS_REMOTE_ATOMIC, &host) != DROCE_MEM_OK)
			return RESP_ACCESS;
		orig = droce_atomic_apply((uint64_t *)(void *)host,
					  pkt->opcode == DROCE_OP_RC_COMPARE_SWAP, pkt->atmeth.cmp,
					  pkt->atmeth.swap_add);
	}
	qp->resp.msn++;
	r = resp_res_alloc(qp);
	r->kind = DROCE_RES_ATOMIC;
	r->psn = pkt->psn;
	r->npsn = 1;
	r->orig = orig;
	r->msn = qp->resp.msn;
	r->syndrome = droce_aeth_syn_ack(DROCE_AETH_CREDITS_UNLIMITED);
	res_set_pending(qp, r, true);	/* the reply goes out in order, from resp_poll() */
	return RESP_OK;
}

/* UD: one packet, one message. */
static void
resp_ud(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *frame)
{
	uint8_t grh[DROCE_GRH_BYTES];
	uint32_t flags = IBV_WC_GRH;
	enum droce_mem_err e;
	int ret;
	/* GSI (QP1) uses the well-known Q_Key (IBA 13.4.6.1) */
	uint32_t qkey = qp->attr.qpn == 1 ? 0x80010000u : qp->attr.qkey;

	if (droce_opcode_transport(pkt->opcode) != DROCE_TR_UD) {
		TQP_CNT(qp, DROP_OPCODE);
		return;
	}
	if (pkt->deth.qkey != qkey) {
		TQP_CNT(qp, DROP_QKEY);
		return;
	}
	if (pkt->payload_len > qp->attr.mtu) {
		TQP_CNT(qp, DROP_LEN);
		return;
	}
	ret = resp_take_rwqe(qp);
	if (ret == -EBADMSG) {
		tqp_to_error(qp, DROCE_TQP_FAULT_RQ);
		return;
	}
	if (ret < 0) {
		TQP_CNT(qp, DROP_NO_RWQE);
		return;
	}
	/* IPv4: 20 bytes of zero, then the IPv4 header; IPv6: its header */
	memset(grh, 0, sizeof(grh));
	if (pkt->flags & DROCE_PKT_F_IPV6)
		memcpy(grh, frame + pkt->l3_off, DROCE_IPV6_BYTES);
	else
		memcpy(grh + DROCE_GRH_BYTES - DROCE_IPV4_BYTES, frame + pkt->l3_off,
		       DROCE_IPV4_BYTES);
	e = tqp_scatter(qp, qp->resp.rwqe.sge, qp->resp.rwqe.num_sge, 0, grh, sizeof(grh));
	if (e == DROCE_MEM_OK)
		e = tqp_scatter(qp, qp->resp.rwqe.sge, qp->resp.rwqe.num_sge, DROCE_GRH_BYTES,
				frame + pkt->payload_off, pkt->payload_len);
	if (e != DROCE_MEM_OK) {
		resp_complete_recv(qp, e == DROCE_MEM_SHORT ? IBV_WC_LOC_LEN_ERR :
				   IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, NULL);
		return;
	}
	TQP_CNT(qp, RX_PKTS);
	if (droce_opcode(pkt->opcode)->flags & DROCE_OPF_IMM)
		flags |= IBV_WC_WITH_IMM;
	resp_complete_recv(qp, IBV_WC_SUCCESS, IBV_WC_RECV, DROCE_GRH_BYTES + pkt->payload_len,
			   flags, pkt);
}

/* UC: a gap or an error silently discards the rest of the message (IBA 9.8.3). */
static bool
resp_uc_psn(struct droce_tqp *qp, const struct droce_pkt *pkt, const struct droce_opcode_desc *d)
{
	if (pkt->psn != qp->resp.epsn) {
		qp->resp.uc_drop = true;
		qp->resp.last_opf_mid = 0;
		qp->resp.rcv_len = 0;
	}
	qp->resp.epsn = droce_psn_add(pkt->psn, 1);
	if (d->flags & DROCE_OPF_START)
		qp->resp.uc_drop = false;
	if (qp->resp.uc_drop)
		TQP_CNT(qp, DROP_PSN);
	return !qp->resp.uc_drop;
}

void
resp_rx(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *frame, uint64_t now)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);
	const uint8_t *payload = frame + pkt->payload_off;
	enum resp_result res;
	bool rc = qp->attr.type == IBV_QPT_RC;

	(void)now;
	if (qp->state != DROCE_TQP_RTR && qp->state != DROCE_TQP_RTS &&
	    qp->state != DROCE_TQP_SQD && qp->state != DROCE_TQP_SQE) {
		TQP_CNT(qp, DROP_STATE);
		return;
	}
	if (qp->attr.type == IBV_QPT_UD) {
		resp_ud(qp, pkt, frame);
		return;
	}
	if (rc) {
		int32_t cmp = droce_psn_cmp(pkt->psn, qp->resp.epsn);

		if (cmp > 0) {
			TQP_CNT(qp, DROP_PSN);
			if (!qp->resp.nak_sent) {	/* IBA C9-111: one NAK per gap */
				qp->resp.nak_sent = true;
				TQP_CNT(qp, SEQ_NAKS_TX);
				/*
				 * Sent from resp_poll(), behind the READ responses and
				 * atomic replies still owed: ahead of them it would name
				 * a PSN past a READ the requester still waits for.
				 */
				qp->resp.ack_pending = true;
				qp->resp.ack_is_nak = true;
				qp->resp.ack_psn = qp->resp.epsn;
			}
			return;
		}
		if (cmp < 0) {
			resp_duplicate(qp, pkt);
			return;
		}
	} else if (!resp_uc_psn(qp, pkt, d)) {
		return;
	}

	if (!resp_chk_op(qp, d, pkt->opcode) || pkt->payload_len > qp->attr.mtu ||
	    (!(d->flags & DROCE_OPF_END) && pkt->payload_len != qp->attr.mtu)) {
		res = RESP_INV_REQ;
	} else if (d->flags & DROCE_OPF_SEND) {
		res = resp_send(qp, pkt, payload);
	} else if (d->flags & DROCE_OPF_WRITE) {
		res = resp_write(qp, pkt, payload);
	} else if (d->flags & DROCE_OPF_READ) {
		res = resp_read(qp, pkt);
	} else {
		res = resp_atomic(qp, pkt);
	}

	if (res == RESP_RNR) {
		if (rc)
			resp_rnr(qp, pkt);
		else
			TQP_CNT(qp, DROP_NO_RWQE);
		return;
	}
	if (res == RESP_RQ_BROKEN) {
		if (rc)		/* the peer learns at once rather than hearing RNR forever */
			resp_nak_fatal(qp, pkt->psn, DROCE_NAK_REM_OP, DROCE_TQP_FAULT_RQ);
		else
			tqp_to_error(qp, DROCE_TQP_FAULT_RQ);
		return;
	}
	if (res != RESP_OK) {
		TQP_CNT(qp, DROP_OPCODE);
		if (!rc) {
			qp->resp.uc_drop = true;
			qp->resp.last_opf_mid = 0;
			return;
		}
		/* RESP_LEN_ERR and RESP_OP_ERR were reported by a receive completion */
		if (res == RESP_ACCESS)
			resp_nak_fatal(qp, pkt->psn, DROCE_NAK_REM_ACCESS, DROCE_TQP_FAULT_ACCESS);
		else if (res == RESP_OP_ERR)
			resp_nak_fatal(qp, pkt->psn, DROCE_NAK_REM_OP, DROCE_TQP_FAULT_NONE);
		else
			resp_nak_fatal(qp, pkt->psn, DROCE_NAK_INVALID_REQ,
				       res == RESP_LEN_ERR ? DROCE_TQP_FAULT_NONE :
				       DROCE_TQP_FAULT_INV_REQ);
		return;
	}

	TQP_CNT(qp, RX_PKTS);
	qp->resp.last_opf_mid = (d->flags & DROCE_OPF_END) ? 0 :
				(uint8_t)(d->flags & (DROCE_OPF_SEND | DROCE_OPF_WRITE));
	if (!rc)
		return;
	qp->resp.nak_sent = false;
	if (qp->resp.ack_is_nak) {	/* the gap is filled: a NAK still queued is stale */
		qp->resp.ack_is_nak = false;
		qp->resp.ack_pending = false;
	}
	if (d->flags & DROCE_OPF_READ) {
		qp->resp.epsn = droce_psn_add(pkt->psn, tqp_npsn(pkt->reth.len, qp->attr.mtu));
		qp->resp.ack_pending = false;	/* the responses carry the ACK */
		return;
	}
	qp->resp.epsn = droce_psn_add(pkt->psn, 1);
	if (d->flags & DROCE_OPF_ATOMIC) {
		qp->resp.ack_pending = false;	/* its reply acknowledges what precedes */
		return;
	}
	if (pkt->ackreq) {
		qp->resp.ack_pending = true;	/* coalesced: sent at the next poll */
		qp->resp.ack_is_nak = false;
		qp->resp.ack_psn = pkt->psn;
	}
}

/* Transmit READ responses that are due. */
static unsigned int
resp_read_responses(struct droce_tqp *qp, struct droce_tqp_res *r, unsigned int budget)
{
	unsigned int sent = 0;

	while (r->pending && sent < budget) {
		uint32_t k = r->sent / qp->attr.mtu;
		uint32_t n = DROCE_MIN(qp->attr.mtu, r->len - r->sent);
		bool first = k == 0, last = k + 1 >= r->npsn;
		uint8_t op = first && last ? DROCE_OP_RC_READ_RESPONSE_ONLY :
			     first ? DROCE_OP_RC_READ_RESPONSE_FIRST :
			     last ? DROCE_OP_RC_READ_RESPONSE_LAST : DROCE_OP_RC_READ_RESPONSE_MIDDLE;
		struct droce_iov iov = { NULL, 0 };
		struct droce_pkt local, *pkt;
		uint8_t *host;

		if (n > 0) {
			enum droce_mem_err e = qp->ops->mem_resolve(qp->ops_ctx, qp, r->rkey,
								    r->va + r->sent, n,
								    IBV_ACCESS_REMOTE_READ, &host);

			if (e == DROCE_MEM_INDIRECT)	/* on-demand paged: copied out now */
				e = tqp_copy_out(qp, r->rkey, r->va + r->sent, n,
						 IBV_ACCESS_REMOTE_READ, &host);
			if (e != DROCE_MEM_OK) {
				/* key invalidated while serving, or the page is not there */
				res_set_pending(qp, r, false);
				resp_nak_fatal(qp, droce_psn_add(r->psn, k), DROCE_NAK_REM_ACCESS,
					       DROCE_TQP_FAULT_ACCESS);
				break;
			}
			iov.base = host;
			iov.len = n;
		}
		pkt = tqp_pkt(qp, &local, op, droce_psn_add(r->psn, k), &qp->attr.av,
			      qp->attr.dest_qpn);
		pkt->aeth.syndrome = droce_aeth_syn_ack(DROCE_AETH_CREDITS_UNLIMITED);
		pkt->aeth.msn = r->msn & DROCE_24BIT_MASK;
		tqp_xmit(qp, pkt, &iov, n > 0 ? 1 : 0);
		r->sent += n;
		sent++;
		if (last) {
			r->served = true;
			res_set_pending(qp, r, false);
		}
	}
	return sent;
}

static void
resp_atomic_reply(struct droce_tqp *qp, struct droce_tqp_res *r)
{
	struct droce_pkt local, *ack;

	ack = tqp_pkt(qp, &local, DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, r->psn, &qp->attr.av,
		      qp->attr.dest_qpn);
	ack->aeth.syndrome = r->syndrome;
	ack->aeth.msn = r->msn & DROCE_24BIT_MASK;
	ack->atmack_orig = r->orig;
	tqp_xmit(qp, ack, NULL, 0);
	r->served = true;
	res_set_pending(qp, r, false);
}

unsigned int
droce_tqp_flush_responder(struct droce_tqp *qp)
{
	unsigned int sent = 0, k, i;

	for (i = 0; i < 1024 && (qp->resp.ack_pending || qp->resp.res_pending > 0); i++) {
		k = resp_poll(qp, 32);
		if (k == 0)
			break;		/* the wire refuses, or nothing may go */
		sent += k;
	}
	return sent;
}

unsigned int
resp_poll(struct droce_tqp *qp, unsigned int budget)
{
	unsigned int sent = 0, i, n;
	bool busy = false;

	if (qp->attr.type != IBV_QPT_RC || qp->state == DROCE_TQP_ERR ||
	    qp->state == DROCE_TQP_RESET)
		return 0;
	/* READ responses and atomic replies, oldest first: they keep PSN order */
	n = qp->resp.res_pending > 0 ? qp->resp.res_slots : 0;	/* its line is cold */
	for (i = 0; i < n && qp->resp.res_pending > 0; i++) {
		struct droce_tqp_res *r = &qp->resp.res[(qp->resp.res_head + i) % n];

		if (!r->pending)
			continue;
		if (sent < budget) {
			if (r->kind == DROCE_RES_READ) {
				sent += resp_read_responses(qp, r, budget - sent);
			} else {
				resp_atomic_reply(qp, r);
				sent++;
			}
		}
		busy |= r->pending;
	}
	/* a later ACK or NAK must not overtake responses still owed (IBA 9.7.5.1.2) */
	if (qp->resp.ack_pending && !busy && sent < budget && qp->state != DROCE_TQP_ERR) {
		qp->resp.ack_pending = false;
		if (qp->resp.ack_is_nak)
			resp_send_aeth(qp, DROCE_OP_RC_ACKNOWLEDGE, qp->resp.ack_psn,
				       droce_aeth_syn_nak(DROCE_NAK_PSN_SEQ), NULL, 0);
		else
			resp_ack(qp, qp->resp.ack_psn);
		qp->resp.ack_is_nak = false;
		sent++;
	}
	return sent;
}
