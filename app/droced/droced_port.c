/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droced's side of the port (pmd/droce_port.h): open it from the options
 * and derive the device's MAC, GIDs and MTU; each worker's frames through
 * its droce_port_worker (pmd/droce_port_worker.h: its queue, TX backlog,
 * hand-off ring and held frames, the same data path as droce-testpmd's):
 * parse what it receives and give it to its engine, or to the engine the
 * QPN belongs to; frames built straight into mbufs; the port ops the
 * engines call, each with its worker's port_state.
 *
 * A frame that arrives on another worker's queue (the NIC or the kernel's
 * fanout spread flows by hash) goes whole to its owner's hand-off ring;
 * the owner is the QPN's shard (QPN % N), QP1's is worker 0, and frames
 * the fast sort of queues 1..N-1 does not keep (ARP, ND, IGMP/MLD, groups)
 * go to worker 0's full sort (the port worker does that).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_port.h"
#include "droce_port_worker.h"
#include "droce_wire_gid.h"
#include "droced.h"

#define BURST DROCE_PORT_WORKER_BURST
/*
 * Frames a worker keeps while the PMD's queue is full: a quarter of
 * droce-testpmd's, so that eight workers' backlogs hold a quarter of the
 * port's pool at most.
 */
#define TX_BACKLOG	256
/*
 * The engine's QPs stop once this many frames wait (port_tx_room()), as a
 * NIC's scheduler stops at a short FIFO: a rate DCQCN sets binds within a
 * few frames, not after a backlog a congested link drains slowly. The rest
 * of the backlog takes what the RX path sends meanwhile (ACKs, CNPs).
 */
#define TX_AIM		96
#define LINK_SETTLE_MS	3000	/* waited for the link before READY */
#define LINK_CHECK_NS	(100 * 1000 * 1000ull)	/* a system call on af_packet: 10 Hz */

/* One worker's: only its thread touches it (counters summed under a pause). */
struct port_state {
	struct droce_port_worker pw;	/* its queue (the worker's number), TX, hand-off */
	struct droced_worker *w;
	uint64_t rx_bad[DROCE_WIRE_DROP_COUNT];
	struct droced_roce_counts roce;	/* rx and tx here; the hand-off's are pw's */
	uint64_t next_link_check;
	uint8_t linear[DROCE_MAX_FRAME_BYTES];
} __rte_cache_aligned;

static int port_workers_init(struct droced *d, struct droce_port *port);

static struct port_state states[DROCE_DEV_MAX_ENGINES];
#define ps (states[0])		/* worker 0's: the port's slow path and link watch */

int
droced_port_open(struct droced *d, struct droce_dev_conf *conf)
{
	const struct droced_opts *o = &d->opts;
	struct droce_port_conf pc;
	struct droce_port_info info;
	struct droce_port *port;
	unsigned int i;
	int ret;

	droce_port_conf_init(&pc);
	pc.n_queues = (uint16_t)o->workers;	/* af_packet: a socket per queue */
	if (o->iface != NULL)
		ret = droce_port_conf_iface(&pc, o->iface);
	else
		ret = snprintf(pc.devargs, sizeof(pc.devargs), "%s", o->port) < 0 ? -1 : 0;
	for (i = 0; ret == 0 && i < o->n_ipv4; i++)
		ret = droce_port_conf_add_ip(&pc, o->ipv4[i]);
	for (i = 0; ret == 0 && i < o->n_ipv6; i++)
		ret = droce_port_conf_add_ip(&pc, o->ipv6[i]);
	for (i = 0; ret == 0 && i < o->n_neigh; i++)
		ret = droce_port_conf_add_neigh(&pc, o->neigh[i]);
	for (i = 0; ret == 0 && i < o->n_gateway; i++)
		ret = droce_port_conf_set_gateway(&pc, o->gateway[i]);
	if (ret == 0 && o->mac != NULL)
		ret = droce_port_conf_set_mac(&pc, o->mac);
	if (ret < 0) {
		fprintf(stderr, "droced: bad port options\n");
		return -1;
	}
	pc.ipv6_link_local = true;
	if (o->fault != NULL)
		snprintf(pc.fault, sizeof(pc.fault), "%s", o->fault);
	if (o->mtu)
		pc.mtu = (uint16_t)o->mtu;
	ret = droce_port_open(&pc, &port);
	if (ret < 0 || droce_port_info(port, &info) < 0) {
		fprintf(stderr, "droced: cannot open the port: %s\n", strerror(-ret));
		return -1;
	}
	d->port = port;
	if (port_workers_init(d, port) < 0)
		return -1;

	/* GID 0: the IPv6 link-local address; 1: the first IPv4; then the rest */
	memcpy(conf->mac, info.mac, 6);
	conf->link_mtu = info.mtu;
	conf->n_gids = 0;
	for (i = 0; i < info.n_ipv6 && conf->n_gids < 1; i++)
		if (info.ipv6[i].addr[0] == 0xfe && (info.ipv6[i].addr[1] & 0xc0) == 0x80)
			memcpy(conf->gid[conf->n_gids++], info.ipv6[i].addr, 16);
	for (i = 0; i < info.n_ipv4 && conf->n_gids < DROCE_DEV_MAX_GIDS; i++)
		droce_gid_from_ipv4(conf->gid[conf->n_gids++], info.ipv4[i].addr);
	for (i = 0; i < info.n_ipv6 && conf->n_gids < DROCE_DEV_MAX_GIDS; i++)
		if (!(info.ipv6[i].addr[0] == 0xfe && (info.ipv6[i].addr[1] & 0xc0) == 0x80))
			memcpy(conf->gid[conf->n_gids++], info.ipv6[i].addr, 16);
	/* node GUID from the MAC, EUI-64 as every RoCE device does */
	conf->node_guid = (uint64_t)(info.mac[0] ^ 0x02) << 56 | (uint64_t)info.mac[1] << 48 |
			  (uint64_t)info.mac[2] << 40 | 0xfffeull << 24 |
			  (uint64_t)info.mac[3] << 16 | (uint64_t)info.mac[4] << 8 | info.mac[5];
	return 0;
}

