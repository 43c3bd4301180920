/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Port life cycle (droce_port.h): configuration helpers, open (find or
 * hotplug the ethdev, optionally wrap it in the fault vdev, choose MAC and
 * MTU, mempool, configure with the offloads the port offers, queues,
 * filters, start, wait for link), close, info and counters.
 *
 * Everything here runs on the thread that opens and closes the port
 * (droced's main thread, before and after the poll loop); info and stats
 * are read from any thread.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf_pool_ops.h>

#include "droce_fault.h"
#include "port_priv.h"

RTE_LOG_REGISTER(droce_port_logtype, pmd.droce, NOTICE);

#define DEFAULT_NB_DESC		1024
#define DEFAULT_NB_MBUFS	8191	/* 2^n - 1: the optimum for rte_mempool */
#define MBUF_CACHE		256
#define DEFAULT_LINK_WAIT_MS	3000
/* frame overhead above the MTU we size buffers for: Ethernet + 802.1Q + FCS */
#define FRAME_OVERHEAD		(RTE_ETHER_HDR_LEN + 4 + RTE_ETHER_CRC_LEN)
#define MIN_FRAME_ROOM		2048	/* never smaller than a standard mbuf */
/* Jumbo frames through a kernel interface (af_packet): its ring frames and
 * our mbufs both take KERNEL_JUMBO_FRAMESZ, the MTU goes up to 9216. */
#define KERNEL_JUMBO_FRAMESZ	10240
#define KERNEL_PORT_MAX_MTU	9216

static const struct {
	const char *sym;
	const char *desc;
} counter_info[DROCE_PORT_CNT_COUNT] = {
#define C(sym, desc) [DROCE_PORT_CNT_##sym] = { #sym, desc },
	DROCE_PORT_COUNTERS(C)
#undef C
}, drop_info[DROCE_PORT_DROP_COUNT] = {
#define R(sym, desc) [DROCE_PORT_DROP_##sym] = { #sym, desc },
	DROCE_PORT_DROPS(R)
#undef R
};

const char *
droce_port_counter_name(enum droce_port_counter c)
{
	return (unsigned int)c < DROCE_PORT_CNT_COUNT ? counter_info[c].sym : "UNKNOWN";
}

const char *
droce_port_counter_desc(enum droce_port_counter c)
{
	return (unsigned int)c < DROCE_PORT_CNT_COUNT ? counter_info[c].desc : "unknown counter";
}

const char *
droce_port_drop_name(enum droce_port_drop r)
{
	return (unsigned int)r < DROCE_PORT_DROP_COUNT ? drop_info[r].sym : "UNKNOWN";
}

const char *
droce_port_drop_desc(enum droce_port_drop r)
{
	return (unsigned int)r < DROCE_PORT_DROP_COUNT ? drop_info[r].desc : "unknown reason";
}

/* ---- configuration helpers ---- */

void
droce_port_conf_init(struct droce_port_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->n_queues = 1;
}

/* Queue pairs asked for: at least one. */
static uint16_t
conf_queues(const struct droce_port_conf *conf)
{
	return conf->n_queues > 1 ? conf->n_queues : 1;
}

static bool
ifname_ok(const char *ifname)
{
	size_t len = strlen(ifname), i;

	if (len == 0 || len >= DROCE_PORT_IFNAME_LEN)
		return false;
	/* ',' and '=' would break the devargs; the kernel refuses '/' and spaces */
	for (i = 0; i < len; i++)
		if (ifname[i] == ',' || ifname[i] == '=' || ifname[i] == '/' ||
		    isspace((unsigned char)ifname[i]))
			return false;
	return true;
}

/*
 * The pool's ring: relaxed tail sync instead of DPDK's default MP/MC ring
 * (unless EAL was told --mbuf-pool-ops-name). Workers of one process may
 * share a core (two daemons, or threads beyond the lcores on two cores);
 * with the default ring a worker preempted between moving the ring's head
 * and its tail makes every other worker of the pool spin until it runs
 * again: droce-testpmd's queue workers were seen stalled 260 ms at a time
 * in their receive path, long enough for their peers' QPs to exhaust
 * their retries. With RTS the others go on while the ring's head stays
 * within an eighth of the ring of its tail; the lcores' mempool caches
 * keep most allocations off the ring anyway.
 */
static const char *
pool_ops(void)
{
	const char *best = rte_mbuf_best_mempool_ops();

	return strcmp(best, "ring_mp_mc") == 0 ? "ring_mt_rts" : best;
}

static int
kernel_iface_query(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = 0;

	if (fd < 0)
		return -errno;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	if (ioctl(fd, req, ifr) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * net_af_packet calls its link up from start to stop whatever the
 * interface does: ask the kernel (administratively up, carrier present).
 */
static bool
kernel_iface_up(const struct droce_port *port)
{
	struct ifreq ifr;

	if (port->iface[0] == '\0')
		return true;
	if (kernel_iface_query(port->iface, SIOCGIFFLAGS, &ifr) < 0)
		return false;
	return (ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);
}

#define AF_PACKET_FRAMES	4096	/* of 2 KiB: 8 MiB per ring, RX and TX */
#define AF_PACKET_JUMBO_FRAMES	2048	/* of 10 KiB: 20 MiB per ring */

int
droce_port_conf_iface(struct droce_port_conf *conf, const char *ifname)
{
	if (conf == NULL || ifname == NULL || !ifname_ok(ifname))
		return -EINVAL;
	if (if_nametoindex(ifname) == 0)
		return -ENODEV;
	/*
	 * One queue pair per worker (a socket each, in a PACKET_FANOUT group
	 * when there are several: the kernel spreads flows by hash). Jumbo
	 * frames (the kernel interface's MTU decides, see choose_mtu()) in
	 * 2048 ring frames of 10 KiB, others in 4096 of 2 KiB (net_af_packet's
	 * default is 512 either way): when droced is not scheduled during a
	 * burst the kernel drops what the ring cannot hold, unseen by DPDK's
	 * counters. One 1 MiB RDMA READ comes back as 1024 responses at once:
	 * with 512, Open MPI's 1 MiB messages over UCX rc_verbs (READs) lost
	 * 11% of frames on a busy 2-core host and waited out a retransmission
	 * timeout each time (1.2 MB/s); with 4096 none was lost (93 MB/s). And
	 * 512 jumbo frames are 17 ms of 4 KiB frames at 1 Gbit/s: the receiver
	 * of bench-incast (six daemons on two cores) lost frames there that
	 * the bottleneck never dropped.
	 */
	struct ifreq ifr;
	bool jumbo = kernel_iface_query(ifname, SIOCGIFMTU, &ifr) == 0 &&
		     ifr.ifr_mtu > RTE_ETHER_MTU;

	/* jumbo: two ring frames per block, each as large as our mbufs */
	snprintf(conf->devargs, sizeof(conf->devargs), jumbo ?
		 "net_af_packet_%s,iface=%s,qpairs=%u,blocksz=%u,framesz=%u,framecnt="
		 RTE_STR(AF_PACKET_JUMBO_FRAMES) :
		 "net_af_packet_%s,iface=%s,qpairs=%u,framecnt=" RTE_STR(AF_PACKET_FRAMES),
		 ifname, ifname, conf_queues(conf),
		 2 * KERNEL_JUMBO_FRAMESZ, KERNEL_JUMBO_FRAMESZ);
	snprintf(conf->iface, sizeof(conf->iface), "%s", ifname);
	return 0;
}

static bool
mac_usable(const uint8_t mac[6])
{
	static const uint8_t zero[6];

	return !(mac[0] & 1) && memcmp(mac, zero, 6) != 0;
}

int
droce_port_conf_set_mac(struct droce_port_conf *conf, const char *s)
{
	struct rte_ether_addr a;

	if (conf == NULL || s == NULL || rte_ether_unformat_addr(s, &a) != 0 ||
	    !mac_usable(a.addr_bytes))
		return -EINVAL;
	memcpy(conf->mac, a.addr_bytes, 6);
	conf->has_mac = true;
	return 0;
}

/* "ADDR" or "ADDR/PFX" into a GID and a prefix length. */
static int
parse_ip(const char *s, uint8_t gid[16], unsigned int *prefix, bool want_prefix)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash, *end;
	bool v4;
	long pfx;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash != NULL) {
		if (!want_prefix)
			return -EINVAL;
		*slash++ = '\0';
	}
	if (inet_pton(AF_INET, buf, gid + 12) == 1) {
		rte_be32_t ip;

		memcpy(&ip, gid + 12, 4);
		droce_gid_from_ipv4(gid, ip);
		v4 = true;
	} else if (inet_pton(AF_INET6, buf, gid) == 1) {
		v4 = false;
	} else {
		return -EINVAL;
	}
	pfx = v4 ? 32 : 128;
	if (slash != NULL) {
		errno = 0;
		pfx = strtol(slash, &end, 10);
		if (*slash == '\0' || *end != '\0' || errno != 0 || pfx < 0 || pfx > (v4 ? 32 : 128))
			return -EINVAL;
	}
	if (prefix != NULL)
		*prefix = (unsigned int)pfx;
	return 0;
}

static bool
gid_is_unspecified(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	if (droce_gid_is_ipv4(gid))
		return droce_gid_to_ipv4(gid) == 0;
	return memcmp(gid, zero, 16) == 0;
}

int
droce_port_conf_add_ip(struct droce_port_conf *conf, const char *cidr)
{
	uint8_t gid[16];
	unsigned int pfx;

	if (conf == NULL || cidr == NULL || parse_ip(cidr, gid, &pfx, true) < 0 ||
	    droce_gid_is_mcast(gid) || gid_is_unspecified(gid))
		return -EINVAL;
	if (droce_gid_is_ipv4(gid)) {
		if (conf->n_ipv4 >= DROCE_PORT_MAX_ADDRS)
			return -ENOSPC;
		conf->ipv4[conf->n_ipv4].addr = droce_gid_to_ipv4(gid);
		conf->ipv4[conf->n_ipv4].prefix = (uint8_t)pfx;
		conf->n_ipv4++;
	} else {
		if (conf->n_ipv6 >= DROCE_PORT_MAX_ADDRS)
			return -ENOSPC;
		memcpy(conf->ipv6[conf->n_ipv6].addr, gid, 16);
		conf->ipv6[conf->n_ipv6].prefix = (uint8_t)pfx;
		conf->n_ipv6++;
	}
	return 0;
}

int
droce_port_conf_add_neigh(struct droce_port_conf *conf, const char *spec)
{
	char buf[INET6_ADDRSTRLEN + 24];
	struct rte_ether_addr a;
	uint8_t gid[16];
	char *eq;

	if (conf == NULL || spec == NULL || strlen(spec) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, spec);
	eq = strchr(buf, '=');
	if (eq == NULL)
		return -EINVAL;
	*eq++ = '\0';
	if (parse_ip(buf, gid, NULL, false) < 0 || droce_gid_is_mcast(gid) ||
	    gid_is_unspecified(gid))
		return -EINVAL;
	if (rte_ether_unformat_addr(eq, &a) != 0 || !mac_usable(a.addr_bytes))
		return -EINVAL;
	if (conf->n_neigh >= DROCE_PORT_MAX_STATIC_NEIGH)
		return -ENOSPC;
	memcpy(conf->neigh[conf->n_neigh].gid, gid, 16);
	memcpy(conf->neigh[conf->n_neigh].mac, a.addr_bytes, 6);
	conf->n_neigh++;
	return 0;
}

int
droce_port_conf_set_gateway(struct droce_port_conf *conf, const char *ip)
{
	uint8_t gid[16];

	if (conf == NULL || ip == NULL || parse_ip(ip, gid, NULL, false) < 0 ||
	    droce_gid_is_mcast(gid) || gid_is_unspecified(gid))
		return -EINVAL;
	memcpy(droce_gid_is_ipv4(gid) ? conf->gateway4 : conf->gateway6, gid, 16);
	return 0;
}

/* ---- open ---- */

static int
conf_check(const struct droce_port_conf *conf)
{
	unsigned int i;

	if (conf->n_ipv4 > DROCE_PORT_MAX_ADDRS || conf->n_ipv6 > DROCE_PORT_MAX_ADDRS ||
	    conf->n_neigh > DROCE_PORT_MAX_STATIC_NEIGH)
		return -EINVAL;
	if (conf->has_mac && !mac_usable(conf->mac))
		return -EINVAL;
	for (i = 0; i < conf->n_ipv4; i++)
		if (conf->ipv4[i].prefix > 32)
			return -EINVAL;
	for (i = 0; i < conf->n_ipv6; i++)
		if (conf->ipv6[i].prefix > 128 || conf->ipv6[i].addr[0] == 0xff)
			return -EINVAL;
	if (conf->igmp_version != 0 && conf->igmp_version != 2 && conf->igmp_version != 3)
		return -EINVAL;
	if (memchr(conf->devargs, '\0', sizeof(conf->devargs)) == NULL ||
	    memchr(conf->fault, '\0', sizeof(conf->fault)) == NULL ||
	    memchr(conf->iface, '\0', sizeof(conf->iface)) == NULL)
		return -EINVAL;
	return 0;
}

/* Find the port @p devargs names, or hotplug it. */
static int
find_or_probe(const char *devargs, uint16_t *port_id, bool *hotplugged)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t len = strcspn(devargs, ",");
	int ret;

	if (len == 0 || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, devargs, len);
	name[len] = '\0';
	*hotplugged = false;
	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	ret = rte_dev_probe(devargs);
	if (ret < 0) {
		PORT_LOG(ERR, "cannot probe '%s': %s", devargs, strerror(-ret));
		return -ENODEV;
	}
	/* a probe can succeed without creating an ethdev (wrong bus, ...) */
	if (rte_eth_dev_get_port_by_name(name, port_id) != 0) {
		PORT_LOG(ERR, "'%s' probed but no ethdev named '%s' exists", devargs, name);
		return -ENODEV;
	}
	*hotplugged = true;
	return 0;
}

