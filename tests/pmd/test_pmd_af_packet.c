/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Suite "pmd_af_packet": the port layer on net_af_packet against a real
 * Linux peer. Two network namespaces made here, joined by a veth pair:
 *
 *   ns A (this process, after setns): vA, no address, IPv6 off -- droce owns
 *        10.199.0.1/24 and fd00:199::1/64 through net_af_packet
 *   ns B (helper threads, after setns): vB, 10.199.0.2/24, fd00:199::2/64
 *
 * The kernel in B resolves our addresses (its neighbour entry must end up
 * with our MAC), we resolve B's, B's UDP datagrams to port 4791 come out of
 * droce_port_rx_burst() as candidates, and B sees our IGMP report intact.
 * Needs root and iproute2; exits 77 (skipped) without them.
 */

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "droce_fault.h"
#include "droce_port.h"
#include "pmd_test.h"

static char ns_a[32], ns_b[32], if_a[IFNAMSIZ], if_b[IFNAMSIZ];
static bool ns_made;
static struct droce_port *port;
static uint8_t mac_a[6], mac_b[6];

static int
sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void
topology_down(void)
{
	if (!ns_made)
		return;
	sh("ip netns del %s 2>/dev/null", ns_a);	/* takes the veth pair with it */
	sh("ip netns del %s 2>/dev/null", ns_b);
	ns_made = false;
}

/* Namespaces left by runs that were killed: theirs, if that process is gone. */
static void
reap_stale_namespaces(void)
{
	DIR *d = opendir("/var/run/netns");
	struct dirent *e;
	int pid;
	char ab;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (sscanf(e->d_name, "droce_pmd%c_%d", &ab, &pid) == 2 && (ab == 'A' || ab == 'B') &&
		    kill(pid, 0) < 0 && errno == ESRCH)
			sh("ip netns del %s 2>/dev/null", e->d_name);
	closedir(d);
}

static int
topology_up(void)
{
	int pid = (int)getpid();

	snprintf(ns_a, sizeof(ns_a), "droce_pmdA_%d", pid);
	snprintf(ns_b, sizeof(ns_b), "droce_pmdB_%d", pid);
	snprintf(if_a, sizeof(if_a), "dpa%d", pid % 1000000);
	snprintf(if_b, sizeof(if_b), "dpb%d", pid % 1000000);
	reap_stale_namespaces();
	if (sh("ip netns add %s", ns_a) != 0)
		return -1;
	ns_made = true;
	if (sh("ip netns add %s", ns_b) != 0 ||
	    sh("ip link add %s netns %s type veth peer name %s netns %s", if_a, ns_a, if_b,
	       ns_b) != 0 ||
	    sh("ip netns exec %s sh -c 'echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6'", ns_a,
	       if_a) != 0 ||
	    sh("ip -n %s link set %s up", ns_a, if_a) != 0 ||
	    sh("ip -n %s addr add 10.199.0.2/24 dev %s", ns_b, if_b) != 0 ||
	    sh("ip -n %s addr add fd00:199::2/64 dev %s nodad", ns_b, if_b) != 0 ||
	    sh("ip -n %s link set %s up", ns_b, if_b) != 0)
		return -1;
	return 0;
}

static int
enter_ns(const char *ns)
{
	char path[96];
	int fd, ret;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = setns(fd, CLONE_NEWNET);
	close(fd);
	return ret;
}

static int
if_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (ret == 0)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return ret;
}

/* ---- work done in namespace B, in a thread, while the main thread polls ---- */

struct peer_job {
	void (*fn)(struct peer_job *j);
	_Atomic bool done;
	int family;
	uint16_t port;
	int sent;
	/* sniff */
	bool seen_igmp;
	bool igmp_csum_ok;
};

static void *
peer_thread(void *arg)
{
	struct peer_job *j = arg;

	if (enter_ns(ns_b) == 0)
		j->fn(j);
	atomic_store(&j->done, true);
	return NULL;
}

