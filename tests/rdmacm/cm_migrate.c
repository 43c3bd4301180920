/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_migrate_id with the id's event already queued on its old channel,
 * as librpma does it: rdma_accept() on the listener's channel, then the id
 * migrated to a channel of its own, by which time the ESTABLISHED may have
 * arrived. Linux's ucma moves an id's unread events to the new channel
 * (ucma_migrate_id); so must droce.
 *   cm_migrate server ADDR PORT   listen, accept one REQ, wait until its
 *                                 ESTABLISHED is queued, migrate, check
 *   cm_migrate client ADDR PORT   connect, wait for the server's disconnect
 * Checks (server): the ESTABLISHED comes out of the new channel, for the
 * migrated id; the old channel is left neither readable nor with an event
 * (a non-blocking rdma_get_cm_event there fails with EAGAIN); the id's
 * later DISCONNECTED comes out of the new channel too.
 */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "rdmacm_check.h"

static void __attribute__((noreturn))
die(const char *what)
{
	perror(what);
	exit(2);
}

static int
readable(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* The next event on @p ch within 5 s, or NULL. */
static struct rdma_cm_event *
next_event(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *e;

	if (!readable(ch, 5000) || rdma_get_cm_event(ch, &e) != 0)
		return NULL;
	return e;
}

static struct rdma_addrinfo *
addr_of(const char *addr, const char *port, int passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;

	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &ai) != 0)
		die("rdma_getaddrinfo");
	return ai;
}

static void
make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (rdma_create_qp(id, NULL, &qa) != 0)
		die("rdma_create_qp");
}

static int
server(const char *addr, const char *port)
{
	struct rdma_event_channel *old_ch = rdma_create_event_channel(), *new_ch;
	struct rdma_addrinfo *ai = addr_of(addr, port, 1);
	struct rdma_cm_id *listener, *id;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *e;

	if (old_ch == NULL || rdma_create_id(old_ch, &listener, NULL, RDMA_PS_TCP) != 0)
		die("rdma_create_id");
	if (rdma_bind_addr(listener, ai->ai_src_addr) != 0 || rdma_listen(listener, 1) != 0)
		die("rdma_listen");
	printf("listening\n");
	fflush(stdout);
	e = next_event(old_ch);
	if (e == NULL || e->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		die("CONNECT_REQUEST");
	id = e->id;
	rdma_ack_cm_event(e);
	make_qp(id);
	if (rdma_accept(id, &param) != 0)
		die("rdma_accept");
	/* the ESTABLISHED now waits on the listener's channel */
	CHECK(readable(old_ch, 5000), "the ESTABLISHED queued on the listener's channel");
	new_ch = rdma_create_event_channel();
	if (new_ch == NULL)
		die("rdma_create_event_channel");
	CHECK(rdma_migrate_id(id, new_ch) == 0, "rdma_migrate_id with an event queued");

	e = next_event(new_ch);
	CHECK(e != NULL && e->event == RDMA_CM_EVENT_ESTABLISHED && e->id == id,
	      "the ESTABLISHED comes out of the new channel (%s)",
	      e != NULL ? rdma_event_str(e->event) : "nothing in 5 s");
	if (e != NULL)
		rdma_ack_cm_event(e);
	CHECK(!readable(old_ch, 200), "the old channel is not left readable");
	if (fcntl(old_ch->fd, F_SETFL, fcntl(old_ch->fd, F_GETFL) | O_NONBLOCK) != 0)
		die("fcntl");
	errno = 0;
	CHECK(rdma_get_cm_event(old_ch, &e) != 0 && errno == EAGAIN,
	      "nothing on the old channel: EAGAIN (%s)", strerror(errno));

	if (rdma_disconnect(id) != 0)
		die("rdma_disconnect");
	e = next_event(new_ch);
	CHECK(e != NULL && e->event == RDMA_CM_EVENT_DISCONNECTED && e->id == id,
	      "the DISCONNECTED comes out of the new channel (%s)",
	      e != NULL ? rdma_event_str(e->event) : "nothing in 5 s");
	if (e != NULL)
		rdma_ack_cm_event(e);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(new_ch);
	rdma_destroy_event_channel(old_ch);
	rdma_freeaddrinfo(ai);
	return check_failures != 0;
}

static int
client(const char *addr, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = addr_of(addr, port, 0);
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	int want[] = { RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ROUTE_RESOLVED,
		       RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED };

	if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
		die("rdma_create_id");
	if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, 2000) != 0)
		die("rdma_resolve_addr");
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		e = next_event(ch);
		if (e == NULL || (int)e->event != want[i]) {
			fprintf(stderr, "client: %s, want %s\n",
				e != NULL ? rdma_event_str(e->event) : "no event",
				rdma_event_str(want[i]));
			exit(1);
		}
		rdma_ack_cm_event(e);
		if (want[i] == RDMA_CM_EVENT_ADDR_RESOLVED && rdma_resolve_route(id, 2000) != 0)
			die("rdma_resolve_route");
		if (want[i] == RDMA_CM_EVENT_ROUTE_RESOLVED) {
			make_qp(id);
			if (rdma_connect(id, &param) != 0)
				die("rdma_connect");
		}
	}
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	rdma_freeaddrinfo(ai);
	printf("ok   client: connected, disconnected by the server\n");
	return 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: %s server|client ADDR PORT\n", argv[0]);
	return 2;
}
