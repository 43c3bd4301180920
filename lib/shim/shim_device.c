/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The device and the context: finding droced, opening a context on it,
 * the control-call helpers every other file uses, the handle -> object
 * table and asynchronous events.
 *
 * A device exists when the daemon's socket (DROCE_SOCKET, else the
 * compiled-in DROCE_CTRL_SOCKET) answers HELLO: ibv_get_device_list() asks
 * on a throwaway connection and lists one device with the name and node
 * GUID the daemon gives, or an empty list. ibv_open_device() opens its own
 * SOCK_SEQPACKET connection (DESIGN decision 2: every object belongs to the
 * connection that made it, and dies with it), sends HELLO with the write
 * end of a pipe for asynchronous events (shim_async.c: ibv_context.async_fd
 * watches its read end), and maps the doorbell rings the reply carries.
 *
 * Devices are reference counted (one count per list that holds them, one
 * per open context), like rdma-core's verbs_device. The handles of
 * asynchronous events are turned back into object pointers through the
 * context's table (shim_obj_event()).
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "shim_priv.h"

/*
 * A daemon that does not answer HELLO in this long is absent. Generous: on
 * a loaded machine (a 2-core CI box at load 14) a live droced took over 2 s,
 * and the tool then saw no device at all.
 */
#define SHIM_PROBE_TIMEOUT_S	10

/* ---- socket and HELLO ---- */

static const char *
shim_socket_path(void)
{
	const char *p = getenv("DROCE_SOCKET");

	if (p != NULL && p[0] != '\0')
		return p;
	return DROCE_CTRL_SOCKET;
}

/* Connect to @p path ("@name": abstract namespace). @return fd or -errno. */
static int
shim_connect(const char *path, int timeout_s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	socklen_t salen;
	int fd, ret;

	if (len == 0 || len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
			    (path[0] == '@' ? 0 : 1));

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (timeout_s > 0) {
		struct timeval tv = { .tv_sec = timeout_s };

		(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sa, salen) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * HELLO on @p sock, handing over @p event_wfd. On success *db_fd is the
 * doorbell memfd (or -1: its rings, rep->n_db of them) and, if @p wake_fds,
 * wake_fds[k] engine k's wake eventfd for k < rep->n_db (all -1: a daemon
 * that polls). @return 0 or a positive errno.
 */
static int
shim_hello(int sock, int event_wfd, struct droce_ctrl_hello_rep *rep, int *db_fd, int *wake_fds)
{
	struct droce_ctrl_hello_req req = {
		.abi_version = DROCE_SHM_ABI_VERSION,
		.pid = (uint32_t)getpid(),
	};
	int fds[DROCE_CTRL_MAX_FDS];
	unsigned int nfds = DROCE_CTRL_MAX_FDS, i;
	int ret;

	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
		fds[i] = -1;
	ret = droce_ctrl_call(sock, DROCE_CTRL_HELLO, &req, sizeof(req), &event_wfd, 1,
			      rep, sizeof(*rep), fds, &nfds);
	if (ret == 0 && (rep->n_db == 0 || rep->n_db > DROCE_SHM_MAX_DB))
		ret = EPROTO;
	*db_fd = ret == 0 ? fds[0] : -1;
	if (ret == 0)
		fds[0] = -1;
	if (wake_fds != NULL) {
		for (i = 0; i < DROCE_SHM_MAX_DB; i++)
			wake_fds[i] = -1;
		/* all of them or none */
		for (i = 0; ret == 0 && nfds == 1 + rep->n_db && i < rep->n_db; i++) {
			wake_fds[i] = fds[1 + i];
			fds[1 + i] = -1;
		}
	}
	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ret == 0)
		rep->dev_name[sizeof(rep->dev_name) - 1] = '\0';
	return ret;
}

/* ---- devices ---- */

