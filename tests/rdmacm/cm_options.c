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
 * AFONLY takes it. Ports are shared by Linux's rules (cma_check_port): an
 * IPv4 id and an AFONLY IPv6 one on the same port (tgt's two iSER
 * portals), distinct addresses; a wildcard beside another id is
 * EADDRNOTAVAIL, the same address EADDRINUSE, and rdma_listen on a
 * REUSEADDR id re-checks its port as if without it. Two listeners on one
 * port each get the REQs (and SIDR_REQs) of their family; a refused
 * SIDR_REQ is UNREACHABLE with the SIDR status. The event parameters are
 * the receiver's view (the peer's initiator depth as responder_resources
 * and the reverse), with Linux's private data lengths, and a retry count
 * of 10 becomes 7 (clamped, not masked). A connection: the active side's
 * TOS and ACK_TIMEOUT are its QP's traffic class and timeout; the passive side's QP is made
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
		printf("FAIL wanted %s, got %s (status %d)%s\n", rdma_event_str(want),
		       rdma_event_str(e->event), e->status,
		       e->event == want ? " for another id" : "");
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
		} else if (e->event == RDMA_CM_EVENT_ESTABLISHED) {
			/* both sides': nothing left on its way for the checks after */
			connected += e->id == cl ? 1 : 2;
		} else if (e->event == RDMA_CM_EVENT_REJECTED ||
			   e->event == RDMA_CM_EVENT_UNREACHABLE) {
			rdma_ack_cm_event(e);
			break;
		}
		rdma_ack_cm_event(e);
		if (connected == 3)
			break;
	}
	rdma_destroy_qp(cl);
	rdma_destroy_id(cl);
	if (sv != NULL) {
		rdma_destroy_qp(sv);
		rdma_destroy_id(sv);
	}
	rdma_destroy_id(l);
	return connected == 3;
}

static void
sin6_mapped(struct sockaddr_in6 *s, const char *ip, uint16_t port)
{
	struct sockaddr_in v4;

	sin_of(&v4, ip, port);
	memset(s, 0, sizeof(*s));
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	s->sin6_addr.s6_addr[10] = 0xff;
	s->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&s->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
}

/* A new id bound to @p a (AFONLY @p afonly if not -1): 0 or the errno of its bind. */
static int
bind_one(struct rdma_cm_id **id, const void *a, int afonly, int reuse)
{
	rdma_create_id(chan, id, NULL, RDMA_PS_TCP);
	if (afonly >= 0 && set_int(*id, RDMA_OPTION_ID_AFONLY, afonly) != 0)
		return -1;
	if (reuse && set_int(*id, RDMA_OPTION_ID_REUSEADDR, 1) != 0)
		return -1;
	return rdma_bind_addr(*id, (struct sockaddr *)a) == 0 ? 0 : errno;
}

