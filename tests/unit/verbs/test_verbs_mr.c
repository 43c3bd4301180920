/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * TCases "mr_reg" (ibv_reg_mr argument rules, registration, reregistration,
 * deregistration)
 * and "mr_access" (droce_access_check() through MR keys).
 */

#include "droce_verbs_mr.h"	/* first: the header stands alone */

#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "test_verbs.h"

#define SEED	0x5eed0001ull
#define PD	7
#define QPN	0x11

#define LW	IBV_ACCESS_LOCAL_WRITE
#define RW	IBV_ACCESS_REMOTE_WRITE
#define RR	IBV_ACCESS_REMOTE_READ
#define RA	IBV_ACCESS_REMOTE_ATOMIC
#define BIND	IBV_ACCESS_MW_BIND
#define ZB	IBV_ACCESS_ZERO_BASED
#define ALL_REMOTE (LW | RW | RR | RA)

/* The client's address of the region: deliberately not the engine's
 * mapping (buf), so a translation that used it would show. */
#define CLIENT_VA 0x7f1234560000ull

static struct droce_key_table *tbl;
static alignas(64) uint8_t buf[4096];

static void
setup(void)
{
	ck_assert_int_eq(droce_key_table_create(8, 8, SEED, &tbl), 0);
}

static void
teardown(void)
{
	droce_key_table_destroy(tbl);
	tbl = NULL;
}

static struct droce_mr_reg
reg_args(unsigned int access)
{
	return (struct droce_mr_reg){
		.pd = PD,
		.addr = CLIENT_VA,
		.length = sizeof(buf),
		.hca_va = CLIENT_VA,
		.access = access,
		.host = buf,
	};
}

static int
reg_check(unsigned int access)
{
	struct droce_mr_reg r = reg_args(access);

	return droce_mr_reg_check(&r);
}

static void
must_register(struct droce_mr *mr, const struct droce_mr_reg *r)
{
	ck_assert_int_eq(droce_mr_register(tbl, r, mr), 0);
}

static enum droce_acc_result
acc(uint32_t key, uint32_t pd, uint64_t iova, uint64_t len, enum droce_acc_op op, void **host)
{
	return droce_access_check(tbl, key, pd, QPN, iova, len, op, host);
}

/* ---------------------------------------------------------------- mr_reg */

START_TEST(test_mr_reg_remote_write_or_atomic_needs_local_write)
{
	ck_assert_int_eq(reg_check(RW), -EINVAL);
	ck_assert_int_eq(reg_check(RA), -EINVAL);
	ck_assert_int_eq(reg_check(RW | RR | RA | BIND), -EINVAL);
	ck_assert_int_eq(reg_check(LW | RW), 0);
	ck_assert_int_eq(reg_check(LW | RA), 0);
	ck_assert_int_eq(reg_check(ALL_REMOTE | BIND | ZB), 0);
	/* Remote read alone, and no access at all (local read is implicit). */
	ck_assert_int_eq(reg_check(RR), 0);
	ck_assert_int_eq(reg_check(0), 0);
}
END_TEST

START_TEST(test_mr_reg_mw_bind_does_not_need_local_write)
{
	ck_assert_int_eq(reg_check(BIND), 0);
	ck_assert_int_eq(reg_check(BIND | RR), 0);
}
END_TEST

START_TEST(test_mr_reg_unknown_access_bits_are_einval)
{
	unsigned int bit;

	/* 10..19 and 30, 31 are neither defined nor in the optional range */
	for (bit = 10; bit < 20; bit++)
		ck_assert_msg(reg_check(LW | (1u << bit)) == -EINVAL, "bit %u", bit);
	ck_assert_int_eq(reg_check(LW | (1u << 30)), -EINVAL);
	ck_assert_int_eq(reg_check(LW | (1u << 31)), -EINVAL);
}
END_TEST

START_TEST(test_mr_reg_flush_flags_are_eopnotsupp)
{
	ck_assert_int_eq(reg_check(LW | DROCE_ACCESS_FLUSH_GLOBAL), -EOPNOTSUPP);
	ck_assert_int_eq(reg_check(LW | DROCE_ACCESS_FLUSH_PERSISTENT), -EOPNOTSUPP);
	ck_assert_uint_eq(DROCE_ACCESS_FLUSH_GLOBAL, 256);	/* rdma-core's values */
	ck_assert_uint_eq(DROCE_ACCESS_FLUSH_PERSISTENT, 512);
}
END_TEST

