/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* Suite "transport": the RC, UC and UD state machines over a simulated link. */

#include <stdlib.h>

#include "test_transport.h"

int
main(void)
{
	Suite *s = suite_create("transport");
	SRunner *sr;
	int failed;

	suite_add_tcase(s, tcase_transport_ops());
	suite_add_tcase(s, tcase_transport_errors());
	suite_add_tcase(s, tcase_transport_reliability());
	suite_add_tcase(s, tcase_transport_odp());
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
