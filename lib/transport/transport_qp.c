/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Transport QP life cycle and the entry points of droce_transport.h:
 * init, state changes (entering ERR flushes), post_send, rx dispatch,
 * poll and timers; plus the helpers the requester, completer and responder
 * share: packet header defaults, gather/scatter over SGEs through the
 * owner's mem_resolve, completion delivery.
 *
 * Everything here runs on the worker thread that owns the QP.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_priv.h"

const char *const droce_tqp_counter_name[DROCE_TQP_CNT_COUNT] = {
#define C(sym, desc) [DROCE_TQP_CNT_##sym] = #sym,
	DROCE_TQP_COUNTERS(C)
#undef C
};

uint64_t
droce_tqp_timeout_ns(uint8_t timeout)
{
	/* IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means infinite */
	if (timeout == 0)
		return 0;
	return 4096ull << (timeout > 31 ? 31 : timeout);
}

int
droce_tqp_init(struct droce_tqp *qp, const struct droce_tqp_attr *attr,
	       struct droce_tqp_swqe *sq_mem, uint32_t sq_size,
	       const struct droce_tr_ops *ops, void *ops_ctx)
{
	if (sq_size == 0 || (sq_size & (sq_size - 1)) != 0 || ops == NULL)
		return -EINVAL;
	memset(qp, 0, sizeof(*qp));
	qp->attr = *attr;
	qp->sq = sq_mem;
	qp->sq_size = sq_size;
	qp->ops = ops;
	qp->ops_ctx = ops_ctx;
	qp->state = DROCE_TQP_RESET;
	qp->req.ackreq_every = DROCE_ACKREQ_INTERVAL;
	return droce_tqp_set_dest_rd_atomic(qp, attr->max_dest_rd_atomic);
}

void
droce_tqp_set_pace(struct droce_tqp *qp, uint64_t bps)
{
	uint64_t quarter = droce_tqp_timeout_ns(qp->attr.timeout) / 4, pkt_ns, n;

	if (bps == 0 || quarter == 0) {
		qp->req.ackreq_every = DROCE_ACKREQ_INTERVAL;
		return;
	}
	pkt_ns = (uint64_t)DROCE_MAX(qp->attr.mtu, 256u) * 8 * 1000000000ull / bps;
	n = pkt_ns > 0 ? quarter / pkt_ns : DROCE_ACKREQ_INTERVAL;
	qp->req.ackreq_every = (uint32_t)DROCE_MAX(DROCE_MIN(n, (uint64_t)DROCE_ACKREQ_INTERVAL), 1);
}

void
droce_tqp_fini(struct droce_tqp *qp)
{
	free(qp->resp.res);
	qp->resp.res = NULL;
	qp->resp.res_slots = 0;
}

int
droce_tqp_set_dest_rd_atomic(struct droce_tqp *qp, uint32_t n)
{
	struct droce_tqp_res *old = qp->resp.res, *res = NULL;
	uint32_t i, keep, old_n = qp->resp.res_slots;

	n = DROCE_MIN(n, (uint32_t)DROCE_MAX_RD_ATOMIC);
	if (n != old_n && n > 0) {
		res = calloc(n, sizeof(*res));
		if (res == NULL)
			return -ENOMEM;
	}
	qp->attr.max_dest_rd_atomic = (uint8_t)n;
	if (n == old_n)
		return 0;
	/* the newest keep, oldest first, from slot 0: res_head is then keep */
	keep = DROCE_MIN(n, DROCE_MIN(old_n, qp->resp.res_head));
	qp->resp.res_pending = 0;
	for (i = 0; i < keep; i++) {
		res[i] = old[(qp->resp.res_head - keep + i) % old_n];
		qp->resp.res_pending += res[i].pending;
	}
	qp->resp.res_head = keep;
	qp->resp.res = res;
	qp->resp.res_slots = n;
	free(old);
	return 0;
}

static void
tqp_reset(struct droce_tqp *qp)
{
	struct droce_tqp_res *res = qp->resp.res;
	uint32_t slots = qp->resp.res_slots;
	uint32_t ackreq_every = qp->req.ackreq_every;

	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.ackreq_every = ackreq_every;	/* the pace outlives a reset */
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->resp.res = res;	/* the ring stays, emptied */
	qp->resp.res_slots = slots;
	if (slots > 0)
		memset(res, 0, slots * sizeof(*res));
	qp->sq_post = 0;
}

