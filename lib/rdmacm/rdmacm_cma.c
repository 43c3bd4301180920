/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_cma.h over droced: event channels, ids, addresses, connections and
 * their events. Each event channel is a control connection to droced (the
 * CM messages of droce_ctrl_cm.h) and a pipe whose read end is the
 * channel's fd and whose write end droced holds: channels poll, block or
 * not (O_NONBLOCK on the fd), as rdma-core's do.
 *
 * QPs are the application's, made with the public libibverbs API (the verbs
 * shim under droce-run). As rdma-core's librdmacm does with the kernel's
 * CM, this library moves an id's QP itself with the attributes droced
 * returns (CM_INIT_QP_ATTR): INIT at rdma_create_qp, RTR and RTS before the
 * REP (rdma_accept) or the RTU (on CONNECT_RESPONSE), ERR at
 * rdma_disconnect.
 *
 * UD ids (RDMA_PS_UDP) "connect" through SIDR: their QP goes to RTS at
 * rdma_create_qp, rdma_accept answers without waiting, and the active
 * side's ESTABLISHED carries param.ud (multicast: rdmacm_mcast.c).
 *
 * An id made with a NULL channel is synchronous, as in rdma-core: it gets a
 * channel of its own, and rdma_resolve_addr, rdma_resolve_route,
 * rdma_connect, rdma_accept and rdma_disconnect return once their event has
 * come (kept in id->event until the next call). The new ids of a
 * synchronous listener are moved to channels of their own (CM_MIGRATE_ID).
 * An id on a device gets the device's PD (made once per process) as
 * id->pd, and rdma_create_qp makes the CQs it is not given, each with a
 * completion channel, as rdma_verbs.h's helpers expect.
 *
 * Threads: calls on one channel are serialised by its lock (an
 * application may read events in one thread and accept in another, as
 * rping does); reading the pipe is done without it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "droce_ctrl.h"
#include "rdmacm_priv.h"

_Static_assert((int)DROCE_CM_EVENT_TIMEWAIT_EXIT == (int)RDMA_CM_EVENT_TIMEWAIT_EXIT, "event values");
_Static_assert((int)DROCE_CM_EVENT_CONNECT_REQUEST == (int)RDMA_CM_EVENT_CONNECT_REQUEST, "event values");

/* ---- the device ---- */

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *dev_ctx;
static struct ibv_pd *dev_pd;

/* The verbs context ids live on: droce's one device, opened once. */
static struct ibv_context *
rdmacm_verbs(void)
{
	struct ibv_device **list;
	int n;

	pthread_mutex_lock(&dev_lock);
	if (dev_ctx == NULL) {
		list = ibv_get_device_list(&n);
		if (list != NULL && n > 0)
			dev_ctx = ibv_open_device(list[0]);
		if (list != NULL)
			ibv_free_device_list(list);
	}
	pthread_mutex_unlock(&dev_lock);
	return dev_ctx;
}

/* The PD of ids given none (rdma-core's per-device PD), kept like the context. */
static struct ibv_pd *
rdmacm_pd(struct ibv_context *ctx)
{
	pthread_mutex_lock(&dev_lock);
	if (dev_pd == NULL)
		dev_pd = ibv_alloc_pd(ctx);
	pthread_mutex_unlock(&dev_lock);
	return dev_pd;
}

/* The id is on droce's device (port 1): its context and, unless it has one, the PD. */
static int
id_on_device(struct rdma_cm_id *id)
{
	id->verbs = rdmacm_verbs();
	if (id->verbs == NULL)
		return ENODEV;
	id->port_num = 1;
	if (id->pd == NULL)
		id->pd = rdmacm_pd(id->verbs);
	return id->pd != NULL ? 0 : ENOMEM;
}

RDMACM_EXPORT struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(2, sizeof(*list));

	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	list[0] = rdmacm_verbs();
	if (num_devices != NULL)
		*num_devices = list[0] != NULL ? 1 : 0;
	return list;
}

RDMACM_EXPORT void
rdma_free_devices(struct ibv_context **list)
{
	free(list);		/* the context stays open for the process, as rdma-core's */
}

/* ---- the control connection ---- */

