/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * On-demand paging (ibv_reg_mr(3) IBV_ACCESS_ON_DEMAND, ibv_advise_mr(3),
 * ibv_query_device_ex(3)'s odp_caps): the driver's memory is on demand, the
 * agent reaches it. RC WRITE, READ and SEND/RECV both ways, UC and UD, an
 * SRQ, into a range MR and into the implicit one (the whole address space),
 * every byte checked; memory unmapped under an ODP MR fails the peer's
 * WRITE and READ with IBV_WC_REM_ACCESS_ERR and a local SGE with
 * IBV_WC_LOC_PROT_ERR, the daemon living on (the QPs restated, the next
 * transfer works); an atomic on an ODP MR is a remote access error (odp_caps
 * claim no ATOMIC); ibv_advise_mr's errnos.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_test.h"

#define LEN	60000u		/* 59 packets at a 1024 MTU, 15 at 4096 */
#define MAPLEN	(64u * 1024u)
#define RIGHTS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define ODP	(RIGHTS | IBV_ACCESS_ON_DEMAND)

static struct vt_remote_mr src;		/* the agent's */
static long pg;

static uint8_t
pattern(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 131u ^ i * 7u ^ i >> 8);
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

/* The first byte of @p p that is not pattern @p seed, or -1. */
static long
mismatch(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seed, i))
			return i;
	return -1;
}

/* The agent's MR from offset 0 against pattern @p seed, 256 bytes a call. */
static long
remote_mismatch(uint32_t len, uint32_t seed)
{
	uint8_t b[VT_DATA];
	uint32_t off, i;

	for (off = 0; off < len; off += VT_DATA) {
		uint32_t n = len - off < VT_DATA ? len - off : VT_DATA;

		vt_remote_read(src.id, off, b, n);
		for (i = 0; i < n; i++)
			if (b[i] != pattern(seed, off + i))
				return off + i;
	}
	return -1;
}

static uint8_t *
map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	vt_require(p != MAP_FAILED, "mmap");
	return p;
}

static int
post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, void *addr, uint32_t len, uint32_t lkey,
	  uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op };

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return vt_post_wait(qp, &wr);
}

static int
wait_recv(struct ibv_cq *cq, uint32_t *byte_len)
{
	struct ibv_wc wc;

	if (!vt_wait(cq, &wc, VT_WAIT_MS))
		return -1;
	*byte_len = wc.byte_len;
	return (int)wc.status;
}

