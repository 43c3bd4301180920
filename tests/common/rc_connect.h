/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_RC_CONNECT_H
#define DROCE_TEST_RC_CONNECT_H

/*
 * For the small verbs test programs (libibverbs only, no droce code): take
 * an RC QP in INIT to RTR and RTS towards a peer, path MTU 1024, port 1,
 * retry and RNR retry 7.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

struct rc_peer {
	union ibv_gid gid;		/* the peer's */
	uint8_t sgid_index;		/* ours */
	uint32_t qpn;
	uint32_t rq_psn;		/* what the peer sends from */
	uint32_t sq_psn;		/* what we send from */
	uint8_t rd_atomic;		/* READ/atomic in flight, each way */
	uint8_t timeout;		/* 4.096 us * 2^timeout */
};

/* @return 0, or the errno of the ibv_modify_qp() that failed. */
static inline int
rc_connect(struct ibv_qp *qp, const struct rc_peer *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = p->qpn, .rq_psn = p->rq_psn,
				 .max_dest_rd_atomic = p->rd_atomic, .min_rnr_timer = 12 };
	int ret;

	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = p->gid;
	a.ah_attr.grh.sgid_index = p->sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->sq_psn;
	a.timeout = p->timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = p->rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif /* DROCE_TEST_RC_CONNECT_H */
