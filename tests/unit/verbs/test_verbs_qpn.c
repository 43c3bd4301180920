/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * A real device object driven through its control requests, as droced's
 * clients drive it. TCase "qpn_held": QP creation skips the QPNs the
 * connection manager still holds (droce_dev_qpn_held_set; droced wires
 * droce_cm_qpn_held to it). TCase "ah_destroy": a UD send posted before
 * its AH is destroyed still goes out (mckey's sender destroys its AH right
 * after posting, before the worker has seen the doorbell). TCase "reclaim":
 * a deregistered MR's pages stay mapped until the engine has passed a
 * quiescent point (an engine may have resolved its key a moment before).
 * TCase "workers": a device of two engines, each run by a thread of its
 * own: two QPs of one client land on different engines, their doorbells
 * go on that engine's ring, and their one CQ gets every completion
 * exactly once, each QP's in order, while both engines write it at once.
 */

#include "droce_verbs_dev.h"	/* first: the header stands alone */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>

#include "droce_engine.h"
#include "droce_idle.h"
#include "droce_shm.h"

#include "test_verbs.h"

/* Frames sent (by any engine's thread), and the last one's destination GID. */
static _Atomic unsigned int frames_out;
static uint8_t last_dgid[16];

static int
count_out(void *arg, struct droce_pkt *pkt, const struct droce_iov *iov, unsigned int n_iov)
{
	(void)arg, (void)iov, (void)n_iov;
	frames_out++;
	memcpy(last_dgid, pkt->dgid, 16);	/* read by single-engine tests only */
	return 0;
}

static int
no_resolve(void *arg, const uint8_t gid[16], uint8_t mac[6])
{
	(void)arg, (void)gid, (void)mac;
	return -EAGAIN;
}

static void
no_mcast(void *arg, const uint8_t gid[16])
{
	(void)arg, (void)gid;
}

static const struct droce_dev_port_ops port_ops = {
	.frame_out = count_out,
	.resolve = no_resolve,
	.mcast_join = no_mcast,
	.mcast_leave = no_mcast,
};

/* The QPNs held: a set, or all of them. */
static struct {
	uint32_t qpn[4];
	unsigned int n;
	bool all;
	unsigned int asked;
} held;

static bool
held_fn(void *arg, uint32_t qpn)
{
	ck_assert_ptr_eq(arg, &held);
	held.asked++;
	if (held.all)
		return true;
	for (unsigned int i = 0; i < held.n; i++)
		if (held.qpn[i] == qpn)
			return true;
	return false;
}

static struct droce_dev *dev;
static struct droce_client *cl;
static uint32_t pd, cq;
static int async_pipe[2];
static int db_fd;			/* the client's doorbell rings, one per engine */
static struct droce_ctrl_hello_rep hello_rep;

/*
 * One request (with @p fd unless -1); the first reply descriptor goes to
 * @p keep if not NULL (else -1), the others are closed. @return the status.
 */
static int
call_keep(uint16_t type, const void *body, uint32_t len, int fd, void *rep, uint32_t *rep_len,
	  int *keep)
{
	struct droce_ctrl_hdr hdr = { .version = DROCE_CTRL_VERSION, .type = type, .len = len };
	uint8_t scratch[DROCE_CTRL_MAX_BODY];
	int fds[8];
	unsigned int nfds = 0, i = 0;
	uint32_t rl = 0;
	int ret;

	ret = droce_dev_request(cl, &hdr, body, &fd, fd >= 0 ? 1 : 0, rep != NULL ? rep : scratch,
				rep_len != NULL ? rep_len : &rl, fds, &nfds);
	if (keep != NULL) {
		*keep = nfds > 0 ? fds[0] : -1;
		i = nfds > 0;
	}
	for (; i < nfds; i++)
		close(fds[i]);
	return ret;
}

static int
call_fd(uint16_t type, const void *body, uint32_t len, int fd, void *rep, uint32_t *rep_len)
{
	return call_keep(type, body, len, fd, rep, rep_len, NULL);
}

static int
call(uint16_t type, const void *body, uint32_t len, void *rep, uint32_t *rep_len)
{
	return call_fd(type, body, len, -1, rep, rep_len);
}

