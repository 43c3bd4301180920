/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Completion queues and completion channels.
 *
 * A CQ is a ring the engine produces and we consume (struct droce_shm_cqe
 * slots). ibv_poll_cq() and the ibv_cq_ex start/next/end_poll calls read
 * slots up to the producer index (acquire) and hand the slots back by
 * storing the consumer index (release): no system call. Each CQ has a
 * spinlock (skipped for IBV_CREATE_CQ_ATTR_SINGLE_THREADED), so several
 * threads may poll one CQ.
 *
 * ibv_req_notify_cq() sets DROCE_SHM_ARM_* in the ring's flag word; the
 * engine clears it when it writes the CQ's handle into the completion
 * channel's pipe (whose write end CREATE_CQ handed over). ibv_get_cq_event()
 * reads those handles and finds the CQ in the context's table; a handle
 * whose CQ was destroyed meanwhile is skipped.
 *
 * ibv_destroy_cq() waits, as rdma-core does, until every event handed out
 * for the CQ has been acknowledged.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim_priv.h"

/* What the engine's CQEs carry, for ibv_create_cq_ex(). */
#define SHIM_CQ_WC_FLAGS (IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/* ---- completion channels ---- */

struct ibv_comp_channel *
shim_create_comp_channel(struct ibv_context *ctx)
{
	struct shim_channel *sch;
	int pfd[2];

	sch = calloc(1, sizeof(*sch));
	if (sch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		int ret = errno;

		free(sch);
		errno = ret;
		return NULL;
	}
	sch->ch.context = ctx;
	sch->ch.fd = pfd[0];
	sch->ch.refcnt = 0;
	sch->wfd = pfd[1];
	return &sch->ch;
}

int
shim_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct shim_channel *sch = (struct shim_channel *)ch;
	struct ibv_context *ctx = ch->context;
	int ret = 0;

	pthread_mutex_lock(&ctx->mutex);
	if (ch->refcnt != 0) {
		ret = EBUSY;
	} else {
		close(ch->fd);
		close(sch->wfd);
		free(sch);
	}
	pthread_mutex_unlock(&ctx->mutex);
	return ret;
}

SHIM_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	return shim_create_comp_channel(ctx);
}

SHIM_EXPORT int
ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	return shim_destroy_comp_channel(ch);
}

/* ---- polling, extended CQ ---- */

