"""An independent model of `rank`'s spot risk (docs/design.md, "Spot risk"), written from the
formulas, in 60-digit decimal arithmetic (no series, no cancellation worries), never from
instbench's code or output.

  lambda  = -ln(1 - p) / 720 per node-hour, p the Advisor bucket's midpoint (>20%: 25%)
  Lambda  = N lambda, M = 1 / Lambda
  tau     = Daly's higher-order optimum (delta < 2M: sqrt(2 delta M)(1 + sqrt(delta/2M)/3
            + (delta/2M)/9) - delta; else M), unless given
  eff     = tau / (M e^(R/M) (e^((tau + delta)/M) - 1))
  time    = the sum of ceil(W / tau) segments (the last the rest of the work), each segment's
            cumulants from the renewal process (a compound geometric sum); expected = its mean
  P90     = C, the uninterrupted time, when P(no interruption) p0 >= 0.9; else C + the
            (0.9 - p0) / (1 - p0) quantile of the delay given an interruption, by Cornish-Fisher
            (mean + sd (z + (z^2 - 1) skew / 6), z held where the expansion still rises) from
            that conditional delay's cumulants
Times in hours unless named _s."""
import math
from decimal import Decimal as D, getcontext
from statistics import NormalDist

getcontext().prec = 60

SHARES = [D("0.025"), D("0.075"), D("0.125"), D("0.175"), D("0.25")]
DEFAULT_RESTART_S = 600.0
DISK_BYTES_PER_S = 125e6


def bucket_rate(bucket):
    return -(1 - SHARES[bucket]).ln() / 720


def default_checkpoint_s(params, precision):
    if not params:
        return 60.0
    return params * (12 + (2 if precision in ("bf16", "fp16") else 0)) / DISK_BYTES_PER_S


def daly(delta, m):
    delta, m = D(delta), D(m)
    if delta >= 2 * m:
        return m
    x = delta / (2 * m)
    return (2 * delta * m).sqrt() * (1 + x.sqrt() / 3 + x / 9) - delta


def efficiency(job_rate, delta_h, restart_h, tau_h):
    L, delta, r, tau = D(job_rate), D(delta_h), D(restart_h), D(tau_h)
    m = 1 / L
    return tau / (m * (r / m).exp() * (((tau + delta) / m).exp() - 1))


def _trunc_exp(L, s):
    """Mean, variance and third central moment of an exponential of rate L conditioned on falling
    in [0, s), from its raw moments E[T^k] = int_0^s t^k L e^(-L t) dt / (1 - e^(-L s))."""
    q = (-L * s).exp()
    m1 = (1 / L - q * (s + 1 / L)) / (1 - q)
    m2 = (2 / L ** 2 - q * (s * s + 2 * s / L + 2 / L ** 2)) / (1 - q)
    m3 = (6 / L ** 3 - q * (s ** 3 + 3 * s * s / L + 6 * s / L ** 2 + 6 / L ** 3)) / (1 - q)
    return m1, m2 - m1 * m1, m3 - 3 * m1 * m2 + 2 * m1 ** 3


def _window(L, length, cost):
    """Time to run LENGTH uninterrupted: F ~ geometric failures (success chance e^(-L length)),
    each losing a truncated exponential plus a COST (cumulants): a compound sum, whose cumulants
    follow from the composition of cumulant generating functions."""
    p = (-L * length).exp()
    f1, f2, f3 = (1 - p) / p, (1 - p) / p ** 2, (1 - p) * (2 - p) / p ** 3
    z = [a + b for a, b in zip(_trunc_exp(L, length), cost)]
    return (length + f1 * z[0], f1 * z[1] + f2 * z[0] ** 2,
            f1 * z[2] + 3 * f2 * z[0] * z[1] + f3 * z[0] ** 3)


def segment_cumulants(job_rate, s_h, restart_h):
    L, none = D(job_rate), (D(0), D(0), D(0))
    return _window(L, D(s_h), _window(L, D(restart_h), none) if restart_h > 0 else none)


def segments(work_h, tau_h):
    """Whole intervals, the last one holding the rest of the work (never fewer than one)."""
    n = math.ceil(float(D(work_h) / D(tau_h)) * (1 - 1e-12))
    return max(n, 1)


def _total(job_rate, work_h, tau_h, delta_h, restart_h):
    """Cumulants of the whole job's wall time, and its uninterrupted length."""
    n = segments(work_h, tau_h)
    last = D(work_h) - (n - 1) * D(tau_h)
    full = segment_cumulants(job_rate, D(tau_h) + D(delta_h), restart_h)
    tail = segment_cumulants(job_rate, last + D(delta_h), restart_h)
    return [(n - 1) * f + t for f, t in zip(full, tail)], D(work_h) + n * D(delta_h)


def expected_hours(job_rate, work_h, tau_h, delta_h, restart_h):
    return _total(job_rate, work_h, tau_h, delta_h, restart_h)[0][0]


