/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TRANSPORT_H
#define DROCE_TRANSPORT_H

/**
 * @file
 * The RC, UC and UD transports (IBA vol 1 ch. 9), free of I/O.
 *
 * A transport QP (struct droce_tqp) holds the requester, completer and
 * responder state of one QP and its private send queue. Everything outside
 * the protocol goes through an ops table the owner supplies: resolving
 * memory keys to host pointers, taking receive WQEs, delivering completions
 * and transmitting packets. Time is a number passed in (nanoseconds), so
 * the state machines run the same in the engine and in unit tests.
 *
 * Entry points, all called by the one thread that owns the QP (its worker
 * lcore):
 *   droce_tqp_post_send()   queue a validated send WQE
 *   droce_tqp_rx()          a parsed packet addressed to this QP
 *   droce_tqp_poll()        transmit what is due, serve READs, flush ACKs
 *   droce_tqp_timer()       retransmit and RNR timers
 * Work requests and completions use rdma-core's enums (ibv_wr_opcode,
 * ibv_wc_status, ibv_wc_opcode, ibv_send_flags, ibv_access_flags).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_config.h"
#include "droce_wire.h"

#ifndef DROCE_MAX_SGE
#define DROCE_MAX_SGE		8	/**< scatter/gather entries per WQE */
#endif
#ifndef DROCE_MAX_INLINE
#define DROCE_MAX_INLINE	256	/**< inline data bytes per send WQE */
#endif
/** READ responses the requester keeps when they arrive ahead of a lost one */
#define DROCE_READ_AHEAD_PSNS	256

#ifndef DROCE_MAX_RD_ATOMIC
#define DROCE_MAX_RD_ATOMIC	DROCE_MAX_QP_RD_ATOM	/**< outstanding READ/atomic per QP, each way */
#endif
#ifndef DROCE_MAX_UNACKED_PSNS
#define DROCE_MAX_UNACKED_PSNS	1024	/**< requester window in packets */
#endif
#ifndef DROCE_ACKREQ_INTERVAL
#define DROCE_ACKREQ_INTERVAL	32	/**< ask for an ACK at least every N packets */
#endif

/** Scatter/gather entry, as in struct ibv_sge. */
struct droce_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/** Address vector of a connected QP or of a UD work request. */
struct droce_av {
	uint8_t smac[6];
	uint8_t dmac[6];
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint32_t flow_label;	/**< 0: derive from the QPNs */
	uint8_t tclass;
	uint8_t hop_limit;
	bool ipv6;		/**< dgid is not IPv4-mapped */
	bool vlan;
	uint16_t vlan_tci;
};

/**
 * A send work request, validated and copied out of the client's ring. The
 * fixed-size fields first, then the arrays (used by length: num_sge,
 * IBV_SEND_INLINE, the QP type), so a one-SGE WQE is in its first two
 * cache lines.
 */
struct droce_send_wqe {
	uint64_t wr_id;
	uint32_t opcode;		/**< enum ibv_wr_opcode */
	uint32_t flags;			/**< enum ibv_send_flags */
	rte_be32_t imm;			/**< WITH_IMM: immediate data */
	uint32_t inv_rkey;		/**< SEND_WITH_INV, LOCAL_INV: key to invalidate */
	uint32_t num_sge;
	uint32_t length;		/**< payload bytes (sum of sge, or inline length) */
	uint64_t remote_addr;		/**< RDMA and atomics */
	uint32_t rkey;
	uint32_t local_status;		/**< enum ibv_wc_status, with local_done */
	uint64_t compare_add;		/**< atomics */
	uint64_t swap;
	/**
	 * Set when the owner already executed (BIND_MW) or refused (a bad work
	 * request) this WQE: it completes in order with local_status and sends
	 * nothing; a failure moves the QP to the error state (IBA 10.8.3.1).
	 */
	bool local_done;
	struct droce_sge sge[DROCE_MAX_SGE];
	struct {			/**< UD */
		struct droce_av av;
		uint32_t qpn;
		uint32_t qkey;
	} ud;
	uint8_t inline_data[DROCE_MAX_INLINE];	/**< IBV_SEND_INLINE payload */
};

