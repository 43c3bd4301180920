/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * TCases "mw" (memory windows: alloc, bind, access through a window,
 * invalidate, dealloc, dereg while bound, a bind racing lookups) and
 * "known_bugs" (known-bugs.md #2: MR keys never collide with window keys
 * over more than 65 536 registrations).
 */

#include "droce_verbs_mr.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "droce_config.h"
#include "test_verbs.h"

#define SEED	0x5eed0002ull
#define PD	3
#define QPN	0x21
#define QPN2	0x22

#define LW	IBV_ACCESS_LOCAL_WRITE
#define RW	IBV_ACCESS_REMOTE_WRITE
#define RR	IBV_ACCESS_REMOTE_READ
#define RA	IBV_ACCESS_REMOTE_ATOMIC
#define BIND	IBV_ACCESS_MW_BIND
#define ZB	IBV_ACCESS_ZERO_BASED

/* The region's iova base; the engine's bytes are buf. */
#define MR_VA	0x40000000ull

static struct droce_key_table *tbl;
static alignas(64) uint8_t buf[8192];
static struct droce_mr mr;		/* LW | MW_BIND, no remote right of its own */

static void
register_mr(struct droce_mr *m, uint32_t pd, unsigned int access, uint64_t va, uint64_t len)
{
	struct droce_mr_reg r = {
		.pd = pd, .addr = va, .length = len, .hca_va = va, .access = access, .host = buf,
	};

	ck_assert_int_eq(droce_mr_register(tbl, &r, m), 0);
}

static void
setup(void)
{
	ck_assert_int_eq(droce_key_table_create(16, 16, SEED, &tbl), 0);
	register_mr(&mr, PD, LW | BIND, MR_VA, sizeof(buf));
}

static void
teardown(void)
{
	droce_key_table_destroy(tbl);
	tbl = NULL;
}

/* ibv_bind_mw() as rdma-core's providers issue it: next key byte, RC QP. */
static struct droce_mw_bind
bind_req(const struct droce_mw *mw, struct droce_mr *m, uint64_t addr, uint64_t len,
	 unsigned int access)
{
	return (struct droce_mw_bind){
		.new_rkey = ibv_inc_rkey(mw->rkey),
		.mr = m,
		.addr = addr,
		.length = len,
		.access = access,
		.qp_pd = PD,
		.qpn = QPN,
		.qp_type = IBV_QPT_RC,
	};
}

/* Windows bound to an MR (a plain value, for readable assertion messages). */
static unsigned int
nbound(struct droce_mr *m)
{
	return atomic_load(&m->mw_bound);
}

static void
alloc_mw(struct droce_mw *mw, enum ibv_mw_type type)
{
	ck_assert_int_eq(droce_mw_alloc(tbl, PD, type, mw), 0);
}

static void
must_bind(struct droce_mw *mw, uint64_t addr, uint64_t len, unsigned int access)
{
	struct droce_mw_bind b = bind_req(mw, &mr, addr, len, access);

	ck_assert_int_eq(droce_mw_bind(tbl, mw, &b), 0);
}

static enum droce_acc_result
acc(uint32_t key, uint32_t qpn, uint64_t iova, uint64_t len, enum droce_acc_op op, void **host)
{
	return droce_access_check(tbl, key, PD, qpn, iova, len, op, host);
}

/* -------------------------------------------------------------------- mw */

