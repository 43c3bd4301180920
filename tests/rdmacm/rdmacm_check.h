/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_RDMACM_CHECK_H
#define DROCE_TEST_RDMACM_CHECK_H

/*
 * One "ok   ..." or "FAIL ..." line per check, as rdmacm.sh counts them;
 * a program exits non-zero when check_failures is not 0.
 */

#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok   ");					\
	} else {							\
		printf("FAIL ");					\
		check_failures++;					\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
} while (0)

#endif /* DROCE_TEST_RDMACM_CHECK_H */
