/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_VERBS_MR_H
#define DROCE_VERBS_MR_H

/**
 * @file
 * Memory regions and memory windows: registration rules, the access check
 * every lkey and rkey goes through, and the window life cycle (alloc, bind,
 * invalidate, dealloc). Pure object model: no I/O, no EAL. Records are
 * embedded in the caller's objects and their keys live in a
 * struct droce_key_table.
 *
 * ## Access flags of ibv_reg_mr(3), and what droce does with each
 *
 * - IBV_ACCESS_LOCAL_WRITE: honoured. lkey writes (RECV scatter, READ
 *   response, atomic result) need it.
 * - IBV_ACCESS_REMOTE_WRITE: honoured. Needs LOCAL_WRITE, else -EINVAL (man
 *   page; kernel ib_check_mr_access()).
 * - IBV_ACCESS_REMOTE_READ: honoured.
 * - IBV_ACCESS_REMOTE_ATOMIC: honoured. Needs LOCAL_WRITE, else -EINVAL (same
 *   sources).
 * - IBV_ACCESS_MW_BIND: honoured: windows bind only to MRs with it (IBA
 *   C10-73). It does not need LOCAL_WRITE: neither the man page nor the
 *   kernel asks for it; LOCAL_WRITE matters only when a window asks for
 *   remote write or atomic (C10-74, checked at bind).
 * - IBV_ACCESS_ZERO_BASED: honoured: the region's addresses start at 0 (the
 *   man page; Soft-RoCE ignores it), and it wins over any hca_va.
 * - IBV_ACCESS_ON_DEMAND: honoured when the caller registers the region as
 *   indirect (droce_mr_reg.indirect): nothing is mapped, the access check
 *   answers DROCE_ACC_ODP with the client's address and the owner moves the
 *   bytes itself (droced: through the client's /proc/self/mem, at the moment
 *   of the access). Implicit ODP (addr 0, length SIZE_MAX: the whole address
 *   space) only so, and with iova 0 (the kernel's mlx5 asks the same);
 *   not indirect it is -EOPNOTSUPP, as the kernel answers for a device
 *   without implicit ODP, and an explicit range is an ordinary mapped MR.
 *   An ODP region takes no atomic (ACCESS): a copy through the kernel is not
 *   atomic against the client's own CPUs. An indirect region without
 *   ON_DEMAND is an ordinary one its client could not move onto shared
 *   memory: it takes atomics (the owner serializes them, droce_access_atomic()).
 * - IBV_ACCESS_HUGETLB: accepted, ignored: a promise by the application
 *   that droce has no use for.
 * - IBV_ACCESS_FLUSH_GLOBAL, IBV_ACCESS_FLUSH_PERSISTENT (bits 8 and 9 of
 *   rdma-core 43+, absent from this machine's verbs.h): -EOPNOTSUPP, droce
 *   offers no FLUSH (kernel ib_check_mr_access() for a device without the
 *   capability).
 * - IBV_ACCESS_RELAXED_ORDERING and the rest of the optional range (bits
 *   20-29): accepted, ignored. A device may ignore optional flags (rdma-core's
 *   ibv_reg_mr_iova2() strips them when the kernel lacks support); droce
 *   places data in order, which relaxed ordering permits.
 * - Any other bit: -EINVAL (kernel: flags outside IB_ACCESS_SUPPORTED).
 *
 * Local read is always allowed (man page: "Local read access is always enabled").
 *
 * ## Addresses
 *
 * A region is seen through its keys at iova addresses: ibv_reg_mr() uses
 * iova = addr, ibv_reg_mr_iova() the caller's hca_va, ZERO_BASED 0. The byte
 * at iova X is the byte at addr + (X - iova) (man page), i.e. host +
 * (X - iova) in the engine's mapping. droce does not require addr and hca_va
 * to share a page offset (the kernel does, for page-table reasons droce does
 * not have).
 *
 * ## Zero-length accesses
 *
 * A zero-length RDMA READ or WRITE need not carry a valid R_Key or address
 * (IBA C9-88; rxe check_rkey()), and a zero-length SGE is never looked up
 * (rxe copy_data()). So a zero-length non-atomic access passes with any key
 * and yields a NULL host pointer. Atomics are always 8 bytes.
 *
 * ## Windows (ibv_alloc_mw(3), ibv_bind_mw(3))
 *
 * - Type 1 windows bind with ibv_bind_mw() semantics and may be rebound; a
 *   zero-length bind unbinds. Type 2 (2B: bound to the QP that bound it,
 *   usable only through that QP) bind by work request and only from the free
 *   state; they are unbound by LOCAL_INV, SEND_WITH_INV or dealloc.
 * - Every bind takes a new R_Key whose index is the window's and whose low
 *   byte is the consumer's choice (any value: known-bugs #3).
 * - A window enforces its own range, its own access flags and its own
 *   ZERO_BASED (man pages; Soft-RoCE checks only the MR's range). ZERO_BASED
 *   is honoured for type 1 windows too, as ibv_bind_mw(3) documents, where
 *   Soft-RoCE refuses it (IBA o10-36.2.2).
 * - Windows may bind to a ZERO_BASED MR: the window range is in the MR's
 *   iova space (Soft-RoCE refuses; nothing in the man pages does).
 * - An MR cannot be deregistered while windows are bound to it (-EBUSY;
 *   man page: "fails if any memory window is still bound").
 *
 * ## Threads
 *
 * Registration, bind, invalidate and dealloc mutate the key table and are
 * serialized by the caller (see droce_verbs_key.h). droce_access_check() runs
 * on any lcore concurrently with them. A bind racing a deregistration of the
 * same MR fails one of the two, never leaves a window on a dead MR.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_verbs_key.h"

/** FLUSH access flags of newer rdma-core (verbs.h of rdma-core 43+); refused. */
#define DROCE_ACCESS_FLUSH_GLOBAL	(1u << 8)
#define DROCE_ACCESS_FLUSH_PERSISTENT	(1u << 9)

