/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef TEST_SHM_H
#define TEST_SHM_H

/*
 * Shared by the lib/shm unit tests: one TCase constructor per topic file
 * and a few helpers. The rings live in ordinary heap memory here; the ABI
 * does not care whether a memfd backs it.
 */

#include <check.h>
#include <stdint.h>

#include "droce_core.h"
#include "droce_shm.h"

TCase *test_shm_ring_tcase(void);
TCase *test_shm_spsc_tcase(void);
TCase *test_shm_doorbell_tcase(void);
TCase *test_shm_cq_tcase(void);
TCase *test_shm_ops_tcase(void);

/*
 * Sanitizers slow the threaded tests down by 5-20x (TSan most): they do
 * a quarter of the work there, which still wraps the rings many times.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TS_SLOW_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define TS_SLOW_BUILD 1
#endif
#endif
#ifdef TS_SLOW_BUILD
#define TS_SCALE(n) ((n) / 4)
#else
#define TS_SCALE(n) (n)
#endif

/** A ring of exactly droce_shm_ring_bytes() bytes (so ASan sees any overrun), initialised. */
struct droce_shm_ring *ts_ring_new(enum droce_shm_kind kind, uint32_t nslots,
				   uint32_t slot_size);

/**
 * Move a fresh DB ring's indices to @p start, as if every index before it
 * had been produced and consumed: reserve, cons and each slot's seq hold
 * what a ring that got there honestly would hold.
 */
void ts_db_ring_start_at(struct droce_shm_ring *db, uint32_t start);

#endif /* TEST_SHM_H */
