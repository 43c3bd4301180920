/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Mappings of client files that may shrink under the daemon. A client may
 * register memory of any shared file (a tmpfs or disk file, an unsealed
 * memfd, a System V segment): if it then truncates the file, an engine
 * touching a page past the new end gets SIGBUS. That is the client's doing
 * and must hurt only that client: the handler puts an anonymous page over
 * the page that faulted (the access then goes to it: zeros for a read, a
 * write nobody sees), counts it and returns. A SIGBUS anywhere else is a
 * real one: it goes to the handler that was there before ours, or kills
 * the process as it would have.
 *
 * The handler reads a fixed table of ranges without locks: a slot is
 * published by storing its end last and freed by storing 0 there first.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "verbs_dev_priv.h"

#define GUARD_SLOTS	4096

struct guard_slot {
	_Atomic uintptr_t start;
	_Atomic uintptr_t end;		/* 0: free */
	uintptr_t page;			/* the mapping's page size */
};

static struct guard_slot slots[GUARD_SLOTS];
static _Atomic uint64_t guard_hits;
static struct sigaction prev_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static void
guard_handler(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	unsigned int i;

	for (i = 0; i < GUARD_SLOTS; i++) {
		uintptr_t end = atomic_load_explicit(&slots[i].end, memory_order_acquire);
		uintptr_t start = atomic_load_explicit(&slots[i].start, memory_order_relaxed);
		uintptr_t page = slots[i].page;

		if (end == 0 || a < start || a >= end)
			continue;
		a &= ~(page - 1);
		if (mmap((void *)a, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		atomic_fetch_add_explicit(&guard_hits, 1, memory_order_relaxed);
		return;
	}
	if (prev_bus.sa_flags & SA_SIGINFO) {
		prev_bus.sa_sigaction(sig, si, uc);
	} else if (prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
		prev_bus.sa_handler(sig);
	} else {
		/* the fault comes back on return and kills us, as without a handler */
		signal(SIGBUS, SIG_DFL);
	}
}

static void
guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGBUS, &sa, &prev_bus);
}

int
dev_client_map(int fd, uint64_t off, uint64_t len, int prot, uint64_t guard_page, void **out)
{
	unsigned int i;
	void *p;

	if (guard_page != 0)
		pthread_once(&guard_once, guard_install);
	p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		return errno;
	if (guard_page != 0) {
		pthread_mutex_lock(&slot_lock);
		for (i = 0; i < GUARD_SLOTS && atomic_load(&slots[i].end) != 0; i++)
			;
		if (i < GUARD_SLOTS) {
			slots[i].page = (uintptr_t)guard_page;
			atomic_store_explicit(&slots[i].start, (uintptr_t)p, memory_order_relaxed);
			atomic_store_explicit(&slots[i].end, (uintptr_t)p + len,
					      memory_order_release);
		}
		pthread_mutex_unlock(&slot_lock);
		if (i == GUARD_SLOTS) {
			munmap(p, len);
			return ENOMEM;
		}
	}
	*out = p;
	return 0;
}

void
dev_client_unmap(void *map, uint64_t len)
{
	unsigned int i;

	pthread_mutex_lock(&slot_lock);
	for (i = 0; i < GUARD_SLOTS; i++)
		if (atomic_load_explicit(&slots[i].start, memory_order_relaxed) == (uintptr_t)map &&
		    atomic_load_explicit(&slots[i].end, memory_order_relaxed) != 0) {
			atomic_store_explicit(&slots[i].end, 0, memory_order_release);
			break;
		}
	pthread_mutex_unlock(&slot_lock);
	munmap(map, len);
}

uint64_t
dev_client_map_faults(void)
{
	return atomic_load_explicit(&guard_hits, memory_order_relaxed);
}
