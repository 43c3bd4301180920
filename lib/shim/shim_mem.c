/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Registered memory is shared memory (DESIGN decision 4).
 *
 * The daemon can only reach memory it can map, so ibv_reg_mr() moves the
 * pages under a registration onto a memfd the daemon is handed, keeping
 * their addresses and contents: the pages are copied into the file and the
 * file is mapped MAP_SHARED | MAP_FIXED over the same range. One memfd
 * serves the whole process, and a page at virtual address A always lives at
 * file offset A (the file is sparse, sized to the whole address space), so
 * any two registrations that overlap or touch share pages without any
 * bookkeeping of which file holds what, and REG_MR's fd_offset is simply
 * the address.
 *
 * /proc/self/maps is the truth about what is where: a VMA of our memfd
 * whose file offset equals its address is already shared (it stays so even
 * after brk or munmap games, because those remove the VMA and we look
 * again). Private memory (heap, stack, anonymous mmap, private file
 * mappings, private hugetlb) is moved. Shared mappings (shared anonymous
 * memory, shm_open, an application's own memfd, a tmpfs, hugetlbfs or disk
 * file, a System V segment others may attach) are not moved: their own
 * file is found (an open descriptor with the same device and inode, the
 * path, or /proc/self/map_files) and passed as it is; droced maps the same
 * file, so every view of it sees the RDMA, and absorbs the faults of a file
 * truncated under it. A registration mixing shared and private memory is
 * EOPNOTSUPP. Our own memfd is sealed against shrinking and growing.
 * A System V segment already removed (IPC_RMID) and attached once, here,
 * can never be shared again: it counts as private memory and is moved (UCX
 * allocates its memory pools so, on hugepages, where a machine has them);
 * the application's later shmdt() detaches what is left of it, or fails
 * with EINVAL when all of it moved (the moved pages stay until munmap).
 *
 * A registry counts registrations per page range. When the last one over a
 * range goes, its pages are copied back to private anonymous memory (so
 * munmap/free release memory again) and punched out of the memfd.
 *
 * The copy and the remap run on a private stack (makecontext/swapcontext):
 * a buffer on the caller's stack may share a page with our own frames, and
 * a frame written between the copy and the remap would be lost. A write by
 * another thread, or by the kernel for one (read(2) into the page), between
 * the copy and the remap would be lost too, so the pages are held: the
 * range is write-protected through a userfaultfd first (mem_hold), and a
 * writer that faults sleeps in the kernel until the remap is done and we
 * wake it (mem_unhold); its write then lands in the new page. Readers go
 * on. A move that cannot be held is not made: where the kernel offers no
 * userfaultfd write protection for a piece (a private file mapping, a
 * range another userfaultfd holds, no userfaultfd that takes kernel
 * faults) or the piece holds the calling thread's own TLS, nothing of the
 * registration moves, and it is indirect: the shim hands over its
 * /proc/self/mem instead of the memfd (shim_odp.c), droced reaches the
 * pages through it at each access, and the pages are faulted in here as
 * pinning would. A piece that cannot go back held at the last
 * deregistration stays on the memfd, counted (lingering), until a later
 * call finds it can.
 *
 * fork(): a child would share the moved pages with its parent, and its
 * first heap write would land in the parent's memory. So the pthread_atfork
 * handlers (registered at load, so the child's runs before any the
 * application registers) mark the moved ranges MADV_DONTFORK just before
 * the fork, and in the child map private pages there again, filled from
 * the memfd: the child gets a private copy, as with a modern kernel's
 * copy-on-fork (hence ibv_is_fork_initialized() says IBV_FORK_UNNEEDED).
 * Ranges next to the forking thread's stack pointer stay inherited (its
 * stack must be there when fork returns) and are copied back to private
 * memory first thing in the child. Between the fork and that handler the
 * child must not touch registered pages (it would fault): glibc itself
 * does not. The plan for the child lives in an mmap of its own, and the
 * child handler does not allocate.
 *
 * Everything here runs under mem_lock; any thread may call in.
 *
 * The address space is changed with system calls of our own (mem_sys_*),
 * never through the libc symbols: an application may hook those (UCX and
 * Open MPI patch mmap, munmap, mremap and madvise to watch for memory
 * going away), and a hook is free to be wrong for calls it never expects
 * (UCX 1.13's mremap takes four arguments, so an MREMAP_FIXED move loses
 * its target: under Open MPI it went to address 0 and the registered pages
 * were zeroed), or to call back into verbs while we hold mem_lock. Our remaps
 * keep every address and its contents, so no hook needs to see them.
 */

#include <dirent.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <ucontext.h>
#include <unistd.h>

#include "shim_priv.h"

#ifndef __has_feature
#define __has_feature(x) 0	/* gcc before 14 */
#endif

/*
 * Size of the sparse memfd: every user address must be a valid offset.
 * x86-64 with 5-level paging has 56-bit user addresses; tmpfs allows files
 * up to 2^63 bytes and allocates nothing for holes.
 */
