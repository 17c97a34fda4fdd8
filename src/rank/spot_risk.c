/* rank/spot_risk.c: a spot row priced with its interruptions (pure: numbers in, numbers out).
 *
 * The model (docs/design.md, "Spot risk", states every assumption; the defaults are the
 * RANK_SPOT_* block of rank.h):
 *   lambda  per node-hour, from the Advisor bucket's midpoint share p: -ln(1 - p) / 720 h
 *   Lambda  = N x lambda for a job on N nodes, M = 1 / Lambda (hours)
 *   tau     Daly's higher-order optimum for checkpoint cost delta, or --checkpoint-every
 *   T_w/T_s = M e^(R/M) (e^((tau + delta)/M) - 1) / tau            (Daly 2006, FGCS 22(3))
 * The job is a renewal process: the work runs in segments of tau work + delta checkpoint; an
 * interruption loses the segment's time so far and costs a restart of R, itself lost and redone
 * when interrupted.  The mean of one segment's wall time is Daly's formula per segment.  The time
 * to a target is the sum of its ceil(W / tau) independent segments (the last one holding the rest
 * of the work, each ending in a checkpoint): its expected value is the sum of their exact means
 * (not W / efficiency, which charges a short last segment a whole interval's overhead), its P90 a
 * closed form from their exact mean, variance and third cumulant: the uninterrupted time when a
 * clean run has a 90% chance, else that time plus the Cornish-Fisher expansion to the skewness
 * term of the delay given an interruption (p90_hours says why). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/rank.h"
#include "rank/internal.h"

double rank_spot_bucket_rate(int bucket) { return prices_interruption_rate(bucket); }

double rank_spot_daly_interval(double delta, double m)
{
    if (delta >= 2 * m) return m;
    double x = delta / (2 * m);
    return sqrt(2 * delta * m) * (1 + sqrt(x) / 3 + x / 9) - delta;
}

double rank_spot_efficiency(double job_rate, double delta_h, double restart_h, double tau_h)
{
    /* M e^(R/M) (e^(s/M) - 1) / tau with M = 1/Lambda; expm1 keeps small Lambda s exact */
    return tau_h * job_rate / (exp(job_rate * restart_h) * expm1(job_rate * (tau_h + delta_h)));
}

/* The first three cumulants of an exponential (rate L) truncated to [0, s): the time an
 * interrupted attempt of length s lost.  With x = L s and h(x) = 1/x - 1/(e^x - 1): mean s h(x),
 * variance -s^2 h'(x) = s^2 (1/x^2 - e^x/(e^x - 1)^2), third cumulant
 * s^3 h''(x) = s^3 (2/x^3 - e^x (e^x + 1)/(e^x - 1)^3).  They cancel badly for small x, where
 * h's Bernoulli series serves (1/2 - x/12 + x^3/720 - x^5/30240 + x^7/1209600 - ...). */
static rank_spot_moments truncated_exp(double rate, double s)
{
    double x = rate * s, x2 = x * x;
    if (x < 0.1)
        return (rank_spot_moments){
            s * (0.5 - x / 12 + x * x2 / 720 - x * x2 * x2 / 30240 + x * x2 * x2 * x2 / 1209600),
            s * s * (1.0 / 12 - x2 / 240 + x2 * x2 / 6048 - x2 * x2 * x2 / 172800 + x2 * x2 * x2 * x2 / 5322240),
            s * s * s * (x / 120 - x * x2 / 1512 + x * x2 * x2 / 28800 - x * x2 * x2 * x2 / 665280)};
    double e = expm1(x);
    return (rank_spot_moments){s * (1 / x - 1 / e), s * s * (1 / x2 - (e + 1) / (e * e)),
                               s * s * s * (2 / (x * x2) - (e + 1) * (e + 2) / (e * e * e))};
}

/* The time to run LEN hours uninterrupted, each interruption starting it over after a COST (a
 * restart, of the given cumulants): LEN + the sum over the F failed attempts of (time lost +
 * cost), F geometric with success chance p = e^(-rate LEN), whose cumulants are
 * (1-p)/p, (1-p)/p^2, (1-p)(2-p)/p^3.  A compound sum's cumulants:
 * k1 = f1 z1, k2 = f1 z2 + f2 z1^2, k3 = f1 z3 + 3 f2 z1 z2 + f3 z1^3. */
