/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_getaddrinfo over the resolver: on RoCE an RDMA address is an IP
 * address, so the node and service are looked up with getaddrinfo() and
 * become the destination (or, with RAI_PASSIVE, the source) of one result
 * per address, with the hints' port space and QP type (RDMA_PS_TCP and RC
 * by default) and the hints' source address copied for an active result.
 * With neither node nor service, as rdma-core, the one result is made of
 * the hints themselves: their flags, family, port space, QP type and
 * addresses (libfabric passes the peer's address that way).
 * No route or connect data: those are InfiniBand's (ai_route_len 0).
 * Returns 0 or, as rdma-core, -1 with errno set.
 */

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_priv.h"

static struct sockaddr *
addr_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *p = malloc(len);

	if (p != NULL)
		memcpy(p, sa, len);
	return p;
}

RDMACM_EXPORT void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res);
		res = next;
	}
}

/* The result of no node and no service: a copy of the hints. */
static int
addrinfo_from_hints(const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return rdmacm_err(ENOMEM);
	r->ai_flags = hints->ai_flags;
	r->ai_family = hints->ai_family;
	r->ai_qp_type = hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	if (hints->ai_src_addr != NULL && hints->ai_src_len > 0) {
		r->ai_src_addr = addr_dup(hints->ai_src_addr, hints->ai_src_len);
		r->ai_src_len = hints->ai_src_len;
	}
	if (hints->ai_dst_addr != NULL && hints->ai_dst_len > 0) {
		r->ai_dst_addr = addr_dup(hints->ai_dst_addr, hints->ai_dst_len);
		r->ai_dst_len = hints->ai_dst_len;
	}
	if ((r->ai_src_len > 0 && r->ai_src_addr == NULL) ||
	    (r->ai_dst_len > 0 && r->ai_dst_addr == NULL)) {
		rdma_freeaddrinfo(r);
		return rdmacm_err(ENOMEM);
	}
	*res = r;
	return 0;
}

RDMACM_EXPORT int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai = NULL, *a;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	bool passive = hints != NULL && (hints->ai_flags & RAI_PASSIVE);
	int ret;

	if (res == NULL || (node == NULL && service == NULL && hints == NULL))
		return rdmacm_err(EINVAL);
	if (node == NULL && service == NULL)
		return addrinfo_from_hints(hints, res);
	if (hints != NULL) {
		h.ai_family = hints->ai_family;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
		if (passive)
			h.ai_flags |= AI_PASSIVE;
	}
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret != 0)
		return rdmacm_err(ret == EAI_SYSTEM ? errno : ENOENT);
	for (a = ai; a != NULL; a = a->ai_next) {
		struct rdma_addrinfo *r;

		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			goto err_nomem;
		*tail = r;
		tail = &r->ai_next;
		r->ai_flags = hints != NULL ? hints->ai_flags : 0;
		r->ai_family = a->ai_family;
		r->ai_qp_type = hints != NULL && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
		r->ai_port_space = hints != NULL && hints->ai_port_space ? hints->ai_port_space :
									     RDMA_PS_TCP;
		if (passive) {
			r->ai_src_addr = addr_dup(a->ai_addr, a->ai_addrlen);
			r->ai_src_len = a->ai_addrlen;
			if (r->ai_src_addr == NULL)
				goto err_nomem;
			continue;
		}
		r->ai_dst_addr = addr_dup(a->ai_addr, a->ai_addrlen);
		r->ai_dst_len = a->ai_addrlen;
		if (r->ai_dst_addr == NULL)
			goto err_nomem;
		if (hints != NULL && hints->ai_src_addr != NULL && hints->ai_src_len > 0) {
			r->ai_src_addr = addr_dup(hints->ai_src_addr, hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
			if (r->ai_src_addr == NULL)
				goto err_nomem;
		}
	}
	freeaddrinfo(ai);
	if (head == NULL)
		return rdmacm_err(ENOENT);
	*res = head;
	return 0;

err_nomem:
	freeaddrinfo(ai);
	rdma_freeaddrinfo(head);
	return rdmacm_err(ENOMEM);
}