static int
cm_connect(void)
{
	const char *path = getenv("DROCE_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t salen;
	size_t len;
	int fd;

	if (path == NULL || path[0] == '\0')
		path = DROCE_CTRL_SOCKET;
	len = strlen(path);
	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';		/* abstract namespace, as the shim */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '@' ? 0 : 1));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, salen) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

/* One request on @p ch's connection. @return 0 or a positive errno. */
static int
chan_call(struct rdmacm_chan *ch, uint16_t type, const void *req, uint32_t req_len, void *rep,
	  uint32_t rep_len)
{
	int ret;

	pthread_mutex_lock(&ch->lock);
	ret = droce_ctrl_call(ch->sock, type, req, req_len, NULL, 0, rep, rep_len, NULL, NULL);
	pthread_mutex_unlock(&ch->lock);
	return ret;
}

int
rdmacm_id_call(struct rdmacm_id *i, uint16_t type, void *req, uint32_t req_len, void *rep,
	       uint32_t rep_len)
{
	*(uint32_t *)req = i->handle;	/* every id request starts with the id */
	return chan_call(i->chan, type, req, req_len, rep, rep_len);
}

/* ---- event channels ---- */

RDMACM_EXPORT struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct droce_ctrl_cm_hello_req req = { .pid = (uint32_t)getpid() };
	struct droce_ctrl_cm_hello_rep rep;
	struct rdmacm_chan *ch;
	int p[2], ret;

	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->sock = cm_connect();
	if (ch->sock < 0) {
		free(ch);
		errno = ENODEV;		/* no daemon: rdma-core's word for no RDMA device */
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		ret = errno;
		goto err_sock;
	}
	/* the write end for droced, and the read end too: droced takes back an
	 * id's unread events from it when the id migrates (rdma_migrate_id) */
	ret = droce_ctrl_call(ch->sock, DROCE_CTRL_CM_HELLO, &req, sizeof(req),
			      (int[]){ p[1], p[0] }, 2, &rep, sizeof(rep), NULL, NULL);
	close(p[1]);
	if (ret != 0) {
		close(p[0]);
		goto err_sock;
	}
	pthread_mutex_init(&ch->lock, NULL);
	ch->ch.fd = p[0];
	return &ch->ch;

err_sock:
	close(ch->sock);
	free(ch);
	errno = ret == EPIPE || ret == ECONNRESET ? ENODEV : ret;
	return NULL;
}

RDMACM_EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rdmacm_chan *ch = (struct rdmacm_chan *)channel;

	if (ch == NULL)
		return;
	atomic_store(&ch->closing, true);
	close(ch->sock);	/* droced drops every id still on it */
	close(ch->ch.fd);
	/* a thread blocked in rdma_get_cm_event keeps the channel: it wakes
	 * to the end of droced's pipe and must find it to know why */
	if (atomic_load(&ch->readers) != 0)
		return;
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

/* ---- ids ---- */

static void
chan_add(struct rdmacm_chan *ch, struct rdmacm_id *i)
{
	pthread_mutex_lock(&ch->lock);
	i->next = ch->ids;
	ch->ids = i;
	pthread_mutex_unlock(&ch->lock);
}

static void
chan_del(struct rdmacm_chan *ch, struct rdmacm_id *i)
{
	struct rdmacm_id **pp;

	pthread_mutex_lock(&ch->lock);
	for (pp = &ch->ids; *pp != NULL; pp = &(*pp)->next)
		if (*pp == i) {
			*pp = i->next;
			break;
		}
	pthread_mutex_unlock(&ch->lock);
}

static struct rdmacm_id *
chan_find(struct rdmacm_chan *ch, uint32_t handle)
{
	struct rdmacm_id *i;

	pthread_mutex_lock(&ch->lock);
	for (i = ch->ids; i != NULL && i->handle != handle; i = i->next)
		;
	pthread_mutex_unlock(&ch->lock);
	return i;
}

static struct rdmacm_id *
id_new(struct rdmacm_chan *ch, void *context, enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct rdmacm_id *i = calloc(1, sizeof(*i));

	if (i == NULL)
		return NULL;
	i->chan = ch;
	i->id.channel = &ch->ch;
	i->id.context = context;
	i->id.ps = ps;
	i->id.qp_type = qp_type;
	return i;
}

int
rdmacm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **out, void *context,
		 enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct droce_ctrl_cm_create_id_req req;
	struct droce_ctrl_cm_id rep;
	struct rdmacm_chan *ch;
	struct rdmacm_id *i;
	bool own = channel == NULL;
	int ret;

	if (out == NULL)
		return rdmacm_err(EINVAL);
	if (own) {
		channel = rdma_create_event_channel();
		if (channel == NULL)
			return -1;
	}
	ch = (struct rdmacm_chan *)channel;
	i = id_new(ch, context, ps, qp_type);
	if (i == NULL) {
		ret = ENOMEM;
		goto err_chan;
	}
	i->sync = own;
	memset(&req, 0, sizeof(req));
	req.uctx = (uint64_t)(uintptr_t)i;
	req.ps = ps;
	req.qp_type = qp_type;
	ret = chan_call(ch, DROCE_CTRL_CM_CREATE_ID, &req, sizeof(req), &rep, sizeof(rep));
	if (ret != 0)
		goto err_free;
	i->handle = rep.id;
	chan_add(ch, i);
	*out = &i->id;
	return 0;

err_free:
	free(i);
err_chan:
	if (own)
		rdma_destroy_event_channel(channel);
	return rdmacm_err(ret);
}

