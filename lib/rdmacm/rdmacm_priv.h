/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_RDMACM_PRIV_H
#define DROCE_RDMACM_PRIV_H

/*
 * Internals of droce's librdmacm.so.1. Nothing here is exported: the library
 * is built with hidden visibility and RDMACM_EXPORT marks the API, whose
 * version nodes come from librdmacm.map (rdma-core 44's).
 *
 * It speaks to droced's connection manager with the CM messages of
 * droce_ctrl_cm.h, one control connection per event channel, and uses
 * only the public libibverbs API (droce's verbs shim, under droce-run).
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

#include "droce_ctrl_cm.h"

#define RDMACM_EXPORT __attribute__((visibility("default")))

/* rdma_* calls: 0, or -1 with errno set. */
static inline int
rdmacm_err(int err)
{
	errno = err;
	return -1;
}

/** An event channel: the public struct first (its fd is the event pipe). */
struct rdmacm_chan {
	struct rdma_event_channel ch;
	int sock;			/* control connection to droced */
	pthread_mutex_t lock;		/* one call at a time on sock; the id list */
	struct rdmacm_id *ids;
	_Atomic unsigned int readers;	/* threads inside rdma_get_cm_event */
	_Atomic bool closing;		/* rdma_destroy_event_channel ran */
};

/** A multicast group an id joined (rdma_join_multicast). */
struct rdmacm_mc {
	struct sockaddr_storage addr;
	void *context;
	uint32_t join_flags;
	bool attached;			/* the id's QP is attached to mgid */
	union ibv_gid mgid;
	struct rdmacm_mc *next;
};

/** An rdma_cm id: the public struct first. */
struct rdmacm_id {
	struct rdma_cm_id id;
	uint32_t handle;		/* droced's */
	struct rdmacm_chan *chan;
	bool sync;			/* made with a NULL channel: it owns its channel and
					 * each call waits for its event (rdma_cma.h) */
	bool own_send_cq, own_recv_cq;	/* rdma_create_qp made them, with their channels */
	struct ibv_qp_init_attr *ep_qp_attr;	/* a passive endpoint's QP, made per request */
	uint8_t connect[56];		/* rdma_create_ep's ai_connect: before the REQ's own */
	uint8_t connect_len;
	struct ibv_sa_path_rec path;
	/* what the peer offered, for rdma_accept(NULL) and the QP */
	uint8_t peer_rr, peer_depth;
	/* what we asked for, for RTR and RTS */
	uint8_t resp_res, init_depth;
	struct rdmacm_mc *mcs;		/* groups joined; under the channel's lock */
	/* rdma_set_option's, for the QP's attributes (rdmacm_options.c) */
	bool tos_set, ack_timeout_set;
	uint8_t tos, ack_timeout;
	uint32_t bind_flags;		/* DROCE_CTRL_CM_BIND_*, for droced's bind */
	bool bound;			/* no REUSEADDR change once bound */
	/* ECE (rdmacm_ece.c): ours for the REQ / REP, the peer's from them */
	struct ibv_ece local_ece, remote_ece;
	struct rdmacm_id *next;
};

/** An event: the public struct first, its private data after. */
struct rdmacm_event {
	struct rdma_cm_event ev;
	uint8_t pdata[DROCE_CTRL_CM_PDATA_MAX];
};

/* rdma_cma.c's, for rdmacm_ep.c */
int rdmacm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		     enum rdma_port_space ps, enum ibv_qp_type qp_type);
/* One request about @p i to droced (the request starts with the id's handle). */
int rdmacm_id_call(struct rdmacm_id *i, uint16_t type, void *req, uint32_t req_len, void *rep,
		   uint32_t rep_len);
/* @p sa (AF_INET, AF_INET6 or NULL) in droced's form. @return 0 or EAFNOSUPPORT. */
int rdmacm_addr_to_ctrl(const struct sockaddr *sa, struct droce_ctrl_cm_addr *a);
/* rdmacm_mcast.c: MULTICAST_JOIN arrived for @p i (attaches the QP); groups left at destroy. */
void rdmacm_mc_joined(struct rdmacm_id *i, struct rdma_cm_event *e, uint64_t mc);
void rdmacm_mc_free_all(struct rdmacm_id *i);
/* A UD event's address handle: @p dgid through our GID @p sgid_index, port 1. */
void rdmacm_ud_ah(struct ibv_ah_attr *ah, const uint8_t dgid[16], uint8_t sgid_index,
		  uint8_t hop_limit, uint8_t tclass);
/* rdmacm_options.c: rdma_set_option's effect on a QP move's attributes. */
void rdmacm_options_apply(const struct rdmacm_id *i, struct ibv_qp_attr *a, int mask);
/* rdma_cma.c: rdma_reject with REJ reason @p reason (0: consumer defined). */
int rdmacm_reject(struct rdma_cm_id *id, const void *pdata, uint8_t pdata_len, uint16_t reason);
/* A synchronous id's wait for the event its call started (kept in id->event). */
int rdmacm_complete(struct rdmacm_id *i);

#endif /* DROCE_RDMACM_PRIV_H */
