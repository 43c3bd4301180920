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
 *   CQ     engine    client    struct droce_shm_cqe
 *   DB     clients   engine    struct droce_shm_db    (one per context)
 *
 * Nothing the client writes is trusted: the engine copies a slot before it
 * reads it, checks every field, and keeps its own consumer index (the
 * shared one is a mirror). An impossible producer index moves the QP to the
 * error state. The engine never follows a pointer found in shared memory;
 * addresses in SGEs are checked against registered memory by key.
 *
 * Doorbells: after publishing SQ or RQ slots the client sets the QP's
 * doorbell flag; if it was clear it pushes the QP's handle on the context's
 * DB ring. The engine clears the flag before it drains the rings, so no
 * update is ever missed and an idle QP costs nothing.
 */

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DROCE_SHM_MAGIC		0x64524f43u	/* "dROC" */
#define DROCE_SHM_ABI_VERSION	1
#define DROCE_SHM_CACHE_LINE	64
#define DROCE_SHM_MAX_SGE	8	/**< SGEs per work request */
#define DROCE_SHM_MAX_INLINE	256	/**< inline bytes per send WQE */

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
	 */
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t flag;
	/** DB: (c) producers reserve slots here before filling them. */
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t reserve;
	/** (e) set when the engine moved the object to an error state. */
	alignas(DROCE_SHM_CACHE_LINE) _Atomic uint32_t error;
	alignas(DROCE_SHM_CACHE_LINE) uint8_t slots[];
};

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
	uint64_t timestamp;		/**< ns, engine clock */
};

/** A doorbell: which QP (or SRQ) has new work. */
struct droce_shm_db {
	_Atomic uint32_t seq;		/**< (c) index + 1 when the slot is filled */
	uint32_t handle;		/**< (c) QP or SRQ handle */
};

/* ---- helpers used by both sides; each names the operation it pairs with ---- */

static inline uint32_t
droce_shm_nslots(const struct droce_shm_ring *r)
{
	return 1u << r->log2_nslots;
}

static inline void *
droce_shm_slot(struct droce_shm_ring *r, uint32_t idx)
{
	return r->slots + ((size_t)(idx & (droce_shm_nslots(r) - 1)) << r->log2_slot_size);
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

/** Initialise a ring header in fresh memory (engine side). */
void droce_shm_ring_init(struct droce_shm_ring *r, enum droce_shm_kind kind, uint32_t handle,
			 uint32_t nslots, uint32_t slot_size);

/**
 * Check a ring header mapped from the other side: magic, version, kind and
 * that its geometry fits in @p map_len bytes. @return 0 or -EPROTO.
 */
int droce_shm_ring_check(const struct droce_shm_ring *r, enum droce_shm_kind kind,
			 uint64_t map_len);

/**
 * Client: ring the doorbell of @p handle on context ring @p db, unless its
 * @p flag is already set. Multi-producer safe. @return 0, or -EAGAIN if
 * the DB ring is full (the engine also rescans flagged QPs periodically).
 */
int droce_shm_doorbell(struct droce_shm_ring *db, _Atomic uint32_t *flag, uint32_t handle);

/**
 * Engine: take up to @p max doorbells from @p db (its private consumer
 * index in *cons). Stops at a slot still being filled. @return count.
 */
unsigned int droce_shm_doorbell_take(struct droce_shm_ring *db, uint32_t *cons,
				     uint32_t *handles, unsigned int max);

#endif /* DROCE_SHM_H */
