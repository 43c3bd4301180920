/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_DEV_PRIV_H
#define DROCE_VERBS_DEV_PRIV_H

/* Internals of the device (verbs_dev*.c). Everything runs on the worker. */

#include "droce_verbs_dev.h"

/* limits: config/droce_config.h */
#define DEV_MAX_OBJS		DROCE_MAX_OBJS
#define DEV_MAX_QP		DROCE_MAX_QP
#define DEV_QPN_BASE		0x40u		/* QPNs below are reserved (QP0, QP1...) */
#define DEV_MAX_QP_WR		DROCE_MAX_QP_WR
#define DEV_MAX_CQE		DROCE_MAX_CQE
#define DEV_MAX_SRQ_WR		DROCE_MAX_SRQ_WR
#define DEV_SWQE_SLOT		512
#define DEV_RWQE_SLOT		256
#define DEV_CQE_SLOT		64
#define DEV_DB_SLOTS		4096
#define DEV_LOOP_SLOTS		4096
/* retransmit / RNR timers and forgotten doorbells: a scan of the live QPs */
#define DEV_TIMER_NS		(1000 * 1000)

enum dev_obj_type {
	OBJ_NONE,
	OBJ_PD,
	OBJ_MR,
	OBJ_MW,
	OBJ_CQ,
	OBJ_SRQ,
	OBJ_QP,
	OBJ_AH,
	OBJ_TYPE_COUNT
};

struct dev_obj {
	uint8_t type;
	uint32_t handle;
	struct droce_client *cl;
};

/* A shared-memory ring the device created or mapped. */
struct dev_ring {
	struct droce_shm_ring *r;
	uint64_t map_len;
	uint32_t nslots;	/* copied at create: never re-read from shm */
	uint32_t slot_shift;	/* log2 of the slot size, likewise */
	uint32_t idx;		/* our index: cons for SQ/RQ, prod for CQ */
};

/* The client's producer index says more than the ring holds: it is broken. */
static inline bool
dev_ring_impossible(const struct dev_ring *ring)
{
	return droce_shm_load_prod(ring->r) - ring->idx > ring->nslots;
}

/* A slot within the geometry we created: a client may rewrite the header. */
static inline void *
dev_slot(const struct dev_ring *ring, uint32_t idx)
{
	return ring->r->slots + ((size_t)(idx & (ring->nslots - 1)) << ring->slot_shift);
}

struct dev_pd {
	struct dev_obj o;
	uint32_t refs;		/* MRs, MWs, QPs, SRQs, AHs in it */
};

struct dev_mr {
	struct dev_obj o;
	struct droce_mr mr;
	void *map;
	uint64_t map_len;
	struct dev_pd *pd;
};

struct dev_mw {
	struct dev_obj o;
	struct droce_mw mw;
	struct dev_pd *pd;
};

struct dev_cq {
	struct dev_obj o;
	struct dev_ring ring;
	uint32_t cqe;
	int chan_fd;		/* write end of the completion channel's pipe, or -1 */
	uint32_t refs;		/* QPs using it */
	bool error;
};

struct dev_srq {
	struct dev_obj o;
	struct dev_ring ring;
	struct dev_pd *pd;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t limit;		/* armed when non-zero */
	uint32_t refs;
	bool broken;		/* an impossible ring index was seen: in error for good */
};

struct dev_ah {
	struct dev_obj o;
	struct dev_pd *pd;
	struct droce_av av;
};

struct dev_qp {
	struct dev_obj o;
	struct droce_tqp tqp;
	struct droce_tqp_swqe *swqe;
	struct dev_ring sq;
	struct dev_ring rq;	/* unused with an SRQ */
	struct dev_pd *pd;
	struct dev_cq *scq;
	struct dev_cq *rcq;
	struct dev_srq *srq;
	enum ibv_qp_state state;
	struct ibv_qp_attr attr;	/* as last set by modify_qp */
	struct ibv_qp_cap cap;
	uint32_t create_flags;
	bool sq_sig_all;
	bool sqd_notify;	/* in SQD, en_sqd_async_notify: SQ_DRAINED still owed */
	bool comm_est;		/* COMM_EST raised since the last RESET */
	bool dead;		/* being destroyed */
	bool active;		/* on dev->active: may have packets to send */
	uint32_t live_idx;	/* its place in dev->live */
};

