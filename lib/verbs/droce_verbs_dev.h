/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_DEV_H
#define DROCE_VERBS_DEV_H

/**
 * @file
 * The device: droced's RDMA device (not libibverbs: the shim is the
 * client's side), the control plane. Every verbs object of every client,
 * their handles, the clients, the control requests, the counters. Its data
 * plane is the engine (droce_engine.h): the device places each QP on an
 * engine, which runs the QP's transport, doorbells, RX and TX.
 *
 * Today one worker thread owns the device and its engine and calls
 * everything here; the control thread hands each decoded request to it
 * (droced's mailbox), so objects, keys and transport state have a single
 * writer. Requests come from untrusted clients: handles are checked
 * against the client's own objects, values against device limits, and
 * ring contents are copied before use.
 *
 * Frames leave through the owner's frame_out callback; frames to one of the
 * device's own GIDs never reach the wire (the engine's loopback queue).
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_cc.h"
#include "droce_config.h"
#include "droce_ctrl.h"
#include "droce_mcast.h"
#include "droce_shm.h"
#include "droce_transport.h"
#include "droce_verbs_key.h"
#include "droce_verbs_mr.h"
#include "droce_verbs_qp_state.h"

#define DROCE_DEV_MAX_GIDS	4
#define DROCE_DEV_MAX_ENGINES	8	/**< worker threads a device may have */

struct droce_dev;
struct droce_client;

/**
 * Ports and the wire, supplied by the daemon. @p arg is the calling
 * engine's (droce_engine_set_port_arg(); droce_dev_conf.port_arg until
 * set); each engine calls them from its own worker thread.
 */
struct droce_dev_port_ops {
	/** Send one packet (headers in @p pkt, payload in @p iov); 0 or -errno (dropped). */
	int (*frame_out)(void *arg, struct droce_pkt *pkt, const struct droce_iov *iov,
			 unsigned int n_iov);
	/** MAC of a GID: 0, or -EAGAIN while resolution is under way. */
	int (*resolve)(void *arg, const uint8_t gid[16], uint8_t mac[6]);
	/** The first QP joined / the last QP left a multicast group. */
	void (*mcast_join)(void *arg, const uint8_t gid[16]);
	void (*mcast_leave)(void *arg, const uint8_t gid[16]);
	/**
	 * Several engines: give engine @p engine a copy of a frame to receive
	 * (a loopback frame or multicast for its QPs); @p local_only: it
	 * delivers a group's frame to its own members only. 0 or -errno
	 * (dropped: the transports recover as from any loss).
	 */
	int (*handoff)(void *arg, unsigned int engine, const uint8_t *frame, uint32_t len,
		       bool local_only);
	/**
	 * Frames the port still takes before it drops (NULL: no limit). While
	 * a full link holds them back, the scheduler polls no QP that could
	 * overfill it: senders wait, as on a NIC, rather than lose frames.
	 */
	unsigned int (*tx_room)(void *arg);
};

struct droce_dev_conf {
	char name[64];				/**< "droce0" */
	uint8_t mac[6];
	uint8_t gid[DROCE_DEV_MAX_GIDS][16];	/**< 0: IPv6 link-local, 1: IPv4, ... */
	unsigned int n_gids;
	uint32_t link_mtu;			/**< Ethernet MTU; path MTU follows */
	uint64_t node_guid;			/**< host order; from the MAC (EUI-64) */
	uint64_t seed;				/**< key bytes; 0 = random */
	const struct droce_dev_port_ops *port_ops;
	void *port_arg;
	/**
	 * Engines (worker threads), 0 or 1: one. Each client, with all its
	 * objects, lives on one engine (the one with the fewest clients when
	 * it connects, in turn among equals); its QPs' QPNs are those with
	 * QPN % n_engines == the engine's number.
	 */
	unsigned int n_engines;
	/**
	 * > 0: an epoll set engine i's worker waits on when idle (--idle
	 * wait); each client gets a wake eventfd, added to its engine's set,
	 * that its shim writes after a doorbell while the engine is asleep
	 * (droce_engine_sleep()).
	 */
	int wait_epfd[DROCE_DEV_MAX_ENGINES];
	/** DCQCN's parameters (doc/transport.md); zeroed: ConnectX's defaults */
	struct droce_dcqcn_params dcqcn;
	/**
	 * ECN per priority (bit p: priority p, a packet's DSCP / 8), as mlx5's
	 * ecn/roce_np/enable/<p> and ecn/roce_rp/enable/<p>: the notification
	 * point answers CE-marked packets with CNPs; the reaction point sends
	 * ECT(0) and lets CNPs cut its QPs' rates. 0: ECN off.
	 */
	uint8_t ecn_np_enable;
	uint8_t ecn_rp_enable;
};

