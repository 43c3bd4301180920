/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * test_shim_verbs MOCK_DROCED: the verbs through the shim, against
 * tests/shim/mock_droced (started here on a private socket, so this test
 * can also kill it). Linked against the system's libibverbs like any
 * application and run through droce-run.
 *
 * What it checks, in order:
 *  - the context: verbs_get_ctx() works, no NULL slot in ctx->ops or in
 *    struct verbs_context; queries (device, device_ex, port, GIDs, GID
 *    table, GID type, P_Key);
 *  - registered memory (DESIGN decision 4): malloc, stack, anonymous mmap
 *    and a foreign shared file register with contents and neighbours kept,
 *    the heap keeps working, deregistration gives the pages back; EFAULT,
 *    EINVAL and rereg contracts; fork gives the child a private copy;
 *    memory hooks of the application's (as UCX's and Open MPI's) never
 *    see the shim's remaps;
 *  - the data path in loopback through the mock engine: SEND (SGE and
 *    inline), WRITE with immediate, READ, fetch-and-add, SRQ receives, UD
 *    with an address handle, completion channels and events, the extended
 *    CQ, the ibv_wr_* API (a batch, an aborted batch, a failing batch);
 *  - error contracts: post in RESET, bad opcodes, a full SQ (ENOMEM and
 *    *bad_wr), creation refusals (EOPNOTSUPP, EINVAL);
 *  - the daemon going away: IBV_EVENT_DEVICE_FATAL, destroys still succeed.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

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

#define REQUIRE(cond, ...)						\
	do {								\
		CHECK(cond, __VA_ARGS__);				\
		if (!(cond))						\
			exit(1);					\
	} while (0)

static pid_t mock_pid;
static char sock_path[108];

static void
mock_start(const char *mock)
{
	int i;

	snprintf(sock_path, sizeof(sock_path), "/tmp/droce-shim-verbs-%d.sock", (int)getpid());
	mock_pid = fork();
	REQUIRE(mock_pid >= 0, "fork");
	if (mock_pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGTERM);	/* a crashed test takes the mock along */
		dup2(null, 1);
		execl(mock, mock, sock_path, (char *)NULL);
		_exit(127);
	}
	setenv("DROCE_SOCKET", sock_path, 1);
	for (i = 0; i < 200 && access(sock_path, F_OK) != 0; i++)
		usleep(10000);
	REQUIRE(access(sock_path, F_OK) == 0, "mock_droced did not start");
}

static void
mock_stop(void)
{
	if (mock_pid > 0) {
		kill(mock_pid, SIGTERM);
		waitpid(mock_pid, NULL, 0);
		mock_pid = 0;
	}
}

/*
 * An application's memory hooks (the executable exports these, so they
 * win over libc's for the shim too), mishandling what they do not expect
 * as UCX 1.13's do: its mremap has four parameters, so a move with
 * MREMAP_FIXED loses its target. While armed they count the remapping
 * calls that reach them and refuse an MREMAP_FIXED move. The shim must
 * change the address space past them (lib/shim/shim_mem.c).
 */
static bool hooks_armed;
static int hooked_calls;

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (hooks_armed && (flags & MAP_FIXED))
		hooked_calls++;
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

void *
mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (hooks_armed) {
		hooked_calls++;
		if (flags & MREMAP_FIXED) {
			errno = EINVAL;
			return MAP_FAILED;
		}
	}
	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

/* Is [p, p+len) mapped from the shim's memfd? */
static bool
mapped_from_memfd(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, b = a + len;
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < b && e > a &&
		    strstr(line, "droce-mr") != NULL)
			found = true;
	}
	fclose(f);
	return found;
}

/* ---- the context ---- */

static void
test_context(struct ibv_context *ctx)
{
	struct verbs_context *v = verbs_get_ctx(ctx);
	void **slot;
	size_t i;

	REQUIRE(v != NULL, "verbs_get_ctx");
	CHECK(v->sz >= sizeof(*v), "verbs_context.sz %zu", v->sz);
	for (slot = (void **)&ctx->ops, i = 0; i < sizeof(ctx->ops) / sizeof(void *); i++)
		CHECK(slot[i] != NULL, "ctx->ops slot %zu is NULL", i);
	for (slot = (void **)v, i = 0; i < offsetof(struct verbs_context, _ABI_placeholder3) /
					   sizeof(void *); i++)
		if (&slot[i] != (void **)&v->priv)
			CHECK(slot[i] != NULL, "verbs_context slot %zu is NULL", i);
	CHECK(ctx->async_fd >= 0, "async_fd");
	CHECK(ctx->num_comp_vectors >= 1, "num_comp_vectors");
}