RDMACM_EXPORT int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	enum ibv_qp_type t = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;

	return rdmacm_create_id(channel, id, context, ps, t);
}

RDMACM_EXPORT int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_id req = { 0 };

	if (i == NULL)
		return rdmacm_err(EINVAL);
	(void)rdmacm_id_call(i, DROCE_CTRL_CM_DESTROY_ID, &req, sizeof(req), NULL, 0);
	if (id->event != NULL)
		rdma_ack_cm_event(id->event);
	chan_del(i->chan, i);
	rdmacm_mc_free_all(i);
	if (i->sync)
		rdma_destroy_event_channel(&i->chan->ch);
	free(i->ep_qp_attr);
	free(i);
	return 0;
}

/* Move @p i to @p to (NULL: a channel of its own, synchronous) through droced. */
static int
id_migrate(struct rdmacm_id *i, struct rdma_event_channel *to)
{
	struct droce_ctrl_cm_id req = { .id = i->handle };
	struct rdmacm_chan *from = i->chan;
	bool sync = to == NULL;
	int ret;

	if (sync) {
		to = rdma_create_event_channel();
		if (to == NULL)
			return errno;
	}
	ret = chan_call((struct rdmacm_chan *)to, DROCE_CTRL_CM_MIGRATE_ID, &req, sizeof(req),
			NULL, 0);
	if (ret != 0) {
		if (sync)
			rdma_destroy_event_channel(to);
		return ret;
	}
	chan_del(from, i);
	if (i->sync) {		/* its old channel was its own: nobody else reads it */
		if (i->id.event != NULL)
			rdma_ack_cm_event(i->id.event);
		i->id.event = NULL;
		rdma_destroy_event_channel(&from->ch);
	}
	i->chan = (struct rdmacm_chan *)to;
	i->id.channel = to;
	i->sync = sync;
	chan_add(i->chan, i);
	return 0;
}

/*
 * Events of @p id already read from its old channel stay there (rdma-core
 * waits for them to be acknowledged); those to come go to @p channel.
 */
RDMACM_EXPORT int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	int ret;

	if (i == NULL || (i->sync && channel == NULL))
		return rdmacm_err(EINVAL);
	ret = id_migrate(i, channel);
	return ret != 0 ? rdmacm_err(ret) : 0;
}

int
rdmacm_complete(struct rdmacm_id *i)
{
	struct rdma_cm_event *e;

	if (!i->sync)
		return 0;
	if (i->id.event != NULL)
		rdma_ack_cm_event(i->id.event);
	i->id.event = NULL;
	if (rdma_get_cm_event(&i->chan->ch, &e) != 0)
		return -1;
	i->id.event = e;
	if (e->status == 0)
		return 0;
	if (e->event == RDMA_CM_EVENT_REJECTED)
		return rdmacm_err(ECONNREFUSED);	/* status is the REJ's reason */
	return rdmacm_err(e->status < 0 ? -e->status : e->status);
}

/* ---- addresses ---- */

int
rdmacm_addr_to_ctrl(const struct sockaddr *sa, struct droce_ctrl_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa == NULL)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		a->family = AF_INET;
		a->port = ntohs(s->sin_port);
		a->gid[10] = a->gid[11] = 0xff;
		memcpy(&a->gid[12], &s->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		a->family = AF_INET6;
		a->port = ntohs(s->sin6_port);
		a->scope_id = s->sin6_scope_id;
		memcpy(a->gid, &s->sin6_addr, 16);
		return 0;
	}
	return EAFNOSUPPORT;
}

static void
addr_from_ctrl(const struct droce_ctrl_cm_addr *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(a->port);
		memcpy(&s->sin_addr, &a->gid[12], 4);
	} else if (a->family == AF_INET6) {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(a->port);
		s->sin6_scope_id = a->scope_id;
		memcpy(&s->sin6_addr, a->gid, 16);
	}
}

/* What droced knows of the id: addresses, GIDs, route; and the device. */
static int
id_query(struct rdmacm_id *i)
{
	struct droce_ctrl_cm_id req = { 0 };
	struct droce_ctrl_cm_query_rep rep;
	struct rdma_cm_id *id = &i->id;
	int ret;

	ret = rdmacm_id_call(i, DROCE_CTRL_CM_QUERY, &req, sizeof(req), &rep, sizeof(rep));
	if (ret != 0)
		return ret;
	addr_from_ctrl(&rep.src, &id->route.addr.src_storage);
	addr_from_ctrl(&rep.dst, &id->route.addr.dst_storage);
	memcpy(id->route.addr.addr.ibaddr.sgid.raw, rep.sgid, 16);
	memcpy(id->route.addr.addr.ibaddr.dgid.raw, rep.dgid, 16);
	id->route.addr.addr.ibaddr.pkey = htons(rep.pkey);
	if (rep.route_resolved) {
		memset(&i->path, 0, sizeof(i->path));
		memcpy(i->path.sgid.raw, rep.sgid, 16);
		memcpy(i->path.dgid.raw, rep.dgid, 16);
		i->path.pkey = htons(rep.pkey);
		i->path.hop_limit = rep.hop_limit;
		i->path.traffic_class = i->tos_set ? i->tos : rep.tclass;
		i->path.mtu = rep.mtu;
		i->path.mtu_selector = 2;		/* exactly */
		i->path.reversible = 1;
		i->path.numb_path = 1;
		id->route.path_rec = &i->path;
		id->route.num_paths = 1;
	}
	return id_on_device(id);
}

