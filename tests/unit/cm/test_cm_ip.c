/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_cm_ip.h: RDMA CM service IDs, the cma header in REQ private data
 * (checked against the REQ of a real rxe rping connection, byte for byte)
 * and the private data left to applications.
 */

#include <string.h>

#include "cm_golden.h"
#include "droce_cm_ip.h"
#include "test_cm.h"

static const uint8_t gid_client[16] = { [10] = 0xff, 0xff, 10, 77, 0, 2 };
static const uint8_t gid_server[16] = { [10] = 0xff, 0xff, 10, 77, 0, 1 };

START_TEST(test_service_ids_of_each_port_space)
{
	uint16_t ps, port;

	ck_assert_uint_eq(droce_cm_ip_service_id(DROCE_RDMA_PS_TCP, 7174), 0x0000000001061c06ull);
	ck_assert_uint_eq(droce_cm_ip_service_id(DROCE_RDMA_PS_UDP, 7174), 0x0000000001111c06ull);
	ck_assert_uint_eq(droce_cm_ip_service_id(DROCE_RDMA_PS_IB, 1), 0x00000000013f0001ull);
	/* IPoIB's port space has no 0x01000000 "IP CM" bit: (ps << 16) + port, as Linux */
	ck_assert_uint_eq(droce_cm_ip_service_id(DROCE_RDMA_PS_IPOIB, 0xffff), 0x000000000002ffffull);

	ck_assert_int_eq(droce_cm_ip_service_id_split(0x0000000001061c06ull, &ps, &port), 0);
	ck_assert_uint_eq(ps, DROCE_RDMA_PS_TCP);
	ck_assert_uint_eq(port, 7174);
	ck_assert_int_eq(droce_cm_ip_service_id_split(0x0000000001110000ull, &ps, &port), 0);
	ck_assert_uint_eq(ps, DROCE_RDMA_PS_UDP);
	ck_assert_uint_eq(port, 0);
	ck_assert_int_eq(droce_cm_ip_service_id_split(0x00000000013fabcdull, &ps, &port), 0);
	ck_assert_int_eq(droce_cm_ip_service_id_split(0x000000000002abcdull, &ps, &port), 0);
	/* not RDMA CM: another port space, or IBA-assigned upper bits */
	ck_assert_int_eq(droce_cm_ip_service_id_split(0x0000000001071c06ull, &ps, &port), -EINVAL);
	ck_assert_int_eq(droce_cm_ip_service_id_split(0x0000000000001c06ull, &ps, &port), -EINVAL);
	ck_assert_int_eq(droce_cm_ip_service_id_split(0x0200000001061c06ull, &ps, &port), -EINVAL);
	ck_assert_int_eq(droce_cm_ip_service_id_split(0x0000000101061c06ull, &ps, &port), -EINVAL);
}
END_TEST

/* The private data of the golden REQ (MAD bytes 164 ..). */
static const uint8_t *
golden_req_pdata(void)
{
	static uint8_t pdata[DROCE_CM_REQ_PDATA_BYTES];
	size_t n = sizeof(golden_req) - 164;

	memset(pdata, 0, sizeof(pdata));
	memcpy(pdata, golden_req + 164, n);
	return pdata;
}

START_TEST(test_golden_req_cma_header)
{
	const uint8_t *pd = golden_req_pdata();
	const struct droce_cma_hdr *h = (const void *)pd;
	struct droce_cm_ip_info ip;
	static const uint8_t wire_src[16] = { [12] = 10, 77, 0, 2 };
	static const uint8_t wire_dst[16] = { [12] = 10, 77, 0, 1 };

	/* the raw layout: IPv4 after 12 zero bytes, not ::ffff: */
	ck_assert_uint_eq(droce_cma_hdr_version(h), 0);
	ck_assert_uint_eq(droce_cma_hdr_ip_version(h), 4);
	ck_assert_uint_eq(droce_cma_hdr_port(h), 0xbdb0);
	ck_assert_mem_eq(h->src_addr, wire_src, 16);
	ck_assert_mem_eq(h->dst_addr, wire_dst, 16);

	ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, DROCE_CM_REQ_PDATA_BYTES, 0x0000000001061c06ull,
					       &ip), 0);
	ck_assert_uint_eq(ip.ip_version, 4);
	ck_assert_mem_eq(ip.src, gid_client, 16);	/* the active side, rping -c */
	ck_assert_mem_eq(ip.dst, gid_server, 16);
	ck_assert_uint_eq(ip.src_port, 48560);
	ck_assert_uint_eq(ip.dst_port, 7174);		/* rping's default port */
	ck_assert_uint_eq(ip.ps, DROCE_RDMA_PS_TCP);
}
END_TEST

