/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_reg_mr(3) on every kind of memory a program maps (not one man page:
 * what the kernel's verbs register). For each kind the agent's RDMA WRITE,
 * READ and FETCH_AND_ADD reach the registered bytes, and the WRITE and the
 * atomic are seen through the program's other view of the same memory: a
 * child forked before the registration (shared anonymous memory), pread()
 * (files), a second mapping (shm_open, System V segments attached twice).
 * Private memory (anonymous, private file mappings) is checked in place,
 * and a private file mapping must leave its file unchanged. What Linux
 * refuses (PROT_NONE, a range not mapped) is refused with EFAULT. A file
 * truncated under its registration costs the program its pages, not the
 * daemon its life (run.sh checks the daemon after every program).
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verbs_test.h"

#define LEN		8192u
#define W_OFF		0u		/* the agent WRITEs 64 'w' here */
#define R_OFF		128u		/* ... READs the 64 'r' here */
#define A_OFF		256u		/* ... adds 1 to this word */
#define A_START		41u
#define RIGHTS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct vt_remote_mr src;	/* the agent's: 'w' to write, then what it read */
static struct vt_pair pr;
static bool pr_up;

/* What the other view of the memory shows: 0 if it holds the WRITE and the atomic. */
typedef int (*view_fn)(void *arg);

static void
prepare(uint8_t *p)
{
	uint64_t a = A_START;

	memset(p, 0, 512);
	memset(p + R_OFF, 'r', 64);
	memcpy(p + A_OFF, &a, sizeof(a));
}

/* The WRITE and the atomic in 512 bytes of another view. */
static bool
seen(const uint8_t *v)
{
	uint64_t a;
	unsigned int i;

	memcpy(&a, v + A_OFF, sizeof(a));
	for (i = 0; i < 64; i++)
		if (v[W_OFF + i] != 'w')
			return false;
	return a == A_START + 1;
}

/* The agent's three operations on [p, p + LEN), registered; then @p view. */
static void
probe(const char *kind, uint8_t *p, view_fn view, void *arg)
{
	struct ibv_mr *mr = ibv_reg_mr(vt.pd, p, LEN, RIGHTS);
	char name[160], got[64];
	uint64_t a;
	int sw, sr, sa;

	snprintf(name, sizeof(name), "%s: registered", kind);
	if (!vt_check(mr != NULL, name, "errno %d (%s)", errno, strerror(errno)))
		return;
	if (!pr_up) {
		pr = vt_pair(IBV_QPT_RC, 0);
		pr_up = true;
	}
	vt_remote_fill(src.id, 0, 64, 'w');
	sw = vt_remote_rdma(&pr, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)(p + W_OFF), mr->rkey, 64);
	sr = vt_remote_rdma(&pr, IBV_WR_RDMA_READ, src.id, (uintptr_t)(p + R_OFF), mr->rkey, 64);
	vt_remote_read(src.id, 0, got, sizeof(got));
	sa = vt_remote_rdma(&pr, IBV_WR_ATOMIC_FETCH_AND_ADD, src.id, (uintptr_t)(p + A_OFF),
			    mr->rkey, 8);
	pr_up = sw == IBV_WC_SUCCESS && sr == IBV_WC_SUCCESS && sa == IBV_WC_SUCCESS;
	memcpy(&a, p + A_OFF, sizeof(a));
	snprintf(name, sizeof(name), "%s: WRITE, READ and FETCH_AND_ADD reach it", kind);
	vt_check(pr_up && seen(p) && memcmp(got, "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr",
					    64) == 0,
		 name, "status %d %d %d, word %llu, byte %#x", sw, sr, sa, (unsigned long long)a,
		 p[W_OFF]);
	if (view != NULL) {
		int r = view(arg);

		snprintf(name, sizeof(name), "%s: the other view sees them", kind);
		vt_check(r == 0, name, "view says %d", r);
	}
	snprintf(name, sizeof(name), "%s: deregistered", kind);
	vt_check(ibv_dereg_mr(mr) == 0, name, "errno %d", errno);
	if (!pr_up)
		vt_pair_restate(&pr);
	pr_up = true;
}

/* ---- the views ---- */

static int
view_pread(void *arg)
{
	uint8_t v[512];

	if (pread(*(int *)arg, v, sizeof(v), 0) != (ssize_t)sizeof(v))
		return -errno;
	return seen(v) ? 0 : 1;
}

static int
view_map(void *arg)
{
	return seen(arg) ? 0 : 1;
}

/* A child forked before the registration looks once told to: its exit status. */
struct child {
	pid_t pid;
	int go;			/* write end: "look now" */
};

static struct child
child_watching(const uint8_t *p)
{
	struct child c = { .pid = -1, .go = -1 };
	int fds[2];
	char b;

	vt_require(pipe(fds) == 0, "pipe");
	c.pid = fork();
	vt_require(c.pid >= 0, "fork");
	if (c.pid == 0) {
		close(fds[1]);
		_exit(read(fds[0], &b, 1) == 1 && seen(p) ? 0 : 1);
	}
	close(fds[0]);
	c.go = fds[1];
	return c;
}

