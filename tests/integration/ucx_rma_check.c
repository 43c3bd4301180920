/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * UCP puts and gets with every byte checked (ucx_perftest checks none):
 * tests/integration/ucx.sh runs it with UCX_IB_REG_METHODS=odp, where UCX
 * 1.13 reaches both buffers through its implicit on-demand paging region.
 *   ucx_rma_check server PORT
 *   ucx_rma_check client SERVER_IPV4 PORT
 * The server maps a buffer (ucp_mem_map) and hands its worker address, the
 * packed rkey and the buffer's address over TCP; the client puts a pattern
 * into the first half at a few sizes and offsets, the server checks it, and
 * the client gets the second half, which the server filled, and checks it.
 * Prints ok/FAIL lines; exits 1 on any failure. ucp_cleanup() is not
 * called: UCX 1.13.1's teardown of the implicit ODP region may crash
 * (doc/user-guide.md, UCX), and the checks are done by then.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#define BUF_BYTES	(1u << 20)
#define HALF		(BUF_BYTES / 2)

static const struct { size_t off, len; } pieces[] = {
	{ 0, 8 }, { 4093, 4097 }, { 65536, HALF - 65536 },
};

static int fails;

static void
check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	fails += !ok;
}

static uint8_t
pattern(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 31 + seed + (i >> 12));
}

static int
io_all(int fd, void *p, size_t len, int send_it)
{
	uint8_t *b = p;

	while (len > 0) {
		ssize_t n = send_it ? send(fd, b, len, MSG_NOSIGNAL) : recv(fd, b, len, 0);

		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Progress @p w until @p fd is readable (the peer's next message). */
static void
progress_until_readable(ucp_worker_h w, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, 0) == 0)
		ucp_worker_progress(w);
}

/* Wait for a request of ucp_*_nbx: UCS_OK or its error. */
static ucs_status_t
wait_req(ucp_worker_h w, void *req)
{
	ucs_status_t st;

	if (req == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
		ucp_worker_progress(w);
	ucp_request_free(req);
	return st;
}

static int
serve(ucp_context_h ctx, ucp_worker_h w, int port)
{
	ucp_mem_map_params_t mp = { 0 };
	ucp_address_t *addr;
	size_t addr_len, rkey_len, i, k;
	void *rkey_buf;
	ucp_mem_h memh;
	uint8_t *buf = aligned_alloc(4096, BUF_BYTES), msg;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0), fd, bad = 0;
	uint64_t hdr[3];

	if (buf == NULL || ls < 0)
		return 2;
	memset(buf, 0, HALF);
	for (i = HALF; i < BUF_BYTES; i++)
		buf[i] = pattern(i, 7);
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mp.address = buf;
	mp.length = BUF_BYTES;
	if (ucp_mem_map(ctx, &mp, &memh) != UCS_OK ||
	    ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len) != UCS_OK ||
	    ucp_worker_get_address(w, &addr, &addr_len) != UCS_OK)
		return 2;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0)
		return 2;
	printf("server: listening on port %d\n", port);
	fflush(stdout);
	fd = accept(ls, NULL, NULL);
	hdr[0] = addr_len;
	hdr[1] = rkey_len;
	hdr[2] = (uintptr_t)buf;
	if (fd < 0 || io_all(fd, hdr, sizeof(hdr), 1) || io_all(fd, addr, addr_len, 1) ||
	    io_all(fd, rkey_buf, rkey_len, 1))
		return 2;
	/* the client's puts are done (flushed) when it says so */
	progress_until_readable(w, fd);
	if (io_all(fd, &msg, 1, 0))
		return 2;
	for (k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++)
		for (i = 0; i < pieces[k].len; i++)
			bad += buf[pieces[k].off + i] != pattern(pieces[k].off + i, (unsigned int)k);
	check(bad == 0, "server: every byte the client put is there");
	msg = bad == 0;
	if (io_all(fd, &msg, 1, 1))
		return 2;
	/* the client's gets are done when it closes */
	progress_until_readable(w, fd);
	close(fd);
	close(ls);
	ucp_worker_release_address(w, addr);
	ucp_rkey_buffer_release(rkey_buf);
	ucp_mem_unmap(ctx, memh);
	return fails != 0;
}