/* Run @p j in namespace B while polling the port; frames are counted, freed. */
static unsigned int
with_peer(struct peer_job *j, unsigned int max_ms)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * max_ms / 1000;
	struct rte_mbuf *pk[32];
	unsigned int got = 0, i;
	pthread_t t;
	uint16_t k;

	atomic_store(&j->done, false);
	ck_assert_int_eq(pthread_create(&t, NULL, peer_thread, j), 0);
	while (!atomic_load(&j->done) && rte_get_timer_cycles() < end) {
		k = droce_port_rx_burst(port, pk, 32);
		for (i = 0; i < k; i++)
			rte_pktmbuf_free(pk[i]);
		got += k;
		if (k == 0)
			rte_delay_us_sleep(100);
	}
	pthread_join(t, NULL);
	return got;
}

/* B sends a few UDP datagrams to our address; its kernel resolves us first. */
static void
peer_send_udp(struct peer_job *j)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, i;

	memset(&ss, 0, sizeof(ss));
	if (j->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(j->port);
		inet_pton(AF_INET, "10.199.0.1", &s4->sin_addr);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(j->port);
		inet_pton(AF_INET6, "fd00:199::1", &s6->sin6_addr);
		sl = sizeof(*s6);
	}
	fd = socket(j->family, SOCK_DGRAM, 0);
	if (fd < 0)
		return;
	for (i = 0; i < 5; i++) {
		/* the first may wait in the kernel's neighbour queue until we answer */
		if (sendto(fd, "droce", 5, 0, (struct sockaddr *)&ss, sl) == 5)
			j->sent++;
		usleep(100 * 1000);
	}
	close(fd);
}

/* B listens on vB for an IGMPv3 report from our MAC, up to 2 s. */
static void
peer_sniff_igmp(struct peer_job *j)
{
	struct sockaddr_ll sll;
	uint8_t b[2048];
	int fd, i;

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		return;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(if_b);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		close(fd);
		return;
	}
	j->sent = 1;				/* ready: the main thread may join now */
	for (i = 0; i < 40 && !j->seen_igmp; i++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = recv(fd, b, sizeof(b), 0);
		if (n < 14 + 24 + 16 || memcmp(b + 6, mac_a, 6) != 0 || b[12] != 0x08 ||
		    b[13] != 0x00 || b[14 + 9] != 2 || b[14 + 24] != 0x22)
			continue;
		j->seen_igmp = true;
		j->igmp_csum_ok = t_sum(b + 14, 24, 0) == 0xffff && t_sum(b + 38, 16, 0) == 0xffff;
	}
	close(fd);
}

/* `ip neigh` in B for @p addr: true if it holds @p mac in a usable state. */
static bool
peer_neigh_has(const char *addr, const uint8_t mac[6])
{
	char cmd[256], line[512], want[32];
	bool ok = false;
	FILE *f;

	snprintf(want, sizeof(want), "lladdr %02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
	snprintf(cmd, sizeof(cmd), "ip -n %s neigh show %s dev %s", ns_b, addr, if_b);
	f = popen(cmd, "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		fprintf(stderr, "  %s: %s", ns_b, line);
		if (strstr(line, want) != NULL &&
		    (strstr(line, "REACHABLE") || strstr(line, "STALE") ||
		     strstr(line, "DELAY") || strstr(line, "PROBE")))
			ok = true;
	}
	pclose(f);
	return ok;
}

static void
open_port(void)
{
	struct droce_port_conf c;

	droce_port_conf_init(&c);
	ck_assert_int_eq(droce_port_conf_iface(&c, if_a), 0);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "10.199.0.1/24"), 0);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "fd00:199::1/64"), 0);
	c.neigh_retrans_ms = 200;
	c.nb_mbufs = 4095;
	ck_assert_int_eq(droce_port_open(&c, &port), 0);
}

static void
teardown(void)
{
	droce_port_close(port);
	port = NULL;
}

START_TEST(test_port_takes_the_kernel_mac)
{
	struct droce_port_info in;

	ck_assert_int_eq(droce_port_info(port, &in), 0);
	ck_assert_str_eq(in.driver, "net_af_packet");
	ck_assert_mem_eq(in.mac, mac_a, 6);
	ck_assert(in.link_up);
	ck_assert_uint_eq(in.mtu, 1500);
}
END_TEST