/** Registration arguments, as ibv_reg_mr() / ibv_reg_mr_iova() take them. */
struct droce_mr_reg {
	uint32_t pd;		/**< protection domain handle */
	uint64_t addr;		/**< client address of the first byte */
	uint64_t length;	/**< bytes */
	uint64_t hca_va;	/**< iova of the first byte (= addr for ibv_reg_mr) */
	unsigned int access;	/**< IBV_ACCESS_* */
	void *host;		/**< engine mapping of the byte at addr (NULL if indirect) */
	bool indirect;		/**< no mapping: reached through mem_fd (ODP, or not movable) */
	int mem_fd;		/**< indirect: the owner's handle on the client's memory */
};

/** A registered memory region. Fields are fixed while its key resolves. */
struct droce_mr {
	uint32_t lkey;		/**< key for local access and window binds */
	uint32_t rkey;		/**< = lkey, remote rights or not (rxe since Linux 6.0) */
	uint32_t pd;
	unsigned int access;	/**< IBV_ACCESS_* as registered */
	uint64_t addr;		/**< client address of the first byte */
	uint64_t iova;		/**< address of the first byte as seen through the keys */
	uint64_t length;
	uint8_t *host;		/**< engine mapping of the first byte (NULL if indirect) */
	bool indirect;		/**< droce_mr_reg.indirect */
	int mem_fd;		/**< indirect: the owner's handle on the client's memory */
	_Atomic uint32_t mw_bound;	/**< windows bound to this MR */
	_Atomic bool dying;	/**< set while droce_mr_deregister() decides */
};

/** Window states (IBA 10.6.7: a type 2 window is Free or Valid). */
enum droce_mw_state {
	DROCE_MW_FREE = 0,	/**< allocated, not bound; its R_Key does not resolve */
	DROCE_MW_BOUND,		/**< bound; its R_Key resolves */
};