/** Create a device. @return 0, -EINVAL or -ENOMEM. */
int droce_dev_create(const struct droce_dev_conf *conf, struct droce_dev **out);
void droce_dev_destroy(struct droce_dev *dev);

/**
 * Change ECN's switches and DCQCN's parameters of a running device (as
 * mlx5's writable ecn/ files); worker 0 with the others parked, as every
 * control call. Live QPs and AHs follow at once: ECT(0) on or off with
 * their priority's reaction point, a QP whose priority's RP went off
 * unlimited by DCQCN again (its own rate limit stays); DCQCN's new
 * parameters apply from each QP's next event.
 */
void droce_dev_cc_set(struct droce_dev *dev, uint8_t ecn_np, uint8_t ecn_rp,
		      const struct droce_dcqcn_params *dcqcn);
/** The switches and parameters as the engines use them now. */
void droce_dev_cc_get(const struct droce_dev *dev, uint8_t *ecn_np, uint8_t *ecn_rp,
		      struct droce_dcqcn_params *dcqcn);

/* ---- clients: one per control connection ---- */

/** Credentials of a client, from SO_PEERCRED and its capabilities. */
struct droce_client_cred {
	uint32_t pid;
	uint32_t uid;
	uint32_t gid;
	bool cap_net_raw;	/**< may use privileged Q_Keys (high bit set) */
};

int droce_dev_client_new(struct droce_dev *dev, const struct droce_client_cred *cred,
			 struct droce_client **out);

/** The client's process id, from SO_PEERCRED. */
uint32_t droce_dev_client_pid(const struct droce_client *cl);

/**
 * The client is gone (closed its socket, exited, was killed, misbehaved):
 * its QPs go to the error state (peers see errors), then everything it
 * owned is destroyed and its keys freed.
 */
void droce_dev_client_free(struct droce_client *cl);

/**
 * Handle one control request of @p cl. @p fds are the descriptors that came
 * with it (the handler takes ownership of those it keeps and closes none it
 * does not); reply descriptors go to @p rep_fds, owned by the caller after.
 * @return the reply status: 0 or a positive errno. -EPROTO (negative) means
 *         the request was malformed: the caller drops the client.
 */
int droce_dev_request(struct droce_client *cl, const struct droce_ctrl_hdr *hdr,
		      const void *body, const int *fds, unsigned int nfds,
		      void *rep, uint32_t *rep_len, int *rep_fds, unsigned int *rep_nfds);

/**
 * Free the MR pages and key records every engine has stopped seeing (they
 * wait for a quiescent point of each engine after they were unpublished).
 * Control requests do it too; call it from time to time when there are
 * none (a client that went away leaves its MRs waiting).
 */
void droce_dev_reclaim(struct droce_dev *dev);

/** The daemon is stopping: every client gets IBV_EVENT_DEVICE_FATAL. */
void droce_dev_fatal(struct droce_dev *dev);

/**
 * The link went up or down: the port's state becomes ACTIVE or DOWN and
 * every client gets IBV_EVENT_PORT_ACTIVE or IBV_EVENT_PORT_ERR (port 1).
 * Nothing happens if the state is unchanged. QPs are left alone: as on a
 * NIC, their transfers retry and time out on their own.
 */
void droce_dev_port_state(struct droce_dev *dev, bool up);

/* ---- QP1: the General Services Interface, owned by the daemon ---- */

#define DROCE_GSI_QPN		1		/**< IBA 3.5.2: the GSI's QP */
#define DROCE_GSI_QKEY		0x80010000u	/**< IBA C9-xx: the well-known GSI Q_Key */

