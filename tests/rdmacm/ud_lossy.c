/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * UD over rdma_cm on a lossy link (tests/integration/rdmacm.sh, fault
 * mode). udaddy and mckey wait for every message, so one lost datagram
 * hangs them; this test makes up for lost data itself, and leaves lost CM
 * MADs (SIDR_REQ, SIDR_REP) to the CM's retransmissions, so what it shows
 * is that UD ids and multicast joins come up through loss:
 *
 *   ud_lossy sidr-server ADDR PORT CONNS N
 *       a UD listener (RDMA_PS_UDP): accepts every SIDR_REQ (SIDR_REP),
 *       echoes every message back to its sender; done once each of the
 *       client's CONNS ids has sent all N sequence numbers and nothing came
 *       for 2 s (so late repeats are still echoed). A SIDR_REQ sent again
 *       because its SIDR_REP was lost is a new request to the CM (Linux's
 *       too: the REP ends the exchange), so the server may accept more ids
 *       than the client made; the client talks to the last one it heard.
 *   ud_lossy sidr-client ADDR PORT CONNS N
 *       CONNS ids, each resolved and connected through SIDR; then on each,
 *       N messages, stop and wait: each sent again every 200 ms until its
 *       echo is back
 *   ud_lossy mcast-recv GROUP N [BIND]
 *       joins GROUP, prints "joined", done once all N sequence numbers came
 *   ud_lossy mcast-send GROUP N STOPFILE [BIND]
 *       joins GROUP send-only, sends the N messages in rounds, again and
 *       again, until STOPFILE exists (the script makes it once every
 *       receiver is done)
 *
 * Every message is MSG_SIZE bytes whose every byte is checked on receipt;
 * a wrong one fails at once. Exit 0 when done, 1 on any failure or after
 * DEADLINE_S seconds. The last line says what was counted.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define MSG_SIZE   256
#define GRH_SIZE   40		/* in front of every UD receive */
#define MAX_CONNS  16		/* the client's ids */
#define MAX_IDS    64		/* the server's: repeated SIDR_REQs included */
#define MAX_N      1000
#define RECVS      64		/* receives posted per QP */
#define DEADLINE_S 150
#define RESEND_MS  200
#define IDLE_MS    2000
#define MSG_MAGIC  0xd70ce11dU
#define KIND_DATA  1
#define KIND_ECHO  2

struct msg_hdr {
	uint32_t magic;
	uint32_t kind;
	uint32_t conn;
	uint32_t seq;
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	struct ibv_ah *ah;		/* to the peer (client; multicast sender) */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	struct ibv_ah_attr peer_ah;	/* server: from CONNECT_REQUEST */
};

static struct rdma_event_channel *chan;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
/* RECVS receive buffers per connection, then one send buffer */
#define SEND_SLOT (MAX_IDS * RECVS)
static uint8_t bufs[SEND_SLOT + 1][GRH_SIZE + MSG_SIZE];
static struct conn conns[MAX_IDS];
static unsigned int nconns;
/* server: which sequence numbers each of the client's ids sent */
static uint8_t seen[MAX_CONNS][MAX_N];
static unsigned int distinct[MAX_CONNS];
/* receive completions met while waiting for a send's: handled after it */
static struct ibv_wc pending[SEND_SLOT];
static unsigned int npending;
static unsigned int n_msgs;
static double t_start;
static unsigned long received, resent;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what)
{
	printf("FAIL %s (%s) after %.1f s\n", what, strerror(errno), now() - t_start);
	exit(1);
}

static void
check_deadline(void)
{
	if (now() - t_start > DEADLINE_S) {
		errno = ETIMEDOUT;
		die("deadline");
	}
}

/* The next CM event on the channel, waiting at most MS (-1: until the
 * deadline); NULL when none came. */
static struct rdma_cm_event *
cm_event(int ms)
{
	struct rdma_cm_event *e;
	double until = ms < 0 ? t_start + DEADLINE_S : now() + ms / 1e3;

	for (;;) {
		if (rdma_get_cm_event(chan, &e) == 0)
			return e;
		if (errno != EAGAIN)
			die("rdma_get_cm_event");
		if (now() > until)
			return NULL;
		check_deadline();
		usleep(1000);
	}
}

