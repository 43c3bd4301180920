/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Pacing in the engine's scheduler. A QP with a rate (its limit, or
 * DCQCN's current rate after a CNP, the smaller of the two) is polled one
 * packet at a time while its pacer allows; when the pacer says wait, the
 * QP leaves the active list for the paced list with the time it may send
 * again, and each pass wakes the ones that are due. So a paced QP never
 * spins and never holds up another QP; a worker with nothing but waiting
 * QPs sleeps until the first of them is due (droce_engine_wait_budget()).
 * QPs without a rate take the scheduler's usual path, untouched.
 */

#include "verbs_engine_priv.h"

#define NS_PER_S		1000000000ull
/*
 * The bucket's default depth: this long at the rate, at least CC_BURST_MIN
 * bytes and two packets: what a worker may be late (descheduled on a busy
 * machine) without its paced QPs losing rate
 */
#define CC_BURST_NS		(2000ull * 1000)
#define CC_BURST_MIN		(64u * 1024)
#define CC_POLL_BUDGET		32	/* packets per pass, as an unpaced QP */

static void
paced_remove(struct droce_engine *eng, struct dev_qp *qp)
{
	uint32_t i = qp->cc.paced_idx;

	eng->paced[i] = eng->paced[--eng->n_paced];
	eng->paced[i]->cc.paced_idx = i;
	qp->cc.waiting = false;
}

static void
paced_add(struct droce_engine *eng, struct dev_qp *qp, uint64_t at)
{
	qp->cc.wake_at = at;
	if (qp->cc.waiting)
		return;
	qp->cc.waiting = true;
	qp->cc.paced_idx = eng->n_paced;
	eng->paced[eng->n_paced++] = qp;
}

void
engine_cc_qp_attach(struct droce_engine *eng, struct dev_qp *qp)
{
	qp->cc = (struct dev_qp_cc){ 0 };
	qp->paced = false;
	droce_dcqcn_rp_init(&qp->cc.rp, dev_line_rate_bps(eng->dev));
}

void
engine_cc_qp_detach(struct droce_engine *eng, struct dev_qp *qp)
{
	if (qp->cc.waiting)
		paced_remove(eng, qp);
}

/* The smaller of a QP's limit and DCQCN's rate, 0 if neither holds it. */
static uint64_t
cc_rate(uint64_t limit_bps, const struct droce_dcqcn_rp *rp)
{
	if (rp->limited && (limit_bps == 0 || rp->rc < limit_bps))
		return rp->rc;
	return limit_bps;
}

/* The pacer's rate, which the transport's AckReqs follow: cc_rate(). */
void
engine_cc_rate_update(struct droce_engine *eng, struct dev_qp *qp)
{
	uint64_t rate = cc_rate(qp->cc.limit_bps, &qp->cc.rp), pkt, burst;

	pkt = qp->cc.typical_pkt != 0 ? qp->cc.typical_pkt : qp->tqp.attr.mtu;
	burst = qp->cc.max_burst;
	if (burst == 0) {
		burst = rate / 8 * CC_BURST_NS / NS_PER_S;
		if (burst < CC_BURST_MIN)
			burst = CC_BURST_MIN;
		if (burst < 2 * pkt)
			burst = 2 * pkt;
	}
	droce_pacer_set(&qp->cc.pacer, rate, burst, eng->now);
	droce_tqp_set_pace(&qp->tqp, rate);
	qp->paced = rate != 0;
	if (!qp->paced && qp->cc.waiting) {	/* no rate any more: it may send now */
		paced_remove(eng, qp);
		engine_qp_activate(eng, qp);
	}
}

/*
 * Poll a paced QP: one packet at a time while its pacer allows, up to the
 * usual budget. @return true if it stays active (it can send more now);
 * false if it has nothing to send or waits on the paced list.
 */