static void
dev_up(unsigned int n_engines)
{
	struct droce_dev_conf conf = {
		.name = "droce0",
		.mac = { 0x02, 0, 0, 0, 0, 1 },
		.gid = { { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 } },
		.n_gids = 1,
		.link_mtu = 1500,
		.node_guid = 1,
		.seed = 7,
		.port_ops = &port_ops,
		.n_engines = n_engines,
	};
	struct droce_client_cred cred = { .pid = (uint32_t)getpid() };
	struct droce_ctrl_hello_req hello = {
		.abi_version = DROCE_SHM_ABI_VERSION,
		.pid = (uint32_t)getpid(),
	};
	struct droce_ctrl_alloc_pd_rep pd_rep;
	struct droce_ctrl_create_cq_req cq_req = { .cqe = 16 };
	struct droce_ctrl_create_cq_rep cq_rep;
	uint32_t len;

	ck_assert_int_eq(droce_dev_create(&conf, &dev), 0);
	ck_assert_int_eq(droce_dev_client_new(dev, &cred, &cl), 0);
	ck_assert_int_eq(pipe(async_pipe), 0);
	ck_assert_int_eq(call_keep(DROCE_CTRL_HELLO, &hello, sizeof(hello), async_pipe[1],
				   &hello_rep, &len, &db_fd), 0);
	ck_assert_uint_eq(hello_rep.n_db, n_engines);
	ck_assert_int_eq(call(DROCE_CTRL_ALLOC_PD, NULL, 0, &pd_rep, &len), 0);
	pd = pd_rep.pd_handle;
	ck_assert_int_eq(call(DROCE_CTRL_CREATE_CQ, &cq_req, sizeof(cq_req), &cq_rep, &len), 0);
	cq = cq_rep.cq_handle;
	memset(&held, 0, sizeof(held));
	frames_out = 0;
}

static void
setup(void)
{
	dev_up(1);
}

static void
teardown(void)
{
	close(db_fd);
	droce_dev_client_free(cl);
	droce_dev_destroy(dev);
	close(async_pipe[0]);
	close(async_pipe[1]);	/* the device took a copy of its own */
}

