/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The verbs end of droce-testpmd's tests against droced (run it with
 * droce-run): one RC QP and one memory region through the plain verbs API.
 *
 *   verbs_peer write|send|read|fadd|cswap|ud REMOTE_IP REMOTE_QPN SIZE COUNT
 *       serve a droce-testpmd generator of that mode (ud: Q_Key 0x11111111)
 *       sending COUNT messages of SIZE bytes: print "qpn Q rkey K addr A
 *       len L" (give the generator --rlen L: every WRITE and READ gets a
 *       slot of its own), and when stdin ends (the generator is done) check
 *       exactly what it did:
 *         write  slot n holds message n, byte for byte; nothing past them
 *         send, ud  COUNT receives completed in order, each with message n
 *                byte for byte (status, opcode, length, flags, UD source)
 *         read   the region, which held the pattern, still does (the
 *                generator checks what it read: run it with --check)
 *         fadd, cswap  the 8 words at A, which started as the pattern, each
 *                ended one higher per atomic sent to it (the generator
 *                checks each returned value with --check)
 *   verbs_peer source REMOTE_IP REMOTE_QPN COUNT
 *       drive a droce-testpmd responder (key 0x1000, address 0, its memory
 *       the pattern): print "qpn Q", wait for "go" on stdin, then COUNT
 *       rounds of: READ an untouched stretch and check the pattern; WRITE a
 *       message of its own and READ it back; FETCH_ADD 1 to word 0 and
 *       compare-and-swap word 8 in a chain (now and then with a wrong
 *       compare, which must fail), each returned value checked; then READ
 *       back every message and both words in one go
 *   verbs_peer udsource REMOTE_IP REMOTE_QPN COUNT
 *       print "qpn Q", wait for "go", send COUNT UD messages of 256 bytes
 *       (for droce-testpmd's raw mode, which checks and counts them)
 * Prints "ok", or FAIL and what differed; exit 0 only on "ok".
 *
 * droce-testpmd's memory holds the pattern, byte i = i mod 251, and a
 * generator posts message n of its (one) QP from offset (n mod 16) * SIZE.
 */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rc_connect.h"

#define GID_INDEX	1		/* droce's first IPv4 GID */
#define DEPTH		16		/* droce-testpmd's default --depth */
#define RECVS		1024		/* at 5000 UD messages/s, 200 ms without a poll */
#define TP_KEY		0x1000		/* droce-testpmd's default --key */
#define TP_QPN		0x100		/* droce-testpmd's default --qpn */
#define TP_QKEY		0x11111111	/* droce-testpmd's default --qkey */
#define GRH		40		/* UD receives start with the GRH area */
#define PERIOD		251		/* the pattern: byte i = i mod 251 */
#define WORDS		8		/* atomics: the words a generator spreads over */
#define GUARD		4096		/* past what a generator may touch */

struct peer {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;		/* UD: to the remote */
	uint32_t remote_qpn;
	uint8_t *buf;
	size_t len;
};

static void
die(const char *what)
{
	fprintf(stderr, "FAIL %s\n", what);
	exit(1);
}

static uint8_t
pattern(uint64_t i)
{
	return (uint8_t)(i % PERIOD);
}

static void
fill_pattern(uint8_t *buf, uint64_t from, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		buf[j] = pattern(from + j);
}

/* The first byte of @p buf that is not the pattern from @p from, or @p len. */
static size_t
pattern_differs(const uint8_t *buf, uint64_t from, size_t len)
{
	size_t j;

	for (j = 0; j < len && buf[j] == pattern(from + j); j++)
		;
	return j;
}

/* The 64-bit word the pattern holds at byte @p from (host order, as atomics see it). */
static uint64_t
pattern_word(uint64_t from)
{
	uint8_t b[8];
	uint64_t w;

	fill_pattern(b, from, sizeof(b));
	memcpy(&w, b, sizeof(w));
	return w;
}

static uint64_t
word_at(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

static void
setup_ud(struct peer *p, const struct ibv_ah_attr *ah)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = TP_QKEY };

	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE))
		die("UD RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
	p->ah = ibv_create_ah(p->pd, (struct ibv_ah_attr *)ah);
	if (p->ah == NULL)
		die("AH");
}

