/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The harness of tests/verbs/ (see verbs_test.h): device setup, the TCP
 * link between driver and agent, event-mode waits, and the agent's command
 * loop. The agent keeps its objects in small arrays indexed by the ids it
 * hands the driver. Single-threaded on both sides.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "verbs_test.h"

#define VT_PORT		18613		/* TCP port of the agent */
#define VT_MAX_OBJ	64

struct vt_env vt = { .sock = -1 };
static bool vt_is_agent;

bool
vt_check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("ok   %s\n", name);
		return true;
	}
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	vt.failures++;
	return false;
}

void
vt_require(bool ok, const char *what)
{
	if (ok)
		return;
	printf("FAIL setup: %s (%s)\n", what, strerror(errno));
	exit(2);
}

/* ---- objects ---- */

struct ibv_cq *
vt_cq(int cqe)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(vt.ctx);
	struct ibv_cq *cq;

	vt_require(ch != NULL, "create_comp_channel");
	cq = ibv_create_cq(vt.ctx, cqe, NULL, ch, 0);
	vt_require(cq != NULL, "create_cq");
	return cq;
}

struct ibv_qp *
vt_qp_ex(enum ibv_qp_type type, struct ibv_cq *cq, uint64_t send_ops_flags)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = vt.pd,
	};

	if (send_ops_flags != 0) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = send_ops_flags;
	}
	return ibv_create_qp_ex(vt.ctx, &init);
}

struct ibv_qp *
vt_qp(enum ibv_qp_type type, struct ibv_cq *cq)
{
	struct ibv_qp *qp = vt_qp_ex(type, cq, 0);

	vt_require(qp != NULL, "create_qp");
	return qp;
}

void
vt_qp_up(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid)
{
	vt_qp_up_to(qp, dest_qpn, dgid, IBV_QPS_RTS);
}

void
vt_qp_up_to(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
	    enum ibv_qp_state last)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = VT_QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (qp->qp_type == IBV_QPT_UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	vt_require(ibv_modify_qp(qp, &a, mask) == 0, "modify_qp INIT");
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dest_qpn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.sgid_index = (uint8_t)vt.gid_index;
		a.ah_attr.grh.hop_limit = 8;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (qp->qp_type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	vt_require(ibv_modify_qp(qp, &a, mask) == 0, "modify_qp RTR");
	if (last == IBV_QPS_RTS)
		vt_qp_rts(qp);
}

void
vt_qp_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type == IBV_QPT_RC) {
		/*
		 * perftest's ACK timeout (67 ms) and 7 retries: about 0.5 s.
		 * 16.8 ms and 3 retries gave a daemon 67 ms in all, and one
		 * sanitized on two loaded cores once stalled that long
		 * (RETRY_EXC_ERR in reg_mr_threads, CI stage 3)
		 */
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 3;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	vt_require(ibv_modify_qp(qp, &a, mask) == 0, "modify_qp RTS");
}

struct ibv_ah *
vt_ah(const union ibv_gid *dgid)
{
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = (uint8_t)vt.gid_index, .hop_limit = 8 },
	};
	struct ibv_ah *ah = ibv_create_ah(vt.pd, &attr);

	vt_require(ah != NULL, "create_ah");
	return ah;
}

struct ibv_mr *
vt_mr(size_t len, unsigned int access)
{
	void *buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	struct ibv_mr *mr;

	vt_require(buf != NULL, "aligned_alloc");
	memset(buf, 0, len);
	mr = ibv_reg_mr(vt.pd, buf, len, (int)access);
	vt_require(mr != NULL, "reg_mr");
	return mr;
}

bool
vt_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	struct pollfd pfd = { .fd = cq->channel->fd, .events = POLLIN };
	struct ibv_cq *ecq;
	void *ectx;

	for (;;) {
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return true;
		vt_require(ibv_req_notify_cq(cq, 0) == 0, "req_notify_cq");
		/* a completion between the poll and the arm raised no event */
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return true;
		if (poll(&pfd, 1, ms) != 1)
			return false;
		vt_require(ibv_get_cq_event(cq->channel, &ecq, &ectx) == 0, "get_cq_event");
		ibv_ack_cq_events(ecq, 1);
	}
}

int
vt_post_wait(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	wr->next = NULL;
	if (ibv_post_send(qp, wr, &bad) != 0)
		return -1;
	return vt_wait(qp->send_cq, &wc, VT_WAIT_MS) ? (int)wc.status : -1;
}

