"""stats_compute against Python's statistics module (quantiles 'inclusive' = linear interpolation
between order statistics; sample standard deviation)."""
import random
import statistics
import subprocess
import sys

tool = sys.argv[1]
rng = random.Random(7)
cases = [[0.5], [1.0, 2.0], [3.0, 1.0, 2.0], [rng.lognormvariate(-3, 0.3) for _ in range(101)],
         [rng.uniform(0.01, 0.02) for _ in range(1000)], [0.1] * 10 + [0.5]]
bad = 0
for xs in cases:
    out = subprocess.run([tool], input="\n".join(repr(x) for x in xs), capture_output=True, text=True, check=True)
    median, p10, p90, mean, stdev, cv = map(float, out.stdout.split())
    if len(xs) >= 2:
        q = statistics.quantiles(xs, n=10, method="inclusive")
        ref_p10, ref_p90 = q[0], q[8]
        ref_sd = statistics.stdev(xs)
    else:
        ref_p10 = ref_p90 = xs[0]
        ref_sd = 0.0
    ref = {"median": statistics.median(xs), "p10": ref_p10, "p90": ref_p90, "mean": statistics.fmean(xs),
           "stdev": ref_sd, "cv": ref_sd / statistics.fmean(xs)}
    got = {"median": median, "p10": p10, "p90": p90, "mean": mean, "stdev": stdev, "cv": cv}
    for k, v in ref.items():
        if abs(got[k] - v) > 1e-12 * max(1.0, abs(v)):
            print(f"FAIL n={len(xs)} {k}: got {got[k]!r} want {v!r}")
            bad += 1
print("measure_stats:", "FAIL" if bad else "ok", len(cases), "cases")
sys.exit(1 if bad else 0)