START_TEST(test_mr_reg_optional_bits_are_accepted_and_ignored)
{
	struct droce_mr_reg r = reg_args(LW | RR | IBV_ACCESS_RELAXED_ORDERING | (1u << 29));
	struct droce_mr mr;
	void *host;

	ck_assert_int_eq(reg_check(IBV_ACCESS_RELAXED_ORDERING), 0);
	ck_assert_int_eq(reg_check(1u << 21), 0);
	must_register(&mr, &r);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, CLIENT_VA, 16,
					    DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
}
END_TEST

START_TEST(test_mr_reg_explicit_odp_registers_and_implicit_odp_is_eopnotsupp)
{
	struct droce_mr_reg r = reg_args(LW | RW | IBV_ACCESS_ON_DEMAND);
	struct droce_mr mr;
	void *host;

	must_register(&mr, &r);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, CLIENT_VA, 64,
					    DROCE_ACC_REMOTE_WRITE, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf);

	r.addr = 0;
	r.hca_va = 0;
	r.length = SIZE_MAX;
	ck_assert_int_eq(droce_mr_reg_check(&r), -EOPNOTSUPP);	/* not odp: no mapping holds it */
}
END_TEST

/* An on-demand paged region: no mapping, the client's address and the owner's fd. */
START_TEST(test_mr_odp_answers_the_client_address_and_refuses_atomics)
{
	struct droce_mr_reg r = reg_args(LW | RW | RR | RA | IBV_ACCESS_ON_DEMAND);
	struct droce_mr mr;
	uint64_t addr = 0;
	void *host = NULL;
	bool odp = false;
	int fd = -1;

	r.host = NULL;
	r.indirect = true;
	r.mem_fd = 42;
	r.hca_va = 0x9000;		/* iova and address apart */
	must_register(&mr, &r);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, 0x9000 + 100, 64,
					    DROCE_ACC_REMOTE_WRITE, &host), DROCE_ACC_ODP);
	ck_assert_ptr_eq(host, (void *)(uintptr_t)(CLIENT_VA + 100));
	ck_assert_int_eq(droce_access_odp(tbl, mr.lkey, PD, QPN, 0x9000 + 8, 16,
					  DROCE_ACC_LOCAL_READ, &addr, &fd, &odp), DROCE_ACC_ODP);
	ck_assert_uint_eq(addr, CLIENT_VA + 8);
	ck_assert_int_eq(fd, 42);
	ck_assert(odp);
	/* the usual checks still come first */
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD + 1, QPN, 0x9000, 8,
					    DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_PD);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, 0x9000 + sizeof(buf), 1,
					    DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_RANGE);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, 0x9000, 8,
					    DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_ACCESS);
	/* zero length needs no memory */
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, 0, 0,
					    DROCE_ACC_REMOTE_WRITE, &host), DROCE_ACC_OK);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
}
END_TEST

START_TEST(test_mr_implicit_odp_covers_the_address_space_at_iova_0)
{
	struct droce_mr_reg r = reg_args(LW | RW | IBV_ACCESS_ON_DEMAND);
	struct droce_mr mr;
	uint64_t addr = 0;
	bool odp = false;
	int fd = -1;

	r.addr = 0;
	r.hca_va = 0;
	r.length = UINT64_MAX;
	r.host = NULL;
	r.indirect = true;
	r.mem_fd = 7;
	must_register(&mr, &r);
	ck_assert_int_eq(droce_access_odp(tbl, mr.rkey, PD, QPN, 0x7fff12345678ull, 4096,
					  DROCE_ACC_REMOTE_WRITE, &addr, &fd, &odp), DROCE_ACC_ODP);
	ck_assert_uint_eq(addr, 0x7fff12345678ull);
	ck_assert(odp);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
	r.hca_va = 0x1000;		/* implicit at another iova: EINVAL, as mlx5 */
	ck_assert_int_eq(droce_mr_reg_check(&r), -EINVAL);
	r.hca_va = 0;
	r.access = LW;			/* indirect without ON_DEMAND: an ordinary range */
	r.length = 4096;
	ck_assert_int_eq(droce_mr_reg_check(&r), 0);
}
END_TEST