static void
check_caps(void)
{
	struct ibv_device_attr_ex dx;
	const uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			    IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_SRQ_RECV;

	memset(&dx, 0, sizeof(dx));
	vt_require(ibv_query_device_ex(vt.ctx, NULL, &dx) == 0, "query_device_ex");
	vt_check(dx.odp_caps.general_caps == (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
		 "odp_caps.general_caps: SUPPORT | SUPPORT_IMPLICIT", "0x%llx",
		 (unsigned long long)dx.odp_caps.general_caps);
	vt_check(dx.odp_caps.per_transport_caps.rc_odp_caps == rc,
		 "rc_odp_caps: SEND RECV WRITE READ SRQ_RECV, no ATOMIC", "0x%x",
		 dx.odp_caps.per_transport_caps.rc_odp_caps);
	vt_check(dx.odp_caps.per_transport_caps.uc_odp_caps == (rc & ~IBV_ODP_SUPPORT_READ),
		 "uc_odp_caps: SEND RECV WRITE SRQ_RECV", "0x%x",
		 dx.odp_caps.per_transport_caps.uc_odp_caps);
	vt_check(dx.odp_caps.per_transport_caps.ud_odp_caps ==
		 (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV),
		 "ud_odp_caps: SEND RECV SRQ_RECV", "0x%x",
		 dx.odp_caps.per_transport_caps.ud_odp_caps);
	vt_check(dx.xrc_odp_caps == 0, "xrc_odp_caps: none", "0x%x", dx.xrc_odp_caps);
}

/* RC between @p a (filled with @p seed) and @p b, both under ODP keys. */
static void
rc_transfers(struct vt_pair *p, const char *what, uint8_t *a, struct ibv_mr *ma, uint8_t *b,
	     struct ibv_mr *mb, uint32_t seed)
{
	char name[128];
	uint32_t got = 0;
	long bad;
	int st;

	fill(a, LEN, seed);
	memset(b, 0xee, LEN + 64);
	/* the peer READs a, then WRITEs what it read into b */
	st = vt_remote_rdma(p, IBV_WR_RDMA_READ, src.id, (uintptr_t)a, ma->rkey, LEN);
	snprintf(name, sizeof(name), "%s: the peer's READ of 60000 bytes", what);
	vt_check(st == IBV_WC_SUCCESS, name, "status %d", st);
	st = vt_remote_rdma(p, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)b, mb->rkey, LEN);
	bad = mismatch(b, LEN, seed);
	snprintf(name, sizeof(name), "%s: the peer's WRITE lands, every byte", what);
	vt_check(st == IBV_WC_SUCCESS && bad < 0 && b[LEN] == 0xee, name,
		 "status %d first bad byte %ld, after %#x", st, bad, b[LEN]);

	/* the peer SENDs into an ODP receive buffer */
	memset(b, 0, LEN);
	vt_recv(p->qp, 7, (uintptr_t)b, LEN, mb->lkey);
	st = vt_remote_send(p, IBV_WR_SEND, src.id, 0, LEN, 0);
	vt_require(st == IBV_WC_SUCCESS, "the peer's SEND");
	st = wait_recv(p->cq, &got);
	bad = mismatch(b, LEN, seed);
	snprintf(name, sizeof(name), "%s: RECV into ODP memory, every byte", what);
	vt_check(st == IBV_WC_SUCCESS && got == LEN && bad < 0, name, "status %d len %u bad %ld",
		 st, got, bad);

	/* our SEND, WRITE gather from ODP memory; our READ scatters into it */
	fill(a, LEN, seed + 1);
	vt_remote_recv(&p->r, src.id, 0, LEN, 9);
	st = post_send(p->qp, IBV_WR_SEND, a, LEN, ma->lkey, 0, 0);
	{
		struct vt_msg m = vt_remote_poll(&p->r, VT_WAIT_MS);

		bad = remote_mismatch(LEN, seed + 1);
		snprintf(name, sizeof(name), "%s: SEND from ODP memory, every byte", what);
		vt_check(st == IBV_WC_SUCCESS && m.status == 0 && m.a[VT_WC_STATUS] == 0 &&
			 m.a[VT_WC_LEN] == LEN && bad < 0, name,
			 "send %d recv %d/%llu bad %ld", st, m.status,
			 (unsigned long long)m.a[VT_WC_STATUS], bad);
	}
	fill(a, LEN, seed + 2);
	st = post_send(p->qp, IBV_WR_RDMA_WRITE, a, LEN, ma->lkey, src.addr, src.rkey);
	bad = remote_mismatch(LEN, seed + 2);
	snprintf(name, sizeof(name), "%s: our WRITE from ODP memory, every byte", what);
	vt_check(st == IBV_WC_SUCCESS && bad < 0, name, "status %d bad %ld", st, bad);
	memset(b, 0, LEN);
	st = post_send(p->qp, IBV_WR_RDMA_READ, b, LEN, mb->lkey, src.addr, src.rkey);
	bad = mismatch(b, LEN, seed + 2);
	snprintf(name, sizeof(name), "%s: our READ into ODP memory, every byte", what);
	vt_check(st == IBV_WC_SUCCESS && bad < 0, name, "status %d bad %ld", st, bad);
}