/* A new RC QP's number, or 0 with *err set. */
static uint32_t
qp_new(int *err)
{
	struct droce_ctrl_create_qp_req q = {
		.pd_handle = pd,
		.send_cq_handle = cq,
		.recv_cq_handle = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct droce_ctrl_create_qp_rep r;
	uint32_t len;

	*err = call(DROCE_CTRL_CREATE_QP, &q, sizeof(q), &r, &len);
	return *err == 0 ? r.qp_num : 0;
}

START_TEST(held_qpns_skipped)
{
	uint32_t first, qpn;
	int err;

	/* without the hook: consecutive QPNs (the control group) */
	first = qp_new(&err);
	ck_assert_int_eq(err, 0);
	qpn = qp_new(&err);
	ck_assert_uint_eq(qpn, first + 1);

	/* the next two held: the QP after them */
	held.qpn[0] = first + 2;
	held.qpn[1] = first + 3;
	held.n = 2;
	droce_dev_qpn_held_set(dev, held_fn, &held);
	qpn = qp_new(&err);
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(qpn, first + 4);
	ck_assert_uint_ge(held.asked, 3);

	/* released (TIMEWAIT over): the allocator goes on, it does not step back */
	held.n = 0;
	qpn = qp_new(&err);
	ck_assert_uint_eq(qpn, first + 5);

	/* every QPN held: creation fails, nothing is handed out */
	held.all = true;
	qpn = qp_new(&err);
	ck_assert_uint_eq(qpn, 0);
	ck_assert_int_eq(err, ENOMEM);

	/* the hook removed: creation works again */
	droce_dev_qpn_held_set(dev, NULL, NULL);
	qpn = qp_new(&err);
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(qpn, first + 6);
}
END_TEST

static void
modify(uint32_t qp, uint32_t mask, const struct ibv_qp_attr *attr)
{
	struct droce_ctrl_modify_qp_req m = { .qp_handle = qp, .mask = mask, .attr = *attr };

	ck_assert_int_eq(call(DROCE_CTRL_MODIFY_QP, &m, sizeof(m), NULL, NULL), 0);
}

START_TEST(ud_send_posted_before_its_ah_is_destroyed_goes_out)
{
	static const uint8_t group[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 };
	struct droce_ctrl_create_qp_req q = {
		.pd_handle = pd,
		.send_cq_handle = cq,
		.recv_cq_handle = cq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 16 },
	};
	struct droce_ctrl_create_qp_rep r;
	struct droce_ctrl_create_ah_req a = { .pd_handle = pd };
	struct droce_ctrl_create_ah_rep ar;
	struct droce_ctrl_handle h;
	struct droce_dev_stats st;
	struct droce_shm_swqe *w;
	struct droce_shm_ring *sq;
	struct ibv_qp_attr attr;
	uint32_t len;
	int fd, i;

	ck_assert_int_eq(call_keep(DROCE_CTRL_CREATE_QP, &q, sizeof(q), -1, &r, &len, &fd), 0);
	ck_assert_int_ge(fd, 0);
	sq = mmap(NULL, r.sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ck_assert_ptr_ne(sq, MAP_FAILED);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = 0x01234567;
	modify(r.qp_handle, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, &attr);
	attr.qp_state = IBV_QPS_RTR;
	modify(r.qp_handle, IBV_QP_STATE, &attr);
	attr.qp_state = IBV_QPS_RTS;
	modify(r.qp_handle, IBV_QP_STATE | IBV_QP_SQ_PSN, &attr);

	a.attr.is_global = 1;
	a.attr.port_num = 1;
	memcpy(a.attr.grh.dgid.raw, group, 16);
	a.attr.grh.hop_limit = 8;
	ck_assert_int_eq(call(DROCE_CTRL_CREATE_AH, &a, sizeof(a), &ar, &len), 0);

	/* posted as the shim posts it, but the doorbell not seen yet */
	w = droce_shm_slot(sq, 0);
	memset(w, 0, sizeof(*w));
	w->wr_id = 7;
	w->opcode = IBV_WR_SEND;
	w->send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	w->inline_len = 8;
	memcpy(w->inline_data, "mckey!!", 8);
	w->ah_handle = ar.ah_handle;
	w->remote_qpn = 0xffffff;
	w->remote_qkey = 0x01234567;
	droce_shm_publish(sq, 1);

	h.handle = ar.ah_handle;
	ck_assert_int_eq(call(DROCE_CTRL_DESTROY_AH, &h, sizeof(h), NULL, NULL), 0);
	for (i = 0; i < 4; i++)
		(void)droce_engine_poll(droce_dev_engine(dev, 0), 1000000ull * (uint64_t)(i + 1));
	droce_dev_stats(dev, &st);
	ck_assert_uint_eq(st.cnt[DROCE_DEV_CNT_BAD_WQE], 0);
	ck_assert_uint_eq(frames_out, 1);
	ck_assert_mem_eq(last_dgid, group, 16);
	munmap(sq, r.sq_map_len);
}
END_TEST

/* How many mappings of this process show the memfd named @p name. */
static unsigned int
maps_of(const char *name)
{
	char line[512], pat[128];
	unsigned int n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	ck_assert_ptr_nonnull(f);
	snprintf(pat, sizeof(pat), "/memfd:%s ", name);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, pat) != NULL)
			n++;
	fclose(f);
	return n;
}

START_TEST(deregistered_mr_unmapped_after_a_quiescent_point)
{
	static const char name[] = "droce-reclaim-test";
	struct droce_ctrl_reg_mr_req m = {
		.pd_handle = pd,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		.addr = 0x10000,
		.length = 4096,
		.iova = 0x10000,
	};
	struct droce_ctrl_reg_mr_rep mr;
	struct droce_ctrl_handle h;
	uint32_t len;
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 8192), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	ck_assert_int_eq(call_fd(DROCE_CTRL_REG_MR, &m, sizeof(m), fd, &mr, &len), 0);
	close(fd);
	ck_assert_uint_eq(maps_of(name), 1);	/* the device's mapping: we have none */

	h.handle = mr.mr_handle;
	ck_assert_int_eq(call(DROCE_CTRL_DEREG_MR, &h, sizeof(h), NULL, NULL), 0);
	droce_dev_reclaim(dev);
	ck_assert_uint_eq(maps_of(name), 1);	/* the engine has not passed a quiescent point */

	(void)droce_engine_poll(droce_dev_engine(dev, 0), 1000000);
	droce_dev_reclaim(dev);
	ck_assert_uint_eq(maps_of(name), 0);
}
END_TEST

