/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_DEV_PRIV_H
#define DROCE_VERBS_DEV_PRIV_H

/*
 * Internals of the device, the control plane (verbs_dev_*.c): its objects,
 * handles and clients. The data plane -- transport ops, doorbells, RX, TX,
 * the scheduler -- is the engine's (verbs_engine_priv.h). Today one engine
 * runs on the same thread as the control requests (droced's worker), so
 * both sides may touch an object without locks; fields the engine owns
 * are marked so.
 */

#include "droce_cc.h"
#include "droce_verbs_dev.h"
#include "droce_engine.h"

struct dev_reclaim;
struct rte_rcu_qsbr;

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
#define DEV_MAX_ENGINES		DROCE_DEV_MAX_ENGINES	/* threads the quiescent-state variable counts */

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
	/* the client's objects of this type, in creation order (circular) */
	struct dev_obj *next, *prev;
};

/*
 * The shared-memory rings the device creates (verbs_ring.c) are seen
 * through a struct droce_shm_view: geometry copied at create (a client may
 * rewrite the header), our own index.
 */

/* The client's producer index says more than the ring holds: it is broken. */
static inline bool
dev_ring_impossible(const struct droce_shm_view *ring)
{
	return droce_shm_load_prod(ring->r) - ring->idx > ring->nslots;
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
	bool writable;			/* mapped PROT_WRITE */
	struct dev_pd *pd;
};

struct dev_mw {
	struct dev_obj o;
	struct droce_mw mw;
	struct dev_pd *pd;
};

/*
 * A CQ may be fed by QPs on several engines (@c shared: the device has
 * more than one): each reserves a slot on @c reserved, writes it, waits
 * until the slots before are published, then publishes its own (the
 * ring's prod, then @c published). With one engine @c reserved is the
 * producer index of a single-producer ring and @c published is unused
 * (engine_cq_push). With the workers parked (control requests) nothing is
 * reserved and unpublished: @c reserved is the ring's prod. The view's idx
 * is unused.
 */
struct dev_cq {
	struct dev_obj o;
	struct droce_shm_view ring;
	bool shared;
	_Atomic uint32_t reserved;	/* next slot an engine may take */
	_Atomic uint32_t published;	/* shared: slots before it are written and visible */
	uint32_t cqe;
	int chan_fd;		/* write end of the completion channel's pipe, or -1 */
	uint32_t refs;		/* QPs using it */
	_Atomic bool error;	/* overflowed: the first engine to see it raises CQ_ERR */
};

/* One consumer: its QPs are all placed on its engine (dev_create_qp). */
struct dev_srq {
	struct dev_obj o;
	struct droce_engine *eng;	/* takes its doorbells and runs every QP on it */
	struct droce_shm_view ring;
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

/*
 * A QP's rate: its limit (ibv_modify_qp_rate_limit) and DCQCN's reaction
 * and notification points, combined in its pacer (verbs_engine_cc.c). The
 * engine's, but for the limit, which a control request sets with the
 * workers parked.
 */
struct dev_qp_cc {
	struct droce_pacer pacer;	/* rate 0: not paced, the QP's fast path */
	struct droce_dcqcn_rp rp;
	struct droce_cc_np np;
	uint64_t limit_bps;		/* 0: no limit */
	uint32_t max_burst;		/* bytes; 0: the default */
	uint32_t typical_pkt;		/* bytes; 0: the path MTU */
	uint64_t wake_at;		/* waiting (on eng->paced): when it may send */
	uint32_t paced_idx;		/* its place in eng->paced */
	bool waiting;			/* on eng->paced */
	uint64_t cnp_handled;		/* CNPs its RP acted on (droce-ctl qps) */
	uint64_t cnp_sent;		/* CNPs its NP sent */
};

struct dev_qp {
	struct dev_obj o;
	struct droce_engine *eng;	/* the engine that runs it, for its whole life */
	/*
	 * the engine's: transport state, its SQ/RQ indices, its place in the
	 * lists; on a cache line boundary, where its layout puts what every
	 * message touches in the fewest lines (the QP is allocated aligned)
	 */
	_Alignas(64) struct droce_tqp tqp;
	struct droce_tqp_swqe *swqe;
	struct droce_shm_view sq;
	struct droce_shm_view rq;	/* unused with an SRQ */
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
	bool active;		/* on eng->active: may have packets to send */
	bool paced;		/* cc.pacer has a rate: polled through engine_cc_poll() */
	uint32_t live_idx;	/* its place in eng->live */
	struct dev_qp_cc cc;	/* the engine's, after everything a message touches */
};

struct droce_client {
	struct droce_dev *dev;
	uint32_t id;
	struct droce_client_cred cred;
	int async_fd;		/* write end of the async-event pipe, or -1 */
	/*
	 * Per engine: the doorbell ring of its QPs and SRQs there, and the
	 * eventfd the shim writes when that engine sleeps (--idle wait), or -1.
	 */
	struct droce_shm_view db[DEV_MAX_ENGINES];
	int wake_fd[DEV_MAX_ENGINES];
	uint32_t n_placed[DEV_MAX_ENGINES];	/* its QPs and SRQs on each engine */
	/*
	 * Heads of its objects by type: a client's teardown and per-client
	 * walks visit its own objects, not every handle of the device.
	 */
	struct dev_obj objs[OBJ_TYPE_COUNT];
	struct droce_client *next;
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
	uint32_t next_qpn;		/* where the next free-QPN search starts */
	struct droce_engine *eng[DEV_MAX_ENGINES];	/* each runs its clients' QPs */
	unsigned int n_eng;
	unsigned int next_place;	/* engine_place() starts its turn here */
	struct droce_client *clients;
	uint32_t next_client;
	uint32_t nobj[OBJ_TYPE_COUNT];
	droce_qpn_held_fn qpn_held;	/* the CM's TIMEWAIT QPNs are not handed out */
	void *qpn_held_arg;
	uint64_t cnt[DROCE_DEV_CNT_COUNT];	/* the control plane's (CLIENTS_LOST) */
	struct rte_rcu_qsbr *qsbr;	/* each engine reports a quiescent point per pass */
	struct dev_reclaim *reclaim;	/* what waits for every engine to pass one */
};

#define DEV_CNT(dev, sym) ((dev)->cnt[DROCE_DEV_CNT_##sym]++)

/* The IP header's ECN field (RFC 3168) and the priority of a traffic class (DSCP / 8) */
#define DROCE_ECN_MASK		0x03u
#define DROCE_ECN_ECT0		0x02u
#define DROCE_ECN_CE		0x03u
#define DROCE_TCLASS_PRIO(tc)	((unsigned int)(tc) >> 5)

/* IBA path MTU enum to bytes */
static inline uint32_t
dev_mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 1024;
}