void
droce_tqp_set_state(struct droce_tqp *qp, enum droce_tqp_state state, uint32_t sq_psn,
		    uint32_t rq_psn)
{
	switch (state) {
	case DROCE_TQP_RESET:
		tqp_reset(qp);
		break;
	case DROCE_TQP_RTR:
		if (qp->state != DROCE_TQP_RTR) {
			qp->resp.epsn = rq_psn & DROCE_24BIT_MASK;
			qp->resp.nak_sent = false;
		}
		break;
	case DROCE_TQP_RTS:
		if (qp->state == DROCE_TQP_RTR) {
			qp->req.psn = sq_psn & DROCE_24BIT_MASK;
			qp->req.psn_max = qp->req.psn;
			qp->comp.psn = qp->req.psn;
			qp->comp.retry_left = qp->attr.retry_cnt;
			qp->comp.rnr_left = qp->attr.rnr_retry;
		}
		break;
	case DROCE_TQP_ERR:
		if (qp->state != DROCE_TQP_ERR) {
			qp->state = DROCE_TQP_ERR;
			comp_flush(qp);
			resp_flush(qp);
		}
		break;
	default:
		break;
	}
	qp->state = state;
}

void
tqp_to_error(struct droce_tqp *qp, enum droce_tqp_fault why)
{
	if (qp->state == DROCE_TQP_ERR)
		return;
	droce_tqp_set_state(qp, DROCE_TQP_ERR, 0, 0);
	if (qp->ops->qp_error != NULL)
		qp->ops->qp_error(qp->ops_ctx, qp, why);
}

/*
 * A send WQE completed in error (IBA 10.3.1): an RC QP enters ERR; a UC or
 * UD QP enters SQE, which flushes its send queue but leaves its receive
 * queue working until the owner moves it back to RTS (or to ERR).
 */
void
tqp_send_error(struct droce_tqp *qp)
{
	if (qp->attr.type == IBV_QPT_RC || qp->state == DROCE_TQP_ERR) {
		tqp_to_error(qp, DROCE_TQP_FAULT_NONE);
		return;
	}
	if (qp->state == DROCE_TQP_SQE)
		return;
	qp->state = DROCE_TQP_SQE;
	comp_flush(qp);
	if (qp->ops->qp_error != NULL)
		qp->ops->qp_error(qp->ops_ctx, qp, DROCE_TQP_FAULT_NONE);
}

void
tqp_cq_push(struct droce_tqp *qp, bool recv, const struct droce_cqe *cqe)
{
	/* a full CQ is an error event for the CQ owner, and this QP fails */
	if (qp->ops->cq_push(qp->ops_ctx, qp, recv, cqe) < 0)
		tqp_to_error(qp, DROCE_TQP_FAULT_NONE);
}

_Static_assert(offsetof(struct droce_send_wqe, sge) + DROCE_MAX_SGE * sizeof(struct droce_sge) ==
		       offsetof(struct droce_send_wqe, ud) &&
	       offsetof(struct droce_send_wqe, ud) + sizeof(((struct droce_send_wqe *)0)->ud) ==
		       offsetof(struct droce_send_wqe, inline_data) &&
	       offsetof(struct droce_send_wqe, inline_data) + DROCE_MAX_INLINE + 8 >
		       sizeof(struct droce_send_wqe),
	       "swqe_copy's pieces cover every member of struct droce_send_wqe");

/*
 * A send WQE without its unused SGE slots, inline bytes and, off UD, its
 * address, which nothing reads (num_sge, IBV_SEND_INLINE and the QP type
 * say what is used): a 64-byte WRITE needs ~90 of its ~540 bytes
 * (profiled: the whole copy cost ~75 instructions per message).
 * Constant-size pieces compile to vector moves.
 */