START_TEST(test_kernel_peer_resolves_us_by_arp)
{
	struct peer_job j = { .fn = peer_send_udp, .family = AF_INET, .port = 9 };
	struct droce_port_stats st;

	ck_assert_uint_eq(with_peer(&j, 5000), 0);
	ck_assert_int_ge(j.sent, 1);
	ck_assert(peer_neigh_has("10.199.0.1", mac_a));
	droce_port_stats(port, &st);
	ck_assert_uint_ge(st.counter[DROCE_PORT_CNT_ARP_REQ_RX], 1);
	ck_assert_uint_ge(st.counter[DROCE_PORT_CNT_ARP_REPLY_TX], 1);
	/* the datagrams to port 9 reached us and were dropped as not RoCE */
	ck_assert_uint_ge(st.drop[DROCE_PORT_DROP_UDP_PORT], 1);
}
END_TEST

START_TEST(test_kernel_peer_resolves_us_by_ns)
{
	struct peer_job j = { .fn = peer_send_udp, .family = AF_INET6, .port = 9 };
	struct droce_port_stats st;

	ck_assert_uint_eq(with_peer(&j, 5000), 0);
	ck_assert_int_ge(j.sent, 1);
	ck_assert(peer_neigh_has("fd00:199::1", mac_a));
	droce_port_stats(port, &st);
	ck_assert_uint_ge(st.counter[DROCE_PORT_CNT_NS_RX], 1);
	ck_assert_uint_ge(st.counter[DROCE_PORT_CNT_NA_TX], 1);
	ck_assert_uint_ge(st.drop[DROCE_PORT_DROP_UDP_PORT], 1);
}
END_TEST

START_TEST(test_udp_4791_from_the_kernel_is_a_candidate)
{
	struct peer_job j4 = { .fn = peer_send_udp, .family = AF_INET, .port = 4791 };
	struct peer_job j6 = { .fn = peer_send_udp, .family = AF_INET6, .port = 4791 };

	ck_assert_uint_eq(with_peer(&j4, 5000), (unsigned int)j4.sent);
	ck_assert_uint_eq(with_peer(&j6, 5000), (unsigned int)j6.sent);
	ck_assert_int_eq(j4.sent, 5);
}
END_TEST

static int
resolve_wait(const char *addr, uint8_t mac[6])
{
	struct rte_mbuf *pk[32];
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * 3;
	uint8_t gid[16];
	int ret;
	uint16_t k, i;

	if (strchr(addr, ':') != NULL) {
		t_gid6(gid, addr);
	} else {
		struct in_addr a;

		inet_pton(AF_INET, addr, &a);
		t_gid4(gid, a.s_addr);
	}
	while ((ret = droce_port_resolve(port, gid, mac)) == -EAGAIN &&
	       rte_get_timer_cycles() < end) {
		k = droce_port_rx_burst(port, pk, 32);
		for (i = 0; i < k; i++)
			rte_pktmbuf_free(pk[i]);
		rte_delay_us_sleep(200);
	}
	return ret;
}

START_TEST(test_we_resolve_the_kernel_peer)
{
	uint8_t mac[6];

	ck_assert_int_eq(resolve_wait("10.199.0.2", mac), 0);
	ck_assert_mem_eq(mac, mac_b, 6);
	ck_assert_int_eq(resolve_wait("fd00:199::2", mac), 0);
	ck_assert_mem_eq(mac, mac_b, 6);
	/* nobody has .77: after the probes it is unreachable */
	ck_assert_int_eq(resolve_wait("10.199.0.77", mac), -EHOSTUNREACH);
}
END_TEST

START_TEST(test_peer_sees_our_igmp_report)
{
	struct peer_job j = { .fn = peer_sniff_igmp };
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * 3;
	uint8_t gid[16];
	pthread_t t;
	bool joined = false;

	t_gid4(gid, t_ip4(239, 9, 9, 9));
	atomic_store(&j.done, false);
	ck_assert_int_eq(pthread_create(&t, NULL, peer_thread, &j), 0);
	while (!atomic_load(&j.done) && rte_get_timer_cycles() < end) {
		struct rte_mbuf *pk[8];
		uint16_t k = droce_port_rx_burst(port, pk, 8), i;

		for (i = 0; i < k; i++)
			rte_pktmbuf_free(pk[i]);
		if (!joined && j.sent) {
			ck_assert_int_eq(droce_port_mcast_join(port, gid), 0);
			joined = true;
		}
		rte_delay_us_sleep(200);
	}
	pthread_join(t, NULL);
	ck_assert(joined);
	ck_assert(j.seen_igmp);
	ck_assert(j.igmp_csum_ok);
	ck_assert_int_eq(droce_port_mcast_leave(port, gid), 0);
}
END_TEST

