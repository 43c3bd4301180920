/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_SHIM_PRIV_H
#define DROCE_SHIM_PRIV_H

/**
 * @file
 * Internals shared by the files of the verbs shim (libibverbs.so.1).
 *
 * The shim is libibverbs and its only "provider" at once: every exported
 * verb does its work here, and the function pointers rdma-core's inline
 * helpers call (ibv_context.ops, struct verbs_context, ibv_qp_ex, ibv_cq_ex)
 * point at the same functions. Objects wrap the public struct as their
 * first member, so a pointer handed to the application converts back with
 * a cast (the to_s*() helpers).
 *
 * Nothing here is exported: the library is built with hidden visibility and
 * the version script libibverbs.map lists what the application may see.
 * Exported definitions carry SHIM_EXPORT; functions that exist in two
 * symbol versions are defined under a private name and bound with
 * SHIM_SYMVER / SHIM_SYMVER_DEFAULT (what rdma-core's util/symver.h does).
 *
 * Threads: every verb may be called from any thread. The control socket of
 * a context is serialised by shim_context.call_lock; each ring has its own
 * spinlock; the object table by tab_lock; the registered-memory registry
 * (shim_mem.c) by its own mutex.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_ctrl.h"
#include "droce_shm.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/* Bind a local definition to a versioned name: "sym@ver" (compat) or "sym@@ver" (default). */
#define SHIM_SYMVER(impl, sym, ver) __asm__(".symver " #impl "," #sym "@" ver)
#define SHIM_SYMVER_DEFAULT(impl, sym, ver) __asm__(".symver " #impl "," #sym "@@" ver)

#define SHIM_UNUSED __attribute__((unused))

/* rdma-core's private driver.h: what ibv_query_gid_type() reports. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

/* ---- device and context ---- */

struct shim_device {
	struct ibv_device dev;		/* first: the application holds &dev */
	_Atomic int refcnt;		/* device list + open contexts */
	char sock_path[108];		/* sizeof(sun_path) */
	uint64_t node_guid;		/* network order, from HELLO */
};

/* Keys of the handle -> object table: the kind in the high half. */
enum shim_obj_kind {
	SHIM_OBJ_CQ = 1,
	SHIM_OBJ_QP,
	SHIM_OBJ_SRQ,
};

struct shim_objtab {
	struct shim_objtab_ent {
		uint64_t key;		/* 0: empty, UINT64_MAX: deleted */
		void *obj;
	} *ent;
	uint32_t cap;			/* power of two, or 0 */
	uint32_t used;			/* live + deleted entries */
};

/* Asynchronous events not handed out yet (shim_async.c). */
struct shim_async {
	int pipe;			/* the daemon's records; non-blocking read end */
	int kick;			/* eventfd: readable while q holds records */
	pthread_mutex_t lock;
	struct droce_ctrl_event *q;	/* taken from the pipe at a destroy, in order */
	unsigned int n, cap;
	bool eof;			/* the pipe ended while it was drained */
};

struct shim_context {
	struct verbs_context vctx;	/* ends with struct ibv_context, as rdma-core lays it out */
	struct shim_device *sdev;
	int sock;			/* SOCK_SEQPACKET to droced; also context.cmd_fd */
	pthread_mutex_t call_lock;	/* one request/reply at a time on sock */
	_Atomic bool dead;		/* the daemon went away: destroys succeed locally */
	_Atomic bool fatal_reported;	/* IBV_EVENT_DEVICE_FATAL handed out once */
	uint32_t ctx_handle;
	/*
	 * Per engine of the daemon: the doorbell ring of our QPs and SRQs it
	 * runs (each names its engine at create), and the eventfd that wakes
	 * that engine when it sleeps (--idle wait), or -1.
	 */
	struct droce_shm_view db[DROCE_SHM_MAX_DB];
	int wake_fd[DROCE_SHM_MAX_DB];
	uint32_t n_db;
	pthread_mutex_t tab_lock;
	struct shim_objtab tab;		/* handle -> CQ/QP/SRQ, for events */
	struct shim_async async;	/* its epoll set is context.async_fd */
};

static inline struct shim_context *
to_sctx(struct ibv_context *ctx)
{
	return (struct shim_context *)((char *)ctx - offsetof(struct shim_context, vctx.context));
}

