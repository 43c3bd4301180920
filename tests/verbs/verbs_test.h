/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_TEST_H
#define DROCE_VERBS_TEST_H

/**
 * @file
 * Shared by the per-man-page programs of tests/verbs/. Each program runs
 * twice through droce-run:
 *
 *   PROG serve           the peer: an agent that creates objects and
 *                        reports what it sees when the driver asks it to
 *   PROG drive HOST      the test: checks written from the driver's side,
 *                        asking the agent on HOST (TCP) for remote views
 *
 * The agent and the driver are on two daemons (scripts/netns-pair) or on
 * one (--single: loopback). Every wait is in event mode (completion
 * channel + poll(2)) with a timeout: the machine's cores are shared.
 *
 * Output: one line per check, "ok   NAME" or "FAIL NAME: detail"; the
 * driver exits 1 if any check failed, 2 if setup failed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define VT_QKEY		0x11110000u
#define VT_GRH_BYTES	40		/* UD receive buffers start with the GRH area */
#define VT_WAIT_MS	5000		/* a completion that takes longer is lost */
#define VT_DIM(a)	(sizeof(a) / sizeof((a)[0]))

/** This process's device, PD and the TCP link to the other role. */
struct vt_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;		/* GID vt_env.gid_index (RoCEv2 IPv4 by default) */
	int gid_index;
	int sock;			/* TCP to the peer */
	int failures;
};
extern struct vt_env vt;

/* ---- running ---- */

/** main() of every program: serve, or run @p drive against the agent. */
int vt_main(int argc, char **argv, void (*drive)(void));

/** Report one check; @return @p ok. */
bool vt_check(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** Setup that must work: print and exit 2 otherwise. */
void vt_require(bool ok, const char *what);

/* ---- local objects (driver side, also used by the agent) ---- */

/** A CQ of @p cqe entries with a completion channel of its own. */
struct ibv_cq *vt_cq(int cqe);
/** A QP of @p type on @p cq (send and receive), 32 WRs, 4 SGEs, 64 B inline. */
struct ibv_qp *vt_qp(enum ibv_qp_type type, struct ibv_cq *cq);
/** As vt_qp() with extended attributes (comp_mask, send_ops_flags); NULL + errno on failure. */
struct ibv_qp *vt_qp_ex(enum ibv_qp_type type, struct ibv_cq *cq, uint64_t send_ops_flags);
/** RESET -> RTS; RC/UC towards @p dest_qpn at @p dgid; UD with VT_QKEY. */
void vt_qp_up(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid);
/** As vt_qp_up(), stopping at @p last (IBV_QPS_RTR or IBV_QPS_RTS). */
void vt_qp_up_to(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
		 enum ibv_qp_state last);
/** RTR -> RTS (the rest of vt_qp_up()). */
void vt_qp_rts(struct ibv_qp *qp);
/** An address handle towards @p dgid. */
struct ibv_ah *vt_ah(const union ibv_gid *dgid);
/** Register @p len fresh zeroed bytes (page-aligned) with @p access. */
struct ibv_mr *vt_mr(size_t len, unsigned int access);

/**
 * Next completion of @p cq within @p ms (event mode).
 * @return true with *wc filled, false on timeout.
 */
bool vt_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms);
/** Post @p wr (one WR, signaled) and wait for its completion status, or -1. */
int vt_post_wait(struct ibv_qp *qp, struct ibv_send_wr *wr);
/** Post one receive of [addr, addr + len) under @p lkey. */
void vt_recv(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey);

/* ---- the agent, called by the driver ---- */

enum vt_cmd {
	VT_MR_REG = 1,	/* a0 len, a1 access -> id, a0 addr, a1 rkey, a2 lkey */
	VT_MR_READ,	/* id, a0 off, a1 len (<= VT_DATA) -> data */
	VT_MR_FILL,	/* id, a0 off, a1 len, a2 byte */
	VT_MR_DEREG,	/* id -> status */
	VT_QP_NEW,	/* a0 type -> id, a0 qpn; data: the agent's GID */
	VT_QP_UP,	/* id, a0 dest qpn; data: GID (a used QP is reset first, its CQ
			 * emptied) */
	VT_RECV,	/* id qp, a0 mr, a1 off, a2 len, a3 wr_id */
	VT_POLL,	/* id qp, a0 ms -> status 0 (a0..a7 = wc) or ETIMEDOUT */
	VT_MW_ALLOC,	/* a0 type -> id, a0 rkey */
	VT_MW_BIND,	/* id mw, a0 qp, a1 mr, a2 off, a3 len, a4 access -> a0 rkey, status */
	VT_MW_DEALLOC,	/* id -> status */
	VT_SEND,	/* id qp, a0 opcode, a1 imm, rkey or add, a2 mr, a3 off, a4 len,
			 * a5 remote addr, a6 rkey (RDMA, atomic), a7 more send_flags
			 * -> status; UD: to the QP of the last VT_QP_UP */
	VT_MCAST,	/* id qp, a0 attach; data: MGID -> status */
	VT_QP_STATE,	/* id qp -> a0 its state (ibv_query_qp) */
	VT_QUIT,
};

