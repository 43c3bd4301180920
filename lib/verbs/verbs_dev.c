/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The device (droce_verbs_dev.h): attributes, clients, the handle table,
 * shared-memory rings, and the control requests for every object but QPs
 * (verbs_dev_qp.c). Every function runs on the device's worker thread.
 *
 * Handles index one table of all objects of all clients; a lookup checks
 * the kind and that the object belongs to the asking client, so a client
 * can name only its own objects. Descriptors from clients are checked
 * (memfd seals, sizes) before they are mapped: a client that shrinks a
 * mapped file could otherwise make the daemon fault.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "droce_wire_gid.h"
#include "verbs_dev_priv.h"

const char *const droce_dev_counter_name[DROCE_DEV_CNT_COUNT] = {
#define C(sym, desc) [DROCE_DEV_CNT_##sym] = #sym,
	DROCE_DEV_COUNTERS(C)
#undef C
};

uint32_t
dev_pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* IBA path MTU for an Ethernet MTU: room for the RoCEv2 headers (as rxe). */
static enum ibv_mtu
dev_path_mtu(uint32_t link_mtu)
{
	uint32_t room = link_mtu > 80 ? link_mtu - 80 : 0;

	return room >= 4096 ? IBV_MTU_4096 : room >= 2048 ? IBV_MTU_2048 :
	       room >= 1024 ? IBV_MTU_1024 : room >= 512 ? IBV_MTU_512 : IBV_MTU_256;
}

static void
dev_fill_attrs(struct droce_dev *dev)
{
	struct ibv_device_attr *a = &dev->attr;
	struct ibv_port_attr *p = &dev->port;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce 0.1");
	a->node_guid = htobe64(dev->conf.node_guid);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 4096;
	/*
	 * No IEEE OUI: IBA A3.3.1 lets a device without vendor-specific drivers
	 * use 0xFFFFFF, as Linux Soft-RoCE does. Under it the part ID and version
	 * are ours: part 0, because tools that match part IDs alone (perftest)
	 * must not take droce for a real adapter; the version is the ABI a client
	 * programs, that of the shared-memory rings.
	 */
	a->vendor_id = 0xffffff;
	a->vendor_part_id = 0;
	a->hw_ver = DROCE_SHM_ABI_VERSION;
	a->max_qp = DEV_MAX_QP;
	a->max_qp_wr = DEV_MAX_QP_WR;
	/* port events: droce_dev_port_state() */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
			      IBV_DEVICE_PORT_ACTIVE_EVENT;
	a->max_sge = DROCE_SHM_MAX_SGE;
	a->max_sge_rd = DROCE_SHM_MAX_SGE;
	a->max_cq = DEV_MAX_QP * 2;
	a->max_cqe = DEV_MAX_CQE;
	a->max_mr = DROCE_MAX_MR;
	a->max_pd = DEV_MAX_QP;
	a->max_qp_rd_atom = DROCE_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = DROCE_MAX_QP_RD_ATOM * DEV_MAX_QP;
	a->max_qp_init_rd_atom = DROCE_MAX_QP_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_mw = DROCE_MAX_MW;
	a->max_mcast_grp = 256;
	a->max_mcast_qp_attach = 64;
	a->max_total_mcast_qp_attach = 256 * 64;
	a->max_ah = DEV_MAX_QP * 4;
	a->max_srq = DEV_MAX_QP;
	a->max_srq_wr = DEV_MAX_SRQ_WR;
	a->max_srq_sge = DROCE_SHM_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;

	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = dev_path_mtu(dev->conf.link_mtu);
	p->gid_tbl_len = (int)dev->conf.n_gids;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	p->max_msg_sz = 1u << 31;
	p->pkey_tbl_len = 1;
	p->max_vl_num = 1;
	p->active_width = 2;		/* 4X */
	p->active_speed = 32;		/* EDR: what software can claim, roughly */
	p->phys_state = 5;		/* LinkUp */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;

	dev->qp_lim.max_mtu = p->active_mtu;
	dev->qp_lim.max_rd_atomic = DROCE_MAX_QP_RD_ATOM;
	dev->qp_lim.max_dest_rd_atomic = DROCE_MAX_QP_RD_ATOM;
	dev->qp_lim.phys_port_cnt = 1;
	dev->qp_lim.pkey_tbl_len = 1;
	dev->qp_lim.gid_tbl_len = (int)dev->conf.n_gids;
}

int
droce_dev_create(const struct droce_dev_conf *conf, struct droce_dev **out)
{
	struct droce_dev *dev;
	int ret;

	if (conf->n_gids == 0 || conf->n_gids > DROCE_DEV_MAX_GIDS || conf->port_ops == NULL)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return -ENOMEM;
	dev->conf = *conf;
	dev_fill_attrs(dev);
	ret = droce_key_table_create(DROCE_MAX_MR, DROCE_MAX_MW, conf->seed, &dev->keys);
	if (ret < 0)
		goto err_free;
	ret = droce_mcast_create(dev->attr.max_mcast_grp, dev->attr.max_mcast_qp_attach,
				 &dev->mcast);
	if (ret < 0)
		goto err_keys;
	ret = -ENOMEM;
	dev->objs = calloc(DEV_MAX_OBJS, sizeof(*dev->objs));
	dev->qpn = calloc(DEV_MAX_QP, sizeof(*dev->qpn));
	dev->live = calloc(DEV_MAX_QP, sizeof(*dev->live));
	dev->active = calloc(DEV_MAX_QP, sizeof(*dev->active));
	dev->loop = malloc(DEV_LOOP_SLOTS * sizeof(*dev->loop));
	if (dev->objs == NULL || dev->qpn == NULL || dev->live == NULL || dev->active == NULL ||
	    dev->loop == NULL)
		goto err_tables;
	*out = dev;
	return 0;

err_tables:
	free(dev->loop);
	free(dev->active);
	free(dev->live);
	free(dev->qpn);
	free(dev->objs);
	droce_mcast_free(dev->mcast);
err_keys:
	droce_key_table_destroy(dev->keys);
err_free:
	free(dev);
	return ret;
}

