/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * traffic_check: end-to-end data and completion checker for any verbs
 * device. Built against the system libibverbs only, so the same binary runs
 * on droce (through droce-run) and on Linux Soft-RoCE (rdma-core 44).
 *
 *   traffic_check serve [options]
 *   traffic_check drive [options] SERVER_IP
 *   traffic_check drive --responder QPN:RKEY:ADDR:LEN[:PSN] [options] PEER_IP
 *
 * The client ("drive") runs a list of cases, each one transport, one
 * operation and one message size, in rounds; the server ("serve") is the
 * other end: receiver of SENDs, target of WRITEs, source of READs, holder
 * of the atomic words. QPN, PSN, GID, address and rkey go over a TCP socket
 * (fixed-size frames), and so does each round: ROUND (what comes), READY
 * (receives posted, memory filled), DONE (all posted and completed),
 * RESULT (the server's verdict).
 *
 * What is checked, every message:
 *   - every byte at the target (for READ at the requester; the source is
 *     checked unchanged too): payload bytes depend on (seed, transport,
 *     operation, size, sequence number, offset), and a message of 12 bytes
 *     or more starts with its sequence number, its length and a checksum
 *     of the rest, so a byte changed, shifted, duplicated or missing fails;
 *   - the memory around it: before each round both sides fill the regions
 *     it uses with a pattern of their own, and afterwards everything that
 *     is not a message must still hold it (guard bytes, receive slack,
 *     whole lanes);
 *   - each completion: status, opcode, qp_num, wr_id (in posting order),
 *     byte_len (receives; READ and atomics at the requester), wc_flags
 *     (IBV_WC_WITH_IMM; IBV_WC_GRH on UD, the only QP type where it is
 *     defined), imm_data (network order), src_qp and the 40-byte GRH
 *     area (UD);
 *   - RC: each message exactly once and in order; atomics return the value
 *     before them and leave the value planned (several ops per word, in
 *     order, so a replayed atomic that ran twice fails).
 * Layouts vary per message: 1 to 4 SGEs on the requester (each in its own
 * MR, odd lengths), 1 to 4 on the receive side with slack after the data,
 * start offsets that cross page and MTU boundaries, inline sends.
 *
 * --lossy (a link that loses, duplicates, reorders or corrupts frames):
 * RC is checked exactly as without it (go-back-N must hide the link). UC
 * and UD may lose whole messages, and a duplicated or late frame may
 * deliver a message twice or out of order (neither transport has a
 * receive-side PSN check that could stop it); that is counted, not failed.
 * What must hold: a delivered message is intact and its completion right;
 * an unsignalled UC WRITE leaves each target byte either the new value or
 * the old fill; bytes outside the targets are untouched; something got
 * through. A round that left receives posted resets the UC/UD QPs (ERR,
 * flush, RESET, up again) so the next round starts clean, and a UC WRITE
 * round targets a key of its own, so that a frame of an earlier round held
 * back on the link cannot land in it.
 * Without --lossy, UC and UD must deliver every message, in order.
 *
 * --responder: no server and no TCP. The other end is a plain RC
 * responder (droce-testpmd --mode responder) at PEER_IP with QPN (PSN,
 * default 0), whose LEN bytes at ADDR (key RKEY) start as byte x = x mod
 * 251. Only RC's one-sided operations: prints "qpn Q psn P" (give them to
 * the responder), waits for a line "go" on stdin, then for each size from
 * 1 B to --max-size: READs of memory nobody wrote (the pattern), WRITEs of
 * messages as above and READs of them back (1 to 4 SGEs each, into fresh
 * fill that is checked around them); FETCH_ADD and CMP_SWP chains whose
 * every returned value and final word is exact; at the end a READ of all
 * LEN bytes. A shadow of the responder's memory says what each READ must
 * bring. Every completion is checked as above.
 *
 * Exit status: 0 every check passed, 1 a check failed (or the peer went
 * away, or a wait timed out), 2 setup failed, 3 the whole run overran
 * --deadline.
 */

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "tcp_rendezvous.h"

#define TC_PORT		18530
#define LANES		4		/* SGE j of a message lives in lane j (its own MR) */
#define LANE_BYTES	(6u << 20)	/* one 4 MiB + 1 message with its margins */
#define BUF_BYTES	(LANES * LANE_BYTES)
#define PAGE		4096u
#define GUARD		64u		/* at least this much fill before and after a piece */
#define MAXOFF		8192u		/* piece start offsets are below this */
#define SLACK_MAX	64u		/* extra receive space after the data */
#define HDR_BYTES	12u		/* seq, length, checksum */
#define GRH_BYTES	40u
#define MAX_SGE		4
#define SQ_DEPTH	128
#define RQ_DEPTH	512
#define CQ_DEPTH	2048
#define WINDOW		32		/* send WRs outstanding */
#define ROUND_MAX	256		/* messages per round */
#define ATOM_WORDS	8
#define QKEY		0x11111111u
#define QUIET_MS	200		/* lossy UC/UD: nothing more for this long = done */
/*
 * UC and UD have nothing that recovers a frame the receiver dropped, and a
 * receiver that falls behind drops (af_packet's ring holds 512 frames). So
 * a UC/UD round puts at most this many frames on the wire, and a UC
 * message spans at most this many, so that a clean link must deliver all.
 */
#define UNRELIABLE_FRAMES 128
/*
 * --lossy: a UC message of more frames rarely survives: any lost,
 * duplicated or reordered frame discards it (10% loss, 5% duplication and
 * 10% reordering each way leave a 5-frame message about 1 chance in 8).
 */
#define LOSSY_UC_FRAMES	2
#define MAX_SIZE	((4u << 20) + 1)
#define DIM(a)		(sizeof(a) / sizeof((a)[0]))

enum tc_tp { TP_RC, TP_UC, TP_UD, TP_N };
enum tc_op { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_FADD, OP_CSWAP, OP_N };

static const char *const tp_name[TP_N] = { "rc", "uc", "ud" };
static const char *const op_name[OP_N] = {
	"send", "send_imm", "write", "write_imm", "read", "fetch_add", "cmp_swap",
};
static const enum ibv_qp_type tp_qpt[TP_N] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

static bool
op_is_send(unsigned int op)
{
	return op == OP_SEND || op == OP_SEND_IMM;
}

static bool
op_is_atomic(unsigned int op)
{
	return op == OP_FADD || op == OP_CSWAP;
}

static bool
op_has_imm(unsigned int op)
{
	return op == OP_SEND_IMM || op == OP_WRITE_IMM;
}

/* Does the server post a receive per message? */
static bool
op_uses_recv(unsigned int op)
{
	return op_is_send(op) || op == OP_WRITE_IMM;
}

struct opts {
	const char *dev;
	const char *host;
	const char *cases;
	int gidx;
	int mtu;		/* bytes, 0: the port's active MTU */
	int port;
	uint32_t seed;
	uint32_t count;		/* messages per case (fewer for big ones) */
	uint64_t budget;	/* bytes per case */
	uint32_t max_size;
	int repeat;
	int seconds;
	int wait_s;		/* for one completion */
	int deadline_s;		/* for the whole run */
	int qp_timeout;		/* 4.096 us * 2^qp_timeout */
	int retry;
	bool lossy;
	bool poll;
};

/* Frames on the TCP socket: all fields big-endian on the wire. */
enum ctl_type { CTL_HELLO = 1, CTL_ROUND, CTL_READY, CTL_DONE, CTL_RESULT, CTL_END };

struct ctl {
	uint32_t type;
	uint32_t pad;
	uint64_t v[12];
	char text[192];
};

struct peer {
	uint32_t qpn[TP_N];
	uint32_t psn[TP_N];
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
	uint32_t mtu;		/* bytes */
	uint32_t rd_atom;
};

struct piece {
	uint32_t lane;
	uint32_t off;		/* in the lane */
	uint32_t len;
};

struct layout {
	int n;
	uint64_t total;
	struct piece p[MAX_SGE];
};

struct round {
	uint32_t tp, op, size, n;
	uint64_t first;		/* sequence number of message 0 */
	uint64_t stride;	/* bytes per message slot in a lane */
	uint32_t seed;
	bool lossy;
	uint64_t salt;		/* this side's fill */
};

/* What a round came to. */
struct stats {
	uint32_t delivered, dup, reorder;
	bool resync;		/* receives were left: UC/UD QPs reset */
};

/* --responder: the plain responder driven, and what its memory must hold. */
struct rs {
	uint32_t qpn, rkey, psn;
	uint64_t addr, len;
	uint8_t *shadow;
};

struct tc {
	struct opts o;
	struct rs rs;
	bool client;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	bool armed_s, armed_r;
	unsigned int unacked;
	struct ibv_qp *qp[TP_N];
	uint32_t psn[TP_N];
	struct ibv_ah *ah;
	uint8_t *buf;
	struct ibv_mr *mr_all, *mr_lane[LANES];
	union ibv_gid gid;
	struct peer peer;
	uint32_t mtu;
	enum ibv_mtu mtu_enum;
	int max_sge, max_inline, rd_atom;
	bool atomics;
	int sock;
	uint64_t rounds;
	bool broken;		/* a QP went to error: stop */
	/* this round's failures */
	int fails;
	char why[192];
	uint64_t bytes_checked;
};

