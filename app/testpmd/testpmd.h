/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TESTPMD_H
#define DROCE_TESTPMD_H

/*
 * droce-testpmd: droce's transports straight on a DPDK port, no daemon and
 * no shim. N workers (--workers) each run their own instance of the engine
 * (testpmd_engine.c) on their own port; the main thread reads commands
 * (testpmd_cmd.c) and prints progress.
 */

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "droce_idle.h"
#include "droce_port.h"
#include "droce_transport.h"
#include "droce_wire.h"

enum tp_mode {
	TP_WRITE,		/* RC RDMA WRITE stream */
	TP_SEND,		/* RC SEND stream */
	TP_READ,		/* RC RDMA READ stream */
	TP_FADD,		/* RC atomic fetch-and-add stream */
	TP_CSWAP,		/* RC atomic compare-and-swap stream */
	TP_UD,			/* UD SEND stream */
	TP_RESPONDER,		/* serve the streams above (RC, or UD with --ud) */
	TP_RAW,			/* count and check received RoCEv2 frames, nothing else */
	TP_MODE_COUNT
};

/* Workers at most: one port each (the port layer opens one queue per port). */
#define TP_MAX_WORKERS	16

struct tp_opts {
	/* port */
	const char *iface;		/* --iface NAME */
	const char *port[TP_MAX_WORKERS];	/* --port DEVARGS, one per worker */
	unsigned int n_port;
	unsigned int workers;		/* --workers N */
	const char *ip[4];		/* --ip ADDR/PFX */
	unsigned int n_ip;
	const char *neigh[8];		/* --neigh IP=MAC */
	unsigned int n_neigh;
	const char *mac;		/* --mac */
	uint32_t mtu;			/* --mtu: Ethernet MTU */
	/* traffic */
	enum tp_mode mode;		/* --mode */
	bool ud;			/* --ud: the responder serves UD */
	uint32_t size;			/* --size: message bytes */
	uint32_t qps;			/* --qps */
	uint32_t depth;			/* --depth: outstanding messages per QP */
	uint64_t rate;			/* --rate: messages/s, 0 = unlimited */
	uint64_t count;			/* --count: stop after this many messages, 0 = never */
	uint32_t path_mtu;		/* --path-mtu: 256..4096 */
	uint32_t qpn_base;		/* --qpn: our first QPN */
	uint32_t remote_qpn;		/* --remote-qpn: the peer's first QPN */
	const char *remote_ip;		/* --remote IP: the peer's GID as an address */
	uint32_t psn;			/* --psn: our first PSN */
	uint32_t remote_psn;		/* --remote-psn */
	uint32_t rkey;			/* --rkey: the peer's R_Key */
	uint64_t raddr;			/* --raddr: the peer's address */
	uint64_t rlen;			/* --rlen: bytes at raddr to spread over */
	uint64_t rstep;			/* --rstep: QP i's rlen bytes at raddr + i * rstep */
	uint32_t key;			/* --key: our memory's L_Key = R_Key */
	uint32_t qkey;			/* --qkey (UD) */
	uint32_t timeout;		/* --timeout: IBA exponent, 1..31 */
	uint64_t mem;			/* --mem: bytes of our memory */
	enum droce_idle_mode idle;	/* --idle */
	const char *cmd;		/* --cmd 'a; b' */
	const char *cmd_file;		/* --cmd-file F */
	bool quiet;			/* --quiet: no per-second lines */
	bool check;			/* --check: judge results, exit 1 on a fault */
};

/* Engine counters, written by the worker only. C(sym, description) */
#define TP_COUNTERS(C) \
	C(MSGS,        "messages completed (requester) or received (responder)") \
	C(BYTES,       "payload bytes of those messages") \
	C(ERRORS,      "completions with an error status") \
	C(BAD_DATA,    "READ data or atomic results unlike the peer's pattern (--check)") \
	C(QP_ERRORS,   "QPs that went to the error state") \
	C(POSTED,      "messages posted") \
	C(TX_FRAMES,   "frames handed to the port") \
	C(TX_NOMBUF,   "frames not built: no mbuf") \
	C(TX_FULL,     "frames dropped: the port's queue stayed full and the TX backlog filled") \
	C(RX_FRAMES,   "RoCEv2 frames received") \
	C(RX_OK,       "frames that parsed and passed the ICRC") \
	C(RX_NO_QP,    "frames for a QPN we do not have") \
	C(HANDOFF,     "frames for another worker's QP, handed to it") \
	C(HANDOFF_HELD, "received frames held while the receiver's hand-off ring was full") \
	C(HANDOFF_FULL, "received frames dropped: that ring and the frames held were full")

enum tp_counter {
#define C(sym, desc) TP_CNT_##sym,
	TP_COUNTERS(C)
#undef C
	TP_CNT_COUNT
};

struct tp_engine;

/* Engine life cycle (main thread): worker i polls ports[i], o->workers of them. */
int tp_engine_create(const struct tp_opts *o, struct droce_port *const *ports,
		     struct tp_engine **out);
void tp_engine_destroy(struct tp_engine *e);
/*
 * Run the workers' poll loops, worker i on the i-th worker lcore, or on a
 * thread when EAL has fewer. tp_engine_halt() ends them and waits: a memif
 * peer must not be closed while either side still polls (DPDK 22.11's
 * memif crashes).
 */
int tp_engine_launch(struct tp_engine *e);
void tp_engine_halt(struct tp_engine *e);
/* Start and stop traffic (main thread; the worker obeys at its next pass). */
void tp_engine_start(struct tp_engine *e);
void tp_engine_stop(struct tp_engine *e);
bool tp_engine_running(const struct tp_engine *e);
/* Settings that may change while stopped ("set size 64"). @return 0 or -EINVAL. */
int tp_engine_set(struct tp_engine *e, const char *name, uint64_t value);

/* A snapshot for reports (any thread; counters may lag by a pass). */
struct tp_snapshot {
	uint64_t t_ns;
	uint64_t cnt[TP_CNT_COUNT];
	uint64_t tqp[DROCE_TQP_CNT_COUNT];	/* summed over the QPs */
	uint64_t wire_drop[DROCE_WIRE_DROP_COUNT];
	uint64_t atomic_word;			/* our memory's first 8 bytes */
	uint64_t outstanding;
	uint64_t run_posted;			/* messages posted since the last start */
	unsigned int workers;
	uint64_t wcnt[TP_MAX_WORKERS][TP_CNT_COUNT];	/* each worker's own */
};
void tp_engine_snapshot(struct tp_engine *e, struct tp_snapshot *s);
/* Bytes of memory one QP costs here. */
uint64_t tp_engine_qp_bytes(const struct tp_engine *e);
const struct tp_opts *tp_engine_opts(const struct tp_engine *e);
/* Worker @p w's port. */
struct droce_port *tp_engine_port(const struct tp_engine *e, unsigned int w);
const char *tp_mode_name(enum tp_mode m);
extern const char *const tp_counter_name[TP_CNT_COUNT];

/* Options (testpmd_opts.c). @return 0, or -1 after printing why. */
int tp_opts_parse(struct tp_opts *o, int argc, char **argv);

/* Set by SIGINT / SIGTERM: it ends the current sleep or wait, or the prompt. */
extern volatile sig_atomic_t tp_interrupted;

/* Commands (testpmd_cmd.c): run a ';'-separated list or a file or the prompt. */
int tp_cmd_run_list(struct tp_engine *e, const char *list);
int tp_cmd_run_file(struct tp_engine *e, const char *path);
int tp_cmd_interactive(struct tp_engine *e);

#endif /* DROCE_TESTPMD_H */
