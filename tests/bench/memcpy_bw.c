/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * memcpy_bw SIZE SECONDS [BUFFERS]: single-core memcpy bandwidth for
 * buffers of SIZE bytes, cycling over BUFFERS (default 16) sources and
 * destinations, as a message engine with that many messages in flight
 * touches them. Prints "memcpy SIZE B: X GB/s". The reference of
 * scripts/bench-bw.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : 65536;
	double secs = argc > 2 ? strtod(argv[2], NULL) : 3;
	unsigned int nbuf = argc > 3 ? (unsigned int)atoi(argv[3]) : 16, i = 0;
	uint8_t *src = aligned_alloc(4096, size * nbuf), *dst = aligned_alloc(4096, size * nbuf);
	uint64_t bytes = 0;
	double t0, t;

	if (src == NULL || dst == NULL || nbuf == 0)
		return 2;
	memset(src, 1, size * nbuf);
	memset(dst, 2, size * nbuf);
	t0 = now();
	do {
		for (int k = 0; k < 64; k++, i++) {
			memcpy(dst + (size_t)(i % nbuf) * size, src + (size_t)((i * 7) % nbuf) * size,
			       size);
			bytes += size;
		}
		/* keep the copies observable */
		__asm__ volatile("" : : "r"(dst) : "memory");
		t = now() - t0;
	} while (t < secs);
	printf("memcpy %zu B: %.3f GB/s\n", size, (double)bytes / t / 1e9);
	return 0;
}