/** A memory window. Bound fields are fixed while its R_Key resolves. */
struct droce_mw {
	uint32_t rkey;		/**< current R_Key; resolves only while bound */
	uint32_t pd;
	enum ibv_mw_type type;
	enum droce_mw_state state;
	struct droce_mr *mr;	/**< bound: the region under the window */
	uint64_t addr;		/**< bound: window start, in the MR's iova space */
	uint64_t length;	/**< bound: bytes */
	unsigned int access;	/**< bound: IBV_ACCESS_REMOTE_* | ZERO_BASED */
	uint32_t qpn;		/**< bound type 2: the only QP that may use it */
};

/** A bind request: ibv_bind_mw() for type 1, an IBV_WR_BIND_MW for type 2. */
struct droce_mw_bind {
	uint32_t new_rkey;	/**< index must be the window's; low byte is the consumer's */
	struct droce_mr *mr;	/**< NULL only to unbind a type 1 window (addr = length = 0) */
	uint64_t addr;		/**< window start, in the MR's iova space */
	uint64_t length;	/**< 0 unbinds a type 1 window */
	unsigned int access;	/**< mw_access_flags */
	uint32_t qp_pd;		/**< PD of the QP the bind is posted on */
	uint32_t qpn;		/**< that QP */
	enum ibv_qp_type qp_type;	/**< that QP's type */
};

/** What an access needs. */
enum droce_acc_op {
	DROCE_ACC_LOCAL_READ,	/**< lkey, gather: always allowed */
	DROCE_ACC_LOCAL_WRITE,	/**< lkey, scatter: IBV_ACCESS_LOCAL_WRITE */
	DROCE_ACC_REMOTE_READ,	/**< rkey: IBV_ACCESS_REMOTE_READ */
	DROCE_ACC_REMOTE_WRITE,	/**< rkey: IBV_ACCESS_REMOTE_WRITE */
	DROCE_ACC_REMOTE_ATOMIC,	/**< rkey: IBV_ACCESS_REMOTE_ATOMIC, 8 bytes, 8-aligned */
};

/** Access check outcomes, in the order they are tested. */
#define DROCE_ACC_RESULTS(X) \
	X(OK,          "access allowed") \
	X(KEY_BAD,     "index 0 or beyond the table, or a window key used as an lkey") \
	X(KEY_INVALID, "no live object has this key: freed, invalidated, unbound, stale byte") \
	X(PD,          "the region or window belongs to another protection domain") \
	X(QP,          "type 2 window bound through another QP") \
	X(ACCESS,      "the region or window lacks the access right") \
	X(ALIGN,       "atomic not 8 bytes at an 8-aligned iova and engine address") \
	X(RANGE,       "outside the region or window, or address + length wraps") \
	X(ODP,         "access allowed, to an indirect region: *host is the client's address")

/** Access check result. */
enum droce_acc_result {
#define X(sym, text) DROCE_ACC_##sym,
	DROCE_ACC_RESULTS(X)
#undef X
	DROCE_ACC_RESULT_COUNT
};

/** Name of an access check result ("KEY_BAD"), "?" if out of range. */
const char *droce_acc_result_name(enum droce_acc_result r);

/**
 * Validate ibv_reg_mr() / ibv_reg_mr_iova() arguments (see the table above).
 * No side effects.
 *
 * @return 0;
 *   -EINVAL for REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE, an unknown
 *   access bit, or addr + length or iova + length reaching 2^64 (the end
 *   address must be representable, as in the kernel's ib_umem_get());
 *   -EOPNOTSUPP for a FLUSH flag, or implicit ODP not indirect;
 *   -EINVAL for implicit ODP at an iova other than 0.
 */
int droce_mr_reg_check(const struct droce_mr_reg *reg);

/**
 * Register: check @p reg, fill @p mr, take a key and publish it. Control
 * thread. @p mr is the caller's storage and must stay valid until
 * droce_mr_deregister() and a quiescent point of every lcore after it.
 *
 * @return 0;
 *   the errors of droce_mr_reg_check();
 *   -EINVAL if host is NULL while length is not 0 (and the region is not indirect);
 *   -ENOMEM if the table has no MR key left.
 */