void
droce_dev_destroy(struct droce_dev *dev)
{
	if (dev == NULL)
		return;
	while (dev->clients != NULL)
		droce_dev_client_free(dev->clients);
	free(dev->loop);
	free(dev->active);
	free(dev->live);
	free(dev->qpn);
	free(dev->objs);
	droce_mcast_free(dev->mcast);
	droce_key_table_destroy(dev->keys);
	free(dev);
}

/* ---- handles ---- */

int
dev_obj_add(struct droce_dev *dev, struct droce_client *cl, struct dev_obj *o,
	    enum dev_obj_type type)
{
	uint32_t i;

	for (i = 0; i < DEV_MAX_OBJS; i++) {
		uint32_t idx = (dev->next_obj + i) % DEV_MAX_OBJS;

		if (dev->objs[idx] == NULL) {
			o->type = (uint8_t)type;
			o->cl = cl;
			o->handle = idx + 1;
			dev->objs[idx] = o;
			dev->next_obj = idx + 1;	/* do not reuse a handle at once */
			dev->nobj[type]++;
			return 0;
		}
	}
	return -ENOMEM;
}

void
dev_obj_del(struct droce_dev *dev, struct dev_obj *o)
{
	dev->objs[o->handle - 1] = NULL;
	dev->nobj[o->type]--;
}

void *
dev_obj_get(struct droce_client *cl, uint32_t handle, enum dev_obj_type type)
{
	struct dev_obj *o;

	if (handle == 0 || handle > DEV_MAX_OBJS)
		return NULL;
	o = cl->dev->objs[handle - 1];
	if (o == NULL || o->type != type || o->cl != cl)
		return NULL;
	return o;
}

void
dev_async_event(struct droce_client *cl, enum ibv_event_type type, uint32_t handle)
{
	struct droce_ctrl_event ev = { .event_type = type, .handle = handle };

	/* non-blocking: a client that does not read loses only its own events */
	if (cl->async_fd >= 0 && write(cl->async_fd, &ev, sizeof(ev)) != sizeof(ev))
		return;
}

/* ---- rings ---- */

int
dev_ring_create(struct dev_ring *ring, enum droce_shm_kind kind, uint32_t handle,
		uint32_t nslots, uint32_t slot_size, int *fd_out)
{
	uint64_t len = droce_shm_ring_bytes(nslots, slot_size);
	int fd, ret;

	len = (len + 4095) & ~4095ull;
	fd = memfd_create("droce-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		ret = -errno;
		goto err_close;
	}
	ring->r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring->r == MAP_FAILED) {
		ret = -errno;
		goto err_close;
	}
	ring->map_len = len;
	ring->nslots = nslots;
	ring->slot_shift = 0;
	while ((1u << ring->slot_shift) < slot_size)
		ring->slot_shift++;
	ring->idx = 0;
	if (droce_shm_ring_init(ring->r, kind, handle, nslots, slot_size) < 0) {
		munmap(ring->r, len);
		ring->r = NULL;
		ret = -EINVAL;
		goto err_close;
	}
	*fd_out = fd;
	return 0;

err_close:
	close(fd);
	return ret;
}

void
dev_ring_free(struct dev_ring *ring)
{
	if (ring->r != NULL)
		munmap(ring->r, ring->map_len);
	ring->r = NULL;
}

/* ---- clients ---- */

int
droce_dev_client_new(struct droce_dev *dev, const struct droce_client_cred *cred,
		     struct droce_client **out)
{
	struct droce_client *cl = calloc(1, sizeof(*cl));

	if (cl == NULL)
		return -ENOMEM;
	cl->dev = dev;
	cl->id = ++dev->next_client;
	cl->cred = *cred;
	cl->async_fd = -1;
	cl->wake_fd = -1;
	cl->next = dev->clients;
	dev->clients = cl;
	*out = cl;
	return 0;
}

uint32_t
droce_dev_client_pid(const struct droce_client *cl)
{
	return cl->cred.pid;
}

static void dev_obj_destroy(struct droce_dev *dev, struct dev_obj *o);

void
droce_dev_client_free(struct droce_client *cl)
{
	struct droce_dev *dev = cl->dev;
	struct droce_client **pp;
	static const uint8_t order[] = { OBJ_QP, OBJ_AH, OBJ_SRQ, OBJ_CQ, OBJ_MW, OBJ_MR, OBJ_PD };
	unsigned int k;
	uint32_t i;

	/* QPs first, to the error state, so peers see errors and nothing waits on us */
	for (i = 0; i < DEV_MAX_OBJS; i++) {
		struct dev_obj *o = dev->objs[i];

		if (o != NULL && o->cl == cl && o->type == OBJ_QP)
			droce_tqp_set_state(&((struct dev_qp *)o)->tqp, DROCE_TQP_ERR, 0, 0);
	}
	for (k = 0; k < DROCE_DIM(order); k++)
		for (i = 0; i < DEV_MAX_OBJS; i++) {
			struct dev_obj *o = dev->objs[i];

			if (o != NULL && o->cl == cl && o->type == order[k])
				dev_obj_destroy(dev, o);
		}
	dev_ring_free(&cl->db);
	dev_client_wake_close(cl);
	if (cl->async_fd >= 0)
		close(cl->async_fd);
	for (pp = &dev->clients; *pp != NULL; pp = &(*pp)->next)
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	DEV_CNT(dev, CLIENTS_LOST);
	free(cl);
}

