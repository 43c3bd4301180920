/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Unit tests for lib/shm: one Suite, one TCase per topic (ring headers,
 * SPSC rings across threads, the doorbell ring, CQ arming, the operations
 * each QP type may post). libc and pthreads only.
 * Check forks each test (set CK_FORK=no to run under gdb); the exit status
 * is non-zero if any failed.
 */

#include <stdlib.h>
#include <string.h>

#include "test_shm.h"

struct droce_shm_ring *
ts_ring_new(enum droce_shm_kind kind, uint32_t nslots, uint32_t slot_size)
{
	size_t len = (size_t)droce_shm_ring_bytes(nslots, slot_size);
	void *p = NULL;
	struct droce_shm_ring *r;

	/* posix_memalign(), not aligned_alloc(): a DB ring's size need not be
	 * a multiple of the alignment, and the block must be exact for ASan */
	ck_assert_int_eq(posix_memalign(&p, DROCE_SHM_CACHE_LINE, len), 0);
	r = p;
	memset(r, 0xa5, len);
	ck_assert_int_eq(droce_shm_ring_init(r, kind, 7, nslots, slot_size), 0);
	return r;
}

void
ts_db_ring_start_at(struct droce_shm_ring *db, uint32_t start)
{
	uint32_t n = droce_shm_nslots(db), k;

	for (k = 0; k < n; k++) {
		uint32_t prev = start + k - n;	/* the last index this slot held */
		struct droce_shm_db *s = droce_shm_slot(db, prev);

		atomic_store(&s->seq, prev + 1);
		s->handle = 0xdeadbeef;
	}
	atomic_store(&db->reserve, start);
	atomic_store(&db->cons, start);
	atomic_store(&db->prod, start);
}

static Suite *
shm_suite(void)
{
	Suite *s = suite_create("shm");

	suite_add_tcase(s, test_shm_ring_tcase());
	suite_add_tcase(s, test_shm_spsc_tcase());
	suite_add_tcase(s, test_shm_doorbell_tcase());
	suite_add_tcase(s, test_shm_cq_tcase());
	suite_add_tcase(s, test_shm_ops_tcase());
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(shm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