void
droced_port_settle(struct droced *d)
{
	unsigned int i;

	/* a port comes up a little after it starts (and memif only with its peer) */
	for (i = 0; i < LINK_SETTLE_MS / 10 && !droce_port_link_up(d->port); i++)
		rte_delay_ms(10);
	droce_dev_port_state(d->dev, droce_port_link_up(d->port));
}

void
droced_port_watch(struct droced *d, uint64_t now)
{
	if (now < ps.next_link_check)
		return;
	ps.next_link_check = now + LINK_CHECK_NS;
	droce_dev_port_state(d->dev, droce_port_link_up(d->port));
}

void *
droced_port_state(struct droced *d, unsigned int w)
{
	(void)d;
	return &states[w];
}

void
droced_port_wire_drops(uint64_t out[DROCE_WIRE_DROP_COUNT])
{
	unsigned int i, r;

	memset(out, 0, DROCE_WIRE_DROP_COUNT * sizeof(*out));
	for (i = 0; i < DROCE_DIM(states); i++)
		for (r = 0; r < DROCE_WIRE_DROP_COUNT; r++)
			out[r] += states[i].rx_bad[r];
}

void
droced_port_roce_counts(struct droced_roce_counts *out)
{
	unsigned int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < DROCE_DIM(states); i++) {
		uint64_t c[DROCE_PORT_WORKER_CNT_COUNT];

		droce_port_worker_counters(&states[i].pw, c);
		out->handoffs += c[DROCE_PORT_WORKER_CNT_HANDOFF];
		out->handoff_held += c[DROCE_PORT_WORKER_CNT_HANDOFF_HELD];
		out->handoff_drops += c[DROCE_PORT_WORKER_CNT_HANDOFF_DROP];
		out->tx_full += c[DROCE_PORT_WORKER_CNT_TX_FULL];
		out->rx_pkts += states[i].roce.rx_pkts;
		out->rx_bytes += states[i].roce.rx_bytes;
		out->tx_pkts += states[i].roce.tx_pkts;
		out->tx_bytes += states[i].roce.tx_bytes;
	}
}

void
droced_port_close(struct droced *d)
{
	unsigned int i;

	for (i = 0; i < DROCE_DIM(states); i++)
		droce_port_worker_fini(&states[i].pw);	/* their mbufs, before the pool goes */
	droce_port_close(d->port);
}

int
droced_port_wait_open(struct droced *d)
{
	/* keep one byte of each frame: the socket only says that one came */
	static struct sock_filter one_byte[] = { BPF_STMT(BPF_RET | BPF_K, 1) };
	struct sock_fprog prog = { .len = 1, .filter = one_byte };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int fd, on = 1, rcvbuf = 4096;

	if (d->opts.iface == NULL)
		return -1;
	sll.sll_ifindex = (int)if_nametoindex(d->opts.iface);
	if (sll.sll_ifindex == 0)
		return -1;
	/* protocol 0: nothing is queued before the filter and the bind */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "droced: --idle wait: packet socket on %s: %s\n", d->opts.iface,
			strerror(errno));
		close(fd);
		return -1;
	}
	/* our own transmissions wake nobody (Linux 4.20+; older: spurious wake-ups) */
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &on, sizeof(on));
	/* while we poll, frames pile up here: a small buffer drops them early */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	return fd;
}

