/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* TCase "key": the key table on its own (droce_verbs_key.h). */

#include "droce_verbs_key.h"	/* first: the header stands alone */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <check.h>

#include "droce_config.h"
#include "test_verbs.h"

#define SEED 0x1234abcdull

static struct droce_key_table *
table(uint32_t max_mr, uint32_t max_mw, uint64_t seed)
{
	struct droce_key_table *t = NULL;

	ck_assert_int_eq(droce_key_table_create(max_mr, max_mw, seed, &t), 0);
	ck_assert_ptr_nonnull(t);
	return t;
}

START_TEST(test_key_layout_is_index_above_key_byte)
{
	uint32_t k = droce_key_make(0x123456, 0x9a);

	ck_assert_uint_eq(k, 0x1234569a);
	ck_assert_uint_eq(droce_key_index(k), 0x123456);
	ck_assert_uint_eq(droce_key_byte(k), 0x9a);
	/* 24-bit boundary: the index cannot spill out of the key */
	ck_assert_uint_eq(droce_key_make(0x1ffffff, 0xff), 0xffffffff);
	ck_assert_uint_eq(droce_key_index(0xffffffff), DROCE_KEY_INDEX_MAX);
}
END_TEST

START_TEST(test_key_table_create_rejects_empty_or_oversized)
{
	struct droce_key_table *t = NULL;

	ck_assert_int_eq(droce_key_table_create(0, 0, SEED, &t), -EINVAL);
	ck_assert_int_eq(droce_key_table_create(DROCE_KEY_INDEX_MAX, 1, SEED, &t), -EINVAL);
	ck_assert_int_eq(droce_key_table_create(UINT32_MAX, UINT32_MAX, SEED, &t), -EINVAL);
	ck_assert_ptr_null(t);
	t = table(DROCE_MAX_MR, DROCE_MAX_MW, 0);
	ck_assert_uint_eq(droce_key_table_capacity(t), DROCE_MAX_MR + DROCE_MAX_MW);
	droce_key_table_destroy(t);
	droce_key_table_destroy(NULL);
}
END_TEST

