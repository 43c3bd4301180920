/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The device as software finds it on Linux. Programs look for RDMA devices
 * in /sys/class/infiniband and /dev/infiniband as well as through
 * libibverbs (UCX stat()s /dev/infiniband/<dev_name> and reads each GID's
 * type and netdev from sysfs; monitoring reads the port's counters/). droced
 * keeps a tree shaped like the kernel's at <socket>.sysfs:
 *
 *   class/infiniband/<name>/{node_guid,node_type,sys_image_guid,fw_ver,...}
 *   class/infiniband/<name>/ports/1/{state,phys_state,rate,gids/N,...,
 *                                    counters/,hw_counters/}
 *   class/infiniband/<name>/device/net/<ifname> -> /sys/class/net/<ifname>
 *   class/infiniband_verbs/{abi_version,uverbs0/{ibdev,abi_version,dev}}
 *   class/misc/rdma_cm/abi_version
 *   dev/infiniband/uverbs0	a character device with /dev/null's numbers
 *
 * droce-run mounts class/ over /sys/class (an overlay) and dev/infiniband
 * over /dev/infiniband in the program's private mount namespace. Every value
 * is the one QUERY_DEVICE / QUERY_PORT / QUERY_GID answer, in the kernel's
 * formats (drivers/infiniband/core/sysfs.c), so the tree agrees with
 * ibv_devinfo -v. The counters are the device's lifetime totals.
 *
 * Threads: init runs on the main thread before the worker loop starts, so
 * it reads the device directly; the tick runs on the control thread and
 * takes its snapshot through the worker's mailbox. Files are replaced by
 * rename(), so a reader never sees half a value.
 */

#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_idle.h"
#include "droce_port.h"
#include "droce_wire.h"
#include "droced.h"

#define SYSFS_REFRESH_NS	(1000 * 1000 * 1000ull)	/* counters: once a second */
#define SYSFS_VERBS_ABI		6	/* /sys/class/infiniband_verbs/abi_version */
#define SYSFS_UVERBS_ABI	1	/* uverbsN/abi_version: the kernel's for ioctl verbs */
#define SYSFS_RDMA_CM_ABI	4	/* /sys/class/misc/rdma_cm/abi_version */

static struct {
	bool on;
	char root[1024];		/* <socket>.sysfs */
	char port[2048];		/* root/class/infiniband/<name>/ports/1 */
	uint64_t next_ns;
} sy;

struct sysfs_snap {
	struct droced_call c;
	struct droced *d;
	struct ibv_device_attr attr;
	struct ibv_port_attr pattr;
	struct droce_dev_stats st;
	struct droce_port_stats port;
	struct droced_roce_counts roce;
	uint64_t rx_bad;
};

static int
mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Write one value file @p dir/@p name (made if need be), atomically. */
static int __attribute__((format(printf, 3, 4)))
put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	va_list ap;
	FILE *f;
	int ok;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.new", dir, name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (f == NULL) {
		if (errno != ENOENT || mkdir_p(dir) < 0 || (f = fopen(tmp, "w")) == NULL)
			return -errno;
	}
	va_start(ap, fmt);
	ok = vfprintf(f, fmt, ap) >= 0;
	va_end(ap);
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

/* The kernel prints a GUID as four big-endian 16-bit groups. */
static void
guid_str(char *buf, size_t len, __be64 guid_be)
{
	uint64_t g = be64toh(guid_be);

	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff, (unsigned int)(g >> 16) & 0xffff,
		 (unsigned int)g & 0xffff);
}

