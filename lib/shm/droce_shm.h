/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_SHM_H
#define DROCE_SHM_H

/**
 * @file
 * The shared-memory ABI between the verbs shim (client) and droced
 * (engine). Plain C11, no DPDK: both sides compile it.
 *
 * Every ring lives at the start of its own memfd mapping (the daemon
 * creates it and passes the fd over the control socket): a header, then
 * fixed-size slots. Indices run free (uint32_t, wrap naturally); the slot
 * of index i is i & (nslots - 1). Each index has one writer, marked (c)
 * client or (e) engine, and sits on its own cache line.
 *
 *   ring   producer  consumer  slot
 *   SQ     client    engine    struct droce_shm_swqe
 *   RQ     client    engine    struct droce_shm_rwqe  (also SRQ)
 *   CQ     engines   client    struct droce_shm_cqe
 *   DB     clients   engine    struct droce_shm_db    (one per context and engine)
 *
 * Nothing the client writes is trusted: the engine copies a slot before it
 * reads it, checks every field, and keeps its own consumer index (the
 * shared one is a mirror). An impossible producer index moves the QP to the
 * error state. The engine never follows a pointer found in shared memory;
 * addresses in SGEs are checked against registered memory by key.
 *
 * Doorbells: after publishing SQ or RQ slots the client sets the QP's
 * doorbell flag; if it was clear it pushes the QP's handle on the context's
 * DB ring of the engine that runs the QP (or SRQ), named in the create
 * reply; each ring has that one engine as its consumer, which ignores a
 * handle it does not run. The engine clears the flag before it drains the rings, so no
 * update is ever missed and an idle QP costs nothing. An engine that
 * waits instead of polling (--idle wait) sets its DB rings' flag first;
 * a client that sees it after ringing writes the context's wake eventfd
 * (one per engine, passed with the DB rings at HELLO).
 *
 * A CQ may be fed by several engines (a context's QPs spread over the
 * workers). They reserve slots in order on a daemon-private index and
 * publish prod in that order, each after the one before (lib/verbs), so
 * the client sees a single producer: the ABI is the same as with one.
 *
 * Ordering, one pairing per line (each helper below names its partner):
 *
 *   slot writes, then release prod   ->  acquire prod, then slot reads
 *   slot reads, then release cons    ->  acquire cons, then slot reuse
 *   DB: fill slot, release seq       ->  acquire seq, then read handle
 *   publish prod, then exchange flag ->  exchange flag (doorbell_clear),
 *     (droce_shm_doorbell, acq_rel)        then load prod
 *   CQ: arm flag (droce_shm_cq_arm)  <-> publish prod, then RMW-read flag
 *     then poll prod                       (droce_shm_cq_fire)
 *
 * The last pair needs no fence because after ring init every write to a
 * doorbell flag is a read-modify-write: the client's set, its undo after a
 * full DB ring, and the engine's clear. The writes of one flag therefore
 * form a single release sequence, and each RMW reads the value just
 * before it. A client whose exchange comes before the engine's clear
 * synchronizes with that clear, so the engine's next load of prod sees the
 * client's publication. A client whose exchange comes after it reads 0
 * (and rings) or another client's 1 (and that client rings). So no work is
 * ever left unannounced. A plain store clearing the flag would break the
 * chain: always clear with droce_shm_doorbell_clear().
 *
 * A CQ's arm flag works the same way in the other direction, and for the
 * same reason both sides touch it only by RMW. A plain load of the flag
 * after publishing a completion can be satisfied before the prod store is
 * visible (x86 store buffering), while the client arms and polls the old
 * prod: no event and nothing to poll, and the application sleeps forever.
 *
 * Geometry the engine relies on (slot count and size) is fixed at create,
 * but it lives in a header the client can overwrite. The engine therefore
 * works through a struct droce_shm_view, a private copy taken before the
 * ring's fd leaves the daemon, and never through droce_shm_slot().
 */

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DROCE_SHM_MAGIC		0x64524f43u	/* "dROC" */
#define DROCE_SHM_ABI_VERSION	2
#define DROCE_SHM_CACHE_LINE	64
#define DROCE_SHM_MAX_SGE	8	/**< SGEs per work request */
#define DROCE_SHM_MAX_INLINE	256	/**< inline bytes per send WQE */
#define DROCE_SHM_MAX_DB	8	/**< DB rings per context: one per engine */

