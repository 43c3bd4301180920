/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RDMA_PS_IPOIB ids on RoCE refused as Linux's kernel CM refuses them
 * (tests/interop/interop.sh runs this on the kernel and on droce,
 * tests/integration/rdmacm.sh on droce):
 *   cm_ipoib SRC DST
 * An IPoIB id's Q_Key is the IPoIB broadcast group's, which InfiniBand's
 * subnet administrator gives; Linux's cma allows the IPoIB port space only
 * on an InfiniBand netdev and answers EINVAL when it meets a RoCE one:
 *   1. rdma_resolve_addr from SRC: fails at once, EINVAL
 *   2. rdma_resolve_addr from the any-address: ADDR_ERROR, status -EINVAL
 *   3. rdma_bind_addr to SRC: EINVAL
 *   4. rdma_bind_addr to 0.0.0.0 and rdma_listen: allowed (no device yet)
 *   5. the same resolution as 1 with an RDMA_PS_UDP id: ADDR_RESOLVED (the
 *      refusal is the port space's, not the address's)
 * One line per step, "ok" or "FAIL"; exit 0 when all are as above.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *ch;
static int failed;

static void
verdict(int ok, const char *what, const char *got)
{
	printf("%s %s: %s\n", ok ? "ok  " : "FAIL", what, got);
	failed |= !ok;
}

/* A call's outcome as text: "0", or "-1 errno NAME". */
static const char *
outcome(int ret)
{
	static char b[64];

	if (ret == 0)
		return "0";
	snprintf(b, sizeof(b), "-1, errno %d (%s)", errno, strerror(errno));
	return b;
}

static struct rdma_cm_id *
new_id(enum rdma_port_space ps)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, ps) != 0) {
		perror("rdma_create_id");
		failed = 1;
		return NULL;
	}
	return id;
}

/* The next event: its type and status as text; *TYPE gets the type. */
static const char *
next_event(enum rdma_cm_event_type *type)
{
	static char b[96];
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(ch, &e) != 0)
		return "no event";
	*type = e->event;
	snprintf(b, sizeof(b), "%s, status %d", rdma_event_str(e->event), e->status);
	rdma_ack_cm_event(e);
	return b;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(7997) };
	enum rdma_cm_event_type t = RDMA_CM_EVENT_ADDR_ERROR;
	struct rdma_cm_id *id;
	const char *got;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: cm_ipoib SRC DST (IPv4)\n");
		return 2;
	}
	dst.sin_port = htons(7997);
	ch = rdma_create_event_channel();
	if (ch == NULL) {
		perror("rdma_create_event_channel");
		return 1;
	}

	if ((id = new_id(RDMA_PS_IPOIB)) != NULL) {
		ret = rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 5000);
		verdict(ret != 0 && errno == EINVAL, "IPoIB id, rdma_resolve_addr from SRC",
			outcome(ret));
		rdma_destroy_id(id);
	}
	if ((id = new_id(RDMA_PS_IPOIB)) != NULL) {
		ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 5000);
		got = ret == 0 ? next_event(&t) : outcome(ret);
		verdict(ret == 0 && t == RDMA_CM_EVENT_ADDR_ERROR && strstr(got, "status -22"),
			"IPoIB id, rdma_resolve_addr from the any-address", got);
		rdma_destroy_id(id);
	}
	if ((id = new_id(RDMA_PS_IPOIB)) != NULL) {
		ret = rdma_bind_addr(id, (struct sockaddr *)&src);
		verdict(ret != 0 && errno == EINVAL, "IPoIB id, rdma_bind_addr to SRC", outcome(ret));
		rdma_destroy_id(id);
	}
	if ((id = new_id(RDMA_PS_IPOIB)) != NULL) {
		ret = rdma_bind_addr(id, (struct sockaddr *)&any);
		if (ret == 0)
			ret = rdma_listen(id, 1);
		verdict(ret == 0, "IPoIB id, rdma_bind_addr to 0.0.0.0 and rdma_listen", outcome(ret));
		rdma_destroy_id(id);
	}
	if ((id = new_id(RDMA_PS_UDP)) != NULL) {
		ret = rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 5000);
		got = ret == 0 ? next_event(&t) : outcome(ret);
		verdict(ret == 0 && t == RDMA_CM_EVENT_ADDR_RESOLVED,
			"UDP id, rdma_resolve_addr from SRC", got);
		rdma_destroy_id(id);
	}
	rdma_destroy_event_channel(ch);
	return failed;
}
