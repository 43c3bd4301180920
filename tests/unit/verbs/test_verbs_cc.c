/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Suite "verbs-cc": ECN and DCQCN in a real device and engine, frames in
 * and out through the port ops. A CE-marked WRITE to an RC QP is answered
 * with a CNP on the wire (opcode 0x81, BECN, the peer's QPN, the P_Key,
 * DSCP 48, not ECN-capable), at most one per min_time_between_cnps; the
 * QP's own packets carry ECT(0) under its DSCP; a CNP to the QP is
 * handled by its reaction point, or ignored where the RP is off; UC as
 * RC, UD never answered; the
 * rates droce-ctl shows of a QP DCQCN holds and of a rate-limited one;
 * the switches and parameters changed under a live QP.
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_engine.h"
#include "droce_shm.h"
#include "droce_verbs_dev.h"

#define US		1000ull
#define PEER_QPN	0x123456u
#define TCLASS		0x68		/* DSCP 26: priority 3 */

static struct {
	uint8_t frame[2048];
	uint32_t len;
	struct droce_pkt pkt;
	unsigned int n;
	uint32_t dqpn[8];		/* of the first frames */
} out;

/* frames the port takes, asked before each QP's poll: the first @p room_polls get room */
static int room_polls = -1;		/* < 0: no limit */

static unsigned int
tx_room(void *arg)
{
	(void)arg;
	if (room_polls < 0)
		return 256;
	return room_polls-- > 0 ? 256 : 0;
}

static int
capture(void *arg, struct droce_pkt *pkt, const struct droce_iov *iov, unsigned int n_iov)
{
	int len;

	(void)arg;
	len = droce_tqp_frame_build(pkt, iov, n_iov, out.frame, sizeof(out.frame));
	ck_assert_int_gt(len, 0);
	out.len = (uint32_t)len;
	ck_assert_int_eq(droce_pkt_parse(&out.pkt, out.frame, out.len, out.len), DROCE_WIRE_OK);
	if (out.n < 8)
		out.dqpn[out.n] = out.pkt.dqpn;
	out.n++;
	return 0;
}

static int
resolve(void *arg, const uint8_t gid[16], uint8_t mac[6])
{
	static const uint8_t peer[6] = { 0x02, 0, 0, 0, 0, 2 };

	(void)arg, (void)gid;
	memcpy(mac, peer, 6);
	return 0;
}

static void
no_mcast(void *arg, const uint8_t gid[16])
{
	(void)arg, (void)gid;
}

static const struct droce_dev_port_ops port_ops = {
	.frame_out = capture,
	.resolve = resolve,
	.mcast_join = no_mcast,
	.mcast_leave = no_mcast,
	.tx_room = tx_room,
};

static struct droce_dev *dev;
static struct droce_client *cl;
static int async_pipe[2], db_fd;
static uint32_t pd_handle, cq_handle;
static uint32_t qp_handle, qpn;
static const uint8_t our_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };
static const uint8_t peer_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 2 };

static int
call_keep(uint16_t type, const void *body, uint32_t len, int fd, void *rep, int *keep)
{
	struct droce_ctrl_hdr hdr = { .version = DROCE_CTRL_VERSION, .type = type, .len = len };
	uint8_t scratch[DROCE_CTRL_MAX_BODY];
	int fds[8];
	unsigned int nfds = 0, i = 0;
	uint32_t rl = 0;
	int ret;

	ret = droce_dev_request(cl, &hdr, body, &fd, fd >= 0 ? 1 : 0, rep != NULL ? rep : scratch,
				&rl, fds, &nfds);
	if (keep != NULL) {
		*keep = nfds > 0 ? fds[0] : -1;
		i = nfds > 0;
	}
	for (; i < nfds; i++)
		close(fds[i]);
	return ret;
}

static int
call(uint16_t type, const void *body, uint32_t len, void *rep)
{
	return call_keep(type, body, len, -1, rep, NULL);
}

static void
modify(uint32_t mask, const struct ibv_qp_attr *attr)
{
	struct droce_ctrl_modify_qp_req m = { .qp_handle = qp_handle, .mask = mask, .attr = *attr };

	ck_assert_int_eq(call(DROCE_CTRL_MODIFY_QP, &m, sizeof(m), NULL), 0);
}

static void qp_up(enum ibv_qp_type type, uint32_t dest_qpn);