#define MEM_FILE_BYTES		(1ull << 57)
#define MEM_HUGE_ALIGN		(2ul << 20)	/* a private hugetlb VMA moves in 2 MiB units */
#define MEM_ALT_STACK_BYTES	(256ul << 10)
#define MEM_IO_CHUNK	(1ul << 30)

struct mem_vma {
	uintptr_t start, end;
	uint64_t off;
	unsigned int major, minor;
	uint64_t ino;
	int prot;
	bool shared;
	bool hugetlb;
	bool sysv;			/* a System V segment (its inode is its shmid) */
	bool special;			/* [vdso], [vvar], [vsyscall]: never */
	char path[256];
};

struct mem_ival {
	uintptr_t lo, hi;
	uint32_t refs;
};

enum mem_op_kind { MEM_OP_MOVE, MEM_OP_RESTORE };

/* One critical copy + remap, run on alt_stack. */
struct mem_op {
	enum mem_op_kind kind;
	uintptr_t s, e;
	int prot;
	void *tmp;			/* RESTORE: private pages to copy into */
	bool unheld;			/* nobody else can write (a child after fork) */
	int ret;			/* 0, EAGAIN if it could not be held, or a positive errno */
};

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static int mem_fd = -1;
static unsigned int mem_major, mem_minor;
static uint64_t mem_ino;
static struct mem_ival *ivals;
static size_t nivals;
/*
 * Pages under indirect registrations. They never move while one covers
 * them: droced's access through the mem file fails (EIO), where a thread's
 * write would wait, on a page held for a move.
 */
static struct mem_ival *uivals;
static size_t nuivals;
struct mem_span {
	uintptr_t s, e;
};
static struct mem_span *linger;		/* counted pieces that could not go back yet */
static size_t nlinger;
static void *alt_stack;
static ucontext_t op_uc, caller_uc;
static struct mem_op op_cur;
static uintptr_t page_mask;
static int mem_uffd = -1;		/* -2: none to be had */

/* ---- the address space, past any hook (see the top of this file) ---- */

static void *
mem_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static void *
mem_sys_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

static int
mem_sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static int
mem_sys_madvise(void *addr, size_t len, int advice)
{
	return (int)syscall(SYS_madvise, addr, len, advice);
}

/* ---- /proc/self/maps ---- */

static char *
read_whole(const char *path)
{
	size_t cap = 64 << 10, len = 0;
	char *buf = malloc(cap), *nb;
	ssize_t n;
	int fd;

	if (buf == NULL)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			nb = realloc(buf, cap * 2);
			if (nb == NULL)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* The VMAs overlapping [lo, hi), in address order. @return count, or -errno. */
static int
maps_collect(uintptr_t lo, uintptr_t hi, struct mem_vma **out)
{
	char *buf = read_whole("/proc/self/maps"), *line, *save = NULL;
	struct mem_vma *v = NULL, *nv;
	size_t n = 0, cap = 0;

	if (buf == NULL)
		return -ENOMEM;
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		unsigned long start, end, ino;
		unsigned long long off;
		unsigned int maj, min;
		char perms[5];
		int pos = 0;

		if (sscanf(line, "%lx-%lx %4s %llx %x:%x %lu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &pos) < 7)
			continue;
		if (end <= lo || start >= hi)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			nv = realloc(v, cap * sizeof(*v));
			if (nv == NULL) {
				free(v);
				free(buf);
				return -ENOMEM;
			}
			v = nv;
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n].start = start;
		v[n].end = end;
		v[n].off = off;
		v[n].major = maj;
		v[n].minor = min;
		v[n].ino = ino;
		v[n].prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			    (perms[2] == 'x' ? PROT_EXEC : 0);
		v[n].shared = perms[3] == 's';
		if (pos > 0)
			snprintf(v[n].path, sizeof(v[n].path), "%s", line + pos);
		v[n].hugetlb = strstr(v[n].path, "anon_hugepage") != NULL;
		v[n].sysv = v[n].shared && strncmp(v[n].path, "/SYSV", 5) == 0;
		v[n].special = strcmp(v[n].path, "[vdso]") == 0 ||
			       strcmp(v[n].path, "[vvar]") == 0 ||
			       strcmp(v[n].path, "[vsyscall]") == 0;
		n++;
	}
	free(buf);
	*out = v;
	return (int)n;
}

/* The kernel page size of the VMA starting at @p start (hugetlb: 2 MiB), or 0. */
static unsigned long
vma_kernel_page(uintptr_t start)
{
	char *buf = read_whole("/proc/self/smaps"), *line, *save = NULL;
	unsigned long s, e, kb = 0;
	bool in = false;

	if (buf == NULL)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2)
			in = s == start;
		else if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			break;
	}
	free(buf);
	return kb << 10;
}

/*
 * A System V segment nobody else can ever attach: removed, and attached
 * once (by us). Private memory in all but name, so it may be moved; it
 * takes its page size along (hugetlb segments split at huge pages only).
 */
static bool
vma_sysv_private(struct mem_vma *v)
{
	struct shmid_ds ds;

	if (!v->sysv || v->ino > INT32_MAX || shmctl((int)v->ino, IPC_STAT, &ds) != 0 ||
	    !(ds.shm_perm.mode & SHM_DEST) || ds.shm_nattch != 1)
		return false;
	v->hugetlb = vma_kernel_page(v->start) >= MEM_HUGE_ALIGN;
	return true;
}