/**
 * Who takes the MADs that arrive on QP1: @p payload is the UD SEND's payload
 * (@p len bytes; a MAD is 256) from @p pkt->sgid, already checked to be a
 * UD SEND_ONLY with the GSI Q_Key and P_Key 0xffff.
 */
typedef void (*droce_gsi_rx_fn)(void *arg, const struct droce_pkt *pkt, const uint8_t *payload,
				uint32_t len, uint64_t now);

/** Route QP1 to @p fn (NULL: QP1 packets are dropped and counted as RX_NO_QP). */
void droce_dev_gsi_set(struct droce_dev *dev, droce_gsi_rx_fn fn, void *arg);

/**
 * Send @p len bytes (a MAD) from QP1 to QP @p dqpn at @p dgid as a UD
 * SEND_ONLY (DETH source QP 1, GSI Q_Key, P_Key 0xffff) from our GID
 * @p sgid. To one of our own GIDs it takes the loopback queue.
 * @return 0; -EINVAL (not one of our GIDs, too long); -EAGAIN while the
 *         peer's MAC is not resolved yet (the CM retransmits); -EIO if the
 *         port refused it.
 */
int droce_dev_gsi_send(struct droce_dev *dev, const uint8_t sgid[16], const uint8_t dgid[16],
		       uint32_t dqpn, uint8_t tclass, uint8_t hop_limit, const void *payload,
		       uint32_t len);

/**
 * Whether QPN @p qpn is still held by the connection manager (an id in
 * TIMEWAIT, IBA 12.9.8.3.1): a new QP must not get it yet, or packets of the
 * old connection still on the wire would reach it.
 */
typedef bool (*droce_qpn_held_fn)(void *arg, uint32_t qpn);

/** QP creation skips the QPNs @p fn holds (NULL: none held). */
void droce_dev_qpn_held_set(struct droce_dev *dev, droce_qpn_held_fn fn, void *arg);

/** The port's active path MTU (enum ibv_mtu) and the device's node GUID (host order). */
enum ibv_mtu droce_dev_active_mtu(const struct droce_dev *dev);

/**
 * True if QPN @p qpn is a QP of a client of process @p pid: the CM takes
 * QPNs from a client, and must not announce another process's QP.
 */
bool droce_dev_qpn_of_pid(const struct droce_dev *dev, uint32_t qpn, uint32_t pid);

/**
 * Counters of the device, for telemetry and droce-ctl: C(sym, description)
 * named sym; X(sym, name, description) named as ConnectX's hw_counters.
 */
#define DROCE_DEV_COUNTERS(C, X) \
	C(RX_NO_QP,        "packets for a QPN that does not exist") \
	C(RX_GSI_BAD,      "QP1 packets that are not a UD SEND with the GSI Q_Key and P_Key") \
	C(RX_MCAST_NO_GRP, "multicast packets for a group nobody joined") \
	C(RX_LOOPBACK,     "packets delivered without the wire") \
	C(RX_HANDOFF,      "frames handed to another engine (several workers)") \
	C(RX_HANDOFF_FAIL, "frames for another engine dropped: its ring was full") \
	C(TX_NO_NEIGH,     "packets dropped: destination MAC not resolved yet") \
	C(TX_FAIL,         "packets the port refused") \
	C(TX_HELD,         "passes that left QPs waiting: the port's link was full") \
	C(BAD_WQE,         "work requests refused (bad opcode, SGE, key, length)") \
	C(BAD_RING,        "rings with an impossible index (QP moved to error)") \
	C(CLIENTS_LOST,    "clients that went away or were dropped") \
	C(MR_SHRUNK,       "pages of registered client files gone (truncated): zero pages put there") \
	X(NP_ECN_MARKED_ROCE_PACKETS, "np_ecn_marked_roce_packets", \
	  "RC/UC packets received CE-marked (ECN congestion experienced)") \
	X(NP_CNP_SENT, "np_cnp_sent", \
	  "CNPs sent for CE-marked packets (at most one per QP per min_time_between_cnps)") \
	X(RP_CNP_HANDLED, "rp_cnp_handled", \
	  "CNPs received that DCQCN acted on") \
	X(RP_CNP_IGNORED, "rp_cnp_ignored", \
	  "CNPs received and ignored (reaction point off for the QP's priority, no such RC/UC QP)") \
	C(ODP_COPIES,      "copies to or from on-demand paged memory (a system call each)") \
	C(ODP_FAULTS,      "accesses to on-demand paged memory that found no page (access errors)") \
	C(UNMOVED_COPIES,  "copies to or from ordinary regions not moved (a system call each)") \
	C(UNMOVED_FAULTS,  "accesses to ordinary regions not moved that found no page (access errors)")