#define VT_DATA 256

struct vt_msg {
	uint32_t cmd;
	uint32_t id;
	int32_t status;		/* reply: 0, an errno, or a WC status */
	uint32_t pad;
	uint64_t a[8];
	uint8_t data[VT_DATA];
};

/** Fields of a polled WC as VT_POLL returns them in a[]. */
enum { VT_WC_STATUS, VT_WC_OPCODE, VT_WC_FLAGS, VT_WC_IMM, VT_WC_LEN, VT_WC_INV_RKEY,
       VT_WC_SRC_QP, VT_WC_ID };

/** One request/reply with the agent; exits 2 if the link breaks. */
struct vt_msg vt_call(uint32_t cmd, uint32_t id, const uint64_t *a, unsigned int na,
		      const void *data, size_t len);

/** An RC/UC/UD QP on the agent connected to local @p qp (which is brought up too). */
struct vt_remote_qp {
	uint32_t id;
	uint32_t qpn;
	union ibv_gid gid;
};
struct vt_remote_qp vt_remote_qp(struct ibv_qp *qp);
/** As vt_remote_qp(), bringing local @p qp only up to @p last. */
struct vt_remote_qp vt_remote_qp_to(struct ibv_qp *qp, enum ibv_qp_state last);

/** A local QP of @p type (with @p send_ops_flags if not 0) and its agent peer, both in RTS. */
struct vt_pair {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *x;		/* NULL without send_ops_flags */
	struct vt_remote_qp r;
};
struct vt_pair vt_pair(enum ibv_qp_type type, uint64_t send_ops_flags);
/**
 * Restate both QPs of an RC/UC @p p (after an error, say): each to RESET,
 * its CQ emptied, then up to RTS again towards the other.
 */
void vt_pair_restate(struct vt_pair *p);

/** The agent posts a receive of @p len bytes at @p off of its MR @p mr_id on @p r. */
void vt_remote_recv(const struct vt_remote_qp *r, uint32_t mr_id, uint64_t off, uint32_t len,
		    uint64_t wr_id);
/** The state of the agent's QP @p r, as ibv_query_qp() reads it. */
enum ibv_qp_state vt_remote_qp_state(const struct vt_remote_qp *r);
/** The agent's next completion on @p r within @p ms: status 0 and a[VT_WC_*], or ETIMEDOUT. */
struct vt_msg vt_remote_poll(const struct vt_remote_qp *r, int ms);

/**
 * The agent's RDMA WRITE or READ (or FETCH_AND_ADD of 1) between offset 0
 * of its MR @p mr_id and [addr, addr + len) under @p rkey on @p p: the
 * status of its completion.
 */
int vt_remote_rdma(const struct vt_pair *p, enum ibv_wr_opcode op, uint32_t mr_id,
		   uint64_t addr, uint32_t rkey, uint32_t len);

/**
 * The agent SENDs (@p op: SEND, SEND_WITH_IMM with @p imm) @p len bytes from
 * offset 0 of its MR @p mr_id on @p p, with @p flags added to
 * IBV_SEND_SIGNALED: the status of its completion.
 */
int vt_remote_send(const struct vt_pair *p, enum ibv_wr_opcode op, uint32_t mr_id, uint32_t imm,
		   uint32_t len, unsigned int flags);

/** A remote MR: id, address and keys. */
struct vt_remote_mr {
	uint32_t id;
	uint64_t addr;
	uint32_t rkey;
	uint32_t lkey;
};
struct vt_remote_mr vt_remote_mr(size_t len, unsigned int access);
/** Fill @p len bytes at @p off of remote MR @p id with @p byte. */
void vt_remote_fill(uint32_t id, uint64_t off, uint64_t len, uint8_t byte);
/** @p len bytes at @p off of remote MR @p id into @p out. */
void vt_remote_read(uint32_t id, uint64_t off, void *out, size_t len);

#endif /* DROCE_VERBS_TEST_H */