/* ---- two engines, two threads ---- */

#define W_MSGS		20000	/* per QP */
#define W_CQE		256

static _Atomic bool w_stop;

/* A worker: its engine's doorbells and polls, as droced's loop runs them. */
static void *
w_engine(void *arg)
{
	struct droce_engine *eng = arg;

	while (!atomic_load(&w_stop)) {
		uint64_t now = droce_now_ns();

		(void)droce_engine_doorbells(eng, now);
		(void)droce_engine_poll(eng, now);
	}
	return NULL;
}

struct w_qp {
	struct droce_ctrl_create_qp_rep r;
	struct droce_shm_ring *sq, *db;
	uint32_t posted, done;
};

static void
w_qp_new(struct w_qp *q, uint32_t cq_h)
{
	struct droce_ctrl_create_qp_req c = {
		.pd_handle = pd,
		.send_cq_handle = cq_h,
		.recv_cq_handle = cq_h,
		.qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 32, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 16 },
	};
	struct ibv_qp_attr attr;
	uint32_t len;
	int fd;

	ck_assert_int_eq(call_keep(DROCE_CTRL_CREATE_QP, &c, sizeof(c), -1, &q->r, &len, &fd), 0);
	q->sq = mmap(NULL, q->r.sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ck_assert_ptr_ne(q->sq, MAP_FAILED);
	ck_assert_uint_lt(q->r.engine, hello_rep.n_db);
	/* RX finds a QP's engine from its QPN alone */
	ck_assert_uint_eq(q->r.qp_num % hello_rep.n_db, q->r.engine);
	q->db = mmap(NULL, hello_rep.db_map_len, PROT_READ | PROT_WRITE, MAP_SHARED, db_fd,
		     (off_t)(q->r.engine * hello_rep.db_map_len));
	ck_assert_ptr_ne(q->db, MAP_FAILED);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = 0x01234567;
	modify(q->r.qp_handle, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, &attr);
	attr.qp_state = IBV_QPS_RTR;
	modify(q->r.qp_handle, IBV_QP_STATE, &attr);
	attr.qp_state = IBV_QPS_RTS;
	modify(q->r.qp_handle, IBV_QP_STATE | IBV_QP_SQ_PSN, &attr);
	q->posted = q->done = 0;
}

/* One UD SEND of 8 inline bytes to the group, as the shim posts and rings it. */
static void
w_post(struct w_qp *q, unsigned int k, uint32_t ah)
{
	struct droce_shm_swqe *w = droce_shm_slot(q->sq, q->posted);

	memset(w, 0, sizeof(*w));
	w->wr_id = (uint64_t)k << 32 | q->posted;
	w->opcode = IBV_WR_SEND;
	w->send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	w->inline_len = 8;
	w->ah_handle = ah;
	w->remote_qpn = 0xffffff;
	w->remote_qkey = 0x01234567;
	droce_shm_publish(q->sq, ++q->posted);
	(void)droce_shm_doorbell(q->db, &q->sq->flag, q->r.qp_handle);
}

