/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_wire_gid.h: IPv4-mapped GIDs, multicast detection and the group
 * MAC mapping (RFC 1112 6.4, RFC 2464 7), the default flow label (the
 * kernel's rdma_calc_flow_label()) and the UDP source port, compared with
 * rdma-core's own ibv_flow_label_to_udp_sport() for every 20-bit label.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "droce_wire_gid.h"
#include "test_wire.h"

static void
gid_parse(uint8_t gid[DROCE_GID_BYTES], const char *ip6)
{
	ck_assert_int_eq(inet_pton(AF_INET6, ip6, gid), 1);
}

static void
gid_v4(uint8_t gid[DROCE_GID_BYTES], const char *ip4)
{
	struct in_addr a;

	ck_assert_int_eq(inet_pton(AF_INET, ip4, &a), 1);
	droce_gid_from_ipv4(gid, a.s_addr);
}

START_TEST(test_ipv4_gid_is_ipv4_mapped)
{
	static const uint8_t want[16] = { [10] = 0xff, [11] = 0xff, 10, 77, 0, 1 };
	uint8_t gid[16], v6[16];

	memset(gid, 0xee, sizeof(gid));
	gid_v4(gid, "10.77.0.1");
	ck_assert_mem_eq(gid, want, 16);
	ck_assert(droce_gid_is_ipv4(gid));
	ck_assert_uint_eq(droce_gid_to_ipv4(gid), htonl(0x0a4d0001));
	gid_parse(v6, "::ffff:10.77.0.1");
	ck_assert_mem_eq(gid, v6, 16);
}
END_TEST

START_TEST(test_only_ffff_prefix_is_ipv4)
{
	uint8_t gid[16];

	gid_parse(gid, "::ffff:0.0.0.0");
	ck_assert(droce_gid_is_ipv4(gid));
	gid_parse(gid, "::ffff:255.255.255.255");
	ck_assert(droce_gid_is_ipv4(gid));
	gid_parse(gid, "::1");
	ck_assert(!droce_gid_is_ipv4(gid));
	gid_parse(gid, "::10.77.0.1");			/* IPv4-compatible, deprecated */
	ck_assert(!droce_gid_is_ipv4(gid));
	gid_parse(gid, "::fffe:10.77.0.1");
	ck_assert(!droce_gid_is_ipv4(gid));
	gid_parse(gid, "1::ffff:10.77.0.1");
	ck_assert(!droce_gid_is_ipv4(gid));
	gid_parse(gid, "fe80::5054:aff:fe4d:2");
	ck_assert(!droce_gid_is_ipv4(gid));
}
END_TEST

START_TEST(test_mcast_detection)
{
	static const struct {
		const char *addr;
		bool v4;
		bool mcast;
	} cases[] = {
		{ "224.0.0.0", true, true },
		{ "224.0.0.1", true, true },
		{ "239.255.255.255", true, true },
		{ "223.255.255.255", true, false },
		{ "240.0.0.0", true, false },
		{ "10.77.0.1", true, false },
		{ "255.255.255.255", true, false },	/* broadcast is not a group */
		{ "ff02::1", false, true },
		{ "ff00::", false, true },
		{ "ff0e::1:ff00:1234", false, true },
		{ "fe80::1", false, false },
		{ "fd00:77::1", false, false },
		{ "::224.0.0.1", false, false },	/* not IPv4-mapped */
		{ "2001:db8::e000:1", false, false },
	};
	unsigned int i;

	for (i = 0; i < DROCE_DIM(cases); i++) {
		uint8_t gid[16];

		if (cases[i].v4)
			gid_v4(gid, cases[i].addr);
		else
			gid_parse(gid, cases[i].addr);
		ck_assert_msg(droce_gid_is_mcast(gid) == cases[i].mcast, "%s", cases[i].addr);
	}
}
END_TEST

static void
check_mac(const uint8_t gid[16], const uint8_t want[6], const char *what)
{
	uint8_t mac[6];

	memset(mac, 0xee, sizeof(mac));
	ck_assert_msg(droce_gid_mcast_mac(gid, mac) == 0, "%s", what);
	ck_assert_msg(memcmp(mac, want, 6) == 0,
		      "%s: %02x:%02x:%02x:%02x:%02x:%02x", what,
		      mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

START_TEST(test_ipv4_group_mac_drops_the_top_bit_of_the_second_octet)
{
	static const uint8_t m1[6] = { 0x01, 0x00, 0x5e, 0x01, 0x01, 0x02 };
	static const uint8_t m2[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	static const uint8_t m3[6] = { 0x01, 0x00, 0x5e, 0x7f, 0xff, 0xff };
	uint8_t gid[16];

	gid_v4(gid, "239.129.1.2");
	check_mac(gid, m1, "239.129.1.2");
	gid_v4(gid, "224.1.1.2");		/* shares the MAC: 32 groups per address */
	check_mac(gid, m1, "224.1.1.2");
	gid_v4(gid, "224.0.0.1");
	check_mac(gid, m2, "224.0.0.1");
	gid_v4(gid, "239.255.255.255");
	check_mac(gid, m3, "239.255.255.255");
}
END_TEST

START_TEST(test_ipv6_group_mac_is_33_33_and_the_last_32_bits)
{
	static const uint8_t m1[6] = { 0x33, 0x33, 0xff, 0x00, 0x12, 0x34 };
	static const uint8_t m2[6] = { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t m3[6] = { 0x33, 0x33, 0x80, 0x01, 0x02, 0x03 };
	uint8_t gid[16];

	gid_parse(gid, "ff02::1:ff00:1234");
	check_mac(gid, m1, "ff02::1:ff00:1234");
	gid_parse(gid, "ff0e::1");
	check_mac(gid, m2, "ff0e::1");
	gid_parse(gid, "ff12:3456::8001:203");
	check_mac(gid, m3, "ff12:3456::8001:203");
}
END_TEST

START_TEST(test_unicast_gid_has_no_group_mac)
{
	static const uint8_t untouched[6] = { 0xee, 0xee, 0xee, 0xee, 0xee, 0xee };
	uint8_t gid[16], mac[6];

	memset(mac, 0xee, sizeof(mac));
	gid_v4(gid, "10.77.0.1");
	ck_assert_int_eq(droce_gid_mcast_mac(gid, mac), -EINVAL);
	gid_parse(gid, "fe80::1");
	ck_assert_int_eq(droce_gid_mcast_mac(gid, mac), -EINVAL);
	gid_v4(gid, "240.0.0.1");
	ck_assert_int_eq(droce_gid_mcast_mac(gid, mac), -EINVAL);
	ck_assert_mem_eq(mac, untouched, 6);
}
END_TEST

START_TEST(test_gid_str_prints_dotted_quad_for_ipv4)
{
	char buf[64];
	uint8_t gid[16];

	gid_v4(gid, "10.77.0.1");
	ck_assert_str_eq(droce_gid_str(gid, buf, sizeof(buf)), "10.77.0.1");
	gid_parse(gid, "ff02::1:ff00:1234");
	ck_assert_str_eq(droce_gid_str(gid, buf, sizeof(buf)), "ff02::1:ff00:1234");
	gid_parse(gid, "fd00:77::2");
	ck_assert_ptr_eq(droce_gid_str(gid, buf, sizeof(buf)), buf);
	ck_assert_str_eq(buf, "fd00:77::2");
}
END_TEST

/* The kernel's rdma_calc_flow_label(), include/rdma/ib_verbs.h. */
static uint32_t
kernel_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

START_TEST(test_flow_label_is_symmetric_20_bits_and_matches_the_kernel)
{
	uint32_t s = 0x12345678, i;

	/* pinned: python3 -c 'v=a*b; v^=v>>20; v^=v>>40; print(hex(v&0xfffff))' */
	ck_assert_uint_eq(droce_flow_label(0x11, 0x12), 0x132);
	ck_assert_uint_eq(droce_flow_label(0xffffff, 0xffffff), 0xfff1e);
	ck_assert_uint_eq(droce_flow_label(0x1234, 0x56789a), 0xb3128);
	ck_assert_uint_eq(droce_flow_label(1, 0xfffff), 0xfffff);
	ck_assert_uint_eq(droce_flow_label(0, 0x123456), 0);
	for (i = 0; i < 5000; i++) {
		uint32_t a, b;

		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		a = s & 0xffffff;
		b = (s >> 7) & 0xffffff;
		if (i & 1)
			b = a + (i >> 1);	/* neighbouring QPNs too */
		ck_assert_uint_eq(droce_flow_label(a, b), droce_flow_label(b, a));
		ck_assert_uint_le(droce_flow_label(a, b), 0xfffff);
		ck_assert_uint_eq(droce_flow_label(a, b), kernel_flow_label(a, b));
	}
}
END_TEST

START_TEST(test_flow_label_to_sport_matches_rdma_core)
{
	uint32_t fl;

	for (fl = 0; fl <= 0xfffff; fl++) {
		uint16_t sport = droce_flow_label_to_sport(fl);

		if (sport != ibv_flow_label_to_udp_sport(fl))
			ck_abort_msg("flow label %#x: sport %#x, rdma-core %#x", fl, sport,
				     ibv_flow_label_to_udp_sport(fl));
		if (sport < 0xc000)	/* IB_ROCE_UDP_ENCAP_VALID_PORT_MIN */
			ck_abort_msg("flow label %#x: sport %#x below 0xc000", fl, sport);
	}
	ck_assert_uint_eq(droce_flow_label_to_sport(0), 0xc000);
	ck_assert_uint_eq(droce_flow_label_to_sport(0xfffff), 0xc000 | (0x3fff ^ 0x3f));
	/* bits above the 20 of a flow label do not matter, to rdma-core either */
	ck_assert_uint_eq(droce_flow_label_to_sport(0xfff12345),
			  droce_flow_label_to_sport(0x12345));
	ck_assert_uint_eq(droce_flow_label_to_sport(0xfff12345),
			  ibv_flow_label_to_udp_sport(0xfff12345));
}
END_TEST

TCase *
test_wire_gid_tcase(void)
{
	TCase *tc = tcase_create("gid");

	tcase_add_test(tc, test_ipv4_gid_is_ipv4_mapped);
	tcase_add_test(tc, test_only_ffff_prefix_is_ipv4);
	tcase_add_test(tc, test_mcast_detection);
	tcase_add_test(tc, test_ipv4_group_mac_drops_the_top_bit_of_the_second_octet);
	tcase_add_test(tc, test_ipv6_group_mac_is_33_33_and_the_last_32_bits);
	tcase_add_test(tc, test_unicast_gid_has_no_group_mac);
	tcase_add_test(tc, test_gid_str_prints_dotted_quad_for_ipv4);
	tcase_add_test(tc, test_flow_label_is_symmetric_20_bits_and_matches_the_kernel);
	tcase_add_test(tc, test_flow_label_to_sport_matches_rdma_core);
	return tc;
}
