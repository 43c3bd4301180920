/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Registration under running threads (not a man page: what ibv_reg_mr(3)
 * promises without saying it). One thread registers, re-registers and
 * deregisters small ranges of a set of pages, again and again, while three
 * threads increment counters of their own on the same pages (outside the
 * registered bytes) and a fourth has the kernel write into them (read(2)
 * from a pipe). On hardware and Soft-RoCE no write is ever lost or failed:
 * afterwards every counter must equal its thread's passes, every read(2)
 * must have returned all its bytes, and each page must hold the last bytes
 * the kernel wrote there. Then the agent's RDMA WRITE must still reach a
 * range registered over those pages.
 */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_test.h"

#define PAGES		32
#define PAGE		4096u
#define REG_BYTES	256u		/* registered at the start of a page; nobody writes them */
#define CNT_OFF		1024u		/* writer t's counter: CNT_OFF + 64 * t */
#define KERN_OFF	2048u		/* the kernel's bytes */
#define KERN_BYTES	512u
#define WRITERS		3
#define ROUNDS		600		/* registrations */
#define LIVE		4		/* registrations held at once */

static uint8_t *pages;
static atomic_bool stop;

struct writer {
	pthread_t thread;
	unsigned int id;
	uint64_t passes;
};

static void *
writer_run(void *arg)
{
	struct writer *w = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (unsigned int p = 0; p < PAGES; p++)
			(*(volatile uint64_t *)(void *)(pages + p * PAGE + CNT_OFF + 64 * w->id))++;
		w->passes++;
	}
	return NULL;
}

struct kernel_writer {
	pthread_t thread;
	uint64_t reads, short_reads, bad_bytes;
	int err;			/* the first read(2) errno */
	uint8_t last[PAGES];		/* each page's last pattern byte */
};

static void *
kernel_run(void *arg)
{
	struct kernel_writer *k = arg;
	uint8_t buf[KERN_BYTES];
	uint8_t seq = 1;
	int fds[2];

	if (pipe(fds) != 0) {
		k->err = errno;
		return NULL;
	}
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (unsigned int p = 0; p < PAGES; p++, seq = (uint8_t)(seq % 250 + 1)) {
			uint8_t *slot = pages + p * PAGE + KERN_OFF;
			ssize_t n;

			memset(buf, seq, sizeof(buf));
			if (write(fds[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
				k->err = errno;
				goto out;
			}
			n = read(fds[0], slot, sizeof(buf));
			k->reads++;
			if (n != (ssize_t)sizeof(buf)) {
				if (n < 0 && k->err == 0)
					k->err = errno;
				k->short_reads++;
				/* drain what the failed read left in the pipe */
				if (read(fds[0], buf, sizeof(buf)) < 0)
					goto out;
				continue;
			}
			k->bad_bytes += memcmp(slot, buf, sizeof(buf)) != 0;
			k->last[p] = seq;
		}
	}
out:
	close(fds[0]);
	close(fds[1]);
	return NULL;
}

/* One registration of the registrar's kinds, round @p i over page @p p. */
static struct ibv_mr *
reg_one(unsigned int i, unsigned int p)
{
	void *a = pages + p * PAGE;

	switch (i % 3) {
	case 0:
		return ibv_reg_mr(vt.pd, a, REG_BYTES, IBV_ACCESS_LOCAL_WRITE);
	case 1:
		return ibv_reg_mr_iova2(vt.pd, a, REG_BYTES, 0x10000, IBV_ACCESS_LOCAL_WRITE);
	default: {
		/* registered elsewhere, then moved here (CHANGE_TRANSLATION) */
		struct ibv_mr *mr = ibv_reg_mr(vt.pd, pages + ((p + 7) % PAGES) * PAGE, REG_BYTES,
					       IBV_ACCESS_LOCAL_WRITE);

		if (mr != NULL && ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, a,
					       REG_BYTES, 0) != 0) {
			ibv_dereg_mr(mr);
			return NULL;
		}
		return mr;
	}
	}
}