static bool
addr_is_any(const struct sockaddr *sa)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;

	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr == INADDR_ANY;
	return memcmp(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, &any6,
		      sizeof(any6)) == 0;
}

RDMACM_EXPORT int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_bind_req req;
	struct droce_ctrl_cm_bind_rep rep;
	int ret;

	if (i == NULL || addr == NULL)
		return rdmacm_err(EINVAL);
	memset(&req, 0, sizeof(req));
	req.flags = i->bind_flags;
	ret = rdmacm_addr_to_ctrl(addr, &req.addr);
	if (ret == 0)
		ret = rdmacm_id_call(i, DROCE_CTRL_CM_BIND, &req, sizeof(req), &rep, sizeof(rep));
	if (ret != 0)
		return rdmacm_err(ret);
	i->bound = true;
	addr_from_ctrl(&rep.addr, &id->route.addr.src_storage);
	/* a device's address: the id is on it now (droced binds a loopback
	 * address as the any-address of its family) */
	if (!addr_is_any((struct sockaddr *)&id->route.addr.src_storage)) {
		ret = id_on_device(id);
		if (ret != 0)
			return rdmacm_err(ret);
	}
	return 0;
}

RDMACM_EXPORT int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_resolve_addr_req req;
	int ret;

	if (i == NULL || dst_addr == NULL)
		return rdmacm_err(EINVAL);
	memset(&req, 0, sizeof(req));
	req.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	ret = rdmacm_addr_to_ctrl(src_addr, &req.src);
	if (ret == 0)
		ret = rdmacm_addr_to_ctrl(dst_addr, &req.dst);
	if (ret == 0)
		ret = rdmacm_id_call(i, DROCE_CTRL_CM_RESOLVE_ADDR, &req, sizeof(req), NULL, 0);
	if (ret != 0)
		return rdmacm_err(ret);
	i->bound = true;		/* droced bound it if it was not */
	addr_from_ctrl(&req.dst, &id->route.addr.dst_storage);
	return rdmacm_complete(i);
}

RDMACM_EXPORT int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_id req = { .arg = timeout_ms > 0 ? (uint32_t)timeout_ms : 0 };
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	ret = rdmacm_id_call(i, DROCE_CTRL_CM_RESOLVE_ROUTE, &req, sizeof(req), NULL, 0);
	return ret != 0 ? rdmacm_err(ret) : rdmacm_complete(i);
}

RDMACM_EXPORT int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	/* 0 or less: the most allowed, as Linux's ucma takes it (max_backlog 1024) */
	struct droce_ctrl_cm_id req = {
		.arg = backlog > 0 && backlog < 1024 ? (uint32_t)backlog : 1024,
	};
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	ret = rdmacm_id_call(i, DROCE_CTRL_CM_LISTEN, &req, sizeof(req), NULL, 0);
	if (ret != 0)
		return rdmacm_err(ret);
	i->bound = true;
	return 0;
}

RDMACM_EXPORT uint16_t
rdma_get_src_port(struct rdma_cm_id *id)
{
	return id->route.addr.src_addr.sa_family == AF_INET6 ? id->route.addr.src_sin6.sin6_port :
							       id->route.addr.src_sin.sin_port;
}

RDMACM_EXPORT uint16_t
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id->route.addr.dst_addr.sa_family == AF_INET6 ? id->route.addr.dst_sin6.sin6_port :
							       id->route.addr.dst_sin.sin_port;
}

/* ---- QPs ---- */

RDMACM_EXPORT int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_init_qp_attr_req req = { 0 };
	struct droce_ctrl_cm_init_qp_attr_rep rep;
	int ret;

	if (i == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return rdmacm_err(EINVAL);
	req.qp_state = qp_attr->qp_state;
	ret = rdmacm_id_call(i, DROCE_CTRL_CM_INIT_QP_ATTR, &req, sizeof(req), &rep, sizeof(rep));
	if (ret != 0)
		return rdmacm_err(ret);
	*qp_attr = rep.attr;
	*qp_attr_mask = (int)rep.mask;
	rdmacm_options_apply(i, qp_attr, *qp_attr_mask);
	return 0;
}

