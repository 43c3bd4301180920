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
 * the kernel wrote there. Then the agent's RDMA WRITE, READ and
 * FETCH_AND_ADD must still reach a range registered over those pages.
 *
 * The pages are of every kind the shim treats apart: anonymous memory
 * (moved, held by a userfaultfd), a MAP_PRIVATE file mapping on a disk file
 * system (no userfaultfd protects one), the registering thread's own TLS
 * with its thread control block (holding it would make it wait for
 * itself), and the first page of the heap; then small blocks from malloc
 * and the stack, whose pages hold the allocator's bytes (under ASan, its
 * redzones). Built three times (meson.build):
 * as it is, without any userfaultfd (a seccomp filter: userfaultfd(2) fails
 * with ENOSYS), and as nobody with vm.unprivileged_userfaultfd 0 (a
 * userfaultfd there could take user faults only; the sysctl is restored).
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verbs_test.h"

#ifndef REG_MODE
#define REG_MODE	0		/* 1: no userfaultfd at all, 2: as nobody */
#endif
#define PAGES		32		/* at most: each kind has its own count */
#define PAGE		4096u
#define REG_BYTES	256u		/* registered at the start of a page; nobody writes them */
#define CNT_OFF		1024u		/* writer t's counter: CNT_OFF + 64 * t */
#define KERN_OFF	2048u		/* the kernel's bytes */
#define KERN_BYTES	512u
#define WRITERS		3
#define ROUNDS		600		/* registrations */
#define LIVE		4		/* registrations held at once */
#define WRITES		1000		/* the peer's, beside registrations */

static uint8_t *pages;
static unsigned int npages;
static uintptr_t reg_end;		/* registrations reach up to here (0: REG_BYTES) */
static atomic_bool stop;
static atomic_uint started;		/* threads past their first pass */
static int file_fd = -1;		/* the file private_file_pages() maps */

/* The main thread's own TLS: the pages below its thread control block. */
static __thread uint8_t tls_pages[3 * PAGE] __attribute__((aligned(PAGE)));

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
		for (unsigned int p = 0; p < npages; p++)
			(*(volatile uint64_t *)(void *)(pages + p * PAGE + CNT_OFF + 64 * w->id))++;
		if (w->passes++ == 0)
			atomic_fetch_add(&started, 1);
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
		for (unsigned int p = 0; p < npages; p++, seq = (uint8_t)(seq % 250 + 1)) {
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
			if (k->reads == 1)
				atomic_fetch_add(&started, 1);
		}
	}
out:
	close(fds[0]);
	close(fds[1]);
	return NULL;
}

/* How many bytes a registration at @p a covers: to reg_end if set. */
static size_t
reg_len(const uint8_t *a)
{
	return reg_end != 0 ? reg_end - (uintptr_t)a : REG_BYTES;
}

/* One registration of the registrar's kinds, round @p i over page @p p. */
static struct ibv_mr *
reg_one(unsigned int i, unsigned int p)
{
	uint8_t *a = pages + p * PAGE, *b = pages + ((p + 7) % npages) * PAGE;

	switch (i % 3) {
	case 0:
		return ibv_reg_mr(vt.pd, a, reg_len(a), IBV_ACCESS_LOCAL_WRITE);
	case 1:
		return ibv_reg_mr_iova2(vt.pd, a, reg_len(a), 0x10000, IBV_ACCESS_LOCAL_WRITE);
	default: {
		/* registered elsewhere, then moved here (CHANGE_TRANSLATION) */
		struct ibv_mr *mr = ibv_reg_mr(vt.pd, b, reg_len(b), IBV_ACCESS_LOCAL_WRITE);

		if (mr != NULL && ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, a,
					       reg_len(a), 0) != 0) {
			ibv_dereg_mr(mr);
			return NULL;
		}
		return mr;
	}
	}
}

