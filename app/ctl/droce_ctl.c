/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-ctl: read a running droced's counters and objects through DPDK's
 * telemetry socket (/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2).
 *
 *   droce-ctl [-p FILE_PREFIX] stats      counters, one "name value" per line
 *   droce-ctl [-p FILE_PREFIX] objects    clients, their objects, QP states
 *   droce-ctl [-p FILE_PREFIX] raw CMD    any telemetry command, JSON as is
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int
usage(void)
{
	fprintf(stderr, "usage: droce-ctl [-p FILE_PREFIX] stats | objects | raw COMMAND\n");
	return 2;
}

/* {"/droce/stats": {"a": 1, "b": 2}} -> "a 1\nb 2\n" */
static void
print_flat(const char *json)
{
	const char *p = strchr(json, '{');

	if (p == NULL || (p = strchr(p + 1, '{')) == NULL) {
		puts(json);
		return;
	}
	for (p++; *p != '\0' && *p != '}'; p++) {
		if (*p == '"') {
			const char *e = strchr(p + 1, '"');

			if (e == NULL)
				break;
			printf("%.*s ", (int)(e - p - 1), p + 1);
			p = e;
		} else if (isdigit((unsigned char)*p) || *p == '-') {
			putchar(*p);
			if (!isdigit((unsigned char)p[1]))
				putchar('\n');
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

int
main(int argc, char **argv)
{
	const char *prefix = "rte", *cmd;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[1 << 16];
	ssize_t n;
	int fd, raw, objects, opt;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p')
			return usage();
		prefix = optarg;
	}
	if (optind >= argc)
		return usage();
	raw = strcmp(argv[optind], "raw") == 0;
	if (raw && optind + 1 >= argc)
		return usage();
	objects = strcmp(argv[optind], "objects") == 0;
	if (!raw && !objects && strcmp(argv[optind], "stats") != 0)
		return usage();
	cmd = raw ? argv[optind + 1] : objects ? "/droce/objects" : "/droce/stats";

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/var/run/dpdk/%s/dpdk_telemetry.v2", prefix);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "droce-ctl: cannot reach droced at %s\n", sa.sun_path);
		return 1;
	}
	if (read(fd, buf, sizeof(buf)) <= 0 ||	/* the greeting */
	    write(fd, cmd, strlen(cmd)) < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0) {
		fprintf(stderr, "droce-ctl: telemetry exchange failed\n");
		return 1;
	}
	buf[n] = '\0';
	if (raw)
		puts(buf);
	else if (objects)
		print_strings(buf);
	else
		print_flat(buf);
	close(fd);
	return 0;
}