/* Move the id's QP to @p state with droced's attributes; @p rd bounds the RDMA READ depths. */
static int
qp_move(struct rdmacm_id *i, enum ibv_qp_state state, uint8_t rd)
{
	struct ibv_qp_attr a;
	int mask, ret;

	a.qp_state = state;
	if (rdma_init_qp_attr(&i->id, &a, &mask) != 0)
		return errno;
	/* a depth the application gave replaces droced's, as rdma-core's ucma_modify_qp_rtr/rts */
	if (state == IBV_QPS_RTR && rd != RDMA_MAX_RESP_RES)
		a.max_dest_rd_atomic = rd;
	if (state == IBV_QPS_RTS && rd != RDMA_MAX_INIT_DEPTH)
		a.max_rd_atomic = rd;
	ret = ibv_modify_qp(i->id.qp, &a, mask);
	return ret;
}

/*
 * INIT again (the access flags now that READ depths are known), RTR, RTS,
 * with READ depths @p resp_res and @p init_depth (RDMA_MAX_*: droced's,
 * from the REP on the active side, as rdma-core takes the kernel's there).
 */
static int
qp_ready(struct rdmacm_id *i, uint8_t resp_res, uint8_t init_depth)
{
	int ret = qp_move(i, IBV_QPS_INIT, 0);

	if (ret == 0)
		ret = qp_move(i, IBV_QPS_RTR, resp_res);
	if (ret == 0)
		ret = qp_move(i, IBV_QPS_RTS, init_depth);
	return ret;
}

static void
qp_error(struct rdmacm_id *i)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (i->id.qp != NULL)
		(void)ibv_modify_qp(i->id.qp, &a, IBV_QP_STATE);
}

static void
cqs_free(struct rdmacm_id *i)
{
	struct rdma_cm_id *id = &i->id;

	if (i->own_send_cq) {
		ibv_destroy_cq(id->send_cq);
		ibv_destroy_comp_channel(id->send_cq_channel);
	}
	if (i->own_recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		ibv_destroy_comp_channel(id->recv_cq_channel);
	}
	i->own_send_cq = i->own_recv_cq = false;
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

/* A CQ of @p cqe entries with a completion channel of its own. @return 0 or an errno. */
static int
cq_make(struct rdma_cm_id *id, int cqe, struct ibv_cq **cq, struct ibv_comp_channel **ch)
{
	*ch = ibv_create_comp_channel(id->verbs);
	if (*ch == NULL)
		return errno;
	*cq = ibv_create_cq(id->verbs, cqe, id, *ch, 0);
	if (*cq == NULL) {
		int ret = errno;

		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		return ret;
	}
	return 0;
}

/*
 * The id's QP: on @p attr's PD or else the id's; the CQs not given are made
 * (sized by the QP's queues, each with a completion channel) and destroyed
 * with the QP. The QP is moved to INIT.
 */
RDMACM_EXPORT int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct ibv_qp *qp;
	int ret = 0;

	if (i == NULL || attr == NULL || id->verbs == NULL || id->qp != NULL)
		return rdmacm_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd;
	}
	if (attr->pd == NULL || attr->pd->context != id->verbs)
		return rdmacm_err(EINVAL);
	if (attr->srq == NULL)
		attr->srq = id->srq;	/* rdma_create_srq's */
	if (attr->send_cq == NULL && attr->cap.max_send_wr > 0) {
		ret = cq_make(id, (int)attr->cap.max_send_wr, &id->send_cq, &id->send_cq_channel);
		i->own_send_cq = ret == 0;
		attr->send_cq = id->send_cq;
	}
	if (ret == 0 && attr->recv_cq == NULL && attr->cap.max_recv_wr > 0) {
		ret = cq_make(id, (int)attr->cap.max_recv_wr, &id->recv_cq, &id->recv_cq_channel);
		i->own_recv_cq = ret == 0;
		attr->recv_cq = id->recv_cq;
	}
	if (ret != 0)
		goto err_cqs;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL) {
		ret = errno;
		goto err_cqs;
	}
	id->qp = qp;
	ret = qp_move(i, IBV_QPS_INIT, 0);
	if (ret == 0 && qp->qp_type == IBV_QPT_UD) {	/* no peer to wait for: RTS now */
		ret = qp_move(i, IBV_QPS_RTR, 0);
		if (ret == 0)
			ret = qp_move(i, IBV_QPS_RTS, 0);
	}
	if (ret != 0) {
		id->qp = NULL;
		ibv_destroy_qp(qp);
		goto err_cqs;
	}
	id->pd = qp->pd;
	id->send_cq = attr->send_cq;
	id->recv_cq = attr->recv_cq;
	return 0;