int droce_mr_register(struct droce_key_table *t, const struct droce_mr_reg *reg,
		      struct droce_mr *mr);

/**
 * Reregister (ibv_rereg_mr(3)): @p mr takes the attributes of @p reg -- PD,
 * range, iova, access, mapping -- as droce_mr_register() would give them,
 * and keeps its keys. The man page lets resources be reused, and hardware and
 * Soft-RoCE keep the keys, so a peer holding the R_Key from before (rdma-core's
 * own tests do) reaches the region as it is now. Windows bound to @p mr were
 * checked against the old attributes: refused while one is. Control thread;
 * the key resolves nothing while the fields change.
 *
 * @return 0;
 *   the errors of droce_mr_reg_check(), -EINVAL if host is NULL while length
 *   is not 0 (both leave @p mr unchanged);
 *   -EBUSY while a window is bound to @p mr (unchanged);
 *   -EINVAL if @p mr is not registered in @p t.
 */
int droce_mr_reregister(struct droce_key_table *t, struct droce_mr *mr,
			const struct droce_mr_reg *reg);

/**
 * Deregister: the key stops resolving at once and its index goes to the
 * FIFO tail. Control thread.
 *
 * @return 0;
 *   -EBUSY while a window is bound to @p mr (it stays registered);
 *   -EINVAL if @p mr is not registered in @p t.
 */
int droce_mr_deregister(struct droce_key_table *t, struct droce_mr *mr);

/** The registered MR whose lkey is @p lkey, or NULL (for resolving a bind's MR). */
struct droce_mr *droce_mr_get(const struct droce_key_table *t, uint32_t lkey);

/**
 * Check one access and translate it. The requester calls it for every SGE
 * (lkey, LOCAL_READ for gathers, LOCAL_WRITE for scatters), the responder for
 * every RETH/AtomicETH (rkey, REMOTE_*). An rkey may name an MR or a window;
 * an lkey only an MR. An MR's rkey is its lkey; without the remote right an
 * access asks for, it fails with ACCESS. Safe on any lcore.
 *
 * @param key   lkey or rkey from the work request or packet (untrusted)
 * @param pd    PD of the QP doing the access
 * @param qpn   that QP (type 2 windows serve only the QP that bound them)
 * @param iova  first byte, in the key's address space (an offset from the
 *              window start for a ZERO_BASED window)
 * @param len   bytes; 0 passes with any key (IBA C9-88) unless atomic
 * @param op    what the access needs
 * @param[out] host  engine pointer to the first byte on success (NULL for
 *              len 0), untouched otherwise; the range [host, host + len) is
 *              inside the registered memory. For DROCE_ACC_ODP the client's
 *              address of the first byte instead (never to dereference)
 * @return DROCE_ACC_OK, DROCE_ACC_ODP (allowed; an indirect region:
 *   droce_access_odp() says how to reach it) or the first failing check.
 */
enum droce_acc_result droce_access_check(const struct droce_key_table *t, uint32_t key,
					 uint32_t pd, uint32_t qpn, uint64_t iova, uint64_t len,
					 enum droce_acc_op op, void **host);

/**
 * droce_access_check() for an access that answered DROCE_ACC_ODP: the same
 * checks, and on DROCE_ACC_ODP the client's address of the first byte and
 * the region's mem_fd, *odp whether it is on-demand paged (else an
 * ordinary region its client could not move). A mapped region answers
 * DROCE_ACC_OK (and nothing in @p addr, @p fd, @p odp). Safe on any lcore.
 */
enum droce_acc_result droce_access_odp(const struct droce_key_table *t, uint32_t key,
				       uint32_t pd, uint32_t qpn, uint64_t iova, uint64_t len,
				       enum droce_acc_op op, uint64_t *addr, int *fd, bool *odp);

