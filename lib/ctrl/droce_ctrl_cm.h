/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CTRL_CM_H
#define DROCE_CTRL_CM_H

/**
 * @file
 * The control messages of rdma_cm: what droce's librdmacm asks droced's
 * connection manager (app/droced/droced_cm.c). They travel on the same
 * SOCK_SEQPACKET protocol as the verbs messages (droce_ctrl.h), on a
 * connection of their own: one per rdma_cm event channel.
 *
 * CM_HELLO comes first and carries the write end of a pipe the client made:
 * the daemon writes one struct droce_ctrl_cm_event per event on it,
 * non-blocking (a client that does not read loses only its own events). Its
 * read end is the event channel's fd, so channels poll like rdma-core's;
 * CM_HELLO carries it too, for CM_MIGRATE_ID: the daemon takes the id's
 * events not read yet off the old channel's pipe onto the new one's, as
 * Linux's ucma does (an older client that sends no read end loses them).
 *
 * Ids are the daemon's handles (uint32_t, never 0), valid on the connection
 * that made them; a CONNECT_REQUEST event hands out a new one. The client
 * moves its QPs itself, with the attributes CM_INIT_QP_ATTR returns (as
 * librdmacm does with the kernel's), so the verbs shim's view of each QP
 * stays its own; the daemon only checks that a QPN it announces belongs to
 * the calling process.
 *
 * CM_MIGRATE_ID, sent on the connection the id moves to, takes an id of
 * another connection of the same process (SO_PEERCRED pid): its events go
 * to this connection's pipe from then on (rdma_migrate_id, and the new ids
 * of a synchronous listener, which each get a channel of their own).
 *
 * UD ids (RDMA_PS_UDP) connect with SIDR: CM_CONNECT sends a SIDR_REQ,
 * CM_ACCEPT and CM_REJECT answer one with a SIDR_REP; the active side's
 * ESTABLISHED (or UNREACHABLE) carries the peer's QPN and Q_Key.
 * CM_JOIN_MCAST checks a group address and answers with MULTICAST_JOIN
 * (its MGID, Q_Key and our GID index): the client attaches its QP itself,
 * with ibv_attach_mcast, whose IGMP / MLD report droced already sends.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

/** CM message types come after the verbs ones, from this value. */
#define DROCE_CTRL_CM_BASE	0x100

/** Message types: M(sym). Values are stable: add at the end only. */
#define DROCE_CTRL_CM_MSGS(M) \
	M(CM_HELLO) \
	M(CM_CREATE_ID) \
	M(CM_DESTROY_ID) \
	M(CM_BIND) \
	M(CM_RESOLVE_ADDR) \
	M(CM_RESOLVE_ROUTE) \
	M(CM_LISTEN) \
	M(CM_CONNECT) \
	M(CM_ACCEPT) \
	M(CM_REJECT) \
	M(CM_DISCONNECT) \
	M(CM_ESTABLISH) \
	M(CM_INIT_QP_ATTR) \
	M(CM_QUERY) \
	M(CM_MIGRATE_ID) \
	M(CM_JOIN_MCAST)

enum droce_ctrl_cm_type {
	DROCE_CTRL_CM_FIRST_ = DROCE_CTRL_CM_BASE - 1,
#define M(sym) DROCE_CTRL_##sym,
	DROCE_CTRL_CM_MSGS(M)
#undef M
	DROCE_CTRL_CM_END
};

/** True for a CM message type. */
static inline int
droce_ctrl_is_cm(uint32_t type)
{
	return type >= DROCE_CTRL_CM_BASE && type < DROCE_CTRL_CM_END;
}

/** Private data of any CM message fits here (RTU and DREP: 224 bytes). */
#define DROCE_CTRL_CM_PDATA_MAX	224

/** An IP address and port: family AF_INET or AF_INET6 (0: none). */
struct droce_ctrl_cm_addr {
	uint16_t family;
	uint16_t port;		/**< host order */
	uint32_t scope_id;	/**< IPv6 link-local */
	uint8_t gid[16];	/**< GID form: IPv4 as ::ffff:a.b.c.d */
};

struct droce_ctrl_cm_hello_req {	/* fds: the event pipe's write end, its read end */
	uint32_t pid;
};
struct droce_ctrl_cm_hello_rep {
	uint64_t node_guid;	/**< network order: which device ids end up on */
};

struct droce_ctrl_cm_create_id_req {
	uint64_t uctx;		/**< the client's, echoed in events */
	uint32_t ps;		/**< enum rdma_port_space */
	uint32_t qp_type;	/**< enum ibv_qp_type */
};
struct droce_ctrl_cm_id {	/* create_id's reply; DESTROY_ID, RESOLVE_ROUTE's... request */
	uint32_t id;
	uint32_t arg;		/**< LISTEN: backlog; RESOLVE_ROUTE: timeout ms; ESTABLISH: 1 for rdma_notify(COMM_EST) */
};

struct droce_ctrl_cm_bind_req {
	uint32_t id;
	uint32_t flags;		/**< DROCE_CTRL_CM_BIND_* (rdma_set_option's) */
	struct droce_ctrl_cm_addr addr;
};
#define DROCE_CTRL_CM_BIND_REUSEADDR	1u	/**< share the port with other such ids */
#define DROCE_CTRL_CM_BIND_AFONLY	2u	/**< only peers of the id's own family */
/** AFONLY was set (to 0 or 1); without it the family decides, as in Linux:
 *  AF_INET ids are AFONLY, AF_INET6 ones not (lib/cm's droce_cm_bind_afonly) */
