/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Destroying objects: the checks a client's destroy request must pass
 * (nothing still uses the object), and the teardown of each kind.
 */

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_engine_priv.h"

int
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

void
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
		mr->pd->refs--;
		dev_obj_del(dev, o);
		/* an engine may have resolved its key a moment ago */
		dev_reclaim_defer_fd(dev, mr->map, mr->map_len, mr, mr->mr.indirect ? mr->mr.mem_fd : -1);
		return;
	}
	case OBJ_MW: {
		struct dev_mw *mw = (struct dev_mw *)o;

		droce_mw_dealloc(dev->keys, &mw->mw);
		mw->pd->refs--;
		dev_obj_del(dev, o);
		dev_reclaim_defer(dev, NULL, 0, mw);
		return;
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
		engine_unplace(srq->o.cl, srq->eng);
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
void
dev_drain_ud_qps(struct droce_client *cl)
{
	struct dev_obj *o, *nx;

	DEV_CL_FOREACH(o, nx, cl, OBJ_QP) {
		struct dev_qp *qp = (struct dev_qp *)o;

		if (qp->tqp.attr.type == IBV_QPT_UD)
			engine_qp_drain(qp->eng, qp, 0);
	}
}
