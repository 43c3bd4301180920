/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_cm in droced: the glue between QP1, lib/cm and the clients.
 *
 * QP1 is the daemon's GSI QP: the device hands every MAD that arrives for
 * QPN 1 to gsi_rx() (lib/verbs checked it is a UD SEND_ONLY with the GSI
 * Q_Key and P_Key), which passes it to the one struct droce_cm; the CM's
 * MADs leave through droce_dev_gsi_send() as UD SENDs from QP 1.
 *
 * On top, the rdma_cm ids of the clients (struct rid): an IP address and
 * port in a port space, what address and route resolution found, and the
 * lib/cm id of the connection, if any. Clients talk to us with the CM
 * messages of droce_ctrl_cm.h on a control connection of their own (one per
 * event channel) and hear back on the event pipe they handed over at
 * CM_HELLO. They move their QPs themselves with what CM_INIT_QP_ATTR says,
 * as librdmacm does with the kernel's CM.
 *
 * Ports are shared by Linux's rules (lib/cm's droce_cm_bind.h): every
 * bound id that is not a connection's passive end owns its (port space,
 * port), several may, and the listeners of one port share one lib/cm
 * listener, whose REQs go to the one that takes their family and address.
 *
 * UD ids connect with SIDR (a SIDR_REQ with the cma header, answered by
 * the client's rdma_accept or rdma_reject); a multicast join is checked
 * and answered here, the QP's attach is the client's (ibv_attach_mcast).
 *
 * Everything here runs on the worker: requests come through the mailbox,
 * MADs from the RX path, timers from the poll loop. No locks.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "droce_cm.h"
#include "droce_cm_bind.h"
#include "droce_cm_ip.h"
#include "droce_config.h"
#include "droce_core.h"
#include "droce_ctrl_cm.h"
#include "droce_wire_gid.h"
#include "droced.h"

#define CM_MAX_IDS	1024		/* rdma_cm ids, and lib/cm ids: a power of two */
/*
 * An id's handle: its slot + 1 in the low bits, the slot's generation above,
 * so that an event still in a pipe when its id is destroyed is not taken
 * for the next id in that slot (the client drops it: no such id)
 */
#define CM_HANDLE_SLOT_BITS	11
#define CM_HANDLE_SLOT_MASK	((1u << CM_HANDLE_SLOT_BITS) - 1)
#define CM_MAX_CLIENTS	256		/* event channels */
#define CM_PORT_FIRST	32768		/* ephemeral ports, as Linux's default range */
#define CM_PORT_LAST	60999
#define CM_RESOLVE_NS	(1000 * 1000)	/* pending neighbour resolutions: checked each ms */
/*
 * The CM's timers (retransmissions, timewait: milliseconds and up) are
 * looked for this often, not on every pass: the scan of all 1 024 ids was
 * more than half of a busy worker's instructions under ib_write_bw.
 */
#define CM_TIMER_SCAN_NS	(1000 * 1000)
#define CM_HELD_MADS	16		/* MADs waiting for their peer's MAC */
#define CM_HOLD_NS	(1000ull * 1000 * 1000)	/* how long one may wait: 1 s */

/* Linux's rdma_cm values (drivers/infiniband/core/cma.c) for what goes in a REQ. */
#define CM_RESPONSE_TIMEOUT	20	/* CMA_CM_RESPONSE_TIMEOUT: 4.3 s */
#define CM_MAX_RETRIES		15	/* CMA_MAX_CM_RETRIES */
/*
 * 268 ms; the local ACK timeout is one more (537 ms), as Linux since 6.2
 * (CMA_IBOE_PACKET_LIFETIME 16; 6.1 said 18: a lost packet's tail then cost
 * RC 2.1 s per retry, and perftest -R through 5% loss ran out of time)
 */
#define CM_PACKET_LIFETIME	16
#define CM_MRA_TIMEOUT		24	/* CMA_CM_MRA_SETTING */
/*
 * An RC QP's RNR NAK delay at RTR: code 0, 655.36 ms, as Linux's ib_cm
 * sets it. Applications count on it: libiscsi gives tgt's QP 6 RNR
 * retries, seconds on Linux for its receives to come back (at 0.64 ms,
 * 4 ms: tgt's SENDs failed RNR_RETRY_EXC under load).
 */
#define CM_MIN_RNR_TIMER	0

/* Daemon-side counters. C(sym, description) */
#define DROCED_CM_COUNTERS(C) \
	C(EVENTS,        "events written to clients") \
	C(EVENTS_LOST,   "events lost: the client's event pipe was full or gone") \
	C(REQ_BAD_HDR,   "REQs refused: no valid cma header in the private data") \
	C(REQ_NO_ID,     "REQs refused: no free rdma_cm id") \
	C(REQ_WRONG_IP,  "REQs and SIDR_REQs refused: no listener of the port takes their address") \
	C(SIDR_BAD_HDR,  "SIDR_REQs refused: no valid cma header in the private data") \
	C(WRONG_QP_TYPE, "REQs for a UD listener, SIDR_REQs for an RC/UC one: refused") \
	C(IPOIB,         "RDMA_PS_IPOIB ids refused a source address or a SIDR_REQ (no IPoIB on RoCE)") \
	C(MCAST_JOINS,   "multicast joins answered (MULTICAST_JOIN)") \
	C(GSI_HELD,      "MADs held until the peer's MAC was resolved") \
	C(GSI_TX_FAIL,   "MADs the port could not send (no MAC within 1 s, refused)")

enum {
#define C(sym, desc) CMC_##sym,
	DROCED_CM_COUNTERS(C)
#undef C
	CMC_COUNT
};

static const char *const cm_counter_name[CMC_COUNT] = {
#define C(sym, desc) [CMC_##sym] = #sym,
	DROCED_CM_COUNTERS(C)
#undef C
};

struct cm_client {
	struct droce_client *cl;	/* NULL: free slot */
	int ev_fd;			/* write end of the event pipe */
	int ev_rd;			/* a non-blocking read end of it (-1: none) */
	uint32_t pid;
};

struct rid {
	struct cm_client *owner;	/* NULL: free */
	uint64_t uctx;
	uint16_t ps;
	uint32_t qp_type;
	struct droce_ctrl_cm_addr src;	/* ours; port 0 until bound */
	struct droce_ctrl_cm_addr dst;	/* the peer's */
	bool bound;
	uint32_t bind_flags;		/* DROCE_CTRL_CM_BIND_* */
	bool afonly;			/* peers of src.family only (droce_cm_bind_afonly) */
	bool reuseaddr;			/* REUSEADDR and not listening: rdma_listen clears it */
	uint32_t backlog;		/* a listener: its REQs not answered yet, at most */
	struct rid *listener;		/* a passive id: the listener its REQ came to */
	bool addr_resolved;
	bool route_resolved;
	bool passive;			/* made by a REQ */
	uint64_t resolve_deadline;	/* non-zero: waiting for the peer's MAC */
	uint32_t psn;			/* the Starting PSN we send: our receive PSN */
	struct droce_cm_id *cmid;	/* the connection, or the listener */
	uint32_t gen;			/* the slot's generation: kept when freed */
	/* a passive id: what the REQ offered */
	uint8_t peer_rr, peer_depth;
};

/* A MAD to a peer whose MAC is not known yet (a REP to a host that never
 * talked to us but through its REQ): sent once the port has resolved it,
 * instead of costing the peer a CM retransmission (6.4 s) */
struct held_mad {
	uint64_t deadline;
	struct droce_cm_addr to;
	uint8_t mad[DROCE_MAD_BYTES];
};

static struct {
	struct droced *d;
	struct held_mad held[CM_HELD_MADS];
	unsigned int n_held;
	struct droce_cm cm;
	struct droce_cm_id ids[CM_MAX_IDS];
	struct rid rids[CM_MAX_IDS];
	struct cm_client clients[CM_MAX_CLIENTS];
	uint64_t now;
	uint64_t next_resolve;
	uint64_t next_timer_scan;
	uint16_t next_port;
	uint64_t cnt[CMC_COUNT];
} g;

#define CMC(sym) (g.cnt[CMC_##sym]++)

static uint32_t
rid_handle(const struct rid *r)
{
	return (r->gen << CM_HANDLE_SLOT_BITS) | ((uint32_t)(r - g.rids) + 1);
}

/* The live id @p handle names, whoever owns it, or NULL. */
static struct rid *
rid_lookup(uint32_t handle)
{
	uint32_t slot = (handle & CM_HANDLE_SLOT_MASK) - 1;	/* 0 wraps: refused */
	struct rid *r;

	if (slot >= CM_MAX_IDS)
		return NULL;
	r = &g.rids[slot];
	return r->owner != NULL && rid_handle(r) == handle ? r : NULL;
}

static struct rid *
rid_get(struct cm_client *c, uint32_t handle)
{
	struct rid *r = rid_lookup(handle);

	return r != NULL && r->owner == c ? r : NULL;
}

static struct rid *
rid_alloc(struct cm_client *c, uint64_t uctx, uint16_t ps, uint32_t qp_type)
{
	unsigned int i;
	uint32_t gen;

	for (i = 0; i < CM_MAX_IDS; i++) {
		struct rid *r = &g.rids[i];

		if (r->owner != NULL)
			continue;
		gen = r->gen;
		memset(r, 0, sizeof(*r));
		r->gen = gen;
		r->owner = c;
		r->uctx = uctx;
		r->ps = ps;
		r->qp_type = qp_type;
		r->psn = (uint32_t)random() & 0xffffff;
		return r;
	}
	return NULL;
}

/* ---- events ---- */

static void
emit(struct rid *r, struct droce_ctrl_cm_event *ev)
{
	ssize_t n;

	if (r->owner == NULL)
		return;
	ev->uctx = ev->uctx != 0 ? ev->uctx : r->uctx;
	ev->id = ev->id != 0 ? ev->id : rid_handle(r);
	n = write(r->owner->ev_fd, ev, sizeof(*ev));
	if (n == (ssize_t)sizeof(*ev))
		CMC(EVENTS);
	else
		CMC(EVENTS_LOST);
}

static void
emit_simple(struct rid *r, uint32_t type, int32_t status)
{
	struct droce_ctrl_cm_event ev = { .event = type, .status = status };

	emit(r, &ev);
}

static void
ev_pdata(struct droce_ctrl_cm_event *ev, const uint8_t *p, uint32_t len)
{
	if (p == NULL)
		return;
	len = DROCE_MIN(len, (uint32_t)DROCE_CTRL_CM_PDATA_MAX);
	memcpy(ev->pdata, p, len);
	ev->pdata_len = (uint8_t)len;
}

/* ---- addresses ---- */

static int gid_index(const uint8_t gid[16]);

/* What a UD event carries for the client's address handle: @p dgid from our GID @p sgid. */
static void
ev_ud(struct droce_ctrl_cm_event *ev, const uint8_t dgid[16], const uint8_t sgid[16],
      uint32_t qpn, uint32_t qkey)
{
	int idx = gid_index(sgid);

	ev->qpn = qpn;
	ev->qkey = qkey;
	memcpy(ev->dgid, dgid, 16);
	ev->sgid_index = (uint8_t)(idx < 0 ? 0 : idx);
	ev->hop_limit = 64;
}

static bool
gid_is_any(const uint8_t gid[16])
{
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, (uint8_t[16]){ 0 }, 16) == 0 || memcmp(gid, v4any, 16) == 0;
}