/*
 * An ordinary region its client could not move: indirect without
 * ON_DEMAND. It answers as an ODP one but takes atomics, and
 * droce_access_atomic() names the word by its client address.
 */
START_TEST(test_mr_indirect_ordinary_takes_atomics_by_client_address)
{
	struct droce_mr_reg r = reg_args(LW | RW | RR | RA);
	struct droce_mr mr, mapped;
	uint64_t addr = 0, *host = (uint64_t *)(uintptr_t)1;
	void *p = NULL;
	bool odp;
	int fd = -1;

	r.host = NULL;
	r.indirect = true;
	r.mem_fd = 42;
	r.hca_va = 0x9000;
	must_register(&mr, &r);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, 0x9000 + 64, 64,
					    DROCE_ACC_REMOTE_WRITE, &p), DROCE_ACC_ODP);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, 0x9000 + 16, 8,
					    DROCE_ACC_REMOTE_ATOMIC, &p), DROCE_ACC_ODP);
	ck_assert_int_eq(droce_access_atomic(tbl, mr.rkey, PD, QPN, 0x9000 + 16, &host, &addr,
					     &fd), DROCE_ACC_ODP);
	ck_assert_ptr_null(host);
	ck_assert_uint_eq(addr, CLIENT_VA + 16);
	ck_assert_int_eq(fd, 42);
	odp = true;
	ck_assert_int_eq(droce_access_odp(tbl, mr.lkey, PD, QPN, 0x9000, 64, DROCE_ACC_LOCAL_WRITE,
					  &addr, &fd, &odp), DROCE_ACC_ODP);
	ck_assert(!odp);			/* an ordinary region: counted apart */
	/* misaligned and out of range as for any region */
	ck_assert_int_eq(droce_access_atomic(tbl, mr.rkey, PD, QPN, 0x9000 + 4, &host, &addr,
					     &fd), DROCE_ACC_ALIGN);
	ck_assert_int_eq(droce_access_atomic(tbl, mr.rkey, PD, QPN, 0x9000 + sizeof(buf), &host,
					     &addr, &fd), DROCE_ACC_RANGE);
	/* a mapped region: the engine pointer and the same client address */
	r = reg_args(LW | RW | RA);
	must_register(&mapped, &r);
	ck_assert_int_eq(droce_access_atomic(tbl, mapped.rkey, PD, QPN, CLIENT_VA + 16, &host,
					     &addr, &fd), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, (uint64_t *)(void *)(buf + 16));
	ck_assert_uint_eq(addr, CLIENT_VA + 16);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mapped), 0);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
	/* without the right: refused */
	r = reg_args(LW | RW);
	r.host = NULL;
	r.indirect = true;
	must_register(&mr, &r);
	ck_assert_int_eq(droce_access_atomic(tbl, mr.rkey, PD, QPN, CLIENT_VA, &host, &addr, &fd),
			 DROCE_ACC_ACCESS);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
}
END_TEST

START_TEST(test_mr_reg_hugetlb_is_accepted)
{
	ck_assert_int_eq(reg_check(LW | IBV_ACCESS_HUGETLB), 0);
	ck_assert_int_eq(reg_check(LW | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB), 0);
}
END_TEST

START_TEST(test_mr_reg_range_reaching_2_pow_64_is_einval)
{
	struct droce_mr_reg r = reg_args(LW);

	/* The end address (addr + length) must be representable, as in the
	 * kernel's ib_umem_get(): a region may not end at 2^64. */
	r.addr = r.hca_va = UINT64_MAX - 9;
	r.length = 9;			/* ends at 2^64 - 1 */
	ck_assert_int_eq(droce_mr_reg_check(&r), 0);
	r.length = 10;			/* would end at 2^64 */
	ck_assert_int_eq(droce_mr_reg_check(&r), -EINVAL);
	r.length = UINT64_MAX;
	ck_assert_int_eq(droce_mr_reg_check(&r), -EINVAL);

	r = reg_args(LW);
	r.hca_va = UINT64_MAX - 100;	/* the iova view wraps, the address does not */
	ck_assert_int_eq(droce_mr_reg_check(&r), -EINVAL);
	r.access |= ZB;			/* ZERO_BASED: the iova view starts at 0 */
	ck_assert_int_eq(droce_mr_reg_check(&r), 0);
}
END_TEST