static void
rc_range_and_implicit(struct vt_pair *p)
{
	uint8_t *a = map(MAPLEN), *b = map(MAPLEN);
	uint8_t *heap = malloc(LEN + 64);
	struct ibv_mr *ma, *mb, *imp;

	/* range: not page-aligned, nothing touched before registration */
	ma = ibv_reg_mr(vt.pd, a + 100, LEN, ODP);
	mb = ibv_reg_mr(vt.pd, b + 50, LEN + 64, ODP);
	vt_require(ma != NULL && mb != NULL, "reg_mr ON_DEMAND");
	rc_transfers(p, "RC range ODP", a + 100, ma, b + 50, mb, 11);
	vt_check(ibv_dereg_mr(ma) == 0 && ibv_dereg_mr(mb) == 0, "dereg ODP MRs", "failed");

	imp = ibv_reg_mr(vt.pd, NULL, SIZE_MAX, ODP);
	vt_check(imp != NULL, "implicit ODP (NULL, SIZE_MAX) registers", "errno %d", errno);
	vt_require(imp != NULL, "implicit ODP");
	vt_check(imp->addr == NULL && imp->length == SIZE_MAX, "implicit MR: addr 0, SIZE_MAX",
		 "%p %zu", imp->addr, imp->length);
	/* heap and a fresh mapping, neither registered by itself */
	rc_transfers(p, "RC implicit ODP", heap, imp, b + 8, imp, 21);
	vt_check(ibv_dereg_mr(imp) == 0, "dereg implicit MR", "failed");
	free(heap);
	munmap(a, MAPLEN);
	munmap(b, MAPLEN);
}

/* Memory unmapped under an ODP MR: that access fails, nothing else. */
static void
unmapped(struct vt_pair *p)
{
	uint8_t *d = map(3 * (size_t)pg);
	struct ibv_mr *mr = ibv_reg_mr(vt.pd, d, 3 * (size_t)pg, ODP);
	struct ibv_mr *imp = ibv_reg_mr(vt.pd, NULL, SIZE_MAX, ODP);
	uint8_t *hole = d + pg;
	int st;

	vt_require(mr != NULL && imp != NULL, "reg ODP for unmapped");
	munmap(hole, (size_t)pg);
	st = vt_remote_rdma(p, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)hole, mr->rkey, 64);
	vt_check(st == IBV_WC_REM_ACCESS_ERR, "peer WRITE into a page unmapped under an ODP MR: "
		 "IBV_WC_REM_ACCESS_ERR", "status %d", st);
	vt_pair_restate(p);
	st = vt_remote_rdma(p, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)(hole - 100), mr->rkey, 200);
	vt_check(st == IBV_WC_REM_ACCESS_ERR, "a WRITE across the hole's edge: "
		 "IBV_WC_REM_ACCESS_ERR", "status %d", st);
	vt_pair_restate(p);
	st = vt_remote_rdma(p, IBV_WR_RDMA_READ, src.id, (uintptr_t)hole + 8, mr->rkey, 64);
	vt_check(st == IBV_WC_REM_ACCESS_ERR, "peer READ of it: IBV_WC_REM_ACCESS_ERR",
		 "status %d", st);
	vt_pair_restate(p);
	st = vt_remote_rdma(p, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)hole, imp->rkey, 64);
	vt_check(st == IBV_WC_REM_ACCESS_ERR, "implicit: peer WRITE to an unmapped address: "
		 "IBV_WC_REM_ACCESS_ERR", "status %d", st);
	vt_pair_restate(p);
	st = post_send(p->qp, IBV_WR_SEND, hole, 64, mr->lkey, 0, 0);
	vt_check(st == IBV_WC_LOC_PROT_ERR, "our SEND from the hole: IBV_WC_LOC_PROT_ERR",
		 "status %d", st);
	vt_pair_restate(p);
	/* the daemon lives, and the rest of the MR works */
	vt_remote_fill(src.id, 0, 64, 'z');
	st = vt_remote_rdma(p, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)d + 8, mr->rkey, 64);
	vt_check(st == IBV_WC_SUCCESS && d[8] == 'z' && d[71] == 'z' && d[72] == 0,
		 "then a WRITE beside the hole works", "status %d", st);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(imp);
	munmap(d, (size_t)pg);
	munmap(d + 2 * pg, (size_t)pg);
}