/** A receive work request. */
struct droce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	struct droce_sge sge[DROCE_MAX_SGE];
};

/** A completion, field for field what ibv_poll_cq reports. */
struct droce_cqe {
	uint64_t wr_id;
	uint32_t status;		/**< enum ibv_wc_status */
	uint32_t opcode;		/**< enum ibv_wc_opcode */
	uint32_t byte_len;
	rte_be32_t imm;			/**< IBV_WC_WITH_IMM */
	uint32_t invalidated_rkey;	/**< IBV_WC_WITH_INV */
	uint32_t qp_num;
	uint32_t src_qp;		/**< UD */
	uint8_t sl;			/**< UD: the L3 header type (resp_complete_recv) */
	uint32_t wc_flags;		/**< enum ibv_wc_flags */
	uint32_t vendor_err;
	bool solicited;			/**< the message asked for a solicited event */
};

/** Why memory could not be used; the transport maps each to a NAK or status. */
enum droce_mem_err {
	DROCE_MEM_OK = 0,
	DROCE_MEM_BAD_KEY,		/**< unknown, invalidated or freed key */
	DROCE_MEM_BAD_PD,		/**< key of another protection domain */
	DROCE_MEM_RANGE,		/**< outside the region or window */
	DROCE_MEM_ACCESS,		/**< access flag missing */
	DROCE_MEM_ALIGN,		/**< atomic address not 8-byte aligned */
	DROCE_MEM_SHORT,		/**< the SGE list holds fewer bytes than the data
					 * (the transport's own answer, never mem_resolve's) */
	DROCE_MEM_INDIRECT,		/**< mem_resolve: allowed, but the memory has no
					 * host pointer (an on-demand paged region): its
					 * bytes move through mem_copy. Never a failure */
	DROCE_MEM_FAULT,		/**< mem_copy: a page of the range is not there
					 * (unmapped by its owner, or the owner is gone) */
};

struct droce_tqp;

