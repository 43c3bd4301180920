/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Handles: one table indexes every object of every client. A lookup checks
 * the kind and that the object belongs to the asking client, so a client
 * can name only its own objects. And the client's async-event pipe.
 */

#include <errno.h>
#include <unistd.h>

#include "verbs_dev_priv.h"

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
			o->next = &cl->objs[type];
			o->prev = cl->objs[type].prev;
			o->prev->next = o;
			cl->objs[type].prev = o;
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
	o->prev->next = o->next;
	o->next->prev = o->prev;
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