static void
atomic_refused(struct vt_pair *p)
{
	uint64_t *w = (uint64_t *)(void *)map((size_t)pg);
	struct ibv_mr *mr = ibv_reg_mr(vt.pd, w, (size_t)pg, ODP | IBV_ACCESS_REMOTE_ATOMIC);
	int st;

	vt_require(mr != NULL, "reg ODP atomic");
	w[0] = 41;
	st = vt_remote_rdma(p, IBV_WR_ATOMIC_FETCH_AND_ADD, src.id, (uintptr_t)w, mr->rkey, 8);
	vt_check(st == IBV_WC_REM_ACCESS_ERR && w[0] == 41,
		 "atomic on an ODP MR (no ODP ATOMIC): IBV_WC_REM_ACCESS_ERR, untouched",
		 "status %d word %llu", st, (unsigned long long)w[0]);
	vt_pair_restate(p);
	ibv_dereg_mr(mr);
	munmap(w, (size_t)pg);
}

static int
advise(struct ibv_pd *pd, enum ibv_advise_mr_advice a, uint32_t flags, void *addr,
       uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };

	return ibv_advise_mr(pd, a, flags, &sge, 1);
}

static void
advise_errnos(void)
{
	uint8_t *d = map(4 * (size_t)pg), *plain = malloc(4096);
	struct ibv_mr *mr = ibv_reg_mr(vt.pd, d, 4 * (size_t)pg, ODP);
	struct ibv_mr *ro = ibv_reg_mr(vt.pd, d, (size_t)pg,
				       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND);
	struct ibv_mr *imp = ibv_reg_mr(vt.pd, NULL, SIZE_MAX, ODP);
	struct ibv_mr *nodp = ibv_reg_mr(vt.pd, plain, 4096, RIGHTS);
	struct ibv_pd *pd2 = ibv_alloc_pd(vt.ctx);
	struct ibv_mr *other = pd2 != NULL ? ibv_reg_mr(pd2, d, (size_t)pg, ODP) : NULL;
	struct ibv_sge two[2] = {
		{ (uintptr_t)d, 100, mr->lkey }, { (uintptr_t)d + 3 * pg, 100, mr->lkey },
	};
	const uint32_t F = IBV_ADVISE_MR_FLAG_FLUSH;
	int r;

	vt_require(mr && ro && imp && nodp && other, "advise setup");
	vt_check(advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, d, 4 * pg, mr->lkey) == 0 &&
		 advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, F, d, 4 * pg, mr->lkey) == 0 &&
		 advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, d + 5, 100, mr->lkey) == 0 &&
		 advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, F, d, 4 * pg, mr->lkey) == 0 &&
		 advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, d, 64, mr->lkey) == 0 &&
		 advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, F, d, 64, mr->lkey) == 0,
		 "advise_mr PREFETCH, PREFETCH_WRITE, NO_FAULT, with and without FLUSH: 0", "failed");
	vt_check(ibv_advise_mr(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, F, two, 2) == 0,
		 "advise_mr of two SGEs: 0", "failed");
	vt_check(advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, plain, 64, imp->lkey) == 0,
		 "advise_mr under the implicit MR: 0", "failed");
	munmap(d + 2 * pg, (size_t)pg);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, F, d + pg, 2 * pg, mr->lkey);
	vt_check(r == EFAULT, "advise_mr PREFETCH over an unmapped page: EFAULT", "%d", r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, d + 2 * pg, 8, imp->lkey);
	vt_check(r == EFAULT, "advise_mr PREFETCH_WRITE of an unmapped address (implicit): EFAULT",
		 "%d", r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, d + 2 * pg, 8, mr->lkey);
	vt_check(r == 0, "advise_mr NO_FAULT over it: 0 (nothing faulted)", "%d", r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, d + 3 * pg, pg + 1, mr->lkey);
	vt_check(r == EFAULT, "advise_mr past the MR's end: EFAULT", "%d", r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, d, 8, mr->lkey ^ 0x100000);
	vt_check(r == EFAULT, "advise_mr with an lkey of nothing: EFAULT", "%d", r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, plain, 8, nodp->lkey);
	vt_check(r == EINVAL, "advise_mr of an MR that is not ODP: EINVAL", "%d", r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, d, 8, ro->lkey);
	vt_check(r == EPERM, "advise_mr PREFETCH_WRITE of an MR without LOCAL_WRITE: EPERM", "%d",
		 r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, d, 8, other->lkey);
	vt_check(r == EPERM, "advise_mr of another PD's MR: EPERM", "%d", r);
	r = advise(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1u << 7, d, 8, mr->lkey);
	vt_check(r == EINVAL, "advise_mr unknown flags: EINVAL", "%d", r);
	r = advise(vt.pd, (enum ibv_advise_mr_advice)9, 0, d, 8, mr->lkey);
	vt_check(r == EOPNOTSUPP, "advise_mr unknown advice: EOPNOTSUPP", "%d", r);
	r = ibv_advise_mr(vt.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, two, 0);
	vt_check(r == EINVAL, "advise_mr of no SGE: EINVAL", "%d", r);
	ibv_dereg_mr(other);
	ibv_dealloc_pd(pd2);
	ibv_dereg_mr(nodp);
	ibv_dereg_mr(imp);
	ibv_dereg_mr(ro);
	ibv_dereg_mr(mr);
	free(plain);
	munmap(d, 2 * (size_t)pg);
	munmap(d + 3 * pg, (size_t)pg);
}

