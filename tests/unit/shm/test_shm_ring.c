/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Ring headers: droce_shm_ring_init() and droce_shm_ring_check() agree,
 * init refuses what check would refuse (and writes nothing then), check
 * refuses every kind of bad header, and the engine's view keeps its own
 * geometry when the client scribbles on the header.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test_shm.h"

/* The smallest slot of each kind, and its struct. */
static const struct {
	enum droce_shm_kind kind;
	uint32_t slot;
	size_t entry;
} kinds[] = {
	{ DROCE_SHM_SQ, 512, sizeof(struct droce_shm_swqe) },
	{ DROCE_SHM_RQ, 256, sizeof(struct droce_shm_rwqe) },
	{ DROCE_SHM_CQ, 64, sizeof(struct droce_shm_cqe) },
	{ DROCE_SHM_DB, 8, sizeof(struct droce_shm_db) },
};

static bool
all_bytes(const void *p, size_t len, uint8_t v)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != v)
			return false;
	return true;
}

START_TEST(test_ring_bytes_is_header_plus_slots)
{
	ck_assert_uint_eq(sizeof(struct droce_shm_ring), 384);
	ck_assert_uint_eq(droce_shm_ring_bytes(1, 8), 392);
	ck_assert_uint_eq(droce_shm_ring_bytes(4096, 512), 384 + 2097152);
	/* the largest legal ring does not overflow 64 bits */
	ck_assert_uint_eq(droce_shm_ring_bytes(1u << 24, 1u << 16), 384 + (1ull << 40));
}
END_TEST

START_TEST(test_ring_init_then_check_accepts_each_kind)	/* once per kind _i */
{
	uint32_t nslots = 16;
	uint64_t len = droce_shm_ring_bytes(nslots, kinds[_i].slot);
	struct droce_shm_ring *r = ts_ring_new(kinds[_i].kind, nslots, kinds[_i].slot);

	ck_assert_uint_le(kinds[_i].entry, kinds[_i].slot);
	ck_assert_uint_eq(r->magic, DROCE_SHM_MAGIC);
	ck_assert_uint_eq(r->abi_version, DROCE_SHM_ABI_VERSION);
	ck_assert_uint_eq(r->kind, kinds[_i].kind);
	ck_assert_uint_eq(r->handle, 7);
	ck_assert_uint_eq(droce_shm_nslots(r), nslots);
	ck_assert_uint_eq(1u << r->log2_slot_size, kinds[_i].slot);
	ck_assert_uint_eq(atomic_load(&r->prod), 0);
	ck_assert_uint_eq(atomic_load(&r->cons), 0);
	ck_assert_uint_eq(atomic_load(&r->flag), 0);
	ck_assert_uint_eq(atomic_load(&r->reserve), 0);
	ck_assert_uint_eq(atomic_load(&r->error), 0);
	/* ts_ring_new() filled the memory with 0xa5: init zeroed the slots */
	ck_assert(all_bytes(r->slots, (size_t)nslots * kinds[_i].slot, 0));
	/* slot i sits at i * slot_size, and indices wrap at nslots */
	ck_assert_ptr_eq(droce_shm_slot(r, 3), r->slots + 3 * kinds[_i].slot);
	ck_assert_ptr_eq(droce_shm_slot(r, nslots + 3), droce_shm_slot(r, 3));
	ck_assert_ptr_eq(droce_shm_slot(r, UINT32_MAX), droce_shm_slot(r, nslots - 1));

	ck_assert_int_eq(droce_shm_ring_check(r, kinds[_i].kind, len), 0);
	ck_assert_int_eq(droce_shm_ring_check(r, kinds[_i].kind, len + 4096), 0);
	free(r);
}
END_TEST

START_TEST(test_ring_init_accepts_the_range_limits)
{
	static uint8_t one[384 + 8] __attribute__((aligned(64)));
	struct droce_shm_ring *r = (struct droce_shm_ring *)one;
	struct droce_shm_ring hdr_only;	/* geometry of the largest ring, never touched */

	ck_assert_int_eq(droce_shm_ring_init(r, DROCE_SHM_DB, 1, 1, 8), 0);
	ck_assert_int_eq(droce_shm_ring_check(r, DROCE_SHM_DB, sizeof(one)), 0);
	ck_assert_uint_eq(droce_shm_nslots(r), 1);

	/* the largest geometry check accepts, on a header alone */
	memcpy(&hdr_only, r, sizeof(hdr_only));
	hdr_only.log2_nslots = DROCE_SHM_MAX_LOG2_NSLOTS;
	hdr_only.log2_slot_size = DROCE_SHM_MAX_LOG2_SLOT_SIZE;
	ck_assert_int_eq(droce_shm_ring_check(&hdr_only, DROCE_SHM_DB,
					      droce_shm_ring_bytes(1u << 24, 1u << 16)), 0);
}
END_TEST