static void
die(const char *what)
{
	fprintf(stderr, "traffic_check: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void
bail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	exit(1);
}

/* Record a failed check of this round; the first one is the round's verdict. */
static void
rfail(struct tc *t, const char *fmt, ...)
{
	char line[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (t->fails == 0)
		snprintf(t->why, sizeof(t->why), "%s", line);
	if (t->fails < 8)
		printf("  %s: %s\n", t->client ? "drive" : "serve", line);
	fflush(stdout);
	t->fails++;
}

static void
on_alarm(int sig)
{
	static const char msg[] = "FAIL traffic_check: deadline passed (hang?)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- patterns ---- */

static inline uint64_t
mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The bytes of one message: a header, then a stream no shift reproduces. */
struct gen {
	uint64_t key;
	uint64_t size;
	bool has_hdr;
	uint8_t hdr[HDR_BYTES];
	uint64_t widx;
	uint64_t w;
};

static inline uint8_t
pat_byte(struct gen *g, uint64_t i)
{
	uint64_t wi = i >> 3;

	if (wi != g->widx) {
		g->widx = wi;
		g->w = mix64(g->key ^ (wi * 0xd6e8feb86659fd93ull));
	}
	return (uint8_t)(g->w >> (8 * (i & 7)));
}

static inline uint8_t
gen_byte(struct gen *g, uint64_t i)
{
	if (g->has_hdr && i < HDR_BYTES)
		return g->hdr[i];
	return pat_byte(g, i);
}

static uint64_t
msg_key(const struct round *r, uint64_t seq)
{
	return mix64((uint64_t)r->seed * 0x100000001b3ull ^ ((uint64_t)r->tp << 56) ^
		     ((uint64_t)r->op << 48) ^ r->size ^ mix64(seq));
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t
get_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
gen_init(struct gen *g, const struct round *r, uint64_t seq)
{
	uint32_t csum = 2166136261u;	/* FNV-1a over the bytes after the header */
	uint64_t i;

	g->key = msg_key(r, seq);
	g->size = r->size;
	g->widx = UINT64_MAX;
	g->has_hdr = r->size >= HDR_BYTES;
	if (!g->has_hdr)
		return;
	for (i = HDR_BYTES; i < r->size; i++)
		csum = (csum ^ pat_byte(g, i)) * 16777619u;
	put_le32(&g->hdr[0], (uint32_t)seq);
	put_le32(&g->hdr[4], r->size);
	put_le32(&g->hdr[8], csum);
}

/* The fill of this side's buffer at offset x, this round. */
static inline uint64_t
fill_word(uint64_t salt, uint64_t widx)
{
	return mix64(salt ^ (widx * 0xa0761d6478bd642full));
}

static inline uint8_t
fill_byte(uint64_t salt, uint64_t x)
{
	return (uint8_t)(fill_word(salt, x >> 3) >> (8 * (x & 7)));
}

/* imm_data: the low 20 bits carry the sequence number, the rest the seed. */
static uint32_t
imm_of(const struct round *r, uint64_t seq)
{
	return ((uint32_t)mix64(r->seed) & 0xfff00000u) | (uint32_t)(seq & 0xfffffu);
}

/* ---- TCP ---- */

static void
io_all(int fd, void *p, size_t len, bool wr)
{
	uint8_t *b = p;

	while (len > 0) {
		ssize_t n = wr ? write(fd, b, len) : read(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			bail("traffic_check: peer went away (%s)", n == 0 ? "closed" : strerror(errno));
		b += n;
		len -= (size_t)n;
	}
}

static void
ctl_send(struct tc *t, uint32_t type, const uint64_t *v, int nv, const char *text)
{
	struct ctl m;
	int i;

	memset(&m, 0, sizeof(m));
	m.type = htonl(type);
	for (i = 0; i < nv; i++)
		m.v[i] = htobe64(v[i]);
	if (text != NULL)
		snprintf(m.text, sizeof(m.text), "%s", text);
	io_all(t->sock, &m, sizeof(m), true);
}

static void
ctl_recv(struct tc *t, uint32_t want, struct ctl *m)
{
	int i;

	io_all(t->sock, m, sizeof(*m), false);
	m->type = ntohl(m->type);
	for (i = 0; i < 12; i++)
		m->v[i] = be64toh(m->v[i]);
	m->text[sizeof(m->text) - 1] = '\0';
	if (want != 0 && m->type != want)
		bail("traffic_check: protocol: got frame %u, want %u", m->type, want);
}

/* ---- completions ---- */

/*
 * Next completion on cq within timeout_ms: 1, or 0 on timeout. With events
 * the CQ is armed and polled again before sleeping on the channel, so a
 * completion that raced the arming is never missed; one channel serves
 * both CQs, and an event for the other CQ only disarms it.
 */
static int
cq_next(struct tc *t, struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	bool *armed = cq == t->scq ? &t->armed_s : &t->armed_r;

	for (;;) {
		struct pollfd pfd = { .fd = t->ch->fd, .events = POLLIN };
		struct ibv_cq *ecq;
		void *ectx;
		int64_t left;
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			bail("traffic_check: ibv_poll_cq returned %d", n);
		if (n == 1)
			return 1;
		left = end - now_ms();
		if (left <= 0)
			return 0;
		if (t->o.poll)
			continue;
		if (!*armed) {
			if (ibv_req_notify_cq(cq, 0))
				bail("traffic_check: ibv_req_notify_cq failed");
			*armed = true;
			continue;
		}
		n = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR)
			bail("traffic_check: poll on the completion channel: %s", strerror(errno));
		if (n <= 0 || ibv_get_cq_event(t->ch, &ecq, &ectx) != 0)
			continue;
		ibv_ack_cq_events(ecq, 1);
		if (ecq == t->scq)
			t->armed_s = false;
		else if (ecq == t->rcq)
			t->armed_r = false;
	}
}

static const char *
wc_str(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

/* ---- memory ---- */

static inline uint8_t *
lane_ptr(const struct tc *t, uint32_t lane, uint64_t off)
{
	return t->buf + (uint64_t)lane * LANE_BYTES + off;
}

static void
region_fill(struct tc *t, const struct round *r, int lanes, uint64_t bytes)
{
	int l;

	for (l = 0; l < lanes; l++) {
		uint64_t base = (uint64_t)l * LANE_BYTES, x;

		for (x = 0; x < bytes; x += 8) {
			uint64_t w = htole64(fill_word(r->salt, (base + x) >> 3));

			memcpy(t->buf + base + x, &w, 8);
		}
	}
}

/* Everything in the used lanes must hold the fill now. */
static void
region_scan(struct tc *t, const struct round *r, int lanes, uint64_t bytes, const char *what)
{
	int l;

	for (l = 0; l < lanes; l++) {
		uint64_t base = (uint64_t)l * LANE_BYTES, x;

		t->bytes_checked += bytes;
		for (x = 0; x < bytes; x += 8) {
			uint64_t w = htole64(fill_word(r->salt, (base + x) >> 3)), have;
			unsigned int b;

			memcpy(&have, t->buf + base + x, 8);
			if (have == w)
				continue;
			for (b = 0; b < 8 && ((uint8_t *)&have)[b] == ((uint8_t *)&w)[b]; b++)
				;
			rfail(t, "%s: byte at lane %d +%#" PRIx64 " outside every message changed "
			      "(0x%02x, fill 0x%02x)", what, l, x + b, ((uint8_t *)&have)[b],
			      ((uint8_t *)&w)[b]);
			return;
		}
	}
}

/* ---- layouts ---- */

/* Piece start offsets: page (4096) and sub-page edges, odd places. */
static const uint32_t piece_offs[] = {
	0, 1, 2, 7, 63, 64, 511, 1000, 1023, 2047, 2049, 3071, 4093, 4095, 4096, 4097, 5000, 8000,
};
static const int sge_client[4] = { 1, 3, 2, 4 };
static const int sge_server[4] = { 1, 2, 4, 3 };

static uint64_t
round_stride(uint32_t size)
{
	uint64_t need = (uint64_t)size + SLACK_MAX + GRH_BYTES + 2 * GUARD + MAXOFF;

	return (need + PAGE - 1) / PAGE * PAGE;
}

static uint32_t
recv_slack(uint64_t seq)
{
	return (uint32_t)(seq % 3) * 17;
}

/* Where message k of round r lives on one side, as SGEs in lanes. */
static void
layout_of(const struct round *r, bool client, int max_sge, uint32_t k, struct layout *L)
{
	uint64_t seq = r->first + k;
	uint64_t h = mix64(seq * 2 + client + ((uint64_t)r->seed << 32));
	uint64_t total = r->size, left;
	int n = 1, j;

	if (client && !op_is_atomic(r->op))
		n = sge_client[seq % 4];
	else if (!client && op_is_send(r->op)) {
		n = sge_server[seq % 4];
		total += recv_slack(seq) + (r->tp == TP_UD ? GRH_BYTES : 0);
	}
	if (n > max_sge)
		n = max_sge;
	if ((uint64_t)n > total)
		n = (int)total;
	L->n = n;
	L->total = total;
	left = total;
	for (j = 0; j < n; j++) {
		uint64_t base = total / n, len;

		if (j == n - 1)
			len = left;
		else {
			uint64_t jit = base / 4 + 1;

			len = base - base / 8 + (mix64(h + j) % jit);
			len |= 1;	/* odd lengths */
			if (len > left - (uint64_t)(n - 1 - j))
				len = left - (uint64_t)(n - 1 - j);
			if (len == 0)
				len = 1;
		}
		left -= len;
		L->p[j].lane = (uint32_t)j;
		L->p[j].off = (uint32_t)(k * r->stride + GUARD +
					 piece_offs[(h + (uint64_t)j * 7) % DIM(piece_offs)]);
		L->p[j].len = (uint32_t)len;
	}
}

/* Copy len bytes at stream position pos of a layout out of memory. */
static void
stream_read(const struct tc *t, const struct layout *L, uint64_t pos, uint8_t *out, uint64_t len)
{
	int j;

	for (j = 0; j < L->n && len > 0; j++) {
		uint64_t plen = L->p[j].len;

		if (pos >= plen) {
			pos -= plen;
			continue;
		}
		while (pos < plen && len > 0) {
			*out++ = *lane_ptr(t, L->p[j].lane, L->p[j].off + pos);
			pos++;
			len--;
		}
		pos = 0;
	}
}

static void
layout_write(struct tc *t, const struct layout *L, struct gen *g)
{
	uint64_t pos = 0;
	int j;

	for (j = 0; j < L->n; j++) {
		uint8_t *p = lane_ptr(t, L->p[j].lane, L->p[j].off);
		uint32_t b;

		for (b = 0; b < L->p[j].len; b++)
			p[b] = gen_byte(g, pos++);
	}
}

/* Put the fill back over a layout, so that region_scan() sees only the rest. */
static void
layout_restore(struct tc *t, const struct round *r, const struct layout *L)
{
	int j;

	for (j = 0; j < L->n; j++) {
		uint64_t x = (uint64_t)L->p[j].lane * LANE_BYTES + L->p[j].off;
		uint32_t b;

		for (b = 0; b < L->p[j].len; b++)
			t->buf[x + b] = fill_byte(r->salt, x + b);
	}
}

/* Do the 16 bytes from data byte i hold the message moved by one? */
static const char *
shift_hint(const struct tc *t, const struct round *r, const struct layout *L, uint64_t seq,
	   uint32_t skip, uint64_t i)
{
	uint8_t have[16];
	uint64_t n = r->size - i < 16 ? r->size - i : 16, b;
	bool back = i > 0, fwd = i + n < r->size;
	struct gen g;

	if (i >= r->size || n < 4)
		return "";
	gen_init(&g, r, seq);
	stream_read(t, L, skip + i, have, n);
	for (b = 0; b < n; b++) {
		back = back && have[b] == gen_byte(&g, i + b - 1);
		fwd = fwd && have[b] == gen_byte(&g, i + b + 1);
	}
	return back ? " (the message moved up one byte)" :
	       fwd ? " (the message moved down one byte)" : "";
}

enum chk_mode {
	CHK_EXACT,		/* every data byte there */
	CHK_OR_FILL,		/* a data byte may still hold the fill */
	CHK_QUIET,		/* CHK_EXACT, recording nothing */
	CHK_QUIET_OR_FILL,	/* CHK_OR_FILL, recording nothing */
};

/*
 * Check a message in a layout: stream bytes [0, skip) are not data (the GRH
 * area), then size bytes of message seq, then slack that must hold the
 * fill.
 * @return 0 all data there, 1 some still fill (the *_OR_FILL modes), -1 wrong bytes.
 */
static int
layout_check(struct tc *t, const struct round *r, const struct layout *L, uint64_t seq,
	     uint32_t skip, enum chk_mode mode, const char *what)
{
	bool quiet = mode == CHK_QUIET || mode == CHK_QUIET_OR_FILL;
	bool or_fill = mode == CHK_OR_FILL || mode == CHK_QUIET_OR_FILL;
	struct gen g;
	uint64_t pos = 0, bad = 0, first_bad = 0, fills = 0;
	uint8_t have0 = 0, want0 = 0;
	const char *hint = "";
	int j;

	gen_init(&g, r, seq);
	for (j = 0; j < L->n; j++) {
		uint64_t x = (uint64_t)L->p[j].lane * LANE_BYTES + L->p[j].off;
		uint32_t b;

		for (b = 0; b < L->p[j].len; b++, pos++) {
			uint8_t have = t->buf[x + b], want, fill;

			if (pos < skip)
				continue;
			fill = fill_byte(r->salt, x + b);
			want = pos - skip < r->size ? gen_byte(&g, pos - skip) : fill;
			if (have == want)
				continue;
			if (or_fill && pos - skip < r->size && have == fill) {
				fills++;
				continue;
			}
			if (bad++ == 0) {
				uint64_t i = pos - skip;

				first_bad = i;
				have0 = have;
				want0 = want;
				if (i >= r->size)
					hint = " (receive slack written)";
				else
					hint = shift_hint(t, r, L, seq, skip, i);
				if (*hint == '\0' && have == fill)
					hint = shift_hint(t, r, L, seq, skip, i + 1);
				if (*hint == '\0' && have == fill)
					hint = " (never written: still the fill)";
			}
			if (quiet)
				return -1;
		}
	}
	t->bytes_checked += L->total;
	if (bad == 0)
		return fills ? 1 : 0;
	if (!quiet)
		rfail(t, "%s seq %" PRIu64 ": %" PRIu64 " bad byte(s) of %u, first at %" PRIu64
		      ": 0x%02x, want 0x%02x%s", what, seq & 0xffffffffu, bad, r->size,
		      first_bad, have0, want0, hint);
	return -1;
}

/* ---- atomics ---- */

struct atom_op {
	uint32_t word;
	uint64_t cmp_add, swap;
	uint64_t orig;		/* what it must return */
};

static uint64_t
atom_word_off(uint32_t w)
{
	return (uint64_t)w * PAGE + 8 * ((w * 37u) % 511u);
}

static uint64_t
atom_result_off(uint32_t k)
{
	return GUARD + 8ull * k;
}

/* Plan a round: both sides compute the same ops and final words. */
static void
atom_plan(const struct round *r, struct atom_op *ops, uint64_t *words)
{
	uint64_t key = msg_key(r, r->first);
	uint32_t k, w;

	for (w = 0; w < ATOM_WORDS; w++)
		words[w] = mix64(key ^ w);
	for (k = 0; k < r->n; k++) {
		uint64_t seq = r->first + k, v = mix64(key + 1000 + k);
		struct atom_op *a = &ops[k];

		a->word = k % ATOM_WORDS;
		a->orig = words[a->word];
		if (r->op == OP_FADD) {
			a->cmp_add = v;
			words[a->word] += v;
		} else {
			/* every third compare misses: memory stays, the value still returns */
			a->cmp_add = seq % 3 == 2 ? a->orig ^ (1ull << (seq % 64)) : a->orig;
			a->swap = v;
			if (a->cmp_add == a->orig)
				words[a->word] = v;
		}
	}
}

/* ---- QPs ---- */

static int
qp_init(struct tc *t, int tp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (tp == TP_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			(tp == TP_RC ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(t->qp[tp], &a, mask);
}

static int
qp_up(struct tc *t, int tp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE, ret;

	ret = qp_init(t, tp);
	if (ret)
		return ret;
	if (tp != TP_UD) {
		a.path_mtu = t->mtu_enum;
		a.dest_qp_num = t->peer.qpn[tp];
		a.rq_psn = t->peer.psn[tp];
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = t->peer.gid;
		a.ah_attr.grh.sgid_index = (uint8_t)t->o.gidx;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (tp == TP_RC) {
			a.max_dest_rd_atomic = (uint8_t)t->rd_atom;
			a.min_rnr_timer = 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = ibv_modify_qp(t->qp[tp], &a, mask);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = t->psn[tp];
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (tp == TP_RC) {
		a.timeout = (uint8_t)t->o.qp_timeout;
		a.retry_cnt = (uint8_t)t->o.retry;
		a.rnr_retry = 7;
		a.max_rd_atomic = (uint8_t)(t->rd_atom < (int)t->peer.rd_atom ? t->rd_atom :
					    (int)t->peer.rd_atom);
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(t->qp[tp], &a, mask);
}

/* Back to a clean start: ERR (receives flush), RESET, up again. */
static void
qp_resync(struct tc *t, int tp, uint32_t leftover)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	uint32_t flushed = 0;
	int ret;

	if (ibv_modify_qp(t->qp[tp], &a, IBV_QP_STATE))
		die("ibv_modify_qp ERR");
	while (flushed < leftover && cq_next(t, t->rcq, &wc, t->o.wait_s * 1000) == 1) {
		if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.qp_num != t->qp[tp]->qp_num)
			rfail(t, "%s reset: a posted receive completed %s (qp %u), want "
			      "WR_FLUSH_ERR", tp_name[tp], wc_str(wc.status), wc.qp_num);
		flushed++;
	}
	if (flushed != leftover)
		rfail(t, "%s reset: %u of %u posted receives flushed", tp_name[tp], flushed,
		      leftover);
	a.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(t->qp[tp], &a, IBV_QP_STATE))
		die("ibv_modify_qp RESET");
	ret = qp_up(t, tp);
	if (ret) {
		errno = ret;
		die("ibv_modify_qp after reset");
	}
}

static enum ibv_mtu
mtu_enum_of(uint32_t bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

/* The whole buffer, registered with every right the peer's operations need. */
static struct ibv_mr *
reg_all(struct tc *t)
{
	return ibv_reg_mr(t->pd, t->buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  (t->atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0));
}

static void
setup(struct tc *t)
{
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int n, i, tp;

	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		errno = errno ? errno : ENODEV;
		die("ibv_get_device_list lists no device");
	}
	for (i = 0; i < n; i++)
		if (t->o.dev == NULL || strcmp(ibv_get_device_name(list[i]), t->o.dev) == 0)
			break;
	if (i == n) {
		errno = ENODEV;
		die(t->o.dev);
	}
	t->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (t->ctx == NULL)
		die("ibv_open_device");
	if (ibv_query_device(t->ctx, &da) || ibv_query_port(t->ctx, 1, &pa) ||
	    ibv_query_gid(t->ctx, 1, t->o.gidx, &t->gid))
		die("ibv_query_device/port/gid");
	t->mtu = t->o.mtu ? (uint32_t)t->o.mtu : 128u << pa.active_mtu;
	t->max_sge = da.max_sge < MAX_SGE ? da.max_sge : MAX_SGE;
	t->rd_atom = da.max_qp_rd_atom < 16 ? da.max_qp_rd_atom : 16;
	if (da.max_qp_init_rd_atom < t->rd_atom)
		t->rd_atom = da.max_qp_init_rd_atom;
	t->atomics = da.atomic_cap != IBV_ATOMIC_NONE;

	t->pd = ibv_alloc_pd(t->ctx);
	t->ch = ibv_create_comp_channel(t->ctx);
	if (t->pd == NULL || t->ch == NULL)
		die("ibv_alloc_pd/ibv_create_comp_channel");
	if (fcntl(t->ch->fd, F_SETFL, fcntl(t->ch->fd, F_GETFL) | O_NONBLOCK))
		die("fcntl");
	t->scq = ibv_create_cq(t->ctx, CQ_DEPTH, NULL, t->ch, 0);
	t->rcq = ibv_create_cq(t->ctx, CQ_DEPTH, NULL, t->ch, 0);
	if (t->scq == NULL || t->rcq == NULL)
		die("ibv_create_cq");

	t->buf = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->buf == MAP_FAILED)
		die("mmap");
	t->mr_all = reg_all(t);
	if (t->mr_all == NULL)
		die("ibv_reg_mr");
	for (i = 0; i < LANES; i++) {
		t->mr_lane[i] = ibv_reg_mr(t->pd, lane_ptr(t, (uint32_t)i, 0), LANE_BYTES,
					   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ);
		if (t->mr_lane[i] == NULL)
			die("ibv_reg_mr (lane)");
	}

	t->max_inline = 64;
	for (tp = 0; tp < TP_N; tp++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = t->scq, .recv_cq = t->rcq, .qp_type = tp_qpt[tp],
			.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH,
				 .max_send_sge = (uint32_t)t->max_sge,
				 .max_recv_sge = (uint32_t)t->max_sge,
				 .max_inline_data = 64 },
		};

		t->qp[tp] = ibv_create_qp(t->pd, &ia);
		if (t->qp[tp] == NULL) {
			ia.cap.max_inline_data = 0;
			t->qp[tp] = ibv_create_qp(t->pd, &ia);
		}
		if (t->qp[tp] == NULL)
			die("ibv_create_qp");
		if ((int)ia.cap.max_inline_data < t->max_inline)
			t->max_inline = (int)ia.cap.max_inline_data;
		t->psn[tp] = (uint32_t)mix64(t->o.seed ^ ((uint64_t)getpid() << 8) ^ tp) & 0xffffff;
	}
}

/* Destroy everything, in reverse order: the destroy paths are checked too. */
static void
teardown(struct tc *t)
{
	int i;

	for (i = 0; i < TP_N; i++)
		if (ibv_destroy_qp(t->qp[i]))
			bail("traffic_check: ibv_destroy_qp failed");
	if (t->ah != NULL && ibv_destroy_ah(t->ah))
		bail("traffic_check: ibv_destroy_ah failed");
	for (i = 0; i < LANES; i++)
		if (ibv_dereg_mr(t->mr_lane[i]))
			bail("traffic_check: ibv_dereg_mr failed");
	if (ibv_dereg_mr(t->mr_all) || ibv_destroy_cq(t->scq) || ibv_destroy_cq(t->rcq) ||
	    ibv_destroy_comp_channel(t->ch) || ibv_dealloc_pd(t->pd) || ibv_close_device(t->ctx))
		bail("traffic_check: teardown failed");
	munmap(t->buf, BUF_BYTES);
}

static void
gid_to_words(const union ibv_gid *g, uint64_t *w)
{
	memcpy(&w[0], &g->raw[0], 8);
	memcpy(&w[1], &g->raw[8], 8);
	w[0] = be64toh(w[0]);
	w[1] = be64toh(w[1]);
}

static void
words_to_gid(const uint64_t *w, union ibv_gid *g)
{
	uint64_t a = htobe64(w[0]), b = htobe64(w[1]);

	memcpy(&g->raw[0], &a, 8);
	memcpy(&g->raw[8], &b, 8);
}

static void
exchange(struct tc *t)
{
	uint64_t v[12];
	struct ctl m;
	int tp, ret;

	for (tp = 0; tp < TP_N; tp++) {
		v[tp] = t->qp[tp]->qp_num;
		v[3 + tp] = t->psn[tp];
	}
	gid_to_words(&t->gid, &v[6]);
	v[8] = (uintptr_t)t->buf;
	v[9] = t->mr_all->rkey;
	v[10] = t->mtu;
	v[11] = (uint64_t)t->rd_atom;
	ctl_send(t, CTL_HELLO, v, 12, NULL);
	ctl_recv(t, CTL_HELLO, &m);
	for (tp = 0; tp < TP_N; tp++) {
		t->peer.qpn[tp] = (uint32_t)m.v[tp];
		t->peer.psn[tp] = (uint32_t)m.v[3 + tp];
	}
	words_to_gid(&m.v[6], &t->peer.gid);
	t->peer.addr = m.v[8];
	t->peer.rkey = (uint32_t)m.v[9];
	t->peer.mtu = (uint32_t)m.v[10];
	t->peer.rd_atom = (uint32_t)m.v[11];
	if (t->peer.mtu < t->mtu)	/* both ends settle on the smaller */
		t->mtu = t->peer.mtu;
	t->mtu_enum = mtu_enum_of(t->mtu);
	for (tp = 0; tp < TP_N; tp++) {
		ret = qp_up(t, tp);
		if (ret) {
			errno = ret;
			die("ibv_modify_qp to RTS");
		}
	}
	if (t->client) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };

		aa.grh.dgid = t->peer.gid;
		aa.grh.sgid_index = (uint8_t)t->o.gidx;
		aa.grh.hop_limit = 64;
		t->ah = ibv_create_ah(t->pd, &aa);
		if (t->ah == NULL)
			die("ibv_create_ah");
	}
}

/* ---- one round, either side ---- */

/* How much of which lanes a side uses this round. */
static void
round_region(const struct tc *t, const struct round *r, bool client, int *lanes, uint64_t *bytes)
{
	uint32_t k;

	if (op_is_atomic(r->op)) {
		*lanes = 1;
		*bytes = client ? (atom_result_off(r->n) + GUARD + PAGE - 1) / PAGE * PAGE :
				  (uint64_t)ATOM_WORDS * PAGE;
		return;
	}
	*lanes = 1;
	for (k = 0; k < r->n && k < 4; k++) {
		struct layout L;

		layout_of(r, client, t->max_sge, k, &L);
		if (L.n > *lanes)
			*lanes = L.n;
	}
	*bytes = r->n * r->stride;
}

/* Is this side the source of the message bytes? */
static bool
side_is_source(const struct round *r, bool client)
{
	if (op_is_atomic(r->op))
		return false;
	return client ? r->op != OP_READ : r->op == OP_READ;
}

/* Fill the round's memory; write the messages this side sends or serves. */
static void
round_prepare(struct tc *t, const struct round *r)
{
	uint64_t bytes;
	int lanes;
	uint32_t k;

	round_region(t, r, t->client, &lanes, &bytes);
	region_fill(t, r, lanes, bytes);
	if (side_is_source(r, t->client)) {
		for (k = 0; k < r->n; k++) {
			struct layout L;
			struct gen g;

			layout_of(r, t->client, t->max_sge, k, &L);
			gen_init(&g, r, r->first + k);
			layout_write(t, &L, &g);
		}
	}
	if (!t->client && op_is_atomic(r->op)) {
		struct atom_op ops[ROUND_MAX];
		uint64_t words[ATOM_WORDS];
		uint32_t w;

		atom_plan(r, ops, words);
		for (w = 0; w < ATOM_WORDS; w++) {
			uint64_t init = mix64(msg_key(r, r->first) ^ w);

			memcpy(lane_ptr(t, 0, atom_word_off(w)), &init, 8);
		}
	}
}

/*
 * After the round: every message where it belongs (or, as a source,
 * unchanged), then nothing else touched. dseq[k]: which message receive k
 * holds (-1: none, lossy only); landed[k] for targets of WRITE_IMM.
 */
static void
round_verify(struct tc *t, const struct round *r, const int64_t *dseq, struct stats *st)
{
	const char *what = t->client ? (r->op == OP_READ ? "READ target" : "source") :
				       (r->op == OP_READ ? "READ source" : "target");
	uint64_t bytes;
	int lanes;
	uint32_t k;

	round_region(t, r, t->client, &lanes, &bytes);
	if (op_is_atomic(r->op)) {
		struct atom_op ops[ROUND_MAX];
		uint64_t words[ATOM_WORDS], have;
		uint32_t w;

		atom_plan(r, ops, words);
		if (t->client) {
			for (k = 0; k < r->n; k++) {
				memcpy(&have, lane_ptr(t, 0, atom_result_off(k)), 8);
				if (have != ops[k].orig)
					rfail(t, "%s op %u returned %#" PRIx64 ", want %#" PRIx64,
					      op_name[r->op], k, have, ops[k].orig);
				for (w = 0; w < 8; w++) {
					uint64_t x = atom_result_off(k) + w;

					t->buf[x] = fill_byte(r->salt, x);
				}
			}
		} else {
			for (w = 0; w < ATOM_WORDS; w++) {
				uint64_t x = atom_word_off(w), b;

				memcpy(&have, lane_ptr(t, 0, x), 8);
				if (have != words[w])
					rfail(t, "%s word %u is %#" PRIx64 " after the round, want %#"
					      PRIx64, op_name[r->op], w, have, words[w]);
				for (b = 0; b < 8; b++)
					t->buf[x + b] = fill_byte(r->salt, x + b);
			}
		}
		region_scan(t, r, lanes, bytes, "atomics");
		return;
	}

	for (k = 0; k < r->n; k++) {
		struct layout L;
		enum chk_mode mode = CHK_EXACT;
		uint64_t seq = r->first + k;
		uint32_t skip = 0;
		int ret;

		layout_of(r, t->client, t->max_sge, k, &L);
		if (!t->client && op_is_send(r->op)) {
			skip = r->tp == TP_UD ? GRH_BYTES : 0;
			if (dseq[k] < 0) {	/* receive never used (lossy) */
				layout_restore(t, r, &L);
				continue;
			}
			seq = (uint64_t)dseq[k];
		} else if (!t->client && (r->op == OP_WRITE || r->op == OP_WRITE_IMM) &&
			   r->tp == TP_UC && r->lossy && (r->op == OP_WRITE || dseq[k] < 0)) {
			mode = CHK_OR_FILL;
		}
		ret = layout_check(t, r, &L, seq, skip, mode, what);
		if (mode == CHK_OR_FILL && ret == 0 && r->op == OP_WRITE)
			st->delivered++;
		layout_restore(t, r, &L);
	}
	region_scan(t, r, lanes, bytes, what);
}

/* ---- server ---- */

static void
post_recvs(struct tc *t, const struct round *r)
{
	uint32_t k;

	for (k = 0; k < r->n; k++) {
		struct ibv_recv_wr wr = { .wr_id = r->first + k }, *bad;
		struct ibv_sge sge[MAX_SGE];
		struct layout L;
		int j;

		if (op_is_send(r->op)) {
			layout_of(r, false, t->max_sge, k, &L);
			for (j = 0; j < L.n; j++) {
				sge[j].addr = (uintptr_t)lane_ptr(t, L.p[j].lane, L.p[j].off);
				sge[j].length = L.p[j].len;
				sge[j].lkey = t->mr_lane[L.p[j].lane]->lkey;
			}
			wr.sg_list = sge;
			wr.num_sge = L.n;
		}
		if (ibv_post_recv(t->qp[r->tp], &wr, &bad))
			die("ibv_post_recv");
	}
}

/* The 40 bytes in front of a UD message: the sender's IP header. */
static void
check_grh(struct tc *t, const uint8_t *g, uint64_t seq)
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const uint8_t *src = t->peer.gid.raw, *dst = t->gid.raw;

	if (memcmp(src, v4map, 12) == 0) {
		/* RoCEv2 over IPv4: the IPv4 header fills the last 20 bytes */
		const uint8_t *ip = g + 20;
		uint32_t sum = 0;
		int i;

		for (i = 0; i < 20; i += 2)
			sum += (uint32_t)ip[i] << 8 | ip[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		if (ip[0] != 0x45 || ip[9] != 17 || memcmp(ip + 12, src + 12, 4) ||
		    memcmp(ip + 16, dst + 12, 4) || sum != 0xffff)
			rfail(t, "ud seq %" PRIu64 ": GRH area holds no valid IPv4 header from "
			      "the peer (ver/ihl 0x%02x proto %u src %u.%u.%u.%u sum %#x)",
			      seq & 0xffffffffu, ip[0], ip[9], ip[12], ip[13], ip[14], ip[15], sum);
		return;
	}
	if (g[0] >> 4 != 6 || g[6] != 17 || memcmp(g + 8, src, 16) || memcmp(g + 24, dst, 16))
		rfail(t, "ud seq %" PRIu64 ": GRH area holds no IPv6 header from the peer",
		      seq & 0xffffffffu);
}

/*
 * Which message a lossy UC/UD receive holds: from the immediate, from the
 * header, or (a tiny plain SEND) one whose bytes match, the next unseen one
 * first; -1 if none does. Any message of this case so far may come (late
 * or twice), not only this round's.
 */
static int64_t
identify(struct tc *t, const struct round *r, const struct ibv_wc *wc, const struct layout *L,
	 uint32_t skip, int64_t last, const bool *seen)
{
	uint8_t hdr[HDR_BYTES];
	int64_t seq, lo = (int64_t)(r->first & ~0xffffffffull), hi = (int64_t)(r->first + r->n);

	if (op_has_imm(r->op)) {
		uint32_t imm = ntohl(wc->imm_data);

		seq = (int64_t)((r->first & ~0xfffffull) | (imm & 0xfffff));
		if (seq < lo)
			seq += 0x100000;
		return seq;
	}
	if (r->size >= HDR_BYTES) {
		stream_read(t, L, skip, hdr, HDR_BYTES);
		return (int64_t)((r->first & ~0xffffffffull) | get_le32(hdr));
	}
	for (seq = last + 1; seq < hi; seq++)
		if (!seen[seq - (int64_t)r->first] &&
		    layout_check(t, r, L, (uint64_t)seq, skip, CHK_QUIET, "") == 0)
			return seq;
	for (seq = hi - 1; seq >= lo; seq--)
		if (layout_check(t, r, L, (uint64_t)seq, skip, CHK_QUIET, "") == 0)
			return seq;
	return -1;
}

/* Take the round's receive completions. dseq[k] = message in receive k. */
static void
collect_recvs(struct tc *t, const struct round *r, int64_t *dseq, struct stats *st)
{
	bool lossy = r->lossy && r->tp != TP_RC;
	uint32_t k = 0, grh = r->tp == TP_UD ? GRH_BYTES : 0;
	uint32_t want_len = r->size + (op_is_send(r->op) ? grh : 0);
	enum ibv_wc_opcode want_op = op_is_send(r->op) ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
	unsigned int want_flags = (op_has_imm(r->op) ? IBV_WC_WITH_IMM : 0) |
				  (r->tp == TP_UD ? IBV_WC_GRH : 0);
	/*
	 * ibv_poll_cq(3): IBV_WC_GRH is valid only for UD QPs. On RC and UC it
	 * means nothing, and rxe (every receive) and upstream mlx5 (whenever
	 * its CQE says so) do set it there.
	 */
	unsigned int flags_checked = IBV_WC_WITH_IMM | (r->tp == TP_UD ? IBV_WC_GRH : 0);
	bool seen[ROUND_MAX] = { false };
	int64_t last = (int64_t)r->first - 1;

	for (k = 0; k < r->n; k++)
		dseq[k] = -1;
	for (k = 0; k < r->n; k++) {
		struct ibv_wc wc;
		struct layout L = { .n = 0 };
		int64_t seq;

		if (cq_next(t, t->rcq, &wc, lossy ? QUIET_MS : t->o.wait_s * 1000) == 0) {
			if (!lossy) {
				rfail(t, "%u of %u messages arrived (none more in %d s)", k, r->n,
				      t->o.wait_s);
				t->broken = true;	/* its receives would take the next round's */
			}
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			rfail(t, "receive %u completed %s (vendor_err %#x)", k, wc_str(wc.status),
			      wc.vendor_err);
			t->broken = true;
			break;
		}
		if (wc.wr_id != r->first + k || wc.qp_num != t->qp[r->tp]->qp_num) {
			rfail(t, "receive %u: wr_id %" PRIu64 " qp %u, want wr_id %" PRIu64
			      " qp %u (receives complete in posting order)", k,
			      wc.wr_id & 0xffffffffu, wc.qp_num, (r->first + k) & 0xffffffffu,
			      t->qp[r->tp]->qp_num);
			t->broken = true;
			break;
		}
		if (wc.opcode != want_op || wc.byte_len != want_len ||
		    (wc.wc_flags & flags_checked) != want_flags)
			rfail(t, "receive %u: opcode %d byte_len %u wc_flags %#x, want %d %u %#x",
			      k, wc.opcode, wc.byte_len, wc.wc_flags, want_op, want_len, want_flags);
		if (r->tp == TP_UD && wc.src_qp != t->peer.qpn[TP_UD])
			rfail(t, "receive %u: src_qp %u, want %u", k, wc.src_qp, t->peer.qpn[TP_UD]);
		if (op_is_send(r->op))
			layout_of(r, false, t->max_sge, k, &L);
		if (lossy) {
			seq = identify(t, r, &wc, &L, grh, last, seen);
			if (seq < (int64_t)(r->first & ~0xffffffffull) ||
			    seq >= (int64_t)(r->first + r->n)) {
				rfail(t, "receive %u holds no message of this case (seq %" PRId64 ")",
				      k, seq & 0xffffffff);
				continue;
			}
			if (seq < (int64_t)r->first || seen[seq - (int64_t)r->first]) {
				st->dup++;	/* a copy, or late from an earlier round */
			} else {
				st->reorder += seq < last;
				st->delivered++;
				seen[seq - (int64_t)r->first] = true;
			}
			if (seq > last)
				last = seq;
		} else {
			seq = (int64_t)(r->first + k);
			st->delivered++;
			if (op_is_send(r->op) && r->size >= HDR_BYTES) {
				uint8_t hdr[HDR_BYTES];

				stream_read(t, &L, grh, hdr, HDR_BYTES);
				if (get_le32(hdr) != (uint32_t)seq)
					rfail(t, "receive %u holds seq %u, want %u (a message lost, "
					      "duplicated or out of order?)", k, get_le32(hdr),
					      (uint32_t)seq);
			}
		}
		if (op_has_imm(r->op) && wc.imm_data != htonl(imm_of(r, (uint64_t)seq)))
			rfail(t, "receive %u: imm_data %#x (network order), want %#x", k,
			      ntohl(wc.imm_data), imm_of(r, (uint64_t)seq));
		if (r->tp == TP_UD) {
			uint8_t g[GRH_BYTES];

			stream_read(t, &L, 0, g, GRH_BYTES);
			check_grh(t, g, (uint64_t)seq);
		}
		if (op_is_send(r->op))
			dseq[k] = seq;
		else if (seq >= (int64_t)r->first)
			dseq[seq - (int64_t)r->first] = seq;	/* WRITE_IMM: that target landed */
	}
	if (lossy && k < r->n) {
		st->resync = true;
		qp_resync(t, r->tp, r->n - k);
	} else if (lossy) {
		/* copies still on the way find no receive now, not the next round's */
		usleep(QUIET_MS * 1000);
	}
}

/*
 * An unsignalled UC WRITE completes nowhere: wait while its bytes are still
 * arriving (some still hold the fill, none is wrong); round_verify() judges.
 */
static void
wait_landed(struct tc *t, const struct round *r)
{
	int64_t end = now_ms() + t->o.wait_s * 1000;
	uint32_t k = 0;

	while (k < r->n && now_ms() < end) {
		struct layout L;

		layout_of(r, false, t->max_sge, k, &L);
		if (layout_check(t, r, &L, r->first + k, 0, CHK_QUIET_OR_FILL, "") == 1)
			usleep(1000);
		else
			k++;
	}
}

/* Complain about any completion nobody asked for (a duplicate, a leftover). */
static void
stray_check(struct tc *t)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(t->rcq, 1, &wc) == 1)
		rfail(t, "unexpected receive completion: %s wr_id %" PRIu64 " qp %u opcode %d",
		      wc_str(wc.status), wc.wr_id & 0xffffffffu, wc.qp_num, wc.opcode);
	while (ibv_poll_cq(t->scq, 1, &wc) == 1)
		rfail(t, "unexpected send completion: %s wr_id %" PRIu64 " qp %u opcode %d",
		      wc_str(wc.status), wc.wr_id & 0xffffffffu, wc.qp_num, wc.opcode);
}