START_TEST(test_mr_register_fills_keys_addresses_and_publishes)
{
	struct droce_mr_reg r = reg_args(LW | RR);
	struct droce_mr a, b, c;

	must_register(&a, &r);
	ck_assert_uint_ne(a.lkey, 0);
	ck_assert_uint_eq(a.rkey, a.lkey);	/* a remote right: the key is an rkey too */
	ck_assert_uint_eq(a.iova, CLIENT_VA);
	ck_assert_uint_eq(a.addr, CLIENT_VA);
	ck_assert_uint_eq(a.length, sizeof(buf));
	ck_assert_uint_eq(a.pd, PD);
	ck_assert_ptr_eq(a.host, buf);
	ck_assert_ptr_eq(droce_mr_get(tbl, a.lkey), &a);

	r.access = LW | BIND;
	must_register(&b, &r);
	ck_assert_uint_eq(b.rkey, b.lkey);	/* no remote right: the rights refuse, not the key */
	ck_assert_uint_ne(b.lkey, a.lkey);

	r.access = LW | ZB;
	r.hca_va = 0xabc000;			/* ZERO_BASED wins over hca_va */
	must_register(&c, &r);
	ck_assert_uint_eq(c.iova, 0);
	ck_assert_uint_eq(droce_key_table_count(tbl, DROCE_KEY_MR), 3);
}
END_TEST

START_TEST(test_mr_register_needs_a_host_mapping_unless_empty)
{
	struct droce_mr_reg r = reg_args(LW);
	struct droce_mr mr;

	r.host = NULL;
	ck_assert_int_eq(droce_mr_register(tbl, &r, &mr), -EINVAL);
	r.length = 0;
	ck_assert_int_eq(droce_mr_register(tbl, &r, &mr), 0);
}
END_TEST

START_TEST(test_mr_register_refuses_bad_flags_without_taking_a_key)
{
	struct droce_mr_reg r = reg_args(RW);
	struct droce_mr mr;

	ck_assert_int_eq(droce_mr_register(tbl, &r, &mr), -EINVAL);
	r.access = LW | DROCE_ACCESS_FLUSH_GLOBAL;
	ck_assert_int_eq(droce_mr_register(tbl, &r, &mr), -EOPNOTSUPP);
	ck_assert_uint_eq(droce_key_table_count(tbl, DROCE_KEY_MR), 0);
}
END_TEST

START_TEST(test_mr_register_beyond_max_mr_is_enomem)
{
	struct droce_mr_reg r = reg_args(LW);
	struct droce_mr mr[9];
	int i;

	for (i = 0; i < 8; i++)
		must_register(&mr[i], &r);
	ck_assert_int_eq(droce_mr_register(tbl, &r, &mr[8]), -ENOMEM);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr[3]), 0);
	must_register(&mr[8], &r);
}
END_TEST

START_TEST(test_mr_deregister_stops_the_key_at_once_and_twice_is_einval)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	struct droce_mr mr;
	void *host;

	must_register(&mr, &r);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
	ck_assert_ptr_null(droce_mr_get(tbl, mr.lkey));
	ck_assert_int_eq(droce_access_check(tbl, mr.lkey, PD, QPN, CLIENT_VA, 8,
					    DROCE_ACC_LOCAL_READ, &host), DROCE_ACC_KEY_INVALID);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, CLIENT_VA, 8,
					    DROCE_ACC_REMOTE_WRITE, &host), DROCE_ACC_KEY_INVALID);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), -EINVAL);
	ck_assert_uint_eq(droce_key_table_count(tbl, DROCE_KEY_MR), 0);
}
END_TEST