/* Stress the @p n pages at @p base, registrations reaching @p end (0: REG_BYTES each). */
static void
stress(const char *kind, uint8_t *base, unsigned int n, uintptr_t end)
{
	struct writer w[WRITERS];
	struct kernel_writer k;
	struct ibv_mr *live[LIVE] = { 0 };
	unsigned int i, p, failed_reg = 0, failed_dereg = 0, lost = 0, bad_last = 0;
	char name[160];

	printf("  %s\n", kind);
	pages = base;
	npages = n;
	reg_end = end;
	atomic_store(&stop, false);
	atomic_store(&started, 0);
	for (p = 0; p < npages; p++) {	/* what the checks read (TLS pages hold more) */
		memset(pages + p * PAGE, 0, REG_BYTES);
		memset(pages + p * PAGE + CNT_OFF, 0, 64 * WRITERS);
	}
	memset(&k, 0, sizeof(k));
	for (i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .id = i };
		vt_require(pthread_create(&w[i].thread, NULL, writer_run, &w[i]) == 0, "thread");
	}
	vt_require(pthread_create(&k.thread, NULL, kernel_run, &k) == 0, "thread");
	/* every thread at work before the first registration */
	while (atomic_load(&started) < WRITERS + 1 && k.err == 0)
		sched_yield();

	for (i = 0; i < ROUNDS; i++) {
		struct ibv_mr **slot = &live[i % LIVE];

		if (*slot != NULL && ibv_dereg_mr(*slot) != 0)
			failed_dereg++;
		*slot = reg_one(i, (i * 5) % npages);
		failed_reg += *slot == NULL;
	}
	for (i = 0; i < LIVE; i++)
		if (live[i] != NULL && ibv_dereg_mr(live[i]) != 0)
			failed_dereg++;

	atomic_store(&stop, true);
	for (i = 0; i < WRITERS; i++)
		pthread_join(w[i].thread, NULL);
	pthread_join(k.thread, NULL);

	snprintf(name, sizeof(name), "%s: registrations under running threads", kind);
	vt_check(failed_reg == 0 && failed_dereg == 0, name,
		 "%u registrations and %u deregistrations of %u failed (errno %d)", failed_reg,
		 failed_dereg, ROUNDS, errno);
	for (i = 0; i < WRITERS; i++)
		for (p = 0; p < npages; p++) {
			uint64_t c = *(uint64_t *)(void *)(pages + p * PAGE + CNT_OFF + 64 * i);

			lost += c != w[i].passes;
			if (c != w[i].passes && lost <= 3)
				printf("    writer %u, page %u: counter %llu, passes %llu\n", i, p,
				       (unsigned long long)c, (unsigned long long)w[i].passes);
		}
	snprintf(name, sizeof(name), "%s: threads' writes beside registrations kept", kind);
	vt_check(lost == 0 && w[0].passes > 0, name, "%u of %u counters lost increments", lost,
		 WRITERS * npages);
	snprintf(name, sizeof(name), "%s: read(2) into pages being registered", kind);
	vt_check(k.err == 0 && k.short_reads == 0 && k.bad_bytes == 0 && k.reads > 0, name,
		 "%llu of %llu reads short (first errno %d), %llu read wrong bytes",
		 (unsigned long long)k.short_reads, (unsigned long long)k.reads, k.err,
		 (unsigned long long)k.bad_bytes);
	for (p = 0; p < npages; p++) {
		const uint8_t *slot = pages + p * PAGE + KERN_OFF;

		for (i = 0; k.last[p] != 0 && i < KERN_BYTES; i++)
			if (slot[i] != k.last[p]) {
				bad_last++;
				break;
			}
	}
	snprintf(name, sizeof(name), "%s: the kernel's last writes kept", kind);
	vt_check(bad_last == 0, name, "%u of %u pages lost them", bad_last, npages);
	for (p = 0; p < npages; p++) {
		const uint8_t *r = pages + p * PAGE;

		for (i = 0; i < REG_BYTES && r[i] == 0; i++)
			;
		if (i < REG_BYTES)
			break;
	}
	snprintf(name, sizeof(name), "%s: registered bytes untouched", kind);
	vt_check(p == npages, name, "page %u changed", p);
	printf("    %u registrations beside %llu writer passes and %llu kernel reads\n", ROUNDS,
	       (unsigned long long)(w[0].passes + w[1].passes + w[2].passes),
	       (unsigned long long)k.reads);
}