static void
round_from_ctl(struct tc *t, const struct ctl *m, struct round *r)
{
	r->tp = (uint32_t)m->v[0];
	r->op = (uint32_t)m->v[1];
	r->size = (uint32_t)m->v[2];
	r->first = m->v[3];
	r->n = (uint32_t)m->v[4];
	r->seed = (uint32_t)m->v[5];
	r->lossy = m->v[6] != 0;
	r->stride = m->v[7];
	if (r->tp >= TP_N || r->op >= OP_N || r->n == 0 || r->n > ROUND_MAX ||
	    r->size > MAX_SIZE || r->stride != round_stride(r->size) ||
	    (op_is_atomic(r->op) ? (uint64_t)ATOM_WORDS * PAGE : r->n * r->stride) > LANE_BYTES)
		bail("traffic_check serve: impossible round from the client");
	r->salt = mix64(++t->rounds ^ 0x5e47e4ull ^ r->seed);
}

/*
 * A lossy UC round's WRITEs go to a key of their own. UC has no PSN check
 * that stops a frame of an earlier round: one the link (or a receiver
 * starved of CPU) held back past that round's quiet time would land in
 * this round's fresh fill. With the old key gone it is dropped instead.
 * The new MR is made before the old one goes, so the two keys differ.
 */
static void
fresh_target_key(struct tc *t)
{
	struct ibv_mr *mr = reg_all(t);

	if (mr == NULL)
		die("ibv_reg_mr (a fresh key)");
	if (ibv_dereg_mr(t->mr_all))
		die("ibv_dereg_mr (the old key)");
	t->mr_all = mr;
}

