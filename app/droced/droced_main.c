/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droced: a DPDK primary process serving RDMA verbs over RoCEv2.
 *
 *   droced [EAL options] -- --iface veth0 --ip 10.0.0.1/24 [options]
 *
 * The main lcore is the worker: it owns the device and the port and runs
 * the poll loop (mailbox, doorbells, RX, transports, timers, TX). The
 * control thread serves the unix socket and hands every request to the
 * worker. SIGINT/SIGTERM stop both; clients get IBV_EVENT_DEVICE_FATAL.
 */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include "droced.h"

static struct droced droced;

static void
on_signal(int sig)
{
	(void)sig;
	atomic_store(&droced.stop, true);
}

/* The poll loop; idle modes in droce_idle.h. */

/*
 * Several droced on one host must not share DPDK's runtime directory: unless
 * the EAL options choose (--file-prefix, --in-memory, --no-shconf), the
 * prefix is "droce-" and the device name, which droce-ctl -p also uses.
 */
static char **
eal_args_with_prefix(int *argc, char **argv)
{
	static char prefix[96];
	const char *name = "droce0";
	char **out;
	int i, dashdash = *argc;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0 && dashdash == *argc)
			dashdash = i;
		else if (i < dashdash && (strncmp(argv[i], "--file-prefix", 13) == 0 ||
					  strcmp(argv[i], "--in-memory") == 0 ||
					  strcmp(argv[i], "--no-shconf") == 0))
			return argv;
		else if (i > dashdash && strcmp(argv[i], "--name") == 0 && i + 1 < *argc)
			name = argv[i + 1];
	}
	out = calloc((size_t)*argc + 2, sizeof(*out));
	if (out == NULL)
		return argv;
	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-%s", name);
	out[0] = argv[0];
	out[1] = prefix;
	for (i = 1; i < *argc; i++)
		out[i + 1] = argv[i];
	(*argc)++;
	return out;
}

int
main(int argc, char **argv)
{
	struct droced *d = &droced;
	struct droce_dev_conf conf;
	pthread_t ctrl;
	int ret;

	argv = eal_args_with_prefix(&argc, argv);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "droced: EAL initialisation failed\n");
		return 1;
	}
	argc -= ret;
	argv += ret;
	argv[0] = (char *)"droced";
	if (droced_opts_parse(&d->opts, argc, argv) < 0)
		return 2;
	if (droced_workers_init(d) < 0)
		return 1;

	memset(&conf, 0, sizeof(conf));
	snprintf(conf.name, sizeof(conf.name), "%s", d->opts.name);
	conf.seed = d->opts.seed;
	conf.port_ops = &droced_port_ops;
	conf.port_arg = droced_port_state(d, 0);
	conf.n_engines = d->opts.workers;
	conf.dcqcn = d->opts.dcqcn;
	conf.ecn_np_enable = d->opts.ecn_np;
	conf.ecn_rp_enable = d->opts.ecn_rp;
	if (droced_port_open(d, &conf) < 0)
		return 1;
	if (droced_wait_init(d, &conf) < 0)
		return 1;
	ret = droce_dev_create(&conf, &d->dev);
	if (ret < 0) {
		fprintf(stderr, "droced: device: %s\n", strerror(-ret));
		return 1;
	}
	d->conf = conf;
	for (unsigned int i = 0; i < d->n_workers; i++) {
		d->workers[i].eng = droce_dev_engine(d->dev, i);
		d->workers[i].port_state = droced_port_state(d, i);
		droce_engine_set_port_arg(d->workers[i].eng, d->workers[i].port_state);
	}
	d->eng = d->workers[0].eng;
	ret = droced_cm_init(d);
	if (ret < 0) {
		fprintf(stderr, "droced: connection manager: %s\n", strerror(-ret));
		return 1;
	}
	droced_port_settle(d);	/* clients (perftest) refuse a port that is not ACTIVE */
	if (droced_ctrl_listen(d) < 0)
		return 1;
	if (droced_sysfs_init(d, &conf) < 0)
		return 1;
	droced_telemetry_init(d);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&ctrl, NULL, droced_ctrl_thread, d) != 0) {
		fprintf(stderr, "droced: cannot start the control thread\n");
		return 1;
	}
	printf("droced: %s ready on %s (socket %s)\nREADY\n", conf.name,
	       d->opts.iface ? d->opts.iface : d->opts.port, d->opts.socket_path);
	fflush(stdout);

	if (droced_workers_launch(d) < 0)
		atomic_store(&d->stop, true);
	droced_worker_loop(&d->workers[0]);
	droced_workers_join(d);
	atomic_store(&d->worker_gone, true);

	droce_dev_fatal(d->dev);	/* clients learn the device is gone */
	pthread_join(ctrl, NULL);
	unlink(d->opts.socket_path);
	droced_sysfs_remove(d);
	droce_dev_destroy(d->dev);
	droced_port_close(d);
	droced_wait_close(d);
	rte_eal_cleanup();
	printf("droced: stopped\n");
	return 0;
}
