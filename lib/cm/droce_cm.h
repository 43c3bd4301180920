/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CM_H
#define DROCE_CM_H

/**
 * @file
 * The IB Communication Manager's state machines (IBA vol 1 ch. 12), free
 * of I/O, for both ends of a connection and for SIDR.
 *
 * A struct droce_cm owns a fixed table of ids (struct droce_cm_id): each is
 * a listener, one side of a connection, or one SIDR exchange. Everything
 * outside the protocol goes through an ops table the owner supplies:
 * sending a MAD to a peer's CM (QP1), reporting events, and optionally
 * driving the id's QP through RTR, RTS and ERR at the moments the protocol
 * calls for. Time is a number passed in (nanoseconds), so the machines run
 * the same in the engine and in unit tests.
 *
 * The model is Linux's ib_cm, so rdma_cm's semantics map onto it:
 *   active   droce_cm_connect() sends a REQ; REP_RECEIVED; the owner calls
 *            droce_cm_send_rtu() (QP to RTR and RTS, RTU, ESTABLISHED) or
 *            droce_cm_reject().
 *   passive  droce_cm_listen(); a REQ makes a new id and REQ_RECEIVED; the
 *            owner calls droce_cm_accept() (QP to RTR and RTS, REP) or
 *            droce_cm_reject(); RTU_RECEIVED, or droce_cm_establish() when
 *            data arrives first (IBV_EVENT_COMM_EST).
 *   close    droce_cm_disconnect() sends a DREQ (QP to ERR) or, after
 *            DREQ_RECEIVED, the DREP; both sides pass through TIMEWAIT and
 *            report TIMEWAIT_EXIT, after which the QPN may be reused.
 *   SIDR     droce_cm_sidr_req() / SIDR_REQ_RECEIVED + droce_cm_sidr_rep().
 * REQ, REP, DREQ and SIDR_REQ are retransmitted on timeout (the REQ's CM
 * response timeouts plus twice the packet lifetime) up to the REQ's Max CM
 * Retries; an MRA extends the wait by its service timeout. Duplicates are
 * answered from the id's last sent MAD (REP, MRA, RTU, DREP); stale
 * connections are refused with REJ Stale Connection. A listener's backlog
 * bounds the REQs its owner has not answered yet.
 *
 * Entry points, all called by the one thread that owns the struct droce_cm:
 * droce_cm_rx() for every MAD received on QP1, droce_cm_timer() when
 * droce_cm_next_timer() is due, and the id calls. Events are delivered from
 * inside those calls, as the last thing each step does, so the owner may
 * call back in (accept, reject, destroy...) from its event handler.
 */

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "droce_cm_mad.h"

#define DROCE_CM_STATES(S) \
	S(FREE) \
	S(IDLE) \
	S(LISTEN) \
	S(REQ_SENT) \
	S(REQ_RCVD) \
	S(MRA_REQ_SENT) \
	S(MRA_REQ_RCVD) \
	S(REP_SENT) \
	S(REP_RCVD) \
	S(MRA_REP_SENT) \
	S(MRA_REP_RCVD) \
	S(ESTABLISHED) \
	S(DREQ_SENT) \
	S(DREQ_RCVD) \
	S(TIMEWAIT) \
	S(SIDR_REQ_SENT) \
	S(SIDR_REQ_RCVD)

enum droce_cm_state {
#define S(st) DROCE_CM_##st,
	DROCE_CM_STATES(S)
#undef S
	DROCE_CM_NSTATES
};

/** Name of a state ("REP_SENT"). */
const char *droce_cm_state_name(enum droce_cm_state s);