/* ibv_rereg_mr(3): the new attributes, the same keys. */
START_TEST(test_mr_reregister_keeps_the_keys_and_takes_every_new_attribute)
{
	static alignas(64) uint8_t other[256];
	struct droce_mr_reg r = reg_args(LW);
	struct droce_mr mr;
	uint32_t key;
	void *host;

	must_register(&mr, &r);
	key = mr.lkey;
	ck_assert_int_eq(acc(key, PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_ACCESS);
	r.access = LW | RW;
	ck_assert_int_eq(droce_mr_reregister(tbl, &mr, &r), 0);
	ck_assert_uint_eq(mr.lkey, key);
	ck_assert_uint_eq(mr.rkey, key);
	ck_assert_ptr_eq(droce_mr_get(tbl, key), &mr);
	ck_assert_int_eq(acc(key, PD, CLIENT_VA + 8, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 8);

	/* another range, iova, PD and rights at once */
	r = (struct droce_mr_reg){ .pd = PD + 1, .addr = 0x5000, .length = sizeof(other),
				   .hca_va = 0x9000, .access = RR, .host = other };
	ck_assert_int_eq(droce_mr_reregister(tbl, &mr, &r), 0);
	ck_assert_uint_eq(mr.lkey, key);
	ck_assert_int_eq(acc(key, PD + 1, 0x9000 + 16, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, other + 16);
	ck_assert_int_eq(acc(key, PD, 0x9000, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_PD);
	ck_assert_int_eq(acc(key, PD + 1, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(key, PD + 1, 0x9000, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_ACCESS);
	ck_assert_int_eq(acc(key, PD + 1, 0x9000, 8, DROCE_ACC_LOCAL_WRITE, &host),
			 DROCE_ACC_ACCESS);

	r.access = RR | ZB;		/* ZERO_BASED wins over hca_va, as at registration */
	ck_assert_int_eq(droce_mr_reregister(tbl, &mr, &r), 0);
	ck_assert_uint_eq(mr.iova, 0);
	ck_assert_int_eq(acc(key, PD + 1, 16, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, other + 16);
	ck_assert_uint_eq(droce_key_table_count(tbl, DROCE_KEY_MR), 1);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
}
END_TEST

START_TEST(test_mr_reregister_refused_leaves_the_region_as_it_was)
{
	struct droce_mr_reg r = reg_args(LW | RR);
	struct droce_mr mr, before, gone;
	void *host;

	must_register(&mr, &r);
	before = mr;
	r.access = RW;			/* remote write without local write */
	ck_assert_int_eq(droce_mr_reregister(tbl, &mr, &r), -EINVAL);
	r.access = LW | DROCE_ACCESS_FLUSH_GLOBAL;
	ck_assert_int_eq(droce_mr_reregister(tbl, &mr, &r), -EOPNOTSUPP);
	r.access = LW;
	r.host = NULL;			/* no mapping for a non-empty range */
	ck_assert_int_eq(droce_mr_reregister(tbl, &mr, &r), -EINVAL);
	ck_assert_uint_eq(mr.access, before.access);
	ck_assert_ptr_eq(mr.host, before.host);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_OK);

	r = reg_args(LW);
	must_register(&gone, &r);
	ck_assert_int_eq(droce_mr_deregister(tbl, &gone), 0);
	ck_assert_int_eq(droce_mr_reregister(tbl, &gone, &r), -EINVAL);	/* not registered */
	ck_assert_ptr_null(droce_mr_get(tbl, gone.lkey));
}
END_TEST

START_TEST(test_mr_empty_region_registers_but_no_byte_fits)
{
	struct droce_mr_reg r = reg_args(LW | RR);
	struct droce_mr mr;
	void *host;

	r.length = 0;
	must_register(&mr, &r);
	ck_assert_int_eq(droce_access_check(tbl, mr.rkey, PD, QPN, CLIENT_VA, 1,
					    DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_RANGE);
}
END_TEST

/* ------------------------------------------------------------- mr_access */

START_TEST(test_acc_local_read_is_always_allowed_local_write_needs_the_flag)
{
	struct droce_mr_reg r = reg_args(0);
	struct droce_mr ro, rw;
	void *host = NULL;

	must_register(&ro, &r);
	r.access = LW;
	must_register(&rw, &r);
	ck_assert_int_eq(acc(ro.lkey, PD, CLIENT_VA, 100, DROCE_ACC_LOCAL_READ, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf);
	ck_assert_int_eq(acc(ro.lkey, PD, CLIENT_VA, 100, DROCE_ACC_LOCAL_WRITE, &host),
			 DROCE_ACC_ACCESS);
	ck_assert_int_eq(acc(rw.lkey, PD, CLIENT_VA, 100, DROCE_ACC_LOCAL_WRITE, &host),
			 DROCE_ACC_OK);
}
END_TEST

START_TEST(test_acc_each_remote_op_needs_exactly_its_flag)
{
	static const struct {
		enum droce_acc_op op;
		unsigned int flag;
	} ops[] = {
		{ DROCE_ACC_REMOTE_READ, RR },
		{ DROCE_ACC_REMOTE_WRITE, RW },
		{ DROCE_ACC_REMOTE_ATOMIC, RA },
	};
	unsigned int i, j;

	for (i = 0; i < 3; i++) {
		for (j = 0; j < 3; j++) {
			struct droce_mr_reg r = reg_args(LW | ops[j].flag);
			struct droce_mr mr;
			void *host;
			enum droce_acc_result want = i == j ? DROCE_ACC_OK : DROCE_ACC_ACCESS;

			must_register(&mr, &r);
			ck_assert_msg(acc(mr.rkey, PD, CLIENT_VA + 64, 8, ops[i].op, &host) == want,
				      "op %u with flag %#x", i, ops[j].flag);
			ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
		}
	}
}
END_TEST

START_TEST(test_acc_other_pd_is_refused)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	struct droce_mr mr;
	void *host = NULL;

	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD + 1, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_PD);
	ck_assert_int_eq(acc(mr.lkey, PD + 1, CLIENT_VA, 8, DROCE_ACC_LOCAL_READ, &host),
			 DROCE_ACC_PD);
	ck_assert_ptr_null(host);	/* untouched on failure */
}
END_TEST

START_TEST(test_acc_range_edges_and_wrap_around)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	const uint64_t end = CLIENT_VA + sizeof(buf);
	struct droce_mr mr;
	void *host;

	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA, sizeof(buf), DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_OK);
	ck_assert_int_eq(acc(mr.rkey, PD, end - 1, 1, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + sizeof(buf) - 1);
	ck_assert_int_eq(acc(mr.rkey, PD, end - 1, 2, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(mr.rkey, PD, end, 1, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA - 1, 2, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA, sizeof(buf) + 1, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	/* iova + len wraps past 2^64 and lands "inside" if added naively */
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + 8, UINT64_MAX - 7, DROCE_ACC_REMOTE_READ,
			     &host), DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(mr.rkey, PD, UINT64_MAX, 2, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_RANGE);
}
END_TEST

START_TEST(test_acc_translates_iova_relative_to_hca_va)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	struct droce_mr mr;
	void *host;

	r.hca_va = 0x100000000ull;	/* ibv_reg_mr_iova(addr = CLIENT_VA, hca_va) */
	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD, 0x100000010ull, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 0x10);
	ck_assert_int_eq(acc(mr.lkey, PD, 0x100000000ull + 4000, 96, DROCE_ACC_LOCAL_WRITE, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 4000);
	/* The client address means nothing through the keys now. */
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_RANGE);
}
END_TEST

START_TEST(test_acc_zero_based_region_starts_at_offset_0)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE | ZB);
	struct droce_mr mr;
	void *host;

	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD, 0, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf);
	ck_assert_int_eq(acc(mr.rkey, PD, 1000, 24, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 1000);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(mr.rkey, PD, sizeof(buf), 1, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
}
END_TEST

START_TEST(test_acc_atomic_is_8_bytes_at_an_8_aligned_address)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	struct droce_mr mr;
	void *host;

	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + 16, 8, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 16);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + 4, 8, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_ALIGN);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + 17, 8, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_ALIGN);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + 16, 4, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_ALIGN);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + 16, 16, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_ALIGN);
	/* a zero-length "atomic" is not exempt from the checks */
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + 16, 0, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_ALIGN);
	/* aligned, but the last 8 bytes start at the end */
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA + sizeof(buf), 8, DROCE_ACC_REMOTE_ATOMIC,
			     &host), DROCE_ACC_RANGE);
}
END_TEST

