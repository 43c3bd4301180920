/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_alloc_td(3) and ibv_alloc_parent_domain(3): thread domains, and
 * parent domains that carry them. A parent domain stands in for its PD
 * everywhere (MRs, QPs, CQs, SRQs); memory of the base PD and of the parent
 * domain is one protection domain, another PD's is not; objects on a
 * parent domain with a thread domain (no internal locking) move data like
 * any other; deallocation in the wrong order fails with EBUSY. Custom
 * allocators are refused (EOPNOTSUPP, doc/verbs.md says why).
 */

#include <errno.h>
#include <string.h>

#include "verbs_test.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static int pd_context_marker;

static void *
never_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align, uint64_t type)
{
	(void)pd;
	(void)ctx;
	(void)size;
	(void)align;
	(void)type;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void
never_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	(void)pd;
	(void)ctx;
	(void)ptr;
	(void)type;
}

static struct ibv_pd *
parent(struct ibv_pd *pd, struct ibv_td *td, uint32_t comp_mask)
{
	struct ibv_parent_domain_init_attr a = {
		.pd = pd, .td = td, .comp_mask = comp_mask,
		.alloc = never_alloc, .free = never_free, .pd_context = &pd_context_marker,
	};

	errno = 0;
	return ibv_alloc_parent_domain(vt.ctx, &a);
}

static struct ibv_cq_ex *
cq_on(struct ibv_pd *pd, struct ibv_comp_channel *ch)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64, .channel = ch, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pd,
	};

	errno = 0;
	return ibv_create_cq_ex(vt.ctx, &a);
}

static void
arguments(void)
{
	struct ibv_td *td;
	struct ibv_pd *pdom;

	errno = 0;
	vt_check(ibv_alloc_td(vt.ctx, &(struct ibv_td_init_attr){ .comp_mask = 1 }) == NULL &&
		 errno == EINVAL, "ibv_alloc_td with an unknown comp_mask bit: EINVAL",
		 "errno %d", errno);
	td = ibv_alloc_td(vt.ctx, &(struct ibv_td_init_attr){ 0 });
	vt_check(td != NULL && td->context == vt.ctx, "ibv_alloc_td gives a thread domain",
		 "errno %d", errno);
	vt_check(parent(NULL, td, 0) == NULL && errno == EINVAL,
		 "a parent domain needs a PD (NULL: EINVAL)", "errno %d", errno);
	vt_check(parent(vt.pd, td, 1u << 7) == NULL && errno == EINVAL,
		 "an unknown comp_mask bit: EINVAL", "errno %d", errno);
	vt_check(parent(vt.pd, td, IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) == NULL &&
		 errno == EOPNOTSUPP, "custom allocators: EOPNOTSUPP (droced owns the rings)",
		 "errno %d", errno);
	pdom = parent(vt.pd, NULL, 0);
	vt_check(pdom != NULL && pdom->context == vt.ctx,
		 "a parent domain without a thread domain (td NULL)", "errno %d", errno);
	vt_check(parent(pdom, NULL, 0) == NULL && errno == EINVAL,
		 "a parent domain of a parent domain: EINVAL", "errno %d", errno);
	vt_check(pdom == NULL || ibv_dealloc_pd(pdom) == 0, "ibv_dealloc_pd frees it", "failed");
	vt_check(td == NULL || ibv_dealloc_td(td) == 0, "ibv_dealloc_td returns 0", "failed");
}

/* A CQ on a plain PD, or without a parent domain, is refused; one on a parent domain works. */
static void
cq_parent(struct ibv_pd *pdom)
{
	struct ibv_cq_ex *cq;

	vt_check(cq_on(vt.pd, NULL) == NULL && errno == EINVAL,
		 "ibv_create_cq_ex: parent_domain must be a parent domain (a PD: EINVAL)",
		 "errno %d", errno);
	vt_check(cq_on(NULL, NULL) == NULL && errno == EINVAL,
		 "ibv_create_cq_ex: IBV_CQ_INIT_ATTR_MASK_PD with NULL: EINVAL", "errno %d", errno);
	cq = cq_on(pdom, NULL);
	vt_check(cq != NULL, "ibv_create_cq_ex on a parent domain", "errno %d", errno);
	if (cq != NULL)
		vt_check(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "and destroyed", "failed");
}

/*
 * Data through a QP, its CQ and an SRQ all created on a parent domain with a
 * thread domain: the lockless paths. The QP's PD is the parent domain; an MR
 * of the base PD is as good as one of the parent domain's, another PD's MR
 * is a protection error.
 */
