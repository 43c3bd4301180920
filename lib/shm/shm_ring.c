/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Ring headers and the doorbell ring of droce_shm.h. libc only: the shim
 * and the engine both link this.
 *
 * Who touches what:
 *  - droce_shm_ring_init(), droce_shm_view_init(): the engine's control
 *    path, on a ring no client has mapped yet.
 *  - droce_shm_ring_check(): the client, on a ring it has just mapped.
 *  - droce_shm_doorbell(): any client thread, concurrently (multi-producer).
 *  - droce_shm_doorbell_take*(): the engine worker that owns the context
 *    (single consumer).
 *
 * The doorbell ring is a bounded MPSC queue of 8-byte slots {seq, handle}
 * in the style of Vyukov's bounded queue, cut down to one consumer:
 *  - a producer claims index i by CAS on @c reserve, only while
 *    i - cons < nslots, so it never overwrites a slot the engine has not
 *    consumed yet;
 *  - it writes the handle and then publishes the slot with seq = i + 1;
 *  - the engine consumes index c while slot(c).seq == c + 1, and stops at
 *    the first slot whose producer is still between its CAS and its store.
 * seq = i + 1 is unique for index i within the last 2^32 indices, so a
 * slot still holding the previous lap's value (i + 1 - nslots), or the zero
 * of a fresh ring, never passes for a filled one.
 */

#include <errno.h>
#include <string.h>

#include "droce_core.h"
#include "droce_shm.h"

/* log2 of the smallest slot each kind accepts: its struct, rounded up. */
static const uint8_t kind_min_log2_slot[] = {
	[DROCE_SHM_SQ] = 9,	/* struct droce_shm_swqe, 504 bytes */
	[DROCE_SHM_RQ] = 8,	/* struct droce_shm_rwqe, 144 bytes */
	[DROCE_SHM_CQ] = 6,	/* struct droce_shm_cqe, 56 bytes */
	[DROCE_SHM_DB] = 3,	/* struct droce_shm_db, 8 bytes */
};

_Static_assert(sizeof(struct droce_shm_swqe) <= 1u << 9, "SQ minimum slot");
_Static_assert(sizeof(struct droce_shm_rwqe) <= 1u << 8, "RQ minimum slot");
_Static_assert(sizeof(struct droce_shm_cqe) <= 1u << 6, "CQ minimum slot");
_Static_assert(sizeof(struct droce_shm_db) <= 1u << 3, "DB minimum slot");

static bool
kind_valid(uint32_t kind)
{
	return kind >= DROCE_SHM_SQ && kind <= DROCE_SHM_DB;
}

/* log2 of @p x if it is a power of two, else -1. */
static int
exact_log2(uint32_t x)
{
	if (x == 0 || (x & (x - 1)) != 0)
		return -1;
	return __builtin_ctz(x);
}

static bool
geometry_valid(uint32_t kind, unsigned int log2_nslots, unsigned int log2_slot_size)
{
	return log2_nslots <= DROCE_SHM_MAX_LOG2_NSLOTS &&
	       log2_slot_size >= kind_min_log2_slot[kind] &&
	       log2_slot_size <= DROCE_SHM_MAX_LOG2_SLOT_SIZE;
}

int
droce_shm_ring_init(struct droce_shm_ring *r, enum droce_shm_kind kind, uint32_t handle,
		    uint32_t nslots, uint32_t slot_size)
{
	int log2_n = exact_log2(nslots), log2_s = exact_log2(slot_size);

	if (!kind_valid(kind) || log2_n < 0 || log2_s < 0 ||
	    !geometry_valid(kind, (unsigned int)log2_n, (unsigned int)log2_s))
		return -EINVAL;

	/* Header and slots: a DB slot must not start out looking filled. */
	memset(r, 0, (size_t)droce_shm_ring_bytes(nslots, slot_size));
	r->magic = DROCE_SHM_MAGIC;
	r->abi_version = DROCE_SHM_ABI_VERSION;
	r->log2_nslots = (uint8_t)log2_n;
	r->log2_slot_size = (uint8_t)log2_s;
	r->kind = kind;
	r->handle = handle;
	/* No fence: the ring reaches the client through sendmsg() of its fd. */
	return 0;
}

/*
 * The checks of droce_shm_ring_check(); @p kind 0 accepts any valid kind.
 * One read of each field: the other side may be writing them.
 */