/* Linux's cma_check_port, through rdma_bind_addr and rdma_listen. */
static void
port_sharing(const char *ip)
{
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons(20890) };
	struct sockaddr_in any4, spec4, any4b;
	struct sockaddr_in6 mapped;
	struct rdma_cm_id *v4, *v6, *v6all, *s4, *a, *b, *m, *w, *r1, *r2;
	int ret;

	sin_of(&any4, "0.0.0.0", 20890);
	sin_of(&spec4, ip, 20890);
	ret = bind_one(&v4, &any4, -1, 0);
	CHECK(ret == 0, "0.0.0.0:20890: 0 (%d)", ret);
	ret = bind_one(&v6, &any6, 1, 0);
	CHECK(ret == 0, "AFONLY [::]:20890 beside 0.0.0.0:20890 (tgt's iSER portals): 0 (%d)",
	      ret);
	CHECK(rdma_listen(v4, 4) == 0 && rdma_listen(v6, 4) == 0,
	      "both listen (%d)", errno);
	ret = bind_one(&v6all, &any6, 0, 0);
	CHECK(ret == EADDRNOTAVAIL, "[::]:20890 without AFONLY beside them: EADDRNOTAVAIL (%d)",
	      ret);
	ret = bind_one(&s4, &spec4, -1, 0);
	CHECK(ret == EADDRNOTAVAIL, "%s:20890 beside the wildcards: EADDRNOTAVAIL (%d)", ip, ret);
	rdma_destroy_id(s4);
	rdma_destroy_id(v6all);
	rdma_destroy_id(v6);
	rdma_destroy_id(v4);

	sin_of(&spec4, ip, 20891);
	sin_of(&any4b, "0.0.0.0", 20891);
	sin6_mapped(&mapped, ip, 20891);
	ret = bind_one(&a, &spec4, -1, 0);
	CHECK(ret == 0, "%s:20891: 0 (%d)", ip, ret);
	ret = bind_one(&b, &spec4, -1, 0);
	CHECK(ret == EADDRINUSE, "%s:20891 again: EADDRINUSE (%d)", ip, ret);
	ret = bind_one(&m, &mapped, -1, 0);
	CHECK(ret == 0, "[::ffff:%s]:20891 (another family's address) beside it: 0 (%d)", ip,
	      ret);
	ret = bind_one(&w, &any4b, -1, 0);
	CHECK(ret == EADDRNOTAVAIL, "0.0.0.0:20891 beside them: EADDRNOTAVAIL (%d)", ret);
	rdma_destroy_id(w);
	rdma_destroy_id(m);
	rdma_destroy_id(b);
	rdma_destroy_id(a);

	/* rdma_listen re-checks a REUSEADDR id's port as if it had not asked */
	sin_of(&spec4, ip, 20892);
	ret = bind_one(&r1, &spec4, -1, 1);
	ret |= bind_one(&r2, &spec4, -1, 1);
	CHECK(ret == 0, "two REUSEADDR ids on %s:20892: 0 (%d)", ip, ret);
	ret = rdma_listen(r1, 1);
	CHECK(ret == -1 && errno == EADDRINUSE,
	      "rdma_listen on one while the other is bound: EADDRINUSE (%d)", errno);
	rdma_destroy_id(r2);
	CHECK(rdma_listen(r1, 1) == 0, "alone: it listens (%d)", errno);
	rdma_destroy_id(r1);
}

static const struct ibv_qp_init_attr small_qp = {
	.qp_type = IBV_QPT_RC,
	.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
};

/* An id of @p ps with a QP (RC, or UD for RDMA_PS_UDP) connecting to @p dst with @p cp. */
static struct rdma_cm_id *
ps_client_to(enum rdma_port_space ps, const void *dst, struct rdma_conn_param *cp)
{
	struct ibv_qp_init_attr qa = small_qp;
	struct rdma_cm_id *cl;

	if (ps == RDMA_PS_UDP)
		qa.qp_type = IBV_QPT_UD;
	rdma_create_id(chan, &cl, NULL, ps);
	if (rdma_resolve_addr(cl, NULL, (struct sockaddr *)dst, 2000) != 0)
		exit(1);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED, cl));
	rdma_resolve_route(cl, 2000);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED, cl));
	if (rdma_create_qp(cl, NULL, &qa) != 0 || rdma_connect(cl, cp) != 0)
		exit(1);
	return cl;
}

/* An RC id with a QP connecting to @p dst with @p cp. */
static struct rdma_cm_id *
client_to(const void *dst, struct rdma_conn_param *cp)
{
	return ps_client_to(RDMA_PS_TCP, dst, cp);
}

/* Refuse the CONNECT_REQUEST @p e, and close the client @p cl once it hears so. */
static void
refuse(struct rdma_cm_event *e, struct rdma_cm_id *cl)
{
	rdma_reject(e->id, NULL, 0);
	rdma_destroy_id(e->id);
	rdma_ack_cm_event(e);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_REJECTED, cl));
	rdma_destroy_qp(cl);
	rdma_destroy_id(cl);
}