/* Wait for event WANT on ID; anything else fails. */
static struct rdma_cm_event *
expect_event(struct rdma_cm_id *id, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *e = cm_event(-1);

	if (e == NULL) {
		errno = ETIMEDOUT;
		die(rdma_event_str(want));
	}
	if (e->event != want || e->id != id) {
		printf("FAIL wanted %s, got %s (status %d)\n", rdma_event_str(want),
		       rdma_event_str(e->event), e->status);
		exit(1);
	}
	return e;
}

static void
fill(uint8_t *p, uint32_t kind, uint32_t conn, uint32_t seq)
{
	struct msg_hdr h = { MSG_MAGIC, kind, conn, seq };

	memcpy(p, &h, sizeof(h));
	for (size_t i = sizeof(h); i < MSG_SIZE; i++)
		p[i] = (uint8_t)(conn * 31 + seq * 7 + i);
}

/* The message at P (after the GRH) of LEN bytes, checked byte for byte. */
static struct msg_hdr
check_msg(const uint8_t *p, uint32_t len, uint32_t kind)
{
	struct msg_hdr h;

	if (len != GRH_SIZE + MSG_SIZE) {
		printf("FAIL a message of %u bytes, not %d\n", len, GRH_SIZE + MSG_SIZE);
		exit(1);
	}
	p += GRH_SIZE;
	memcpy(&h, p, sizeof(h));
	if (h.magic != MSG_MAGIC || h.kind != kind || h.conn >= MAX_CONNS || h.seq >= n_msgs) {
		printf("FAIL a message with magic %#x kind %u conn %u seq %u\n", h.magic, h.kind,
		       h.conn, h.seq);
		exit(1);
	}
	for (size_t i = sizeof(h); i < MSG_SIZE; i++)
		if (p[i] != (uint8_t)(h.conn * 31 + h.seq * 7 + i)) {
			printf("FAIL conn %u seq %u: byte %zu is %#x\n", h.conn, h.seq, i, p[i]);
			exit(1);
		}
	return h;
}

static void
post_recv(struct ibv_qp *qp, unsigned int slot)
{
	struct ibv_sge sge = { (uintptr_t)bufs[slot], sizeof(bufs[slot]), mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad) != 0)
		die("ibv_post_recv");
}

/* PD, CQ and buffers on the first id's device; a UD QP on the id with
 * RECVS receives (slots from BASE). */
static struct ibv_qp *
make_qp(struct rdma_cm_id *id, unsigned int base)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_recv_wr = RECVS,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	if (pd == NULL) {
		pd = ibv_alloc_pd(id->verbs);
		cq = pd ? ibv_create_cq(id->verbs, MAX_IDS * RECVS + 4, NULL, NULL, 0) : NULL;
		mr = cq ? ibv_reg_mr(pd, bufs, sizeof(bufs), IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (mr == NULL)
			die("PD, CQ or MR");
	}
	qa.send_cq = cq;
	qa.recv_cq = cq;
	if (rdma_create_qp(id, pd, &qa) != 0)
		die("rdma_create_qp");
	for (unsigned int i = 0; i < RECVS; i++)
		post_recv(id->qp, base + i);
	return id->qp;
}

/* Send the message in the send buffer on QP to AH / QPN / Q_Key, and wait
 * for its completion (receive completions met meanwhile wait in pending). */
static void
send_msg(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	unsigned int slot = SEND_SLOT;
	struct ibv_sge sge = { (uintptr_t)(bufs[slot] + GRH_SIZE), MSG_SIZE, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	if (ibv_post_send(qp, &wr, &bad) != 0)
		die("ibv_post_send");
	for (;;) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 0) {
			check_deadline();
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("FAIL completion status %s\n", ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.opcode == IBV_WC_SEND)
			return;
		pending[npending++] = wc;	/* at most one per posted receive */
	}
}

/* Receive completions: what the mode does with them. */
static enum { SERVER, CLIENT, MCAST_RECV, MCAST_SEND } mode;
static int echo_got;		/* client: the echo waited for came */
static unsigned int n_client_ids;	/* server: CONNS */
static uint32_t want_conn, want_seq;

