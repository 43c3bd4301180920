/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * mock_droced SOCKET_PATH: a stand-in for droced that speaks the control
 * protocol (lib/ctrl) and the ring ABI (lib/shm) well enough to run
 * unmodified rdma-core programs through the shim in loopback: every QP of
 * every client lives in this one process, and a send goes straight into
 * the receive queue of the QP whose number it names. No wire, no DPDK.
 *
 * It is a test tool for the shim, not a model of the engine: one thread,
 * a poll loop, RC/UC/UD SEND, RDMA WRITE (with immediate), RDMA READ and
 * the two atomics between registered memory regions it maps from the
 * memfds REG_MR hands over, completions with the statuses rdma-core
 * programs look at, completion-channel and async-event pipes. A send that
 * finds no receive waits (as RNR retry would). Limits are small and fixed.
 *
 * It serves until SIGTERM/SIGINT, or until stdin reaches end of file when
 * started with --stdin-lifetime (so a test harness that dies takes it along).
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_ctrl.h"
#include "droce_shm.h"

#define MAX_CLIENTS	64
#define MAX_OBJS	1024
#define DB_SLOTS	256
#define MAX_INLINE	DROCE_SHM_MAX_INLINE
#define NODE_GUID	0x0002c9fffe00d0ceull
#define GRH_BYTES	40

enum obj_kind { O_FREE, O_PD, O_MR, O_MW, O_CQ, O_QP, O_SRQ, O_AH };

struct ring {
	struct droce_shm_ring *r;
	size_t len;
	uint32_t cons;	/* SQ/RQ: ours; CQ: unused */
	uint32_t prod;	/* CQ: ours */
};

struct obj {
	enum obj_kind kind;
	int client;
	/* MR */
	uint8_t *map;
	size_t map_len;
	uint8_t *base;		/* client address addr maps here */
	uint64_t addr, length, iova;
	uint32_t key, access;
	/* CQ */
	int chan_wfd;
	/* QP / SRQ / CQ rings */
	struct ring sq, rq, cq;
	uint32_t qpn, qp_type, sq_sig_all, send_cq, recv_cq, srq, pd;
	struct ibv_qp_attr attr;
	struct ibv_qp_cap cap;
	struct ibv_srq_attr srq_attr;
	struct ibv_ah_attr ah;
};

struct client {
	int fd;
	int async_wfd;
	struct ring db;
	uint32_t db_cons;
};

static struct client clients[MAX_CLIENTS];
static struct obj objs[MAX_OBJS + 1];	/* handle = index, 0 unused */
static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- objects and rings ---- */

static uint32_t
obj_new(enum obj_kind kind, int client)
{
	uint32_t h;

	for (h = 1; h <= MAX_OBJS; h++)
		if (objs[h].kind == O_FREE) {
			memset(&objs[h], 0, sizeof(objs[h]));
			objs[h].kind = kind;
			objs[h].client = client;
			objs[h].chan_wfd = -1;
			return h;
		}
	return 0;
}

static struct obj *
obj_get(int client, uint32_t h, enum obj_kind kind)
{
	if (h == 0 || h > MAX_OBJS || objs[h].kind != kind || objs[h].client != client)
		return NULL;
	return &objs[h];
}

static uint32_t
pow2(uint32_t n, uint32_t min)
{
	uint32_t p = min;

	while (p < n)
		p <<= 1;
	return p;
}

/* A ring in a fresh memfd; *fd for the client. @return 0 or errno. */
static int
ring_new(struct ring *rg, enum droce_shm_kind kind, uint32_t handle, uint32_t nslots,
	 uint32_t slot, int *fd)
{
	uint64_t len = droce_shm_ring_bytes(nslots, slot);
	void *p;

	*fd = memfd_create("mock-ring", MFD_CLOEXEC);
	if (*fd < 0)
		return errno;
	if (ftruncate(*fd, (off_t)len) != 0)
		return errno;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED)
		return errno;
	if (droce_shm_ring_init(p, kind, handle, nslots, slot) != 0) {
		munmap(p, len);
		return EINVAL;
	}
	rg->r = p;
	rg->len = len;
	rg->cons = rg->prod = 0;
	return 0;
}

static void
ring_free(struct ring *rg)
{
	if (rg->r != NULL)
		munmap(rg->r, rg->len);
	rg->r = NULL;
}

static void
obj_free(uint32_t h)
{
	struct obj *o = &objs[h];

	if (o->map != NULL)
		munmap(o->map, o->map_len);
	ring_free(&o->sq);
	ring_free(&o->rq);
	ring_free(&o->cq);
	if (o->chan_wfd >= 0)
		close(o->chan_wfd);
	memset(o, 0, sizeof(*o));
}