/* Which of two listeners on one port a REQ reaches: 0.0.0.0 and AFONLY [::]. */
static void
dispatch(const char *ip)
{
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons(20893) };
	struct sockaddr_in any4, dst4;
	struct sockaddr_in6 dst6;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *l4, *l6, *cl;
	struct rdma_cm_event *e;
	int ret;

	sin_of(&any4, "0.0.0.0", 20893);
	ret = bind_one(&l4, &any4, -1, 0);
	ret |= bind_one(&l6, &any6, 1, 0);
	if (ret != 0 || rdma_listen(l4, 4) != 0 || rdma_listen(l6, 4) != 0) {
		CHECK(0, "listeners on 0.0.0.0:20893 and AFONLY [::]:20893 (%d)", ret);
		return;
	}
	sin_of(&dst4, ip, 20893);
	cl = client_to(&dst4, &cp);
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	CHECK(e->listen_id == l4 && rdma_get_local_addr(e->id)->sa_family == AF_INET,
	      "an IPv4 peer's REQ reaches the 0.0.0.0 listener, as an IPv4 id (%s)",
	      e->listen_id == l6 ? "the [::] one" : "not the [::] one either");
	refuse(e, cl);

	sin6_mapped(&dst6, ip, 20893);
	cl = client_to(&dst6, &cp);
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	CHECK(e->listen_id == l6 && rdma_get_local_addr(e->id)->sa_family == AF_INET6,
	      "an IPv6 peer's REQ (to ::ffff:%s) reaches the AFONLY [::] listener, as an IPv6 id",
	      ip);
	refuse(e, cl);

	/* the [::] listener gone, IPv6 REQs find nobody; IPv4 ones still get through */
	rdma_destroy_id(l6);
	cl = client_to(&dst6, &cp);
	e = expect(RDMA_CM_EVENT_REJECTED, cl);
	CHECK(e->status == 28, "with 0.0.0.0 alone, an IPv6 REQ is rejected 28, as Linux (%d)",
	      e->status);
	rdma_ack_cm_event(e);
	rdma_destroy_qp(cl);
	rdma_destroy_id(cl);
	cl = client_to(&dst4, &cp);
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	CHECK(e->listen_id == l4, "and an IPv4 REQ still reaches 0.0.0.0");
	refuse(e, cl);
	rdma_destroy_id(l4);
}

/* A UD id with a QP sending a SIDR_REQ to @p dst. */
static struct rdma_cm_id *
ud_client_to(const void *dst)
{
	struct rdma_conn_param cp = { 0 };

	return ps_client_to(RDMA_PS_UDP, dst, &cp);
}

/* SIDR_REQs too: two UD listeners on one port, each given its family's. */
static void
dispatch_ud(const char *ip)
{
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons(20895) };
	struct sockaddr_in any4, dst4;
	struct sockaddr_in6 dst6;
	struct rdma_cm_id *l4, *l6, *cl;
	struct rdma_cm_event *e;
	int i, afonly = 1;

	sin_of(&any4, "0.0.0.0", 20895);
	rdma_create_id(chan, &l4, NULL, RDMA_PS_UDP);
	rdma_create_id(chan, &l6, NULL, RDMA_PS_UDP);
	if (rdma_set_option(l6, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &afonly, sizeof(afonly)) ||
	    rdma_bind_addr(l4, (struct sockaddr *)&any4) != 0 ||
	    rdma_bind_addr(l6, (struct sockaddr *)&any6) != 0 ||
	    rdma_listen(l4, 4) != 0 || rdma_listen(l6, 4) != 0) {
		CHECK(0, "UD listeners on 0.0.0.0:20895 and AFONLY [::]:20895 (%d)", errno);
		return;
	}
	sin_of(&dst4, ip, 20895);
	sin6_mapped(&dst6, ip, 20895);
	for (i = 0; i < 2; i++) {
		cl = ud_client_to(i == 0 ? (void *)&dst4 : (void *)&dst6);
		e = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
		CHECK(e->listen_id == (i == 0 ? l4 : l6) &&
		      e->param.ud.private_data_len == 180,
		      "an IPv%d SIDR_REQ reaches the %s listener, 180 bytes of private data (%u)",
		      i == 0 ? 4 : 6, i == 0 ? "0.0.0.0" : "AFONLY [::]",
		      e->param.ud.private_data_len);
		rdma_reject(e->id, NULL, 0);
		rdma_destroy_id(e->id);
		rdma_ack_cm_event(e);
		e = expect(RDMA_CM_EVENT_UNREACHABLE, cl);
		CHECK(e->status == 2 && e->param.ud.private_data_len == 136,
		      "refused: UNREACHABLE with the SIDR status 2 (Reject), as Linux (%d), the "
		      "SIDR_REP's 136 bytes (%u)", e->status, e->param.ud.private_data_len);
		rdma_ack_cm_event(e);
		rdma_destroy_qp(cl);
		rdma_destroy_id(cl);
	}
	rdma_destroy_id(l6);
	rdma_destroy_id(l4);
}

