/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_ENGINE_PRIV_H
#define DROCE_VERBS_ENGINE_PRIV_H

/*
 * Internals of the engine, the data plane (verbs_engine_*.c): everything
 * here runs on the engine's worker thread. It reads the device's keys,
 * multicast table, attributes and port ops; it writes only its own state
 * and the QPs it runs.
 */

#include "droce_engine.h"
#include "verbs_dev_priv.h"

#define ENG_LOOP_SLOTS		4096
/* retransmit / RNR timers and forgotten doorbells: a scan of the live QPs */
#define ENG_TIMER_NS		(1000 * 1000)
/* the port room a QP's poll needs: its budget of 32 and the replies it may owe */
#define ENG_TX_MARGIN		64

struct engine_loop_frame {
	uint32_t len;
	uint8_t data[DROCE_MAX_FRAME_BYTES];
};

struct droce_engine {
	struct droce_dev *dev;		/* keys, groups, attributes, port ops: read here */
	unsigned int id;		/* its thread id in dev->qsbr; its QPNs: QPN % n_eng == id */
	void *port_arg;			/* the port ops' argument for this engine's worker */
	unsigned int n_clients;		/* with a QP or SRQ here (engine_place) */
	uint64_t qps_created;		/* QPs ever attached here */
	struct dev_qp **qpn;		/* its QPN shard: by QPN - DEV_QPN_BASE */
	/*
	 * Polls visit only the active QPs (a packet, a doorbell or a timer gave
	 * them work) and the timers scan the live ones once a millisecond:
	 * idle QPs cost nothing per pass (a scan of every QPN slot per pass
	 * took 78% of the core under ib_write_bw).
	 */
	struct dev_qp **live;		/* n_live QPs, dense */
	uint32_t n_live;
	struct dev_qp **active;		/* n_active QPs, dense */
	uint32_t n_active;
	/* QPs with work that wait for their pacer (verbs_engine_cc.c), dense */
	struct dev_qp **paced;
	uint32_t n_paced;
	uint64_t now;			/* of the current call: what xmit charges pacers at */
	uint64_t next_timer;
	struct engine_loop_frame *loop;	/* loopback queue, ENG_LOOP_SLOTS */
	uint32_t loop_head, loop_tail;
	uint64_t polls;
	uint64_t rx_pkts;		/* received for its QPs (unicast and multicast) */
	droce_gsi_rx_fn gsi_rx;		/* QP1's MADs go to the daemon's CM */
	void *gsi_arg;
	uint64_t cnt[DROCE_DEV_CNT_COUNT];
	/* transport counters of destroyed QPs: the device's totals outlive them */
	uint64_t tqp_dead[DROCE_TQP_CNT_COUNT];
};

#define ENG_CNT(eng, sym) ((eng)->cnt[DROCE_DEV_CNT_##sym]++)

static inline struct dev_qp *
engine_tqp_to_qp(struct droce_tqp *t)
{
	return (struct dev_qp *)((char *)t - offsetof(struct dev_qp, tqp));
}

/* The QP may have packets to send: poll it until it has none. */
static inline void
engine_qp_activate(struct droce_engine *eng, struct dev_qp *qp)
{
	if (!qp->active) {
		qp->active = true;
		eng->active[eng->n_active++] = qp;
	}
}

/* verbs_engine.c: life, the QPN shard, the lists */
int engine_create(struct droce_dev *dev, unsigned int id, struct droce_engine **out);
void engine_destroy(struct droce_engine *eng);
bool engine_qpn_used(const struct droce_engine *eng, uint32_t qpn);
struct dev_qp *engine_qp_by_qpn(const struct droce_engine *eng, uint32_t qpn);
void engine_qp_attach(struct droce_engine *eng, struct dev_qp *qp);
void engine_qp_detach(struct droce_engine *eng, struct dev_qp *qp);
void engine_stats_add(const struct droce_engine *eng, struct droce_dev_stats *st);