/** E(sym, description) */
#define DROCE_CM_EVENTS(E) \
	E(REQ_RECEIVED,      "passive: a REQ made a new id; accept, reject or send MRA") \
	E(REQ_ERROR,         "active: no REP after max CM retries (a REJ Timeout was sent)") \
	E(REP_RECEIVED,      "active: send the RTU or reject") \
	E(REP_ERROR,         "passive: no RTU after max CM retries (a REJ Timeout was sent)") \
	E(RTU_RECEIVED,      "passive: the connection is established") \
	E(REJ_RECEIVED,      "the peer rejected the connection; see msg->rej.reason") \
	E(MRA_RECEIVED,      "the peer needs more time; the wait was extended") \
	E(DREQ_RECEIVED,     "the peer disconnects; answer with droce_cm_disconnect()") \
	E(DREQ_ERROR,        "no DREP after max CM retries: in TIMEWAIT anyway") \
	E(DREP_RECEIVED,     "the disconnection is acknowledged: in TIMEWAIT") \
	E(TIMEWAIT_EXIT,     "TIMEWAIT is over: the id is IDLE and its QPN may be reused") \
	E(SIDR_REQ_RECEIVED, "passive: a SIDR_REQ made a new id; answer with droce_cm_sidr_rep()") \
	E(SIDR_REQ_ERROR,    "active: no SIDR_REP after max CM retries") \
	E(SIDR_REP_RECEIVED, "active: see msg->sidr_rep (status, QPN, Q_Key)")

enum droce_cm_event_type {
#define E(sym, desc) DROCE_CM_EV_##sym,
	DROCE_CM_EVENTS(E)
#undef E
	DROCE_CM_EV_COUNT
};

/** Name of an event type ("REQ_RECEIVED"). */
const char *droce_cm_event_name(enum droce_cm_event_type t);

/** Per-CM counters. C(sym, description) */
#define DROCE_CM_COUNTERS(C) \
	C(RX_MADS,      "CM MADs accepted by the parser") \
	C(TX_MADS,      "CM MADs sent, retransmissions included") \
	C(RETRANSMITS,  "REQ, REP, DREQ and SIDR_REQ sent again after a timeout") \
	C(TIMEOUTS,     "exchanges given up after max CM retries") \
	C(DUP_REQ,      "duplicate REQs (answered with MRA, REP or REJ, or dropped)") \
	C(DUP_REP,      "duplicate REPs (answered with RTU or MRA, or dropped)") \
	C(DUP_DREQ,     "duplicate DREQs (answered with DREP, or dropped)") \
	C(DUP_SIDR_REQ, "duplicate SIDR_REQs, dropped") \
	C(STALE,        "REJ Stale Connection sent for a REQ or REP") \
	C(NO_LISTENER,  "REQ or SIDR_REQ for a service nobody listens on") \
	C(BACKLOG_FULL, "REQ or SIDR_REQ refused: the listener's backlog is full") \
	C(NO_IDS,       "REQ or SIDR_REQ refused: no free id") \
	C(BAD_REQ,      "REQ refused: transport type or path MTU not supported") \
	C(DROP_NO_ID,   "messages for no id of this peer") \
	C(DROP_STATE,   "messages the id's state does not take") \
	C(DROP_QPN,     "DREQs naming another QPN")

enum droce_cm_counter {
#define C(sym, desc) DROCE_CM_CNT_##sym,
	DROCE_CM_COUNTERS(C)
#undef C
	DROCE_CM_CNT_COUNT
};

extern const char *const droce_cm_counter_name[DROCE_CM_CNT_COUNT];

/** Where a MAD goes, or came from: the peer's CM as seen from here. */
struct droce_cm_addr {
	uint8_t local_gid[DROCE_CM_GID_BYTES];	/**< ours: source of the MADs we send */
	uint8_t remote_gid[DROCE_CM_GID_BYTES];	/**< the peer's */
	uint32_t remote_qpn;			/**< the peer's CM QP: 1 */
	uint16_t pkey;
	uint8_t tclass;
	uint8_t hop_limit;
	uint32_t flow_label;
};