/**
 * Largest ring: 2^24 slots. Free-running uint32_t indices need nslots <=
 * 2^31 to tell full from empty; the tighter bound keeps a corrupt header
 * from asking for terabytes (2^24 send WQEs are already 8 GB).
 */
#define DROCE_SHM_MAX_LOG2_NSLOTS	24
/**
 * Largest slot: 64 KB. The smallest is per kind, the size of that kind's
 * struct rounded up to a power of two: SQ 512, RQ 256, CQ 64, DB 8 bytes.
 */
#define DROCE_SHM_MAX_LOG2_SLOT_SIZE	16

enum droce_shm_kind {
	DROCE_SHM_SQ = 1,
	DROCE_SHM_RQ,
	DROCE_SHM_CQ,
	DROCE_SHM_DB,
};

/** Header of every ring. */
struct droce_shm_ring {
	uint32_t magic;			/**< (e) at create */
	uint16_t abi_version;		/**< (e) at create */
	uint8_t log2_nslots;		/**< (e) at create; constant */
	uint8_t log2_slot_size;		/**< (e) at create; constant */
	uint32_t kind;			/**< (e) enum droce_shm_kind */
	uint32_t handle;		/**< (e) object handle the ring belongs to */
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t prod;
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t cons;
	/**
	 * CQ: (c) sets DROCE_SHM_ARM_* to ask for one completion event, (e)
	 * clears it when it signals the channel's eventfd.
	 * SQ/RQ: doorbell flag, (c) sets, (e) clears.
	 * DB: (e) DROCE_SHM_DB_ASLEEP while the engine may wait on the
	 * context's wake eventfd; (c) only reads it (droce_shm_engine_asleep).
	 */
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t flag;
	/** DB: (c) producers reserve slots here before filling them. */
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t reserve;
	/** (e) set when the engine moved the object to an error state. */
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t error;
	alignas(DROCE_SHM_CACHE_LINE) uint8_t slots[];
};

/* The layout is ABI: both sides must agree on every offset. */
_Static_assert(offsetof(struct droce_shm_ring, kind) == 8, "ring header: kind");
_Static_assert(offsetof(struct droce_shm_ring, handle) == 12, "ring header: handle");
_Static_assert(offsetof(struct droce_shm_ring, prod) == 1 * DROCE_SHM_CACHE_LINE, "ring: prod");
_Static_assert(offsetof(struct droce_shm_ring, cons) == 2 * DROCE_SHM_CACHE_LINE, "ring: cons");
_Static_assert(offsetof(struct droce_shm_ring, flag) == 3 * DROCE_SHM_CACHE_LINE, "ring: flag");
_Static_assert(offsetof(struct droce_shm_ring, reserve) == 4 * DROCE_SHM_CACHE_LINE,
	       "ring: reserve");
_Static_assert(offsetof(struct droce_shm_ring, error) == 5 * DROCE_SHM_CACHE_LINE, "ring: error");
_Static_assert(offsetof(struct droce_shm_ring, slots) == 6 * DROCE_SHM_CACHE_LINE, "ring: slots");
_Static_assert(sizeof(struct droce_shm_ring) == 6 * DROCE_SHM_CACHE_LINE, "ring header size");

#define DROCE_SHM_DB_ASLEEP	1u	/**< DB flag: write the wake eventfd after ringing */
#define DROCE_SHM_ARM_ANY	1u	/**< next completion */
#define DROCE_SHM_ARM_SOLICITED	2u	/**< next solicited or error completion */

/** Scatter/gather entry, as struct ibv_sge. */
struct droce_shm_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/** A send work request: struct ibv_send_wr flattened. 512-byte slots. */
struct droce_shm_swqe {
	uint64_t wr_id;
	uint32_t opcode;		/**< enum ibv_wr_opcode */
	uint32_t send_flags;		/**< enum ibv_send_flags */
	uint32_t imm_data;		/**< network order: immediate data */
	uint32_t invalidate_rkey;	/**< SEND_WITH_INV, LOCAL_INV */
	uint64_t remote_addr;		/**< RDMA, atomics */
	uint32_t rkey;
	uint32_t num_sge;		/**< 0 .. DROCE_SHM_MAX_SGE */
	uint64_t compare_add;		/**< atomics */
	uint64_t swap;
	uint32_t ah_handle;		/**< UD */
	uint32_t remote_qpn;		/**< UD */
	uint32_t remote_qkey;		/**< UD */
	uint32_t inline_len;		/**< IBV_SEND_INLINE: bytes in inline_data */
	struct {			/**< IBV_WR_BIND_MW */
		uint32_t mw_handle;
		uint32_t mr_lkey;
		uint32_t new_rkey;
		uint32_t access;
		uint64_t addr;
		uint64_t length;
	} bind;
	struct droce_shm_sge sge[DROCE_SHM_MAX_SGE];
	uint8_t inline_data[DROCE_SHM_MAX_INLINE];
};