START_TEST(test_mw_alloc_gives_an_unbound_window_whose_rkey_does_not_resolve)
{
	struct droce_mw w1, w2, bad;
	void *host;

	alloc_mw(&w1, IBV_MW_TYPE_1);
	alloc_mw(&w2, IBV_MW_TYPE_2);
	ck_assert_uint_ne(w1.rkey, 0);
	ck_assert_uint_ne(droce_key_index(w1.rkey), droce_key_index(w2.rkey));
	ck_assert_uint_ne(droce_key_index(w1.rkey), droce_key_index(mr.lkey));
	ck_assert_int_eq(w1.state, DROCE_MW_FREE);
	ck_assert_int_eq(acc(w1.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_int_eq(acc(w2.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_ptr_eq(droce_mw_get(tbl, w1.rkey), &w1);
	ck_assert_int_eq(droce_mw_alloc(tbl, PD, (enum ibv_mw_type)3, &bad), -EINVAL);
	ck_assert_int_eq(droce_mw_alloc(tbl, PD, (enum ibv_mw_type)0, &bad), -EINVAL);
	ck_assert_uint_eq(droce_key_table_count(tbl, DROCE_KEY_MW), 2);
}
END_TEST

START_TEST(test_mw_type1_bind_takes_the_new_rkey_and_retires_the_old_one)
{
	struct droce_mw w;
	uint32_t old;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_1);
	old = w.rkey;
	must_bind(&w, MR_VA + 1024, 512, RR | RW);
	ck_assert_uint_eq(w.rkey, ibv_inc_rkey(old));
	ck_assert_int_eq(w.state, DROCE_MW_BOUND);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 1024, 512, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 1024);
	ck_assert_int_eq(acc(old, QPN, MR_VA + 1024, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_uint_eq(nbound(&mr), 1);

	/* Rebind: the previous rkey stops at once, the count stays 1. */
	old = w.rkey;
	must_bind(&w, MR_VA, 64, RR);
	ck_assert_int_eq(acc(old, QPN, MR_VA + 1024, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_uint_eq(nbound(&mr), 1);
}
END_TEST

START_TEST(test_mw_bind_accepts_any_consumer_key_byte)
{
	struct droce_mw w;
	struct droce_mw_bind b;
	unsigned int byte;
	void *host;

	/* known-bugs #3: rxe once refused some consumer key portions */
	alloc_mw(&w, IBV_MW_TYPE_1);
	for (byte = 0; byte < 256; byte++) {
		b = bind_req(&w, &mr, MR_VA, 64, RR);
		b.new_rkey = droce_key_make(droce_key_index(w.rkey), (uint8_t)byte);
		ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
		ck_assert_uint_eq(droce_key_byte(w.rkey), byte);
		ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
				 DROCE_ACC_OK);
	}
	/* ibv_inc_rkey() wraps 0xff to 0x00 within the same index */
	ck_assert_uint_eq(droce_key_byte(ibv_inc_rkey(w.rkey)), 0);
	ck_assert_uint_eq(droce_key_index(ibv_inc_rkey(w.rkey)), droce_key_index(w.rkey));
}
END_TEST

START_TEST(test_mw_bind_with_another_index_is_einval)
{
	struct droce_mw w;
	struct droce_mw_bind b;

	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &mr, MR_VA, 64, RR);
	b.new_rkey = droce_key_make(droce_key_index(w.rkey) + 1, droce_key_byte(b.new_rkey));
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	ck_assert_int_eq(w.state, DROCE_MW_FREE);
}
END_TEST

START_TEST(test_mw_bind_needs_mw_bind_on_the_mr)
{
	struct droce_mr plain;
	struct droce_mw w;
	struct droce_mw_bind b;

	register_mr(&plain, PD, LW | RR | RW, MR_VA, sizeof(buf));
	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &plain, MR_VA, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	ck_assert_uint_eq(nbound(&plain), 0);
}
END_TEST

START_TEST(test_mw_remote_write_or_atomic_window_needs_local_write_on_the_mr)
{
	struct droce_mr ro;
	struct droce_mw w;
	struct droce_mw_bind b;

	register_mr(&ro, PD, BIND, MR_VA, sizeof(buf));	/* no LOCAL_WRITE */
	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &ro, MR_VA, 64, RW);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &ro, MR_VA, 64, RA);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &ro, MR_VA, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
}
END_TEST

START_TEST(test_mw_window_must_lie_inside_the_mr)
{
	struct droce_mw w;
	struct droce_mw_bind b;

	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &mr, MR_VA - 1, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &mr, MR_VA + sizeof(buf) - 63, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &mr, MR_VA + 64, UINT64_MAX - 32, RR);	/* wraps */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &mr, MR_VA, sizeof(buf), RR);		/* the whole MR */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
}
END_TEST

START_TEST(test_mw_window_enforces_its_own_range)
{
	struct droce_mw w;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_1);
	must_bind(&w, MR_VA + 4096, 256, RR | RW);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 4096, 256, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 4096);
	/* inside the MR, outside the window: refused (rxe only checks the MR) */
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 4096 + 256, 1, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 4095, 2, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 4096 + 8, UINT64_MAX - 4, DROCE_ACC_REMOTE_READ,
			     &host), DROCE_ACC_RANGE);
}
END_TEST

START_TEST(test_mw_window_enforces_its_own_access_not_the_mrs)
{
	struct droce_mr full;
	struct droce_mw w;
	struct droce_mw_bind b;
	void *host;

	/* MR grants everything; the window only reads */
	register_mr(&full, PD, LW | RR | RW | RA | BIND, MR_VA, sizeof(buf));
	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &full, MR_VA, 128, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_ACCESS);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_ACCESS);

	/* MR grants no remote right; the window writes and does atomics */
	alloc_mw(&w, IBV_MW_TYPE_1);
	must_bind(&w, MR_VA + 64, 64, RW | RA);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 64, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_OK);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 72, 8, DROCE_ACC_REMOTE_ATOMIC, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 72);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA + 64, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_ACCESS);
	/* and the MR's own rkey, without the right, reaches nothing */
	ck_assert_int_eq(acc(mr.rkey, QPN, MR_VA + 64, 8, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_ACCESS);
}
END_TEST