static int
serve(struct tc *t)
{
	unsigned int rounds = 0, failed = 0;
	struct ctl m;

	for (;;) {
		struct round r;
		struct stats st = { 0 };
		int64_t dseq[ROUND_MAX];
		uint64_t v[5];
		uint32_t k;

		ctl_recv(t, 0, &m);
		if (m.type == CTL_END)
			break;
		if (m.type != CTL_ROUND)
			bail("traffic_check serve: protocol: frame %u", m.type);
		round_from_ctl(t, &m, &r);
		t->fails = 0;
		t->why[0] = '\0';
		stray_check(t);
		round_prepare(t, &r);
		if (op_uses_recv(r.op))
			post_recvs(t, &r);
		if (r.lossy && r.tp == TP_UC && (r.op == OP_WRITE || r.op == OP_WRITE_IMM))
			fresh_target_key(t);
		v[0] = t->mr_all->rkey;
		ctl_send(t, CTL_READY, v, 1, NULL);

		ctl_recv(t, CTL_DONE, &m);
		r.n = (uint32_t)m.v[0] < r.n ? (uint32_t)m.v[0] : r.n;	/* as many as posted */
		for (k = 0; k < ROUND_MAX; k++)
			dseq[k] = -1;
		if (op_uses_recv(r.op) && !t->broken)
			collect_recvs(t, &r, dseq, &st);
		else if (r.op == OP_WRITE && r.tp == TP_UC) {
			if (r.lossy)
				usleep(QUIET_MS * 1000);
			else
				wait_landed(t, &r);
		}
		round_verify(t, &r, dseq, &st);	/* what landed, even after an error */
		rounds++;
		failed += t->fails > 0;
		v[0] = (uint64_t)t->fails;
		v[1] = st.delivered;
		v[2] = st.dup;
		v[3] = st.reorder;
		v[4] = st.resync | (uint64_t)t->broken << 1;
		ctl_send(t, CTL_RESULT, v, 5, t->why);
	}
	t->fails = 0;
	stray_check(t);
	failed += t->fails > 0;
	ctl_send(t, CTL_END, NULL, 0, NULL);
	printf("traffic_check serve: %u rounds, %u failed, %" PRIu64 " bytes checked\n", rounds,
	       failed, t->bytes_checked);
	return failed ? 1 : 0;
}