static void
setup(struct peer *p, enum ibv_qp_type type, const char *remote_ip, uint32_t remote_qpn,
      size_t len)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct in_addr ip;

	if (list == NULL || list[0] == NULL || (p->ctx = ibv_open_device(list[0])) == NULL)
		die("no device");
	ibv_free_device_list(list);
	p->len = len;
	p->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = ibv_create_cq(p->ctx, 2 * RECVS, NULL, NULL, 0);
	if (p->buf == NULL || p->pd == NULL || p->cq == NULL)
		die("pd/cq");
	memset(p->buf, 0, len);
	p->mr = ibv_reg_mr(p->pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	init.send_cq = init.recv_cq = p->cq;
	init.qp_type = type;
	init.cap.max_send_wr = 64;
	init.cap.max_recv_wr = RECVS;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	p->qp = ibv_create_qp(p->pd, &init);
	if (p->mr == NULL || p->qp == NULL)
		die("mr/qp");

	p->remote_qpn = remote_qpn;
	if (inet_pton(AF_INET, remote_ip, &ip) != 1)
		die("remote IP");
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid.raw[10] = a.ah_attr.grh.dgid.raw[11] = 0xff;
	memcpy(&a.ah_attr.grh.dgid.raw[12], &ip, 4);
	a.ah_attr.grh.sgid_index = GID_INDEX;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (type == IBV_QPT_UD) {
		setup_ud(p, &a.ah_attr);
		return;
	}
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS))
		die("INIT");
	{
		struct rc_peer peer = { .gid = a.ah_attr.grh.dgid, .sgid_index = GID_INDEX,
					.qpn = remote_qpn, .rq_psn = 0, .sq_psn = 0,
					.rd_atomic = 16, .timeout = 14 };	/* testpmd's PSNs: 0 */

		if (rc_connect(p->qp, &peer))
			die("RTR/RTS");
	}
}

/* Where droce-testpmd's message @p n of @p size bytes starts in its pattern. */
static uint64_t
message_from(uint64_t n, uint32_t size)
{
	return (n % DEPTH) * size;
}

/* ---- serving a generator ---- */

struct sink {
	struct peer *p;
	const char *mode;
	uint32_t size;
	uint32_t grh;			/* UD: receives start with the GRH */
	unsigned long long count;
	bool receives;			/* send, ud: the generator's messages come as receives */
	unsigned long long got;		/* receives completed */
	int bad;			/* receives that were not what was expected */
};

static void
post_recv(struct sink *s, uint32_t slot)
{
	uint32_t len = s->size + s->grh;
	struct ibv_sge sge = { (uintptr_t)s->p->buf + (size_t)slot * len, len, s->p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset((void *)(uintptr_t)sge.addr, 0, len);	/* no stale message passes */
	if (ibv_post_recv(s->p->qp, &wr, &bad))
		die("post_recv");
}

/* Receive n must be generator message n; print the first few that are not. */
static void
check_recv(struct sink *s, const struct ibv_wc *wc)
{
	const uint8_t *msg = s->p->buf + (wc->wr_id % RECVS) * (s->size + s->grh) + s->grh;
	unsigned int want_flags = s->grh ? IBV_WC_GRH : 0;
	size_t at = pattern_differs(msg, message_from(s->got, s->size), s->size);

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    wc->wr_id != s->got % RECVS || wc->byte_len != s->size + s->grh ||
	    (wc->wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM)) != want_flags ||
	    (s->grh && wc->src_qp != TP_QPN) || at != s->size) {
		if (s->bad++ < 5)
			fprintf(stderr, "FAIL receive %llu: %s, opcode %d, slot %llu, %u bytes, "
				"flags 0x%x, source QP 0x%x, data %s at byte %zu\n", s->got,
				ibv_wc_status_str(wc->status), wc->opcode,
				(unsigned long long)wc->wr_id, wc->byte_len, wc->wc_flags,
				wc->src_qp, at == s->size ? "as expected, ends" : "differs", at);
	}
	s->got++;
}