/* A device with ECN on @p np / @p rp priorities, one QP of @p type in RTS towards the peer. */
static void
dev_up_qp(enum ibv_qp_type type, uint8_t np, uint8_t rp)
{
	struct droce_dev_conf conf = {
		.name = "droce0", .mac = { 0x02, 0, 0, 0, 0, 1 }, .n_gids = 1,
		.link_mtu = 1500, .node_guid = 1, .seed = 7, .port_ops = &port_ops,
		.n_engines = 1, .ecn_np_enable = np, .ecn_rp_enable = rp,
	};
	struct droce_client_cred cred = { .pid = (uint32_t)getpid() };
	struct droce_ctrl_hello_req hello = { .abi_version = DROCE_SHM_ABI_VERSION,
					      .pid = (uint32_t)getpid() };
	struct droce_ctrl_hello_rep hello_rep;
	struct droce_ctrl_alloc_pd_rep pd_rep;
	struct droce_ctrl_create_cq_req cq_req = { .cqe = 16 };
	struct droce_ctrl_create_cq_rep cq_rep;

	memcpy(conf.gid[0], our_gid, 16);
	ck_assert_int_eq(droce_dev_create(&conf, &dev), 0);
	ck_assert_int_eq(droce_dev_client_new(dev, &cred, &cl), 0);
	ck_assert_int_eq(pipe(async_pipe), 0);
	ck_assert_int_eq(call_keep(DROCE_CTRL_HELLO, &hello, sizeof(hello), async_pipe[1],
				   &hello_rep, &db_fd), 0);
	ck_assert_int_eq(call(DROCE_CTRL_ALLOC_PD, NULL, 0, &pd_rep), 0);
	ck_assert_int_eq(call(DROCE_CTRL_CREATE_CQ, &cq_req, sizeof(cq_req), &cq_rep), 0);
	pd_handle = pd_rep.pd_handle;
	cq_handle = cq_rep.cq_handle;
	qp_up(type, PEER_QPN);
	memset(&out, 0, sizeof(out));
}

/* A QP of @p type in RTS towards the peer's QP @p dest_qpn: qp_handle, qpn. */
static void
qp_up(enum ibv_qp_type type, uint32_t dest_qpn)
{
	struct droce_ctrl_create_qp_req q = {
		.qp_type = type, .pd_handle = pd_handle,
		.send_cq_handle = cq_handle, .recv_cq_handle = cq_handle,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct droce_ctrl_create_qp_rep r;
	struct ibv_qp_attr a;

	ck_assert_int_eq(call(DROCE_CTRL_CREATE_QP, &q, sizeof(q), &r), 0);
	qp_handle = r.qp_handle;
	qpn = r.qp_num;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	a.qkey = 0x11110000;
	modify(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS), &a);
	if (type == IBV_QPT_UD) {
		a.qp_state = IBV_QPS_RTR;
		modify(IBV_QP_STATE, &a);
		a.qp_state = IBV_QPS_RTS;
		modify(IBV_QP_STATE | IBV_QP_SQ_PSN, &a);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = TCLASS;
	memcpy(a.ah_attr.grh.dgid.raw, peer_gid, 16);
	modify(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       (type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0), &a);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	modify(IBV_QP_STATE | IBV_QP_SQ_PSN |
	       (type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_MAX_QP_RD_ATOMIC : 0), &a);
}

static void
dev_up(uint8_t np, uint8_t rp)
{
	dev_up_qp(IBV_QPT_RC, np, rp);
}

static void
teardown(void)
{
	close(db_fd);
	droce_dev_client_free(cl);
	droce_dev_destroy(dev);
	close(async_pipe[0]);
	close(async_pipe[1]);
}

/* The peer's packet @p opcode to our QP, with IP traffic class @p tclass, received at @p now. */
static void
rx(uint8_t opcode, uint8_t tclass, uint32_t psn, uint64_t now)
{
	uint8_t frame[256];
	struct droce_pkt pkt = { 0 };
	int len;

	memcpy(pkt.smac, (uint8_t[6]){ 0x02, 0, 0, 0, 0, 2 }, 6);
	memcpy(pkt.dmac, (uint8_t[6]){ 0x02, 0, 0, 0, 0, 1 }, 6);
	memcpy(pkt.sgid, peer_gid, 16);
	memcpy(pkt.dgid, our_gid, 16);
	pkt.tclass = tclass;
	pkt.ttl = 64;
	pkt.ip_frag = 0x4000;
	pkt.sport = 0xc000;
	pkt.dport = DROCE_ROCEV2_UDP_PORT;
	pkt.opcode = opcode;
	pkt.pkey = DROCE_DEFAULT_PKEY;
	pkt.dqpn = qpn;
	pkt.psn = psn;
	pkt.becn = opcode == DROCE_OP_CNP;
	pkt.ackreq = opcode != DROCE_OP_CNP;
	pkt.deth.qkey = 0x11110000;	/* UD's DETH */
	pkt.deth.sqpn = PEER_QPN;
	/* a zero-length WRITE: no key to check, an ACK owed */
	len = droce_tqp_frame_build(&pkt, NULL, 0, frame, sizeof(frame));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(droce_pkt_parse_rx(&pkt, frame, (uint32_t)len, (uint32_t)len),
			 DROCE_WIRE_OK);
	droce_engine_rx(droce_dev_engine(dev, 0), &pkt, frame, (uint32_t)len, false, now);
}

/* The frame last sent into a pcap file at $DROCE_CNP_PCAP, for tests/tshark/cnp_decode.sh. */
static void
dump_pcap(void)
{
	const char *path = getenv("DROCE_CNP_PCAP");
	uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };	/* v2.4, Ethernet */
	uint32_t rec[4] = { 0, 0, out.len, out.len };
	FILE *f;

	if (path == NULL)
		return;
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(hdr, sizeof(hdr), 1, f) + fwrite(rec, sizeof(rec), 1, f) +
			  fwrite(out.frame, out.len, 1, f), 3);
	fclose(f);
}

