/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_attach_mcast(3) and ibv_detach_mcast(3): UD QPs only (others
 * EINVAL); a message to the group reaches a receiver on the agent's
 * daemon (the other one, or ours with --single) and one on the sender's
 * own daemon exactly once, also when attached twice; detaching stops
 * delivery at once; IPv4-mapped and IPv6 groups. Longer runs, IGMP/MLD
 * and many groups: tests/integration/mcast.sh, tests/pmd.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_test.h"

#define QUIET_MS 300

static struct ibv_mr *lmr;
static struct vt_remote_mr rmr;

static union ibv_gid
mgid(const char *text)
{
	union ibv_gid g;

	vt_require(inet_pton(AF_INET6, text, g.raw) == 1, "MGID");
	return g;
}

/* An address handle towards group @p g from a GID of the same family. */
static struct ibv_ah *
group_ah(const union ibv_gid *g)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	bool v4 = memcmp(g->raw, v4mapped, 12) == 0;
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1, .grh = { .dgid = *g,
									  .hop_limit = 8 } };
	union ibv_gid s;
	int i;

	for (i = 0; i < 16 && ibv_query_gid(vt.ctx, 1, i, &s) == 0; i++)
		if (s.global.interface_id != 0 && (memcmp(s.raw, v4mapped, 12) == 0) == v4)
			break;
	attr.grh.sgid_index = (uint8_t)i;
	return ibv_create_ah(vt.pd, &attr);
}

static int
remote_mcast(const struct vt_pair *p, const union ibv_gid *g, bool attach)
{
	uint64_t a[1] = { attach };

	return vt_call(VT_MCAST, p->r.id, a, 1, g, sizeof(*g)).status;
}

static void
send_group(struct vt_pair *p, struct ibv_ah *ah, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)lmr->addr, 16, lmr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_SEND, .sg_list = &sge,
				  .num_sge = 1,
				  .wr.ud = { .ah = ah, .remote_qpn = 0xffffff,
					     .remote_qkey = VT_QKEY } };

	vt_require(vt_post_wait(p->qp, &wr) == IBV_WC_SUCCESS, "multicast send");
}

/* Completions on @p cq within QUIET_MS after the first (which may take VT_WAIT_MS). */
static int
local_copies(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n = 0;

	while (vt_wait(cq, &wc, n == 0 ? 1000 : QUIET_MS))
		n += wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV;
	return n;
}

static int
remote_copies(const struct vt_pair *p)
{
	int n = 0;

	while (vt_remote_poll(&p->r, n == 0 ? 1000 : QUIET_MS).status == 0)
		n++;
	return n;
}

static void
group(const char *text, const char *fam)
{
	union ibv_gid g = mgid(text);
	struct vt_pair p = vt_pair(IBV_QPT_UD, 0);
	struct ibv_cq *lcq = vt_cq(16);
	struct ibv_qp *local = vt_qp(IBV_QPT_UD, lcq);
	struct ibv_ah *ah = group_ah(&g);
	char name[128];
	int i, n, r;

	vt_require(ah != NULL, "create_ah towards the group");
	vt_qp_up(local, 0, &vt.gid);
	for (i = 0; i < 8; i++) {
		vt_recv(local, (uint64_t)i, (uintptr_t)lmr->addr + 1024 + 128 * (uint64_t)i, 128,
			lmr->lkey);
		vt_remote_recv(&p.r, rmr.id, 128 * (uint64_t)i, 128, (uint64_t)i);
	}
	snprintf(name, sizeof(name), "%s: ibv_attach_mcast of a UD QP returns 0", fam);
	vt_check(ibv_attach_mcast(local, &g, 0) == 0 && remote_mcast(&p, &g, true) == 0, name,
		 "errno %d", errno);
	snprintf(name, sizeof(name), "%s: attaching the same QP twice returns 0", fam);
	vt_check(ibv_attach_mcast(local, &g, 0) == 0, name, "failed");

	send_group(&p, ah, 1);
	n = local_copies(lcq);
	r = remote_copies(&p);
	snprintf(name, sizeof(name), "%s: the sender's own daemon: exactly one copy (attached twice)",
		 fam);
	vt_check(n == 1, name, "%d copies", n);
	snprintf(name, sizeof(name), "%s: the agent's daemon: exactly one copy", fam);
	vt_check(r == 1, name, "%d copies", r);

	snprintf(name, sizeof(name), "%s: ibv_detach_mcast returns 0", fam);
	vt_check(ibv_detach_mcast(local, &g, 0) == 0, name, "errno %d", errno);
	send_group(&p, ah, 2);
	r = remote_copies(&p);
	n = local_copies(lcq);
	snprintf(name, sizeof(name), "%s: detached: no copy at once; still attached: one", fam);
	vt_check(n == 0 && r == 1, name, "local %d remote %d", n, r);
	vt_check(remote_mcast(&p, &g, false) == 0, "the agent detaches", "failed");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(local);
}

