/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A hostile client: it speaks droced's control protocol and shared-memory
 * ABI directly (no shim) and does everything a broken or malicious process
 * could: malformed messages, bogus handles and keys, memory it could shrink,
 * garbage work requests, a rewritten ring header, impossible ring indices
 * (send queue, receive queue, SRQ), forged doorbells (also on the DB ring
 * of an engine that does not run the QP). Exits 0 when every step got the answer droce documents;
 * the caller then checks that the daemon is alive and clean.
 *
 *   hostile_client SOCKET
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "droce_ctrl.h"
#include "droce_shm.h"

static const char *sock_path;
static int failures;

#define CHECK(cond, ...) do {						\
		if (!(cond)) {						\
			failures++;					\
			printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

static int
conn(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		exit(2);
	}
	return fd;
}

static struct droce_shm_ring *
map_ring_at(int fd, uint64_t len, uint64_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);

	return p == MAP_FAILED ? NULL : p;
}

static struct droce_shm_ring *
map_ring(int fd, uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The DB rings of the last HELLO, one per engine of the daemon. */
static unsigned int n_db;

/* The DB ring of engine @p e (a QP's or SRQ's, from its create reply). */
static struct droce_shm_ring *
db_of(struct droce_shm_ring **db, uint32_t e)
{
	return e < n_db ? db[e] : db[0];
}

/* A connection that said HELLO; db[k] gets engine k's doorbell ring, *events
 * the read end of its async-event pipe (non-blocking). */
static int
hello(struct droce_shm_ring **db, int *events)
{
	struct droce_ctrl_hello_req req = { .abi_version = DROCE_SHM_ABI_VERSION };
	struct droce_ctrl_hello_rep rep;
	int fd = conn(), fds[DROCE_CTRL_MAX_FDS], pipefd[2], ret;
	unsigned int n = 0, k;

	if (pipe(pipefd) < 0)
		exit(2);
	ret = droce_ctrl_call(fd, DROCE_CTRL_HELLO, &req, sizeof(req), &pipefd[1], 1, &rep,
			      sizeof(rep), fds, &n);
	close(pipefd[1]);
	if (events != NULL && fcntl(pipefd[0], F_SETFL, O_NONBLOCK) == 0)
		*events = pipefd[0];
	else
		close(pipefd[0]);
	/* a daemon in --idle wait adds a wake eventfd per engine */
	CHECK(ret == 0 && rep.n_db >= 1 && rep.n_db <= DROCE_SHM_MAX_DB &&
	      (n == 1 || n == 1 + rep.n_db), "HELLO: %d, %u descriptors, %u DB rings", ret, n,
	      rep.n_db);
	if (ret != 0 || n < 1 || rep.n_db < 1 || rep.n_db > DROCE_SHM_MAX_DB)
		exit(1);
	n_db = rep.n_db;
	for (k = 0; k < DROCE_SHM_MAX_DB; k++)
		db[k] = k < n_db ? map_ring_at(fds[0], rep.db_map_len, k * rep.db_map_len) : NULL;
	close(fds[0]);
	for (k = 0; n > 1 && k < n_db; k++) {
		uint64_t one = 1;
		unsigned int i;

		/* wake-ups for nothing, and a lying asleep flag: only our own cost */
		for (i = 0; i < 1000; i++)
			(void)!write(fds[1 + k], &one, sizeof(one));
		if (db[k] != NULL)
			atomic_store(&db[k]->flag, 0xffffffffu);
		close(fds[1 + k]);
	}
	return fd;
}

/* Whether the async-event pipe @p events has (had) @p type for @p handle; drains it. */
static bool
event_seen(int events, enum ibv_event_type type, uint32_t handle)
{
	struct droce_ctrl_event ev;
	bool seen = false;

	while (read(events, &ev, sizeof(ev)) == (ssize_t)sizeof(ev))
		seen |= ev.event_type == (uint32_t)type && ev.handle == handle;
	return seen;
}

/* An RC QP on @p cq (and @p srq if not 0), moved to INIT; its SQ ring, its RQ ring in *rq. */
static struct droce_shm_ring *
qp_in_init(int fd, uint32_t pd, uint32_t cq, uint32_t srq, struct droce_ctrl_create_qp_rep *rep,
	   struct droce_shm_ring **rq)
{
	struct droce_ctrl_create_qp_req req = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq, .srq_handle = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct droce_ctrl_modify_qp_req mq = {
		.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		.attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 },
	};
	int fds[DROCE_CTRL_MAX_FDS], ret;
	unsigned int n = 0;
	struct droce_shm_ring *sq;

	ret = droce_ctrl_call(fd, DROCE_CTRL_CREATE_QP, &req, sizeof(req), NULL, 0, rep,
			      sizeof(*rep), fds, &n);
	CHECK(ret == 0 && n == (srq ? 1u : 2u), "create QP (srq %u): %d", srq, ret);
	if (ret != 0)
		exit(1);
	sq = map_ring(fds[0], rep->sq_map_len);
	*rq = srq ? NULL : map_ring(fds[1], rep->rq_map_len);
	mq.qp_handle = rep->qp_handle;
	ret = droce_ctrl_call(fd, DROCE_CTRL_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL,
			      NULL);
	CHECK(ret == 0 && sq != NULL && (srq || *rq != NULL), "QP to INIT: %d", ret);
	if (sq == NULL)
		exit(1);
	return sq;
}

