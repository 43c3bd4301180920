/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * OPEN_MAPPING: the file behind a client's own shared mapping, for memory
 * whose file the client cannot open (shared anonymous memory has no name,
 * and /proc/self/map_files wants CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).
 * Linux registers such memory for any user; the shim needs its file to
 * share it with us. We open /proc/PID/map_files/START-END with the client's
 * uid and gid as this thread's file system credentials and no supplementary
 * groups, so the kernel checks the file's permissions as for the client
 * opening it by name (a shared anonymous file is the client's own), while
 * our CAP_SYS_ADMIN passes map_files' own check. The pidfd taken when the
 * client connected is still alive after the open, so PID was the client and
 * not a process that reused its number. Runs on the control thread.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fsuid.h>
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

int
droced_open_mapping(int pidfd, pid_t pid, uid_t uid, gid_t gid,
		    const struct droce_ctrl_open_mapping_req *req, int *fd_out)
{
	gid_t saved[64];
	char path[96];
	struct stat st;
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
	/* a regular file, and the client still the process PID names */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0) {
		close(fd);
		return EOPNOTSUPP;
	}
	*fd_out = fd;
	return 0;
}