def p90_hours(job_rate, work_h, tau_h, delta_h, restart_h):
    """The time T is C with probability p0 and C + X otherwise (X > 0, the delay).  The delay
    E = T - C has raw moments E[E^k] = (1 - p0) E[X^k]: X's cumulants follow, and its quantile at
    (0.9 - p0) / (1 - p0) is T's 0.9 quantile."""
    (mean, var, k3), clean = _total(job_rate, work_h, tau_h, delta_h, restart_h)
    p0 = (-D(job_rate) * clean).exp()
    if p0 >= D("0.9"):
        return clean
    e = mean - clean
    raw = [e, var + e * e, k3 + 3 * e * var + e ** 3]            # E[E], E[E^2], E[E^3]
    x1, x2, x3 = [m / (1 - p0) for m in raw]                    # E[X^k]
    kv, kk = x2 - x1 * x1, x3 - 3 * x1 * x2 + 2 * x1 ** 3        # X's variance, third cumulant
    sd = kv.sqrt()
    skew = kk / sd ** 3
    z = D(NormalDist().inv_cdf(float((D("0.9") - p0) / (1 - p0))))
    if skew > 0 and z < -3 / skew:                              # the expansion's lowest point
        z = -3 / skew
    return clean + max(x1 + sd * (z + (z * z - 1) * skew / 6), D(0))


def spot_figures(sps, usd_per_hour, nodes, rate, delta_s, restart_s, tau_s=None, target=None):
    """Every spot_risk_* figure of one row, as floats (None where the model gives none)."""
    job = D(nodes) * D(rate)
    delta_h, restart_h = D(delta_s) / 3600, D(restart_s) / 3600
    tau = D(tau_s) / 3600 if tau_s is not None else daly(delta_h, 1 / job)
    eff = efficiency(job, delta_h, restart_h, tau)
    out = {"spot_rate_per_node_hour": float(rate), "spot_job_rate_per_hour": float(job),
           "checkpoint_cost_s": float(delta_s), "restart_s": float(restart_s),
           "checkpoint_interval_s": float(tau * 3600), "spot_efficiency": float(eff),
           "effective_samples_per_second": float(D(sps) * eff),
           "effective_samples_per_dollar": float(D(sps) * eff * 3600 / D(usd_per_hour)),
           "expected_hours_to_target": None, "p90_hours_to_target": None, "expected_cost_to_target_usd": None,
           "p90_cost_to_target_usd": None, "p_no_interruption": None}
    if target:
        work = D(target) / D(sps) / 3600
        exp_h = expected_hours(job, work, tau, delta_h, restart_h)
        p90 = p90_hours(job, work, tau, delta_h, restart_h)
        out.update({"expected_hours_to_target": float(exp_h), "p90_hours_to_target": float(p90),
                    "expected_cost_to_target_usd": float(exp_h * D(usd_per_hour)),
                    "p90_cost_to_target_usd": float(p90 * D(usd_per_hour)),
                    "p_no_interruption": float((-job * (work + segments(work, tau) * delta_h)).exp())})
        # with a target the effective figures are the job's: what it averages, what it gets per dollar
        out["effective_samples_per_second"] = float(D(target) / (exp_h * 3600))
        out["effective_samples_per_dollar"] = float(D(target) / (exp_h * D(usd_per_hour)))
    return out


def breakeven(sps, usd_per_hour, nodes, delta_s, restart_s, tau_s, target_spd, rate=None, target=None):
    """The per-node rate where the effective samples/$ (the job's, with TARGET samples) meets
    TARGET_SPD: None when still ahead at 1 per node-hour (or at RATE, the row's own, when that is
    higher), 0.0 when behind at 1e-12.  Bisection on the rate's logarithm."""
    def spd(rate):
        return spot_figures(sps, usd_per_hour, nodes, rate, delta_s, restart_s, tau_s,
                            target)["effective_samples_per_dollar"]
    top = max(1.0, rate or 0.0)
    lo, hi = math.log(1e-12), math.log(top)
    if spd(top) > target_spd:
        return None
    if spd(1e-12) <= target_spd:
        return 0.0
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        if spd(math.exp(mid)) > target_spd:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


def simulate(rng, runs, job_rate, work_h, tau_h, delta_h, restart_h):
    """Wall times (hours) of RUNS simulated jobs: segments of tau work + delta checkpoint (the last
    one the rest of the work), exponential interruptions at JOB_RATE; an interruption loses the
    segment and costs a restart of restart_h, which is itself redone when interrupted."""
    import numpy as np
    n_full = int(work_h // tau_h)
    segments = [tau_h + delta_h] * n_full
    rest = work_h - n_full * tau_h
    if rest > 1e-12:
        segments.append(rest + delta_h)
    total = np.zeros(runs)
    for s in segments:
        active = np.ones(runs, dtype=bool)
        while active.any():
            k = int(active.sum())
            t = rng.exponential(1 / job_rate, k)
            ok = t >= s
            idx = np.flatnonzero(active)
            total[idx[ok]] += s
            lost = idx[~ok]
            total[lost] += t[~ok]
            # the restart: an uninterrupted window of restart_h, redone when interrupted
            pending = lost
            while pending.size and restart_h > 0:
                u = rng.exponential(1 / job_rate, pending.size)
                fine = u >= restart_h
                total[pending[fine]] += restart_h
                total[pending[~fine]] += u[~fine]
                pending = pending[~fine]
            active[idx[ok]] = False
    return total