START_TEST(test_build_ipv4_header_as_linux_does)
{
	struct droce_cm_ip_info ip = {
		.ip_version = 4, .src_port = 48560, .dst_port = 7174, .ps = DROCE_RDMA_PS_TCP,
	};
	uint8_t pd[DROCE_CM_REQ_PDATA_BYTES];

	memcpy(ip.src, gid_client, 16);
	memcpy(ip.dst, gid_server, 16);
	memset(pd, 0, sizeof(pd));
	ck_assert_int_eq(droce_cm_ip_hdr_build(&ip, pd, sizeof(pd)), DROCE_CMA_HDR_BYTES);
	ck_assert_mem_eq(pd, golden_req_pdata(), DROCE_CM_REQ_PDATA_BYTES);
	ck_assert_int_eq(droce_cm_ip_hdr_build(&ip, pd, DROCE_CMA_HDR_BYTES - 1), -ENOSPC);
	/* version 4 wants IPv4-mapped addresses */
	ip.src[10] = 0;
	ck_assert_int_eq(droce_cm_ip_hdr_build(&ip, pd, sizeof(pd)), -EINVAL);
	ip.ip_version = 5;
	ck_assert_int_eq(droce_cm_ip_hdr_build(&ip, pd, sizeof(pd)), -EINVAL);
}
END_TEST

START_TEST(test_ipv6_header_round_trips)
{
	struct droce_cm_ip_info ip = {
		.ip_version = 6, .src_port = 1, .dst_port = 65535, .ps = DROCE_RDMA_PS_UDP,
		.src = { 0xfd, 0x00, 0x77, [15] = 2 },
		.dst = { 0xfd, 0x00, 0x77, [15] = 1 },
	}, out;
	uint8_t pd[DROCE_CMA_HDR_BYTES];

	ck_assert_int_eq(droce_cm_ip_hdr_build(&ip, pd, sizeof(pd)), DROCE_CMA_HDR_BYTES);
	ck_assert_uint_eq(pd[0], 0x00);
	ck_assert_uint_eq(pd[1], 0x60);
	ck_assert_mem_eq(pd + 4, ip.src, 16);
	ck_assert_mem_eq(pd + 20, ip.dst, 16);
	ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, sizeof(pd),
					       droce_cm_ip_service_id(DROCE_RDMA_PS_UDP, 65535),
					       &out), 0);
	ck_assert_uint_eq(out.ip_version, 6);
	ck_assert_mem_eq(out.src, ip.src, 16);
	ck_assert_mem_eq(out.dst, ip.dst, 16);
	ck_assert_uint_eq(out.src_port, 1);
	ck_assert_uint_eq(out.dst_port, 65535);
	ck_assert_uint_eq(out.ps, DROCE_RDMA_PS_UDP);
}
END_TEST

START_TEST(test_parse_refuses_bad_headers)
{
	uint8_t pd[DROCE_CM_REQ_PDATA_BYTES];
	struct droce_cm_ip_info ip;
	uint64_t sid = 0x0000000001061c06ull;
	uint32_t len;

	memcpy(pd, golden_req_pdata(), sizeof(pd));
	for (len = 0; len < DROCE_CMA_HDR_BYTES; len++)
		ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, len, sid, &ip), -EMSGSIZE);
	ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, DROCE_CMA_HDR_BYTES, sid, &ip), 0);
	ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, DROCE_CMA_HDR_BYTES, 0x1c06, &ip), -EINVAL);
	pd[1] = 0x4f;	/* reserved low nibble: ignored */
	ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, sizeof(pd), sid, &ip), 0);
	pd[4] = 0xaa;	/* the IPv4 pad: Linux reads only the address, so do we */
	ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, sizeof(pd), sid, &ip), 0);
	ck_assert_mem_eq(ip.src, gid_client, 16);
	for (unsigned int v = 0; v < 16; v++) {
		pd[1] = (uint8_t)(v << 4);
		ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, sizeof(pd), sid, &ip),
				 v == 4 || v == 6 ? 0 : -EAFNOSUPPORT);
	}
	pd[1] = 0x40;
	pd[0] = 0x01;	/* only CMA version 0 exists */
	ck_assert_int_eq(droce_cm_ip_hdr_parse(pd, sizeof(pd), sid, &ip), -EPROTO);
}
END_TEST

START_TEST(test_private_data_left_to_applications)
{
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_REQ, true), 56);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_SIDR_REQ, true), 180);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_REQ, false), 92);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_SIDR_REQ, false), 216);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_REP, true), 196);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_REJ, true), 148);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_RTU, true), 224);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_DREQ, true), 220);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_DREP, true), 224);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_SIDR_REP, true), 136);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_MRA, true), -EINVAL);
	ck_assert_int_eq(droce_cm_ip_pdata_max(DROCE_CM_MSG_COUNT, true), -EINVAL);
	ck_assert_int_eq(DROCE_CM_IP_REQ_PDATA_MAX, 56);
	ck_assert_int_eq(DROCE_CM_IP_SIDR_REQ_PDATA_MAX, 180);
}
END_TEST

TCase *
test_cm_ip_tcase(void)
{
	TCase *tc = tcase_create("ip");

	tcase_add_test(tc, test_service_ids_of_each_port_space);
	tcase_add_test(tc, test_golden_req_cma_header);
	tcase_add_test(tc, test_build_ipv4_header_as_linux_does);
	tcase_add_test(tc, test_ipv6_header_round_trips);
	tcase_add_test(tc, test_parse_refuses_bad_headers);
	tcase_add_test(tc, test_private_data_left_to_applications);
	return tc;
}