static bool
gid_is_ours(const uint8_t gid[16])
{
	const struct droce_dev_conf *conf = &g.d->conf;
	unsigned int i;

	for (i = 0; i < conf->n_gids; i++)
		if (memcmp(conf->gid[i], gid, 16) == 0)
			return true;
	return false;
}

static int
gid_index(const uint8_t gid[16])
{
	const struct droce_dev_conf *conf = &g.d->conf;
	unsigned int i;

	for (i = 0; i < conf->n_gids; i++)
		if (memcmp(conf->gid[i], gid, 16) == 0)
			return (int)i;
	return -1;
}

/* Our address to reach @p dst from: the first of our GIDs of its family. */
static bool
pick_src(const uint8_t dst[16], uint8_t src[16])
{
	const struct droce_dev_conf *conf = &g.d->conf;
	bool v4 = droce_gid_is_ipv4(dst);
	unsigned int i;

	if (gid_is_ours(dst)) {
		memcpy(src, dst, 16);
		return true;
	}
	for (i = 0; i < conf->n_gids; i++)
		if (droce_gid_is_ipv4(conf->gid[i]) == v4) {
			memcpy(src, conf->gid[i], 16);
			return true;
		}
	return false;
}

static bool
addr_ok(const struct droce_ctrl_cm_addr *a)
{
	if (a->family == AF_INET)
		return droce_gid_is_ipv4(a->gid) || gid_is_any(a->gid);
	return a->family == AF_INET6;
}

static void
rid_bind_view(const struct rid *r, struct droce_cm_bind *b)
{
	b->family = r->src.family;
	memcpy(b->addr, r->src.gid, 16);
	b->afonly = r->afonly;
	b->reuseaddr = r->reuseaddr;
}

/* Does @p o own a port (of @p r's port space, when it is @p port)? */
static bool
port_owner(const struct rid *o, const struct rid *r, uint16_t port)
{
	/* a connection's passive end is no owner: Linux binds it to no port */
	return o != r && o->owner != NULL && o->bound && !o->passive && o->ps == r->ps &&
	       o->src.port == port;
}

/*
 * May @p r (its src set) own its port beside the owners already there?
 * Linux's cma_check_port; @p reuse false for rdma_listen's re-check.
 * @return 0, EADDRNOTAVAIL or EADDRINUSE.
 */
static int
port_check(const struct rid *r, bool reuse)
{
	struct droce_cm_bind mine, cur;
	unsigned int i;
	int ret;

	rid_bind_view(r, &mine);
	for (i = 0; i < CM_MAX_IDS; i++) {
		if (!port_owner(&g.rids[i], r, r->src.port))
			continue;
		rid_bind_view(&g.rids[i], &cur);
		ret = droce_cm_bind_check(&mine, &cur, reuse);
		if (ret != 0)
			return -ret;
	}
	return 0;
}

/* An ephemeral port: one nobody owns (Linux may also share one between
 * connections to different peers; a free one is always among them) */
static bool
port_unused(const struct rid *r, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < CM_MAX_IDS; i++)
		if (port_owner(&g.rids[i], r, port))
			return false;
	return true;
}

/* The other listener of @p r's port, if there is one: its lib/cm listener is ours too. */
static struct rid *
listener_of_port(const struct rid *r)
{
	unsigned int i;

	for (i = 0; i < CM_MAX_IDS; i++) {
		struct rid *o = &g.rids[i];

		if (port_owner(o, r, r->src.port) && o->cmid != NULL &&
		    o->cmid->state == DROCE_CM_LISTEN)
			return o;
	}
	return NULL;
}

/* A listener going away: the other listeners of its port keep the lib/cm one. */
static void
listener_leave(struct rid *r)
{
	struct rid *o = listener_of_port(r);
	unsigned int i;

	for (i = 0; i < CM_MAX_IDS; i++)
		if (g.rids[i].listener == r)
			g.rids[i].listener = NULL;	/* its requests stay the owner's */
	if (o == NULL)
		return;		/* the last one: rid_free destroys it */
	r->cmid->backlog -= r->backlog;
	r->cmid = NULL;
}

static void
rid_free(struct rid *r)
{
	uint32_t gen;

	if (r->cmid != NULL && r->cmid->state == DROCE_CM_LISTEN)
		listener_leave(r);
	if (r->cmid != NULL) {
		r->cmid->context = NULL;	/* no more events: lib/cm finishes alone */
		droce_cm_id_destroy(r->cmid, g.now);
	}
	gen = r->gen + 1;	/* the next id here gets another handle */
	memset(r, 0, sizeof(*r));
	r->gen = gen & (UINT32_MAX >> CM_HANDLE_SLOT_BITS);
}

/*
 * A loopback address (127.0.0.0/8, ::1) names this host: bound to one, an id
 * is bound to every address of its family, as if to 0.0.0.0 or ::, and on no
 * device yet. (libfabric's verbs provider binds "localhost" when given no
 * address, then lists the device's own addresses if the id has no device.)
 */
static void
loopback_as_any(struct droce_ctrl_cm_addr *a)
{
	static const uint8_t v6lo[16] = { [15] = 1 };

	if (a->family == AF_INET && droce_gid_is_ipv4(a->gid) && a->gid[12] == 127)
		memset(&a->gid[12], 0, 4);
	else if (a->family == AF_INET6 && memcmp(a->gid, v6lo, 16) == 0)
		memset(a->gid, 0, 16);
}