/** The primary path of a connection; RoCE has no LIDs, SL or rate. */
struct droce_cm_path {
	uint8_t sgid[DROCE_CM_GID_BYTES];	/**< ours */
	uint8_t dgid[DROCE_CM_GID_BYTES];	/**< the peer's */
	uint32_t flow_label;
	uint8_t tclass;
	uint8_t hop_limit;
	uint16_t pkey;
	uint8_t mtu;			/**< enum ibv_mtu: 1 (256) .. 5 (4096) */
	uint8_t packet_life_time;	/**< IBA time exponent */
	uint8_t local_ack_timeout;	/**< IBA time exponent: the requester's QP timeout */
};

/** Parameters of droce_cm_connect(). */
struct droce_cm_req_param {
	uint64_t service_id;
	struct droce_cm_path path;
	uint32_t qpn;
	uint8_t transport;		/**< DROCE_CM_TRANSPORT_RC or _UC */
	uint32_t starting_psn;		/**< our receive PSN: the peer sends with it */
	uint8_t responder_resources;	/**< our max_dest_rd_atomic */
	uint8_t initiator_depth;	/**< our max_rd_atomic */
	uint8_t remote_cm_response_timeout;	/**< how long the peer may take (exponent) */
	uint8_t local_cm_response_timeout;	/**< how long we take (exponent) */
	uint8_t retry_count;		/**< 0..7, for the peer's QP */
	uint8_t rnr_retry_count;	/**< 0..7, for the peer's QP */
	uint8_t max_cm_retries;		/**< 0..15 */
	bool srq;
	bool flow_control;
	struct droce_cm_ece ece;	/**< ours (vendor ID 0: none) */
	const void *pdata;
	uint8_t pdata_len;		/**< at most 92 */
};

/** Parameters of droce_cm_accept(). */
struct droce_cm_rep_param {
	uint32_t qpn;
	uint32_t starting_psn;		/**< our receive PSN: the peer sends with it */
	uint8_t responder_resources;	/**< ours; at most the REQ's initiator depth */
	uint8_t initiator_depth;	/**< ours; at most the REQ's responder resources */
	uint8_t target_ack_delay;	/**< IBA time exponent */
	uint8_t rnr_retry_count;	/**< 0..7, for the peer's QP */
	bool srq;
	bool flow_control;
	struct droce_cm_ece ece;	/**< ours (rdma_cm: the REQ's vendor ID, our options) */
	const void *pdata;
	uint8_t pdata_len;		/**< at most 196 */
};

/** Parameters of droce_cm_sidr_req(). */
struct droce_cm_sidr_req_param {
	uint64_t service_id;
	struct droce_cm_addr addr;	/**< the peer's CM */
	uint8_t timeout;		/**< IBA time exponent of the wait for SIDR_REP */
	uint8_t max_cm_retries;		/**< 0..15 */
	const void *pdata;
	uint8_t pdata_len;		/**< at most 216 */
};

/** Parameters of droce_cm_sidr_rep(). */
struct droce_cm_sidr_rep_param {
	uint8_t status;			/**< enum droce_cm_sidr_status */
	uint32_t qpn;
	uint32_t qkey;
	const void *info;
	uint8_t info_len;		/**< at most 72 */
	const void *pdata;
	uint8_t pdata_len;		/**< at most 136 */
};

/** The QP transitions the CM drives through droce_cm_ops.qp_modify. */
enum droce_cm_qp_step {
	DROCE_CM_QP_RTR,
	DROCE_CM_QP_RTS,
	DROCE_CM_QP_ERR,
};