START_TEST(test_key_alloc_hands_out_every_index_but_0_once)
{
	enum { N = 64 };
	struct droce_key_table *t = table(N / 2, N / 2, SEED);
	bool seen[N + 1] = { false };
	int obj, i;
	uint32_t k;

	for (i = 0; i < N; i++) {
		enum droce_key_kind kind = i % 2 ? DROCE_KEY_MW : DROCE_KEY_MR;

		ck_assert_int_eq(droce_key_alloc(t, kind, &obj, &k), 0);
		ck_assert_uint_ne(k, 0);
		ck_assert_uint_ge(droce_key_index(k), 1);
		ck_assert_uint_le(droce_key_index(k), N);
		ck_assert(!seen[droce_key_index(k)]);
		seen[droce_key_index(k)] = true;
	}
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k), -ENOMEM);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MW, &obj, &k), -ENOMEM);
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_limits_are_per_kind)
{
	struct droce_key_table *t = table(2, 1, SEED);
	int obj;
	uint32_t k[4];

	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k[0]), 0);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k[1]), 0);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k[2]), -ENOMEM);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MW, &obj, &k[2]), 0);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MW, &obj, &k[3]), -ENOMEM);
	ck_assert_uint_eq(droce_key_table_count(t, DROCE_KEY_MR), 2);
	ck_assert_uint_eq(droce_key_table_count(t, DROCE_KEY_MW), 1);
	ck_assert_int_eq(droce_key_free(t, k[0]), 0);
	ck_assert_uint_eq(droce_key_table_count(t, DROCE_KEY_MR), 1);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k[0]), 0);
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_alloc_rejects_bad_kind_or_null_object)
{
	struct droce_key_table *t = table(4, 4, SEED);
	int obj;
	uint32_t k = 0;

	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_NONE, &obj, &k), -EINVAL);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_KIND_COUNT, &obj, &k), -EINVAL);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, NULL, &k), -EINVAL);
	ck_assert_uint_eq(droce_key_table_count(t, DROCE_KEY_MR), 0);
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_reserved_key_resolves_only_once_published)
{
	struct droce_key_table *t = table(4, 4, SEED);
	enum droce_key_kind kind = DROCE_KEY_NONE;
	int obj;
	uint32_t k;

	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MW, &obj, &k), 0);
	ck_assert_ptr_null(droce_key_lookup(t, k, &kind));
	ck_assert(!droce_key_valid(t, k));
	ck_assert_ptr_eq(droce_key_owner(t, k, DROCE_KEY_MW), &obj);
	ck_assert_int_eq(droce_key_publish(t, k), 0);
	ck_assert_ptr_eq(droce_key_lookup(t, k, &kind), &obj);
	ck_assert_int_eq(kind, DROCE_KEY_MW);
	ck_assert(droce_key_valid(t, k));
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_lookup_needs_index_byte_and_kind_to_match)
{
	struct droce_key_table *t = table(4, 4, SEED);
	int a, b;
	uint32_t ka, kb;

	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &a, &ka), 0);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &b, &kb), 0);
	ck_assert_int_eq(droce_key_publish(t, ka), 0);
	ck_assert_int_eq(droce_key_publish(t, kb), 0);
	ck_assert_ptr_eq(droce_key_lookup(t, ka, NULL), &a);
	ck_assert_ptr_eq(droce_key_lookup(t, kb, NULL), &b);
	/* right index, every wrong byte */
	for (unsigned int byte = 0; byte < 256; byte++) {
		uint32_t k = droce_key_make(droce_key_index(ka), (uint8_t)byte);

		if (k != ka)
			ck_assert_ptr_null(droce_key_lookup(t, k, NULL));
	}
	/* right byte, wrong index */
	ck_assert_ptr_null(droce_key_lookup(t, droce_key_make(droce_key_index(kb) + 1,
							    droce_key_byte(kb)), NULL));
	ck_assert_ptr_null(droce_key_lookup(t, 0, NULL));
	ck_assert_ptr_null(droce_key_lookup(t, droce_key_make(0, droce_key_byte(ka)), NULL));
	ck_assert_ptr_null(droce_key_lookup(t, droce_key_make(9, 0), NULL));
	ck_assert_ptr_null(droce_key_lookup(t, 0xffffffff, NULL));
	/* the owner lookup is kind-checked */
	ck_assert_ptr_null(droce_key_owner(t, ka, DROCE_KEY_MW));
	ck_assert_ptr_null(droce_key_owner(t, ka, DROCE_KEY_NONE));
	ck_assert_int_eq(droce_key_kind_at(t, ka), DROCE_KEY_MR);
	ck_assert_int_eq(droce_key_kind_at(t, 0xffffffff), DROCE_KEY_NONE);
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_unpublish_stops_resolution_and_republish_changes_byte)
{
	struct droce_key_table *t = table(4, 4, SEED);
	int obj;
	uint32_t k, k2;

	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MW, &obj, &k), 0);
	ck_assert_int_eq(droce_key_publish(t, k), 0);
	ck_assert_int_eq(droce_key_unpublish(t, k), 0);
	ck_assert_ptr_null(droce_key_lookup(t, k, NULL));
	ck_assert(!droce_key_valid(t, k));
	ck_assert_uint_eq(droce_key_table_count(t, DROCE_KEY_MW), 1);

	k2 = droce_key_make(droce_key_index(k), (uint8_t)(droce_key_byte(k) + 1));
	ck_assert_int_eq(droce_key_publish(t, k2), 0);
	ck_assert_ptr_eq(droce_key_lookup(t, k2, NULL), &obj);
	ck_assert_ptr_null(droce_key_lookup(t, k, NULL));
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_operations_on_a_free_index_fail)
{
	struct droce_key_table *t = table(4, 4, SEED);
	int obj;
	uint32_t k;

	ck_assert_int_eq(droce_key_publish(t, droce_key_make(1, 0)), -EINVAL);
	ck_assert_int_eq(droce_key_unpublish(t, droce_key_make(1, 0)), -EINVAL);
	ck_assert_int_eq(droce_key_free(t, droce_key_make(1, 0)), -EINVAL);
	ck_assert_int_eq(droce_key_free(t, 0), -EINVAL);
	ck_assert_int_eq(droce_key_free(t, 0xffffffff), -EINVAL);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k), 0);
	ck_assert_int_eq(droce_key_publish(t, k), 0);
	ck_assert_int_eq(droce_key_free(t, k), 0);
	ck_assert_ptr_null(droce_key_lookup(t, k, NULL));
	ck_assert_ptr_null(droce_key_owner(t, k, DROCE_KEY_MR));
	ck_assert_int_eq(droce_key_free(t, k), -EINVAL);
	ck_assert_int_eq(droce_key_publish(t, k), -EINVAL);
	ck_assert_uint_eq(droce_key_table_count(t, DROCE_KEY_MR), 0);
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_freed_index_returns_only_after_all_other_free_ones)
{
	enum { N = 8 };
	struct droce_key_table *t = table(N, 0, SEED);
	uint32_t k[N], again;
	int obj, i;

	for (i = 0; i < N / 2; i++)
		ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k[i]), 0);
	/* Free index of k[0]: the N/2 never-used indices come first. */
	ck_assert_int_eq(droce_key_free(t, k[0]), 0);
	for (i = N / 2; i < N; i++) {
		ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k[i]), 0);
		ck_assert_uint_ne(droce_key_index(k[i]), droce_key_index(k[0]));
	}
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &again), 0);
	ck_assert_uint_eq(droce_key_index(again), droce_key_index(k[0]));

	/* All in use: indices come back in the order they were freed. */
	ck_assert_int_eq(droce_key_free(t, k[3]), 0);
	ck_assert_int_eq(droce_key_free(t, k[1]), 0);
	ck_assert_int_eq(droce_key_free(t, k[6]), 0);
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &again), 0);
	ck_assert_uint_eq(droce_key_index(again), droce_key_index(k[3]));
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &again), 0);
	ck_assert_uint_eq(droce_key_index(again), droce_key_index(k[1]));
	ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &again), 0);
	ck_assert_uint_eq(droce_key_index(again), droce_key_index(k[6]));
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_byte_changes_on_every_reuse_and_looks_random)
{
	struct droce_key_table *t = table(1, 0, SEED);
	bool seen[256] = { false };
	unsigned int distinct = 0;
	uint32_t k, prev = 0;
	int obj, i;

	for (i = 0; i < 4096; i++) {
		ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k), 0);
		ck_assert_uint_eq(droce_key_index(k), 1);	/* one index, reused */
		if (i > 0)
			ck_assert_uint_ne(droce_key_byte(k), droce_key_byte(prev));
		if (!seen[droce_key_byte(k)]) {
			seen[droce_key_byte(k)] = true;
			distinct++;
		}
		prev = k;
		ck_assert_int_eq(droce_key_free(t, k), 0);
	}
	/* 4096 draws from 255 choices each miss a given byte with p < 1e-7 */
	ck_assert_uint_eq(distinct, 256);
	droce_key_table_destroy(t);
}
END_TEST