START_TEST(test_mw_window_key_is_never_an_lkey)
{
	struct droce_mw w;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_1);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_LOCAL_READ, &host),
			 DROCE_ACC_KEY_BAD);
	must_bind(&w, MR_VA, 64, RR | RW);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_LOCAL_READ, &host),
			 DROCE_ACC_KEY_BAD);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_LOCAL_WRITE, &host),
			 DROCE_ACC_KEY_BAD);
	ck_assert_ptr_null(droce_mr_get(tbl, w.rkey));
}
END_TEST

START_TEST(test_mw_zero_based_window_counts_from_its_own_start)
{
	struct droce_mw w1, w2;
	void *host;

	/* ZERO_BASED honoured for type 1 too (ibv_bind_mw(3); rxe refuses) */
	alloc_mw(&w1, IBV_MW_TYPE_1);
	must_bind(&w1, MR_VA + 1000, 100, RR | ZB);
	ck_assert_int_eq(acc(w1.rkey, QPN, 0, 100, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 1000);
	ck_assert_int_eq(acc(w1.rkey, QPN, 99, 1, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 1099);
	ck_assert_int_eq(acc(w1.rkey, QPN, 100, 1, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_RANGE);
	ck_assert_int_eq(acc(w1.rkey, QPN, MR_VA + 1000, 1, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_RANGE);

	alloc_mw(&w2, IBV_MW_TYPE_2);
	must_bind(&w2, MR_VA + 2048, 64, RA | LW | ZB);
	ck_assert_int_eq(acc(w2.rkey, QPN, 8, 8, DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 2056);
	ck_assert_int_eq(acc(w2.rkey, QPN, 60, 8, DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_ALIGN);
	ck_assert_int_eq(acc(w2.rkey, QPN, 64, 8, DROCE_ACC_REMOTE_ATOMIC, &host), DROCE_ACC_RANGE);
}
END_TEST

START_TEST(test_mw_window_on_a_zero_based_mr_lives_in_the_mrs_offsets)
{
	struct droce_mr zmr;
	struct droce_mw w;
	struct droce_mw_bind b;
	void *host;

	register_mr(&zmr, PD, LW | BIND | ZB, 0xdead0000, sizeof(buf));
	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &zmr, 512, 256, RW);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
	ck_assert_int_eq(acc(w.rkey, QPN, 512 + 16, 16, DROCE_ACC_REMOTE_WRITE, &host),
			 DROCE_ACC_OK);
	ck_assert_ptr_eq(host, buf + 528);
	b = bind_req(&w, &zmr, 0xdead0000, 16, RW);	/* the client VA is no address here */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
}
END_TEST

START_TEST(test_mw_pd_mismatches_are_eperm_and_other_pd_cannot_use_it)
{
	struct droce_mr other;
	struct droce_mw w, w2;
	struct droce_mw_bind b;
	void *host;

	register_mr(&other, PD + 1, LW | BIND, MR_VA, sizeof(buf));
	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &other, MR_VA, 64, RR);	/* MR in another PD (verbs.h) */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EPERM);
	b = bind_req(&w, &mr, MR_VA, 64, RR);
	b.qp_pd = PD + 1;				/* QP in another PD */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EPERM);
	alloc_mw(&w2, IBV_MW_TYPE_2);
	b = bind_req(&w2, &mr, MR_VA, 64, RR);
	b.qp_pd = PD + 1;				/* C10-72 */
	ck_assert_int_eq(droce_mw_bind(tbl, &w2, &b), -EPERM);

	must_bind(&w, MR_VA, 64, RR);
	ck_assert_int_eq(droce_access_check(tbl, w.rkey, PD + 1, QPN, MR_VA, 8,
					    DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_PD);
}
END_TEST

START_TEST(test_mw_bind_needs_an_rc_uc_or_xrc_send_qp)
{
	static const enum ibv_qp_type ok[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_XRC_SEND };
	static const enum ibv_qp_type bad[] = { IBV_QPT_UD, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_RECV };
	struct droce_mw w;
	struct droce_mw_bind b;
	unsigned int i;

	alloc_mw(&w, IBV_MW_TYPE_1);
	for (i = 0; i < 3; i++) {
		b = bind_req(&w, &mr, MR_VA, 64, RR);
		b.qp_type = bad[i];
		ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	}
	for (i = 0; i < 3; i++) {
		b = bind_req(&w, &mr, MR_VA, 64, RR);
		b.qp_type = ok[i];
		ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
	}
}
END_TEST

START_TEST(test_mw_bind_access_bits_outside_remote_and_zero_based_are_einval)
{
	struct droce_mw w;
	struct droce_mw_bind b;

	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &mr, MR_VA, 64, RR | BIND);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &mr, MR_VA, 64, RR | IBV_ACCESS_ON_DEMAND);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &mr, MR_VA, 64, RR | (1u << 12));
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, &mr, MR_VA, 64, RR | LW | IBV_ACCESS_RELAXED_ORDERING);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
	ck_assert_uint_eq(w.access, RR);	/* ignored bits are not kept */
}
END_TEST