/** A receive work request. */
struct droce_shm_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t reserved;
	struct droce_shm_sge sge[DROCE_SHM_MAX_SGE];
};

/** A completion: what ibv_poll_cq and the ibv_wc_read_* calls report. */
struct droce_shm_cqe {
	uint64_t wr_id;
	uint32_t status;		/**< enum ibv_wc_status */
	uint32_t opcode;		/**< enum ibv_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;		/**< network order; or the invalidated R_Key */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;		/**< enum ibv_wc_flags */
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint16_t reserved;
	uint64_t timestamp;		/**< CLOCK_MONOTONIC ns when written */
	uint64_t wallclock;		/**< CLOCK_REALTIME ns, the same moment */
};

/** A doorbell: which QP (or SRQ) has new work. */
struct droce_shm_db {
	_Atomic uint32_t seq;		/**< (c) index + 1 when the slot is filled */
	uint32_t handle;		/**< (c) QP or SRQ handle */
};

/* Each slot kind fits the smallest slot droce_shm_ring_check() accepts for it. */
_Static_assert(sizeof(struct droce_shm_swqe) <= 512, "send WQE fits a 512-byte slot");
_Static_assert(sizeof(struct droce_shm_rwqe) <= 256, "receive WQE fits a 256-byte slot");
_Static_assert(sizeof(struct droce_shm_cqe) <= 64, "CQE fits a 64-byte slot");
_Static_assert(sizeof(struct droce_shm_db) == 8, "doorbell slot is 8 bytes");

/**
 * One side's private view of a ring (rxe_queue.h's discipline): the slot
 * count and size copied while the header was still the engine's alone (or,
 * in the client, when it mapped the ring), this side's own index, and the
 * mapping's length. The shared index is only a mirror of @c idx. The
 * engine's rings (lib/verbs) and the shim's are both this.
 */
struct droce_shm_view {
	struct droce_shm_ring *r;	/**< the mapping; NULL: none */
	uint32_t idx;			/**< ours: cons of SQ/RQ/DB, prod of CQ (engine); prod of SQ/RQ, cons of CQ (client) */
	uint32_t nslots;		/**< copied at create, never re-read */
	uint32_t log2_slot_size;	/**< copied at create, never re-read */
	uint64_t map_len;		/**< bytes mapped at r, for munmap() */
};

/* ---- helpers used by both sides; each names the operation it pairs with ---- */

static inline uint32_t
droce_shm_nslots(const struct droce_shm_ring *r)
{
	return 1u << r->log2_nslots;
}

/**
 * Slot of index @p idx, with the geometry read from the ring header. For the
 * client, whose header the engine wrote. The engine must use
 * droce_shm_view_slot(): a client can rewrite log2_nslots at any time.
 */
static inline void *
droce_shm_slot(struct droce_shm_ring *r, uint32_t idx)
{
	return r->slots + ((size_t)(idx & (droce_shm_nslots(r) - 1)) << r->log2_slot_size);
}

/** Slot of index @p idx, within the geometry the engine copied. */
static inline void *
droce_shm_view_slot(const struct droce_shm_view *v, uint32_t idx)
{
	return v->r->slots + ((size_t)(idx & (v->nslots - 1)) << v->log2_slot_size);
}

/** Bytes to map for a ring of @p nslots slots of @p slot_size bytes. */
static inline uint64_t
droce_shm_ring_bytes(uint32_t nslots, uint32_t slot_size)
{
	return sizeof(struct droce_shm_ring) + (uint64_t)nslots * slot_size;
}

/** Producer: make slots up to @p prod visible (pairs with droce_shm_load_prod). */
static inline void
droce_shm_publish(struct droce_shm_ring *r, uint32_t prod)
{
	atomic_store_explicit(&r->prod, prod, memory_order_release);
}