static int
rid_bind(struct rid *r, const struct droce_ctrl_cm_addr *a, uint32_t flags)
{
	unsigned int tries;
	int ret;

	if (r->bound)
		return EINVAL;
	if (!addr_ok(a))
		return EAFNOSUPPORT;
	if (!gid_is_any(a->gid) && !gid_is_ours(a->gid))
		return EADDRNOTAVAIL;
	if (r->ps == DROCE_RDMA_PS_IPOIB && !gid_is_any(a->gid)) {
		/* as Linux's cma: the IPoIB port space exists only on an
		 * InfiniBand netdev, so binding one to a RoCE address fails */
		CMC(IPOIB);
		return EINVAL;
	}
	r->src = *a;
	/* AFONLY on says it was set, even from a client that sends no _SET */
	r->afonly = droce_cm_bind_afonly(a->family, flags & (DROCE_CTRL_CM_BIND_AFONLY_SET |
							     DROCE_CTRL_CM_BIND_AFONLY),
					 flags & DROCE_CTRL_CM_BIND_AFONLY);
	r->reuseaddr = flags & DROCE_CTRL_CM_BIND_REUSEADDR;
	if (a->port != 0) {
		ret = port_check(r, true);
	} else {
		ret = EADDRNOTAVAIL;	/* every port taken: Linux's answer */
		for (tries = 0; tries <= CM_PORT_LAST - CM_PORT_FIRST; tries++) {
			uint16_t p = (uint16_t)(CM_PORT_FIRST + g.next_port++ %
						(CM_PORT_LAST - CM_PORT_FIRST + 1));

			if (port_unused(r, p)) {
				r->src.port = p;
				ret = 0;
				break;
			}
		}
	}
	if (ret != 0) {
		memset(&r->src, 0, sizeof(r->src));
		return ret;
	}
	r->bound = true;
	r->bind_flags = flags;
	return 0;
}

/*
 * rdma_listen: the first listener of a port makes lib/cm's listener for its
 * service ID, the others share it (its backlog the sum of theirs).
 */
static int
rid_listen(struct rid *r, uint32_t backlog)
{
	struct rid *o;
	int ret;

	/* idle or bound only, as Linux's cma: not once an address was asked for */
	if (r->passive || r->cmid != NULL || r->dst.family != 0)
		return EINVAL;
	if (!r->bound) {
		/* Linux binds an idle listener to 0.0.0.0, port 0 */
		struct droce_ctrl_cm_addr any = { .family = AF_INET, .gid = { [10] = 0xff, 0xff } };

		ret = rid_bind(r, &any, 0);
		if (ret != 0)
			return ret;
	}
	if (r->reuseaddr) {
		/* Linux: a listener's port must be its own as if it had not asked
		 * for REUSEADDR, and it stops counting as a REUSEADDR id */
		ret = port_check(r, false);
		if (ret != 0)
			return ret;
		r->reuseaddr = false;
	}
	r->backlog = backlog != 0 ? backlog : 1;
	o = listener_of_port(r);
	if (o != NULL) {
		r->cmid = o->cmid;
		r->cmid->backlog += r->backlog;
		return 0;
	}
	ret = droce_cm_id_create(&g.cm, NULL, &r->cmid);	/* REQs find their rid */
	if (ret < 0)
		return ENOMEM;
	ret = droce_cm_listen(r->cmid, droce_cm_ip_service_id(r->ps, r->src.port), 0,
			      r->backlog);
	if (ret < 0) {
		droce_cm_id_destroy(r->cmid, g.now);
		r->cmid = NULL;
		return -ret;
	}
	return 0;
}

/* The peer's MAC is known (or it is us): the address is resolved. */
static void
resolve_check(struct rid *r)
{
	uint8_t mac[6];
	int ret;

	if (gid_is_ours(r->dst.gid) || droce_gid_is_mcast(r->dst.gid))
		ret = 0;	/* us, or a group: its MAC comes from its address */
	else
		ret = droced_port_ops.resolve(droced_port_state(g.d, 0), r->dst.gid, mac);
	if (ret == 0) {
		r->resolve_deadline = 0;
		r->addr_resolved = true;
		emit_simple(r, DROCE_CM_EVENT_ADDR_RESOLVED, 0);
	} else if (ret != -EAGAIN && ret != -EHOSTUNREACH) {
		r->resolve_deadline = 0;
		emit_simple(r, DROCE_CM_EVENT_ADDR_ERROR, ret);
	} else if (g.now >= r->resolve_deadline) {
		r->resolve_deadline = 0;
		emit_simple(r, DROCE_CM_EVENT_ADDR_ERROR, -ETIMEDOUT);
	}
}

static int
rid_resolve_addr(struct rid *r, const struct droce_ctrl_cm_resolve_addr_req *q)
{
	struct droce_ctrl_cm_addr src = q->src;
	int ret;

	if (!addr_ok(&q->dst) || gid_is_any(q->dst.gid))
		return EINVAL;
	if (r->passive || r->cmid != NULL)	/* a listener or a connection: Linux's EINVAL */
		return EINVAL;
	if (src.family == 0) {
		src = r->bound ? r->src : (struct droce_ctrl_cm_addr){ .family = q->dst.family };
	}
	if (r->ps == DROCE_RDMA_PS_IPOIB && gid_is_any(src.gid)) {
		/* Linux: from the any-address the id binds, and its resolution
		 * ends in ADDR_ERROR -EINVAL (no IPoIB device to take); from a
		 * given source rid_bind() fails at once */
		if (!r->bound && (ret = rid_bind(r, &src, 0)) != 0)
			return ret;
		CMC(IPOIB);
		r->dst = q->dst;
		emit_simple(r, DROCE_CM_EVENT_ADDR_ERROR, -EINVAL);
		return 0;
	}
	if (gid_is_any(src.gid) && !pick_src(q->dst.gid, src.gid))
		return EADDRNOTAVAIL;
	if (!r->bound) {
		ret = rid_bind(r, &src, 0);
		if (ret != 0)
			return ret;
	} else {
		memcpy(r->src.gid, src.gid, 16);	/* a bound any-address gets a real one */
	}
	r->dst = q->dst;
	r->addr_resolved = false;
	r->route_resolved = false;
	r->resolve_deadline = g.now + (uint64_t)(q->timeout_ms ? q->timeout_ms : 2000) * 1000000;
	resolve_check(r);
	return 0;
}

/* ---- lib/cm ---- */

static int
gsi_send(const struct droce_cm_addr *to, const uint8_t *mad)
{
	return droce_dev_gsi_send(g.d->dev, to->local_gid, to->remote_gid, to->remote_qpn,
				  to->tclass, to->hop_limit, mad, DROCE_MAD_BYTES);
}

static void
cm_send(void *ctx, const struct droce_cm_addr *to, const uint8_t *mad)
{
	struct held_mad *h;
	int ret;

	(void)ctx;
	ret = gsi_send(to, mad);
	if (ret == -EAGAIN && g.n_held < CM_HELD_MADS) {	/* no MAC yet: asked for */
		h = &g.held[g.n_held++];
		h->deadline = g.now + CM_HOLD_NS;
		h->to = *to;
		memcpy(h->mad, mad, DROCE_MAD_BYTES);
		CMC(GSI_HELD);
	} else if (ret < 0) {
		CMC(GSI_TX_FAIL);	/* the CM's retransmission covers it */
	}
}

/* The held MADs whose peer's MAC has come (or that waited too long). */
static void
held_retry(void)
{
	unsigned int i = 0;
	int ret;

	while (i < g.n_held) {
		ret = gsi_send(&g.held[i].to, g.held[i].mad);
		if (ret == -EAGAIN && g.now < g.held[i].deadline) {
			i++;
			continue;
		}
		if (ret < 0)
			CMC(GSI_TX_FAIL);
		g.held[i] = g.held[--g.n_held];
	}
}

/* REQs and SIDR_REQs that @p l's owner has not answered yet. */
static uint32_t
listener_pending(const struct rid *l)
{
	uint32_t n = 0;
	unsigned int i;

	for (i = 0; i < CM_MAX_IDS; i++) {
		const struct rid *c = &g.rids[i];

		n += c->listener == l && c->cmid != NULL &&
		     (c->cmid->state == DROCE_CM_REQ_RCVD || c->cmid->state == DROCE_CM_MRA_REQ_SENT ||
		      c->cmid->state == DROCE_CM_SIDR_REQ_RCVD);
	}
	return n;
}

