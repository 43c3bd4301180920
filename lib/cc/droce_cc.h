/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CC_H
#define DROCE_CC_H

/**
 * @file
 * Congestion control of RoCEv2 QPs, free of I/O: DCQCN (Zhu et al.,
 * "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015) as
 * ConnectX runs it, and the token bucket that paces a QP to a rate.
 *
 *  - The notification point (NP, the receiver): a CE-marked packet for an
 *    RC or UC QP is answered with a CNP to its sender, at most one per QP
 *    per min_time_between_cnps (droce_cc_np_cnp_due()).
 *  - The reaction point (RP, the sender): per QP a current rate RC and a
 *    target rate RT, cut on a CNP and raised again by a timer and a byte
 *    counter (struct droce_dcqcn_rp).
 *  - The pacer (struct droce_pacer): the rate a QP may send at, the
 *    smaller of its rate limit (ibv_modify_qp_rate_limit) and DCQCN's RC.
 *
 * Time is a nanosecond count passed in, rates are bits per second; the
 * parameters keep ConnectX's names, units and defaults (doc/transport.md).
 * Everything of one QP is called by the one thread that owns it.
 */

#include <stdbool.h>
#include <stdint.h>

/**
 * The reaction point's parameters: P(name, default, min, max, unit, what).
 * Units as ConnectX's: us, bytes, Mb/s, percent, or fixed point /1024.
 */
#define DROCE_DCQCN_RP_PARAMS(P) \
	P(rpg_time_reset, 300, 1, 131071, "us", \
	  "time between rate increases while no CNP arrives") \
	P(rpg_byte_reset, 32767, 0, 0x7fffffff, "bytes", \
	  "bytes sent between rate increases while no CNP arrives (0: off)") \
	P(rpg_threshold, 1, 1, 31, "", \
	  "increase events of each counter before fast recovery becomes additive increase") \
	P(rpg_ai_rate, 5, 1, 400000, "Mb/s", "additive increase of the target rate") \
	P(rpg_hai_rate, 50, 1, 400000, "Mb/s", "hyper increase of the target rate") \
	P(rpg_gd, 11, 1, 15, "log2", \
	  "a cut is RC * (1 - alpha * 1024 / 2^rpg_gd): 11 is the paper's alpha/2") \
	P(rpg_min_dec_fac, 50, 0, 100, "%", \
	  "a single cut leaves at least this share of the rate (100: no cuts)") \
	P(rpg_min_rate, 1, 1, 400000, "Mb/s", "the rate is never cut below this") \
	P(rpg_max_rate, 0, 0, 400000, "Mb/s", "the rate a QP recovers to (0: the port's speed)") \
	P(rate_to_set_on_first_cnp, 0, 0, 400000, "Mb/s", \
	  "RC and RT on a QP's first CNP instead of a cut (0: cut)") \
	P(rate_reduce_monitor_period, 4, 1, 131071, "us", \
	  "at most one cut per period; a CNP inside it cuts at its end") \
	P(dce_tcp_g, 1019, 0, 1023, "/1024", \
	  "alpha's gain: each dce_tcp_rtt alpha = g*alpha + (1 - g) with a CNP, g*alpha without") \
	P(dce_tcp_rtt, 1, 1, 131071, "us", "period of alpha's update") \
	P(initial_alpha_value, 1023, 0, 1023, "/1024", "alpha on a QP's first CNP") \
	P(clamp_tgt_rate, 0, 0, 1, "", "every cut sets RT to the rate before it") \
	P(clamp_tgt_rate_after_time_inc, 1, 0, 1, "", \
	  "a cut sets RT to the rate before it if the timer raised the rate since the last cut")

/** The notification point's parameters, as DROCE_DCQCN_RP_PARAMS. */
#define DROCE_DCQCN_NP_PARAMS(P) \
	P(min_time_between_cnps, 4, 0, 4095, "us", "at most one CNP per QP per this time") \
	P(cnp_dscp, 48, 0, 63, "", "DSCP of the CNPs sent") \
	P(cnp_802p_prio, 6, 0, 7, "", "802.1p priority of the CNPs sent (VLAN ports)")

/** Every DCQCN parameter of a port, by ConnectX's name. */
struct droce_dcqcn_params {
#define P(name, def, lo, hi, unit, what) uint32_t name;
	DROCE_DCQCN_RP_PARAMS(P)
	DROCE_DCQCN_NP_PARAMS(P)
#undef P
};