/** An atomic (compare and swap when @p cas, else fetch and add) on *p: the value before. */
static inline uint64_t
droce_atomic_apply(uint64_t *p, bool cas, uint64_t cmp, uint64_t swap_add)
{
	if (!cas)
		return __atomic_fetch_add(p, swap_add, __ATOMIC_SEQ_CST);
	__atomic_compare_exchange_n(p, &cmp, swap_add, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return cmp;
}

/** A piece of payload to transmit, in host memory. */
struct droce_iov {
	const void *base;
	uint32_t len;
};

/**
 * Why a QP entered the error state, when no completion can say it: the
 * responder of an RC QP refused a request that consumed no receive WQE.
 */
enum droce_tqp_fault {
	DROCE_TQP_FAULT_NONE,		/* a completion (or the owner) reports it */
	DROCE_TQP_FAULT_INV_REQ,	/* Invalid Request Local WQ Error */
	DROCE_TQP_FAULT_ACCESS,		/* Local Access Violation WQ Error */
	DROCE_TQP_FAULT_RQ,		/* recv_get: the receive queue (or SRQ) is broken */
};

/** What the owner of the QPs provides. @p ctx is droce_tqp.ops_ctx. */
struct droce_tr_ops {
	/**
	 * Resolve [va, va + len) under @p key for @p access (IBV_ACCESS_* bits;
	 * 0 means local read) in the QP's PD. On success *host points at va.
	 */
	enum droce_mem_err (*mem_resolve)(void *ctx, struct droce_tqp *qp, uint32_t key,
					  uint64_t va, uint32_t len, uint32_t access,
					  uint8_t **host);
	/**
	 * For a range mem_resolve answered DROCE_MEM_INDIRECT: check it again
	 * and copy @p len bytes between it and @p buf -- into the memory when
	 * @p access asks for a write (LOCAL_WRITE, REMOTE_WRITE), out of it
	 * otherwise. DROCE_MEM_OK, DROCE_MEM_FAULT, or what mem_resolve says.
	 */
	enum droce_mem_err (*mem_copy)(void *ctx, struct droce_tqp *qp, uint32_t key,
				       uint64_t va, void *buf, uint32_t len, uint32_t access);
	/**
	 * Optional: run a responder's atomic (compare and swap when @p cas,
	 * else fetch and add) on the 8 bytes at @p va under @p key, checked as
	 * mem_resolve checks REMOTE_ATOMIC; *orig the value before. The owner
	 * keeps every atomic of its QPs atomic against the others, whatever
	 * region reaches the word (an indirect one too). NULL: the transport
	 * runs it on mem_resolve's pointer. DROCE_MEM_OK, DROCE_MEM_FAULT, or
	 * what mem_resolve says.
	 */
	enum droce_mem_err (*mem_atomic)(void *ctx, struct droce_tqp *qp, uint32_t key,
					 uint64_t va, bool cas, uint64_t cmp, uint64_t swap_add,
					 uint64_t *orig);
	/** Invalidate @p rkey (SEND_WITH_INV when @p remote, else LOCAL_INV). */
	enum droce_mem_err (*mem_invalidate)(void *ctx, struct droce_tqp *qp, uint32_t rkey,
					     bool remote);
	/**
	 * Take the next receive WQE of the QP (or its SRQ): 0, -EAGAIN if none,
	 * or -EBADMSG if the queue is broken (an impossible ring index): the
	 * responder then fails the QP with DROCE_TQP_FAULT_RQ (RC: after a NAK
	 * remote operational error) instead of answering RNR forever.
	 */
	int (*recv_get)(void *ctx, struct droce_tqp *qp, struct droce_recv_wqe *wqe);
	/** Deliver a completion to the send or receive CQ: 0, or -ENOSPC on overflow. */
	int (*cq_push)(void *ctx, struct droce_tqp *qp, bool recv, const struct droce_cqe *cqe);
	/**
	 * Transmit one packet: @p pkt has every header field set; the payload is
	 * the concatenation of @p iov. The callee adds pad and ICRC
	 * (droce_tqp_frame_build()). @p pkt may be the QP's own description of
	 * its connected path, kept for its next packets: the callee may set its
	 * dmac to the peer's once resolved (and store it in attr.av), and puts
	 * back whatever else it changes.
	 */
	void (*xmit)(void *ctx, struct droce_tqp *qp, struct droce_pkt *pkt,
		     const struct droce_iov *iov, unsigned int n_iov);
	/**
	 * The transport moved the QP to the error state; @p why names the
	 * affiliated asynchronous error the owner raises (IBA 11.6.3.1). Also
	 * called when a UC or UD send error moved it to SQE (qp->state says
	 * which): no asynchronous error then, the completion reports it.
	 */
	void (*qp_error)(void *ctx, struct droce_tqp *qp, enum droce_tqp_fault why);
};

/**
 * Per-QP counters (also the engine's telemetry). C(sym, description). The
 * three every message bumps come last: struct droce_tqp puts the responder's
 * hot fields right after them, in the same cache line.
 */
#define DROCE_TQP_COUNTERS(C) \
	C(RETRANSMITS,    "requester retransmissions (go-back-N restarts)") \
	C(TIMEOUTS,       "retransmit timer expiries") \
	C(NO_PATH_RETRIES, "timeouts resent free: the peer's MAC was still being resolved") \
	C(READ_AHEAD,     "READ responses kept that came ahead of a lost one") \
	C(RNR_NAKS_RX,    "RNR NAKs received") \
	C(RNR_NAKS_TX,    "RNR NAKs sent") \
	C(SEQ_NAKS_RX,    "PSN sequence error NAKs received") \
	C(SEQ_NAKS_TX,    "PSN sequence error NAKs sent") \
	C(DUP_REQS,       "duplicate requests received") \
	C(DROP_STATE,     "packets dropped: QP state does not accept them") \
	C(DROP_PSN,       "packets dropped: PSN out of window or stale") \
	C(DROP_OPCODE,    "packets dropped: opcode not valid for QP or sequence") \
	C(DROP_QKEY,      "UD packets dropped: Q_Key mismatch") \
	C(DROP_NO_RWQE,   "UD/UC packets dropped: no receive WQE") \
	C(DROP_LEN,       "packets dropped: payload length invalid") \
	C(NAKS_TX,        "NAKs sent (invalid request, access, operational)") \
	C(TX_PKTS,        "packets transmitted") \
	C(RX_PKTS,        "packets accepted") \
	C(ACKS_TX,        "ACKs sent")

enum droce_tqp_counter {
#define C(sym, desc) DROCE_TQP_CNT_##sym,
	DROCE_TQP_COUNTERS(C)
#undef C
	DROCE_TQP_CNT_COUNT
};

extern const char *const droce_tqp_counter_name[DROCE_TQP_CNT_COUNT];

enum droce_swqe_state {
	DROCE_SWQE_POSTED,		/**< nothing sent yet */
	DROCE_SWQE_SENDING,		/**< PSNs assigned, packets going out */
	DROCE_SWQE_SENT,		/**< every packet sent at least once */
	DROCE_SWQE_DONE,		/**< finished (status set), not yet retired */
};

/** One slot of the private send queue (its state ahead of wr's arrays). */
struct droce_tqp_swqe {
	uint32_t first_psn;		/**< PSN of the first packet, once sent */
	uint32_t npsn;			/**< PSNs the message occupies */
	uint32_t read_done;		/**< READ: response bytes placed */
	uint8_t state;			/**< enum droce_swqe_state */
	uint8_t status;			/**< enum ibv_wc_status once done */
	bool rd_counted;		/**< its READ/atomic request counts in req.rd_atomic */
	struct droce_send_wqe wr;
};

enum droce_res_kind {
	DROCE_RES_FREE,
	DROCE_RES_READ,
	DROCE_RES_ATOMIC,
};

/** A READ or atomic the responder executed, kept for duplicate requests. */
struct droce_tqp_res {
	uint8_t kind;			/**< enum droce_res_kind */
	bool pending;			/**< READ: responses still to send */
	bool served;			/**< every response sent once: the slot may be reused */
	uint32_t psn;			/**< first PSN of the request */
	uint32_t npsn;			/**< PSNs it occupies */
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint32_t sent;			/**< READ: bytes of response transmitted */
	uint64_t orig;			/**< atomic: the original value returned */
	uint8_t syndrome;		/**< atomic: AETH of the reply */
	uint32_t msn;			/**< MSN to report with it */
};

/** Fixed at creation or by modify_qp; the transport only reads them. */
struct droce_tqp_attr {
	enum ibv_qp_type type;
	uint32_t qpn;
	uint32_t dest_qpn;
	uint32_t qkey;
	uint32_t mtu;			/**< path MTU in bytes: 256 .. 4096 */
	uint32_t access;		/**< qp_access_flags */
	uint8_t timeout;		/**< 4.096 us * 2^timeout; 0: wait forever */
	uint8_t retry_cnt;		/**< 0..7 */
	uint8_t rnr_retry;		/**< 0..7; 7 = retry forever */
	uint8_t min_rnr_timer;		/**< RNR timer code we advertise */
	uint8_t max_rd_atomic;		/**< our outstanding READ/atomic requests */
	uint8_t max_dest_rd_atomic;	/**< remote ones we keep for replay */
	bool sq_sig_all;
	struct droce_av av;		/**< RC/UC: the remote end */
	uint16_t pkey;
};

enum droce_tqp_state {
	DROCE_TQP_RESET,
	DROCE_TQP_INIT,
	DROCE_TQP_RTR,
	DROCE_TQP_RTS,
	DROCE_TQP_SQD,
	DROCE_TQP_SQE,
	DROCE_TQP_ERR,
};

/**
 * Transport state of one QP. Owned by one worker thread.
 *
 * Laid out for thousands of QPs, each met once per message: what a 64-byte
 * WRITE reads or writes, on either side, is in 13 cache lines: from attr to
 * tx_proto, then (past two lines of cold counters) one line with the three
 * per-packet counters and the responder's fields up to res_pending. What
 * only some operations use (the receive WQE of a SEND, the READ ring's
 * bookkeeping) is at the end, and the responder's READ/atomic ring is a
 * separate allocation. A message meets its QP four times (send, arrival,
 * ACK, ACK's arrival), each after thousands of other QPs: every line a step
 * touches is a miss, so what counts is the lines per step.
 */
struct droce_tqp {
	struct droce_tqp_attr attr;
	enum droce_tqp_state state;
	const struct droce_tr_ops *ops;
	void *ops_ctx;
	void *owner;			/**< for the ops implementation */

	struct droce_tqp_swqe *sq;	/**< private send queue, sq_size slots */
	uint32_t sq_size;		/**< power of two */
	uint32_t sq_post;		/**< next free slot (free-running) */

	struct {			/* requester */
		uint32_t psn;		/**< next PSN to send */
		uint32_t psn_max;	/**< one past the highest PSN ever sent */
		uint32_t idx;		/**< next WQE to transmit */
		uint32_t offset;	/**< bytes of it already sent */
		uint32_t rd_atomic;	/**< READ/atomic requests in flight */
		uint32_t since_ackreq;	/**< packets since the last AckReq */
		uint32_t ackreq_every;	/**< ask for an ACK at least this often (droce_tqp_set_pace()) */
		bool stalled;		/**< waiting on RNR delay or window */
	} req;

	struct {			/* completer */
		uint32_t psn;		/**< oldest unacknowledged PSN */
		uint32_t idx;		/**< oldest WQE not completed */
		uint8_t retry_left;
		uint8_t rnr_left;
		bool read_gap;		/**< retried since the last in-sequence response */
		bool nak_round;		/**< a sequence NAK for psn started the round under way */
		bool no_path;		/**< a request found no route to the peer yet */
		uint64_t timer;		/**< retransmit deadline, 0 if stopped */
		uint64_t rnr_until;	/**< RNR wait deadline, 0 if none */
		/** READ responses of the READ at idx that arrived ahead of psn, by PSN mod 256 */
		uint64_t read_ahead[DROCE_READ_AHEAD_PSNS / 64];
	} comp;

	/** TX: the headers of the connected path (attr.av), patched per packet */
	struct droce_hdr_tmpl tx_tmpl;
	/**
	 * TX: the connected path's packet description, with what it was made
	 * from; while those are equal every packet of the path is this one,
	 * patched in place (tqp_pkt()), and tx_tmpl serves it by its fast path.
	 */
	struct {
		struct droce_pkt pkt;
		struct droce_av av;
		uint32_t dqpn;
		uint16_t pkey;
		bool valid;
	} tx_proto;

	uint64_t pad_to_hot_line;	/* puts cnt's hot tail in resp's first line */
	uint64_t cnt[DROCE_TQP_CNT_COUNT];

	struct {			/* responder */
		uint32_t epsn;		/**< next expected PSN */
		uint32_t msn;		/**< messages completed */
		bool nak_sent;		/**< one NAK per sequence gap (IBA C9-111) */
		bool ack_pending;	/**< coalesced ACK (or sequence NAK) to send at poll */
		bool ack_is_nak;	/**< ... it is the gap's NAK, for ack_psn = epsn */
		uint8_t last_opf_mid;	/**< 0, or SEND/WRITE flag of an unfinished message */
		uint32_t ack_psn;
		uint32_t rcv_len;	/**< bytes received into rwqe / written by WRITE */
		uint32_t wr_rkey;
		uint64_t wr_va;		/**< WRITE: next remote address */
		uint32_t wr_left;	/**< WRITE: bytes the RETH still allows */
		uint32_t res_pending;	/**< resources with responses owed: poll skips the ring at 0 */
		/* not read by a SEND or WRITE from here on */
		bool have_rwqe;		/**< SEND in progress holds a receive WQE */
		bool uc_drop;		/**< UC: rest of a broken message is discarded */
		uint32_t res_head;	/**< next slot to use (ring) */
		/**
		 * READs and atomics kept for replay: a ring of res_slots, the
		 * negotiated max_dest_rd_atomic (droce_tqp_set_dest_rd_atomic()),
		 * allocated apart: at the device maximum, inline, it was most of
		 * a QP's bytes, and a WRITE never reads it.
		 */
		struct droce_tqp_res *res;
		uint32_t res_slots;
		struct droce_recv_wqe rwqe;	/* last: SEND only */
	} resp;
};

/* the per-packet counters and the responder's hot fields share one line */
_Static_assert(offsetof(struct droce_tqp, cnt[DROCE_TQP_CNT_TX_PKTS]) / 64 ==
		       offsetof(struct droce_tqp, resp.res_pending) / 64 &&
	       DROCE_TQP_CNT_TX_PKTS == DROCE_TQP_CNT_COUNT - 3,
	       "struct droce_tqp's hot line moved: see its layout comment");

/* struct droce_av's bytes up to vlan_tci: every field, no padding (memcmp) */
#define DROCE_AV_KEY_LEN	(offsetof(struct droce_av, vlan_tci) + sizeof(uint16_t))
_Static_assert(DROCE_AV_KEY_LEN == 6 + 6 + 16 + 16 + 4 + 1 + 1 + 1 + 1 + 2,
	       "struct droce_av has no padding before vlan_tci's end");

/**
 * Set up a transport QP in RESET. @p sq_mem holds @p sq_size slots (a power
 * of two). The responder's READ/atomic ring is sized to
 * attr->max_dest_rd_atomic. @return 0, -EINVAL, or -ENOMEM.
 * droce_tqp_fini() releases what it allocated.
 */
int droce_tqp_init(struct droce_tqp *qp, const struct droce_tqp_attr *attr,
		   struct droce_tqp_swqe *sq_mem, uint32_t sq_size,
		   const struct droce_tr_ops *ops, void *ops_ctx);

/** Free what droce_tqp_init() allocated (a zeroed QP too: nothing to free). */
void droce_tqp_fini(struct droce_tqp *qp);

/**
 * Set max_dest_rd_atomic: the READ/atomic requests the responder keeps
 * (0 .. DROCE_MAX_RD_ATOMIC, more is taken as the maximum), its ring resized
 * keeping the newest. A new one while all are still being answered for
 * the first time is an Invalid Request NAK (the requester exceeded the
 * limit); with 0, every READ and atomic is. Only this call changes the
 * ring's size: writing attr.max_dest_rd_atomic does not.
 * @return 0, or -ENOMEM (the QP unchanged).
 */
int droce_tqp_set_dest_rd_atomic(struct droce_tqp *qp, uint32_t n);

/**
 * The rate the QP's packets are paced at, in bits per second (0: not
 * paced), from the owner's scheduler. A paced RC requester asks for an ACK
 * at least every quarter of its ACK timeout's worth of packets at that
 * rate, at most every DROCE_ACKREQ_INTERVAL: otherwise a slow QP's oldest
 * packet outlives the timeout before the packet that asks for its ACK is
 * even sent, and it retransmits what was never lost. Taken from the QP's
 * timeout and path MTU as they are now: call it again when they change.
 */
void droce_tqp_set_pace(struct droce_tqp *qp, uint64_t bps);

/**
 * Apply a state change decided (and validated) by the verbs layer.
 * @p sq_psn and @p rq_psn are used on entering RTS / RTR. Entering ERR
 * flushes every outstanding WQE with IBV_WC_WR_FLUSH_ERR; entering RESET
 * forgets everything.
 */
void droce_tqp_set_state(struct droce_tqp *qp, enum droce_tqp_state state,
			 uint32_t sq_psn, uint32_t rq_psn);

/**
 * Queue a send WQE (already validated against the QP type and limits).
 * @return 0, -ENOMEM if the send queue is full, -EINVAL in a state that
 *         does not accept sends (RESET, INIT, RTR).
 */
int droce_tqp_post_send(struct droce_tqp *qp, const struct droce_send_wqe *wqe);

/**
 * Start loading the lines droce_tqp_rx() will read for @p pkt (the QP's
 * state, and the responder's or the completer's fields), a burst ahead:
 * with thousands of QPs each is a cache miss, taken in parallel this way.
 */
static inline void
droce_tqp_prefetch_rx(const struct droce_tqp *qp, const struct droce_pkt *pkt)
{
	const char *p = (const char *)qp;

	__builtin_prefetch(p + offsetof(struct droce_tqp, state));
	if (droce_opcode(pkt->opcode)->flags & DROCE_OPF_RESP) {
		__builtin_prefetch(p + offsetof(struct droce_tqp, comp));
		__builtin_prefetch(p + offsetof(struct droce_tqp, comp) + 64);
	} else {
		__builtin_prefetch(p + offsetof(struct droce_tqp, resp));
		__builtin_prefetch(p + offsetof(struct droce_tqp, resp) + 64);
	}
}

/** Process a packet for this QP; @p frame is what @p pkt was parsed from. */
void droce_tqp_rx(struct droce_tqp *qp, const struct droce_pkt *pkt,
		  const uint8_t *frame, uint64_t now);

/**
 * Transmit up to @p budget packets (requests, READ responses) and the
 * coalesced ACK. @return packets transmitted.
 */
unsigned int droce_tqp_poll(struct droce_tqp *qp, uint64_t now, unsigned int budget);

/**
 * A QP about to be destroyed sends what its responder still owes: READ
 * responses, atomic replies and the coalesced ACK, which a NIC has sent
 * by the time the application sees the receive's completion (else the
 * peer's last SEND is never acknowledged and ends in retries). Requests
 * are not sent. @return packets transmitted.
 */
unsigned int droce_tqp_flush_responder(struct droce_tqp *qp);

/** Run the retransmit and RNR timers. */
void droce_tqp_timer(struct droce_tqp *qp, uint64_t now);
/** When droce_tqp_timer() next has something to do; UINT64_MAX: never. */
uint64_t droce_tqp_next_deadline(const struct droce_tqp *qp);

/**
 * The request just handed to droce_tr_ops.xmit did not reach the wire: the
 * peer's MAC is still being resolved (ARP/ND). A timeout after it resends
 * without spending the retry budget, which counts only transmissions that
 * left, as a NIC's does once the kernel has resolved the path.
 */
void droce_tqp_path_pending(struct droce_tqp *qp);

/** True when the QP has packets to send (the engine's scheduling hint). */
bool droce_tqp_has_work(const struct droce_tqp *qp);

/**
 * True when no message is under way: each one begun is sent whole and, on
 * RC, acknowledged. In SQD that is "drained" (IBA 10.8.1, SQ Drained event).
 */
bool droce_tqp_sq_drained(const struct droce_tqp *qp);

/**
 * Assemble a whole frame for a packet handed to droce_tr_ops.xmit: headers
 * from @p pkt, the payload gathered from @p iov, zero pad, ICRC.
 * @return the frame length, or -ENOSPC if @p cap is too small.
 */
int droce_tqp_frame_build(struct droce_pkt *pkt, const struct droce_iov *iov,
			  unsigned int n_iov, uint8_t *buf, uint32_t cap);

/** Retransmit timeout in ns for the IBA timeout exponent (0 → never). */
uint64_t droce_tqp_timeout_ns(uint8_t timeout);

#endif /* DROCE_TRANSPORT_H */