static void
test_queries(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge, tab[8];
	union ibv_gid gid;
	__be16 pkey;

	CHECK(ibv_query_device(ctx, &a) == 0, "query_device");
	CHECK(a.phys_port_cnt == 1 && a.max_qp > 0, "device attr");
	CHECK(ibv_query_device_ex(ctx, NULL, &ax) == 0, "query_device_ex");
	CHECK(ax.orig_attr.max_qp == a.max_qp, "device_ex orig_attr");
	CHECK(ibv_query_port(ctx, 1, &pa) == 0, "query_port");
	CHECK(pa.state == IBV_PORT_ACTIVE && pa.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "port attr");
	CHECK(ibv_query_port(ctx, 7, &pa) == EINVAL, "query_port 7");
	CHECK(ibv_query_gid(ctx, 1, 1, &gid) == 0 && gid.raw[10] == 0xff && gid.raw[12] == 127,
	      "query_gid 1");
	CHECK(ibv_query_gid(ctx, 1, 2, &gid) == 0 && gid.global.interface_id == 0,
	      "empty GID reads as zero");
	CHECK(ibv_query_gid(ctx, 1, 99, &gid) == -1, "query_gid out of range");
	CHECK(ibv_query_gid_ex(ctx, 1, 1, &ge, 0) == 0 && ge.gid_type == IBV_GID_TYPE_ROCE_V2 &&
	      ge.gid_index == 1 && ge.port_num == 1, "query_gid_ex");
	CHECK(ibv_query_gid_ex(ctx, 1, 2, &ge, 0) == ENODATA, "query_gid_ex empty");
	CHECK(ibv_query_gid_ex(ctx, 1, 1, &ge, 1) == EINVAL, "query_gid_ex flags");
	CHECK(ibv_query_gid_table(ctx, tab, 8, 0) == 2, "query_gid_table");
	CHECK(ibv_query_gid_table(ctx, tab, 1, 0) == -EINVAL, "query_gid_table too small");
	CHECK(ibv_query_pkey(ctx, 1, 0, &pkey) == 0 && pkey == htobe16(0xffff), "query_pkey");
	CHECK(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)) == 0, "get_pkey_index");
}

/* ---- registered memory ---- */


/*
 * System V segments: one removed and attached only here is private memory
 * and is moved (UCX's memory pools on hugepages), or where its move cannot
 * be held (no userfaultfd write protection for it) registered unmoved,
 * indirect; one that can still be attached elsewhere is shared memory:
 * registered through its own file.
 */
static void
sysv_segment_one(struct ibv_pd *pd, size_t len, int huge)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600 | huge);
	struct ibv_mr *mr;
	bool moved;
	char *seg;
	size_t i;
	int ret;

	if (id < 0 && huge) {
		printf("note no hugepages reserved: SHM_HUGETLB segment not tried\n");
		return;
	}
	REQUIRE(id >= 0, "shmget: %s", strerror(errno));
	seg = shmat(id, NULL, 0);
	REQUIRE(seg != (void *)-1, "shmat: %s", strerror(errno));
	for (i = 0; i < len; i += 512)
		seg[i] = (char)(i >> 9);
	mr = ibv_reg_mr(pd, seg + 100, 4096, rw);
	CHECK(mr != NULL && !mapped_from_memfd(seg + 100, 1),
	      "System V segment not yet removed: registered in place: %s", strerror(errno));
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg System V in place");
	REQUIRE(shmctl(id, IPC_RMID, NULL) == 0, "IPC_RMID");
	mr = ibv_reg_mr(pd, seg + (huge ? 0 : 100), huge ? len : 4096, rw);
	CHECK(mr != NULL, "reg_mr of a removed System V segment%s: %s", huge ? " (hugetlb)" : "",
	      strerror(errno));
	moved = mapped_from_memfd(seg + 100, 1);
	printf("note removed System V segment%s %s\n", huge ? " (hugetlb)" : "",
	       moved ? "moved" : "registered unmoved (indirect)");
	for (i = 0; i < len && seg[i] == (char)(i % 512 ? 0 : i >> 9); i++)
		;
	CHECK(i == len, "System V segment's contents changed at %zu", i);
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg System V");
	/* what was not moved is still the segment: shmdt detaches it; all moved: EINVAL */
	errno = 0;
	ret = shmdt(seg);
	CHECK(huge && moved ? ret == -1 && errno == EINVAL : ret == 0,
	      "shmdt of a%s segment: %d, errno %d",
	      !moved ? "n unmoved" : huge ? " wholly moved" : " partly moved", ret, errno);
	munmap(seg, len);
}

static void
sysv_segments(struct ibv_pd *pd, size_t pg)
{
	sysv_segment_one(pd, 4 * pg, 0);
	sysv_segment_one(pd, 2u << 20, SHM_HUGETLB);
}