/** Consumer: the producer's index; slots before it are readable. */
static inline uint32_t
droce_shm_load_prod(struct droce_shm_ring *r)
{
	return atomic_load_explicit(&r->prod, memory_order_acquire);
}

/** Consumer: slots before @p cons may be reused (pairs with droce_shm_load_cons). */
static inline void
droce_shm_release(struct droce_shm_ring *r, uint32_t cons)
{
	atomic_store_explicit(&r->cons, cons, memory_order_release);
}

/** Producer: the consumer's index; slots before it are free again. */
static inline uint32_t
droce_shm_load_cons(struct droce_shm_ring *r)
{
	return atomic_load_explicit(&r->cons, memory_order_acquire);
}

/**
 * Engine: clear a doorbell flag before draining its ring (SQ/RQ), then
 * read the producer index with droce_shm_load_prod().
 *
 * An exchange, not a store. acquire: pairs with the release of every
 * client exchange in droce_shm_doorbell() since the previous clear (they
 * form one release sequence, see the top of this file), so the prod each
 * of those clients published is visible to the load that follows.
 * @return the flag's previous value (0 if nobody rang since the last clear).
 */
static inline uint32_t
droce_shm_doorbell_clear(_Atomic uint32_t *flag)
{
	return atomic_exchange_explicit(flag, 0, memory_order_acq_rel);
}

/**
 * Engine: say on context ring @p db whether it may be asleep (waiting on
 * the context's wake eventfd, --idle wait). Before it waits, the engine
 * sets the flag on every context, issues droce_shm_sleep_fence(), then
 * looks at every DB ring once more; it clears the flags when it wakes.
 */
static inline void
droce_shm_engine_sleep(struct droce_shm_ring *db, bool asleep)
{
	atomic_store_explicit(&db->flag, asleep ? DROCE_SHM_DB_ASLEEP : 0u, memory_order_relaxed);
}

/** Engine: between setting the asleep flags and the last look at the rings. */
static inline void
droce_shm_sleep_fence(void)
{
	/* pairs with the fence in droce_shm_engine_asleep() (store buffering) */
	atomic_thread_fence(memory_order_seq_cst);
}

/**
 * Client: after droce_shm_doorbell() (rung, pending or -EAGAIN), must the
 * engine be woken through the context's wake eventfd?
 *
 * A Dekker pair with the engine's droce_shm_sleep_fence(): either the
 * engine's last look at the rings comes after our fence and sees the
 * doorbell, or our load comes after its fence and sees the flag. The flag
 * is a hint (the client can overwrite it): a client that lies about it
 * only delays or spends its own wake-ups.
 */
static inline bool
droce_shm_engine_asleep(struct droce_shm_ring *db)
{
	atomic_thread_fence(memory_order_seq_cst);
	return (atomic_load_explicit(&db->flag, memory_order_relaxed) & DROCE_SHM_DB_ASLEEP) != 0;
}

/**
 * Client: arm CQ ring @p cq for one completion event (ibv_req_notify_cq()),
 * then poll it as usual. A completion the engine published before it saw
 * the arm raises no event but is visible to that poll.
 *
 * acq_rel RMW: pairs with the one in droce_shm_cq_fire(). If the engine's
 * comes first in the flag's chain of RMWs, it synchronizes with us and its
 * prod is visible to our next droce_shm_load_prod(); if ours comes first,
 * the engine sees the arm and fires.
 */
static inline void
droce_shm_cq_arm(struct droce_shm_ring *cq, bool solicited_only)
{
	atomic_fetch_or_explicit(&cq->flag,
				 solicited_only ? DROCE_SHM_ARM_SOLICITED : DROCE_SHM_ARM_ANY,
				 memory_order_acq_rel);
}

/**
 * Engine: after publishing a completion with droce_shm_publish(), decide
 * whether it raises the CQ's event, and disarm the CQ if it does. Only the
 * flag word is touched, so a ring reached through a view is fine.
 *
 * The flag is read by an RMW (adding 0), never a plain load: pairs with
 * droce_shm_cq_arm() (see there, and the top of this file). Disarming is a
 * CAS, so an arm the client adds meanwhile is not wiped out unseen.
 *
 * @param solicited_or_error  the completion was for a solicited message, or
 *                            is an error (IBA: both satisfy a SOLICITED arm)
 * @return true if the caller must signal the CQ's completion channel.
 */
