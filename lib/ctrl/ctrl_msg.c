/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Control messages on a SOCK_SEQPACKET socket (droce_ctrl.h): one datagram
 * per message, descriptors in SCM_RIGHTS. libc only; both the shim and
 * droced link it. Receiving never trusts the peer: a header that
 * disagrees with the datagram, truncation, or surplus descriptors make the
 * message malformed (-EPROTO) and every received descriptor is closed.
 */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "droce_core.h"
#include "droce_ctrl.h"

static const char *const type_name[DROCE_CTRL_TYPE_COUNT] = {
	[DROCE_CTRL_NONE] = "NONE",
#define M(sym) [DROCE_CTRL_##sym] = #sym,
	DROCE_CTRL_MSGS(M)
#undef M
};

const char *
droce_ctrl_type_name(uint32_t type)
{
	return type < DROCE_CTRL_TYPE_COUNT ? type_name[type] : "UNKNOWN";
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
	union {
		char buf[CMSG_SPACE(sizeof(int) * DROCE_CTRL_MAX_FDS)];
		struct cmsghdr align;
	} cm;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	ssize_t n;

	if (sizeof(hdr) + len > DROCE_CTRL_MAX_MSG)
		return -EMSGSIZE;
	if (nfds > DROCE_CTRL_MAX_FDS)
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
	return (size_t)n == sizeof(hdr) + len ? 0 : -EPROTO;
}

int
droce_ctrl_recv(int sock, struct droce_ctrl_hdr *hdr, void *buf, int *fds, unsigned int *nfds)
{
	uint8_t data[DROCE_CTRL_MAX_MSG];
	union {
		char buf[CMSG_SPACE(sizeof(int) * (DROCE_CTRL_MAX_FDS + 4))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cm.buf,
		.msg_controllen = sizeof(cm.buf),
	};
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
	if (n == 0)
		return -ECONNRESET;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		unsigned int k, cnt;
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (unsigned int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (k = 0; k < cnt; k++) {
			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (got < DROCE_CTRL_MAX_FDS) {
				fds[got++] = fd;
			} else {
				close(fd);	/* more than the protocol allows */
				bad = true;
			}
		}
	}
	*nfds = got;
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || bad || (size_t)n < sizeof(*hdr))
		goto malformed;
	memcpy(hdr, data, sizeof(*hdr));
	if (hdr->version != DROCE_CTRL_VERSION || hdr->len != (size_t)n - sizeof(*hdr))
		goto malformed;
	memcpy(buf, data + sizeof(*hdr), hdr->len);
	return (int)hdr->len;

malformed:
	for (i = 0; i < got; i++) {
		close(fds[i]);
		fds[i] = -1;
	}
	*nfds = 0;
	return -EPROTO;
}

int
droce_ctrl_call(int sock, uint16_t type, const void *req, uint32_t req_len, const int *fds,
		unsigned int nfds, void *rep, uint32_t rep_len, int *rep_fds, unsigned int *rep_nfds)
{
	static _Atomic uint32_t next_seq;
	uint8_t buf[DROCE_CTRL_MAX_MSG];
	int tmp_fds[DROCE_CTRL_MAX_FDS];
	unsigned int tmp_n = 0, i;
	struct droce_ctrl_hdr hdr;
	uint32_t seq = ++next_seq;
	int ret;

	ret = droce_ctrl_send(sock, type, seq, 0, req, req_len, fds, nfds);
	if (ret < 0)
		return ret == -EMSGSIZE ? EMSGSIZE : EPIPE;
	ret = droce_ctrl_recv(sock, &hdr, buf, rep_fds ? rep_fds : tmp_fds,
			      rep_nfds ? rep_nfds : &tmp_n);
	if (ret < 0)
		return ret == -EPROTO ? EPROTO : EPIPE;
	if (rep_fds == NULL)
		for (i = 0; i < tmp_n; i++)
			close(tmp_fds[i]);
	if (hdr.type != type || hdr.seq != seq)
		return EPROTO;
	if (hdr.status != 0)
		return hdr.status > 0 ? hdr.status : EPROTO;
	if (hdr.len != rep_len)
		return EPROTO;
	if (rep_len > 0)
		memcpy(rep, buf, rep_len);
	return 0;
}