static void
test_memory(struct ibv_pd *pd)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	long pg = sysconf(_SC_PAGESIZE);
	char stackbuf[300];
	struct ibv_mr *mr, *mr2;
	char *heap, *anon, *ro, *around, *p2;
	int i, fd, status;
	pid_t child;

	/* malloc: contents and the neighbours on the same pages survive */
	around = malloc(64);
	heap = malloc(10000);
	p2 = malloc(64);
	REQUIRE(around != NULL && heap != NULL && p2 != NULL, "malloc");
	memset(around, 'a', 64);
	memset(p2, 'b', 64);
	for (i = 0; i < 10000; i++)
		heap[i] = (char)i;
	mr = ibv_reg_mr(pd, heap, 10000, rw);
	REQUIRE(mr != NULL, "reg_mr malloc: %s", strerror(errno));
	CHECK(mr->addr == heap && mr->length == 10000 && mr->pd == pd, "mr fields");
	CHECK(mapped_from_memfd(heap, 10000), "malloc'd pages not on the memfd");
	for (i = 0; i < 10000; i++)
		if (heap[i] != (char)i)
			break;
	CHECK(i == 10000, "contents changed at %d", i);
	CHECK(around[0] == 'a' && around[63] == 'a' && p2[0] == 'b', "neighbours changed");
	free(malloc(100000));	/* the heap keeps working */

	/* overlapping registration reuses the pages; deregistering one keeps the other */
	mr2 = ibv_reg_mr(pd, heap + 100, 500, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr2 != NULL, "overlapping reg_mr: %s", strerror(errno));

	/* fork: the child's writes stay in the child */
	child = fork();
	if (child == 0) {
		heap[0] = 'X';
		_exit(heap[0] == 'X' ? 0 : 1);
	}
	CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "child");
	CHECK(heap[0] == 0, "the child's write reached the parent");

	CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr");
	CHECK(mapped_from_memfd(heap + 100, 500), "still registered by mr2");
	CHECK(mr2 == NULL || ibv_dereg_mr(mr2) == 0, "dereg_mr 2");
	CHECK(!mapped_from_memfd(heap, 10000), "pages not given back after dereg");
	for (i = 0; i < 10000; i++)
		if (heap[i] != (char)i)
			break;
	CHECK(i == 10000, "contents changed after dereg at %d", i);
	free(heap);
	free(around);
	free(p2);

	/* memory hooks that mishandle what they do not expect see none of it */
	heap = malloc(3 * pg);
	REQUIRE(heap != NULL, "malloc");
	for (i = 0; i < 3 * pg; i++)
		heap[i] = (char)(i * 3);
	hooks_armed = true;
	mr = ibv_reg_mr(pd, heap + 1, 2 * pg, rw);
	CHECK(mr != NULL, "reg_mr under hooks: %s", strerror(errno));
	CHECK(mapped_from_memfd(heap + 1, 2 * pg), "not moved under hooks");
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg_mr under hooks");
	CHECK(!mapped_from_memfd(heap + 1, 2 * pg), "not given back under hooks");
	hooks_armed = false;
	CHECK(hooked_calls == 0, "%d remapping calls went through the application's hooks",
	      hooked_calls);
	for (i = 0; i < 3 * pg; i++)
		if (heap[i] != (char)(i * 3))
			break;
	CHECK(i == 3 * pg, "contents changed under hooks at %d", i);
	free(heap);

	/* the stack, our own frame's page included */
	memset(stackbuf, 's', sizeof(stackbuf));
	mr = ibv_reg_mr(pd, stackbuf, sizeof(stackbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "reg_mr stack: %s", strerror(errno));
	CHECK(stackbuf[0] == 's' && stackbuf[299] == 's', "stack contents");
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg stack");

	/* anonymous mmap, never touched */
	anon = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(anon != MAP_FAILED, "mmap");
	mr = ibv_reg_mr(pd, anon, 1 << 20, rw);
	CHECK(mr != NULL, "reg_mr mmap: %s", strerror(errno));
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg mmap");
	munmap(anon, 1 << 20);

	/* a shared mapping of the application's own unsealed memfd: by its own fd */
	fd = memfd_create("app-unsealed", 0);
	REQUIRE(fd >= 0 && ftruncate(fd, 4 * pg) == 0, "memfd");
	anon = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	REQUIRE(anon != MAP_FAILED, "mmap shared");
	mr = ibv_reg_mr(pd, anon, pg, rw);
	CHECK(mr != NULL && !mapped_from_memfd(anon, 1), "unsealed shared file: %s",
	      strerror(errno));
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg unsealed shared file");
	munmap(anon, 4 * pg);
	close(fd);

	/* ... and of one sealed against shrinking: registered by its own fd */
	fd = memfd_create("app-shared", MFD_ALLOW_SEALING);
	REQUIRE(fd >= 0 && ftruncate(fd, 4 * pg) == 0 &&
		fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0, "memfd");
	anon = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	REQUIRE(anon != MAP_FAILED, "mmap shared");
	mr = ibv_reg_mr(pd, anon + 10, 3 * pg, rw);
	CHECK(mr != NULL, "reg_mr shared file: %s", strerror(errno));
	CHECK(!mapped_from_memfd(anon, 4 * pg), "shared mapping was moved");
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg shared");
	munmap(anon, 4 * pg);
	close(fd);

	sysv_segments(pd, pg);

	/* contracts */
	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(ro != MAP_FAILED, "mmap ro");
	errno = 0;
	CHECK(ibv_reg_mr(pd, ro, pg, IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EFAULT,
	      "writable reg of read-only memory: errno %d", errno);
	mr = ibv_reg_mr(pd, ro, pg, IBV_ACCESS_REMOTE_READ);
	CHECK(mr != NULL, "read-only reg of read-only memory: %s", strerror(errno));
	CHECK(mr == NULL || ibv_dereg_mr(mr) == 0, "dereg ro");
	munmap(ro, pg);
	errno = 0;
	CHECK(ibv_reg_mr(pd, ro, pg, 0) == NULL && errno == EFAULT, "unmapped: errno %d", errno);
	errno = 0;
	CHECK(ibv_reg_mr(pd, stackbuf, 8, IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL,
	      "remote write without local write: errno %d", errno);
	errno = 0;
	CHECK(ibv_reg_mr(pd, stackbuf, 0, 0) == NULL && errno == EINVAL, "length 0");

	/* rereg: access only; bad flags */
	heap = malloc(4096);
	mr = ibv_reg_mr(pd, heap, 4096, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr != NULL, "reg_mr for rereg");
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, rw) == 0, "rereg access");
	CHECK(ibv_rereg_mr(mr, 0x80, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT, "rereg flags");
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, rw) == IBV_REREG_MR_ERR_INPUT,
	      "rereg access without CHANGE_ACCESS");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg rereg'd");
	free(heap);
}