/*
 * verbs_engine.c: where a new QP or SRQ of @p cl runs (the engine with the
 * fewest live QPs), counted until engine_unplace(); the engine whose shard
 * holds @p qpn
 */
struct droce_engine *engine_place(struct droce_client *cl);
void engine_place_on(struct droce_client *cl, struct droce_engine *eng);
void engine_unplace(struct droce_client *cl, struct droce_engine *eng);
struct droce_engine *dev_qpn_engine(const struct droce_dev *dev, uint32_t qpn);
unsigned int engine_id(const struct droce_engine *eng);

/* verbs_dev_handle.c */
void *dev_obj_get(struct droce_client *cl, uint32_t handle, enum dev_obj_type type);
int dev_obj_add(struct droce_dev *dev, struct droce_client *cl, struct dev_obj *o,
		enum dev_obj_type type);
void dev_obj_del(struct droce_dev *dev, struct dev_obj *o);
void dev_async_event(struct droce_client *cl, enum ibv_event_type type, uint32_t handle);

/* Each object of type @p t of client @p cl; @p o may be destroyed in the body. */
#define DEV_CL_FOREACH(o, nx, cl, t) \
	for ((o) = (cl)->objs[t].next, (nx) = (o)->next; (o) != &(cl)->objs[t]; \
	     (o) = (nx), (nx) = (o)->next)

/* verbs_ring.c */
int dev_ring_create(struct droce_shm_view *ring, enum droce_shm_kind kind, uint32_t handle,
		    uint32_t nslots, uint32_t slot_size, int *fd_out);
/* @p n rings in one memfd, ring k at offset k * (each view's map_len) */
int dev_ring_create_n(struct droce_shm_view *rings, unsigned int n, enum droce_shm_kind kind,
		      uint32_t handle, uint32_t nslots, uint32_t slot_size, int *fd_out);
void dev_ring_free(struct droce_shm_view *ring);

/*
 * verbs_dev_guard.c: a client's file mapped MAP_SHARED; @p guard_page, if
 * not 0, the file's page size: it may shrink, and a SIGBUS past its end
 * later is the client's doing and is absorbed a page at a time. Every
 * client mapping goes back through dev_client_unmap(). @return 0 or errno.
 */
int dev_client_map(int fd, uint64_t off, uint64_t len, int prot, uint64_t guard_page,
		   void **out);
void dev_client_unmap(void *map, uint64_t len);
/* Pages of shrunken client files replaced so far. */
uint64_t dev_client_map_faults(void);