/* Drain the CQ: @return how many completions there were. */
static int
poll_recvs(struct sink *s)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(s->p->cq, 16, wc), k;

	if (n < 0)
		die("poll_cq");
	for (k = 0; k < n; k++) {
		check_recv(s, &wc[k]);
		post_recv(s, (uint32_t)(wc[k].wr_id % RECVS));
	}
	return n;
}

/* Receive until stdin ends, then what is still on its way (UD has no ack). */
static void
receive_until_done(struct sink *s)
{
	char junk[64];
	int idle = 0;

	for (;;) {
		fd_set in;
		struct timeval tv = { 0, 2000 };

		if (poll_recvs(s) > 0)
			continue;
		FD_ZERO(&in);
		FD_SET(0, &in);
		if (select(1, &in, NULL, NULL, &tv) > 0 && read(0, junk, sizeof(junk)) <= 0)
			break;
	}
	while (s->receives && s->got < s->count && idle < 500) {	/* up to 1 s of quiet */
		if (poll_recvs(s) > 0)
			idle = 0;
		else
			idle++, usleep(2000);
	}
}

/* write: slot n holds message n; the guard past the slots is untouched. */
static int
check_writes(struct sink *s)
{
	unsigned long long n;
	int bad = 0;
	size_t at;

	for (n = 0; n < s->count; n++) {
		at = pattern_differs(s->p->buf + n * s->size, message_from(n, s->size), s->size);
		if (at != s->size && bad++ < 5)
			fprintf(stderr, "FAIL write: slot %llu differs from message %llu at byte "
				"%zu\n", n, n, at);
	}
	for (at = s->count * s->size; at < s->p->len && s->p->buf[at] == 0; at++)
		;
	if (at != s->p->len && bad++ < 5)
		fprintf(stderr, "FAIL write: byte %zu past the slots was written\n", at);
	return bad;
}

/* read, fadd, cswap: the region holds the pattern, but for the atomics' words. */
static int
check_region(struct sink *s)
{
	size_t from = strcmp(s->mode, "read") == 0 ? 0 : 8 * WORDS, at;
	uint8_t *buf = s->p->buf;
	unsigned int w;
	int bad = 0;

	for (w = 0; w < from / 8; w++) {
		/* word w got one atomic for each n = w mod WORDS */
		uint64_t want = pattern_word(8 * w) + s->count / WORDS + (w < s->count % WORDS);

		if (word_at(buf + 8 * w) != want && bad++ < 5)
			fprintf(stderr, "FAIL %s: word %u is %llu, expected %llu\n", s->mode, w,
				(unsigned long long)word_at(buf + 8 * w), (unsigned long long)want);
	}
	at = from + pattern_differs(buf + from, from, s->p->len - from);
	if (at != s->p->len && bad++ < 5)
		fprintf(stderr, "FAIL %s: byte %zu of the region changed\n", s->mode, at);
	return bad;
}

static int
sink(struct peer *p, const char *mode, uint32_t size, uint32_t grh, unsigned long long count,
     size_t rlen)
{
	bool receives = strcmp(mode, "send") == 0 || strcmp(mode, "ud") == 0;
	struct sink s = { p, mode, size, grh, count, receives, 0, 0 };
	uint32_t i;
	int bad;

	if (strcmp(mode, "write") != 0 && !receives)
		fill_pattern(p->buf, 0, p->len);
	for (i = 0; receives && i < RECVS; i++)
		post_recv(&s, i);
	printf("qpn %u rkey %u addr %llu len %zu\n", p->qp->qp_num, p->mr->rkey,
	       (unsigned long long)(uintptr_t)p->buf, rlen);
	fflush(stdout);
	receive_until_done(&s);
	if (receives) {
		bad = s.bad;
		if (s.got != count) {
			fprintf(stderr, "FAIL %s: %llu received, %llu expected\n", mode, s.got,
				count);
			bad++;
		}
	} else {
		bad = strcmp(mode, "write") == 0 ? check_writes(&s) : check_region(&s);
		if (s.got != 0) {
			fprintf(stderr, "FAIL %s: %llu unexpected completions\n", mode, s.got);
			bad++;
		}
	}
	if (bad)
		return 1;
	printf("ok\n");
	return 0;
}

/* ---- driving a responder ---- */