bool
engine_cc_poll(struct droce_engine *eng, struct dev_qp *qp, uint64_t now, unsigned int *work)
{
	unsigned int n = 0, sent;

	if (qp->cc.rp.limited) {	/* DCQCN's increases since the last packet */
		uint64_t rc = qp->cc.rp.rc;

		droce_dcqcn_rp_advance(&qp->cc.rp, &eng->dev->conf.dcqcn, now);
		if (qp->cc.rp.rc != rc || !qp->cc.rp.limited) {
			engine_cc_rate_update(eng, qp);
			if (!qp->paced) {
				*work += droce_tqp_poll(&qp->tqp, now, CC_POLL_BUDGET);
				return droce_tqp_has_work(&qp->tqp);
			}
		}
	}
	if (qp->cc.waiting) {
		if (!droce_pacer_ready(&qp->cc.pacer, now))
			return false;		/* woken by a packet or a timer: still early */
		paced_remove(eng, qp);
	}
	while (n < CC_POLL_BUDGET && droce_pacer_ready(&qp->cc.pacer, now)) {
		sent = droce_tqp_poll(&qp->tqp, now, 1);
		if (sent == 0)
			break;
		n += sent;
	}
	*work += n;
	if (!droce_tqp_has_work(&qp->tqp))
		return false;
	if (!droce_pacer_ready(&qp->cc.pacer, now)) {
		paced_add(eng, qp, droce_pacer_next(&qp->cc.pacer, now));
		return false;
	}
	return true;
}

/* Paced QPs whose time has come go back on the active list. */
void
engine_cc_wake(struct droce_engine *eng, uint64_t now)
{
	uint32_t i = 0;

	while (i < eng->n_paced) {
		struct dev_qp *qp = eng->paced[i];

		if (qp->cc.wake_at > now) {
			i++;
			continue;
		}
		paced_remove(eng, qp);		/* the last one moves to i */
		engine_qp_activate(eng, qp);
	}
}

uint64_t
engine_cc_next_wake(const struct droce_engine *eng)
{
	uint64_t t = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < eng->n_paced; i++)
		if (eng->paced[i]->cc.wake_at < t)
			t = eng->paced[i]->cc.wake_at;
	return t;
}

uint64_t
droce_engine_pace_wait(const struct droce_engine *eng, uint64_t now)
{
	uint64_t t;

	if (eng->n_paced == 0 || eng->n_active > 0 || eng->loop_head != eng->loop_tail)
		return 0;
	t = engine_cc_next_wake(eng);
	return t > now ? t - now : 0;
}

/* A packet of the QP left: its pacer and DCQCN's byte counter count it. */
void
engine_cc_sent(struct droce_engine *eng, struct dev_qp *qp, const struct droce_pkt *pkt)
{
	/* the frame as the wire carries it: headers, payload, pad, ICRC */
	uint64_t bytes = droce_pkt_hdrs_len(pkt) + pkt->payload_len + pkt->padcnt + 4;

	droce_dcqcn_rp_meter(&qp->cc.rp, bytes, eng->now);
	if (!qp->paced && !qp->cc.rp.limited)
		return;
	if (qp->paced)
		droce_pacer_charge(&qp->cc.pacer, bytes, eng->now);
	if (qp->cc.rp.limited) {
		uint64_t rc = qp->cc.rp.rc;

		droce_dcqcn_rp_sent(&qp->cc.rp, &eng->dev->conf.dcqcn, bytes, eng->now);
		if (qp->cc.rp.rc != rc || !qp->cc.rp.limited)
			engine_cc_rate_update(eng, qp);
	}
}

void
engine_cc_describe(const struct dev_qp *qp, const struct droce_dcqcn_params *p, uint64_t now,
		   struct droce_qp_rate *out)
{
	/* a copy moved on to now: a QP's increases are otherwise applied as it sends */
	struct droce_dcqcn_rp rp = qp->cc.rp;
	uint64_t rate;

	if (rp.limited)
		droce_dcqcn_rp_advance(&rp, p, now);
	rate = cc_rate(qp->cc.limit_bps, &rp);
	out->line = rp.line;
	out->rate = rate != 0 ? rate : rp.line;
	out->limit = qp->cc.limit_bps;
	out->dcqcn_limited = rp.limited;
	out->dcqcn_rc = droce_dcqcn_rp_rate(&rp);
	out->dcqcn_rt = rp.limited ? rp.rt : rp.line;
	out->dcqcn_alpha = (uint32_t)(rp.alpha * 1024.0 + 0.5);
	out->cnp_handled = qp->cc.cnp_handled;
	out->cnp_sent = qp->cc.cnp_sent;
}
