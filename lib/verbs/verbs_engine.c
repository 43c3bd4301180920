/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * An engine's life and its QPN shard: the QPs it runs, found by QPN on
 * receive, kept dense in the live list (timers) and, while they have work,
 * the active list (polls). The device attaches a QP when it creates it and
 * detaches it when it frees it; the QP's transport counters then join the
 * engine's totals.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_rcu_qsbr.h>

#include "verbs_engine_priv.h"

int
engine_create(struct droce_dev *dev, unsigned int id, struct droce_engine **out)
{
	struct droce_engine *eng = calloc(1, sizeof(*eng));

	if (eng == NULL)
		return -ENOMEM;
	eng->dev = dev;
	eng->id = id;
	eng->qpn = calloc(DEV_MAX_QP, sizeof(*eng->qpn));
	eng->live = calloc(DEV_MAX_QP, sizeof(*eng->live));
	eng->active = calloc(DEV_MAX_QP, sizeof(*eng->active));
	eng->loop = malloc(ENG_LOOP_SLOTS * sizeof(*eng->loop));
	if (eng->qpn == NULL || eng->live == NULL || eng->active == NULL || eng->loop == NULL) {
		engine_destroy(eng);
		return -ENOMEM;
	}
	/* online from now: deferred frees wait for its passes (droce_engine_poll) */
	rte_rcu_qsbr_thread_register(dev->qsbr, id);
	rte_rcu_qsbr_thread_online(dev->qsbr, id);
	*out = eng;
	return 0;
}

void
engine_destroy(struct droce_engine *eng)
{
	if (eng == NULL)
		return;
	if (eng->dev->qsbr != NULL) {
		rte_rcu_qsbr_thread_offline(eng->dev->qsbr, eng->id);
		rte_rcu_qsbr_thread_unregister(eng->dev->qsbr, eng->id);
	}
	free(eng->loop);
	free(eng->active);
	free(eng->live);
	free(eng->qpn);
	free(eng);
}

struct droce_engine *
droce_dev_engine(struct droce_dev *dev)
{
	return dev->eng;
}

struct dev_qp *
engine_qp_by_qpn(const struct droce_engine *eng, uint32_t qpn)
{
	uint32_t idx = qpn - DEV_QPN_BASE;

	return qpn >= DEV_QPN_BASE && idx < DEV_MAX_QP ? eng->qpn[idx] : NULL;
}

bool
engine_qpn_used(const struct droce_engine *eng, uint32_t qpn)
{
	return engine_qp_by_qpn(eng, qpn) != NULL;
}

void
engine_qp_attach(struct droce_engine *eng, struct dev_qp *qp)
{
	qp->eng = eng;
	eng->qpn[qp->tqp.attr.qpn - DEV_QPN_BASE] = qp;
	qp->live_idx = eng->n_live;
	eng->live[eng->n_live++] = qp;
}

void
engine_qp_detach(struct droce_engine *eng, struct dev_qp *qp)
{
	unsigned int c;

	for (c = 0; c < DROCE_TQP_CNT_COUNT; c++)
		eng->tqp_dead[c] += qp->tqp.cnt[c];
	eng->qpn[qp->tqp.attr.qpn - DEV_QPN_BASE] = NULL;
	eng->live[qp->live_idx] = eng->live[--eng->n_live];
	eng->live[qp->live_idx]->live_idx = qp->live_idx;
	if (qp->active) {	/* rare: a linear search of the active ones */
		uint32_t k;

		for (k = 0; k < eng->n_active && eng->active[k] != qp; k++)
			;
		eng->active[k] = eng->active[--eng->n_active];
	}
}

/* The engine's counters and its QPs' transport counters, live and dead. */
void
engine_stats_add(const struct droce_engine *eng, struct droce_dev_stats *st)
{
	uint32_t i, k;

	for (k = 0; k < DROCE_DEV_CNT_COUNT; k++)
		st->cnt[k] += eng->cnt[k];
	for (k = 0; k < DROCE_TQP_CNT_COUNT; k++)
		st->tqp_cnt[k] += eng->tqp_dead[k];
	for (i = 0; i < eng->n_live; i++)
		for (k = 0; k < DROCE_TQP_CNT_COUNT; k++)
			st->tqp_cnt[k] += eng->live[i]->tqp.cnt[k];
}