/* ---- the data path ---- */

struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
};

static int
qp_connect(struct ibv_qp *qp, uint32_t dest, enum ibv_qp_type type)
{
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.qkey = 0x11111111,
	};
	int ret;

	ret = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (ret)
		return ret;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = dest;
	at.ah_attr.is_global = 1;
	at.ah_attr.grh.sgid_index = 1;
	at.ah_attr.port_num = 1;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 12;
	ret = ibv_modify_qp(qp, &at, type == IBV_QPT_UD ? IBV_QP_STATE :
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | (type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC |
					     IBV_QP_MIN_RNR_TIMER : 0));
	if (ret)
		return ret;
	at.qp_state = IBV_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &at, type == IBV_QPT_UD ? IBV_QP_STATE | IBV_QP_SQ_PSN :
			     IBV_QP_STATE | IBV_QP_SQ_PSN | (type == IBV_QPT_RC ?
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

/* Poll until @p n completions or a timeout; @return how many. */
static int
poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0, i, r;

	for (i = 0; i < 5000 && got < n; i++) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got < n)
			usleep(1000);
	}
	return got;
}

static void
test_rc(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_send_wr swr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge, rsge;
	struct ibv_wc wc[32];
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	char *buf;
	uint64_t *counter, fetched;
	int i, n;

	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	REQUIRE(cq != NULL, "create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = cq;
	a = ibv_create_qp(pd, &ia);
	REQUIRE(a != NULL, "create_qp: %s", strerror(errno));
	CHECK(ia.cap.max_send_wr >= 16 && ia.cap.max_inline_data >= 64,
	      "granted caps written back");
	b = ibv_create_qp(pd, &ia);
	REQUIRE(b != NULL, "create_qp b");
	CHECK(ibv_qp_to_qp_ex(a) == NULL, "qp_ex without send_ops_flags");

	buf = aligned_alloc(4096, 8192);
	REQUIRE(buf != NULL, "alloc");
	memset(buf, 0, 8192);
	mr = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	REQUIRE(mr != NULL, "reg_mr");

	/* RESET: no sends */
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	bad = NULL;
	CHECK(ibv_post_send(a, &swr, &bad) == EINVAL && bad == &swr, "post_send in RESET");

	REQUIRE(qp_connect(a, b->qp_num, IBV_QPT_RC) == 0, "connect a");
	REQUIRE(qp_connect(b, a->qp_num, IBV_QPT_RC) == 0, "connect b");
	CHECK(a->state == IBV_QPS_RTS, "qp->state follows modify_qp");

	/* SEND with an SGE, then inline */
	strcpy(buf, "hello through the shim");
	rsge = (struct ibv_sge){ .addr = (uintptr_t)buf + 4096, .length = 256, .lkey = mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 100, .sg_list = &rsge, .num_sge = 1 };
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0, "post_recv");
	rwr.wr_id = 101;
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0, "post_recv 2");
	sge.length = 23;
	CHECK(ibv_post_send(a, &swr, &bad) == 0, "post_send");
	n = poll_n(cq, wc, 2);
	CHECK(n == 2, "completions: %d", n);
	for (i = 0; i < n; i++) {
		CHECK(wc[i].status == IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc[i].status));
		if (wc[i].opcode == IBV_WC_RECV)
			CHECK(wc[i].wr_id == 100 && wc[i].byte_len == 23 &&
			      wc[i].qp_num == b->qp_num, "recv wc");
		else
			CHECK(wc[i].opcode == IBV_WC_SEND && wc[i].wr_id == 1, "send wc");
	}
	CHECK(strcmp(buf + 4096, "hello through the shim") == 0, "received '%s'", buf + 4096);

	swr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	strcpy(buf, "inline!");
	sge.length = 8;
	CHECK(ibv_post_send(a, &swr, &bad) == 0, "post_send inline");
	buf[0] = 'X';	/* inline: the buffer is ours again at once */
	n = poll_n(cq, wc, 2);
	CHECK(n == 2 && strcmp(buf + 4096, "inline!") == 0, "inline send: '%s'", buf + 4096);
	sge.length = 65;
	CHECK(ibv_post_send(a, &swr, &bad) == EINVAL && bad == &swr, "inline too long");

	/* WRITE with immediate */
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0, "post_recv");
	strcpy(buf, "written");
	sge.length = 8;
	swr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.imm_data = htobe32(0xabcd);
	swr.wr.rdma.remote_addr = (uintptr_t)buf + 6000;
	swr.wr.rdma.rkey = mr->rkey;
	CHECK(ibv_post_send(a, &swr, &bad) == 0, "post write_imm");
	n = poll_n(cq, wc, 2);
	CHECK(n == 2 && strcmp(buf + 6000, "written") == 0, "write_imm landed");
	for (i = 0; i < n; i++)
		if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM)
			CHECK((wc[i].wc_flags & IBV_WC_WITH_IMM) &&
			      wc[i].imm_data == htobe32(0xabcd), "imm");

	/* READ and fetch-and-add */
	strcpy(buf + 7000, "read me");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf + 100, .length = 8, .lkey = mr->lkey };
	swr.opcode = IBV_WR_RDMA_READ;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + 7000;
	CHECK(ibv_post_send(a, &swr, &bad) == 0, "post read");
	CHECK(poll_n(cq, wc, 1) == 1 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RDMA_READ && strcmp(buf + 100, "read me") == 0, "read");
	counter = (uint64_t *)(buf + 7168);
	*counter = 40;
	swr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	swr.wr.atomic.remote_addr = (uintptr_t)counter;
	swr.wr.atomic.rkey = mr->rkey;
	swr.wr.atomic.compare_add = 2;
	CHECK(ibv_post_send(a, &swr, &bad) == 0, "post fetch_add");
	n = poll_n(cq, wc, 1);
	memcpy(&fetched, buf + 100, sizeof(fetched));	/* not 8-byte aligned */
	CHECK(n == 1 && wc[0].opcode == IBV_WC_FETCH_ADD && *counter == 42 && fetched == 40,
	      "fetch_add");

	/* bad opcode, bad SGE count */
	swr.opcode = IBV_WR_TSO;
	CHECK(ibv_post_send(a, &swr, &bad) == EINVAL, "TSO on RC");
	swr.opcode = IBV_WR_SEND;
	swr.num_sge = 3;
	CHECK(ibv_post_send(a, &swr, &bad) == EINVAL, "3 SGEs with max_send_sge 2");
	swr.num_sge = 1;

	/* a full SQ: the peer posts no receive, so SENDs wait and pile up */
	{
		struct ibv_send_wr many[64];

		for (i = 0; i < 64; i++) {
			many[i] = swr;
			many[i].wr_id = 1000 + i;
			many[i].send_flags = 0;
			many[i].next = i < 63 ? &many[i + 1] : NULL;
		}
		bad = NULL;
		CHECK(ibv_post_send(a, many, &bad) == ENOMEM && bad != NULL && bad != many,
		      "full SQ: ENOMEM and bad_wr inside the list");
	}
	CHECK(ibv_poll_cq(cq, 1, wc) == 0, "nothing completed");
	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0, "destroy_qp");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg");
	free(buf);
}