void
droce_dev_fatal(struct droce_dev *dev)
{
	struct droce_client *cl;

	for (cl = dev->clients; cl != NULL; cl = cl->next)
		dev_async_event(cl, IBV_EVENT_DEVICE_FATAL, 1);
}

void
droce_dev_port_state(struct droce_dev *dev, bool up)
{
	enum ibv_port_state state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	struct droce_client *cl;

	if (dev->port.state == state)
		return;
	dev->port.state = state;
	dev->port.phys_state = up ? 5 : 3;	/* LinkUp : Disabled */
	for (cl = dev->clients; cl != NULL; cl = cl->next)
		dev_async_event(cl, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR, 1);
}

/* ---- simple objects ---- */

static int
dev_alloc_pd(struct droce_client *cl, struct droce_ctrl_alloc_pd_rep *rep)
{
	struct dev_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return ENOMEM;
	if (dev_obj_add(cl->dev, cl, &pd->o, OBJ_PD) < 0) {
		free(pd);
		return ENOMEM;
	}
	rep->pd_handle = pd->o.handle;
	return 0;
}

/*
 * What the daemon maps must keep its size (a client shrinking it would
 * fault the daemon): a memfd sealed against shrinking, or a dma-buf from
 * udmabuf (pages of such a memfd, pinned; a dma-buf never changes size).
 * Other exporters' dma-bufs may fault on access (eviction): refused.
 */
static bool
fd_fixed_size(int fd, uint64_t *size)
{
	struct statfs sfs;
	struct stat st;
	char path[64], line[128];
	bool udmabuf = false;
	FILE *f;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals >= 0) {
		if (!(seals & F_SEAL_SHRINK) || fstat(fd, &st) < 0)
			return false;
		*size = (uint64_t)st.st_size;
		return true;
	}
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != DMA_BUF_MAGIC)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	*size = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long v;
		char name[32];

		if (sscanf(line, "size: %llu", &v) == 1)
			*size = v;
		else if (sscanf(line, "exp_name: %31s", name) == 1)
			udmabuf = strcmp(name, "udmabuf") == 0;
	}
	fclose(f);
	return udmabuf && *size > 0;
}

/*
 * Map @p length bytes at @p fd_offset of the client's memfd or udmabuf @p fd: *map and
 * *map_len for munmap(), *host for the byte at fd_offset. @return 0 or a
 * positive errno.
 */
static int
dev_mr_map(int fd, uint64_t fd_offset, uint64_t length, void **map, uint64_t *map_len,
	   uint8_t **host)
{
	uint64_t start, end, size;

	if (fd < 0 || length == 0 || !fd_fixed_size(fd, &size))
		return EINVAL;
	if (fd_offset > size || length > size - fd_offset)
		return EINVAL;
	start = fd_offset & ~4095ull;
	end = (fd_offset + length + 4095) & ~4095ull;
	*map_len = end - start;
	*map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
	if (*map == MAP_FAILED)
		return errno;
	*host = (uint8_t *)*map + (fd_offset - start);
	return 0;
}

static int
dev_reg_mr(struct droce_client *cl, const struct droce_ctrl_reg_mr_req *req, int fd,
	   struct droce_ctrl_reg_mr_rep *rep)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct droce_mr_reg reg;
	struct dev_mr *mr;
	uint8_t *host;
	int ret;

	if (pd == NULL)
		return EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return ENOMEM;
	ret = dev_mr_map(fd, req->fd_offset, req->length, &mr->map, &mr->map_len, &host);
	if (ret != 0) {
		free(mr);
		return ret;
	}
	memset(&reg, 0, sizeof(reg));
	reg.pd = pd->o.handle;
	reg.addr = req->addr;
	reg.length = req->length;
	reg.hca_va = req->iova;
	reg.access = req->access;
	reg.host = host;
	ret = dev_obj_add(cl->dev, cl, &mr->o, OBJ_MR);
	if (ret == 0) {
		ret = droce_mr_register(cl->dev->keys, &reg, &mr->mr);
		if (ret < 0)
			dev_obj_del(cl->dev, &mr->o);
	}
	if (ret < 0) {
		munmap(mr->map, mr->map_len);
		free(mr);
		return -ret;
	}
	mr->pd = pd;
	pd->refs++;
	rep->mr_handle = mr->o.handle;
	rep->lkey = mr->mr.lkey;
	rep->rkey = mr->mr.rkey;
	return 0;
}

/*
 * ibv_rereg_mr(3): the MR takes the new attributes under the same handle and
 * the same keys (droce_mr_reregister()). Everything that can fail is checked
 * before anything changes, so a failure leaves the MR as it was.
 */
static int
dev_rereg_mr(struct droce_client *cl, const struct droce_ctrl_rereg_mr_req *req, int fd,
	     struct droce_ctrl_rereg_mr_rep *rep)
{
	struct dev_mr *mr = dev_obj_get(cl, req->mr_handle, OBJ_MR);
	bool xlate = req->flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	struct dev_pd *pd;
	struct droce_mr_reg reg;
	void *map = NULL;
	uint64_t map_len = 0;
	uint8_t *host;
	int ret;

