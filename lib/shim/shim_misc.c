/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * libibverbs' helpers that need no daemon: enum strings, rate
 * conversions, sysfs file reading, the kernel-ABI copy helpers librdmacm
 * uses, fork control, and building an address handle from a received
 * completion (ibv_init_ah_from_wc, which parses the GRH or the IPv4 header
 * a UD receive places in front of the data). Stateless except the sysfs
 * path; any thread.
 */

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "shim_priv.h"

/* ---- strings (rdma-core's exact texts: applications print them) ---- */

SHIM_EXPORT const char *
ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const str[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	if (node_type < IBV_NODE_CA || node_type > IBV_NODE_UNSPECIFIED)
		return "unknown";
	return str[node_type];
}

SHIM_EXPORT const char *
ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const str[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	if (port_state > IBV_PORT_ACTIVE_DEFER)
		return "unknown";
	return str[port_state];
}

SHIM_EXPORT const char *
ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const str[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	if (event > IBV_EVENT_WQ_FATAL)
		return "unknown";
	return str[event];
}

SHIM_EXPORT const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const str[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	if (status > IBV_WC_TM_RNDV_INCOMPLETE)
		return "unknown";
	return str[status];
}

/* ---- rates: one table, four lookups ---- */

static const struct {
	enum ibv_rate rate;
	int mult;	/* of 2.5 Gb/s; 0: not a multiple */
	int mbps;
} shim_rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, 0, 14062 },
	{ IBV_RATE_56_GBPS, 0, 56250 },
	{ IBV_RATE_112_GBPS, 0, 112500 },
	{ IBV_RATE_168_GBPS, 0, 168750 },
	{ IBV_RATE_25_GBPS, 0, 25781 },
	{ IBV_RATE_100_GBPS, 0, 103125 },
	{ IBV_RATE_200_GBPS, 0, 206250 },
	{ IBV_RATE_300_GBPS, 0, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};

#define SHIM_NRATES (sizeof(shim_rates) / sizeof(shim_rates[0]))

SHIM_EXPORT int
ibv_rate_to_mult(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < SHIM_NRATES; i++)
		if (shim_rates[i].rate == rate && shim_rates[i].mult != 0)
			return shim_rates[i].mult;
	return -1;
}

SHIM_EXPORT enum ibv_rate
mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < SHIM_NRATES; i++)
		if (shim_rates[i].mult == mult && mult != 0)
			return shim_rates[i].rate;
	return IBV_RATE_MAX;
}

SHIM_EXPORT int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < SHIM_NRATES; i++)
		if (shim_rates[i].rate == rate)
			return shim_rates[i].mbps;
	return -1;
}

SHIM_EXPORT enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < SHIM_NRATES; i++)
		if (shim_rates[i].mbps == mbps)
			return shim_rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- sysfs (droce's device has no sysfs node; the helpers still work) ---- */

static char shim_sysfs_path[IBV_SYSFS_PATH_MAX];

static void
shim_sysfs_path_init(void)
{
	/* like rdma-core: honour SYSFS_PATH unless set-uid */
	const char *env = getuid() == geteuid() ? getenv("SYSFS_PATH") : NULL;
	size_t len;

	snprintf(shim_sysfs_path, sizeof(shim_sysfs_path), "%s", env != NULL ? env : "/sys");
	len = strlen(shim_sysfs_path);
	while (len > 0 && shim_sysfs_path[len - 1] == '/')
		shim_sysfs_path[--len] = '\0';
}

SHIM_EXPORT const char *
ibv_get_sysfs_path(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, shim_sysfs_path_init);
	return shim_sysfs_path;
}

SHIM_EXPORT int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[IBV_SYSFS_PATH_MAX * 2];
	ssize_t len;
	int fd;

	if (size == 0 || (size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0) {
		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		else if ((size_t)len < size)
			buf[len] = '\0';
		else
			return -1;	/* would be unterminated */
	}
	return (int)len;
}

/* ---- kernel ABI copies (librdmacm) ---- */

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

SHIM_EXPORT void
ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

SHIM_EXPORT void
ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = (enum ibv_qp_state)src->cur_qp_state;
	dst->path_mtu = (enum ibv_mtu)src->path_mtu;
	dst->path_mig_state = (enum ibv_mig_state)src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = (unsigned int)src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

#define SHIM_PATH_REC_FIELDS(X) \
	X(dlid) X(slid) X(raw_traffic) X(flow_label) X(hop_limit) X(traffic_class) \
	X(reversible) X(numb_path) X(pkey) X(sl) X(mtu_selector) X(mtu) X(rate_selector) \
	X(rate) X(packet_life_time) X(preference) X(packet_life_time_selector)