/* verbs_engine_ops.c: what the transports call */
extern const struct droce_tr_ops engine_tr_ops;
int engine_cq_push(void *ctx, struct droce_tqp *t, bool recv, const struct droce_cqe *c);
void engine_srq_check_limit(struct dev_srq *srq);

/* verbs_engine_qp_event.c: state changes the engine notices, and their events */
void engine_rq_flush(struct dev_qp *qp);
void engine_qp_entered_error(struct dev_qp *qp);
void engine_qp_fail(struct droce_engine *eng, struct dev_qp *qp);
void engine_srq_fail(struct droce_engine *eng, struct dev_srq *srq, struct dev_qp *except);
void engine_qp_check_drained(struct dev_qp *qp);
void engine_qp_check_comm_est(struct dev_qp *qp, uint64_t rx_before);

/* verbs_engine_rx.c: a copy of a frame to another engine; -ENOBUFS: its ring or the pool is full */
int engine_handoff(struct droce_engine *eng, unsigned int to, const uint8_t *frame, uint32_t len,
		   bool local_only);

/* verbs_engine_wqe.c: client ring slots to transport WQEs */
int engine_rwqe_take(struct droce_shm_view *ring, uint32_t max_sge, struct droce_recv_wqe *w);
bool engine_swqe_convert(struct droce_engine *eng, struct dev_qp *qp,
			 const struct droce_shm_swqe *s, struct droce_send_wqe *w,
			 uint32_t *status);

/* verbs_engine_doorbell.c */
void engine_qp_drain(struct droce_engine *eng, struct dev_qp *qp, uint64_t now);
void engine_qp_send_out(struct droce_engine *eng, struct dev_qp *qp);

/* verbs_engine_cc.c: pacing, CNPs, DCQCN */
void engine_cc_qp_attach(struct droce_engine *eng, struct dev_qp *qp);
void engine_cc_qp_detach(struct droce_engine *eng, struct dev_qp *qp);
void engine_cc_rate_update(struct droce_engine *eng, struct dev_qp *qp);
bool engine_cc_poll(struct droce_engine *eng, struct dev_qp *qp, uint64_t now,
		    unsigned int *work);
void engine_cc_wake(struct droce_engine *eng, uint64_t now);
uint64_t engine_cc_next_wake(const struct droce_engine *eng);
void engine_cc_sent(struct droce_engine *eng, struct dev_qp *qp, const struct droce_pkt *pkt);
/* @p qp's rates for droce-ctl, DCQCN moved on to @p now on a copy (the QP is left as is) */
void engine_cc_describe(const struct dev_qp *qp, const struct droce_dcqcn_params *p, uint64_t now,
			struct droce_qp_rate *out);

/* verbs_engine_cnp.c: the notification point (a CE mark answered) and the reaction point */
void engine_np_marked(struct droce_engine *eng, struct dev_qp *qp, uint64_t now);
void engine_rp_cnp(struct droce_engine *eng, const struct droce_pkt *pkt, uint64_t now);
/* the ECN field of a received frame (parse_rx leaves pkt->tclass undecoded) */
static inline unsigned int
engine_frame_tclass(const struct droce_pkt *pkt, const uint8_t *frame)
{
	const uint8_t *ip = frame + pkt->l3_off;

	if (pkt->flags & DROCE_PKT_F_IPV6)
		return (unsigned int)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
	return ip[1];
}

/* A QP whose packets wait for a pacer (a rate limit or DCQCN's rate). */
static inline bool
engine_qp_paced(const struct dev_qp *qp)
{
	return qp->paced;
}

/* verbs_engine_tx.c */
bool engine_gid_is_local(const struct droce_engine *eng, const uint8_t *gid);
int engine_xmit(struct droce_engine *eng, struct droce_pkt *pkt, const struct droce_iov *iov,
		unsigned int n_iov, uint8_t *cache);
int engine_gsi_send(struct droce_engine *eng, const uint8_t sgid[16], const uint8_t dgid[16],
		    uint32_t dqpn, uint8_t tclass, uint8_t hop_limit, const void *payload,
		    uint32_t len);

#endif /* DROCE_VERBS_ENGINE_PRIV_H */