void
vt_recv(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	vt_require(ibv_post_recv(qp, &wr, &bad) == 0, "post_recv");
}

/* ---- the link ---- */

static void
link_io(bool out, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = out ? send(vt.sock, p, len, MSG_NOSIGNAL) : recv(vt.sock, p, len, 0);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (!out && n == 0 && vt_is_agent)
				exit(0);	/* the driver is done */
			vt_require(false, "peer link");
		}
		p += n;
		len -= (size_t)n;
	}
}

struct vt_msg
vt_call(uint32_t cmd, uint32_t id, const uint64_t *a, unsigned int na, const void *data,
	size_t len)
{
	struct vt_msg m = { .cmd = cmd, .id = id };

	if (na > 0)
		memcpy(m.a, a, na * sizeof(*a));
	if (len > 0)
		memcpy(m.data, data, len < VT_DATA ? len : VT_DATA);
	link_io(true, &m, sizeof(m));
	link_io(false, &m, sizeof(m));
	return m;
}

struct vt_remote_qp
vt_remote_qp(struct ibv_qp *qp)
{
	return vt_remote_qp_to(qp, IBV_QPS_RTS);
}

struct vt_remote_qp
vt_remote_qp_to(struct ibv_qp *qp, enum ibv_qp_state last)
{
	uint64_t a[2] = { qp->qp_type };
	struct vt_remote_qp r;
	struct vt_msg m = vt_call(VT_QP_NEW, 0, a, 1, NULL, 0);

	vt_require(m.status == 0, "remote QP");
	r.id = m.id;
	r.qpn = (uint32_t)m.a[0];
	memcpy(&r.gid, m.data, sizeof(r.gid));
	a[0] = qp->qp_num;
	m = vt_call(VT_QP_UP, r.id, a, 1, &vt.gid, sizeof(vt.gid));
	vt_require(m.status == 0, "remote QP up");
	vt_qp_up_to(qp, r.qpn, &r.gid, last);
	return r;
}

struct vt_remote_mr
vt_remote_mr(size_t len, unsigned int access)
{
	uint64_t a[2] = { len, access };
	struct vt_msg m = vt_call(VT_MR_REG, 0, a, 2, NULL, 0);

	vt_require(m.status == 0, "remote MR");
	return (struct vt_remote_mr){ .id = m.id, .addr = m.a[0], .rkey = (uint32_t)m.a[1],
				      .lkey = (uint32_t)m.a[2] };
}

struct vt_pair
vt_pair(enum ibv_qp_type type, uint64_t send_ops_flags)
{
	struct vt_pair p = { .cq = vt_cq(64) };

	p.qp = vt_qp_ex(type, p.cq, send_ops_flags);
	vt_require(p.qp != NULL, "create_qp_ex");
	p.x = send_ops_flags != 0 ? ibv_qp_to_qp_ex(p.qp) : NULL;
	p.r = vt_remote_qp(p.qp);
	return p;
}

/* Move @p qp to RESET (from any state) and drop what its CQ holds. */
static void
qp_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;

	vt_require(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "modify_qp RESET");
	while (ibv_poll_cq(qp->send_cq, 1, &wc) == 1)
		;
	while (ibv_poll_cq(qp->recv_cq, 1, &wc) == 1)
		;
}

void
vt_pair_restate(struct vt_pair *p)
{
	uint64_t a[1] = { p->qp->qp_num };

	qp_reset(p->qp);
	vt_require(vt_call(VT_QP_UP, p->r.id, a, 1, &vt.gid, sizeof(vt.gid)).status == 0,
		   "remote QP restated");
	vt_qp_up(p->qp, p->r.qpn, &p->r.gid);
}

void
vt_remote_recv(const struct vt_remote_qp *r, uint32_t mr_id, uint64_t off, uint32_t len,
	       uint64_t wr_id)
{
	uint64_t a[4] = { mr_id, off, len, wr_id };

	vt_require(vt_call(VT_RECV, r->id, a, 4, NULL, 0).status == 0, "remote recv");
}

enum ibv_qp_state
vt_remote_qp_state(const struct vt_remote_qp *r)
{
	struct vt_msg m = vt_call(VT_QP_STATE, r->id, NULL, 0, NULL, 0);

	vt_require(m.status == 0, "remote query_qp");
	return (enum ibv_qp_state)m.a[0];
}