/*
 * The listener of lib/cm's @p listen that takes a REQ or SIDR_REQ whose
 * cma header says @p ip (Linux's cma_find_listener), or NULL.
 */
static struct rid *
listener_find(const struct droce_cm_id *listen, const struct droce_cm_ip_info *ip)
{
	struct droce_cm_bind b;
	unsigned int i;

	for (i = 0; i < CM_MAX_IDS; i++) {
		struct rid *l = &g.rids[i];

		if (l->owner == NULL || l->cmid != listen)
			continue;
		rid_bind_view(l, &b);
		if (droce_cm_bind_takes(&b, ip))
			return l;
	}
	return NULL;
}

/* A REQ for listener @p l: a new rdma_cm id, and CONNECT_REQUEST. */
static void
req_received(struct rid *l, struct droce_cm_id *id, const struct droce_cm_event *e,
	     const struct droce_cm_ip_info *hdr)
{
	const struct droce_cm_req_info *req = &e->msg->req;
	struct droce_ctrl_cm_event ev = { .event = DROCE_CM_EVENT_CONNECT_REQUEST };
	const struct droce_cm_ip_info ip = *hdr;
	struct rid *c;
	uint16_t reason = DROCE_CM_REJ_CONSUMER_DEFINED;

	if (l->qp_type == IBV_QPT_UD) {
		CMC(WRONG_QP_TYPE);	/* a UD listener takes SIDR_REQs only, as Linux's */
		goto reject;
	}
	if (listener_pending(l) >= l->backlog) {
		g.cm.cnt[DROCE_CM_CNT_BACKLOG_FULL]++;	/* lib/cm's bound is the port's */
		reason = DROCE_CM_REJ_NO_RESOURCES;
		goto reject;
	}
	c = rid_alloc(l->owner, l->uctx, l->ps, l->qp_type);
	if (c == NULL) {
		CMC(REQ_NO_ID);
		reason = DROCE_CM_REJ_NO_RESOURCES;
		goto reject;
	}
	c->passive = true;
	c->bound = c->addr_resolved = c->route_resolved = true;
	c->src.family = c->dst.family = ip.ip_version == 4 ? AF_INET : AF_INET6;
	c->src.port = l->src.port;
	memcpy(c->src.gid, ip.dst, 16);
	c->dst.port = ip.src_port;
	memcpy(c->dst.gid, ip.src, 16);
	c->cmid = id;
	c->listener = l;
	c->peer_rr = (uint8_t)req->responder_resources;
	c->peer_depth = (uint8_t)req->initiator_depth;
	id->context = c;

	ev.uctx = l->uctx;
	ev.id = rid_handle(c);
	ev.listen_id = rid_handle(l);
	ev.qpn = req->local_qpn;
	/* the receiver's view, as Linux's ib_cm swaps them (cm_format_req_event) */
	ev.responder_resources = (uint8_t)req->initiator_depth;
	ev.initiator_depth = (uint8_t)req->responder_resources;
	ev.rnr_retry_count = req->rnr_retry_count;
	ev.retry_count = (uint8_t)req->retry_count;
	ev.srq = req->srq;
	ev.flow_control = (uint8_t)req->flow_control;
	ev.ece_vendor_id = id->conn.remote_ece.vendor_id;
	ev.ece_options = id->conn.remote_ece.options;
	/* all of the REQ's after the header (56 bytes), as Linux reports it */
	ev_pdata(&ev, e->pdata + DROCE_CMA_HDR_BYTES, e->pdata_len - DROCE_CMA_HDR_BYTES);
	emit(c, &ev);
	return;

reject:
	(void)droce_cm_reject(id, reason, NULL, 0, NULL, 0, g.now);
	droce_cm_id_destroy(id, g.now);
}

/*
 * A SIDR_REQ for one of our UD listeners: a new rdma_cm id and
 * CONNECT_REQUEST; the client answers with rdma_accept (SIDR_REP with its
 * QPN and the Q_Key) or rdma_reject.
 */
static void
sidr_received(struct rid *l, struct droce_cm_id *id, const struct droce_cm_event *e,
	      const struct droce_cm_ip_info *hdr)
{
	struct droce_cm_sidr_rep_param refuse = { .status = DROCE_CM_SIDR_REJECT };
	struct droce_ctrl_cm_event ev = { .event = DROCE_CM_EVENT_CONNECT_REQUEST };
	const struct droce_cm_ip_info ip = *hdr;
	struct rid *c;

	if (l->qp_type != IBV_QPT_UD) {
		CMC(WRONG_QP_TYPE);	/* SIDR is for UD ids only, as Linux's */
		goto refuse;
	}
	if (l->ps == DROCE_RDMA_PS_IPOIB) {
		CMC(IPOIB);		/* Linux's listener on RoCE refuses it too */
		goto refuse;
	}
	if (listener_pending(l) >= l->backlog) {
		g.cm.cnt[DROCE_CM_CNT_BACKLOG_FULL]++;
		goto refuse;
	}
	c = rid_alloc(l->owner, l->uctx, l->ps, l->qp_type);
	if (c == NULL) {
		CMC(REQ_NO_ID);
		goto refuse;
	}
	c->passive = true;
	c->bound = c->addr_resolved = c->route_resolved = true;
	c->src.family = c->dst.family = ip.ip_version == 4 ? AF_INET : AF_INET6;
	c->src.port = l->src.port;
	memcpy(c->src.gid, ip.dst, 16);
	c->dst.port = ip.src_port;
	memcpy(c->dst.gid, ip.src, 16);
	c->cmid = id;
	c->listener = l;
	id->context = c;

	ev.uctx = l->uctx;
	ev.id = rid_handle(c);
	ev.listen_id = rid_handle(l);
	ev_ud(&ev, c->dst.gid, c->src.gid, 0, DROCE_CTRL_CM_UDP_QKEY);
	ev_pdata(&ev, e->pdata + DROCE_CMA_HDR_BYTES, e->pdata_len - DROCE_CMA_HDR_BYTES);
	emit(c, &ev);
	return;

refuse:
	(void)droce_cm_sidr_rep(id, &refuse, g.now);
	droce_cm_id_destroy(id, g.now);
}

/*
 * The answer to our SIDR_REQ, as Linux's cma_sidr_rep_handler reports it:
 * ESTABLISHED with the peer's QPN, or UNREACHABLE with the SIDR status
 * (1 unsupported, 2 reject...); the SIDR_REP's private data either way.
 */
static void
sidr_answered(struct rid *r, const struct droce_cm_event *e, struct droce_ctrl_cm_event *ev)
{
	const struct droce_cm_sidr_rep_info *rep = &e->msg->sidr_rep;

	ev_pdata(ev, e->pdata, e->pdata_len);
	if (rep->status != DROCE_CM_SIDR_SUCCESS) {
		ev->event = DROCE_CM_EVENT_UNREACHABLE;
		ev->status = rep->status;
		return;
	}
	if (r->ps == DROCE_RDMA_PS_UDP && rep->qkey != DROCE_CTRL_CM_UDP_QKEY) {
		/* Linux: not the Q_Key the id's QP has (cma_set_qkey) */
		ev->event = DROCE_CM_EVENT_ADDR_ERROR;
		ev->status = -EINVAL;
		return;
	}
	ev->event = DROCE_CM_EVENT_ESTABLISHED;
	ev_ud(ev, r->dst.gid, r->src.gid, rep->qpn, rep->qkey);
}

/*
 * A REQ or SIDR_REQ reached lib/cm's listener of its service ID: to the
 * rdma_cm listener of that port which takes its family and address. None:
 * refused as Linux refuses it (REJ Consumer Defined, SIDR Reject: its
 * cma's handler fails, and ib_cm rejects).
 */
