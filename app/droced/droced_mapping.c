/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * OPEN_MAPPING: the file behind a client's own shared anonymous memory,
 * which has no name, and /proc/self/map_files wants CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE. Linux registers such memory for any user; the
 * shim needs its file to share it with us. We open /proc/PID/map_files/
 * START-END with the client's uid and gid as this thread's file system
 * credentials and no supplementary groups (what the open of whatever is
 * mapped there may do is what the client may do), while our CAP_SYS_ADMIN
 * passes map_files' own check. Only shared anonymous memory is handed out:
 * the file opened must be the kernel's "/dev/zero" object on its internal
 * shmem mount (ours has the same device). Such memory is shared with no one
 * but the client's own forks, and is always writable by them (mprotect), so
 * its descriptor gives the client nothing it had not: not so a memfd or a
 * System V segment it may map read-only, which map_files would reopen for
 * writing. The pidfd taken when the client connected is still alive after
 * the open, so PID was the client and not a process that reused its number.
 * Runs on the control thread.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "droced.h"

/* Set this thread's supplementary groups (glibc's setgroups() sets every thread's). */
static int
thread_setgroups(size_t n, const gid_t *groups)
{
	return (int)syscall(SYS_setgroups, n, groups);
}

/* The device of the kernel's shmem mount, where shared anonymous memory lives (0: unknown). */
static dev_t
shmem_dev(void)
{
	static dev_t dev;
	char path[96];
	struct stat st;
	void *p;
	int fd;

	if (dev != 0)
		return dev;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + 4096);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0)
		dev = st.st_dev;
	if (fd >= 0)
		close(fd);
	munmap(p, 4096);
	return dev;
}

/* Whether @p fd is shared anonymous memory: "/dev/zero" on the shmem mount, unlinked. */
static bool
is_shared_anon(int fd)
{
	static const char name[] = "/dev/zero (deleted)";
	char path[64], target[sizeof(name) + 1];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target));
	return n == (ssize_t)sizeof(name) - 1 && memcmp(target, name, (size_t)n) == 0 &&
	       fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 0 &&
	       shmem_dev() != 0 && st.st_dev == shmem_dev();
}

int
droced_open_mapping(int pidfd, pid_t pid, uid_t uid, gid_t gid,
		    const struct droce_ctrl_open_mapping_req *req, int *fd_out)
{
	gid_t saved[64];
	char path[96];
	int n, fd, err;
	uid_t old_uid;
	gid_t old_gid;

	*fd_out = -1;
	if (req->start >= req->end || req->reserved != 0 || req->writable > 1)
		return EINVAL;
	if (pidfd < 0)
		return EOPNOTSUPP;
	n = getgroups((int)(sizeof(saved) / sizeof(saved[0])), saved);
	if (n < 0)
		return EOPNOTSUPP;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 req->start, req->end);
	if (thread_setgroups(0, NULL) != 0)
		return EOPNOTSUPP;
	old_gid = (gid_t)setfsgid(gid);
	old_uid = (uid_t)setfsuid(uid);
	fd = open(path, (req->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	err = fd < 0 ? errno : 0;
	setfsuid(old_uid);
	setfsgid(old_gid);
	if (thread_setgroups((size_t)n, saved) != 0) {
		/* cannot happen for root; never go on with the client's groups */
		perror("droced: setgroups");
		abort();
	}
	if (fd < 0)
		return err == ENOENT ? EFAULT : EOPNOTSUPP;
	/* shared anonymous memory, and the client still the process PID names */
	if (!is_shared_anon(fd) || syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0) {
		close(fd);
		return EOPNOTSUPP;
	}
	*fd_out = fd;
	return 0;
}