static inline void
cq_lock(struct shim_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static inline void
cq_unlock(struct shim_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/*
 * Busy-polling programs (perftest without -e) spin on empty CQs. When the
 * daemon shares their core, that spin holds the core the daemon needs to
 * produce the completion until the scheduler's tick (4 ms measured here).
 * After DROCE_POLL_YIELD empty polls in a row (default 64; 0: never) a
 * thread yields once: on a dedicated core sched_yield() returns at once.
 */
static unsigned int
poll_yield_after(void)
{
	static int after = -1;

	if (after < 0) {
		const char *v = getenv("DROCE_POLL_YIELD");

		after = v != NULL ? atoi(v) : 64;
	}
	return (unsigned int)after;
}

static inline void
poll_empty(bool empty)
{
	static __thread unsigned int run;

	if (!empty) {
		run = 0;
	} else if (++run >= poll_yield_after() && poll_yield_after() > 0) {
		run = 0;
		sched_yield();
	}
}

/* Entries the engine has published past @p idx; 0 if its index is impossible. */
static inline uint32_t
cq_avail(struct shim_cq *cq, uint32_t idx)
{
	/* acquire: pairs with the engine's release store of prod after writing the slots */
	uint32_t n = droce_shm_load_prod(cq->ring.r) - idx;

	return n <= cq->ring.nslots ? n : 0;
}

static int
cq_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct shim_cq *cq = (struct shim_cq *)ibcq;

	if (attr->comp_mask != 0)
		return EINVAL;
	cq_lock(cq);
	cq->poll_idx = cq->ring.idx;
	if (cq_avail(cq, cq->poll_idx) == 0) {
		cq_unlock(cq);		/* no end_poll follows ENOENT */
		poll_empty(true);
		return ENOENT;
	}
	poll_empty(false);
	memcpy(&cq->cur, droce_shm_slot(cq->ring.r, cq->poll_idx), sizeof(cq->cur));
	cq->cur_valid = true;
	ibcq->wr_id = cq->cur.wr_id;
	ibcq->status = (enum ibv_wc_status)cq->cur.status;
	return 0;
}

static int
cq_next_poll(struct ibv_cq_ex *ibcq)
{
	struct shim_cq *cq = (struct shim_cq *)ibcq;

	if (cq->cur_valid)
		cq->poll_idx++;
	if (cq_avail(cq, cq->poll_idx) == 0) {
		cq->cur_valid = false;
		return ENOENT;
	}
	memcpy(&cq->cur, droce_shm_slot(cq->ring.r, cq->poll_idx), sizeof(cq->cur));
	cq->cur_valid = true;
	ibcq->wr_id = cq->cur.wr_id;
	ibcq->status = (enum ibv_wc_status)cq->cur.status;
	return 0;
}

static void
cq_end_poll(struct ibv_cq_ex *ibcq)
{
	struct shim_cq *cq = (struct shim_cq *)ibcq;

	cq->ring.idx = cq->poll_idx + (cq->cur_valid ? 1 : 0);
	cq->cur_valid = false;
	/* release: our reads of the slots happen-before the engine reuses them */
	droce_shm_release(cq->ring.r, cq->ring.idx);
	cq_unlock(cq);
}

static enum ibv_wc_opcode
cq_read_opcode(struct ibv_cq_ex *ibcq)
{
	return (enum ibv_wc_opcode)((struct shim_cq *)ibcq)->cur.opcode;
}

static uint32_t
cq_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.vendor_err;
}

static uint32_t
cq_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.byte_len;
}

static __be32
cq_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return (__be32)((struct shim_cq *)ibcq)->cur.imm_data;
}

static uint32_t
cq_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.qp_num;
}

static uint32_t
cq_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.src_qp;
}

static unsigned int
cq_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.wc_flags;
}

static uint32_t
cq_read_slid(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.slid;
}

static uint8_t
cq_read_sl(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.sl;
}

static uint8_t
cq_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.dlid_path_bits;
}

static uint64_t
cq_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.timestamp;
}

static uint64_t
cq_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	return ((struct shim_cq *)ibcq)->cur.wallclock;
}