START_TEST(test_ring_init_refuses_bad_geometry_and_writes_nothing)
{
	static const struct {
		uint32_t kind, nslots, slot;
	} bad[] = {
		{ DROCE_SHM_CQ, 0, 64 },		/* no slots */
		{ DROCE_SHM_CQ, 3, 64 },		/* not a power of two */
		{ DROCE_SHM_CQ, 1u << 25, 64 },		/* too many */
		{ DROCE_SHM_CQ, 0x80000000u, 64 },
		{ DROCE_SHM_CQ, 16, 0 },
		{ DROCE_SHM_CQ, 16, 48 },		/* not a power of two */
		{ DROCE_SHM_CQ, 16, 32 },		/* smaller than a CQE */
		{ DROCE_SHM_SQ, 16, 256 },		/* smaller than a send WQE */
		{ DROCE_SHM_RQ, 16, 128 },
		{ DROCE_SHM_DB, 16, 4 },
		{ DROCE_SHM_DB, 16, 1u << 17 },		/* too large */
		{ 0, 16, 64 },				/* no such kind */
		{ 5, 16, 64 },
	};
	static uint8_t mem[4096] __attribute__((aligned(64)));
	unsigned int i;

	for (i = 0; i < DROCE_DIM(bad); i++) {
		memset(mem, 0xa5, sizeof(mem));
		ck_assert_msg(droce_shm_ring_init((struct droce_shm_ring *)mem, bad[i].kind, 1,
						  bad[i].nslots, bad[i].slot) == -EINVAL,
			      "case %u accepted", i);
		ck_assert_msg(all_bytes(mem, sizeof(mem), 0xa5), "case %u wrote", i);
	}
}
END_TEST

START_TEST(test_ring_check_refuses_each_bad_header)
{
	const uint32_t nslots = 8, slot = 64;
	const uint64_t len = droce_shm_ring_bytes(nslots, slot);
	struct droce_shm_ring *good = ts_ring_new(DROCE_SHM_CQ, nslots, slot);
	struct droce_shm_ring *r = ts_ring_new(DROCE_SHM_CQ, nslots, slot);

#define BAD(edit, map_len) do {						\
		memcpy(r, good, (size_t)len);				\
		edit;							\
		ck_assert_msg(droce_shm_ring_check(r, DROCE_SHM_CQ, (map_len)) == -EPROTO, \
			      "accepted: %s", #edit);			\
	} while (0)

	BAD((void)0, len - 1);				/* slots run past the mapping */
	BAD((void)0, sizeof(struct droce_shm_ring) - 1);	/* not even a header */
	BAD((void)0, 0);
	BAD(r->magic = DROCE_SHM_MAGIC ^ 1, len);
	BAD(r->magic = 0, len);
	BAD(r->abi_version = DROCE_SHM_ABI_VERSION + 1, len);
	BAD(r->abi_version = 0, len);
	BAD(r->kind = DROCE_SHM_RQ, len);		/* another kind */
	BAD(r->kind = 0, len);				/* no kind at all */
	BAD(r->kind = 0x10003, len);
	BAD(r->log2_nslots = DROCE_SHM_MAX_LOG2_NSLOTS + 1, UINT64_MAX);
	BAD(r->log2_nslots = 255, UINT64_MAX);
	BAD(r->log2_nslots = 4, len);			/* 16 slots in room for 8 */
	BAD(r->log2_slot_size = 5, len);		/* smaller than a CQE */
	BAD(r->log2_slot_size = 0, len);
	BAD(r->log2_slot_size = DROCE_SHM_MAX_LOG2_SLOT_SIZE + 1, UINT64_MAX);
	BAD(r->log2_slot_size = 64, UINT64_MAX);	/* would overflow a shift */
	BAD(r->log2_slot_size = 7, len);		/* 128-byte slots in room for 64 */
#undef BAD

	/* the expected kind must be one */
	ck_assert_int_eq(droce_shm_ring_check(good, 0, len), -EINVAL);
	ck_assert_int_eq(droce_shm_ring_check(good, (enum droce_shm_kind)5, len), -EINVAL);
	/* and the unedited copy still passes */
	ck_assert_int_eq(droce_shm_ring_check(good, DROCE_SHM_CQ, len), 0);
	free(r);
	free(good);
}
END_TEST