static void
client_drop(int c)
{
	uint32_t h;

	for (h = 1; h <= MAX_OBJS; h++)
		if (objs[h].kind != O_FREE && objs[h].client == c)
			obj_free(h);
	close(clients[c].fd);
	if (clients[c].async_wfd >= 0)
		close(clients[c].async_wfd);
	ring_free(&clients[c].db);
	clients[c].fd = -1;
}

/* ---- memory ---- */

/* Memory [addr, addr+len) of region @p key (lkey or rkey) of @p client, or NULL. */
static uint8_t *
mem_at(int client, uint32_t key, uint64_t addr, uint64_t len, uint32_t need, bool remote)
{
	uint32_t h;

	for (h = 1; h <= MAX_OBJS; h++) {
		struct obj *o = &objs[h];
		uint64_t start;

		if (o->kind != O_MR || o->client != client || o->key != key)
			continue;
		if ((o->access & need) != need || o->map == NULL)
			return NULL;
		start = remote ? o->iova : o->addr;
		if (addr < start || len > o->length || addr - start > o->length - len)
			return NULL;
		return o->base + (addr - start);
	}
	return NULL;
}

/* ---- completions ---- */

static void
cqe_push(uint32_t cq_h, const struct droce_shm_cqe *e, bool solicited)
{
	struct obj *cq = &objs[cq_h];
	if (cq->kind != O_CQ)
		return;
	if (cq->cq.prod - droce_shm_load_cons(cq->cq.r) >= droce_shm_nslots(cq->cq.r))
		return;	/* overrun: dropped (a real engine reports CQ_ERR) */
	memcpy(droce_shm_slot(cq->cq.r, cq->cq.prod), e, sizeof(*e));
	droce_shm_publish(cq->cq.r, ++cq->cq.prod);
	if (droce_shm_cq_fire(cq->cq.r, solicited || e->status != IBV_WC_SUCCESS)) {
		if (cq->chan_wfd >= 0)
			(void)!write(cq->chan_wfd, &cq_h, sizeof(cq_h));
	}
}

static struct obj *
qp_by_num(uint32_t qpn)
{
	uint32_t h;

	for (h = 1; h <= MAX_OBJS; h++)
		if (objs[h].kind == O_QP && objs[h].qpn == qpn)
			return &objs[h];
	return NULL;
}

/* Gather a send WQE's payload. @return length, or -1 (local protection). */
static int64_t
gather(const struct obj *qp, const struct droce_shm_swqe *w, uint8_t *buf, size_t cap)
{
	uint64_t total = 0;
	uint32_t i;

	if (w->send_flags & IBV_SEND_INLINE) {
		if (w->inline_len > MAX_INLINE || w->inline_len > cap)
			return -1;
		memcpy(buf, w->inline_data, w->inline_len);
		return w->inline_len;
	}
	for (i = 0; i < w->num_sge && i < DROCE_SHM_MAX_SGE; i++) {
		uint8_t *p = mem_at(qp->client, w->sge[i].lkey, w->sge[i].addr, w->sge[i].length, 0,
				    false);

		if (p == NULL || total + w->sge[i].length > cap)
			return -1;
		memcpy(buf + total, p, w->sge[i].length);
		total += w->sge[i].length;
	}
	return (int64_t)total;
}

/* Scatter into a receive WQE's buffers. @return false on a length or key error. */
static bool
scatter(int client, const struct droce_shm_sge *sge, uint32_t nsge, const uint8_t *buf,
	size_t len)
{
	size_t off = 0;
	uint32_t i;

	for (i = 0; i < nsge && off < len; i++) {
		size_t n = len - off < sge[i].length ? len - off : sge[i].length;
		uint8_t *p = mem_at(client, sge[i].lkey, sge[i].addr, n, IBV_ACCESS_LOCAL_WRITE,
				    false);

		if (p == NULL)
			return false;
		memcpy(p, buf + off, n);
		off += n;
	}
	return off == len;
}

/* The next receive WQE of @p qp (its SRQ's if it has one), or false. */
static bool
rwqe_take(struct obj *qp, struct droce_shm_rwqe *out)
{
	struct ring *rq = qp->srq != 0 ? &objs[qp->srq].rq : &qp->rq;

	if (rq->r == NULL || droce_shm_load_prod(rq->r) == rq->cons)
		return false;
	memcpy(out, droce_shm_slot(rq->r, rq->cons), sizeof(*out));
	droce_shm_release(rq->r, ++rq->cons);
	return true;
}

static bool
rq_ready(struct obj *qp)
{
	struct ring *rq = qp->srq != 0 ? &objs[qp->srq].rq : &qp->rq;

	return rq->r != NULL && droce_shm_load_prod(rq->r) != rq->cons;
}