struct droce_client {
	struct droce_dev *dev;
	uint32_t id;
	struct droce_client_cred cred;
	int async_fd;		/* write end of the async-event pipe, or -1 */
	int wake_fd;		/* eventfd the shim writes when we sleep (--idle wait), or -1 */
	struct dev_ring db;
	struct droce_client *next;
};

struct dev_loop_frame {
	uint32_t len;
	uint8_t data[DROCE_MAX_FRAME_BYTES];
};

struct droce_dev {
	struct droce_dev_conf conf;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	struct droce_qp_limits qp_lim;
	struct droce_key_table *keys;
	struct droce_mcast *mcast;
	struct dev_obj **objs;		/* by handle - 1 */
	uint32_t next_obj;		/* where the next free-slot search starts */
	struct dev_qp **qpn;		/* by QPN - DEV_QPN_BASE */
	uint32_t next_qpn;
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
	uint64_t next_timer;
	struct droce_client *clients;
	uint32_t next_client;
	uint32_t nobj[OBJ_TYPE_COUNT];
	struct dev_loop_frame *loop;	/* loopback queue, DEV_LOOP_SLOTS */
	uint32_t loop_head, loop_tail;
	uint64_t polls;
	droce_gsi_rx_fn gsi_rx;		/* QP1's MADs go to the daemon's CM */
	void *gsi_arg;
	droce_qpn_held_fn qpn_held;	/* the CM's TIMEWAIT QPNs are not handed out */
	void *qpn_held_arg;
	uint64_t cnt[DROCE_DEV_CNT_COUNT];
	/* transport counters of destroyed QPs: the device's totals outlive them */
	uint64_t tqp_dead[DROCE_TQP_CNT_COUNT];
};

#define DEV_CNT(dev, sym) ((dev)->cnt[DROCE_DEV_CNT_##sym]++)

/* verbs_dev.c */
void *dev_obj_get(struct droce_client *cl, uint32_t handle, enum dev_obj_type type);
int dev_obj_add(struct droce_dev *dev, struct droce_client *cl, struct dev_obj *o,
		enum dev_obj_type type);
void dev_obj_del(struct droce_dev *dev, struct dev_obj *o);
void dev_async_event(struct droce_client *cl, enum ibv_event_type type, uint32_t handle);
int dev_ring_create(struct dev_ring *ring, enum droce_shm_kind kind, uint32_t handle,
		    uint32_t nslots, uint32_t slot_size, int *fd_out);
void dev_ring_free(struct dev_ring *ring);
uint32_t dev_pow2(uint32_t n);

/* verbs_dev_wait.c: the client's wake eventfd (fd_out: its copy for the shim) */
int dev_client_wake_open(struct droce_client *cl, int *fd_out);
void dev_client_wake_close(struct droce_client *cl);

/* verbs_dev_qp.c */
extern const struct droce_tr_ops dev_tr_ops;
int dev_create_qp(struct droce_client *cl, const struct droce_ctrl_create_qp_req *req,
		  struct droce_ctrl_create_qp_rep *rep, int *fds, unsigned int *nfds);
int dev_modify_qp(struct droce_client *cl, const struct droce_ctrl_modify_qp_req *req);
int dev_query_qp(struct droce_client *cl, const struct droce_ctrl_query_qp_req *req,
		 struct droce_ctrl_query_qp_rep *rep);
int dev_destroy_qp(struct droce_client *cl, uint32_t handle);
void dev_qp_free(struct droce_dev *dev, struct dev_qp *qp);
void dev_qp_drain(struct droce_dev *dev, struct dev_qp *qp, uint64_t now);
void dev_srq_check_limit(struct dev_srq *srq);
int dev_av_from_ah_attr(struct droce_dev *dev, const struct ibv_ah_attr *ah, struct droce_av *av);

#endif /* DROCE_VERBS_DEV_PRIV_H */