/* verbs_dev_reclaim.c: MR pages and key records freed once no engine can see them */
int dev_reclaim_init(struct droce_dev *dev);
void dev_reclaim_defer(struct droce_dev *dev, void *map, uint64_t map_len, void *obj);
/* As dev_reclaim_defer(), closing @p fd too (an indirect region's mem file). */
void dev_reclaim_defer_fd(struct droce_dev *dev, void *map, uint64_t map_len, void *obj, int fd);
void dev_reclaim_fini(struct droce_dev *dev);

/*
 * verbs_dev_wait.c: the client's wake eventfds, one per engine, each in its
 * engine's epoll set (fds_out: the copies for the shim); 0 or -errno
 */
int dev_client_wake_open(struct droce_client *cl, int *fds_out);
void dev_client_wake_close(struct droce_client *cl);

/* verbs_dev_destroy.c */
int dev_destroy_checked(struct droce_client *cl, uint32_t handle, enum dev_obj_type type);
void dev_obj_destroy(struct droce_dev *dev, struct dev_obj *o);
void dev_drain_ud_qps(struct droce_client *cl);

/* request handlers: verbs_dev_mem.c */
int dev_alloc_pd(struct droce_client *cl, struct droce_ctrl_alloc_pd_rep *rep);
int dev_reg_mr(struct droce_client *cl, const struct droce_ctrl_reg_mr_req *req, int fd,
	       struct droce_ctrl_reg_mr_rep *rep);
int dev_rereg_mr(struct droce_client *cl, const struct droce_ctrl_rereg_mr_req *req, int fd,
		 struct droce_ctrl_rereg_mr_rep *rep);
int dev_alloc_mw(struct droce_client *cl, const struct droce_ctrl_alloc_mw_req *req,
		 struct droce_ctrl_alloc_mw_rep *rep);
/* verbs_dev_odp.c: @p fd checked as a process's mem file, *out a copy to keep */
int dev_odp_fd_take(int fd, unsigned int access, int *out, bool *writable);
/* Is @p fd a process's mem file (what an indirect region is reached through)? */
bool dev_fd_is_proc_mem(int fd);
int dev_advise_mr(struct droce_client *cl, const struct droce_ctrl_advise_mr_req *req,
		  struct droce_ctrl_advise_mr_rep *rep);
/* verbs_dev_cq_srq.c */
int dev_create_cq(struct droce_client *cl, const struct droce_ctrl_create_cq_req *req, int chan_fd,
		  struct droce_ctrl_create_cq_rep *rep, int *fds, unsigned int *nfds);
int dev_resize_cq(struct droce_client *cl, const struct droce_ctrl_resize_cq_req *req,
		  struct droce_ctrl_resize_cq_rep *rep, int *fds, unsigned int *nfds);
int dev_create_srq(struct droce_client *cl, const struct droce_ctrl_create_srq_req *req,
		   struct droce_ctrl_create_srq_rep *rep, int *fds, unsigned int *nfds);
int dev_modify_srq(struct droce_client *cl, const struct droce_ctrl_modify_srq_req *req);
/* verbs_dev_ah.c */
int dev_av_from_ah_attr(struct droce_dev *dev, const struct ibv_ah_attr *ah, struct droce_av *av);
/* ECT(0) where reaction points @p rp_now include the AV's priority; where @p rp_was did and it no longer does, not ECN-capable */
void dev_av_ecn(struct droce_av *av, uint8_t rp_was, uint8_t rp_now);
int dev_create_ah(struct droce_client *cl, const struct droce_ctrl_create_ah_req *req,
		  struct droce_ctrl_create_ah_rep *rep);
int dev_mcast(struct droce_client *cl, const struct droce_ctrl_mcast_req *req, bool attach);
/* verbs_dev_qp.c */
int dev_create_qp(struct droce_client *cl, const struct droce_ctrl_create_qp_req *req,
		  struct droce_ctrl_create_qp_rep *rep, int *fds, unsigned int *nfds);
int dev_modify_qp(struct droce_client *cl, const struct droce_ctrl_modify_qp_req *req);
int dev_query_qp(struct droce_client *cl, const struct droce_ctrl_query_qp_req *req,
		 struct droce_ctrl_query_qp_rep *rep);
int dev_destroy_qp(struct droce_client *cl, uint32_t handle);
/* verbs_dev_cc.c: per-QP rate limits and what QUERY_DEVICE says of them */
int dev_modify_qp_rate_limit(struct droce_client *cl,
			     const struct droce_ctrl_modify_qp_rate_limit_req *req);
void dev_packet_pacing_caps(const struct droce_dev *dev, struct ibv_packet_pacing_caps *caps);
uint64_t dev_line_rate_bps(const struct droce_dev *dev);
void dev_qp_free(struct droce_dev *dev, struct dev_qp *qp);

#endif /* DROCE_VERBS_DEV_PRIV_H */
