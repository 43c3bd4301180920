/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_cm_bind.h: which rdma_cm ids share a port, and which listener a
 * REQ goes to, against Linux's cma.c (cma_check_port, rdma_listen's
 * re-check, cma_match_private_data), one table each.
 */

#include <string.h>
#include <sys/socket.h>

#include "droce_cm_bind.h"
#include "test_cm.h"

#define V4(a, b, c, d)	{ [10] = 0xff, [11] = 0xff, [12] = a, [13] = b, [14] = c, [15] = d }
#define V6_LL1		{ 0xfe, 0x80, [15] = 1 }

static const struct droce_cm_bind v4_any = { AF_INET, V4(0, 0, 0, 0), true, false };
static const struct droce_cm_bind v4_any_mixed = { AF_INET, V4(0, 0, 0, 0), false, false };
static const struct droce_cm_bind v4_zeronet = { AF_INET, V4(0, 1, 2, 3), true, false };
static const struct droce_cm_bind v4_any_reuse = { AF_INET, V4(0, 0, 0, 0), true, true };
static const struct droce_cm_bind v4_a = { AF_INET, V4(10, 0, 0, 1), true, false };
static const struct droce_cm_bind v4_a_mixed = { AF_INET, V4(10, 0, 0, 1), false, false };
static const struct droce_cm_bind v4_a_reuse = { AF_INET, V4(10, 0, 0, 1), true, true };
static const struct droce_cm_bind v4_b = { AF_INET, V4(10, 0, 0, 2), true, false };
static const struct droce_cm_bind v6_any = { AF_INET6, { 0 }, false, false };
static const struct droce_cm_bind v6_any_afonly = { AF_INET6, { 0 }, true, false };
static const struct droce_cm_bind v6_mapped_a = { AF_INET6, V4(10, 0, 0, 1), false, false };
static const struct droce_cm_bind v6_ll = { AF_INET6, V6_LL1, false, false };
static const struct droce_cm_bind v6_ll_afonly = { AF_INET6, V6_LL1, true, false };

