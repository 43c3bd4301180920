/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma-core's contracts, kept by the shim when no daemon answers. Linked
 * against the system's libibverbs like any application, and run through
 * droce-run so the shim is what it gets (checked first, with dladdr).
 *
 *  - ibv_get_device_list() with no daemon, with a socket path that is not a
 *    socket, with a daemon that never answers (the probe times out) and one
 *    that answers garbage: an empty, NULL-terminated list, *num = 0, errno
 *    untouched; ibv_free_device_list() takes it back.
 *  - both symbol versions resolve and behave (dlvsym IBVERBS_1.0 / 1.1).
 *  - string helpers, rate conversions, fork and sysfs helpers answer what
 *    rdma-core answers.
 *
 * Exit 0 on success, 1 with a message per failed check.
 */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* exported by libibverbs, declared only in rdma-core's private driver.h */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			failures++;					\
		}							\
	} while (0)

static void
expect_no_device(const char *what)
{
	struct ibv_device **list;
	int num = -1;

	errno = EDOM;	/* rdma-core leaves errno alone when it finds nothing */
	list = ibv_get_device_list(&num);
	CHECK(list != NULL, "%s: NULL list (errno %d)", what, errno);
	CHECK(num == 0, "%s: %d devices", what, num);
	CHECK(errno == EDOM, "%s: errno changed to %d", what, errno);
	if (list != NULL) {
		CHECK(list[0] == NULL, "%s: list not empty", what);
		ibv_free_device_list(list);
	}
	list = ibv_get_device_list(NULL);	/* num is optional */
	CHECK(list != NULL && list[0] == NULL, "%s: without num", what);
	if (list != NULL)
		ibv_free_device_list(list);
}

struct fake_daemon {
	int lfd;
	const void *reply;	/* NULL: never answer */
	size_t reply_len;
	char path[108];
};

static void *
fake_daemon_run(void *arg)
{
	struct fake_daemon *d = arg;
	char buf[4096];
	int c;

	while ((c = accept(d->lfd, NULL, NULL)) >= 0) {
		if (recv(c, buf, sizeof(buf), 0) > 0 && d->reply != NULL)
			(void)send(c, d->reply, d->reply_len, MSG_NOSIGNAL);
		if (d->reply == NULL)
			sleep(5);	/* longer than the shim waits */
		close(c);
	}
	return NULL;
}

static int
fake_daemon_start(struct fake_daemon *d, pthread_t *t)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(d->path, sizeof(d->path), "/tmp/droce-contracts-%d-%p.sock", (int)getpid(),
		 (void *)d);
	unlink(d->path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->path);
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (d->lfd < 0 || bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(d->lfd, 8) != 0)
		return -1;
	return pthread_create(t, NULL, fake_daemon_run, d);
}

static void
fake_daemon_stop(struct fake_daemon *d, pthread_t t)
{
	shutdown(d->lfd, SHUT_RDWR);
	close(d->lfd);
	pthread_cancel(t);
	pthread_join(t, NULL);
	unlink(d->path);
}

