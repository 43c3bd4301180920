/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * An MPI program whose every result is checked, for running Open MPI on
 * droce (tests/integration/mpi.sh): exactly two ranks.
 *
 *   mpi_check [MAX_BYTES]        (default 4 MiB)
 *
 * 1. Ping-pong: for each size from 1 byte to MAX_BYTES (every power of two
 *    and an odd size between each two), rank 0 sends a message, rank 1
 *    checks it and answers with a message of its own, which rank 0 checks.
 *    Every byte is checked, and the received length. A receive buffer is
 *    first filled with the pattern of the next message, which differs from
 *    the expected one in every byte, so a byte that was never written is
 *    caught. Prints one line per size: the average half round trip and
 *    the bandwidth it makes (filling and checking included), then
 *    "pingpong: N bytes each way".
 * 2. MPI_Allreduce (MPI_SUM over int64, and MPI_MAX over double) of 1,
 *    1000 and 1 Mi elements, each element checked against the sum or
 *    maximum computed locally.
 *
 * Prints "FAIL ..." for the first problems and "mpi_check: N errors" at
 * the end; exits 1 on any mismatch (both ranks), 2 on a usage error.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define TAG_PING	1
#define TAG_PONG	2
#define MAX_REPORTS	5

static int rank;
static long errors;

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

/* Byte i of message seq in direction dir (0 ping, 1 pong): 31 is odd, so
 * messages seq and seq + 1 differ in every byte. */
static uint8_t
pattern(uint32_t seq, int dir, size_t i)
{
	return (uint8_t)(seq * 31u + (uint32_t)dir * 101u + (uint32_t)i * 7u + (uint32_t)(i >> 8) + 1u);
}

static void
fill(uint8_t *buf, size_t len, uint32_t seq, int dir)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(seq, dir, i);
}

static void
check(const uint8_t *buf, size_t len, uint32_t seq, int dir)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pattern(seq, dir, i)) {
			report("%zu-byte %s %" PRIu32 ": byte %zu is 0x%02x, not 0x%02x",
			       len, dir ? "pong" : "ping", seq, i, buf[i], pattern(seq, dir, i));
			return;
		}
}

/* One message of len bytes: the sender fills, the receiver prefills with
 * the next message's pattern, receives and checks. */
static void
exchange(uint8_t *buf, size_t len, uint32_t seq, int dir)
{
	int sender = dir;	/* rank 0 pings, rank 1 pongs */
	MPI_Status st;
	int got;

	if (rank == sender) {
		fill(buf, len, seq, dir);
		MPI_Send(buf, (int)len, MPI_BYTE, 1 - rank, dir ? TAG_PONG : TAG_PING, MPI_COMM_WORLD);
		return;
	}
	fill(buf, len, seq + 1, dir);
	MPI_Recv(buf, (int)len, MPI_BYTE, 1 - rank, dir ? TAG_PONG : TAG_PING, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &got);
	if ((size_t)got != len)
		report("%zu-byte %s %" PRIu32 ": received %d bytes", len, dir ? "pong" : "ping",
		       seq, got);
	check(buf, len, seq, dir);
}

static void
pingpong(size_t max)
{
	uint8_t *buf = malloc(max);
	uint32_t seq = 0;
	uint64_t total = 0;

	if (!buf) {
		report("malloc %zu", max);
		return;
	}
	if (rank == 0)
		printf("%10s %8s %12s %10s\n", "bytes", "iters", "half-rtt-us", "MB/s");
	for (size_t p = 1; p <= max; p *= 2) {
		size_t sizes[2] = { p, p + p / 2 + 1 };

		for (int k = 0; k < 2; k++) {
			size_t len = sizes[k];
			int iters = len <= 4096 ? 100 : len <= 262144 ? 20 : 4;
			double t0;

			if (len > max || (k == 1 && p < 4))
				continue;
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			for (int it = 0; it < iters; it++, seq++) {
				exchange(buf, len, seq, 0);
				exchange(buf, len, seq, 1);
			}
			total += (uint64_t)len * (uint64_t)iters;
			if (rank == 0) {
				double half = (MPI_Wtime() - t0) / iters / 2;

				printf("%10zu %8d %12.1f %10.1f\n", len, iters, half * 1e6,
				       len / half / 1e6);
				fflush(stdout);
			}
		}
	}
	if (rank == 0)
		printf("pingpong: %" PRIu64 " bytes each way\n", total);
	free(buf);
}

/* Element i of rank r's contribution. */
static int64_t
contrib_i64(int r, size_t i)
{
	return (int64_t)(i * 2654435761u) - (int64_t)r * 1000003 + (int64_t)i * r;
}

static double
contrib_dbl(int r, size_t i)
{
	return (double)((i * 37 + (size_t)r * 11) % 1009) - 500.25;
}

static void
allreduce(void)
{
	static const size_t counts[] = { 1, 1000, 1u << 20 };
	int size;

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t n = counts[c];
		int64_t *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));
		double *din = malloc(n * sizeof(*din)), *dout = malloc(n * sizeof(*dout));

		if (!in || !out || !din || !dout) {
			report("malloc for %zu elements", n);
			free(in), free(out), free(din), free(dout);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			in[i] = contrib_i64(rank, i);
			out[i] = 0;
			din[i] = contrib_dbl(rank, i);
			dout[i] = 0;
		}
		MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(din, dout, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		for (size_t i = 0; i < n; i++) {
			int64_t sum = 0;
			double max = contrib_dbl(0, i);

			for (int r = 0; r < size; r++) {
				sum += contrib_i64(r, i);
				if (contrib_dbl(r, i) > max)
					max = contrib_dbl(r, i);
			}
			if (out[i] != sum) {
				report("allreduce SUM of %zu: element %zu is %" PRId64 ", not %" PRId64,
				       n, i, out[i], sum);
				break;
			}
			if (dout[i] != max) {
				report("allreduce MAX of %zu: element %zu is %g, not %g", n, i,
				       dout[i], max);
				break;
			}
		}
		if (rank == 0)
			printf("allreduce of %zu elements (SUM int64, MAX double) checked\n", n);
		free(in), free(out), free(din), free(dout);
	}
}

int
main(int argc, char **argv)
{
	size_t max = 4u << 20;
	long total = 0;
	int size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		max = strtoul(argv[1], NULL, 0);
	if (size != 2 || max == 0 || max > (1u << 30)) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 mpi_check [MAX_BYTES (1..1 GiB)]\n");
		MPI_Finalize();
		return 2;
	}
	pingpong(max);
	allreduce();
	MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %ld errors\n", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