/*
 * An impossible producer index on a receive queue fails its QP
 * (IBV_EVENT_QP_FATAL), on an SRQ the SRQ (IBV_EVENT_SRQ_ERR) and every QP
 * on it (Last WQE Reached): never "no receive WQE" forever.
 */
static void
broken_receive_queues(int fd, struct droce_shm_ring **db, int events, uint32_t pd, uint32_t cq)
{
	struct droce_ctrl_create_srq_req sr = { .pd_handle = pd, .attr = { .max_wr = 8,
									    .max_sge = 1 } };
	struct droce_ctrl_create_srq_rep srp;
	struct droce_ctrl_create_qp_rep a, b, c;
	struct droce_shm_ring *sqa, *sqb, *sqc, *rq, *srq = NULL;
	int fds[DROCE_CTRL_MAX_FDS], ret;
	unsigned int n = 0;

	sqa = qp_in_init(fd, pd, cq, 0, &a, &rq);
	(void)event_seen(events, IBV_EVENT_QP_FATAL, a.qp_handle);	/* what came before */
	droce_shm_publish(rq, 1000000);		/* nothing was posted: impossible */
	droce_shm_doorbell(db_of(db, a.engine), &rq->flag, a.qp_handle);
	usleep(300000);
	CHECK(atomic_load(&sqa->error) != 0, "the QP did not fail on an impossible RQ index");
	CHECK(event_seen(events, IBV_EVENT_QP_FATAL, a.qp_handle),
	      "no IBV_EVENT_QP_FATAL for the QP with an impossible RQ index");

	ret = droce_ctrl_call(fd, DROCE_CTRL_CREATE_SRQ, &sr, sizeof(sr), NULL, 0, &srp,
			      sizeof(srp), fds, &n);
	CHECK(ret == 0 && n == 1, "create SRQ: %d", ret);
	if (ret == 0 && n == 1)
		srq = map_ring(fds[0], srp.map_len);
	if (srq == NULL)
		return;
	sqb = qp_in_init(fd, pd, cq, srp.srq_handle, &b, &rq);
	sqc = qp_in_init(fd, pd, cq, srp.srq_handle, &c, &rq);
	droce_shm_publish(srq, 1000000);
	droce_shm_doorbell(db_of(db, srp.engine), &srq->flag, srp.srq_handle);
	usleep(300000);
	{
		bool srq_err = false, last_b = false, last_c = false;
		struct droce_ctrl_event ev;

		while (read(events, &ev, sizeof(ev)) == (ssize_t)sizeof(ev)) {
			srq_err |= ev.event_type == IBV_EVENT_SRQ_ERR &&
				   ev.handle == srp.srq_handle;
			last_b |= ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
				  ev.handle == b.qp_handle;
			last_c |= ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
				  ev.handle == c.qp_handle;
		}
		CHECK(srq_err, "no IBV_EVENT_SRQ_ERR for the SRQ with an impossible index");
		CHECK(atomic_load(&srq->error) != 0, "the SRQ ring does not say error");
		CHECK(atomic_load(&sqb->error) != 0 && atomic_load(&sqc->error) != 0 &&
		      last_b && last_c, "the QPs on the broken SRQ did not both fail (%d %d)",
		      last_b, last_c);
	}
}