/** What a QP transition needs, as the CM negotiated it (rdma_init_qp_attr's role). */
struct droce_cm_qp_attr {
	enum droce_cm_qp_step step;
	uint8_t transport;		/**< DROCE_CM_TRANSPORT_RC or _UC */
	uint32_t qpn;			/**< ours */
	uint32_t dest_qpn;
	uint32_t rq_psn;		/**< RTR: the Starting PSN we sent (0 before droce_cm_accept) */
	uint32_t sq_psn;		/**< RTS: the peer's Starting PSN */
	uint8_t path_mtu;		/**< enum ibv_mtu */
	uint8_t max_dest_rd_atomic;	/**< RTR */
	uint8_t max_rd_atomic;		/**< RTS */
	uint8_t timeout;		/**< RTS: local ACK timeout exponent */
	uint8_t retry_cnt;		/**< RTS */
	uint8_t rnr_retry;		/**< RTS */
	struct droce_cm_path path;	/**< RTR: the address vector */
};

struct droce_cm;
struct droce_cm_id;

/** What caused an event. */
struct droce_cm_event {
	enum droce_cm_event_type type;
	struct droce_cm_id *listen;	/**< REQ_RECEIVED, SIDR_REQ_RECEIVED: the listener */
	const struct droce_cm_msg *msg;	/**< the message received; NULL for timeouts */
	const struct droce_cm_addr *from;	/**< where msg came from; NULL for timeouts */
	const uint8_t *pdata;		/**< msg's private data (whole field); NULL if none */
	uint16_t pdata_len;
};

/** What the owner of the CM provides. @p ctx is droce_cm.ops_ctx. */
struct droce_cm_ops {
	/** Send one 256-byte MAD to the CM at @p to (QP1, Q_Key 0x80010000). */
	void (*send)(void *ctx, const struct droce_cm_addr *to, const uint8_t *mad);
	/** Report @p ev on @p id. The handler may call any id function. */
	void (*event)(void *ctx, struct droce_cm_id *id, const struct droce_cm_event *ev);
	/**
	 * Optional: move @p id's QP as @p attr says. Called by droce_cm_accept()
	 * and droce_cm_send_rtu() (RTR, then RTS; an error aborts the call), and
	 * with DROCE_CM_QP_ERR when a connection whose QP went to RTR ends.
	 * NULL: the owner moves its QPs itself (droce_cm_qp_attr()).
	 */
	int (*qp_modify)(void *ctx, struct droce_cm_id *id, const struct droce_cm_qp_attr *attr);
};

/** Fixed for the life of a CM. */
struct droce_cm_config {
	uint64_t ca_guid;		/**< our CA (node) GUID, in REQ, REP and REJ Timeout */
	uint32_t comm_id_seed;		/**< random per start: a restarted engine picks new IDs */
	/**
	 * Service timeout (exponent) of the MRA sent for a duplicate REQ the
	 * owner has not answered yet. Linux's rdma_cm uses 24 (68 s).
	 */
	uint8_t mra_service_timeout;
};

/** One listener, connection end or SIDR exchange. Owned by the CM's thread. */
struct droce_cm_id {
	struct droce_cm *cm;
	uint8_t state;			/**< enum droce_cm_state */
	bool orphan;			/**< destroyed by the owner; the protocol finishes alone */
	bool qp_live;			/**< the QP went to RTR and not yet to ERR */
	bool in_backlog;		/**< counts in listen->pending */
	void *context;			/**< the owner's */
	uint32_t gen;			/**< bumped at each allocation: part of local_id */
	uint32_t local_id;		/**< our comm ID (or SIDR request ID) */
	uint32_t remote_id;		/**< the peer's, 0 until known */
	uint64_t remote_ca_guid;
	uint64_t service_id;
	uint64_t service_mask;		/**< listener: bits of service_id that must match */
	struct droce_cm_addr addr;	/**< the peer's CM */

	struct droce_cm_id *listen;	/**< the listener a REQ came through */
	uint32_t backlog;		/**< listener: most REQs not answered yet (its owner may change it) */
	uint32_t pending;		/**< listener: REQs not answered yet */