static struct shim_device *
shim_device_new(const char *path, const struct droce_ctrl_hello_rep *rep)
{
	struct shim_device *sdev = calloc(1, sizeof(*sdev));

	if (sdev == NULL)
		return NULL;
	sdev->dev.node_type = IBV_NODE_CA;
	sdev->dev.transport_type = IBV_TRANSPORT_IB;
	snprintf(sdev->dev.name, sizeof(sdev->dev.name), "%s",
		 rep->dev_name[0] != '\0' ? rep->dev_name : "droce0");
	/*
	 * As the kernel names a device's verbs node: one device per daemon, so
	 * uverbs0. droce-run's view (droced_sysfs.c) has /dev/infiniband/uverbs0
	 * and these sysfs paths; without it, reads there fail cleanly.
	 */
	snprintf(sdev->dev.dev_name, sizeof(sdev->dev.dev_name), "uverbs0");
	snprintf(sdev->dev.dev_path, sizeof(sdev->dev.dev_path),
		 "/sys/class/infiniband_verbs/%s", sdev->dev.dev_name);
	snprintf(sdev->dev.ibdev_path, sizeof(sdev->dev.ibdev_path),
		 "/sys/class/infiniband/%s", sdev->dev.name);
	snprintf(sdev->sock_path, sizeof(sdev->sock_path), "%s", path);
	sdev->node_guid = rep->node_guid;
	atomic_init(&sdev->refcnt, 1);
	return sdev;
}

static void
shim_device_hold(struct shim_device *sdev)
{
	atomic_fetch_add(&sdev->refcnt, 1);
}

static void
shim_device_put(struct shim_device *sdev)
{
	if (atomic_fetch_sub(&sdev->refcnt, 1) == 1)
		free(sdev);
}

/* Ask the daemon whether it is there. @return a device (one count) or NULL. */
static struct shim_device *
shim_probe(void)
{
	const char *path = shim_socket_path();
	struct droce_ctrl_hello_rep rep;
	struct shim_device *sdev = NULL;
	int sock, pfd[2], db_fd;

	sock = shim_connect(path, SHIM_PROBE_TIMEOUT_S);
	if (sock < 0)
		return NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		goto close_sock;
	memset(&rep, 0, sizeof(rep));
	if (shim_hello(sock, pfd[1], &rep, &db_fd, NULL) == 0) {
		if (db_fd >= 0)
			close(db_fd);
		sdev = shim_device_new(path, &rep);
	}
	close(pfd[0]);
	close(pfd[1]);
close_sock:
	close(sock);
	return sdev;
}

struct ibv_device **shim_get_device_list_1_1(int *num);
SHIM_SYMVER_DEFAULT(shim_get_device_list_1_1, ibv_get_device_list, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_device **
shim_get_device_list_1_1(int *num)
{
	struct ibv_device **list;
	struct shim_device *sdev;
	int saved = errno;

	if (num != NULL)
		*num = 0;
	list = calloc(2, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	sdev = shim_probe();
	/* rdma-core leaves errno alone when it finds no device */
	errno = saved;
	if (sdev != NULL) {
		list[0] = &sdev->dev;
		if (num != NULL)
			*num = 1;
	}
	return list;
}

void shim_free_device_list_1_1(struct ibv_device **list);
SHIM_SYMVER_DEFAULT(shim_free_device_list_1_1, ibv_free_device_list, "IBVERBS_1.1");
SHIM_EXPORT void
shim_free_device_list_1_1(struct ibv_device **list)
{
	unsigned int i;

	if (list == NULL)
		return;
	for (i = 0; list[i] != NULL; i++)
		shim_device_put((struct shim_device *)list[i]);
	free(list);
}

const char *shim_get_device_name_1_1(struct ibv_device *device);
SHIM_SYMVER_DEFAULT(shim_get_device_name_1_1, ibv_get_device_name, "IBVERBS_1.1");
SHIM_EXPORT const char *
shim_get_device_name_1_1(struct ibv_device *device)
{
	return device->name;
}

__be64 shim_get_device_guid_1_1(struct ibv_device *device);
SHIM_SYMVER_DEFAULT(shim_get_device_guid_1_1, ibv_get_device_guid, "IBVERBS_1.1");
SHIM_EXPORT __be64
shim_get_device_guid_1_1(struct ibv_device *device)
{
	return (__be64)((struct shim_device *)device)->node_guid;
}

SHIM_EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	(void)device;
	return -1;	/* not a sysfs device: rdma-core's answer for those */
}

/* ---- control calls ---- */

int
shim_call(struct shim_context *sctx, uint16_t type, const void *req, uint32_t req_len,
	  const int *fds, unsigned int nfds, void *rep, uint32_t rep_len, int *rep_fds,
	  unsigned int nrep_fds)
{
	int fdbuf[DROCE_CTRL_MAX_FDS];
	unsigned int n = DROCE_CTRL_MAX_FDS, i;
	int ret;

	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
		fdbuf[i] = -1;
	if (atomic_load(&sctx->dead))
		return EIO;
	pthread_mutex_lock(&sctx->call_lock);
	ret = droce_ctrl_call(sctx->sock, type, req, req_len, fds, nfds, rep, rep_len,
			      fdbuf, &n);
	pthread_mutex_unlock(&sctx->call_lock);
	/* transport failures; the daemon's own answers are other errno values */
	if (ret == EPIPE || ret == ECONNRESET || ret == ENOTCONN || ret == EPROTO)
		atomic_store(&sctx->dead, true);
	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++) {
		if (ret == 0 && i < nrep_fds)
			rep_fds[i] = fdbuf[i];
		else if (fdbuf[i] >= 0)
			close(fdbuf[i]);
	}
	return ret;
}

