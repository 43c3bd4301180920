/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_set_option, rdma_notify and an SRQ on an id, against their man
 * pages, through whatever librdmacm the process has (droce's under
 * droce-run). One process, both ends, on one device:
 *   cm_options ADDR      (ADDR: an IPv4 address of the device)
 * Contracts: a wrong optlen or level or name (EINVAL, ENOSYS), ACK_TIMEOUT
 * on a UD id (EINVAL), REUSEADDR once bound (EINVAL); REUSEADDR lets two
 * ids share a port, not with an id without it nor with a listener
 * (EADDRINUSE); an AFONLY IPv6 listener refuses an IPv4 peer, one without
 * AFONLY takes it. A connection: the active side's TOS and ACK_TIMEOUT
 * are its QP's traffic class and timeout; the passive side's QP is made
 * on the id's SRQ (rdma_create_srq), a SEND lands there, byte for byte;
 * rdma_notify(COMM_EST) is EINVAL on the active side and EISCONN once
 * established. A thread blocked in rdma_get_cm_event on a channel the
 * application destroys does not return (as on Linux, where rping's event
 * thread relies on it). Exit 0 when every check passed.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "rdmacm_check.h"

static struct rdma_event_channel *chan;

/* The next event, which must be @p want for @p id (NULL: any id). */
static struct rdma_cm_event *
expect(enum rdma_cm_event_type want, struct rdma_cm_id *id)
{
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(chan, &e) != 0) {
		perror("rdma_get_cm_event");
		exit(1);
	}
	if (e->event != want || (id != NULL && e->id != id)) {
		printf("FAIL wanted %s, got %s (status %d)\n", rdma_event_str(want),
		       rdma_event_str(e->event), e->status);
		exit(1);
	}
	return e;
}

static void
sin_of(struct sockaddr_in *s, const char *ip, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &s->sin_addr) != 1) {
		fprintf(stderr, "not an IPv4 address: %s\n", ip);
		exit(2);
	}
}

static int
set_int(struct rdma_cm_id *id, int name, int v)
{
	return rdma_set_option(id, RDMA_OPTION_ID, name, &v, sizeof(v));
}

static void
contracts(void)
{
	struct rdma_cm_id *id, *ud;
	uint8_t u8 = 1;
	int v = 1, ret;

	rdma_create_id(chan, &id, NULL, RDMA_PS_TCP);
	rdma_create_id(chan, &ud, NULL, RDMA_PS_UDP);
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &v, sizeof(v));
	CHECK(ret == -1 && errno == EINVAL, "TOS with an int's length: EINVAL (%d)", errno);
	ret = rdma_set_option(id, 99, RDMA_OPTION_ID_TOS, &u8, sizeof(u8));
	CHECK(ret == -1 && errno == ENOSYS, "an unknown level: ENOSYS (%d)", errno);
	ret = rdma_set_option(id, RDMA_OPTION_ID, 99, &u8, sizeof(u8));
	CHECK(ret == -1 && errno == ENOSYS, "an unknown option: ENOSYS (%d)", errno);
	ret = rdma_set_option(ud, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &u8, sizeof(u8));
	CHECK(ret == -1 && errno == EINVAL, "ACK_TIMEOUT on a UD id: EINVAL (%d)", errno);
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &u8, sizeof(u8));
	CHECK(ret == -1 && errno == EINVAL, "REUSEADDR with a byte's length: EINVAL (%d)", errno);
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &u8, sizeof(u8)) == 0,
	      "TOS: 0");
	rdma_destroy_id(ud);
	rdma_destroy_id(id);
}

static void
reuseaddr(const char *ip)
{
	struct rdma_cm_id *a, *b, *c, *d;
	struct sockaddr_in s;
	int ret;

	sin_of(&s, ip, 20886);
	rdma_create_id(chan, &a, NULL, RDMA_PS_TCP);
	rdma_create_id(chan, &b, NULL, RDMA_PS_TCP);
	rdma_create_id(chan, &c, NULL, RDMA_PS_TCP);
	rdma_create_id(chan, &d, NULL, RDMA_PS_TCP);
	CHECK(set_int(a, RDMA_OPTION_ID_REUSEADDR, 1) == 0 &&
	      set_int(b, RDMA_OPTION_ID_REUSEADDR, 1) == 0 &&
	      set_int(d, RDMA_OPTION_ID_REUSEADDR, 1) == 0, "REUSEADDR before bind: 0");
	CHECK(rdma_bind_addr(a, (struct sockaddr *)&s) == 0, "first REUSEADDR bind: 0");
	CHECK(rdma_bind_addr(b, (struct sockaddr *)&s) == 0,
	      "second REUSEADDR bind to the same port: 0 (%d)", errno);
	ret = rdma_bind_addr(c, (struct sockaddr *)&s);
	CHECK(ret == -1 && errno == EADDRINUSE, "a bind without REUSEADDR: EADDRINUSE (%d)", errno);
	ret = set_int(a, RDMA_OPTION_ID_REUSEADDR, 0);
	CHECK(ret == -1 && errno == EINVAL, "REUSEADDR once bound: EINVAL (%d)", errno);
	rdma_destroy_id(b);
	CHECK(rdma_listen(a, 1) == 0, "listening on the shared port: 0");
	ret = rdma_bind_addr(d, (struct sockaddr *)&s);
	CHECK(ret == -1 && errno == EADDRINUSE,
	      "a REUSEADDR bind to a listener's port: EADDRINUSE (%d)", errno);
	rdma_destroy_id(a);
	rdma_destroy_id(c);
	rdma_destroy_id(d);
}

