/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Collectives and MPI-3 one-sided communication with every result
 * checked, for running an MPI on droce (tests/apps/mpich.sh): exactly two
 * ranks. mpi_check does the ping-pong and the allreduces; this does:
 *
 * 1. MPI_Bcast from each root of 1, 1000 and 1 MiB + 3 bytes.
 * 2. MPI_Alltoall of 1, 1000 and 256 Ki int32 per rank.
 * 3. RMA in four kinds of epoch: fence and post/start/complete/wait
 *    (active target), per-target lock/unlock and lock_all with flushes
 *    (passive target). In each, on a byte window over malloc'ed memory
 *    (MPI_Win_create): MPI_Put of 1 B .. 512 KiB into the other rank's
 *    window at odd offsets and MPI_Get of as much from the rest of it;
 *    every byte of each window is then checked, the ones no Put touched
 *    too. On an int64 window from MPI_Win_allocate: MPI_Accumulate
 *    (MPI_SUM) of 4096 elements, 64 MPI_Fetch_and_op (MPI_SUM of 1) on one
 *    counter and MPI_Compare_and_swap on 16 slots, from both ranks into
 *    both windows at once where the epoch allows it (not to itself in
 *    post/start); a counter must end at the number of increments and the
 *    values fetched from it, gathered from both origins, must be each of
 *    0 .. N-1 exactly once; of the compare-and-swaps on a slot exactly one
 *    must win. In the passive epochs each rank also increments a counter
 *    of rank 0's 32 times by compare-and-swap retried after each
 *    MPI_Win_flush.
 *
 * Prints "FAIL ..." for the first problems, "rma: N bytes put, N got" and
 * "mpi_coll_rma: N errors" at the end; exits 1 on any mismatch (both
 * ranks), 2 on a usage error.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAX_REPORTS	8

#define DATA_BYTES	(1u << 20)	/* the byte window; Puts in the first half */
#define GET_FROM	(DATA_BYTES / 2)	/* Gets read the second half */

#define ACC_N		4096	/* the int64 window: accumulate elements, then */
#define FOP_AT		ACC_N	/* the fetch-and-op counter, */
#define CAS_AT		(ACC_N + 1)	/* CAS_N compare-and-swap slots, */
#define CAS_N		16
#define INC_AT		(CAS_AT + CAS_N)	/* the counter incremented by CAS */
#define INT_N		(INC_AT + 1)
#define FOP_K		64	/* fetch-and-ops per origin and target */
#define INC_K		32	/* CAS increments per rank */

static int rank, other;
static long errors;
static uint64_t put_bytes, got_bytes;

