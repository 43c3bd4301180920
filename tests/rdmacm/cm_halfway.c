/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * One end of an rdma_cm connection that stops halfway, for a test that
 * kills it there (tests/integration/rdmacm.sh):
 *   cm_halfway stall-active ADDR PORT    connect, print "stalled", never
 *                                        read the REP (no RTU)
 *   cm_halfway stall-passive ADDR PORT   listen, print "stalled" once a REQ
 *                                        is in, never answer it
 *   cm_halfway peer-active ADDR PORT     connect; exit 0 if refused
 *   cm_halfway peer-passive ADDR PORT    accept (print "accepted"); exit 0
 *                                        if the peer fails
 * A peer exits 0 when the connection ends in REJECTED, UNREACHABLE or
 * CONNECT_ERROR (its other end vanished), 1 on ESTABLISHED or any other
 * event; a stalled end waits until it is killed.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *chan;

static enum rdma_cm_event_type
next_event(struct rdma_cm_id **id)
{
	struct rdma_cm_event *e;
	enum rdma_cm_event_type t;

	if (rdma_get_cm_event(chan, &e) != 0) {
		perror("rdma_get_cm_event");
		exit(1);
	}
	t = e->event;
	if (id != NULL)
		*id = e->id;
	printf("event %s (status %d)\n", rdma_event_str(t), e->status);
	rdma_ack_cm_event(e);
	return t;
}

static int
peer_failed(enum rdma_cm_event_type t)
{
	return t == RDMA_CM_EVENT_REJECTED || t == RDMA_CM_EVENT_UNREACHABLE ||
	       t == RDMA_CM_EVENT_CONNECT_ERROR;
}

static void
make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	if (rdma_create_qp(id, NULL, &qa) != 0) {
		perror("rdma_create_qp");
		exit(1);
	}
}

static void
stall(void)
{
	printf("stalled\n");
	for (;;)
		pause();
}

int
main(int argc, char **argv)
{
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *id, *req;
	struct sockaddr_in sa;
	enum rdma_cm_event_type t;

	if (argc != 4) {
		fprintf(stderr, "usage: cm_halfway stall-active|stall-passive|peer-active|"
			"peer-passive ADDR PORT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
		return 2;
	chan = rdma_create_event_channel();
	if (chan == NULL || rdma_create_id(chan, &id, NULL, RDMA_PS_TCP) != 0)
		return 1;
	if (strstr(argv[1], "passive") != NULL) {
		if (rdma_bind_addr(id, (struct sockaddr *)&sa) != 0 || rdma_listen(id, 4) != 0)
			return 1;
		printf("listening\n");
		if (next_event(&req) != RDMA_CM_EVENT_CONNECT_REQUEST)
			return 1;
		if (strcmp(argv[1], "stall-passive") == 0)
			stall();
		make_qp(req);
		if (rdma_accept(req, &cp) != 0)
			return 1;
		printf("accepted\n");
		t = next_event(NULL);
		return peer_failed(t) ? 0 : 1;
	}
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 2000) != 0 ||
	    next_event(NULL) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(id, 2000) != 0 || next_event(NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return 1;
	make_qp(id);
	if (rdma_connect(id, &cp) != 0)
		return 1;
	if (strcmp(argv[1], "stall-active") == 0)
		stall();	/* reading the REP's event would send the RTU */
	t = next_event(NULL);
	return peer_failed(t) ? 0 : 1;
}