static void
remove_port(uint16_t port_id)
{
	struct rte_eth_dev_info di;

	if (rte_eth_dev_info_get(port_id, &di) != 0 || di.device == NULL ||
	    rte_dev_remove(di.device) != 0)
		rte_eth_dev_close(port_id);
}



static bool
driver_is_kernel_backed(const char *driver)
{
	/* ports whose MAC is a kernel interface's, which peers already know */
	return strcmp(driver, "net_af_packet") == 0 || strcmp(driver, "net_af_xdp") == 0;
}

/* Is the port, or the one under its fault vdev, kernel-backed? (af_packet's jumbo rules) */
static bool
port_is_kernel_backed(const struct droce_port *port)
{
	struct rte_eth_dev_info ldi;

	if (port->lower_port_id == port->port_id)
		return driver_is_kernel_backed(port->info.driver);
	return rte_eth_dev_info_get(port->lower_port_id, &ldi) == 0 &&
	       driver_is_kernel_backed(ldi.driver_name);
}

static void
choose_mac(struct droce_port *port, const struct droce_port_conf *conf,
	   const struct rte_eth_dev_info *di)
{
	struct rte_eth_dev_info ldi;
	struct ifreq ifr;
	uint16_t lower;

	if (conf->has_mac) {
		memcpy(port->mac.addr_bytes, conf->mac, 6);
		return;
	}
	if (conf->iface[0] != '\0' && kernel_iface_query(conf->iface, SIOCGIFHWADDR, &ifr) == 0 &&
	    mac_usable((const uint8_t *)ifr.ifr_hwaddr.sa_data)) {
		memcpy(port->mac.addr_bytes, ifr.ifr_hwaddr.sa_data, 6);
		return;
	}
	lower = port->port_id;
	if (strcmp(di->driver_name, DROCE_FAULT_DRIVER) == 0)
		droce_fault_lower_port(port->port_id, &lower);
	if (rte_eth_dev_info_get(lower, &ldi) == 0 && driver_is_kernel_backed(ldi.driver_name) &&
	    rte_eth_macaddr_get(lower, &port->mac) == 0 && mac_usable(port->mac.addr_bytes))
		return;
	rte_eth_random_addr(port->mac.addr_bytes);	/* locally administered, unicast */
}

