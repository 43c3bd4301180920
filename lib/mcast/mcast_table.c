/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Multicast group table (droce_mcast.h): an open-addressed hash of groups
 * keyed by MGID, each with a small array of member QPs. Groups are few
 * (ibv_query_device's max_mcast_grp), members per group too, so arrays
 * beat pointer chasing. Deleted slots become tombstones so probes keep
 * working. Used by the worker that owns the device's receive path.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "droce_core.h"
#include "droce_mcast.h"

enum slot_state { SLOT_FREE, SLOT_USED, SLOT_TOMB };

struct group {
	uint8_t mgid[DROCE_GID_BYTES];
	uint8_t state;
	uint32_t n;
	void **qps;
};

struct droce_mcast {
	uint32_t cap;			/* slots: a power of two, >= 2 x max_groups */
	uint32_t max_groups;
	uint32_t max_members;
	uint32_t used;
	struct group *slot;
};

static uint32_t
mgid_hash(const uint8_t *g)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	unsigned int i;

	for (i = 0; i < DROCE_GID_BYTES; i++)
		h = (h ^ g[i]) * 16777619u;
	return h;
}

int
droce_mcast_create(uint32_t max_groups, uint32_t max_members, struct droce_mcast **out)
{
	struct droce_mcast *m;
	uint32_t i;

	if (max_groups == 0 || max_members == 0 || max_groups > (1u << 20))
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->cap = 4;
	while (m->cap < 2 * max_groups)
		m->cap <<= 1;
	m->max_groups = max_groups;
	m->max_members = max_members;
	m->slot = calloc(m->cap, sizeof(*m->slot));
	if (m->slot == NULL)
		goto err_free;
	for (i = 0; i < m->cap; i++) {
		m->slot[i].qps = calloc(max_members, sizeof(void *));
		if (m->slot[i].qps == NULL)
			goto err_slots;
	}
	*out = m;
	return 0;

err_slots:
	while (i-- > 0)
		free(m->slot[i].qps);
	free(m->slot);
err_free:
	free(m);
	return -ENOMEM;
}

void
droce_mcast_free(struct droce_mcast *m)
{
	uint32_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->cap; i++)
		free(m->slot[i].qps);
	free(m->slot);
	free(m);
}

/* The group's slot, or NULL; with @insert, a free slot for it if absent. */
static struct group *
find(const struct droce_mcast *m, const uint8_t *mgid, bool insert)
{
	uint32_t i, h = mgid_hash(mgid);
	struct group *first_free = NULL;

	for (i = 0; i < m->cap; i++) {
		struct group *g = &m->slot[(h + i) & (m->cap - 1)];

		if (g->state == SLOT_USED && memcmp(g->mgid, mgid, DROCE_GID_BYTES) == 0)
			return g;
		if (g->state != SLOT_USED && first_free == NULL)
			first_free = g;
		if (g->state == SLOT_FREE)
			break;
	}
	return insert ? first_free : NULL;
}

int
droce_mcast_attach(struct droce_mcast *m, const uint8_t mgid[DROCE_GID_BYTES], void *qp)
{
	struct group *g;
	uint32_t i;

	if (!droce_gid_is_mcast(mgid) || qp == NULL)
		return -EINVAL;
	g = find(m, mgid, false);
	if (g != NULL) {
		for (i = 0; i < g->n; i++)
			if (g->qps[i] == qp)
				return 0;	/* already a member: still one copy */
		if (g->n == m->max_members)
			return -ENOMEM;
		g->qps[g->n++] = qp;
		return 0;
	}
	if (m->used == m->max_groups)
		return -ENOMEM;
	g = find(m, mgid, true);
	memcpy(g->mgid, mgid, DROCE_GID_BYTES);
	g->state = SLOT_USED;
	g->qps[0] = qp;
	g->n = 1;
	m->used++;
	return 1;
}

static int
group_remove(struct droce_mcast *m, struct group *g, void *qp)
{
	uint32_t i;

	for (i = 0; i < g->n; i++)
		if (g->qps[i] == qp)
			break;
	if (i == g->n)
		return -EINVAL;
	g->qps[i] = g->qps[--g->n];
	if (g->n > 0)
		return 0;
	g->state = SLOT_TOMB;
	m->used--;
	return 1;
}

int
droce_mcast_detach(struct droce_mcast *m, const uint8_t mgid[DROCE_GID_BYTES], void *qp)
{
	struct group *g = find(m, mgid, false);

	return g == NULL ? -EINVAL : group_remove(m, g, qp);
}

void
droce_mcast_detach_all(struct droce_mcast *m, void *qp,
		       void (*gone)(const uint8_t mgid[DROCE_GID_BYTES], void *arg), void *arg)
{
	uint32_t i;

	for (i = 0; i < m->cap; i++) {
		struct group *g = &m->slot[i];

		if (g->state == SLOT_USED && group_remove(m, g, qp) == 1 && gone != NULL)
			gone(g->mgid, arg);
	}
}

bool
droce_mcast_qp_attached(const struct droce_mcast *m, const void *qp)
{
	uint32_t i, k;

	for (i = 0; i < m->cap; i++) {
		const struct group *g = &m->slot[i];

		if (g->state != SLOT_USED)
			continue;
		for (k = 0; k < g->n; k++)
			if (g->qps[k] == qp)
				return true;
	}
	return false;
}

unsigned int
droce_mcast_members(const struct droce_mcast *m, const uint8_t mgid[DROCE_GID_BYTES], void **qps,
		    unsigned int max)
{
	const struct group *g = find(m, mgid, false);
	unsigned int i;

	if (g == NULL)
		return 0;
	for (i = 0; i < g->n && i < max; i++)
		qps[i] = g->qps[i];
	return g->n;
}

uint32_t
droce_mcast_groups(const struct droce_mcast *m)
{
	return m->used;
}
