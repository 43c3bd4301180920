/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Unit tests for lib/wire: one Suite, one TCase per topic. No EAL: the
 * codec is pure functions over flat buffers. Check forks each test (set
 * CK_FORK=no to run under gdb); the exit status is non-zero if any failed.
 */

#include <stdlib.h>

#include "test_wire.h"

static Suite *
wire_suite(void)
{
	Suite *s = suite_create("wire");

	suite_add_tcase(s, test_wire_hdr_tcase());
	suite_add_tcase(s, test_wire_opcode_tcase());
	suite_add_tcase(s, test_wire_icrc_tcase());
	suite_add_tcase(s, test_wire_parse_tcase());
	suite_add_tcase(s, test_wire_psn_tcase());
	suite_add_tcase(s, test_wire_gid_tcase());
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(wire_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