/* UC: WRITE and SEND both ways with ODP memory on our side. */
static void
uc_transfers(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_UC, 0);
	uint8_t *b = map(MAPLEN);
	struct ibv_mr *mb = ibv_reg_mr(vt.pd, b, MAPLEN, ODP);
	uint32_t got = 0;
	int st, st2;

	vt_require(mb != NULL, "UC ODP MR");
	fill(b, 5000, 31);
	st = post_send(p.qp, IBV_WR_RDMA_WRITE, b, 5000, mb->lkey, src.addr, src.rkey);
	/* UC WRITE has no ACK: its bytes are there when the SEND after it is received */
	vt_remote_recv(&p.r, src.id, 8192, 16, 1);
	st2 = post_send(p.qp, IBV_WR_SEND, b, 16, mb->lkey, 0, 0);
	vt_check(st == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS &&
		 vt_remote_poll(&p.r, VT_WAIT_MS).status == 0 && remote_mismatch(5000, 31) < 0,
		 "UC: our WRITE from ODP memory, every byte", "status %d %d", st, st2);
	memset(b, 0, MAPLEN);
	st = vt_remote_rdma(&p, IBV_WR_RDMA_WRITE, src.id, (uintptr_t)b + 1000, mb->rkey, 5000);
	/* and the peer's are there when our next RECV completes */
	vt_recv(p.qp, 1, (uintptr_t)b + 20000, 5000, mb->lkey);
	st2 = vt_remote_send(&p, IBV_WR_SEND, src.id, 0, 5000, 0);
	vt_check(st == 0 && st2 == 0 && wait_recv(p.cq, &got) == IBV_WC_SUCCESS && got == 5000 &&
		 mismatch(b + 1000, 5000, 31) < 0 && mismatch(b + 20000, 5000, 31) < 0,
		 "UC: the peer's WRITE and SEND into ODP memory, every byte", "%d %d", st, st2);
	fill(b, 5000, 32);
	vt_remote_recv(&p.r, src.id, 0, 5000, 2);
	st = post_send(p.qp, IBV_WR_SEND, b, 5000, mb->lkey, 0, 0);
	{
		struct vt_msg m = vt_remote_poll(&p.r, VT_WAIT_MS);

		vt_check(st == 0 && m.status == 0 && m.a[VT_WC_STATUS] == 0 &&
			 remote_mismatch(5000, 32) < 0, "UC: SEND from ODP memory, every byte",
			 "%d %d", st, m.status);
	}
	ibv_dereg_mr(mb);
	munmap(b, MAPLEN);
}