START_TEST(test_acc_atomic_on_a_misaligned_engine_byte_is_refused)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	struct droce_mr mr;
	void *host;

	r.host = buf + 4;		/* client page offset 4 ... */
	r.length = 256;
	r.hca_va = 0x10000;		/* ... registered at an aligned iova */
	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD, 0x10008, 8, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_ALIGN);
	/* ordinary reads do not care */
	ck_assert_int_eq(acc(mr.rkey, PD, 0x10008, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 12);
}
END_TEST

START_TEST(test_acc_zero_length_passes_with_any_key)
{
	void *host = buf;
	enum droce_acc_op op;

	/* IBA C9-88: the R_Key and address of a zero-length transfer are not checked. */
	for (op = DROCE_ACC_LOCAL_READ; op <= DROCE_ACC_REMOTE_WRITE; op++) {
		ck_assert_int_eq(acc(0, PD, 0, 0, op, &host), DROCE_ACC_OK);
		ck_assert_ptr_null(host);
		host = buf;
		ck_assert_int_eq(acc(0xdeadbeef, PD + 3, UINT64_MAX, 0, op, &host), DROCE_ACC_OK);
		ck_assert_ptr_null(host);
	}
}
END_TEST

START_TEST(test_acc_bad_and_invalid_keys_are_told_apart)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	struct droce_mr mr;
	void *host;
	uint32_t stale;

	must_register(&mr, &r);
	ck_assert_int_eq(acc(0, PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_KEY_BAD);
	ck_assert_int_eq(acc(droce_key_make(0, droce_key_byte(mr.rkey)), PD, CLIENT_VA, 8,
			     DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_KEY_BAD);
	ck_assert_int_eq(acc(droce_key_make(17, 0), PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_BAD);	/* beyond the 16 indices of this table */
	ck_assert_int_eq(acc(droce_key_make(16, 0), PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);	/* in range, never handed out */
	stale = droce_key_make(droce_key_index(mr.rkey), (uint8_t)(droce_key_byte(mr.rkey) ^ 0x80));
	ck_assert_int_eq(acc(stale, PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_int_eq(acc(stale, PD, CLIENT_VA, 8, DROCE_ACC_LOCAL_READ, &host),
			 DROCE_ACC_KEY_INVALID);
}
END_TEST

START_TEST(test_acc_rkey_of_a_region_without_remote_rights_fails_on_rights)
{
	struct droce_mr_reg r = reg_args(LW | BIND);
	struct droce_mr mr;
	void *host;

	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_ACCESS);
	ck_assert_int_eq(acc(mr.lkey, PD, CLIENT_VA, 8, DROCE_ACC_LOCAL_WRITE, &host),
			 DROCE_ACC_OK);
}
END_TEST

START_TEST(test_acc_checks_run_key_pd_access_align_range_in_order)
{
	struct droce_mr_reg r = reg_args(LW | RR);
	struct droce_mr mr, all;
	void *host;

	must_register(&mr, &r);
	/* wrong PD, missing right, misaligned, out of range: PD wins */
	ck_assert_int_eq(acc(mr.rkey, PD + 1, 3, 8, DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_PD);
	/* then the missing right */
	ck_assert_int_eq(acc(mr.rkey, PD, 3, 8, DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_ACCESS);
	r.access = ALL_REMOTE;
	must_register(&all, &r);
	/* then alignment before range */
	ck_assert_int_eq(acc(all.rkey, PD, 3, 8, DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_ALIGN);
	ck_assert_int_eq(acc(all.rkey, PD, 8, 8, DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_RANGE);
}
END_TEST

START_TEST(test_acc_unknown_op_is_refused)
{
	struct droce_mr_reg r = reg_args(ALL_REMOTE);
	struct droce_mr mr;
	void *host;

	must_register(&mr, &r);
	ck_assert_int_eq(acc(mr.rkey, PD, CLIENT_VA, 8, (enum droce_acc_op)42, &host),
			 DROCE_ACC_ACCESS);
}
END_TEST

START_TEST(test_acc_result_names_come_from_the_x_macro)
{
	enum droce_acc_result a, b;

	ck_assert_str_eq(droce_acc_result_name(DROCE_ACC_OK), "OK");
	ck_assert_str_eq(droce_acc_result_name(DROCE_ACC_KEY_BAD), "KEY_BAD");
	ck_assert_str_eq(droce_acc_result_name(DROCE_ACC_RANGE), "RANGE");
	ck_assert_str_eq(droce_acc_result_name(DROCE_ACC_RESULT_COUNT), "?");
	ck_assert_int_eq(DROCE_ACC_OK, 0);
	for (a = 0; a < DROCE_ACC_RESULT_COUNT; a++)
		for (b = a + 1; b < DROCE_ACC_RESULT_COUNT; b++)
			ck_assert_str_ne(droce_acc_result_name(a), droce_acc_result_name(b));
}
END_TEST

TCase *
verbs_tcase_mr_reg(void)
{
	TCase *tc = tcase_create("mr_reg");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_mr_reg_remote_write_or_atomic_needs_local_write);
	tcase_add_test(tc, test_mr_reg_mw_bind_does_not_need_local_write);
	tcase_add_test(tc, test_mr_reg_unknown_access_bits_are_einval);
	tcase_add_test(tc, test_mr_reg_flush_flags_are_eopnotsupp);
	tcase_add_test(tc, test_mr_reg_optional_bits_are_accepted_and_ignored);
	tcase_add_test(tc, test_mr_reg_explicit_odp_registers_and_implicit_odp_is_eopnotsupp);
	tcase_add_test(tc, test_mr_odp_answers_the_client_address_and_refuses_atomics);
	tcase_add_test(tc, test_mr_implicit_odp_covers_the_address_space_at_iova_0);
	tcase_add_test(tc, test_mr_indirect_ordinary_takes_atomics_by_client_address);
	tcase_add_test(tc, test_mr_reg_hugetlb_is_accepted);
	tcase_add_test(tc, test_mr_reg_range_reaching_2_pow_64_is_einval);
	tcase_add_test(tc, test_mr_register_fills_keys_addresses_and_publishes);
	tcase_add_test(tc, test_mr_register_needs_a_host_mapping_unless_empty);
	tcase_add_test(tc, test_mr_register_refuses_bad_flags_without_taking_a_key);
	tcase_add_test(tc, test_mr_register_beyond_max_mr_is_enomem);
	tcase_add_test(tc, test_mr_deregister_stops_the_key_at_once_and_twice_is_einval);
	tcase_add_test(tc, test_mr_empty_region_registers_but_no_byte_fits);
	tcase_add_test(tc, test_mr_reregister_keeps_the_keys_and_takes_every_new_attribute);
	tcase_add_test(tc, test_mr_reregister_refused_leaves_the_region_as_it_was);
	return tc;
}

TCase *
verbs_tcase_mr_access(void)
{
	TCase *tc = tcase_create("mr_access");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_acc_local_read_is_always_allowed_local_write_needs_the_flag);
	tcase_add_test(tc, test_acc_each_remote_op_needs_exactly_its_flag);
	tcase_add_test(tc, test_acc_other_pd_is_refused);
	tcase_add_test(tc, test_acc_range_edges_and_wrap_around);
	tcase_add_test(tc, test_acc_translates_iova_relative_to_hca_va);
	tcase_add_test(tc, test_acc_zero_based_region_starts_at_offset_0);
	tcase_add_test(tc, test_acc_atomic_is_8_bytes_at_an_8_aligned_address);
	tcase_add_test(tc, test_acc_atomic_on_a_misaligned_engine_byte_is_refused);
	tcase_add_test(tc, test_acc_zero_length_passes_with_any_key);
	tcase_add_test(tc, test_acc_bad_and_invalid_keys_are_told_apart);
	tcase_add_test(tc, test_acc_rkey_of_a_region_without_remote_rights_fails_on_rights);
	tcase_add_test(tc, test_acc_checks_run_key_pd_access_align_range_in_order);
	tcase_add_test(tc, test_acc_unknown_op_is_refused);
	tcase_add_test(tc, test_acc_result_names_come_from_the_x_macro);
	return tc;
}