START_TEST(test_mw_type1_zero_length_bind_unbinds)
{
	struct droce_mw w;
	struct droce_mw_bind b;
	uint32_t bound;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_1);
	must_bind(&w, MR_VA, 64, RR);
	bound = w.rkey;
	b = bind_req(&w, NULL, 0, 0, 0);	/* ibv_bind_mw with no MR */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
	ck_assert_int_eq(w.state, DROCE_MW_FREE);
	ck_assert_uint_eq(w.rkey, ibv_inc_rkey(bound));
	ck_assert_int_eq(acc(bound, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_uint_eq(nbound(&mr), 0);

	/* with an MR but zero length: the same */
	must_bind(&w, MR_VA, 64, RR);
	b = bind_req(&w, &mr, MR_VA, 0, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
	ck_assert_int_eq(w.state, DROCE_MW_FREE);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
}
END_TEST

START_TEST(test_mw_no_mr_with_an_address_or_length_is_einval)
{
	struct droce_mw w;
	struct droce_mw_bind b;

	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, NULL, MR_VA, 0, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, NULL, 0, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
}
END_TEST

START_TEST(test_mw_type1_rebind_moves_the_count_between_mrs)
{
	struct droce_mr other;
	struct droce_mw w;
	struct droce_mw_bind b;

	register_mr(&other, PD, LW | BIND, MR_VA, sizeof(buf));
	alloc_mw(&w, IBV_MW_TYPE_1);
	must_bind(&w, MR_VA, 64, RR);
	b = bind_req(&w, &other, MR_VA, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
	ck_assert_uint_eq(nbound(&mr), 0);
	ck_assert_uint_eq(nbound(&other), 1);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
	ck_assert_int_eq(droce_mr_deregister(tbl, &other), -EBUSY);
}
END_TEST

START_TEST(test_mw_type2_binds_only_from_free_and_never_empty)
{
	struct droce_mw w;
	struct droce_mw_bind b;

	alloc_mw(&w, IBV_MW_TYPE_2);
	b = bind_req(&w, &mr, MR_VA, 0, RR);		/* o10-37.2.40 */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	b = bind_req(&w, NULL, 0, 0, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	must_bind(&w, MR_VA, 64, RR);
	b = bind_req(&w, &mr, MR_VA, 64, RR);		/* o10-37.2.30: not free */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w.rkey, PD, QPN, false), 0);
	must_bind(&w, MR_VA, 64, RR);
}
END_TEST

START_TEST(test_mw_type2_serves_only_the_qp_that_bound_it)
{
	struct droce_mw w1, w2;
	void *host;

	alloc_mw(&w2, IBV_MW_TYPE_2);
	must_bind(&w2, MR_VA, 64, RR);
	ck_assert_int_eq(acc(w2.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_int_eq(acc(w2.rkey, QPN2, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_QP);
	/* a type 1 window serves every QP of its PD */
	alloc_mw(&w1, IBV_MW_TYPE_1);
	must_bind(&w1, MR_VA, 64, RR);
	ck_assert_int_eq(acc(w1.rkey, QPN2, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
}
END_TEST

START_TEST(test_mw_dereg_and_rereg_mr_are_ebusy_while_a_window_is_bound)
{
	struct droce_mw w;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_2);
	must_bind(&w, MR_VA, 64, RW);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), -EBUSY);
	/* still registered and working */
	ck_assert_ptr_eq(droce_mr_get(tbl, mr.lkey), &mr);
	ck_assert_int_eq(acc(mr.lkey, QPN, MR_VA, 8, DROCE_ACC_LOCAL_WRITE, &host), DROCE_ACC_OK);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_WRITE, &host), DROCE_ACC_OK);
	ck_assert(!atomic_load(&mr.dying));	/* the failed attempt left no trace */
	{
		/* a reregistration too: the window was checked against the MR as it is */
		struct droce_mr_reg r = { .pd = PD, .addr = MR_VA, .length = sizeof(buf),
					  .hca_va = MR_VA, .access = BIND, .host = buf };

		ck_assert_int_eq(droce_mr_reregister(tbl, &mr, &r), -EBUSY);
		ck_assert_uint_eq(mr.access, LW | BIND);
		ck_assert(!atomic_load(&mr.dying));
	}
	ck_assert_int_eq(droce_mw_dealloc(tbl, &w), 0);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
}
END_TEST

START_TEST(test_mw_bind_loses_to_a_deregistration_in_progress)
{
	struct droce_mw w;
	struct droce_mw_bind b;

	/* The bind counts itself in, sees dying and backs out. */
	alloc_mw(&w, IBV_MW_TYPE_1);
	atomic_store(&mr.dying, true);
	b = bind_req(&w, &mr, MR_VA, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	ck_assert_uint_eq(nbound(&mr), 0);
	ck_assert_int_eq(w.state, DROCE_MW_FREE);
	atomic_store(&mr.dying, false);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
}
END_TEST

START_TEST(test_mw_bind_to_a_deregistered_mr_is_einval)
{
	struct droce_mr gone;
	struct droce_mw w;
	struct droce_mw_bind b;

	register_mr(&gone, PD, LW | BIND, MR_VA, sizeof(buf));
	ck_assert_int_eq(droce_mr_deregister(tbl, &gone), 0);
	alloc_mw(&w, IBV_MW_TYPE_1);
	b = bind_req(&w, &gone, MR_VA, 64, RR);
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
}
END_TEST

START_TEST(test_mw_failed_bind_leaves_the_old_rkey_working)
{
	struct droce_mw w;
	struct droce_mw_bind b;
	uint32_t bound;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_1);
	must_bind(&w, MR_VA, 64, RR);
	bound = w.rkey;
	b = bind_req(&w, &mr, MR_VA + sizeof(buf), 64, RR);	/* out of the MR */
	ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), -EINVAL);
	ck_assert_uint_eq(w.rkey, bound);
	ck_assert_int_eq(acc(bound, QPN, MR_VA, 64, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_uint_eq(nbound(&mr), 1);
}
END_TEST

START_TEST(test_mw_local_invalidate_retires_a_type2_rkey_at_once)
{
	struct droce_mw w;
	uint32_t bound;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_2);
	must_bind(&w, MR_VA, 64, RR);
	bound = w.rkey;
	/* LOCAL_INV may come from any QP of the PD */
	ck_assert_int_eq(droce_mw_invalidate(tbl, bound, PD, QPN2, false), 0);
	ck_assert_int_eq(w.state, DROCE_MW_FREE);
	ck_assert_int_eq(acc(bound, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_uint_eq(nbound(&mr), 0);
	/* a second time: nothing bound under that key any more */
	ck_assert_int_eq(droce_mw_invalidate(tbl, bound, PD, QPN, false), -EINVAL);
	ck_assert_ptr_eq(droce_mw_get(tbl, bound), &w);	/* still allocated */
}
END_TEST

START_TEST(test_mw_remote_invalidate_comes_only_from_the_bound_qp)
{
	struct droce_mw w;
	void *host;

	alloc_mw(&w, IBV_MW_TYPE_2);
	must_bind(&w, MR_VA, 64, RR);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w.rkey, PD, QPN2, true), -EPERM);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w.rkey, PD + 1, QPN, true), -EPERM);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w.rkey, PD + 1, QPN, false), -EPERM);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w.rkey, PD, QPN, true), 0);
	ck_assert_int_eq(acc(w.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
}
END_TEST

START_TEST(test_mw_invalidate_refuses_type1_windows_mrs_and_stale_keys)
{
	struct droce_mr remote;
	struct droce_mw w1, w2;
	void *host;

	alloc_mw(&w1, IBV_MW_TYPE_1);
	must_bind(&w1, MR_VA, 64, RR);
	/* o10-37.2.26: type 1 windows are not invalidated, only unbound */
	ck_assert_int_eq(droce_mw_invalidate(tbl, w1.rkey, PD, QPN, false), -EINVAL);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w1.rkey, PD, QPN, true), -EINVAL);
	ck_assert_int_eq(acc(w1.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);

	register_mr(&remote, PD, LW | RR | RW, MR_VA, sizeof(buf));
	ck_assert_int_eq(droce_mw_invalidate(tbl, remote.rkey, PD, QPN, true), -EINVAL);
	ck_assert_int_eq(acc(remote.rkey, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_OK);

	alloc_mw(&w2, IBV_MW_TYPE_2);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w2.rkey, PD, QPN, false), -EINVAL); /* unbound */
	must_bind(&w2, MR_VA, 64, RR);
	ck_assert_int_eq(droce_mw_invalidate(tbl, w2.rkey ^ 1, PD, QPN, false), -EINVAL);
	ck_assert_int_eq(droce_mw_invalidate(tbl, 0, PD, QPN, false), -EINVAL);
	ck_assert_int_eq(droce_mw_invalidate(tbl, 0xffffffff, PD, QPN, false), -EINVAL);
	ck_assert_int_eq(w2.state, DROCE_MW_BOUND);
}
END_TEST