START_TEST(one_cq_fed_by_two_engines_at_once)
{
	static const uint8_t group[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 };
	struct droce_ctrl_create_cq_req cr = { .cqe = W_CQE };
	struct droce_ctrl_create_cq_rep crep;
	struct droce_ctrl_create_ah_req a = { .pd_handle = pd };
	struct droce_ctrl_create_ah_rep ar;
	struct droce_shm_ring *ring;
	struct droce_dev_stats st;
	struct w_qp q[2];
	pthread_t th[2];
	uint32_t len, cons = 0, bad = 0, in_flight;
	unsigned int k;
	int fd;

	ck_assert_int_eq(call_keep(DROCE_CTRL_CREATE_CQ, &cr, sizeof(cr), -1, &crep, &len, &fd), 0);
	ring = mmap(NULL, crep.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ck_assert_ptr_ne(ring, MAP_FAILED);
	a.attr.is_global = 1;
	a.attr.port_num = 1;
	memcpy(a.attr.grh.dgid.raw, group, 16);
	a.attr.grh.hop_limit = 8;
	ck_assert_int_eq(call(DROCE_CTRL_CREATE_AH, &a, sizeof(a), &ar, &len), 0);
	for (k = 0; k < 2; k++)
		w_qp_new(&q[k], crep.cq_handle);
	/* one client's QPs in a row: one on each engine */
	ck_assert_uint_ne(q[0].r.engine, q[1].r.engine);

	atomic_store(&w_stop, false);
	for (k = 0; k < 2; k++)
		ck_assert_int_eq(pthread_create(&th[k], NULL, w_engine, droce_dev_engine(dev, k)), 0);
	while (q[0].done < W_MSGS || q[1].done < W_MSGS) {
		uint32_t prod;

		for (k = 0; k < 2; k++) {
			in_flight = q[0].posted + q[1].posted - q[0].done - q[1].done;
			/* room in the SQ ring and, for its completion, in the CQ */
			if (q[k].posted < W_MSGS && in_flight < W_CQE &&
			    q[k].posted - droce_shm_load_cons(q[k].sq) < q[k].r.sq_nslots)
				w_post(&q[k], k, ar.ah_handle);
		}
		prod = droce_shm_load_prod(ring);
		ck_assert_uint_le(prod - cons, W_CQE);
		for (; cons != prod; cons++) {
			const struct droce_shm_cqe *e = droce_shm_slot(ring, cons);
			unsigned int qi = (unsigned int)(e->wr_id >> 32);

			/* each QP's completions in order, each once, on its own QPN */
			if (qi > 1 || (uint32_t)e->wr_id != q[qi].done || e->status != IBV_WC_SUCCESS ||
			    e->qp_num != q[qi].r.qp_num) {
				bad++;
				continue;
			}
			q[qi].done++;
		}
		droce_shm_release(ring, cons);
		if (bad > 0)
			break;
	}
	atomic_store(&w_stop, true);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(q[0].done, W_MSGS);
	ck_assert_uint_eq(q[1].done, W_MSGS);
	ck_assert_uint_eq(droce_shm_load_prod(ring), cons);	/* none extra */
	ck_assert_uint_eq(atomic_load(&ring->error), 0);
	ck_assert_uint_eq(frames_out, 2 * W_MSGS);
	droce_dev_stats(dev, &st);
	ck_assert_uint_eq(st.cnt[DROCE_DEV_CNT_BAD_WQE], 0);
	ck_assert_uint_eq(st.cnt[DROCE_DEV_CNT_BAD_RING], 0);
	ck_assert_uint_eq(st.engine_qps[0], 1);
	ck_assert_uint_eq(st.engine_qps[1], 1);
	for (k = 0; k < 2; k++) {
		munmap(q[k].sq, q[k].r.sq_map_len);
		munmap(q[k].db, hello_rep.db_map_len);
	}
	munmap(ring, crep.map_len);
}
END_TEST

static void
setup_workers(void)
{
	dev_up(2);
}

TCase *
verbs_tcase_workers(void)
{
	TCase *tc = tcase_create("workers");

	tcase_add_checked_fixture(tc, setup_workers, teardown);
	tcase_add_test(tc, one_cq_fed_by_two_engines_at_once);
	tcase_set_timeout(tc, 120);
	return tc;
}

TCase *
verbs_tcase_reclaim(void)
{
	TCase *tc = tcase_create("reclaim");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, deregistered_mr_unmapped_after_a_quiescent_point);
	return tc;
}

TCase *
verbs_tcase_ah_destroy(void)
{
	TCase *tc = tcase_create("ah_destroy");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ud_send_posted_before_its_ah_is_destroyed_goes_out);
	return tc;
}

TCase *
verbs_tcase_qpn_held(void)
{
	TCase *tc = tcase_create("qpn_held");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, held_qpns_skipped);
	return tc;
}