/** One parameter's description, for options, configuration and telemetry. */
struct droce_dcqcn_param_desc {
	const char *name;
	uint32_t def, min, max;
	const char *unit;
	const char *what;
	bool np;			/**< a notification point's parameter */
	uint32_t offset;		/**< in struct droce_dcqcn_params */
};

/** The table of every parameter, RP first; @p n_out gets its length. */
const struct droce_dcqcn_param_desc *droce_dcqcn_param_descs(unsigned int *n_out);

/** Fill @p p with the defaults. */
void droce_dcqcn_params_default(struct droce_dcqcn_params *p);

/**
 * Set parameter @p name to @p value. @return 0, -ENOENT (no such
 * parameter) or -ERANGE (outside its range).
 */
int droce_dcqcn_param_set(struct droce_dcqcn_params *p, const char *name, uint64_t value);

/** Parameter @p name's value into *@p value. @return 0 or -ENOENT. */
int droce_dcqcn_param_get(const struct droce_dcqcn_params *p, const char *name, uint32_t *value);

/* ---- the notification point ---- */

/** Per QP: when it last sent a CNP. */
struct droce_cc_np {
	uint64_t last_cnp;		/**< ns */
	bool sent;			/**< a CNP was ever sent */
};

/**
 * A CE-marked packet arrived for the QP at @p now: true if a CNP is due
 * (none sent within @p min_time_ns; the caller sends it), false if one
 * was sent too recently.
 */
bool droce_cc_np_cnp_due(struct droce_cc_np *np, uint64_t min_time_ns, uint64_t now);

/* ---- the reaction point ---- */

/**
 * DCQCN's state of one QP. Unlimited until its first CNP: then RC and RT
 * follow the algorithm until RC is back at the line rate.
 */
struct droce_dcqcn_rp {
	uint64_t line;			/**< bits/s: the rate it recovers to */
	uint64_t rc;			/**< current rate, bits/s */
	uint64_t rt;			/**< target rate, bits/s */
	double alpha;			/**< congestion estimate, 0..1 */
	bool limited;			/**< between a first CNP and the return to line rate */
	bool cnp_in_period;		/**< a CNP arrived in the current alpha period */
	bool cut_pending;		/**< a CNP inside the monitor period: cut at its end */
	uint32_t t_stage;		/**< timer increase events since the last cut */
	uint32_t b_stage;		/**< byte counter increase events since the last cut */
	uint64_t bytes;			/**< sent since the last byte counter event */
	uint64_t last_cut;		/**< ns */
	uint64_t cut_at;		/**< ns: when a pending cut is due */
	uint64_t alpha_next;		/**< ns: the next alpha update */
	uint64_t timer_next;		/**< ns: the next timer increase */
	/* what the QP really sent, limited or not (droce_dcqcn_rp_meter()) */
	uint64_t meter_start;		/**< ns: the current window began */
	uint64_t meter_last;		/**< ns: its last packet */
	uint64_t meter_bytes;		/**< sent in it */
	uint32_t meter_pkts;		/**< packets in it */
	uint64_t metered;		/**< bits/s in the last whole window; 0: none */
	uint64_t metered_end;		/**< ns: when that window ended */
	uint64_t metered_span;		/**< ns: how long it was */
};

/**
 * A QP's sending rate is metered over windows of at least this many
 * packets and this long (a software sender sends in bursts: its rate is
 * their average). A first CNP starts from the smaller of the line rate and
 * the metered rate: a software sender seldom sends at its port's nominal
 * speed, and a cut of a rate it never reaches would slow nothing
 * (doc/transport.md).
 */
#define DROCE_DCQCN_METER_PKTS		16
#define DROCE_DCQCN_METER_NS		(500ull * 1000)
/** A gap this long between two packets is idle time: a new window starts. */
#define DROCE_DCQCN_METER_IDLE_NS	(20ull * 1000 * 1000)

/** Start a QP's RP unlimited, recovering to @p line_bps. */
void droce_dcqcn_rp_init(struct droce_dcqcn_rp *rp, uint64_t line_bps);