static void
traffic(struct ibv_pd *pdom)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(vt.ctx);
	struct vt_remote_mr rmr = vt_remote_mr(4096, RW);
	struct ibv_pd *base = vt.pd, *other = ibv_alloc_pd(vt.ctx);
	struct ibv_mr *pmr, *bmr, *omr;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct ibv_srq *srq;
	struct ibv_cq_ex *cqx;
	struct vt_pair p;
	struct ibv_wc wc;
	char got[64];

	vt_require(ch != NULL && other != NULL, "channel, second PD");
	cqx = cq_on(pdom, ch);
	vt_require(cqx != NULL, "CQ on the parent domain");
	p.cq = ibv_cq_ex_to_cq(cqx);
	vt.pd = pdom;	/* vt_qp_ex() and vt_mr() create on it */
	p.qp = vt_qp_ex(IBV_QPT_RC, p.cq, IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND);
	vt_require(p.qp != NULL, "QP on the parent domain");
	pmr = vt_mr(4096, RW);
	vt.pd = base;
	bmr = vt_mr(4096, RW);
	omr = ibv_reg_mr(other, bmr->addr, 4096, RW);
	vt_require(omr != NULL, "MR of the other PD");
	p.x = ibv_qp_to_qp_ex(p.qp);
	p.r = vt_remote_qp(p.qp);

	vt_check(pmr->pd == pdom, "an MR registered on the parent domain reports it as its pd",
		 "pd %p", (void *)pmr->pd);
	vt_check(ibv_query_qp(p.qp, &qa, IBV_QP_STATE, &init) == 0 && init.qp_type == IBV_QPT_RC &&
		 p.qp->pd == pdom, "the QP's pd is the parent domain", "pd %p", (void *)p.qp->pd);

	/* ibv_wr_* on the lockless SQ: a WRITE from the parent domain's MR */
	memset(pmr->addr, 0x5a, 64);
	ibv_wr_start(p.x);
	p.x->wr_id = 1;
	p.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(p.x, rmr.rkey, rmr.addr);
	ibv_wr_set_sge(p.x, pmr->lkey, (uintptr_t)pmr->addr, 64);
	vt_check(ibv_wr_complete(p.x) == 0 && vt_wait(p.cq, &wc, VT_WAIT_MS) &&
		 wc.status == IBV_WC_SUCCESS && wc.wr_id == 1,
		 "ibv_wr_rdma_write on a QP with a thread domain completes", "status %d", wc.status);
	vt_remote_read(rmr.id, 0, got, 64);
	vt_check(got[0] == 0x5a && got[63] == 0x5a, "and the peer holds the data", "got %02x",
		 (unsigned char)got[0]);

	/* ibv_post_send, from an MR of the base PD: the same protection domain */
	memset(bmr->addr, 0x3c, 64);
	{
		struct ibv_sge sge = { (uintptr_t)bmr->addr, 64, bmr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.wr.rdma = { rmr.addr + 64, rmr.rkey },
		};

		vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_SUCCESS,
			 "an MR of the base PD works on a QP of its parent domain", "failed");
		vt_remote_read(rmr.id, 64, got, 64);
		vt_check(got[0] == 0x3c, "and its data arrives", "got %02x", (unsigned char)got[0]);
	}

	/* the lockless RQ: the agent SENDs into it */
	vt_recv(p.qp, 7, (uintptr_t)pmr->addr + 1024, 256, pmr->lkey);
	vt_remote_fill(rmr.id, 0, 32, 0x77);
	vt_check(vt_remote_send(&p, IBV_WR_SEND, rmr.id, 0, 32, 0) == IBV_WC_SUCCESS &&
		 vt_wait(p.cq, &wc, VT_WAIT_MS) && wc.wr_id == 7 && wc.status == IBV_WC_SUCCESS &&
		 wc.byte_len == 32 && ((unsigned char *)pmr->addr)[1024 + 31] == 0x77,
		 "a receive posted on a QP with a thread domain gets the peer's SEND", "failed");

	/* last: the error moves the QP to ERR */
	{
		struct ibv_sge sge = { (uintptr_t)bmr->addr, 64, omr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.wr.rdma = { rmr.addr + 64, rmr.rkey },
		};

		vt_check(vt_post_wait(p.qp, &wr) == IBV_WC_LOC_PROT_ERR,
			 "an MR of another PD: IBV_WC_LOC_PROT_ERR", "other status");
	}

	/* an SRQ on the parent domain takes receives without its lock */
	srq = ibv_create_srq(pdom, &(struct ibv_srq_init_attr){ .attr = { .max_wr = 8,
									    .max_sge = 1 } });
	vt_check(srq != NULL && srq->pd == pdom, "ibv_create_srq on a parent domain",
		 "errno %d", errno);
	if (srq != NULL) {
		struct ibv_sge sge = { (uintptr_t)pmr->addr, 64, pmr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *bad;

		vt_check(ibv_post_srq_recv(srq, &rw, &bad) == 0, "ibv_post_srq_recv on it", "failed");
	}

	/* the order of deallocation */
	vt_check(ibv_dealloc_pd(pdom) == EBUSY, "ibv_dealloc_pd of a parent domain in use: EBUSY",
		 "not EBUSY");
	vt_check(ibv_dealloc_pd(base) == EBUSY, "ibv_dealloc_pd of a PD a parent domain extends: "
		 "EBUSY", "not EBUSY");
	vt_check(ibv_destroy_qp(p.qp) == 0 && (srq == NULL || ibv_destroy_srq(srq) == 0) &&
		 ibv_destroy_cq(p.cq) == 0, "its QP, SRQ and CQ destroyed", "failed");
	vt_require(ibv_dereg_mr(pmr) == 0 && ibv_dereg_mr(bmr) == 0 && ibv_dereg_mr(omr) == 0 &&
		   ibv_dealloc_pd(other) == 0 && ibv_destroy_comp_channel(ch) == 0, "cleanup");
}

static void
drive(void)
{
	struct ibv_td *td;
	struct ibv_pd *pdom;

	arguments();
	td = ibv_alloc_td(vt.ctx, &(struct ibv_td_init_attr){ 0 });
	vt_require(td != NULL, "alloc_td");
	pdom = parent(vt.pd, td, IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT);
	vt_check(pdom != NULL, "ibv_alloc_parent_domain with a PD, a thread domain and pd_context",
		 "errno %d", errno);
	if (pdom == NULL)
		return;
	vt_check(ibv_dealloc_td(td) == EBUSY, "ibv_dealloc_td while a parent domain holds it: EBUSY",
		 "not EBUSY");
	cq_parent(pdom);
	traffic(pdom);
	vt_check(ibv_dealloc_pd(pdom) == 0, "then the parent domain deallocates", "failed");
	vt_check(ibv_dealloc_td(td) == 0, "then the thread domain", "failed");
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