/* UD: SEND both ways, the GRH and the data landing in ODP memory. */
static void
ud_transfers(void)
{
	struct vt_pair p = vt_pair(IBV_QPT_UD, 0);
	uint8_t *b = map(MAPLEN);
	struct ibv_mr *mb = ibv_reg_mr(vt.pd, b, MAPLEN, ODP);
	struct ibv_ah *ah = vt_ah(&p.r.gid);
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	uint32_t got = 0;
	int st, st2;

	vt_require(mb != NULL, "UD ODP MR");
	fill(b, 1000, 41);
	vt_remote_recv(&p.r, src.id, 0, VT_GRH_BYTES + 1000, 3);
	sge = (struct ibv_sge){ (uintptr_t)b, 1000, mb->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = p.r.qpn;
	wr.wr.ud.remote_qkey = VT_QKEY;
	st = vt_post_wait(p.qp, &wr);
	{
		struct vt_msg m = vt_remote_poll(&p.r, VT_WAIT_MS);
		uint8_t d[VT_DATA];
		uint32_t i, bad = 0;

		for (i = 0; i < 1000; i += VT_DATA) {
			uint32_t n = 1000 - i < VT_DATA ? 1000 - i : VT_DATA;

			vt_remote_read(src.id, VT_GRH_BYTES + i, d, n);
			bad += memcmp(d, b + i, n) != 0;
		}
		vt_check(st == 0 && m.status == 0 && m.a[VT_WC_STATUS] == 0 && bad == 0,
			 "UD: SEND from ODP memory, every byte", "%d %d bad %u", st, m.status, bad);
	}
	/* the peer's SEND: it sends its MR's first 1000 bytes, which hold ours */
	memset(b, 0, MAPLEN);
	vt_remote_fill(src.id, 0, 1000, 'u');
	vt_recv(p.qp, 4, (uintptr_t)b + 4096 - 20, VT_GRH_BYTES + 1000, mb->lkey);
	st2 = vt_remote_send(&p, IBV_WR_SEND, src.id, 0, 1000, 0);
	st = wait_recv(p.cq, &got);
	{
		bool ok = st == 0 && st2 == 0 && got == VT_GRH_BYTES + 1000;
		uint32_t i;

		for (i = 0; ok && i < 1000; i++)
			ok = b[4096 - 20 + VT_GRH_BYTES + i] == 'u';
		vt_check(ok, "UD: RECV into ODP memory (GRH across a page), every byte",
			 "%d %d len %u", st, st2, got);
	}
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mb);
	munmap(b, MAPLEN);
}

/* An SRQ's receive buffers on demand (SRQ_RECV). */
static void
srq_recv(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(vt.pd, &sa);
	struct ibv_cq *cq = vt_cq(16);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};
	struct ibv_qp *qp;
	struct vt_pair p;
	uint8_t *b = map(MAPLEN);
	struct ibv_mr *mb = ibv_reg_mr(vt.pd, b, MAPLEN, ODP);
	struct ibv_sge sge = { (uintptr_t)b + 3, LEN, 0 };
	struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *bad;
	uint32_t got = 0;
	int st, st2;

	vt_require(srq != NULL && mb != NULL, "SRQ and ODP MR");
	qp = ibv_create_qp(vt.pd, &qa);
	vt_require(qp != NULL, "QP on the SRQ");
	p = (struct vt_pair){ .cq = cq, .qp = qp, .r = vt_remote_qp(qp) };
	sge.lkey = mb->lkey;
	vt_require(ibv_post_srq_recv(srq, &wr, &bad) == 0, "post_srq_recv");
	fill(b, LEN, 51);	/* the peer READs it first, then SENDs it back */
	st = vt_remote_rdma(&p, IBV_WR_RDMA_READ, src.id, (uintptr_t)b, mb->rkey, LEN);
	memset(b, 0, MAPLEN);
	st2 = vt_remote_send(&p, IBV_WR_SEND, src.id, 0, LEN, 0);
	vt_check(st == 0 && st2 == 0 && wait_recv(cq, &got) == IBV_WC_SUCCESS && got == LEN &&
		 mismatch(b + 3, LEN, 51) < 0, "RC SRQ: RECV into ODP memory, every byte",
		 "%d %d len %u", st, st2, got);
	ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
	ibv_dereg_mr(mb);
	munmap(b, MAPLEN);
}

static void
drive(void)
{
	struct vt_pair p;

	pg = sysconf(_SC_PAGESIZE);
	check_caps();
	src = vt_remote_mr(MAPLEN, RIGHTS | IBV_ACCESS_REMOTE_ATOMIC);
	p = vt_pair(IBV_QPT_RC, 0);
	rc_range_and_implicit(&p);
	unmapped(&p);
	atomic_refused(&p);
	advise_errnos();
	uc_transfers();
	ud_transfers();
	srq_recv();
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