static void
test_events_and_srq(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_send_sge = 1 }, .qp_type = IBV_QPT_RC,
	};
	struct ibv_srq_attr sa;
	struct ibv_send_wr swr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	struct ibv_wc wc[4];
	struct ibv_mr *mr;
	void *ev_ctx;
	char *buf;
	int n;

	REQUIRE(ch != NULL, "create_comp_channel");
	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	REQUIRE(cq != NULL, "create_cq with channel");
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY, "channel in use");
	srq = ibv_create_srq(pd, &sia);
	REQUIRE(srq != NULL, "create_srq: %s", strerror(errno));
	CHECK(sia.attr.max_wr >= 8, "granted SRQ size written back");
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr >= 8, "query_srq");
	sa.srq_limit = 2;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0, "modify_srq");
	ia.send_cq = ia.recv_cq = cq;
	ia.srq = srq;
	a = ibv_create_qp(pd, &ia);
	b = ibv_create_qp(pd, &ia);
	REQUIRE(a != NULL && b != NULL, "create_qp with SRQ");
	REQUIRE(qp_connect(a, b->qp_num, IBV_QPT_RC) == 0 &&
		qp_connect(b, a->qp_num, IBV_QPT_RC) == 0, "connect");
	buf = malloc(256);
	mr = ibv_reg_mr(pd, buf, 256, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr != NULL, "reg");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	CHECK(ibv_post_recv(b, &rwr, &rbad) == EINVAL && rbad == &rwr, "post_recv on SRQ QP");
	CHECK(ibv_post_srq_recv(srq, &rwr, &rbad) == 0, "post_srq_recv");

	CHECK(ibv_req_notify_cq(cq, 0) == 0, "req_notify_cq");
	swr = (struct ibv_send_wr){ .wr_id = 8, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND };
	CHECK(ibv_post_send(a, &swr, &bad) == 0, "send");
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0, "get_cq_event");
	CHECK(ev_cq == cq && ev_ctx == (void *)0x1234, "event names the CQ and its context");
	n = poll_n(cq, wc, 1);
	CHECK(n == 1 && wc[0].wr_id == 7 && wc[0].opcode == IBV_WC_RECV, "SRQ receive");
	ibv_ack_cq_events(cq, 1);

	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0, "destroy qps");
	CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq (events acked)");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy_comp_channel");
	ibv_dereg_mr(mr);
	free(buf);
}