static rank_spot_moments window_time(double rate, double len, rank_spot_moments cost)
{
    double f1 = expm1(rate * len), f2 = f1 * (f1 + 1), f3 = f2 * (2 * f1 + 1); /* 1/p = f1 + 1 */
    rank_spot_moments l = truncated_exp(rate, len);
    double z1 = l.mean + cost.mean, z2 = l.var + cost.var, z3 = l.k3 + cost.k3;
    return (rank_spot_moments){len + f1 * z1, f1 * z2 + f2 * z1 * z1, f1 * z3 + 3 * f2 * z1 * z2 + f3 * z1 * z1 * z1};
}

rank_spot_moments rank_spot_segment_moments(double job_rate, double s_h, double restart_h)
{
    rank_spot_moments none = {0, 0, 0};
    return window_time(job_rate, s_h, restart_h > 0 ? window_time(job_rate, restart_h, none) : none);
}

/* The job's wall time to WORK_H hours of work: the cumulants of its segments' sum, and how long
 * it takes uninterrupted (the work and its checkpoints back to back). */
typedef struct job_time {
    rank_spot_moments sum;
    double clean;
} job_time;

static job_time job_moments(double job_rate, double work_h, double tau_h, double delta_h, double restart_h)
{
    double n = rank_whole_units(work_h, tau_h), last = work_h - (n - 1) * tau_h;
    rank_spot_moments full = rank_spot_segment_moments(job_rate, tau_h + delta_h, restart_h);
    rank_spot_moments tail = rank_spot_segment_moments(job_rate, last + delta_h, restart_h);
    return (job_time){{(n - 1) * full.mean + tail.mean, (n - 1) * full.var + tail.var, (n - 1) * full.k3 + tail.k3},
                      work_h + n * delta_h};
}


/* The standard normal's quantile at Q in (0, 1): bisection on its distribution function, which
 * erfc keeps exact in the lower tail. */
static double normal_quantile(double q)
{
    double lo = -40, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-15 * (1 + fabs(lo)); i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / 1.4142135623730951) < q) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The wall time is the uninterrupted time C with chance p0 = e^(-Lambda C), else C plus a delay:
 * an atom, then a right-skewed tail.  When p0 >= 0.9 the 90th percentile is C itself.  Below, it
 * is C + the (0.9 - p0) / (1 - p0) quantile of the delay given an interruption, by Cornish-Fisher
 * from that delay's cumulants (the delay's raw moments, divided by 1 - p0).  A plain
 * Cornish-Fisher over the whole time smears the atom into the tail (a job that most likely runs
 * clean got a P90 hours above its clean time); as p0 -> 0 the two agree. */
static double p90_hours(double job_rate, job_time j, double p0)
{
    double w = -expm1(-job_rate * j.clean);
    if (p0 >= RANK_SPOT_P90) return j.clean;
    double e = j.sum.mean - j.clean, v = j.sum.var, k = j.sum.k3;
    double c1 = e / w, c2 = (v + e * e) / w, c3 = (k + 3 * e * v + e * e * e) / w;
    double var = c2 - c1 * c1, k3 = c3 - 3 * c1 * c2 + 2 * c1 * c1 * c1;
    if (!(var > 0)) return j.clean + (c1 > 0 ? c1 : 0);
    double sd = sqrt(var), skew = k3 / (var * sd), z = normal_quantile((RANK_SPOT_P90 - p0) / w);
    /* the expansion is a quantile function only where it rises: z > -3 / skew */
    if (skew > 0 && z < -3 / skew) z = -3 / skew;
    double x = c1 + sd * (z + (z * z - 1) * skew / 6);
    return j.clean + (x > 0 ? x : 0);
}

rank_spot_target rank_spot_to_target(double job_rate, double work_h, double tau_h, double delta_h, double restart_h)
{
    job_time j = job_moments(job_rate, work_h, tau_h, delta_h, restart_h);
    double p0 = exp(-job_rate * j.clean); /* never interrupted: the work and its checkpoints back to back */
    return (rank_spot_target){j.sum.mean, p90_hours(job_rate, j, p0), p0};
}

double rank_spot_default_checkpoint_s(long params, const char *precision)
{
    if (params <= 0) return RANK_SPOT_CHECKPOINT_S_UNKNOWN;
    int half = precision && (!strcmp(precision, "bf16") || !strcmp(precision, "fp16"));
    double per_param = RANK_SPOT_STATE_BYTES_PER_PARAM + (half ? RANK_SPOT_HALF_COPY_BYTES_PER_PARAM : 0);
    return (double)params * per_param / RANK_SPOT_DISK_BYTES_PER_S;
}

