/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * DPDK telemetry commands of droced (read them with droce-ctl or
 * dpdk-telemetry.py): /droce/stats, counters and object counts of the
 * device, including every drop reason. The callback runs on DPDK's
 * telemetry thread; it takes its snapshot through the worker's mailbox, so
 * it never reads state the worker is changing.
 */

#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "droce_port.h"
#include "droced.h"

static struct droced *tel_droced;

struct stats_call {
	struct droced_call c;
	struct droced *d;
	struct droce_dev_stats st;
	struct droce_port_stats port;
	uint64_t wire[DROCE_WIRE_DROP_COUNT];
	const char *cm_names[96];
	uint64_t cm[96];
	unsigned int n_cm;
	uint64_t wait[DROCED_WAIT_CNT_COUNT];
	struct droced_roce_counts roce;
};

static void
do_stats(struct droced_call *c)
{
	struct stats_call *s = (struct stats_call *)c;

	droce_dev_stats(s->d->dev, &s->st);
	droce_port_stats(s->d->port, &s->port);
	droced_port_wire_drops(s->wire);
	droced_port_roce_counts(&s->roce);
	s->n_cm = droced_cm_counters(s->cm_names, s->cm, DROCE_DIM(s->cm));
	for (unsigned int w = 0; w < s->d->n_workers; w++)
		for (unsigned int k = 0; k < DROCED_WAIT_CNT_COUNT; k++)
			s->wait[k] += s->d->workers[w].wait_cnt[k];
}

/* ECN's switches and DCQCN's parameters, as set (--ecn-np, --ecn-rp, --dcqcn) */
static void
cc_settings(struct rte_tel_data *d, const struct droced_opts *o)
{
	const struct droce_dcqcn_param_desc *p;
	unsigned int i, n;
	uint32_t v;

	rte_tel_data_add_dict_u64(d, "ecn_np_enable", o->ecn_np);
	rte_tel_data_add_dict_u64(d, "ecn_rp_enable", o->ecn_rp);
	p = droce_dcqcn_param_descs(&n);
	for (i = 0; i < n; i++) {
		char key[64];

		droce_dcqcn_param_get(&o->dcqcn, p[i].name, &v);
		snprintf(key, sizeof(key), "dcqcn_%s", p[i].name);
		rte_tel_data_add_dict_u64(d, key, v);
	}
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct stats_call s = { .c.fn = do_stats, .d = tel_droced };
	unsigned int i;

	(void)cmd;
	(void)params;
	droced_call_worker(tel_droced, &s.c);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "clients", s.st.clients);
	rte_tel_data_add_dict_u64(d, "pds", s.st.pds);
	rte_tel_data_add_dict_u64(d, "mrs", s.st.mrs);
	rte_tel_data_add_dict_u64(d, "mws", s.st.mws);
	rte_tel_data_add_dict_u64(d, "cqs", s.st.cqs);
	rte_tel_data_add_dict_u64(d, "srqs", s.st.srqs);
	rte_tel_data_add_dict_u64(d, "qps", s.st.qps);
	rte_tel_data_add_dict_u64(d, "ahs", s.st.ahs);
	rte_tel_data_add_dict_u64(d, "mcast_groups", s.st.mcast_groups);
	for (i = 0; i < DROCE_DEV_CNT_COUNT; i++)
		rte_tel_data_add_dict_u64(d, droce_dev_counter_name[i], s.st.cnt[i]);
	for (i = 0; i < DROCE_TQP_CNT_COUNT; i++)
		rte_tel_data_add_dict_u64(d, droce_tqp_counter_name[i], s.st.tqp_cnt[i]);
	/* the port: its own counters and every drop reason */
	for (i = 0; i < DROCE_PORT_CNT_COUNT; i++) {
		char key[64];

		snprintf(key, sizeof(key), "port_%s", droce_port_counter_name(i));
		rte_tel_data_add_dict_u64(d, key, s.port.counter[i]);
	}
	for (i = 0; i < DROCE_PORT_DROP_COUNT; i++) {
		char key[64];

		snprintf(key, sizeof(key), "port_drop_%s", droce_port_drop_name(i));
		rte_tel_data_add_dict_u64(d, key, s.port.drop[i]);
	}
	rte_tel_data_add_dict_u64(d, "port_imissed", s.port.eth.imissed);
	for (i = 1; i < DROCE_WIRE_DROP_COUNT; i++) {
		char key[64];

		snprintf(key, sizeof(key), "wire_drop_%s", droce_wire_drop_name(i));
		rte_tel_data_add_dict_u64(d, key, s.wire[i]);
	}
	for (i = 0; i < s.n_cm; i++) {	/* rdma_cm: droced's, lib/cm's, MADs refused by reason */
		char key[64];

		snprintf(key, sizeof(key), "cm_%s", s.cm_names[i]);
		rte_tel_data_add_dict_u64(d, key, s.cm[i]);
	}
	rte_tel_data_add_dict_u64(d, "handoff_frames", s.roce.handoffs);
	rte_tel_data_add_dict_u64(d, "handoff_held", s.roce.handoff_held);
	rte_tel_data_add_dict_u64(d, "handoff_dropped", s.roce.handoff_drops);
	rte_tel_data_add_dict_u64(d, "tx_backlog_full", s.roce.tx_full);
	for (i = 0; i < s.st.n_engines; i++) {	/* --workers: what each engine carries */
		char key[64];

		snprintf(key, sizeof(key), "engine%u_rx_pkts", i);
		rte_tel_data_add_dict_u64(d, key, s.st.engine_rx[i]);
		snprintf(key, sizeof(key), "engine%u_clients", i);
		rte_tel_data_add_dict_u64(d, key, s.st.engine_clients[i]);
		snprintf(key, sizeof(key), "engine%u_qps", i);
		rte_tel_data_add_dict_u64(d, key, s.st.engine_qps[i]);
		snprintf(key, sizeof(key), "engine%u_qps_created", i);
		rte_tel_data_add_dict_u64(d, key, s.st.engine_qps_created[i]);
	}
	for (i = 0; i < DROCED_WAIT_CNT_COUNT; i++)	/* --idle wait */
		rte_tel_data_add_dict_u64(d, droced_wait_counter_name[i], s.wait[i]);
	cc_settings(d, &tel_droced->opts);
	return 0;
}

#define DESCRIBE_LINES 256	/* telemetry arrays hold up to 512 entries */

struct describe_call {
	struct droced_call c;
	struct droced *d;
	char lines[DESCRIBE_LINES][128];
	unsigned int n;
};

static void
do_describe(struct droced_call *c)
{
	struct describe_call *s = (struct describe_call *)c;

	s->n = droce_dev_describe(s->d->dev, s->lines, DESCRIBE_LINES);
}

static int
tel_objects(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct describe_call s;	/* telemetry calls come one at a time */
	unsigned int i;

	(void)cmd;
	(void)params;
	memset(&s.c, 0, sizeof(s.c));
	s.c.fn = do_describe;
	s.d = tel_droced;
	droced_call_worker(tel_droced, &s.c);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (i = 0; i < s.n; i++)
		rte_tel_data_add_array_string(d, s.lines[i]);
	return 0;
}

void
droced_telemetry_init(struct droced *d)
{
	rte_telemetry_register_cmd("/droce/objects", tel_objects,
				   "clients, their objects and QP states. No parameters");
	tel_droced = d;
	rte_telemetry_register_cmd("/droce/stats", tel_stats,
				   "droce device counters and object counts. No parameters");
}