static int
header_check(const struct droce_shm_ring *r, uint32_t kind, uint64_t map_len)
{
	uint32_t magic, rkind;
	uint16_t version;
	uint8_t log2_n, log2_s;

	if (map_len < sizeof(*r))
		return -EPROTO;		/* not even a header */
	magic = *(const volatile uint32_t *)&r->magic;
	version = *(const volatile uint16_t *)&r->abi_version;
	log2_n = *(const volatile uint8_t *)&r->log2_nslots;
	log2_s = *(const volatile uint8_t *)&r->log2_slot_size;
	rkind = *(const volatile uint32_t *)&r->kind;

	if (magic != DROCE_SHM_MAGIC || version != DROCE_SHM_ABI_VERSION)
		return -EPROTO;
	if (!kind_valid(rkind) || (kind != 0 && rkind != kind))
		return -EPROTO;
	if (!geometry_valid(rkind, log2_n, log2_s))
		return -EPROTO;
	/* at most 2^24 * 2^16 + 384 bytes: no overflow in 64 bits */
	if (droce_shm_ring_bytes(1u << log2_n, 1u << log2_s) > map_len)
		return -EPROTO;
	return 0;
}

int
droce_shm_ring_check(const struct droce_shm_ring *r, enum droce_shm_kind kind, uint64_t map_len)
{
	if (!kind_valid(kind))
		return -EINVAL;
	return header_check(r, kind, map_len);
}

int
droce_shm_view_init(struct droce_shm_view *v, struct droce_shm_ring *r)
{
	/* the engine's own ring, not yet shared: its header fits by construction */
	if (header_check(r, 0, UINT64_MAX) < 0)
		return -EPROTO;
	v->r = r;
	v->idx = 0;
	v->nslots = droce_shm_nslots(r);
	v->log2_slot_size = r->log2_slot_size;
	return 0;
}

int
droce_shm_doorbell(struct droce_shm_ring *db, _Atomic uint32_t *flag, uint32_t handle)
{
	uint32_t nslots = droce_shm_nslots(db), idx, cons;
	struct droce_shm_db *slot;

	/*
	 * acq_rel: release pairs with the acquire of the engine's
	 * droce_shm_doorbell_clear(), which our exchange precedes or follows in
	 * the flag's single chain of RMWs. If it precedes, the engine's next
	 * load of prod sees the caller's publication; if it follows, we read 0
	 * and ring. If the flag was already set, the thread that set it rings,
	 * and our exchange rides in the release sequence to the engine's clear.
	 * (acquire is not needed here: the undo below is the RMW that acquires.)
	 */
	if (atomic_exchange_explicit(flag, 1, memory_order_acq_rel) != 0)
		return 0;

	/* relaxed: reserve only hands out indices; slot ownership comes from cons */
	idx = atomic_load_explicit(&db->reserve, memory_order_relaxed);
	do {
		/*
		 * acquire: pairs with the release store of cons in doorbell_take:
		 * the engine's read of slot idx - nslots happens-before our
		 * overwrite. A stale cons only makes the ring look fuller.
		 */
		cons = droce_shm_load_cons(db);
		if (idx - cons >= nslots) {
			/*
			 * Full. Clear the flag again so a retry rings. An RMW,
			 * not a store, keeps the flag's release sequence whole:
			 * a thread that found our 1 and left its work to us is
			 * acquired here and handed on by our retry's release.
			 */
			(void)atomic_exchange_explicit(flag, 0, memory_order_acq_rel);
			return -EAGAIN;
		}
	} while (!atomic_compare_exchange_weak_explicit(&db->reserve, &idx, idx + 1,
							memory_order_relaxed,
							memory_order_relaxed));

	/* index idx is ours alone until we publish it */
	slot = droce_shm_slot(db, idx);
	slot->handle = handle;
	/*
	 * release: pairs with the acquire load of seq in doorbell_take; the
	 * handle, and through the exchange above the caller's ring updates,
	 * happen-before the engine reads them.
	 */
	atomic_store_explicit(&slot->seq, idx + 1, memory_order_release);
	return 0;
}

/* The consumer loop of both take calls; @p mask and @p log2_slot come from the caller. */
static unsigned int
db_take(struct droce_shm_ring *db, uint32_t mask, uint32_t log2_slot, uint32_t *cons,
	uint32_t *handles, unsigned int max)
{
	uint32_t c = *cons;
	unsigned int n = 0;

	while (n < max) {
		struct droce_shm_db *slot =
			(void *)(db->slots + ((size_t)(c & mask) << log2_slot));

		/* acquire: pairs with the producer's release store of seq */
		if (atomic_load_explicit(&slot->seq, memory_order_acquire) != c + 1)
			break;		/* not filled yet, or nothing more */
		handles[n++] = slot->handle;
		c++;
	}
	if (n > 0) {
		*cons = c;
		/*
		 * release: pairs with the producers' acquire load of cons; our
		 * reads of these slots happen-before their reuse.
		 */
		droce_shm_release(db, c);
	}
	return n;
}

unsigned int
droce_shm_doorbell_take(struct droce_shm_ring *db, uint32_t *cons, uint32_t *handles,
			unsigned int max)
{
	return db_take(db, droce_shm_nslots(db) - 1, db->log2_slot_size, cons, handles, max);
}

unsigned int
droce_shm_doorbell_take_view(struct droce_shm_view *db, uint32_t *handles, unsigned int max)
{
	return db_take(db->r, db->nslots - 1, db->log2_slot_size, &db->idx, handles, max);
}