#define DROCE_CTRL_CM_BIND_AFONLY_SET	4u
struct droce_ctrl_cm_bind_rep {
	struct droce_ctrl_cm_addr addr;	/**< the port chosen for 0 */
};

struct droce_ctrl_cm_resolve_addr_req {
	uint32_t id;
	uint32_t timeout_ms;
	struct droce_ctrl_cm_addr src;	/**< family 0: the daemon picks */
	struct droce_ctrl_cm_addr dst;
};

/** rdma_conn_param, as CONNECT and ACCEPT carry it. */
struct droce_ctrl_cm_conn {
	uint32_t id;
	uint32_t qpn;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t flow_control;
	uint8_t pdata_len;
	uint8_t pad;
	uint8_t pdata[DROCE_CTRL_CM_PDATA_MAX];
	/* ECE (rdma_set_local_ece): CONNECT, our vendor ID and options; ACCEPT,
	 * the REQ's vendor ID and our options, as rdma-core's librdmacm sends */
	uint32_t ece_vendor_id;
	uint32_t ece_options;
	uint16_t rej_reason;	/**< REJECT: 0 (consumer defined, 28) or 35 (rdma_reject_ece) */
	uint16_t pad2;
};

struct droce_ctrl_cm_init_qp_attr_req {
	uint32_t id;
	uint32_t qp_state;	/**< enum ibv_qp_state: INIT, RTR or RTS */
};
struct droce_ctrl_cm_init_qp_attr_rep {
	struct ibv_qp_attr attr;
	uint32_t mask;		/**< enum ibv_qp_attr_mask */
};

struct droce_ctrl_cm_query_rep {
	struct droce_ctrl_cm_addr src;
	struct droce_ctrl_cm_addr dst;
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint16_t pkey;
	uint8_t mtu;		/**< enum ibv_mtu of the route */
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t route_resolved;
	uint8_t pad[2];
	uint32_t ps;
	uint32_t qp_type;
};

/** CM_JOIN_MCAST: join @c addr's group; the event echoes @c mc. */
struct droce_ctrl_cm_join_req {
	uint32_t id;
	uint32_t join_flags;	/**< enum rdma_cm_join_mc_attr_flags */
	uint64_t mc;		/**< the client's membership */
	struct droce_ctrl_cm_addr addr;
};

/** The Q_Key of RDMA_PS_UDP ids and their groups (rdma-core's RDMA_UDP_QKEY). */
#define DROCE_CTRL_CM_UDP_QKEY	0x01234567u

/** rdma_cm's event types, with rdma-core's values (enum rdma_cm_event_type). */
enum droce_ctrl_cm_event_type {
	DROCE_CM_EVENT_ADDR_RESOLVED,
	DROCE_CM_EVENT_ADDR_ERROR,
	DROCE_CM_EVENT_ROUTE_RESOLVED,
	DROCE_CM_EVENT_ROUTE_ERROR,
	DROCE_CM_EVENT_CONNECT_REQUEST,
	DROCE_CM_EVENT_CONNECT_RESPONSE,
	DROCE_CM_EVENT_CONNECT_ERROR,
	DROCE_CM_EVENT_UNREACHABLE,
	DROCE_CM_EVENT_REJECTED,
	DROCE_CM_EVENT_ESTABLISHED,
	DROCE_CM_EVENT_DISCONNECTED,
	DROCE_CM_EVENT_DEVICE_REMOVAL,
	DROCE_CM_EVENT_MULTICAST_JOIN,
	DROCE_CM_EVENT_MULTICAST_ERROR,
	DROCE_CM_EVENT_ADDR_CHANGE,
	DROCE_CM_EVENT_TIMEWAIT_EXIT,
};

/** One event, as written on the event pipe (under PIPE_BUF: atomic). */
struct droce_ctrl_cm_event {
	uint32_t event;		/**< enum rdma_cm_event_type */
	int32_t status;
	uint64_t uctx;		/**< the id's; CONNECT_REQUEST: the listener's */
	uint32_t id;		/**< CONNECT_REQUEST: the new id */
	uint32_t listen_id;	/**< CONNECT_REQUEST: the listener */
	/* rdma_conn_param in the receiver's view, as Linux's ib_cm reports a
	 * REQ or REP: responder_resources is the peer's initiator depth (what
	 * we must offer), initiator_depth its responder resources (what we may
	 * use) */
	uint32_t qpn;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t rnr_retry_count;
	uint8_t retry_count;
	uint8_t srq;
	uint8_t flow_control;
	uint8_t pdata_len;
	uint8_t pad;
	uint8_t pdata[DROCE_CTRL_CM_PDATA_MAX];
	/* UD: ESTABLISHED after a SIDR_REP, MULTICAST_JOIN */
	uint32_t qkey;
	uint8_t dgid[16];	/**< the peer's GID, or the group's MGID */
	uint8_t sgid_index;	/**< ours, for the address handle */
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t pad2;
	uint64_t mc;		/**< MULTICAST_JOIN: the client's membership */
	/* CONNECT_REQUEST, CONNECT_RESPONSE: the peer's ECE from its REQ / REP */
	uint32_t ece_vendor_id;
	uint32_t ece_options;
};

_Static_assert(sizeof(struct droce_ctrl_cm_event) <= 512, "an event is one atomic pipe write");

#endif /* DROCE_CTRL_CM_H */