/* Post one send WR and wait for its completion; any failure ends the program. */
static void
one(struct peer *p, enum ibv_wr_opcode op, uint8_t *local, uint32_t len, uint64_t raddr,
    uint64_t compare_add, uint64_t swap)
{
	static const enum ibv_wc_opcode wc_op[] = {
		[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE, [IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
		[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
	};
	struct ibv_sge sge = { (uintptr_t)local, len, p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = TP_KEY;
		wr.wr.atomic.compare_add = compare_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = TP_KEY;
	}
	if (ibv_post_send(p->qp, &wr, &bad))
		die("post_send");
	while ((n = ibv_poll_cq(p->cq, 1, &wc)) == 0)
		usleep(50);
	if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.wr_id != op || wc.opcode != wc_op[op]) {
		fprintf(stderr, "FAIL operation %d: %s, opcode %d\n", op,
			n < 0 ? "poll_cq failed" : ibv_wc_status_str(wc.status), wc.opcode);
		exit(1);
	}
}

/* The responder's memory: where each part of the test lives. */
#define R_FADD		0		/* FETCH_ADD's word */
#define R_CSWAP		8		/* compare-and-swap's word */
#define R_WRITES	(64u << 10)	/* message i at + i * MSG */
#define R_PRISTINE	(1u << 20)	/* never written: READ, expect the pattern */
#define MSG		1000		/* one packet each at path MTU 1024 */

/* The one message of its own the source WRITEs as @p i. */
static uint8_t
source_byte(unsigned long long i, uint32_t j)
{
	return (uint8_t)(i * 7 + j);
}

static bool
is_source_message(const uint8_t *msg, unsigned long long i)
{
	uint32_t j;

	for (j = 0; j < MSG && msg[j] == source_byte(i, j); j++)
		;
	if (j != MSG)
		fprintf(stderr, "FAIL message %llu read back differs at byte %u\n", i, j);
	return j == MSG;
}

static int
source(struct peer *p, unsigned long long count)
{
	const uint64_t fadd0 = pattern_word(R_FADD), cswap0 = pattern_word(R_CSWAP);
	uint8_t *word = p->buf, *msg = p->buf + 64, *all = p->buf + 4096;
	unsigned long long i;
	char line[16];
	size_t at;

	if (p->len < 4096 + count * MSG || R_WRITES + count * MSG > R_PRISTINE)
		die("COUNT too large");
	printf("qpn %u\n", p->qp->qp_num);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "go", 2) != 0)
		die("no go");
	for (i = 0; i < count; i++) {
		uint64_t raddr = R_PRISTINE + i * MSG;
		uint32_t j;

		memset(msg, 0, MSG);
		one(p, IBV_WR_RDMA_READ, msg, MSG, raddr, 0, 0);
		at = pattern_differs(msg, raddr, MSG);
		if (at != MSG) {
			fprintf(stderr, "FAIL READ %llu of the pattern differs at byte %zu\n", i, at);
			return 1;
		}

		for (j = 0; j < MSG; j++)
			msg[j] = source_byte(i, j);
		one(p, IBV_WR_RDMA_WRITE, msg, MSG, R_WRITES + i * MSG, 0, 0);
		memset(msg, 0, MSG);
		one(p, IBV_WR_RDMA_READ, msg, MSG, R_WRITES + i * MSG, 0, 0);
		if (!is_source_message(msg, i))
			return 1;

		one(p, IBV_WR_ATOMIC_FETCH_AND_ADD, word, 8, R_FADD, 1, 0);
		if (word_at(word) != fadd0 + i) {
			fprintf(stderr, "FAIL fetch-add %llu returned %llu, expected %llu\n", i,
				(unsigned long long)word_at(word), (unsigned long long)(fadd0 + i));
			return 1;
		}
		/* now and then a compare that does not match: no swap, the value returned */
		if (i % 10 == 0) {
			one(p, IBV_WR_ATOMIC_CMP_AND_SWP, word, 8, R_CSWAP, cswap0 + i + 1, 0);
			if (word_at(word) != cswap0 + i) {
				fprintf(stderr, "FAIL failing compare-and-swap %llu returned %llu, "
					"expected %llu\n", i, (unsigned long long)word_at(word),
					(unsigned long long)(cswap0 + i));
				return 1;
			}
		}
		one(p, IBV_WR_ATOMIC_CMP_AND_SWP, word, 8, R_CSWAP, cswap0 + i, cswap0 + i + 1);
		if (word_at(word) != cswap0 + i) {
			fprintf(stderr, "FAIL compare-and-swap %llu returned %llu, expected %llu\n",
				i, (unsigned long long)word_at(word),
				(unsigned long long)(cswap0 + i));
			return 1;
		}
	}
	/* everything once more, in multi-packet READs */
	memset(all, 0, count * MSG);
	one(p, IBV_WR_RDMA_READ, all, (uint32_t)(count * MSG), R_WRITES, 0, 0);
	for (i = 0; i < count; i++)
		if (!is_source_message(all + i * MSG, i))
			return 1;
	memset(word, 0, 16);
	one(p, IBV_WR_RDMA_READ, word, 16, R_FADD, 0, 0);
	if (word_at(word) != fadd0 + count || word_at(word + 8) != cswap0 + count) {
		fprintf(stderr, "FAIL the words ended at %llu and %llu, expected %llu and %llu\n",
			(unsigned long long)word_at(word), (unsigned long long)word_at(word + 8),
			(unsigned long long)(fadd0 + count), (unsigned long long)(cswap0 + count));
		return 1;
	}
	printf("ok\n");
	return 0;
}

