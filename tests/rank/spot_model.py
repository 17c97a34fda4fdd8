"""An independent model of `rank`'s spot risk (docs/design.md, "Spot risk"), written from the
formulas, in 60-digit decimal arithmetic (no series, no cancellation worries), never from
instbench's code or output.

  lambda  = -ln(1 - p) / 720 per node-hour, p the Advisor bucket's midpoint (>20%: 25%)
  Lambda  = N lambda, M = 1 / Lambda
  tau     = Daly's higher-order optimum (delta < 2M: sqrt(2 delta M)(1 + sqrt(delta/2M)/3
            + (delta/2M)/9) - delta; else M), unless given
  eff     = tau / (M e^(R/M) (e^((tau + delta)/M) - 1))
  P90     = mean + sd (z90 + (z90^2 - 1) skew / 6) (Cornish-Fisher) of the sum of ceil(W / tau)
            segments (the last the rest of the work), each segment's cumulants from the renewal
            process (a compound geometric sum)
Times in hours unless named _s."""
import math
from decimal import Decimal as D, getcontext

getcontext().prec = 60

SHARES = [D("0.025"), D("0.075"), D("0.125"), D("0.175"), D("0.25")]
DEFAULT_RESTART_S = 600.0
DISK_BYTES_PER_S = 125e6
Z90 = D("1.2815515655446004")   # the standard normal's 0.9 quantile, to float precision


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


def p90_hours(job_rate, work_h, tau_h, delta_h, restart_h):
    n = segments(work_h, tau_h)
    last = D(work_h) - (n - 1) * D(tau_h)
    full = segment_cumulants(job_rate, D(tau_h) + D(delta_h), restart_h)
    tail = segment_cumulants(job_rate, last + D(delta_h), restart_h)
    mean, var, k3 = [(n - 1) * f + t for f, t in zip(full, tail)]
    sd = var.sqrt()
    return mean + sd * (Z90 + (Z90 * Z90 - 1) * (k3 / sd ** 3) / 6)


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
        exp_h = work / eff
        p90 = p90_hours(job, work, tau, delta_h, restart_h)
        out.update({"expected_hours_to_target": float(exp_h), "p90_hours_to_target": float(p90),
                    "expected_cost_to_target_usd": float(exp_h * D(usd_per_hour)),
                    "p90_cost_to_target_usd": float(p90 * D(usd_per_hour)),
                    "p_no_interruption": float((-job * (work + segments(work, tau) * delta_h)).exp())})
    return out


def breakeven(sps, usd_per_hour, nodes, delta_s, restart_s, tau_s, target_spd):
    """The per-node rate where the effective samples/$ meets TARGET_SPD: None when still ahead at
    1 per node-hour, 0.0 when behind at 1e-12.  Bisection on the rate's logarithm."""
    def spd(rate):
        return spot_figures(sps, usd_per_hour, nodes, rate, delta_s, restart_s, tau_s)["effective_samples_per_dollar"]
    lo, hi = math.log(1e-12), 0.0
    if spd(1.0) > target_spd:
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
