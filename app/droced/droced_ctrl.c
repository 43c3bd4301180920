/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The control server: a SOCK_SEQPACKET listener and one connection per
 * verbs context, served by one thread with poll(). Each request is handed
 * to worker 0 (droced_call_worker), which owns every object; the reply
 * and its descriptors go back on the same connection. A connection that
 * closes, errs or sends something malformed loses its client: the worker
 * tears down everything it owned. Who may connect is the socket file's
 * owner, group and mode; the client's credentials come from SO_PEERCRED.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "droce_ctrl.h"
#include "droce_ctrl_cm.h"
#include "droced.h"

#define MAX_CONNS 1024

struct conn {
	int fd;
	struct droce_client *cl;
	int pidfd;		/* the client process, for OPEN_MAPPING (-1: none) */
	struct ucred cred;
};

int
droced_ctrl_listen(struct droced *d)
{
	const char *path = d->opts.socket_path;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	char *slash;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "droced: socket path too long: %s\n", path);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "droced: cannot listen on %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* like /dev/infiniband/uverbs*: the file's mode and group say who may use us */
	chmod(path, d->opts.sock_mode);
	if (d->opts.sock_gid >= 0 && chown(path, (uid_t)-1, (gid_t)d->opts.sock_gid) < 0)
		fprintf(stderr, "droced: chown %s: %s\n", path, strerror(errno));
	d->listen_fd = fd;
	return 0;
}

/* CAP_NET_RAW (bit 13) in the client's effective set, read from /proc. */
static bool
peer_cap_net_raw(pid_t pid, uid_t uid)
{
	char path[64], line[256];
	unsigned long long caps = 0;
	bool found = false;
	FILE *f;

	if (uid == 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			found = true;
			break;
		}
	fclose(f);
	return found && (caps & (1ull << 13));
}

struct new_client_call {
	struct droced_call c;
	struct droced *d;
	struct droce_client_cred cred;
	struct droce_client *cl;
	int ret;
};

static void
do_new_client(struct droced_call *c)
{
	struct new_client_call *n = (struct new_client_call *)c;

	n->ret = droce_dev_client_new(n->d->dev, &n->cred, &n->cl);
}

struct free_client_call {
	struct droced_call c;
	struct droced *d;
	struct droce_client *cl;
};

static void
do_free_client(struct droced_call *c)
{
	struct free_client_call *f = (struct free_client_call *)c;

	droced_cm_client_gone(f->d, f->cl);
	droce_dev_client_free(f->cl);
}

struct request_call {
	struct droced_call c;
	struct droced *d;
	struct droce_client *cl;
	struct droce_ctrl_hdr hdr;
	uint8_t body[DROCE_CTRL_MAX_MSG];
	int fds[DROCE_CTRL_MAX_FDS];
	unsigned int nfds;
	uint8_t rep[DROCE_CTRL_MAX_MSG];
	uint32_t rep_len;
	int rep_fds[DROCE_CTRL_MAX_FDS];
	unsigned int rep_nfds;
	int status;
};

static void
do_request(struct droced_call *c)
{
	struct request_call *r = (struct request_call *)c;

	r->rep_nfds = 0;
	if (droce_ctrl_is_cm(r->hdr.type))
		r->status = droced_cm_request(r->d, r->cl, &r->hdr, r->body, r->fds, r->nfds,
					      r->rep, &r->rep_len);
	else
		r->status = droce_dev_request(r->cl, &r->hdr, r->body, r->fds, r->nfds, r->rep,
				      &r->rep_len, r->rep_fds, &r->rep_nfds);
}

struct reclaim_call {
	struct droced_call c;
	struct droced *d;
};

static void
do_reclaim(struct droced_call *c)
{
	droce_dev_reclaim(((struct reclaim_call *)c)->d->dev);
}

static void
conn_close(struct droced *d, struct conn *cn)
{
	struct free_client_call f = { .c.fn = do_free_client, .d = d, .cl = cn->cl };

	if (cn->cl != NULL)
		droced_call_worker(d, &f.c);
	close(cn->fd);
	cn->fd = -1;
	cn->cl = NULL;
	if (cn->pidfd >= 0)
		close(cn->pidfd);
	cn->pidfd = -1;
}

#ifdef SO_PEERPIDFD
#define DROCED_SO_PEERPIDFD SO_PEERPIDFD
#else
#define DROCED_SO_PEERPIDFD 77	/* Linux's value; older headers lack it */
#endif

/* A pidfd of the process that connected on @p fd: the socket's own
 * (SO_PEERPIDFD, Linux 6.5), or one opened from its pid. -1 if neither. */
