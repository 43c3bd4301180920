/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-testpmd [EAL options] -- [options]: droce's RC and UD transports
 * straight on a DPDK port, testpmd-style, for line-rate tests and
 * benchmarks. The workers run on the worker lcores (or threads when EAL
 * was given too few), each on a queue pair of the port or on a port of its
 * own; this thread runs the commands.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>

#include "testpmd.h"

volatile sig_atomic_t tp_interrupted;

static void
on_signal(int sig)
{
	(void)sig;
	tp_interrupted = 1;
}

/* Unless the caller chooses, EAL shares no files: several run at once. */
static char **
eal_args(int *argc, char **argv)
{
	char **out = calloc((size_t)*argc + 2, sizeof(*out));
	bool chosen = false;	/* --in-memory cannot go with --no-huge: --no-shconf */
	int i, n = 0;

	for (i = 1; i < *argc && strcmp(argv[i], "--") != 0; i++)
		if (strncmp(argv[i], "--file-prefix", 13) == 0 ||
		    strcmp(argv[i], "--in-memory") == 0 || strcmp(argv[i], "--no-shconf") == 0)
			chosen = true;
	out[n++] = argv[0];
	if (!chosen)
		out[n++] = "--no-shconf";
	for (i = 1; i < *argc; i++)
		out[n++] = argv[i];
	*argc = n;
	return out;
}

/* Open the port of @p devargs (NULL: --iface). */
static int
port_open(const struct tp_opts *o, const char *devargs, struct droce_port **port)
{
	struct droce_port_conf pc;
	struct droce_port_info info;
	char mac[18];
	unsigned int i;
	int ret;

	droce_port_conf_init(&pc);
	/* one port for all the workers: a queue pair each (af_packet: a socket each) */
	if (o->n_port <= 1)
		pc.n_queues = (uint16_t)o->workers;
	ret = o->iface != NULL ? droce_port_conf_iface(&pc, o->iface) :
	      snprintf(pc.devargs, sizeof(pc.devargs), "%s", devargs) < 0 ? -EINVAL : 0;
	for (i = 0; ret == 0 && i < o->n_ip; i++)
		ret = droce_port_conf_add_ip(&pc, o->ip[i]);
	for (i = 0; ret == 0 && i < o->n_neigh; i++)
		ret = droce_port_conf_add_neigh(&pc, o->neigh[i]);
	if (ret == 0 && o->mac != NULL)
		ret = droce_port_conf_set_mac(&pc, o->mac);
	pc.mtu = (uint16_t)o->mtu;
	pc.nb_mbufs = 16383;
	/*
	 * Several ports: open them all, then wait for their links together
	 * (links_wait()). A memif server whose second port is not set up yet
	 * refuses the client's connection, and the client does not try again.
	 */
	if (o->workers > 1 && o->n_port > 1)
		pc.link_wait_ms = 1;
	if (ret == 0)
		ret = droce_port_open(&pc, port);
	if (ret < 0) {
		fprintf(stderr, "droce-testpmd: cannot open the port: %s\n", strerror(-ret));
		return ret;
	}
	droce_port_info(*port, &info);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", info.mac[0], info.mac[1],
		 info.mac[2], info.mac[3], info.mac[4], info.mac[5]);
	printf("port %s (%s): mac %s mtu %u\n", info.name, info.driver, mac, info.mtu);
	fflush(stdout);	/* a test waits for this line: the port is set up */
	return 0;
}

/*
 * --check: the exit status says whether the run was right: every message
 * posted completed (with --count, that many since the last start), without
 * an error status or a failed check, and no QP went to the error state.
 */
static int
verdict(struct tp_engine *e)
{
	const struct tp_opts *o = tp_engine_opts(e);
	bool generator = o->mode < TP_RESPONDER;
	struct tp_snapshot s;
	bool ok;

	tp_engine_snapshot(e, &s);
	ok = s.cnt[TP_CNT_ERRORS] == 0 && s.cnt[TP_CNT_QP_ERRORS] == 0 &&
	     s.cnt[TP_CNT_BAD_DATA] == 0 && s.outstanding == 0 &&
	     (!generator || (s.cnt[TP_CNT_MSGS] == s.cnt[TP_CNT_POSTED] &&
			     (o->count == 0 || s.run_posted == o->count)));
	printf("check %s: posted %" PRIu64 " (%" PRIu64 " since start), completed %" PRIu64
	       ", outstanding %" PRIu64 ", errors %" PRIu64 ", QP errors %" PRIu64
	       ", bad data %" PRIu64 "\n",
	       ok ? "ok" : "FAILED", s.cnt[TP_CNT_POSTED], s.run_posted, s.cnt[TP_CNT_MSGS],
	       s.outstanding, s.cnt[TP_CNT_ERRORS], s.cnt[TP_CNT_QP_ERRORS],
	       s.cnt[TP_CNT_BAD_DATA]);
	return ok ? 0 : 1;
}

