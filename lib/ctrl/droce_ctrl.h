/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CTRL_H
#define DROCE_CTRL_H

/**
 * @file
 * The control protocol between the verbs shim and droced: one
 * SOCK_SEQPACKET unix socket per verbs context, one request and one reply
 * per message, file descriptors (memfd, eventfd) passed with SCM_RIGHTS.
 * Plain C, no DPDK: both sides compile it.
 *
 * Every message starts with struct droce_ctrl_hdr. Request bodies are
 * struct droce_ctrl_<name>_req, reply bodies struct droce_ctrl_<name>_rep
 * after a status (0 or a positive errno, as rdma-core's verbs return).
 * Where rdma-core already defines a plain-data struct (ibv_device_attr,
 * ibv_port_attr, ibv_qp_attr, ibv_ah_attr, ibv_srq_attr) it is carried
 * as is: both sides compile against the same rdma-core headers.
 *
 * Events travel on pipes the client creates and whose write ends it hands
 * over: HELLO carries the async-event pipe (the daemon writes one struct
 * droce_ctrl_event per event; the read end is ibv_context.async_fd), and
 * CREATE_CQ the pipe of the CQ's completion channel (the daemon writes the
 * CQ's handle, a uint32_t, once per armed completion). The daemon writes
 * them non-blocking: a client that does not read loses only its own events.
 *
 * The daemon trusts nothing in a request: sizes are checked against the
 * type's struct, handles against the connection's own objects, enums
 * against their ranges. A malformed message closes that connection only.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#define DROCE_CTRL_VERSION	1
#define DROCE_CTRL_MAX_MSG	4096
#define DROCE_CTRL_MAX_FDS	9	/* HELLO: the DB rings and a wake eventfd per engine (8) */
#define DROCE_CTRL_SOCKET	"/run/droce/droced.sock"	/**< default; DROCE_SOCKET overrides */

/** Message types: M(sym). Values are stable: add at the end only. */
#define DROCE_CTRL_MSGS(M) \
	M(HELLO) \
	M(QUERY_DEVICE) \
	M(QUERY_PORT) \
	M(QUERY_GID) \
	M(ALLOC_PD) \
	M(DEALLOC_PD) \
	M(REG_MR) \
	M(DEREG_MR) \
	M(ALLOC_MW) \
	M(DEALLOC_MW) \
	M(CREATE_CQ) \
	M(DESTROY_CQ) \
	M(CREATE_SRQ) \
	M(MODIFY_SRQ) \
	M(QUERY_SRQ) \
	M(DESTROY_SRQ) \
	M(CREATE_QP) \
	M(MODIFY_QP) \
	M(QUERY_QP) \
	M(DESTROY_QP) \
	M(CREATE_AH) \
	M(DESTROY_AH) \
	M(ATTACH_MCAST) \
	M(DETACH_MCAST) \
	M(REREG_MR) \
	M(RESIZE_CQ) \
	M(MODIFY_QP_RATE_LIMIT) \
	M(ADVISE_MR) \
	M(OPEN_MAPPING)

enum droce_ctrl_type {
	DROCE_CTRL_NONE = 0,
#define M(sym) DROCE_CTRL_##sym,
	DROCE_CTRL_MSGS(M)
#undef M
	DROCE_CTRL_TYPE_COUNT
};

/**
 * Name of a message type ("CREATE_QP"), for logs and droce-ctl.
 * @return a static string; "NONE" for 0 and "UNKNOWN" past the last type
 *         (a peer's word, so any value is safe to pass).
 */
const char *droce_ctrl_type_name(uint32_t type);

struct droce_ctrl_hdr {
	uint16_t version;	/**< DROCE_CTRL_VERSION */
	uint16_t type;		/**< enum droce_ctrl_type */
	uint32_t seq;		/**< echoed in the reply */
	uint32_t len;		/**< body bytes after this header */
	int32_t status;		/**< replies: 0 or a positive errno */
};

_Static_assert(sizeof(struct droce_ctrl_hdr) == 16, "control header is 16 bytes");

/** Largest body: a whole message is at most DROCE_CTRL_MAX_MSG bytes. */
#define DROCE_CTRL_MAX_BODY	(DROCE_CTRL_MAX_MSG - 16)

/* ---- bodies ---- */

struct droce_ctrl_hello_req {	/* fd: write end of the async-event pipe */
	uint32_t abi_version;	/**< DROCE_SHM_ABI_VERSION of the client */
	uint32_t pid;
};
/*
 * fds: one memfd holding n_db doorbell rings, ring k (engine k's) at offset
 * k * db_map_len; then, with --idle wait, one wake eventfd per engine.
 */