static void
listener_dispatch(struct droce_cm_id *id, const struct droce_cm_event *e)
{
	struct droce_cm_sidr_rep_param refuse = { .status = DROCE_CM_SIDR_REJECT };
	bool sidr = e->type == DROCE_CM_EV_SIDR_REQ_RECEIVED;
	uint64_t sid = sidr ? e->msg->sidr_req.service_id : e->msg->req.service_id;
	struct droce_cm_ip_info ip;
	struct rid *l;

	if (droce_cm_ip_hdr_parse(e->pdata, e->pdata_len, sid, &ip) != 0) {
		if (sidr)
			CMC(SIDR_BAD_HDR);
		else
			CMC(REQ_BAD_HDR);
		goto refuse;
	}
	l = listener_find(e->listen, &ip);
	if (l == NULL) {
		CMC(REQ_WRONG_IP);
		goto refuse;
	}
	if (sidr)
		sidr_received(l, id, e, &ip);
	else
		req_received(l, id, e, &ip);
	return;

refuse:
	if (sidr)
		(void)droce_cm_sidr_rep(id, &refuse, g.now);
	else
		(void)droce_cm_reject(id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0, g.now);
	droce_cm_id_destroy(id, g.now);
}

static void
cm_event(void *ctx, struct droce_cm_id *id, const struct droce_cm_event *e)
{
	struct rid *r = id->context;
	struct droce_ctrl_cm_event ev = { 0 };

	(void)ctx;
	if (e->type == DROCE_CM_EV_REQ_RECEIVED || e->type == DROCE_CM_EV_SIDR_REQ_RECEIVED) {
		listener_dispatch(id, e);
		return;
	}
	if (r == NULL)
		return;
	switch (e->type) {
	case DROCE_CM_EV_REP_RECEIVED: {
		const struct droce_cm_rep_info *rep = &e->msg->rep;

		ev.event = DROCE_CM_EVENT_CONNECT_RESPONSE;
		ev.qpn = rep->local_qpn;
		/* the receiver's view, as Linux's ib_cm swaps them (cm_format_rep_event) */
		ev.responder_resources = rep->initiator_depth;
		ev.initiator_depth = rep->responder_resources;
		ev.rnr_retry_count = rep->rnr_retry_count;
		ev.srq = rep->srq;
		ev.flow_control = rep->flow_control;
		ev.ece_vendor_id = id->conn.remote_ece.vendor_id;
		ev.ece_options = id->conn.remote_ece.options;
		ev_pdata(&ev, e->pdata, e->pdata_len);
		break;
	}
	case DROCE_CM_EV_RTU_RECEIVED:
		ev.event = DROCE_CM_EVENT_ESTABLISHED;
		break;
	case DROCE_CM_EV_REJ_RECEIVED:
		ev.event = DROCE_CM_EVENT_REJECTED;
		ev.status = e->msg->rej.reason;
		ev_pdata(&ev, e->pdata, e->pdata_len);
		break;
	case DROCE_CM_EV_REQ_ERROR:
	case DROCE_CM_EV_REP_ERROR:	/* Linux's cma reports both so */
		ev.event = DROCE_CM_EVENT_UNREACHABLE;
		ev.status = -ETIMEDOUT;
		break;
	case DROCE_CM_EV_DREQ_ERROR:
		ev.status = -ETIMEDOUT;
		/* fall through */
	case DROCE_CM_EV_DREQ_RECEIVED:
	case DROCE_CM_EV_DREP_RECEIVED:
		ev.event = DROCE_CM_EVENT_DISCONNECTED;
		break;
	case DROCE_CM_EV_TIMEWAIT_EXIT:
		ev.event = DROCE_CM_EVENT_TIMEWAIT_EXIT;
		break;
	case DROCE_CM_EV_SIDR_REP_RECEIVED:
		sidr_answered(r, e, &ev);
		break;
	case DROCE_CM_EV_SIDR_REQ_ERROR:
		ev.event = DROCE_CM_EVENT_UNREACHABLE;
		ev.status = -ETIMEDOUT;
		break;
	default:
		return;		/* MRA: the wait was extended */
	}
	emit(r, &ev);
}

static const struct droce_cm_ops cm_ops = {
	.send = cm_send,
	.event = cm_event,
	/* clients move their QPs themselves (CM_INIT_QP_ATTR) */
};

static void
gsi_rx(void *arg, const struct droce_pkt *pkt, const uint8_t *payload, uint32_t len,
       uint64_t now)
{
	struct droce_cm_addr from;

	(void)arg;
	memset(&from, 0, sizeof(from));
	memcpy(from.local_gid, pkt->dgid, 16);
	memcpy(from.remote_gid, pkt->sgid, 16);
	from.remote_qpn = pkt->deth.sqpn;
	from.pkey = pkt->pkey;
	from.tclass = pkt->tclass;
	from.flow_label = pkt->flow_label;
	g.now = now;
	(void)droce_cm_rx(&g.cm, &from, payload, len, now);	/* refusals are counted */
}

/* ---- QP attributes ---- */