/* Connect to [::]:port listening with @p afonly from IPv4 @p ip: ESTABLISHED? */
static int
afonly_try(const char *ip, uint16_t port, int afonly)
{
	struct rdma_cm_id *l, *cl, *sv = NULL;
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in dst;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct rdma_cm_event *e;
	int connected = 0;

	rdma_create_id(chan, &l, NULL, RDMA_PS_TCP);
	if (set_int(l, RDMA_OPTION_ID_AFONLY, afonly) != 0 ||
	    rdma_bind_addr(l, (struct sockaddr *)&any6) != 0 || rdma_listen(l, 4) != 0) {
		printf("FAIL AFONLY=%d listener: %s\n", afonly, strerror(errno));
		exit(1);
	}
	sin_of(&dst, ip, port);
	rdma_create_id(chan, &cl, NULL, RDMA_PS_TCP);
	rdma_resolve_addr(cl, NULL, (struct sockaddr *)&dst, 2000);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED, cl));
	rdma_resolve_route(cl, 2000);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED, cl));
	rdma_create_qp(cl, NULL, &qa);
	rdma_connect(cl, &cp);
	for (;;) {
		if (rdma_get_cm_event(chan, &e) != 0)
			exit(1);
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			sv = e->id;
			rdma_create_qp(sv, NULL, &qa);
			rdma_accept(sv, &cp);
		} else if (e->event == RDMA_CM_EVENT_ESTABLISHED && e->id == cl) {
			connected = 1;
		} else if (e->event == RDMA_CM_EVENT_REJECTED ||
			   e->event == RDMA_CM_EVENT_UNREACHABLE) {
			rdma_ack_cm_event(e);
			break;
		}
		rdma_ack_cm_event(e);
		if (connected)
			break;
	}
	rdma_destroy_qp(cl);
	rdma_destroy_id(cl);
	if (sv != NULL) {
		rdma_destroy_qp(sv);
		rdma_destroy_id(sv);
	}
	rdma_destroy_id(l);
	return connected;
}