/* Not created with these wc_flags (creation refuses them): harmless answers. */
static uint16_t
cq_read_cvlan(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint32_t
cq_read_flow_tag(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static void
cq_read_tm_info(struct ibv_cq_ex *ibcq, struct ibv_wc_tm_info *tm_info)
{
	(void)ibcq;
	memset(tm_info, 0, sizeof(*tm_info));
}


static void
cq_ex_init(struct shim_cq *cq)
{
	struct ibv_cq_ex *x = &cq->cq_ex;

	x->start_poll = cq_start_poll;
	x->next_poll = cq_next_poll;
	x->end_poll = cq_end_poll;
	x->read_opcode = cq_read_opcode;
	x->read_vendor_err = cq_read_vendor_err;
	x->read_byte_len = cq_read_byte_len;
	x->read_imm_data = cq_read_imm_data;
	x->read_qp_num = cq_read_qp_num;
	x->read_src_qp = cq_read_src_qp;
	x->read_wc_flags = cq_read_wc_flags;
	x->read_slid = cq_read_slid;
	x->read_sl = cq_read_sl;
	x->read_dlid_path_bits = cq_read_dlid_path_bits;
	x->read_completion_ts = cq_read_completion_ts;
	x->read_cvlan = cq_read_cvlan;
	x->read_flow_tag = cq_read_flow_tag;
	x->read_tm_info = cq_read_tm_info;
	x->read_completion_wallclock_ns = cq_read_completion_wallclock_ns;
}

int
shim_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct shim_cq *cq = to_scq(ibcq);
	uint32_t idx, avail;
	int n = 0;

	if (num_entries < 0)
		return -EINVAL;
	cq_lock(cq);
	idx = cq->ring.idx;
	/* acquire: pairs with the engine's release store of prod */
	avail = droce_shm_load_prod(cq->ring.r) - idx;
	if (avail > cq->ring.nslots) {
		cq_unlock(cq);
		return -EIO;	/* the engine's index is impossible */
	}
	while (n < num_entries && (uint32_t)n < avail) {
		const struct droce_shm_cqe *e = droce_shm_slot(cq->ring.r, idx);
		struct ibv_wc *w = &wc[n];

		w->wr_id = e->wr_id;
		w->status = (enum ibv_wc_status)e->status;
		w->opcode = (enum ibv_wc_opcode)e->opcode;
		w->vendor_err = e->vendor_err;
		w->byte_len = e->byte_len;
		w->imm_data = (__be32)e->imm_data;	/* or invalidated_rkey: same bits */
		w->qp_num = e->qp_num;
		w->src_qp = e->src_qp;
		w->wc_flags = e->wc_flags;
		w->pkey_index = e->pkey_index;
		w->slid = e->slid;
		w->sl = e->sl;
		w->dlid_path_bits = e->dlid_path_bits;
		idx++;
		n++;
	}
	if (n > 0) {
		cq->ring.idx = idx;
		/* release: our reads of the slots happen-before the engine reuses them */
		droce_shm_release(cq->ring.r, idx);
	}
	cq_unlock(cq);
	poll_empty(n == 0 && num_entries > 0);
	return n;
}

void
shim_cq_clean(struct ibv_cq *ibcq, uint32_t qp_num)
{
	struct shim_cq *cq;
	uint32_t idx, avail, k, dropped = 0;

	if (ibcq == NULL)
		return;
	cq = to_scq(ibcq);
	cq_lock(cq);
	idx = cq->ring.idx;
	avail = droce_shm_load_prod(cq->ring.r) - idx;
	/* an extended poll in progress holds an entry: not under its feet */
	if (avail > cq->ring.nslots || cq->cur_valid) {
		cq_unlock(cq);
		return;
	}
	/*
	 * From the newest entry back, the others close up towards it over the
	 * dropped ones; then the consumer index skips the gap. The engine only
	 * writes past prod, so the slots moved here are ours alone.
	 */
	for (k = avail; k-- > 0;) {
		struct droce_shm_cqe *e = droce_shm_slot(cq->ring.r, idx + k);

		if (e->qp_num == qp_num)
			dropped++;
		else if (dropped > 0)
			memcpy(droce_shm_slot(cq->ring.r, idx + k + dropped), e, sizeof(*e));
	}
	if (dropped > 0) {
		cq->ring.idx = idx + dropped;
		droce_shm_release(cq->ring.r, cq->ring.idx);
	}
	cq_unlock(cq);
}

int
shim_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct shim_cq *cq = to_scq(ibcq);

	cq_lock(cq);	/* not while ibv_resize_cq() swaps the ring */
	droce_shm_cq_arm(cq->ring.r, solicited_only);	/* pairs with droced's cq_fire */
	cq_unlock(cq);
	return 0;
}

/* ---- create / destroy ---- */

