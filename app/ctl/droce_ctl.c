/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-ctl: read a running droced's counters and objects through DPDK's
 * telemetry socket (/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2).
 *
 *   droce-ctl [-p FILE_PREFIX] stats      counters, one "name value" per line
 *   droce-ctl [-p FILE_PREFIX] objects    clients, their objects, QP states
 *   droce-ctl [-p FILE_PREFIX] qps        each QP's rates, a line each
 *   droce-ctl [-p FILE_PREFIX] qp QPN     one QP's, "name value" per line
 *   droce-ctl [-p FILE_PREFIX] set NAME VALUE
 *                                        an ECN switch or DCQCN parameter,
 *                                        NAME as stats shows it
 *   droce-ctl [-p FILE_PREFIX] raw CMD    any telemetry command, JSON as is
 */

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char buf[1 << 16];

static int
usage(void)
{
	fprintf(stderr, "usage: droce-ctl [-p FILE_PREFIX] stats | objects | qps | qp QPN |\n"
			"                 set NAME VALUE | raw COMMAND\n");
	return 2;
}

/* Send @p cmd, the reply into buf. @return 0, or -1 after saying why. */
static int
ask(int fd, const char *cmd)
{
	ssize_t n;

	if (write(fd, cmd, strlen(cmd)) < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0) {
		fprintf(stderr, "droce-ctl: telemetry exchange failed\n");
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

/* The reply's value: what follows {"COMMAND": ; NULL if droced refused (null) */
static const char *
reply_value(const char *json)
{
	const char *p = strchr(json, ':');

	if (p == NULL)
		return NULL;
	p += strspn(p + 1, " ") + 1;
	return strncmp(p, "null", 4) == 0 ? NULL : p;
}

/* {"/droce/stats": {"a": 1, "b": "x"}} -> "a 1\nb x\n" */
static void
print_flat(const char *json)
{
	const char *p = reply_value(json), *e;

	if (p == NULL || *p != '{') {
		puts(json);
		return;
	}
	for (p++; (p = strchr(p, '"')) != NULL; p = e) {
		e = strchr(p + 1, '"');		/* the key */
		if (e == NULL)
			return;
		printf("%.*s ", (int)(e - p - 1), p + 1);
		for (e++; *e == ':' || *e == ' '; e++)
			;
		if (*e == '"') {		/* a string value */
			p = e;
			e = strchr(p + 1, '"');
			if (e == NULL)
				return;
			printf("%.*s\n", (int)(e - p - 1), p + 1);
			e++;
		} else {
			p = e;
			e += strcspn(e, ",}");
			printf("%.*s\n", (int)(e - p), p);
		}
	}
}

/* {"/droce/objects": ["a", "b"]} -> "a\nb\n" */
static void
print_strings(const char *json)
{
	const char *p = strchr(json, '[');

	while (p != NULL && (p = strchr(p, '"')) != NULL) {
		const char *e = strchr(p + 1, '"');

		if (e == NULL)
			break;
		printf("%.*s\n", (int)(e - p - 1), p + 1);
		p = e + 1;
	}
}

/* Field @p key of a flat reply: a number into *@p v, or a string into @p s (@p len). */
static int
field(const char *json, const char *key, uint64_t *v, char *s, size_t len)
{
	char pat[80];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (p == NULL)
		return -1;
	p += strlen(pat);
	p += strspn(p, " ");
	if (s != NULL) {
		size_t n = *p == '"' ? strcspn(p + 1, "\"") : 0;

		if (*p != '"')
			return -1;
		snprintf(s, len, "%.*s", (int)n, p + 1);
		return 0;
	}
	*v = strtoull(p, NULL, 10);
	return 0;
}

/* kbps as Mb/s with three decimals into @p out */
static const char *
mbps(uint64_t kbps, char *out, size_t len)
{
	snprintf(out, len, "%" PRIu64 ".%03" PRIu64, kbps / 1000, kbps % 1000);
	return out;
}

/* One line per QP: its rate now, its limit, DCQCN's state, its CNPs */
static int
print_qps(int fd)
{
	static uint64_t qpns[512];
	unsigned int n = 0, i;
	const char *p = strchr(buf, '[');
	char *end;

	while (p != NULL && n < 512) {
		p += strcspn(p, "0123456789]");
		if (*p != ']' && *p != '\0')
			qpns[n++] = strtoull(p, &end, 10), p = end;
		else
			break;
	}
	printf("%-8s %-4s %-5s %12s %12s %-5s %12s %12s %6s %6s %6s\n", "qpn", "type", "state",
	       "rate_mbps", "limit_mbps", "dcqcn", "current_mbps", "target_mbps", "alpha",
	       "cnp_rx", "cnp_tx");
	for (i = 0; i < n; i++) {
		char cmd[64], type[8], state[16], m[4][32], alpha[16];
		uint64_t rate, limit, limited, rc, rt, a, rx, tx;

		snprintf(cmd, sizeof(cmd), "/droce/qp,%" PRIu64, qpns[i]);
		if (ask(fd, cmd) < 0)
			return -1;
		if (reply_value(buf) == NULL)	/* destroyed since the list */
			continue;
		if (field(buf, "type", NULL, type, sizeof(type)) < 0 ||
		    field(buf, "state", NULL, state, sizeof(state)) < 0 ||
		    field(buf, "rate_kbps", &rate, NULL, 0) < 0 ||
		    field(buf, "rate_limit_kbps", &limit, NULL, 0) < 0 ||
		    field(buf, "dcqcn_limited", &limited, NULL, 0) < 0 ||
		    field(buf, "dcqcn_current_rate_kbps", &rc, NULL, 0) < 0 ||
		    field(buf, "dcqcn_target_rate_kbps", &rt, NULL, 0) < 0 ||
		    field(buf, "dcqcn_alpha", &a, NULL, 0) < 0 ||
		    field(buf, "rp_cnp_handled", &rx, NULL, 0) < 0 ||
		    field(buf, "np_cnp_sent", &tx, NULL, 0) < 0) {
			fprintf(stderr, "droce-ctl: unexpected reply: %s\n", buf);
			return -1;
		}
		snprintf(alpha, sizeof(alpha), "%.3f", (double)a / 1024);
		printf("0x%06" PRIx64 " %-4s %-5s %12s %12s %-5s %12s %12s %6s %6" PRIu64
		       " %6" PRIu64 "\n", qpns[i], type, state, mbps(rate, m[0], sizeof(m[0])),
		       limit ? mbps(limit, m[1], sizeof(m[1])) : "-", limited ? "on" : "off",
		       limited ? mbps(rc, m[2], sizeof(m[2])) : "-",
		       limited ? mbps(rt, m[3], sizeof(m[3])) : "-", limited ? alpha : "-", rx, tx);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *prefix = "rte", *what;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cmd[256];
	int fd, opt, nargs, ret = 0;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p')
			return usage();
		prefix = optarg;
	}
	if (optind >= argc)
		return usage();
	what = argv[optind];
	nargs = argc - optind - 1;
	if (strcmp(what, "stats") == 0 && nargs == 0)
		snprintf(cmd, sizeof(cmd), "/droce/stats");
	else if (strcmp(what, "objects") == 0 && nargs == 0)
		snprintf(cmd, sizeof(cmd), "/droce/objects");
	else if (strcmp(what, "qps") == 0 && nargs == 0)
		snprintf(cmd, sizeof(cmd), "/droce/qps");
	else if (strcmp(what, "qp") == 0 && nargs == 1)
		snprintf(cmd, sizeof(cmd), "/droce/qp,%s", argv[optind + 1]);
	else if (strcmp(what, "set") == 0 && nargs == 2)
		snprintf(cmd, sizeof(cmd), "/droce/cc_set,%s=%s", argv[optind + 1],
			 argv[optind + 2]);
	else if (strcmp(what, "raw") == 0 && nargs == 1)
		snprintf(cmd, sizeof(cmd), "%s", argv[optind + 1]);
	else
		return usage();

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/var/run/dpdk/%s/dpdk_telemetry.v2", prefix);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "droce-ctl: cannot reach droced at %s\n", sa.sun_path);
		return 1;
	}
	if (read(fd, buf, sizeof(buf)) <= 0 || ask(fd, cmd) < 0) {	/* the greeting, then ours */
		close(fd);
		return 1;
	}
	if (strcmp(what, "raw") == 0) {
		puts(buf);
	} else if (reply_value(buf) == NULL) {
		fprintf(stderr, "droce-ctl: droced refused %s%s\n", cmd,
			strcmp(what, "set") == 0 ? " (no such name, or out of its range)" :
			strcmp(what, "qp") == 0 ? " (no such QP)" : "");
		ret = 1;
	} else if (strcmp(what, "objects") == 0) {
		print_strings(buf);
	} else if (strcmp(what, "qps") == 0) {
		ret = print_qps(fd) < 0;
	} else {
		print_flat(buf);
	}
	close(fd);
	return ret;
}