static enum ibv_wc_opcode
wc_opcode(uint32_t op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

/*
 * Execute one send WQE of @p qp and release its ring slot. @return 1 done,
 * 0 must wait (no receive posted at the peer yet; the slot stays taken).
 */
static int
execute(struct obj *qp, const struct droce_shm_swqe *w)
{
	static uint8_t buf[1 << 22];
	struct droce_shm_cqe sc = { .wr_id = w->wr_id, .status = IBV_WC_SUCCESS,
				    .opcode = wc_opcode(w->opcode), .qp_num = qp->qpn };
	struct droce_shm_cqe rc = { .status = IBV_WC_SUCCESS };
	uint32_t dqpn = qp->qp_type == IBV_QPT_UD ? w->remote_qpn : qp->attr.dest_qp_num;
	struct obj *peer = qp_by_num(dqpn);
	struct droce_shm_rwqe r;
	bool recv = false;
	int64_t len = 0;
	uint8_t *p;

	if (qp->attr.qp_state != IBV_QPS_RTS) {
		sc.status = IBV_WC_WR_FLUSH_ERR;
		goto complete;
	}
	if (w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM ||
	    w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		if (peer == NULL || (peer->attr.qp_state != IBV_QPS_RTR &&
				     peer->attr.qp_state != IBV_QPS_RTS)) {
			if (qp->qp_type == IBV_QPT_UD)
				goto complete;	/* UD: silently lost */
			sc.status = IBV_WC_RETRY_EXC_ERR;
			goto complete;
		}
		if (!rq_ready(peer))
			return 0;	/* RNR: try again later */
	}
	len = w->opcode == IBV_WR_RDMA_READ ? 0 : gather(qp, w, buf + GRH_BYTES,
							    sizeof(buf) - GRH_BYTES);
	if (len < 0) {
		sc.status = IBV_WC_LOC_PROT_ERR;
		goto complete;
	}
	switch (w->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		recv = rwqe_take(peer, &r);
		rc.opcode = IBV_WC_RECV;
		rc.byte_len = (uint32_t)len;
		if (peer->qp_type == IBV_QPT_UD) {	/* the GRH (here IPv6-style) comes first */
			memset(buf, 0, GRH_BYTES);
			buf[0] = 0x60;
			rc.byte_len += GRH_BYTES;
			rc.wc_flags |= IBV_WC_GRH;
			if (!scatter(peer->client, r.sge, r.num_sge, buf, (size_t)len + GRH_BYTES))
				rc.status = IBV_WC_LOC_LEN_ERR;
		} else if (!scatter(peer->client, r.sge, r.num_sge, buf + GRH_BYTES, (size_t)len)) {
			rc.status = IBV_WC_LOC_LEN_ERR;
		}
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		p = peer == NULL ? NULL : mem_at(peer->client, w->rkey, w->remote_addr,
						 (uint64_t)len, IBV_ACCESS_REMOTE_WRITE, true);
		if (p == NULL) {
			sc.status = IBV_WC_REM_ACCESS_ERR;
			goto complete;
		}
		memcpy(p, buf + GRH_BYTES, (size_t)len);
		if (w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			recv = rwqe_take(peer, &r);
			rc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
			rc.byte_len = (uint32_t)len;
		}
		break;
	case IBV_WR_RDMA_READ: {
		uint64_t want = 0;
		uint32_t i;

		for (i = 0; i < w->num_sge && i < DROCE_SHM_MAX_SGE; i++)
			want += w->sge[i].length;
		p = peer == NULL ? NULL : mem_at(peer->client, w->rkey, w->remote_addr, want,
						 IBV_ACCESS_REMOTE_READ, true);
		if (p == NULL) {
			sc.status = IBV_WC_REM_ACCESS_ERR;
			goto complete;
		}
		if (!scatter(qp->client, w->sge, w->num_sge, p, want))
			sc.status = IBV_WC_LOC_PROT_ERR;
		sc.byte_len = (uint32_t)want;
		break;
	}
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD: {
		uint64_t old;

		p = peer == NULL ? NULL : mem_at(peer->client, w->rkey, w->remote_addr, 8,
						 IBV_ACCESS_REMOTE_ATOMIC, true);
		if (p == NULL || (w->remote_addr & 7)) {
			sc.status = IBV_WC_REM_ACCESS_ERR;
			goto complete;
		}
		memcpy(&old, p, 8);
		if (w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			uint64_t nv = old + w->compare_add;

			memcpy(p, &nv, 8);
		} else if (old == w->compare_add) {
			memcpy(p, &w->swap, 8);
		}
		if (!scatter(qp->client, w->sge, w->num_sge, (const uint8_t *)&old, 8))
			sc.status = IBV_WC_LOC_PROT_ERR;
		sc.byte_len = 8;
		break;
	}
	default:
		sc.status = IBV_WC_LOC_QP_OP_ERR;
		goto complete;
	}
	if (recv) {
		rc.wr_id = r.wr_id;
		rc.qp_num = peer->qpn;
		rc.src_qp = qp->qpn;
		if (w->opcode == IBV_WR_SEND_WITH_IMM || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			rc.wc_flags |= IBV_WC_WITH_IMM;
			rc.imm_data = w->imm_data;
		}
		cqe_push(peer->recv_cq, &rc, w->send_flags & IBV_SEND_SOLICITED);
	}
complete:
	/*
	 * Free the ring slot before the completion is visible: a client that
	 * sees it may post again at once and must find room (as in droced,
	 * which takes WQEs off the ring before executing them).
	 */
	droce_shm_release(qp->sq.r, ++qp->sq.cons);
	if (sc.status != IBV_WC_SUCCESS || (w->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		cqe_push(qp->send_cq, &sc, false);
	if (sc.status != IBV_WC_SUCCESS && sc.status != IBV_WC_WR_FLUSH_ERR) {
		qp->attr.qp_state = IBV_QPS_ERR;
		atomic_store(&qp->sq.r->error, 1);
	}
	return 1;
}

/* @return whether any work was done. */
static bool
qp_progress(struct obj *qp)
{
	struct droce_shm_swqe w;
	bool busy = false;

	if (qp->sq.r == NULL)
		return false;
	droce_shm_doorbell_clear(&qp->sq.r->flag);
	if (qp->rq.r != NULL)
		droce_shm_doorbell_clear(&qp->rq.r->flag);
	while (droce_shm_load_prod(qp->sq.r) != qp->sq.cons) {
		memcpy(&w, droce_shm_slot(qp->sq.r, qp->sq.cons), sizeof(w));
		if (!execute(qp, &w))
			break;	/* it released the slot if it completed */
		busy = true;
	}
	/* a QP in error flushes its receives */
	if (qp->attr.qp_state == IBV_QPS_ERR && qp->rq.r != NULL) {
		struct droce_shm_rwqe r;

		while (rwqe_take(qp, &r)) {
			struct droce_shm_cqe e = { .wr_id = r.wr_id, .status = IBV_WC_WR_FLUSH_ERR,
						   .opcode = IBV_WC_RECV, .qp_num = qp->qpn };

			cqe_push(qp->recv_cq, &e, false);
			busy = true;
		}
	}
	return busy;
}

/* @return whether any work was done. */
static bool
engine_poll(void)
{
	uint32_t handles[64], h;
	bool busy = false;
	int c;

	for (c = 0; c < MAX_CLIENTS; c++)
		if (clients[c].fd >= 0 && clients[c].db.r != NULL)
			(void)droce_shm_doorbell_take(clients[c].db.r, &clients[c].db_cons, handles,
						      64);
	/* rescan everything: the mock has few QPs and no budget to keep */
	for (h = 1; h <= MAX_OBJS; h++)
		if (objs[h].kind == O_QP && qp_progress(&objs[h]))
			busy = true;
	return busy;
}

/* ---- control messages ---- */

static void
fill_device(struct droce_ctrl_query_device_rep *r)
{
	struct ibv_device_attr *a = &r->attr;

	memset(r, 0, sizeof(*r));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "mock-0.1");
	a->node_guid = htobe64(NODE_GUID);
	a->sys_image_guid = htobe64(NODE_GUID);
	a->max_mr_size = 1ull << 40;
	a->page_size_cap = 4096;
	a->vendor_id = 0x1af4;
	a->vendor_part_id = 1;
	a->max_qp = MAX_OBJS;
	a->max_qp_wr = 4096;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a->max_sge = DROCE_SHM_MAX_SGE;
	a->max_sge_rd = DROCE_SHM_MAX_SGE;
	a->max_cq = MAX_OBJS;
	a->max_cqe = 65535;
	a->max_mr = MAX_OBJS;
	a->max_pd = MAX_OBJS;
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
	a->max_res_rd_atom = 16 * MAX_OBJS;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_mw = MAX_OBJS;
	a->max_srq = MAX_OBJS;
	a->max_srq_wr = 4096;
	a->max_srq_sge = DROCE_SHM_MAX_SGE;
	a->max_ah = MAX_OBJS;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	r->max_inline_data = MAX_INLINE;
}

static int
handle_msg(int c, const struct droce_ctrl_hdr *h, const void *body, const int *fds,
	   void *rep, uint32_t *rep_len, int *rep_fds, unsigned int *nrep)
{
	uint32_t hnd;
	int ret;

	*rep_len = 0;
	*nrep = 0;
#define NEED(type) do { if (h->len != sizeof(type)) return EINVAL; } while (0)
	switch (h->type) {
	case DROCE_CTRL_HELLO: {
		struct droce_ctrl_hello_rep *r = rep;

		NEED(struct droce_ctrl_hello_req);
		if (fds[0] < 0)
			return EINVAL;
		clients[c].async_wfd = dup(fds[0]);
		fcntl(clients[c].async_wfd, F_SETFL, O_NONBLOCK);
		ret = ring_new(&clients[c].db, DROCE_SHM_DB, (uint32_t)c, DB_SLOTS,
			       sizeof(struct droce_shm_db), &rep_fds[0]);
		if (ret != 0)
			return ret;
		memset(r, 0, sizeof(*r));
		r->ctx_handle = (uint32_t)c;
		r->db_nslots = DB_SLOTS;
		r->db_map_len = clients[c].db.len;
		r->n_db = 1;		/* one engine */
		snprintf(r->dev_name, sizeof(r->dev_name), "mock0");
		r->node_guid = htobe64(NODE_GUID);
		*rep_len = sizeof(*r);
		*nrep = 1;
		return 0;
	}
	case DROCE_CTRL_QUERY_DEVICE:
		fill_device(rep);
		*rep_len = sizeof(struct droce_ctrl_query_device_rep);
		return 0;
	case DROCE_CTRL_QUERY_PORT: {
		const struct droce_ctrl_query_port_req *q = body;
		struct droce_ctrl_query_port_rep *r = rep;

		NEED(*q);
		if (q->port_num != 1)
			return EINVAL;
		memset(r, 0, sizeof(*r));
		r->attr.state = IBV_PORT_ACTIVE;
		r->attr.max_mtu = IBV_MTU_4096;
		r->attr.active_mtu = IBV_MTU_1024;
		r->attr.gid_tbl_len = 4;
		r->attr.max_msg_sz = 1u << 31;
		r->attr.pkey_tbl_len = 1;
		r->attr.active_width = 1;
		r->attr.active_speed = 1;
		r->attr.phys_state = 5;
		r->attr.link_layer = IBV_LINK_LAYER_ETHERNET;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_QUERY_GID: {
		const struct droce_ctrl_query_gid_req *q = body;
		struct droce_ctrl_query_gid_rep *r = rep;

		NEED(*q);
		if (q->port_num != 1 || q->index >= 4)
			return EINVAL;
		memset(r, 0, sizeof(*r));
		r->gid_type = IBV_GID_TYPE_ROCE_V2;
		if (q->index == 0) {	/* fe80::202:c9ff:fe00:d0ce */
			uint64_t g = htobe64(NODE_GUID);

			r->gid.raw[0] = 0xfe;
			r->gid.raw[1] = 0x80;
			memcpy(&r->gid.raw[8], &g, 8);
			r->valid = 1;
		} else if (q->index == 1) {	/* ::ffff:127.0.0.1 */
			r->gid.raw[10] = r->gid.raw[11] = 0xff;
			r->gid.raw[12] = 127;
			r->gid.raw[15] = 1;
			r->valid = 1;
		}
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_ALLOC_PD: {
		struct droce_ctrl_alloc_pd_rep *r = rep;

		hnd = obj_new(O_PD, c);
		if (hnd == 0)
			return ENOMEM;
		r->pd_handle = hnd;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_REG_MR: {
		const struct droce_ctrl_reg_mr_req *q = body;
		struct droce_ctrl_reg_mr_rep *r = rep;
		struct stat st;
		uint64_t aoff;
		struct obj *o;
		void *p;

		NEED(*q);
		if (fds[0] < 0 || obj_get(c, q->pd_handle, O_PD) == NULL || q->length == 0)
			return EINVAL;
		/* as droced: a regular file (droced guards one that may shrink) */
		if (fstat(fds[0], &st) != 0 || !S_ISREG(st.st_mode))
			return EINVAL;
		hnd = obj_new(O_MR, c);
		if (hnd == 0)
			return ENOMEM;
		o = &objs[hnd];
		aoff = q->fd_offset & ~4095ull;
		o->map_len = q->length + (q->fd_offset - aoff);
		p = mmap(NULL, o->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], (off_t)aoff);
		if (p == MAP_FAILED)
			p = mmap(NULL, o->map_len, PROT_READ, MAP_SHARED, fds[0], (off_t)aoff);
		/*
		 * a process's mem file (an indirect region: pages the shim could
		 * not move) cannot be mapped; droced copies through it, the mock
		 * keeps the region and reaches none of it (mem_at)
		 */
		if (p == MAP_FAILED && errno == ENODEV)
			p = NULL;
		if (p == MAP_FAILED) {
			ret = errno;
			memset(o, 0, sizeof(*o));
			return ret;
		}
		o->map = p;
		o->base = p == NULL ? NULL : o->map + (q->fd_offset - aoff);
		o->addr = q->addr;
		o->length = q->length;
		o->iova = q->iova;
		o->access = q->access;
		o->key = (hnd << 8) | 0x5a;
		r->mr_handle = hnd;
		r->lkey = r->rkey = o->key;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_ALLOC_MW: {
		const struct droce_ctrl_alloc_mw_req *q = body;
		struct droce_ctrl_alloc_mw_rep *r = rep;

		NEED(*q);
		hnd = obj_new(O_MW, c);
		if (hnd == 0)
			return ENOMEM;
		r->mw_handle = hnd;
		r->rkey = (hnd << 8) | 0x77;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_CREATE_CQ: {
		const struct droce_ctrl_create_cq_req *q = body;
		struct droce_ctrl_create_cq_rep *r = rep;
		uint32_t n;

		NEED(*q);
		if (q->cqe == 0 || q->cqe > 65535 || (q->has_channel && fds[0] < 0))
			return EINVAL;
		hnd = obj_new(O_CQ, c);
		if (hnd == 0)
			return ENOMEM;
		n = pow2(q->cqe + 1, 16);
		ret = ring_new(&objs[hnd].cq, DROCE_SHM_CQ, hnd, n, 64, &rep_fds[0]);
		if (ret != 0)
			return ret;
		if (q->has_channel) {
			objs[hnd].chan_wfd = dup(fds[0]);
			fcntl(objs[hnd].chan_wfd, F_SETFL, O_NONBLOCK);
		}
		r->cq_handle = hnd;
		r->cqe = n - 1;
		r->nslots = n;
		r->map_len = objs[hnd].cq.len;
		*rep_len = sizeof(*r);
		*nrep = 1;
		return 0;
	}
	case DROCE_CTRL_CREATE_SRQ: {
		const struct droce_ctrl_create_srq_req *q = body;
		struct droce_ctrl_create_srq_rep *r = rep;
		uint32_t n;

		NEED(*q);
		if (obj_get(c, q->pd_handle, O_PD) == NULL || q->attr.max_wr == 0 ||
		    q->attr.max_wr > 4096 || q->attr.max_sge > DROCE_SHM_MAX_SGE)
			return EINVAL;
		hnd = obj_new(O_SRQ, c);
		if (hnd == 0)
			return ENOMEM;
		n = pow2(q->attr.max_wr, 16);
		ret = ring_new(&objs[hnd].rq, DROCE_SHM_RQ, hnd, n, 256, &rep_fds[0]);
		if (ret != 0)
			return ret;
		objs[hnd].srq_attr = q->attr;
		objs[hnd].srq_attr.max_wr = n;
		objs[hnd].srq_attr.max_sge = DROCE_SHM_MAX_SGE;
		r->srq_handle = hnd;
		r->attr = objs[hnd].srq_attr;
		r->nslots = n;
		r->map_len = objs[hnd].rq.len;
		*rep_len = sizeof(*r);
		*nrep = 1;
		return 0;
	}
	case DROCE_CTRL_MODIFY_SRQ: {
		const struct droce_ctrl_modify_srq_req *q = body;
		struct obj *o;

		NEED(*q);
		o = obj_get(c, q->srq_handle, O_SRQ);
		if (o == NULL)
			return EINVAL;
		if (q->mask & IBV_SRQ_LIMIT)
			o->srq_attr.srq_limit = q->attr.srq_limit;
		return 0;
	}
	case DROCE_CTRL_QUERY_SRQ: {
		const struct droce_ctrl_handle *q = body;
		struct droce_ctrl_query_srq_rep *r = rep;
		struct obj *o;

		NEED(*q);
		o = obj_get(c, q->handle, O_SRQ);
		if (o == NULL)
			return EINVAL;
		r->attr = o->srq_attr;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_CREATE_QP: {
		const struct droce_ctrl_create_qp_req *q = body;
		struct droce_ctrl_create_qp_rep *r = rep;
		struct obj *o;
		uint32_t ns, nr;

		NEED(*q);
		if (obj_get(c, q->pd_handle, O_PD) == NULL ||
		    obj_get(c, q->send_cq_handle, O_CQ) == NULL ||
		    obj_get(c, q->recv_cq_handle, O_CQ) == NULL ||
		    (q->srq_handle != 0 && obj_get(c, q->srq_handle, O_SRQ) == NULL))
			return EINVAL;
		if (q->cap.max_send_wr > 4096 || q->cap.max_recv_wr > 4096 ||
		    q->cap.max_send_sge > DROCE_SHM_MAX_SGE ||
		    q->cap.max_recv_sge > DROCE_SHM_MAX_SGE || q->cap.max_inline_data > MAX_INLINE)
			return EINVAL;
		hnd = obj_new(O_QP, c);
		if (hnd == 0)
			return ENOMEM;
		o = &objs[hnd];
		ns = pow2(q->cap.max_send_wr, 16);
		nr = pow2(q->cap.max_recv_wr, 16);
		ret = ring_new(&o->sq, DROCE_SHM_SQ, hnd, ns, 512, &rep_fds[0]);
		if (ret == 0 && q->srq_handle == 0)
			ret = ring_new(&o->rq, DROCE_SHM_RQ, hnd, nr, 256, &rep_fds[1]);
		if (ret != 0)
			return ret;
		o->qpn = 0x100 + hnd;
		o->qp_type = q->qp_type;
		o->sq_sig_all = q->sq_sig_all;
		o->send_cq = q->send_cq_handle;
		o->recv_cq = q->recv_cq_handle;
		o->srq = q->srq_handle;
		o->pd = q->pd_handle;
		o->attr.qp_state = IBV_QPS_RESET;
		o->cap.max_send_wr = ns;
		o->cap.max_recv_wr = q->srq_handle ? 0 : nr;
		/* grant what was asked, as a device whose limits are not hit does */
		o->cap.max_send_sge = q->cap.max_send_sge ? q->cap.max_send_sge : 1;
		o->cap.max_recv_sge = q->srq_handle ? 0 :
				      q->cap.max_recv_sge ? q->cap.max_recv_sge : 1;
		o->cap.max_inline_data = q->cap.max_inline_data;
		r->qp_handle = hnd;
		r->qp_num = o->qpn;
		r->cap = o->cap;
		r->sq_nslots = ns;
		r->rq_nslots = q->srq_handle ? 0 : nr;
		r->sq_map_len = o->sq.len;
		r->rq_map_len = q->srq_handle ? 0 : o->rq.len;
		*rep_len = sizeof(*r);
		*nrep = q->srq_handle ? 1 : 2;
		return 0;
	}
	case DROCE_CTRL_MODIFY_QP: {
		const struct droce_ctrl_modify_qp_req *q = body;
		struct obj *o;

		NEED(*q);
		o = obj_get(c, q->qp_handle, O_QP);
		if (o == NULL)
			return EINVAL;
		if (q->mask & IBV_QP_STATE)
			o->attr.qp_state = q->attr.qp_state;
		if (q->mask & IBV_QP_DEST_QPN)
			o->attr.dest_qp_num = q->attr.dest_qp_num;
		if (q->mask & IBV_QP_QKEY)
			o->attr.qkey = q->attr.qkey;
		if (q->mask & IBV_QP_PATH_MTU)
			o->attr.path_mtu = q->attr.path_mtu;
		if (q->mask & IBV_QP_AV)
			o->attr.ah_attr = q->attr.ah_attr;
		if (q->mask & IBV_QP_SQ_PSN)
			o->attr.sq_psn = q->attr.sq_psn;
		if (q->mask & IBV_QP_RQ_PSN)
			o->attr.rq_psn = q->attr.rq_psn;
		if (q->mask & IBV_QP_ACCESS_FLAGS)
			o->attr.qp_access_flags = q->attr.qp_access_flags;
		if ((q->mask & IBV_QP_STATE) && q->attr.qp_state == IBV_QPS_RESET)
			atomic_store(&o->sq.r->error, 0);
		return 0;
	}
	case DROCE_CTRL_QUERY_QP: {
		const struct droce_ctrl_query_qp_req *q = body;
		struct droce_ctrl_query_qp_rep *r = rep;
		struct obj *o;

		NEED(*q);
		o = obj_get(c, q->qp_handle, O_QP);
		if (o == NULL)
			return EINVAL;
		memset(r, 0, sizeof(*r));
		r->attr = o->attr;
		r->attr.cur_qp_state = o->attr.qp_state;
		r->attr.cap = o->cap;
		r->cap = o->cap;
		r->sq_sig_all = o->sq_sig_all;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_CREATE_AH: {
		const struct droce_ctrl_create_ah_req *q = body;
		struct droce_ctrl_create_ah_rep *r = rep;

		NEED(*q);
		if (obj_get(c, q->pd_handle, O_PD) == NULL || !q->attr.is_global)
			return EINVAL;	/* RoCE needs a GRH */
		hnd = obj_new(O_AH, c);
		if (hnd == 0)
			return ENOMEM;
		objs[hnd].ah = q->attr;
		r->ah_handle = hnd;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_ATTACH_MCAST:
	case DROCE_CTRL_DETACH_MCAST: {
		const struct droce_ctrl_mcast_req *q = body;

		NEED(*q);
		return obj_get(c, q->qp_handle, O_QP) != NULL ? 0 : EINVAL;
	}
	case DROCE_CTRL_REREG_MR: {
		const struct droce_ctrl_rereg_mr_req *q = body;
		struct droce_ctrl_rereg_mr_rep *r = rep;
		struct obj *o;

		NEED(*q);
		o = obj_get(c, q->mr_handle, O_MR);
		if (o == NULL || (q->flags & IBV_REREG_MR_CHANGE_TRANSLATION))
			return EOPNOTSUPP;	/* the mock keeps its mapping */
		if (q->flags & IBV_REREG_MR_CHANGE_ACCESS)
			o->access = q->access;
		r->lkey = r->rkey = o->key;
		*rep_len = sizeof(*r);
		return 0;
	}
	case DROCE_CTRL_DEALLOC_PD:
	case DROCE_CTRL_DEREG_MR:
	case DROCE_CTRL_DEALLOC_MW:
	case DROCE_CTRL_DESTROY_CQ:
	case DROCE_CTRL_DESTROY_SRQ:
	case DROCE_CTRL_DESTROY_QP:
	case DROCE_CTRL_DESTROY_AH: {
		static const enum obj_kind kinds[DROCE_CTRL_TYPE_COUNT] = {
			[DROCE_CTRL_DEALLOC_PD] = O_PD, [DROCE_CTRL_DEREG_MR] = O_MR,
			[DROCE_CTRL_DEALLOC_MW] = O_MW, [DROCE_CTRL_DESTROY_CQ] = O_CQ,
			[DROCE_CTRL_DESTROY_SRQ] = O_SRQ, [DROCE_CTRL_DESTROY_QP] = O_QP,
			[DROCE_CTRL_DESTROY_AH] = O_AH,
		};
		const struct droce_ctrl_handle *q = body;

		NEED(*q);
		if (obj_get(c, q->handle, kinds[h->type]) == NULL)
			return EINVAL;
		obj_free(q->handle);
		return 0;
	}
	default:
		return EOPNOTSUPP;
	}
#undef NEED
}

static void
serve(int c)
{
	static uint8_t body[DROCE_CTRL_MAX_MSG], rep[DROCE_CTRL_MAX_MSG];
	int fds[DROCE_CTRL_MAX_FDS], rep_fds[DROCE_CTRL_MAX_FDS] = { -1, -1, -1 };
	unsigned int nfds = DROCE_CTRL_MAX_FDS, nrep = 0, i;
	struct droce_ctrl_hdr h;
	uint32_t rep_len = 0;
	int n, status;

	n = droce_ctrl_recv(clients[c].fd, &h, body, fds, &nfds);
	if (n < 0) {
		client_drop(c);
		return;
	}
	status = handle_msg(c, &h, body, fds, rep, &rep_len, rep_fds, &nrep);
	if (status != 0) {
		rep_len = 0;
		for (i = 0; i < nrep; i++)
			close(rep_fds[i]);
		nrep = 0;
	}
	(void)droce_ctrl_send(clients[c].fd, h.type, h.seq, status, rep, rep_len, rep_fds, nrep);
	for (i = 0; i < nrep; i++)
		close(rep_fds[i]);
	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
		if (i < nfds && fds[i] >= 0)
			close(fds[i]);
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool stdin_lifetime = argc > 2 && strcmp(argv[2], "--stdin-lifetime") == 0;
	struct pollfd pfd[MAX_CLIENTS + 2];
	int lfd, c, n, idle = 0;

	if (argc < 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: mock_droced SOCKET_PATH [--stdin-lifetime]\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	for (c = 0; c < MAX_CLIENTS; c++)
		clients[c].fd = -1;
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 16) != 0) {
		perror("mock_droced: listen");
		return 1;
	}
	printf("mock_droced: listening on %s\n", argv[1]);
	fflush(stdout);
	while (!stop) {
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = stdin_lifetime ? 0 : -1, .events = POLLIN };
		for (c = 0; c < MAX_CLIENTS; c++)
			pfd[c + 2] = (struct pollfd){ .fd = clients[c].fd, .events = POLLIN };
		/* spin while there is work, then sleep in poll() */
		n = poll(pfd, MAX_CLIENTS + 2, idle > 1000 ? 1 : 0);
		if (n > 0) {
			if (pfd[0].revents & POLLIN) {
				int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

				for (c = 0; fd >= 0 && c < MAX_CLIENTS; c++)
					if (clients[c].fd < 0) {
						memset(&clients[c], 0, sizeof(clients[c]));
						clients[c].fd = fd;
						clients[c].async_wfd = -1;
						fd = -1;
					}
				if (fd >= 0)
					close(fd);
			}
			if (pfd[1].revents) {
				char b[64];

				if (read(0, b, sizeof(b)) <= 0)
					break;
			}
			for (c = 0; c < MAX_CLIENTS; c++)
				if (clients[c].fd >= 0 && (pfd[c + 2].revents & (POLLIN | POLLHUP)))
					serve(c);
		}
		idle = engine_poll() || n > 0 ? 0 : idle + 1;
	}
	for (c = 0; c < MAX_CLIENTS; c++)
		if (clients[c].fd >= 0)
			client_drop(c);
	close(lfd);
	unlink(argv[1]);
	return 0;
}