	if (mr == NULL || req->flags == 0 || (req->flags & ~(uint32_t)IBV_REREG_MR_FLAGS_SUPPORTED))
		return EINVAL;
	pd = req->flags & IBV_REREG_MR_CHANGE_PD ? dev_obj_get(cl, req->pd_handle, OBJ_PD) :
						  mr->pd;
	if (pd == NULL)
		return EINVAL;
	memset(&reg, 0, sizeof(reg));
	reg.pd = pd->o.handle;
	reg.access = req->flags & IBV_REREG_MR_CHANGE_ACCESS ? req->access : mr->mr.access;
	reg.addr = xlate ? req->addr : mr->mr.addr;
	reg.length = xlate ? req->length : mr->mr.length;
	/* a new range gets iova = addr, as ibv_reg_mr(); otherwise the iova stays */
	reg.hca_va = xlate ? req->addr : mr->mr.iova;
	reg.host = mr->mr.host;
	if (!xlate && (mr->mr.access & IBV_ACCESS_ZERO_BASED) &&
	    !(reg.access & IBV_ACCESS_ZERO_BASED))
		reg.hca_va = mr->mr.addr;
	if (xlate) {
		ret = dev_mr_map(fd, req->fd_offset, req->length, &map, &map_len, &host);
		if (ret != 0)
			return ret;
		reg.host = host;
	}
	ret = -droce_mr_reregister(cl->dev->keys, &mr->mr, &reg);
	if (ret != 0) {
		if (map != NULL)
			munmap(map, map_len);
		return ret;	/* EBUSY while a window is bound, as ibv_dereg_mr(3) */
	}
	if (xlate) {
		munmap(mr->map, mr->map_len);
		mr->map = map;
		mr->map_len = map_len;
	}
	mr->pd->refs--;
	mr->pd = pd;
	pd->refs++;
	rep->lkey = mr->mr.lkey;
	rep->rkey = mr->mr.rkey;
	return 0;
}

static int
dev_alloc_mw(struct droce_client *cl, const struct droce_ctrl_alloc_mw_req *req,
	     struct droce_ctrl_alloc_mw_rep *rep)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct dev_mw *mw;
	int ret;

	if (pd == NULL)
		return EINVAL;
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL)
		return ENOMEM;
	ret = dev_obj_add(cl->dev, cl, &mw->o, OBJ_MW);
	if (ret == 0) {
		ret = droce_mw_alloc(cl->dev->keys, pd->o.handle, (enum ibv_mw_type)req->type, &mw->mw);
		if (ret < 0)
			dev_obj_del(cl->dev, &mw->o);
	}
	if (ret < 0) {
		free(mw);
		return -ret;
	}
	mw->pd = pd;
	pd->refs++;
	rep->mw_handle = mw->o.handle;
	rep->rkey = mw->mw.rkey;
	return 0;
}

static int
dev_create_cq(struct droce_client *cl, const struct droce_ctrl_create_cq_req *req, int chan_fd,
	      struct droce_ctrl_create_cq_rep *rep, int *fds, unsigned int *nfds)
{
	struct dev_cq *cq;
	int ret;

	if (req->cqe == 0 || req->cqe > (uint32_t)cl->dev->attr.max_cqe)
		return EINVAL;
	if (req->has_channel && chan_fd < 0)
		return EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return ENOMEM;
	cq->chan_fd = -1;
	ret = dev_obj_add(cl->dev, cl, &cq->o, OBJ_CQ);
	if (ret < 0)
		goto err_free;
	ret = dev_ring_create(&cq->ring, DROCE_SHM_CQ, cq->o.handle, dev_pow2(req->cqe),
			      DEV_CQE_SLOT, &fds[0]);
	if (ret < 0)
		goto err_obj;
	if (req->has_channel) {
		cq->chan_fd = fcntl(chan_fd, F_DUPFD_CLOEXEC, 0);
		fcntl(cq->chan_fd, F_SETFL, O_NONBLOCK);
	}
	cq->cqe = cq->ring.nslots;
	*nfds = 1;
	rep->cq_handle = cq->o.handle;
	rep->cqe = cq->cqe;
	rep->nslots = cq->ring.nslots;
	rep->map_len = cq->ring.map_len;
	return 0;

err_obj:
	dev_obj_del(cl->dev, &cq->o);
err_free:
	free(cq);
	return -ret;
}

/*
 * ibv_resize_cq: a new ring that takes the pending completions at the
 * indices they had, so the client's consumer index stays valid. Fewer
 * entries than are pending: EINVAL (Soft-RoCE and ibv_resize_cq(3) alike).
 * The client's cons is read once; an impossible one fails the call.
 */
static int
dev_resize_cq(struct droce_client *cl, const struct droce_ctrl_resize_cq_req *req,
	      struct droce_ctrl_resize_cq_rep *rep, int *fds, unsigned int *nfds)
{
	struct dev_cq *cq = dev_obj_get(cl, req->cq_handle, OBJ_CQ);
	struct dev_ring nr;
	uint32_t cons, pending, i;
	int ret;