static struct conn *
conn_of_qp(uint32_t qpn)
{
	for (unsigned int i = 0; i < nconns; i++)
		if (conns[i].qp->qp_num == qpn)
			return &conns[i];
	printf("FAIL a completion for QPN %#x, not ours\n", qpn);
	exit(1);
}

static void
on_recv(struct ibv_wc *wc)
{
	struct conn *c = conn_of_qp(wc->qp_num);
	struct msg_hdr h;

	received++;
	switch (mode) {
	case SERVER:
		h = check_msg(bufs[wc->wr_id], wc->byte_len, KIND_DATA);
		if (h.conn >= n_client_ids) {
			printf("FAIL a message from client id %u of %u\n", h.conn, n_client_ids);
			exit(1);
		}
		if (!seen[h.conn][h.seq]) {
			seen[h.conn][h.seq] = 1;
			distinct[h.conn]++;
		}
		/* the client's QPN comes with its messages (SIDR does not say it) */
		if (c->ah == NULL) {
			c->ah = ibv_create_ah(pd, &c->peer_ah);
			if (c->ah == NULL)
				die("ibv_create_ah");
		}
		post_recv(c->qp, wc->wr_id);
		fill(bufs[SEND_SLOT] + GRH_SIZE, KIND_ECHO, h.conn, h.seq);
		send_msg(c->qp, c->ah, wc->src_qp, RDMA_UDP_QKEY);
		return;
	case CLIENT:
		h = check_msg(bufs[wc->wr_id], wc->byte_len, KIND_ECHO);
		if (h.conn == want_conn && h.seq == want_seq)
			echo_got = 1;	/* else a late echo of an earlier one */
		break;
	case MCAST_RECV:
		h = check_msg(bufs[wc->wr_id], wc->byte_len, KIND_DATA);
		if (!seen[0][h.seq]) {
			seen[0][h.seq] = 1;
			distinct[0]++;
		}
		break;
	case MCAST_SEND:
		printf("FAIL the send-only member received a message\n");
		exit(1);
	}
	post_recv(c->qp, wc->wr_id);
}

/* Poll the CQ for up to MS milliseconds, or until STOP says so. */
static void
poll_for(int ms, int (*stop)(void))
{
	double until = now() + ms / 1e3;
	struct ibv_wc wc;
	int n;

	while (now() < until && !(stop && stop())) {
		if (npending > 0) {
			wc = pending[--npending];
			on_recv(&wc);
			continue;
		}
		n = cq ? ibv_poll_cq(cq, 1, &wc) : 0;	/* a server before its first id: none */
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 0) {
			usleep(100);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("FAIL completion status %s\n", ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.opcode & IBV_WC_RECV)
			on_recv(&wc);
	}
	check_deadline();
}

static int
got_echo(void)
{
	return echo_got;
}

static void
resolve(struct rdma_cm_id *id, const char *src, const char *dst, unsigned short port)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *s = NULL, *d;

	if (getaddrinfo(dst, NULL, &hints, &d) != 0 || (src && getaddrinfo(src, NULL, &hints, &s)))
		die("getaddrinfo");
	((struct sockaddr_in *)d->ai_addr)->sin_port = htons(port);	/* same spot in _in6 */
	/* 10 s: ARP or ND may lose a packet too */
	if (rdma_resolve_addr(id, s ? s->ai_addr : NULL, d->ai_addr, 10000) != 0)
		die("rdma_resolve_addr");
	rdma_ack_cm_event(expect_event(id, RDMA_CM_EVENT_ADDR_RESOLVED));
	freeaddrinfo(d);
	if (s)
		freeaddrinfo(s);
}

static int
server_done(void)
{
	for (unsigned int i = 0; i < n_client_ids; i++)
		if (distinct[i] < n_msgs)
			return 0;
	return 1;
}

