/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_CM_SIM_H
#define DROCE_TEST_CM_SIM_H

/*
 * Two CM instances over a simulated QP1 link, in virtual time, for the
 * state machine tests: like tests/unit/transport/sim.c, but the unit is a
 * 256-byte MAD. Every MAD really goes through droce_cm_mad_build() and
 * droce_cm_rx()'s parser. The link is seeded and deterministic: loss,
 * duplication and reordering (a random extra delay). A sniffer sees each
 * MAD sent and may drop it. Each node answers events by a policy (accept,
 * send the RTU, answer DREQs...) so tests script only what they study, and
 * logs every event and QP transition (the latest CMS_MAX_EV and CMS_MAX_QP).
 */

#include <stdbool.h>
#include <stdint.h>

#include "droce_cm.h"

#define CMS_IDS		64
#define CMS_MAX_EV	512
#define CMS_MAX_QP	64

struct cms;

/* One event as the owner saw it. */
struct cms_ev {
	enum droce_cm_event_type type;
	struct droce_cm_id *id;
	uint32_t local_id;
	struct droce_cm_id *listen;
	bool has_msg;
	struct droce_cm_msg msg;	/* a copy: the CM's is gone after the call */
	uint64_t t;
};

/* What a node does when an event arrives. */
struct cms_policy {
	bool accept;		/* REQ_RECEIVED: accept at once */
	uint16_t reject;	/* REQ_RECEIVED, if not accepting: reject with it (0: leave pending) */
	bool rtu;		/* REP_RECEIVED: send the RTU */
	bool drep;		/* DREQ_RECEIVED: answer */
	bool sidr_answer;	/* SIDR_REQ_RECEIVED: answer with status 0 */
	bool destroy_done;	/* destroy ids that end (TIMEWAIT_EXIT, REJ, *_ERROR, SIDR_REP) */
	int qp_fail;		/* fail this enum droce_cm_qp_step; -1 never */
	uint32_t next_qpn;	/* QPN for the next accept */
};

struct cms_qp {			/* one QP transition */
	struct droce_cm_id *id;
	struct droce_cm_qp_attr attr;
	uint64_t t;
};

struct cms_node {
	struct cms *sim;
	int idx;
	struct droce_cm cm;
	struct droce_cm_id ids[CMS_IDS];
	uint8_t gid[16];
	struct cms_policy pol;
	struct cms_ev ev[CMS_MAX_EV];
	unsigned int n_ev;
	struct cms_qp qp[CMS_MAX_QP];
	unsigned int n_qp;
	bool down;		/* MADs to it vanish */
	uint64_t sent[DROCE_CM_MSG_COUNT];	/* MADs it sent, by type */
};

struct cms_link {
	double loss;
	double dup;
	double reorder;
	uint64_t delay_ns;
	uint64_t reorder_ns;
};

/* Sees each MAD sent by node @from; returning true drops it. */
typedef bool (*cms_sniff_fn)(struct cms *sim, int from, const struct droce_cm_msg *msg, void *arg);

struct cms {
	struct cms_node node[2];
	struct cms_link link;
	uint64_t now;
	uint64_t rng;
	void *queue;		/* MADs in flight (private) */
	cms_sniff_fn sniff;
	void *sniff_arg;
	uint64_t mads_sent;
	uint64_t mads_lost;
	uint64_t mads_duplicated;
};

/* Two nodes, 10.0.0.1 (node 0) and 10.0.0.2 (node 1), default policies, a clean link. */
struct cms *cms_new(uint64_t seed);
void cms_free(struct cms *sim);
uint64_t cms_rand(struct cms *sim);

/* The path from node @from to the other, for droce_cm_req_param. */
void cms_path(struct cms *sim, int from, struct droce_cm_path *path);
/* Default REQ parameters from node @from: RC, service @sid, QPN @qpn, Linux's timeouts. */
void cms_req_param(struct cms *sim, int from, uint64_t sid, uint32_t qpn,
		   struct droce_cm_req_param *p);
/* Node @n listens on @sid with @backlog; returns the listener. */
struct droce_cm_id *cms_listen(struct cms *sim, int n, uint64_t sid, uint32_t backlog);
/* Node @n connects to the other; returns the id. */
struct droce_cm_id *cms_connect(struct cms *sim, int n, uint64_t sid, uint32_t qpn);

/*
 * Deliver MADs and run timers until @done, or until nothing is left to do,
 * or until the next thing to do is past @limit_ns (absolute; time then
 * stops at @limit_ns). Returns @done's last answer.
 */
bool cms_run(struct cms *sim, bool (*done)(struct cms *sim, void *arg), void *arg,
	     uint64_t limit_ns);
/* Run until nothing is in flight and no timer is running (time stays), or @limit_ns. */
void cms_settle(struct cms *sim, uint64_t limit_ns);
/* Run everything due up to time @t, which becomes the time. */
void cms_advance(struct cms *sim, uint64_t t);
/* Inject a raw MAD into node @to as if node @from sent it (bypasses the link). */
enum droce_cm_drop cms_inject(struct cms *sim, int from, int to, const uint8_t *mad, uint32_t len);

/* A message of @type from @sender_id (its comm or request ID) to @receiver_id. */
void cms_msg(struct droce_cm_msg *m, enum droce_cm_msg_type type, uint32_t sender_id,
	     uint32_t receiver_id);

/* Events of @type node @n logged (for @id, or any id if NULL). */
unsigned int cms_count(const struct cms_node *n, enum droce_cm_event_type type,
		       const struct droce_cm_id *id);
/* The last such event, or NULL. */
const struct cms_ev *cms_last(const struct cms_node *n, enum droce_cm_event_type type,
			      const struct droce_cm_id *id);
/* The last QP transition to @step of @qpn on node @n, or NULL. */
const struct cms_qp *cms_qp_last(const struct cms_node *n, uint32_t qpn,
				 enum droce_cm_qp_step step);
/* The node's id in @state other than a listener (the first), or NULL. */
struct droce_cm_id *cms_find_state(struct cms_node *n, enum droce_cm_state state);
/* Ids of node @n not FREE. */
unsigned int cms_ids_used(const struct cms_node *n);

#endif /* DROCE_TEST_CM_SIM_H */
