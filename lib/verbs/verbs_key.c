/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The key table (droce_verbs_key.h): an array of slots indexed by key index,
 * a FIFO of free indices threaded through the slots, per-kind counts and
 * limits, and an xorshift64* PRNG for the key bytes.
 *
 * Threads. One mutator at a time (control thread, or a worker running a
 * command it posted) calls alloc/publish/unpublish/free and owns everything
 * but the three atomic fields of a slot. Any lcore may call droce_key_lookup()
 * and droce_key_valid() concurrently:
 *   - slot->key is the publication point: published with a release store
 *     after the slot's kind and obj (and the object's fields) are written;
 *     lookups load it with acquire.
 *   - unpublishing stores 0 then issues a release fence, so a reader whose
 *     droce_key_valid() recheck (acquire fence, then load) still sees its
 *     key read nothing the mutator wrote after unpublishing.
 *   - kind and obj are atomics so a racing reader sees whole values.
 * Memory of an unpublished object is not reclaimed here; see the header.
 */

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "droce_config.h"
#include "droce_core.h"
#include "droce_verbs_key.h"

static_assert((uint64_t)DROCE_MAX_MR + DROCE_MAX_MW <= DROCE_KEY_INDEX_MAX,
	      "MR and MW keys share one 24-bit index space");

struct key_slot {
	_Atomic uint32_t key;		/* published key; 0 = nothing resolves */
	_Atomic uint8_t kind;		/* enum droce_key_kind of the owner */
	uint8_t last_byte;		/* mutator: byte this index carried last */
	uint32_t next_free;		/* mutator: FIFO link, 0 = end */
	void *_Atomic obj;		/* owner */
};

struct droce_key_table {
	uint32_t capacity;		/* usable indices are 1..capacity */
	uint32_t free_head;		/* FIFO of free indices; 0 = empty */
	uint32_t free_tail;
	uint32_t count[DROCE_KEY_KIND_COUNT];
	uint32_t limit[DROCE_KEY_KIND_COUNT];
	uint64_t rng;			/* xorshift64* state, never 0 */
	struct key_slot slots[];	/* capacity + 1; slot 0 unused */
};

/* Any odd constant works as the fallback state: xorshift only needs non-zero. */
#define KEY_RNG_FALLBACK 0x9e3779b97f4a7c15ull