struct droce_ctrl_hello_rep {
	uint32_t ctx_handle;
	uint32_t db_nslots;
	uint64_t db_map_len;	/**< bytes of each ring's mapping */
	uint32_t n_db;		/**< one ring per engine, 1 .. DROCE_SHM_MAX_DB */
	uint32_t reserved;
	char dev_name[64];
	uint64_t node_guid;	/**< network order */
};

struct droce_ctrl_query_device_rep {
	struct ibv_device_attr attr;
	/* the extended part of ibv_query_device_ex that droce fills */
	uint64_t device_cap_flags_ex;
	uint32_t max_inline_data;
	struct ibv_packet_pacing_caps packet_pacing_caps;
};

struct droce_ctrl_query_port_req {
	uint32_t port_num;
};
struct droce_ctrl_query_port_rep {
	struct ibv_port_attr attr;
};

struct droce_ctrl_query_gid_req {
	uint32_t port_num;
	uint32_t index;
};
struct droce_ctrl_query_gid_rep {
	union ibv_gid gid;
	uint32_t gid_type;	/**< enum ibv_gid_type: IBV_GID_TYPE_ROCE_V2 */
	uint32_t valid;
};

struct droce_ctrl_handle {	/* DEALLOC_PD, DEREG_MR, DEALLOC_MW, DESTROY_* */
	uint32_t handle;
};

struct droce_ctrl_alloc_pd_rep {
	uint32_t pd_handle;
};

struct droce_ctrl_reg_mr_req {	/* fd: the memfd holding the pages */
	uint32_t pd_handle;
	uint32_t access;	/**< enum ibv_access_flags */
	uint64_t addr;		/**< client virtual address */
	uint64_t length;
	uint64_t iova;		/**< address remote peers use (addr unless _iova) */
	uint64_t fd_offset;	/**< offset of addr in the memfd */
};
struct droce_ctrl_reg_mr_rep {
	uint32_t mr_handle;
	uint32_t lkey;
	uint32_t rkey;
};

/*
 * REG_MR with IBV_ACCESS_ON_DEMAND: no pages; fd is the client's own
 * /proc/self/mem (O_RDWR, or O_RDONLY for a region nothing writes), through
 * which droced reaches the region at the moment of each access; fd_offset 0.
 * Implicit ODP: addr 0, length UINT64_MAX, iova 0. An ordinary REG_MR (or
 * REREG_MR's new range) whose pages the client could not move hands over
 * the same file: an indirect region, reached so too, atomics included.
 */

/* ibv_advise_mr(3): the SGEs are checked by droced; the shim faults the pages in. */
#define DROCE_CTRL_ADVISE_MAX_SGE	64
struct droce_ctrl_advise_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};
struct droce_ctrl_advise_mr_req {
	uint32_t pd_handle;
	uint32_t advice;	/**< enum ibv_advise_mr_advice */
	uint32_t flags;		/**< IBV_ADVISE_MR_FLAG_* */
	uint32_t num_sge;	/**< 1 .. DROCE_CTRL_ADVISE_MAX_SGE */
	struct droce_ctrl_advise_sge sge[DROCE_CTRL_ADVISE_MAX_SGE];
};
struct droce_ctrl_advise_mr_rep {
	uint64_t addr[DROCE_CTRL_ADVISE_MAX_SGE];	/**< client address of each SGE */
};

/*
 * OPEN_MAPPING: a descriptor of the file behind the client's own shared
 * anonymous memory [start, end) (one whole VMA), which the client cannot
 * open itself without CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE. droced opens
 * /proc/PID/map_files/START-END with the client's uid and gid as file
 * system credentials and hands out only shared anonymous memory
 * (app/droced/droced_mapping.c). Reply: the fd.
 */
struct droce_ctrl_open_mapping_req {
	uint64_t start;
	uint64_t end;
	uint32_t writable;	/**< 1: O_RDWR, 0: O_RDONLY */
	uint32_t reserved;
};

struct droce_ctrl_rereg_mr_req {	/* fd: a new memfd if the range changes */
	uint32_t mr_handle;
	uint32_t flags;		/**< enum ibv_rereg_mr_flags */
	uint32_t pd_handle;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
	uint64_t fd_offset;
};