static void
test_ud(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .sgid_index = 1 } };
	struct ibv_send_wr swr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge, rsge;
	union ibv_gid mgid = { .raw = { 0xff, 0x0e } };
	struct ibv_wc wc[2];
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	struct ibv_cq *cq;
	char *buf;
	int n;

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	REQUIRE(cq != NULL, "cq");
	ia.send_cq = ia.recv_cq = cq;
	a = ibv_create_qp(pd, &ia);
	b = ibv_create_qp(pd, &ia);
	REQUIRE(a != NULL && b != NULL, "create UD qps");
	REQUIRE(qp_connect(a, 0, IBV_QPT_UD) == 0 && qp_connect(b, 0, IBV_QPT_UD) == 0, "UD RTS");
	ibv_query_gid(ctx, 1, 1, &aa.grh.dgid);
	ah = ibv_create_ah(pd, &aa);
	REQUIRE(ah != NULL, "create_ah: %s", strerror(errno));
	CHECK(ibv_attach_mcast(b, &mgid, 0) == 0 && ibv_detach_mcast(b, &mgid, 0) == 0, "mcast");

	buf = malloc(512);
	mr = ibv_reg_mr(pd, buf, 512, IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr != NULL, "reg");
	rsge = (struct ibv_sge){ .addr = (uintptr_t)buf + 100, .length = 40 + 64,
				 .lkey = mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 9, .sg_list = &rsge, .num_sge = 1 };
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0, "post_recv");
	strcpy(buf, "datagram");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 9, .lkey = mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 10, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = b->qp_num;
	swr.wr.ud.remote_qkey = 0x11111111;
	CHECK(ibv_post_send(a, &swr, &bad) == 0, "UD send");
	n = poll_n(cq, wc, 2);
	CHECK(n == 2 && strcmp(buf + 140, "datagram") == 0, "UD receive after the GRH");
	swr.opcode = IBV_WR_RDMA_WRITE;
	CHECK(ibv_post_send(a, &swr, &bad) == EINVAL, "WRITE on UD");
	swr.opcode = IBV_WR_SEND;
	swr.wr.ud.ah = NULL;
	CHECK(ibv_post_send(a, &swr, &bad) == EINVAL, "UD send without AH");

	CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");
	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0, "destroy");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy cq");
	ibv_dereg_mr(mr);
	free(buf);
}