/* The daemon hangs up on a malformed message: only this connection. */
static void
expect_hangup(int fd, const void *raw, size_t len, const char *what)
{
	char buf[64];
	ssize_t n;

	if (send(fd, raw, len, 0) < 0) {
		CHECK(0, "%s: send: %s", what, strerror(errno));
		close(fd);
		return;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	CHECK(n <= 0, "%s: the daemon answered instead of hanging up", what);
	close(fd);
}

int
main(int argc, char **argv)
{
	struct droce_shm_ring *db[DROCE_SHM_MAX_DB] = { NULL }, *sq, *cq;
	struct droce_ctrl_hdr bad = { .version = DROCE_CTRL_VERSION, .type = DROCE_CTRL_ALLOC_PD };
	struct droce_ctrl_handle h;
	struct droce_ctrl_alloc_pd_rep pd;
	struct droce_ctrl_create_cq_req cqr = { .cqe = 16 };
	struct droce_ctrl_create_cq_rep cqp;
	struct droce_ctrl_create_qp_req qpr;
	struct droce_ctrl_create_qp_rep qpp;
	struct droce_ctrl_reg_mr_req mr;
	struct droce_ctrl_reg_mr_rep mrp;
	struct droce_ctrl_modify_qp_req mq;
	struct droce_ctrl_query_gid_req gq = { .port_num = 1, .index = 1 };
	struct droce_ctrl_query_gid_rep gid;
	int fd, fds[DROCE_CTRL_MAX_FDS], mfd, ret, i, events = -1;
	unsigned int n, k;
	char garbage[300];
	uint32_t prod;

	if (argc != 2)
		return 2;
	sock_path = argv[1];

	/* 1. malformed messages: each costs only that connection */
	for (i = 0; i < (int)sizeof(garbage); i++)
		garbage[i] = (char)(i * 37 + 11);
	expect_hangup(conn(), garbage, sizeof(garbage), "random bytes");
	bad.version = 99;
	expect_hangup(conn(), &bad, sizeof(bad), "wrong version");
	bad.version = DROCE_CTRL_VERSION;
	bad.len = 1000;			/* disagrees with the datagram */
	expect_hangup(conn(), &bad, sizeof(bad), "length past the datagram");
	bad.len = 0;
	expect_hangup(conn(), &bad, sizeof(bad), "request before HELLO");
	fd = hello(db, NULL);
	bad.type = 200;
	expect_hangup(fd, &bad, sizeof(bad), "unknown type");
	fd = hello(db, NULL);
	bad.type = DROCE_CTRL_DEALLOC_PD;
	bad.len = 2;			/* too short for its body */
	{
		char msg[sizeof(bad) + 2] = { 0 };

		memcpy(msg, &bad, sizeof(bad));
		expect_hangup(fd, msg, sizeof(msg), "short body");
	}

	/* 2. bogus handles and arguments get errnos, the connection lives */
	fd = hello(db, &events);
	h.handle = 12345;
	ret = droce_ctrl_call(fd, DROCE_CTRL_DEALLOC_PD, &h, sizeof(h), NULL, 0, NULL, 0, NULL, NULL);
	CHECK(ret == EINVAL, "dealloc of a bogus PD: %d", ret);
	h.handle = 0xffffffffu;
	ret = droce_ctrl_call(fd, DROCE_CTRL_DESTROY_QP, &h, sizeof(h), NULL, 0, NULL, 0, NULL, NULL);
	CHECK(ret == EINVAL, "destroy of handle 0xffffffff: %d", ret);
	ret = droce_ctrl_call(fd, DROCE_CTRL_ALLOC_PD, NULL, 0, NULL, 0, &pd, sizeof(pd), NULL, NULL);
	CHECK(ret == 0, "alloc PD: %d", ret);

	/* 3. memory it could shrink under the daemon is taken (a truncation later
	 * costs the client its pages, not the daemon its life: reg_mr_kinds);
	 * a range past the file, no file or bad rights are refused */
	memset(&mr, 0, sizeof(mr));
	mr.pd_handle = pd.pd_handle;
	mr.length = 4096;
	mr.addr = mr.iova = 0x10000;
	mr.access = IBV_ACCESS_LOCAL_WRITE;
	mfd = memfd_create("hostile", MFD_ALLOW_SEALING);
	if (mfd < 0 || ftruncate(mfd, 8192) < 0)
		return 2;
	ret = droce_ctrl_call(fd, DROCE_CTRL_REG_MR, &mr, sizeof(mr), &mfd, 1, &mrp, sizeof(mrp),
			      NULL, NULL);
	CHECK(ret == 0, "unsealed memfd: %d", ret);
	fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	mr.fd_offset = 8192;		/* past its end */
	ret = droce_ctrl_call(fd, DROCE_CTRL_REG_MR, &mr, sizeof(mr), &mfd, 1, &mrp, sizeof(mrp),
			      NULL, NULL);
	CHECK(ret == EINVAL, "range past the file: %d", ret);
	ret = droce_ctrl_call(fd, DROCE_CTRL_REG_MR, &mr, sizeof(mr), NULL, 0, &mrp, sizeof(mrp),
			      NULL, NULL);
	CHECK(ret == EINVAL, "no file at all: %d", ret);
	mr.fd_offset = 0;
	mr.access = IBV_ACCESS_REMOTE_WRITE;	/* without LOCAL_WRITE */
	ret = droce_ctrl_call(fd, DROCE_CTRL_REG_MR, &mr, sizeof(mr), &mfd, 1, &mrp, sizeof(mrp),
			      NULL, NULL);
	CHECK(ret == EINVAL, "REMOTE_WRITE without LOCAL_WRITE: %d", ret);
	mr.access = IBV_ACCESS_LOCAL_WRITE;
	ret = droce_ctrl_call(fd, DROCE_CTRL_REG_MR, &mr, sizeof(mr), &mfd, 1, &mrp, sizeof(mrp),
			      NULL, NULL);
	CHECK(ret == 0, "a proper registration: %d", ret);

	/* 4. a QP in RTS, looped back to itself */
	n = 0;
	ret = droce_ctrl_call(fd, DROCE_CTRL_CREATE_CQ, &cqr, sizeof(cqr), NULL, 0, &cqp,
			      sizeof(cqp), fds, &n);
	CHECK(ret == 0 && n == 1, "create CQ: %d", ret);
	cq = map_ring(fds[0], cqp.map_len);
	memset(&qpr, 0, sizeof(qpr));
	qpr.pd_handle = pd.pd_handle;
	qpr.send_cq_handle = qpr.recv_cq_handle = cqp.cq_handle;
	qpr.qp_type = IBV_QPT_RC;
	qpr.cap.max_send_wr = qpr.cap.max_recv_wr = 8;
	qpr.cap.max_send_sge = qpr.cap.max_recv_sge = 1;
	qpr.sq_sig_all = 1;
	n = 0;
	ret = droce_ctrl_call(fd, DROCE_CTRL_CREATE_QP, &qpr, sizeof(qpr), NULL, 0, &qpp,
			      sizeof(qpp), fds, &n);
	CHECK(ret == 0 && n == 2, "create QP: %d", ret);
	if (ret != 0 || cq == NULL || db[0] == NULL)
		return 1;
	sq = map_ring(fds[0], qpp.sq_map_len);
	close(fds[1]);
	ret = droce_ctrl_call(fd, DROCE_CTRL_QUERY_GID, &gq, sizeof(gq), NULL, 0, &gid, sizeof(gid),
			      NULL, NULL);
	CHECK(ret == 0, "query GID: %d", ret);
	memset(&mq, 0, sizeof(mq));
	mq.qp_handle = qpp.qp_handle;
	mq.attr.qp_state = IBV_QPS_INIT;
	mq.attr.port_num = 1;
	mq.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	ret = droce_ctrl_call(fd, DROCE_CTRL_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, NULL);
	CHECK(ret == 0, "INIT: %d", ret);
	mq.attr.qp_state = IBV_QPS_RTS;		/* skipping RTR is not allowed */
	mq.mask = IBV_QP_STATE;
	ret = droce_ctrl_call(fd, DROCE_CTRL_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, NULL);
	CHECK(ret == EINVAL, "INIT->RTS: %d", ret);
	mq.attr.qp_state = IBV_QPS_RTR;
	mq.attr.path_mtu = IBV_MTU_1024;
	mq.attr.dest_qp_num = qpp.qp_num;
	mq.attr.ah_attr.is_global = 1;
	mq.attr.ah_attr.grh.dgid = gid.gid;
	mq.attr.ah_attr.grh.sgid_index = 1;
	mq.attr.ah_attr.grh.hop_limit = 1;
	mq.attr.ah_attr.port_num = 1;
	mq.attr.max_dest_rd_atomic = 1;
	mq.attr.min_rnr_timer = 1;
	mq.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	ret = droce_ctrl_call(fd, DROCE_CTRL_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, NULL);
	CHECK(ret == 0, "RTR: %d", ret);
	mq.attr.qp_state = IBV_QPS_RTS;
	mq.attr.timeout = 10;
	mq.attr.retry_cnt = 1;
	mq.attr.rnr_retry = 1;
	mq.attr.max_rd_atomic = 1;
	mq.mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	ret = droce_ctrl_call(fd, DROCE_CTRL_MODIFY_QP, &mq, sizeof(mq), NULL, 0, NULL, 0, NULL, NULL);
	CHECK(ret == 0, "RTS: %d", ret);

	/* 5. garbage work requests, a rewritten header, forged doorbells */
	for (i = 0; i < 3; i++) {
		struct droce_shm_swqe *w = (void *)(sq->slots + (size_t)i * 512);

		memset(w, 0xa5, sizeof(*w));		/* opcode, num_sge, keys: all junk */
		w->wr_id = 1000u + (unsigned int)i;
	}
	sq->log2_nslots = 31;			/* the daemon must not believe this */
	sq->log2_slot_size = 30;
	droce_shm_publish(sq, 3);
	for (k = 0; k < n_db; k++) {		/* on an engine that does not run it */
		_Atomic uint32_t f = 0;

		if (k != qpp.engine)
			droce_shm_doorbell(db[k], &f, qpp.qp_handle);
	}
	droce_shm_doorbell(db_of(db, qpp.engine), &sq->flag, qpp.qp_handle);
	for (i = 0; i < 64; i++) {		/* doorbells naming nothing of ours */
		_Atomic uint32_t f = 0;

		droce_shm_doorbell(db[(unsigned int)i % n_db], &f, 0xdead0000u + (uint32_t)i);
	}
	for (k = 0; k < n_db; k++)
		db[k]->log2_nslots = 31;
	usleep(300000);
	/* three error completions (bad WQE: local QP operation error) */
	prod = droce_shm_load_prod(cq);
	CHECK(prod >= 1, "no completion for the garbage WQEs (prod %u)", prod);
	if (prod >= 1) {
		struct droce_shm_cqe *c = (void *)cq->slots;

		CHECK(c->wr_id == 1000 && c->status != IBV_WC_SUCCESS,
		      "first CQE: wr_id %lu status %u", (unsigned long)c->wr_id, c->status);
	}
	droce_shm_publish(sq, 3 + 1000000);	/* impossible producer index */
	atomic_store(&sq->flag, 0);
	droce_shm_doorbell(db_of(db, qpp.engine), &sq->flag, qpp.qp_handle);
	usleep(300000);
	CHECK(atomic_load(&sq->error) != 0, "the QP did not fail on an impossible index");
	{	/* ... and the client hears of it: IBV_EVENT_QP_FATAL for that QP */
		struct droce_ctrl_event ev;
		bool fatal = false;

		while (read(events, &ev, sizeof(ev)) == (ssize_t)sizeof(ev))
			fatal |= ev.event_type == IBV_EVENT_QP_FATAL && ev.handle == qpp.qp_handle;
		CHECK(fatal, "no IBV_EVENT_QP_FATAL for the QP with an impossible index");
	}

	broken_receive_queues(fd, db, events, pd.pd_handle, cqp.cq_handle);

	/* still served after all that */
	ret = droce_ctrl_call(fd, DROCE_CTRL_ALLOC_PD, NULL, 0, NULL, 0, &pd, sizeof(pd), NULL, NULL);
	CHECK(ret == 0, "alloc PD after the abuse: %d", ret);
	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;		/* exit: the daemon frees everything */
}