static uint64_t
counter(enum droce_dev_counter c)
{
	struct droce_dev_stats st;

	droce_dev_stats(dev, &st);
	return st.cnt[c];
}

START_TEST(ce_marked_packet_gets_one_cnp_per_min_time)
{
	uint64_t t = 1000 * US;

	dev_up(0xff, 0xff);
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS | 3, 100, t);	/* CE */
	ck_assert_uint_eq(out.n, 1);
	ck_assert_uint_eq(out.pkt.opcode, 0x81);
	ck_assert(out.pkt.becn);
	ck_assert_uint_eq(out.pkt.dqpn, PEER_QPN);
	ck_assert_uint_eq(out.pkt.pkey, DROCE_DEFAULT_PKEY);
	ck_assert_uint_eq(out.pkt.tclass, 48 << 2);	/* DSCP 48, not ECN-capable */
	ck_assert_uint_eq(out.pkt.payload_len, 0);
	ck_assert_int_eq(memcmp(out.pkt.dgid, peer_gid, 16), 0);
	ck_assert_uint_eq(out.len, 14 + 20 + 8 + 12 + 16 + 4);	/* BTH, 16 reserved bytes, ICRC */
	for (unsigned int i = 0; i < 16; i++)
		ck_assert_uint_eq(out.pkt.cnp_resv[i], 0);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_ECN_MARKED_ROCE_PACKETS), 1);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_CNP_SENT), 1);
	dump_pcap();

	/* the QP's own packets: ECT(0) under its DSCP (its ACK at the next poll) */
	droce_engine_poll(droce_dev_engine(dev, 0), t);
	ck_assert_uint_eq(out.n, 2);
	ck_assert_uint_eq(out.pkt.opcode, DROCE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(out.pkt.tclass, TCLASS | 2);

	/* another mark within min_time_between_cnps (4 us): counted, not answered */
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS | 3, 101, t + 3 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_ECN_MARKED_ROCE_PACKETS), 2);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_CNP_SENT), 1);
	/* an unmarked ECT(0) packet: nothing */
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS | 2, 102, t + 10 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_ECN_MARKED_ROCE_PACKETS), 2);
	/* and past it: a CNP again */
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS | 3, 103, t + 11 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_CNP_SENT), 2);
	teardown();
}
END_TEST

START_TEST(np_off_for_the_priority_sends_no_cnp)
{
	dev_up(0xff & ~(1u << 3), 0);	/* NP off for priority 3; RP off: no ECT */
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS | 3, 100, 1000 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_ECN_MARKED_ROCE_PACKETS), 1);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_CNP_SENT), 0);
	droce_engine_poll(droce_dev_engine(dev, 0), 1000 * US);
	ck_assert_uint_eq(out.pkt.opcode, DROCE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(out.pkt.tclass, TCLASS);	/* not ECN-capable */
	teardown();
}
END_TEST

