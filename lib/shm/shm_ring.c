/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Ring headers and the doorbell ring of droce_shm.h. libc only: the shim
 * and the engine both link this. Doorbell producers are the client's
 * threads (many); the consumer is the engine's worker (one).
 */

#include <errno.h>
#include <string.h>

#include "droce_shm.h"

void
droce_shm_ring_init(struct droce_shm_ring *r, enum droce_shm_kind kind, uint32_t handle,
		    uint32_t nslots, uint32_t slot_size)
{
	uint8_t log2_n = 0, log2_s = 0;

	while ((1u << log2_n) < nslots)
		log2_n++;
	while ((1u << log2_s) < slot_size)
		log2_s++;
	memset(r, 0, sizeof(*r));
	r->magic = DROCE_SHM_MAGIC;
	r->abi_version = DROCE_SHM_ABI_VERSION;
	r->log2_nslots = log2_n;
	r->log2_slot_size = log2_s;
	r->kind = kind;
	r->handle = handle;
}

int
droce_shm_ring_check(const struct droce_shm_ring *r, enum droce_shm_kind kind, uint64_t map_len)
{
	if (map_len < sizeof(*r) || r->magic != DROCE_SHM_MAGIC ||
	    r->abi_version != DROCE_SHM_ABI_VERSION || r->kind != (uint32_t)kind ||
	    r->log2_nslots > 24 || r->log2_slot_size < 3 || r->log2_slot_size > 12)
		return -EPROTO;
	if (droce_shm_ring_bytes(1u << r->log2_nslots, 1u << r->log2_slot_size) > map_len)
		return -EPROTO;
	return 0;
}

int
droce_shm_doorbell(struct droce_shm_ring *db, _Atomic uint32_t *flag, uint32_t handle)
{
	uint32_t n = droce_shm_nslots(db), idx, cons;
	struct droce_shm_db *slot;

	/* already rung and not yet taken: the engine will see our update too,
	 * since it clears the flag before it reads the ring (seq_cst both sides) */
	if (atomic_exchange_explicit(flag, 1, memory_order_seq_cst) != 0)
		return 0;
	idx = atomic_load_explicit(&db->reserve, memory_order_relaxed);
	do {
		/* acquire: pairs with the engine's release of cons in doorbell_take */
		cons = droce_shm_load_cons(db);
		if (idx - cons >= n) {
			atomic_store_explicit(flag, 0, memory_order_relaxed);
			return -EAGAIN;
		}
	} while (!atomic_compare_exchange_weak_explicit(&db->reserve, &idx, idx + 1,
							memory_order_relaxed, memory_order_relaxed));
	slot = droce_shm_slot(db, idx);
	slot->handle = handle;
	/* release: the handle is visible before the slot counts as filled */
	atomic_store_explicit(&slot->seq, idx + 1, memory_order_release);
	return 0;
}

unsigned int
droce_shm_doorbell_take(struct droce_shm_ring *db, uint32_t *cons, uint32_t *handles,
			unsigned int max)
{
	unsigned int n = 0;

	while (n < max) {
		struct droce_shm_db *slot = droce_shm_slot(db, *cons);

		/* acquire: pairs with the producer's release store of seq */
		if (atomic_load_explicit(&slot->seq, memory_order_acquire) != *cons + 1)
			break;
		handles[n++] = slot->handle;
		(*cons)++;
	}
	if (n > 0)
		droce_shm_release(db, *cons);
	return n;
}
