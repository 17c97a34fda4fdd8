#!/usr/bin/python3
"""`instbench prices --market capacity-block | savings-plan` against the fake AWS
(tests/fakes/aws_fake_server.py: signatures checked with botocore).  moto implements neither
DescribeCapacityBlockOfferings nor DescribeSavingsPlansOfferingRates, so the fake answers them from
files written here in the shapes of AWS's API reference, and every request instbench sent is
compared field by field with what botocore's own serializer makes of the same operation and
parameters.  The money is recomputed here from the offerings and rates written here (fee /
(instances x hours); a plan's commitment, upfront share and break-even), never from instbench's
output.

usage: prices_markets.py INSTBENCH PRICE_DATA_DIR CASE
  blocks   offerings, rates, distractors left out, pagination, dates sent, botocore's requests
  plans    a Savings Plan's rate beside on-demand, amortised upfront, break-even, botocore's requests
  offline  no credentials or --source snapshot: the live-only line, exit 0, no figure
  usage    bad input: exit 2 with a clear message, before any request
  hostile  hex, whitespace, subnormal and impossible-date answers refused naming the field; an
           offering already started left out and said; CSV cells the JSON's text; "never" pays
  ultraservers  UltraServer offerings (UltraserverType/UltraserverCount) and P6 blocks, priced per
           instance and per accelerator, botocore's requests
  columns  --columns names the CSV's columns in the table, the CSV and the JSON rows, the values
           against the whole offerings document of the same query; an old key: its note, same output
"""
import csv
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
import testlib  # noqa: E402
from botocore_ref import botocore_request  # noqa: E402
from testlib import FakeAws, fail, require as check  # noqa: E402


INSTBENCH, DATA, CASE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
testlib.label = CASE
AK = "AKIDEXAMPLE"
SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TMP = tempfile.mkdtemp(prefix="instbench-markets-")
ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT_DIR, "schemas", "offerings-v1.json")) as _f:
    SCHEMA = json.load(_f)


def valid(doc, what):
    """DOC against schemas/offerings-v1.json (python3-jsonschema), with formats checked."""
    import jsonschema
    try:
        jsonschema.validate(doc, SCHEMA, format_checker=jsonschema.FormatChecker())
    except jsonschema.ValidationError as e:
        fail("%s: not valid against schemas/offerings-v1.json: %s" % (what, e.message))
    return doc
# AWS's facts, not instbench's: accelerators per instance (EC2 accelerated computing instances)
GPUS = {"p4d.24xlarge": 8, "p5.48xlarge": 8}


