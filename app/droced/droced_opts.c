/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droced's own options (after EAL's and "--") and the config file, which
 * holds the same options as "key = value" lines (config/droced.conf).
 */

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "droce_ctrl.h"
#include "droced.h"

static const struct option longopts[] = {
	{ "iface", required_argument, NULL, 'i' },
	{ "port", required_argument, NULL, 'p' },
	{ "ip", required_argument, NULL, 'a' },
	{ "mac", required_argument, NULL, 'm' },
	{ "mtu", required_argument, NULL, 'M' },
	{ "socket", required_argument, NULL, 's' },
	{ "socket-mode", required_argument, NULL, 'o' },
	{ "socket-group", required_argument, NULL, 'g' },
	{ "config", required_argument, NULL, 'c' },
	{ "name", required_argument, NULL, 'n' },
	{ "neigh", required_argument, NULL, 'N' },
	{ "gateway", required_argument, NULL, 'G' },
	{ "idle", required_argument, NULL, 'I' },
	{ "workers", required_argument, NULL, 'W' },
	{ "handoff-slots", required_argument, NULL, 'H' },
	{ "seed", required_argument, NULL, 'S' },
	{ "fault", required_argument, NULL, 'F' },
	{ "ecn-np", required_argument, NULL, 'e' },
	{ "ecn-rp", required_argument, NULL, 'r' },
	{ "dcqcn", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(void)
{
	fprintf(stderr,
		"usage: droced [EAL options] -- [options]\n"
		"  --iface NAME        attach to a Linux interface (net_af_packet)\n"
		"  --port DEVARGS      or use this EAL port / vdev\n"
		"  --ip ADDR/PFX       an IPv4 or IPv6 address of ours (repeatable)\n"
		"  --mac MAC           our MAC (default: the interface's)\n"
		"  --mtu N             Ethernet MTU (default: the interface's)\n"
		"  --neigh IP=MAC      a static neighbour (repeatable)\n"
		"  --gateway IP        the default gateway of IP's family (one each)\n"
		"  --socket PATH       control socket (default %s)\n"
		"  --socket-mode MODE  its permissions, octal (default 0666)\n"
		"  --socket-group GRP  its group\n"
		"  --name NAME         device name (default droce0)\n"
		"  --idle busy|yield|sleep|wait  what the workers do when idle (default busy)\n"
		"  --workers N         worker lcores, each with its engine and port queue\n"
		"                      (default 1; EAL must give N lcores)\n"
		"  --handoff-slots N   frames each worker's hand-off ring holds (default 4096)\n"
		"  --fault PARAMS      wrap the port in net_droce_fault, e.g.\n"
		"                      seed=1,loss=0.05,dup=0.01,reorder=0.05,corrupt=0.01,dir=both\n"
		"  --ecn-np PRIOS      priorities whose CE-marked packets get CNPs: 0-7 (default),\n"
		"                      a list such as 3,4 or 2-5, or none\n"
		"  --ecn-rp PRIOS      priorities that send ECT(0) and slow down on CNPs (DCQCN)\n"
		"  --dcqcn NAME=VALUE  a DCQCN parameter, ConnectX's names (doc/transport.md):\n"
		"                      rpg_time_reset, rpg_ai_rate, min_time_between_cnps, ...\n"
		"  --config FILE       read these options from FILE (key = value)\n",
		DROCE_CTRL_SOCKET);
}

static int parse_config(struct droced_opts *o, const char *path);

/* "0-7", "3,4", "2-5,7" or "none" into a bit per priority; -1 if malformed. */
static int
parse_prios(const char *arg, uint8_t *out)
{
	const char *s = arg;
	unsigned int mask = 0;

	if (strcmp(arg, "none") == 0) {
		*out = 0;
		return 0;
	}
	while (*s != '\0') {
		unsigned int lo, hi;
		char *end;

		lo = hi = (unsigned int)strtoul(s, &end, 10);
		if (end == s || lo > 7)
			return -1;
		if (*end == '-') {
			s = end + 1;
			hi = (unsigned int)strtoul(s, &end, 10);
			if (end == s || hi > 7 || hi < lo)
				return -1;
		}
		for (; lo <= hi; lo++)
			mask |= 1u << lo;
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return -1;
		s = end;
	}
	*out = (uint8_t)mask;
	return 0;
}

/* "NAME=VALUE" for a DCQCN parameter; -1 (with a word why) if unknown or out of range. */
static int
parse_dcqcn(struct droced_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[64], *end;
	unsigned long long v;
	int ret;

	if (eq == NULL || (size_t)(eq - arg) >= sizeof(name))
		return -1;
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	v = strtoull(eq + 1, &end, 0);
	if (eq[1] == '\0' || *end != '\0')
		return -1;
	ret = droce_dcqcn_param_set(&o->dcqcn, name, v);
	if (ret < 0)
		fprintf(stderr, "droced: --dcqcn %s: %s\n", arg,
			ret == -ENOENT ? "no such parameter" : "out of range");
	return ret < 0 ? -1 : 0;
}

/* A decimal count in [lo, hi] into @p out; -1 for anything else. */
static int
parse_count(const char *arg, unsigned long lo, unsigned long hi, unsigned int *out)
{
	char *end;
	unsigned long n = strtoul(arg, &end, 10);

	if (*arg == '\0' || *end != '\0' || n < lo || n > hi)
		return -1;
	*out = (unsigned int)n;
	return 0;
}

static int
apply(struct droced_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'i':
		o->iface = arg;
		break;
	case 'p':
		o->port = arg;
		break;
	case 'a':
		if (strchr(arg, ':') != NULL) {
			if (o->n_ipv6 == DROCE_DIM(o->ipv6))
				return -1;
			o->ipv6[o->n_ipv6++] = arg;
		} else {
			if (o->n_ipv4 == DROCE_DIM(o->ipv4))
				return -1;
			o->ipv4[o->n_ipv4++] = arg;
		}
		break;
	case 'm':
		o->mac = arg;
		break;
	case 'M':
		o->mtu = (uint32_t)strtoul(arg, NULL, 0);
		break;
	case 's':
		o->socket_path = arg;
		break;
	case 'o':
		o->sock_mode = (uint32_t)strtoul(arg, NULL, 8);
		break;
	case 'g': {
		struct group *g = getgrnam(arg);

		o->sock_gid = g != NULL ? (int)g->gr_gid : atoi(arg);
		break;
	}
	case 'c':
		return parse_config(o, arg);
	case 'n':
		o->name = arg;
		break;
	case 'N':
		if (o->n_neigh == DROCE_DIM(o->neigh))
			return -1;
		o->neigh[o->n_neigh++] = arg;
		break;
	case 'G':
		if (o->n_gateway == DROCE_DIM(o->gateway))
			return -1;
		o->gateway[o->n_gateway++] = arg;
		break;
	case 'I':
		if (droce_idle_parse(arg, &o->idle) < 0)
			return -1;
		break;
	case 'W':
		return parse_count(arg, 1, DROCE_DEV_MAX_ENGINES, &o->workers);
	case 'H':
		return parse_count(arg, 64, 65536, &o->handoff_slots);
	case 'S':
		o->seed = strtoull(arg, NULL, 0);
		break;
	case 'F':
		o->fault = arg;
		break;
	case 'e':
		return parse_prios(arg, &o->ecn_np);
	case 'r':
		return parse_prios(arg, &o->ecn_rp);
	case 'd':
		return parse_dcqcn(o, arg);
	default:
		return -1;
	}
	return 0;
}

/* Options whose value apply() keeps a pointer to (the others parse it) */
static bool
keeps_arg(int c)
{
	return strchr("ipamsnNGF", c) != NULL;
}

/* "key = value" lines, '#' comments; keys are the long option names. */
static int
parse_config(struct droced_opts *o, const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int lineno = 0;

	if (f == NULL) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *k = line, *v, *e;
		const struct option *opt;

		lineno++;
		k += strspn(k, " \t");
		if (*k == '#' || *k == '\n' || *k == '\0')
			continue;
		v = strchr(k, '=');
		if (v == NULL)
			goto bad;
		*v++ = '\0';
		for (e = v + strlen(v); e > v && strchr(" \t\r\n", e[-1]); e--)
			e[-1] = '\0';
		v += strspn(v, " \t");
		for (e = k + strlen(k); e > k && strchr(" \t", e[-1]); e--)
			e[-1] = '\0';
		for (opt = longopts; opt->name != NULL; opt++)
			if (strcmp(opt->name, k) == 0)
				break;
		if (opt->name == NULL || opt->has_arg != required_argument)
			goto bad;
		v = strdup(v);
		if (v == NULL || apply(o, opt->val, v) < 0) {
			free(v);
			goto bad;
		}
		if (!keeps_arg(opt->val))
			free(v);
	}
	fclose(f);
	return 0;
bad:
	fprintf(stderr, "droced: %s:%d: bad line\n", path, lineno);
	fclose(f);
	return -1;
}

int
droced_opts_parse(struct droced_opts *o, int argc, char **argv)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->socket_path = getenv("DROCE_SOCKET") ? getenv("DROCE_SOCKET") : DROCE_CTRL_SOCKET;
	o->name = "droce0";
	o->mtu = 0;		/* the interface's */
	o->sock_mode = 0666;
	o->sock_gid = -1;
	o->workers = 1;
	o->handoff_slots = 4096;
	/* ECN and DCQCN on every priority, as ConnectX-5 and later ship */
	o->ecn_np = 0xff;
	o->ecn_rp = 0xff;
	droce_dcqcn_params_default(&o->dcqcn);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h' || apply(o, c, optarg) < 0) {
			usage();
			return -1;
		}
	}
	if (optind < argc || (o->iface == NULL && o->port == NULL) ||
	    (o->n_ipv4 == 0 && o->n_ipv6 == 0)) {
		usage();
		return -1;
	}
	return 0;
}
