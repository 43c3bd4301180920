/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Unit tests for lib/cm: one Suite, one TCase per topic. No EAL and no
 * network: the codec is pure functions, the state machines run between two
 * instances over a simulated link (cm_sim.c) in virtual time. Check forks
 * each test (CK_FORK=no to run under gdb); the exit status is non-zero if
 * any failed.
 */

#include <stdlib.h>

#include "test_cm.h"

static Suite *
cm_suite(void)
{
	Suite *s = suite_create("cm");

	suite_add_tcase(s, test_cm_mad_tcase());
	suite_add_tcase(s, test_cm_ip_tcase());
	suite_add_tcase(s, test_cm_bind_tcase());
	suite_add_tcase(s, test_cm_conn_tcase());
	suite_add_tcase(s, test_cm_lossy_tcase());
	suite_add_tcase(s, test_cm_sidr_tcase());
	suite_add_tcase(s, test_cm_robust_tcase());
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(cm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