static void
run_server(const char *addr, unsigned short port, unsigned int want)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE }, *a;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_event *e;
	double idle_since;
	unsigned long last = 0;

	n_client_ids = want;

	if (rdma_create_id(chan, &listen_id, NULL, RDMA_PS_UDP) != 0)
		die("rdma_create_id");
	if (getaddrinfo(addr, NULL, &hints, &a) != 0)
		die("getaddrinfo");
	((struct sockaddr_in *)a->ai_addr)->sin_port = htons(port);
	if (rdma_bind_addr(listen_id, a->ai_addr) != 0 || rdma_listen(listen_id, MAX_IDS) != 0)
		die("rdma_bind_addr / rdma_listen");
	freeaddrinfo(a);
	printf("listening\n");
	fflush(stdout);
	idle_since = now();
	for (;;) {
		while ((e = cm_event(0)) != NULL) {
			struct rdma_conn_param p = { 0 };
			struct conn *c;

			if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST || nconns == MAX_IDS) {
				printf("FAIL unexpected %s\n", rdma_event_str(e->event));
				exit(1);
			}
			c = &conns[nconns];
			c->id = e->id;
			c->peer_ah = e->param.ud.ah_attr;
			c->qp = make_qp(c->id, nconns * RECVS);
			nconns++;
			p.qp_num = c->qp->qp_num;
			if (rdma_accept(c->id, &p) != 0)
				die("rdma_accept");
			rdma_ack_cm_event(e);
		}
		poll_for(20, NULL);
		if (received != last) {
			last = received;
			idle_since = now();
		}
		if (server_done() && now() - idle_since > IDLE_MS / 1e3)
			break;
	}
	printf("ok server: %u ids accepted (%u repeated SIDR_REQs), all %u messages of each of "
	       "the client's %u ids, %lu received (repeats included), in %.1f s\n", nconns,
	       nconns - want, n_msgs, want, received, now() - t_start);
}

static void
run_client(const char *addr, unsigned short port, unsigned int want)
{
	for (nconns = 0; nconns < want; nconns++) {
		struct conn *c = &conns[nconns];
		struct rdma_conn_param p = { 0 };
		struct rdma_cm_event *e;

		if (rdma_create_id(chan, &c->id, NULL, RDMA_PS_UDP) != 0)
			die("rdma_create_id");
		resolve(c->id, NULL, addr, port);
		if (rdma_resolve_route(c->id, 10000) != 0)
			die("rdma_resolve_route");
		rdma_ack_cm_event(expect_event(c->id, RDMA_CM_EVENT_ROUTE_RESOLVED));
		c->qp = make_qp(c->id, nconns * RECVS);
		p.qp_num = c->qp->qp_num;
		if (rdma_connect(c->id, &p) != 0)
			die("rdma_connect");
		/* through SIDR: a lost SIDR_REQ or SIDR_REP is the CM's to resend */
		e = expect_event(c->id, RDMA_CM_EVENT_ESTABLISHED);
		c->remote_qpn = e->param.ud.qp_num;
		c->remote_qkey = e->param.ud.qkey;
		c->ah = ibv_create_ah(pd, &e->param.ud.ah_attr);
		rdma_ack_cm_event(e);
		if (c->ah == NULL)
			die("ibv_create_ah");
	}
	printf("connected %u ids in %.1f s\n", nconns, now() - t_start);
	fflush(stdout);
	for (unsigned int i = 0; i < nconns; i++)
		for (unsigned int s = 0; s < n_msgs; s++) {
			want_conn = i;
			want_seq = s;
			echo_got = 0;
			for (int tries = 0; !echo_got; tries++) {
				if (tries > 0)
					resent++;
				fill(bufs[SEND_SLOT] + GRH_SIZE, KIND_DATA, i, s);
				send_msg(conns[i].qp, conns[i].ah, conns[i].remote_qpn,
					 conns[i].remote_qkey);
				poll_for(RESEND_MS, got_echo);
			}
		}
	printf("ok client: %u ids through SIDR, %u messages each echoed, %lu sent again, "
	       "in %.1f s\n", nconns, n_msgs, resent, now() - t_start);
}

static int
mcast_recv_done(void)
{
	return distinct[0] == n_msgs;
}

