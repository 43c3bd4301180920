/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * RDMA CM's IP addressing (droce_cm_ip.h): service IDs and the cma header
 * in the private data of REQ and SIDR_REQ. Pure functions.
 */

#include <errno.h>
#include <string.h>

#include "droce_cm_ip.h"
#include "droce_wire_gid.h"

/* The kernel's IPv4 form in a cma header: 12 zero bytes, then the address. */
#define CMA_IPV4_PAD_BYTES 12

int
droce_cm_ip_service_id_split(uint64_t service_id, uint16_t *ps, uint16_t *port)
{
	uint16_t p = (uint16_t)(service_id >> 16);

	if (service_id >> 32)
		return -EINVAL;
	switch (p) {
	case DROCE_RDMA_PS_IPOIB:
	case DROCE_RDMA_PS_IB:
	case DROCE_RDMA_PS_TCP:
	case DROCE_RDMA_PS_UDP:
		break;
	default:
		return -EINVAL;
	}
	*ps = p;
	*port = (uint16_t)service_id;
	return 0;
}

static void
addr_to_wire(uint8_t ip_version, const uint8_t gid[16], uint8_t wire[16])
{
	if (ip_version == 4) {
		memset(wire, 0, CMA_IPV4_PAD_BYTES);
		memcpy(wire + CMA_IPV4_PAD_BYTES, gid + 12, 4);
	} else {
		memcpy(wire, gid, 16);
	}
}

static void
addr_from_wire(uint8_t ip_version, const uint8_t wire[16], uint8_t gid[16])
{
	rte_be32_t ip;

	if (ip_version == 4) {
		/* Linux reads only the last 4 bytes; so do we */
		memcpy(&ip, wire + CMA_IPV4_PAD_BYTES, 4);
		droce_gid_from_ipv4(gid, ip);
	} else {
		memcpy(gid, wire, 16);
	}
}

int
droce_cm_ip_hdr_build(const struct droce_cm_ip_info *ip, uint8_t *pdata, uint32_t cap)
{
	struct droce_cma_hdr h;

	if (ip->ip_version != 4 && ip->ip_version != 6)
		return -EINVAL;
	if (ip->ip_version == 4 && (!droce_gid_is_ipv4(ip->src) || !droce_gid_is_ipv4(ip->dst)))
		return -EINVAL;
	if (cap < DROCE_CMA_HDR_BYTES)
		return -ENOSPC;
	memset(&h, 0, sizeof(h));
	droce_cma_hdr_set_version(&h, DROCE_CMA_VERSION);
	droce_cma_hdr_set_ip_version(&h, ip->ip_version);
	droce_cma_hdr_set_port(&h, ip->src_port);
	addr_to_wire(ip->ip_version, ip->src, h.src_addr);
	addr_to_wire(ip->ip_version, ip->dst, h.dst_addr);
	memcpy(pdata, &h, sizeof(h));
	return DROCE_CMA_HDR_BYTES;
}

int
droce_cm_ip_hdr_parse(const uint8_t *pdata, uint32_t len, uint64_t service_id,
		      struct droce_cm_ip_info *out)
{
	struct droce_cma_hdr h;
	uint16_t ps, port;
	uint8_t v;

	if (len < DROCE_CMA_HDR_BYTES)
		return -EMSGSIZE;
	memcpy(&h, pdata, sizeof(h));
	if (droce_cma_hdr_version(&h) != DROCE_CMA_VERSION)
		return -EPROTO;
	v = droce_cma_hdr_ip_version(&h);
	if (v != 4 && v != 6)
		return -EAFNOSUPPORT;
	if (droce_cm_ip_service_id_split(service_id, &ps, &port) < 0)
		return -EINVAL;
	out->ip_version = v;
	out->src_port = droce_cma_hdr_port(&h);
	out->dst_port = port;
	out->ps = ps;
	addr_from_wire(v, h.src_addr, out->src);
	addr_from_wire(v, h.dst_addr, out->dst);
	return 0;
}

int
droce_cm_ip_pdata_max(enum droce_cm_msg_type type, bool ip_hdr)
{
	if ((unsigned int)type >= DROCE_CM_MSG_COUNT || type == DROCE_CM_MSG_MRA)
		return -EINVAL;
	if (ip_hdr && (type == DROCE_CM_MSG_REQ || type == DROCE_CM_MSG_SIDR_REQ))
		return droce_cm_msg_desc[type].pdata_len - DROCE_CMA_HDR_BYTES;
	return droce_cm_msg_desc[type].pdata_len;
}