/* ---- objects ---- */

struct shim_td {
	struct ibv_td td;
	_Atomic unsigned int users;	/* parent domains holding it */
};

/*
 * A PD, or a parent domain: then pd.handle is its base PD's, so every verb
 * that sends a PD to the daemon works unchanged, and objects created on it
 * with a thread domain take no locks (ibv_alloc_td(3)).
 */
struct shim_pd {
	struct ibv_pd pd;
	struct shim_pd *base;		/* parent domain: the PD it extends; else NULL */
	struct shim_td *td;		/* parent domain's thread domain, or NULL */
	void *pd_context;		/* IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT */
	_Atomic unsigned int users;	/* PD: parent domains on it; parent: QPs, CQs, SRQs */
};

/* Device memory: a sealed memfd (shim_dm.c). */
#define SHIM_MAX_DM_SIZE	(1u << 20)	/* per allocation */
struct shim_dm {
	struct ibv_dm dm;
	int fd;
	void *map;
	size_t len;
	_Atomic uint32_t mrs;		/* MRs registered on it: free_dm is EBUSY */
};

struct shim_mr {
	struct ibv_mr mr;
	unsigned int access;
	struct shim_dm *dm;		/* ibv_reg_dm_mr(), or NULL */
	bool in_registry;		/* counted in shim_mem's registry over [lo, hi) */
	bool indirect;			/* counted there as reached through our mem file */
	uintptr_t lo, hi;		/* page-aligned range counted there */
};

struct shim_mw {
	struct ibv_mw mw;
};

struct shim_ah {
	struct ibv_ah ah;
};

struct shim_channel {
	struct ibv_comp_channel ch;	/* fd: read end */
	int wfd;			/* write end, handed to the daemon per CQ */
};