START_TEST(cnp_is_handled_by_the_rp_or_ignored)
{
	dev_up(0xff, 0xff);
	rx(DROCE_OP_CNP, 48 << 2, 0, 1000 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_HANDLED), 1);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_IGNORED), 0);
	ck_assert_uint_eq(out.n, 0);		/* never answered, never the transport's */
	teardown();

	dev_up(0xff, 0);			/* RP off */
	rx(DROCE_OP_CNP, 48 << 2, 0, 1000 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_HANDLED), 0);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_IGNORED), 1);
	teardown();
}
END_TEST

/* UC is answered as RC is; UD never (no single source), nor counted */
START_TEST(uc_gets_cnps_ud_never)
{
	dev_up_qp(IBV_QPT_UC, 0xff, 0xff);
	rx(DROCE_OP_UC_WRITE_ONLY, TCLASS | 3, 100, 1000 * US);
	ck_assert_uint_eq(out.n, 1);
	ck_assert_uint_eq(out.pkt.opcode, 0x81);
	ck_assert_uint_eq(out.pkt.dqpn, PEER_QPN);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_CNP_SENT), 1);
	rx(DROCE_OP_CNP, 48 << 2, 0, 1000 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_HANDLED), 1);
	teardown();

	dev_up_qp(IBV_QPT_UD, 0xff, 0xff);
	rx(DROCE_OP_UD_SEND_ONLY, TCLASS | 3, 0, 1000 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_ECN_MARKED_ROCE_PACKETS), 0);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_CNP_SENT), 0);
	ck_assert_uint_eq(out.n, 0);
	rx(DROCE_OP_CNP, 48 << 2, 0, 1000 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_HANDLED), 0);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_IGNORED), 1);
	teardown();
}
END_TEST

/* What droce-ctl qps shows: the rates of a QP DCQCN holds, of a limited QP; a copy moves on in time. */
START_TEST(qp_rate_shows_dcqcn_and_the_limit)
{
	struct droce_ctrl_modify_qp_rate_limit_req lim = { .rate_limit = 10000 };	/* 10 Mb/s */
	struct droce_qp_rate r, later, again;
	uint64_t t = 1000 * US, line;
	uint32_t qpns[4];

	dev_up(0xff, 0xff);
	ck_assert_uint_eq(droce_dev_qpns(dev, qpns, 4), 1);
	ck_assert_uint_eq(qpns[0], qpn);
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn + 1, t, &r), -ENOENT);
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn, t, &r), 0);
	line = r.line;
	ck_assert_uint_gt(line, 0);
	ck_assert_uint_eq(r.qpn, qpn);
	ck_assert_int_eq(r.type, IBV_QPT_RC);
	ck_assert_int_eq(r.state, IBV_QPS_RTS);
	ck_assert(!r.dcqcn_limited);
	ck_assert_uint_eq(r.rate, line);		/* unpaced */
	ck_assert_uint_eq(r.limit, 0);
	ck_assert_uint_eq(r.cnp_handled, 0);

	/* a first CNP: RC <- RC * (1 - alpha/2), alpha = 1023/1024, RT stays at line */
	rx(DROCE_OP_CNP, 48 << 2, 0, t);
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn, t, &r), 0);
	ck_assert(r.dcqcn_limited);
	ck_assert_uint_eq(r.cnp_handled, 1);
	ck_assert_uint_eq(r.dcqcn_alpha, 1023);
	ck_assert_uint_eq(r.dcqcn_rt, line);
	ck_assert_uint_eq(r.dcqcn_rc, (uint64_t)((double)line * (1.0 - 1023.0 / 2048.0)));
	ck_assert_uint_eq(r.rate, r.dcqcn_rc);
	ck_assert_uint_lt(r.rate, line);

	/* seen 10 ms later the timer's increases count; the QP itself is left as it was */
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn, t + 10000 * US, &later), 0);
	ck_assert_uint_gt(later.dcqcn_rc, r.dcqcn_rc);
	ck_assert_uint_lt(later.dcqcn_alpha, r.dcqcn_alpha);
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn, t, &again), 0);
	ck_assert_uint_eq(again.dcqcn_rc, r.dcqcn_rc);

	/* a rate limit below DCQCN's rate: the QP runs at its limit */
	lim.qp_handle = qp_handle;
	ck_assert_int_eq(call(DROCE_CTRL_MODIFY_QP_RATE_LIMIT, &lim, sizeof(lim), NULL), 0);
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn, t, &r), 0);
	ck_assert_uint_eq(r.limit, 10000000);
	ck_assert_uint_eq(r.rate, 10000000);
	ck_assert(r.dcqcn_limited);
	teardown();
}
END_TEST

