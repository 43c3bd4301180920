/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Asynchronous events (ibv_get_async_event(3), ibv_ack_async_event(3)).
 *
 * The daemon writes struct droce_ctrl_event records into a pipe whose write
 * end only it holds (end of file: it is gone). An event may name an object
 * the application destroys before reading it; the kernel drops such events
 * from its queue, and so does the shim: after each destroy it takes what
 * the pipe holds into a queue of its own, less the destroyed object's
 * events (the daemon wrote them all before it answered the destroy).
 * ibv_context.async_fd is an epoll set of the pipe and of an eventfd that
 * is readable while that queue holds records, so it is readable exactly
 * when ibv_get_async_event() has something to give, and works in the
 * application's own poll/epoll (UCX adds it to its event set).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "shim_priv.h"

/* Which kind of object an event names (0: none, e.g. a port event). */
static enum shim_obj_kind
event_kind(uint32_t type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		return SHIM_OBJ_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return SHIM_OBJ_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return SHIM_OBJ_SRQ;
	default:
		return 0;
	}
}

/* The eventfd says whether the queue holds records (under the lock). */
static void
kick_update(struct shim_async *a)
{
	uint64_t v = 1;

	if (a->n > 0)
		(void)!write(a->kick, &v, sizeof(v));
	else
		(void)!read(a->kick, &v, sizeof(v));
}

int
shim_async_open(struct shim_context *sctx, int pipe_rd)
{
	struct shim_async *a = &sctx->async;
	struct epoll_event ev = { .events = EPOLLIN };
	int ep, fl = fcntl(pipe_rd, F_GETFL);

	if (fl < 0 || fcntl(pipe_rd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno;
	a->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (a->kick < 0 || ep < 0)
		goto fail;
	ev.data.fd = pipe_rd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, pipe_rd, &ev) < 0)
		goto fail;
	ev.data.fd = a->kick;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, a->kick, &ev) < 0)
		goto fail;
	a->pipe = pipe_rd;
	pthread_mutex_init(&a->lock, NULL);
	sctx->vctx.context.async_fd = ep;
	return 0;
fail:
	fl = errno;
	if (ep >= 0)
		close(ep);
	if (a->kick >= 0)
		close(a->kick);
	return fl;
}

void
shim_async_close(struct shim_context *sctx)
{
	struct shim_async *a = &sctx->async;

	close(sctx->vctx.context.async_fd);
	close(a->kick);
	close(a->pipe);
	pthread_mutex_destroy(&a->lock);
	free(a->q);
}

/* Everything the pipe holds, onto the queue (under the lock). */
static void
drain_pipe(struct shim_async *a)
{
	for (;;) {
		ssize_t n;

		if (a->n == a->cap) {
			unsigned int cap = a->cap ? 2 * a->cap : 16;
			struct droce_ctrl_event *q = realloc(a->q, cap * sizeof(*q));

			if (q == NULL)
				return;		/* the rest stays in the pipe, in order */
			a->q = q;
			a->cap = cap;
		}
		n = read(a->pipe, &a->q[a->n], sizeof(a->q[0]));
		if (n == (ssize_t)sizeof(a->q[0])) {
			a->n++;
			continue;
		}
		if (n == 0)
			a->eof = true;
		return;
	}
}

void
shim_async_purge(struct shim_context *sctx, enum shim_obj_kind kind, uint32_t handle)
{
	struct shim_async *a = &sctx->async;
	unsigned int i, keep = 0;

	pthread_mutex_lock(&a->lock);
	drain_pipe(a);
	for (i = 0; i < a->n; i++)
		if (event_kind(a->q[i].event_type) != kind || a->q[i].handle != handle)
			a->q[keep++] = a->q[i];
	a->n = keep;
	kick_update(a);
	pthread_mutex_unlock(&a->lock);
}

/*
 * The next record, the queue's before the pipe's: 1 got one, 0 none yet,
 * -1 the daemon's end of file, -2 a read error (errno set).
 */
