/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * ibv_create_qp(3) several times on one context, every QP on one CQ (send
 * and receive): with droced's --workers N (DROCE_WORKERS) the QPs run on
 * different workers (a QP's engine is its QPN % N), so the CQ is fed by
 * several at once. RDMA WRITEs and READs posted on all QPs in turn, then
 * SENDs from the agent: every byte arrives, and every work request has
 * exactly one successful completion on the shared CQ, naming its QP,
 * none missing and none extra. Completions are waited for through the
 * CQ's channel (ibv_req_notify_cq), so the events are checked too.
 */

#include <stdlib.h>
#include <string.h>

#include "verbs_test.h"

#define NQP	4
#define ROUNDS	24		/* WRs in flight per QP: within vt_qp()'s 32 */
#define CHUNK	512		/* bytes per WRITE and READ */
#define NRECV	4
#define RECV_LEN 256
#define QUIET_MS 300		/* nothing more within this long: no extra completion */

enum { PH_WRITE = 1, PH_READ, PH_RECV };

static uint64_t
wr_id(unsigned int phase, unsigned int qp, unsigned int k)
{
	return (uint64_t)phase << 32 | qp << 16 | k;
}

static uint8_t
pattern(unsigned int qp, unsigned int k, size_t j)
{
	return (uint8_t)(qp * 71 + k * 13 + j * 7 + 1);
}

/*
 * Wait for @p n completions of @p phase on @p cq; each must be one of
 * @p per_qp per QP, successful, on the QP its wr_id names, and new.
 */
static void
collect(struct ibv_cq *cq, struct ibv_qp **qps, unsigned int phase, unsigned int per_qp,
	const char *what)
{
	bool seen[NQP][ROUNDS] = { { false } };
	unsigned int got = 0, bad = 0, dup = 0, n = NQP * per_qp;
	struct ibv_wc wc;

	while (got < n && vt_wait(cq, &wc, VT_WAIT_MS)) {
		unsigned int ph = (unsigned int)(wc.wr_id >> 32), i = (wc.wr_id >> 16) & 0xffff,
			     k = wc.wr_id & 0xffff;

		if (ph != phase || i >= NQP || k >= per_qp || wc.status != IBV_WC_SUCCESS ||
		    wc.qp_num != qps[i]->qp_num) {
			bad++;
			continue;
		}
		if (seen[i][k])
			dup++;
		seen[i][k] = true;
		got++;
	}
	vt_check(got == n && bad == 0 && dup == 0, what,
		 "%u of %u completions, %u wrong, %u twice", got, n, bad, dup);
	vt_check(!vt_wait(cq, &wc, QUIET_MS), "... and no completion more", "wr_id %#llx",
		 (unsigned long long)wc.wr_id);
}

static void
post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, struct ibv_mr *mr, size_t off,
	  uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr + off, .length = CHUNK,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	vt_require(ibv_post_send(qp, &wr, &bad) == 0, "post RDMA");
}

/* Each QP's ROUNDS chunks, the QPs taking turns: their workers complete into the CQ at once. */
static void
post_rounds(struct ibv_qp **qps, enum ibv_wr_opcode op, unsigned int phase, struct ibv_mr *mr,
	    const struct vt_remote_mr *rmr)
{
	unsigned int i, k;

	for (k = 0; k < ROUNDS; k++)
		for (i = 0; i < NQP; i++) {
			size_t off = ((size_t)i * ROUNDS + k) * CHUNK;

			post_rdma(qps[i], op, wr_id(phase, i, k), mr, off, rmr->addr + off, rmr->rkey);
		}
}

