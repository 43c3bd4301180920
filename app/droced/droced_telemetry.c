/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * DPDK telemetry commands of droced (read them with droce-ctl or
 * dpdk-telemetry.py): /droce/stats, counters and object counts of the
 * device, including every drop reason, ECN's switches and DCQCN's
 * parameters; /droce/objects; /droce/qps and /droce/qp,QPN, each QP's
 * rates; /droce/cc_set,NAME=VALUE, a switch or parameter changed. The
 * callbacks run on DPDK's telemetry thread; they go through the worker's
 * mailbox, so they never touch state the worker is changing.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
	uint8_t ecn_np, ecn_rp;
	struct droce_dcqcn_params dcqcn;
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
	droce_dev_cc_get(s->d->dev, &s->ecn_np, &s->ecn_rp, &s->dcqcn);
	for (unsigned int w = 0; w < s->d->n_workers; w++)
		for (unsigned int k = 0; k < DROCED_WAIT_CNT_COUNT; k++)
			s->wait[k] += s->d->workers[w].wait_cnt[k];
}

/*
 * ECN's switches and DCQCN's parameters as the engines use them (--ecn-np,
 * --ecn-rp, --dcqcn, then /droce/cc_set): the names /droce/cc_set takes
 */
static void
cc_settings(struct rte_tel_data *d, uint8_t np, uint8_t rp, const struct droce_dcqcn_params *dp)
{
	const struct droce_dcqcn_param_desc *p;
	unsigned int i, n;
	uint32_t v;

	rte_tel_data_add_dict_u64(d, "ecn_np_enable", np);
	rte_tel_data_add_dict_u64(d, "ecn_rp_enable", rp);
	p = droce_dcqcn_param_descs(&n);
	for (i = 0; i < n; i++) {
		char key[64];

		droce_dcqcn_param_get(dp, p[i].name, &v);
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
	cc_settings(d, s.ecn_np, s.ecn_rp, &s.dcqcn);
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

#define QPS_MAX 512	/* RTE_TEL_MAX_ARRAY_ENTRIES */

struct qps_call {
	struct droced_call c;
	struct droced *d;
	uint32_t qpns[QPS_MAX];
	unsigned int n;
};

static void
do_qps(struct droced_call *c)
{
	struct qps_call *s = (struct qps_call *)c;

	s->n = droce_dev_qpns(s->d->dev, s->qpns, QPS_MAX);
}

static int
tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct qps_call s;	/* telemetry calls come one at a time */
	unsigned int i;

	(void)cmd;
	(void)params;
	memset(&s.c, 0, sizeof(s.c));
	s.c.fn = do_qps;
	s.d = tel_droced;
	droced_call_worker(tel_droced, &s.c);
	rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	for (i = 0; i < s.n; i++)
		rte_tel_data_add_array_u64(d, s.qpns[i]);
	return 0;
}

struct qp_call {
	struct droced_call c;
	struct droced *d;
	uint32_t qpn;
	int ret;
	struct droce_qp_rate r;
};

static void
do_qp(struct droced_call *c)
{
	struct qp_call *s = (struct qp_call *)c;

	s->ret = droce_dev_qp_rate(s->d->dev, s->qpn, droce_now_ns(), &s->r);
}

/* A decimal or 0x number that fills @p arg (telemetry's parameters) into *@p v. */
static int
param_u64(const char *arg, uint64_t *v)
{
	char *end;

	if (arg == NULL || *arg == '\0' || *arg == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(arg, &end, 0);
	return *end != '\0' || errno != 0 ? -EINVAL : 0;
}

/* One QP's rates, kbps as ibv_modify_qp_rate_limit's (droce-ctl qps, qp) */
static int
tel_qp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const type_name[] = {
		[IBV_QPT_RC] = "RC", [IBV_QPT_UC] = "UC", [IBV_QPT_UD] = "UD",
	};
	struct qp_call s = { .c.fn = do_qp, .d = tel_droced };
	uint64_t qpn;

	(void)cmd;
	if (param_u64(params, &qpn) < 0 || qpn > 0xffffff)
		return -EINVAL;
	s.qpn = (uint32_t)qpn;
	droced_call_worker(tel_droced, &s.c);
	if (s.ret < 0)
		return s.ret;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qpn", s.r.qpn);
	rte_tel_data_add_dict_u64(d, "client", s.r.client);
	rte_tel_data_add_dict_string(d, "type", s.r.type < DROCE_DIM(type_name) &&
				     type_name[s.r.type] != NULL ? type_name[s.r.type] : "?");
	rte_tel_data_add_dict_string(d, "state", droce_qp_state_name(s.r.state));
	rte_tel_data_add_dict_u64(d, "rate_kbps", s.r.rate / 1000);
	rte_tel_data_add_dict_u64(d, "line_rate_kbps", s.r.line / 1000);
	rte_tel_data_add_dict_u64(d, "rate_limit_kbps", s.r.limit / 1000);
	rte_tel_data_add_dict_u64(d, "dcqcn_limited", s.r.dcqcn_limited);
	rte_tel_data_add_dict_u64(d, "dcqcn_current_rate_kbps", s.r.dcqcn_rc / 1000);
	rte_tel_data_add_dict_u64(d, "dcqcn_target_rate_kbps", s.r.dcqcn_rt / 1000);
	rte_tel_data_add_dict_u64(d, "dcqcn_alpha", s.r.dcqcn_alpha);
	rte_tel_data_add_dict_u64(d, "rp_cnp_handled", s.r.cnp_handled);
	rte_tel_data_add_dict_u64(d, "np_cnp_sent", s.r.cnp_sent);
	return 0;
}

struct cc_call {
	struct droced_call c;
	struct droced *d;
	char name[64];
	uint64_t value;
	int ret;
};

static void
do_cc_set(struct droced_call *c)
{
	struct cc_call *s = (struct cc_call *)c;
	struct droce_dcqcn_params p;
	uint8_t np, rp;

	droce_dev_cc_get(s->d->dev, &np, &rp, &p);
	s->ret = 0;
	if (strcmp(s->name, "ecn_np_enable") == 0 || strcmp(s->name, "ecn_rp_enable") == 0) {
		if (s->value > 0xff)
			s->ret = -ERANGE;
		else if (s->name[4] == 'n')
			np = (uint8_t)s->value;
		else
			rp = (uint8_t)s->value;
	} else if ((strncmp(s->name, "ecn_np_enable/", 14) == 0 ||
		    strncmp(s->name, "ecn_rp_enable/", 14) == 0) &&
		   s->name[14] >= '0' && s->name[14] <= '7' && s->name[15] == '\0') {
		/* one priority, 0 or 1, as mlx5's ecn/roce_np/enable/<prio> */
		uint8_t *m = s->name[4] == 'n' ? &np : &rp, bit = (uint8_t)(1u << (s->name[14] - '0'));

		if (s->value > 1)
			s->ret = -ERANGE;
		else
			*m = (uint8_t)(s->value ? *m | bit : *m & ~bit);
	} else if (strncmp(s->name, "dcqcn_", 6) == 0) {
		s->ret = droce_dcqcn_param_set(&p, s->name + 6, s->value);
	} else {
		s->ret = -ENOENT;
	}
	if (s->ret == 0)
		droce_dev_cc_set(s->d->dev, np, rp, &p);
}

/*
 * NAME=VALUE, NAME as /droce/stats shows it: ecn_np_enable, ecn_rp_enable
 * (bit masks), dcqcn_*; or ecn_np_enable/P, ecn_rp_enable/P (priority P, 0 or 1)
 */
static int
tel_cc_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct cc_call s;
	const char *eq = params != NULL ? strchr(params, '=') : NULL;

	(void)cmd;
	memset(&s, 0, sizeof(s));
	if (eq == NULL || eq == params || (size_t)(eq - params) >= sizeof(s.name) ||
	    param_u64(eq + 1, &s.value) < 0)
		return -EINVAL;
	memcpy(s.name, params, (size_t)(eq - params));
	s.c.fn = do_cc_set;
	s.d = tel_droced;
	droced_call_worker(tel_droced, &s.c);
	if (s.ret < 0)
		return s.ret;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, s.name, s.value);
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
	rte_telemetry_register_cmd("/droce/qps", tel_qps, "every QP's number. No parameters");
	rte_telemetry_register_cmd("/droce/qp", tel_qp,
				   "a QP's rates (kbps), DCQCN's state, its CNPs. Parameter: QPN");
	rte_telemetry_register_cmd("/droce/cc_set", tel_cc_set,
				   "set an ECN switch or DCQCN parameter. Parameter: NAME=VALUE, "
				   "NAME as /droce/stats has it");
}