START_TEST(test_mw_dealloc_unbinds_and_frees_the_key)
{
	struct droce_mw w1, w2;
	uint32_t k1, k2;
	void *host;

	alloc_mw(&w1, IBV_MW_TYPE_1);
	alloc_mw(&w2, IBV_MW_TYPE_2);
	must_bind(&w1, MR_VA, 64, RR);
	must_bind(&w2, MR_VA, 64, RR);
	k1 = w1.rkey;
	k2 = w2.rkey;
	ck_assert_uint_eq(nbound(&mr), 2);
	ck_assert_int_eq(droce_mw_dealloc(tbl, &w1), 0);
	ck_assert_int_eq(droce_mw_dealloc(tbl, &w2), 0);
	ck_assert_int_eq(acc(k1, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_int_eq(acc(k2, QPN, MR_VA, 8, DROCE_ACC_REMOTE_READ, &host),
			 DROCE_ACC_KEY_INVALID);
	ck_assert_uint_eq(nbound(&mr), 0);
	ck_assert_uint_eq(droce_key_table_count(tbl, DROCE_KEY_MW), 0);
	ck_assert_ptr_null(droce_mw_get(tbl, k1));
	ck_assert_int_eq(droce_mw_dealloc(tbl, &w1), -EINVAL);
	ck_assert_int_eq(droce_mr_deregister(tbl, &mr), 0);
}
END_TEST

START_TEST(test_mw_get_finds_a_window_by_its_current_rkey_only)
{
	struct droce_mw w;
	uint32_t first;

	alloc_mw(&w, IBV_MW_TYPE_2);
	first = w.rkey;
	ck_assert_ptr_eq(droce_mw_get(tbl, first), &w);
	must_bind(&w, MR_VA, 64, RR);
	ck_assert_ptr_eq(droce_mw_get(tbl, w.rkey), &w);
	ck_assert_ptr_null(droce_mw_get(tbl, first));
	ck_assert_ptr_null(droce_mw_get(tbl, mr.lkey));
}
END_TEST

/* A reader lcore checks accesses while the control side rebinds the window
 * between two places. Every access it is granted must translate the way the
 * key it used was bound, never a mix of the two bindings. */
struct race {
	_Atomic uint32_t key;
	atomic_bool stop;
	atomic_ulong checks;
	atomic_ulong granted;
	atomic_ulong wrong;
};

static struct race race;

/* Even key bytes bind at offset 0, odd ones at 4096. */
static uint64_t
race_offset(uint32_t key)
{
	return (droce_key_byte(key) & 1) ? 4096 : 0;
}

static void *
race_reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&race.stop)) {
		uint32_t k = atomic_load(&race.key);
		void *host;

		enum droce_acc_result r;

		r = droce_access_check(tbl, k, PD, QPN, 8, 8, DROCE_ACC_REMOTE_READ, &host);
		if (r == DROCE_ACC_OK) {
			atomic_fetch_add(&race.granted, 1);
			if (host != buf + race_offset(k) + 8)
				atomic_fetch_add(&race.wrong, 1);
		} else if (r != DROCE_ACC_KEY_INVALID) {
			atomic_fetch_add(&race.wrong, 1);
		}
		atomic_fetch_add(&race.checks, 1);
	}
	return NULL;
}

