/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_TCP_RENDEZVOUS_H
#define DROCE_TEST_TCP_RENDEZVOUS_H

/*
 * The TCP connection over which the two sides of a test program (libibverbs
 * only, no droce code: the same binary runs in the Soft-RoCE guest) trade
 * QP numbers, keys and verdicts. Both set TCP_NODELAY: the exchanges are
 * small request/answer steps. @return the socket, or -1 with errno set.
 */

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

/* The server may still be starting (slowly, under emulation): try every 200 ms for 60 s. */
static inline int
tcp_rendezvous_connect(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	char service[16];
	int fd, tries, one = 1;

	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &ai) != 0) {
		errno = EHOSTUNREACH;
		return -1;
	}
	for (tries = 0; tries < 300; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			break;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			freeaddrinfo(ai);
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		usleep(200000);
	}
	freeaddrinfo(ai);
	return -1;
}

/* Listen on @port (any address) for the one peer. */
static inline int
tcp_rendezvous_accept(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 1)) {
		close(lfd);
		return -1;
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

#endif /* DROCE_TEST_TCP_RENDEZVOUS_H */