	struct {			/* the connection, for droce_cm_qp_attr() */
		uint8_t transport;
		uint32_t local_qpn;
		uint32_t remote_qpn;
		uint32_t local_psn;	/**< Starting PSN we sent: we receive from it */
		uint32_t remote_psn;	/**< the peer's: we send from it */
		uint8_t mtu;
		uint8_t responder_resources;	/**< ours: max_dest_rd_atomic */
		uint8_t initiator_depth;	/**< ours: max_rd_atomic */
		uint8_t retry_count;		/**< for our QP */
		uint8_t rnr_retry_count;	/**< for our QP */
		uint8_t local_ack_timeout;	/**< our QP's timeout */
		bool srq;
		struct droce_cm_path path;
		struct droce_cm_ece local_ece;	/**< what our REQ or REP sent */
		struct droce_cm_ece remote_ece;	/**< what the peer's REQ or REP said */
	} conn;

	struct {			/* retransmission */
		uint8_t peer_response_timeout;	/**< exponent: how long the peer takes */
		uint8_t packet_life_time;
		uint8_t max_cm_retries;
		uint8_t retries_left;
		uint64_t timeout_ns;	/**< wait for the answer to tx */
		uint64_t deadline;	/**< 0: no timer */
		uint64_t tid;		/**< transaction of the handshake */
		bool tx_valid;
		alignas(8) uint8_t tx[DROCE_MAD_BYTES];	/**< the last MAD sent, for retransmits and duplicates */
	} rt;
};

/** A CM instance. Owned by one thread. */
struct droce_cm {
	struct droce_cm_config cfg;
	const struct droce_cm_ops *ops;
	void *ops_ctx;
	struct droce_cm_id *ids;
	uint32_t n_ids;			/**< power of two, at most 65536 */
	uint32_t id_bits;		/**< log2(n_ids): the slot's share of a comm ID */
	uint32_t cursor;		/**< where the next free-slot search starts */
	uint32_t tid_seq;
	uint64_t cnt[DROCE_CM_CNT_COUNT];
	uint64_t drops[DROCE_CM_DROP_COUNT];	/**< MADs the parser refused, by reason */
};

/**
 * Set up a CM over @p ids, a table of @p n_ids entries (a power of two up
 * to 65536) the owner keeps allocated for the CM's life.
 * @return 0, or -EINVAL.
 */
int droce_cm_init(struct droce_cm *cm, const struct droce_cm_config *cfg,
		  struct droce_cm_id *ids, uint32_t n_ids,
		  const struct droce_cm_ops *ops, void *ops_ctx);

/**
 * A new IDLE id with @p context. @return 0, or -ENOMEM if every id is in
 * use (ids in TIMEWAIT stay in use until it ends).
 */
int droce_cm_id_create(struct droce_cm *cm, void *context, struct droce_cm_id **out);

/**
 * The owner is done with @p id: no more events. What is under way ends as
 * Linux's ib_destroy_cm_id() ends it: a REQ or SIDR_REQ received is
 * rejected, a REQ sent is cancelled with REJ Timeout, a REP exchange with
 * REJ Consumer Defined, a connection is disconnected (DREQ, retransmitted
 * as usual), a DREQ received is answered; the id stays in use through
 * TIMEWAIT and is freed after. Calls qp_modify(ERR) now if the QP is live.
 */
void droce_cm_id_destroy(struct droce_cm_id *id, uint64_t now);

/**
 * Listen on @p service_id (bits of @p mask; 0 means all 64) with at most
 * @p backlog REQs unanswered (0 is taken as 1).
 * @return 0, -EINVAL if @p id is not IDLE, -EADDRINUSE if another listener
 *         covers the same service ID.
 */
int droce_cm_listen(struct droce_cm_id *id, uint64_t service_id, uint64_t mask, uint32_t backlog);

/**
 * Active side: send a REQ. @return 0, or -EINVAL (state not IDLE, bad
 * transport, MTU or private data length).
 */