START_TEST(test_mw_lookups_racing_rebinds_see_one_binding_or_none)
{
	unsigned long wrong, granted;
	struct droce_mw w;
	pthread_t th;
	int i;

	alloc_mw(&w, IBV_MW_TYPE_1);
	atomic_store(&race.key, w.rkey);	/* unbound: the reader gets nothing yet */
	ck_assert_int_eq(pthread_create(&th, NULL, race_reader, NULL), 0);
	for (i = 0; i < 20000; i++) {
		struct droce_mw_bind b = bind_req(&w, &mr, 0, 1024, RR | ZB);
		unsigned long seen = atomic_load(&race.checks);

		b.addr = MR_VA + race_offset(b.new_rkey);
		ck_assert_int_eq(droce_mw_bind(tbl, &w, &b), 0);
		atomic_store(&race.key, w.rkey);
		/* Now and then let the reader finish a check on the latest key,
		 * so it is granted some (with one CPU or many). */
		while (i % 128 == 0 && atomic_load(&race.checks) < seen + 2)
			sched_yield();
	}
	atomic_store(&race.stop, true);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	wrong = atomic_load(&race.wrong);
	granted = atomic_load(&race.granted);
	ck_assert_uint_eq(wrong, 0);
	ck_assert_uint_gt(granted, 0);
}
END_TEST

