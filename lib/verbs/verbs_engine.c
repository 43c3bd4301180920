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

#include "droce_wire_gid.h"
#include "verbs_engine_priv.h"

int
engine_create(struct droce_dev *dev, unsigned int id, struct droce_engine **out)
{
	struct droce_engine *eng = calloc(1, sizeof(*eng));

	if (eng == NULL)
		return -ENOMEM;
	eng->dev = dev;
	eng->id = id;
	eng->port_arg = dev->conf.port_arg;
	eng->qpn = calloc(DEV_MAX_QP, sizeof(*eng->qpn));
	eng->live = calloc(DEV_MAX_QP, sizeof(*eng->live));
	eng->active = calloc(DEV_MAX_QP, sizeof(*eng->active));
	eng->paced = calloc(DEV_MAX_QP, sizeof(*eng->paced));
	eng->loop = malloc(ENG_LOOP_SLOTS * sizeof(*eng->loop));
	if (eng->qpn == NULL || eng->live == NULL || eng->active == NULL || eng->paced == NULL ||
	    eng->loop == NULL) {
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
	free(eng->paced);
	free(eng->active);
	free(eng->live);
	free(eng->qpn);
	free(eng);
}

struct droce_engine *
droce_dev_engine(struct droce_dev *dev, unsigned int i)
{
	return i < dev->n_eng ? dev->eng[i] : NULL;
}

unsigned int
droce_dev_n_engines(const struct droce_dev *dev)
{
	return dev->n_eng;
}

void
droce_engine_set_port_arg(struct droce_engine *eng, void *arg)
{
	eng->port_arg = arg;
}

/*
 * Where a new QP or SRQ of @p cl runs for its life: the engine with the
 * fewest of the client's own objects (one context's QPs spread over the
 * workers, whatever other clients do meanwhile), then the fewest live QPs
 * of all clients, then in turn.
 */
struct droce_engine *
engine_place(struct droce_client *cl)
{
	struct droce_dev *dev = cl->dev;
	struct droce_engine *best = NULL;
	unsigned int k;

	for (k = 0; k < dev->n_eng; k++) {
		struct droce_engine *e = dev->eng[(dev->next_place + k) % dev->n_eng];

		if (best == NULL || cl->n_placed[e->id] < cl->n_placed[best->id] ||
		    (cl->n_placed[e->id] == cl->n_placed[best->id] && e->n_live < best->n_live))
			best = e;
	}
	dev->next_place = best->id + 1;
	engine_place_on(cl, best);
	return best;
}

/* @p cl has one more QP or SRQ on @p eng (engine<i>_clients counts clients with any). */
void
engine_place_on(struct droce_client *cl, struct droce_engine *eng)
{
	if (cl->n_placed[eng->id]++ == 0)
		eng->n_clients++;
}

void
engine_unplace(struct droce_client *cl, struct droce_engine *eng)
{
	if (--cl->n_placed[eng->id] == 0)
		eng->n_clients--;
}

unsigned int
engine_id(const struct droce_engine *eng)
{
	return eng->id;
}

struct droce_engine *
dev_qpn_engine(const struct droce_dev *dev, uint32_t qpn)
{
	return dev->eng[qpn % dev->n_eng];
}

int
droce_engine_owner(const struct droce_engine *eng, const struct droce_pkt *pkt)
{
	if (pkt->dqpn == 0xffffff && droce_gid_is_mcast(pkt->dgid))
		return -1;		/* every engine with members: rx_mcast */
	if (pkt->dqpn == DROCE_GSI_QPN)
		return 0;
	return (int)(pkt->dqpn % eng->dev->n_eng);
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
	eng->qps_created++;
	eng->qpn[qp->tqp.attr.qpn - DEV_QPN_BASE] = qp;
	qp->live_idx = eng->n_live;
	eng->live[eng->n_live++] = qp;
	engine_cc_qp_attach(eng, qp);
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
	engine_cc_qp_detach(eng, qp);
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
	st->engine_rx[eng->id] = eng->rx_pkts;
	st->engine_clients[eng->id] = eng->n_clients;
	st->engine_qps[eng->id] = eng->n_live;
	st->engine_qps_created[eng->id] = eng->qps_created;
	if (eng->id + 1 > st->n_engines)
		st->n_engines = eng->id + 1;
	for (k = 0; k < DROCE_TQP_CNT_COUNT; k++)
		st->tqp_cnt[k] += eng->tqp_dead[k];
	for (i = 0; i < eng->n_live; i++)
		for (k = 0; k < DROCE_TQP_CNT_COUNT; k++)
			st->tqp_cnt[k] += eng->live[i]->tqp.cnt[k];
}