struct vt_msg
vt_remote_poll(const struct vt_remote_qp *r, int ms)
{
	uint64_t a[1] = { (uint64_t)ms };

	return vt_call(VT_POLL, r->id, a, 1, NULL, 0);
}

int
vt_remote_rdma(const struct vt_pair *p, enum ibv_wr_opcode op, uint32_t mr_id, uint64_t addr,
	       uint32_t rkey, uint32_t len)
{
	uint64_t a[7] = { op, 1, mr_id, 0, len, addr, rkey };

	return vt_call(VT_SEND, p->r.id, a, 7, NULL, 0).status;
}

int
vt_remote_send(const struct vt_pair *p, enum ibv_wr_opcode op, uint32_t mr_id, uint32_t imm,
	       uint32_t len, unsigned int flags)
{
	uint64_t a[8] = { op, imm, mr_id, 0, len, 0, 0, flags };

	return vt_call(VT_SEND, p->r.id, a, 8, NULL, 0).status;
}

void
vt_remote_fill(uint32_t id, uint64_t off, uint64_t len, uint8_t byte)
{
	uint64_t a[3] = { off, len, byte };

	vt_require(vt_call(VT_MR_FILL, id, a, 3, NULL, 0).status == 0, "remote fill");
}

void
vt_remote_read(uint32_t id, uint64_t off, void *out, size_t len)
{
	uint64_t a[2] = { off, len };
	struct vt_msg m = vt_call(VT_MR_READ, id, a, 2, NULL, 0);

	vt_require(m.status == 0 && len <= VT_DATA, "remote read");
	memcpy(out, m.data, len);
}

/* ---- the agent ---- */

static struct {
	struct ibv_mr *mr[VT_MAX_OBJ];
	struct ibv_qp *qp[VT_MAX_OBJ];
	struct ibv_mw *mw[VT_MAX_OBJ];
	struct ibv_ah *ah[VT_MAX_OBJ];	/* UD: towards the driver's GID */
	uint32_t dqpn[VT_MAX_OBJ];	/* the driver's QP each one was brought up towards */
	unsigned int nmr, nqp, nmw;
} ag;

#define AG_GET(kind, i) ((i) < VT_MAX_OBJ ? ag.kind[i] : NULL)

static void
agent_poll(struct vt_msg *m)
{
	struct ibv_qp *qp = AG_GET(qp, m->id);
	struct ibv_wc wc;

	if (qp == NULL || !vt_wait(qp->recv_cq, &wc, (int)m->a[0])) {
		m->status = ETIMEDOUT;
		return;
	}
	m->a[VT_WC_STATUS] = wc.status;
	m->a[VT_WC_OPCODE] = wc.opcode;
	m->a[VT_WC_FLAGS] = wc.wc_flags;
	m->a[VT_WC_IMM] = wc.imm_data;	/* network order, and invalidated_rkey shares it */
	m->a[VT_WC_LEN] = wc.byte_len;
	m->a[VT_WC_INV_RKEY] = wc.invalidated_rkey;
	m->a[VT_WC_SRC_QP] = wc.src_qp;
	m->a[VT_WC_ID] = wc.wr_id;
}

static void
agent_bind(struct vt_msg *m)
{
	struct ibv_mw *mw = AG_GET(mw, m->id);
	struct ibv_qp *qp = AG_GET(qp, m->a[0]);
	struct ibv_mr *mr = AG_GET(mr, m->a[1]);
	struct ibv_mw_bind_info bi;
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW };

	if (mw == NULL || qp == NULL || mr == NULL) {
		m->status = EINVAL;
		return;
	}
	bi = (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)mr->addr + m->a[2],
					.length = m->a[3], .mw_access_flags = (unsigned int)m->a[4] };
	if (mw->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .send_flags = IBV_SEND_SIGNALED, .bind_info = bi };
		struct ibv_wc wc;

		m->status = ibv_bind_mw(qp, mw, &b);
		if (m->status == 0)
			m->status = vt_wait(qp->send_cq, &wc, VT_WAIT_MS) ? (int)wc.status : -1;
		m->a[0] = mw->rkey;
		return;
	}
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = bi;
	m->status = vt_post_wait(qp, &wr);
	m->a[0] = wr.bind_mw.rkey;
}