/*
 * Close every port (a memif peer sees us leave) and end without
 * rte_eal_cleanup: DPDK 22.11's cleanup unmaps its memory while EAL's
 * interrupt thread still runs, and net_memif's socket handles live in that
 * memory, their removal pending in that thread: it died of SIGSEGV in
 * rte_intr_fd_get (testpmd-modes' peer, 1 exit in 3 on a loaded machine,
 * also with the ports closed first). The process's exit frees it all.
 */
static void
close_ports(void)
{
	uint16_t pid;

	RTE_ETH_FOREACH_DEV(pid) {
		rte_eth_dev_stop(pid);
		rte_eth_dev_close(pid);
	}
}

/* Wait up to 3 s for every port's link (with one port, droce_port_open() did). */
static void
links_wait(struct droce_port **ports, unsigned int n)
{
	unsigned int i, up = 0;
	int tries;

	for (tries = 0; tries < 300 && up < n; tries++) {
		for (i = 0, up = 0; i < n; i++)
			up += droce_port_link_up(ports[i]);
		if (up < n)
			usleep(10000);
	}
	for (i = 0; i < n && up < n; i++)
		if (!droce_port_link_up(ports[i]))
			fprintf(stderr, "droce-testpmd: worker %u's port: link still down\n", i);
}

static void
ports_close(struct droce_port **ports, unsigned int n)
{
	while (n-- > 0)
		droce_port_close(ports[n]);
}

int
main(int argc, char **argv)
{
	struct droce_port *ports[TP_MAX_WORKERS] = { NULL };
	struct tp_engine *e = NULL;
	unsigned int n_ports = 0, w;
	struct tp_opts o;
	int ret;

	argv = eal_args(&argc, argv);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "droce-testpmd: EAL init failed\n");
		return 1;
	}
	argc -= ret;
	argv += ret;
	if (tp_opts_parse(&o, argc, argv) < 0) {
		rte_eal_cleanup();
		return 2;
	}
	for (n_ports = 0; n_ports < DROCE_MAX(o.n_port, 1u); n_ports++)
		if (port_open(&o, o.iface != NULL ? NULL : o.port[n_ports], &ports[n_ports]) < 0) {
			ports_close(ports, n_ports);
			rte_eal_cleanup();
			return 2;
		}
	if (n_ports > 1)
		links_wait(ports, n_ports);
	for (w = n_ports; w < o.workers; w++)	/* one port: every worker's, a queue each */
		ports[w] = ports[0];
	ret = tp_engine_create(&o, ports, &e);
	if (ret < 0) {
		fprintf(stderr, "droce-testpmd: %s\n", strerror(-ret));
		ports_close(ports, n_ports);
		rte_eal_cleanup();
		return 1;
	}
	printf("mode %s: %u QP%s from QPN 0x%x to 0x%x, key 0x%x, memory %" PRIu64
	       " bytes, %" PRIu64 " bytes per QP, %u worker%s\n",
	       tp_mode_name(o.mode), o.qps, o.qps == 1 ? "" : "s", o.qpn_base, o.remote_qpn, o.key,
	       o.mem, tp_engine_qp_bytes(e), o.workers, o.workers == 1 ? "" : "s");
	fflush(stdout);
	/* no SA_RESTART: the prompt's read ends on a signal */
	sigaction(SIGINT, &(struct sigaction){ .sa_handler = on_signal }, NULL);
	sigaction(SIGTERM, &(struct sigaction){ .sa_handler = on_signal }, NULL);

	if (tp_engine_launch(e) < 0) {
		fprintf(stderr, "droce-testpmd: cannot start the workers\n");
		tp_engine_destroy(e);
		ports_close(ports, n_ports);
		rte_eal_cleanup();
		return 1;
	}

	if (o.cmd != NULL)
		ret = tp_cmd_run_list(e, o.cmd);
	else if (o.cmd_file != NULL)
		ret = tp_cmd_run_file(e, o.cmd_file);
	else
		ret = tp_cmd_interactive(e);

	if (tp_engine_running(e))
		tp_cmd_run_list(e, "stop");
	if (o.check && verdict(e) != 0)
		ret = -1;
	tp_engine_destroy(e);	/* halts the workers first */
	ports_close(ports, n_ports);
	close_ports();
	return ret == 0 ? 0 : 1;
}