static void
swqe_copy(struct droce_send_wqe *dst, const struct droce_send_wqe *src, bool ud)
{
	uint32_t i, n = DROCE_MIN(src->num_sge, (uint32_t)DROCE_MAX_SGE);

	memcpy(dst, src, offsetof(struct droce_send_wqe, sge));	/* every scalar */
	dst->sge[0] = src->sge[0];	/* most WQEs have one: no call to memcpy for it */
	for (i = 1; i < n; i++)
		dst->sge[i] = src->sge[i];
	if (ud)
		dst->ud = src->ud;
	if (src->flags & IBV_SEND_INLINE)
		memcpy(dst->inline_data, src->inline_data,
		       DROCE_MIN(src->length, (uint32_t)DROCE_MAX_INLINE));
}

int
droce_tqp_post_send(struct droce_tqp *qp, const struct droce_send_wqe *wqe)
{
	struct droce_tqp_swqe *w;

	if (qp->state == DROCE_TQP_RESET || qp->state == DROCE_TQP_INIT ||
	    qp->state == DROCE_TQP_RTR)
		return -EINVAL;
	if (qp->sq_post - qp->comp.idx >= qp->sq_size)
		return -ENOMEM;
	w = tqp_swqe(qp, qp->sq_post);
	swqe_copy(&w->wr, wqe, qp->attr.type == IBV_QPT_UD);
	w->state = DROCE_SWQE_POSTED;
	w->status = IBV_WC_SUCCESS;
	w->first_psn = 0;
	w->npsn = 0;
	w->read_done = 0;
	w->rd_counted = false;
	qp->sq_post++;
	if (qp->state == DROCE_TQP_ERR || qp->state == DROCE_TQP_SQE)
		comp_flush(qp);		/* IBA 10.8.3: posted in ERR or SQE, flushed at once */
	return 0;
}

void
droce_tqp_rx(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *frame,
	     uint64_t now)
{
	const struct droce_opcode_desc *d = droce_opcode(pkt->opcode);

	if (d->flags & DROCE_OPF_RESP)
		comp_rx(qp, pkt, frame, now);
	else if (d->flags & DROCE_OPF_REQ)
		resp_rx(qp, pkt, frame, now);
	else
		TQP_CNT(qp, DROP_OPCODE);	/* CNP: congestion control is the engine's */
}

unsigned int
droce_tqp_poll(struct droce_tqp *qp, uint64_t now, unsigned int budget)
{
	unsigned int n = resp_poll(qp, budget);

	if (n < budget)
		n += req_poll(qp, now, budget - n);
	return n;
}

void
droce_tqp_timer(struct droce_tqp *qp, uint64_t now)
{
	comp_timer(qp, now);
}

uint64_t
droce_tqp_next_deadline(const struct droce_tqp *qp)
{
	uint64_t t = UINT64_MAX;

	if (qp->state == DROCE_TQP_ERR || qp->state == DROCE_TQP_RESET)
		return t;
	if (qp->comp.rnr_until != 0)
		t = qp->comp.rnr_until;
	if (qp->comp.timer != 0 && qp->comp.timer < t)
		t = qp->comp.timer;
	return t;
}

void
droce_tqp_path_pending(struct droce_tqp *qp)
{
	qp->comp.no_path = true;
}

bool
droce_tqp_has_work(const struct droce_tqp *qp)
{
	if (qp->resp.ack_pending || qp->resp.res_pending > 0)
		return true;
	return qp->req.idx != qp->sq_post && qp->comp.rnr_until == 0 &&
	       req_may_send(qp);
}

bool
droce_tqp_sq_drained(const struct droce_tqp *qp)
{
	if (qp->req.offset != 0)
		return false;	/* a message is only partly sent */
	/* RC: and every message sent was acknowledged (and retired) */
	return qp->attr.type != IBV_QPT_RC || qp->comp.idx == qp->req.idx;
}