/* ---- client ---- */

struct tcase {
	uint32_t tp, op, size, count;
};

static int
post_one(struct tc *t, const struct round *r, uint32_t k, const struct atom_op *ops)
{
	uint64_t seq = r->first + k;
	struct ibv_send_wr wr = { .wr_id = seq, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge sge[MAX_SGE];
	struct layout L, R;
	int j;

	layout_of(r, true, t->max_sge, k, &L);
	if (op_is_atomic(r->op)) {
		L.n = 1;
		L.p[0] = (struct piece){ .lane = 0, .off = (uint32_t)atom_result_off(k), .len = 8 };
	}
	for (j = 0; j < L.n; j++) {
		sge[j].addr = (uintptr_t)lane_ptr(t, L.p[j].lane, L.p[j].off);
		sge[j].length = L.p[j].len;
		sge[j].lkey = t->mr_lane[L.p[j].lane]->lkey;
	}
	wr.sg_list = sge;
	wr.num_sge = L.n;
	if (!op_is_send(r->op)) {
		layout_of(r, false, 1, k, &R);	/* one piece on the server */
		wr.wr.rdma.remote_addr = t->peer.addr + (uint64_t)R.p[0].lane * LANE_BYTES +
					 R.p[0].off;
		wr.wr.rdma.rkey = t->peer.rkey;
	}
	switch (r->op) {
	case OP_SEND: wr.opcode = IBV_WR_SEND; break;
	case OP_SEND_IMM: wr.opcode = IBV_WR_SEND_WITH_IMM; break;
	case OP_WRITE: wr.opcode = IBV_WR_RDMA_WRITE; break;
	case OP_WRITE_IMM: wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM; break;
	case OP_READ: wr.opcode = IBV_WR_RDMA_READ; break;
	case OP_FADD:
	case OP_CSWAP:
		wr.opcode = r->op == OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = t->peer.addr + atom_word_off(ops[k].word);
		wr.wr.atomic.rkey = t->peer.rkey;
		wr.wr.atomic.compare_add = ops[k].cmp_add;
		wr.wr.atomic.swap = ops[k].swap;
		break;
	}
	if (op_has_imm(r->op))
		wr.imm_data = htonl(imm_of(r, seq));
	if (r->tp == TP_UD) {
		wr.wr.ud.ah = t->ah;
		wr.wr.ud.remote_qpn = t->peer.qpn[TP_UD];
		wr.wr.ud.remote_qkey = QKEY;
	}
	/* every other small SEND/WRITE goes inline */
	if (r->op <= OP_WRITE_IMM && r->size <= (uint32_t)t->max_inline && (seq & 1))
		wr.send_flags |= IBV_SEND_INLINE;
	return ibv_post_send(t->qp[r->tp], &wr, &bad);
}

static void
post_and_reap(struct tc *t, struct round *r)
{
	static const enum ibv_wc_opcode want_op[OP_N] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
		IBV_WC_FETCH_ADD, IBV_WC_COMP_SWAP,
	};
	struct atom_op ops[ROUND_MAX];
	uint64_t words[ATOM_WORDS];
	uint32_t posted = 0, reaped = 0, n = r->n;
	int ret;

	if (op_is_atomic(r->op))
		atom_plan(r, ops, words);
	while (reaped < n) {
		struct ibv_wc wc;

		while (posted < n && posted - reaped < WINDOW) {
			ret = post_one(t, r, posted, ops);
			if (ret) {
				rfail(t, "ibv_post_send of message %u: %s", posted, strerror(ret));
				n = posted;
				break;
			}
			posted++;
		}
		if (reaped == n)
			break;
		if (cq_next(t, t->scq, &wc, t->o.wait_s * 1000) == 0) {
			rfail(t, "no send completion for message %u in %d s", reaped, t->o.wait_s);
			t->broken = true;
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			rfail(t, "message %u completed %s (vendor_err %#x)", reaped, wc_str(wc.status),
			      wc.vendor_err);
			t->broken = true;
			break;
		}
		if (wc.wr_id != r->first + reaped || wc.qp_num != t->qp[r->tp]->qp_num ||
		    wc.opcode != want_op[r->op])
			rfail(t, "send completion %u: wr_id %" PRIu64 " qp %u opcode %d, want %"
			      PRIu64 " %u %d", reaped, wc.wr_id & 0xffffffffu, wc.qp_num, wc.opcode,
			      (r->first + reaped) & 0xffffffffu, t->qp[r->tp]->qp_num,
			      want_op[r->op]);
		if ((r->op == OP_READ && wc.byte_len != r->size) ||
		    (op_is_atomic(r->op) && wc.byte_len != 8))
			rfail(t, "send completion %u: byte_len %u, want %u", reaped, wc.byte_len,
			      r->op == OP_READ ? r->size : 8);
		reaped++;
	}
	r->n = reaped;
}