struct droce_ctrl_alloc_mw_req {
	uint32_t pd_handle;
	uint32_t type;		/**< enum ibv_mw_type */
};
struct droce_ctrl_alloc_mw_rep {
	uint32_t mw_handle;
	uint32_t rkey;
};

struct droce_ctrl_create_cq_req {	/* fd: write end of the channel's pipe, if any */
	uint32_t cqe;
	uint32_t comp_vector;
	uint32_t has_channel;
};
struct droce_ctrl_create_cq_rep {	/* fd: the CQ ring memfd */
	uint32_t cq_handle;
	uint32_t cqe;		/**< usable entries (>= requested) */
	uint32_t nslots;
	uint64_t map_len;
};

/*
 * The CQ moves to a new ring: its pending completions keep their indices
 * (the new ring's cons and prod are the old ones), so the client carries on
 * from its own consumer index. The client must not poll or arm the CQ until
 * it has mapped the new ring; the old ring is never written again.
 */
struct droce_ctrl_resize_cq_req {
	uint32_t cq_handle;
	uint32_t cqe;		/**< at least the completions pending, else EINVAL */
};
struct droce_ctrl_resize_cq_rep {	/* fd: the new CQ ring memfd */
	uint32_t cqe;		/**< usable entries (>= requested) */
	uint32_t nslots;
	uint64_t map_len;
};

struct droce_ctrl_create_srq_req {
	uint32_t pd_handle;
	struct ibv_srq_attr attr;
};
struct droce_ctrl_create_srq_rep {	/* fd: the SRQ ring memfd */
	uint32_t srq_handle;
	struct ibv_srq_attr attr;
	uint32_t nslots;
	uint32_t engine;	/**< its doorbells go on the context's DB ring of this engine */
	uint64_t map_len;
};

struct droce_ctrl_modify_srq_req {
	uint32_t srq_handle;
	uint32_t mask;		/**< enum ibv_srq_attr_mask */
	struct ibv_srq_attr attr;
};

struct droce_ctrl_query_srq_rep {
	struct ibv_srq_attr attr;
};

struct droce_ctrl_create_qp_req {
	uint32_t pd_handle;
	uint32_t send_cq_handle;
	uint32_t recv_cq_handle;
	uint32_t srq_handle;	/**< 0: none */
	uint32_t qp_type;	/**< enum ibv_qp_type */
	uint32_t sq_sig_all;
	uint32_t create_flags;
	uint64_t send_ops_flags;	/**< ibv_create_qp_ex IBV_QP_INIT_ATTR_SEND_OPS_FLAGS */
	struct ibv_qp_cap cap;
};
struct droce_ctrl_create_qp_rep {	/* fds: SQ ring, RQ ring (none with an SRQ) */
	uint32_t qp_handle;
	uint32_t qp_num;
	struct ibv_qp_cap cap;	/**< what was granted */
	uint32_t sq_nslots;
	uint32_t rq_nslots;
	uint64_t sq_map_len;
	uint64_t rq_map_len;
	uint32_t engine;	/**< its doorbells go on the context's DB ring of this engine */
	uint32_t reserved;
};

struct droce_ctrl_modify_qp_req {
	uint32_t qp_handle;
	uint32_t mask;		/**< enum ibv_qp_attr_mask */
	struct ibv_qp_attr attr;
};

/** ibv_modify_qp_rate_limit: struct ibv_qp_rate_limit_attr's fields. */
struct droce_ctrl_modify_qp_rate_limit_req {
	uint32_t qp_handle;
	uint32_t rate_limit;	/**< kbps; 0: no limit */
	uint32_t max_burst_sz;	/**< bytes; 0: the device's choice */
	uint32_t typical_pkt_sz;	/**< bytes; 0: the path MTU */
	uint32_t comp_mask;	/**< none defined: must be 0 */
};

struct droce_ctrl_query_qp_req {
	uint32_t qp_handle;
	uint32_t mask;
};
struct droce_ctrl_query_qp_rep {
	struct ibv_qp_attr attr;
	struct ibv_qp_cap cap;
	uint32_t sq_sig_all;
};

struct droce_ctrl_create_ah_req {
	uint32_t pd_handle;
	struct ibv_ah_attr attr;
};
struct droce_ctrl_create_ah_rep {
	uint32_t ah_handle;
};

struct droce_ctrl_mcast_req {
	uint32_t qp_handle;
	uint16_t lid;
	union ibv_gid gid;
};

