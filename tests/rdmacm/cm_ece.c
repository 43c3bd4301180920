/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ECE through rdma_cm (rdma_set_local_ece, rdma_get_remote_ece,
 * rdma_reject_ece), against rdma-core 44's librdmacm and its man pages,
 * through whatever librdmacm the process has (droce's under droce-run):
 *   cm_ece server ADDR PORT    listen, take two connection requests
 *   cm_ece client ADDR PORT    connect twice to ADDR:PORT
 *   -k first: on rdma-core's own librdmacm (no NULL-id checks, see below)
 * Both ids manage their QPs themselves (no id->qp, as perftest's), the
 * only ids ECE is for. The client's first REQ carries its ECE, which the
 * server reads on CONNECT_REQUEST; the server accepts with its own options
 * (the REP's vendor ID is the REQ's, as rdma-core sends it) and the client
 * reads them on CONNECT_RESPONSE; the connection is established. The
 * second REQ carries no ECE (vendor ID 0 read) and is refused with
 * rdma_reject_ece: REJECTED, status 35, the server's private data. Each
 * side checks the calls' EINVAL cases too. Exit 0 when every check passed.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "rdmacm_check.h"

/* The two sides' ECE: the client's vendor ID and options, the server's options. */
#define CLIENT_VENDOR	0x0015b3u
#define CLIENT_OPTIONS	0x80000005u
#define SERVER_VENDOR	0x0002c9u	/* set, but the REP carries the REQ's */
#define SERVER_OPTIONS	0x00000001u
#define REJ_TEXT	"no vendor option"

static struct rdma_event_channel *chan;
static int rdma_core_peer;	/* -k: running on rdma-core's librdmacm */

/* The next event, which must be @p want. */
static struct rdma_cm_event *
expect(enum rdma_cm_event_type want)
{
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(chan, &e) != 0) {
		perror("rdma_get_cm_event");
		exit(1);
	}
	if (e->event != want) {
		printf("FAIL wanted %s, got %s (status %d)\n", rdma_event_str(want),
		       rdma_event_str(e->event), e->status);
		exit(1);
	}
	return e;
}

static void
must(int ret, const char *what)
{
	if (ret != 0) {
		perror(what);
		exit(1);
	}
}

/* errno after a call that must fail with EINVAL. */
static int
einval(int ret)
{
	return ret == -1 && errno == EINVAL;
}

/* The application's own QP on @p id's device (perftest's way), moved to INIT. */
struct own_qp {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static void
own_qp_make(struct rdma_cm_id *id, struct own_qp *o)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	o->pd = ibv_alloc_pd(id->verbs);
	o->cq = o->pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
	if (o->cq == NULL) {
		perror("pd/cq");
		exit(1);
	}
	ia.send_cq = ia.recv_cq = o->cq;
	o->qp = ibv_create_qp(o->pd, &ia);
	if (o->qp == NULL) {
		perror("ibv_create_qp");
		exit(1);
	}
}

/* Move @p o's QP to @p state with the attributes the CM gives. */
static void
own_qp_move(struct rdma_cm_id *id, struct own_qp *o, enum ibv_qp_state state)
{
	struct ibv_qp_attr a;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = state;
	must(rdma_init_qp_attr(id, &a, &mask), "rdma_init_qp_attr");
	must(ibv_modify_qp(o->qp, &a, mask), "ibv_modify_qp");
}

static void
own_qp_free(struct own_qp *o)
{
	ibv_destroy_qp(o->qp);
	ibv_destroy_cq(o->cq);
	ibv_dealloc_pd(o->pd);
}

/* The calls' argument checks that need no connection, on @p id (no QP). */
static void
check_arguments(struct rdma_cm_id *id)
{
	struct ibv_ece ece = { .vendor_id = CLIENT_VENDOR };

	CHECK(einval(rdma_set_local_ece(NULL, &ece)), "rdma_set_local_ece(NULL id): EINVAL");
	CHECK(einval(rdma_set_local_ece(id, NULL)), "rdma_set_local_ece(NULL ece): EINVAL");
	ece.vendor_id = 0;
	CHECK(einval(rdma_set_local_ece(id, &ece)), "rdma_set_local_ece(vendor_id 0): EINVAL");
	ece.vendor_id = CLIENT_VENDOR;
	ece.comp_mask = 1;
	CHECK(einval(rdma_set_local_ece(id, &ece)), "rdma_set_local_ece(comp_mask 1): EINVAL");
	/* rdma-core's own librdmacm dereferences a NULL id in these two
	 * (interop.sh runs this program on it): -k leaves them out */
	if (!rdma_core_peer)
		CHECK(einval(rdma_get_remote_ece(NULL, &ece)), "rdma_get_remote_ece(NULL id): EINVAL");
	CHECK(einval(rdma_get_remote_ece(id, NULL)), "rdma_get_remote_ece(NULL ece): EINVAL");
	memset(&ece, 0xff, sizeof(ece));
	CHECK(rdma_get_remote_ece(id, &ece) == 0 && ece.vendor_id == 0 && ece.options == 0 &&
	      ece.comp_mask == 0, "rdma_get_remote_ece before any peer: 0, vendor_id %#x "
	      "options %#x comp_mask %#x", ece.vendor_id, ece.options, ece.comp_mask);
	if (!rdma_core_peer)
		CHECK(einval(rdma_reject_ece(NULL, NULL, 0)), "rdma_reject_ece(NULL id): EINVAL");
}

/* An id with a QP (rdma_create_qp) has no ECE to set or read: EINVAL. */
static void
check_id_with_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ece ece = { .vendor_id = CLIENT_VENDOR };

	must(rdma_create_qp(id, NULL, &ia), "rdma_create_qp");
	CHECK(einval(rdma_set_local_ece(id, &ece)), "rdma_set_local_ece on an id with a QP: EINVAL");
	CHECK(einval(rdma_get_remote_ece(id, &ece)), "rdma_get_remote_ece on an id with a QP: EINVAL");
	rdma_destroy_qp(id);
}