/** What droce_dcqcn_rp_cnp() did with a CNP. */
enum droce_dcqcn_cnp {
	DROCE_DCQCN_CUT,		/**< the rate was cut now */
	DROCE_DCQCN_DEFERRED,		/**< inside the monitor period: cut at its end */
	DROCE_DCQCN_FIRST_SET,		/**< first CNP: rate_to_set_on_first_cnp applied */
};

/** A CNP for the QP at @p now (the caller decided the RP is enabled for it). */
enum droce_dcqcn_cnp droce_dcqcn_rp_cnp(struct droce_dcqcn_rp *rp,
					 const struct droce_dcqcn_params *p, uint64_t now);

/** Run the alpha updates, deferred cuts and timer increases due by @p now. */
void droce_dcqcn_rp_advance(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p,
			    uint64_t now);

/** The QP sent @p bytes (the byte counter's increases; runs the timers too). */
void droce_dcqcn_rp_sent(struct droce_dcqcn_rp *rp, const struct droce_dcqcn_params *p,
			 uint64_t bytes, uint64_t now);

/** Close the meter's window (droce_dcqcn_rp_meter() calls it). */
void droce_dcqcn_rp_meter_roll(struct droce_dcqcn_rp *rp, uint64_t now);

/** The QP sent a packet of @p bytes at @p now, limited or not: the meter counts it. */
static inline void
droce_dcqcn_rp_meter(struct droce_dcqcn_rp *rp, uint64_t bytes, uint64_t now)
{
	if (now - rp->meter_last > DROCE_DCQCN_METER_IDLE_NS) {
		rp->meter_start = now;		/* after idle time (or the first packet) */
		rp->meter_bytes = 0;
		rp->meter_pkts = 0;
	} else {
		rp->meter_bytes += bytes;
		if (++rp->meter_pkts >= DROCE_DCQCN_METER_PKTS &&
		    now - rp->meter_start >= DROCE_DCQCN_METER_NS)
			droce_dcqcn_rp_meter_roll(rp, now);
	}
	rp->meter_last = now;
}

/**
 * What the QP has been sending, bits/s, from the meter: the larger of the
 * last whole window (if it ended no longer ago than twice its length) and
 * the current one (once it holds a quarter of a window's packets and
 * time); 0 if neither tells.
 */
uint64_t droce_dcqcn_rp_sent_rate(const struct droce_dcqcn_rp *rp, uint64_t now);

/** The rate DCQCN allows now, bits/s (the line rate when unlimited). */
static inline uint64_t
droce_dcqcn_rp_rate(const struct droce_dcqcn_rp *rp)
{
	return rp->limited ? rp->rc : rp->line;
}

/** When droce_dcqcn_rp_advance() next has work; UINT64_MAX: none (unlimited). */
uint64_t droce_dcqcn_rp_next_event(const struct droce_dcqcn_rp *rp);

/* ---- the pacer ---- */

/**
 * A token bucket as a virtual clock (GCRA): @c tat is when the bucket
 * would be full again had every packet been sent at the rate. A packet
 * may leave while tat is at most @c burst_ns ahead of now; leaving, it
 * moves tat on by its length at the rate. An idle QP banks at most the
 * burst. Rate 0 is unlimited.
 */
struct droce_pacer {
	uint64_t rate;			/**< bits/s; 0: unlimited */
	uint64_t burst_ns;		/**< the bucket's depth, as time at the rate */
	uint64_t tat;			/**< ns */
	uint64_t rem;			/**< remainder of the last charge, in bit-nanoseconds / rate */
};

/**
 * Set the rate (0: unlimited) and the bucket's depth in bytes at @p now;
 * the bytes it owes are kept, owed at the new rate.
 */
void droce_pacer_set(struct droce_pacer *pc, uint64_t rate_bps, uint64_t burst_bytes,
		     uint64_t now);

/** True if a packet may leave at @p now. */
static inline bool
droce_pacer_ready(const struct droce_pacer *pc, uint64_t now)
{
	return pc->rate == 0 || pc->tat <= now + pc->burst_ns;
}

/** When a packet may leave next: now or later (droce_pacer_ready() then). */
static inline uint64_t
droce_pacer_next(const struct droce_pacer *pc, uint64_t now)
{
	if (droce_pacer_ready(pc, now))
		return now;
	return pc->tat - pc->burst_ns;
}

/** A packet of @p bytes left at @p now. */
void droce_pacer_charge(struct droce_pacer *pc, uint64_t bytes, uint64_t now);

#endif /* DROCE_CC_H */