static void
agent_send(struct vt_msg *m)
{
	struct ibv_qp *qp = AG_GET(qp, m->id);
	struct ibv_mr *mr = AG_GET(mr, m->a[2]);
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .opcode = (enum ibv_wr_opcode)m->a[0],
				  .send_flags = (unsigned int)m->a[7] };

	if (qp == NULL) {
		m->status = EINVAL;
		return;
	}
	if (mr != NULL && m->a[4] > 0) {
		sge = (struct ibv_sge){ (uintptr_t)mr->addr + m->a[3], (uint32_t)m->a[4], mr->lkey };
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	if (wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = m->a[5];
		wr.wr.atomic.rkey = (uint32_t)m->a[6];
		wr.wr.atomic.compare_add = m->a[1];
	} else {
		wr.wr.rdma.remote_addr = m->a[5];
		wr.wr.rdma.rkey = (uint32_t)m->a[6];
	}
	if (qp->qp_type == IBV_QPT_UD) {	/* to the driver's QP */
		wr.wr.ud.ah = ag.ah[m->id];
		wr.wr.ud.remote_qpn = ag.dqpn[m->id];
		wr.wr.ud.remote_qkey = VT_QKEY;
	}
	if (wr.opcode == IBV_WR_SEND_WITH_IMM || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl((uint32_t)m->a[1]);
	else
		wr.invalidate_rkey = (uint32_t)m->a[1];
	m->status = vt_post_wait(qp, &wr);
}

static void
agent_do(struct vt_msg *m)
{
	uint32_t id = m->id;

	m->status = 0;
	switch (m->cmd) {
	case VT_MR_REG: {
		struct ibv_mr *mr;

		if (ag.nmr == VT_MAX_OBJ) {
			m->status = ENOMEM;
			break;
		}
		mr = vt_mr(m->a[0], (unsigned int)m->a[1]);
		m->id = ag.nmr;
		ag.mr[ag.nmr++] = mr;
		m->a[0] = (uintptr_t)mr->addr;
		m->a[1] = mr->rkey;
		m->a[2] = mr->lkey;
		break;
	}
	case VT_MR_READ:
	case VT_MR_FILL: {
		struct ibv_mr *mr = AG_GET(mr, id);

		if (mr == NULL || m->a[0] > mr->length || m->a[1] > mr->length - m->a[0] ||
		    (m->cmd == VT_MR_READ && m->a[1] > VT_DATA)) {
			m->status = EINVAL;
			break;
		}
		if (m->cmd == VT_MR_READ)
			memcpy(m->data, (char *)mr->addr + m->a[0], m->a[1]);
		else
			memset((char *)mr->addr + m->a[0], (int)m->a[2], m->a[1]);
		break;
	}
	case VT_MR_DEREG:
		m->status = AG_GET(mr, id) ? ibv_dereg_mr(ag.mr[id]) : EINVAL;
		if (m->status == 0)
			ag.mr[id] = NULL;
		break;
	case VT_QP_NEW:
		if (ag.nqp == VT_MAX_OBJ) {
			m->status = ENOMEM;
			break;
		}
		m->id = ag.nqp;
		ag.qp[ag.nqp] = vt_qp((enum ibv_qp_type)m->a[0], vt_cq(64));
		m->a[0] = ag.qp[ag.nqp++]->qp_num;
		memcpy(m->data, &vt.gid, sizeof(vt.gid));
		break;
	case VT_QP_UP: {
		union ibv_gid g;

		if (AG_GET(qp, id) == NULL) {
			m->status = EINVAL;
			break;
		}
		memcpy(&g, m->data, sizeof(g));
		if (ag.qp[id]->state != IBV_QPS_RESET)
			qp_reset(ag.qp[id]);
		vt_qp_up(ag.qp[id], (uint32_t)m->a[0], &g);
		ag.dqpn[id] = (uint32_t)m->a[0];
		if (ag.qp[id]->qp_type == IBV_QPT_UD && ag.ah[id] == NULL)
			ag.ah[id] = vt_ah(&g);
		break;
	}
	case VT_RECV: {
		struct ibv_mr *mr = AG_GET(mr, m->a[0]);

		if (AG_GET(qp, id) == NULL || mr == NULL) {
			m->status = EINVAL;
			break;
		}
		vt_recv(ag.qp[id], m->a[3], (uintptr_t)mr->addr + m->a[1], (uint32_t)m->a[2],
			mr->lkey);
		break;
	}
	case VT_POLL:
		agent_poll(m);
		break;
	case VT_MW_ALLOC: {
		struct ibv_mw *mw;

		if (ag.nmw == VT_MAX_OBJ) {
			m->status = ENOMEM;
			break;
		}
		mw = ibv_alloc_mw(vt.pd, (enum ibv_mw_type)m->a[0]);
		if (mw == NULL) {
			m->status = errno;
			break;
		}
		m->id = ag.nmw;
		ag.mw[ag.nmw++] = mw;
		m->a[0] = mw->rkey;
		break;
	}
	case VT_MW_BIND:
		agent_bind(m);
		break;
	case VT_MW_DEALLOC:
		m->status = AG_GET(mw, id) ? ibv_dealloc_mw(ag.mw[id]) : EINVAL;
		if (m->status == 0)
			ag.mw[id] = NULL;
		break;
	case VT_SEND:
		agent_send(m);
		break;
	case VT_MCAST: {
		union ibv_gid g;

		memcpy(&g, m->data, sizeof(g));
		if (AG_GET(qp, id) == NULL)
			m->status = EINVAL;
		else
			m->status = m->a[0] ? ibv_attach_mcast(ag.qp[id], &g, 0) :
					      ibv_detach_mcast(ag.qp[id], &g, 0);
		break;
	}
	case VT_QP_STATE: {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		m->status = AG_GET(qp, id) ? ibv_query_qp(ag.qp[id], &a, IBV_QP_STATE, &ia) :
					     EINVAL;
		m->a[0] = a.qp_state;
		break;
	}
	default:
		m->status = EINVAL;
		break;
	}
}

static int
agent(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(VT_PORT) };
	int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
	struct pollfd pfd = { .fd = ls, .events = POLLIN };

	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	vt_require(bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(ls, 1) == 0,
		   "listen");
	printf("agent listening\n");
	fflush(stdout);
	vt_require(poll(&pfd, 1, 60000) == 1, "no driver came");
	vt.sock = accept(ls, NULL, NULL);
	vt_require(vt.sock >= 0, "accept");
	close(ls);
	for (;;) {
		struct vt_msg m;

		link_io(false, &m, sizeof(m));
		if (m.cmd == VT_QUIT)
			return 0;
		agent_do(&m);
		link_io(true, &m, sizeof(m));
	}
}

