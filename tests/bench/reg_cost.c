/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The cost of ibv_reg_mr and ibv_dereg_mr (scripts/bench-reg): registers
 * and deregisters an anonymous mapping of each size, touched first, over
 * and over; prints the median of each call's time, in microseconds and
 * per MiB. `reg_cost huge` maps 2 MiB hugepages instead (MAP_HUGETLB);
 * `reg_cost file` a MAP_PRIVATE mapping of a file on /var/tmp, which no
 * userfaultfd protects: the shim registers it indirect (nothing moved, the
 * pages faulted in).
 */

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS	31

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	static const size_t sizes[] = { 4096, 64 << 10, 1 << 20, 16 << 20 };
	int huge = argc > 1 && strcmp(argv[1], "huge") == 0;
	int file = argc > 1 && strcmp(argv[1], "file") == 0;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx != NULL ? ibv_alloc_pd(ctx) : NULL;
	double reg[ROUNDS], dereg[ROUNDS];

	if (pd == NULL) {
		fprintf(stderr, "reg_cost: no device\n");
		return 2;
	}
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t len = sizes[k];
		char *buf;

		if (huge && len < (2u << 20))
			continue;
		if (file) {
			char path[] = "/var/tmp/reg_cost.XXXXXX";
			int fd = mkstemp(path);

			buf = MAP_FAILED;
			if (fd >= 0 && unlink(path) == 0 && ftruncate(fd, (off_t)len) == 0)
				buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
			if (fd >= 0)
				close(fd);
		} else {
			buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | (huge ? MAP_HUGETLB : 0), -1, 0);
		}
		if (buf == MAP_FAILED) {
			perror("reg_cost: mmap");
			return 2;
		}
		memset(buf, 1, len);
		for (int i = 0; i < ROUNDS; i++) {
			double t0 = now_us(), t1, t2;
			struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);

			t1 = now_us();
			if (mr == NULL) {
				perror("reg_cost: ibv_reg_mr");
				return 1;
			}
			ibv_dereg_mr(mr);
			t2 = now_us();
			reg[i] = t1 - t0;
			dereg[i] = t2 - t1;
		}
		qsort(reg, ROUNDS, sizeof(reg[0]), cmp_double);
		qsort(dereg, ROUNDS, sizeof(dereg[0]), cmp_double);
		printf("%zu %.1f %.1f %.1f %.1f\n", len, reg[ROUNDS / 2], dereg[ROUNDS / 2],
		       reg[ROUNDS / 2] * (1 << 20) / (double)len,
		       dereg[ROUNDS / 2] * (1 << 20) / (double)len);
		munmap(buf, len);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
