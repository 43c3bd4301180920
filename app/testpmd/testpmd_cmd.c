/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-testpmd's commands, from --cmd, a file or the prompt:
 *   start | stop | sleep SECONDS | wait [SECONDS] | show stats |
 *   show port stats | clear stats | set size|depth|rate|count N | halt | help | quit
 * halt stops polling for good: before a memif peer closes (testpmd.h).
 * While traffic runs, sleep and wait print one progress line a second.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testpmd.h"

struct cmd_state {
	struct tp_engine *e;
	struct tp_snapshot run0;	/* at start */
	struct tp_snapshot base;	/* at clear stats; zero before */
	struct tp_snapshot last;	/* at the last progress line */
	bool quit;
};

static double
secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static uint64_t
d(const struct tp_snapshot *a, const struct tp_snapshot *b, enum tp_counter c)
{
	return a->cnt[c] - b->cnt[c];
}

static uint64_t
dq(const struct tp_snapshot *a, const struct tp_snapshot *b, enum droce_tqp_counter c)
{
	return a->tqp[c] - b->tqp[c];
}

static uint64_t
drops(const struct tp_snapshot *s)
{
	uint64_t n = s->cnt[TP_CNT_RX_NO_QP];
	unsigned int r;

	for (r = 0; r < DROCE_WIRE_DROP_COUNT; r++)
		n += s->wire_drop[r];
	return n;
}

/* One line of rates between two snapshots. */
static void
print_rates(const char *tag, const struct tp_snapshot *now, const struct tp_snapshot *then)
{
	double t = secs(now->t_ns - then->t_ns);

	if (t <= 0)
		t = 1e-9;
	printf("%s %7.2fs  msgs %10.0f/s  %8.3f Gbit/s  tx %10.0f fr/s  rx %10.0f fr/s  "
	       "retx %" PRIu64 "  naks %" PRIu64 "  drops %" PRIu64 "  errors %" PRIu64 "\n",
	       tag, t, (double)d(now, then, TP_CNT_MSGS) / t,
	       (double)d(now, then, TP_CNT_BYTES) * 8 / t / 1e9,
	       (double)d(now, then, TP_CNT_TX_FRAMES) / t, (double)d(now, then, TP_CNT_RX_FRAMES) / t,
	       dq(now, then, DROCE_TQP_CNT_RETRANSMITS),
	       dq(now, then, DROCE_TQP_CNT_NAKS_TX) + dq(now, then, DROCE_TQP_CNT_SEQ_NAKS_TX) +
		       dq(now, then, DROCE_TQP_CNT_RNR_NAKS_TX),
	       drops(now) - drops(then), d(now, then, TP_CNT_ERRORS));
	fflush(stdout);
}

/*
 * Has the run done its --count? A generator: posted that many since start
 * (or every QP failed: no more will be) and has none outstanding. A
 * responder, which serves whether started or not: its counters (show
 * stats) show that many messages received; raw mode: frames.
 */
static bool
run_done(const struct cmd_state *st, const struct tp_snapshot *s)
{
	const struct tp_opts *o = tp_engine_opts(st->e);

	if (o->count == 0)
		return false;
	if (o->mode == TP_RAW || o->mode == TP_RESPONDER)
		return d(s, &st->base, o->mode == TP_RAW ? TP_CNT_RX_FRAMES : TP_CNT_MSGS) >= o->count;
	return (d(s, &st->run0, TP_CNT_POSTED) >= o->count || s->cnt[TP_CNT_QP_ERRORS] >= o->qps) &&
	       s->outstanding == 0;
}

/* Sleep @p seconds; progress once a second while running. */
static void
pause_for(struct cmd_state *st, double seconds, bool until_done)
{
	uint64_t end = droce_now_ns() + (uint64_t)(seconds * 1e9);
	const struct tp_opts *o = tp_engine_opts(st->e);

	while (droce_now_ns() < end) {
		if (tp_interrupted) {	/* a signal ends the wait; the list goes on */
			tp_interrupted = 0;
			return;
		}
		uint64_t left = end - droce_now_ns();
		struct tp_snapshot s;

		usleep((useconds_t)DROCE_MIN(left / 1000, 100000ull));
		tp_engine_snapshot(st->e, &s);
		if (until_done && run_done(st, &s))
			return;
		if (tp_engine_running(st->e) && !o->quiet && s.t_ns - st->last.t_ns >= 1000000000ull) {
			print_rates("progress", &s, &st->last);
			st->last = s;
		}
	}
}

