/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * An MPI program for any number of ranks whose every result is checked,
 * for running Open MPI across a rack of droce hosts
 * (tests/integration/rack.sh):
 *
 *   mpi_rack [ELEMENTS]        (default 65536 per rank and block)
 *
 * 1. MPI_Allreduce, MPI_SUM over int64: element i of rank r is
 *    r * ELEMENTS + i; every element of the result is checked against the
 *    sum over all ranks.
 * 2. MPI_Alltoall of int32 blocks of ELEMENTS / 16 elements: element k of
 *    the block rank s sends to rank d is (s << 20) ^ (d << 10) ^ k, and
 *    every element received is checked.
 * 3. A ring: each rank sends ELEMENTS bytes of its own pattern to the next
 *    rank and checks what the previous one sent (MPI_Sendrecv).
 *
 * Prints "FAIL ..." for the first problems, "mpi_rack: N ranks, M errors"
 * on rank 0, and exits 1 on any mismatch on any rank (2 on a usage error).
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define MAX_REPORTS	5

static int rank, size;
static long errors;

static void
report(const char *what, long where, long long got, long long want)
{
	if (errors++ < MAX_REPORTS)
		printf("FAIL rank %d: %s at %ld: got %lld, want %lld\n", rank, what, where, got, want);
}

static void
check_allreduce(long n)
{
	int64_t *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));
	long i;

	if (in == NULL || out == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < n; i++) {
		in[i] = (int64_t)rank * n + i;
		out[i] = -1;
	}
	MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < n; i++) {
		/* sum over r of r * n + i */
		int64_t want = (int64_t)size * (size - 1) / 2 * n + (int64_t)size * i;

		if (out[i] != want)
			report("allreduce", i, out[i], want);
	}
	free(in);
	free(out);
}

static int32_t
a2a_value(int src, int dst, long k)
{
	return (int32_t)(((uint32_t)src << 20) ^ ((uint32_t)dst << 10) ^ (uint32_t)k);
}

static void
check_alltoall(long block)
{
	int32_t *in = malloc(size * block * sizeof(*in)), *out = malloc(size * block * sizeof(*out));
	long k;
	int d;

	if (in == NULL || out == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (d = 0; d < size; d++)
		for (k = 0; k < block; k++) {
			in[d * block + k] = a2a_value(rank, d, k);
			out[d * block + k] = ~a2a_value(d, rank, k);	/* wrong in every bit */
		}
	MPI_Alltoall(in, (int)block, MPI_INT32_T, out, (int)block, MPI_INT32_T, MPI_COMM_WORLD);
	for (d = 0; d < size; d++)
		for (k = 0; k < block; k++)
			if (out[d * block + k] != a2a_value(d, rank, k))
				report("alltoall", d * block + k, out[d * block + k], a2a_value(d, rank, k));
	free(in);
	free(out);
}

static unsigned char
ring_byte(int from, long i)
{
	return (unsigned char)(from * 31 + i * 7 + (i >> 8));
}

static void
check_ring(long n)
{
	unsigned char *in = malloc(n), *out = malloc(n);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	long i;

	if (in == NULL || out == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < n; i++) {
		out[i] = ring_byte(rank, i);
		in[i] = (unsigned char)~ring_byte(prev, i);
	}
	MPI_Sendrecv(out, (int)n, MPI_BYTE, next, 1, in, (int)n, MPI_BYTE, prev, 1, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (i = 0; i < n; i++)
		if (in[i] != ring_byte(prev, i))
			report("ring", i, in[i], ring_byte(prev, i));
	free(in);
	free(out);
}

int
main(int argc, char **argv)
{
	long n = 65536, all;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		n = strtol(argv[1], NULL, 0);
	if (n < 16 || n > (1L << 24)) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_rack [ELEMENTS: 16 .. 16777216]\n");
		MPI_Finalize();
		return 2;
	}
	check_allreduce(n);
	check_alltoall(n / 16);
	check_ring(n);
	MPI_Allreduce(&errors, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_rack: %d ranks, %ld errors\n", size, all);
	MPI_Finalize();
	return all != 0;
}
