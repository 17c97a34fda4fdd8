#!/usr/bin/python3
"""The markets bought ahead when their live quote cannot be had (src/rank/ask.c, rank_load_quotes):
`rank --market all` against the fake AWS (tests/fakes/aws_fake_server.py) with its faults on the
Savings Plans service or on EC2 (DescribeCapacityBlockOfferings), and with no endpoint at all.

- --source auto: the failed market's rows are unpriced, their reason naming the market and the
  failure, one warning on stderr; the other rows are ranked, exit 0 (as without credentials).
- --source live: exit 1, the message naming the market, --market and --source live.
- no credentials, or --source snapshot: a capacity-block row's reason names Capacity Block
  offerings, a savings-plan row's Savings Plan rates (never the other market's).
usage: rank_quote_faults.py INSTBENCH"""
import datetime
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures, refused_url  # noqa: E402

BIN = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="instbench-rank-quote-faults-")
T, REGION, NODES, SPS = "p5.48xlarge", "us-east-1", 2, 2000.0
BLOCK_ROW, PLAN_ROW = "%d x %s capacity-block" % (NODES, T), "%d x %s savings-plan" % (NODES, T)


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def rows_of(out):
    try:
        return {r["market"]: r for r in json.loads(out)["rows"]}
    except ValueError:
        return {}