/* ------------------------------------------------------------ known_bugs */

/*
 * known-bugs #2: rxe let MR indices run into the MW index range after 0x10000
 * registrations, so rkeys stopped resolving ("RDMA/rxe: Prevent faulty rkey
 * generation", commit 1aefe5c177c1). Here: 70 000 register/deregister cycles
 * on the engine's real table size, interleaved with window alloc, bind and
 * dealloc. Never two live keys alike, every freed key dead at once and
 * afterwards unless the very same key was legitimately handed out again,
 * every live key working, and MR indices beyond 0x10000 reached.
 */
enum { CYCLES = 70000, LIVE_MR = 32, LIVE_MW = 16 };

struct live_set {
	uint32_t key[LIVE_MR + LIVE_MW + 1];
	unsigned int n;
};

static bool
live_has(const struct live_set *s, uint32_t k)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (s->key[i] == k)
			return true;
	return false;
}

static void
live_add(struct live_set *s, uint32_t k)
{
	ck_assert_msg(!live_has(s, k), "key %#x handed out twice", k);
	s->key[s->n++] = k;
}

static void
live_del(struct live_set *s, uint32_t k)
{
	for (unsigned int i = 0; i < s->n; i++) {
		if (s->key[i] == k) {
			s->key[i] = s->key[--s->n];
			return;
		}
	}
	ck_abort_msg("key %#x not live", k);
}

START_TEST(test_known_bug_2_mr_keys_never_collide_with_window_keys)
{
	static struct droce_mr mrs[LIVE_MR];
	static struct droce_mw mws[LIVE_MW];
	static struct droce_mr anchor;
	static uint32_t freed[CYCLES + CYCLES / 5 + 1];
	bool mr_live[LIVE_MR] = { false }, mw_live[LIVE_MW] = { false };
	struct live_set live = { .n = 0 };
	uint32_t nfreed = 0, max_mr_index = 0, i;
	struct droce_key_table *big;
	void *host;

	droce_key_table_destroy(tbl);	/* the fixture's small table */
	ck_assert_int_eq(droce_key_table_create(DROCE_MAX_MR, DROCE_MAX_MW, SEED, &big), 0);
	tbl = big;
	register_mr(&anchor, PD, LW | BIND, MR_VA, sizeof(buf));
	live_add(&live, anchor.lkey);

	for (i = 0; i < CYCLES; i++) {
		unsigned int s = i % LIVE_MR;

		if (mr_live[s]) {
			uint32_t old = mrs[s].rkey;

			ck_assert_int_eq(droce_mr_deregister(tbl, &mrs[s]), 0);
			live_del(&live, old);
			freed[nfreed++] = old;
			ck_assert_int_eq(droce_access_check(tbl, old, PD, QPN, MR_VA, 8,
							    DROCE_ACC_REMOTE_READ, &host),
					 DROCE_ACC_KEY_INVALID);
		}
		register_mr(&mrs[s], PD, LW | RR | RW, MR_VA, sizeof(buf));
		mr_live[s] = true;
		live_add(&live, mrs[s].rkey);
		if (droce_key_index(mrs[s].rkey) > max_mr_index)
			max_mr_index = droce_key_index(mrs[s].rkey);
		ck_assert_int_eq(droce_access_check(tbl, mrs[s].rkey, PD, QPN, MR_VA + 8, 8,
						    DROCE_ACC_REMOTE_WRITE, &host), DROCE_ACC_OK);
		ck_assert_ptr_eq(host, buf + 8);

		if (i % 5 == 0) {
			unsigned int w = (i / 5) % LIVE_MW;
			struct droce_mw_bind b;
			enum ibv_mw_type type;

			if (mw_live[w]) {
				uint32_t old = mws[w].rkey;

				ck_assert_int_eq(droce_mw_dealloc(tbl, &mws[w]), 0);
				live_del(&live, old);
				freed[nfreed++] = old;
				ck_assert_int_eq(droce_access_check(tbl, old, PD, QPN, MR_VA, 8,
								    DROCE_ACC_REMOTE_READ, &host),
						 DROCE_ACC_KEY_INVALID);
			}
			type = w % 2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1;
			ck_assert_int_eq(droce_mw_alloc(tbl, PD, type, &mws[w]), 0);
			b = bind_req(&mws[w], &anchor, MR_VA, 64, RR);
			b.new_rkey = droce_key_make(droce_key_index(mws[w].rkey), (uint8_t)(i * 7));
			ck_assert_int_eq(droce_mw_bind(tbl, &mws[w], &b), 0);
			mw_live[w] = true;
			live_add(&live, mws[w].rkey);
			ck_assert_int_eq(droce_access_check(tbl, mws[w].rkey, PD, QPN, MR_VA, 64,
							    DROCE_ACC_REMOTE_READ, &host),
					 DROCE_ACC_OK);
		}
	}

	ck_assert_uint_gt(max_mr_index, 0x10000);
	/* Every live key still resolves to its own object. */
	for (i = 0; i < LIVE_MR; i++)
		ck_assert_ptr_eq(droce_mr_get(tbl, mrs[i].lkey), &mrs[i]);
	for (i = 0; i < LIVE_MW; i++)
		ck_assert_int_eq(droce_access_check(tbl, mws[i].rkey, PD, QPN, MR_VA, 8,
						    DROCE_ACC_REMOTE_READ, &host), DROCE_ACC_OK);
	/* A freed key resolves again only if that exact key is live again. */
	for (i = 0; i < nfreed; i++) {
		enum droce_acc_result r = droce_access_check(tbl, freed[i], PD, QPN, MR_VA, 8,
							     DROCE_ACC_REMOTE_READ, &host);

		if (!live_has(&live, freed[i]))
			ck_assert_msg(r == DROCE_ACC_KEY_INVALID, "freed key %#x: %s", freed[i],
				      droce_acc_result_name(r));
	}
	ck_assert_uint_eq(nbound(&anchor), LIVE_MW);
}
END_TEST