static void
sin_of(struct sockaddr_in *s, const char *ip, const char *port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, ip, &s->sin_addr) != 1) {
		fprintf(stderr, "not an IPv4 address: %s\n", ip);
		exit(2);
	}
}

static void
server(struct sockaddr_in *sin)
{
	struct ibv_ece ece = { .vendor_id = SERVER_VENDOR, .options = SERVER_OPTIONS };
	struct rdma_conn_param p;
	struct rdma_cm_id *l, *c;
	struct rdma_cm_event *e;
	struct own_qp o;

	must(rdma_create_id(chan, &l, NULL, RDMA_PS_TCP), "rdma_create_id");
	must(rdma_bind_addr(l, (struct sockaddr *)sin), "rdma_bind_addr");
	check_arguments(l);
	must(rdma_listen(l, 4), "rdma_listen");
	printf("listening\n");
	fflush(stdout);

	/* 1: the client's ECE, then ours in the REP */
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST);
	c = e->id;
	memset(&ece, 0, sizeof(ece));
	CHECK(rdma_get_remote_ece(c, &ece) == 0 && ece.vendor_id == CLIENT_VENDOR &&
	      ece.options == CLIENT_OPTIONS && ece.comp_mask == 0,
	      "CONNECT_REQUEST: the client's ECE, vendor_id %#x options %#x", ece.vendor_id,
	      ece.options);
	ece.vendor_id = SERVER_VENDOR;
	ece.options = SERVER_OPTIONS;
	ece.comp_mask = 0;
	CHECK(rdma_set_local_ece(c, &ece) == 0, "rdma_set_local_ece on the new id");
	rdma_ack_cm_event(e);
	own_qp_make(c, &o);
	own_qp_move(c, &o, IBV_QPS_INIT);
	own_qp_move(c, &o, IBV_QPS_RTR);
	own_qp_move(c, &o, IBV_QPS_RTS);
	memset(&p, 0, sizeof(p));
	p.qp_num = o.qp->qp_num;
	p.rnr_retry_count = 7;
	must(rdma_accept(c, &p), "rdma_accept");
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ESTABLISHED));
	CHECK(1, "ESTABLISHED after accepting with our ECE");

	/* 2: a REQ without ECE, refused with rdma_reject_ece */
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST);
	memset(&ece, 0xff, sizeof(ece));
	CHECK(rdma_get_remote_ece(e->id, &ece) == 0 && ece.vendor_id == 0 && ece.options == 0,
	      "CONNECT_REQUEST without ECE: vendor_id %#x options %#x", ece.vendor_id, ece.options);
	CHECK(rdma_reject_ece(e->id, REJ_TEXT, sizeof(REJ_TEXT)) == 0, "rdma_reject_ece");
	rdma_destroy_id(e->id);
	rdma_ack_cm_event(e);

	/* the first connection ends when the client disconnects */
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_DISCONNECTED));
	rdma_disconnect(c);
	own_qp_free(&o);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
}