	if (cq == NULL || req->cqe == 0 || req->cqe > (uint32_t)cl->dev->attr.max_cqe)
		return EINVAL;
	cons = droce_shm_load_cons(cq->ring.r);
	pending = cq->ring.idx - cons;
	if (pending > cq->ring.nslots || req->cqe < pending)
		return EINVAL;
	ret = dev_ring_create(&nr, DROCE_SHM_CQ, cq->o.handle, dev_pow2(req->cqe), DEV_CQE_SLOT,
			      &fds[0]);
	if (ret < 0)
		return -ret;
	for (i = cons; i != cq->ring.idx; i++)
		memcpy(dev_slot(&nr, i), dev_slot(&cq->ring, i), DEV_CQE_SLOT);
	nr.idx = cq->ring.idx;
	droce_shm_release(nr.r, cons);
	droce_shm_publish(nr.r, nr.idx);
	/* an arm the client set before asking (it arms no more until it has the new ring) */
	atomic_store_explicit(&nr.r->flag, atomic_load_explicit(&cq->ring.r->flag,
								 memory_order_acquire),
			      memory_order_release);
	atomic_store_explicit(&nr.r->error, cq->error ? 1 : 0, memory_order_release);
	dev_ring_free(&cq->ring);
	cq->ring = nr;
	cq->cqe = nr.nslots;
	*nfds = 1;
	rep->cqe = cq->cqe;
	rep->nslots = nr.nslots;
	rep->map_len = nr.map_len;
	return 0;
}

static int
dev_create_srq(struct droce_client *cl, const struct droce_ctrl_create_srq_req *req,
	       struct droce_ctrl_create_srq_rep *rep, int *fds, unsigned int *nfds)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct dev_srq *srq;
	int ret;

	if (pd == NULL || req->attr.max_wr == 0 || req->attr.max_wr > DEV_MAX_SRQ_WR ||
	    req->attr.max_sge > DROCE_SHM_MAX_SGE || req->attr.srq_limit > req->attr.max_wr)
		return EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return ENOMEM;
	ret = dev_obj_add(cl->dev, cl, &srq->o, OBJ_SRQ);
	if (ret < 0)
		goto err_free;
	ret = dev_ring_create(&srq->ring, DROCE_SHM_RQ, srq->o.handle, dev_pow2(req->attr.max_wr),
			      DEV_RWQE_SLOT, &fds[0]);
	if (ret < 0)
		goto err_obj;
	srq->pd = pd;
	pd->refs++;
	srq->max_wr = srq->ring.nslots;
	srq->max_sge = req->attr.max_sge ? req->attr.max_sge : 1;
	srq->limit = req->attr.srq_limit;
	*nfds = 1;
	rep->srq_handle = srq->o.handle;
	rep->attr.max_wr = srq->max_wr;
	rep->attr.max_sge = srq->max_sge;
	rep->attr.srq_limit = srq->limit;
	rep->nslots = srq->ring.nslots;
	rep->map_len = srq->ring.map_len;
	return 0;

err_obj:
	dev_obj_del(cl->dev, &srq->o);
err_free:
	free(srq);
	return -ret;
}