static int
drive(ucp_worker_h w, const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	ucp_ep_params_t ep_params = { 0 };
	ucp_request_param_t rp = { 0 };
	uint8_t *buf = aligned_alloc(4096, BUF_BYTES), *addr, *rkey_buf, msg = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), bad = 0;
	uint64_t hdr[3], remote;
	ucp_rkey_h rkey;
	ucp_ep_h ep;
	size_t i, k;
	char what[128];

	if (buf == NULL || fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || io_all(fd, hdr, sizeof(hdr), 0))
		return 2;
	addr = malloc(hdr[0]);
	rkey_buf = malloc(hdr[1]);
	remote = hdr[2];
	if (addr == NULL || rkey_buf == NULL || io_all(fd, addr, hdr[0], 0) ||
	    io_all(fd, rkey_buf, hdr[1], 0))
		return 2;
	ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
	ep_params.address = (ucp_address_t *)addr;
	if (ucp_ep_create(w, &ep_params, &ep) != UCS_OK ||
	    ucp_ep_rkey_unpack(ep, rkey_buf, &rkey) != UCS_OK)
		return 2;
	for (k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		for (i = 0; i < pieces[k].len; i++)
			buf[pieces[k].off + i] = pattern(pieces[k].off + i, (unsigned int)k);
		snprintf(what, sizeof(what), "client: ucp_put_nbx of %zu bytes at offset %zu",
			 pieces[k].len, pieces[k].off);
		check(wait_req(w, ucp_put_nbx(ep, buf + pieces[k].off, pieces[k].len,
					      remote + pieces[k].off, rkey, &rp)) == UCS_OK, what);
	}
	check(wait_req(w, ucp_ep_flush_nbx(ep, &rp)) == UCS_OK, "client: ucp_ep_flush_nbx");
	if (io_all(fd, &msg, 1, 1) || io_all(fd, &msg, 1, 0))
		return 2;
	check(msg == 1, "client: the server found every byte put");
	memset(buf + HALF, 0, HALF);
	for (k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		size_t off = HALF + pieces[k].off;

		snprintf(what, sizeof(what), "client: ucp_get_nbx of %zu bytes at offset %zu",
			 pieces[k].len, off);
		check(wait_req(w, ucp_get_nbx(ep, buf + off, pieces[k].len, remote + off, rkey,
					      &rp)) == UCS_OK, what);
		for (i = 0; i < pieces[k].len; i++)
			bad += buf[off + i] != pattern(off + i, 7);
	}
	check(bad == 0, "client: every byte got is the server's");
	ucp_rkey_destroy(rkey);
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
	(void)wait_req(w, ucp_ep_close_nbx(ep, &rp));
	close(fd);
	return fails != 0;
}

int
main(int argc, char **argv)
{
	ucp_params_t params = { 0 };
	ucp_worker_params_t wp = { 0 };
	ucp_context_h ctx;
	ucp_worker_h w;
	int ret;

	if (argc < 3 || (strcmp(argv[1], "server") != 0 &&
			 (strcmp(argv[1], "client") != 0 || argc < 4))) {
		fprintf(stderr, "usage: %s server PORT | client SERVER_IPV4 PORT\n", argv[0]);
		return 2;
	}
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_RMA;
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if (ucp_init(&params, NULL, &ctx) != UCS_OK || ucp_worker_create(ctx, &wp, &w) != UCS_OK) {
		fprintf(stderr, "FAIL setup: ucp_init\n");
		return 2;
	}
	ret = strcmp(argv[1], "server") == 0 ? serve(ctx, w, atoi(argv[2])) :
					       drive(w, argv[2], atoi(argv[3]));
	if (ret == 2)
		printf("FAIL setup of the %s\n", argv[1]);
	ucp_worker_destroy(w);
	return ret;
}