/*
 * The pages still work as registered memory: the agent WRITEs into them,
 * READs them back and adds to a counter there (FETCH_AND_ADD of 1), beside
 * a thread's own increments of the same word's neighbour.
 */
static void
still_registered(const char *kind, uint8_t *base, unsigned int n)
{
	struct vt_remote_mr src = vt_remote_mr(PAGE, IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *mr = ibv_reg_mr(vt.pd, base, n * PAGE, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC);
	uint8_t *at = base + (n - 1) * PAGE, back[64];
	volatile uint64_t *word = (volatile uint64_t *)(void *)(at + 512);
	struct vt_pair pr;
	char name[160];
	int st, st2, st3;

	vt_require(mr != NULL, "reg_mr of the pages");
	pr = vt_pair(IBV_QPT_RC, 0);
	vt_remote_fill(src.id, 0, 64, 'w');
	st = vt_remote_rdma(&pr, IBV_WR_RDMA_WRITE, src.id, (uint64_t)(uintptr_t)at, mr->rkey, 64);
	snprintf(name, sizeof(name), "%s: RDMA WRITE into the pages afterwards", kind);
	vt_check(st == IBV_WC_SUCCESS && at[0] == 'w' && at[63] == 'w', name, "status %d, byte %#x",
		 st, at[0]);
	memset(at + 64, 'r', 64);
	st = vt_remote_rdma(&pr, IBV_WR_RDMA_READ, src.id, (uint64_t)(uintptr_t)(at + 64), mr->rkey,
			    64);
	vt_remote_read(src.id, 0, back, sizeof(back));
	snprintf(name, sizeof(name), "%s: RDMA READ of the pages", kind);
	vt_check(st == IBV_WC_SUCCESS && back[0] == 'r' && back[63] == 'r', name,
		 "status %d, byte %#x", st, back[0]);
	*word = 41;
	st = vt_remote_rdma(&pr, IBV_WR_ATOMIC_FETCH_AND_ADD, src.id, (uint64_t)(uintptr_t)word,
			    mr->rkey, 8);
	st2 = vt_remote_rdma(&pr, IBV_WR_ATOMIC_FETCH_AND_ADD, src.id, (uint64_t)(uintptr_t)word,
			     mr->rkey, 8);
	vt_remote_read(src.id, 0, back, 8);
	snprintf(name, sizeof(name), "%s: FETCH_AND_ADD on the pages", kind);
	vt_check(st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS && *word == 43 &&
		 *(uint64_t *)(void *)back == 42, name, "status %d %d, word %llu, fetched %llu",
		 st, st2, (unsigned long long)*word, (unsigned long long)*(uint64_t *)(void *)back);
	/* deregistered, the memory is the program's as before */
	st3 = ibv_dereg_mr(mr);
	word[1] = 7;
	snprintf(name, sizeof(name), "%s: deregistered, still the program's", kind);
	vt_check(st3 == 0 && *word == 43 && word[1] == 7 && at[0] == 'w', name, "dereg %d", st3);
}

/* A file on a disk file system, MAP_PRIVATE: no userfaultfd protects such a mapping. */
static uint8_t *
private_file_pages(unsigned int n)
{
	const char *dirs[] = { "/var/tmp", "/tmp" };
	char path[64];
	struct statfs sf;
	uint8_t *p = MAP_FAILED;
	unsigned int i;
	int fd = -1;

	for (i = 0; i < 2 && fd < 0; i++) {
		snprintf(path, sizeof(path), "%s/reg_mr_threads.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd >= 0 && (fstatfs(fd, &sf) != 0 || sf.f_type == TMPFS_MAGIC)) {
			close(fd);
			unlink(path);
			fd = -1;
		}
	}
	vt_require(fd >= 0, "a file on a disk file system");
	unlink(path);
	if (ftruncate(fd, (off_t)n * PAGE) == 0)
		p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	vt_require(p != MAP_FAILED, "mmap MAP_PRIVATE of a file");
	file_fd = fd;
	return p;
}

/* The first page of the heap (malloc's own first chunks are there), or NULL. */
static uint8_t *
first_heap_page(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long s = 0, e;
	char line[256];

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "[heap]") != NULL && sscanf(line, "%lx-%lx", &s, &e) == 2)
			break;
	if (f != NULL)
		fclose(f);
	return (uint8_t *)(uintptr_t)s;
}