static int
dev_modify_srq(struct droce_client *cl, const struct droce_ctrl_modify_srq_req *req)
{
	struct dev_srq *srq = dev_obj_get(cl, req->srq_handle, OBJ_SRQ);

	if (srq == NULL || (req->mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if (req->mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;	/* no IBV_DEVICE_SRQ_RESIZE */
	if (req->mask & IBV_SRQ_LIMIT) {
		if (req->attr.srq_limit > srq->max_wr)
			return EINVAL;
		srq->limit = req->attr.srq_limit;
		dev_srq_check_limit(srq);
	}
	return 0;
}

int
dev_av_from_ah_attr(struct droce_dev *dev, const struct ibv_ah_attr *ah, struct droce_av *av)
{
	const uint8_t *dgid = ah->grh.dgid.raw;

	if (!ah->is_global || ah->grh.sgid_index >= dev->conf.n_gids ||
	    (ah->port_num != 0 && ah->port_num != 1))
		return EINVAL;
	memset(av, 0, sizeof(*av));
	memcpy(av->smac, dev->conf.mac, 6);
	memcpy(av->sgid, dev->conf.gid[ah->grh.sgid_index], 16);
	memcpy(av->dgid, dgid, 16);
	av->flow_label = ah->grh.flow_label & 0xfffff;
	av->tclass = ah->grh.traffic_class;
	av->hop_limit = ah->grh.hop_limit;
	av->ipv6 = !droce_gid_is_ipv4(dgid);
	if (droce_gid_is_ipv4(dgid) != droce_gid_is_ipv4(av->sgid))
		return EINVAL;		/* IPv4 to IPv6: no such path */
	/* the MAC may not be known yet: resolved again when a packet leaves */
	if (droce_gid_mcast_mac(dgid, av->dmac) < 0)
		dev->conf.port_ops->resolve(dev->conf.port_arg, dgid, av->dmac);
	return 0;
}

static int
dev_create_ah(struct droce_client *cl, const struct droce_ctrl_create_ah_req *req,
	      struct droce_ctrl_create_ah_rep *rep)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct dev_ah *ah;
	int ret;

	if (pd == NULL)
		return EINVAL;
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return ENOMEM;
	ret = dev_av_from_ah_attr(cl->dev, &req->attr, &ah->av);
	if (ret == 0 && dev_obj_add(cl->dev, cl, &ah->o, OBJ_AH) < 0)
		ret = ENOMEM;
	if (ret != 0) {
		free(ah);
		return ret;
	}
	ah->pd = pd;
	pd->refs++;
	rep->ah_handle = ah->o.handle;
	return 0;
}

static int
dev_mcast(struct droce_client *cl, const struct droce_ctrl_mcast_req *req, bool attach)
{
	struct droce_dev *dev = cl->dev;
	struct dev_qp *qp = dev_obj_get(cl, req->qp_handle, OBJ_QP);
	int ret;

	if (qp == NULL || qp->tqp.attr.type != IBV_QPT_UD || !droce_gid_is_mcast(req->gid.raw))
		return EINVAL;
	ret = attach ? droce_mcast_attach(dev->mcast, req->gid.raw, qp) :
		       droce_mcast_detach(dev->mcast, req->gid.raw, qp);
	if (ret < 0)
		return -ret;
	if (ret == 1 && attach)
		dev->conf.port_ops->mcast_join(dev->conf.port_arg, req->gid.raw);
	if (ret == 1 && !attach)
		dev->conf.port_ops->mcast_leave(dev->conf.port_arg, req->gid.raw);
	return 0;
}

/* ---- destruction ---- */

static int
dev_destroy_checked(struct droce_client *cl, uint32_t handle, enum dev_obj_type type)
{
	struct dev_obj *o = dev_obj_get(cl, handle, type);

	if (o == NULL)
		return EINVAL;
	switch (type) {
	case OBJ_PD:
		if (((struct dev_pd *)o)->refs > 0)
			return EBUSY;
		break;
	case OBJ_CQ:
		if (((struct dev_cq *)o)->refs > 0)
			return EBUSY;
		break;
	case OBJ_SRQ:
		if (((struct dev_srq *)o)->refs > 0)
			return EBUSY;
		break;
	case OBJ_MR:
		if (atomic_load(&((struct dev_mr *)o)->mr.mw_bound) > 0)
			return EBUSY;	/* ibv_dereg_mr(3): fails while a window is bound */
		break;
	case OBJ_QP:
		return dev_destroy_qp(cl, handle);
	default:
		break;
	}
	dev_obj_destroy(cl->dev, o);
	return 0;
}

static void
dev_obj_destroy(struct droce_dev *dev, struct dev_obj *o)
{
	switch (o->type) {
	case OBJ_QP:
		dev_qp_free(dev, (struct dev_qp *)o);
		return;			/* frees and unlinks itself */
	case OBJ_MR: {
		struct dev_mr *mr = (struct dev_mr *)o;

		/* a dying client's windows were destroyed first: nothing is bound */
		droce_mr_deregister(dev->keys, &mr->mr);
		munmap(mr->map, mr->map_len);
		mr->pd->refs--;
		break;
	}
	case OBJ_MW: {
		struct dev_mw *mw = (struct dev_mw *)o;

		droce_mw_dealloc(dev->keys, &mw->mw);
		mw->pd->refs--;
		break;
	}
	case OBJ_CQ: {
		struct dev_cq *cq = (struct dev_cq *)o;

		dev_ring_free(&cq->ring);
		if (cq->chan_fd >= 0)
			close(cq->chan_fd);
		break;
	}
	case OBJ_SRQ: {
		struct dev_srq *srq = (struct dev_srq *)o;

		dev_ring_free(&srq->ring);
		srq->pd->refs--;
		break;
	}
	case OBJ_AH:
		((struct dev_ah *)o)->pd->refs--;
		break;
	default:
		break;
	}
	dev_obj_del(dev, o);
	free(o);
}

/*
 * Take the client's posted UD sends in before one of its AHs goes: a send
 * posted before ibv_destroy_ah was valid when posted, and the WQE keeps a
 * copy of the address (the doorbell may not have been seen yet; mckey's
 * sender destroys its AH right after posting its unsignaled sends).
 */
static void
dev_drain_ud_qps(struct droce_client *cl)
{
	struct droce_dev *dev = cl->dev;
	uint32_t i;

	for (i = 0; i < DEV_MAX_OBJS; i++) {
		struct dev_obj *o = dev->objs[i];

		if (o != NULL && o->cl == cl && o->type == OBJ_QP &&
		    ((struct dev_qp *)o)->tqp.attr.type == IBV_QPT_UD)
			dev_qp_drain(dev, (struct dev_qp *)o, 0);
	}
}

/* ---- requests ---- */

static int
dev_hello(struct droce_client *cl, const struct droce_ctrl_hello_req *req, int async_fd,
	  struct droce_ctrl_hello_rep *rep, int *fds, unsigned int *nfds)
{
	int ret;

	if (req->abi_version != DROCE_SHM_ABI_VERSION)
		return EPROTO;
	if (cl->db.r != NULL)
		return EINVAL;		/* once per connection */
	ret = dev_ring_create(&cl->db, DROCE_SHM_DB, cl->id, DEV_DB_SLOTS,
			      sizeof(struct droce_shm_db), &fds[0]);
	if (ret < 0)
		return -ret;
	if (async_fd >= 0) {
		cl->async_fd = fcntl(async_fd, F_DUPFD_CLOEXEC, 0);
		fcntl(cl->async_fd, F_SETFL, O_NONBLOCK);
	}
	*nfds = 1;
	if (dev_client_wake_open(cl, &fds[1]) == 0)
		*nfds = 2;		/* --idle wait: the shim's wake eventfd */
	rep->ctx_handle = cl->id;
	rep->db_nslots = DEV_DB_SLOTS;
	rep->db_map_len = cl->db.map_len;
	snprintf(rep->dev_name, sizeof(rep->dev_name), "%s", cl->dev->conf.name);
	rep->node_guid = htobe64(cl->dev->conf.node_guid);
	return 0;
}

/* Request body sizes, checked exactly: a short or long body is malformed. */
static const uint32_t req_len[DROCE_CTRL_TYPE_COUNT] = {
	[DROCE_CTRL_HELLO] = sizeof(struct droce_ctrl_hello_req),
	[DROCE_CTRL_QUERY_DEVICE] = 0,
	[DROCE_CTRL_QUERY_PORT] = sizeof(struct droce_ctrl_query_port_req),
	[DROCE_CTRL_QUERY_GID] = sizeof(struct droce_ctrl_query_gid_req),
	[DROCE_CTRL_ALLOC_PD] = 0,
	[DROCE_CTRL_DEALLOC_PD] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_REG_MR] = sizeof(struct droce_ctrl_reg_mr_req),
	[DROCE_CTRL_DEREG_MR] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_ALLOC_MW] = sizeof(struct droce_ctrl_alloc_mw_req),
	[DROCE_CTRL_DEALLOC_MW] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_CQ] = sizeof(struct droce_ctrl_create_cq_req),
	[DROCE_CTRL_DESTROY_CQ] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_SRQ] = sizeof(struct droce_ctrl_create_srq_req),
	[DROCE_CTRL_MODIFY_SRQ] = sizeof(struct droce_ctrl_modify_srq_req),
	[DROCE_CTRL_QUERY_SRQ] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_DESTROY_SRQ] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_QP] = sizeof(struct droce_ctrl_create_qp_req),
	[DROCE_CTRL_MODIFY_QP] = sizeof(struct droce_ctrl_modify_qp_req),
	[DROCE_CTRL_QUERY_QP] = sizeof(struct droce_ctrl_query_qp_req),
	[DROCE_CTRL_DESTROY_QP] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_CREATE_AH] = sizeof(struct droce_ctrl_create_ah_req),
	[DROCE_CTRL_DESTROY_AH] = sizeof(struct droce_ctrl_handle),
	[DROCE_CTRL_ATTACH_MCAST] = sizeof(struct droce_ctrl_mcast_req),
	[DROCE_CTRL_DETACH_MCAST] = sizeof(struct droce_ctrl_mcast_req),
	[DROCE_CTRL_REREG_MR] = sizeof(struct droce_ctrl_rereg_mr_req),
	[DROCE_CTRL_RESIZE_CQ] = sizeof(struct droce_ctrl_resize_cq_req),
};