void
droced_port_wait_drain(int fd)
{
	uint8_t b[64];

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) >= 0)
		;
}

/* ---- the workers' data path ---- */

/* After a hand-off to worker @p arg: wake it if it sleeps in --idle wait. */
static void
handoff_kick(struct droce_port_worker *to, void *arg)
{
	struct droced_worker *w = arg;

	(void)to;
	/* a Dekker pair with the worker's wait: it sets asleep, then looks at the ring */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&w->asleep, memory_order_relaxed))
		droced_worker_kick(w);
}

static int
port_workers_init(struct droced *d, struct droce_port *port)
{
	unsigned int i;
	int ret;

	for (i = 0; i < d->opts.workers; i++) {
		char name[32];
		struct droce_port_worker_conf c = {
			.port = port,
			.queue = (uint16_t)i,
			.sorter = i > 0 ? &states[0].pw : NULL,
			/* one worker hands nothing over */
			.handoff_slots = d->opts.workers > 1 ? d->opts.handoff_slots : 0,
			.tx_backlog = TX_BACKLOG,
			.kick = handoff_kick,
			.kick_arg = &d->workers[i],
			.name = name,
		};

		snprintf(name, sizeof(name), "droced_handoff%u", i);
		states[i].w = &d->workers[i];
		ret = droce_port_worker_init(&states[i].pw, &c);
		if (ret < 0) {
			fprintf(stderr, "droced: hand-off ring: %s\n", rte_strerror(-ret));
			return -1;
		}
	}
	return 0;
}

/* A frame of the burst, parsed, waiting for its QP's lines to arrive. */
struct rx_slot {
	const uint8_t *frame;
	uint32_t len;
	struct droce_pkt pkt;
};

/* The engine's stage: each parsed frame to it, in arrival order. */
static void
rx_serve(struct droced_worker *w, const struct rx_slot *slot, unsigned int n, bool local_only,
	 uint64_t now)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		droce_engine_rx(w->eng, &slot[i].pkt, slot[i].frame, slot[i].len, local_only, now);
}

/*
 * Parse each frame and give it to the engine it is for: this worker's
 * (any group's frame too: its engine hands copies to the others with
 * members), else whole to the owner's hand-off ring. Frees what stayed.
 * Stage by stage: the whole burst is parsed and its QPs' lines prefetched
 * before the engine takes the first, so that with thousands of QPs their
 * misses overlap. @p wire: they came from the port (counted here, once),
 * not from another worker's engine (a loopback or group copy, or a frame
 * it counted).
 */
static void
rx_deliver(struct port_state *p, struct rte_mbuf **pkts, unsigned int n, bool local_only,
	   bool wire, uint64_t now)
{
	struct droced_worker *w = p->w;
	struct rte_mbuf *done[BURST];
	struct rx_slot slot[BURST];
	unsigned int i, n_done = 0, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t len = rte_pktmbuf_pkt_len(m);
		struct rx_slot *s = &slot[k];
		enum droce_wire_drop r;
		int owner;

		if (n_done == BURST) {	/* what waits may read them */
			rx_serve(w, slot, k, local_only, now);
			k = 0;
			s = &slot[0];
			droce_port_worker_free_rx(&p->pw, done, n_done);
			n_done = 0;
		}
		if (m->nb_segs > 1) {	/* jumbo frames on some PMDs: one copy */
			if (len > sizeof(p->linear)) {
				done[n_done++] = m;
				continue;
			}
			/* into the port's one buffer: what waits goes first */
			rx_serve(w, slot, k, local_only, now);
			k = 0;
			s = &slot[0];
			frame = rte_pktmbuf_read(m, 0, len, p->linear);
		}
		s->frame = frame;
		s->len = len;
		r = droce_pkt_parse(&s->pkt, frame, len, len);
		if (r != DROCE_WIRE_OK) {
			p->rx_bad[r]++;
			done[n_done++] = m;
			continue;
		}
		if (wire) {
			p->roce.rx_pkts++;
			p->roce.rx_bytes += len;
		}
		owner = droce_engine_owner(w->eng, &s->pkt);
		if (owner >= 0 && (unsigned int)owner != w->id) {
			/* it is theirs now (held here while their ring is full) */
			droce_port_worker_hand(&p->pw, &states[owner].pw, m, 0);
			continue;
		}
		droce_engine_prefetch_rx(w->eng, &s->pkt);
		k++;
		done[n_done++] = m;
	}
	rx_serve(w, slot, k, local_only, now);
	if (n_done > 0)
		/* into our queue's stash: the next frames we send */
		droce_port_worker_free_rx(&p->pw, done, n_done);
}