START_TEST(test_key_byte_differs_from_a_consumer_byte_published_last)
{
	struct droce_key_table *t = table(1, 0, SEED);
	int obj, i;
	uint32_t k;

	for (i = 0; i < 512; i++) {
		uint8_t chosen = (uint8_t)i;

		ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k), 0);
		ck_assert_int_eq(droce_key_publish(t, droce_key_make(1, chosen)), 0);
		ck_assert_int_eq(droce_key_free(t, k), 0);
		ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &k), 0);
		ck_assert_uint_ne(droce_key_byte(k), chosen);
		ck_assert_int_eq(droce_key_free(t, k), 0);
	}
	droce_key_table_destroy(t);
}
END_TEST

static void
key_sequence(struct droce_key_table *t, uint32_t *out, int n)
{
	int obj, i;

	for (i = 0; i < n; i++) {
		ck_assert_int_eq(droce_key_alloc(t, DROCE_KEY_MR, &obj, &out[i]), 0);
		ck_assert_int_eq(droce_key_free(t, out[i]), 0);
	}
}

START_TEST(test_key_seed_makes_keys_repeatable_and_seeds_differ)
{
	enum { N = 64 };
	struct droce_key_table *a = table(4, 0, SEED), *b = table(4, 0, SEED);
	struct droce_key_table *c = table(4, 0, SEED + 1);
	uint32_t ka[N], kb[N], kc[N];

	key_sequence(a, ka, N);
	key_sequence(b, kb, N);
	key_sequence(c, kc, N);
	ck_assert_mem_eq(ka, kb, sizeof(ka));
	ck_assert(memcmp(ka, kc, sizeof(ka)) != 0);

	droce_key_table_destroy(a);
	droce_key_table_destroy(b);
	droce_key_table_destroy(c);

	/* Reseeding a fresh table makes it follow the new seed. */
	a = table(4, 0, SEED);
	b = table(4, 0, SEED + 7);
	droce_key_table_seed(b, SEED);
	key_sequence(a, ka, N);
	key_sequence(b, kb, N);
	ck_assert_mem_eq(ka, kb, sizeof(ka));
	droce_key_table_destroy(a);
	droce_key_table_destroy(b);
}
END_TEST

START_TEST(test_key_default_seed_differs_between_tables)
{
	enum { N = 16 };
	struct droce_key_table *a = table(4, 0, 0), *b = table(4, 0, 0);
	uint32_t ka[N], kb[N];

	key_sequence(a, ka, N);
	key_sequence(b, kb, N);
	/* equal only if getrandom() gave both the same 64 bits: p = 2^-64 */
	ck_assert(memcmp(ka, kb, sizeof(ka)) != 0);
	droce_key_table_destroy(a);
	droce_key_table_destroy(b);
}
END_TEST

TCase *
verbs_tcase_key(void)
{
	TCase *tc = tcase_create("key");

	tcase_add_test(tc, test_key_layout_is_index_above_key_byte);
	tcase_add_test(tc, test_key_table_create_rejects_empty_or_oversized);
	tcase_add_test(tc, test_key_alloc_hands_out_every_index_but_0_once);
	tcase_add_test(tc, test_key_limits_are_per_kind);
	tcase_add_test(tc, test_key_alloc_rejects_bad_kind_or_null_object);
	tcase_add_test(tc, test_key_reserved_key_resolves_only_once_published);
	tcase_add_test(tc, test_key_lookup_needs_index_byte_and_kind_to_match);
	tcase_add_test(tc, test_key_unpublish_stops_resolution_and_republish_changes_byte);
	tcase_add_test(tc, test_key_operations_on_a_free_index_fail);
	tcase_add_test(tc, test_key_freed_index_returns_only_after_all_other_free_ones);
	tcase_add_test(tc, test_key_byte_changes_on_every_reuse_and_looks_random);
	tcase_add_test(tc, test_key_byte_differs_from_a_consumer_byte_published_last);
	tcase_add_test(tc, test_key_seed_makes_keys_repeatable_and_seeds_differ);
	tcase_add_test(tc, test_key_default_seed_differs_between_tables);
	return tc;
}