err_cqs:
	cqs_free(i);
	return rdmacm_err(ret);
}

RDMACM_EXPORT int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	int ret;

	if (id == NULL || attr == NULL)
		return rdmacm_err(EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));	/* the _ex struct begins with the plain one */
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd != NULL ? pd : id->pd;
	ret = rdma_create_qp_ex(id, &ex);
	memcpy(attr, &ex, sizeof(*attr));	/* the capabilities granted, the CQs used */
	return ret;
}

RDMACM_EXPORT void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp != NULL)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	cqs_free((struct rdmacm_id *)id);
}

/* ---- connections ---- */

static int
conn_call(struct rdmacm_id *i, uint16_t type, const struct rdma_conn_param *p, uint32_t qpn,
	  uint32_t pdata_max, uint16_t rej_reason)
{
	struct droce_ctrl_cm_conn req;
	uint32_t pre = type == DROCE_CTRL_CM_CONNECT ? i->connect_len : 0;

	memset(&req, 0, sizeof(req));
	req.qpn = qpn;
	req.rej_reason = rej_reason;
	/* ECE as rdma-core sends it: the REQ has ours; the REP answers with
	 * the REQ's vendor ID and our options */
	req.ece_vendor_id = type == DROCE_CTRL_CM_ACCEPT ? i->remote_ece.vendor_id :
			    i->local_ece.vendor_id;
	req.ece_options = i->local_ece.options;
	memcpy(req.pdata, i->connect, pre);	/* rdma_create_ep's ai_connect first */
	req.pdata_len = (uint8_t)pre;
	if (p != NULL) {
		if (pre + p->private_data_len > pdata_max ||
		    (p->private_data_len > 0 && p->private_data == NULL))
			return EINVAL;
		req.responder_resources = p->responder_resources;
		req.initiator_depth = p->initiator_depth;
		req.retry_count = p->retry_count;
		req.rnr_retry_count = p->rnr_retry_count;
		req.srq = p->srq;
		req.flow_control = p->flow_control;
		req.pdata_len = (uint8_t)(pre + p->private_data_len);
		if (p->private_data_len > 0)
			memcpy(req.pdata + pre, p->private_data, p->private_data_len);
	}
	return rdmacm_id_call(i, type, &req, sizeof(req), NULL, 0);
}

/*
 * The RDMA READ depths of @p p as rdma-core takes them: RDMA_MAX_RESP_RES
 * and RDMA_MAX_INIT_DEPTH (255) stand for the device's most (libfabric
 * passes them), anything else above it is EINVAL. @return 0 or an errno.
 */
static int
conn_depths(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct ibv_device_attr a;

	if (id->verbs == NULL || ibv_query_device(id->verbs, &a) != 0)
		return 0;	/* droced bounds them by the device anyway */
	if (p->responder_resources == RDMA_MAX_RESP_RES)
		p->responder_resources = (uint8_t)a.max_qp_rd_atom;
	else if (p->responder_resources > a.max_qp_rd_atom)
		return EINVAL;
	if (p->initiator_depth == RDMA_MAX_INIT_DEPTH)
		p->initiator_depth = (uint8_t)a.max_qp_init_rd_atom;
	else if (p->initiator_depth > a.max_qp_init_rd_atom)
		return EINVAL;
	return 0;
}

RDMACM_EXPORT int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	if (conn_param != NULL) {
		p = *conn_param;
	} else if (id->verbs != NULL) {	/* the device's most, as rdma-core offers */
		struct ibv_device_attr a;

		if (ibv_query_device(id->verbs, &a) == 0) {
			p.responder_resources = (uint8_t)a.max_qp_rd_atom;
			p.initiator_depth = (uint8_t)a.max_qp_init_rd_atom;
		}
	}
	if (id->qp == NULL && (conn_param == NULL || conn_param->qp_num == 0))
		return rdmacm_err(EINVAL);
	ret = conn_depths(id, &p);
	if (ret != 0)
		return rdmacm_err(ret);
	i->resp_res = p.responder_resources;
	i->init_depth = p.initiator_depth;
	ret = conn_call(i, DROCE_CTRL_CM_CONNECT, &p, id->qp != NULL ? id->qp->qp_num : p.qp_num,
			id->qp_type == IBV_QPT_UD ? 180 : 56, 0);
	if (ret != 0)
		return rdmacm_err(ret);
	i->connect_len = 0;		/* sent once */
	return rdmacm_complete(i);
}