double rank_spot_measured_checkpoint_s(const rank_results *res, const rank_group *g)
{
    double worst = NAN;
    for (size_t i = 0; i < g->n; i++) {
        double s = res->items[g->idx[i]].checkpoint_s;
        if (isfinite(s) && !(s <= worst)) worst = s;
    }
    return worst;
}

int rank_spot_parse_rate(const char *s, double *rate, char *why, size_t len)
{
    const char *form = "a rate per node-hour (0.002), or once per N hours (500h) or days (20d)";
    /* a plain decimal, then the unit: strtod alone would take "+0.002", "0x10h" and " 5h" */
    size_t n = util_decimal_prefix(s);
    const char *end = s + n;
    errno = 0;
    double v = n ? strtod(s, NULL) : NAN;
    if (!n || errno || !isfinite(v) || (*end && end[1]) || (*end && *end != 'h' && *end != 'd')) {
        snprintf(why, len, "--interruption-rate '%s' is not %s", s, form);
        return -1;
    }
    if (!(v > 0)) {
        snprintf(why, len, "--interruption-rate '%s' must be above 0 (--spot-risk off ranks spot at its raw price)", s);
        return -1;
    }
    double r = *end == 'h' ? 1 / v : *end == 'd' ? 1 / (24 * v) : v;
    if (!(r >= RANK_SPOT_MIN_RATE && r <= RANK_SPOT_MAX_RATE)) {
        snprintf(why, len, "--interruption-rate '%s' is %.6g per node-hour, outside %g..%g", s, r, RANK_SPOT_MIN_RATE,
                 RANK_SPOT_MAX_RATE);
        return -1;
    }
    *rate = r;
    return 0;
}

/* The interval at job rate JOB_RATE: the user's, or Daly's optimum. */
static double interval_h(const rank_spot_options *so, double job_rate)
{
    if (isfinite(so->interval_s)) return so->interval_s / 3600;
    return rank_spot_daly_interval(so->checkpoint_s / 3600, 1 / job_rate);
}

/* Effective samples per dollar of a row at per-node rate LAMBDA: in the long run (efficiency x
 * samples/s per dollar) without a target, over the job with one (TARGET / its expected cost). */
static double effective_spd(const rank_row *row, long nodes, const rank_spot_options *so, double target, double lambda)
{
    double job = (double)nodes * lambda, tau = interval_h(so, job);
    double delta = so->checkpoint_s / 3600, r = so->restart_s / 3600;
    if (target > 0) { /* the mean alone: rank_spot_to_target's P90 is not needed 200 times a row */
        double work = target / row->samples_per_second / 3600;
        return target / (job_moments(job, work, tau, delta, r).sum.mean * row->usd_per_hour);
    }
    return row->samples_per_second * rank_spot_efficiency(job, delta, r, tau) * 3600 / row->usd_per_hour;
}

/* The per-node rate where ROW's effective samples/$ falls to TARGET_SPD, by bisection on log
 * rate (the efficiency falls monotonically with the rate, and a target's expected time rises with
 * it: each segment's mean grows, and a shorter Daly interval only adds segments): NAN when still
 * ahead at the top of the range, 0 when behind at its bottom. */
static double breakeven(const rank_row *row, long nodes, const rank_options *o, double target_spd)
{
    const rank_spot_options *so = &o->spot;
    const double target = o->target_samples;
    /* up to the rate the row was priced at, where the user's is above the range: a row behind
     * at its own rate has a break-even below it, never a "never" */
    double top = row->risk.rate_per_node_hour > RANK_SPOT_BREAKEVEN_MAX_RATE ? row->risk.rate_per_node_hour
                                                                             : RANK_SPOT_BREAKEVEN_MAX_RATE;
    double lo = log(RANK_SPOT_BREAKEVEN_MIN_RATE), hi = log(top);
    if (effective_spd(row, nodes, so, target, exp(hi)) > target_spd) return NAN;
    if (effective_spd(row, nodes, so, target, exp(lo)) <= target_spd) return 0;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double mid = 0.5 * (lo + hi);
        if (effective_spd(row, nodes, so, target, exp(mid)) > target_spd) lo = mid;
        else hi = mid;
    }
    return exp(0.5 * (lo + hi));
}

