/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCED_H
#define DROCED_H

/*
 * droced internals: options, the control server (its own thread), the
 * mailbox through which it hands requests to the worker, and the worker's
 * poll loop. The worker (the main lcore) owns the device and the port;
 * the control thread only does socket I/O.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_ctrl.h"
#include "droce_engine.h"
#include "droce_idle.h"
#include "droce_verbs_dev.h"

struct droced_opts {
	const char *iface;		/* --iface NAME: net_af_packet on it */
	const char *port;		/* --port DEVARGS or an EAL port name */
	const char *socket_path;	/* --socket PATH */
	const char *config;		/* --config FILE */
	const char *name;		/* --name droce0 */
	const char *ipv4[4];		/* --ip ADDR/PFX (IPv4 or IPv6) */
	const char *ipv6[4];
	unsigned int n_ipv4, n_ipv6;
	const char *neigh[16];		/* --neigh IP=MAC static neighbours */
	unsigned int n_neigh;
	const char *gateway[2];		/* --gateway IP: one per family */
	unsigned int n_gateway;
	const char *mac;		/* --mac */
	uint32_t mtu;			/* --mtu */
	enum droce_idle_mode idle;	/* --idle */
	unsigned int workers;		/* --workers: worker lcores, engines, port queues */
	unsigned int handoff_slots;	/* --handoff-slots: each worker's hand-off ring */
	uint32_t sock_mode;		/* --socket-mode 0660 */
	int sock_gid;			/* --socket-group */
	uint64_t seed;			/* --seed: key bytes (tests) */
	const char *fault;		/* --fault: net_droce_fault parameters */
	uint8_t ecn_np, ecn_rp;		/* --ecn-np, --ecn-rp: priorities, a bit each */
	struct droce_dcqcn_params dcqcn;	/* --dcqcn NAME=VALUE */
};

/* What ended each sleep of --idle wait: C(sym, name) */
#define DROCED_WAIT_COUNTERS(C) \
	C(SLEEPS,  "wait_sleeps") \
	C(CLIENT,  "wait_woken_client") \
	C(PORT,    "wait_woken_port") \
	C(CTRL,    "wait_woken_ctrl") \
	C(TIMEOUT, "wait_timeouts")
enum droced_wait_cnt {
#define C(sym, name) DROCED_WAIT_##sym,
	DROCED_WAIT_COUNTERS(C)
#undef C
	DROCED_WAIT_CNT_COUNT
};
extern const char *const droced_wait_counter_name[DROCED_WAIT_CNT_COUNT];

/* A request handed from the control or telemetry thread to the worker. */
struct droced_call {
	void (*fn)(struct droced_call *c);
	void *arg;
	int done_fd;		/* the caller's eventfd: the worker writes it when done */
	_Atomic int done;
	bool quiet;		/* housekeeping (sysfs' snapshot): no sign of traffic */
};

/* What a pass's mailbox ran (droced_loop.c). */
enum droced_mail {
	DROCED_MAIL_NONE,
	DROCED_MAIL_QUIET,	/* a quiet call ran */
	DROCED_MAIL_ACTIVE,	/* a client's request ran */
};

struct droced;

/*
 * One worker lcore (droced_loop.c): its engine, its port queue, the
 * frames other workers hand it. Worker 0 (the main lcore) also runs the
 * control requests, rdma_cm and the port's slow path (ARP, ND, IGMP/MLD).
 */
struct droced_worker {
	struct droced *d;
	unsigned int id;		/* its engine's number and its port queue */
	struct droce_engine *eng;
	_Atomic bool parked;		/* holds nothing of its engine: a control call may run */
	_Atomic bool asleep;		/* --idle wait: in epoll, kick it after a hand-off */
	int wait_epfd;			/* --idle wait, else -1 */
	int wait_kick_fd;		/* eventfd: a call or a hand-off for it */
	uint64_t wait_cnt[DROCED_WAIT_CNT_COUNT];	/* droce-ctl stats */
	void *port_state;		/* droced_port.c's, for its queue */
} __rte_cache_aligned;


struct droced {
	struct droced_opts opts;
	struct droce_dev_conf conf;	/* as the device was created: GIDs, node GUID */
	struct droce_dev *dev;		/* the control plane: objects, clients, requests */
	struct droce_engine *eng;	/* worker 0's engine */
	void *port;			/* struct droce_port */
	struct rte_ring *mailbox;	/* droced_call pointers: any thread in, worker 0 out */
	_Atomic bool stop;
	_Atomic bool worker_gone;	/* the poll loop has returned: calls wait no more */
	/* worker 0 runs a control call only while every other one is parked */
	_Atomic bool pause;
	int listen_fd;
	int wait_port_fd;		/* readable when a frame reached the port, or -1 */
	unsigned int n_workers;
	struct droced_worker workers[DROCE_DEV_MAX_ENGINES];
};

/*
 * The workers' loop (droced_loop.c): set up the workers and the mailbox
 * (after rte_eal_init; 0, or -1 after printing why), launch workers
 * 1..n-1 on their lcores, pause them around a control call; each
 * worker's loop of passes and idle waits until d->stop (worker 0 on the
 * main lcore).
 */
int droced_workers_init(struct droced *d);
int droced_workers_launch(struct droced *d);
void droced_workers_join(struct droced *d);
void droced_workers_pause(struct droced *d);
void droced_workers_resume(struct droced *d);
int droced_worker_loop(void *arg);