static bool
vma_is_ours(const struct mem_vma *v)
{
	return mem_fd >= 0 && v->shared && v->ino == mem_ino && v->major == mem_major &&
	       v->minor == mem_minor && v->off == v->start;
}

/* ---- the critical sections, on a stack of our own ---- */

/*
 * Whole pages are copied by the kernel through raw system calls, never
 * memcpy or libc's pread/pwrite: a page holds other objects' bytes too,
 * which a sanitizer's interceptors would check as the program's (ASan's
 * heap and stack redzones, freed blocks: a false overflow report).
 */
static int
mem_file_io(bool to_file, int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	long n;

	while (len > 0) {
		size_t chunk = len > MEM_IO_CHUNK ? MEM_IO_CHUNK : len;

		n = syscall(to_file ? SYS_pwrite64 : SYS_pread64, fd, p, chunk, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- holding writers while pages move ---- */

/*
 * A userfaultfd of the process that takes kernel faults too, opened once,
 * or -1. Without the privilege for kernel faults (vm.unprivileged_userfaultfd
 * 0 and no CAP_SYS_PTRACE) /dev/userfaultfd may still give one. A
 * user-mode-only one is no use: a kernel write into a held page (read(2)
 * into it) would fail with EFAULT instead of waiting.
 */
static int
mem_uffd_get(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	int fd, dev;

	if (mem_uffd != -1)
		return mem_uffd;
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == EPERM) {
		dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		fd = dev < 0 ? -1 : ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		if (dev >= 0)
			close(dev);
	}
	if (fd >= 0 && ioctl(fd, UFFDIO_API, &api) != 0) {
		close(fd);
		fd = -1;
	}
	mem_uffd = fd >= 0 ? fd : -2;
	return fd;
}

/*
 * Does [s, e) hold a page the calling thread itself writes while it holds
 * the range? Its thread control block and static TLS: the kernel updates
 * its rseq area there whenever it is preempted, libc its errno. Either
 * write would wait for ourselves. The main thread's live at the start of
 * the heap, beside the first allocations.
 */
static bool
range_has_own_tls(uintptr_t s, uintptr_t e)
{
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
	uintptr_t at[3] = { tp, (uintptr_t)&errno, tp };
	unsigned int i;

	if (__rseq_size > 0)
		at[2] = tp + (uintptr_t)__rseq_offset;
	for (i = 0; i < 3; i++)
		if ((at[i] & ~page_mask) < e && (at[i] | page_mask) + 1 > s)
			return true;
	return false;
}

/*
 * May the calling thread hold [s, e), as far as we can tell without asking
 * the kernel? There must be a userfaultfd, and our own stack and state
 * must stay writable: we are the one who wakes.
 */
static bool
mem_holdable(uintptr_t s, uintptr_t e)
{
	return mem_uffd_get() >= 0 &&
	       !((uintptr_t)alt_stack < e && (uintptr_t)alt_stack + MEM_ALT_STACK_BYTES > s) &&
	       !((uintptr_t)&op_cur < e && (uintptr_t)(&op_cur + 1) > s) &&
	       !range_has_own_tls(s, e);
}

/*
 * Would mem_hold() hold [s, e)? The kernel refuses a private file mapping
 * (write protection covers anonymous, shmem and hugetlb memory only) and a
 * range another userfaultfd has; registering asks it without protecting
 * anything yet.
 */
static bool
mem_probe(uintptr_t s, uintptr_t e)
{
	struct uffdio_register reg = { .range = { .start = s, .len = e - s },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_range r = reg.range;

	if (!mem_holdable(s, e) || ioctl(mem_uffd, UFFDIO_REGISTER, &reg) != 0)
		return false;
	(void)ioctl(mem_uffd, UFFDIO_UNREGISTER, &r);
	return true;
}

/*
 * Write-protect [s, s + len): from here a write to it sleeps until
 * mem_unhold(). Pages never touched are mapped (read) first: protection
 * covers only pages present. @return whether the range is held.
 */
static bool
mem_hold(uintptr_t s, size_t len)
{
	struct uffdio_register reg = { .range = { .start = s, .len = len },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .range = reg.range, .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	struct uffdio_range r = reg.range;
	int fd = mem_uffd;

	if (!mem_holdable(s, s + len))
		return false;
	(void)mem_sys_madvise((void *)s, len, MADV_POPULATE_READ);
	if (ioctl(fd, UFFDIO_REGISTER, &reg) != 0)
		return false;
	if (ioctl(fd, UFFDIO_WRITEPROTECT, &wp) != 0) {
		(void)ioctl(fd, UFFDIO_UNREGISTER, &r);
		return false;
	}
	return true;
}

/*
 * Let the writers of a held range go. @p remapped: the range is a new
 * mapping now (its protection went with the old one), so they only need
 * waking; otherwise lift the protection first.
 */
static void
mem_unhold(uintptr_t s, size_t len, bool remapped)
{
	struct uffdio_range r = { .start = s, .len = len };
	struct uffdio_writeprotect wp = { .range = r, .mode = 0 };

	if (!remapped) {
		(void)ioctl(mem_uffd, UFFDIO_WRITEPROTECT, &wp);
		(void)ioctl(mem_uffd, UFFDIO_UNREGISTER, &r);
	}
	(void)ioctl(mem_uffd, UFFDIO_WAKE, &r);
}

static void
mem_op_body(struct mem_op *op)
{
	size_t len = op->e - op->s;
	bool held = !op->unheld && mem_hold(op->s, len);
	void *p = MAP_FAILED;

	if (!held && !op->unheld) {
		op->ret = EAGAIN;	/* a write in the window could be lost: not now */
		return;
	}
	if (op->kind == MEM_OP_MOVE) {
		op->ret = mem_file_io(true, mem_fd, (void *)op->s, len, op->s);
		if (op->ret == 0) {
			p = mem_sys_mmap((void *)op->s, len, op->prot, MAP_SHARED | MAP_FIXED,
					 mem_fd, (off_t)op->s);
			op->ret = p == MAP_FAILED ? errno : 0;
		}
	} else {
		/* the range is our memfd's at its own offset: the file holds its bytes */
		op->ret = mem_file_io(false, mem_fd, op->tmp, len, op->s);
		if (op->ret == 0)
			op->ret = mprotect(op->tmp, len, op->prot) != 0 ? errno : 0;
		if (op->ret == 0) {
			p = mem_sys_mremap(op->tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
					   (void *)op->s);
			op->ret = p == MAP_FAILED ? errno : 0;
		}
	}
	if (held)
		mem_unhold(op->s, len, p != MAP_FAILED);
}

/*
 * ASan keeps each thread's stack bounds (for its reports and for what a
 * noreturn call unpoisons); the switches to alt_stack and back are told
 * to it. Its swapcontext interceptor still warns, once per process,
 * that it does not fully support swapcontext: it warns whatever the
 * annotations.
 */
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#define MEM_FIBER_START(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define MEM_FIBER_FINISH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define MEM_FIBER_START(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define MEM_FIBER_FINISH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#endif
static const void *caller_stack;	/* the caller's stack, while on alt_stack */
static size_t caller_stack_size;

static void
mem_op_run(void)
{
	MEM_FIBER_FINISH(NULL, &caller_stack, &caller_stack_size);
	mem_op_body(&op_cur);
	/* back through uc_link; this stack's frames are gone (NULL: nothing to save) */
	MEM_FIBER_START(NULL, caller_stack, caller_stack_size);
}

/* Run op_cur on alt_stack. Caller holds mem_lock. */
static int
mem_op_exec(void)
{
	sigset_t all, old;
	void *fake_stack = NULL;
	int ret;

	if (alt_stack == NULL) {
		void *st = mem_sys_mmap(NULL, MEM_ALT_STACK_BYTES, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (st == MAP_FAILED)
			return errno;
		alt_stack = st;
	}
	/*
	 * A signal handler that wrote to a held page would wait for us
	 * forever: all blocked, before getcontext(), since the context
	 * switched to carries the mask it captured.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (getcontext(&op_uc) != 0) {
		ret = errno;
	} else {
		op_uc.uc_stack.ss_sp = alt_stack;
		op_uc.uc_stack.ss_size = MEM_ALT_STACK_BYTES;
		op_uc.uc_link = &caller_uc;
		makecontext(&op_uc, mem_op_run, 0);
		op_cur.ret = EIO;
		MEM_FIBER_START(&fake_stack, alt_stack, MEM_ALT_STACK_BYTES);
		ret = swapcontext(&caller_uc, &op_uc) != 0 ? errno : op_cur.ret;
		MEM_FIBER_FINISH(fake_stack, NULL, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static int
mem_move(uintptr_t s, uintptr_t e, int prot)
{
	op_cur = (struct mem_op){ .kind = MEM_OP_MOVE, .s = s, .e = e, .prot = prot };
	return mem_op_exec();
}

/* Back to private anonymous memory, contents kept; EAGAIN if it could not be held. */
static int
mem_privatize(uintptr_t s, uintptr_t e, int prot, bool unheld)
{
	void *tmp = mem_sys_mmap(NULL, e - s, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (tmp == MAP_FAILED)
		return errno;
	op_cur = (struct mem_op){ .kind = MEM_OP_RESTORE, .s = s, .e = e, .prot = prot,
				  .tmp = tmp, .unheld = unheld };
	ret = mem_op_exec();
	if (ret != 0)
		mem_sys_munmap(tmp, e - s);
	return ret;
}

/* ---- the memfd ---- */

static int
mem_file_init(void)
{
	struct stat st;
	int fd;

	if (mem_fd >= 0)
		return 0;
	page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	fd = memfd_create("droce-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return errno;
	/* droced maps this file: it refuses files that could shrink under it */
	if (ftruncate(fd, (off_t)MEM_FILE_BYTES) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0 || fstat(fd, &st) != 0) {
		int ret = errno;

		close(fd);
		return ret;
	}
	mem_fd = fd;
	mem_major = major(st.st_dev);
	mem_minor = minor(st.st_dev);
	mem_ino = st.st_ino;
	return 0;
}

/* ---- the registry: registrations per page range ---- */

/*
 * Add @p delta registrations over [lo, hi) of registry *@p list (*@p nlist
 * ranges). Ranges that drop to zero are stored in *zero (caller frees) for
 * the caller to give back.
 */
static int
ival_apply_to(struct mem_ival **list, size_t *nlist, uintptr_t lo, uintptr_t hi, int delta,
	      struct mem_ival **zero, size_t *nzero)
{
	size_t nivals = *nlist, cap = nivals * 3 + 3, n = 0, nz = 0, i;
	const struct mem_ival *ivals = *list;
	struct mem_ival *out = calloc(cap, sizeof(*out)), *z = NULL;
	uintptr_t cur = lo;

#define EMIT(a, b, r) do { out[n].lo = (a); out[n].hi = (b); out[n].refs = (r); n++; } while (0)
	if (out == NULL)
		return ENOMEM;
	if (delta < 0) {
		z = calloc(nivals + 1, sizeof(*z));
		if (z == NULL) {
			free(out);
			return ENOMEM;
		}
	}
	for (i = 0; i < nivals; i++) {
		const struct mem_ival *iv = &ivals[i];
		uintptr_t s, e;
		int64_t r;

		if (iv->hi <= lo || iv->lo >= hi) {
			if (iv->lo >= hi && cur < hi) {
				if (delta > 0)
					EMIT(cur, hi, (uint32_t)delta);
				cur = hi;
			}
			EMIT(iv->lo, iv->hi, iv->refs);
			continue;
		}
		if (iv->lo < lo)
			EMIT(iv->lo, lo, iv->refs);
		s = iv->lo > lo ? iv->lo : lo;
		e = iv->hi < hi ? iv->hi : hi;
		if (cur < s && delta > 0)
			EMIT(cur, s, (uint32_t)delta);
		r = (int64_t)iv->refs + delta;
		if (r > 0) {
			EMIT(s, e, (uint32_t)r);
		} else if (z != NULL) {
			z[nz].lo = s;
			z[nz].hi = e;
			nz++;
		}
		if (iv->hi > hi)
			EMIT(hi, iv->hi, iv->refs);
		cur = e;
	}
	if (cur < hi && delta > 0)
		EMIT(cur, hi, (uint32_t)delta);
#undef EMIT

	/* merge neighbours with equal counts */
	for (i = 1; n > 0 && i < n;) {
		if (out[i - 1].hi == out[i].lo && out[i - 1].refs == out[i].refs) {
			out[i - 1].hi = out[i].hi;
			memmove(&out[i], &out[i + 1], (n - i - 1) * sizeof(*out));
			n--;
		} else {
			i++;
		}
	}
	free(*list);
	*list = out;
	*nlist = n;
	if (zero != NULL) {
		*zero = z;
		*nzero = nz;
	} else {
		free(z);
	}
	return 0;
}

/* The registry of moved pages: what goes back at the last deregistration. */
static int
ival_apply(uintptr_t lo, uintptr_t hi, int delta, struct mem_ival **zero, size_t *nzero)
{
	return ival_apply_to(&ivals, &nivals, lo, hi, delta, zero, nzero);
}

/* Does [lo, hi) meet a page an indirect registration covers? */
static bool
mem_under_indirect(uintptr_t lo, uintptr_t hi)
{
	size_t i;

	for (i = 0; i < nuivals; i++)
		if (uivals[i].lo < hi && uivals[i].hi > lo)
			return true;
	return false;
}

/* ---- foreign shared mappings: find their own file ---- */

static bool
fd_matches(int fd, const struct mem_vma *v)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == v->ino &&
	       major(st.st_dev) == v->major && minor(st.st_dev) == v->minor;
}

/*
 * 4. droced opens the mapping for us, with our uid and gid deciding
 * (OPEN_MAPPING): shared anonymous memory of a process without the
 * capabilities map_files wants. @return a descriptor or -1.
 */
static int
file_from_daemon(struct shim_context *sctx, const struct mem_vma *v, bool writable)
{
	struct droce_ctrl_open_mapping_req req = {
		.start = v->start,
		.end = v->end,
		.writable = writable,
	};
	int fd = -1;

	if (sctx == NULL || shim_call(sctx, DROCE_CTRL_OPEN_MAPPING, &req, sizeof(req), NULL, 0,
				      NULL, 0, &fd, 1) != 0)
		return -1;
	if (fd >= 0 && !fd_matches(fd, v)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A new descriptor of the file mapped by @p v, or -1. */
static int
find_file(struct shim_context *sctx, const struct mem_vma *v, bool writable)
{
	int flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	char p[96];
	struct dirent *de;
	DIR *d;
	int fd = -1, cand;

	/* 1. a descriptor the process still holds (shm_open, memfd, open) */
	d = opendir("/proc/self/fd");
	if (d != NULL) {
		while (fd < 0 && (de = readdir(d)) != NULL) {
			char *end;
			long n = strtol(de->d_name, &end, 10);

			if (*end != '\0' || n < 0 || n == dirfd(d) || !fd_matches((int)n, v))
				continue;
			snprintf(p, sizeof(p), "/proc/self/fd/%ld", n);
			fd = open(p, flags);
		}
		closedir(d);
	}
	if (fd >= 0)
		return fd;
	/* 2. its path, if it still has one */
	if (v->path[0] == '/' && strstr(v->path, " (deleted)") == NULL) {
		cand = open(v->path, flags);
		if (cand >= 0 && fd_matches(cand, v))
			return cand;
		if (cand >= 0)
			close(cand);
	}
	/* 3. the mapping itself (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE) */
	snprintf(p, sizeof(p), "/proc/self/map_files/%" PRIxPTR "-%" PRIxPTR, v->start, v->end);
	cand = open(p, flags);
	if (cand >= 0 && fd_matches(cand, v))
		return cand;
	if (cand >= 0)
		close(cand);
	return file_from_daemon(sctx, v, writable);
}

/* ---- get / put ---- */

static void mem_linger_retry(void);

static int
mem_get_foreign(struct shim_context *sctx, const struct mem_vma *v, int n, uintptr_t addr,
		bool writable, struct shim_mem_ref *ref)
{
	int i, fd;

	for (i = 1; i < n; i++)
		if (!v[i].shared || v[i].ino != v[0].ino || v[i].major != v[0].major ||
		    v[i].minor != v[0].minor || v[i].off != v[0].off + (v[i].start - v[0].start))
			return EOPNOTSUPP;
	fd = find_file(sctx, &v[0], writable);
	if (fd < 0)
		return EOPNOTSUPP;
	ref->fd = fd;
	ref->fd_owned = true;
	ref->fd_offset = v[0].off + (addr - v[0].start);
	ref->counted = false;
	return 0;
}

/*
 * The part of [lo, hi) in VMA @p v that a registration moves: [*s, *e),
 * empty if it is ours already. @return 0, or EOPNOTSUPP for a hugetlb VMA
 * the range would split between huge pages.
 */
static int
mem_piece(const struct mem_vma *v, uintptr_t lo, uintptr_t hi, uintptr_t *s, uintptr_t *e)
{
	*s = v->start > lo ? v->start : lo;
	*e = v->end < hi ? v->end : hi;
	if (vma_is_ours(v)) {
		*e = *s;
		return 0;
	}
	if (v->hugetlb) {	/* hugetlb VMAs split only at huge page boundaries */
		*s &= ~(MEM_HUGE_ALIGN - 1);
		*e = (*e + MEM_HUGE_ALIGN - 1) & ~(MEM_HUGE_ALIGN - 1);
		if (*s < v->start || *e > v->end)
			return EOPNOTSUPP;
	}
	return 0;
}

int
shim_mem_get(struct shim_context *sctx, void *addr, size_t len, bool writable,
	     struct shim_mem_ref *ref)
{
	uintptr_t a = (uintptr_t)addr, lo = 0, hi = 0, cur;
	struct mem_vma *v = NULL;
	bool any_foreign = false, any_ours_or_private = false, indirect = false, moved = false;
	int n, i, ret;

	memset(ref, 0, sizeof(*ref));
	ref->fd = -1;
	if (len == 0 || a + len < a)
		return EINVAL;
	pthread_mutex_lock(&mem_lock);
	if (page_mask == 0)
		page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	lo = a & ~page_mask;
	hi = (a + len + page_mask) & ~page_mask;
	n = maps_collect(lo, hi, &v);
	if (n < 0) {
		ret = -n;
		goto out;
	}
	/* every page mapped, readable, writable if asked */
	for (i = 0, cur = lo, ret = 0; i < n && ret == 0; i++) {
		if (v[i].start > cur || v[i].special || !(v[i].prot & PROT_READ) ||
		    (writable && !(v[i].prot & PROT_WRITE)))
			ret = EFAULT;
		cur = v[i].end;
		if (vma_is_ours(&v[i]) || !v[i].shared || vma_sysv_private(&v[i]))
			any_ours_or_private = true;
		else
			any_foreign = true;
	}
	if (ret == 0 && cur < hi)
		ret = EFAULT;
	if (ret != 0)
		goto out;
	if (any_foreign) {
		ret = any_ours_or_private ? EOPNOTSUPP : mem_get_foreign(sctx, v, n, a, writable, ref);
		goto out;
	}

	ret = mem_file_init();
	if (ret != 0)
		goto out;
	mem_linger_retry();
	/*
	 * Every piece to move must be held, or none moves: the region is
	 * indirect. So is one over pages an indirect one covers (see uivals).
	 */
	indirect = mem_under_indirect(lo, hi);
	for (i = 0; i < n && ret == 0; i++) {
		uintptr_t s, e;

		ret = mem_piece(&v[i], lo, hi, &s, &e);
		if (ret == 0 && s < e && !indirect)
			indirect = !mem_probe(s, e);
	}
	for (i = 0; i < n && ret == 0 && !indirect; i++) {
		uintptr_t s, e;

		(void)mem_piece(&v[i], lo, hi, &s, &e);
		if (s == e)
			continue;
		ret = mem_move(s, e, v[i].prot);
		if (ret == EAGAIN) {	/* a userfaultfd came between: the rest stays */
			indirect = true;
			ret = 0;
		} else if (ret == EINVAL || ret == EPERM || ret == EACCES) {
			ret = EOPNOTSUPP;
		}
		moved = moved || ret == 0;
	}
	if (ret != 0)
		goto out;
	/* what moved is counted, to go back at the last deregistration */
	if (!indirect || moved) {
		ret = ival_apply(lo, hi, 1, NULL, NULL);
		if (ret != 0)
			goto out;
		ref->counted = true;
		ref->lo = lo;
		ref->hi = hi;
	}
	if (indirect) {
		ref->fd = shim_odp_mem_fd();
		ret = ref->fd < 0 ? errno : ival_apply_to(&uivals, &nuivals, lo, hi, 1, NULL, NULL);
		ref->indirect = ret == 0;
		ref->lo = lo;
		ref->hi = hi;
	} else {
		ref->fd = mem_fd;
		ref->fd_offset = a;
	}
	ref->fd_owned = false;
out:
	pthread_mutex_unlock(&mem_lock);
	free(v);
	/* indirect: faulted in now, as pinning would (outside mem_lock: a fault
	 * may wait for a thread of the program) */
	if (ret == 0 && indirect)
		ret = shim_odp_touch(lo, hi - lo, writable);
	if (ret != 0) {
		shim_mem_put(ref);
		ref->fd = -1;
	}
	return ret;
}

int
shim_mem_get_odp(void *addr, size_t len, struct shim_mem_ref *ref)
{
	uintptr_t a = (uintptr_t)addr;
	int ret;

	memset(ref, 0, sizeof(*ref));
	ref->fd = shim_odp_mem_fd();
	if (ref->fd < 0)
		return EOPNOTSUPP;
	pthread_mutex_lock(&mem_lock);
	if (page_mask == 0)
		page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	ref->lo = a & ~page_mask;
	/* implicit, or a range to the top: everything up from addr */
	ref->hi = len > UINTPTR_MAX - page_mask - a ? UINTPTR_MAX & ~page_mask :
		  (a + len + page_mask) & ~page_mask;
	ret = ref->lo < ref->hi ? ival_apply_to(&uivals, &nuivals, ref->lo, ref->hi, 1, NULL,
						NULL) : 0;
	ref->indirect = ret == 0 && ref->lo < ref->hi;
	pthread_mutex_unlock(&mem_lock);
	if (ret != 0)
		ref->fd = -1;
	return ret;
}

/* Note [s, e) as lingering (its count taken); without memory it stays counted for good. */
static void
mem_linger_add(uintptr_t s, uintptr_t e)
{
	struct mem_span *nl = realloc(linger, (nlinger + 1) * sizeof(*linger));

	if (nl == NULL)
		return;
	linger = nl;
	linger[nlinger++] = (struct mem_span){ .s = s, .e = e };
}

static void
mem_punch(uintptr_t s, uintptr_t e)
{
	if (s < e)
		(void)fallocate(mem_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s,
				(off_t)(e - s));
}

/*
 * Give [s, e) back to private memory where it is still our mapping; punch
 * it out. A piece that cannot go back held (the calling thread's own TLS
 * is there, another userfaultfd has it) or that an indirect registration
 * covers stays shared and counted, lingering, until mem_linger_retry()
 * finds it can.
 */
static void
mem_release(uintptr_t s, uintptr_t e)
{
	struct mem_vma *v = NULL;
	uintptr_t punched = s;
	int n, i;

	n = maps_collect(s, e, &v);
	for (i = 0; i < n; i++) {
		uintptr_t vs = v[i].start > s ? v[i].start : s;
		uintptr_t ve = v[i].end < e ? v[i].end : e;

		if (!vma_is_ours(&v[i]) ||
		    (!mem_under_indirect(vs, ve) && mem_privatize(vs, ve, v[i].prot, false) == 0))
			continue;
		mem_punch(punched, vs);
		punched = ve;
		/* without memory for the note it stays shared for good, never zeroed */
		if (ival_apply(vs, ve, 1, NULL, NULL) == 0)
			mem_linger_add(vs, ve);
	}
	free(v);
	if (n >= 0)
		mem_punch(punched, e);
}

/* Another try at the lingering pieces (mem_release()), from this thread. */
static void
mem_linger_retry(void)
{
	struct mem_span *l = linger;
	size_t n = nlinger, i, j, nzero;
	struct mem_ival *zero;

	linger = NULL;
	nlinger = 0;
	for (i = 0; i < n; i++) {
		if (mem_holdable(l[i].s, l[i].e) && !mem_under_indirect(l[i].s, l[i].e) &&
		    ival_apply(l[i].s, l[i].e, -1, &zero, &nzero) == 0) {
			for (j = 0; j < nzero; j++)
				mem_release(zero[j].lo, zero[j].hi);
			free(zero);
		} else {
			mem_linger_add(l[i].s, l[i].e);
		}
	}
	free(l);
}

void
shim_mem_put(struct shim_mem_ref *ref)
{
	struct mem_ival *zero = NULL;
	size_t nzero = 0, i;

	if (!ref->counted && !ref->indirect)
		return;
	pthread_mutex_lock(&mem_lock);
	if (ref->indirect)
		(void)ival_apply_to(&uivals, &nuivals, ref->lo, ref->hi, -1, NULL, NULL);
	mem_linger_retry();
	if (ref->counted && ival_apply(ref->lo, ref->hi, -1, &zero, &nzero) == 0) {
		for (i = 0; i < nzero; i++)
			mem_release(zero[i].lo, zero[i].hi);
		free(zero);
	}
	pthread_mutex_unlock(&mem_lock);
	ref->counted = false;
	ref->indirect = false;
}

void
shim_mem_ref_done(struct shim_mem_ref *ref)
{
	if (ref->fd_owned && ref->fd >= 0)
		close(ref->fd);
	ref->fd = -1;
	ref->fd_owned = false;
}

/* ---- fork ---- */

struct fork_piece {
	uintptr_t s, e;
	int prot;
	bool dontfork;		/* not inherited: the child maps fresh pages */
};

static struct fork_piece *fork_plan;	/* an mmap of its own, never on the heap */
static size_t fork_plan_len, fork_npieces;

/* Parent, just before fork() (holds mem_lock until the fork is over). */
static void
mem_fork_prepare(void)
{
	uintptr_t sp = (uintptr_t)&sp;
	size_t i, cap = 0;
	int n, j;

	pthread_mutex_lock(&mem_lock);
	fork_npieces = 0;
	if (mem_fd < 0 || nivals == 0)
		return;
	for (i = 0; i < nivals; i++) {
		struct mem_vma *v = NULL;

		n = maps_collect(ivals[i].lo, ivals[i].hi, &v);
		for (j = 0; j < n; j++) {
			uintptr_t ps = v[j].start > ivals[i].lo ? v[j].start : ivals[i].lo;
			uintptr_t pe = v[j].end < ivals[i].hi ? v[j].end : ivals[i].hi;
			struct fork_piece *fp;

			if (!vma_is_ours(&v[j]))
				continue;
			if (fork_npieces == cap) {
				size_t len = (cap ? cap * 2 : 64) * sizeof(*fork_plan);
				void *np = mem_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

				if (np == MAP_FAILED)
					break;
				if (fork_plan != NULL) {
					memcpy(np, fork_plan, fork_npieces * sizeof(*fork_plan));
					mem_sys_munmap(fork_plan, fork_plan_len);
				}
				fork_plan = np;
				fork_plan_len = len;
				cap = len / sizeof(*fork_plan);
			}
			fp = &fork_plan[fork_npieces++];
			fp->s = ps;
			fp->e = pe;
			fp->prot = v[j].prot;
			/* the forking thread's own stack must survive the return from fork() */
			fp->dontfork = pe + MEM_ALT_STACK_BYTES <= sp ||
				       ps >= sp + MEM_ALT_STACK_BYTES;
			if (fp->dontfork && mem_sys_madvise((void *)ps, pe - ps, MADV_DONTFORK) != 0)
				fp->dontfork = false;
		}
		free(v);
	}
}

/* Parent, after fork(). */
static void
mem_fork_parent(void)
{
	size_t i;

	for (i = 0; i < fork_npieces; i++)
		if (fork_plan[i].dontfork)
			(void)mem_sys_madvise((void *)fork_plan[i].s, fork_plan[i].e - fork_plan[i].s,
				      MADV_DOFORK);
	fork_npieces = 0;
	pthread_mutex_unlock(&mem_lock);
}

/* Child: private copies of everything moved, then forget the memfd. */
static void
mem_fork_child(void)
{
	size_t i;

	if (mem_uffd >= 0)
		close(mem_uffd);	/* the parent's: it holds the parent's pages */
	mem_uffd = -1;
	for (i = 0; i < fork_npieces; i++) {
		struct fork_piece *fp = &fork_plan[i];
		size_t len = fp->e - fp->s;

		if (!fp->dontfork) {	/* alone in the process: nobody writes meanwhile */
			(void)mem_privatize(fp->s, fp->e, fp->prot, true);
			continue;
		}
		if (mem_sys_mmap((void *)fp->s, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			continue;
		(void)mem_file_io(false, mem_fd, (void *)fp->s, len, fp->s);
		(void)mprotect((void *)fp->s, len, fp->prot);
	}
	fork_npieces = 0;
	if (mem_fd >= 0) {
		close(mem_fd);
		mem_fd = -1;
	}
	free(ivals);	/* the heap is private again */
	ivals = NULL;
	nivals = 0;
	free(linger);
	linger = NULL;
	nlinger = 0;
	free(uivals);
	uivals = NULL;
	nuivals = 0;
	pthread_mutex_init(&mem_lock, NULL);
}

/* At load, so the child handler runs before the application's own. */
__attribute__((constructor)) static void
mem_atfork_register(void)
{
	(void)pthread_atfork(mem_fork_prepare, mem_fork_parent, mem_fork_child);
}