static void
report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
report(const char *fmt, ...)
{
	va_list ap;

	if (errors++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	printf("FAIL rank %d: ", rank);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

static uint8_t
byte_of(uint32_t who, uint32_t seq, size_t i)
{
	return (uint8_t)(who * 131u + seq * 29u + (uint32_t)i * 13u + (uint32_t)(i >> 9) + 7u);
}

static void
bcast(void)
{
	static const size_t sizes[] = { 1, 1000, (1u << 20) + 3 };
	uint8_t *buf = malloc(sizes[2]);

	if (!buf) {
		report("malloc");
		return;
	}
	for (int root = 0; root < 2; root++)
		for (size_t s = 0; s < 3; s++) {
			size_t n = sizes[s];
			uint32_t seq = (uint32_t)(root * 3 + s);

			for (size_t i = 0; i < n; i++)
				buf[i] = rank == root ? byte_of(9, seq, i) : (uint8_t)~byte_of(9, seq, i);
			MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
			for (size_t i = 0; i < n; i++)
				if (buf[i] != byte_of(9, seq, i)) {
					report("bcast of %zu from %d: byte %zu is 0x%02x, not 0x%02x", n,
					       root, i, buf[i], byte_of(9, seq, i));
					break;
				}
			if (rank == 0)
				printf("bcast of %zu bytes from rank %d checked\n", n, root);
		}
	free(buf);
}

/* Element i of what rank from sends rank to. */
static int32_t
a2a_val(int from, int to, size_t i)
{
	return (int32_t)((uint32_t)i * 2246822519u + (uint32_t)from * 3266489917u +
			 (uint32_t)to * 668265263u);
}

static void
alltoall(void)
{
	static const size_t counts[] = { 1, 1000, 1u << 18 };

	for (size_t c = 0; c < 3; c++) {
		size_t n = counts[c];
		int32_t *snd = malloc(2 * n * sizeof(*snd)), *rcv = malloc(2 * n * sizeof(*rcv));

		if (!snd || !rcv) {
			report("malloc");
			free(snd), free(rcv);
			return;
		}
		for (int p = 0; p < 2; p++)
			for (size_t i = 0; i < n; i++) {
				snd[p * n + i] = a2a_val(rank, p, i);
				rcv[p * n + i] = ~a2a_val(p, rank, i);
			}
		MPI_Alltoall(snd, (int)n, MPI_INT32_T, rcv, (int)n, MPI_INT32_T, MPI_COMM_WORLD);
		for (int p = 0; p < 2; p++)
			for (size_t i = 0; i < n; i++)
				if (rcv[p * n + i] != a2a_val(p, rank, i)) {
					report("alltoall of %zu: element %zu from %d is %" PRId32 ", not %" PRId32,
					       n, i, p, rcv[p * n + i], a2a_val(p, rank, i));
					p = 2;
					break;
				}
		if (rank == 0)
			printf("alltoall of %zu int32 per rank checked\n", n);
		free(snd), free(rcv);
	}
}

enum epoch { FENCE, PSCW, LOCK, LOCK_ALL };
static const char *const epoch_name[] = { "fence", "post/start/complete/wait", "lock/unlock",
					  "lock_all/flush" };

static MPI_Group other_group;

static int
passive(enum epoch e)
{
	return e == LOCK || e == LOCK_ALL;
}

/* Whether origin o reaches target t in epoch e: post/start here names
 * only the other rank. */
static int
reaches(enum epoch e, int o, int t)
{
	return e != PSCW || o != t;
}

static void
epoch_open(enum epoch e, MPI_Win win)
{
	switch (e) {
	case FENCE:
		MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
		break;
	case PSCW:
		MPI_Win_post(other_group, 0, win);
		MPI_Win_start(other_group, 0, win);
		break;
	case LOCK:
		break;
	case LOCK_ALL:
		MPI_Win_lock_all(0, win);
		break;
	}
}

/* Passive epochs end with a barrier: then every origin is done. */
static void
epoch_close(enum epoch e, MPI_Win win)
{
	switch (e) {
	case FENCE:
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
		break;
	case PSCW:
		MPI_Win_complete(win);
		MPI_Win_wait(win);
		break;
	case LOCK:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case LOCK_ALL:
		MPI_Win_unlock_all(win);
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	}
}

/* Around the operations on one target: a lock, or a flush. */
static void
target_open(enum epoch e, int t, int lock_type, MPI_Win win)
{
	if (e == LOCK)
		MPI_Win_lock(lock_type, t, 0, win);
}

static void
target_close(enum epoch e, int t, MPI_Win win)
{
	if (e == LOCK)
		MPI_Win_unlock(t, win);
	else if (e == LOCK_ALL)
		MPI_Win_flush(t, win);
}

/* A rank's own window, in a passive epoch, is read and written under a
 * lock of its own. */
static void
self_open(enum epoch e, MPI_Win win)
{
	if (passive(e))
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
}

static void
self_close(enum epoch e, MPI_Win win)
{
	if (passive(e))
		MPI_Win_unlock(rank, win);
}

/* The Puts: chunks of the first half, two bytes apart, from offset 1. */
static const size_t put_len[] = { 1, 8, 4095, 65536, 262147, 180000 };

static size_t
put_off(size_t k)
{
	size_t off = 1;

	for (size_t j = 0; j < k; j++)
		off += put_len[j] + 2;
	return off;
}

/* Byte i of rank who's window before the round, and of what the other
 * rank puts there. */
static uint8_t
bg_byte(int who, uint32_t round, size_t i)
{
	return byte_of((uint32_t)who, round * 2u, i);
}

static uint8_t
put_byte(int origin, uint32_t round, size_t i)
{
	return (uint8_t)~byte_of((uint32_t)origin + 5u, round * 2u + 1u, i);
}

static void
rma_data(enum epoch e, uint32_t round, MPI_Win win, uint8_t *base, uint8_t *src, uint8_t *dst)
{
	size_t nput = sizeof(put_len) / sizeof(put_len[0]);

	self_open(e, win);
	for (size_t i = 0; i < DATA_BYTES; i++)
		base[i] = bg_byte(rank, round, i);
	self_close(e, win);
	for (size_t i = 0; i < DATA_BYTES; i++) {
		src[i] = put_byte(rank, round, i);
		dst[i] = 0;
	}
	MPI_Barrier(MPI_COMM_WORLD);

	epoch_open(e, win);
	target_open(e, other, MPI_LOCK_EXCLUSIVE, win);
	for (size_t k = 0; k < nput; k++) {
		size_t off = put_off(k);

		MPI_Put(src + off, (int)put_len[k], MPI_BYTE, other, (MPI_Aint)off, (int)put_len[k],
			MPI_BYTE, win);
		/* as much from the second half, at the same distance */
		MPI_Get(dst + GET_FROM + off, (int)put_len[k], MPI_BYTE, other,
			(MPI_Aint)(GET_FROM + off), (int)put_len[k], MPI_BYTE, win);
		put_bytes += put_len[k];
		got_bytes += put_len[k];
	}
	target_close(e, other, win);
	epoch_close(e, win);

	/* what was got, and what is left in the unread parts of dst */
	for (size_t k = 0, next = 0; k <= nput; k++) {
		size_t off = k < nput ? put_off(k) : GET_FROM;

		for (size_t i = next; i < off; i++)
			if (dst[GET_FROM + i] != 0) {
				report("%s: byte %zu past the Gets was written", epoch_name[e], GET_FROM + i);
				break;
			}
		if (k == nput)
			break;
		for (size_t i = off; i < off + put_len[k]; i++)
			if (dst[GET_FROM + i] != bg_byte(other, round, GET_FROM + i)) {
				report("%s: Get of %zu at %zu: byte %zu is 0x%02x, not 0x%02x", epoch_name[e],
				       put_len[k], GET_FROM + off, GET_FROM + i, dst[GET_FROM + i],
				       bg_byte(other, round, GET_FROM + i));
				break;
			}
		next = off + put_len[k];
	}
	/* every byte of the window: the other rank's Puts, and around them ours */
	self_open(e, win);
	for (size_t k = 0, next = 0; k <= nput; k++) {
		size_t off = k < nput ? put_off(k) : DATA_BYTES;

		for (size_t i = next; i < off; i++)
			if (base[i] != bg_byte(rank, round, i)) {
				report("%s: window byte %zu (no Put there) is 0x%02x, not 0x%02x", epoch_name[e],
				       i, base[i], bg_byte(rank, round, i));
				break;
			}
		if (k == nput)
			break;
		for (size_t i = off; i < off + put_len[k]; i++)
			if (base[i] != put_byte(other, round, i)) {
				report("%s: Put of %zu at %zu: byte %zu is 0x%02x, not 0x%02x", epoch_name[e],
				       put_len[k], off, i, base[i], put_byte(other, round, i));
				break;
			}
		next = off + put_len[k];
	}
	self_close(e, win);
}

static int64_t
acc_init(int who, uint32_t round, size_t i)
{
	return (int64_t)(i * 0x9E3779B97F4A7C15ull) ^ ((int64_t)who << 40) ^ (int64_t)round;
}

static int64_t
acc_contrib(int origin, uint32_t round, size_t i)
{
	return (int64_t)((i + 1) * 1000003u) * (origin ? -3 : 7) + (int64_t)round * 11;
}

static int64_t
cas_init(int who, uint32_t round, size_t s)
{
	return 1000 + who * 100 + (int64_t)round * 10000 + (int64_t)s;
}

static int64_t
cas_new(int origin, uint32_t round, size_t s)
{
	return -(cas_init(origin, round, s) * 7 + 1 + origin);
}

/* Whether the values fetched from one counter are each of 0 .. n - 1
 * once. */
static int
each_once(const int64_t *v, int n)
{
	char *seen = calloc((size_t)n, 1);
	int good = seen != NULL;

	for (int i = 0; good && i < n; i++) {
		if (v[i] < 0 || v[i] >= n || seen[v[i]])
			good = 0;
		else
			seen[v[i]] = 1;
	}
	free(seen);
	return good;
}

/* Compare-and-swap increments of rank 0's INC_AT counter: each succeeds
 * only if it saw the current value; a flush brings each result. */
static void
cas_increments(MPI_Win win, int64_t *won)
{
	int64_t guess = 0;

	for (int n = 0; n < INC_K;) {
		int64_t next = guess + 1, old;

		MPI_Compare_and_swap(&next, &guess, &old, MPI_INT64_T, 0, INC_AT, win);
		MPI_Win_flush(0, win);
		if (old == guess)
			won[n++] = guess;
		guess = old == guess ? next : old;
	}
}

static void
rma_atomics(enum epoch e, uint32_t round, MPI_Win win, int64_t *base)
{
	static int64_t contrib[ACC_N], fetched[2][FOP_K], cas_old[2][CAS_N];
	static int64_t all_fetched[2][2][FOP_K], all_cas_old[2][2][CAS_N];	/* [origin][target] */
	static int64_t won[INC_K], all_won[2][INC_K];
	int64_t one = 1, cmp[CAS_N], nv[CAS_N];

	self_open(e, win);
	for (size_t i = 0; i < ACC_N; i++)
		base[i] = acc_init(rank, round, i);
	base[FOP_AT] = 0;
	for (size_t s = 0; s < CAS_N; s++)
		base[CAS_AT + s] = cas_init(rank, round, s);
	base[INC_AT] = 0;
	self_close(e, win);
	for (size_t i = 0; i < ACC_N; i++)
		contrib[i] = acc_contrib(rank, round, i);
	memset(fetched, 0xff, sizeof(fetched));
	memset(cas_old, 0xff, sizeof(cas_old));
	MPI_Barrier(MPI_COMM_WORLD);

	epoch_open(e, win);
	for (int t = 0; t < 2; t++) {
		if (!reaches(e, rank, t))
			continue;
		target_open(e, t, MPI_LOCK_SHARED, win);
		MPI_Accumulate(contrib, ACC_N, MPI_INT64_T, t, 0, ACC_N, MPI_INT64_T, MPI_SUM, win);
		for (int k = 0; k < FOP_K; k++)
			MPI_Fetch_and_op(&one, &fetched[t][k], MPI_INT64_T, t, FOP_AT, MPI_SUM, win);
		for (size_t s = 0; s < CAS_N; s++) {
			cmp[s] = cas_init(t, round, s);
			nv[s] = cas_new(rank, round, s);
			MPI_Compare_and_swap(&nv[s], &cmp[s], &cas_old[t][s], MPI_INT64_T, t,
					     (MPI_Aint)(CAS_AT + s), win);
		}
		target_close(e, t, win);
	}
	if (e == LOCK_ALL)
		cas_increments(win, won);
	if (e == LOCK) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		cas_increments(win, won);
		MPI_Win_unlock(0, win);
	}
	epoch_close(e, win);

	MPI_Allgather(fetched, 2 * FOP_K, MPI_INT64_T, all_fetched, 2 * FOP_K, MPI_INT64_T,
		      MPI_COMM_WORLD);
	MPI_Allgather(cas_old, 2 * CAS_N, MPI_INT64_T, all_cas_old, 2 * CAS_N, MPI_INT64_T,
		      MPI_COMM_WORLD);
	MPI_Allgather(won, INC_K, MPI_INT64_T, all_won, INC_K, MPI_INT64_T, MPI_COMM_WORLD);

	self_open(e, win);
	for (size_t i = 0; i < ACC_N; i++) {
		int64_t want = acc_init(rank, round, i);

		for (int o = 0; o < 2; o++)
			if (reaches(e, o, rank))
				want += acc_contrib(o, round, i);
		if (base[i] != want) {
			report("%s: accumulated element %zu is %" PRId64 ", not %" PRId64, epoch_name[e],
			       i, base[i], want);
			break;
		}
	}
	{
		int64_t got[2 * FOP_K];
		int n = 0;

		for (int o = 0; o < 2; o++)
			if (reaches(e, o, rank)) {
				memcpy(got + n, all_fetched[o][rank], sizeof(all_fetched[o][rank]));
				n += FOP_K;
			}
		if (base[FOP_AT] != n)
			report("%s: counter after %d fetch-and-ops is %" PRId64, epoch_name[e], n,
			       base[FOP_AT]);
		if (!each_once(got, n))
			report("%s: the %d values fetched from the counter are not 0..%d once each",
			       epoch_name[e], n, n - 1);
	}
	for (size_t s = 0; s < CAS_N; s++) {
		int64_t init = cas_init(rank, round, s), final = base[CAS_AT + s];
		int winners = 0, good = 1;

		for (int o = 0; o < 2; o++) {
			int64_t old = all_cas_old[o][rank][s];

			if (!reaches(e, o, rank))
				continue;
			if (old == init) {
				winners++;
				good &= final == cas_new(o, round, s);
			} else {
				good &= old == final;	/* it came second, and saw the winner's */
			}
		}
		if (winners != 1 || !good) {
			report("%s: CAS slot %zu: %d winners, final %" PRId64 ", results %" PRId64
			       " %" PRId64, epoch_name[e], s, winners, final, all_cas_old[0][rank][s],
			       all_cas_old[1][rank][s]);
			break;
		}
	}
	if (passive(e) && rank == 0) {
		if (base[INC_AT] != 2 * INC_K || !each_once(&all_won[0][0], 2 * INC_K))
			report("%s: CAS increments: counter %" PRId64 ", not %d, or a value won twice",
			       epoch_name[e], base[INC_AT], 2 * INC_K);
	}
	self_close(e, win);
}

static void
rma(void)
{
	uint8_t *mem = malloc(DATA_BYTES), *src = malloc(DATA_BYTES), *dst = malloc(DATA_BYTES);
	MPI_Group world;
	MPI_Win data, ints;
	int64_t *ibase;

	if (!mem || !src || !dst) {
		report("malloc");
		free(mem), free(src), free(dst);
		return;
	}
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &other, &other_group);
	MPI_Win_create(mem, DATA_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &data);
	MPI_Win_allocate(INT_N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
			 &ibase, &ints);
	for (enum epoch e = FENCE; e <= LOCK_ALL; e++) {
		for (uint32_t round = e * 2; round < e * 2 + 2; round++) {
			rma_data(e, round, data, mem, src, dst);
			rma_atomics(e, round, ints, ibase);
		}
		if (rank == 0)
			printf("rma, %s: Put, Get, Accumulate, Fetch_and_op, Compare_and_swap checked\n",
			       epoch_name[e]);
	}
	MPI_Win_free(&ints);
	MPI_Win_free(&data);
	MPI_Group_free(&other_group);
	MPI_Group_free(&world);
	free(mem), free(src), free(dst);
}

int
main(int argc, char **argv)
{
	long total = 0;
	int size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc > 1) {
		if (rank == 0)
			fprintf(stderr, "usage: mpiexec -n 2 mpi_coll_rma\n");
		MPI_Finalize();
		return 2;
	}
	other = 1 - rank;
	bcast();
	alltoall();
	rma();
	MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("rma: %" PRIu64 " bytes put, %" PRIu64 " got\n", put_bytes, got_bytes);
		printf("mpi_coll_rma: %ld errors\n", total);
	}
	MPI_Finalize();
	return total ? 1 : 0;
}