int droce_cm_connect(struct droce_cm_id *id, const struct droce_cm_req_param *p, uint64_t now);

/**
 * Passive side: drive the QP to RTR and RTS and send the REP.
 * @return 0; -EINVAL in a state other than REQ_RCVD or MRA_REQ_SENT, or
 *         for private data over 196 bytes; qp_modify's error.
 */
int droce_cm_accept(struct droce_cm_id *id, const struct droce_cm_rep_param *p, uint64_t now);

/**
 * Active side, after REP_RECEIVED: drive the QP to RTR and RTS, send the
 * RTU: ESTABLISHED. @return 0, -EINVAL in another state, qp_modify's error.
 */
int droce_cm_send_rtu(struct droce_cm_id *id, const void *pdata, uint8_t pdata_len, uint64_t now);

/**
 * Passive side: the QP received data before the RTU (IBV_EVENT_COMM_EST):
 * ESTABLISHED. @return 0, or -EINVAL if not waiting for the RTU.
 */
int droce_cm_establish(struct droce_cm_id *id, uint64_t now);

/**
 * Reject a REQ (REQ_RCVD, MRA_REQ_SENT) or a REP (REP_RCVD, MRA_REP_SENT)
 * with @p reason (enum droce_cm_rej_reason). @return 0, or -EINVAL.
 */
int droce_cm_reject(struct droce_cm_id *id, uint16_t reason, const void *ari, uint8_t ari_len,
		    const void *pdata, uint8_t pdata_len, uint64_t now);

/**
 * Ask the peer to wait @p service_timeout (exponent) more for our answer
 * to its REQ (REQ_RCVD) or REP (REP_RCVD). @return 0, or -EINVAL.
 */
int droce_cm_send_mra(struct droce_cm_id *id, uint8_t service_timeout, const void *pdata,
		      uint8_t pdata_len, uint64_t now);

/**
 * ESTABLISHED: QP to ERR, send a DREQ. DREQ_RCVD: QP to ERR, send the DREP,
 * enter TIMEWAIT. @return 0, or -EINVAL in another state.
 */
int droce_cm_disconnect(struct droce_cm_id *id, const void *pdata, uint8_t pdata_len,
			uint64_t now);

/** Active SIDR: send a SIDR_REQ. @return 0, or -EINVAL. */
int droce_cm_sidr_req(struct droce_cm_id *id, const struct droce_cm_sidr_req_param *p,
		      uint64_t now);

/** Passive SIDR, after SIDR_REQ_RECEIVED: answer; the id becomes IDLE. @return 0, or -EINVAL. */
int droce_cm_sidr_rep(struct droce_cm_id *id, const struct droce_cm_sidr_rep_param *p,
		      uint64_t now);

/**
 * Fill @p attr for moving @p id's QP to @p step with what was negotiated.
 * @return 0, or -EINVAL before the REQ/REP exchange has told enough.
 */
int droce_cm_qp_attr(const struct droce_cm_id *id, enum droce_cm_qp_step step,
		     struct droce_cm_qp_attr *attr);

/**
 * A MAD received on QP1 from @p from. Refused MADs are counted in
 * droce_cm.drops; those a state does not take, in droce_cm.cnt.
 * @return DROCE_CM_MAD_OK, or the parser's reason.
 */
enum droce_cm_drop droce_cm_rx(struct droce_cm *cm, const struct droce_cm_addr *from,
			       const void *mad, uint32_t len, uint64_t now);

/** Run the retransmission and TIMEWAIT timers due at @p now. */
void droce_cm_timer(struct droce_cm *cm, uint64_t now);

/** The earliest timer, or 0 if none is running. */
uint64_t droce_cm_next_timer(const struct droce_cm *cm);

/** True while an id in TIMEWAIT (or closing) still holds local QPN @p qpn. */
bool droce_cm_qpn_held(const struct droce_cm *cm, uint32_t qpn);

#endif /* DROCE_CM_H */