struct shim_cq {
	union {				/* ibv_cq is a prefix of ibv_cq_ex */
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
	struct droce_shm_view ring;
	pthread_spinlock_t lock;
	bool single_threaded;		/* SINGLE_THREADED or a thread domain: no lock */
	struct shim_pd *parent;		/* ibv_cq_init_attr_ex.parent_domain, or NULL */
	uint64_t wc_flags;		/* ibv_create_cq_ex: what read_* may report */
	/* ibv_start_poll() .. ibv_end_poll() */
	struct droce_shm_cqe cur;	/* copy of the entry being read */
	uint32_t poll_idx;		/* index of cur */
	bool cur_valid;
	/* events handed out, for destroy to wait on their acks */
	uint32_t comp_events_got;
	uint32_t async_events_got;
};

struct shim_srq {
	struct ibv_srq srq;
	struct droce_shm_view ring;
	pthread_spinlock_t lock;
	struct shim_pd *parent;		/* created on a parent domain, or NULL */
	bool lockless;			/* ... with a thread domain: lock not taken */
	uint32_t db;			/* its engine: which of the context's DB rings */
	uint32_t max_sge;
	uint32_t events_got;
};

#define SHIM_QP_EX	1u	/* created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS */

struct shim_qp {
	union {				/* ibv_qp is the first member of ibv_qp_ex */
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;		/* SHIM_QP_EX */
	struct droce_shm_view sq;
	struct droce_shm_view rq;	/* r == NULL with an SRQ; idx: our producer index */
	uint32_t db;			/* its engine: which of the context's DB rings */
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	struct shim_pd *parent;		/* created on a parent domain, or NULL */
	bool lockless;			/* ... with a thread domain: locks not taken */
	struct ibv_qp_cap cap;		/* granted */
	uint32_t max_inline;		/* min(cap.max_inline_data, DROCE_SHM_MAX_INLINE) */
	uint64_t send_ops_flags;
	uint32_t events_got;
	/* ibv_wr_start() .. ibv_wr_complete() */
	uint32_t wr_prod;		/* next slot a builder claims */
	struct droce_shm_swqe *wr_cur;	/* the WQE the setters fill, or NULL */
	int wr_err;			/* first error of the batch */
	bool wr_addr_set;		/* UD: wr_set_ud_addr() called for wr_cur */
};

static inline struct shim_cq *to_scq(struct ibv_cq *cq) { return (struct shim_cq *)cq; }
static inline struct shim_qp *to_sqp(struct ibv_qp *qp) { return (struct shim_qp *)qp; }
static inline struct shim_srq *to_ssrq(struct ibv_srq *srq) { return (struct shim_srq *)srq; }
static inline struct shim_mr *to_smr(struct ibv_mr *mr) { return (struct shim_mr *)mr; }
static inline struct shim_pd *to_spd(struct ibv_pd *pd) { return (struct shim_pd *)pd; }

/* ---- shim_device.c ---- */

/**
 * One control request on @p sctx's socket (serialised). Descriptors
 * received with a failed reply are closed. A transport failure marks the
 * context dead. @return 0 or a positive errno.
 */
int shim_call(struct shim_context *sctx, uint16_t type, const void *req, uint32_t req_len,
	      const int *fds, unsigned int nfds, void *rep, uint32_t rep_len, int *rep_fds,
	      unsigned int nrep_fds);

/** As shim_call() for DESTROY/DEALLOC messages: a dead daemon counts as success. */
int shim_call_destroy(struct shim_context *sctx, uint16_t type, uint32_t handle);

/**
 * Map the ring in memfd @p fd (closed here) of @p map_len bytes and check
 * it is of @p kind. @return 0 or a positive errno.
 */
int shim_ring_map(struct droce_shm_view *ring, int fd, uint64_t map_len, enum droce_shm_kind kind);
/* The same, at @p offset in the memfd, which stays open. */
int shim_ring_map_at(struct droce_shm_view *ring, int fd, uint64_t map_len, uint64_t offset,
		     enum droce_shm_kind kind);
void shim_ring_unmap(struct droce_shm_view *ring);

int shim_obj_add(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle, void *obj);
void shim_obj_del(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle);
/** For ibv_get_async_event: the object of @p handle, counted as having one more event; or NULL. */
void *shim_obj_event(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle);
/** For ibv_get_cq_event: the CQ of @p handle, counted as having one more event; or NULL. */
struct shim_cq *shim_obj_cq_event(struct shim_context *sctx, uint32_t handle);

/** Wait until *acked (guarded by @p mutex, signalled on @p cond) reaches @p got. */
void shim_wait_acks(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *acked,
		    uint32_t got);

/* ---- shim_async.c ---- */

/** context.async_fd: an epoll set of the daemon's event pipe @p pipe_rd and our queue. */
int shim_async_open(struct shim_context *sctx, int pipe_rd);
void shim_async_close(struct shim_context *sctx);
/** A destroyed object's events not read yet: dropped, as the kernel drops them. */
void shim_async_purge(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle);

/* ---- shim_query.c ---- */

int shim_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int shim_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *attr,
		    size_t attr_len);
int shim_query_gid_entry(struct ibv_context *ctx, uint32_t port_num, uint32_t index,
			 struct ibv_gid_entry *entry);
int shim_query_device_1_1(struct ibv_context *ctx, struct ibv_device_attr *attr);
int shim_query_port_compat(struct ibv_context *ctx, uint8_t port_num,
			   struct _compat_ibv_port_attr *attr);
int shim_query_gid_1_1(struct ibv_context *ctx, uint8_t port_num, int index, union ibv_gid *gid);
int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type);

/* ---- shim_mem.c: registered memory is shared memory (DESIGN decision 4) ---- */

/** Where the pages of a registration live, for REG_MR. */
struct shim_mem_ref {
	int fd;				/* borrowed (shim memfd) or owned (foreign) */
	bool fd_owned;			/* close after the call */
	uint64_t fd_offset;		/* offset of addr in fd */
	bool counted;			/* the registry counts [lo, hi) */
	bool indirect;			/* fd is our mem file; [lo, hi) counted as such */
	uintptr_t lo, hi;
};

/**
 * Make [addr, addr + len) shareable with the daemon and count it; @p sctx
 * (may be NULL) asks the daemon for a shared mapping's file we cannot open.
 * Private memory that cannot move without a write being lost is handed
 * over as this process's mem file instead (fd_offset 0), faulted in.
 * @return 0, or a positive errno (EFAULT unmapped or not writable as
 *         @p writable asks, EOPNOTSUPP memory that cannot be shared).
 */
int shim_mem_get(struct shim_context *sctx, void *addr, size_t len, bool writable,
		 struct shim_mem_ref *ref);