static uint64_t
key_rng_next(struct droce_key_table *t)
{
	/* xorshift64* (Vigna, "An experiment with xorshift generators", 2014). */
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

void
droce_key_table_seed(struct droce_key_table *t, uint64_t seed)
{
	if (seed == 0 && getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		seed = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)t;
	t->rng = seed != 0 ? seed : KEY_RNG_FALLBACK;
}

int
droce_key_table_create(uint32_t max_mr, uint32_t max_mw, uint64_t seed,
		       struct droce_key_table **out)
{
	uint64_t cap = (uint64_t)max_mr + max_mw;
	struct droce_key_table *t;
	uint32_t i;

	if (cap == 0 || cap > DROCE_KEY_INDEX_MAX)
		return -EINVAL;
	t = calloc(1, sizeof(*t) + (cap + 1) * sizeof(t->slots[0]));
	if (t == NULL)
		return -ENOMEM;
	t->capacity = (uint32_t)cap;
	t->limit[DROCE_KEY_MR] = max_mr;
	t->limit[DROCE_KEY_MW] = max_mw;
	for (i = 1; i <= t->capacity; i++)
		t->slots[i].next_free = i < t->capacity ? i + 1 : 0;
	t->free_head = 1;
	t->free_tail = t->capacity;
	droce_key_table_seed(t, seed);
	*out = t;
	return 0;
}

void
droce_key_table_destroy(struct droce_key_table *t)
{
	free(t);
}

uint32_t
droce_key_table_capacity(const struct droce_key_table *t)
{
	return t->capacity;
}

uint32_t
droce_key_table_count(const struct droce_key_table *t, enum droce_key_kind kind)
{
	return (unsigned int)kind < DROCE_KEY_KIND_COUNT ? t->count[kind] : 0;
}

/* The in-use slot of key's index, or NULL. Mutator side. */
static struct key_slot *
key_slot_used(struct droce_key_table *t, uint32_t key)
{
	uint32_t idx = droce_key_index(key);
	struct key_slot *s;

	if (idx == 0 || idx > t->capacity)
		return NULL;
	s = &t->slots[idx];
	if (atomic_load_explicit(&s->kind, memory_order_relaxed) == DROCE_KEY_NONE)
		return NULL;
	return s;
}

int
droce_key_alloc(struct droce_key_table *t, enum droce_key_kind kind, void *obj,
		uint32_t *key_out)
{
	struct key_slot *s;
	uint32_t idx;
	uint8_t byte;

	if ((kind != DROCE_KEY_MR && kind != DROCE_KEY_MW) || obj == NULL)
		return -EINVAL;
	if (t->count[kind] >= t->limit[kind] || t->free_head == 0)
		return -ENOMEM;

	idx = t->free_head;
	s = &t->slots[idx];
	t->free_head = s->next_free;
	if (t->free_head == 0)
		t->free_tail = 0;
	s->next_free = 0;

	/* A fresh byte, never the one this index carried last (rxe does the same). */
	do {
		byte = (uint8_t)(key_rng_next(t) >> 56);
	} while (byte == s->last_byte);
	s->last_byte = byte;

	atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
	atomic_store_explicit(&s->kind, (uint8_t)kind, memory_order_relaxed);
	t->count[kind]++;
	*key_out = droce_key_make(idx, byte);
	return 0;
}

int
droce_key_publish(struct droce_key_table *t, uint32_t key)
{
	struct key_slot *s = key_slot_used(t, key);

	if (s == NULL)
		return -EINVAL;
	s->last_byte = droce_key_byte(key);
	/* release: pairs with the acquire load in droce_key_lookup(); the
	 * owner's fields, kind and obj are visible to whoever sees this key */
	atomic_store_explicit(&s->key, key, memory_order_release);
	return 0;
}

static void
key_slot_unpublish(struct key_slot *s)
{
	atomic_store_explicit(&s->key, 0, memory_order_relaxed);
	/* release fence: pairs with the acquire fence in droce_key_valid();
	 * a reader that saw anything written after this point sees key 0 */
	atomic_thread_fence(memory_order_release);
}

int
droce_key_unpublish(struct droce_key_table *t, uint32_t key)
{
	struct key_slot *s = key_slot_used(t, key);

	if (s == NULL)
		return -EINVAL;
	key_slot_unpublish(s);
	return 0;
}

int
droce_key_free(struct droce_key_table *t, uint32_t key)
{
	struct key_slot *s = key_slot_used(t, key);
	uint32_t idx = droce_key_index(key);
	uint8_t kind;

	if (s == NULL)
		return -EINVAL;
	key_slot_unpublish(s);
	kind = atomic_load_explicit(&s->kind, memory_order_relaxed);
	t->count[kind]--;
	atomic_store_explicit(&s->kind, DROCE_KEY_NONE, memory_order_relaxed);
	atomic_store_explicit(&s->obj, NULL, memory_order_relaxed);

	/* Tail of the FIFO: this index waits behind every other free one. */
	s->next_free = 0;
	if (t->free_tail != 0)
		t->slots[t->free_tail].next_free = idx;
	else
		t->free_head = idx;
	t->free_tail = idx;
	return 0;
}

bool
droce_key_valid(const struct droce_key_table *t, uint32_t key)
{
	uint32_t idx = droce_key_index(key);

	if (idx == 0 || idx > t->capacity)
		return false;
	/* acquire fence: pairs with the release fence in key_slot_unpublish();
	 * everything read before this point was read before any later change */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&t->slots[idx].key, memory_order_relaxed) == key;
}

void *
droce_key_lookup(const struct droce_key_table *t, uint32_t key, enum droce_key_kind *kind)
{
	uint32_t idx = droce_key_index(key);
	const struct key_slot *s;
	enum droce_key_kind k;
	void *obj;

	if (droce_unlikely(idx == 0 || idx > t->capacity))
		return NULL;
	s = &t->slots[idx];
	/* acquire: pairs with the release store in droce_key_publish() */
	if (atomic_load_explicit(&s->key, memory_order_acquire) != key)
		return NULL;
	k = atomic_load_explicit(&s->kind, memory_order_relaxed);
	obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
	/* The index may have been freed and reused between the loads: only a
	 * key that is still published vouches for the kind and obj we read. */
	if (obj == NULL || !droce_key_valid(t, key))
		return NULL;
	if (kind != NULL)
		*kind = k;
	return obj;
}

void *
droce_key_owner(const struct droce_key_table *t, uint32_t key, enum droce_key_kind kind)
{
	uint32_t idx = droce_key_index(key);
	const struct key_slot *s;

	if (idx == 0 || idx > t->capacity || kind == DROCE_KEY_NONE)
		return NULL;
	s = &t->slots[idx];
	if (atomic_load_explicit(&s->kind, memory_order_relaxed) != kind)
		return NULL;
	return atomic_load_explicit(&s->obj, memory_order_relaxed);
}

enum droce_key_kind
droce_key_kind_at(const struct droce_key_table *t, uint32_t key)
{
	uint32_t idx = droce_key_index(key);

	if (idx == 0 || idx > t->capacity)
		return DROCE_KEY_NONE;
	return atomic_load_explicit(&t->slots[idx].kind, memory_order_relaxed);
}