static void fill_one(rank_row *row, const rank_config *c, const rank_options *o)
{
    const rank_spot_options *so = &o->spot;
    rank_spot_risk *k = &row->risk;
    double lambda =
        isfinite(so->rate_per_node_hour) ? so->rate_per_node_hour : rank_spot_bucket_rate(row->interruption_bucket);
    if (!isfinite(lambda)) return; /* no Advisor bucket and no --interruption-rate: raw price */
    k->valid = 1;
    k->rate_per_node_hour = lambda;
    k->rate_source = isfinite(so->rate_per_node_hour) ? "user" : "advisor";
    k->job_rate_per_hour = (double)c->nodes * lambda;
    k->checkpoint_s = so->checkpoint_s;
    k->checkpoint_source = so->checkpoint_source;
    k->restart_s = so->restart_s;
    double tau = interval_h(so, k->job_rate_per_hour), delta = so->checkpoint_s / 3600, r = so->restart_s / 3600;
    k->interval_s = tau * 3600;
    k->efficiency = rank_spot_efficiency(k->job_rate_per_hour, delta, r, tau);
    k->samples_per_second = row->samples_per_second * k->efficiency;
    k->samples_per_dollar = k->samples_per_second * 3600 / row->usd_per_hour;
    k->expected_hours = k->p90_hours = k->expected_cost = k->p90_cost = k->p_no_interruption = NAN;
    if (o->target_samples > 0) {
        double work = o->target_samples / row->samples_per_second / 3600; /* hours of useful work */
        rank_spot_target t = rank_spot_to_target(k->job_rate_per_hour, work, tau, delta, r);
        k->expected_hours = t.expected_hours;
        k->p90_hours = t.p90_hours;
        k->p_no_interruption = t.p_no_interruption;
        k->expected_cost = k->expected_hours * row->usd_per_hour;
        k->p90_cost = k->p90_hours * row->usd_per_hour;
        /* With a target the effective figures are the job's, the rate it averages and what it gets
         * for what it costs, as a capacity block's or a plan's are (score.c): ranking, the frontier
         * and the break-even then agree with EXPECTED TIME and COST.  The long-run rate prices
         * every hour at the steady overhead: a job shorter than one interval pays one whole
         * checkpoint and is exposed for less than an interval, and a short last interval pays a
         * whole checkpoint where the long run charges a fraction of one. */
        if (k->expected_hours > 0 && isfinite(k->expected_hours)) {
            k->samples_per_second = o->target_samples / (k->expected_hours * 3600);
            k->samples_per_dollar = o->target_samples / k->expected_cost;
        }
    }
}

void rank_spot_risk_fill(rank_row *rows, size_t n, const rank_config *configs, const rank_options *o)
{
    long best_od = -1;
    double best_spd = 0;
    for (size_t i = 0; i < n; i++) {
        rank_row *row = &rows[i];
        memset(&row->risk, 0, sizeof row->risk);
        row->risk.breakeven_against = -1;
        row->risk.breakeven_rate = NAN;
        row->rank_samples_per_second = row->samples_per_second;
        row->rank_samples_per_dollar = row->samples_per_dollar;
        row->rank_hours_to_target = row->hours_to_target;
        row->rank_cost_to_target = row->cost_to_target;
        if (!row->priced) continue;
        if (o->versus_config >= 0) {
            /* the user's alternative, whatever its rank (a market never interrupted: its raw figure) */
            if ((long)row->config == o->versus_config && row->market == o->versus_market)
                best_od = (long)i, best_spd = row->samples_per_dollar;
        } else if (row->market == RANK_ON_DEMAND && (best_od < 0 || row->samples_per_dollar > best_spd)) {
            best_od = (long)i, best_spd = row->samples_per_dollar;
        }
        if (row->market != RANK_SPOT || o->spot.off) continue;
        fill_one(row, &configs[row->config], o);
        if (!row->risk.valid) continue;
        row->rank_samples_per_second = row->risk.samples_per_second;
        row->rank_samples_per_dollar = row->risk.samples_per_dollar;
        if (o->target_samples > 0) {
            row->rank_hours_to_target = row->risk.expected_hours;
            row->rank_cost_to_target = row->risk.expected_cost;
        }
    }
    if (best_od < 0) return;
    for (size_t i = 0; i < n; i++) {
        rank_row *row = &rows[i];
        if (!row->risk.valid) continue;
        row->risk.breakeven_against = (long)rows[best_od].config;
        row->risk.breakeven_against_market = rows[best_od].market;
        row->risk.breakeven_rate = breakeven(row, configs[row->config].nodes, o, best_spd);
    }
}
