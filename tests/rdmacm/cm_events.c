/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Print what every rdma_cm event carries, one line per event, so that
 * droce's librdmacm and Linux's can be compared side by side:
 *   cm_events server ADDR PORT    (accepts one connection, rejects the next)
 *   cm_events client ADDR PORT    (connects twice: accepted, then rejected)
 * The client offers responder_resources 4, initiator_depth 0, retry_count
 * 10, rnr_retry_count 6, flow_control 1 and "hello"; the server accepts
 * with responder_resources 0, initiator_depth 3, rnr_retry_count 9 and
 * "world", and rejects the second with "no". Each line:
 *   EVENT status S rr R depth D flow F retry T rnr N srq Q qpn Y|N len L data "..."
 * (qpn Y: the event's qp_num is the QPN the peer wrote in its private
 * data; there is none in other events). Then each QP's READ depths and
 * retry counts.
 * Exit 0 once both connections went their way; the lines are the output.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *chan;

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

/* Up to @p max printable bytes of @p p, the rest of its length counted as zeros. */
static void
print_pdata(const void *p, unsigned int len)
{
	const unsigned char *b = p;
	unsigned int i, zeros = 0;

	printf(" len %u data \"", len);
	for (i = 0; b != NULL && i < len; i++) {
		if (b[i] == 0) {
			zeros++;
			continue;
		}
		for (; zeros > 0; zeros--)
			printf("\\0");
		putchar(isprint(b[i]) ? b[i] : '?');
	}
	printf("\"%s\n", zeros > 0 ? " (then zeros)" : "");
}

static uint32_t qpn_of(const struct rdma_conn_param *p);

static struct rdma_cm_event *
next_event(void)
{
	struct rdma_cm_event *e;
	const struct rdma_conn_param *p;

	if (rdma_get_cm_event(chan, &e) != 0)
		die("rdma_get_cm_event");
	p = &e->param.conn;
	printf("%s status %d rr %u depth %u flow %u retry %u rnr %u srq %u qpn %c",
	       rdma_event_str(e->event), e->status, p->responder_resources, p->initiator_depth,
	       p->flow_control, p->retry_count, p->rnr_retry_count, p->srq,
	       qpn_of(p) != 0 && qpn_of(p) == p->qp_num ? 'Y' : 'N');
	print_pdata(p->private_data, p->private_data_len);
	return e;
}

static void
print_qp(const char *who, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
			 IBV_QP_MAX_DEST_RD_ATOMIC, &ia) != 0)
		die("ibv_query_qp");
	printf("%s QP: retry_cnt %u rnr_retry %u max_rd_atomic %u max_dest_rd_atomic %u\n", who,
	       a.retry_cnt, a.rnr_retry, a.max_rd_atomic, a.max_dest_rd_atomic);
}

/* a template: rdma_create_qp writes the CQs it makes into its argument */
static const struct ibv_qp_init_attr qp_attr = {
	.qp_type = IBV_QPT_RC,
	.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
};

static struct rdma_addrinfo *
resolve(const char *addr, const char *port, int passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;

	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	if (rdma_getaddrinfo(addr, port, &hints, &res) != 0)
		die("rdma_getaddrinfo");
	return res;
}

/* Our QPN, for the peer to recognise in its event's qp_num. */
static void
qpn_text(char *buf, size_t cap, const char *word, struct ibv_qp *qp)
{
	snprintf(buf, cap, "%s %u", word, qp->qp_num);
}

static uint32_t
qpn_of(const struct rdma_conn_param *p)
{
	const char *s = p->private_data;
	const char *sp = s != NULL ? memchr(s, ' ', p->private_data_len) : NULL;

	return sp != NULL ? (uint32_t)strtoul(sp + 1, NULL, 10) : 0;
}

static int
server(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = resolve(addr, port, 1);
	struct rdma_conn_param ap = { .responder_resources = 0, .initiator_depth = 3,
				      .rnr_retry_count = 9 };
	struct ibv_qp_init_attr qa;
	struct rdma_cm_id *l, *id;
	struct rdma_cm_event *e;
	char text[32];

	if (rdma_create_id(chan, &l, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(l, res->ai_src_addr) != 0 || rdma_listen(l, 2) != 0)
		die("listen");
	rdma_freeaddrinfo(res);
	printf("listening\n");
	fflush(stdout);

	e = next_event();	/* CONNECT_REQUEST */
	if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	id = e->id;
	rdma_ack_cm_event(e);
	qa = qp_attr;
	if (rdma_create_qp(id, NULL, &qa) != 0)
		die("rdma_create_qp");
	qpn_text(text, sizeof(text), "world", id->qp);
	ap.private_data = text;
	ap.private_data_len = (uint8_t)(strlen(text) + 1);
	if (rdma_accept(id, &ap) != 0)
		die("rdma_accept");
	rdma_ack_cm_event(next_event());	/* ESTABLISHED */
	print_qp("server", id->qp);
	rdma_ack_cm_event(next_event());	/* DISCONNECTED */
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	e = next_event();	/* the second CONNECT_REQUEST */
	if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	id = e->id;
	rdma_ack_cm_event(e);
	rdma_reject(id, "no", 3);
	rdma_destroy_id(id);
	rdma_destroy_id(l);
	return 0;
}

/* Connect once; @p want_reject: the second, refused one. */
static int
client_once(const char *addr, const char *port, int want_reject)
{
	struct rdma_addrinfo *res = resolve(addr, port, 0);
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 0,
				      .flow_control = 1, .retry_count = 10,
				      .rnr_retry_count = 6 };
	struct ibv_qp_init_attr qa;
	struct rdma_cm_id *id;
	struct rdma_cm_event *e;
	char text[32];
	int ret;

	if (rdma_create_id(chan, &id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, 2000) != 0)
		die("rdma_resolve_addr");
	rdma_freeaddrinfo(res);
	rdma_ack_cm_event(next_event());	/* ADDR_RESOLVED */
	if (rdma_resolve_route(id, 2000) != 0)
		die("rdma_resolve_route");
	rdma_ack_cm_event(next_event());	/* ROUTE_RESOLVED */
	qa = qp_attr;
	if (rdma_create_qp(id, NULL, &qa) != 0)
		die("rdma_create_qp");
	qpn_text(text, sizeof(text), "hello", id->qp);
	cp.private_data = text;
	cp.private_data_len = (uint8_t)(strlen(text) + 1);
	if (rdma_connect(id, &cp) != 0)
		die("rdma_connect");
	e = next_event();	/* ESTABLISHED (the REP's), or REJECTED */
	ret = e->event == (want_reject ? RDMA_CM_EVENT_REJECTED : RDMA_CM_EVENT_ESTABLISHED);
	rdma_ack_cm_event(e);
	if (!want_reject && ret) {
		print_qp("client", id->qp);
		rdma_disconnect(id);
		rdma_ack_cm_event(next_event());	/* DISCONNECTED */
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	return ret ? 0 : 1;
}

int
main(int argc, char **argv)
{
	int ret;

	if (argc != 4 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: cm_events server|client ADDR PORT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	chan = rdma_create_event_channel();
	if (chan == NULL)
		die("rdma_create_event_channel");
	if (argv[1][0] == 's')
		ret = server(argv[2], argv[3]);
	else
		ret = client_once(argv[2], argv[3], 0) || client_once(argv[2], argv[3], 1);
	rdma_destroy_event_channel(chan);
	return ret;
}
