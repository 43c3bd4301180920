/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* The 'verbs' suite: key table, MR/MW rules and checks, modify_qp rules. */

#include <stdlib.h>

#include <check.h>

#include "test_verbs.h"

int
main(void)
{
	Suite *s = suite_create("verbs");
	SRunner *sr;
	int failed;

	suite_add_tcase(s, verbs_tcase_key());
	suite_add_tcase(s, verbs_tcase_mr_reg());
	suite_add_tcase(s, verbs_tcase_mr_access());
	suite_add_tcase(s, verbs_tcase_mw());
	suite_add_tcase(s, verbs_tcase_known_bugs());
	suite_add_tcase(s, verbs_tcase_qp_state());
	suite_add_tcase(s, verbs_tcase_qp_attr());
	suite_add_tcase(s, verbs_tcase_qpn_held());
	suite_add_tcase(s, verbs_tcase_ah_destroy());
	suite_add_tcase(s, verbs_tcase_reclaim());
	suite_add_tcase(s, verbs_tcase_workers());

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