static struct shim_cq *
cq_create(struct ibv_context *ctx, uint32_t cqe, struct ibv_comp_channel *channel,
	  uint32_t comp_vector, void *cq_context)
{
	struct droce_ctrl_create_cq_req req = {
		.cqe = cqe, .comp_vector = comp_vector, .has_channel = channel != NULL,
	};
	struct shim_context *sctx = to_sctx(ctx);
	struct droce_ctrl_create_cq_rep rep;
	struct shim_cq *cq;
	int fd = -1, wfd, ret;

	if (channel != NULL && channel->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	if ((int)comp_vector < 0 || comp_vector >= (uint32_t)ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	wfd = channel != NULL ? ((struct shim_channel *)channel)->wfd : -1;
	ret = shim_call(sctx, DROCE_CTRL_CREATE_CQ, &req, sizeof(req), &wfd, wfd >= 0 ? 1 : 0,
			&rep, sizeof(rep), &fd, 1);
	if (ret != 0)
		goto err_free;
	ret = shim_ring_map(&cq->ring, fd, rep.map_len, DROCE_SHM_CQ);
	if (ret != 0)
		goto err_destroy;
	ret = shim_obj_add(sctx, SHIM_OBJ_CQ, rep.cq_handle, cq);
	if (ret != 0)
		goto err_unmap;

	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = rep.cq_handle;
	cq->cq.cqe = (int)rep.cqe;
	cq->cq.comp_events_completed = 0;
	cq->cq.async_events_completed = 0;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	cq_ex_init(cq);
	if (channel != NULL) {
		pthread_mutex_lock(&ctx->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&ctx->mutex);
	}
	return cq;

err_unmap:
	shim_ring_unmap(&cq->ring);
err_destroy:
	(void)shim_call_destroy(sctx, DROCE_CTRL_DESTROY_CQ, rep.cq_handle);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *
shim_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
	       struct ibv_comp_channel *channel, int comp_vector)
{
	struct shim_cq *cq;

	if (cqe <= 0 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_create(ctx, (uint32_t)cqe, channel, (uint32_t)comp_vector, cq_context);
	return cq != NULL ? &cq->cq : NULL;
}

struct ibv_cq_ex *
shim_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct shim_cq *cq;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~(uint64_t)SHIM_CQ_WC_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;	/* CVLAN, flow tag, TM; IGNORE_OVERRUN */
		return NULL;
	}
	if (attr->cqe == 0 ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	     (attr->parent_domain == NULL || attr->parent_domain->context != ctx ||
	      to_spd(attr->parent_domain)->base == NULL))) {
		errno = EINVAL;	/* parent_domain must be a parent domain of ctx */
		return NULL;
	}
	cq = cq_create(ctx, attr->cqe, attr->channel, attr->comp_vector, attr->cq_context);
	if (cq == NULL)
		return NULL;
	cq->wc_flags = attr->wc_flags;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->parent = shim_parent_get(attr->parent_domain);
	cq->single_threaded = ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			       (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
			      shim_parent_lockless(cq->parent);
	return &cq->cq_ex;
}

int
shim_destroy_cq(struct ibv_cq *ibcq)
{
	struct shim_context *sctx = to_sctx(ibcq->context);
	struct ibv_comp_channel *channel = ibcq->channel;
	struct shim_cq *cq = to_scq(ibcq);
	int ret;

	ret = shim_call_destroy(sctx, DROCE_CTRL_DESTROY_CQ, ibcq->handle);
	if (ret != 0)
		return ret;
	shim_obj_del(sctx, SHIM_OBJ_CQ, ibcq->handle);
	/* no event for it is handed out any more: wait for the acks of those that were */
	shim_wait_acks(&ibcq->mutex, &ibcq->cond, &ibcq->comp_events_completed,
		       cq->comp_events_got);
	shim_wait_acks(&ibcq->mutex, &ibcq->cond, &ibcq->async_events_completed,
		       cq->async_events_got);
	shim_ring_unmap(&cq->ring);
	if (channel != NULL) {
		pthread_mutex_lock(&ibcq->context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&ibcq->context->mutex);
	}
	pthread_spin_destroy(&cq->lock);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	shim_parent_put(cq->parent);
	free(cq);
	return 0;
}

/*
 * The daemon moves the CQ to a new ring holding the pending completions at
 * their indices; we keep our consumer index and swap the mapping. The CQ's
 * lock keeps pollers and ibv_req_notify_cq() off both rings meanwhile (a
 * SINGLE_THREADED CQ: the application's one thread is here).
 */
int
shim_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct droce_ctrl_resize_cq_req req = { .cq_handle = ibcq->handle, .cqe = (uint32_t)cqe };
	struct shim_cq *cq = to_scq(ibcq);
	struct droce_ctrl_resize_cq_rep rep;
	struct droce_shm_view nr;
	int fd = -1, ret;

	if (cqe <= 0)
		return EINVAL;
	cq_lock(cq);
	ret = shim_call(to_sctx(ibcq->context), DROCE_CTRL_RESIZE_CQ, &req, sizeof(req), NULL, 0,
			&rep, sizeof(rep), &fd, 1);
	if (ret == 0)
		ret = shim_ring_map(&nr, fd, rep.map_len, DROCE_SHM_CQ);
	if (ret == 0 && nr.idx != cq->ring.idx) {
		shim_ring_unmap(&nr);	/* the daemon's cons is not ours */
		ret = EPROTO;
	}
	if (ret == 0) {
		shim_ring_unmap(&cq->ring);
		cq->ring = nr;
		ibcq->cqe = (int)rep.cqe;
	}
	cq_unlock(cq);
	return ret;
}