def main():
    start = datetime.datetime.now(datetime.timezone.utc).replace(minute=0, second=0, microsecond=0) + \
        datetime.timedelta(days=2)
    fx.write_json(os.path.join(TMP, "blocks.json"), [
        {"id": "cb-a", "region": REGION, "instance_type": T, "availability_zone": "us-east-1a",
         "instance_count": NODES, "start": iso(start), "end": iso(start + datetime.timedelta(hours=72)),
         "duration_hours": 72, "upfront_fee": "4800.00"}])
    fx.write_json(os.path.join(TMP, "sp.json"), [
        {"savingsPlanOffering": {"offeringId": "sp-1", "paymentOption": "No Upfront", "planType": "Compute",
                                 "durationSeconds": 31536000, "currency": "USD"},
         "rate": "14.75", "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2",
         "usageType": "USE1-BoxUsage:" + T, "operation": "RunInstances",
         "properties": [{"name": "region", "value": REGION}, {"name": "instanceType", "value": T},
                        {"name": "tenancy", "value": "shared"}, {"name": "productDescription", "value": "Linux/UNIX"}]}])
    fx.write_json(os.path.join(TMP, "prices.json"), [{"instance_type": T, "region": REGION, "on_demand": 55.04,
                                                      "spot": {"use1-az1": 20.5, "use1-az2": 21.5}}])
    results = os.path.join(TMP, "results")
    fx.write_json(os.path.join(results, "r.json"), fx.result(T, REGION, NODES, 8, "NVIDIA H100", SPS))
    fake, env = fx.markets_fake(TMP, timeout="300")
    try:
        args = ["--market", "all", "--block-duration", "3d", "--format", "json", results]

        # every quote answered: the four rows ranked (the reference the faults below depart from)
        rc, out, err = fx.run(BIN, args, env=env)
        rows = rows_of(out)
        check(rc == 0 and len(rows) == 4 and all(r["rank"] is not None for r in rows.values()),
              "no fault: rc %d %s\n%s" % (rc, sorted(rows), err))

        # the Savings Plans service fails (503 on every request, retries included): the plan row says
        # so, the block, on-demand and spot rows are ranked, exit 0, one warning
        fake.control(clear_faults=True, faults=[{"kind": "503", "count": 1000, "service": "savingsplans"}])
        rc, out, err = fx.run(BIN, args, env=env)
        rows = rows_of(out)
        plan = rows.get("savings-plan", {})
        why = plan.get("unpriced_reason") or ""
        check(rc == 0, "savings plans failing, --source auto: rc %d\n%s" % (rc, err))
        check(plan.get("rank") is None and "Savings Plan rates" in why and "failed" in why and "savingsplans" in why
              and "Capacity Block" not in why, "savings plans failing: the plan row's reason: %r" % why)
        check(all(rows.get(m, {}).get("rank") is not None for m in ("capacity-block", "on-demand", "spot")),
              "savings plans failing: the other rows ranked: %s" % {m: r["rank"] for m, r in rows.items()})
        warned = [l for l in err.splitlines() if l.startswith("warning:") and "Savings Plan rates" in l]
        check(len(warned) == 1 and "failed" in warned[0], "savings plans failing: one warning, got %s\n%s" % (warned, err))

        # strict: the same failure is an error naming the market and the flags
        rc, out, err = fx.run(BIN, args + ["--source", "live"], env=env)
        check(rc == 1 and "--source live" in err and "Savings Plan rates" in err and "--market savings-plan" in err
              and not out.strip(), "savings plans failing, --source live: rc %d out %r\n%s" % (rc, out[:200], err))

        # EC2 fails (access denied): the spot prices fall back to the snapshot as before; the block
        # row says its request failed, the plan row is priced, exit 0
        fake.control(clear_faults=True, faults=[{"kind": "denied", "count": 1000, "service": "ec2"}])
        rc, out, err = fx.run(BIN, args, env=env)
        rows = rows_of(out)
        block = rows.get("capacity-block", {})
        why = block.get("unpriced_reason") or ""
        check(rc == 0, "EC2 failing, --source auto: rc %d\n%s" % (rc, err))
        check(block.get("rank") is None and "Capacity Block offerings" in why and "failed" in why and
              "UnauthorizedOperation" in why and "Savings Plan" not in why, "EC2 failing: the block row's reason: %r" % why)
        check(rows.get("savings-plan", {}).get("rank") is not None and rows.get("on-demand", {}).get("rank") is not None,
              "EC2 failing: the plan and on-demand rows ranked: %s" % {m: r["rank"] for m, r in rows.items()})
        warned = [l for l in err.splitlines() if l.startswith("warning:") and "Capacity Block offerings" in l]
        check(len(warned) == 1, "EC2 failing: one warning for the blocks, got %s\n%s" % (warned, err))

        # --market capacity-block alone, strict: the message names the market and --source live
        rc, out, err = fx.run(BIN, ["--market", "capacity-block", "--block-duration", "3d", "--source", "live",
                                    results], env=env)
        check(rc == 1 and "--source live" in err and "Capacity Block offerings" in err and
              "--market capacity-block" in err, "EC2 failing, --source live: rc %d\n%s" % (rc, err))
        fake.control(clear_faults=True)

        # nothing listening, as the audit found it; each market alone still writes its
        # report with the row's reason, as without credentials (exit 1 there: nothing priced)
        dead = dict(env, AWS_ENDPOINT_URL=refused_url())
        rc, out, err = fx.run(BIN, args, env=dead)
        rows = rows_of(out)
        check(rc == 0 and rows.get("on-demand", {}).get("rank") is not None and
              "Capacity Block offerings" in (rows.get("capacity-block", {}).get("unpriced_reason") or "") and
              "Savings Plan rates" in (rows.get("savings-plan", {}).get("unpriced_reason") or ""),
              "no endpoint, --market all: rc %d %s\n%s" % (rc, rows, err))
        for market in ("capacity-block", "savings-plan"):
            rc, out, err = fx.run(BIN, ["--market", market, "--format", "json", results], env=dead)
            rows = rows_of(out)
            check(rc == 1 and market in rows and "failed" in (rows[market].get("unpriced_reason") or "") and
                  "AWS ec2 request failed" not in err.splitlines()[-1],
                  "no endpoint, --market %s: rc %d %s\n%s" % (market, rc, rows, err))

        # no credentials, and offline: each row names its own market
        env2 = {k: v for k, v in env.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
        for extra in ([], ["--source", "snapshot"]):
            rc, out, err = fx.run(BIN, args + extra, env=env2)
            rows = rows_of(out)
            b = rows.get("capacity-block", {}).get("unpriced_reason") or ""
            p = rows.get("savings-plan", {}).get("unpriced_reason") or ""
            check(rc == 0 and b.startswith("Capacity Block offerings") and "Savings Plan" not in b and
                  p.startswith("Savings Plan rates") and "Capacity Block" not in p,
                  "offline %s: rc %d, block %r, plan %r\n%s" % (extra, rc, b, p, err))
            check(sum("live" in l for l in err.splitlines() if l.startswith("warning:")) == 1,
                  "offline %s: one warning\n%s" % (extra, err))
    finally:
        fake.stop()
        shutil.rmtree(TMP, ignore_errors=True)


main()
if failures:
    sys.exit(1)
print("ok: rank's quotes of the markets bought ahead, failing and offline")
