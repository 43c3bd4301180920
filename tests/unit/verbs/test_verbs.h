/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef TEST_VERBS_H
#define TEST_VERBS_H

/* One TCase per topic of the 'verbs' suite. */

#include <check.h>

TCase *verbs_tcase_key(void);
TCase *verbs_tcase_mr_reg(void);
TCase *verbs_tcase_mr_access(void);
TCase *verbs_tcase_mw(void);
TCase *verbs_tcase_known_bugs(void);
TCase *verbs_tcase_qp_state(void);
TCase *verbs_tcase_qp_attr(void);
TCase *verbs_tcase_qpn_held(void);
TCase *verbs_tcase_ah_destroy(void);
TCase *verbs_tcase_reclaim(void);
TCase *verbs_tcase_workers(void);

#endif /* TEST_VERBS_H */