/* tqp_pkt() for a new or changed path, or a UD address */
void
tqp_pkt_init_path(struct droce_tqp *qp, struct droce_pkt *pkt, uint8_t opcode, uint32_t psn,
		  const struct droce_av *av, uint32_t dqpn)
{
	uint32_t fl;
	bool connected = av == &qp->attr.av;

	memset(pkt, 0, sizeof(*pkt));
	memcpy(pkt->smac, av->smac, 6);
	memcpy(pkt->dmac, av->dmac, 6);
	memcpy(pkt->sgid, av->sgid, 16);
	memcpy(pkt->dgid, av->dgid, 16);
	if (av->vlan) {
		pkt->flags |= DROCE_PKT_F_VLAN;
		pkt->vlan_tci = av->vlan_tci;
	}
	if (av->ipv6)
		pkt->flags |= DROCE_PKT_F_IPV6;
	pkt->tclass = av->tclass;
	pkt->ttl = av->hop_limit ? av->hop_limit : 64;
	pkt->ip_frag = 0x4000;			/* DF: RoCEv2 is never fragmented */
	fl = av->flow_label ? av->flow_label : droce_flow_label(qp->attr.qpn, dqpn);
	pkt->flow_label = av->ipv6 ? fl : 0;
	pkt->sport = droce_flow_label_to_sport(fl);
	pkt->dport = DROCE_ROCEV2_UDP_PORT;
	pkt->opcode = opcode;
	pkt->pkey = qp->attr.pkey ? qp->attr.pkey : DROCE_DEFAULT_PKEY;
	pkt->dqpn = dqpn;
	pkt->psn = psn & DROCE_24BIT_MASK;
	/* the connected path keeps its headers and description (UD's AHs vary) */
	if (connected) {
		pkt->tmpl = &qp->tx_tmpl;
		qp->tx_proto.pkt = *pkt;
		memcpy(&qp->tx_proto.av, av, sizeof(*av));
		qp->tx_proto.dqpn = dqpn;
		qp->tx_proto.pkey = qp->attr.pkey;
		qp->tx_proto.valid = true;
		droce_hdr_tmpl_serve(&qp->tx_tmpl, &qp->tx_proto.pkt);
	}
}

/* A packet's payload of on-demand paged memory, copied out (one per thread). */
static __thread uint8_t tqp_bounce[4096];

enum droce_mem_err
tqp_copy_out(struct droce_tqp *qp, uint32_t key, uint64_t va, uint32_t len, uint32_t access,
	     uint8_t **host)
{
	enum droce_mem_err e;

	if (len > sizeof(tqp_bounce))
		return DROCE_MEM_RANGE;		/* never more than a packet */
	e = qp->ops->mem_copy(qp->ops_ctx, qp, key, va, tqp_bounce, len, access);
	if (e == DROCE_MEM_OK)
		*host = tqp_bounce;
	return e;
}

/* What sge_walk() does with each piece it resolves */
enum sge_walk_mode {
	SGE_GATHER,	/* local read into @iov; on-demand paged pieces via tqp_bounce */
	SGE_CHECK,	/* local write into @iov; an on-demand paged piece ends the walk */
	SGE_WRITE,	/* @src written into each piece as it is resolved */
};

/*
 * The one walk over bytes [offset, offset + len) of an SGE list: at most
 * DROCE_MAX_SGE pieces. A list too short for them is DROCE_MEM_SHORT (a
 * length error); an SGE that fails its key check is what mem_resolve said (a
 * protection error, even DROCE_MEM_RANGE: the SGE lies outside its region).
 * Inlined with a constant @mode, so each caller gets only its own branch.
 */
static inline __attribute__((always_inline)) enum droce_mem_err
sge_walk(struct droce_tqp *qp, const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
	 uint32_t len, enum sge_walk_mode mode, const uint8_t *src, struct droce_iov *iov,
	 unsigned int *n_iov)
{
	uint32_t access = mode == SGE_GATHER ? 0 : IBV_ACCESS_LOCAL_WRITE;
	unsigned int i, n = 0;
	uint32_t used = 0;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint64_t va;
		uint32_t take;
		uint8_t *host;
		enum droce_mem_err e;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		take = DROCE_MIN(sge[i].length - offset, len);
		va = sge[i].addr + offset;
		e = qp->ops->mem_resolve(qp->ops_ctx, qp, sge[i].lkey, va, take, access, &host);
		if (e == DROCE_MEM_INDIRECT && mode == SGE_GATHER) {
			if (take > sizeof(tqp_bounce) - used)
				return DROCE_MEM_RANGE;
			host = tqp_bounce + used;
			used += take;
			e = qp->ops->mem_copy(qp->ops_ctx, qp, sge[i].lkey, va, host, take, 0);
		} else if (mode == SGE_WRITE) {
			if (e == DROCE_MEM_INDIRECT)
				e = qp->ops->mem_copy(qp->ops_ctx, qp, sge[i].lkey, va,
						      (void *)(uintptr_t)src, take, access);
			else if (e == DROCE_MEM_OK)
				memcpy(host, src, take);
			src += take;
		}
		if (e != DROCE_MEM_OK)
			return e;
		if (mode != SGE_WRITE) {
			iov[n].base = host;
			iov[n].len = take;
			n++;
		}
		len -= take;
		offset = 0;
	}
	if (mode != SGE_WRITE)
		*n_iov = n;
	return len == 0 ? DROCE_MEM_OK : DROCE_MEM_SHORT;
}