static int
view_child(void *arg)
{
	struct child *c = arg;
	int st = 0;

	if (write(c->go, "g", 1) != 1 || waitpid(c->pid, &st, 0) != c->pid)
		return -1;
	close(c->go);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- the kinds ---- */

static void
shared_anon(int extra, const char *kind)
{
	uint8_t *p = mmap(NULL, extra ? (2u << 20) : LEN, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS | extra, -1, 0);
	struct child c;

	if (p == MAP_FAILED) {
		printf("note %s: not here (%s)\n", kind, strerror(errno));
		return;
	}
	prepare(p);
	c = child_watching(p);
	probe(kind, p, view_child, &c);
	munmap(p, extra ? (2u << 20) : LEN);
}

/*
 * This thread's effective CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE off (on
 * again with @p on): what /proc/self/map_files wants, which an ordinary
 * user has not. @return false if capset(2) refused.
 */
static bool
map_files_caps(bool on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	if (on) {
		d[0].effective |= d[0].permitted & (1u << CAP_SYS_ADMIN);
		d[1].effective |= d[1].permitted & (1u << (CAP_CHECKPOINT_RESTORE - 32));
	} else {
		d[0].effective &= ~(1u << CAP_SYS_ADMIN);
		d[1].effective &= ~(1u << (CAP_CHECKPOINT_RESTORE - 32));
	}
	return syscall(SYS_capset, &h, d) == 0;
}

/* Shared anonymous memory registered by a thread without map_files' capabilities:
 * the shim cannot open its file, droced opens it with our uid (OPEN_MAPPING). */
static void
shared_anon_uncapable(void)
{
	const char *kind = "shared anonymous memory, registered without CAP_SYS_ADMIN";
	uint8_t *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char path[96];
	struct child c;
	int fd;

	vt_require(p != MAP_FAILED, "mmap");
	vt_require(map_files_caps(false), "capset");
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + LEN);
	fd = open(path, O_RDWR);
	vt_check(fd < 0 && errno == EPERM, "without CAP_SYS_ADMIN: map_files refused",
		 "fd %d errno %d", fd, errno);
	if (fd >= 0)
		close(fd);
	prepare(p);
	c = child_watching(p);
	probe(kind, p, view_child, &c);
	vt_require(map_files_caps(true), "capset");
	munmap(p, LEN);
}

/*
 * What droced opens for a thread without those capabilities is shared
 * anonymous memory only: a memfd mapped read-only whose descriptor is
 * closed (map_files would reopen it for writing) stays EOPNOTSUPP.
 */
static void
memfd_closed_uncapable(void)
{
	int fd = memfd_create("droce-ro", MFD_CLOEXEC);
	struct ibv_mr *mr;
	uint8_t *p;

	vt_require(fd >= 0 && ftruncate(fd, LEN) == 0, "memfd");
	p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	vt_require(p != MAP_FAILED, "mmap");
	close(fd);
	vt_require(map_files_caps(false), "capset");
	mr = ibv_reg_mr(vt.pd, p, LEN, IBV_ACCESS_REMOTE_READ);
	vt_check(mr == NULL && errno == EOPNOTSUPP,
		 "a read-only memfd with no descriptor, without CAP_SYS_ADMIN: EOPNOTSUPP",
		 "mr %p errno %d", (void *)mr, errno);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	vt_require(map_files_caps(true), "capset");
	munmap(p, LEN);
}

/* A file of LEN bytes: mapped shared, checked by pread. */
static void
shared_file(int fd, const char *kind)
{
	uint8_t *p;

	vt_require(fd >= 0 && ftruncate(fd, LEN) == 0, kind);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	vt_require(p != MAP_FAILED, "mmap");
	prepare(p);
	probe(kind, p, view_pread, &fd);
	munmap(p, LEN);
	close(fd);
}

static int
temp_file(const char *dir)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/droce-kinds-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static void
posix_shm(void)
{
	char name[64];
	uint8_t *p, *q;
	int fd;

	snprintf(name, sizeof(name), "/droce-kinds-%d", getpid());
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	vt_require(fd >= 0 && ftruncate(fd, LEN) == 0, "shm_open");
	shm_unlink(name);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	q = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	vt_require(p != MAP_FAILED && q != MAP_FAILED, "mmap");
	close(fd);		/* the mapping alone must do */
	prepare(p);
	probe("shm_open segment, no descriptor left", p, view_map, q);
	munmap(p, LEN);
	munmap(q, LEN);
}