TCase *
verbs_tcase_mw(void)
{
	TCase *tc = tcase_create("mw");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_mw_alloc_gives_an_unbound_window_whose_rkey_does_not_resolve);
	tcase_add_test(tc, test_mw_type1_bind_takes_the_new_rkey_and_retires_the_old_one);
	tcase_add_test(tc, test_mw_bind_accepts_any_consumer_key_byte);
	tcase_add_test(tc, test_mw_bind_with_another_index_is_einval);
	tcase_add_test(tc, test_mw_bind_needs_mw_bind_on_the_mr);
	tcase_add_test(tc, test_mw_remote_write_or_atomic_window_needs_local_write_on_the_mr);
	tcase_add_test(tc, test_mw_window_must_lie_inside_the_mr);
	tcase_add_test(tc, test_mw_window_enforces_its_own_range);
	tcase_add_test(tc, test_mw_window_enforces_its_own_access_not_the_mrs);
	tcase_add_test(tc, test_mw_window_key_is_never_an_lkey);
	tcase_add_test(tc, test_mw_zero_based_window_counts_from_its_own_start);
	tcase_add_test(tc, test_mw_window_on_a_zero_based_mr_lives_in_the_mrs_offsets);
	tcase_add_test(tc, test_mw_pd_mismatches_are_eperm_and_other_pd_cannot_use_it);
	tcase_add_test(tc, test_mw_bind_needs_an_rc_uc_or_xrc_send_qp);
	tcase_add_test(tc, test_mw_bind_access_bits_outside_remote_and_zero_based_are_einval);
	tcase_add_test(tc, test_mw_type1_zero_length_bind_unbinds);
	tcase_add_test(tc, test_mw_no_mr_with_an_address_or_length_is_einval);
	tcase_add_test(tc, test_mw_type1_rebind_moves_the_count_between_mrs);
	tcase_add_test(tc, test_mw_type2_binds_only_from_free_and_never_empty);
	tcase_add_test(tc, test_mw_type2_serves_only_the_qp_that_bound_it);
	tcase_add_test(tc, test_mw_dereg_and_rereg_mr_are_ebusy_while_a_window_is_bound);
	tcase_add_test(tc, test_mw_bind_loses_to_a_deregistration_in_progress);
	tcase_add_test(tc, test_mw_bind_to_a_deregistered_mr_is_einval);
	tcase_add_test(tc, test_mw_failed_bind_leaves_the_old_rkey_working);
	tcase_add_test(tc, test_mw_local_invalidate_retires_a_type2_rkey_at_once);
	tcase_add_test(tc, test_mw_remote_invalidate_comes_only_from_the_bound_qp);
	tcase_add_test(tc, test_mw_invalidate_refuses_type1_windows_mrs_and_stale_keys);
	tcase_add_test(tc, test_mw_dealloc_unbinds_and_frees_the_key);
	tcase_add_test(tc, test_mw_get_finds_a_window_by_its_current_rkey_only);
	tcase_add_test(tc, test_mw_lookups_racing_rebinds_see_one_binding_or_none);
	return tc;
}

TCase *
verbs_tcase_known_bugs(void)
{
	TCase *tc = tcase_create("known_bugs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_known_bug_2_mr_keys_never_collide_with_window_keys);
	return tc;
}
