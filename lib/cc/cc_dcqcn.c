/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * DCQCN's reaction point (Zhu et al., SIGCOMM 2015, section 3.1 and its
 * figure of the RP's state machine), with ConnectX's parameters:
 *
 *  - a CNP cuts the current rate: RC <- RC * (1 - alpha * 1024 / 2^rpg_gd)
 *    (alpha/2 at rpg_gd 11), never below rpg_min_dec_fac percent of RC nor
 *    below rpg_min_rate; the rate before the cut becomes the target RT when
 *    clamp_tgt_rate is set, or when clamp_tgt_rate_after_time_inc is and the
 *    timer raised the rate since the last cut. At most one cut per
 *    rate_reduce_monitor_period: a CNP inside it cuts at its end.
 *  - alpha is updated every dce_tcp_rtt: g*alpha + (1 - g) if a CNP came in
 *    the period, g*alpha if none (g = dce_tcp_g / 1024), the paper's
 *    alpha <- (1 - g')*alpha + g' with g' = 1 - g.
 *  - a cut restarts the rate-increase timer (rpg_time_reset) and byte
 *    counter (rpg_byte_reset). Each expiry of either is an increase event,
 *    its stage set by how many events each has had since the cut (T, B),
 *    counted before this one, against F = rpg_threshold:
 *      max(T, B) < F          fast recovery    RC <- (RT + RC) / 2
 *      min(T, B) < F          additive         RT <- RT + rpg_ai_rate, then as above
 *      otherwise              hyper            RT <- RT + rpg_hai_rate, then as above
 *    RT and RC never pass the line rate; back at it, the QP is unlimited.
 *
 * One departure, for senders that do not reach their line rate (software:
 * a worker's QPs share one core): a QP's first CNP takes the rate it was
 * metered sending at, when below the line rate, as RC and RT before the
 * cut. A NIC's unlimited QP sends at the line rate, so there the two are
 * the same. Later cuts start from RC, as the paper's: RC binds by then
 * (RT, and so RC, recover from the metered rate), and a rate metered below
 * RC for another reason (a full send window, retransmission) must not
 * ratchet the cuts down.
 */

#include "droce_cc.h"
#include "droce_core.h"

#define NS_PER_US	1000ull
#define BPS_PER_MBPS	1000000ull
/* timer expiries run one by one up to this; more: the QP is recovered */
#define DCQCN_MAX_EVENTS	65536

static uint64_t
mbps(uint32_t v)
{
	return (uint64_t)v * BPS_PER_MBPS;
}

/* x^n for a small integer n, without libm */
static double
pow_n(double x, uint64_t n)
{
	double r = 1.0;

	while (n != 0) {
		if (n & 1)
			r *= x;
		x *= x;
		n >>= 1;
	}
	return r;
}

void
droce_dcqcn_rp_init(struct droce_dcqcn_rp *rp, uint64_t line_bps)
{
	*rp = (struct droce_dcqcn_rp){ .line = line_bps, .rc = line_bps, .rt = line_bps };
}

static uint64_t
line_rate(const struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p)
{
	uint64_t max = mbps(p->rpg_max_rate);

	return max != 0 && max < rp->line ? max : rp->line;
}

static void
restart_increase(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p, uint64_t now)
{
	rp->t_stage = 0;
	rp->b_stage = 0;
	rp->bytes = 0;
	rp->timer_next = now + p->rpg_time_reset * NS_PER_US;
}

/* bits per second of @p bytes sent over @p span_ns (> 0) */
static uint64_t
bits_per_s(uint64_t bytes, uint64_t span_ns)
{
	return (uint64_t)((unsigned __int128)bytes * 8 * 1000000000ull / span_ns);
}

void
droce_dcqcn_rp_meter_roll(struct droce_dcqcn_rp *rp, uint64_t now)
{
	uint64_t span = now - rp->meter_start;

	if (span > 0) {
		rp->metered = bits_per_s(rp->meter_bytes, span);
		rp->metered_end = now;
		rp->metered_span = span;
	}
	rp->meter_start = now;
	rp->meter_bytes = 0;
	rp->meter_pkts = 0;
}

uint64_t
droce_dcqcn_rp_sent_rate(const struct droce_dcqcn_rp *rp, uint64_t now)
{
	uint64_t r = 0, span = now - rp->meter_start;

	if (rp->metered != 0 && now - rp->metered_end <= 2 * rp->metered_span)
		r = rp->metered;
	if (rp->meter_pkts >= DROCE_DCQCN_METER_PKTS / 4 && span >= DROCE_DCQCN_METER_NS / 4 &&
	    now - rp->meter_last <= DROCE_DCQCN_METER_IDLE_NS) {
		uint64_t cur = bits_per_s(rp->meter_bytes, span);

		if (cur > r)
			r = cur;
	}
	return r;
}

static void
cut(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p, uint64_t now)
{
	double factor = rp->alpha * 1024.0 / (double)(1u << p->rpg_gd);
	uint64_t floor_dec = rp->rc / 100 * p->rpg_min_dec_fac +
			     rp->rc % 100 * p->rpg_min_dec_fac / 100;
	uint64_t rc;

	if (factor > 1.0)
		factor = 1.0;
	rc = (uint64_t)((double)rp->rc * (1.0 - factor));
	if (rc < floor_dec)
		rc = floor_dec;
	if (rc < mbps(p->rpg_min_rate))
		rc = mbps(p->rpg_min_rate);
	if (p->clamp_tgt_rate || (p->clamp_tgt_rate_after_time_inc && rp->t_stage > 0))
		rp->rt = rp->rc;
	rp->rc = rc < rp->rc ? rc : rp->rc;
	rp->last_cut = now;
	rp->cut_pending = false;
	restart_increase(rp, p, now);
}

/* One increase event; @p t_before, @p b_before: each counter's events before it */
static void
increase(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p, uint32_t t_before,
	 uint32_t b_before)
{
	uint64_t line = line_rate(rp, p);
	uint32_t f = p->rpg_threshold;

	if (DROCE_MAX(t_before, b_before) < f)
		;				/* fast recovery: RT kept */
	else if (DROCE_MIN(t_before, b_before) < f)
		rp->rt += mbps(p->rpg_ai_rate);
	else
		rp->rt += mbps(p->rpg_hai_rate);
	if (rp->rt > line)
		rp->rt = line;
	rp->rc = (rp->rt + rp->rc + 1) / 2;	/* rounded up: RC reaches RT */
	if (rp->rc > line)
		rp->rc = line;
	if (rp->rc >= line && rp->rt >= line)
		rp->limited = false;		/* recovered: nothing left to run */
}

static void
advance_alpha(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p, uint64_t now)
{
	uint64_t period = p->dce_tcp_rtt * NS_PER_US, n;
	double g = p->dce_tcp_g / 1024.0;

	if (now < rp->alpha_next)
		return;
	n = (now - rp->alpha_next) / period + 1;
	/* the first period may hold a CNP; the others had none */
	rp->alpha = g * rp->alpha + (rp->cnp_in_period ? 1.0 - g : 0.0);
	rp->cnp_in_period = false;
	rp->alpha *= pow_n(g, n - 1);
	rp->alpha_next += n * period;
}

void
droce_dcqcn_rp_advance(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p,
		       uint64_t now)
{
	uint64_t period = p->rpg_time_reset * NS_PER_US;

	if (!rp->limited)
		return;
	advance_alpha(rp, p, now);
	if (rp->cut_pending && now >= rp->cut_at)
		cut(rp, p, rp->cut_at);
	/*
	 * each timer expiry in order, until recovered; a QP idle for longer
	 * than DCQCN_MAX_EVENTS expiries would have recovered anyway
	 */
	if (now >= rp->timer_next && (now - rp->timer_next) / period >= DCQCN_MAX_EVENTS) {
		rp->rc = rp->rt = line_rate(rp, p);
		rp->limited = false;
		return;
	}
	while (rp->limited && now >= rp->timer_next) {
		increase(rp, p, rp->t_stage, rp->b_stage);
		rp->t_stage++;
		rp->timer_next += period;
	}
}

enum droce_dcqcn_cnp
droce_dcqcn_rp_cnp(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p, uint64_t now)
{
	if (!rp->limited) {
		/* a QP's first CNP (or the first since it recovered) */
		uint64_t sent = droce_dcqcn_rp_sent_rate(rp, now);

		rp->limited = true;
		rp->rc = line_rate(rp, p);
		if (sent != 0 && sent < rp->rc)
			rp->rc = sent;		/* what it really sent before congestion */
		rp->rt = rp->rc;
		rp->alpha = p->initial_alpha_value / 1024.0;
		rp->alpha_next = now + p->dce_tcp_rtt * NS_PER_US;
		rp->cnp_in_period = true;
		if (p->rate_to_set_on_first_cnp != 0) {
			uint64_t r = mbps(p->rate_to_set_on_first_cnp);

			rp->rc = rp->rt = r < rp->rc ? r : rp->rc;
			rp->last_cut = now;
			rp->cut_pending = false;
			restart_increase(rp, p, now);
			return DROCE_DCQCN_FIRST_SET;
		}
		cut(rp, p, now);
		return DROCE_DCQCN_CUT;
	}
	droce_dcqcn_rp_advance(rp, p, now);
	if (!rp->limited)			/* it recovered just now: start over */
		return droce_dcqcn_rp_cnp(rp, p, now);
	rp->cnp_in_period = true;
	if (now < rp->last_cut + p->rate_reduce_monitor_period * NS_PER_US) {
		rp->cut_pending = true;
		rp->cut_at = rp->last_cut + p->rate_reduce_monitor_period * NS_PER_US;
		return DROCE_DCQCN_DEFERRED;
	}
	cut(rp, p, now);
	return DROCE_DCQCN_CUT;
}

void
droce_dcqcn_rp_sent(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p,
		    uint64_t bytes, uint64_t now)
{
	if (!rp->limited)
		return;
	droce_dcqcn_rp_advance(rp, p, now);
	if (!rp->limited || p->rpg_byte_reset == 0)
		return;
	rp->bytes += bytes;
	while (rp->limited && rp->bytes >= p->rpg_byte_reset) {
		rp->bytes -= p->rpg_byte_reset;
		increase(rp, p, rp->t_stage, rp->b_stage);
		rp->b_stage++;
	}
}

uint64_t
droce_dcqcn_rp_next_event(const struct droce_dcqcn_rp *rp)
{
	uint64_t t;

	if (!rp->limited)
		return UINT64_MAX;
	t = rp->timer_next;
	/* alpha's updates change no rate: they can wait for the next event */
	if (rp->cut_pending && rp->cut_at < t)
		t = rp->cut_at;
	return t;
}