static void
connection(const char *ip)
{
	static const char msg[] = "through the id's SRQ";
	struct rdma_cm_id *l, *cl, *sv;
	struct sockaddr_in s;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_mr *smr, *rmr;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr swr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad_s;
	struct rdma_cm_event *e;
	struct ibv_wc wc;
	char sbuf[64], rbuf[64];
	uint8_t tos = 0x68, tmo = 12;
	int n, ret;

	sin_of(&s, ip, 20887);
	rdma_create_id(chan, &l, NULL, RDMA_PS_TCP);
	if (rdma_bind_addr(l, (struct sockaddr *)&s) != 0 || rdma_listen(l, 1) != 0)
		exit(1);
	rdma_create_id(chan, &cl, NULL, RDMA_PS_TCP);
	CHECK(rdma_set_option(cl, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1) == 0 &&
	      rdma_set_option(cl, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &tmo, 1) == 0,
	      "TOS 0x68 and ACK_TIMEOUT 12 on the active id: 0");
	rdma_resolve_addr(cl, NULL, (struct sockaddr *)&s, 2000);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED, cl));
	rdma_resolve_route(cl, 2000);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED, cl));
	CHECK(cl->route.path_rec != NULL && cl->route.path_rec->traffic_class == tos,
	      "the route's traffic class is the TOS");
	rdma_create_qp(cl, NULL, &qa);
	rdma_connect(cl, &cp);
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	sv = e->id;
	rdma_ack_cm_event(e);

	CHECK(rdma_create_srq(sv, NULL, &sa) == 0 && sv->srq != NULL,
	      "rdma_create_srq on the request's id: 0, id->srq set");
	qa.cap.max_recv_wr = 0;
	CHECK(rdma_create_qp(sv, NULL, &qa) == 0, "rdma_create_qp on the id with an SRQ: 0");
	CHECK(ibv_query_qp(sv->qp, &attr, IBV_QP_STATE, &init) == 0 && init.srq == sv->srq,
	      "the passive QP is on the id's SRQ");
	rmr = ibv_reg_mr(sv->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	memset(rbuf, 0, sizeof(rbuf));
	sge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	CHECK(ibv_post_srq_recv(sv->srq, &rwr, &bad_r) == 0, "a receive on the SRQ");
	rdma_accept(sv, &cp);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ESTABLISHED, NULL));
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ESTABLISHED, NULL));

	ret = rdma_notify(cl, IBV_EVENT_COMM_EST);
	CHECK(ret == -1 && errno == EINVAL, "rdma_notify(COMM_EST) on the active id: EINVAL (%d)",
	      errno);
	ret = rdma_notify(sv, IBV_EVENT_COMM_EST);
	CHECK(ret == -1 && errno == EISCONN, "rdma_notify(COMM_EST) once established: EISCONN (%d)",
	      errno);
	CHECK(rdma_notify(sv, IBV_EVENT_LID_CHANGE) == 0, "rdma_notify(LID_CHANGE): 0");

	CHECK(ibv_query_qp(cl->qp, &attr, IBV_QP_TIMEOUT | IBV_QP_AV, &init) == 0 &&
	      attr.timeout == tmo && attr.ah_attr.grh.traffic_class == tos,
	      "the active QP: timeout %u (want %u), traffic class 0x%x (want 0x%x)", attr.timeout,
	      tmo, attr.ah_attr.grh.traffic_class, tos);

	memcpy(sbuf, msg, sizeof(msg));
	smr = ibv_reg_mr(cl->pd, sbuf, sizeof(sbuf), 0);
	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(msg), smr->lkey };
	ibv_post_send(cl->qp, &swr, &bad_s);
	for (n = 0; n < 2000000 && ibv_poll_cq(sv->recv_cq, 1, &wc) == 0; n++)
		;
	CHECK(n < 2000000 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 &&
	      wc.byte_len == sizeof(msg) && memcmp(rbuf, msg, sizeof(msg)) == 0,
	      "the SEND landed in the SRQ's buffer, byte for byte");

	rdma_disconnect(cl);	/* DREQ: the passive side hears it, answers with its own */
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_DISCONNECTED, sv));
	rdma_disconnect(sv);	/* the DREP */
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_DISCONNECTED, cl));
	rdma_destroy_qp(sv);
	rdma_destroy_srq(sv);
	CHECK(sv->srq == NULL, "rdma_destroy_srq clears id->srq");
	ibv_dereg_mr(rmr);
	ibv_dereg_mr(smr);
	rdma_destroy_qp(cl);
	rdma_destroy_id(sv);
	rdma_destroy_id(cl);
	rdma_destroy_id(l);
}

static atomic_int blocked_returned;

static void *
blocked_reader(void *arg)
{
	struct rdma_cm_event *e;

	rdma_get_cm_event(arg, &e);
	atomic_store(&blocked_returned, 1);
	return NULL;
}

/* rping's event thread, blocked on its channel when main destroys it. */
static void
destroyed_under_reader(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	pthread_t t;

	if (ch == NULL || pthread_create(&t, NULL, blocked_reader, ch) != 0) {
		CHECK(0, "a second event channel and its reader");
		return;
	}
	usleep(200 * 1000);
	rdma_destroy_event_channel(ch);
	sleep(1);	/* droced drops the channel's end meanwhile */
	CHECK(!atomic_load(&blocked_returned),
	      "rdma_get_cm_event blocked on a channel destroyed under it does not return");
	pthread_detach(t);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: cm_options IPV4_ADDRESS_OF_THE_DEVICE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	chan = rdma_create_event_channel();
	if (chan == NULL) {
		perror("rdma_create_event_channel");
		return 1;
	}
	contracts();
	reuseaddr(argv[1]);
	CHECK(!afonly_try(argv[1], 20888, 1), "an AFONLY [::] listener refuses an IPv4 peer");
	CHECK(afonly_try(argv[1], 20889, 0), "a [::] listener without AFONLY takes an IPv4 peer");
	connection(argv[1]);
	destroyed_under_reader();
	rdma_destroy_event_channel(chan);
	printf("%s: %d failed\n", argv[0], check_failures);
	return check_failures != 0;
}