/* The message sizes: around powers of two, the MTU and pages, up to
 * several MiB (and with_max: --max-size itself); sorted, no duplicates. */
static uint32_t
case_sizes(const struct tc *t, bool with_max, uint32_t *out)
{
	uint32_t m = t->mtu;
	uint32_t sizes[] = { 1, 2, 63, 64, 255, 1023, 1024, 1025, m - 1, m, m + 1, 4095, 4096,
			     4097, 65537, (1u << 20) + 3, (4u << 20) + 1,
			     with_max ? t->o.max_size : 1 };
	uint32_t ns = 0, i, j;

	for (i = 0; i < DIM(sizes); i++)
		for (j = i + 1; j < DIM(sizes); j++)
			if (sizes[j] < sizes[i]) {
				uint32_t x = sizes[i];

				sizes[i] = sizes[j];
				sizes[j] = x;
			}
	for (i = 0; i < DIM(sizes); i++)
		if ((ns == 0 || sizes[i] != out[ns - 1]) && sizes[i] <= t->o.max_size)
			out[ns++] = sizes[i];
	return ns;
}

/* The case list: every operation of every transport at every size (UD: up to the MTU). */
static int
make_cases(struct tc *t, struct tcase *c, int max)
{
	static const uint8_t ops[TP_N][OP_N] = {
		{ 1, 1, 1, 1, 1, 1, 1 }, { 1, 1, 1, 1, 0, 0, 0 }, { 1, 1, 0, 0, 0, 0, 0 },
	};
	uint32_t m = t->mtu, sizes[32];
	uint32_t ns = case_sizes(t, false, sizes), i, tp, op;
	int n = 0;

	for (tp = 0; tp < TP_N; tp++)
		for (op = 0; op < OP_N; op++) {
			if (!ops[tp][op])
				continue;
			for (i = 0; i < (op_is_atomic(op) ? 1 : ns); i++) {
				uint32_t size = op_is_atomic(op) ? 8 : sizes[i];
				uint64_t cnt = t->o.budget / size;

				if ((tp == TP_UD && size > m) ||
				    (tp == TP_UC && size > (t->o.lossy ? LOSSY_UC_FRAMES :
							     UNRELIABLE_FRAMES) * m))
					continue;
				if (cnt > t->o.count || op_is_atomic(op))
					cnt = t->o.count;
				if (cnt < 1)
					cnt = 1;
				if (n == max)
					return n;
				c[n++] = (struct tcase){ tp, op, size, (uint32_t)cnt };
			}
		}
	return n;
}

/* -c: comma-separated "rc", "send", "rc-write"; empty: everything. */
static bool
case_selected(const char *sel, const struct tcase *c)
{
	char buf[256], full[32], *tok, *save;

	if (sel == NULL || *sel == '\0' || strcmp(sel, "all") == 0)
		return true;
	snprintf(buf, sizeof(buf), "%s", sel);
	snprintf(full, sizeof(full), "%s-%s", tp_name[c->tp], op_name[c->op]);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, tp_name[c->tp]) == 0 || strcmp(tok, op_name[c->op]) == 0 ||
		    strcmp(tok, full) == 0 || (strcmp(tok, "atomic") == 0 && op_is_atomic(c->op)))
			return true;
	return false;
}

/* Run one case in rounds; print its line. @return true if it passed. */
static bool
run_case(struct tc *t, const struct tcase *c, uint64_t pass, uint64_t *msgs)
{
	uint64_t stride = round_stride(c->size);
	uint32_t per = op_is_atomic(c->op) ? ROUND_MAX : (uint32_t)(LANE_BYTES / stride);
	uint32_t done = 0, delivered = 0, dup = 0, reorder = 0, resyncs = 0;
	int64_t start = now_ms();
	int fails = 0;
	char why[256] = "";

	if (per > ROUND_MAX)
		per = ROUND_MAX;
	if (c->tp != TP_RC) {
		uint32_t frames = (c->size + t->mtu - 1) / t->mtu;

		if (per > UNRELIABLE_FRAMES / frames)
			per = UNRELIABLE_FRAMES / frames ? UNRELIABLE_FRAMES / frames : 1;
	}
	if (op_is_atomic(c->op) && !t->atomics) {
		printf("FAIL %s %s: the device has no atomics\n", tp_name[c->tp], op_name[c->op]);
		return false;
	}
	while (done < c->count && !t->broken) {
		struct round r = {
			.tp = c->tp, .op = c->op, .size = c->size, .first = (pass << 32) | done,
			.n = c->count - done < per ? c->count - done : per, .stride = stride,
			.seed = t->o.seed, .lossy = t->o.lossy,
		};
		uint64_t v[8] = { r.tp, r.op, r.size, r.first, r.n, r.seed, r.lossy, r.stride };
		int64_t none[ROUND_MAX];
		struct stats st = { 0 };
		struct ctl m;
		uint32_t k;

		for (k = 0; k < ROUND_MAX; k++)
			none[k] = -1;
		r.salt = mix64(++t->rounds ^ 0xc11e47ull ^ r.seed);
		t->fails = 0;
		t->why[0] = '\0';
		stray_check(t);
		ctl_send(t, CTL_ROUND, v, 8, NULL);
		round_prepare(t, &r);
		ctl_recv(t, CTL_READY, &m);
		t->peer.rkey = (uint32_t)m.v[0];	/* this round's (fresh_target_key) */
		post_and_reap(t, &r);
		v[0] = r.n;
		ctl_send(t, CTL_DONE, v, 1, NULL);
		if (!t->broken)
			round_verify(t, &r, none, &st);
		if (t->fails && why[0] == '\0')
			snprintf(why, sizeof(why), "%s", t->why);
		fails += t->fails;
		ctl_recv(t, CTL_RESULT, &m);
		if (m.v[0] && why[0] == '\0')
			snprintf(why, sizeof(why), "serve: %s", m.text);
		fails += (int)m.v[0];
		if (m.v[4] & 2)
			t->broken = true;
		if (m.v[4] & 1) {
			resyncs++;
			if (c->tp == TP_UC) {	/* the server reset its end: start ours over too */
				struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

				if (ibv_modify_qp(t->qp[TP_UC], &a, IBV_QP_STATE) || qp_up(t, TP_UC))
					die("ibv_modify_qp (uc reset)");
			}
		}
		delivered += op_uses_recv(c->op) || (c->tp == TP_UC && c->op == OP_WRITE && t->o.lossy) ?
			     (uint32_t)m.v[1] : r.n;
		dup += (uint32_t)m.v[2];
		reorder += (uint32_t)m.v[3];
		done += r.n;
		*msgs += r.n;
		if (r.n == 0)
			break;
	}
	if (done < c->count && fails == 0) {
		fails++;
		snprintf(why, sizeof(why), "stopped after %u of %u messages", done, c->count);
	}
	if (t->o.lossy && c->tp != TP_RC && delivered == 0 && fails == 0) {
		fails++;
		snprintf(why, sizeof(why), "no message got through");
	}
	if (fails) {
		printf("FAIL %s %s %u B x %u: %s%s\n", tp_name[c->tp], op_name[c->op], c->size,
		       c->count, why, fails > 1 ? " (and more)" : "");
	} else if (t->o.lossy && c->tp != TP_RC) {
		printf("ok   %s %s %u B x %u: %u delivered intact, %u lost, %u out of order, "
		       "%u duplicated or late, %u resets (%.2f s)\n", tp_name[c->tp],
		       op_name[c->op], c->size, c->count, delivered, c->count - delivered, reorder,
		       dup, resyncs, (now_ms() - start) / 1000.0);
	} else {
		printf("ok   %s %s %u B x %u (%.2f s)\n", tp_name[c->tp], op_name[c->op], c->size,
		       c->count, (now_ms() - start) / 1000.0);
	}
	fflush(stdout);
	return fails == 0;
}

static int
drive(struct tc *t)
{
	static struct tcase cases[256];
	int n = make_cases(t, cases, 256), i, ran = 0, failed = 0, selected = 0;
	int64_t start = now_ms();
	uint64_t pass, msgs = 0;
	struct ctl m;

	for (i = 0; i < n; i++)
		selected += case_selected(t->o.cases, &cases[i]);
	if (selected == 0)
		bail("traffic_check: -c %s selects no case", t->o.cases);
	printf("traffic_check: %d cases, path MTU %u, seed %u, max SGE %d, inline %d%s\n",
	       selected, t->mtu, t->o.seed, t->max_sge, t->max_inline,
	       t->o.lossy ? ", lossy link" : "");
	for (pass = 0; !t->broken; pass++) {
		if (t->o.seconds ? now_ms() - start >= t->o.seconds * 1000ll :
				   pass >= (uint64_t)t->o.repeat)
			break;
		for (i = 0; i < n && !t->broken; i++) {
			if (!case_selected(t->o.cases, &cases[i]))
				continue;
			ran++;
			failed += !run_case(t, &cases[i], pass, &msgs);
		}
	}
	if (t->broken)
		printf("FAIL a QP went to the error state: the remaining cases were not run\n");
	ctl_send(t, CTL_END, NULL, 0, NULL);
	ctl_recv(t, CTL_END, &m);
	t->fails = 0;
	stray_check(t);
	failed += t->fails > 0;
	printf("traffic_check: %d cases run, %d failed; %" PRIu64 " messages, %" PRIu64
	       " bytes checked here, %.1f s\n", ran, failed, msgs, t->bytes_checked,
	       (now_ms() - start) / 1000.0);
	return failed || t->broken ? 1 : 0;
}

