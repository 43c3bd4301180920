/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CM_IP_H
#define DROCE_CM_IP_H

/**
 * @file
 * RDMA CM's IP addressing over the IB CM, as Linux's drivers/infiniband/
 * core/cma.c puts it on the wire, so that a kernel peer understands us.
 *
 * Service ID. An rdma_cm id bound to an IP port connects to, and listens
 * on, the service ID (port space << 16) + port:
 *     RDMA_PS_TCP 0x0106 -> 0x0000000001060000 + port   (RC: rping, perftest -R)
 *     RDMA_PS_UDP 0x0111 -> 0x0000000001110000 + port   (UD: udaddy, SIDR)
 *     RDMA_PS_IB  0x013f -> 0x00000000013f0000 + port
 *     RDMA_PS_IPOIB 0x0002 -> 0x0000000000020000 + port
 * The destination port is only in the service ID.
 *
 * The "cma header": the first 36 bytes of the private data of a REQ or a
 * SIDR_REQ from an AF_INET/AF_INET6 id:
 *     byte 0      CMA version, 0x00
 *     byte 1      IP version in bits 7:4 (4 or 6), bits 3:0 reserved
 *     bytes 2-3   source (active side's) port, big endian
 *     bytes 4-19  source IP address
 *     bytes 20-35 destination IP address
 * IPv4 addresses are the last 4 of the 16 bytes, after 12 zero bytes (the
 * kernel's union of in6_addr and { pad[3]; addr }): NOT the ::ffff: form
 * RoCE GIDs use. The real REQ of tests/golden/rdma_cm_rping.pcap has it so.
 * Other messages (REP, REJ, RTU, DREQ, DREP, SIDR_REP, MRA) carry no header:
 * their whole private data is the application's.
 *
 * Addresses in struct droce_cm_ip_info are 16-byte GID-form (IPv4 as
 * ::ffff:a.b.c.d, droce_wire_gid.h), whatever the wire form.
 */

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>

#include "droce_cm_mad.h"

#define DROCE_CMA_HDR_BYTES	36
#define DROCE_CMA_VERSION	0x00

/** RDMA CM port spaces (rdma-core's enum rdma_port_space). */
enum droce_rdma_ps {
	DROCE_RDMA_PS_IPOIB = 0x0002,
	DROCE_RDMA_PS_IB    = 0x013f,
	DROCE_RDMA_PS_TCP   = 0x0106,
	DROCE_RDMA_PS_UDP   = 0x0111,
};

/** The private data an rdma_cm application may pass with each message. */
enum droce_cm_ip_pdata_max {
	DROCE_CM_IP_REQ_PDATA_MAX = DROCE_CM_REQ_PDATA_BYTES - DROCE_CMA_HDR_BYTES,		/* 56 */
	DROCE_CM_IP_SIDR_REQ_PDATA_MAX = DROCE_CM_SIDR_REQ_PDATA_BYTES - DROCE_CMA_HDR_BYTES,	/* 180 */
	DROCE_CM_IP_REP_PDATA_MAX = DROCE_CM_REP_PDATA_BYTES,			/* 196 */
	DROCE_CM_IP_REJ_PDATA_MAX = DROCE_CM_REJ_PDATA_BYTES,			/* 148 */
	DROCE_CM_IP_RTU_PDATA_MAX = DROCE_CM_RTU_PDATA_BYTES,			/* 224 */
	DROCE_CM_IP_DREQ_PDATA_MAX = DROCE_CM_DREQ_PDATA_BYTES,			/* 220 */
	DROCE_CM_IP_DREP_PDATA_MAX = DROCE_CM_DREP_PDATA_BYTES,			/* 224 */
	DROCE_CM_IP_SIDR_REP_PDATA_MAX = DROCE_CM_SIDR_REP_PDATA_BYTES,		/* 136 */
};

/** The cma header as it is on the wire. */
struct droce_cma_hdr {
	uint8_t    cma_version;
	uint8_t    ip_version;		/* IPVersion:4 resv:4 */
	rte_be16_t port;		/* the active side's (source) port */
	uint8_t    src_addr[16];
	uint8_t    dst_addr[16];
} DROCE_WIRE_PACKED;

static_assert(sizeof(struct droce_cma_hdr) == DROCE_CMA_HDR_BYTES, "cma header is 36 bytes");

static inline uint8_t droce_cma_hdr_version(const struct droce_cma_hdr *h) { return h->cma_version; }
static inline void droce_cma_hdr_set_version(struct droce_cma_hdr *h, uint8_t v) { h->cma_version = v; }
static inline uint8_t droce_cma_hdr_ip_version(const struct droce_cma_hdr *h) { return h->ip_version >> 4; }
static inline void
droce_cma_hdr_set_ip_version(struct droce_cma_hdr *h, uint8_t v)
{
	h->ip_version = (uint8_t)((h->ip_version & 0x0f) | (v << 4));
}
static inline uint16_t droce_cma_hdr_port(const struct droce_cma_hdr *h) { return rte_be_to_cpu_16(h->port); }
static inline void droce_cma_hdr_set_port(struct droce_cma_hdr *h, uint16_t v) { h->port = rte_cpu_to_be_16(v); }

/** The IP view of a connection request, host order, addresses in GID form. */
struct droce_cm_ip_info {
	uint8_t ip_version;		/**< 4 or 6 */
	uint8_t src[16];		/**< the active side: requester */
	uint8_t dst[16];		/**< the passive side: listener */
	uint16_t src_port;
	uint16_t dst_port;		/**< from the service ID */
	uint16_t ps;			/**< enum droce_rdma_ps, from the service ID */
};

/** Service ID of @p port in port space @p ps. */
static inline uint64_t
droce_cm_ip_service_id(uint16_t ps, uint16_t port)
{
	return ((uint64_t)ps << 16) + port;
}

/**
 * Split an RDMA CM service ID into port space and port.
 * @return 0, or -EINVAL if the upper 32 bits are not zero or the port
 *         space is not one of enum droce_rdma_ps.
 */
int droce_cm_ip_service_id_split(uint64_t service_id, uint16_t *ps, uint16_t *port);

/**
 * Write the cma header for @p ip into @p pdata (the private data of a REQ
 * or SIDR_REQ). @p ip->src and dst must both be IPv4-mapped for version 4.
 * @return DROCE_CMA_HDR_BYTES, -ENOSPC if @p cap is smaller, -EINVAL for
 *         an IP version other than 4 or 6 or an IPv4 address not mapped.
 */
int droce_cm_ip_hdr_build(const struct droce_cm_ip_info *ip, uint8_t *pdata, uint32_t cap);

/**
 * Read the cma header at the start of @p pdata and the port space and
 * destination port from @p service_id.
 * @return 0; -EMSGSIZE if @p len is under 36 bytes; -EPROTO for a CMA
 *         version other than 0 (Linux refuses it too); -EAFNOSUPPORT for
 *         an IP version other than 4 or 6; -EINVAL if @p service_id is not
 *         an RDMA CM one.
 */
int droce_cm_ip_hdr_parse(const uint8_t *pdata, uint32_t len, uint64_t service_id,
			  struct droce_cm_ip_info *out);

/**
 * Bytes of application private data a message can carry: the field size,
 * less the cma header on a REQ or SIDR_REQ when @p ip_hdr.
 * @return the count, or -EINVAL for a message rdma_cm gives no private data (MRA).
 */
int droce_cm_ip_pdata_max(enum droce_cm_msg_type type, bool ip_hdr);

#endif /* DROCE_CM_IP_H */
