/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * What the device tells telemetry, sysfs and droce-ctl: counters (its own
 * and its engine's) and object counts, one line per client and QP, each
 * QP's rates (DCQCN's and its limit).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_engine_priv.h"

const char *const droce_dev_counter_name[DROCE_DEV_CNT_COUNT] = {
#define C(sym, desc) [DROCE_DEV_CNT_##sym] = #sym,
#define X(sym, name, desc) [DROCE_DEV_CNT_##sym] = name,
	DROCE_DEV_COUNTERS(C, X)
#undef C
#undef X
};


void
droce_dev_stats(const struct droce_dev *dev, struct droce_dev_stats *st)
{
	const struct droce_client *cl;

	memset(st, 0, sizeof(*st));
	memcpy(st->cnt, dev->cnt, sizeof(st->cnt));
	st->cnt[DROCE_DEV_CNT_MR_SHRUNK] = dev_client_map_faults();	/* the process's */
	for (cl = dev->clients; cl != NULL; cl = cl->next)
		st->clients++;
	st->pds = dev->nobj[OBJ_PD];
	st->mrs = dev->nobj[OBJ_MR];
	st->mws = dev->nobj[OBJ_MW];
	st->cqs = dev->nobj[OBJ_CQ];
	st->srqs = dev->nobj[OBJ_SRQ];
	st->qps = dev->nobj[OBJ_QP];
	st->ahs = dev->nobj[OBJ_AH];
	st->mcast_groups = droce_mcast_groups(dev->mcast);
	for (unsigned int e = 0; e < dev->n_eng; e++)
		engine_stats_add(dev->eng[e], st);
}

unsigned int
droce_dev_describe(const struct droce_dev *dev, char (*lines)[128], unsigned int max)
{
	static const char *const type_name[] = {
		[IBV_QPT_RC] = "RC", [IBV_QPT_UC] = "UC", [IBV_QPT_UD] = "UD",
	};
	const struct droce_client *cl;
	unsigned int n = 0, t;

	for (cl = dev->clients; cl != NULL && n < max; cl = cl->next) {
		uint32_t cnt[OBJ_TYPE_COUNT] = { 0 };
		const struct dev_obj *o;

		for (t = 0; t < OBJ_TYPE_COUNT; t++)
			for (o = cl->objs[t].next; o != &cl->objs[t]; o = o->next)
				cnt[t]++;
		snprintf(lines[n++], 128, "client %u pid %u uid %u: %u pd %u mr %u mw %u cq %u srq %u qp %u ah",
			 cl->id, cl->cred.pid, cl->cred.uid, cnt[OBJ_PD], cnt[OBJ_MR], cnt[OBJ_MW],
			 cnt[OBJ_CQ], cnt[OBJ_SRQ], cnt[OBJ_QP], cnt[OBJ_AH]);
		for (o = cl->objs[OBJ_QP].next; o != &cl->objs[OBJ_QP] && n < max; o = o->next) {
			const struct dev_qp *qp = (const void *)o;

			snprintf(lines[n++], 128, "  qp 0x%06x %s %s dest 0x%06x sent %lu recv %lu retrans %lu",
				 qp->tqp.attr.qpn, type_name[qp->tqp.attr.type],
				 droce_qp_state_name(qp->state), qp->tqp.attr.dest_qpn,
				 (unsigned long)qp->tqp.cnt[DROCE_TQP_CNT_TX_PKTS],
				 (unsigned long)qp->tqp.cnt[DROCE_TQP_CNT_RX_PKTS],
				 (unsigned long)qp->tqp.cnt[DROCE_TQP_CNT_RETRANSMITS]);
		}
	}
	return n;
}

unsigned int
droce_dev_qpns(const struct droce_dev *dev, uint32_t *qpns, unsigned int max)
{
	const struct droce_client *cl;
	const struct dev_obj *o;
	unsigned int n = 0;

	for (cl = dev->clients; cl != NULL; cl = cl->next)
		for (o = cl->objs[OBJ_QP].next; o != &cl->objs[OBJ_QP] && n < max; o = o->next)
			qpns[n++] = ((const struct dev_qp *)(const void *)o)->tqp.attr.qpn;
	return n;
}

int
droce_dev_qp_rate(const struct droce_dev *dev, uint32_t qpn, uint64_t now,
		  struct droce_qp_rate *out)
{
	const struct droce_client *cl;
	const struct dev_obj *o;

	for (cl = dev->clients; cl != NULL; cl = cl->next)
		for (o = cl->objs[OBJ_QP].next; o != &cl->objs[OBJ_QP]; o = o->next) {
			const struct dev_qp *qp = (const void *)o;

			if (qp->tqp.attr.qpn != qpn)
				continue;
			memset(out, 0, sizeof(*out));
			out->qpn = qpn;
			out->client = cl->id;
			out->type = qp->tqp.attr.type;
			out->state = qp->state;
			engine_cc_describe(qp, &dev->conf.dcqcn, now, out);
			return 0;
		}
	return -ENOENT;
}