/* Resolve and route a new id to @p sin. */
static struct rdma_cm_id *
client_id(struct sockaddr_in *sin)
{
	struct rdma_cm_id *id;

	must(rdma_create_id(chan, &id, NULL, RDMA_PS_TCP), "rdma_create_id");
	must(rdma_resolve_addr(id, NULL, (struct sockaddr *)sin, 2000), "rdma_resolve_addr");
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED));
	must(rdma_resolve_route(id, 2000), "rdma_resolve_route");
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED));
	return id;
}

static void
client(struct sockaddr_in *sin)
{
	struct ibv_ece ece = { .vendor_id = CLIENT_VENDOR, .options = CLIENT_OPTIONS };
	struct rdma_conn_param p;
	struct rdma_cm_event *e;
	struct rdma_cm_id *id, *id2;
	struct own_qp o, o2;

	id = client_id(sin);
	check_arguments(id);
	check_id_with_qp(id);

	/* 1: our ECE in the REQ, the server's in the REP */
	CHECK(rdma_set_local_ece(id, &ece) == 0, "rdma_set_local_ece(vendor %#x, options %#x)",
	      ece.vendor_id, ece.options);
	own_qp_make(id, &o);
	own_qp_move(id, &o, IBV_QPS_INIT);
	memset(&p, 0, sizeof(p));
	p.qp_num = o.qp->qp_num;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	must(rdma_connect(id, &p), "rdma_connect");
	e = expect(RDMA_CM_EVENT_CONNECT_RESPONSE);
	memset(&ece, 0, sizeof(ece));
	CHECK(rdma_get_remote_ece(id, &ece) == 0 && ece.vendor_id == CLIENT_VENDOR &&
	      ece.options == SERVER_OPTIONS && ece.comp_mask == 0,
	      "CONNECT_RESPONSE: the server's ECE, vendor_id %#x (the REQ's) options %#x",
	      ece.vendor_id, ece.options);
	rdma_ack_cm_event(e);
	own_qp_move(id, &o, IBV_QPS_RTR);
	own_qp_move(id, &o, IBV_QPS_RTS);
	must(rdma_establish(id), "rdma_establish");

	/* 2: no ECE; the server refuses with rdma_reject_ece */
	id2 = client_id(sin);
	own_qp_make(id2, &o2);
	own_qp_move(id2, &o2, IBV_QPS_INIT);
	memset(&p, 0, sizeof(p));
	p.qp_num = o2.qp->qp_num;
	must(rdma_connect(id2, &p), "rdma_connect");
	e = expect(RDMA_CM_EVENT_REJECTED);
	CHECK(e->status == 35, "REJECTED with status %d (35: vendor option not supported)",
	      e->status);
	CHECK(e->param.conn.private_data_len >= sizeof(REJ_TEXT) &&
	      e->param.conn.private_data != NULL &&
	      memcmp(e->param.conn.private_data, REJ_TEXT, sizeof(REJ_TEXT)) == 0,
	      "REJECTED carries the server's private data (%u bytes)",
	      e->param.conn.private_data_len);
	rdma_ack_cm_event(e);
	own_qp_free(&o2);
	rdma_destroy_id(id2);

	rdma_disconnect(id);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_DISCONNECTED));
	own_qp_free(&o);
	rdma_destroy_id(id);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sin;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "-k") == 0) {
		rdma_core_peer = 1;
		argc--;
		argv++;
	}
	if (argc != 4 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: %s [-k] server|client ADDR PORT\n", argv[0]);
		return 2;
	}
	sin_of(&sin, argv[2], argv[3]);
	chan = rdma_create_event_channel();
	if (chan == NULL) {
		perror("rdma_create_event_channel");
		return 1;
	}
	if (argv[1][0] == 's')
		server(&sin);
	else
		client(&sin);
	rdma_destroy_event_channel(chan);
	printf("%s: %d failure(s)\n", argv[1], check_failures);
	return check_failures == 0 ? 0 : 1;
}