START_TEST(test_ring_check_of_larger_slots_than_minimum)
{
	/* a CQ may use slots larger than a CQE: check must accept what init made */
	struct droce_shm_ring *r = ts_ring_new(DROCE_SHM_CQ, 4, 256);

	ck_assert_int_eq(droce_shm_ring_check(r, DROCE_SHM_CQ, droce_shm_ring_bytes(4, 256)), 0);
	ck_assert_int_eq(droce_shm_ring_check(r, DROCE_SHM_CQ, droce_shm_ring_bytes(4, 64)),
			 -EPROTO);
	free(r);
}
END_TEST

START_TEST(test_view_copies_geometry_and_ignores_later_header_edits)
{
	struct droce_shm_ring *r = ts_ring_new(DROCE_SHM_SQ, 4, 512);
	struct droce_shm_view v;

	ck_assert_int_eq(droce_shm_view_init(&v, r), 0);
	ck_assert_ptr_eq(v.r, r);
	ck_assert_uint_eq(v.idx, 0);
	ck_assert_uint_eq(v.nslots, 4);
	ck_assert_uint_eq(v.log2_slot_size, 9);
	ck_assert_ptr_eq(droce_shm_view_slot(&v, 5), r->slots + 512);

	/* a hostile client rewrites the geometry: the view does not move */
	r->log2_nslots = 24;
	r->log2_slot_size = 16;
	ck_assert_ptr_eq(droce_shm_view_slot(&v, 5), r->slots + 512);
	ck_assert_ptr_eq(droce_shm_view_slot(&v, UINT32_MAX), r->slots + 3 * 512);
	free(r);
}
END_TEST

START_TEST(test_view_init_refuses_a_bad_header)
{
	struct droce_shm_ring *r = ts_ring_new(DROCE_SHM_RQ, 4, 256);
	struct droce_shm_view v;

	r->magic = 0;
	ck_assert_int_eq(droce_shm_view_init(&v, r), -EPROTO);
	r->magic = DROCE_SHM_MAGIC;
	r->kind = 77;
	ck_assert_int_eq(droce_shm_view_init(&v, r), -EPROTO);
	r->kind = DROCE_SHM_RQ;
	r->log2_slot_size = 40;
	ck_assert_int_eq(droce_shm_view_init(&v, r), -EPROTO);
	free(r);
}
END_TEST

START_TEST(test_spsc_helpers_move_the_indices)
{
	struct droce_shm_ring *r = ts_ring_new(DROCE_SHM_CQ, 4, 64);

	droce_shm_publish(r, 3);
	ck_assert_uint_eq(droce_shm_load_prod(r), 3);
	droce_shm_release(r, 2);
	ck_assert_uint_eq(droce_shm_load_cons(r), 2);
	free(r);
}
END_TEST

TCase *
test_shm_ring_tcase(void)
{
	TCase *tc = tcase_create("ring");

	tcase_add_test(tc, test_ring_bytes_is_header_plus_slots);
	tcase_add_loop_test(tc, test_ring_init_then_check_accepts_each_kind, 0,
			    (int)DROCE_DIM(kinds));
	tcase_add_test(tc, test_ring_init_accepts_the_range_limits);
	tcase_add_test(tc, test_ring_init_refuses_bad_geometry_and_writes_nothing);
	tcase_add_test(tc, test_ring_check_refuses_each_bad_header);
	tcase_add_test(tc, test_ring_check_of_larger_slots_than_minimum);
	tcase_add_test(tc, test_view_copies_geometry_and_ignores_later_header_edits);
	tcase_add_test(tc, test_view_init_refuses_a_bad_header);
	tcase_add_test(tc, test_spsc_helpers_move_the_indices);
	return tc;
}