/**
 * An on-demand paged registration of [addr, addr + len) (implicit: len
 * SIZE_MAX, all memory): ref->fd our mem file, and the range kept from
 * moving while it lives (droced's access would fail on a page held for a
 * move). @return 0 or a positive errno.
 */
int shim_mem_get_odp(void *addr, size_t len, struct shim_mem_ref *ref);
/** Drop a count taken by shim_mem_get(); pages nobody counts go back to private memory. */
void shim_mem_put(struct shim_mem_ref *ref);
/** Release fd of a ref after the REG_MR call (if owned). */
void shim_mem_ref_done(struct shim_mem_ref *ref);

/* ---- shim_mr.c ---- */

struct ibv_pd *shim_alloc_pd(struct ibv_context *ctx);
int shim_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *shim_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				 unsigned int access);
int shim_dereg_mr(struct ibv_mr *mr);
/** Access rights every registration checks. @return 0 or EINVAL. */
int shim_check_access(unsigned int access);

/* ---- shim_odp.c ---- */

/** This process's /proc/self/mem (kept open; reopened after fork), or -1. */
int shim_odp_mem_fd(void);
/** The pages of [addr, addr + len) faulted in, readable or writable; 0 or EFAULT. */
int shim_odp_touch(uint64_t addr, uint64_t len, bool write);
int shim_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		   struct ibv_sge *sg_list, uint32_t num_sge);

/* ---- shim_dm.c ---- */
struct ibv_dm *shim_alloc_dm(struct ibv_context *ctx, struct ibv_alloc_dm_attr *attr);
int shim_free_dm(struct ibv_dm *dm);
struct ibv_mr *shim_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len,
			      unsigned int access);
int shim_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		  int access);
struct ibv_mw *shim_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int shim_dealloc_mw(struct ibv_mw *mw);

/* ---- shim_domain.c ---- */

struct ibv_td *shim_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr);
int shim_dealloc_td(struct ibv_td *td);
struct ibv_pd *shim_alloc_parent_domain(struct ibv_context *ctx,
					struct ibv_parent_domain_init_attr *attr);
/** ibv_dealloc_pd() of a parent domain: EBUSY while objects were created on it. */
int shim_dealloc_parent_domain(struct shim_pd *parent);
/**
 * An object is being created on @p pd: if it is a parent domain, count the
 * object and return it (the object's creator keeps it for shim_parent_put()),
 * else NULL.
 */
struct shim_pd *shim_parent_get(struct ibv_pd *pd);
void shim_parent_put(struct shim_pd *parent);

/** Objects created on @p parent (from shim_parent_get()) take no locks. */
static inline bool
shim_parent_lockless(const struct shim_pd *parent)
{
	return parent != NULL && parent->td != NULL;
}

/* ---- shim_cq.c ---- */

struct ibv_comp_channel *shim_create_comp_channel(struct ibv_context *ctx);
int shim_destroy_comp_channel(struct ibv_comp_channel *ch);
struct ibv_cq *shim_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *shim_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
int shim_destroy_cq(struct ibv_cq *cq);
int shim_resize_cq(struct ibv_cq *cq, int cqe);
int shim_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
/* Drop the completions of QP @p qp_num not yet polled (it went to RESET). */
void shim_cq_clean(struct ibv_cq *cq, uint32_t qp_num);
int shim_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int shim_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context);
void shim_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);
int shim_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);

/* ---- shim_qp.c ---- */

struct ibv_qp *shim_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *shim_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
int shim_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int shim_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);
int shim_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);
int shim_destroy_qp(struct ibv_qp *qp);
struct ibv_srq *shim_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
struct ibv_srq *shim_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr);
int shim_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
int shim_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int shim_destroy_srq(struct ibv_srq *srq);
struct ibv_ah *shim_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int shim_destroy_ah(struct ibv_ah *ah);
int shim_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int shim_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);

/* ---- shim_post.c ---- */

int shim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int shim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int shim_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int shim_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
/** Fill every ibv_qp_ex function pointer. */
void shim_qp_ex_init(struct shim_qp *qp);
/** Opcodes (bit per enum ibv_wr_opcode) a QP type can post. */

/* ---- shim_stubs.c ---- */

/** Fill every ctx->ops and verbs_context slot. */
void shim_ops_init(struct verbs_context *vctx);

#endif /* DROCE_SHIM_PRIV_H */