static int
udsource(struct peer *p, unsigned long long count)
{
	struct ibv_sge sge = { (uintptr_t)p->buf, 256, p->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned long long i;
	char line[16];

	wr.wr.ud.ah = p->ah;
	wr.wr.ud.remote_qpn = p->remote_qpn;
	wr.wr.ud.remote_qkey = TP_QKEY;
	printf("qpn %u\n", p->qp->qp_num);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "go", 2) != 0)
		die("no go");
	for (i = 0; i < count; i++) {
		struct ibv_wc wc;
		int n;

		if (ibv_post_send(p->qp, &wr, &bad))
			die("post_send");
		while ((n = ibv_poll_cq(p->cq, 1, &wc)) == 0)
			usleep(20);	/* one at a time: the raw peer sees every one */
		if (n < 0 || wc.status != IBV_WC_SUCCESS)
			die("UD send completion");
	}
	printf("ok\n");
	return 0;
}

int
main(int argc, char **argv)
{
	static const char *const sinks[] = { "write", "send", "read", "fadd", "cswap", "ud" };
	struct peer p = { 0 };
	const char *mode = argc > 1 ? argv[1] : "";
	uint32_t remote_qpn = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 0;
	unsigned long long count;
	uint32_t size, grh;
	size_t rlen, len;
	unsigned int i;

	if (argc == 5 && (strcmp(mode, "source") == 0 || strcmp(mode, "udsource") == 0)) {
		bool ud = strcmp(mode, "udsource") == 0;

		count = strtoull(argv[4], NULL, 0);
		setup(&p, ud ? IBV_QPT_UD : IBV_QPT_RC, argv[2], remote_qpn,
		      4096 + (ud ? 256 : count * MSG));
		return ud ? udsource(&p, count) : source(&p, count);
	}
	for (i = 0; argc == 6 && i < sizeof(sinks) / sizeof(sinks[0]); i++)
		if (strcmp(mode, sinks[i]) == 0)
			break;
	if (argc != 6 || i == sizeof(sinks) / sizeof(sinks[0]))
		return 2;
	size = (uint32_t)strtoul(argv[4], NULL, 0);
	count = strtoull(argv[5], NULL, 0);
	grh = strcmp(mode, "ud") == 0 ? GRH : 0;
	if (strcmp(mode, "send") == 0 || grh) {
		rlen = size;
		len = (size_t)RECVS * (size + grh);
	} else {
		rlen = strcmp(mode, "fadd") == 0 || strcmp(mode, "cswap") == 0 ? 8 * WORDS :
		       count * size;
		len = rlen + GUARD;
	}
	setup(&p, grh ? IBV_QPT_UD : IBV_QPT_RC, argv[2], remote_qpn, len);
	return sink(&p, mode, size, grh, count, rlen);
}
