/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Work requests out of the client's rings: each slot is copied before it is
 * read, and what the engine keeps is checked (opcode for the QP type, SGE
 * count, inline length, AH and MW handles of the same client and PD).
 */

#include <errno.h>
#include <string.h>

#include "droce_shm_ops.h"
#include "verbs_engine_priv.h"

/* Copy a receive WQE out of a ring the client writes; check what we keep. */
int
engine_rwqe_take(struct droce_shm_view *ring, uint32_t max_sge, struct droce_recv_wqe *w)
{
	struct droce_shm_rwqe s;
	uint32_t prod = droce_shm_load_prod(ring->r), i;

	if (prod - ring->idx > ring->nslots)
		return -EBADMSG;	/* impossible index: the client is broken */
	if (prod == ring->idx)
		return -EAGAIN;
	memcpy(&s, droce_shm_view_slot(ring, ring->idx), sizeof(s));
	ring->idx++;
	droce_shm_release(ring->r, ring->idx);
	if (s.num_sge > max_sge)
		s.num_sge = 0;		/* zero-length buffer: the message will not fit */
	memset(w, 0, sizeof(*w));
	w->wr_id = s.wr_id;
	w->num_sge = s.num_sge;
	for (i = 0; i < s.num_sge; i++) {
		w->sge[i].addr = s.sge[i].addr;
		w->sge[i].length = s.sge[i].length;
		w->sge[i].lkey = s.sge[i].lkey;
	}
	return 0;
}


/* A send WQE from the SQ ring, checked; false with *status for a bad one. */
bool
engine_swqe_convert(struct droce_engine *eng, struct dev_qp *qp, const struct droce_shm_swqe *s,
		    struct droce_send_wqe *w, uint32_t *status)
{
	enum ibv_qp_type type = qp->tqp.attr.type;
	uint64_t len = 0;
	uint32_t i, op = s->opcode;

	memset(w, 0, offsetof(struct droce_send_wqe, inline_data));
	w->local_done = false;
	w->wr_id = s->wr_id;
	w->opcode = op;
	w->flags = s->send_flags;
	*status = IBV_WC_LOC_QP_OP_ERR;

	if (!droce_shm_qp_op_allowed(type, op))
		return false;	/* the shim's own table: it refused this at post time */
	w->imm = s->imm_data;
	w->inv_rkey = s->invalidate_rkey;
	w->remote_addr = s->remote_addr;
	w->rkey = s->rkey;
	w->compare_add = s->compare_add;
	w->swap = s->swap;

	if (op == IBV_WR_BIND_MW) {
		struct dev_mw *mw = dev_obj_get(qp->o.cl, s->bind.mw_handle, OBJ_MW);
		struct droce_mw_bind b = {
			.new_rkey = s->bind.new_rkey,
			/* the MR named, also for a zero-length (unbinding) bind */
			.mr = droce_mr_get(eng->dev->keys, s->bind.mr_lkey),
			.addr = s->bind.addr,
			.length = s->bind.length,
			.access = s->bind.access,
			.qp_pd = qp->pd->o.handle,
			.qpn = qp->tqp.attr.qpn,
			.qp_type = type,
		};

		/* executed here, completed in order by the transport */
		w->local_done = true;
		w->local_status = mw != NULL && droce_mw_bind(eng->dev->keys, &mw->mw, &b) == 0 ?
				  IBV_WC_SUCCESS : IBV_WC_MW_BIND_ERR;
		return true;
	}
	if (s->send_flags & IBV_SEND_INLINE) {
		if (s->inline_len > qp->cap.max_inline_data || s->inline_len > DROCE_SHM_MAX_INLINE ||
		    op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			*status = IBV_WC_LOC_LEN_ERR;
			return false;
		}
		memcpy(w->inline_data, s->inline_data, s->inline_len);
		len = s->inline_len;
	} else {
		if (s->num_sge > qp->cap.max_send_sge)
			return false;
		w->num_sge = s->num_sge;
		for (i = 0; i < s->num_sge; i++) {
			w->sge[i].addr = s->sge[i].addr;
			w->sge[i].length = s->sge[i].length;
			w->sge[i].lkey = s->sge[i].lkey;
			len += s->sge[i].length;
		}
	}
	if (len > eng->dev->port.max_msg_sz) {
		*status = IBV_WC_LOC_LEN_ERR;
		return false;
	}
	w->length = (uint32_t)len;
	if ((op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) && len != 8) {
		*status = IBV_WC_LOC_LEN_ERR;
		return false;
	}
	if (type == IBV_QPT_UD) {
		struct dev_ah *ah = dev_obj_get(qp->o.cl, s->ah_handle, OBJ_AH);

		if (ah == NULL || ah->pd != qp->pd)
			return false;
		if (len > qp->tqp.attr.mtu) {
			*status = IBV_WC_LOC_LEN_ERR;
			return false;
		}
		w->ud.av = ah->av;
		w->ud.qpn = s->remote_qpn & DROCE_24BIT_MASK;
		w->ud.qkey = s->remote_qkey;
	}
	return true;
}