static inline bool
droce_shm_cq_fire(struct droce_shm_ring *cq, bool solicited_or_error)
{
	uint32_t v = atomic_fetch_add_explicit(&cq->flag, 0, memory_order_acq_rel);

	while (v != 0 && ((v & DROCE_SHM_ARM_ANY) || solicited_or_error)) {
		/* acq_rel: stays in the chain; on failure v is reloaded, retry */
		if (atomic_compare_exchange_weak_explicit(&cq->flag, &v, 0, memory_order_acq_rel,
							  memory_order_acquire))
			return true;
	}
	return false;
}

/**
 * Initialise a ring in fresh memory (engine side): the header, with both
 * indices 0, and zeroed slots. @p r must hold droce_shm_ring_bytes(@p
 * nslots, @p slot_size) bytes. Nothing is written on failure.
 *
 * @param nslots     a power of two, 1 .. 2^DROCE_SHM_MAX_LOG2_NSLOTS
 * @param slot_size  a power of two, at least the kind's slot struct (SQ 512,
 *                   RQ 256, CQ 64, DB 8), at most 2^DROCE_SHM_MAX_LOG2_SLOT_SIZE
 * @return 0, or -EINVAL for an unknown kind or a size out of range or not a
 *         power of two.
 */
int droce_shm_ring_init(struct droce_shm_ring *r, enum droce_shm_kind kind, uint32_t handle,
			uint32_t nslots, uint32_t slot_size);

/**
 * Check a ring header mapped from the other side: magic, version, kind,
 * both log2 sizes in the ranges droce_shm_ring_init() accepts, and that
 * the whole ring fits in @p map_len bytes. Each field is read once.
 *
 * @param map_len  bytes mapped at @p r; the header is read only if it fits
 * @return 0; -EPROTO if the header is not a valid ring of @p kind that fits;
 *         -EINVAL if @p kind itself is not a kind.
 */
int droce_shm_ring_check(const struct droce_shm_ring *r, enum droce_shm_kind kind,
			 uint64_t map_len);

/**
 * Engine: take a private view of a ring it has just created with
 * droce_shm_ring_init(), before the ring's fd is handed to a client. Copies
 * the geometry and starts @c idx at 0. @return 0, or -EPROTO if @p r is
 * not a valid ring header.
 */
int droce_shm_view_init(struct droce_shm_view *v, struct droce_shm_ring *r);

/**
 * Client: ring the doorbell of @p handle on context ring @p db, unless its
 * @p flag is already set (then the ring already holds @p handle, or the
 * engine has yet to clear the flag and will drain after it does).
 * Multi-producer safe: any number of the client's threads, lock-free.
 *
 * Call it after publishing the slots it announces (droce_shm_publish()):
 * its release exchange of the flag carries that publication to the engine.
 *
 * @return 0 when the doorbell is rung or was already pending; -EAGAIN if
 *         the DB ring is full. The flag is then cleared again (by an RMW,
 *         so the release sequence of other threads' exchanges continues),
 *         so calling again rings for this thread's work and for any other
 *         thread's that found the flag set meanwhile. A caller that does
 *         not retry relies on the engine's periodic rescan of all rings.
 */
int droce_shm_doorbell(struct droce_shm_ring *db, _Atomic uint32_t *flag, uint32_t handle);

/**
 * Take up to @p max doorbells from @p db, in ring order, advancing the
 * private consumer index *@p cons and mirroring it to the shared one.
 * Stops at the first slot a producer has reserved but not filled yet.
 *
 * Reads the slot count from the header: meant for tests and trusted
 * peers. The engine uses droce_shm_doorbell_take_view().
 *
 * @return the number of handles stored in @p handles. Handles are the
 *         client's word: look each up among the client's own objects.
 */
unsigned int droce_shm_doorbell_take(struct droce_shm_ring *db, uint32_t *cons,
				     uint32_t *handles, unsigned int max);

/**
 * Engine: droce_shm_doorbell_take() within the geometry of view @p db
 * (its @c idx is the private consumer index). Whatever the client writes
 * into the ring, every access stays inside the mapping.
 * @return the number of handles stored in @p handles.
 */
unsigned int droce_shm_doorbell_take_view(struct droce_shm_view *db, uint32_t *handles,
					  unsigned int max);

#endif /* DROCE_SHM_H */