static int
async_next(struct shim_async *a, struct droce_ctrl_event *ev)
{
	ssize_t n;
	int ret;

	pthread_mutex_lock(&a->lock);
	if (a->n > 0) {
		*ev = a->q[0];
		memmove(a->q, a->q + 1, --a->n * sizeof(a->q[0]));
		if (a->n == 0)
			kick_update(a);
		ret = 1;
	} else if (a->eof) {
		ret = -1;
	} else {
		n = read(a->pipe, ev, sizeof(*ev));
		if (n == (ssize_t)sizeof(*ev))
			ret = 1;
		else if (n == 0)
			ret = -1;
		else if (n < 0 && errno == EAGAIN)
			ret = 0;
		else {
			if (n > 0)
				errno = EPROTO;
			ret = -2;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

int shim_get_async_event_1_1(struct ibv_context *ctx, struct ibv_async_event *event);
SHIM_SYMVER_DEFAULT(shim_get_async_event_1_1, ibv_get_async_event, "IBVERBS_1.1");
SHIM_EXPORT int
shim_get_async_event_1_1(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct shim_context *sctx = to_sctx(ctx);
	struct droce_ctrl_event ev;

	for (;;) {
		int r = async_next(&sctx->async, &ev);
		struct epoll_event ee;
		enum shim_obj_kind kind;
		void *obj;

		if (r == 0) {
			/* blocking, as a read of the kernel's async file blocks */
			if (fcntl(ctx->async_fd, F_GETFL) & O_NONBLOCK) {
				errno = EAGAIN;
				return -1;
			}
			if (epoll_wait(ctx->async_fd, &ee, 1, -1) < 0)
				return -1;	/* EINTR as read() gives it */
			continue;
		}
		if (r == -2)
			return -1;
		if (r == -1) {
			/* the daemon closed its end: it is gone */
			atomic_store(&sctx->dead, true);
			if (atomic_exchange(&sctx->fatal_reported, true)) {
				errno = EIO;
				return -1;
			}
			event->event_type = IBV_EVENT_DEVICE_FATAL;
			event->element.port_num = 0;
			return 0;
		}
		event->event_type = (enum ibv_event_type)ev.event_type;
		kind = event_kind(ev.event_type);
		if (kind != 0) {
			obj = shim_obj_event(sctx, kind, ev.handle);
			if (obj == NULL)
				continue;	/* destroyed meanwhile */
			if (kind == SHIM_OBJ_CQ)
				event->element.cq = obj;
			else if (kind == SHIM_OBJ_QP)
				event->element.qp = obj;
			else
				event->element.srq = obj;
			return 0;
		}
		switch (event->event_type) {
		case IBV_EVENT_WQ_FATAL:
			continue;	/* droce has no WQs */
		case IBV_EVENT_DEVICE_FATAL:
			atomic_store(&sctx->fatal_reported, true);
			event->element.port_num = (int)ev.handle;
			return 0;
		default:
			event->element.port_num = (int)ev.handle;
			return 0;
		}
	}
}

void shim_ack_async_event_1_1(struct ibv_async_event *event);
SHIM_SYMVER_DEFAULT(shim_ack_async_event_1_1, ibv_ack_async_event, "IBVERBS_1.1");
SHIM_EXPORT void
shim_ack_async_event_1_1(struct ibv_async_event *event)
{
	pthread_mutex_t *mutex;
	pthread_cond_t *cond;
	uint32_t *count;

	switch (event_kind(event->event_type)) {
	case SHIM_OBJ_CQ:
		mutex = &event->element.cq->mutex;
		cond = &event->element.cq->cond;
		count = &event->element.cq->async_events_completed;
		break;
	case SHIM_OBJ_QP:
		mutex = &event->element.qp->mutex;
		cond = &event->element.qp->cond;
		count = &event->element.qp->events_completed;
		break;
	case SHIM_OBJ_SRQ:
		mutex = &event->element.srq->mutex;
		cond = &event->element.srq->cond;
		count = &event->element.srq->events_completed;
		break;
	default:
		return;
	}
	pthread_mutex_lock(mutex);
	++*count;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}