static const struct {
	const char *what;
	const struct droce_cm_bind *id, *cur;
	bool reuse;
	int want;
} bind_cases[] = {
	/* tgt's iSER portals: 0.0.0.0:3260 and [::]:3260, both AFONLY */
	{ "0.0.0.0 beside AFONLY [::]", &v4_any, &v6_any_afonly, true, 0 },
	{ "AFONLY [::] beside 0.0.0.0", &v6_any_afonly, &v4_any, true, 0 },
	{ "0.0.0.0 beside [::] without AFONLY", &v4_any, &v6_any, true, -EADDRNOTAVAIL },
	{ "[::] without AFONLY beside 0.0.0.0", &v6_any, &v4_any, true, -EADDRNOTAVAIL },
	{ "0.0.0.0 with AFONLY off beside AFONLY [::]", &v4_any_mixed, &v6_any_afonly, true,
	  -EADDRNOTAVAIL },
	{ "0.0.0.0 twice", &v4_any, &v4_any, true, -EADDRNOTAVAIL },
	{ "0.1.2.3 (0/8 is a wildcard) beside 10.0.0.1", &v4_zeronet, &v4_a, true,
	  -EADDRNOTAVAIL },
	{ "[::] twice", &v6_any, &v6_any, true, -EADDRNOTAVAIL },
	{ "AFONLY [::] twice", &v6_any_afonly, &v6_any_afonly, true, -EADDRNOTAVAIL },
	{ "10.0.0.1 beside 0.0.0.0", &v4_a, &v4_any, true, -EADDRNOTAVAIL },
	{ "0.0.0.0 beside 10.0.0.1", &v4_any, &v4_a, true, -EADDRNOTAVAIL },
	{ "fe80::1 beside [::]", &v6_ll, &v6_any, true, -EADDRNOTAVAIL },
	{ "AFONLY fe80::1 beside 0.0.0.0", &v6_ll_afonly, &v4_any, true, 0 },
	{ "fe80::1 without AFONLY beside 0.0.0.0", &v6_ll, &v4_any, true, -EADDRNOTAVAIL },
	{ "10.0.0.1 twice", &v4_a, &v4_a, true, -EADDRINUSE },
	{ "fe80::1 twice", &v6_ll, &v6_ll, true, -EADDRINUSE },
	{ "10.0.0.1 beside 10.0.0.2", &v4_a, &v4_b, true, 0 },
	{ "10.0.0.1 beside fe80::1", &v4_a_mixed, &v6_ll, true, 0 },
	{ "10.0.0.1 beside ::ffff:10.0.0.1 (two families)", &v4_a, &v6_mapped_a, true, 0 },
	{ "::ffff:10.0.0.1 beside [::]", &v6_mapped_a, &v6_any, true, -EADDRNOTAVAIL },
	/* REUSEADDR: both must have it; rdma_listen re-checks without it */
	{ "REUSEADDR 10.0.0.1 twice", &v4_a_reuse, &v4_a_reuse, true, 0 },
	{ "REUSEADDR 0.0.0.0 twice", &v4_any_reuse, &v4_any_reuse, true, 0 },
	{ "REUSEADDR 10.0.0.1 beside 0.0.0.0 with REUSEADDR", &v4_a_reuse, &v4_any_reuse, true,
	  0 },
	{ "REUSEADDR 10.0.0.1 beside one without", &v4_a_reuse, &v4_a, true, -EADDRINUSE },
	{ "10.0.0.1 without beside a REUSEADDR one", &v4_a, &v4_a_reuse, true, -EADDRINUSE },
	{ "REUSEADDR 0.0.0.0 beside one without", &v4_any_reuse, &v4_a, true, -EADDRNOTAVAIL },
	{ "listening REUSEADDR 10.0.0.1 beside another", &v4_a_reuse, &v4_a_reuse, false,
	  -EADDRINUSE },
	{ "listening REUSEADDR 0.0.0.0 beside another", &v4_any_reuse, &v4_any_reuse, false,
	  -EADDRNOTAVAIL },
	{ "listening REUSEADDR 10.0.0.1 beside 10.0.0.2", &v4_a_reuse, &v4_b, false, 0 },
};

START_TEST(test_bind_sharing_follows_linux)	/* once per bind_cases[_i] */
{
	int got = droce_cm_bind_check(bind_cases[_i].id, bind_cases[_i].cur, bind_cases[_i].reuse);

	ck_assert_msg(got == bind_cases[_i].want, "%s: %d, want %d", bind_cases[_i].what, got,
		      bind_cases[_i].want);
}
END_TEST

START_TEST(test_afonly_defaults_per_family)
{
	ck_assert(droce_cm_bind_afonly(AF_INET, false, false));
	ck_assert(!droce_cm_bind_afonly(AF_INET6, false, false));
	ck_assert(!droce_cm_bind_afonly(AF_INET, true, false));
	ck_assert(droce_cm_bind_afonly(AF_INET6, true, true));
	ck_assert(droce_cm_bind_is_any(&v4_any));
	ck_assert(droce_cm_bind_is_any(&v4_zeronet));
	ck_assert(droce_cm_bind_is_any(&v6_any));
	ck_assert(!droce_cm_bind_is_any(&v4_a));
	ck_assert(!droce_cm_bind_is_any(&v6_mapped_a));
}
END_TEST

static const struct droce_cm_ip_info req4_a = { .ip_version = 4, .dst = V4(10, 0, 0, 1) };
static const struct droce_cm_ip_info req4_b = { .ip_version = 4, .dst = V4(10, 0, 0, 2) };
static const struct droce_cm_ip_info req6_ll = { .ip_version = 6, .dst = V6_LL1 };
/* an AF_INET6 id connecting to ::ffff:10.0.0.1 says version 6 */
static const struct droce_cm_ip_info req6_mapped = { .ip_version = 6, .dst = V4(10, 0, 0, 1) };