/*
 * What each side's events carry, as Linux's cma.c and ib_cm report them:
 * the peer's depths swapped into the receiver's view, its QPN, flags and
 * counts, private data of the message's full size.
 */
static void
conn_params(const char *ip)
{
	static const char hello[] = "hello", no[] = "no";
	struct sockaddr_in s;
	struct rdma_conn_param cp = { .private_data = hello, .private_data_len = sizeof(hello),
				      .responder_resources = 4, .initiator_depth = 0,
				      .flow_control = 1, .retry_count = 10,
				      .rnr_retry_count = 6 };
	/* responder resources 2 where the peer's depth is 0: as given (rdma-core), as tgt's 1 */
	struct rdma_conn_param ap = { .responder_resources = 2, .initiator_depth = 3,
				      .rnr_retry_count = 9 };
	struct rdma_conn_param rp = { 0 };
	struct ibv_qp_init_attr qa = small_qp, init;
	struct ibv_qp_attr attr;
	struct rdma_cm_id *l, *cl, *sv;
	struct rdma_cm_event *e;
	const struct rdma_conn_param *p;

	sin_of(&s, ip, 20894);
	rdma_create_id(chan, &l, NULL, RDMA_PS_TCP);
	if (rdma_bind_addr(l, (struct sockaddr *)&s) != 0 || rdma_listen(l, 4) != 0)
		exit(1);
	cl = client_to(&s, &cp);
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	sv = e->id;
	p = &e->param.conn;
	CHECK(p->responder_resources == 0 && p->initiator_depth == 4,
	      "CONNECT_REQUEST: responder_resources %u (want the peer's initiator depth 0), "
	      "initiator_depth %u (want its responder resources 4)", p->responder_resources,
	      p->initiator_depth);
	CHECK(p->retry_count == 7, "CONNECT_REQUEST: retry_count %u (asked 10: want 7)",
	      p->retry_count);
	CHECK(p->rnr_retry_count == 6 && p->flow_control == 1 && p->srq == 0 &&
	      p->qp_num == cl->qp->qp_num,
	      "CONNECT_REQUEST: rnr_retry_count %u (6), flow_control %u (1), srq %u (0), qp_num "
	      "0x%x (0x%x)", p->rnr_retry_count, p->flow_control, p->srq, p->qp_num,
	      cl->qp->qp_num);
	CHECK(p->private_data_len == 56 && p->private_data != NULL &&
	      memcmp(p->private_data, hello, sizeof(hello)) == 0,
	      "CONNECT_REQUEST: private data: the REQ's 56 bytes after the cma header (%u)",
	      p->private_data_len);
	rdma_ack_cm_event(e);

	rdma_create_qp(sv, NULL, &qa);
	if (rdma_accept(sv, &ap) != 0)
		exit(1);
	for (int n = 0; n < 2; n++) {	/* the two ESTABLISHEDs, in either order */
		e = expect(RDMA_CM_EVENT_ESTABLISHED, NULL);
		p = &e->param.conn;
		if (e->id == cl)	/* the REP's parameters: CONNECT_RESPONSE, then the RTU */
			CHECK(p->responder_resources == 3 && p->initiator_depth == 2 &&
			      p->rnr_retry_count == 7 && p->retry_count == 0 &&
			      p->qp_num == sv->qp->qp_num && p->private_data_len == 196,
			      "ESTABLISHED (the REP): responder_resources %u (3), initiator_depth "
			      "%u (the accept's 2), rnr_retry_count %u (asked 9: 7), retry_count %u (0), "
			      "qp_num 0x%x (0x%x), private_data_len %u (196)",
			      p->responder_resources, p->initiator_depth, p->rnr_retry_count,
			      p->retry_count, p->qp_num, sv->qp->qp_num, p->private_data_len);
		else
			CHECK(p->private_data_len == 0,
			      "ESTABLISHED (the RTU): no private data (%u)", p->private_data_len);
		rdma_ack_cm_event(e);
	}
	/* min_rnr_timer 0 (655.36 ms) on both, as Linux's ib_cm sets it at RTR */
	CHECK(ibv_query_qp(cl->qp, &attr, IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			   IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, &init) == 0 &&
	      attr.retry_cnt == 7 && attr.rnr_retry == 7 && attr.max_rd_atomic == 2 &&
	      attr.min_rnr_timer == 0,
	      "the active QP: retry_cnt %u (asked 10: want 7), rnr_retry %u (the REP's 7), "
	      "max_rd_atomic %u (the REP's responder resources 2, as Linux's ib_cm), "
	      "min_rnr_timer %u (0)", attr.retry_cnt, attr.rnr_retry, attr.max_rd_atomic,
	      attr.min_rnr_timer);
	CHECK(ibv_query_qp(sv->qp, &attr, IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, &init) == 0 &&
	      attr.retry_cnt == 7 && attr.rnr_retry == 6 && attr.max_dest_rd_atomic == 2 &&
	      attr.min_rnr_timer == 0,
	      "the passive QP: retry_cnt %u (7), rnr_retry %u (the REQ's 6), "
	      "max_dest_rd_atomic %u (the accept's 2), min_rnr_timer %u (0)", attr.retry_cnt,
	      attr.rnr_retry, attr.max_dest_rd_atomic, attr.min_rnr_timer);
	rdma_disconnect(cl);
	e = expect(RDMA_CM_EVENT_DISCONNECTED, sv);
	CHECK(e->status == 0 && e->param.conn.private_data_len == 0,
	      "DISCONNECTED: status 0, no private data (%d, %u)", e->status,
	      e->param.conn.private_data_len);
	rdma_ack_cm_event(e);
	rdma_disconnect(sv);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_DISCONNECTED, cl));
	rdma_destroy_qp(sv);
	rdma_destroy_id(sv);
	rdma_destroy_qp(cl);
	rdma_destroy_id(cl);

	/* a REJ: its full 148 bytes of private data, the reason as status */
	cl = client_to(&s, &cp);
	e = expect(RDMA_CM_EVENT_CONNECT_REQUEST, NULL);
	sv = e->id;
	rdma_ack_cm_event(e);
	rdma_reject(sv, no, sizeof(no));
	e = expect(RDMA_CM_EVENT_REJECTED, cl);
	rp = e->param.conn;
	CHECK(e->status == 28 && rp.private_data_len == 148 && rp.private_data != NULL &&
	      memcmp(rp.private_data, no, sizeof(no)) == 0,
	      "REJECTED: status %d (28), private_data_len %u (148)", e->status,
	      rp.private_data_len);
	rdma_ack_cm_event(e);
	rdma_destroy_id(sv);
	rdma_destroy_qp(cl);
	rdma_destroy_id(cl);
	rdma_destroy_id(l);
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
	port_sharing(argv[1]);
	dispatch(argv[1]);
	dispatch_ud(argv[1]);
	conn_params(argv[1]);
	connection(argv[1]);
	destroyed_under_reader();
	rdma_destroy_event_channel(chan);
	printf("%s: %d failed\n", argv[0], check_failures);
	return check_failures != 0;
}