int
droce_dev_request(struct droce_client *cl, const struct droce_ctrl_hdr *hdr, const void *body,
		  const int *fds, unsigned int nfds, void *rep, uint32_t *rep_len, int *rep_fds,
		  unsigned int *rep_nfds)
{
	struct droce_dev *dev = cl->dev;
	const struct droce_ctrl_handle *h = body;
	int fd0 = nfds > 0 ? fds[0] : -1;

	*rep_len = 0;
	*rep_nfds = 0;
	if (hdr->type == DROCE_CTRL_NONE || hdr->type >= DROCE_CTRL_TYPE_COUNT ||
	    hdr->len != req_len[hdr->type])
		return -EPROTO;
	if (hdr->type != DROCE_CTRL_HELLO && cl->db.r == NULL)
		return -EPROTO;		/* HELLO comes first */

	switch (hdr->type) {
	case DROCE_CTRL_HELLO:
		*rep_len = sizeof(struct droce_ctrl_hello_rep);
		return dev_hello(cl, body, fd0, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_QUERY_DEVICE: {
		struct droce_ctrl_query_device_rep *r = rep;

		*rep_len = sizeof(*r);
		memset(r, 0, sizeof(*r));
		r->attr = dev->attr;
		r->max_inline_data = DROCE_SHM_MAX_INLINE;
		return 0;
	}
	case DROCE_CTRL_QUERY_PORT: {
		const struct droce_ctrl_query_port_req *q = body;
		struct droce_ctrl_query_port_rep *r = rep;

		if (q->port_num != 1)
			return EINVAL;
		*rep_len = sizeof(*r);
		r->attr = dev->port;
		return 0;
	}
	case DROCE_CTRL_QUERY_GID: {
		const struct droce_ctrl_query_gid_req *q = body;
		struct droce_ctrl_query_gid_rep *r = rep;

		if (q->port_num != 1 || q->index >= (uint32_t)dev->port.gid_tbl_len)
			return EINVAL;
		*rep_len = sizeof(*r);
		memset(r, 0, sizeof(*r));
		memcpy(r->gid.raw, dev->conf.gid[q->index], 16);
		r->gid_type = IBV_GID_TYPE_ROCE_V2;
		r->valid = 1;
		return 0;
	}
	case DROCE_CTRL_ALLOC_PD:
		*rep_len = sizeof(struct droce_ctrl_alloc_pd_rep);
		return dev_alloc_pd(cl, rep);
	case DROCE_CTRL_DEALLOC_PD:
		return dev_destroy_checked(cl, h->handle, OBJ_PD);
	case DROCE_CTRL_REG_MR:
		*rep_len = sizeof(struct droce_ctrl_reg_mr_rep);
		return dev_reg_mr(cl, body, fd0, rep);
	case DROCE_CTRL_DEREG_MR:
		return dev_destroy_checked(cl, h->handle, OBJ_MR);
	case DROCE_CTRL_ALLOC_MW:
		*rep_len = sizeof(struct droce_ctrl_alloc_mw_rep);
		return dev_alloc_mw(cl, body, rep);
	case DROCE_CTRL_DEALLOC_MW:
		return dev_destroy_checked(cl, h->handle, OBJ_MW);
	case DROCE_CTRL_CREATE_CQ:
		*rep_len = sizeof(struct droce_ctrl_create_cq_rep);
		return dev_create_cq(cl, body, fd0, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_DESTROY_CQ:
		return dev_destroy_checked(cl, h->handle, OBJ_CQ);
	case DROCE_CTRL_CREATE_SRQ:
		*rep_len = sizeof(struct droce_ctrl_create_srq_rep);
		return dev_create_srq(cl, body, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_MODIFY_SRQ:
		return dev_modify_srq(cl, body);
	case DROCE_CTRL_QUERY_SRQ: {
		struct dev_srq *srq = dev_obj_get(cl, h->handle, OBJ_SRQ);
		struct droce_ctrl_query_srq_rep *r = rep;

		if (srq == NULL)
			return EINVAL;
		*rep_len = sizeof(*r);
		r->attr.max_wr = srq->max_wr;
		r->attr.max_sge = srq->max_sge;
		r->attr.srq_limit = srq->limit;
		return 0;
	}
	case DROCE_CTRL_DESTROY_SRQ:
		return dev_destroy_checked(cl, h->handle, OBJ_SRQ);
	case DROCE_CTRL_CREATE_QP:
		*rep_len = sizeof(struct droce_ctrl_create_qp_rep);
		return dev_create_qp(cl, body, rep, rep_fds, rep_nfds);
	case DROCE_CTRL_MODIFY_QP:
		return dev_modify_qp(cl, body);
	case DROCE_CTRL_QUERY_QP:
		*rep_len = sizeof(struct droce_ctrl_query_qp_rep);
		return dev_query_qp(cl, body, rep);
	case DROCE_CTRL_DESTROY_QP:
		return dev_destroy_checked(cl, h->handle, OBJ_QP);
	case DROCE_CTRL_CREATE_AH:
		*rep_len = sizeof(struct droce_ctrl_create_ah_rep);
		return dev_create_ah(cl, body, rep);
	case DROCE_CTRL_DESTROY_AH:
		dev_drain_ud_qps(cl);
		return dev_destroy_checked(cl, h->handle, OBJ_AH);
	case DROCE_CTRL_ATTACH_MCAST:
		return dev_mcast(cl, body, true);
	case DROCE_CTRL_DETACH_MCAST:
		return dev_mcast(cl, body, false);
	case DROCE_CTRL_REREG_MR:
		*rep_len = sizeof(struct droce_ctrl_rereg_mr_rep);
		return dev_rereg_mr(cl, body, fd0, rep);
	case DROCE_CTRL_RESIZE_CQ:
		*rep_len = sizeof(struct droce_ctrl_resize_cq_rep);
		return dev_resize_cq(cl, body, rep, rep_fds, rep_nfds);
	default:
		return EOPNOTSUPP;
	}
}

void
droce_dev_stats(const struct droce_dev *dev, struct droce_dev_stats *st)
{
	const struct droce_client *cl;
	uint32_t i, k;

	memset(st, 0, sizeof(*st));
	memcpy(st->cnt, dev->cnt, sizeof(st->cnt));
	for (cl = dev->clients; cl != NULL; cl = cl->next)
		st->clients++;
	st->pds = dev->nobj[OBJ_PD];
	st->mrs = dev->nobj[OBJ_MR];
	st->mws = dev->nobj[OBJ_MW];
	st->cqs = dev->nobj[OBJ_CQ];
	st->srqs = dev->nobj[OBJ_SRQ];
	st->qps = dev->nobj[OBJ_QP];
	st->ahs = dev->nobj[OBJ_AH];
	st->mcast_groups = droce_mcast_groups(dev->mcast);
	memcpy(st->tqp_cnt, dev->tqp_dead, sizeof(st->tqp_cnt));
	for (i = 0; i < DEV_MAX_QP; i++)
		if (dev->qpn[i] != NULL)
			for (k = 0; k < DROCE_TQP_CNT_COUNT; k++)
				st->tqp_cnt[k] += dev->qpn[i]->tqp.cnt[k];
}

void
droce_dev_query(const struct droce_dev *dev, struct ibv_device_attr *attr,
		struct ibv_port_attr *port)
{
	*attr = dev->attr;
	*port = dev->port;
}

unsigned int
droce_dev_describe(const struct droce_dev *dev, char (*lines)[128], unsigned int max)
{
	static const char *const type_name[] = {
		[IBV_QPT_RC] = "RC", [IBV_QPT_UC] = "UC", [IBV_QPT_UD] = "UD",
	};
	const struct droce_client *cl;
	unsigned int n = 0;
	uint32_t i;

	for (cl = dev->clients; cl != NULL && n < max; cl = cl->next) {
		uint32_t cnt[OBJ_TYPE_COUNT] = { 0 };

		for (i = 0; i < DEV_MAX_OBJS; i++)
			if (dev->objs[i] != NULL && dev->objs[i]->cl == cl)
				cnt[dev->objs[i]->type]++;
		snprintf(lines[n++], 128, "client %u pid %u uid %u: %u pd %u mr %u mw %u cq %u srq %u qp %u ah",
			 cl->id, cl->cred.pid, cl->cred.uid, cnt[OBJ_PD], cnt[OBJ_MR], cnt[OBJ_MW],
			 cnt[OBJ_CQ], cnt[OBJ_SRQ], cnt[OBJ_QP], cnt[OBJ_AH]);
		for (i = 0; i < DEV_MAX_OBJS && n < max; i++) {
			const struct dev_qp *qp = (const void *)dev->objs[i];

			if (qp == NULL || qp->o.cl != cl || qp->o.type != OBJ_QP)
				continue;
			snprintf(lines[n++], 128, "  qp 0x%06x %s %s dest 0x%06x sent %lu recv %lu retrans %lu",
				 qp->tqp.attr.qpn, type_name[qp->tqp.attr.type],
				 droce_qp_state_name(qp->state), qp->tqp.attr.dest_qpn,
				 (unsigned long)qp->tqp.cnt[DROCE_TQP_CNT_TX_PKTS],
				 (unsigned long)qp->tqp.cnt[DROCE_TQP_CNT_RX_PKTS],
				 (unsigned long)qp->tqp.cnt[DROCE_TQP_CNT_RETRANSMITS]);
		}
	}
	return n;
}
