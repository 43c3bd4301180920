/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Clients, one per control connection: their credentials, and their end --
 * QPs to the error state first (peers see errors), then everything they
 * owned destroyed in dependency order.
 */

#include <stdlib.h>
#include <unistd.h>

#include "verbs_dev_priv.h"

int
droce_dev_client_new(struct droce_dev *dev, const struct droce_client_cred *cred,
		     struct droce_client **out)
{
	struct droce_client *cl = calloc(1, sizeof(*cl));
	unsigned int t;

	if (cl == NULL)
		return -ENOMEM;
	cl->dev = dev;
	cl->id = ++dev->next_client;
	cl->cred = *cred;
	cl->async_fd = -1;
	for (t = 0; t < DEV_MAX_ENGINES; t++)
		cl->wake_fd[t] = -1;
	for (t = 0; t < OBJ_TYPE_COUNT; t++)
		cl->objs[t].next = cl->objs[t].prev = &cl->objs[t];
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

void
droce_dev_client_free(struct droce_client *cl)
{
	struct droce_dev *dev = cl->dev;
	struct droce_client **pp;
	static const uint8_t order[] = { OBJ_QP, OBJ_AH, OBJ_SRQ, OBJ_CQ, OBJ_MW, OBJ_MR, OBJ_PD };
	struct dev_obj *o, *nx;
	unsigned int k;

	/* QPs first, to the error state, so peers see errors and nothing waits on us */
	DEV_CL_FOREACH(o, nx, cl, OBJ_QP)
		droce_tqp_set_state(&((struct dev_qp *)o)->tqp, DROCE_TQP_ERR, 0, 0);
	for (k = 0; k < DROCE_DIM(order); k++)
		DEV_CL_FOREACH(o, nx, cl, order[k])
			dev_obj_destroy(dev, o);
	for (k = 0; k < DEV_MAX_ENGINES; k++)
		dev_ring_free(&cl->db[k]);
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