int
shim_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)
{
	(void)cq;
	(void)attr;
	return EOPNOTSUPP;	/* no completion moderation */
}

/* ---- events ---- */

int
shim_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	struct shim_context *sctx = to_sctx(ch->context);
	struct shim_cq *scq;
	uint32_t handle;
	ssize_t n;

	for (;;) {
		n = read(ch->fd, &handle, sizeof(handle));
		if (n != (ssize_t)sizeof(handle)) {
			if (n >= 0)
				errno = n == 0 ? EIO : EPROTO;
			return -1;
		}
		scq = shim_obj_cq_event(sctx, handle);
		if (scq != NULL)
			break;
		/* its CQ was destroyed after the daemon wrote it: skip */
	}
	*cq = &scq->cq;
	*cq_context = scq->cq.cq_context;
	return 0;
}

void
shim_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ---- exported ---- */

struct ibv_cq *shim_create_cq_1_1(struct ibv_context *ctx, int cqe, void *cq_context,
				  struct ibv_comp_channel *channel, int comp_vector);
SHIM_SYMVER_DEFAULT(shim_create_cq_1_1, ibv_create_cq, "IBVERBS_1.1");
SHIM_EXPORT struct ibv_cq *
shim_create_cq_1_1(struct ibv_context *ctx, int cqe, void *cq_context,
		   struct ibv_comp_channel *channel, int comp_vector)
{
	return shim_create_cq(ctx, cqe, cq_context, channel, comp_vector);
}

int shim_resize_cq_1_1(struct ibv_cq *cq, int cqe);
SHIM_SYMVER_DEFAULT(shim_resize_cq_1_1, ibv_resize_cq, "IBVERBS_1.1");
SHIM_EXPORT int
shim_resize_cq_1_1(struct ibv_cq *cq, int cqe)
{
	return shim_resize_cq(cq, cqe);
}

int shim_destroy_cq_1_1(struct ibv_cq *cq);
SHIM_SYMVER_DEFAULT(shim_destroy_cq_1_1, ibv_destroy_cq, "IBVERBS_1.1");
SHIM_EXPORT int
shim_destroy_cq_1_1(struct ibv_cq *cq)
{
	return shim_destroy_cq(cq);
}

int shim_get_cq_event_1_1(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context);
SHIM_SYMVER_DEFAULT(shim_get_cq_event_1_1, ibv_get_cq_event, "IBVERBS_1.1");
SHIM_EXPORT int
shim_get_cq_event_1_1(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	return shim_get_cq_event(ch, cq, cq_context);
}

void shim_ack_cq_events_1_1(struct ibv_cq *cq, unsigned int nevents);
SHIM_SYMVER_DEFAULT(shim_ack_cq_events_1_1, ibv_ack_cq_events, "IBVERBS_1.1");
SHIM_EXPORT void
shim_ack_cq_events_1_1(struct ibv_cq *cq, unsigned int nevents)
{
	shim_ack_cq_events(cq, nevents);
}