enum droce_mem_err
tqp_gather(struct droce_tqp *qp, const struct droce_sge *sge, uint32_t num_sge, uint32_t offset,
	   uint32_t len, struct droce_iov *iov, unsigned int *n_iov)
{
	return sge_walk(qp, sge, num_sge, offset, len, SGE_GATHER, NULL, iov, n_iov);
}

/* tqp_scatter() met an on-demand paged piece: each piece written as it comes. */
static __attribute__((noinline)) enum droce_mem_err
tqp_scatter_indirect(struct droce_tqp *qp, const struct droce_sge *sge, uint32_t num_sge,
		     uint32_t offset, const uint8_t *src, uint32_t len)
{
	return sge_walk(qp, sge, num_sge, offset, len, SGE_WRITE, src, NULL, NULL);
}

enum droce_mem_err
tqp_scatter(struct droce_tqp *qp, const struct droce_sge *sge, uint32_t num_sge,
	    uint32_t offset, const void *src, uint32_t len)
{
	struct droce_iov iov[DROCE_MAX_SGE];
	const uint8_t *s = src;
	unsigned int i, n;
	enum droce_mem_err e;

	/* every piece resolved before the first byte is written */
	e = sge_walk(qp, sge, num_sge, offset, len, SGE_CHECK, NULL, iov, &n);
	if (e != DROCE_MEM_OK)
		return e == DROCE_MEM_INDIRECT ?
		       tqp_scatter_indirect(qp, sge, num_sge, offset, src, len) : e;
	for (i = 0; i < n; i++) {
		memcpy((void *)(uintptr_t)iov[i].base, s, iov[i].len);
		s += iov[i].len;
	}
	return DROCE_MEM_OK;
}

int
droce_tqp_frame_build(struct droce_pkt *pkt, const struct droce_iov *iov, unsigned int n_iov,
		      uint8_t *buf, uint32_t cap)
{
	struct droce_hdr_tmpl *t = pkt->tmpl;
	uint32_t pre = 0, pre_len = 0, len;
	uint8_t *p, *l3;
	unsigned int i;
	int hlen;

	if (t != NULL && droce_hdr_tmpl_fast_ok(t, pkt)) {
		hlen = droce_pkt_build_hdrs_fast(pkt, t, buf, cap, &pre);
		pre_len = DROCE_HDR_TMPL_ICRC_PRE(t);
	} else {
		hlen = t != NULL ? droce_pkt_build_hdrs_tmpl(pkt, t, buf, cap) :
				   droce_pkt_build_hdrs(pkt, buf, cap);
	}
	if (hlen < 0)
		return hlen;
	if (pkt->frame_len > cap)
		return -ENOSPC;
	p = buf + hlen;
	if (n_iov > 0) {	/* most packets have one piece: no loop for it */
		memcpy(p, iov[0].base, iov[0].len);
		p += iov[0].len;
	}
	for (i = 1; i < n_iov; i++) {
		memcpy(p, iov[i].base, iov[i].len);
		p += iov[i].len;
	}
	/* the pad (0-3 bytes) in one store: the ICRC after it overwrites the rest */
	memset(p, 0, DROCE_ICRC_BYTES);
	if (pre_len == 0) {
		droce_icrc_set(pkt, buf);
	} else {	/* the headers' part of the CRC is the template's */
		l3 = buf + pkt->l3_off;
		len = pkt->frame_len - DROCE_ICRC_BYTES - pkt->l3_off;
		droce_icrc_store(l3 + len, droce_icrc_update(pre, l3 + pre_len, len - pre_len));
	}
	return (int)pkt->frame_len;
}