/* droce_dev_cc_set() on a live QP: its ECN field, its DCQCN state, CNPs sent and handled follow */
START_TEST(cc_set_applies_to_live_qps)
{
	struct droce_dcqcn_params p;
	struct droce_qp_rate r;
	uint64_t t = 1000 * US;
	uint8_t np, rp;

	dev_up(0xff, 0xff);
	rx(DROCE_OP_CNP, 48 << 2, 0, t);
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn, t, &r), 0);
	ck_assert(r.dcqcn_limited);

	/* the RP off for priority 3: no ECT(0), DCQCN lets go, CNPs ignored */
	droce_dev_cc_get(dev, &np, &rp, &p);
	ck_assert_uint_eq(np, 0xff);
	ck_assert_uint_eq(rp, 0xff);
	ck_assert_uint_eq(p.cnp_dscp, 48);
	p.cnp_dscp = 40;
	droce_dev_cc_set(dev, 0xff, 0xff & ~(1u << 3), &p);
	droce_dev_cc_get(dev, &np, &rp, &p);
	ck_assert_uint_eq(rp, 0xf7);
	ck_assert_uint_eq(p.cnp_dscp, 40);
	ck_assert_int_eq(droce_dev_qp_rate(dev, qpn, t, &r), 0);
	ck_assert(!r.dcqcn_limited);
	ck_assert_uint_eq(r.rate, r.line);
	rx(DROCE_OP_CNP, 48 << 2, 0, t + 10 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_RP_CNP_IGNORED), 1);
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS | 3, 100, t + 20 * US);	/* CE: a CNP at DSCP 40 */
	ck_assert_uint_eq(out.n, 1);
	ck_assert_uint_eq(out.pkt.opcode, 0x81);
	ck_assert_uint_eq(out.pkt.tclass, 40 << 2);
	droce_engine_poll(droce_dev_engine(dev, 0), t + 20 * US);
	ck_assert_uint_eq(out.pkt.opcode, DROCE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(out.pkt.tclass, TCLASS);		/* not ECN-capable any more */

	/* back on: ECT(0) again; the NP off: a mark gets no CNP */
	droce_dev_cc_set(dev, 0, 0xff, &p);
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS | 3, 101, t + 40 * US);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_NP_CNP_SENT), 1);
	droce_engine_poll(droce_dev_engine(dev, 0), t + 40 * US);
	ck_assert_uint_eq(out.pkt.opcode, DROCE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(out.pkt.tclass, TCLASS | 2);
	teardown();
}
END_TEST

/* While the port has no room no QP is polled; the ones not reached go first next pass */
START_TEST(full_link_holds_qps_back)
{
	uint32_t first, second;
	uint64_t t = 1000 * US;

	dev_up(0, 0);
	first = qpn;
	qp_up(IBV_QPT_RC, PEER_QPN + 1);
	second = qpn;
	qpn = first;
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS, 100, t);	/* an ACK owed by each */
	qpn = second;
	rx(DROCE_OP_RC_WRITE_ONLY, TCLASS, 100, t);
	ck_assert_uint_eq(out.n, 0);

	room_polls = 0;
	droce_engine_poll(droce_dev_engine(dev, 0), t);
	ck_assert_uint_eq(out.n, 0);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_TX_HELD), 1);
	room_polls = 1;				/* one QP a pass */
	droce_engine_poll(droce_dev_engine(dev, 0), t);
	ck_assert_uint_eq(out.n, 1);
	room_polls = 1;
	droce_engine_poll(droce_dev_engine(dev, 0), t);
	ck_assert_uint_eq(out.n, 2);
	ck_assert_uint_eq(counter(DROCE_DEV_CNT_TX_HELD), 2);
	ck_assert_uint_ne(out.dqpn[0], out.dqpn[1]);
	ck_assert_uint_eq(out.dqpn[0] + out.dqpn[1], 2 * PEER_QPN + 1);
	room_polls = -1;
	teardown();
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("verbs-cc");
	TCase *tc = tcase_create("ecn");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, ce_marked_packet_gets_one_cnp_per_min_time);
	tcase_add_test(tc, np_off_for_the_priority_sends_no_cnp);
	tcase_add_test(tc, cnp_is_handled_by_the_rp_or_ignored);
	tcase_add_test(tc, uc_gets_cnps_ud_never);
	tcase_add_test(tc, qp_rate_shows_dcqcn_and_the_limit);
	tcase_add_test(tc, cc_set_applies_to_live_qps);
	tcase_add_test(tc, full_link_holds_qps_back);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