enum droce_dev_counter {
#define C(sym, desc) DROCE_DEV_CNT_##sym,
#define X(sym, name, desc) DROCE_DEV_CNT_##sym,
	DROCE_DEV_COUNTERS(C, X)
#undef C
#undef X
	DROCE_DEV_CNT_COUNT
};

extern const char *const droce_dev_counter_name[DROCE_DEV_CNT_COUNT];

/** Snapshot of the counters and object counts (for droce-ctl, tests). */
struct droce_dev_stats {
	uint64_t cnt[DROCE_DEV_CNT_COUNT];
	/** the device's life: live QPs plus every QP destroyed before */
	uint64_t tqp_cnt[DROCE_TQP_CNT_COUNT];
	uint32_t clients, pds, mrs, mws, cqs, srqs, qps, ahs, mcast_groups;
	/**
	 * Each engine's received packets for its QPs; the clients with a QP or
	 * SRQ there now; its QPs now; every QP it ever ran.
	 */
	uint64_t engine_rx[DROCE_DEV_MAX_ENGINES];
	uint32_t engine_clients[DROCE_DEV_MAX_ENGINES];
	uint32_t engine_qps[DROCE_DEV_MAX_ENGINES];
	uint64_t engine_qps_created[DROCE_DEV_MAX_ENGINES];
	unsigned int n_engines;
};

void droce_dev_stats(const struct droce_dev *dev, struct droce_dev_stats *st);

/** What QUERY_DEVICE and QUERY_PORT answer (port 1), for droced's sysfs view. */
void droce_dev_query(const struct droce_dev *dev, struct ibv_device_attr *attr,
		     struct ibv_port_attr *port);

/** One QP's rates at a moment, bits/s, for droce-ctl qps (droce_dev_qp_rate()). */
struct droce_qp_rate {
	uint32_t qpn;
	uint32_t client;		/**< its client's id */
	enum ibv_qp_type type;
	enum ibv_qp_state state;
	uint64_t rate;			/**< what it may send at: its pacer's rate, or line */
	uint64_t line;			/**< the port's speed: an unpaced QP's rate */
	uint64_t limit;			/**< ibv_modify_qp_rate_limit's; 0: none */
	bool dcqcn_limited;		/**< DCQCN holds it: a CNP came, the rate is not back */
	uint64_t dcqcn_rc, dcqcn_rt;	/**< DCQCN's current and target rates */
	uint32_t dcqcn_alpha;		/**< DCQCN's alpha, in 1/1024 as initial_alpha_value */
	uint64_t cnp_handled;		/**< CNPs for it its reaction point acted on */
	uint64_t cnp_sent;		/**< CNPs its notification point sent for it */
};

/** The QPNs of every client's QPs, up to @p max. @return how many were written. */
unsigned int droce_dev_qpns(const struct droce_dev *dev, uint32_t *qpns, unsigned int max);

/**
 * QP @p qpn's rates at @p now (droce_now_ns(), the engines' clock), DCQCN's
 * increases due by then counted. Worker 0 with the others parked, as
 * every control call. @return 0, or -ENOENT if no client has that QP.
 */
int droce_dev_qp_rate(const struct droce_dev *dev, uint32_t qpn, uint64_t now,
		      struct droce_qp_rate *out);

/**
 * Describe every client and its objects, one line each ("client 3 pid 812
 * uid 0: 1 pd, 2 mr, ..." then "  qp 0x41 RC RTS ..."), for droce-ctl.
 * @return lines written (at most @p max), each up to @p len bytes.
 */
unsigned int droce_dev_describe(const struct droce_dev *dev, char (*lines)[128],
				unsigned int max);

#endif /* DROCE_VERBS_DEV_H */