unsigned int
droced_port_rx(struct droced_worker *w, uint64_t now)
{
	struct port_state *p = w->port_state;
	struct rte_mbuf *pkts[BURST];
	uint16_t n = droce_port_worker_rx(&p->pw, pkts, BURST);

	rx_deliver(p, pkts, n, false, true, now);
	/*
	 * Frames held for a full ring, or left in the TX backlog by a full
	 * PMD queue: both drain by themselves, so no sleeping meanwhile.
	 */
	return n + (droce_port_worker_held(&p->pw) > 0) + (droce_port_worker_tx_pending(&p->pw) > 0);
}

struct take_ctx {
	struct port_state *p;
	uint64_t now;
};

/* Frames handed over by another worker (their tags stripped, all of kind @p tags). */
static void
rx_handed(void *arg, struct rte_mbuf **pkts, uint16_t n, unsigned int tags)
{
	struct take_ctx *c = arg;

	/* frames another queue took but did not sort are the wire's (sorted by now) */
	rx_deliver(c->p, pkts, n, (tags & DROCE_PORT_WORKER_LOCAL) != 0,
		   (tags & DROCE_PORT_WORKER_SLOW) != 0, c->now);
}

unsigned int
droced_port_handoff_take(struct droced_worker *w, uint64_t now)
{
	struct take_ctx c = { w->port_state, now };

	return droce_port_worker_take(&c.p->pw, rx_handed, &c);
}

void
droced_port_flush(struct droced_worker *w)
{
	struct port_state *p = w->port_state;

	droce_port_worker_flush(&p->pw);
}

static int
port_frame_out(void *arg, struct droce_pkt *pkt, const struct droce_iov *iov, unsigned int n_iov)
{
	struct port_state *p = arg;
	struct rte_mbuf *m = droce_port_worker_alloc(&p->pw);
	int len;

	if (m == NULL)
		return -ENOBUFS;
	len = droce_tqp_frame_build(pkt, iov, n_iov, rte_pktmbuf_mtod(m, uint8_t *),
				    rte_pktmbuf_tailroom(m));
	if (len < 0) {
		rte_pktmbuf_free(m);
		return len;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	p->roce.tx_pkts++;
	p->roce.tx_bytes += (uint64_t)len;
	/* a full backlog frees it (counted): a loss the transport recovers from */
	(void)droce_port_worker_tx(&p->pw, m);
	return 0;
}

static int
port_resolve(void *arg, const uint8_t gid[16], uint8_t mac[6])
{
	struct port_state *p = arg;

	return droce_port_worker_resolve(&p->pw, gid, mac);
}

/* A copy of a frame for another worker's engine (loopback, a group's members). */
static int
port_handoff(void *arg, unsigned int engine, const uint8_t *frame, uint32_t len, bool local_only)
{
	struct port_state *p = arg;
	struct rte_mbuf *m;

	if (engine >= p->w->d->n_workers)
		return -ENOBUFS;
	m = droce_port_worker_alloc(&p->pw);
	if (m == NULL)
		return -ENOBUFS;
	if (rte_pktmbuf_tailroom(m) < len) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame, len);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	/* a copy: never held, a full ring loses it (the engine counts RX_HANDOFF_FAIL) */
	if (droce_port_worker_handoff(&p->pw, &states[engine].pw, m,
				      local_only ? DROCE_PORT_WORKER_LOCAL : 0) < 0) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	return 0;
}

static void
port_mcast_join(void *arg, const uint8_t gid[16])
{
	(void)arg;
	droce_port_mcast_join(ps.pw.port, gid);
}

static void
port_mcast_leave(void *arg, const uint8_t gid[16])
{
	(void)arg;
	droce_port_mcast_leave(ps.pw.port, gid);
}

static unsigned int
port_tx_room(void *arg)
{
	struct port_state *p = arg;
	unsigned int waiting = TX_BACKLOG - droce_port_worker_tx_room(&p->pw);

	return waiting < TX_AIM ? TX_AIM - waiting : 0;
}

const struct droce_dev_port_ops droced_port_ops = {
	.frame_out = port_frame_out,
	.tx_room = port_tx_room,
	.resolve = port_resolve,
	.mcast_join = port_mcast_join,
	.mcast_leave = port_mcast_leave,
	.handoff = port_handoff,
};