static void
link_connect(const char *host)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(VT_PORT) };
	int i, one = 1;

	vt_require(inet_pton(AF_INET, host, &sa.sin_addr) == 1, "agent address");
	for (i = 0; i < 100; i++) {	/* the agent may still be starting: 10 s */
		vt.sock = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(vt.sock, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(vt.sock);
		vt.sock = -1;
		usleep(100000);
	}
	vt_require(vt.sock >= 0, "connect to the agent");
	setsockopt(vt.sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int
vt_main(int argc, char **argv, void (*drive)(void))
{
	struct ibv_device **list;
	const char *gi = getenv("DROCE_GID_INDEX");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2 || (strcmp(argv[1], "serve") != 0 &&
			 (strcmp(argv[1], "drive") != 0 || argc < 3))) {
		fprintf(stderr, "usage: %s serve | drive AGENT_IPV4\n", argv[0]);
		return 2;
	}
	vt.gid_index = gi != NULL ? atoi(gi) : 1;
	list = ibv_get_device_list(NULL);
	vt_require(list != NULL && list[0] != NULL, "no device");
	vt.ctx = ibv_open_device(list[0]);
	vt_require(vt.ctx != NULL, "open_device");
	ibv_free_device_list(list);
	vt.pd = ibv_alloc_pd(vt.ctx);
	vt_require(vt.pd != NULL, "alloc_pd");
	vt_require(ibv_query_gid(vt.ctx, 1, vt.gid_index, &vt.gid) == 0, "query_gid");
	if (strcmp(argv[1], "serve") == 0) {
		vt_is_agent = true;
		return agent();
	}
	link_connect(argv[2]);
	drive();
	{
		struct vt_msg quit = { .cmd = VT_QUIT };

		link_io(true, &quit, sizeof(quit));
	}
	return vt.failures ? 1 : 0;
}