/* Hand @c to worker 0 and wait until it ran (or the worker is gone). Any thread but the workers. */
void droced_call_worker(struct droced *d, struct droced_call *c);

/*
 * --idle wait: set up each worker's epoll set (and conf->wait_epfd[], for
 * the clients' wake eventfds) before the device is created; close them.
 */
int droced_wait_init(struct droced *d, struct droce_dev_conf *conf);
void droced_wait_close(struct droced *d);

/* Wake worker @p w if it sleeps in --idle wait (a call or a hand-off for it). */
static inline void
droced_worker_kick(struct droced_worker *w)
{
	uint64_t one = 1;

	if (w->wait_kick_fd >= 0)
		(void)!write(w->wait_kick_fd, &one, sizeof(one));
}

/* The control server thread. */
void *droced_ctrl_thread(void *arg);
int droced_ctrl_listen(struct droced *d);

/*
 * OPEN_MAPPING for the client @p pid (alive while @p pidfd is), with its
 * @p uid and @p gid deciding the file's permissions (droced_mapping.c).
 * @return 0 with *fd_out open, or a positive errno.
 */
int droced_open_mapping(int pidfd, pid_t pid, uid_t uid, gid_t gid,
			const struct droce_ctrl_open_mapping_req *req, int *fd_out);

/*
 * The port, wrapped for the worker (droced_port.c): open it from the
 * options, fill the device's MAC, GIDs and link MTU; receive and hand
 * RoCEv2 frames to the device; the device's port ops; flush transmits.
 */
int droced_port_open(struct droced *d, struct droce_dev_conf *conf);
/* Worker @p w's port state and its engine's port ops argument (after droced_port_open). */
void *droced_port_state(struct droced *d, unsigned int w);
/* Worker @p w: receive a burst from its queue and deliver (or hand over) what came. */
unsigned int droced_port_rx(struct droced_worker *w, uint64_t now);
/* Worker @p w: deliver what the other workers handed it. @return frames taken. */
unsigned int droced_port_handoff_take(struct droced_worker *w, uint64_t now);
void droced_port_flush(struct droced_worker *w);
/* Before READY: wait (boundedly) for the link, set the port's state. */
void droced_port_settle(struct droced *d);
/* Follow the link: the device's port state and events. Worker, every loop. */
void droced_port_watch(struct droced *d, uint64_t now);
void droced_port_close(struct droced *d);
/*
 * A descriptor that becomes readable when a frame reaches the port, for
 * --idle wait: a packet socket on the interface of an af_packet port
 * (keeping one byte of each frame), -1 for other ports. Drained before
 * each wait and after it woke.
 */
int droced_port_wait_open(struct droced *d);
void droced_port_wait_drain(int fd);
/* Received frames the parser refused, by DROCE_WIRE_DROPS reason, all workers. */
void droced_port_wire_drops(uint64_t out[DROCE_WIRE_DROP_COUNT]);

/* RoCEv2 frames (Ethernet header to ICRC) on the wire since start; loopback not. */
struct droced_roce_counts {
	uint64_t rx_pkts, rx_bytes;	/* parsed as RoCEv2, handed to the device */
	uint64_t tx_pkts, tx_bytes;	/* built and queued to the port */
	/* summed only: received for another worker's engine, and dropped (its ring full) */
	uint64_t handoffs, handoff_held, handoff_drops;
	uint64_t tx_full;		/* built, dropped: the TX backlog was full */
};
/* All workers (worker 0, while the others are parked). */
void droced_port_roce_counts(struct droced_roce_counts *out);
extern const struct droce_dev_port_ops droced_port_ops;

/*
 * rdma_cm (droced_cm.c), all on the worker: QP1's MADs into lib/cm, the
 * clients' CM messages (droce_ctrl_cm.h), their events, timers.
 */
int droced_cm_init(struct droced *d);
/* A CM request of @cl: as droce_dev_request() (0, a positive errno, or -EPROTO). */
int droced_cm_request(struct droced *d, struct droce_client *cl,
		      const struct droce_ctrl_hdr *hdr, const void *body, const int *fds,
		      unsigned int nfds, void *rep, uint32_t *rep_len);
/* The client's connection closed: its ids go (peers get REJ or DREQ). */
void droced_cm_client_gone(struct droced *d, struct droce_client *cl);
/* Timers and pending address resolutions. @return work done. */
unsigned int droced_cm_poll(struct droced *d, uint64_t now);
/* Counter names and values, the daemon's then lib/cm's then the parser's drops. */
unsigned int droced_cm_counters(const char **names, uint64_t *values, unsigned int max);

/*
 * The Linux-shaped view of the device (droced_sysfs.c): a sysfs-like tree
 * at <socket>.sysfs that droce-run mounts over /sys/class and
 * /dev/infiniband. Written at start; port state and counters refreshed
 * once a second by the control thread.
 */
int droced_sysfs_init(struct droced *d, const struct droce_dev_conf *conf);
void droced_sysfs_tick(struct droced *d);
void droced_sysfs_remove(struct droced *d);

/* DPDK telemetry commands (/droce/...). */
void droced_telemetry_init(struct droced *d);

/* Options and the config file. @return 0, or -1 after printing why. */
int droced_opts_parse(struct droced_opts *o, int argc, char **argv);

#endif /* DROCED_H */
