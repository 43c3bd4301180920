/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libFuzzer target for the CM MAD parser (lib/cm) and the state machines
 * behind it. Each input is a scenario byte and a sequence of MADs:
 *   byte 0      the state a fresh CM is put in first (scenario % 4):
 *               0 a listener and an active id waiting for its REP;
 *               1 and a passive connection up; 2 and an active one up;
 *               3 both, the passive one disconnecting (DREQ sent)
 *   the rest    cut into 256-byte MADs (a last shorter piece too), each
 *               handed to droce_cm_rx() from the peer, one simulated second
 *               apart, with the timers run in between
 * Comm IDs are deterministic (seed 0: slot i's first ID is 0x10 | i), so the
 * fuzzer can aim at live ids. What must hold, else abort (a crash to
 * libFuzzer):
 *   - the parser accepts or names a reason; an accepted MAD decodes to what
 *     its rebuilt bytes decode to, and a REQ or SIDR_REQ's cma header, when
 *     it parses, rebuilds to the same addresses and ports;
 *   - every MAD the CM sends parses;
 *   - no listener's pending count passes its backlog;
 *   - once the owner destroys every id and time runs on, every id is free.
 * Single-threaded, as libFuzzer runs it.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_cm.h"
#include "droce_cm_ip.h"

#define N_IDS	16
#define SID	0x0000000001061c06ull	/* RDMA_PS_TCP, port 7174 */
#define SEC	1000000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...) do { \
		if (!(cond)) { \
			fprintf(stderr, "fuzz_cm_mad: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

static struct droce_cm cm;
static struct droce_cm_id ids[N_IDS];
static struct droce_cm_addr peer;	/* the fuzzer, as seen from the CM */
static uint64_t now;

static void
fz_send(void *ctx, const struct droce_cm_addr *to, const uint8_t *mad)
{
	struct droce_cm_msg m;
	enum droce_cm_drop r = droce_cm_mad_parse(mad, DROCE_MAD_BYTES, &m);

	(void)ctx;
	(void)to;
	FUZZ_CHECK(r == DROCE_CM_MAD_OK, "the CM sent a MAD its parser refuses: %s",
		   droce_cm_drop_name(r));
}

/* The owner: accepts, sends RTUs, answers DREQs and SIDR, as rdma_cm would. */
static void
fz_event(void *ctx, struct droce_cm_id *id, const struct droce_cm_event *ev)
{
	struct droce_cm_rep_param rep = { .qpn = 0x50, .starting_psn = 1,
					  .responder_resources = 1, .initiator_depth = 1 };
	struct droce_cm_sidr_rep_param sidr = { .qpn = 0x51, .qkey = 0x01234567 };

	(void)ctx;
	switch (ev->type) {
	case DROCE_CM_EV_REQ_RECEIVED:
		(void)droce_cm_accept(id, &rep, now);
		break;
	case DROCE_CM_EV_REP_RECEIVED:
		(void)droce_cm_send_rtu(id, NULL, 0, now);
		break;
	case DROCE_CM_EV_DREQ_RECEIVED:
		(void)droce_cm_disconnect(id, NULL, 0, now);
		break;
	case DROCE_CM_EV_SIDR_REQ_RECEIVED:
		(void)droce_cm_sidr_rep(id, &sidr, now);
		break;
	default:
		break;
	}
}

static int
fz_qp_modify(void *ctx, struct droce_cm_id *id, const struct droce_cm_qp_attr *attr)
{
	(void)ctx;
	(void)id;
	(void)attr;
	return 0;
}

static const struct droce_cm_ops ops = {
	.send = fz_send,
	.event = fz_event,
	.qp_modify = fz_qp_modify,
};

static void
check_decode(const uint8_t *mad, uint32_t len)
{
	struct droce_cm_msg a, b;
	struct droce_cm_ip_info ip, ip2;
	uint8_t out[DROCE_MAD_BYTES], pd[DROCE_CMA_HDR_BYTES];
	const uint8_t *pdata = NULL;
	enum droce_cm_drop r;
	uint64_t sid = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	r = droce_cm_mad_parse(mad, len, &a);
	FUZZ_CHECK(r >= DROCE_CM_MAD_OK && r < DROCE_CM_DROP_COUNT, "reason %d", r);
	if (r != DROCE_CM_MAD_OK)
		return;
	FUZZ_CHECK(len == DROCE_MAD_BYTES, "accepted %u bytes", len);
	FUZZ_CHECK(droce_cm_mad_build(&a, out, sizeof(out)) == DROCE_MAD_BYTES, "build");
	FUZZ_CHECK(droce_cm_mad_parse(out, sizeof(out), &b) == DROCE_CM_MAD_OK, "reparse");
	FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0, "%s: decode(encode(x)) != x",
		   droce_cm_msg_name(a.type));

	if (a.type == DROCE_CM_MSG_REQ) {
		pdata = a.req.private_data;
		sid = a.req.service_id;
	} else if (a.type == DROCE_CM_MSG_SIDR_REQ) {
		pdata = a.sidr_req.private_data;
		sid = a.sidr_req.service_id;
	}
	if (pdata == NULL || droce_cm_ip_hdr_parse(pdata, DROCE_CMA_HDR_BYTES, sid, &ip) != 0)
		return;
	FUZZ_CHECK(droce_cm_ip_hdr_build(&ip, pd, sizeof(pd)) == DROCE_CMA_HDR_BYTES, "ip build");
	FUZZ_CHECK(droce_cm_ip_hdr_parse(pd, sizeof(pd), sid, &ip2) == 0, "ip reparse");
	FUZZ_CHECK(ip.ip_version == ip2.ip_version && ip.src_port == ip2.src_port &&
		   ip.dst_port == ip2.dst_port && ip.ps == ip2.ps &&
		   !memcmp(ip.src, ip2.src, 16) && !memcmp(ip.dst, ip2.dst, 16), "ip round trip");
}

static void
rx(const struct droce_cm_msg *m)
{
	uint8_t mad[DROCE_MAD_BYTES];

	FUZZ_CHECK(droce_cm_mad_build(m, mad, sizeof(mad)) == DROCE_MAD_BYTES, "setup build");
	(void)droce_cm_rx(&cm, &peer, mad, sizeof(mad), now);
}

static void
msg(struct droce_cm_msg *m, enum droce_cm_msg_type t)
{
	memset(m, 0, sizeof(*m));
	m->type = t;
	droce_cm_mad_hdr_init(&m->hdr, t, 0x1000);
}

/* A peer's REQ that the listener accepts, and its RTU: a passive connection. */
static void
passive_up(void)
{
	struct droce_cm_id *p = NULL;
	struct droce_cm_msg m;
	unsigned int i;

	msg(&m, DROCE_CM_MSG_REQ);
	m.req.local_comm_id = 0xc0ffee;
	m.req.service_id = SID;
	m.req.local_ca_guid = 0x99;
	m.req.local_qpn = 0x77;
	m.req.path_mtu = 3;
	m.req.max_cm_retries = 15;
	m.req.remote_cm_response_timeout = 20;
	m.req.local_cm_response_timeout = 20;
	m.req.primary_local_ack_timeout = 19;
	rx(&m);
	for (i = 0; i < N_IDS; i++)
		if (ids[i].state == DROCE_CM_REP_SENT)
			p = &ids[i];
	if (p == NULL)
		return;
	msg(&m, DROCE_CM_MSG_RTU);
	m.rtu.local_comm_id = 0xc0ffee;
	m.rtu.remote_comm_id = p->local_id;
	rx(&m);
}

/* The REP to our active id's REQ: an active connection. */
static void
active_up(struct droce_cm_id *a)
{
	struct droce_cm_msg m;

	msg(&m, DROCE_CM_MSG_REP);
	m.rep.local_comm_id = 0xbadf00d;
	m.rep.remote_comm_id = a->local_id;
	m.rep.local_ca_guid = 0x99;
	m.rep.local_qpn = 0x78;
	rx(&m);
}

static void
setup(uint8_t scenario)
{
	static const struct droce_cm_config cfg = {
		.ca_guid = 0x50540afffe4d0001ull,
		.comm_id_seed = 0,
		.mra_service_timeout = 24,
	};
	struct droce_cm_req_param p = {
		.service_id = SID,
		.qpn = 0x40,
		.transport = DROCE_CM_TRANSPORT_RC,
		.responder_resources = 1,
		.initiator_depth = 1,
		.remote_cm_response_timeout = 20,
		.local_cm_response_timeout = 20,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.max_cm_retries = 15,
	};
	struct droce_cm_id *l, *a, *conn = NULL;
	unsigned int i;

	now = SEC;
	memset(&peer, 0, sizeof(peer));
	peer.local_gid[10] = peer.local_gid[11] = 0xff;
	peer.local_gid[12] = 10;
	peer.local_gid[15] = 1;
	memcpy(peer.remote_gid, peer.local_gid, 16);
	peer.remote_gid[15] = 2;
	peer.remote_qpn = 1;
	peer.pkey = 0xffff;
	FUZZ_CHECK(droce_cm_init(&cm, &cfg, ids, N_IDS, &ops, NULL) == 0, "init");
	FUZZ_CHECK(droce_cm_id_create(&cm, NULL, &l) == 0 &&
		   droce_cm_listen(l, SID, 0, 4) == 0, "listen");
	memcpy(p.path.sgid, peer.local_gid, 16);
	memcpy(p.path.dgid, peer.remote_gid, 16);
	p.path.pkey = 0xffff;
	p.path.mtu = 3;
	p.path.packet_life_time = 18;
	p.path.local_ack_timeout = 19;
	FUZZ_CHECK(droce_cm_id_create(&cm, NULL, &a) == 0 &&
		   droce_cm_connect(a, &p, now) == 0, "connect");
	if (scenario % 4 == 1 || scenario % 4 == 3)
		passive_up();
	if (scenario % 4 == 2 || scenario % 4 == 3)
		active_up(a);
	if (scenario % 4 == 3) {
		for (i = 0; i < N_IDS; i++)
			if (ids[i].state == DROCE_CM_ESTABLISHED && &ids[i] != a)
				conn = &ids[i];
		if (conn != NULL)
			(void)droce_cm_disconnect(conn, NULL, 0, now);
	}
}

/* The owner lets go of everything; time runs until nothing is left. */
static void
teardown(void)
{
	unsigned int i, round;

	for (i = 0; i < N_IDS; i++)
		if (ids[i].state != DROCE_CM_FREE)
			droce_cm_id_destroy(&ids[i], now);
	/* each id: at most 16 DREQs and a TIMEWAIT */
	for (round = 0; round < 32 * N_IDS && droce_cm_next_timer(&cm) != 0; round++) {
		now = droce_cm_next_timer(&cm);
		droce_cm_timer(&cm, now);
	}
	for (i = 0; i < N_IDS; i++)
		FUZZ_CHECK(ids[i].state == DROCE_CM_FREE, "id %u left in %s after teardown", i,
			   droce_cm_state_name(ids[i].state));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off;

	if (size == 0 || size > 1 + 32 * DROCE_MAD_BYTES)
		return -1;	/* keep such inputs out of the corpus */
	setup(data[0]);
	for (off = 1; off < size; off += DROCE_MAD_BYTES) {
		uint32_t len = (uint32_t)DROCE_MIN((size_t)DROCE_MAD_BYTES, size - off);
		/* a copy of exactly len bytes: ASan sees any read past it */
		uint8_t *mad = malloc(len);
		unsigned int i;

		if (mad == NULL)
			return 0;
		memcpy(mad, data + off, len);
		check_decode(mad, len);
		(void)droce_cm_rx(&cm, &peer, mad, len, now);
		free(mad);
		now += SEC;
		droce_cm_timer(&cm, now);
		for (i = 0; i < N_IDS; i++)
			FUZZ_CHECK(ids[i].state != DROCE_CM_LISTEN || ids[i].pending <= ids[i].backlog,
				   "listener %u: %u pending, backlog %u", i, ids[i].pending,
				   ids[i].backlog);
	}
	teardown();
	return 0;
}