static void
drive(void)
{
	const size_t area = (size_t)NQP * ROUNDS * CHUNK;
	struct ibv_cq *cq = vt_cq(512);
	struct ibv_qp *qps[NQP];
	struct vt_pair pairs[NQP];
	struct ibv_mr *src, *dst, *rbuf;
	struct vt_remote_mr rmr, smr;
	const char *w = getenv("DROCE_WORKERS");
	unsigned int workers = w != NULL ? (unsigned int)atoi(w) : 1, i, k, shards = 0;
	size_t j, wrong = 0;

	for (i = 0; i < NQP; i++) {
		qps[i] = vt_qp(IBV_QPT_RC, cq);
		pairs[i] = (struct vt_pair){ .cq = cq, .qp = qps[i], .r = vt_remote_qp(qps[i]) };
	}
	/* placed least loaded first: QPs created in a row go to different workers */
	if (workers > 1) {
		for (k = 0; k < workers; k++)
			for (i = 0; i < NQP; i++)
				if (qps[i]->qp_num % workers == k) {
					shards++;
					break;
				}
		vt_check(shards == (workers < NQP ? workers : NQP),
			 "one context's QPs run on every worker (QPN % N)", "%u of %u workers",
			 shards, workers);
	}

	src = vt_mr(area, IBV_ACCESS_LOCAL_WRITE);
	dst = vt_mr(area, IBV_ACCESS_LOCAL_WRITE);
	rbuf = vt_mr((size_t)NQP * NRECV * RECV_LEN, IBV_ACCESS_LOCAL_WRITE);
	rmr = vt_remote_mr(area, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ);
	smr = vt_remote_mr(4096, IBV_ACCESS_LOCAL_WRITE);
	for (i = 0; i < NQP; i++)
		for (k = 0; k < ROUNDS; k++)
			for (j = 0; j < CHUNK; j++)
				((uint8_t *)src->addr)[((size_t)i * ROUNDS + k) * CHUNK + j] =
					pattern(i, k, j);

	post_rounds(qps, IBV_WR_RDMA_WRITE, PH_WRITE, src, &rmr);
	collect(cq, qps, PH_WRITE, ROUNDS,
		"RDMA WRITEs on QPs of several workers: each completes once on the shared CQ");
	post_rounds(qps, IBV_WR_RDMA_READ, PH_READ, dst, &rmr);
	collect(cq, qps, PH_READ, ROUNDS,
		"RDMA READs back: each completes once on the shared CQ");
	for (j = 0; j < area; j++)
		wrong += ((uint8_t *)dst->addr)[j] != ((uint8_t *)src->addr)[j];
	vt_check(wrong == 0, "what was written is read back byte for byte", "%zu bytes differ",
		 wrong);
	for (i = 0; i < NQP; i++) {	/* and it is in the agent's memory */
		uint8_t got[VT_DATA];
		size_t off = ((size_t)i * ROUNDS + ROUNDS - 1) * CHUNK;

		vt_remote_read(rmr.id, off, got, sizeof(got));
		vt_check(memcmp(got, (uint8_t *)src->addr + off, sizeof(got)) == 0,
			 "the agent's memory holds the QP's last WRITE", "QP %u differs", i);
	}

	/* receives: completions of the responders, also on the shared CQ */
	for (i = 0; i < NQP; i++)
		for (k = 0; k < NRECV; k++)
			vt_recv(qps[i], wr_id(PH_RECV, i, k),
				(uintptr_t)rbuf->addr + ((size_t)i * NRECV + k) * RECV_LEN, RECV_LEN,
				rbuf->lkey);
	for (k = 0; k < NRECV; k++)
		for (i = 0; i < NQP; i++) {
			vt_remote_fill(smr.id, 0, RECV_LEN, pattern(i, k, 0));
			vt_require(vt_remote_send(&pairs[i], IBV_WR_SEND, smr.id, 0, RECV_LEN, 0) ==
				   IBV_WC_SUCCESS, "agent's send");
		}
	collect(cq, qps, PH_RECV, NRECV, "receives on every QP: each completes once on the shared CQ");
	wrong = 0;
	for (i = 0; i < NQP; i++)
		for (k = 0; k < NRECV; k++)
			for (j = 0; j < RECV_LEN; j++)
				wrong += ((uint8_t *)rbuf->addr)[((size_t)i * NRECV + k) * RECV_LEN + j] !=
					 pattern(i, k, 0);
	vt_check(wrong == 0, "each received message lands on its QP byte for byte",
		 "%zu bytes differ", wrong);
}

int
main(int argc, char **argv)
{
	return vt_main(argc, argv, drive);
}