def env(endpoint=None, creds=True):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(HOME=os.path.join(TMP, "home"), XDG_CACHE_HOME=os.path.join(TMP, "cache"),
             AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=os.path.join(TMP, "no-config"),
             AWS_SHARED_CREDENTIALS_FILE=os.path.join(TMP, "no-credentials"), NO_COLOR="1",
             INSTBENCH_AWS_BACKOFF_BASE="0.05")
    if creds:
        e.update(AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
    if endpoint:
        e["AWS_ENDPOINT_URL"] = endpoint.url
    return e


def run(args, e, rc=0):
    p = subprocess.run([INSTBENCH, "prices"] + args, env=e, capture_output=True, text=True, timeout=120, cwd=TMP)
    if "Sanitizer" in p.stderr or "runtime error:" in p.stderr:
        fail("sanitizer report for %s:\n%s" % (args, p.stderr[-3000:]))
    if rc is not None and p.returncode != rc:
        fail("prices %s: exit %d, wanted %d\nstdout: %s\nstderr: %s" % (" ".join(args), p.returncode, rc,
                                                                       p.stdout[-2000:], p.stderr[-2000:]))
    return p


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def day(n, hour=11, minute=30):
    """11:30 UTC N days from today (Capacity Blocks start and end at 11:30 UTC)."""
    d = datetime.datetime.now(datetime.timezone.utc).replace(hour=hour, minute=minute, second=0, microsecond=0)
    return d + datetime.timedelta(days=n)


def botocore_form(op, params):
    """The form botocore's EC2 serializer sends for OP with PARAMS (values as strings)."""
    r = botocore_request("ec2", op, {k: (iso(v) if isinstance(v, datetime.datetime) else v) for k, v in params.items()})
    return {k: str(v) for k, v in r["body"].items()}


def botocore_rest_json(op, params):
    r = botocore_request("savingsplans", op, params)
    return r["method"], r["url_path"], json.loads(r["body"]), r["content_type"]


# ---- capacity blocks ---------------------------------------------------------------------------

def offering(i, region, t, az, count, start_day, days, fee, **kw):
    start = day(start_day)
    o = {"id": "cb-%017x" % i, "region": region, "instance_type": t, "availability_zone": az, "instance_count": count,
         "start": iso(start), "end": iso(start + datetime.timedelta(days=days)), "duration_hours": days * 24,
         "duration_minutes": 0, "upfront_fee": fee, "currency": "USD"}
    o.update(kw)
    return o


def case_blocks():
    offers = [
        # what is asked: 2 x p5.48xlarge for 3 days in us-east-1, several starts and zones
        offering(1, "us-east-1", "p5.48xlarge", "us-east-1a", 2, 3, 3, "21345.12"),
        offering(2, "us-east-1", "p5.48xlarge", "us-east-1b", 2, 1, 3, "20876.5"),
        offering(3, "us-east-1", "p5.48xlarge", "us-east-1c", 2, 9, 3, "19003.04"),
        # distractors: another count, duration, region, type, a dedicated block
        offering(4, "us-east-1", "p5.48xlarge", "us-east-1a", 4, 3, 3, "40000"),
        offering(5, "us-east-1", "p5.48xlarge", "us-east-1a", 2, 3, 4, "30000"),
        offering(6, "us-west-2", "p5.48xlarge", "us-west-2a", 2, 3, 3, "1"),
        offering(7, "us-east-1", "p4d.24xlarge", "us-east-1a", 2, 3, 3, "9000"),
        offering(8, "us-east-1", "p5.48xlarge", "us-east-1d", 2, 3, 3, "5", tenancy="dedicated"),
        # one lasting 71 h 35 min: EC2's minutes add to its hours
        offering(9, "us-east-1", "p5.48xlarge", "us-east-1d", 2, 5, 3, "18111", duration_hours=72,
                 end=iso(day(5) + datetime.timedelta(hours=72, minutes=35)), duration_minutes=35),
    ]
    wanted = [o for o in offers if o["id"] in ("cb-%017x" % i for i in (1, 2, 3, 9))]
    path = os.path.join(TMP, "blocks.json")
    with open(path, "w") as f:
        json.dump(offers, f)
    fake = FakeAws("--capacity-blocks", path, "--ec2-page-size", "2", "--timeout", "120")
    try:
        e = env(fake)
        p = run(["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--nodes", "2", "--block-duration", "3d",
                 "--region", "us-east-1", "--format", "json"], e)
        doc = valid(json.loads(p.stdout), "blocks")
        check(doc.get("schema") == "instbench.offerings/v1" and doc.get("market") == "capacity-block",
              "schema/market: %s" % p.stdout[:300])
        got = {o["offering_id"]: o for o in doc["offerings"]}
        check(sorted(got) == sorted(o["id"] for o in wanted), "offerings shown %s, wanted %s" %
              (sorted(got), sorted(o["id"] for o in wanted)))
        for o in wanted:
            g = got.get(o["id"])
            if not g:
                continue
            hours = o["duration_hours"] + o["duration_minutes"] / 60.0
            per_inst = float(o["upfront_fee"]) / (o["instance_count"] * hours)
            per_gpu = per_inst / GPUS["p5.48xlarge"]
            check(math.isclose(g["usd_per_instance_hour"], per_inst, rel_tol=1e-12),
                  "%s: $/instance-h %s, wanted %s" % (o["id"], g["usd_per_instance_hour"], per_inst))
            check(math.isclose(g["upfront_fee_usd"], float(o["upfront_fee"]), rel_tol=1e-15), "%s fee" % o["id"])
            check(math.isclose(g["duration_hours"], hours, rel_tol=1e-12), "%s hours %s" % (o["id"], g["duration_hours"]))
            check(g["availability_zone"] == o["availability_zone"] and g["start"] == o["start"] and g["end"] == o["end"],
                  "%s: zone/dates %s" % (o["id"], g))
            # the catalogue may not know p5's accelerators: then no per-accelerator figure, never a wrong one
            pa = g["usd_per_accelerator_hour"]
            check(pa is None or math.isclose(pa, per_gpu, rel_tol=1e-12), "%s: $/accel-h %s, wanted %s" % (o["id"], pa, per_gpu))
        # the first page and the page after it, each as botocore serialises it
        log = [r for r in fake.stats()["requests_log"] if r["op"] == "DescribeCapacityBlockOfferings"]
        # five offerings match the query as EC2 filters it (the dedicated one is instbench's to drop)
        check(len(log) == 3, "requests: %d, wanted 3 pages (--ec2-page-size 2, 5 offerings)" % len(log))
        for r in log:
            params = {"InstanceType": "p5.48xlarge", "InstanceCount": 2, "CapacityDurationHours": 72, "MaxResults": 1000}
            if "NextToken" in r["form"]:
                params["NextToken"] = r["form"]["NextToken"]
            want = botocore_form("DescribeCapacityBlockOfferings", params)
            check(r["form"] == want, "request %s\n  botocore: %s" % (r["form"], want))
            check(r["method"] == "POST" and r["content_type"].startswith("application/x-www-form-urlencoded"),
                  "method/content type %s %s" % (r["method"], r["content_type"]))

        # dates: StartDateRange / EndDateRange as botocore sends them; only offerings inside them
        fake.control(reset_stats=True)
        lo, hi = day(2, 0, 0), day(8, 0, 0)
        p = run(["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--nodes", "2", "--block-duration", "72h",
                 "--region", "us-east-1", "--start-after", iso(lo), "--end-before", iso(hi), "--format", "csv"], e)
        rows = list(csv.DictReader(p.stdout.splitlines()))
        want_ids = sorted(o["id"] for o in wanted if o["start"] >= iso(lo) and o["end"] <= iso(hi))
        check(sorted(r["offering_id"] for r in rows) == want_ids, "dated: %s, wanted %s" %
              ([r["offering_id"] for r in rows], want_ids))
        for r in rows:
            o = next(x for x in offers if x["id"] == r["offering_id"])
            hours = o["duration_hours"] + o["duration_minutes"] / 60.0
            check(math.isclose(float(r["usd_per_instance_hour"]), float(o["upfront_fee"]) / (2 * hours), rel_tol=1e-12),
                  "csv rate %s" % r)
        log = [r for r in fake.stats()["requests_log"] if r["op"] == "DescribeCapacityBlockOfferings"]
        want = botocore_form("DescribeCapacityBlockOfferings", {
            "InstanceType": "p5.48xlarge", "InstanceCount": 2, "CapacityDurationHours": 72, "MaxResults": 1000,
            "StartDateRange": lo, "EndDateRange": hi})
        check(log and log[0]["form"] == want, "dated request %s\n  botocore: %s" % (log[:1], want))

        # the table: the fee and the effective rate as people read them, the block paid whole
        p = run(["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--nodes", "2", "--block-duration", "3d",
                 "--region", "us-east-1", "--format", "table", "--wide"], e)
        first = min(wanted, key=lambda o: o["start"])
        check(testlib.usd(float(first["upfront_fee"]) / (2 * 72)) in p.stdout and testlib.usd(float(first["upfront_fee"]))
              in p.stdout and "never purchases" in p.stdout, "table:\n%s" % p.stdout)

        # a type AWS offers no block of now: exit 1, said
        p = run(["--market", "capacity-block", "--instance-types", "p4de.24xlarge", "--block-duration", "3d",
                 "--region", "us-east-1"], e, rc=1)
        check("no Capacity Block" in p.stderr, "none offered: %s" % p.stderr)
        check(fake.stats()["signature_failures"] == 0, "signature failures: %s" % fake.stats())
    finally:
        fake.stop()


# ---- savings plans -----------------------------------------------------------------------------

def sp_result(t, region, plan, payment, years, rate, usage=None, op="RunInstances", desc="Linux/UNIX", tenancy="shared"):
    return {"savingsPlanOffering": {"offeringId": "%s-%s-%s-%d" % (plan, payment.replace(" ", ""), t, years),
                                    "paymentOption": payment, "planType": plan, "durationSeconds": years * 31536000,
                                    "currency": "USD", "planDescription": "%d year %s" % (years, payment)},
            "rate": rate, "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2",
            "usageType": usage or "USE1-BoxUsage:%s" % t, "operation": op,
            "properties": [{"name": "region", "value": region}, {"name": "instanceType", "value": t},
                           {"name": "instanceFamily", "value": t.split(".")[0]},
                           {"name": "productDescription", "value": desc}, {"name": "tenancy", "value": tenancy}]}


def on_demand(t, region):
    with open(os.path.join(DATA, "aws-accelerated-prices.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["instance_type"] == t and r["region"] == region and r["on_demand_usd_per_hour"]:
                return float("%.10f" % round(float(r["on_demand_usd_per_hour"]), 4))   # as the fake serves it
    raise KeyError(t)


def case_plans():
    t, region = "p4d.24xlarge", "us-east-1"
    rates = [
        sp_result(t, region, "Compute", "Partial Upfront", 1, "14.1234"),         # the one asked
        sp_result(t, region, "Compute", "Partial Upfront", 3, "9.5"),             # another term
        sp_result(t, region, "Compute", "No Upfront", 1, "15.2"),                 # another payment
        sp_result(t, region, "EC2Instance", "Partial Upfront", 1, "12.9"),        # another plan
        sp_result(t, "us-west-2", "Compute", "Partial Upfront", 1, "13.0"),       # another region
        sp_result(t, region, "Compute", "Partial Upfront", 1, "20.1", desc="Windows", op="RunInstances:0002"),
        sp_result(t, region, "Compute", "Partial Upfront", 1, "14.9", usage="USE1-DedicatedUsage:%s" % t,
                  tenancy="dedicated"),
        sp_result("p4d.24xlarge", region, "Compute", "All Upfront", 3, "8.8"),
        sp_result("p3.2xlarge", region, "Compute", "Partial Upfront", 1, "2.0"),
    ]
    # SageMaker: the training usage beside a hosting distractor of the same instance
    for usage, rate in (("USE1-Train:ml.p4d.24xlarge", "30.25"), ("USE1-Host:ml.p4d.24xlarge", "31.5")):
        r = sp_result("ml.p4d.24xlarge", region, "SageMaker", "No Upfront", 1, rate, usage=usage, op="")
        r.update(productType="SageMaker", serviceCode="AmazonSageMaker")
        r["properties"] = [x for x in r["properties"] if x["name"] in ("region", "instanceType")]
        rates.append(r)
    path = os.path.join(TMP, "sp.json")
    with open(path, "w") as f:
        json.dump(rates, f)
    fake = FakeAws("--prices", os.path.join(DATA, "aws-accelerated-prices.csv"), "--savings-plan-rates", path,
                   "--sp-page-size", "1", "--timeout", "120")
    try:
        e = env(fake)
        p = run(["--market", "savings-plan", "--instance-types", t, "--region", region, "--term", "1y",
                 "--payment", "partial", "--nodes", "2", "--format", "json"], e)
        doc = valid(json.loads(p.stdout), "plans")
        check(doc.get("market") == "savings-plan" and len(doc.get("rates", [])) == 1, "plans: %s" % p.stdout[:500])
        g = doc["rates"][0] if doc.get("rates") else {}
        rate, od, hours = 14.1234, on_demand(t, region), 365 * 24
        want = {"plan_usd_per_hour": rate, "on_demand_usd_per_hour": od, "break_even_utilisation": rate / od,
                "commitment_usd_per_hour": 2 * rate, "upfront_usd": 0.5 * 2 * rate * hours,
                "recurring_usd_per_hour": 0.5 * 2 * rate, "term_hours": hours, "nodes": 2}
        for k, v in want.items():
            check(k in g and g[k] is not None and math.isclose(g[k], v, rel_tol=1e-12), "%s: %s, wanted %s" % (k, g.get(k), v))
        # amortised: upfront over the term plus recurring is the commitment again
        if g:
            check(math.isclose(g["upfront_usd"] / hours + g["recurring_usd_per_hour"], 2 * rate, rel_tol=1e-12), "amortised")
        check(g.get("on_demand_source") == "live", "on-demand source %s" % g.get("on_demand_source"))
        log = [r for r in fake.stats()["requests_log"] if r["op"] == "DescribeSavingsPlansOfferingRates"]
        check(len(log) >= 2, "pagination: %d requests with one result a page" % len(log))
        for r in log:
            params = {"savingsPlanTypes": ["Compute"], "savingsPlanPaymentOptions": ["Partial Upfront"],
                      "products": ["EC2"], "serviceCodes": ["AmazonEC2"], "operations": ["RunInstances"],
                      "filters": [{"name": "instanceType", "values": [t]}, {"name": "region", "values": [region]},
                                  {"name": "tenancy", "values": ["shared"]},
                                  {"name": "productDescription", "values": ["Linux/UNIX"]}],
                      "maxResults": 1000}
            if isinstance(r["json"], dict) and "nextToken" in r["json"]:
                params["nextToken"] = r["json"]["nextToken"]
            method, path_, body, ctype = botocore_rest_json("DescribeSavingsPlansOfferingRates", params)
            check((r["method"], r["path"], r["json"]) == (method, path_, body) and r["content_type"] == ctype,
                  "request %s %s %s %s\n  botocore: %s %s %s %s" % (r["method"], r["path"], r["json"], r["content_type"],
                                                                    method, path_, body, ctype))
        # the table says how the upfront is amortised
        p = run(["--market", "savings-plan", "--instance-types", t, "--region", region, "--payment", "partial",
                 "--nodes", "2", "--format", "table", "--wide"], e)
        check(testlib.usd(rate) in p.stdout and testlib.usd(0.5 * 2 * rate * hours) in p.stdout and "8,760" in p.stdout
              and "%.0f%%" % (rate / od * 100) in p.stdout, "table:\n%s" % p.stdout)
        # 3 years all upfront: everything up front, nothing hourly
        p = run(["--market", "savings-plan", "--instance-types", t, "--region", region, "--term", "3y",
                 "--payment", "all", "--format", "json"], e)
        g = json.loads(p.stdout)["rates"][0]
        check(math.isclose(g["upfront_usd"], 8.8 * 3 * 8760, rel_tol=1e-12) and g["recurring_usd_per_hour"] == 0,
              "3y all upfront: %s" % g)
        # a SageMaker plan for an ml.* type: its training rate, asked as botocore asks it
        fake.control(reset_stats=True)
        p = run(["--market", "savings-plan", "--instance-types", "ml.p4d.24xlarge", "--region", region,
                 "--format", "json"], e)
        g = valid(json.loads(p.stdout), "sagemaker")["rates"]
        check(len(g) == 1 and g[0]["plan_usd_per_hour"] == 30.25 and json.loads(p.stdout)["query"]["plan_type"] ==
              "SageMaker", "sagemaker: %s" % p.stdout[:400])
        log = [r for r in fake.stats()["requests_log"] if r["op"] == "DescribeSavingsPlansOfferingRates"]
        want = botocore_rest_json("DescribeSavingsPlansOfferingRates", {
            "savingsPlanTypes": ["SageMaker"], "savingsPlanPaymentOptions": ["No Upfront"], "products": ["SageMaker"],
            "serviceCodes": ["AmazonSageMaker"], "filters": [{"name": "instanceType", "values": ["ml.p4d.24xlarge"]},
                                                             {"name": "region", "values": [region]}],
            "maxResults": 1000})
        check(log and (log[0]["method"], log[0]["path"], log[0]["json"], log[0]["content_type"]) == want,
              "sagemaker request %s\n  botocore: %s" % (log[:1], want))
        # no rate for the plan asked: exit 1, said
        p = run(["--market", "savings-plan", "--instance-types", t, "--region", region, "--plan", "ec2-instance",
                 "--payment", "all"], e, rc=1)
        check("no EC2 Instance Savings Plan rate" in p.stderr, "no rate: %s" % p.stderr)
        check(fake.stats()["signature_failures"] == 0, "signature failures")
    finally:
        fake.stop()


# ---- hostile answers, numbers as the JSON writes them (issue 39) ---------------------------------

def shortest(v):
    """V's shortest text, as instbench writes numbers: repr's, but an integral value without ".0"
    (instbench's clock is whole seconds and the offering starts at 11:57:36, so a run at hh:57:36,
    one in 3600, waits whole hours and writes "73", which repr's "73.0" failed)."""
    t = repr(v)
    return t[:-2] if t.endswith(".0") else t


def json_texts(out):
    """The JSON document with every number kept as the text instbench wrote."""
    return json.loads(out, parse_float=str, parse_int=str)


def case_hostile():
    base = ["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--nodes", "2", "--block-duration", "3d",
            "--region", "us-east-1"]
    path = os.path.join(TMP, "blocks.json")
    # a fee or a date no AWS answer carries fails the answer, naming the field, never read another way
    # ("0x10" would be $16 to strtod, 2026-02-30 would become March 2)
    good = offering(1, "us-east-1", "p5.48xlarge", "us-east-1a", 2, 3, 3, "21345.12")
    hostile = [(dict(good, upfront_fee="0x10"), "upfrontFee"), (dict(good, upfront_fee=" 100"), "upfrontFee"),
               (dict(good, upfront_fee="1e-300"), "upfrontFee"), (dict(good, upfront_fee="100 "), "upfrontFee"),
               (dict(good, start="2026-02-30T11:30:00Z", end="2026-03-05T11:30:00Z"), "startDate"),
               (dict(good, end=good["end"].replace("T11:30", "T25:30")), "endDate")]
    for o, field in hostile:
        with open(path, "w") as f:
            json.dump([o], f)
        fake = FakeAws("--capacity-blocks", path, "--timeout", "120")
        try:
            p = run(base + ["--format", "json"], env(fake), rc=1)
            check(field in p.stderr and p.stdout == "", "%s=%r: %s" % (field, o.get("upfront_fee"), p.stderr))
        finally:
            fake.stop()

    # an offering that started 3 days ago (a 7-day block) is refused and says so, not shown as "now"
    # over its full length; the one that starts ahead is shown.  CSV cells are the JSON's very text.
    started = offering(2, "us-east-1", "p5.48xlarge", "us-east-1b", 2, -3, 7, "50000", duration_hours=72)
    started["end"] = iso(day(-3) + datetime.timedelta(hours=72 + 96))
    future = offering(3, "us-east-1", "p5.48xlarge", "us-east-1c", 2, 3, 3, "21345.12",
                      start=iso(day(3) + datetime.timedelta(minutes=27, seconds=36)))
    with open(path, "w") as f:
        json.dump([started, future], f)
    fake = FakeAws("--capacity-blocks", path, "--timeout", "120")
    try:
        e = env(fake)
        p = run(base + ["--format", "json"], e)
        doc = valid(json.loads(p.stdout), "started")
        check([o["offering_id"] for o in doc["offerings"]] == [future["id"]], "started offering shown: %s" % p.stdout)
        check(started["id"] in p.stderr and "started" in p.stderr and "left out" in p.stderr, "not said: %s" % p.stderr)
        p = run(base + ["--format", "table"], e)
        check(started["id"] not in p.stdout and " now " not in p.stdout, "table shows it:\n%s" % p.stdout)
        jt = json_texts(run(base + ["--format", "json"], e).stdout)["offerings"][0]
        rows = list(csv.DictReader(run(base + ["--format", "csv"], e).stdout.splitlines()))
        check(len(rows) == 1, "csv rows %s" % rows)
        for key in ("duration_hours", "upfront_fee_usd", "usd_per_instance_hour", "usd_per_accelerator_hour"):
            want = "" if jt[key] is None else jt[key]
            check(rows and rows[0][key] == want, "csv %s %r, json %r" % (key, rows and rows[0][key], want))
        # the wait is computed at each run's own clock: the same shortest text, read back, within the seconds between runs
        check(rows and rows[0]["wait_hours"] == shortest(float(rows[0]["wait_hours"])) and
              abs(float(rows[0]["wait_hours"]) - float(jt["wait_hours"])) < 0.01, "wait %s" % rows)
        check(rows and rows[0]["upfront_fee_usd"] == "21345.12", "fee cell %r" % (rows and rows[0]["upfront_fee_usd"]))
    finally:
        fake.stop()

    # Savings Plans: a rate in hex or with whitespace is no rate; one above on-demand never pays
    t, region = "p4d.24xlarge", "us-east-1"
    sp = os.path.join(TMP, "sp.json")
    for bad in ("0x1", " 100", "1e-300"):
        with open(sp, "w") as f:
            json.dump([sp_result(t, region, "Compute", "No Upfront", 1, bad)], f)
        fake = FakeAws("--prices", os.path.join(DATA, "aws-accelerated-prices.csv"), "--savings-plan-rates", sp,
                       "--timeout", "120")
        try:
            p = run(["--market", "savings-plan", "--instance-types", t, "--region", region, "--format", "json"],
                    env(fake), rc=1)
            check("rate" in p.stderr and p.stdout == "", "rate %r: %s" % (bad, p.stderr))
        finally:
            fake.stop()
    od = on_demand(t, region)
    high = "%.4f" % (od * 17.45)
    with open(sp, "w") as f:
        json.dump([sp_result(t, region, "Compute", "No Upfront", 1, high)], f)
    fake = FakeAws("--prices", os.path.join(DATA, "aws-accelerated-prices.csv"), "--savings-plan-rates", sp,
                   "--timeout", "120")
    try:
        e = env(fake)
        q = ["--market", "savings-plan", "--instance-types", t, "--region", region, "--nodes", "3"]
        p = run(q + ["--format", "json"], e)
        g = valid(json.loads(p.stdout), "never")["rates"][0]
        check(g["break_even_utilisation"] == "never", "json break-even %r" % g["break_even_utilisation"])
        p = run(q + ["--format", "table", "--wide"], e)
        line = next((x for x in p.stdout.splitlines() if x.startswith(t)), "")
        check("never" in line and "%" not in line and "-1645" not in line, "table row %r" % line)
        rows = list(csv.DictReader(run(q + ["--format", "csv"], e).stdout.splitlines()))
        jt = json_texts(run(q + ["--format", "json"], e).stdout)["rates"][0]
        check(rows and rows[0]["break_even_utilisation"] == "never", "csv break-even %s" % rows)
        for key in ("plan_usd_per_hour", "on_demand_usd_per_hour", "commitment_usd_per_hour", "upfront_usd",
                    "recurring_usd_per_hour", "term_hours"):
            check(rows and rows[0][key] == jt[key], "csv %s %r, json %r" % (key, rows and rows[0][key], jt[key]))
    finally:
        fake.stop()


# ---- --columns: the CSV's names in every format (issue 41) ----------------------------------------

def market_reference(doc, key, i):
    """KEY of row I in the whole instbench.offerings/v1 document: the row's field, the query's for
    the plan's own, the times with their Z, the savings 100 x (1 - break-even)."""
    rows = doc.get("offerings") or doc.get("rates") or []
    row = rows[i] if i < len(rows) else {}
    if key in ("start_utc", "end_utc"):
        return row.get(key[:-4])
    if key in ("plan_type", "term_years", "payment_option"):
        return doc["query"][key]
    if key == "savings_pct":
        be = row.get("break_even_utilisation")
        return None if be is None else "never" if be == "never" else 100 * (1 - be)
    return row.get(key)


def columns_of(base, e, doc, old, new):
    """Every CSV column of the market, alone and all together reversed, in the CSV, the JSON rows and
    the table, against DOC (the whole document of the same query); OLD, a key of the table before,
    gives NEW's output and one note."""
    header = next(csv.reader(run(base + ["--format", "csv"], e).stdout.splitlines()))
    n = len(doc.get("offerings") or doc.get("rates") or [])
    check(n > 0, "the case needs rows: %s" % doc)
    keys = list(reversed(header))
    rows = list(csv.DictReader(run(base + ["--format", "csv", "--columns", ",".join(keys)], e).stdout.splitlines()))
    flat = json.loads(run(base + ["--format", "json", "--columns", ",".join(keys)], e).stdout)
    check(flat.get("schema") == "instbench.price-rows/v1" and flat.get("columns") == keys, "rows head %s" % flat)
    check(len(rows) == n and len(flat.get("rows", [])) == n, "%d csv, %d json rows, want %d" % (len(rows), len(flat.get("rows", [])), n))
    for i in range(min(n, len(rows), len(flat.get("rows", [])))):
        check(list(rows[i]) == keys and list(flat["rows"][i]) == keys, "row %d keys" % i)
        for k in keys:
            v, cell, got = market_reference(doc, k, i), rows[i][k], flat["rows"][i][k]
            if k == "wait_hours":   # each run's own clock
                check(abs(float(cell) - v) < 0.01 and abs(got - v) < 0.01, "wait %r %r %r" % (cell, got, v))
            elif k in ("start_utc", "end_utc"):
                check(cell + "Z" == v and got == v, "%s csv %r json %r, document %r" % (k, cell, got, v))
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                check(cell != "" and abs(float(cell) - v) <= 1e-9 * max(1, abs(v)) and abs(got - v) <= 1e-9 * max(1, abs(v)),
                      "%s csv %r json %r, document %r" % (k, cell, got, v))
            else:
                check(cell == ("" if v is None else str(v)) and got == v, "%s csv %r json %r, document %r" % (k, cell, got, v))
    for k in header:
        c = list(csv.reader(run(base + ["--format", "csv", "--columns", k], e).stdout.splitlines()))
        check(c[:1] == [[k]] and len(c) == n + 1, "--columns %s csv %s" % (k, c[:2]))
        j = json.loads(run(base + ["--format", "json", "--columns", k], e).stdout)
        check(j.get("columns") == [k] and [list(r) for r in j.get("rows", [])] == [[k]] * n, "--columns %s json %s" % (k, j))
        t = run(base + ["--format", "table", "--columns", k], e).stdout.splitlines()
        check(len(t) >= n + 2 and set(t[1]) == {"-"} and len(t[1].split()) == 1, "--columns %s table %s" % (k, t[:3]))
    for fmt in ("table", "csv"):
        po, pn = run(base + ["--format", fmt, "--columns", old], e), run(base + ["--format", fmt, "--columns", new], e)
        strip = (lambda x: re.sub(r"STARTS IN.*|[0-9]+d [0-9]+h|[0-9.]+ h\b", "", x)) if "wait" in new else (lambda x: x)
        check(strip(po.stdout) == strip(pn.stdout) and po.stdout, "--columns %s %s differs from %s" % (old, fmt, new))
        notes = [x for x in po.stderr.splitlines() if "'%s'" % old in x]
        check(len(notes) == 1 and new in notes[0], "the note for %s: %r" % (old, po.stderr))
    p = run(base + ["--columns", "instance_typ"], e, rc=2)
    check(all(k in p.stderr for k in header) and p.stdout == "", "unknown key: %r" % p.stderr)


def case_columns():
    path = os.path.join(TMP, "blocks-columns.json")
    with open(path, "w") as f:
        json.dump([offering(1, "us-east-1", "p5.48xlarge", "us-east-1a", 2, 3, 3, "21345.12"),
                   offering(2, "us-east-1", "p5.48xlarge", "us-east-1b", 2, 5, 3, "22345.5")], f)
    fake = FakeAws("--capacity-blocks", path, "--timeout", "120")
    try:
        e = env(fake)
        base = ["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--nodes", "2", "--block-duration",
                "3d", "--region", "us-east-1"]
        doc = valid(json.loads(run(base + ["--format", "json"], e).stdout), "blocks")
        columns_of(base, e, doc, "fee", "upfront_fee_usd")
    finally:
        fake.stop()
    t, region = "p4d.24xlarge", "us-east-1"
    sp = os.path.join(TMP, "sp-columns.json")
    with open(sp, "w") as f:
        json.dump([sp_result(t, region, "Compute", "No Upfront", 1, "%.4f" % (on_demand(t, region) * 0.6))], f)
    fake = FakeAws("--prices", os.path.join(DATA, "aws-accelerated-prices.csv"), "--savings-plan-rates", sp,
                   "--timeout", "120")
    try:
        e = env(fake)
        base = ["--market", "savings-plan", "--instance-types", t, "--region", region, "--nodes", "3"]
        doc = valid(json.loads(run(base + ["--format", "json"], e).stdout), "plans")
        columns_of(base, e, doc, "break_even", "break_even_utilisation")
    finally:
        fake.stop()



# ---- offline and usage ---------------------------------------------------------------------------

def case_offline():
    for market, extra in (("capacity-block", ["--block-duration", "3d"]), ("savings-plan", [])):
        base = ["--market", market, "--instance-types", "p5.48xlarge", "--region", "us-east-1"] + extra
        for args, e in ((base + ["--source", "snapshot"], env()), (base + ["--source", "cache"], env()),
                        (base, env(creds=False))):
            p = run(args + ["--format", "table"], e)
            check("live AWS only" in p.stdout and "$" not in p.stdout, "offline %s: %r" % (args, p.stdout))
            p = run(args + ["--format", "json"], e)
            doc = valid(json.loads(p.stdout), "offline")
            check(doc.get("note") and not doc.get("offerings") and not doc.get("rates"), "offline json %s" % doc)
            # picked columns: the rows document says why it has none, too
            p = run(args + ["--format", "json", "--columns", "instance_type,region"], e)
            rows = json.loads(p.stdout)
            with open(os.path.join(ROOT_DIR, "schemas", "price-rows-v1.json")) as f:
                import jsonschema
                jsonschema.validate(rows, json.load(f))
            check(rows.get("note") == doc.get("note") and rows.get("rows") == [] and
                  rows.get("columns") == ["instance_type", "region"], "offline rows %s" % rows)
        p = run(base + ["--source", "live"], env(creds=False), rc=1)
        check("live AWS only" in p.stderr, "--source live without credentials: %s" % p.stderr)


def case_usage():
    e = env(creds=False)
    soon = iso(day(2))
    bad = [
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "15d"], "14d or 21d"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "183d"], "182d"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "36h"], "1d or 2d"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "0d"], "duration"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge"], "needs --block-duration"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--nodes", "0"], "--nodes"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--nodes", "65"], "1 to 64"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--start-after",
          iso(day(-2))], "in the past"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--start-after",
          iso(day(60))], "8 weeks"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--start-after", soon,
          "--end-before", iso(day(3))], "less than the block"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--end-before",
          iso(day(100))], "past 8 weeks"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--start-after",
          "next week"], "not a date"),
        (["--market", "capacity-block", "--instance-types", "g5.xlarge", "--block-duration", "3d"], "no Capacity Block is sold"),
        (["--market", "capacity-block", "--block-duration", "3d"], "needs --instance-types"),
        (["--block-duration", "3d", "--instance-types", "p5.48xlarge"], "needs --market capacity-block"),
        (["--term", "3y", "--instance-types", "p5.48xlarge"], "needs --market savings-plan"),
        (["--market", "savings-plan", "--instance-types", "p5.48xlarge", "--term", "2y"], "--term"),
        (["--market", "savings-plan", "--instance-types", "ml.p4d.24xlarge", "--plan", "compute"], "--plan compute"),
        (["--market", "savings-plan", "--instance-types", "p5.48xlarge", "--sort", "spot"], "--sort"),
        (["--market", "capacity-block", "--instance-types", "p5.48xlarge", "--block-duration", "3d", "--columns",
          "spot_min_usd_per_hour"], "--columns"),
    ]
    for args, words in bad:
        p = run(args + ["--region", "us-east-1"], e, rc=2)
        check(words in p.stderr and "Traceback" not in p.stderr and len(p.stderr.splitlines()) <= 3,
              "%s: %r lacks %r" % (args, p.stderr, words))
        check(p.stdout == "", "%s printed %r" % (args, p.stdout))