/* --iface with a fault stage on top: every frame we send goes out twice. */
START_TEST(test_fault_stage_over_af_packet)
{
	struct peer_job j = { .fn = peer_send_udp, .family = AF_INET, .port = 9 };
	struct droce_fault_stats fs;
	struct droce_port_conf c;
	struct droce_port_info in;
	uint16_t lower, id;
	char name[64];

	droce_port_conf_init(&c);
	ck_assert_int_eq(droce_port_conf_iface(&c, if_a), 0);
	ck_assert_int_eq(droce_port_conf_add_ip(&c, "10.199.0.1/24"), 0);
	snprintf(c.fault, sizeof(c.fault), "seed=3,dup=1,dir=tx");
	ck_assert_int_eq(droce_port_open(&c, &port), 0);
	ck_assert_int_eq(droce_port_info(port, &in), 0);
	ck_assert_str_eq(in.driver, DROCE_FAULT_DRIVER);
	ck_assert_mem_eq(in.mac, mac_a, 6);		/* the kernel's, through the wrapper */
	ck_assert_int_eq(droce_fault_lower_port(in.port_id, &lower), 0);
	sh("ip -n %s neigh flush dev %s", ns_b, if_b);
	with_peer(&j, 5000);
	ck_assert(peer_neigh_has("10.199.0.1", mac_a));
	ck_assert_int_eq(droce_fault_stats(in.port_id, &fs), 0);
	ck_assert_uint_ge(fs.tx.dup, 1);
	ck_assert_uint_eq(fs.tx.dup, fs.tx.in);
	droce_port_close(port);
	port = NULL;
	/* both the fault vdev and the af_packet port it wrapped are gone */
	snprintf(name, sizeof(name), "net_af_packet_%s", if_a);
	ck_assert_int_ne(rte_eth_dev_get_port_by_name(name, &id), 0);
	ck_assert(!rte_eth_dev_is_valid_port(in.port_id));
}
END_TEST

static Suite *
af_packet_suite(void)
{
	Suite *s = suite_create("pmd_af_packet");
	TCase *tc = tcase_create("veth");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, open_port, teardown);
	tcase_add_test(tc, test_port_takes_the_kernel_mac);
	tcase_add_test(tc, test_kernel_peer_resolves_us_by_arp);
	tcase_add_test(tc, test_kernel_peer_resolves_us_by_ns);
	tcase_add_test(tc, test_udp_4791_from_the_kernel_is_a_candidate);
	tcase_add_test(tc, test_we_resolve_the_kernel_peer);
	tcase_add_test(tc, test_peer_sees_our_igmp_report);
	suite_add_tcase(s, tc);
	tc = tcase_create("fault");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fault_stage_over_af_packet);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "pmd_af_packet: needs root (network namespaces); skipped\n");
		return PMD_TEST_SKIP;
	}
	if (system("ip -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "pmd_af_packet: no iproute2; skipped\n");
		return PMD_TEST_SKIP;
	}
	atexit(topology_down);
	if (topology_up() < 0) {
		fprintf(stderr, "pmd_af_packet: cannot build the netns/veth topology; skipped\n");
		topology_down();
		return PMD_TEST_SKIP;
	}
	if (enter_ns(ns_b) < 0 || if_mac(if_b, mac_b) < 0 || enter_ns(ns_a) < 0 ||
	    if_mac(if_a, mac_a) < 0) {
		fprintf(stderr, "pmd_af_packet: setns: %s\n", strerror(errno));
		return 1;
	}
	/* everything EAL starts from here on lives in namespace A */
	if (pmd_test_eal_init("pmd_af_packet", 0, NULL) < 0)
		return 1;
	failed = pmd_test_run(af_packet_suite());
	pmd_test_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
