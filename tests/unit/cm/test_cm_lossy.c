/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_cm.h over a bad link: MADs lost, duplicated and reordered (by up to
 * half a packet lifetime, so that TIMEWAIT still outlasts every stray copy).
 * Several connections each way come up and go down again, on many seeds;
 * whatever the link does, each side reports each step exactly once and
 * nothing fails, and every id is freed at the end.
 */

#include "cm_sim.h"
#include "test_cm.h"

#define SEC	1000000000ull
#define SID_0	0x0000000001064e20ull	/* RDMA_PS_TCP, port 20000, on node 0 */
#define SID_1	0x0000000001064e21ull	/* port 20001, on node 1 */
#define N_FROM_0 4
#define N_FROM_1 2

struct conns {
	struct droce_cm_id *act[N_FROM_0 + N_FROM_1];
	int side[N_FROM_0 + N_FROM_1];	/* node of the active end */
};

static unsigned int
total(const struct cms *sim, enum droce_cm_event_type t)
{
	return cms_count(&sim->node[0], t, NULL) + cms_count(&sim->node[1], t, NULL);
}

static void
up_and_down(uint64_t seed, double loss, double dup, double reorder)
{
	struct cms *sim = cms_new(seed);
	struct conns c;
	unsigned int i, n = N_FROM_0 + N_FROM_1;
	int side;

	sim->link.loss = loss;
	sim->link.dup = dup;
	sim->link.reorder = reorder;
	sim->link.reorder_ns = droce_cm_time_ns(18) / 2;
	for (side = 0; side < 2; side++) {
		sim->node[side].pol.destroy_done = true;
		sim->node[side].pol.next_qpn = 0x1000 * (uint32_t)(side + 1);
	}
	(void)cms_listen(sim, 0, SID_0, 16);
	(void)cms_listen(sim, 1, SID_1, 16);
	for (i = 0; i < n; i++) {
		c.side[i] = i < N_FROM_0 ? 0 : 1;
		c.act[i] = cms_connect(sim, c.side[i], c.side[i] ? SID_0 : SID_1, 0x100 + i);
	}
	cms_settle(sim, 3000 * SEC);

	/* every connection up, each step reported once, whatever the link did */
	for (i = 0; i < n; i++)
		ck_assert_msg(c.act[i]->state == DROCE_CM_ESTABLISHED, "seed %llu conn %u: %s",
			      (unsigned long long)seed, i, droce_cm_state_name(c.act[i]->state));
	ck_assert_uint_eq(cms_count(&sim->node[1], DROCE_CM_EV_REQ_RECEIVED, NULL), N_FROM_0);
	ck_assert_uint_eq(cms_count(&sim->node[0], DROCE_CM_EV_REQ_RECEIVED, NULL), N_FROM_1);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_REP_RECEIVED), n);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_RTU_RECEIVED), n);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_REJ_RECEIVED), 0);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_REQ_ERROR), 0);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_REP_ERROR), 0);
	for (side = 0; side < 2; side++)
		ck_assert_uint_eq(sim->node[side].ids[0].pending, 0);	/* the listeners */

	/* half are closed by their active end, half by the passive end */
	for (i = 0; i < n; i++) {
		struct droce_cm_id *id = c.act[i];

		if (i % 2) {
			const struct cms_ev *e = NULL;
			unsigned int k;

			/* the passive end: the id whose REQ came from this active id */
			for (k = 0; k < sim->node[!c.side[i]].n_ev; k++) {
				e = &sim->node[!c.side[i]].ev[k];
				if (e->type == DROCE_CM_EV_REQ_RECEIVED &&
				    e->msg.req.local_comm_id == id->local_id)
					break;
			}
			ck_assert_uint_lt(k, sim->node[!c.side[i]].n_ev);
			id = e->id;
		}
		ck_assert_int_eq(droce_cm_disconnect(id, NULL, 0, sim->now), 0);
	}
	cms_settle(sim, sim->now + 3000 * SEC);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_DREQ_RECEIVED), n);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_DREP_RECEIVED), n);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_DREQ_ERROR), 0);
	ck_assert_uint_eq(total(sim, DROCE_CM_EV_TIMEWAIT_EXIT), 2 * n);
	/* all freed but the listeners; no QPN still held */
	for (side = 0; side < 2; side++) {
		ck_assert_uint_eq(cms_ids_used(&sim->node[side]), 1);
		for (i = 0; i < n; i++)
			ck_assert(!droce_cm_qpn_held(&sim->node[side].cm, 0x100 + i));
	}
	cms_free(sim);
}

START_TEST(test_connections_survive_loss_duplication_and_reordering)	/* _i: seed */
{
	up_and_down(1000 + (uint64_t)_i, 0.2, 0.2, 0.3);
}
END_TEST

START_TEST(test_connections_survive_heavy_loss)	/* _i: seed */
{
	up_and_down(2000 + (uint64_t)_i, 0.35, 0.0, 0.0);
}
END_TEST

START_TEST(test_connections_survive_every_mad_doubled_and_shuffled)	/* _i: seed */
{
	up_and_down(3000 + (uint64_t)_i, 0.0, 1.0, 1.0);
}
END_TEST

START_TEST(test_lossy_link_really_lost_and_doubled_mads)
{
	struct cms *sim = cms_new(4000);

	/* the impairments above are not vacuous */
	sim->link.loss = 0.2;
	sim->link.dup = 0.2;
	(void)cms_listen(sim, 1, SID_1, 16);
	for (unsigned int i = 0; i < 8; i++)
		(void)cms_connect(sim, 0, SID_1, 0x100 + i);
	cms_settle(sim, 3000 * SEC);
	ck_assert_uint_gt(sim->mads_lost, 0);
	ck_assert_uint_gt(sim->mads_duplicated, 0);
	ck_assert_uint_gt(sim->node[0].cm.cnt[DROCE_CM_CNT_RETRANSMITS] +
			  sim->node[1].cm.cnt[DROCE_CM_CNT_RETRANSMITS], 0);
	ck_assert_uint_gt(sim->node[1].cm.cnt[DROCE_CM_CNT_DUP_REQ], 0);
	cms_free(sim);
}
END_TEST

TCase *
test_cm_lossy_tcase(void)
{
	TCase *tc = tcase_create("lossy");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_connections_survive_loss_duplication_and_reordering, 0, 40);
	tcase_add_loop_test(tc, test_connections_survive_heavy_loss, 0, 20);
	tcase_add_loop_test(tc, test_connections_survive_every_mad_doubled_and_shuffled, 0, 20);
	tcase_add_test(tc, test_lossy_link_really_lost_and_doubled_mads);
	return tc;
}