/** One asynchronous event, as written on the async-event pipe. */
struct droce_ctrl_event {
	uint32_t event_type;	/**< enum ibv_event_type */
	uint32_t handle;	/**< QP, CQ or SRQ handle, or the port number */
};

/*
 * Added by the shim: REREG_MR's reply. A reregistration may hand out new
 * keys (rdma-core's ibv_rereg_mr() reports them in mr->lkey and mr->rkey);
 * droced keeps the old ones, and says so here.
 */
struct droce_ctrl_rereg_mr_rep {
	uint32_t lkey;
	uint32_t rkey;
};

/* ---- transport of messages ---- */

/**
 * Send one message: a header (version, and type, seq, status, len from the
 * arguments) and @p body in one datagram, with @p nfds descriptors as one
 * SCM_RIGHTS message. The descriptors stay open here: the receiver gets
 * duplicates. Retries on EINTR; never raises SIGPIPE (MSG_NOSIGNAL).
 *
 * @param body  @p len bytes; may be NULL when @p len is 0
 * @param fds   @p nfds descriptors; may be NULL when @p nfds is 0
 * @return 0, or -EMSGSIZE if @p len > DROCE_CTRL_MAX_BODY, -EINVAL for more
 *         than DROCE_CTRL_MAX_FDS descriptors (or a NULL array for a non-zero
 *         count), -EPIPE if the peer has closed, or another -errno from
 *         sendmsg() (-EBADF for a bad descriptor in @p fds, -EAGAIN on a
 *         full non-blocking socket).
 */
int droce_ctrl_send(int sock, uint16_t type, uint32_t seq, int32_t status, const void *body,
		    uint32_t len, const int *fds, unsigned int nfds);

/**
 * Receive one message: its header into @p hdr, its body into @p buf. The
 * datagram must carry a whole header of DROCE_CTRL_VERSION whose len is
 * exactly the bytes after it; the received descriptors are close-on-exec
 * (MSG_CMSG_CLOEXEC). Retries on EINTR.
 *
 * @param buf   room for DROCE_CTRL_MAX_BODY bytes (a DROCE_CTRL_MAX_MSG buffer
 *              is more than enough)
 * @param fds   DROCE_CTRL_MAX_FDS entries, all written: the received
 *              descriptors first, then -1
 * @param nfds  out only: how many descriptors were received
 * @return body length (0 for none); -ECONNRESET at end of file; -EPROTO for
 *         a malformed message: truncated (MSG_TRUNC, MSG_CTRUNC), shorter
 *         than a header, another version, len disagreeing with the datagram,
 *         or more than DROCE_CTRL_MAX_FDS descriptors; or another -errno from
 *         recvmsg() (-EAGAIN on an empty non-blocking socket). On any error
 *         no received descriptor is left open, *@p nfds is 0 and @p hdr is
 *         unspecified.
 */
int droce_ctrl_recv(int sock, struct droce_ctrl_hdr *hdr, void *buf, int *fds,
		    unsigned int *nfds);

/**
 * One request and its reply (client side): sends @p req with a fresh
 * sequence number and status 0, then receives the reply, which must have
 * the same type and sequence number. Not for concurrent use on one socket:
 * the caller serialises its calls.
 *
 * @param rep       receives the reply body, which must be exactly @p rep_len
 *                  bytes unless the status is an error; may be NULL if 0
 * @param rep_fds   NULL (reply descriptors are closed) or DROCE_CTRL_MAX_FDS
 *                  entries, all written: received descriptors, then -1
 * @param rep_nfds  NULL, or out only: how many were received
 * @return 0; the reply's status when it is a positive errno; or a positive
 *         errno for a transport failure: EPIPE or ECONNRESET (the daemon is
 *         gone), EPROTO (a malformed reply, or one that does not answer this
 *         request, or a negative status), EMSGSIZE (request body over
 *         DROCE_CTRL_MAX_BODY), EINVAL (more than DROCE_CTRL_MAX_FDS fds, a
 *         @p rep_len over DROCE_CTRL_MAX_BODY, or a NULL @p rep for a non-zero
 *         one), or another errno from the socket. Whenever the return
 *         is not 0 no reply descriptor is left open, every @p rep_fds entry
 *         is -1 and *@p rep_nfds is 0.
 */
int droce_ctrl_call(int sock, uint16_t type, const void *req, uint32_t req_len,
		    const int *fds, unsigned int nfds, void *rep, uint32_t rep_len,
		    int *rep_fds, unsigned int *rep_nfds);

#endif /* DROCE_CTRL_H */