RDMACM_EXPORT int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct rdma_conn_param p;
	bool rr_max, depth_max;
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	if (conn_param != NULL) {
		p = *conn_param;
	} else {	/* the most, as for RDMA_MAX_*: no more than the peer offered */
		memset(&p, 0, sizeof(p));
		p.responder_resources = RDMA_MAX_RESP_RES;
		p.initiator_depth = RDMA_MAX_INIT_DEPTH;
		p.rnr_retry_count = 7;
	}
	rr_max = p.responder_resources == RDMA_MAX_RESP_RES;
	depth_max = p.initiator_depth == RDMA_MAX_INIT_DEPTH;
	if (id->qp == NULL && p.qp_num == 0)
		return rdmacm_err(EINVAL);
	if (id->qp_type == IBV_QPT_UD) {	/* a SIDR_REP: no event follows */
		ret = conn_call(i, DROCE_CTRL_CM_ACCEPT, &p,
				id->qp != NULL ? id->qp->qp_num : p.qp_num, 136, 0);
		return ret != 0 ? rdmacm_err(ret) : 0;
	}
	ret = conn_depths(id, &p);
	if (ret != 0)
		return rdmacm_err(ret);
	/*
	 * As rdma-core: "the most" is the device's, lowered to what the peer
	 * offered (its initiator depth, its responder resources); a value the
	 * application gives goes into the QP and the REP as it is (tgt's 1
	 * against an iSER initiator's depth 0).
	 */
	if (rr_max && p.responder_resources > i->peer_depth)
		p.responder_resources = i->peer_depth;
	if (depth_max && p.initiator_depth > i->peer_rr)
		p.initiator_depth = i->peer_rr;
	i->resp_res = p.responder_resources;
	i->init_depth = p.initiator_depth;
	if (id->qp != NULL) {
		ret = qp_ready(i, i->resp_res, i->init_depth);
		if (ret != 0) {
			qp_error(i);
			return rdmacm_err(ret);
		}
	}
	ret = conn_call(i, DROCE_CTRL_CM_ACCEPT, &p, id->qp != NULL ? id->qp->qp_num : p.qp_num,
			196, 0);
	if (ret != 0) {
		qp_error(i);
		return rdmacm_err(ret);
	}
	return rdmacm_complete(i);	/* a synchronous id: until ESTABLISHED */
}

int
rdmacm_reject(struct rdma_cm_id *id, const void *pdata, uint8_t pdata_len, uint16_t reason)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct rdma_conn_param p = {
		.private_data = pdata,
		.private_data_len = pdata_len,
	};
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	ret = conn_call(i, DROCE_CTRL_CM_REJECT, &p, 0, id->qp_type == IBV_QPT_UD ? 136 : 148,
			reason);
	return ret != 0 ? rdmacm_err(ret) : 0;
}

RDMACM_EXPORT int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return rdmacm_reject(id, private_data, private_data_len, 0);
}

RDMACM_EXPORT int
rdma_establish(struct rdma_cm_id *id)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_id req = { 0 };
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	ret = rdmacm_id_call(i, DROCE_CTRL_CM_ESTABLISH, &req, sizeof(req), NULL, 0);
	return ret != 0 ? rdmacm_err(ret) : 0;
}

RDMACM_EXPORT int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;
	struct droce_ctrl_cm_id req = { 0 };
	int ret;

	if (i == NULL)
		return rdmacm_err(EINVAL);
	qp_error(i);		/* flushes the QP's work first, as rdma-core does */
	ret = rdmacm_id_call(i, DROCE_CTRL_CM_DISCONNECT, &req, sizeof(req), NULL, 0);
	return ret != 0 ? rdmacm_err(ret) : rdmacm_complete(i);
}

/* ---- events ---- */

static void
conn_param_from(struct rdmacm_event *e, const struct droce_ctrl_cm_event *w)
{
	struct rdma_conn_param *c = &e->ev.param.conn;

	memcpy(e->pdata, w->pdata, DROCE_CTRL_CM_PDATA_MAX);
	c->private_data = w->pdata_len > 0 ? e->pdata : NULL;
	c->private_data_len = w->pdata_len;
	c->responder_resources = w->responder_resources;
	c->initiator_depth = w->initiator_depth;
	c->flow_control = w->flow_control;
	c->retry_count = w->retry_count;
	c->rnr_retry_count = w->rnr_retry_count;
	c->srq = w->srq;
	c->qp_num = w->qpn;
}

/* A UD event: the peer's (or the group's) QPN, Q_Key and address handle. */
static void
ud_param_from(struct rdmacm_event *e, const struct droce_ctrl_cm_event *w)
{
	struct rdma_ud_param *u = &e->ev.param.ud;

	memcpy(e->pdata, w->pdata, DROCE_CTRL_CM_PDATA_MAX);
	memset(u, 0, sizeof(*u));
	u->private_data = w->pdata_len > 0 ? e->pdata : NULL;
	u->private_data_len = w->pdata_len;
	rdmacm_ud_ah(&u->ah_attr, w->dgid, w->sgid_index, w->hop_limit, w->tclass);
	u->qp_num = w->qpn;
	u->qkey = w->qkey;
}