/* Largest MTU ethdev lets this port take (as eth_dev_validate_mtu() computes). */
static uint16_t
port_max_mtu(const struct rte_eth_dev_info *di)
{
	uint32_t overhead, max;

	if (di->max_mtu != UINT16_MAX && di->max_rx_pktlen > di->max_mtu)
		overhead = di->max_rx_pktlen - di->max_mtu;
	else
		overhead = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	max = di->max_rx_pktlen > overhead ? di->max_rx_pktlen - overhead : 0;
	return (uint16_t)RTE_MIN(max, (uint32_t)di->max_mtu);
}

static int
choose_mtu(struct droce_port *port, const struct droce_port_conf *conf,
	   const struct rte_eth_dev_info *di, uint16_t *mtu)
{
	uint16_t max = port_max_mtu(di), cur = RTE_ETHER_MTU;
	struct ifreq ifr;

	if (port_is_kernel_backed(port))
		max = KERNEL_PORT_MAX_MTU;	/* see below */
	if (conf->mtu != 0) {
		if (conf->mtu > max || conf->mtu < RTE_MAX(di->min_mtu, (uint16_t)RTE_ETHER_MIN_MTU)) {
			PORT_LOG(ERR, "port %u takes an MTU of %u..%u, not %u", port->port_id,
				 RTE_MAX(di->min_mtu, (uint16_t)RTE_ETHER_MIN_MTU), max, conf->mtu);
			return -EINVAL;
		}
		*mtu = conf->mtu;
		return 0;
	}
	if (conf->iface[0] != '\0' && kernel_iface_query(conf->iface, SIOCGIFMTU, &ifr) == 0 &&
	    ifr.ifr_mtu > 0) {
		cur = (uint16_t)RTE_MIN(ifr.ifr_mtu, UINT16_MAX);
		/*
		 * net_af_packet reports max_rx_pktlen 1518, yet moves any frame
		 * its ring frames (framesz, see droce_port_conf_iface()) and our
		 * mbufs hold: the kernel interface's MTU is the real limit.
		 */
		if (port_is_kernel_backed(port)) {
			*mtu = RTE_MIN(cur, (uint16_t)KERNEL_PORT_MAX_MTU);
			return 0;
		}
	} else if (rte_eth_dev_get_mtu(port->port_id, &cur) != 0 || cur == 0) {
		cur = RTE_ETHER_MTU;
	}
	*mtu = RTE_MAX(RTE_MIN(cur, max), (uint16_t)RTE_ETHER_MIN_MTU);
	return 0;
}

