/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Thread domains and parent domains (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)). Both live only in the shim: the daemon
 * never hears of them. A parent domain carries its base PD's handle, so
 * MRs, windows, AHs, QPs and SRQs made on it are the base PD's to the
 * daemon; QPs, SRQs and CQs made on one that holds a thread domain skip
 * their ring locks, the application having promised one thread per object.
 *
 * Custom allocators (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) are refused:
 * the only memory the shim would hand them -- the rings -- is created and
 * owned by droced and mapped into the client, never allocated here.
 */

#include <errno.h>
#include <stdlib.h>

#include "shim_priv.h"

struct ibv_td *
shim_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr)
{
	struct shim_td *std;

	if (attr == NULL || attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	std = calloc(1, sizeof(*std));
	if (std == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	std->td.context = ctx;
	return &std->td;
}

int
shim_dealloc_td(struct ibv_td *td)
{
	struct shim_td *std = (struct shim_td *)td;

	if (atomic_load(&std->users) != 0)
		return EBUSY;	/* a parent domain still holds it */
	free(std);
	return 0;
}

struct ibv_pd *
shim_alloc_parent_domain(struct ibv_context *ctx, struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct shim_pd *parent, *base;

	if (attr == NULL || attr->pd == NULL || attr->pd->context != ctx ||
	    (attr->td != NULL && attr->td->context != ctx) || (attr->comp_mask & ~known)) {
		errno = EINVAL;
		return NULL;
	}
	base = to_spd(attr->pd);
	if (base->base != NULL) {
		errno = EINVAL;	/* a parent domain extends a PD, not another parent */
		return NULL;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	parent = calloc(1, sizeof(*parent));
	if (parent == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	parent->pd.context = ctx;
	parent->pd.handle = base->pd.handle;
	parent->base = base;
	parent->td = (struct shim_td *)attr->td;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		parent->pd_context = attr->pd_context;
	atomic_fetch_add(&base->users, 1);
	if (parent->td != NULL)
		atomic_fetch_add(&parent->td->users, 1);
	return &parent->pd;
}

int
shim_dealloc_parent_domain(struct shim_pd *parent)
{
	if (atomic_load(&parent->users) != 0)
		return EBUSY;	/* QPs, SRQs or CQs were created on it */
	if (parent->td != NULL)
		atomic_fetch_sub(&parent->td->users, 1);
	atomic_fetch_sub(&parent->base->users, 1);
	free(parent);
	return 0;
}

struct shim_pd *
shim_parent_get(struct ibv_pd *pd)
{
	struct shim_pd *spd = to_spd(pd);

	if (spd->base == NULL)
		return NULL;
	atomic_fetch_add(&spd->users, 1);
	return spd;
}

void
shim_parent_put(struct shim_pd *parent)
{
	if (parent != NULL)
		atomic_fetch_sub(&parent->users, 1);
}