static void
run_mcast(const char *group, const char *bind, const char *stopfile)
{
	struct conn *c = &conns[0];
	struct rdma_cm_join_mc_attr_ex ja = { 0 };
	struct rdma_cm_event *e;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *g;
	unsigned long rounds = 0;

	if (rdma_create_id(chan, &c->id, NULL, RDMA_PS_UDP) != 0)
		die("rdma_create_id");
	resolve(c->id, bind, group, 0);
	c->qp = make_qp(c->id, 0);
	nconns = 1;
	if (getaddrinfo(group, NULL, &hints, &g) != 0)
		die("getaddrinfo");
	ja.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	ja.addr = g->ai_addr;
	ja.join_flags = mode == MCAST_SEND ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER
					   : RDMA_MC_JOIN_FLAG_FULLMEMBER;
	if (rdma_join_multicast_ex(c->id, &ja, NULL) != 0)
		die("rdma_join_multicast_ex");
	e = expect_event(c->id, RDMA_CM_EVENT_MULTICAST_JOIN);
	c->remote_qpn = e->param.ud.qp_num;
	c->remote_qkey = e->param.ud.qkey;
	if (mode == MCAST_SEND && (c->ah = ibv_create_ah(pd, &e->param.ud.ah_attr)) == NULL)
		die("ibv_create_ah");
	rdma_ack_cm_event(e);
	printf("joined\n");
	fflush(stdout);
	if (mode == MCAST_RECV) {
		poll_for(DEADLINE_S * 1000, mcast_recv_done);
		printf("ok mcast receiver: all %u messages, %lu received (repeats included), "
		       "in %.1f s\n", n_msgs, received, now() - t_start);
	} else {
		while (access(stopfile, F_OK) != 0) {
			for (unsigned int s = 0; s < n_msgs; s++) {
				fill(bufs[SEND_SLOT] + GRH_SIZE, KIND_DATA, 0, s);
				send_msg(c->qp, c->ah, c->remote_qpn, c->remote_qkey);
			}
			rounds++;
			poll_for(50, NULL);
		}
		printf("ok mcast sender: %lu rounds of %u messages\n", rounds, n_msgs);
	}
	if (rdma_leave_multicast(c->id, g->ai_addr) != 0)
		die("rdma_leave_multicast");
	freeaddrinfo(g);
}

static void
usage(void)
{
	fprintf(stderr, "usage: ud_lossy sidr-server|sidr-client ADDR PORT CONNS N\n"
			"       ud_lossy mcast-recv GROUP N [BIND]\n"
			"       ud_lossy mcast-send GROUP N STOPFILE [BIND]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	unsigned int want = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_start = now();
	if (argc < 4)
		usage();
	if (strcmp(argv[1], "sidr-server") == 0 || strcmp(argv[1], "sidr-client") == 0) {
		if (argc != 6)
			usage();
		mode = argv[1][5] == 's' ? SERVER : CLIENT;
		want = (unsigned int)atoi(argv[4]);
		n_msgs = (unsigned int)atoi(argv[5]);
		if (want < 1 || want > MAX_CONNS)
			usage();
	} else if (strcmp(argv[1], "mcast-recv") == 0) {
		mode = MCAST_RECV;
		n_msgs = (unsigned int)atoi(argv[3]);
	} else if (strcmp(argv[1], "mcast-send") == 0) {
		if (argc < 5)
			usage();
		mode = MCAST_SEND;
		n_msgs = (unsigned int)atoi(argv[3]);
	} else {
		usage();
	}
	if (n_msgs < 1 || n_msgs > MAX_N)
		usage();
	chan = rdma_create_event_channel();
	if (chan == NULL)
		die("rdma_create_event_channel");
	/* non-blocking: cm_event() polls it beside the CQ */
	{
		int fl = fcntl(chan->fd, F_GETFL);

		if (fl < 0 || fcntl(chan->fd, F_SETFL, fl | O_NONBLOCK) != 0)
			die("fcntl");
	}
	switch (mode) {
	case SERVER:
		run_server(argv[2], (unsigned short)atoi(argv[3]), want);
		break;
	case CLIENT:
		run_client(argv[2], (unsigned short)atoi(argv[3]), want);
		break;
	case MCAST_RECV:
		run_mcast(argv[2], argc > 4 ? argv[4] : NULL, NULL);
		break;
	case MCAST_SEND:
		run_mcast(argv[2], argc > 5 ? argv[5] : NULL, argv[4]);
		break;
	}
	return 0;
}