static int
init_qp_attr(struct rid *r, uint32_t state, struct droce_ctrl_cm_init_qp_attr_rep *out)
{
	struct ibv_qp_attr *a = &out->attr;
	struct droce_cm_qp_attr ca;
	int idx;

	memset(out, 0, sizeof(*out));
	if (state == IBV_QPS_INIT) {
		uint8_t rr = 0;

		if (r->cmid != NULL)
			rr = r->passive ? r->peer_depth : r->cmid->conn.responder_resources;
		a->qp_state = IBV_QPS_INIT;
		a->pkey_index = 0;
		a->port_num = 1;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (rr > 0)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		out->mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		if (r->qp_type == IBV_QPT_UD) {
			a->qkey = 0x01234567;	/* RDMA_UDP_QKEY */
			out->mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		}
		return 0;
	}
	if (r->qp_type == IBV_QPT_UD && (state == IBV_QPS_RTR || state == IBV_QPS_RTS)) {
		/* a UD QP needs no peer: RTR and RTS at once, as rdma_create_qp moves it */
		a->qp_state = (enum ibv_qp_state)state;
		out->mask = IBV_QP_STATE;
		if (state == IBV_QPS_RTS) {
			a->sq_psn = r->psn;
			out->mask |= IBV_QP_SQ_PSN;
		}
		return 0;
	}
	if (r->cmid == NULL || (state != IBV_QPS_RTR && state != IBV_QPS_RTS))
		return EINVAL;
	if (droce_cm_qp_attr(r->cmid, state == IBV_QPS_RTR ? DROCE_CM_QP_RTR : DROCE_CM_QP_RTS,
			     &ca) != 0)
		return EINVAL;
	if (state == IBV_QPS_RTR) {
		idx = gid_index(ca.path.sgid);
		if (idx < 0)
			return EINVAL;
		a->qp_state = IBV_QPS_RTR;
		a->path_mtu = ca.path_mtu;
		a->dest_qp_num = ca.dest_qpn;
		/* the PSN our REQ or REP carries: the passive side moves its
		 * QP before its REP exists (Linux's rdma_init_qp_attr also
		 * sets rq_psn from the id's own PSN) */
		a->rq_psn = r->psn;
		/* what the peer's REQ offered, never more than the device has */
		a->max_dest_rd_atomic = DROCE_MIN(r->passive ? r->peer_depth : ca.max_dest_rd_atomic,
						  DROCE_MAX_QP_RD_ATOM);
		a->min_rnr_timer = CM_MIN_RNR_TIMER;
		a->ah_attr.is_global = 1;
		memcpy(a->ah_attr.grh.dgid.raw, ca.path.dgid, 16);
		a->ah_attr.grh.sgid_index = (uint8_t)idx;
		a->ah_attr.grh.hop_limit = ca.path.hop_limit ? ca.path.hop_limit : 64;
		a->ah_attr.grh.traffic_class = ca.path.tclass;
		a->ah_attr.grh.flow_label = ca.path.flow_label;
		a->ah_attr.port_num = 1;
		out->mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	}
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = ca.sq_psn;
	a->timeout = ca.timeout;
	a->retry_cnt = ca.retry_cnt;
	a->rnr_retry = ca.rnr_retry;
	a->max_rd_atomic = DROCE_MIN(r->passive ? r->peer_rr : ca.max_rd_atomic,
				     DROCE_MAX_QP_RD_ATOM);
	out->mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

/* ---- connect, accept ---- */

static int rid_sidr_req(struct rid *r, const struct droce_ctrl_cm_conn *q);

/*
 * An idle id starting to connect (a REQ or a SIDR_REQ): its CM id, and
 * the private data to send: Linux's cma header, then the caller's.
 */
static int
conn_start(struct rid *r, const struct droce_ctrl_cm_conn *q, uint8_t *pdata, size_t cap)
{
	struct droce_cm_ip_info ip;

	/* connecting or connected already: EINVAL, as Linux's cma answers
	 * (its rdma_connect wants a resolved route; rdma_connect(3) names no
	 * errno; the verbs model found EISCONN here) */
	if (r->cmid != NULL && r->cmid->state != DROCE_CM_IDLE)
		return EINVAL;
	if (r->cmid == NULL && droce_cm_id_create(&g.cm, r, &r->cmid) < 0)
		return ENOMEM;
	memset(&ip, 0, sizeof(ip));
	ip.ip_version = r->dst.family == AF_INET ? 4 : 6;
	memcpy(ip.src, r->src.gid, 16);
	memcpy(ip.dst, r->dst.gid, 16);
	ip.src_port = r->src.port;
	ip.dst_port = r->dst.port;
	ip.ps = r->ps;
	memset(pdata, 0, cap);
	if (droce_cm_ip_hdr_build(&ip, pdata, cap) < 0)
		return EINVAL;
	memcpy(pdata + DROCE_CMA_HDR_BYTES, q->pdata, q->pdata_len);
	return 0;
}

static int
rid_connect(struct rid *r, const struct droce_ctrl_cm_conn *q)
{
	struct droce_cm_req_param p;
	uint8_t pdata[DROCE_CM_REQ_PDATA_BYTES];
	int ret;

	if (!r->route_resolved || r->passive)
		return EINVAL;
	if (r->qp_type == IBV_QPT_UD)
		return rid_sidr_req(r, q);
	if (q->pdata_len > DROCE_CM_IP_REQ_PDATA_MAX)
		return EINVAL;
	if (!droce_dev_qpn_of_pid(g.d->dev, q->qpn, r->owner->pid))
		return EINVAL;
	ret = conn_start(r, q, pdata, sizeof(pdata));
	if (ret != 0)
		return ret;

	memset(&p, 0, sizeof(p));
	p.service_id = droce_cm_ip_service_id(r->ps, r->dst.port);
	memcpy(p.path.sgid, r->src.gid, 16);
	memcpy(p.path.dgid, r->dst.gid, 16);
	p.path.hop_limit = 64;
	p.path.pkey = 0xffff;
	p.path.mtu = (uint8_t)droce_dev_active_mtu(g.d->dev);
	p.path.packet_life_time = CM_PACKET_LIFETIME;
	p.path.local_ack_timeout = CM_PACKET_LIFETIME + 1;
	p.qpn = q->qpn;
	p.transport = r->qp_type == IBV_QPT_UC ? DROCE_CM_TRANSPORT_UC : DROCE_CM_TRANSPORT_RC;
	p.starting_psn = r->psn;
	p.responder_resources = q->responder_resources;
	p.initiator_depth = q->initiator_depth;
	p.remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	p.local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	/* 3-bit fields: Linux's cma clamps (fio asks for 10 and gets 7) */
	p.retry_count = DROCE_MIN(q->retry_count, 7);
	p.rnr_retry_count = DROCE_MIN(q->rnr_retry_count, 7);
	p.max_cm_retries = CM_MAX_RETRIES;
	p.srq = q->srq != 0;
	p.flow_control = q->flow_control != 0;
	p.ece.vendor_id = q->ece_vendor_id;
	p.ece.options = q->ece_options;
	p.pdata = pdata;
	p.pdata_len = (uint8_t)(DROCE_CMA_HDR_BYTES + q->pdata_len);
	ret = droce_cm_connect(r->cmid, &p, g.now);
	return ret < 0 ? -ret : 0;
}

/* A UD id's "connect": a SIDR_REQ with the cma header, as Linux's cma sends it. */
static int
rid_sidr_req(struct rid *r, const struct droce_ctrl_cm_conn *q)
{
	struct droce_cm_sidr_req_param p;
	uint8_t pdata[DROCE_CM_SIDR_REQ_PDATA_BYTES];
	int ret;

	if (q->pdata_len > DROCE_CM_IP_SIDR_REQ_PDATA_MAX)
		return EINVAL;
	ret = conn_start(r, q, pdata, sizeof(pdata));
	if (ret != 0)
		return ret;

	memset(&p, 0, sizeof(p));
	p.service_id = droce_cm_ip_service_id(r->ps, r->dst.port);
	memcpy(p.addr.local_gid, r->src.gid, 16);
	memcpy(p.addr.remote_gid, r->dst.gid, 16);
	p.addr.remote_qpn = 1;
	p.addr.pkey = 0xffff;
	p.addr.hop_limit = 64;
	p.timeout = CM_RESPONSE_TIMEOUT;
	p.max_cm_retries = CM_MAX_RETRIES;
	p.pdata = pdata;
	p.pdata_len = (uint8_t)(DROCE_CMA_HDR_BYTES + q->pdata_len);
	ret = droce_cm_sidr_req(r->cmid, &p, g.now);
	return ret < 0 ? -ret : 0;
}

/* Answer the SIDR_REQ a passive UD id holds: @p status, our QPN, the Q_Key. */
static int
rid_sidr_rep(struct rid *r, uint8_t status, const struct droce_ctrl_cm_conn *q)
{
	struct droce_cm_sidr_rep_param p;
	int ret;

	if (!r->passive || r->cmid == NULL || q->pdata_len > DROCE_CM_IP_SIDR_REP_PDATA_MAX)
		return EINVAL;
	if (status == DROCE_CM_SIDR_SUCCESS && !droce_dev_qpn_of_pid(g.d->dev, q->qpn, r->owner->pid))
		return EINVAL;
	memset(&p, 0, sizeof(p));
	p.status = status;
	if (status == DROCE_CM_SIDR_SUCCESS) {
		p.qpn = q->qpn;
		p.qkey = DROCE_CTRL_CM_UDP_QKEY;
	}
	p.pdata = q->pdata;
	p.pdata_len = q->pdata_len;
	ret = droce_cm_sidr_rep(r->cmid, &p, g.now);
	return ret < 0 ? -ret : 0;
}

static int
rid_accept(struct rid *r, const struct droce_ctrl_cm_conn *q)
{
	struct droce_cm_rep_param p;
	int ret;

	if (r->qp_type == IBV_QPT_UD)
		return rid_sidr_rep(r, DROCE_CM_SIDR_SUCCESS, q);
	if (!r->passive || r->cmid == NULL || q->pdata_len > DROCE_CM_IP_REP_PDATA_MAX)
		return EINVAL;
	if (!droce_dev_qpn_of_pid(g.d->dev, q->qpn, r->owner->pid))
		return EINVAL;
	memset(&p, 0, sizeof(p));
	p.qpn = q->qpn;
	p.starting_psn = r->psn;
	p.responder_resources = q->responder_resources;
	p.initiator_depth = q->initiator_depth;
	p.target_ack_delay = 0;
	p.rnr_retry_count = DROCE_MIN(q->rnr_retry_count, 7);	/* clamped, as Linux's */
	p.srq = q->srq != 0;
	p.flow_control = q->flow_control != 0;
	p.ece.vendor_id = q->ece_vendor_id;
	p.ece.options = q->ece_options;
	p.pdata = q->pdata;
	p.pdata_len = q->pdata_len;
	ret = droce_cm_accept(r->cmid, &p, g.now);
	return ret < 0 ? -ret : 0;
}

/* ---- multicast ---- */

/*
 * Join @p q's group: droced keeps no state for it, the client attaches its
 * QP (ibv_attach_mcast: the IGMP / MLD report). The group's MGID is its
 * address in GID form (IPv4-mapped for IPv4), as Linux's cma makes it on
 * RoCE; the id needs a source address of the group's family.
 */
static int
rid_join(struct rid *r, const struct droce_ctrl_cm_join_req *q)
{
	struct droce_ctrl_cm_event ev = { .event = DROCE_CM_EVENT_MULTICAST_JOIN };

	if (r->qp_type != IBV_QPT_UD || r->passive)
		return EINVAL;
	if (!addr_ok(&q->addr) || !droce_gid_is_mcast(q->addr.gid))
		return EINVAL;
	if (!r->bound || gid_is_any(r->src.gid))
		return EINVAL;		/* rdma_resolve_addr or rdma_bind_addr first */
	if (droce_gid_is_ipv4(q->addr.gid) != droce_gid_is_ipv4(r->src.gid))
		return EAFNOSUPPORT;
	ev_ud(&ev, q->addr.gid, r->src.gid, 0xffffff, DROCE_CTRL_CM_UDP_QKEY);
	ev.mc = q->mc;
	CMC(MCAST_JOINS);
	emit(r, &ev);
	return 0;
}

/* ---- requests ---- */

static struct cm_client *
client_find(struct droce_client *cl)
{
	unsigned int i;

	for (i = 0; i < CM_MAX_CLIENTS; i++)
		if (g.clients[i].cl == cl)
			return &g.clients[i];
	return NULL;
}

/*
 * Our own open of the pipe read end @p fd (not the client's description:
 * its O_NONBLOCK is its own), non-blocking, to take back an id's unread
 * events when it migrates. -1 if it cannot be had.
 */
static int
open_event_reader(int fd)
{
	char path[64];

	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

static int
cm_hello(struct droce_client *cl, const struct droce_ctrl_cm_hello_req *q, int fd, int rd_fd,
	 struct droce_ctrl_cm_hello_rep *rep)
{
	struct cm_client *c;

	if (fd < 0 || client_find(cl) != NULL)
		return -EPROTO;
	c = client_find(NULL);
	if (c == NULL)
		return EMFILE;
	c->ev_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (c->ev_fd < 0)
		return EMFILE;
	(void)fcntl(c->ev_fd, F_SETFL, O_NONBLOCK);	/* a client that does not read loses its own */
	c->ev_rd = open_event_reader(rd_fd);
	c->cl = cl;
	c->pid = droce_dev_client_pid(cl);	/* the kernel's word, not the client's */
	(void)q;
	rep->node_guid = htobe64(g.d->conf.node_guid);
	return 0;
}

/* Whose an event is: a CONNECT_REQUEST the listener's, any other its id's. */
static uint32_t
event_owner_id(const struct droce_ctrl_cm_event *ev)
{
	return ev->event == DROCE_CM_EVENT_CONNECT_REQUEST ? ev->listen_id : ev->id;
}

/*
 * The events of id @p handle written to @p from's pipe and not read yet go
 * to @p to's, as Linux's ucma_migrate_id moves them; the others are written
 * back to @p from's in their order. Nothing else writes these pipes
 * meanwhile (the CM runs here alone); a client thread reading @p from's
 * channel at this moment gets the others in their order.
 */
static void
move_unread_events(struct cm_client *from, struct cm_client *to, uint32_t handle)
{
	struct droce_ctrl_cm_event ev, *keep = NULL, *grown;
	size_t n = 0, cap = 0, i;

	if (from->ev_rd < 0)
		return;
	while (read(from->ev_rd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev)) {
		if (event_owner_id(&ev) == handle) {
			if (write(to->ev_fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
				CMC(EVENTS_LOST);
			continue;
		}
		if (n == cap) {
			cap = cap != 0 ? 2 * cap : 16;
			grown = realloc(keep, cap * sizeof(*keep));
			if (grown == NULL) {
				CMC(EVENTS_LOST);
				continue;
			}
			keep = grown;
		}
		keep[n++] = ev;
	}
	for (i = 0; i < n; i++)
		if (write(from->ev_fd, &keep[i], sizeof(keep[i])) != (ssize_t)sizeof(keep[i]))
			CMC(EVENTS_LOST);
	free(keep);
}

/* Move id @p handle of another connection of the same process to @p c. */
static int
rid_migrate(struct cm_client *c, uint32_t handle)
{
	struct rid *r = rid_lookup(handle);
	struct cm_client *from;

	if (r == NULL || c->pid == 0 || r->owner->pid != c->pid)
		return EINVAL;		/* another process's ids are not for taking */
	from = r->owner;
	r->owner = c;
	if (from != c)
		move_unread_events(from, c, handle);
	return 0;
}

static const uint32_t cm_req_len[] = {
#define L(sym, type) [DROCE_CTRL_##sym - DROCE_CTRL_CM_BASE] = sizeof(type),
	L(CM_HELLO, struct droce_ctrl_cm_hello_req)
	L(CM_CREATE_ID, struct droce_ctrl_cm_create_id_req)
	L(CM_DESTROY_ID, struct droce_ctrl_cm_id)
	L(CM_BIND, struct droce_ctrl_cm_bind_req)
	L(CM_RESOLVE_ADDR, struct droce_ctrl_cm_resolve_addr_req)
	L(CM_RESOLVE_ROUTE, struct droce_ctrl_cm_id)
	L(CM_LISTEN, struct droce_ctrl_cm_id)
	L(CM_CONNECT, struct droce_ctrl_cm_conn)
	L(CM_ACCEPT, struct droce_ctrl_cm_conn)
	L(CM_REJECT, struct droce_ctrl_cm_conn)
	L(CM_DISCONNECT, struct droce_ctrl_cm_id)
	L(CM_ESTABLISH, struct droce_ctrl_cm_id)
	L(CM_INIT_QP_ATTR, struct droce_ctrl_cm_init_qp_attr_req)
	L(CM_QUERY, struct droce_ctrl_cm_id)
	L(CM_MIGRATE_ID, struct droce_ctrl_cm_id)
	L(CM_JOIN_MCAST, struct droce_ctrl_cm_join_req)
#undef L
};

_Static_assert(DROCE_DIM(cm_req_len) == DROCE_CTRL_CM_END - DROCE_CTRL_CM_BASE,
	       "a length for every CM message");

int
droced_cm_request(struct droced *d, struct droce_client *cl, const struct droce_ctrl_hdr *hdr,
		  const void *body, const int *fds, unsigned int nfds, void *rep,
		  uint32_t *rep_len)
{
	const struct droce_ctrl_cm_id *h = body;
	struct cm_client *c;
	struct rid *r = NULL;
	int ret;

	(void)d;
	*rep_len = 0;
	g.now = droce_now_ns();
	if (!droce_ctrl_is_cm(hdr->type) || hdr->len != cm_req_len[hdr->type - DROCE_CTRL_CM_BASE])
		return -EPROTO;
	if (hdr->type == DROCE_CTRL_CM_HELLO) {
		*rep_len = sizeof(struct droce_ctrl_cm_hello_rep);
		return cm_hello(cl, body, nfds > 0 ? fds[0] : -1, nfds > 1 ? fds[1] : -1, rep);
	}
	c = client_find(cl);
	if (c == NULL)
		return -EPROTO;		/* CM_HELLO comes first */
	if (hdr->type == DROCE_CTRL_CM_CREATE_ID) {
		const struct droce_ctrl_cm_create_id_req *q = body;
		struct droce_ctrl_cm_id *out = rep;

		if (q->ps != DROCE_RDMA_PS_TCP && q->ps != DROCE_RDMA_PS_UDP &&
		    q->ps != DROCE_RDMA_PS_IB && q->ps != DROCE_RDMA_PS_IPOIB)
			return EPROTONOSUPPORT;
		if (q->qp_type == IBV_QPT_XRC_SEND || q->qp_type == IBV_QPT_XRC_RECV)
			return EOPNOTSUPP;	/* droce has no XRC (doc/cm.md) */
		if (q->qp_type != IBV_QPT_RC && q->qp_type != IBV_QPT_UC &&
		    q->qp_type != IBV_QPT_UD)
			return EINVAL;
		r = rid_alloc(c, q->uctx, (uint16_t)q->ps, q->qp_type);
		if (r == NULL)
			return ENOMEM;
		memset(out, 0, sizeof(*out));
		out->id = rid_handle(r);
		*rep_len = sizeof(*out);
		return 0;
	}
	if (hdr->type == DROCE_CTRL_CM_MIGRATE_ID)
		return rid_migrate(c, h->id);
	/* every other message names an id first */
	r = rid_get(c, h->id);
	if (r == NULL)
		return EINVAL;

	switch (hdr->type) {
	case DROCE_CTRL_CM_DESTROY_ID:
		rid_free(r);
		return 0;
	case DROCE_CTRL_CM_BIND: {
		const struct droce_ctrl_cm_bind_req *q = body;
		struct droce_ctrl_cm_bind_rep *out = rep;
		struct droce_ctrl_cm_addr a = q->addr;

		loopback_as_any(&a);
		ret = rid_bind(r, &a, q->flags & (DROCE_CTRL_CM_BIND_REUSEADDR |
						   DROCE_CTRL_CM_BIND_AFONLY |
						   DROCE_CTRL_CM_BIND_AFONLY_SET));
		if (ret == 0) {
			out->addr = r->src;
			*rep_len = sizeof(*out);
		}
		return ret;
	}
	case DROCE_CTRL_CM_RESOLVE_ADDR:
		return rid_resolve_addr(r, body);
	case DROCE_CTRL_CM_RESOLVE_ROUTE:
		/* an address resolved, no connection begun: Linux's cma refuses
		 * it otherwise (EINVAL), a connect request's id too (the verbs
		 * model found it accepted on a connected passive id) */
		if (!r->addr_resolved || r->passive || r->cmid != NULL)
			return EINVAL;
		r->route_resolved = true;	/* one port, one hop: the address said it all */
		emit_simple(r, DROCE_CM_EVENT_ROUTE_RESOLVED, 0);
		return 0;
	case DROCE_CTRL_CM_LISTEN:
		return rid_listen(r, h->arg);
	case DROCE_CTRL_CM_CONNECT:
		return rid_connect(r, body);
	case DROCE_CTRL_CM_ACCEPT:
		return rid_accept(r, body);
	case DROCE_CTRL_CM_REJECT: {
		const struct droce_ctrl_cm_conn *q = body;

		if (r->qp_type == IBV_QPT_UD)
			return rid_sidr_rep(r, DROCE_CM_SIDR_REJECT, q);
		/* Linux's ucma lets applications send these two reasons only */
		if (r->cmid == NULL || q->pdata_len > DROCE_CM_IP_REJ_PDATA_MAX ||
		    (q->rej_reason != 0 && q->rej_reason != DROCE_CM_REJ_CONSUMER_DEFINED &&
		     q->rej_reason != DROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED))
			return EINVAL;
		ret = droce_cm_reject(r->cmid, q->rej_reason ? q->rej_reason :
				      DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, q->pdata,
				      q->pdata_len, g.now);
		return ret < 0 ? -ret : 0;
	}
	case DROCE_CTRL_CM_DISCONNECT:
		/* never connected: EINVAL, as Linux's cma answers (rdma_disconnect(3)
		 * names no errno; the verbs model's differential run found ENOTCONN) */
		if (r->cmid == NULL)
			return EINVAL;
		ret = droce_cm_disconnect(r->cmid, NULL, 0, g.now);
		return ret < 0 ? ENOTCONN : 0;
	case DROCE_CTRL_CM_ESTABLISH:
		if (r->cmid == NULL)
			return EINVAL;
		if (h->arg == 1) {	/* rdma_notify(COMM_EST): the passive side's RTU stand-in */
			if (!r->passive)
				return EINVAL;
			if (r->cmid->state == DROCE_CM_ESTABLISHED)
				return EISCONN;
			ret = droce_cm_establish(r->cmid, g.now);
			if (ret == 0)
				emit_simple(r, DROCE_CM_EVENT_ESTABLISHED, 0);
			return ret < 0 ? -ret : 0;
		}
		ret = r->passive ? droce_cm_establish(r->cmid, g.now) :
				   droce_cm_send_rtu(r->cmid, NULL, 0, g.now);
		return ret < 0 ? -ret : 0;
	case DROCE_CTRL_CM_INIT_QP_ATTR: {
		const struct droce_ctrl_cm_init_qp_attr_req *q = body;

		ret = init_qp_attr(r, q->qp_state, rep);
		if (ret == 0)
			*rep_len = sizeof(struct droce_ctrl_cm_init_qp_attr_rep);
		return ret;
	}
	case DROCE_CTRL_CM_JOIN_MCAST:
		return rid_join(r, body);
	case DROCE_CTRL_CM_QUERY: {
		struct droce_ctrl_cm_query_rep *out = rep;

		memset(out, 0, sizeof(*out));
		out->src = r->src;
		out->dst = r->dst;
		memcpy(out->sgid, r->src.gid, 16);
		memcpy(out->dgid, r->dst.gid, 16);
		out->pkey = 0xffff;
		out->mtu = (uint8_t)droce_dev_active_mtu(g.d->dev);
		out->hop_limit = 64;
		out->route_resolved = r->route_resolved;
		out->ps = r->ps;
		out->qp_type = r->qp_type;
		*rep_len = sizeof(*out);
		return 0;
	}
	default:
		return EOPNOTSUPP;
	}
}

void
droced_cm_client_gone(struct droced *d, struct droce_client *cl)
{
	struct cm_client *c = client_find(cl);
	unsigned int i;

	(void)d;
	if (c == NULL || cl == NULL)
		return;
	g.now = droce_now_ns();
	/* its peers get a REJ or a DREQ: lib/cm ends what was under way */
	for (i = 0; i < CM_MAX_IDS; i++)
		if (g.rids[i].owner == c)
			rid_free(&g.rids[i]);
	close(c->ev_fd);
	if (c->ev_rd >= 0)
		close(c->ev_rd);
	memset(c, 0, sizeof(*c));
	c->ev_fd = -1;
	c->ev_rd = -1;
}

unsigned int
droced_cm_poll(struct droced *d, uint64_t now)
{
	uint64_t next;
	unsigned int i;

	(void)d;
	g.now = now;
	if (now < g.next_timer_scan)
		return 0;
	g.next_timer_scan = now + CM_TIMER_SCAN_NS;
	next = droce_cm_next_timer(&g.cm);
	if (next != 0 && now >= next)
		droce_cm_timer(&g.cm, now);
	if (now >= g.next_resolve) {
		g.next_resolve = now + CM_RESOLVE_NS;
		for (i = 0; i < CM_MAX_IDS; i++)
			if (g.rids[i].owner != NULL && g.rids[i].resolve_deadline != 0)
				resolve_check(&g.rids[i]);
		held_retry();
	}
	return 0;
}

unsigned int
droced_cm_counters(const char **names, uint64_t *values, unsigned int max)
{
	unsigned int n = 0, i;
	uint64_t ids = 0, listeners = 0;

	for (i = 0; i < CM_MAX_IDS; i++) {
		ids += g.rids[i].owner != NULL;
		listeners += g.rids[i].cmid != NULL && g.rids[i].cmid->state == DROCE_CM_LISTEN;
	}
	/* gauges first: tests wait for a listener before starting a client */
	if (n + 2 <= max) {
		names[n] = "IDS";
		values[n++] = ids;
		names[n] = "LISTENERS";
		values[n++] = listeners;
	}

	for (i = 0; i < CMC_COUNT && n < max; i++, n++) {
		names[n] = cm_counter_name[i];
		values[n] = g.cnt[i];
	}
	for (i = 0; i < DROCE_CM_CNT_COUNT && n < max; i++, n++) {
		names[n] = droce_cm_counter_name[i];
		values[n] = g.cm.cnt[i];
	}
	for (i = 1; i < DROCE_CM_DROP_COUNT && n < max; i++, n++) {
		names[n] = droce_cm_drop_name((enum droce_cm_drop)i);
		values[n] = g.cm.drops[i];
	}
	return n;
}

/* A QPN still in one of lib/cm's connections (TIMEWAIT included) is not handed out. */
static bool
qpn_held(void *arg, uint32_t qpn)
{
	(void)arg;
	return droce_cm_qpn_held(&g.cm, qpn);
}

int
droced_cm_init(struct droced *d)
{
	struct droce_cm_config cfg = {
		.ca_guid = d->conf.node_guid,
		.mra_service_timeout = CM_MRA_TIMEOUT,
	};
	unsigned int i;
	int ret;

	g.d = d;
	srandom((unsigned int)(droce_now_ns() ^ (uint64_t)getpid()));	/* comm IDs, PSNs, ports */
	/* after srandom: a restarted droced must not hand out the comm IDs
	 * and TIDs of the last run (it did: random()'s unseeded first value) */
	cfg.comm_id_seed = (uint32_t)random();
	for (i = 0; i < CM_MAX_CLIENTS; i++) {
		g.clients[i].ev_fd = -1;
		g.clients[i].ev_rd = -1;
	}
	g.next_port = (uint16_t)random();
	ret = droce_cm_init(&g.cm, &cfg, g.ids, CM_MAX_IDS, &cm_ops, d);
	if (ret < 0)
		return ret;
	droce_dev_gsi_set(d->dev, gsi_rx, d);
	droce_dev_qpn_held_set(d->dev, qpn_held, NULL);
	return 0;
}