static void
test_device_list(void)
{
	static const char garbage[3] = { 1, 2, 3 };
	struct fake_daemon mute = { .reply = NULL }, liar = { .reply = garbage,
							       .reply_len = sizeof(garbage) };
	struct timespec t0, t1;
	pthread_t tm, tl;
	char path[64];
	FILE *f;

	setenv("DROCE_SOCKET", "/nonexistent/droce.sock", 1);
	expect_no_device("no socket");

	snprintf(path, sizeof(path), "/tmp/droce-contracts-%d.file", (int)getpid());
	f = fopen(path, "w");
	if (f != NULL)
		fclose(f);
	setenv("DROCE_SOCKET", path, 1);
	expect_no_device("not a socket");
	unlink(path);

	if (fake_daemon_start(&mute, &tm) == 0) {
		setenv("DROCE_SOCKET", mute.path, 1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		expect_no_device("daemon that never answers");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* bounded by the shim's 10 s probe timeout, not forever */
		CHECK(t1.tv_sec - t0.tv_sec < 20, "the probe waited %ld s",
		      (long)(t1.tv_sec - t0.tv_sec));
		fake_daemon_stop(&mute, tm);
	} else {
		CHECK(0, "cannot start the mute daemon: %s", strerror(errno));
	}
	if (fake_daemon_start(&liar, &tl) == 0) {
		setenv("DROCE_SOCKET", liar.path, 1);
		expect_no_device("daemon answering garbage");
		fake_daemon_stop(&liar, tl);
	} else {
		CHECK(0, "cannot start the garbage daemon: %s", strerror(errno));
	}
	setenv("DROCE_SOCKET", "/nonexistent/droce.sock", 1);
}

/* Both versions of a twice-versioned symbol resolve, and the old one is harmless. */
static void
test_symbol_versions(void)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	void **(*list_1_0)(int *);
	void (*free_1_0)(void **);
	struct ibv_device **(*list_1_1)(int *);
	void **l;
	int num = -1;

	CHECK(h != NULL, "dlopen: %s", dlerror());
	if (h == NULL)
		return;
	*(void **)&list_1_0 = dlvsym(h, "ibv_get_device_list", "IBVERBS_1.0");
	*(void **)&free_1_0 = dlvsym(h, "ibv_free_device_list", "IBVERBS_1.0");
	*(void **)&list_1_1 = dlvsym(h, "ibv_get_device_list", "IBVERBS_1.1");
	CHECK(list_1_0 != NULL && free_1_0 != NULL, "IBVERBS_1.0 symbols missing");
	CHECK(list_1_1 != NULL, "IBVERBS_1.1 symbol missing");
	CHECK((void *)list_1_0 != (void *)list_1_1, "1.0 and 1.1 are the same function");
	if (list_1_0 != NULL && free_1_0 != NULL) {
		l = list_1_0(&num);
		CHECK(l != NULL && l[0] == NULL && num == 0, "1.0 list not empty");
		free_1_0(l);
	}
	CHECK(dlvsym(h, "ibv_register_driver", "IBVERBS_1.1") != NULL, "ibv_register_driver");
	CHECK(dlvsym(h, "ibv_query_gid_type", "IBVERBS_PRIVATE_34") != NULL,
	      "ibv_query_gid_type@IBVERBS_PRIVATE_34");
	CHECK(dlsym(h, "shim_poll_cq") == NULL && dlsym(h, "droce_ctrl_call") == NULL,
	      "internal symbols are exported");
	dlclose(h);
}

static void
test_helpers(void)
{
	char buf[16];

	CHECK(strcmp(ibv_wc_status_str(IBV_WC_SUCCESS), "success") == 0, "wc success");
	CHECK(strcmp(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error") == 0,
	      "wc flush");
	CHECK(strcmp(ibv_wc_status_str((enum ibv_wc_status)999), "unknown") == 0, "wc unknown");
	CHECK(strcmp(ibv_event_type_str(IBV_EVENT_DEVICE_FATAL), "local catastrophic error") == 0,
	      "event");
	CHECK(strcmp(ibv_event_type_str((enum ibv_event_type)999), "unknown") == 0, "event 999");
	CHECK(strcmp(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter") == 0, "node");
	CHECK(strcmp(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown") == 0, "node unknown");
	CHECK(strcmp(ibv_port_state_str(IBV_PORT_ACTIVE), "active") == 0, "port state");
	CHECK(ibv_rate_to_mult(IBV_RATE_10_GBPS) == 4, "rate_to_mult");
	CHECK(ibv_rate_to_mult(IBV_RATE_14_GBPS) == -1, "rate_to_mult 14");
	CHECK(mult_to_ibv_rate(4) == IBV_RATE_10_GBPS, "mult_to_rate");
	CHECK(mult_to_ibv_rate(3) == IBV_RATE_MAX, "mult_to_rate 3");
	CHECK(ibv_rate_to_mbps(IBV_RATE_100_GBPS) == 103125, "rate_to_mbps");
	CHECK(mbps_to_ibv_rate(25781) == IBV_RATE_25_GBPS, "mbps_to_rate");
	CHECK(mbps_to_ibv_rate(1) == IBV_RATE_MAX, "mbps_to_rate 1");
	CHECK(ibv_fork_init() == 0, "fork_init");
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED, "is_fork_initialized");
	CHECK(ibv_dontfork_range(buf, sizeof(buf)) == 0, "dontfork_range");
	CHECK(ibv_dofork_range(buf, sizeof(buf)) == 0, "dofork_range");
	CHECK(ibv_read_sysfs_file("/nonexistent", "x", buf, sizeof(buf)) == -1, "sysfs");
}

int
main(void)
{
	const char *want = getenv("DROCE_SHIM_DIR");
	Dl_info info;

	/* the right library, or every other check is meaningless */
	if (dladdr((void *)ibv_wc_status_str, &info) == 0 || info.dli_fname == NULL) {
		fprintf(stderr, "FAIL: dladdr\n");
		return 1;
	}
	if (want != NULL && strncmp(info.dli_fname, want, strlen(want)) != 0) {
		fprintf(stderr, "FAIL: libibverbs is %s, not the shim in %s\n", info.dli_fname,
			want);
		return 1;
	}
	test_device_list();
	test_symbol_versions();
	test_helpers();
	if (failures == 0)
		printf("all contract checks passed (%s)\n", info.dli_fname);
	return failures == 0 ? 0 : 1;
}