/* ---- driving a plain responder (--responder): no TCP partner ---- */

static void usage(void);

/*
 * Its memory is LEN bytes at ADDR (key RKEY) that start as byte x = x mod
 * 251 (droce-testpmd's pattern). A shadow here holds what every byte must
 * be now: WRITEs and atomics update it, every READ is checked against it.
 * Where things go in that memory:
 */
#define RS_ATOMS	0			/* the atomic words, atom_word_off() */
#define RS_WRITES	(ATOM_WORDS * PAGE)	/* WRITE targets, up to half of it */
#define RS_PERIOD	251
#define RS_CHAIN	ROUND_MAX		/* atomics per chain */
#define RS_SWEEP	(1u << 20)		/* the final READs of all of it */
#define RS_MAX_SIZE	((300u << 10) + 1)	/* default --max-size */

/* One operation on the responder's memory; the local side is L (in lanes). */
struct rs_op {
	enum ibv_wr_opcode op;
	uint64_t roff;			/* offset in its memory */
	uint64_t cmp_add, swap;
	struct layout L;
};

static void
rs_parse(struct tc *t, const char *s)
{
	unsigned long long v[5] = { 0, 0, 0, 0, 0 };
	char *end;
	int i;

	for (i = 0; i < 5; i++) {
		v[i] = strtoull(s, &end, 0);
		if (end == s || (*end != ':' && *end != '\0'))
			usage();
		s = end + (*end == ':');
		if (*end == '\0')
			break;
	}
	if (i < 3 || *end != '\0' || v[3] == 0)
		usage();
	t->rs.qpn = (uint32_t)v[0];
	t->rs.rkey = (uint32_t)v[1];
	t->rs.addr = v[2];
	t->rs.len = v[3];
	t->rs.psn = (uint32_t)v[4] & 0xffffff;
}