static void
show_stats(struct cmd_state *st)
{
	const struct tp_opts *o = tp_engine_opts(st->e);
	static const enum tp_counter per_worker[] = {
		TP_CNT_MSGS, TP_CNT_POSTED, TP_CNT_RX_FRAMES, TP_CNT_TX_FRAMES, TP_CNT_HANDOFF,
	};
	struct tp_snapshot s;
	unsigned int c, w;

	tp_engine_snapshot(st->e, &s);
	printf("---- droce-testpmd stats: mode %s, %u QP%s, size %u, depth %u ----\n",
	       tp_mode_name(o->mode), o->qps, o->qps == 1 ? "" : "s", o->size, o->depth);
	for (c = 0; c < TP_CNT_COUNT; c++)
		printf("  %-12s %" PRIu64 "\n", tp_counter_name[c], d(&s, &st->base, c));
	for (c = 0; c < DROCE_TQP_CNT_COUNT; c++)
		if (s.tqp[c] != st->base.tqp[c])
			printf("  %-12s %" PRIu64 "\n", droce_tqp_counter_name[c],
			       dq(&s, &st->base, c));
	for (c = 0; c < DROCE_WIRE_DROP_COUNT; c++)
		if (s.wire_drop[c] != st->base.wire_drop[c])
			printf("  drop %-12s %" PRIu64 "\n", droce_wire_drop_name(c),
			       s.wire_drop[c] - st->base.wire_drop[c]);
	/* each worker's share, when there are several: did each one carry traffic? */
	for (w = 0; s.workers > 1 && w < s.workers; w++)
		for (c = 0; c < DROCE_DIM(per_worker); c++)
			printf("  worker%u.%-8s %" PRIu64 "\n", w, tp_counter_name[per_worker[c]],
			       s.wcnt[w][per_worker[c]] - st->base.wcnt[w][per_worker[c]]);
	printf("  atomic-word  %" PRIu64 "\n", s.atomic_word);
	printf("  qp-bytes     %" PRIu64 "\n", tp_engine_qp_bytes(st->e));
}

/* One port's statistics (worker @p w's), as dpdk-testpmd prints them. */
static void
show_port_stats(struct cmd_state *st, unsigned int w)
{
	struct droce_port_stats ps;
	unsigned int c;

	droce_port_stats(tp_engine_port(st->e, w), &ps);
	printf("  ################### port statistics (worker %u) ##################\n", w);
	printf("  RX-packets: %-12" PRIu64 " RX-missed: %-10" PRIu64 " RX-bytes: %" PRIu64 "\n",
	       ps.eth.ipackets, ps.eth.imissed, ps.eth.ibytes);
	printf("  RX-errors:  %-12" PRIu64 " RX-nombuf: %" PRIu64 "\n", ps.eth.ierrors,
	       ps.eth.rx_nombuf);
	printf("  TX-packets: %-12" PRIu64 " TX-errors: %-10" PRIu64 " TX-bytes: %" PRIu64 "\n",
	       ps.eth.opackets, ps.eth.oerrors, ps.eth.obytes);
	for (c = 0; c < RTE_ETHDEV_QUEUE_STAT_CNTRS; c++)
		if (ps.eth.q_ipackets[c] || ps.eth.q_opackets[c])
			printf("  queue %u: RX-packets %" PRIu64 " TX-packets %" PRIu64 "\n", c,
			       ps.eth.q_ipackets[c], ps.eth.q_opackets[c]);
	for (c = 0; c < DROCE_PORT_CNT_COUNT; c++)
		if (ps.counter[c])
			printf("  %-16s %" PRIu64 "\n", droce_port_counter_name(c), ps.counter[c]);
	for (c = 0; c < DROCE_PORT_DROP_COUNT; c++)
		if (ps.drop[c])
			printf("  drop %-11s %" PRIu64 "\n", droce_port_drop_name(c), ps.drop[c]);
	printf("  #################################################################\n");
}

