/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Deferred reclamation of what engines may still be reading. Key lookups
 * are lock-free (verbs_mr.c): an engine that resolved an rkey a moment
 * before the MR was deregistered may still copy to or from its pages, and
 * still read the record the key pointed at. So a deregistered MR's mapping
 * and record, a deallocated window's record, and the old mapping of a
 * reregistered MR are kept until every engine has passed a quiescent point
 * (rte_rcu_qsbr: an engine reports one after each pass of its poll loop,
 * where it holds no key, host pointer or record).
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_rcu_qsbr.h>

#include "verbs_engine_priv.h"

struct dev_reclaim {
	struct dev_reclaim *next;
	uint64_t token;			/* rte_rcu_qsbr_start() when it was unpublished */
	void *map;			/* to munmap(), or NULL */
	uint64_t map_len;
	void *obj;			/* to free(), or NULL */
	int fd;				/* to close(), or -1 */
};

int
dev_reclaim_init(struct droce_dev *dev)
{
	size_t sz = rte_rcu_qsbr_get_memsize(DEV_MAX_ENGINES);

	sz = (sz + RTE_CACHE_LINE_SIZE - 1) & ~(size_t)(RTE_CACHE_LINE_SIZE - 1);
	dev->qsbr = aligned_alloc(RTE_CACHE_LINE_SIZE, sz);
	if (dev->qsbr == NULL)
		return -ENOMEM;
	if (rte_rcu_qsbr_init(dev->qsbr, DEV_MAX_ENGINES) != 0) {
		free(dev->qsbr);
		dev->qsbr = NULL;
		return -EINVAL;
	}
	return 0;
}

static void
reclaim_one(struct dev_reclaim *r)
{
	if (r->map != NULL)
		dev_client_unmap(r->map, r->map_len);
	free(r->obj);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

void
dev_reclaim_defer(struct droce_dev *dev, void *map, uint64_t map_len, void *obj)
{
	dev_reclaim_defer_fd(dev, map, map_len, obj, -1);
}

void
dev_reclaim_defer_fd(struct droce_dev *dev, void *map, uint64_t map_len, void *obj, int fd)
{
	struct dev_reclaim *r = malloc(sizeof(*r));

	if (r == NULL) {
		/*
		 * No memory to wait with: keep them for good. Freeing now could
		 * pull pages from under an engine, and waiting here could wait
		 * for ourselves (control requests run on an engine's thread).
		 */
		return;
	}
	r->token = rte_rcu_qsbr_start(dev->qsbr);
	r->map = map;
	r->map_len = map_len;
	r->obj = obj;
	r->fd = fd;
	r->next = dev->reclaim;
	dev->reclaim = r;
}

void
droce_dev_reclaim(struct droce_dev *dev)
{
	struct dev_reclaim **pp = &dev->reclaim;

	while (*pp != NULL) {
		struct dev_reclaim *r = *pp;

		if (rte_rcu_qsbr_check(dev->qsbr, r->token, false) == 1) {
			*pp = r->next;
			reclaim_one(r);
		} else {
			pp = &r->next;
		}
	}
}

/* The device is going: its engines have stopped. */
void
dev_reclaim_fini(struct droce_dev *dev)
{
	while (dev->reclaim != NULL) {
		struct dev_reclaim *r = dev->reclaim;

		dev->reclaim = r->next;
		reclaim_one(r);
	}
	free(dev->qsbr);
	dev->qsbr = NULL;
}
