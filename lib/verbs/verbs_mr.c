/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Memory regions and windows (droce_verbs_mr.h): registration checks, the
 * lkey/rkey access check and translation, window bind / invalidate /
 * dealloc. Records are the caller's; keys live in a struct droce_key_table.
 *
 * Threads.
 *   - Control thread (or a worker running its command; the caller
 *     serializes): register, deregister, alloc, bind, invalidate, dealloc.
 *     These are the key table's mutator.
 *   - Any lcore: droce_access_check(), droce_mr_get().
 *   - An MR's fields never change while its key is published (a
 *     reregistration unpublishes the key, changes them, publishes it again). A window's
 *     bound fields change only while its key is unpublished (mw_unbind()
 *     unpublishes first, the new key is published last), so the access check
 *     copies them and rechecks the key before trusting the copy.
 *   - mr->mw_bound and mr->dying are the one cross-thread handshake: a bind
 *     counts itself in and then looks at dying; deregistration raises dying
 *     and then looks at the count (both sequentially consistent), so at
 *     least one of two racing calls sees the other and backs out.
 */

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "droce_core.h"
#include "droce_verbs_mr.h"

#define ACC_REMOTE (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)

/* Every access bit this rdma-core or a newer one defines outside the optional range. */
#define MR_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | ACC_REMOTE | IBV_ACCESS_MW_BIND | \
			 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | \
			 DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT)

/* Optional flags (RELAXED_ORDERING and future ones): a device may ignore them. */
#define ACCESS_OPTIONAL ((unsigned int)IBV_ACCESS_OPTIONAL_RANGE)

/* mw_access_flags a bind accepts; LOCAL_WRITE is meaningless for a window
 * (windows are reached only by rkey) and ignored rather than refused. */
#define MW_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | ACC_REMOTE | IBV_ACCESS_ZERO_BASED)

/* Atomic operands are 64 bits, naturally aligned (IBA 9.4.5). */
#define ATOMIC_BYTES 8u

static const char *const acc_result_name[DROCE_ACC_RESULT_COUNT] = {
#define X(sym, text) [DROCE_ACC_##sym] = #sym,
	DROCE_ACC_RESULTS(X)
#undef X
};

/* Access right each operation needs; local read needs none. */
static const unsigned int acc_need[] = {
	[DROCE_ACC_LOCAL_READ]    = 0,
	[DROCE_ACC_LOCAL_WRITE]   = IBV_ACCESS_LOCAL_WRITE,
	[DROCE_ACC_REMOTE_READ]   = IBV_ACCESS_REMOTE_READ,
	[DROCE_ACC_REMOTE_WRITE]  = IBV_ACCESS_REMOTE_WRITE,
	[DROCE_ACC_REMOTE_ATOMIC] = IBV_ACCESS_REMOTE_ATOMIC,
};

const char *
droce_acc_result_name(enum droce_acc_result r)
{
	return (unsigned int)r < DROCE_ACC_RESULT_COUNT ? acc_result_name[r] : "?";
}

/* True if [start, start + len) lies in [base, base + size); no wrap-around. */
static bool
range_inside(uint64_t start, uint64_t len, uint64_t base, uint64_t size)
{
	return start >= base && len <= size && start - base <= size - len;
}