struct churn {
	pthread_t thread;
	uint8_t *pages;
	unsigned int failed;
	atomic_uint rounds;
};

/* Register and deregister the first page until stopped. */
static void *
churn_run(void *arg)
{
	struct churn *c = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct ibv_mr *mr = ibv_reg_mr(vt.pd, c->pages, PAGE, IBV_ACCESS_LOCAL_WRITE);

		c->failed += mr == NULL || ibv_dereg_mr(mr) != 0;
		atomic_fetch_add(&c->rounds, 1);
	}
	return NULL;
}

/*
 * The peer's WRITEs through a region that could not be moved (anonymous
 * pages and, right after them, a page of a MAP_PRIVATE file) while another
 * thread registers and deregisters the first of them alone, over and
 * over: none of those may move them, since droced's write through the mem
 * file fails on a page held for a move. Every WRITE must complete and land.
 */
static void
indirect_beside_registrations(void)
{
	uint8_t *m = mmap(NULL, 9 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct vt_remote_mr src = vt_remote_mr(PAGE, IBV_ACCESS_LOCAL_WRITE);
	struct churn c = { .pages = m };
	unsigned int i, bad = 0, st_bad = 0;
	struct ibv_mr *mr;
	struct vt_pair pr;

	vt_require(m != MAP_FAILED, "mmap");
	memset(m, 0, 9 * PAGE);
	vt_require(mmap(m + 8 * PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
			file_fd, 0) != MAP_FAILED, "a file page after the anonymous ones");
	mr = ibv_reg_mr(vt.pd, m, 9 * PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	vt_require(mr != NULL, "reg_mr across anonymous and file pages");
	pr = vt_pair(IBV_QPT_RC, 0);
	atomic_store(&stop, false);
	vt_require(pthread_create(&c.thread, NULL, churn_run, &c) == 0, "thread");
	while (atomic_load(&c.rounds) == 0)	/* at work before the first WRITE */
		sched_yield();
	for (i = 0; i < WRITES; i++) {
		uint8_t *at = m + 1024 + (i % 8) * 256;
		int st;

		vt_remote_fill(src.id, 0, 64, (uint8_t)(i % 250 + 1));
		st = vt_remote_rdma(&pr, IBV_WR_RDMA_WRITE, src.id, (uint64_t)(uintptr_t)at,
				    mr->rkey, 64);
		if (st != IBV_WC_SUCCESS) {
			if (st_bad++ == 0)
				printf("    WRITE %u: status %d\n", i, st);
			vt_pair_restate(&pr);
			continue;
		}
		bad += at[0] != (uint8_t)(i % 250 + 1) || at[63] != (uint8_t)(i % 250 + 1);
	}
	atomic_store(&stop, true);
	pthread_join(c.thread, NULL);
	vt_check(st_bad == 0 && bad == 0 && c.failed == 0,
		 "the peer's WRITEs through an unmoved region beside registrations of its pages",
		 "%u of %u WRITEs failed, %u landed wrong, %u of %u registrations failed", st_bad, WRITES,
		 bad, c.failed, atomic_load(&c.rounds));
	printf("    %u WRITEs beside %u registrations\n", WRITES, atomic_load(&c.rounds));
	ibv_dereg_mr(mr);
	munmap(m, 9 * PAGE);
}

/*
 * What the kernel checks at registration, the same whatever way the pages
 * are reached: read-only memory takes a registration without write rights
 * and refuses one with them (EFAULT, as pinning for write fails), and
 * PROT_NONE or unmapped memory fails with EFAULT.
 */
static void
checked_at_registration(uint8_t *file)
{
	uint8_t *anon = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	struct ibv_mr *ro, *rw, *none, *gone;
	int err_rw, err_none, err_gone;

	vt_require(anon != MAP_FAILED && mprotect(file, PAGE, PROT_READ) == 0 &&
		   mprotect(anon, PAGE, PROT_NONE) == 0 && munmap(anon + PAGE, PAGE) == 0,
		   "read-only, PROT_NONE and unmapped pages");
	ro = ibv_reg_mr(vt.pd, file, PAGE, IBV_ACCESS_REMOTE_READ);
	rw = ibv_reg_mr(vt.pd, file, PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	err_rw = errno;
	none = ibv_reg_mr(vt.pd, anon, PAGE, IBV_ACCESS_LOCAL_WRITE);
	err_none = errno;
	gone = ibv_reg_mr(vt.pd, anon + PAGE, PAGE, 0);
	err_gone = errno;
	vt_check(ro != NULL && ibv_dereg_mr(ro) == 0, "a read-only file mapping registers for reading",
		 "errno %d", errno);
	vt_check(rw == NULL && err_rw == EFAULT, "a read-only file mapping refuses write rights: EFAULT",
		 "%s, errno %d", rw != NULL ? "registered" : "failed", err_rw);
	vt_check(none == NULL && err_none == EFAULT && gone == NULL && err_gone == EFAULT,
		 "PROT_NONE and unmapped memory: EFAULT", "errno %d and %d", err_none, err_gone);
	vt_require(mprotect(file, PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect");
	munmap(anon, PAGE);
}

/*
 * Small blocks as programs register them, from malloc and from the stack:
 * their pages hold the allocator's and the caller's own bytes too (with
 * ASan, redzones it poisons: the shim moving the whole pages must not
 * touch them as the program's accesses). Each block and the next malloc'd
 * one, written while the others are registered, keep their bytes.
 */
static void
small_blocks(void)
{
	uint8_t on_stack[200];
	uint8_t *blk = malloc(100), *next = malloc(100);
	struct ibv_mr *a, *b;
	unsigned int i, bad = 0;
	int ra, rb;

	vt_require(blk != NULL && next != NULL, "malloc");
	memset(blk, 1, 100);
	memset(next, 2, 100);
	memset(on_stack, 3, sizeof(on_stack));
	a = ibv_reg_mr(vt.pd, blk, 100, IBV_ACCESS_LOCAL_WRITE);
	b = ibv_reg_mr(vt.pd, on_stack, sizeof(on_stack), IBV_ACCESS_LOCAL_WRITE);
	memset(next, 4, 100);
	ra = a != NULL ? ibv_dereg_mr(a) : -1;
	rb = b != NULL ? ibv_dereg_mr(b) : -1;
	for (i = 0; i < 100; i++)
		bad += blk[i] != 1 || next[i] != 4;
	for (i = 0; i < sizeof(on_stack); i++)
		bad += on_stack[i] != 3;
	vt_check(ra == 0 && rb == 0 && bad == 0, "a malloc'd and a stack block registered",
		 "dereg %d %d, %u bytes wrong", ra, rb, bad);
	free(blk);
	free(next);
}

static void
drive(void)
{
	uint8_t *anon = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *file = private_file_pages(8);
	uint8_t *heap = first_heap_page();
	uintptr_t tcb = ((uintptr_t)__builtin_thread_pointer() | (PAGE - 1)) + 1;

	vt_require(anon != MAP_FAILED, "mmap");
	stress("anonymous pages", anon, PAGES, 0);
	stress("a MAP_PRIVATE file mapping", file, 8, 0);
	/* each registration reaches the page of our own thread control block */
	stress("the registering thread's own TLS", tls_pages, 3, tcb);
	/* the heap's first page is malloc's own: registered, never written by the test */
	if (heap != NULL) {
		struct ibv_mr *mr = NULL;
		void *blocks[64];
		unsigned int i, bad = 0;

		for (i = 0; i < 64; i++) {	/* malloc writes its first page meanwhile */
			if (i % 4 == 0 && mr != NULL && ibv_dereg_mr(mr) != 0)
				bad++;
			if (i % 4 == 0)
				mr = ibv_reg_mr(vt.pd, heap, PAGE, IBV_ACCESS_LOCAL_WRITE);
			bad += i % 4 == 0 && mr == NULL;
			blocks[i] = malloc(24 + i);
			memset(blocks[i], (int)i, 24 + i);
		}
		for (i = 0; i < 64; i++) {
			const uint8_t *b = blocks[i];

			bad += b[0] != i || b[23 + i] != i;
			free(blocks[i]);
		}
		vt_check(bad == 0 && (mr == NULL || ibv_dereg_mr(mr) == 0),
			 "the heap's first page registered beside malloc", "%u wrong", bad);
	} else {
		printf("note no [heap] (ASan's allocator maps its own): its first page not tried\n");
	}
	still_registered("anonymous pages", anon, PAGES);
	still_registered("a MAP_PRIVATE file mapping", file, 8);
	checked_at_registration(file);
	small_blocks();
	indirect_beside_registrations();
}

#if REG_MODE == 1
/* No userfaultfd at all, as on a kernel without it: userfaultfd(2) fails with ENOSYS. */
static void
no_userfaultfd(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	vt_require(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
		   prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0, "seccomp");
	vt_require(syscall(__NR_userfaultfd, O_CLOEXEC) < 0 && errno == ENOSYS,
		   "userfaultfd(2) refused");
}
#endif

#if REG_MODE == 2
#define UFFD_SYSCTL "/proc/sys/vm/unprivileged_userfaultfd"

/*
 * Run the driver again as nobody without capabilities, with the sysctl at
 * 0 (a userfaultfd of its own could take user faults only), and put the
 * sysctl back. @return the exit status for main().
 */
static int
as_nobody(char **argv)
{
	char was[16] = "";
	int fd = open(UFFD_SYSCTL, O_RDWR), status = 1;
	ssize_t n = fd < 0 ? -1 : read(fd, was, sizeof(was) - 1);
	pid_t pid;

	if (n <= 0 || pwrite(fd, "0\n", 2, 0) != 2) {
		fprintf(stderr, "FAIL setup: %s (%s)\n", UFFD_SYSCTL, strerror(errno));
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		setenv("REG_MR_THREADS_NOBODY", "1", 1);
		execlp("setpriv", "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
		       "--inh-caps=-all", "--bounding-set=-all", argv[0], argv[1], argv[2],
		       (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	if (pwrite(fd, was, (size_t)n, 0) != n)
		status = 1;
	close(fd);
	return status;
}
#endif

int
main(int argc, char **argv)
{
#if REG_MODE == 1
	if (argc > 1 && strcmp(argv[1], "drive") == 0)
		no_userfaultfd();
#elif REG_MODE == 2
	if (argc > 2 && strcmp(argv[1], "drive") == 0 && getenv("REG_MR_THREADS_NOBODY") == NULL)
		return as_nobody(argv);
#endif
	return vt_main(argc, argv, drive);
}