static int
peer_pidfd(int fd, pid_t pid)
{
	socklen_t len = sizeof(int);
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, DROCED_SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0)
		return pidfd;
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void
conn_accept(struct droced *d, struct conn *conns)
{
	struct new_client_call n = { .c.fn = do_new_client, .d = d };
	struct ucred uc;
	socklen_t len = sizeof(uc);
	unsigned int i;
	int fd;

	fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < MAX_CONNS && conns[i].fd >= 0; i++)
		;
	if (i == MAX_CONNS || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0) {
		close(fd);
		return;
	}
	n.cred.pid = (uint32_t)uc.pid;
	n.cred.uid = uc.uid;
	n.cred.gid = uc.gid;
	n.cred.cap_net_raw = peer_cap_net_raw(uc.pid, uc.uid);
	droced_call_worker(d, &n.c);
	if (n.ret < 0) {
		close(fd);
		return;
	}
	conns[i].fd = fd;
	conns[i].cl = n.cl;
	conns[i].cred = uc;
	conns[i].pidfd = peer_pidfd(fd, uc.pid);
}

/* OPEN_MAPPING, served here: it needs no worker, only the client's creds. */
static void
serve_open_mapping(struct conn *cn, struct request_call *r)
{
	int fd;

	r->rep_len = 0;
	r->rep_nfds = 0;
	if (r->hdr.len != sizeof(struct droce_ctrl_open_mapping_req)) {
		r->status = -EPROTO;
		return;
	}
	r->status = droced_open_mapping(cn->pidfd, cn->cred.pid, cn->cred.uid, cn->cred.gid,
					(const struct droce_ctrl_open_mapping_req *)r->body, &fd);
	if (r->status == 0) {
		r->rep_fds[0] = fd;
		r->rep_nfds = 1;
	}
}

/* One request from @cn; false if the connection must go. */
static bool
conn_serve(struct droced *d, struct conn *cn, struct request_call *r)
{
	unsigned int i;
	int len;

	memset(&r->c, 0, sizeof(r->c));
	r->c.fn = do_request;
	r->d = d;
	r->cl = cn->cl;
	r->nfds = 0;
	len = droce_ctrl_recv(cn->fd, &r->hdr, r->body, r->fds, &r->nfds);
	if (len < 0)
		return false;
	if (r->hdr.type == DROCE_CTRL_OPEN_MAPPING)
		serve_open_mapping(cn, r);
	else
		droced_call_worker(d, &r->c);
	for (i = 0; i < r->nfds; i++)		/* the worker dup()ed what it keeps */
		if (r->fds[i] >= 0)
			close(r->fds[i]);
	if (r->status < 0)
		return false;			/* malformed: this client goes */
	len = droce_ctrl_send(cn->fd, r->hdr.type, r->hdr.seq, r->status, r->rep,
			      r->status == 0 ? r->rep_len : 0, r->rep_fds,
			      r->status == 0 ? r->rep_nfds : 0);
	for (i = 0; i < r->rep_nfds; i++)
		close(r->rep_fds[i]);
	return len == 0;
}

void *
droced_ctrl_thread(void *arg)
{
	struct droced *d = arg;
	static struct conn conns[MAX_CONNS];
	static struct pollfd pfd[MAX_CONNS + 1];
	struct request_call *r = malloc(sizeof(*r));
	/* quiet: once a second, no client's request (it kept sleep from its 1 ms naps) */
	struct reclaim_call rc = { .c.fn = do_reclaim, .c.quiet = true, .d = d };
	uint64_t next_reclaim = 0;
	unsigned int i, n;

	for (i = 0; i < MAX_CONNS; i++) {
		conns[i].fd = -1;
		conns[i].pidfd = -1;
	}
	while (!atomic_load(&d->stop)) {
		/* MRs of a client that went away wait for no request to free them */
		if (droce_now_ns() >= next_reclaim) {
			next_reclaim = droce_now_ns() + 1000 * 1000 * 1000ull;
			droced_call_worker(d, &rc.c);
		}
		pfd[0].fd = d->listen_fd;
		pfd[0].events = POLLIN;
		for (i = 0, n = 1; i < MAX_CONNS; i++) {
			pfd[i + 1].fd = conns[i].fd;	/* negative: ignored by poll */
			pfd[i + 1].events = POLLIN;
			pfd[i + 1].revents = 0;
			if (conns[i].fd >= 0)
				n = i + 2;
		}
		droced_sysfs_tick(d);
		if (poll(pfd, n, 200) <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			conn_accept(d, conns);
		for (i = 0; i + 1 < n; i++) {
			if (conns[i].fd < 0 || pfd[i + 1].revents == 0)
				continue;
			if (!(pfd[i + 1].revents & POLLIN) || !conn_serve(d, &conns[i], r))
				conn_close(d, &conns[i]);
		}
	}
	/* shutting down: tell every client, then let them go */
	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i].fd >= 0) {
			shutdown(conns[i].fd, SHUT_RDWR);
			close(conns[i].fd);
		}
	free(r);
	return NULL;
}
