/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* droce-testpmd's own options, after EAL's and "--". */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testpmd.h"

static const struct option longopts[] = {
	{ "iface", required_argument, NULL, 'i' },
	{ "port", required_argument, NULL, 'p' },
	{ "ip", required_argument, NULL, 'a' },
	{ "neigh", required_argument, NULL, 'N' },
	{ "mac", required_argument, NULL, 'm' },
	{ "mtu", required_argument, NULL, 'M' },
	{ "workers", required_argument, NULL, 'W' },
	{ "mode", required_argument, NULL, 'o' },
	{ "ud", no_argument, NULL, 'u' },
	{ "size", required_argument, NULL, 's' },
	{ "qps", required_argument, NULL, 'q' },
	{ "depth", required_argument, NULL, 'd' },
	{ "rate", required_argument, NULL, 'r' },
	{ "count", required_argument, NULL, 'n' },
	{ "path-mtu", required_argument, NULL, 'P' },
	{ "qpn", required_argument, NULL, 'Q' },
	{ "remote-qpn", required_argument, NULL, 'R' },
	{ "remote", required_argument, NULL, 'g' },
	{ "psn", required_argument, NULL, 'x' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "remote-psn", required_argument, NULL, 'X' },
	{ "rkey", required_argument, NULL, 'k' },
	{ "raddr", required_argument, NULL, 'A' },
	{ "rlen", required_argument, NULL, 'L' },
	{ "rstep", required_argument, NULL, 'j' },
	{ "key", required_argument, NULL, 'K' },
	{ "qkey", required_argument, NULL, 'y' },
	{ "mem", required_argument, NULL, 'e' },
	{ "idle", required_argument, NULL, 'I' },
	{ "cmd", required_argument, NULL, 'c' },
	{ "cmd-file", required_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'z' },
	{ "check", no_argument, NULL, 'C' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(void)
{
	fprintf(stderr,
		"usage: droce-testpmd [EAL options] -- [options]\n"
		"port:\n"
		"  --iface NAME | --port DEVARGS  the port (net_af_packet on NAME, or an EAL port/vdev)\n"
		"  --workers N       N worker lcores, each with its own QPs (QP i: worker i mod N)\n"
		"                    and a queue pair of the port, or its own port: --port N times\n"
		"                    (default 1)\n"
		"  --ip ADDR/PFX     our address (repeatable)   --mac MAC   --mtu N\n"
		"  --neigh IP=MAC    a static neighbour (repeatable)\n"
		"traffic:\n"
		"  --mode write|send|read|fadd|cswap|ud|responder|raw   (default write)\n"
		"  --ud              responder: serve UD instead of RC\n"
		"  --remote IP       the peer (its GID as an address)\n"
		"  --size N          message bytes (default 64; atomics 8)\n"
		"  --qps N           QPs (default 1)   --depth N  outstanding per QP (default 16)\n"
		"  --rate N          messages/s, 0 = unlimited   --count N  stop posting after N\n"
		"                    (responder, raw: wait ends after N received)\n"
		"  --path-mtu N      256..4096 (default: from the link MTU)\n"
		"  --qpn N           our first QPN (default 0x100)  --remote-qpn N (default 0x100)\n"
		"  --psn N --remote-psn N   first PSNs (default 0)\n"
		"  --timeout N       retransmit timeout, 4.096 us * 2^N, 1..31 (default 14: 67 ms;\n"
		"                    more under valgrind, where a round of thousands of QPs is slower)\n"
		"  --rkey K --raddr A --rlen N   the peer's memory (default 0x1000, 0, size)\n"
		"  --rstep N         QP i's part of it starts at raddr + i * N (default 0: shared)\n"
		"  --key K           our memory's key (default 0x1000)   --mem N  its bytes\n"
		"  --qkey K          UD Q_Key (default 0x11111111)\n"
		"run:\n"
		"  --idle busy|yield|sleep|wait   (default busy; wait = sleep here)\n"
		"  --cmd 'start; sleep 10; stop; show stats'   or --cmd-file F; otherwise a prompt\n"
		"  --quiet           no per-second progress lines\n"
		"  --check           check READ data and atomic results against the peer's\n"
		"                    pattern; exit 1 unless every message posted completed\n"
		"                    (with --count N: N since the last start), none with an\n"
		"                    error, no QP failed and no check failed\n");
}

static int
mode_parse(const char *s, enum tp_mode *m)
{
	int i;

	for (i = 0; i < TP_MODE_COUNT; i++)
		if (strcmp(s, tp_mode_name((enum tp_mode)i)) == 0) {
			*m = (enum tp_mode)i;
			return 0;
		}
	return -1;
}

int
tp_opts_parse(struct tp_opts *o, int argc, char **argv)
{
	char *end = NULL;
	int c;

	memset(o, 0, sizeof(*o));
	o->size = 64;
	o->qps = 1;
	o->depth = 16;
	o->qpn_base = 0x100;
	o->remote_qpn = 0x100;
	o->rkey = 0x1000;
	o->key = 0x1000;
	o->qkey = 0x11111111;
	o->timeout = 14;
	o->workers = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		unsigned long long v = optarg ? strtoull(optarg, &end, 0) : 0;
		bool num = optarg && *optarg && *end == '\0';

		switch (c) {
		case 'i': o->iface = optarg; break;
		case 'p':
			if (o->n_port == TP_MAX_WORKERS)
				goto bad;
			o->port[o->n_port++] = optarg;
			break;
		case 'a':
			if (o->n_ip == DROCE_DIM(o->ip))
				goto bad;
			o->ip[o->n_ip++] = optarg;
			break;
		case 'N':
			if (o->n_neigh == DROCE_DIM(o->neigh))
				goto bad;
			o->neigh[o->n_neigh++] = optarg;
			break;
		case 'm': o->mac = optarg; break;
		case 'o':
			if (mode_parse(optarg, &o->mode) < 0)
				goto bad;
			break;
		case 'u': o->ud = true; break;
		case 'g': o->remote_ip = optarg; break;
		case 'I':
			if (droce_idle_parse(optarg, &o->idle) < 0)
				goto bad;
			break;
		case 'c': o->cmd = optarg; break;
		case 'f': o->cmd_file = optarg; break;
		case 'z': o->quiet = true; break;
		case 'C': o->check = true; break;
		case 'h': usage(); return -1;
		case '?': goto bad;
		default:
			if (!num)
				goto bad;
			switch (c) {
			case 'M': o->mtu = (uint32_t)v; break;
			case 'W': o->workers = (uint32_t)v; break;
			case 's': o->size = (uint32_t)v; break;
			case 'q': o->qps = (uint32_t)v; break;
			case 'd': o->depth = (uint32_t)v; break;
			case 'r': o->rate = v; break;
			case 'n': o->count = v; break;
			case 'P': o->path_mtu = (uint32_t)v; break;
			case 'Q': o->qpn_base = (uint32_t)v; break;
			case 'R': o->remote_qpn = (uint32_t)v; break;
			case 'T': o->timeout = (uint32_t)v; break;
			case 'x': o->psn = (uint32_t)v & DROCE_24BIT_MASK; break;
			case 'X': o->remote_psn = (uint32_t)v & DROCE_24BIT_MASK; break;
			case 'k': o->rkey = (uint32_t)v; break;
			case 'A': o->raddr = v; break;
			case 'L': o->rlen = v; break;
			case 'j': o->rstep = v; break;
			case 'K': o->key = (uint32_t)v; break;
			case 'y': o->qkey = (uint32_t)v; break;
			case 'e': o->mem = v; break;
			}
		}
	}
	if (o->mode == TP_FADD || o->mode == TP_CSWAP)
		o->size = 8;
	if (o->mem == 0)
		o->mem = DROCE_MAX(4ull << 20, 2ull * o->size * o->depth);
	if (o->rlen == 0)
		o->rlen = o->size;
	if ((o->iface == NULL) == (o->n_port == 0)) {
		fprintf(stderr, "droce-testpmd: give one of --iface and --port\n");
		return -1;
	}
	if (o->workers == 0 || o->workers > TP_MAX_WORKERS ||
	    (o->n_port > 1 && o->n_port != o->workers)) {
		fprintf(stderr, "droce-testpmd: --workers N (1..%u): one port (--iface or --port, "
			"a queue pair per worker) or --port N times (a port per worker)\n",
			TP_MAX_WORKERS);
		return -1;
	}
	if (o->mode != TP_RAW && (o->remote_ip == NULL || o->n_ip == 0)) {
		fprintf(stderr, "droce-testpmd: --ip and --remote are needed (except in raw mode)\n");
		return -1;
	}
	if (o->qps == 0 || o->qps > (1u << 20) || o->timeout == 0 || o->timeout > 31 || o->depth == 0 || o->depth > 4096 ||
	    (o->path_mtu && (o->path_mtu < 256 || o->path_mtu > 4096 ||
			     (o->path_mtu & (o->path_mtu - 1)))) ||
	    o->size > o->mem || (o->mode == TP_UD && o->size > 4096)) {
		fprintf(stderr, "droce-testpmd: a value is out of range\n");
		return -1;
	}
	if (o->check && (o->mode == TP_FADD || o->mode == TP_CSWAP) && o->qps != 1) {
		/* QPs sharing a word interleave: no result is predictable */
		fprintf(stderr, "droce-testpmd: --check of atomics needs --qps 1\n");
		return -1;
	}
	return 0;
bad:
	usage();
	return -1;
}
