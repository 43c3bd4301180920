/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TRANSPORT_PRIV_H
#define DROCE_TRANSPORT_PRIV_H

/* Cross-file internals of lib/transport (not installed). */

#include <string.h>
#ifdef __SSE4_1__
#include <smmintrin.h>
#endif

#include "droce_transport.h"
#include "droce_wire_gid.h"
#include "droce_wire_psn.h"

#define TQP_CNT(qp, sym) ((qp)->cnt[DROCE_TQP_CNT_##sym]++)

static inline struct droce_tqp_swqe *
tqp_swqe(struct droce_tqp *qp, uint32_t idx)
{
	return &qp->sq[idx & (qp->sq_size - 1)];
}

static inline bool
wr_is_rd_atomic(uint32_t op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static inline bool
wr_is_local(uint32_t op)
{
	return op == IBV_WR_LOCAL_INV || op == IBV_WR_BIND_MW;
}

/*
 * Whether the requester may send now. RTS: yes. SQD (IBA 10.8.1): only the
 * message under way -- first packets or resent ones -- never a new one.
 */
static inline bool
req_may_send(const struct droce_tqp *qp)
{
	if (qp->state == DROCE_TQP_RTS)
		return true;
	return qp->state == DROCE_TQP_SQD && qp->req.idx != qp->sq_post &&
	       (qp->req.offset != 0 ||
		qp->sq[qp->req.idx & (qp->sq_size - 1)].state != DROCE_SWQE_POSTED);
}

/* PSNs a message of @len bytes occupies at path MTU @mtu (at least one); a
 * message within one MTU, the usual one, costs no division (~25 cycles). */
static inline uint32_t
tqp_npsn(uint32_t len, uint32_t mtu)
{
	return len <= mtu ? 1 : (len + mtu - 1) / mtu;
}

/* transport_qp.c */
void tqp_pkt_init_path(struct droce_tqp *qp, struct droce_pkt *pkt, uint8_t opcode,
		       uint32_t psn, const struct droce_av *av, uint32_t dqpn);

/*
 * The first DROCE_AV_KEY_LEN bytes of two AVs equal? With SSE4.1, four
 * 16-byte compares (the last overlapping) and no call: memcmp's call, and
 * the registers its caller saved around it, cost ~30 instructions a packet.
 */
static inline bool
tqp_av_key_eq(const struct droce_av *a, const struct droce_av *b)
{
#ifdef __SSE4_1__
	const uint8_t *p = (const uint8_t *)a, *q = (const uint8_t *)b;
	__m128i x;

	_Static_assert(DROCE_AV_KEY_LEN > 48 && DROCE_AV_KEY_LEN <= 64, "four 16-byte pieces");
	x = _mm_xor_si128(_mm_loadu_si128((const void *)p), _mm_loadu_si128((const void *)q));
	x = _mm_or_si128(x, _mm_xor_si128(_mm_loadu_si128((const void *)(p + 16)),
					  _mm_loadu_si128((const void *)(q + 16))));
	x = _mm_or_si128(x, _mm_xor_si128(_mm_loadu_si128((const void *)(p + 32)),
					  _mm_loadu_si128((const void *)(q + 32))));
	x = _mm_or_si128(x, _mm_xor_si128(
			    _mm_loadu_si128((const void *)(p + DROCE_AV_KEY_LEN - 16)),
			    _mm_loadu_si128((const void *)(q + DROCE_AV_KEY_LEN - 16))));
	return _mm_testz_si128(x, x);
#else
	return memcmp(a, b, DROCE_AV_KEY_LEN) == 0;
#endif
}

/* True while the connected path's description is what @p av and @p dqpn give. */
static inline bool
tqp_proto_ok(const struct droce_tqp *qp, const struct droce_av *av, uint32_t dqpn)
{
	return av == &qp->attr.av && qp->tx_proto.valid && qp->tx_proto.dqpn == dqpn &&
	       qp->tx_proto.pkey == qp->attr.pkey &&
	       tqp_av_key_eq(&qp->tx_proto.av, av);
}

/*
 * Describe a packet to send on path @p av to @p dqpn. On the connected path,
 * while it is unchanged, that is the QP's own description, patched in place
 * (opcode, PSN; se and ackreq cleared) instead of built or copied, which its
 * header template then builds by the fast path (droce_pkt_build_hdrs_fast());
 * else @p local, set up. The caller sets the extension headers' fields.
 * Inline, with the rest out of line, so the usual case has no call and no
 * spilled registers.
 */
static inline struct droce_pkt *
tqp_pkt(struct droce_tqp *qp, struct droce_pkt *local, uint8_t opcode, uint32_t psn,
	const struct droce_av *av, uint32_t dqpn)
{
	struct droce_pkt *pkt = &qp->tx_proto.pkt;

	if (!tqp_proto_ok(qp, av, dqpn)) {
		tqp_pkt_init_path(qp, local, opcode, psn, av, dqpn);
		return local;
	}
	pkt->opcode = opcode;
	pkt->psn = psn & DROCE_24BIT_MASK;
	pkt->se = false;
	pkt->ackreq = false;
	return pkt;
}
void tqp_to_error(struct droce_tqp *qp, enum droce_tqp_fault why);
void tqp_send_error(struct droce_tqp *qp);
void tqp_cq_push(struct droce_tqp *qp, bool recv, const struct droce_cqe *cqe);
/*
 * Resolve bytes [offset, offset + len) of an SGE list: tqp_gather() into
 * host pieces for a local read, tqp_scatter() writing @p src into them.
 * On-demand paged memory (mem_resolve said DROCE_MEM_INDIRECT): a gather's
 * such pieces are copied into the thread's packet buffer, tqp_copy_out()
 * one piece so. What they give is valid until the next packet of this
 * thread is built: a packet's payload is handed to the owner before the next
 * one is gathered.
 */
enum droce_mem_err tqp_gather(struct droce_tqp *qp, const struct droce_sge *sge,
			      uint32_t num_sge, uint32_t offset, uint32_t len,
			      struct droce_iov *iov, unsigned int *n_iov);
enum droce_mem_err tqp_scatter(struct droce_tqp *qp, const struct droce_sge *sge,
			       uint32_t num_sge, uint32_t offset, const void *src, uint32_t len);
enum droce_mem_err tqp_copy_out(struct droce_tqp *qp, uint32_t key, uint64_t va, uint32_t len,
				uint32_t access, uint8_t **host);

/* Hand a packet with payload @p iov to the owner (inline: once per packet) */
static inline void
tqp_xmit(struct droce_tqp *qp, struct droce_pkt *pkt, const struct droce_iov *iov,
	 unsigned int n_iov)
{
	uint32_t len = n_iov > 0 ? iov[0].len : 0;	/* most packets have one piece */
	unsigned int i;

	for (i = 1; i < n_iov; i++)
		len += iov[i].len;
	pkt->payload_len = len;
	pkt->padcnt = droce_pad_bytes(len);
	TQP_CNT(qp, TX_PKTS);
	qp->ops->xmit(qp->ops_ctx, qp, pkt, iov, n_iov);
}

/* transport_req.c: requester and completer */
unsigned int req_poll(struct droce_tqp *qp, uint64_t now, unsigned int budget);
void comp_rx(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *frame,
	     uint64_t now);
void comp_timer(struct droce_tqp *qp, uint64_t now);
void comp_flush(struct droce_tqp *qp);
void comp_retire_ready(struct droce_tqp *qp);

/* transport_resp.c: responder */
void resp_rx(struct droce_tqp *qp, const struct droce_pkt *pkt, const uint8_t *frame,
	     uint64_t now);
unsigned int resp_poll(struct droce_tqp *qp, unsigned int budget);
void resp_flush(struct droce_tqp *qp);

#endif /* DROCE_TRANSPORT_PRIV_H */
