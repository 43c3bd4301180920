/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* Suite "mcast": the group table. */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_mcast.h"

static void
v4_group(uint8_t gid[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	droce_gid_from_ipv4(gid, rte_cpu_to_be_32((uint32_t)a << 24 | b << 16 | c << 8 | d));
}

START_TEST(test_attach_twice_is_one_member)
{
	struct droce_mcast *m;
	uint8_t g[16];
	void *qps[4];
	int a = 1, b = 2;

	ck_assert_int_eq(droce_mcast_create(8, 4, &m), 0);
	v4_group(g, 239, 1, 2, 3);
	ck_assert_int_eq(droce_mcast_attach(m, g, &a), 1);	/* new group */
	ck_assert_int_eq(droce_mcast_attach(m, g, &a), 0);	/* again: nothing changes */
	ck_assert_int_eq(droce_mcast_attach(m, g, &b), 0);
	ck_assert_uint_eq(droce_mcast_members(m, g, qps, 4), 2);
	ck_assert(qps[0] == &a && qps[1] == &b);
	ck_assert_int_eq(droce_mcast_detach(m, g, &a), 0);
	ck_assert_int_eq(droce_mcast_detach(m, g, &a), -EINVAL);
	ck_assert_int_eq(droce_mcast_detach(m, g, &b), 1);	/* last one: group gone */
	ck_assert_uint_eq(droce_mcast_members(m, g, qps, 4), 0);
	ck_assert_uint_eq(droce_mcast_groups(m), 0);
	droce_mcast_free(m);
}
END_TEST

START_TEST(test_unicast_gid_is_refused)
{
	struct droce_mcast *m;
	uint8_t g[16];
	int a;

	ck_assert_int_eq(droce_mcast_create(8, 4, &m), 0);
	v4_group(g, 10, 0, 0, 1);
	ck_assert_int_eq(droce_mcast_attach(m, g, &a), -EINVAL);
	memset(g, 0, sizeof(g));
	g[0] = 0xfe;			/* fe80:: link-local, not multicast */
	g[1] = 0x80;
	ck_assert_int_eq(droce_mcast_attach(m, g, &a), -EINVAL);
	g[0] = 0xff;			/* ff02:: */
	g[1] = 0x02;
	ck_assert_int_eq(droce_mcast_attach(m, g, &a), 1);
	droce_mcast_free(m);
}
END_TEST

START_TEST(test_limits_are_enforced_and_slots_reused)
{
	struct droce_mcast *m;
	uint8_t g[16];
	int q[3];
	unsigned int round, i;

	ck_assert_int_eq(droce_mcast_create(4, 2, &m), 0);
	for (round = 0; round < 100; round++) {	/* tombstones must not fill the table */
		for (i = 0; i < 4; i++) {
			v4_group(g, 239, 0, (uint8_t)round, (uint8_t)i);
			ck_assert_int_eq(droce_mcast_attach(m, g, &q[0]), 1);
		}
		v4_group(g, 239, 9, 9, 9);
		ck_assert_int_eq(droce_mcast_attach(m, g, &q[0]), -ENOMEM);
		v4_group(g, 239, 0, (uint8_t)round, 0);
		ck_assert_int_eq(droce_mcast_attach(m, g, &q[1]), 0);
		ck_assert_int_eq(droce_mcast_attach(m, g, &q[2]), -ENOMEM);
		for (i = 0; i < 4; i++) {
			v4_group(g, 239, 0, (uint8_t)round, (uint8_t)i);
			droce_mcast_detach(m, g, &q[1]);
			ck_assert_int_eq(droce_mcast_detach(m, g, &q[0]), 1);
		}
		ck_assert_uint_eq(droce_mcast_groups(m), 0);
	}
	droce_mcast_free(m);
}
END_TEST

static unsigned int gone_count;

static void
count_gone(const uint8_t mgid[16], void *arg)
{
	(void)mgid;
	(void)arg;
	gone_count++;
}

START_TEST(test_detach_all_reports_emptied_groups)
{
	struct droce_mcast *m;
	uint8_t g1[16], g2[16];
	int a, b;

	ck_assert_int_eq(droce_mcast_create(8, 4, &m), 0);
	v4_group(g1, 239, 1, 1, 1);
	v4_group(g2, 239, 1, 1, 2);
	droce_mcast_attach(m, g1, &a);
	droce_mcast_attach(m, g2, &a);
	droce_mcast_attach(m, g2, &b);
	gone_count = 0;
	droce_mcast_detach_all(m, &a, count_gone, NULL);
	ck_assert_uint_eq(gone_count, 1);	/* g1 emptied, g2 still has b */
	ck_assert_uint_eq(droce_mcast_groups(m), 1);
	droce_mcast_free(m);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("mcast");
	TCase *tc = tcase_create("groups");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_attach_twice_is_one_member);
	tcase_add_test(tc, test_unicast_gid_is_refused);
	tcase_add_test(tc, test_limits_are_enforced_and_slots_reused);
	tcase_add_test(tc, test_detach_all_reports_emptied_groups);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