static const struct {
	const char *what;
	const struct droce_cm_bind *l;
	const struct droce_cm_ip_info *req;
	bool want;
} take_cases[] = {
	{ "0.0.0.0 takes IPv4", &v4_any, &req4_a, true },
	{ "0.0.0.0 refuses IPv6", &v4_any, &req6_ll, false },
	{ "0.0.0.0 refuses IPv6 to a mapped address", &v4_any, &req6_mapped, false },
	{ "0.0.0.0 with AFONLY off takes IPv6 too", &v4_any_mixed, &req6_ll, true },
	{ "AFONLY [::] refuses IPv4", &v6_any_afonly, &req4_a, false },
	{ "AFONLY [::] takes IPv6", &v6_any_afonly, &req6_ll, true },
	{ "AFONLY [::] takes IPv6 to a mapped address", &v6_any_afonly, &req6_mapped, true },
	{ "[::] takes IPv4", &v6_any, &req4_a, true },
	{ "[::] takes IPv6", &v6_any, &req6_ll, true },
	{ "10.0.0.1 takes IPv4 to it", &v4_a, &req4_a, true },
	{ "10.0.0.1 refuses IPv4 to 10.0.0.2", &v4_a, &req4_b, false },
	{ "10.0.0.1 refuses IPv6 to ::ffff:10.0.0.1", &v4_a, &req6_mapped, false },
	{ "10.0.0.1 with AFONLY off refuses IPv6 to ::ffff:10.0.0.1", &v4_a_mixed, &req6_mapped,
	  false },
	{ "::ffff:10.0.0.1 takes IPv6 to it", &v6_mapped_a, &req6_mapped, true },
	{ "::ffff:10.0.0.1 refuses IPv4 to 10.0.0.1", &v6_mapped_a, &req4_a, false },
	{ "fe80::1 takes IPv6 to it", &v6_ll, &req6_ll, true },
	{ "fe80::1 refuses IPv6 to another", &v6_ll, &req6_mapped, false },
};

START_TEST(test_listener_takes_by_family_and_address)	/* once per take_cases[_i] */
{
	bool got = droce_cm_bind_takes(take_cases[_i].l, take_cases[_i].req);

	ck_assert_msg(got == take_cases[_i].want, "%s: %d", take_cases[_i].what, got);
}
END_TEST

/*
 * Every pair of ids that may share a port by the table above never both
 * take one REQ, unless both are REUSEADDR (which rdma_listen forbids
 * among listeners): the listener a REQ goes to never depends on order.
 */
START_TEST(test_listeners_sharing_a_port_never_overlap)
{
	static const struct droce_cm_bind *const all[] = {
		&v4_any, &v4_any_mixed, &v4_zeronet, &v4_a, &v4_a_mixed, &v4_b, &v6_any,
		&v6_any_afonly, &v6_mapped_a, &v6_ll, &v6_ll_afonly,
	};
	static const struct droce_cm_ip_info *const reqs[] = {
		&req4_a, &req4_b, &req6_ll, &req6_mapped,
	};
	unsigned int i, j, k;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		for (j = 0; j < sizeof(all) / sizeof(all[0]); j++) {
			if (i == j || droce_cm_bind_check(all[i], all[j], false) != 0)
				continue;
			for (k = 0; k < sizeof(reqs) / sizeof(reqs[0]); k++)
				ck_assert_msg(!(droce_cm_bind_takes(all[i], reqs[k]) &&
						droce_cm_bind_takes(all[j], reqs[k])),
					      "ids %u and %u share a port and REQ %u", i, j, k);
		}
}
END_TEST

TCase *
test_cm_bind_tcase(void)
{
	TCase *tc = tcase_create("bind");

	tcase_add_loop_test(tc, test_bind_sharing_follows_linux, 0,
			    (int)(sizeof(bind_cases) / sizeof(bind_cases[0])));
	tcase_add_test(tc, test_afonly_defaults_per_family);
	tcase_add_loop_test(tc, test_listener_takes_by_family_and_address, 0,
			    (int)(sizeof(take_cases) / sizeof(take_cases[0])));
	tcase_add_test(tc, test_listeners_sharing_a_port_never_overlap);
	return tc;
}
