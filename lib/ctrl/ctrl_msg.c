/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Control messages on a SOCK_SEQPACKET unix socket (droce_ctrl.h): one
 * datagram per message, a struct droce_ctrl_hdr then the body, descriptors
 * in one SCM_RIGHTS control message. libc only; the shim and droced both
 * link it.
 *
 * Threads: no state but the sequence counter of droce_ctrl_call(), which is
 * atomic. Each call works on the socket it is given; the callers serialise
 * their own use of a socket (the shim holds its context's call lock, droced
 * serves each connection from its control thread).
 *
 * Receiving trusts nothing from the peer. A datagram that was truncated, is
 * shorter than a header, has another version, a len that disagrees with
 * its size, or more descriptors than the protocol allows is malformed:
 * every descriptor it carried is closed and the caller gets -EPROTO (droced
 * then drops that connection). The kernel discards, without installing,
 * descriptors that do not fit the control buffer.
 */

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "droce_core.h"
#include "droce_ctrl.h"

static const char *const type_name[] = {
	[DROCE_CTRL_NONE] = "NONE",
#define M(sym) [DROCE_CTRL_##sym] = #sym,
	DROCE_CTRL_MSGS(M)
#undef M
};

_Static_assert(DROCE_DIM(type_name) == DROCE_CTRL_TYPE_COUNT, "a name for every type");

const char *
droce_ctrl_type_name(uint32_t type)
{
	return type < DROCE_DIM(type_name) ? type_name[type] : "UNKNOWN";
}

int
droce_ctrl_send(int sock, uint16_t type, uint32_t seq, int32_t status, const void *body,
		uint32_t len, const int *fds, unsigned int nfds)
{
	struct droce_ctrl_hdr hdr = {
		.version = DROCE_CTRL_VERSION,
		.type = type,
		.seq = seq,
		.len = len,
		.status = status,
	};
	struct iovec iov[2] = {
		{ .iov_base = &hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = (void *)(uintptr_t)body, .iov_len = len },
	};
	union {				/* aligned for struct cmsghdr */
		char buf[CMSG_SPACE(sizeof(int) * DROCE_CTRL_MAX_FDS)];
		struct cmsghdr align;
	} cm;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1 };
	ssize_t n;

	if (len > DROCE_CTRL_MAX_BODY)
		return -EMSGSIZE;
	if ((len > 0 && body == NULL) || nfds > DROCE_CTRL_MAX_FDS || (nfds > 0 && fds == NULL))
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}

	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* a SEQPACKET datagram goes whole or not at all */
	return (size_t)n == sizeof(hdr) + len ? 0 : -EIO;
}

/* Close the first @p n of @p fds and mark all DROCE_CTRL_MAX_FDS unused. */
static void
fds_close(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++) {
		if (i < n && fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int
droce_ctrl_recv(int sock, struct droce_ctrl_hdr *hdr, void *buf, int *fds, unsigned int *nfds)
{
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = sizeof(*hdr) },
		{ .iov_base = buf, .iov_len = DROCE_CTRL_MAX_BODY },
	};
	/*
	 * Room for one descriptor too many, so that a surplus shows up as a
	 * count rather than only as MSG_CTRUNC, and for SCM_CREDENTIALS, which
	 * the kernel adds when SO_PASSCRED is on and which must not truncate a
	 * well-formed message.
	 */
	union {
		char buf[CMSG_SPACE(sizeof(int) * (DROCE_CTRL_MAX_FDS + 1)) +
			 CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} cm;
	struct msghdr msg = {
		.msg_iov = iov,
		.msg_iovlen = 2,
		.msg_control = cm.buf,
		.msg_controllen = sizeof(cm.buf),
	};
	const unsigned char *cm_end;
	struct cmsghdr *c;
	unsigned int got = 0, i;
	bool bad = false;
	ssize_t n;

	for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
		fds[i] = -1;
	*nfds = 0;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;

	/* Take every descriptor first: whatever else is wrong, none may leak. */
	cm_end = (const unsigned char *)msg.msg_control + msg.msg_controllen;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		const unsigned char *p = CMSG_DATA(c);
		size_t cnt, k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		if (c->cmsg_len < CMSG_LEN(0))
			break;
		cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < cnt && p + (k + 1) * sizeof(int) <= cm_end; k++) {
			int fd;

			memcpy(&fd, p + k * sizeof(int), sizeof(fd));
			if (got < DROCE_CTRL_MAX_FDS) {
				fds[got++] = fd;
			} else {
				close(fd);	/* more than the protocol allows */
				bad = true;
			}
		}
	}

	if (n == 0 && got == 0)
		return -ECONNRESET;	/* end of file; no message is empty */
	if (bad || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n < sizeof(*hdr))
		goto err_malformed;
	if (hdr->version != DROCE_CTRL_VERSION || hdr->len != (size_t)n - sizeof(*hdr))
		goto err_malformed;
	*nfds = got;
	return (int)hdr->len;

err_malformed:
	fds_close(fds, got);
	return -EPROTO;
}

int
droce_ctrl_call(int sock, uint16_t type, const void *req, uint32_t req_len, const int *fds,
		unsigned int nfds, void *rep, uint32_t rep_len, int *rep_fds, unsigned int *rep_nfds)
{
	static _Atomic uint32_t next_seq;	/* process-wide; 0 is never used */
	uint8_t body[DROCE_CTRL_MAX_BODY];
	int got[DROCE_CTRL_MAX_FDS];
	unsigned int ngot = 0, i;
	struct droce_ctrl_hdr hdr;
	uint32_t seq;
	int ret;

	if (rep_fds != NULL)
		for (i = 0; i < DROCE_CTRL_MAX_FDS; i++)
			rep_fds[i] = -1;
	if (rep_nfds != NULL)
		*rep_nfds = 0;
	if (rep_len > DROCE_CTRL_MAX_BODY || (rep_len > 0 && rep == NULL))
		return EINVAL;

	do	/* relaxed: only uniqueness matters */
		seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed) + 1;
	while (seq == 0);

	ret = droce_ctrl_send(sock, type, seq, 0, req, req_len, fds, nfds);
	if (ret < 0)
		return -ret;
	ret = droce_ctrl_recv(sock, &hdr, body, got, &ngot);
	if (ret < 0)
		return -ret;

	if (hdr.type != type || hdr.seq != seq || hdr.status < 0) {
		ret = EPROTO;		/* not an answer to this request */
		goto err_close;
	}
	if (hdr.status > 0) {
		ret = hdr.status;	/* the daemon's answer: no body, no fds */
		goto err_close;
	}
	if (hdr.len != rep_len) {
		ret = EPROTO;
		goto err_close;
	}

	if (rep_len > 0)
		memcpy(rep, body, rep_len);
	if (rep_fds == NULL) {
		fds_close(got, ngot);
		return 0;
	}
	for (i = 0; i < ngot; i++)
		rep_fds[i] = got[i];
	if (rep_nfds != NULL)
		*rep_nfds = ngot;
	return 0;

err_close:
	fds_close(got, ngot);
	return ret;
}
