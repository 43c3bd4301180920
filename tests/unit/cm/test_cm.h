/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_CM_H
#define DROCE_TEST_CM_H

#include <check.h>
#include <errno.h>

TCase *test_cm_mad_tcase(void);
TCase *test_cm_ip_tcase(void);
TCase *test_cm_bind_tcase(void);
TCase *test_cm_conn_tcase(void);
TCase *test_cm_lossy_tcase(void);
TCase *test_cm_sidr_tcase(void);
TCase *test_cm_robust_tcase(void);

#endif /* DROCE_TEST_CM_H */