SHIM_EXPORT void
ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
#define X(f) dst->f = src->f;
	SHIM_PATH_REC_FIELDS(X)
#undef X
}

SHIM_EXPORT void
ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(src->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(src->sgid));
#define X(f) dst->f = src->f;
	SHIM_PATH_REC_FIELDS(X)
#undef X
}

/* ---- fork (see shim_mem.c: children get private copies of shared pages) ---- */

SHIM_EXPORT int
ibv_fork_init(void)
{
	return 0;
}

SHIM_EXPORT enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

SHIM_EXPORT int
ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

SHIM_EXPORT int
ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* ---- address handles from completions ---- */

/* The GID table index holding @p gid with @p type on @p port, or -1. */
static int
shim_find_gid_index(struct ibv_context *ctx, uint8_t port, const union ibv_gid *gid,
		    enum ibv_gid_type type)
{
	struct ibv_gid_entry e;
	uint32_t i;
	int ret;

	for (i = 0;; i++) {
		ret = shim_query_gid_entry(ctx, port, i, &e);
		if (ret == ENODATA)
			continue;
		if (ret != 0) {
			errno = ret;
			return -1;
		}
		if (memcmp(&e.gid, gid, sizeof(*gid)) == 0 && e.gid_type == type)
			return (int)i;
		if (i > 0xff) {		/* sgid_index is 8 bits */
			errno = ENOENT;
			return -1;
		}
	}
}

static void
gid_from_ipv4(union ibv_gid *gid, uint32_t addr_be)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &addr_be, 4);
}

/*
 * The 40 bytes in front of a UD receive hold a GRH, or for RoCEv2 over
 * IPv4 twenty unused bytes then the IPv4 header. RFC 791 header checksum
 * tells the two apart when the version nibble is ambiguous.
 */
static int
grh_ip_version(const struct ibv_grh *grh)
{
	const struct iphdr *ip4 = (const struct iphdr *)((const uint8_t *)grh + 20);
	uint32_t sum = 0;
	uint16_t w[10];
	unsigned int i;

	if ((be32toh(grh->version_tclass_flow) >> 28) != 6)
		return ip4->version == 4 ? 4 : -1;
	if (ip4->ihl != 5 || ip4->version != 4)
		return 6;
	memcpy(w, ip4, sizeof(w));
	for (i = 0; i < 10; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff ? 4 : 6;
}

SHIM_EXPORT int
ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port_num, struct ibv_wc *wc,
		    struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	union ibv_gid sgid;
	int idx, ver;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	ah_attr->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	ver = grh_ip_version(grh);
	if (ver == 4) {
		const struct iphdr *ip4 = (const struct iphdr *)((const uint8_t *)grh + 20);

		if ((be32toh(ip4->daddr) >> 28) == 0xe) {	/* class D: multicast */
			errno = EINVAL;
			return -1;
		}
		gid_from_ipv4(&sgid, ip4->daddr);
		idx = shim_find_gid_index(ctx, port_num, &sgid, IBV_GID_TYPE_ROCE_V2);
		if (idx < 0)
			return -1;
		gid_from_ipv4(&ah_attr->grh.dgid, ip4->saddr);
		ah_attr->grh.sgid_index = (uint8_t)idx;
		ah_attr->grh.hop_limit = ip4->ttl;
		ah_attr->grh.traffic_class = ip4->tos;
		return 0;
	}
	if (ver == 6) {
		if (grh->dgid.raw[0] == 0xff) {
			errno = EINVAL;
			return -1;
		}
		if (grh->next_hdr != IPPROTO_UDP) {
			errno = EPROTONOSUPPORT;	/* RoCEv1 (next header 0x1b): not droce */
			return -1;
		}
		idx = shim_find_gid_index(ctx, port_num, &grh->dgid, IBV_GID_TYPE_ROCE_V2);
		if (idx < 0)
			return -1;
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.sgid_index = (uint8_t)idx;
		ah_attr->grh.hop_limit = grh->hop_limit;
		ah_attr->grh.traffic_class = (be32toh(grh->version_tclass_flow) >> 20) & 0xff;
		return 0;
	}
	errno = EPROTONOSUPPORT;
	return -1;
}

SHIM_EXPORT struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
		      uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return shim_create_ah(pd, &attr);
}

/*
 * Used by kernel providers to find a peer's MAC through the kernel's
 * neighbour table; droced resolves its own neighbours (DESIGN decision 6).
 */
SHIM_EXPORT int
ibv_resolve_eth_l2_from_gid(struct ibv_context *ctx, struct ibv_ah_attr *attr,
			    uint8_t eth_mac[6], uint16_t *vid)
{
	(void)ctx;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	return -EOPNOTSUPP;
}
