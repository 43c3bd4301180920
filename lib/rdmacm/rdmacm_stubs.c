/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * What droce's librdmacm does not do yet (doc/cm.md, "What is left"): each
 * call fails with ENOSYS (NULL or -1 with errno, as its contract says), so
 * that applications learn it at once instead of getting a pretence. rpoll
 * and rselect are the exception: with no rsocket in existence every fd
 * they are given is an ordinary one, and rsocket's own rule for those is to
 * pass them to poll() and select().
 */

#include <errno.h>
#include <poll.h>
#include <sys/select.h>

#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "rdmacm_priv.h"

#define NOSYS_INT(...)	do { (void)0; __VA_ARGS__; errno = ENOSYS; return -1; } while (0)

RDMACM_EXPORT int rsocket(int d, int t, int p) { NOSYS_INT((void)d, (void)t, (void)p); }
RDMACM_EXPORT int rbind(int s, const struct sockaddr *a, socklen_t l) { NOSYS_INT((void)s, (void)a, (void)l); }
RDMACM_EXPORT int rlisten(int s, int b) { NOSYS_INT((void)s, (void)b); }
RDMACM_EXPORT int raccept(int s, struct sockaddr *a, socklen_t *l) { NOSYS_INT((void)s, (void)a, (void)l); }
RDMACM_EXPORT int rconnect(int s, const struct sockaddr *a, socklen_t l) { NOSYS_INT((void)s, (void)a, (void)l); }
RDMACM_EXPORT int rshutdown(int s, int h) { NOSYS_INT((void)s, (void)h); }
RDMACM_EXPORT int rclose(int s) { NOSYS_INT((void)s); }
RDMACM_EXPORT ssize_t rrecv(int s, void *b, size_t l, int f) { NOSYS_INT((void)s, (void)b, (void)l, (void)f); }
RDMACM_EXPORT ssize_t
rrecvfrom(int s, void *b, size_t l, int f, struct sockaddr *a, socklen_t *al)
{
	NOSYS_INT((void)s, (void)b, (void)l, (void)f, (void)a, (void)al);
}
RDMACM_EXPORT ssize_t rrecvmsg(int s, struct msghdr *m, int f) { NOSYS_INT((void)s, (void)m, (void)f); }
RDMACM_EXPORT ssize_t rsend(int s, const void *b, size_t l, int f) { NOSYS_INT((void)s, (void)b, (void)l, (void)f); }
RDMACM_EXPORT ssize_t
rsendto(int s, const void *b, size_t l, int f, const struct sockaddr *a, socklen_t al)
{
	NOSYS_INT((void)s, (void)b, (void)l, (void)f, (void)a, (void)al);
}
RDMACM_EXPORT ssize_t rsendmsg(int s, const struct msghdr *m, int f) { NOSYS_INT((void)s, (void)m, (void)f); }
RDMACM_EXPORT ssize_t rread(int s, void *b, size_t c) { NOSYS_INT((void)s, (void)b, (void)c); }
RDMACM_EXPORT ssize_t rreadv(int s, const struct iovec *v, int c) { NOSYS_INT((void)s, (void)v, (void)c); }
RDMACM_EXPORT ssize_t rwrite(int s, const void *b, size_t c) { NOSYS_INT((void)s, (void)b, (void)c); }
RDMACM_EXPORT ssize_t rwritev(int s, const struct iovec *v, int c) { NOSYS_INT((void)s, (void)v, (void)c); }
RDMACM_EXPORT int rgetpeername(int s, struct sockaddr *a, socklen_t *l) { NOSYS_INT((void)s, (void)a, (void)l); }
RDMACM_EXPORT int rgetsockname(int s, struct sockaddr *a, socklen_t *l) { NOSYS_INT((void)s, (void)a, (void)l); }
RDMACM_EXPORT int
rsetsockopt(int s, int lv, int o, const void *v, socklen_t l)
{
	NOSYS_INT((void)s, (void)lv, (void)o, (void)v, (void)l);
}
RDMACM_EXPORT int
rgetsockopt(int s, int lv, int o, void *v, socklen_t *l)
{
	NOSYS_INT((void)s, (void)lv, (void)o, (void)v, (void)l);
}
RDMACM_EXPORT int rfcntl(int s, int c, ...) { NOSYS_INT((void)s, (void)c); }
RDMACM_EXPORT off_t
riomap(int s, void *b, size_t l, int p, int f, off_t o)
{
	NOSYS_INT((void)s, (void)b, (void)l, (void)p, (void)f, (void)o);
}
RDMACM_EXPORT int riounmap(int s, void *b, size_t l) { NOSYS_INT((void)s, (void)b, (void)l); }
RDMACM_EXPORT size_t
riowrite(int s, const void *b, size_t c, off_t o, int f)
{
	(void)s, (void)b, (void)c, (void)o, (void)f;
	errno = ENOSYS;
	return 0;
}

/* No rsocket exists, so every fd here is an ordinary one: rsocket passes those through. */
RDMACM_EXPORT int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

RDMACM_EXPORT int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}
