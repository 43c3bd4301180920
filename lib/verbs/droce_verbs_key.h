/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_KEY_H
#define DROCE_VERBS_KEY_H

/**
 * @file
 * The key table: the one index space from which memory regions and memory
 * windows draw their L_Keys and R_Keys.
 *
 * A key is 32 bits: a 24-bit table index in the high bits and an 8-bit key
 * byte in the low bits, the layout rdma-core assumes (ibv_inc_rkey() bumps the
 * low byte, IBA calls it the "key" portion a consumer may choose for a type 2
 * window). Keys are unpredictable and not reused soon:
 *
 * - the key byte comes from a per-table PRNG, seeded from getrandom() unless
 *   the caller seeds it (tests do, for repeatable runs), and differs from the
 *   byte the index carried last time;
 * - a freed index goes to the tail of a FIFO, so it comes back only after
 *   every other free index has been handed out;
 * - MRs and MWs share the index space, so an MR key can never equal a live
 *   window key (Linux Soft-RoCE once let MR indices run into the MW range
 *   after 0x10000 registrations: known-bugs #2, commit 1aefe5c177c1);
 * - index 0 is never handed out, so key 0 never resolves.
 *
 * An index moves through three states: free (in the FIFO), reserved (owned
 * by an object, key not resolvable: an MW that is not bound) and published
 * (its current key resolves). A lookup succeeds only when both the index and
 * the key byte match the published key, so a freed, invalidated or rebound
 * key stops resolving the moment it is unpublished.
 *
 * Threads: the table has one mutator at a time (the control thread, or a
 * worker running a command the control thread posted; the caller serializes).
 * Lookups (droce_key_lookup(), droce_key_valid()) may run on any lcore
 * concurrently with the mutator and take no lock: the published key word is
 * written with release and read with acquire. An object's memory must stay
 * valid until every lcore that may have looked it up has passed a quiescent
 * point; unpublishing does not wait for that.
 */

#include <stdbool.h>
#include <stdint.h>

/** The key byte is the low 8 bits of a key. */
#define DROCE_KEY_BYTE_MASK	0xffu
/** The table index sits above the key byte. */
#define DROCE_KEY_INDEX_SHIFT	8
/** Largest index a 24-bit index field holds. */
#define DROCE_KEY_INDEX_MAX	0xffffffu

/** Table index of @p key. */
static inline uint32_t
droce_key_index(uint32_t key)
{
	return key >> DROCE_KEY_INDEX_SHIFT;
}

/** Key byte (the consumer-visible "key" portion) of @p key. */
static inline uint8_t
droce_key_byte(uint32_t key)
{
	return (uint8_t)(key & DROCE_KEY_BYTE_MASK);
}

/** Build a key from an index (24 bits) and a key byte. */
static inline uint32_t
droce_key_make(uint32_t index, uint8_t byte)
{
	return (index & DROCE_KEY_INDEX_MAX) << DROCE_KEY_INDEX_SHIFT | byte;
}

/** What owns a table index. */
enum droce_key_kind {
	DROCE_KEY_NONE = 0,	/**< free index */
	DROCE_KEY_MR,		/**< struct droce_mr */
	DROCE_KEY_MW,		/**< struct droce_mw */
	DROCE_KEY_KIND_COUNT
};

struct droce_key_table;

/**
 * Create a key table.
 *
 * @param max_mr  most MR keys live at once (DROCE_MAX_MR for the engine)
 * @param max_mw  most MW keys live at once (DROCE_MAX_MW for the engine)
 * @param seed    PRNG seed for the key bytes; 0 draws one from getrandom()
 * @param[out] out  the table
 * @return 0;
 *   -EINVAL if max_mr + max_mw is 0 or above DROCE_KEY_INDEX_MAX;
 *   -ENOMEM if the table cannot be allocated.
 */
int droce_key_table_create(uint32_t max_mr, uint32_t max_mw, uint64_t seed,
			   struct droce_key_table **out);

/** Free a table. The objects it points to are the caller's. NULL is a no-op. */
void droce_key_table_destroy(struct droce_key_table *t);

/** Reseed the key-byte PRNG; 0 draws a seed from getrandom(). */
void droce_key_table_seed(struct droce_key_table *t, uint64_t seed);

/** Number of usable indices (1..capacity); max_mr + max_mw. */
uint32_t droce_key_table_capacity(const struct droce_key_table *t);

/** Indices of @p kind in use (reserved or published). */
uint32_t droce_key_table_count(const struct droce_key_table *t, enum droce_key_kind kind);

/**
 * Reserve an index for @p obj and pick a fresh key byte for it.
 * The key does not resolve until droce_key_publish(). Mutator only.
 *
 * @param[out] key_out  the new key: index from the FIFO head, random byte
 *   different from the byte that index carried last
 * @return 0;
 *   -EINVAL if @p kind is not MR or MW or @p obj is NULL;
 *   -ENOMEM if @p kind is at its limit.
 */
int droce_key_alloc(struct droce_key_table *t, enum droce_key_kind kind, void *obj,
		    uint32_t *key_out);

/**
 * Make @p key resolve. Its index must be reserved; its byte may differ from
 * the one droce_key_alloc() chose (a window rebind with a consumer key byte).
 * Replaces any key published at that index. Mutator only.
 *
 * @return 0; -EINVAL if the index is out of range or not in use.
 */
int droce_key_publish(struct droce_key_table *t, uint32_t key);

/**
 * Stop every key of @p key's index from resolving; the index stays reserved.
 * Lookups that start afterwards fail; lookups already under way fail their
 * droce_key_valid() recheck. Mutator only.
 *
 * @return 0; -EINVAL if the index is out of range or not in use.
 */
int droce_key_unpublish(struct droce_key_table *t, uint32_t key);

/**
 * Unpublish and release @p key's index to the tail of the free FIFO.
 * Mutator only.
 *
 * @return 0; -EINVAL if the index is out of range or not in use.
 */
int droce_key_free(struct droce_key_table *t, uint32_t key);

/**
 * The object whose published key is exactly @p key. Safe on any lcore.
 * After reading the fields it needs, a caller racing the mutator confirms
 * them with droce_key_valid() (the seqlock pattern of DPDK's rte_seqlock:
 * a record is only changed while its key is unpublished).
 *
 * @param[out] kind  the object's kind; may be NULL
 * @return the object, or NULL (index 0 or out of range, free, reserved but
 *   unpublished, or key byte mismatch).
 */
void *droce_key_lookup(const struct droce_key_table *t, uint32_t key, enum droce_key_kind *kind);

/** True if @p key is still the published key of its index. Safe on any lcore. */
bool droce_key_valid(const struct droce_key_table *t, uint32_t key);

/**
 * The owner of @p key's index whether or not a key is published, if it is of
 * @p kind; the key byte is ignored. Mutator only (for resolving a window by
 * its current R_Key before a bind, when that key is not published).
 *
 * @return the object, or NULL.
 */
void *droce_key_owner(const struct droce_key_table *t, uint32_t key, enum droce_key_kind kind);

/**
 * What owns @p key's index now, DROCE_KEY_NONE for a free or out-of-range
 * index. For classifying a failed lookup; racy against the mutator.
 */
enum droce_key_kind droce_key_kind_at(const struct droce_key_table *t, uint32_t key);

#endif /* DROCE_VERBS_KEY_H */