int
shim_call_destroy(struct shim_context *sctx, uint16_t type, uint32_t handle)
{
	struct droce_ctrl_handle req = { .handle = handle };
	int ret;

	ret = shim_call(sctx, type, &req, sizeof(req), NULL, 0, NULL, 0, NULL, 0);
	/* like rdma-core after a disassociation: the object is gone with the daemon */
	if (ret != 0 && atomic_load(&sctx->dead))
		ret = 0;
	return ret;
}

int
shim_ring_map_at(struct droce_shm_view *ring, int fd, uint64_t map_len, uint64_t offset,
		 enum droce_shm_kind kind)
{
	void *p;

	memset(ring, 0, sizeof(*ring));
	if (fd < 0)
		return EPROTO;
	if (map_len < sizeof(struct droce_shm_ring) || map_len > SIZE_MAX || offset > INT64_MAX)
		return EPROTO;
	p = mmap(NULL, (size_t)map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
	if (p == MAP_FAILED)
		return errno;
	if (droce_shm_ring_check(p, kind, map_len) != 0) {
		munmap(p, (size_t)map_len);
		return EPROTO;
	}
	ring->r = p;
	ring->map_len = map_len;
	ring->nslots = droce_shm_nslots(p);
	ring->log2_slot_size = ((struct droce_shm_ring *)p)->log2_slot_size;
	ring->idx = kind == DROCE_SHM_CQ ? droce_shm_load_cons(p) : droce_shm_load_prod(p);
	return 0;
}

int
shim_ring_map(struct droce_shm_view *ring, int fd, uint64_t map_len, enum droce_shm_kind kind)
{
	int ret = shim_ring_map_at(ring, fd, map_len, 0, kind);

	if (fd >= 0)
		close(fd);
	return ret;
}

/* The context's DB rings, one per engine, back to back in @p fd (closed). */
static int
shim_db_map(struct shim_context *sctx, int fd, const struct droce_ctrl_hello_rep *rep)
{
	uint32_t k;
	int ret = 0;

	for (k = 0; k < rep->n_db && ret == 0; k++)
		ret = shim_ring_map_at(&sctx->db[k], fd, rep->db_map_len, k * rep->db_map_len,
				       DROCE_SHM_DB);
	if (fd >= 0)
		close(fd);
	if (ret != 0) {
		for (k = 0; k < rep->n_db; k++)
			shim_ring_unmap(&sctx->db[k]);
		return ret;
	}
	sctx->n_db = rep->n_db;
	return 0;
}

static void
shim_wake_close(struct shim_context *sctx)
{
	unsigned int k;

	for (k = 0; k < DROCE_SHM_MAX_DB; k++)
		if (sctx->wake_fd[k] >= 0)
			close(sctx->wake_fd[k]);
}

void
shim_ring_unmap(struct droce_shm_view *ring)
{
	if (ring->r != NULL)
		munmap(ring->r, (size_t)ring->map_len);
	ring->r = NULL;
}

/* ---- handle -> object table ---- */

#define SHIM_TAB_DELETED UINT64_MAX

static uint64_t
tab_key(enum shim_obj_kind kind, uint32_t handle)
{
	return ((uint64_t)kind << 32) | handle;
}

static uint32_t
tab_hash(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static int
tab_grow(struct shim_objtab *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64, i, j;
	struct shim_objtab_ent *ent = calloc(cap, sizeof(*ent));

	if (ent == NULL)
		return ENOMEM;
	for (i = 0; i < t->cap; i++) {
		uint64_t k = t->ent[i].key;

		if (k == 0 || k == SHIM_TAB_DELETED)
			continue;
		for (j = tab_hash(k, cap - 1); ent[j].key != 0; j = (j + 1) & (cap - 1))
			;
		ent[j] = t->ent[i];
	}
	free(t->ent);
	t->ent = ent;
	t->cap = cap;
	t->used = 0;
	for (i = 0; i < cap; i++)
		t->used += ent[i].key != 0;
	return 0;
}

int
shim_obj_add(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle, void *obj)
{
	struct shim_objtab *t = &sctx->tab;
	uint64_t key = tab_key(kind, handle);
	uint32_t i;
	int ret = 0;

	pthread_mutex_lock(&sctx->tab_lock);
	if ((t->used + 1) * 2 > t->cap)	/* keep load under one half */
		ret = tab_grow(t);
	if (ret == 0) {
		for (i = tab_hash(key, t->cap - 1);
		     t->ent[i].key != 0 && t->ent[i].key != SHIM_TAB_DELETED;
		     i = (i + 1) & (t->cap - 1))
			;
		if (t->ent[i].key == 0)
			t->used++;
		t->ent[i].key = key;
		t->ent[i].obj = obj;
	}
	pthread_mutex_unlock(&sctx->tab_lock);
	return ret;
}

static struct shim_objtab_ent *
tab_find(struct shim_objtab *t, uint64_t key)
{
	uint32_t i, n;

	if (t->cap == 0)
		return NULL;
	for (i = tab_hash(key, t->cap - 1), n = 0; n < t->cap && t->ent[i].key != 0;
	     i = (i + 1) & (t->cap - 1), n++)
		if (t->ent[i].key == key)
			return &t->ent[i];
	return NULL;
}

void
shim_obj_del(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle)
{
	struct shim_objtab_ent *e;

	pthread_mutex_lock(&sctx->tab_lock);
	e = tab_find(&sctx->tab, tab_key(kind, handle));
	if (e != NULL) {
		e->key = SHIM_TAB_DELETED;
		e->obj = NULL;
	}
	pthread_mutex_unlock(&sctx->tab_lock);
	/* its events not read yet go too, as the kernel drops them */
	shim_async_purge(sctx, kind, handle);
}

/* Look up and count one event on the object, under the table lock. */
void *
shim_obj_event(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle)
{
	struct shim_objtab_ent *e;
	void *obj = NULL;

	pthread_mutex_lock(&sctx->tab_lock);
	e = tab_find(&sctx->tab, tab_key(kind, handle));
	if (e != NULL) {
		obj = e->obj;
		switch (kind) {
		case SHIM_OBJ_CQ:
			((struct shim_cq *)obj)->async_events_got++;
			break;
		case SHIM_OBJ_QP:
			((struct shim_qp *)obj)->events_got++;
			break;
		case SHIM_OBJ_SRQ:
			((struct shim_srq *)obj)->events_got++;
			break;
		}
	}
	pthread_mutex_unlock(&sctx->tab_lock);
	return obj;
}

struct shim_cq *
shim_obj_cq_event(struct shim_context *sctx, uint32_t handle)
{
	struct shim_objtab_ent *e;
	struct shim_cq *cq = NULL;

	pthread_mutex_lock(&sctx->tab_lock);
	e = tab_find(&sctx->tab, tab_key(SHIM_OBJ_CQ, handle));
	if (e != NULL) {
		cq = e->obj;
		cq->comp_events_got++;
	}
	pthread_mutex_unlock(&sctx->tab_lock);
	return cq;
}

void
shim_wait_acks(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *acked, uint32_t got)
{
	pthread_mutex_lock(mutex);
	while (*acked != got)
		pthread_cond_wait(cond, mutex);
	pthread_mutex_unlock(mutex);
}

/* ---- open / close ---- */

struct ibv_context *shim_open_device_1_1(struct ibv_device *device);
SHIM_SYMVER_DEFAULT(shim_open_device_1_1, ibv_open_device, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_context *
shim_open_device_1_1(struct ibv_device *device)
{
	struct shim_device *sdev = (struct shim_device *)device;
	struct droce_ctrl_hello_rep rep;
	struct shim_context *sctx;
	struct ibv_context *ctx;
	int pfd[2], db_fd, ret;
	uint32_t k;

	sctx = calloc(1, sizeof(*sctx));
	if (sctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = &sctx->vctx.context;
	sctx->sock = shim_connect(sdev->sock_path, 0);
	if (sctx->sock < 0) {
		ret = -sctx->sock;
		goto err_free;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		ret = errno;
		goto err_sock;
	}
	memset(&rep, 0, sizeof(rep));
	ret = shim_hello(sctx->sock, pfd[1], &rep, &db_fd, sctx->wake_fd);
	/* Only the daemon holds the write end now: end of file means it is gone. */
	close(pfd[1]);
	if (ret != 0)
		goto err_pipe;
	ret = shim_db_map(sctx, db_fd, &rep);
	if (ret != 0) {
		shim_wake_close(sctx);
		goto err_pipe;
	}

	ret = shim_async_open(sctx, pfd[0]);
	if (ret != 0) {
		for (k = 0; k < sctx->n_db; k++)
			shim_ring_unmap(&sctx->db[k]);
		shim_wake_close(sctx);
		goto err_pipe;
	}
	sctx->sdev = sdev;
	sctx->ctx_handle = rep.ctx_handle;
	pthread_mutex_init(&sctx->call_lock, NULL);
	pthread_mutex_init(&sctx->tab_lock, NULL);
	ctx->device = device;
	ctx->cmd_fd = sctx->sock;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	sctx->vctx.sz = sizeof(sctx->vctx);
	shim_ops_init(&sctx->vctx);
	shim_device_hold(sdev);
	return ctx;

err_pipe:
	close(pfd[0]);
err_sock:
	close(sctx->sock);
err_free:
	free(sctx);
	errno = ret;
	return NULL;
}

int shim_close_device_1_1(struct ibv_context *ctx);
SHIM_SYMVER_DEFAULT(shim_close_device_1_1, ibv_close_device, "IBVERBS_1.1");
SHIM_EXPORT int
shim_close_device_1_1(struct ibv_context *ctx)
{
	struct shim_context *sctx = to_sctx(ctx);

	unsigned int k;

	/* The daemon frees whatever the application left on this connection. */
	for (k = 0; k < sctx->n_db; k++)
		shim_ring_unmap(&sctx->db[k]);
	shim_wake_close(sctx);
	close(sctx->sock);
	shim_async_close(sctx);
	pthread_mutex_destroy(&sctx->call_lock);
	pthread_mutex_destroy(&sctx->tab_lock);
	pthread_mutex_destroy(&ctx->mutex);
	free(sctx->tab.ent);
	shim_device_put(sctx->sdev);
	free(sctx);
	return 0;
}

SHIM_EXPORT struct ibv_context *
ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