int
droce_mr_reg_check(const struct droce_mr_reg *reg)
{
	unsigned int a = reg->access;
	uint64_t iova = (a & IBV_ACCESS_ZERO_BASED) ? 0 : reg->hca_va;

	if ((a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(a & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (a & ~(MR_ACCESS_KNOWN | ACCESS_OPTIONAL))
		return -EINVAL;
	if (a & (DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT))
		return -EOPNOTSUPP;
	/* Implicit ODP: the whole address space, reached on use; no mapping can hold it. */
	if ((a & IBV_ACCESS_ON_DEMAND) && reg->addr == 0 && reg->length == UINT64_MAX) {
		if (!reg->indirect)
			return -EOPNOTSUPP;
		return iova == 0 ? 0 : -EINVAL;
	}
	/* Both views of the region must fit below 2^64 (kernel ib_umem_get()). */
	if (reg->length > UINT64_MAX - reg->addr || reg->length > UINT64_MAX - iova)
		return -EINVAL;
	return 0;
}

/* The attributes of a registration; the keys are not touched. */
static int
mr_set(struct droce_mr *mr, const struct droce_mr_reg *reg)
{
	int ret = droce_mr_reg_check(reg);

	if (ret < 0)
		return ret;
	if (reg->host == NULL && reg->length != 0 && !reg->indirect)
		return -EINVAL;
	mr->pd = reg->pd;
	mr->access = reg->access;
	mr->addr = reg->addr;
	mr->iova = (reg->access & IBV_ACCESS_ZERO_BASED) ? 0 : reg->hca_va;
	mr->length = reg->length;
	mr->host = reg->indirect ? NULL : reg->host;
	mr->indirect = reg->indirect;
	mr->mem_fd = reg->indirect ? reg->mem_fd : -1;
	return 0;
}

int
droce_mr_register(struct droce_key_table *t, const struct droce_mr_reg *reg,
		  struct droce_mr *mr)
{
	uint32_t key;
	int ret;

	ret = mr_set(mr, reg);
	if (ret < 0)
		return ret;
	atomic_init(&mr->mw_bound, 0);
	atomic_init(&mr->dying, false);

	ret = droce_key_alloc(t, DROCE_KEY_MR, mr, &key);
	if (ret < 0)
		return ret;
	mr->lkey = key;
	/* The rkey is the lkey with or without remote rights (hardware and
	 * Soft-RoCE since 6.0): the rights decide, and a right added later by
	 * droce_mr_reregister() works with the key handed out before. */
	mr->rkey = key;
	return droce_key_publish(t, key);
}

/* seq_cst pair with droce_mw_bind(): raise dying, then read the count. */
static bool
mr_claim_unbound(struct droce_mr *mr)
{
	atomic_store(&mr->dying, true);
	if (atomic_load(&mr->mw_bound) == 0)
		return true;
	atomic_store(&mr->dying, false);
	return false;
}

int
droce_mr_reregister(struct droce_key_table *t, struct droce_mr *mr,
		    const struct droce_mr_reg *reg)
{
	struct droce_mr next = *mr;
	int ret;

	if (droce_mr_get(t, mr->lkey) != mr)
		return -EINVAL;
	ret = mr_set(&next, reg);
	if (ret < 0)
		return ret;
	if (!mr_claim_unbound(mr))
		return -EBUSY;
	/* fields change only while the key resolves nothing (the header's rule) */
	droce_key_unpublish(t, mr->lkey);
	ret = mr_set(mr, reg);
	atomic_store(&mr->dying, false);
	droce_key_publish(t, mr->lkey);
	return ret;
}

struct droce_mr *
droce_mr_get(const struct droce_key_table *t, uint32_t lkey)
{
	enum droce_key_kind kind;
	void *obj = droce_key_lookup(t, lkey, &kind);

	return obj != NULL && kind == DROCE_KEY_MR ? obj : NULL;
}

int
droce_mr_deregister(struct droce_key_table *t, struct droce_mr *mr)
{
	if (droce_mr_get(t, mr->lkey) != mr)
		return -EINVAL;
	if (!mr_claim_unbound(mr))
		return -EBUSY;
	return droce_key_free(t, mr->lkey);
}

/* A failed lookup: say whether the key could never have been valid here. */
static enum droce_acc_result
acc_key_fail(const struct droce_key_table *t, uint32_t key, bool local)
{
	uint32_t idx = droce_key_index(key);

	if (idx == 0 || idx > droce_key_table_capacity(t))
		return DROCE_ACC_KEY_BAD;
	if (local && droce_key_kind_at(t, key) == DROCE_KEY_MW)
		return DROCE_ACC_KEY_BAD;
	return DROCE_ACC_KEY_INVALID;
}

/*
 * An indirect region: no engine pointer, the client's address. No atomic
 * on an on-demand paged one: odp_caps claim none (the owner's copy through
 * the kernel is not atomic against the client's CPUs). An ordinary one
 * takes them, as its rights say: droce_access_atomic().
 */
static __attribute__((noinline)) enum droce_acc_result
acc_odp(const struct droce_mr *mr, uint64_t off, enum droce_acc_op op, void **host)
{
	if (op == DROCE_ACC_REMOTE_ATOMIC && (mr->access & IBV_ACCESS_ON_DEMAND))
		return DROCE_ACC_ACCESS;
	*host = (void *)(uintptr_t)(mr->addr + off);
	return DROCE_ACC_ODP;
}

/* Translate an offset in the MR, checking the engine-side atomic alignment. */
static inline enum droce_acc_result
acc_finish(const struct droce_mr *mr, uint64_t off, enum droce_acc_op op, void **host)
{
	uint8_t *p;

	if (__builtin_expect(mr->indirect, 0))
		return acc_odp(mr, off, op, host);	/* no host mapping: mr->host is NULL */
	p = mr->host + off;
	/* An iova-registered MR may put an aligned iova on an unaligned host
	 * byte; an atomic there would not be atomic. */
	if (op == DROCE_ACC_REMOTE_ATOMIC && ((uintptr_t)p & (ATOMIC_BYTES - 1)) != 0)
		return DROCE_ACC_ALIGN;
	*host = p;
	return DROCE_ACC_OK;
}

static bool
acc_atomic_misaligned(enum droce_acc_op op, uint64_t iova, uint64_t len)
{
	return op == DROCE_ACC_REMOTE_ATOMIC &&
	       (len != ATOMIC_BYTES || (iova & (ATOMIC_BYTES - 1)) != 0);
}

/* The checks of an MR's own key: *off is the access's offset in it. */
static inline enum droce_acc_result
acc_mr(const struct droce_mr *mr, uint32_t pd, uint64_t iova, uint64_t len, enum droce_acc_op op,
       uint64_t *off)
{
	unsigned int need = acc_need[op];

	if (mr->pd != pd)
		return DROCE_ACC_PD;
	if ((mr->access & need) != need)
		return DROCE_ACC_ACCESS;
	if (acc_atomic_misaligned(op, iova, len))
		return DROCE_ACC_ALIGN;
	if (!range_inside(iova, len, mr->iova, mr->length))
		return DROCE_ACC_RANGE;
	*off = iova - mr->iova;
	return DROCE_ACC_OK;
}

/* The checks of a window's key: *mr is the region under it, *off the offset there. */
static enum droce_acc_result
acc_mw(const struct droce_key_table *t, const struct droce_mw *mw, uint32_t key, uint32_t pd,
       uint32_t qpn, uint64_t iova, uint64_t len, enum droce_acc_op op,
       const struct droce_mr **mr, uint64_t *off)
{
	unsigned int need = acc_need[op];
	struct droce_mw w = *mw;	/* seqlock read: copy, then recheck the key */
	uint64_t woff;

	if (!droce_key_valid(t, key) || w.state != DROCE_MW_BOUND || w.mr == NULL)
		return DROCE_ACC_KEY_INVALID;
	if (w.pd != pd)
		return DROCE_ACC_PD;
	if (w.type == IBV_MW_TYPE_2 && w.qpn != qpn)
		return DROCE_ACC_QP;
	if ((w.access & need) != need)
		return DROCE_ACC_ACCESS;
	if (acc_atomic_misaligned(op, iova, len))
		return DROCE_ACC_ALIGN;
	/* The window's own bounds, and its own ZERO_BASED (ibv_bind_mw(3)). */
	if (w.access & IBV_ACCESS_ZERO_BASED) {
		if (!range_inside(iova, len, 0, w.length))
			return DROCE_ACC_RANGE;
		woff = iova;
	} else {
		if (!range_inside(iova, len, w.addr, w.length))
			return DROCE_ACC_RANGE;
		woff = iova - w.addr;
	}
	/* The bind put [addr, addr + length) inside the MR, which stays
	 * registered while the window is bound. */
	*mr = w.mr;
	*off = w.addr - w.mr->iova + woff;
	return DROCE_ACC_OK;
}

/*
 * Every check of one access but the last translation: *mr the region
 * reached, *off the offset in it. A zero-length access leaves *mr NULL.
 */
static inline __attribute__((always_inline)) enum droce_acc_result
acc_lookup(const struct droce_key_table *t, uint32_t key, uint32_t pd, uint32_t qpn,
	   uint64_t iova, uint64_t len, enum droce_acc_op op, const struct droce_mr **mr,
	   uint64_t *off)
{
	bool local = op == DROCE_ACC_LOCAL_READ || op == DROCE_ACC_LOCAL_WRITE;
	enum droce_key_kind kind;
	void *obj;

	*mr = NULL;
	if ((unsigned int)op >= DROCE_DIM(acc_need))
		return DROCE_ACC_ACCESS;
	/* IBA C9-88: a zero-length transfer carries no meaningful key or address. */
	if (len == 0 && op != DROCE_ACC_REMOTE_ATOMIC)
		return DROCE_ACC_OK;
	obj = droce_key_lookup(t, key, &kind);
	if (obj == NULL)
		return acc_key_fail(t, key, local);
	if (kind == DROCE_KEY_MW) {
		if (local)
			return DROCE_ACC_KEY_BAD;
		return acc_mw(t, obj, key, pd, qpn, iova, len, op, mr, off);
	}
	*mr = obj;
	return acc_mr(obj, pd, iova, len, op, off);
}

enum droce_acc_result
droce_access_check(const struct droce_key_table *t, uint32_t key, uint32_t pd, uint32_t qpn,
		   uint64_t iova, uint64_t len, enum droce_acc_op op, void **host)
{
	const struct droce_mr *mr;
	uint64_t off = 0;
	enum droce_acc_result r = acc_lookup(t, key, pd, qpn, iova, len, op, &mr, &off);

	if (r != DROCE_ACC_OK)
		return r;
	if (mr == NULL) {	/* zero length */
		*host = NULL;
		return DROCE_ACC_OK;
	}
	return acc_finish(mr, off, op, host);
}

enum droce_acc_result
droce_access_odp(const struct droce_key_table *t, uint32_t key, uint32_t pd, uint32_t qpn,
		 uint64_t iova, uint64_t len, enum droce_acc_op op, uint64_t *addr, int *fd,
		 bool *odp)
{
	const struct droce_mr *mr;
	uint64_t off = 0;
	void *host;
	enum droce_acc_result r = acc_lookup(t, key, pd, qpn, iova, len, op, &mr, &off);

	if (r != DROCE_ACC_OK || mr == NULL)
		return r;
	r = acc_finish(mr, off, op, &host);
	if (r == DROCE_ACC_ODP) {
		*addr = (uint64_t)(uintptr_t)host;
		*fd = mr->mem_fd;
		*odp = mr->access & IBV_ACCESS_ON_DEMAND;
	}
	return r;
}

enum droce_acc_result
droce_access_atomic(const struct droce_key_table *t, uint32_t key, uint32_t pd, uint32_t qpn,
		    uint64_t iova, uint64_t **host, uint64_t *addr, int *fd)
{
	const struct droce_mr *mr;
	uint64_t off = 0;
	void *p;
	enum droce_acc_result r = acc_lookup(t, key, pd, qpn, iova, ATOMIC_BYTES,
					     DROCE_ACC_REMOTE_ATOMIC, &mr, &off);

	if (r != DROCE_ACC_OK)
		return r;
	r = acc_finish(mr, off, DROCE_ACC_REMOTE_ATOMIC, &p);
	if (r == DROCE_ACC_OK) {
		*host = p;
	} else if (r == DROCE_ACC_ODP) {
		*host = NULL;
		*fd = mr->mem_fd;
	} else {
		return r;
	}
	*addr = mr->addr + off;
	return r;
}

int
droce_mw_alloc(struct droce_key_table *t, uint32_t pd, enum ibv_mw_type type,
	       struct droce_mw *mw)
{
	uint32_t key;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return -EINVAL;
	memset(mw, 0, sizeof(*mw));
	mw->pd = pd;
	mw->type = type;
	mw->state = DROCE_MW_FREE;
	ret = droce_key_alloc(t, DROCE_KEY_MW, mw, &key);
	if (ret < 0)
		return ret;
	mw->rkey = key;
	return 0;
}

struct droce_mw *
droce_mw_get(const struct droce_key_table *t, uint32_t rkey)
{
	struct droce_mw *mw = droce_key_owner(t, rkey, DROCE_KEY_MW);

	return mw != NULL && mw->rkey == rkey ? mw : NULL;
}

/* Unbind: the key stops resolving first, then the MR is released. */
static void
mw_unbind(struct droce_key_table *t, struct droce_mw *mw)
{
	struct droce_mr *mr = mw->mr;

	if (mw->state != DROCE_MW_BOUND)
		return;
	droce_key_unpublish(t, mw->rkey);
	mw->state = DROCE_MW_FREE;
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
	atomic_fetch_sub(&mr->mw_bound, 1);
}

/* The MR-side checks of a bind (C10-73 .. C10-75). */
static int
mw_bind_check_mr(const struct droce_key_table *t, const struct droce_mw_bind *b)
{
	const struct droce_mr *mr = b->mr;

	if (droce_mr_get(t, mr->lkey) != mr)
		return -EINVAL;
	if (!(mr->access & IBV_ACCESS_MW_BIND))
		return -EINVAL;
	if ((b->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (!range_inside(b->addr, b->length, mr->iova, mr->length))
		return -EINVAL;
	return 0;
}

int
droce_mw_bind(struct droce_key_table *t, struct droce_mw *mw, const struct droce_mw_bind *b)
{
	struct droce_mr *mr = b->mr;
	int ret;

	if (b->qp_type != IBV_QPT_RC && b->qp_type != IBV_QPT_UC &&
	    b->qp_type != IBV_QPT_XRC_SEND)
		return -EINVAL;
	if (droce_key_owner(t, mw->rkey, DROCE_KEY_MW) != mw ||
	    droce_key_index(b->new_rkey) != droce_key_index(mw->rkey))
		return -EINVAL;
	if (mr == NULL && (b->addr != 0 || b->length != 0))
		return -EINVAL;
	if (mw->type == IBV_MW_TYPE_2 &&
	    (mw->state != DROCE_MW_FREE || mr == NULL || b->length == 0))
		return -EINVAL;
	if (b->access & ~(MW_ACCESS_OK | ACCESS_OPTIONAL))
		return -EINVAL;
	if (b->qp_pd != mw->pd)
		return -EPERM;

	if (b->length == 0) {
		/* Type 1 only (checked above): a zero-length bind unbinds. */
		mw_unbind(t, mw);
		mw->rkey = b->new_rkey;
		return 0;
	}

	if (mr->pd != mw->pd)
		return -EPERM;
	ret = mw_bind_check_mr(t, b);
	if (ret < 0)
		return ret;

	/* seq_cst pair with droce_mr_deregister(): count in, then read dying.
	 * Count in before unbinding so a rebind to the same MR never drops
	 * its count to 0. */
	atomic_fetch_add(&mr->mw_bound, 1);
	if (atomic_load(&mr->dying)) {
		atomic_fetch_sub(&mr->mw_bound, 1);
		return -EINVAL;
	}
	mw_unbind(t, mw);

	mw->mr = mr;
	mw->addr = b->addr;
	mw->length = b->length;
	mw->access = b->access & (ACC_REMOTE | IBV_ACCESS_ZERO_BASED);
	mw->qpn = mw->type == IBV_MW_TYPE_2 ? b->qpn : 0;
	mw->state = DROCE_MW_BOUND;
	mw->rkey = b->new_rkey;
	return droce_key_publish(t, mw->rkey);
}

int
droce_mw_invalidate(struct droce_key_table *t, uint32_t rkey, uint32_t pd, uint32_t qpn,
		    bool remote)
{
	enum droce_key_kind kind;
	struct droce_mw *mw = droce_key_lookup(t, rkey, &kind);

	if (mw == NULL || kind != DROCE_KEY_MW || mw->state != DROCE_MW_BOUND)
		return -EINVAL;
	if (mw->type == IBV_MW_TYPE_1)
		return -EINVAL;
	if (mw->pd != pd || (remote && mw->qpn != qpn))
		return -EPERM;
	mw_unbind(t, mw);
	return 0;
}

int
droce_mw_dealloc(struct droce_key_table *t, struct droce_mw *mw)
{
	if (droce_key_owner(t, mw->rkey, DROCE_KEY_MW) != mw)
		return -EINVAL;
	mw_unbind(t, mw);
	return droce_key_free(t, mw->rkey);
}