def case_ultraservers():
    """UltraServer blocks asked by UltraserverType/UltraserverCount (botocore's EC2 model), priced per
    instance and per accelerator over the UltraServer's instances; P6 blocks of loose instances."""
    gb200 = {"ultraserver_type": "u-p6e-gb200x72", "ultraserver_count": 1}
    offers = [
        # one u-p6e-gb200x72 (18 p6e-gb200.36xlarge, 4 GPUs each: AWS's P6e-GB200 UltraServers) for 2 days
        offering(21, "us-east-1", "p6e-gb200.36xlarge", "us-east-1-dfw-2a", 18, 4, 2, "123456.78", **gb200),
        # distractors: two UltraServers; the same instances sold loose; an UltraServer of another type
        offering(22, "us-east-1", "p6e-gb200.36xlarge", "us-east-1-dfw-2a", 36, 4, 2, "240000",
                 ultraserver_type="u-p6e-gb200x72", ultraserver_count=2),
        offering(23, "us-east-1", "p6e-gb200.36xlarge", "us-east-1-dfw-2a", 18, 4, 2, "1"),
        offering(24, "us-east-1", "p6e-gb200.36xlarge", "us-east-1-dfw-2a", 9, 4, 2, "60000",
                 ultraserver_type="u-p6e-gb200x36", ultraserver_count=1),
        # a P6 block of loose instances: 2 x p6-b200.48xlarge (8 GPUs each) for 2 days
        offering(25, "us-east-1", "p6-b200.48xlarge", "us-east-1a", 2, 2, 2, "5400.96"),
    ]
    path = os.path.join(TMP, "blocks.json")
    with open(path, "w") as f:
        json.dump(offers, f)
    gpus = {"p6e-gb200.36xlarge": 4, "p6-b200.48xlarge": 8}
    fake = FakeAws("--capacity-blocks", path, "--timeout", "120")
    try:
        e = env(fake)
        for what, args, want_id, params in (
                ("UltraServer", ["u-p6e-gb200x72", "--nodes", "1"], "cb-%017x" % 21,
                 {"UltraserverType": "u-p6e-gb200x72", "UltraserverCount": 1}),
                ("P6", ["p6-b200.48xlarge", "--nodes", "2"], "cb-%017x" % 25,
                 {"InstanceType": "p6-b200.48xlarge", "InstanceCount": 2})):
            fake.control(reset_stats=True)
            p = run(["--market", "capacity-block", "--instance-types"] + args + ["--block-duration", "2d", "--region",
                                                                                  "us-east-1", "--format", "json"], e)
            doc = valid(json.loads(p.stdout), what)
            got = {o["offering_id"]: o for o in doc["offerings"]}
            check(sorted(got) == [want_id], "%s: offerings shown %s, wanted %s" % (what, sorted(got), want_id))
            o = next(x for x in offers if x["id"] == want_id)
            g = got.get(want_id, {})
            per_inst = float(o["upfront_fee"]) / (o["instance_count"] * 48.0)
            check(g.get("instance_type") == o["instance_type"] and g.get("instance_count") == o["instance_count"] and
                  g.get("ultraserver_type") == o.get("ultraserver_type") and
                  g.get("ultraserver_count") == o.get("ultraserver_count"), "%s: %s" % (what, g))
            check(g and math.isclose(g["usd_per_instance_hour"], per_inst, rel_tol=1e-12),
                  "%s: $/instance-h %s, wanted %s" % (what, g.get("usd_per_instance_hour"), per_inst))
            pa = g.get("usd_per_accelerator_hour")
            # the catalogue may not know the type's accelerators: then no figure, never a wrong one
            check(pa is None or math.isclose(pa, per_inst / gpus[o["instance_type"]], rel_tol=1e-12),
                  "%s: $/accel-h %s, wanted %s" % (what, pa, per_inst / gpus[o["instance_type"]]))
            log = [r for r in fake.stats()["requests_log"] if r["op"] == "DescribeCapacityBlockOfferings"]
            want = botocore_form("DescribeCapacityBlockOfferings",
                                 dict(params, CapacityDurationHours=48, MaxResults=1000))
            check(len(log) == 1 and log[0]["form"] == want, "%s: request %s\n  botocore: %s" % (what, log, want))
        p = run(["--market", "capacity-block", "--instance-types", "u-p6e-gb200x72", "--nodes", "1", "--block-duration", "2d",
                 "--region", "us-east-1", "--format", "csv"], e)
        rows = list(csv.DictReader(p.stdout.splitlines()))
        check(len(rows) == 1 and rows[0]["ultraserver_type"] == "u-p6e-gb200x72" and rows[0]["ultraserver_count"] == "1"
              and rows[0]["instance_count"] == "18", "csv: %s" % rows)
        p = run(["--market", "capacity-block", "--instance-types", "u-p6e-gb200x72", "--nodes", "1", "--block-duration", "2d",
                 "--region", "us-east-1", "--format", "table", "--wide"], e)
        check("18 (1 x u-p6e-gb200x72)" in p.stdout, "table:\n%s" % p.stdout)
        # an UltraServer is sold as a block only; a family AWS sells no block of is refused
        p = run(["--market", "spot", "--instance-types", "u-p6e-gb200x72", "--region", "us-east-1"], e, rc=2)
        check("UltraServer" in p.stderr and "capacity-block" in p.stderr, "spot: %s" % p.stderr)
        p = run(["--market", "capacity-block", "--instance-types", "u-g6ex8", "--block-duration", "2d",
                 "--region", "us-east-1"], e, rc=2)
        check("no Capacity Block is sold for u-g6ex8" in p.stderr, "u-g6ex8: %s" % p.stderr)
    finally:
        fake.stop()


try:
    {"blocks": case_blocks, "plans": case_plans, "offline": case_offline, "usage": case_usage,
     "hostile": case_hostile,
     "ultraservers": case_ultraservers, "columns": case_columns}[CASE]()
    print("ok [%s]" % CASE)
finally:
    shutil.rmtree(TMP, ignore_errors=True)
