/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_SIM_H
#define DROCE_TEST_SIM_H

/*
 * A simulated link between two engine instances, for transport tests
 * without EAL. Each node owns transport QPs, a flat table of memory
 * regions, receive queues and CQs, and implements struct droce_tr_ops.
 * Frames are really built (droce_tqp_frame_build) and parsed
 * (droce_pkt_parse) on their way, so corruption is caught by the ICRC.
 * The link is seeded and deterministic: loss, duplication, corruption and
 * reordering (random extra delay). Time is virtual, in nanoseconds.
 */

#include <stdbool.h>
#include <stdint.h>

#include "droce_transport.h"

#define SIM_MAX_QP	8
#define SIM_MAX_MR	64
#define SIM_SQ_SIZE	256
#define SIM_RQ_SIZE	256
#define SIM_CQ_SIZE	4096

struct sim;

struct sim_mr {
	uint32_t key;
	uint32_t access;
	uint8_t *base;		/* host address of va */
	uint64_t va;
	uint64_t len;
	bool valid;
	bool odp;		/* on-demand paged: INDIRECT, bytes through mem_copy */
	uint64_t hole_va;	/* odp: [hole_va, hole_va + hole_len) faults */
	uint64_t hole_len;
};

struct sim_cq {
	struct droce_cqe c[SIM_CQ_SIZE];
	uint32_t head;		/* next to read */
	uint32_t tail;		/* next to write */
	uint32_t size;		/* capacity in use (<= SIM_CQ_SIZE) */
	bool overflow;
};

struct sim_node {
	struct sim *sim;
	int id;
	uint8_t mac[6];
	uint8_t gid[16];
	struct droce_tqp qp[SIM_MAX_QP];
	struct droce_tqp_swqe sq[SIM_MAX_QP][SIM_SQ_SIZE];
	struct droce_recv_wqe rq[SIM_MAX_QP][SIM_RQ_SIZE];
	uint32_t rq_head[SIM_MAX_QP];
	uint32_t rq_tail[SIM_MAX_QP];
	struct sim_cq scq[SIM_MAX_QP];
	struct sim_cq rcq[SIM_MAX_QP];
	bool rq_broken[SIM_MAX_QP];	/* recv_get answers -EBADMSG (an impossible ring) */
	bool qp_error[SIM_MAX_QP];
	enum droce_tqp_fault qp_fault[SIM_MAX_QP];	/* why, as qp_error said */
	struct sim_mr mr[SIM_MAX_MR];
	unsigned int nmr;
	uint64_t odp_copies;	/* sim_mem_copy() calls that moved bytes */
};

struct sim_link {
	double loss;		/* probability a frame is dropped */
	double dup;		/* ... delivered twice */
	double corrupt;		/* ... gets a flipped byte */
	double reorder;		/* ... gets an extra random delay */
	uint64_t delay_ns;	/* one-way delay */
	uint64_t reorder_ns;	/* the largest extra delay */
};

/* Sees every packet as it is sent; returning true drops it. */
typedef bool (*sim_sniff_fn)(struct sim *sim, int from, const struct droce_pkt *pkt, void *arg);

struct sim {
	struct sim_node node[2];
	struct sim_link link;
	uint64_t now;
	uint64_t rng;
	void *queue;		/* frames in flight (private) */
	sim_sniff_fn sniff;
	void *sniff_arg;
	uint64_t frames_sent;
	uint64_t frames_lost;
	uint64_t frames_corrupted;
	uint64_t frames_duplicated;
	uint64_t frames_rejected;	/* the parser refused them */
};

struct sim *sim_new(uint64_t seed);
void sim_free(struct sim *sim);

/* Pseudo-random numbers from the sim's seed. */
uint64_t sim_rand(struct sim *sim);

/* Register [base, base + len) under a fresh key with IBV_ACCESS_* @access. */
uint32_t sim_reg_mr(struct sim_node *n, void *base, uint64_t len, uint32_t access);

/* Set up QP @i on both nodes as a connected pair (RC/UC) or UD and bring them to RTS. */
void sim_connect(struct sim *sim, enum ibv_qp_type type, unsigned int i, uint32_t mtu);

/* Post a receive WQE of one SGE; returns 0 or -ENOMEM. */
int sim_post_recv(struct sim_node *n, unsigned int i, uint64_t wr_id, void *buf, uint32_t len,
		  uint32_t lkey);

/* Take a completion; false if none. */
bool sim_poll_cq(struct sim_cq *cq, struct droce_cqe *out);

/* Run until @done(sim, arg) or the simulated time reaches @limit_ns. */
bool sim_run(struct sim *sim, bool (*done)(struct sim *sim, void *arg), void *arg,
	     uint64_t limit_ns);

/* Address vector from node @from to node @to (UD work requests). */
void sim_av(struct sim *sim, int from, int to, struct droce_av *av);

#endif /* DROCE_TEST_SIM_H */