static const char *
port_state_name(enum ibv_port_state s)
{
	static const char *const name[] = {
		[IBV_PORT_NOP] = "NOP", [IBV_PORT_DOWN] = "DOWN", [IBV_PORT_INIT] = "INIT",
		[IBV_PORT_ARMED] = "ARMED", [IBV_PORT_ACTIVE] = "ACTIVE",
		[IBV_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
	};

	return (unsigned int)s < sizeof(name) / sizeof(name[0]) ? name[s] : "UNKNOWN";
}

/* ports/1/rate as the kernel writes it: "100 Gb/sec (4X EDR)". */
static void
port_rate(char *buf, size_t len, const struct ibv_port_attr *p)
{
	/* IBA active_speed and active_width codes; speed in tenths of Gb/s */
	static const struct { uint8_t code; unsigned int tenths; const char *name; } speeds[] = {
		{ 1, 25, " SDR" }, { 2, 50, " DDR" }, { 4, 100, " QDR" }, { 8, 100, " FDR10" },
		{ 16, 140, " FDR" }, { 32, 250, " EDR" }, { 64, 500, " HDR" }, { 128, 1000, " NDR" },
	};
	unsigned int width = p->active_width == 1 ? 1 : p->active_width == 2 ? 4 :
			     p->active_width == 4 ? 8 : p->active_width == 8 ? 12 :
			     p->active_width == 16 ? 2 : 0;
	unsigned int i, rate;

	for (i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (speeds[i].code == p->active_speed)
			break;
	if (i == sizeof(speeds) / sizeof(speeds[0]) || width == 0) {
		snprintf(buf, len, "0 Gb/sec");
		return;
	}
	rate = speeds[i].tenths * width;
	snprintf(buf, len, "%u%s Gb/sec (%uX%s)", rate / 10, rate % 10 ? ".5" : "", width,
		 speeds[i].name);
}

static void
do_snapshot(struct droced_call *c)
{
	struct sysfs_snap *s = (struct sysfs_snap *)c;
	uint64_t bad[DROCE_WIRE_DROP_COUNT];
	unsigned int i;

	droced_port_wire_drops(bad);
	droce_dev_query(s->d->dev, &s->attr, &s->pattr);
	droce_dev_stats(s->d->dev, &s->st);
	droce_port_stats(s->d->port, &s->port);
	droced_port_roce_counts(&s->roce);
	s->rx_bad = 0;
	for (i = 1; i < DROCE_WIRE_DROP_COUNT; i++)	/* 0 is "ok" */
		s->rx_bad += bad[i];
}

/* What changes while the daemon runs: the port's state and the counters. */
static void
write_dynamic(const struct sysfs_snap *s)
{
	char dir[PATH_MAX], name[64];
	unsigned int i, k;

	put(sy.port, "state", "%d: %s\n", s->pattr.state, port_state_name(s->pattr.state));
	put(sy.port, "phys_state", "%u: %s\n", s->pattr.phys_state,
	    s->pattr.phys_state == 5 ? "LinkUp" : "Disabled");

	/* counters/: the PMA's names and units; *_data counts 4-byte words */
	snprintf(dir, sizeof(dir), "%s/counters", sy.port);
	put(dir, "port_xmit_data", "%lu\n", (unsigned long)(s->roce.tx_bytes / 4));
	put(dir, "port_rcv_data", "%lu\n", (unsigned long)(s->roce.rx_bytes / 4));
	put(dir, "port_xmit_packets", "%lu\n", (unsigned long)s->roce.tx_pkts);
	put(dir, "port_rcv_packets", "%lu\n", (unsigned long)s->roce.rx_pkts);
	put(dir, "port_rcv_errors", "%lu\n", (unsigned long)s->rx_bad);
	put(dir, "port_xmit_discards", "%lu\n",
	    (unsigned long)(s->port.counter[DROCE_PORT_CNT_TX_REFUSED] +
			    s->st.cnt[DROCE_DEV_CNT_TX_NO_NEIGH]));

	/* hw_counters/: driver-specific, as rxe's: droce's own counter names */
	snprintf(dir, sizeof(dir), "%s/hw_counters", sy.port);
	for (i = 0; i < DROCE_TQP_CNT_COUNT; i++) {
		for (k = 0; droce_tqp_counter_name[i][k] != '\0' && k < sizeof(name) - 1; k++)
			name[k] = (char)tolower((unsigned char)droce_tqp_counter_name[i][k]);
		name[k] = '\0';
		put(dir, name, "%lu\n", (unsigned long)s->st.tqp_cnt[i]);
	}
	for (i = 0; i < DROCE_DEV_CNT_COUNT; i++) {
		for (k = 0; droce_dev_counter_name[i][k] != '\0' && k < sizeof(name) - 1; k++)
			name[k] = (char)tolower((unsigned char)droce_dev_counter_name[i][k]);
		name[k] = '\0';
		put(dir, name, "%lu\n", (unsigned long)s->st.cnt[i]);
	}
}

/* What is fixed for the daemon's life. */
static int
write_static(struct droced *d, const struct droce_dev_conf *conf, const struct sysfs_snap *s)
{
	char dev[2048], dir[PATH_MAX], buf[64], host[64];
	const char *ifname = d->opts.iface;
	unsigned int i;
	int ret;

	snprintf(dev, sizeof(dev), "%s/class/infiniband/%s", sy.root, conf->name);
	ret = mkdir_p(sy.port);
	if (ret < 0)
		return ret;
	guid_str(buf, sizeof(buf), s->attr.node_guid);
	put(dev, "node_guid", "%s\n", buf);
	guid_str(buf, sizeof(buf), s->attr.sys_image_guid);
	put(dev, "sys_image_guid", "%s\n", buf);
	put(dev, "node_type", "1: CA\n");
	put(dev, "fw_ver", "%s\n", s->attr.fw_ver);
	put(dev, "hca_type", "droce\n");
	put(dev, "board_id", "droce\n");
	put(dev, "hw_rev", "0x%x\n", s->attr.hw_ver);
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "droce");
	host[sizeof(host) - 1] = '\0';
	put(dev, "node_desc", "%s %s\n", host, conf->name);

	port_rate(buf, sizeof(buf), &s->pattr);
	put(sy.port, "rate", "%s\n", buf);
	put(sy.port, "link_layer", "Ethernet\n");
	put(sy.port, "lid", "0x%x\n", s->pattr.lid);
	put(sy.port, "sm_lid", "0x%x\n", s->pattr.sm_lid);
	put(sy.port, "sm_sl", "%u\n", s->pattr.sm_sl);
	put(sy.port, "lid_mask_count", "%u\n", s->pattr.lmc);
	put(sy.port, "cap_mask", "0x%08x\n", s->pattr.port_cap_flags);
	snprintf(dir, sizeof(dir), "%s/pkeys", sy.port);
	put(dir, "0", "0xffff\n");
	for (i = 0; i < conf->n_gids; i++) {
		const uint8_t *g = conf->gid[i];

		snprintf(buf, sizeof(buf), "%u", i);
		snprintf(dir, sizeof(dir), "%s/gids", sy.port);
		put(dir, buf, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
		    g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11],
		    g[12], g[13], g[14], g[15]);
		snprintf(dir, sizeof(dir), "%s/gid_attrs/types", sy.port);
		put(dir, buf, "RoCE v2\n");
		if (ifname != NULL) {
			snprintf(dir, sizeof(dir), "%s/gid_attrs/ndevs", sy.port);
			put(dir, buf, "%s\n", ifname);
		}
	}
	if (ifname != NULL) {	/* pyverbs and others find the netdev here */
		char link[PATH_MAX + 64], target[128];

		snprintf(dir, sizeof(dir), "%s/device/net", dev);
		mkdir_p(dir);
		snprintf(link, sizeof(link), "%s/%s", dir, ifname);
		snprintf(target, sizeof(target), "/sys/class/net/%s", ifname);
		if (symlink(target, link) < 0 && errno != EEXIST)
			return -errno;
	}

	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs", sy.root);
	put(dir, "abi_version", "%d\n", SYSFS_VERBS_ABI);
	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs/uverbs0", sy.root);
	put(dir, "ibdev", "%s\n", conf->name);
	put(dir, "abi_version", "%d\n", SYSFS_UVERBS_ABI);
	put(dir, "dev", "231:192\n");	/* the kernel's uverbs0; informative only */
	snprintf(dir, sizeof(dir), "%s/class/misc/rdma_cm", sy.root);
	put(dir, "abi_version", "%d\n", SYSFS_RDMA_CM_ABI);

	/*
	 * The node UCX tests for (stat: a character device, access: R and W). No
	 * program on the shim opens it; /dev/null's numbers make opening harmless.
	 */
	snprintf(dir, sizeof(dir), "%s/dev/infiniband", sy.root);
	ret = mkdir_p(dir);
	if (ret < 0)
		return ret;
	strncat(dir, "/uverbs0", sizeof(dir) - strlen(dir) - 1);
	if (mknod(dir, S_IFCHR | 0666, makedev(1, 3)) < 0 && errno != EEXIST)
		return -errno;
	return chmod(dir, 0666) < 0 ? -errno : 0;
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

int
droced_sysfs_init(struct droced *d, const struct droce_dev_conf *conf)
{
	struct sysfs_snap s = { .d = d };
	int ret;

	if (d->opts.socket_path[0] == '@')	/* an abstract socket: no place for it */
		return 0;
	if (snprintf(sy.root, sizeof(sy.root), "%s.sysfs", d->opts.socket_path) >=
		(int)sizeof(sy.root) ||
	    snprintf(sy.port, sizeof(sy.port), "%s/class/infiniband/%s/ports/1", sy.root,
		     conf->name) >= (int)sizeof(sy.port))
		return -ENAMETOOLONG;
	nftw(sy.root, remove_one, 16, FTW_DEPTH | FTW_PHYS);	/* a stale tree */
	do_snapshot(&s.c);	/* the worker is not running yet */
	ret = write_static(d, conf, &s);
	if (ret < 0) {
		fprintf(stderr, "droced: cannot write the sysfs view in %s: %s\n", sy.root,
			strerror(-ret));
		nftw(sy.root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
		return ret;
	}
	write_dynamic(&s);
	sy.on = true;
	return 0;
}

void
droced_sysfs_tick(struct droced *d)
{
	struct sysfs_snap s = { .c.fn = do_snapshot, .c.quiet = true, .d = d };
	uint64_t now = droce_now_ns();

	if (!sy.on || now < sy.next_ns)
		return;
	sy.next_ns = now + SYSFS_REFRESH_NS;
	droced_call_worker(d, &s.c);
	write_dynamic(&s);
}

void
droced_sysfs_remove(struct droced *d)
{
	(void)d;
	if (sy.on)
		nftw(sy.root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	sy.on = false;
}