static void
test_ex(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex cia = {
		.cqe = 32, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_qp_init_attr_ex qia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 32 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge rsge, many[3];
	struct ibv_qp_ex *qx;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	void **slot;
	char *buf;
	int n, ret, i;

	cia.wc_flags |= IBV_WC_EX_WITH_FLOW_TAG;
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &cia) == NULL && errno == EOPNOTSUPP, "flow tag: EOPNOTSUPP");
	cia.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_FLOW_TAG;
	cqx = ibv_create_cq_ex(ctx, &cia);
	REQUIRE(cqx != NULL, "create_cq_ex: %s", strerror(errno));
	for (slot = (void **)&cqx->start_poll; slot <= (void **)&cqx->read_completion_wallclock_ns;
	     slot++)
		CHECK(*slot != NULL, "ibv_cq_ex slot NULL");
	CHECK(ibv_start_poll(cqx, &pa) == ENOENT, "empty cq_ex");

	qia.send_cq = qia.recv_cq = ibv_cq_ex_to_cq(cqx);
	qia.pd = pd;
	qia.send_ops_flags |= IBV_QP_EX_WITH_RDMA_READ;
	qia.qp_type = IBV_QPT_UC;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &qia) == NULL && errno == EOPNOTSUPP, "READ on UC refused");
	qia.qp_type = IBV_QPT_RC;
	qia.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_RDMA_READ;
	qia.send_ops_flags |= IBV_QP_EX_WITH_TSO;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &qia) == NULL && errno == EOPNOTSUPP, "TSO refused");
	qia.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_TSO;
	a = ibv_create_qp_ex(ctx, &qia);
	b = ibv_create_qp_ex(ctx, &qia);
	REQUIRE(a != NULL && b != NULL, "create_qp_ex: %s", strerror(errno));
	qx = ibv_qp_to_qp_ex(a);
	REQUIRE(qx != NULL, "qp_to_qp_ex");
	for (slot = (void **)&qx->wr_atomic_cmp_swp; slot <= (void **)&qx->wr_atomic_write; slot++)
		CHECK(*slot != NULL, "ibv_qp_ex slot NULL");
	REQUIRE(qp_connect(a, b->qp_num, IBV_QPT_RC) == 0 &&
		qp_connect(b, a->qp_num, IBV_QPT_RC) == 0, "connect");

	buf = malloc(4096);
	memset(buf, 0, 4096);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	REQUIRE(mr != NULL, "reg");
	rsge = (struct ibv_sge){ .addr = (uintptr_t)buf + 2048, .length = 64, .lkey = mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 50, .sg_list = &rsge, .num_sge = 1 };
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0, "post_recv");

	/* a batch: a send and a write */
	strcpy(buf, "wr api");
	ibv_wr_start(qx);
	qx->wr_id = 60;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 7);
	qx->wr_id = 61;
	ibv_wr_rdma_write(qx, mr->rkey, (uintptr_t)buf + 3000);
	ibv_wr_set_inline_data(qx, "inl", 4);
	CHECK(ibv_wr_complete(qx) == 0, "wr_complete");
	n = 0;
	for (i = 0; i < 2000 && n < 3; i++) {
		ret = ibv_start_poll(cqx, &pa);
		if (ret == ENOENT) {
			usleep(1000);
			continue;
		}
		do {
			CHECK(cqx->status == IBV_WC_SUCCESS, "status");
			if (cqx->wr_id == 50)
				CHECK(ibv_wc_read_opcode(cqx) == IBV_WC_RECV &&
				      ibv_wc_read_byte_len(cqx) == 7 &&
				      ibv_wc_read_qp_num(cqx) == b->qp_num, "recv via cq_ex");
			n++;
		} while (ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	}
	CHECK(n == 3, "cq_ex completions %d", n);
	CHECK(strcmp(buf + 2048, "wr api") == 0 && strcmp(buf + 3000, "inl") == 0, "wr data");

	/* an aborted batch and a failing batch post nothing */
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 7);
	ibv_wr_abort(qx);
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, mr->rkey, (uintptr_t)buf + 3000);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 7);
	ibv_wr_send(qx);
	for (i = 0; i < 3; i++)
		many[i] = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 1, .lkey = mr->lkey };
	ibv_wr_set_sge_list(qx, 3, many);	/* max_send_sge is 2 */
	CHECK(ibv_wr_complete(qx) == EINVAL, "failing batch");
	ibv_wr_start(qx);
	ibv_wr_rdma_read(qx, mr->rkey, (uintptr_t)buf);	/* not in send_ops_flags */
	CHECK(ibv_wr_complete(qx) == EINVAL, "op not requested");
	usleep(20000);
	CHECK(ibv_start_poll(cqx, &pa) == ENOENT, "nothing of those batches completed");

	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0, "destroy");
	CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "destroy cq_ex");
	ibv_dereg_mr(mr);
	free(buf);
}