/* Post ops[0..n) (wr_id first + k) with a window, reap each in order, check each. */
static bool
rs_batch(struct tc *t, struct rs_op *ops, uint32_t n, uint64_t first)
{
	static const enum ibv_wc_opcode want_op[] = {
		[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE, [IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
		[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
	};
	struct ibv_qp *qp = t->qp[TP_RC];
	uint32_t posted = 0, reaped = 0;
	int fails = t->fails;

	while (reaped < n) {
		struct ibv_wc wc;

		while (posted < n && posted - reaped < WINDOW) {
			struct rs_op *o = &ops[posted];
			struct ibv_send_wr wr = { .wr_id = first + posted, .opcode = o->op,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;
			struct ibv_sge sge[MAX_SGE];
			int j, ret;

			for (j = 0; j < o->L.n; j++) {
				sge[j].addr = (uintptr_t)lane_ptr(t, o->L.p[j].lane, o->L.p[j].off);
				sge[j].length = o->L.p[j].len;
				sge[j].lkey = t->mr_lane[o->L.p[j].lane]->lkey;
			}
			wr.sg_list = sge;
			wr.num_sge = o->L.n;
			if (o->op == IBV_WR_ATOMIC_FETCH_AND_ADD || o->op == IBV_WR_ATOMIC_CMP_AND_SWP) {
				wr.wr.atomic.remote_addr = t->rs.addr + o->roff;
				wr.wr.atomic.rkey = t->rs.rkey;
				wr.wr.atomic.compare_add = o->cmp_add;
				wr.wr.atomic.swap = o->swap;
			} else {
				wr.wr.rdma.remote_addr = t->rs.addr + o->roff;
				wr.wr.rdma.rkey = t->rs.rkey;
			}
			ret = ibv_post_send(qp, &wr, &bad);
			if (ret) {
				rfail(t, "ibv_post_send of op %u: %s", posted, strerror(ret));
				t->broken = true;
				return false;
			}
			posted++;
		}
		if (cq_next(t, t->scq, &wc, t->o.wait_s * 1000) == 0) {
			rfail(t, "no completion for op %u in %d s", reaped, t->o.wait_s);
			t->broken = true;
			return false;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			rfail(t, "op %u completed %s (vendor_err %#x)", reaped, wc_str(wc.status),
			      wc.vendor_err);
			t->broken = true;
			return false;
		}
		if (wc.wr_id != first + reaped || wc.qp_num != qp->qp_num ||
		    wc.opcode != want_op[ops[reaped].op])
			rfail(t, "completion %u: wr_id %" PRIu64 " qp %u opcode %d, want %" PRIu64
			      " %u %d", reaped, wc.wr_id, wc.qp_num, wc.opcode, first + reaped,
			      qp->qp_num, want_op[ops[reaped].op]);
		if (ops[reaped].op != IBV_WR_RDMA_WRITE && wc.byte_len != ops[reaped].L.total)
			rfail(t, "completion %u: byte_len %u, want %" PRIu64, reaped, wc.byte_len,
			      ops[reaped].L.total);
		reaped++;
	}
	return t->fails == fails;
}

/* After READs into fresh lanes (fill of r): each holds the shadow, nothing else moved. */
static void
rs_read_check(struct tc *t, const struct round *r, const struct rs_op *ops, uint32_t n,
	      uint8_t *scratch, const char *what)
{
	uint64_t bytes = 0;
	int lanes = 1;
	uint32_t k;

	for (k = 0; k < n; k++) {
		const struct layout *L = &ops[k].L;
		const uint8_t *want = t->rs.shadow + ops[k].roff;
		uint64_t i;
		int j;

		stream_read(t, L, 0, scratch, L->total);
		t->bytes_checked += L->total;
		for (i = 0; i < L->total && scratch[i] == want[i]; i++)
			;
		if (i < L->total)
			rfail(t, "%s %u (%" PRIu64 " B at +%#" PRIx64 "): byte %" PRIu64
			      " is 0x%02x, want 0x%02x", what, k, L->total, ops[k].roff, i,
			      scratch[i], want[i]);
		layout_restore(t, r, L);
		for (j = 0; j < L->n; j++) {
			if ((int)L->p[j].lane >= lanes)
				lanes = (int)L->p[j].lane + 1;
			if (L->p[j].off + L->p[j].len > bytes)
				bytes = L->p[j].off + L->p[j].len;
		}
	}
	region_scan(t, r, lanes, (bytes + GUARD + 7) / 8 * 8, what);
}

/* A fresh round of n messages of size on the local side; the lanes hold its fill. */
static void
rs_round(struct tc *t, struct round *r, uint32_t op, uint32_t size, uint32_t n)
{
	*r = (struct round){ .tp = TP_RC, .op = op, .size = size, .first = t->rounds << 32,
			     .n = n, .stride = round_stride(size), .seed = t->o.seed };
	r->salt = mix64(++t->rounds ^ 0x7e5b0dull ^ r->seed);
	region_fill(t, r, LANES, n * r->stride);
}

/* One size: READs of memory nobody wrote, then WRITEs and READs of them back. */
static void
rs_size(struct tc *t, uint32_t size, struct rs_op *ops, uint8_t *scratch)
{
	uint64_t rstride = round_stride(size), half = t->rs.len / 2;
	uint64_t n = t->o.budget / size;
	struct round r;
	uint32_t k;

	if (n > t->o.count)
		n = t->o.count;
	if (n > (half - RS_WRITES) / rstride)
		n = (half - RS_WRITES) / rstride;
	if (n > LANE_BYTES / rstride)
		n = LANE_BYTES / rstride;
	if (n > ROUND_MAX)
		n = ROUND_MAX;
	if (n < 1)
		n = 1;

	/* untouched: anywhere in the upper half, crossing MTU and page edges */
	rs_round(t, &r, OP_READ, size, (uint32_t)n);
	for (k = 0; k < n; k++) {
		ops[k].op = IBV_WR_RDMA_READ;
		ops[k].roff = half + mix64(r.first + k) % (t->rs.len - half - size + 1);
		layout_of(&r, true, t->max_sge, k, &ops[k].L);
	}
	if (rs_batch(t, ops, (uint32_t)n, r.first))
		rs_read_check(t, &r, ops, (uint32_t)n, scratch, "READ of untouched memory");

	/* WRITE n messages of our own (each in 1 to 4 SGEs) ... */
	rs_round(t, &r, OP_WRITE, size, (uint32_t)n);
	for (k = 0; k < n && !t->broken; k++) {
		struct gen g;

		ops[k].op = IBV_WR_RDMA_WRITE;
		ops[k].roff = RS_WRITES + k * rstride + GUARD +
			      piece_offs[(r.first + k * 5) % DIM(piece_offs)];
		layout_of(&r, true, t->max_sge, k, &ops[k].L);
		gen_init(&g, &r, r.first + k);
		layout_write(t, &ops[k].L, &g);
		stream_read(t, &ops[k].L, 0, t->rs.shadow + ops[k].roff, size);
	}
	if (t->broken || !rs_batch(t, ops, (uint32_t)n, r.first))
		return;
	/* ... the source untouched, then READ each back into other SGEs */
	for (k = 0; k < n; k++)
		layout_check(t, &r, &ops[k].L, r.first + k, 0, CHK_EXACT, "WRITE source");
	rs_round(t, &r, OP_READ, size, (uint32_t)n);
	for (k = 0; k < n; k++) {
		ops[k].op = IBV_WR_RDMA_READ;
		layout_of(&r, true, t->max_sge, k, &ops[k].L);
	}
	if (rs_batch(t, ops, (uint32_t)n, r.first))
		rs_read_check(t, &r, ops, (uint32_t)n, scratch, "READ back of WRITE");
}

static uint64_t
rs_word(const struct tc *t, uint64_t off)
{
	uint64_t w;

	memcpy(&w, t->rs.shadow + off, 8);
	return le64toh(w);
}

/*
 * A chain of FETCH_ADDs or CMP_SWPs over the words, in order: each returns
 * exactly the value before it (every third compare misses: no swap), and
 * the words end as planned.
 */
static void
rs_atomics(struct tc *t, uint32_t op, struct rs_op *ops, uint8_t *scratch)
{
	uint64_t want[RS_CHAIN];
	struct round r;
	uint32_t k;

	rs_round(t, &r, op, 8, RS_CHAIN);
	for (k = 0; k < RS_CHAIN; k++) {
		uint64_t off = RS_ATOMS + atom_word_off(k % ATOM_WORDS), orig = rs_word(t, off);
		uint64_t v = mix64(r.salt + k), now;

		ops[k] = (struct rs_op){ .roff = off, .L = { .n = 1, .total = 8,
			.p[0] = { .lane = 0, .off = (uint32_t)atom_result_off(k), .len = 8 } } };
		want[k] = orig;
		if (op == OP_FADD) {
			ops[k].op = IBV_WR_ATOMIC_FETCH_AND_ADD;
			ops[k].cmp_add = v;
			now = orig + v;
		} else {
			ops[k].op = IBV_WR_ATOMIC_CMP_AND_SWP;
			ops[k].cmp_add = k % 3 == 2 ? orig ^ (1ull << (k % 64)) : orig;
			ops[k].swap = v;
			now = k % 3 == 2 ? orig : v;
		}
		now = htole64(now);
		memcpy(t->rs.shadow + off, &now, 8);
	}
	if (!rs_batch(t, ops, RS_CHAIN, r.first))
		return;
	for (k = 0; k < RS_CHAIN; k++) {
		uint64_t have;

		memcpy(&have, lane_ptr(t, 0, atom_result_off(k)), 8);
		if (have != want[k])
			rfail(t, "%s %u returned %#" PRIx64 ", want %#" PRIx64, op_name[op], k,
			      have, want[k]);
		t->bytes_checked += 8;
		layout_restore(t, &r, &ops[k].L);
	}
	/* then the words themselves (the READ's region scan covers the results' lane) */
	ops[0] = (struct rs_op){ .op = IBV_WR_RDMA_READ, .roff = RS_ATOMS, .L = { .n = 1,
		.total = ATOM_WORDS * PAGE,
		.p[0] = { .lane = 0, .off = GUARD, .len = ATOM_WORDS * PAGE } } };
	if (rs_batch(t, ops, 1, r.first + RS_CHAIN))
		rs_read_check(t, &r, ops, 1, scratch, "the atomic words after the chain");
}

/* READ back all of it in big pieces: every byte the shadow says. */
static void
rs_sweep(struct tc *t, struct rs_op *ops, uint8_t *scratch, const char *what)
{
	uint64_t off;
	uint32_t n = 0;
	struct round r;

	rs_round(t, &r, OP_READ, RS_SWEEP, 1);
	for (off = 0; off < t->rs.len; off += RS_SWEEP) {
		uint64_t len = t->rs.len - off < RS_SWEEP ? t->rs.len - off : RS_SWEEP;

		ops[n].op = IBV_WR_RDMA_READ;
		ops[n].roff = off;
		ops[n].L = (struct layout){ .n = 1, .total = len,
			.p[0] = { .lane = n % LANES, .off = GUARD, .len = (uint32_t)len } };
		if (++n == LANES || off + len == t->rs.len) {
			if (!rs_batch(t, ops, n, r.first + off))
				return;
			rs_read_check(t, &r, ops, n, scratch, what);
			n = 0;
		}
	}
}

static int
rs_drive(struct tc *t)
{
	static struct rs_op ops[ROUND_MAX];
	uint32_t sizes[32], ns = case_sizes(t, true, sizes), i;
	int64_t start = now_ms();
	uint8_t *scratch = malloc(RS_SWEEP > t->o.max_size ? RS_SWEEP : t->o.max_size);
	char line[16];
	uint64_t x;
	int ret;

	t->rs.shadow = malloc(t->rs.len);
	if (scratch == NULL || t->rs.shadow == NULL)
		die("malloc");
	for (x = 0; x < t->rs.len; x++)
		t->rs.shadow[x] = (uint8_t)(x % RS_PERIOD);
	if (t->rs.len / 2 < RS_WRITES + round_stride(t->o.max_size) ||
	    t->rs.len - t->rs.len / 2 < t->o.max_size) {
		fprintf(stderr, "traffic_check: --responder LEN too small for --max-size\n");
		return 2;
	}

	/* its GID is its address (IPv4: mapped); its end is fixed, ours comes up
	 * once it knows our QPN and PSN */
	memset(&t->peer.gid, 0, sizeof(t->peer.gid));
	if (inet_pton(AF_INET, t->o.host, &t->peer.gid.raw[12]) == 1) {
		t->peer.gid.raw[10] = 0xff;
		t->peer.gid.raw[11] = 0xff;
	} else if (inet_pton(AF_INET6, t->o.host, t->peer.gid.raw) != 1) {
		fprintf(stderr, "traffic_check: %s is no IP address\n", t->o.host);
		return 2;
	}
	t->peer.qpn[TP_RC] = t->rs.qpn;
	t->peer.psn[TP_RC] = t->rs.psn;
	t->peer.rd_atom = (uint32_t)t->rd_atom;
	t->mtu_enum = mtu_enum_of(t->mtu);
	printf("qpn %u psn %u\n", t->qp[TP_RC]->qp_num, t->psn[TP_RC]);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "go", 2) != 0)
		bail("traffic_check: no \"go\" on stdin");
	ret = qp_up(t, TP_RC);
	if (ret) {
		errno = ret;
		die("ibv_modify_qp to RTS");
	}
	printf("traffic_check: responder QPN %#x, %" PRIu64 " B, path MTU %u, seed %u, "
	       "max SGE %d\n", t->rs.qpn, t->rs.len, t->mtu, t->o.seed, t->max_sge);

	t->fails = 0;
	for (i = 0; i < ns && !t->broken; i++) {
		int before = t->fails;

		rs_size(t, sizes[i], ops, scratch);
		printf("%s rc read, write + read back %u B\n", t->fails > before ? "FAIL" : "ok  ",
		       sizes[i]);
	}
	for (i = OP_FADD; i <= OP_CSWAP && !t->broken; i++) {
		int before = t->fails;

		rs_atomics(t, i, ops, scratch);
		printf("%s rc %s chain x %u\n", t->fails > before ? "FAIL" : "ok  ", op_name[i],
		       RS_CHAIN);
	}
	if (!t->broken) {
		int before = t->fails;

		rs_sweep(t, ops, scratch, "final READ of all of it");
		printf("%s rc final READ of all %" PRIu64 " B\n", t->fails > before ? "FAIL" : "ok  ",
		       t->rs.len);
	}
	stray_check(t);
	if (t->broken)
		printf("FAIL a QP went to the error state: the remaining cases were not run\n");
	printf("traffic_check: %d failed checks; %" PRIu64 " bytes checked, %.1f s\n", t->fails,
	       t->bytes_checked, (now_ms() - start) / 1000.0);
	free(scratch);
	free(t->rs.shadow);
	return t->fails || t->broken ? 1 : 0;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: traffic_check serve|drive [options] [SERVER_IP]\n"
		"  -d DEV          device (default: the first)\n"
		"  -g N            GID index (default 0)\n"
		"  -m MTU          path MTU 256..4096 (default: the port's active MTU)\n"
		"  -p PORT         TCP port (default %d)\n"
		"  -c LIST         cases: rc,uc,ud, send,send_imm,write,write_imm,read,\n"
		"                  fetch_add,cmp_swap,atomic, or rc-write ... (default all)\n"
		"  -s SEED         payload seed (default 1)\n"
		"  -n COUNT        messages per case (default 16; big sizes fewer)\n"
		"  --budget MIB    bytes per case (default 8 MiB)\n"
		"  --max-size N    largest message (default %u)\n"
		"  --repeat N      run the cases N times (default 1)\n"
		"  --seconds N     run the cases again and again for N seconds\n"
		"  --lossy         the link loses/duplicates/reorders: UC and UD may lose\n"
		"  --wait S        seconds to wait for one completion (default 30)\n"
		"  --deadline S    the whole run (default 600; exit 3 past it)\n"
		"  --timeout N     RC local ACK timeout, 4.096 us * 2^N (default 14)\n"
		"  --retry N       RC retry count (default 7)\n"
		"  --poll          busy-poll the CQs instead of completion events\n"
		"  --responder QPN:RKEY:ADDR:LEN[:PSN]  drive: no server, an RC responder\n"
		"                  whose LEN bytes at ADDR start as byte x = x mod 251\n"
		"                  (--max-size default %u here)\n",
		TC_PORT, MAX_SIZE, RS_MAX_SIZE);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "budget", required_argument, NULL, 'B' },
		{ "max-size", required_argument, NULL, 'M' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "lossy", no_argument, NULL, 'l' },
		{ "wait", required_argument, NULL, 'w' },
		{ "deadline", required_argument, NULL, 'D' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "retry", required_argument, NULL, 'R' },
		{ "poll", no_argument, NULL, 'P' },
		{ "responder", required_argument, NULL, 'Q' },
		{ NULL, 0, NULL, 0 },
	};
	static struct tc tc;
	struct tc *t = &tc;
	int c, ret;

	t->o = (struct opts){ .port = TC_PORT, .seed = 1, .count = 16, .budget = 8u << 20,
			      .max_size = MAX_SIZE, .repeat = 1, .wait_s = 30, .deadline_s = 600,
			      .qp_timeout = 14, .retry = 7 };
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "drive") == 0)
		t->client = true;
	else if (strcmp(argv[1], "serve") != 0)
		usage();
	optind = 2;
	while ((c = getopt_long(argc, argv, "d:g:m:p:c:s:n:", lopts, NULL)) != -1) {
		switch (c) {
		case 'd': t->o.dev = optarg; break;
		case 'g': t->o.gidx = atoi(optarg); break;
		case 'm': t->o.mtu = atoi(optarg); break;
		case 'p': t->o.port = atoi(optarg); break;
		case 'c': t->o.cases = optarg; break;
		case 's': t->o.seed = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': t->o.count = (uint32_t)atoi(optarg); break;
		case 'B': t->o.budget = (uint64_t)atoi(optarg) << 20; break;
		case 'M': t->o.max_size = (uint32_t)atoi(optarg); break;
		case 'r': t->o.repeat = atoi(optarg); break;
		case 'S': t->o.seconds = atoi(optarg); break;
		case 'l': t->o.lossy = true; break;
		case 'w': t->o.wait_s = atoi(optarg); break;
		case 'D': t->o.deadline_s = atoi(optarg); break;
		case 'T': t->o.qp_timeout = atoi(optarg); break;
		case 'R': t->o.retry = atoi(optarg); break;
		case 'P': t->o.poll = true; break;
		case 'Q': rs_parse(t, optarg); break;
		default: usage();
		}
	}
	if (t->rs.len && !t->client)
		usage();
	if (t->rs.len && t->o.max_size == MAX_SIZE)
		t->o.max_size = RS_MAX_SIZE;
	if (t->o.mtu && (t->o.mtu < 256 || t->o.mtu > 4096 || (t->o.mtu & (t->o.mtu - 1))))
		usage();
	if (t->o.count < 1 || t->o.max_size < 1 || t->o.max_size > MAX_SIZE || t->o.wait_s < 1)
		usage();
	if (t->client) {
		if (optind != argc - 1)
			usage();
		t->o.host = argv[optind];
	} else if (optind != argc) {
		usage();
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)t->o.deadline_s);
	signal(SIGPIPE, SIG_IGN);

	setup(t);
	if (t->rs.len) {
		ret = rs_drive(t);
		teardown(t);
		if (ret == 0)
			printf("traffic_check drive: all checks passed\n");
		return ret;
	}
	t->sock = t->client ? tcp_rendezvous_connect(t->o.host, t->o.port) :
			      tcp_rendezvous_accept(t->o.port);
	if (t->sock < 0)
		die(t->client ? "connect" : "accept");
	exchange(t);
	ret = t->client ? drive(t) : serve(t);
	close(t->sock);
	teardown(t);
	if (ret == 0)
		printf("traffic_check %s: all checks passed\n", t->client ? "drive" : "serve");
	return ret;
}