static void
stress(void)
{
	struct writer w[WRITERS];
	struct kernel_writer k;
	struct ibv_mr *live[LIVE] = { 0 };
	unsigned int i, p, failed_reg = 0, failed_dereg = 0, lost = 0, bad_last = 0;

	pages = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	vt_require(pages != MAP_FAILED, "mmap");
	memset(pages, 0, PAGES * PAGE);
	memset(&k, 0, sizeof(k));
	for (i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .id = i };
		vt_require(pthread_create(&w[i].thread, NULL, writer_run, &w[i]) == 0, "thread");
	}
	vt_require(pthread_create(&k.thread, NULL, kernel_run, &k) == 0, "thread");

	for (i = 0; i < ROUNDS; i++) {
		struct ibv_mr **slot = &live[i % LIVE];

		if (*slot != NULL && ibv_dereg_mr(*slot) != 0)
			failed_dereg++;
		*slot = reg_one(i, (i * 5) % PAGES);
		failed_reg += *slot == NULL;
	}
	for (i = 0; i < LIVE; i++)
		if (live[i] != NULL && ibv_dereg_mr(live[i]) != 0)
			failed_dereg++;

	atomic_store(&stop, true);
	for (i = 0; i < WRITERS; i++)
		pthread_join(w[i].thread, NULL);
	pthread_join(k.thread, NULL);

	vt_check(failed_reg == 0 && failed_dereg == 0, "registrations under running threads",
		 "%u registrations and %u deregistrations of %u failed", failed_reg, failed_dereg,
		 ROUNDS);
	for (i = 0; i < WRITERS; i++)
		for (p = 0; p < PAGES; p++) {
			uint64_t c = *(uint64_t *)(void *)(pages + p * PAGE + CNT_OFF + 64 * i);

			lost += c != w[i].passes;
			if (c != w[i].passes && lost <= 3)
				printf("    writer %u, page %u: counter %llu, passes %llu\n", i, p,
				       (unsigned long long)c, (unsigned long long)w[i].passes);
		}
	vt_check(lost == 0 && w[0].passes > 0, "threads' writes beside registrations kept",
		 "%u of %u counters lost increments", lost, WRITERS * PAGES);
	vt_check(k.err == 0 && k.short_reads == 0 && k.bad_bytes == 0 && k.reads > 0,
		 "read(2) into pages being registered", "%llu of %llu reads short (first errno %d), "
		 "%llu read wrong bytes", (unsigned long long)k.short_reads,
		 (unsigned long long)k.reads, k.err, (unsigned long long)k.bad_bytes);
	for (p = 0; p < PAGES; p++) {
		const uint8_t *slot = pages + p * PAGE + KERN_OFF;

		for (i = 0; k.last[p] != 0 && i < KERN_BYTES; i++)
			if (slot[i] != k.last[p]) {
				bad_last++;
				break;
			}
	}
	vt_check(bad_last == 0, "the kernel's last writes kept", "%u of %u pages lost them",
		 bad_last, PAGES);
	for (p = 0; p < PAGES; p++) {
		const uint8_t *r = pages + p * PAGE;

		for (i = 0; i < REG_BYTES && r[i] == 0; i++)
			;
		if (i < REG_BYTES)
			break;
	}
	vt_check(p == PAGES, "registered bytes untouched", "page %u changed", p);
	printf("    %u registrations beside %llu writer passes and %llu kernel reads\n", ROUNDS,
	       (unsigned long long)(w[0].passes + w[1].passes + w[2].passes),
	       (unsigned long long)k.reads);
}

/* The pages still work as registered memory: the agent WRITEs into them. */
static void
still_registered(void)
{
	struct vt_remote_mr src = vt_remote_mr(PAGE, IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *mr = ibv_reg_mr(vt.pd, pages, PAGES * PAGE,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct vt_pair pr;
	int st;

	vt_require(mr != NULL, "reg_mr of the pages");
	pr = vt_pair(IBV_QPT_RC, 0);
	vt_remote_fill(src.id, 0, 64, 'w');
	st = vt_remote_rdma(&pr, IBV_WR_RDMA_WRITE, src.id, (uint64_t)(uintptr_t)(pages + 5 * PAGE),
			    mr->rkey, 64);
	vt_check(st == IBV_WC_SUCCESS && pages[5 * PAGE] == 'w' && pages[5 * PAGE + 63] == 'w',
		 "RDMA WRITE into the pages afterwards", "status %d, byte %#x", st, pages[5 * PAGE]);
	ibv_dereg_mr(mr);
}

static void
drive(void)
{
	stress();
	still_registered();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