/* CONNECT_REQUEST: the new id, on the listener's channel. */
static int
conn_request(struct rdmacm_chan *ch, struct rdmacm_event *e, const struct droce_ctrl_cm_event *w)
{
	struct rdmacm_id *l = chan_find(ch, w->listen_id);
	struct rdmacm_id *c;

	if (l == NULL)
		return EINVAL;
	c = id_new(ch, l->id.context, l->id.ps, l->id.qp_type);
	if (c == NULL)
		return ENOMEM;
	c->handle = w->id;
	/* the event is in our view: its initiator_depth is the peer's responder resources */
	c->peer_rr = w->initiator_depth;
	c->peer_depth = w->responder_resources;
	c->remote_ece.vendor_id = w->ece_vendor_id;
	c->remote_ece.options = w->ece_options;
	chan_add(ch, c);
	if ((l->sync && id_migrate(c, NULL) != 0) || id_query(c) != 0) {
		rdma_destroy_id(&c->id);
		return ENODEV;
	}
	e->ev.id = &c->id;
	e->ev.listen_id = &l->id;
	return 0;
}

/*
 * The channel was destroyed under a thread blocked in rdma_get_cm_event
 * (rping's event thread, when main returns): on Linux that read never
 * returns, so neither does this one. An error here would make such a
 * thread report a failure (rping exits 255) while its process ends well.
 */
static void
park_forever(void)
{
	for (;;)
		pause();
}

/* Read events until one is for the application (some are handled here). */
static int
get_cm_event(struct rdmacm_chan *ch, struct rdma_cm_event **event)
{
	struct droce_ctrl_cm_event w;
	struct rdmacm_event *e;
	struct rdmacm_id *i;
	ssize_t n;
	int ret;

again:
	n = read(ch->ch.fd, &w, sizeof(w));
	if (n <= 0 && atomic_load(&ch->closing))
		park_forever();
	if (n < 0)
		return -1;		/* EAGAIN on a non-blocking channel, EINTR... */
	if (n == 0)
		return rdmacm_err(ENODEV);	/* droced is gone */
	if (n != (ssize_t)sizeof(w))
		return rdmacm_err(EIO);
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return rdmacm_err(ENOMEM);
	e->ev.event = (enum rdma_cm_event_type)w.event;
	e->ev.status = w.status;
	conn_param_from(e, &w);
	if (w.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = conn_request(ch, e, &w);
		if (ret == 0 && e->ev.id->qp_type == IBV_QPT_UD)
			ud_param_from(e, &w);
		if (ret != 0) {
			free(e);
			goto again;	/* the listener is gone: nobody to tell */
		}
		*event = &e->ev;
		return 0;
	}
	i = chan_find(ch, w.id);
	if (i == NULL) {
		free(e);
		goto again;		/* an id destroyed meanwhile */
	}
	e->ev.id = &i->id;
	if (i->id.qp_type == IBV_QPT_UD)
		ud_param_from(e, &w);
	switch (w.event) {
	case RDMA_CM_EVENT_MULTICAST_JOIN:
		rdmacm_mc_joined(i, &e->ev, w.mc);
		break;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = id_query(i);
		if (ret != 0) {
			e->ev.event = w.event == RDMA_CM_EVENT_ADDR_RESOLVED ?
				      RDMA_CM_EVENT_ADDR_ERROR : RDMA_CM_EVENT_ROUTE_ERROR;
			e->ev.status = -ret;
		}
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		i->remote_ece.vendor_id = w.ece_vendor_id;
		i->remote_ece.options = w.ece_options;
		if (i->id.qp == NULL)
			break;		/* the application moves its QP, then rdma_establish() */
		ret = qp_ready(i, RDMA_MAX_RESP_RES, RDMA_MAX_INIT_DEPTH);
		if (ret == 0)
			ret = rdma_establish(&i->id) == 0 ? 0 : errno;
		if (ret != 0) {
			qp_error(i);
			(void)rdma_reject(&i->id, NULL, 0);
			e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
			e->ev.status = -ret;
		} else {
			e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
		}
		break;
	default:
		break;
	}
	*event = &e->ev;
	return 0;
}

RDMACM_EXPORT int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct rdmacm_chan *ch = (struct rdmacm_chan *)channel;
	int ret;

	if (ch == NULL || event == NULL)
		return rdmacm_err(EINVAL);
	atomic_fetch_add(&ch->readers, 1);
	ret = get_cm_event(ch, event);
	atomic_fetch_sub(&ch->readers, 1);
	return ret;
}

RDMACM_EXPORT int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (event == NULL)
		return rdmacm_err(EINVAL);
	free(event);
	return 0;
}

RDMACM_EXPORT const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const name[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(name) / sizeof(name[0]) && name[event] != NULL)
		return name[event];
	return "UNKNOWN EVENT";
}