static void
memfd(bool sealed)
{
	int fd = memfd_create("droce-kinds", MFD_ALLOW_SEALING);

	vt_require(fd >= 0 && ftruncate(fd, LEN) == 0, "memfd");
	if (sealed)
		vt_require(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0, "seals");
	shared_file(fd, sealed ? "memfd, sealed" : "memfd, unsealed");
}

static void
sysv_twice(int huge)
{
	size_t len = huge ? (2u << 20) : LEN;
	int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600 | huge);
	uint8_t *p, *q;

	if (id < 0) {
		printf("note System V segment%s: not here (%s)\n", huge ? " (hugetlb)" : "",
		       strerror(errno));
		return;
	}
	p = shmat(id, NULL, 0);
	q = shmat(id, NULL, SHM_RDONLY);
	shmctl(id, IPC_RMID, NULL);
	vt_require(p != (void *)-1 && q != (void *)-1, "shmat");
	prepare(p);
	probe(huge ? "System V segment (hugetlb) attached twice" : "System V segment attached twice",
	      p, view_map, q);
	shmdt(p);
	shmdt(q);
}

static void
private_file(void)
{
	int fd = temp_file("/var/tmp");
	uint8_t zero[512] = { 0 }, v[512];
	uint8_t *p;

	vt_require(fd >= 0 && ftruncate(fd, LEN) == 0, "file");
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	vt_require(p != MAP_FAILED, "mmap");
	prepare(p);
	probe("private file mapping", p, NULL, NULL);
	vt_check(pread(fd, v, sizeof(v), 0) == (ssize_t)sizeof(v) && memcmp(v, zero, 512) == 0,
		 "private file mapping: the file unchanged", "first byte %#x", v[0]);
	vt_check(seen(p), "private file mapping: the writes kept after deregistration",
		 "byte %#x", p[0]);
	munmap(p, LEN);
	close(fd);
}

static void
private_huge(void)
{
	uint8_t *p = mmap(NULL, 2u << 20, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

	if (p == MAP_FAILED) {
		printf("note private hugetlb: not here (%s)\n", strerror(errno));
		return;
	}
	prepare(p);
	probe("private hugetlb", p, NULL, NULL);
	vt_check(seen(p), "private hugetlb: the writes kept after deregistration", "byte %#x",
		 p[0]);
	munmap(p, 2u << 20);
}

static void
refused(void)
{
	uint8_t *p = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	vt_require(p != MAP_FAILED, "mmap");
	errno = 0;
	mr = ibv_reg_mr(vt.pd, p, 4096, IBV_ACCESS_LOCAL_WRITE);
	vt_check(mr == NULL && errno == EFAULT, "PROT_NONE memory: EFAULT", "mr %p errno %d",
		 (void *)mr, errno);
	munmap(p + 4096, 4096);
	errno = 0;
	mr = ibv_reg_mr(vt.pd, p + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	vt_check(mr == NULL && errno == EFAULT, "a range not mapped: EFAULT", "mr %p errno %d",
		 (void *)mr, errno);
	munmap(p, 3 * 4096);
}

/* A file truncated under its registration: the agent's WRITE still completes. */
static void
truncated(void)
{
	int fd = temp_file("/dev/shm");
	struct ibv_mr *mr;
	uint8_t *p;
	int st;

	vt_require(fd >= 0 && ftruncate(fd, LEN) == 0, "file");
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	vt_require(p != MAP_FAILED, "mmap");
	prepare(p);
	mr = ibv_reg_mr(vt.pd, p, LEN, RIGHTS);
	if (!vt_check(mr != NULL, "truncated file: registered", "errno %d", errno))
		return;
	vt_require(ftruncate(fd, 0) == 0, "ftruncate");
	st = vt_remote_rdma(&pr, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)(p + 4096), mr->rkey, 64);
	vt_check(st == IBV_WC_SUCCESS, "truncated file: a WRITE into its lost pages completes",
		 "status %d", st);
	if (st != IBV_WC_SUCCESS)
		vt_pair_restate(&pr);
	vt_check(ibv_dereg_mr(mr) == 0, "truncated file: deregistered", "errno %d", errno);
	munmap(p, LEN);
	close(fd);
}

static void
drive(void)
{
	uint8_t *p;

	src = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_WRITE);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	vt_require(p != MAP_FAILED, "mmap");
	prepare(p);
	probe("private anonymous memory", p, NULL, NULL);
	munmap(p, LEN);
	shared_anon(0, "shared anonymous memory, a child forked before");
	shared_anon(MAP_HUGETLB, "shared hugetlb, a child forked before");
	shared_anon_uncapable();
	memfd_closed_uncapable();
	shared_file(temp_file("/dev/shm"), "MAP_SHARED file on tmpfs");
	shared_file(temp_file("/var/tmp"), "MAP_SHARED file on disk");
	posix_shm();
	memfd(false);
	memfd(true);
	sysv_twice(0);
	sysv_twice(SHM_HUGETLB);
	private_file();
	private_huge();
	refused();
	truncated();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