/* Addresses as the port owns them: the configured ones plus the link-local one. */
static void
set_addresses(struct droce_port *port, const struct droce_port_conf *conf)
{
	struct droce_port_info *in = &port->info;
	const uint8_t *m = port->mac.addr_bytes;

	memcpy(in->ipv4, conf->ipv4, conf->n_ipv4 * sizeof(conf->ipv4[0]));
	in->n_ipv4 = conf->n_ipv4;
	memcpy(in->ipv6, conf->ipv6, conf->n_ipv6 * sizeof(conf->ipv6[0]));
	in->n_ipv6 = conf->n_ipv6;
	if (conf->ipv6_link_local) {
		/* fe80::/64 with the modified EUI-64 of the MAC (RFC 4291 app. A) */
		uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				   (uint8_t)(m[0] ^ 0x02), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5] };

		if (!port_owns_ipv6(port, ll)) {
			memcpy(in->ipv6[in->n_ipv6].addr, ll, 16);
			in->ipv6[in->n_ipv6].prefix = 64;
			in->n_ipv6++;
		}
	}
}

static int
setup_queues(struct droce_port *port, const struct droce_port_conf *conf,
	     const struct rte_eth_dev_info *di, uint16_t mtu)
{
	uint16_t nb_rxd = conf->nb_rxd ? conf->nb_rxd : DEFAULT_NB_DESC;
	uint16_t nb_txd = conf->nb_txd ? conf->nb_txd : DEFAULT_NB_DESC;
	uint32_t nb_mbufs = conf->nb_mbufs ? conf->nb_mbufs : DEFAULT_NB_MBUFS;
	int socket = rte_eth_dev_socket_id(port->port_id);
	struct rte_eth_conf ec;
	struct rte_eth_rxconf rxc;
	struct rte_eth_txconf txc;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t room;
	uint16_t q;
	int ret;

	if (socket < 0)
		socket = (int)rte_socket_id();
	/*
	 * One segment holds any frame the MTU allows (droce_pkt_parse() reads
	 * flat frames), so RX needs no scatter.
	 */
	room = RTE_ALIGN_CEIL(RTE_MAX((uint32_t)mtu + FRAME_OVERHEAD, (uint32_t)MIN_FRAME_ROOM), 64);
	room = RTE_MAX(room, di->min_rx_bufsize);
	if (mtu > RTE_ETHER_MTU && port_is_kernel_backed(port))
		room = RTE_MAX(room, (uint32_t)KERNEL_JUMBO_FRAMESZ);	/* af_packet's frame */
	if (room + RTE_PKTMBUF_HEADROOM > UINT16_MAX)
		return -EINVAL;
	port->info.max_frame = room;
	snprintf(name, sizeof(name), "droce_mp_%u", port->port_id);
	port->mp = rte_pktmbuf_pool_create_by_ops(name, nb_mbufs,
						  RTE_MIN((uint32_t)MBUF_CACHE, nb_mbufs / 2), 0,
						  (uint16_t)(room + RTE_PKTMBUF_HEADROOM), socket,
						  pool_ops());
	if (port->mp == NULL) {
		PORT_LOG(ERR, "mempool of %u mbufs: %s", nb_mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}

	memset(&ec, 0, sizeof(ec));
	/* ethdev checks the MTU against what the PMD reports (see choose_mtu()) */
	ec.rxmode.mtu = RTE_MIN(mtu, port_max_mtu(di));
	/* nothing is required; take what helps: checksum flags on RX, chained mbufs on TX */
	ec.rxmode.offloads = di->rx_offload_capa &
		(RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	ec.txmode.offloads = di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	port->n_queues = conf_queues(conf);
	if (port->n_queues > DROCE_PORT_MAX_QUEUES || port->n_queues > di->max_rx_queues ||
	    port->n_queues > di->max_tx_queues) {
		PORT_LOG(ERR, "port %u: %u queue pairs asked, the port has %u RX and %u TX",
			 port->port_id, port->n_queues, di->max_rx_queues, di->max_tx_queues);
		return -EINVAL;
	}
	ret = rte_eth_dev_configure(port->port_id, port->n_queues, port->n_queues, &ec);
	if (ret < 0) {
		PORT_LOG(ERR, "port %u: configure: %s", port->port_id, strerror(-ret));
		return ret;
	}
	port->info.rx_offloads = ec.rxmode.offloads;
	port->info.tx_offloads = ec.txmode.offloads;

	ret = rte_eth_dev_adjust_nb_rx_tx_desc(port->port_id, &nb_rxd, &nb_txd);
	if (ret < 0)
		return ret;
	rxc = di->default_rxconf;
	rxc.offloads = ec.rxmode.offloads;
	txc = di->default_txconf;
	txc.offloads = ec.txmode.offloads;
	for (q = 0; q < port->n_queues; q++) {
		ret = rte_eth_rx_queue_setup(port->port_id, q, nb_rxd, (unsigned int)socket, &rxc,
					     port->mp);
		if (ret < 0) {
			PORT_LOG(ERR, "port %u: RX queue %u: %s", port->port_id, q, strerror(-ret));
			return ret;
		}
		ret = rte_eth_tx_queue_setup(port->port_id, q, nb_txd, (unsigned int)socket, &txc);
		if (ret < 0) {
			PORT_LOG(ERR, "port %u: TX queue %u: %s", port->port_id, q, strerror(-ret));
			return ret;
		}
	}
	if (port->n_queues > 1) {
		/* the other queues' lcores ask queue 0's for neighbours (droce_port_neigh_peek) */
		snprintf(name, sizeof(name), "droce_res_%u", port->port_id);
		/* RTS: a queue's lcore preempted mid-enqueue stalls no other */
		port->resolve_ring = rte_ring_create_elem(name, DROCE_GID_BYTES, 256, socket,
							  RING_F_MP_RTS_ENQ | RING_F_SC_DEQ);
		if (port->resolve_ring == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* Settings that may fail harmlessly: we filter in software anyway. */
static void
apply_soft_settings(struct droce_port *port, bool explicit_mtu, uint16_t mtu)
{
	struct rte_ether_addr cur;
	int ret;

	if (rte_eth_macaddr_get(port->port_id, &cur) != 0 ||
	    !rte_is_same_ether_addr(&cur, &port->mac)) {
		ret = rte_eth_dev_default_mac_addr_set(port->port_id, &port->mac);
		if (ret < 0 && ret != -ENOTSUP)
			PORT_LOG(NOTICE, "port %u keeps its MAC (set: %s); filtering in software",
				 port->port_id, strerror(-ret));
	}
	if (explicit_mtu) {
		/* configure recorded the MTU; this reaches the kernel (af_packet) */
		ret = rte_eth_dev_set_mtu(port->port_id, mtu);
		if (ret < 0 && ret != -ENOTSUP)
			PORT_LOG(NOTICE, "port %u: set MTU %u: %s", port->port_id, mtu, strerror(-ret));
	}
	ret = rte_eth_promiscuous_disable(port->port_id);
	if (ret < 0 && ret != -ENOTSUP)
		PORT_LOG(NOTICE, "port %u: promiscuous off: %s", port->port_id, strerror(-ret));
	ret = rte_eth_allmulticast_disable(port->port_id);
	if (ret < 0 && ret != -ENOTSUP)
		PORT_LOG(NOTICE, "port %u: allmulticast off: %s", port->port_id, strerror(-ret));
}

static void
wait_link(struct droce_port *port, uint32_t wait_ms)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * wait_ms / 1000;
	struct rte_eth_link link;

	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port->port_id, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			break;
		if (rte_get_timer_cycles() >= end) {
			PORT_LOG(WARNING, "port %u: link still down after %u ms", port->port_id,
				 wait_ms);
			break;
		}
		rte_delay_us_sleep(10 * 1000);
	}
	port->info.link_up = link.link_status == RTE_ETH_LINK_UP;
	port->info.link_speed = link.link_speed;
}

/* Wrap @p port's ethdev in a net_droce_fault vdev with @p params. */
static int
wrap_in_fault(struct droce_port *port, const char *params)
{
	char lower_name[RTE_ETH_NAME_MAX_LEN], name[RTE_ETH_NAME_MAX_LEN];
	char devargs[RTE_ETH_NAME_MAX_LEN * 2 + DROCE_PORT_DEVARGS_LEN + 16];
	bool hp;
	int ret;

	ret = rte_eth_dev_get_name_by_port(port->port_id, lower_name);
	if (ret < 0)
		return ret;
	snprintf(name, sizeof(name), DROCE_FAULT_DRIVER "_p%u", port->port_id);
	snprintf(devargs, sizeof(devargs), "%s,port=%s%s%s", name, lower_name,
		 params[0] != '\0' ? "," : "", params);
	ret = find_or_probe(devargs, &port->port_id, &hp);
	if (ret < 0)
		return ret;
	port->fault_hotplugged = hp;
	return 0;
}

int
droce_port_open(const struct droce_port_conf *conf, struct droce_port **out)
{
	struct rte_eth_dev_info di;
	struct rte_eth_dev_owner owner;
	struct droce_port *port;
	uint16_t mtu;
	int ret;

	if (conf == NULL || out == NULL)
		return -EINVAL;
	ret = conf_check(conf);
	if (ret < 0)
		return ret;
	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return -EINVAL;
	port = rte_zmalloc("droce_port", sizeof(*port), RTE_CACHE_LINE_SIZE);
	if (port == NULL)
		return -ENOMEM;

	if (conf->devargs[0] != '\0') {
		ret = find_or_probe(conf->devargs, &port->port_id, &port->hotplugged);
		if (ret < 0)
			goto err_free;
	} else {
		if (!rte_eth_dev_is_valid_port(conf->port_id)) {
			ret = -ENODEV;
			goto err_free;
		}
		port->port_id = conf->port_id;
	}
	port->lower_port_id = port->port_id;
	if (conf->fault[0] != '\0') {
		ret = wrap_in_fault(port, conf->fault);
		if (ret < 0)
			goto err_remove;
	}
	/* a port someone owns (e.g. the one under a fault vdev) is not ours to drive */
	if (rte_eth_dev_owner_get(port->port_id, &owner) == 0 && owner.id != RTE_ETH_DEV_NO_OWNER) {
		PORT_LOG(ERR, "port %u is owned by '%s'", port->port_id, owner.name);
		ret = -EBUSY;
		goto err_remove;
	}
	ret = rte_eth_dev_info_get(port->port_id, &di);
	if (ret < 0)
		goto err_remove;
	port->info.port_id = port->port_id;
	snprintf(port->iface, sizeof(port->iface), "%s", conf->iface);
	rte_eth_dev_get_name_by_port(port->port_id, port->info.name);
	snprintf(port->info.driver, sizeof(port->info.driver), "%s", di.driver_name);

	choose_mac(port, conf, &di);
	memcpy(port->info.mac, port->mac.addr_bytes, 6);
	ret = choose_mtu(port, conf, &di, &mtu);
	if (ret < 0)
		goto err_remove;
	port->info.mtu = mtu;
	set_addresses(port, conf);

	ret = setup_queues(port, conf, &di, mtu);
	if (ret < 0)
		goto err_pool;
	apply_soft_settings(port, conf->mtu != 0, mtu);

	port->igmp_version = conf->igmp_version ? conf->igmp_version : 3;
	neigh_init(port, conf);
	mcast_rebuild_filter_list(port);
	ret = mcast_program(port);
	if (ret < 0)
		goto err_pool;

	ret = rte_eth_dev_start(port->port_id);
	if (ret < 0) {
		PORT_LOG(ERR, "port %u: start: %s", port->port_id, strerror(-ret));
		goto err_pool;
	}
	port->started = true;
	wait_link(port, conf->link_wait_ms ? conf->link_wait_ms : DEFAULT_LINK_WAIT_MS);
	/* let MLD-snooping switches forward solicitations for our addresses */
	if (port->info.n_ipv6 > 0)
		mcast_report_all(port, true);
	PORT_LOG(INFO, "port %u (%s, %s) up: MAC " RTE_ETHER_ADDR_PRT_FMT ", MTU %u",
		 port->port_id, port->info.name, port->info.driver,
		 RTE_ETHER_ADDR_BYTES(&port->mac), mtu);
	*out = port;
	return 0;

err_pool:
	rte_eth_dev_stop(port->port_id);
	rte_mempool_free(port->mp);
err_remove:
	if (port->fault_hotplugged)
		remove_port(port->port_id);
	if (port->hotplugged)
		remove_port(port->lower_port_id);
err_free:
	rte_free(port);
	return ret;
}

void
droce_port_close(struct droce_port *port)
{
	unsigned int i;

	if (port == NULL)
		return;
	/* leave every group, so routers and switches stop forwarding to us */
	for (i = port->n_mcast; i-- > 0;) {
		port->mcast[i].refs = 1;
		droce_port_mcast_leave(port, port->mcast[i].gid);
	}
	if (port->started)
		rte_eth_dev_stop(port->port_id);
	for (i = 0; i < port->n_queues; i++) {
		rte_pktmbuf_free_bulk(port->q[i].stash, port->q[i].n_stash);
		port->q[i].n_stash = 0;
	}
	rte_ring_free(port->resolve_ring);
	port->resolve_ring = NULL;
	/*
	 * A port given to us (--vdev, port id) stays open, stopped, so that it
	 * can be opened again; the ones we hotplugged go away.
	 */
	if (port->fault_hotplugged)
		remove_port(port->port_id);
	if (port->hotplugged)
		remove_port(port->lower_port_id);
	rte_mempool_free(port->mp);
	rte_free(port);
}

/* ---- info and counters ---- */

int
droce_port_info(const struct droce_port *port, struct droce_port_info *info)
{
	struct rte_eth_link link;

	if (port == NULL || info == NULL)
		return -EINVAL;
	*info = port->info;
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(port->port_id, &link) == 0)
		info->link_speed = link.link_speed;
	info->link_up = droce_port_link_up(port);
	return 0;
}

bool
droce_port_link_up(const struct droce_port *port)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	return rte_eth_link_get_nowait(port->port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP && kernel_iface_up(port);
}

int
droce_port_stats(const struct droce_port *port, struct droce_port_stats *st)
{
	unsigned int i;

	if (port == NULL || st == NULL)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	/* the polling lcore is the only writer; 64-bit loads do not tear here */
	for (i = 0; i < DROCE_PORT_CNT_COUNT; i++) {
		unsigned int q;

		st->counter[i] = __atomic_load_n(&port->cnt[i], __ATOMIC_RELAXED);
		for (q = 0; q < port->n_queues; q++)
			st->counter[i] += __atomic_load_n(&port->q[q].cnt[i], __ATOMIC_RELAXED);
	}
	for (i = 0; i < DROCE_PORT_DROP_COUNT; i++) {
		st->drop[i] = __atomic_load_n(&port->drop[i], __ATOMIC_RELAXED);
		st->drops += st->drop[i];
	}
	return rte_eth_stats_get(port->port_id, &st->eth);
}

void
droce_port_stats_reset(struct droce_port *port)
{
	if (port == NULL)
		return;
	memset(port->cnt, 0, sizeof(port->cnt));
	for (unsigned int q = 0; q < port->n_queues; q++)
		memset(port->q[q].cnt, 0, sizeof(port->q[q].cnt));
	memset(port->drop, 0, sizeof(port->drop));
	rte_eth_stats_reset(port->port_id);
}

struct rte_mempool *
droce_port_mempool(struct droce_port *port)
{
	return port->mp;
}