static void
test_refusals(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1 } };
	struct ibv_mw *mw;
	struct ibv_cq *cq;

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	REQUIRE(cq != NULL, "cq");
	ia.send_cq = ia.recv_cq = cq;
	errno = 0;
	CHECK(ibv_create_qp(pd, &ia) == NULL && errno == EOPNOTSUPP, "RAW_PACKET");
	ia.qp_type = IBV_QPT_RC;
	ia.send_cq = NULL;
	errno = 0;
	CHECK(ibv_create_qp(pd, &ia) == NULL && errno == EINVAL, "no send CQ");
	errno = 0;
	CHECK(ibv_create_cq(ctx, 0, NULL, NULL, 0) == NULL && errno == EINVAL, "cqe 0");
	/* the stand-in daemon has no RESIZE_CQ: its refusal reaches the caller as is */
	CHECK(ibv_resize_cq(cq, 8) == EOPNOTSUPP, "resize_cq refused by the daemon");
	errno = 0;
	CHECK(ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ .comp_mask = 1 }) == NULL &&
	      errno == EINVAL, "alloc_td: unknown comp_mask");
	{
		struct ibv_td *td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
		struct ibv_pd *pdom = NULL;

		CHECK(td != NULL, "alloc_td");
		if (td != NULL)
			pdom = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
							    .pd = pd, .td = td });
		CHECK(pdom != NULL && pdom->handle == pd->handle, "parent domain: the PD's handle");
		CHECK(td == NULL || ibv_dealloc_td(td) == EBUSY, "dealloc_td: held");
		CHECK(pdom == NULL || ibv_dealloc_pd(pdom) == 0, "dealloc parent domain");
		CHECK(td == NULL || ibv_dealloc_td(td) == 0, "dealloc_td");
	}
	errno = 0;
	CHECK(ibv_open_xrcd(ctx, &(struct ibv_xrcd_init_attr){ 0 }) == NULL, "open_xrcd");
	{
		struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

		CHECK(ibv_query_rt_values_ex(ctx, &v) == 0 && v.raw_clock.tv_sec + v.raw_clock.tv_nsec,
		      "query_rt_values: the raw clock of CQE timestamps");
		v.comp_mask = 1u << 5;
		CHECK(ibv_query_rt_values_ex(ctx, &v) == EINVAL, "query_rt_values: unknown mask");
	}
	errno = 0;
	CHECK(ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, 0) == NULL && errno == EINVAL, "dmabuf fd -1");
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw != NULL && mw->type == IBV_MW_TYPE_2, "alloc_mw: %s", strerror(errno));
	CHECK(mw == NULL || ibv_dealloc_mw(mw) == 0, "dealloc_mw");
	errno = 0;
	CHECK(ibv_alloc_mw(pd, (enum ibv_mw_type)9) == NULL && errno == EINVAL, "mw type 9");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy");
}

/* The daemon dies: one DEVICE_FATAL, and cleanup still succeeds. */
static void
test_daemon_gone(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_async_event ev;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);

	REQUIRE(cq != NULL, "cq");
	mock_stop();
	CHECK(ibv_get_async_event(ctx, &ev) == 0 && ev.event_type == IBV_EVENT_DEVICE_FATAL,
	      "DEVICE_FATAL");
	ibv_ack_async_event(&ev);
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq after the daemon died");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd after the daemon died");
	errno = 0;
	CHECK(ibv_alloc_pd(ctx) == NULL && errno != 0, "alloc_pd after the daemon died");
}

int
main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int num;

	if (argc < 2) {
		fprintf(stderr, "usage: test_shim_verbs MOCK_DROCED\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	mock_start(argv[1]);
	list = ibv_get_device_list(&num);
	REQUIRE(list != NULL && num == 1, "one device (num %d)", num);
	CHECK(strcmp(ibv_get_device_name(list[0]), "mock0") == 0, "name");
	CHECK(be64toh(ibv_get_device_guid(list[0])) == 0x0002c9fffe00d0ceull, "guid");
	ctx = ibv_open_device(list[0]);
	REQUIRE(ctx != NULL, "open_device: %s", strerror(errno));
	ibv_free_device_list(list);	/* the context keeps its device */
	test_context(ctx);
	test_queries(ctx);
	pd = ibv_alloc_pd(ctx);
	REQUIRE(pd != NULL, "alloc_pd");
	test_memory(pd);
	test_rc(ctx, pd);
	test_events_and_srq(ctx, pd);
	test_ud(ctx, pd);
	test_ex(ctx, pd);
	test_refusals(ctx, pd);
	test_daemon_gone(ctx, pd);
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	mock_stop();
	unlink(sock_path);
	if (failures == 0)
		printf("all verbs checks passed\n");
	return failures == 0 ? 0 : 1;
}