/**
 * The checks of an 8-byte atomic at @p iova, and both ways to the word: a
 * mapped region answers DROCE_ACC_OK with *host its engine pointer, an
 * indirect one DROCE_ACC_ODP with *host NULL and *fd its mem_fd; either way
 * *addr is the client's address of the word, which names the same memory
 * whichever region reaches it (indirect memory is its client's private
 * memory), so an owner that serializes atomics by it serializes every
 * atomic on that word. Safe on any lcore.
 */
enum droce_acc_result droce_access_atomic(const struct droce_key_table *t, uint32_t key,
					  uint32_t pd, uint32_t qpn, uint64_t iova,
					  uint64_t **host, uint64_t *addr, int *fd);

/**
 * Allocate a window: reserve a key, unbound (its R_Key does not resolve yet).
 * Control thread. @p mw is the caller's storage, as for MRs.
 *
 * @return 0;
 *   -EINVAL if @p type is not IBV_MW_TYPE_1 or IBV_MW_TYPE_2;
 *   -ENOMEM if the table has no MW key left.
 */
int droce_mw_alloc(struct droce_key_table *t, uint32_t pd, enum ibv_mw_type type,
		   struct droce_mw *mw);

/**
 * Bind, rebind (type 1) or unbind (type 1, zero length) a window. On success
 * the old R_Key stops resolving, mw->rkey becomes @p b->new_rkey and resolves
 * if the window is bound; on failure nothing changes (ibv_bind_mw(3): the old
 * R_Key stays in force). Checks, in order:
 *
 * @return 0;
 *   -EINVAL: the QP is not RC, UC or XRC_SEND (ibv_bind_mw(3)); new_rkey's
 *     index is not the window's; no MR but a non-zero addr or length
 *     (verbs.h ibv_bind_mw); type 2 window not free (o10-37.2.30) or bound
 *     with no MR or zero length (o10-37.2.40); an access bit other than
 *     REMOTE_READ/WRITE/ATOMIC, ZERO_BASED, LOCAL_WRITE (ignored) or the
 *     optional range;
 *   -EPERM: the QP's PD is not the window's (C10-72; rdma-core's rxe
 *     provider for type 1) or the MR's PD is not the window's (verbs.h);
 *   -EINVAL: the MR is not registered or being deregistered; lacks MW_BIND
 *     (C10-73); the window asks for remote write or atomic and the MR lacks
 *     LOCAL_WRITE (C10-74); the window range leaves the MR or wraps (C10-75).
 */
int droce_mw_bind(struct droce_key_table *t, struct droce_mw *mw, const struct droce_mw_bind *b);

/**
 * Invalidate the window whose current R_Key is @p rkey: LOCAL_INV
 * (@p remote false) or SEND_WITH_INV (@p remote true). Its R_Key stops
 * resolving at once and the window returns to the free state, ready for the
 * next type 2 bind.
 *
 * @param pd   PD of the QP carrying the invalidation
 * @param qpn  that QP
 * @return 0;
 *   -EINVAL: @p rkey names no bound window (unknown, stale key byte, unbound),
 *     names a type 1 window (o10-37.2.26: type 1 windows are unbound by a
 *     zero-length bind), or names an MR (only fast-register MRs may be
 *     invalidated, as in rxe_invalidate_mr(); ibv_reg_mr() makes none);
 *   -EPERM: the window is in another PD, or a remote invalidation arrived on
 *     a QP other than the one a type 2B window is bound to.
 */
int droce_mw_invalidate(struct droce_key_table *t, uint32_t rkey, uint32_t pd, uint32_t qpn,
			bool remote);

/** The window whose current R_Key is @p rkey, bound or not, or NULL. Mutator only. */
struct droce_mw *droce_mw_get(const struct droce_key_table *t, uint32_t rkey);

/**
 * Deallocate a window, unbinding it first (ibv_alloc_mw(3)). Its R_Key stops
 * resolving at once and its index goes to the FIFO tail.
 *
 * @return 0; -EINVAL if @p mw is not allocated in @p t.
 */
int droce_mw_dealloc(struct droce_key_table *t, struct droce_mw *mw);

#endif /* DROCE_VERBS_MR_H */