static void
qp_types(void)
{
	union ibv_gid g = mgid("::ffff:239.1.1.1");
	struct ibv_cq *cq = vt_cq(8);
	enum ibv_qp_type t[2] = { IBV_QPT_RC, IBV_QPT_UC };
	const char *nm[2] = { "RC", "UC" };
	int i;

	for (i = 0; i < 2; i++) {
		struct ibv_qp *qp = vt_qp(t[i], cq);
		char name[64];

		snprintf(name, sizeof(name), "ibv_attach_mcast of an %s QP is EINVAL", nm[i]);
		vt_check(ibv_attach_mcast(qp, &g, 0) == EINVAL, name, "not EINVAL");
		snprintf(name, sizeof(name), "ibv_detach_mcast of an %s QP is EINVAL", nm[i]);
		vt_check(ibv_detach_mcast(qp, &g, 0) == EINVAL, name, "not EINVAL");
		ibv_destroy_qp(qp);
	}
	{
		struct ibv_qp *qp = vt_qp(IBV_QPT_UD, cq);
		union ibv_gid uni = vt.gid;

		vt_check(ibv_attach_mcast(qp, &uni, 0) == EINVAL,
			 "a unicast GID is no group: EINVAL", "accepted");
		vt_check(ibv_detach_mcast(qp, &g, 0) == EINVAL,
			 "ibv_detach_mcast of a group the QP never joined: EINVAL", "not EINVAL");
		vt_check(ibv_attach_mcast(qp, &g, 0) == 0 && ibv_detach_mcast(qp, &g, 0) == 0 &&
			 ibv_detach_mcast(qp, &g, 0) == EINVAL,
			 "a second ibv_detach_mcast of the same group: EINVAL", "not EINVAL");
		vt_check(ibv_attach_mcast(qp, &g, 0) == 0 && ibv_destroy_qp(qp) == EBUSY,
			 "ibv_destroy_qp of a QP attached to a group fails (EBUSY, ibv_create_qp_ex(3))",
			 "not EBUSY");
		vt_check(ibv_detach_mcast(qp, &g, 0) == 0 && ibv_destroy_qp(qp) == 0,
			 "detached, it is destroyed", "failed");
	}
}

/* A UD QP with its own send and receive CQs, @p create_flags, attached to @p g. */
static struct ibv_qp *
member(const union ibv_gid *g, uint32_t create_flags, struct ibv_cq **rcq, int base)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = vt_cq(8), .recv_cq = vt_cq(16), .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = vt.pd, .create_flags = create_flags,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(vt.ctx, &a);
	union ibv_gid me = vt.gid;
	int i;

	vt_require(qp != NULL, "create_qp_ex UD");
	vt_qp_up(qp, 0, &me);
	for (i = 0; i < 4; i++)
		vt_recv(qp, (uint64_t)i, (uintptr_t)lmr->addr + 2048 + 128 * (uint64_t)(base + i), 128,
			lmr->lkey);
	vt_require(ibv_attach_mcast(qp, g, 0) == 0, "attach");
	*rcq = a.recv_cq;
	return qp;
}

/* @p from sends message @p id to the group; got[i]: the copies on rcq[i]. */
static void
send_and_count(struct ibv_qp *from, struct ibv_ah *ah, uint64_t id, struct ibv_cq *const rcq[3],
	       int got[3])
{
	struct vt_pair sender = { .qp = from };
	int i;

	send_group(&sender, ah, id);
	for (i = 0; i < 3; i++)
		got[i] = local_copies(rcq[i]);
}

/*
 * IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (ibv_create_qp_ex(3)): a sender that is
 * a member gets no copy of its own message with it, one without it; other
 * members get theirs either way. Other creation flags: EOPNOTSUPP.
 */
static void
self_loopback(void)
{
	union ibv_gid g = mgid("::ffff:239.9.9.9");
	struct ibv_cq *rblock, *rplain, *rother;
	struct ibv_qp *block = member(&g, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, &rblock, 0);
	struct ibv_qp *plain = member(&g, 0, &rplain, 4);
	struct ibv_qp *other = member(&g, 0, &rother, 8);
	struct ibv_ah *ah = group_ah(&g);
	struct ibv_cq *const rcq[3] = { rblock, rplain, rother };
	int got[3];

	vt_require(ah != NULL, "group AH");
	send_and_count(block, ah, 1, rcq, got);
	vt_check(got[0] == 0 && got[1] == 1 && got[2] == 1,
		 "BLOCK_SELF_MCAST_LB: the sender gets no copy, the other members one each",
		 "self %d others %d %d", got[0], got[1], got[2]);
	send_and_count(plain, ah, 2, rcq, got);
	vt_check(got[1] == 1 && got[0] == 1 && got[2] == 1,
		 "without it, a member that sends gets its own copy too", "self %d others %d %d",
		 got[1], got[0], got[2]);
	{
		struct ibv_qp_init_attr_ex a = {
			.send_cq = rother, .recv_cq = rother, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
			.pd = vt.pd, .create_flags = IBV_QP_CREATE_SOURCE_QPN,
		};

		errno = 0;
		vt_check(ibv_create_qp_ex(vt.ctx, &a) == NULL && errno == EOPNOTSUPP,
			 "IBV_QP_CREATE_SOURCE_QPN (and the other flags): EOPNOTSUPP", "errno %d",
			 errno);
	}
	vt_require(ibv_detach_mcast(block, &g, 0) == 0 && ibv_detach_mcast(plain, &g, 0) == 0 &&
		   ibv_detach_mcast(other, &g, 0) == 0, "detach");
	ibv_destroy_qp(block);
	ibv_destroy_qp(plain);
	ibv_destroy_qp(other);
	ibv_destroy_ah(ah);
}

static void
drive(void)
{
	lmr = vt_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	rmr = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	memcpy(lmr->addr, "droce multicast!", 16);
	qp_types();
	group("::ffff:239.7.7.7", "IPv4");
	group("ff0e::7:7", "IPv6");
	self_loopback();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