static int
run_one(struct cmd_state *st, char *line)
{
	char *argv[4] = { 0 }, *save = NULL, *w;
	int argc = 0;

	for (w = strtok_r(line, " \t\r\n", &save); w != NULL && argc < 4;
	     w = strtok_r(NULL, " \t\r\n", &save))
		argv[argc++] = w;
	if (argc == 0 || argv[0][0] == '#')
		return 0;
	if (strcmp(argv[0], "start") == 0) {
		tp_engine_snapshot(st->e, &st->run0);
		st->last = st->run0;
		tp_engine_start(st->e);
	} else if (strcmp(argv[0], "stop") == 0) {
		struct tp_snapshot s;

		tp_engine_stop(st->e);
		tp_engine_snapshot(st->e, &s);
		print_rates("summary ", &s, &st->run0);
		printf("summary  messages %" PRIu64 "  errors %" PRIu64 "  outstanding %" PRIu64 "\n",
		       d(&s, &st->run0, TP_CNT_MSGS), d(&s, &st->run0, TP_CNT_ERRORS), s.outstanding);
	} else if (strcmp(argv[0], "sleep") == 0 && argc == 2) {
		pause_for(st, strtod(argv[1], NULL), false);
	} else if (strcmp(argv[0], "wait") == 0) {
		pause_for(st, argc == 2 ? strtod(argv[1], NULL) : 3600, true);
	} else if (strcmp(argv[0], "show") == 0 && argc == 2 && strcmp(argv[1], "stats") == 0) {
		show_stats(st);
	} else if (strcmp(argv[0], "show") == 0 && argc == 3 && strcmp(argv[1], "port") == 0 &&
		   strcmp(argv[2], "stats") == 0) {
		unsigned int w;

		/* a port per worker, or one port (its queues') */
		for (w = 0; w < tp_engine_opts(st->e)->workers &&
			    (w == 0 || tp_engine_port(st->e, w) != tp_engine_port(st->e, 0)); w++)
			show_port_stats(st, w);
	} else if (strcmp(argv[0], "clear") == 0 && argc == 2 && strcmp(argv[1], "stats") == 0) {
		tp_engine_snapshot(st->e, &st->base);
	} else if (strcmp(argv[0], "set") == 0 && argc == 3) {
		int ret = tp_engine_set(st->e, argv[1], strtoull(argv[2], NULL, 0));

		if (ret < 0)
			printf("set %s: %s\n", argv[1],
			       ret == -EBUSY ? "stop first" : "unknown setting or bad value");
	} else if (strcmp(argv[0], "halt") == 0) {
		if (tp_engine_running(st->e))
			run_one(st, (char[]){ "stop" });
		tp_engine_halt(st->e);
		printf("halted\n");
	} else if (strcmp(argv[0], "quit") == 0 || strcmp(argv[0], "exit") == 0) {
		st->quit = true;
	} else if (strcmp(argv[0], "help") == 0) {
		printf("start | stop | sleep SECONDS | wait [SECONDS] | show stats | show port stats\n"
		       "clear stats | set size|depth|rate|count N | halt (stop polling) | quit\n");
	} else {
		printf("unknown command: %s (try help)\n", argv[0]);
		return -1;
	}
	fflush(stdout);
	return 0;
}

static struct cmd_state *
state(struct tp_engine *e)
{
	static struct cmd_state st;

	if (st.e == NULL) {
		st.e = e;
		/* base stays zero: the worker may have served frames already */
		tp_engine_snapshot(e, &st.run0);
		st.last = st.run0;
	}
	return &st;
}

int
tp_cmd_run_list(struct tp_engine *e, const char *list)
{
	struct cmd_state *st = state(e);
	char *copy = strdup(list), *save = NULL, *c;
	int ret = 0;

	for (c = strtok_r(copy, ";", &save); c != NULL && !st->quit; c = strtok_r(NULL, ";", &save))
		ret |= run_one(st, c);
	free(copy);
	return ret;
}

int
tp_cmd_run_file(struct tp_engine *e, const char *path)
{
	struct cmd_state *st = state(e);
	FILE *f = fopen(path, "r");
	char line[256];
	int ret = 0;

	if (f == NULL) {
		perror(path);
		return -1;
	}
	while (!st->quit && fgets(line, sizeof(line), f) != NULL)
		ret |= run_one(st, line);
	fclose(f);
	return ret;
}

int
tp_cmd_interactive(struct tp_engine *e)
{
	struct cmd_state *st = state(e);
	char line[256];

	while (!st->quit && !tp_interrupted) {
		printf("droce-testpmd> ");
		fflush(stdout);
		if (fgets(line, sizeof(line), stdin) == NULL)
			break;
		run_one(st, line);
	}
	return 0;
}
