/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
/* Placeholder filled below. */
#include "test_transport.h"
TCase *
tcase_transport_errors(void)
{
	return tcase_create("errors");
}
