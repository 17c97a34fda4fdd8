#!/usr/bin/python3
"""Each call `instbench prices` makes reads at most a bounded answer, far below the transport's 64
MiB: an endpoint of the test's own (testlib.scripted_server) answers one call with a well-formed
page made 12 MiB long (an XML comment, JSON whitespace), and that call fails at once, not retried,
in one line naming the call, the endpoint and the limit; its price is not cached, and a price the
cache held stays as it was, byte for byte.  The limit leaves room for AWS's largest pages: the
same calls answered with MaxResults items each, shaped as AWS writes them (its indentation, every
member, an EC2 product with all its Reserved offers), are read.  The 64 requests in flight then
hold at most 64 x 8 MiB, where 64 x 64 MiB was possible.

usage: prices_page_caps.py INSTBENCH
"""
import datetime
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_ec2 as H  # noqa: E402  (puts tests/lib and tests/fakes on the path)
import aws_fake_server as F  # noqa: E402
from hostile_ec2 import testlib  # noqa: E402

INSTBENCH = os.path.abspath(sys.argv[1])
TMP = testlib.scratch_dir("instbench-page-caps-")
BIG = 12 << 20      # over every call's limit, under the 64 MiB (16 MiB for Savings Plans) read before
LIMIT = 8 << 20     # the most any call may read: 64 requests in flight hold at most 512 MiB
STATE = {"big": None, "full": False, "count": {}}
PRICE, RATE, FEE = 1.006, "0.7123", "21345.12"
START = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3)).replace(
    hour=11, minute=30, second=0, microsecond=0)


def product(sku, t="g5.xlarge"):
    """A Linux on-demand EC2 product as GetProducts lists it: AWS's attributes, the on-demand term
    and all 12 Reserved offers (standard and convertible, 1 and 3 years, three ways to pay)."""
    a = {"instanceType": t, "regionCode": "us-east-1", "location": "US East (N. Virginia)",
         "locationType": "AWS Region", "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
         "capacitystatus": "Used", "licenseModel": "No License required", "usagetype": "BoxUsage:%s" % t,
         "operation": "RunInstances", "marketoption": "OnDemand", "instanceFamily": "GPU instance",
         "vcpu": "4", "memory": "16 GiB", "storage": "1 x 250 NVMe SSD", "networkPerformance": "Up to 10 Gigabit",
         "processorArchitecture": "64-bit", "physicalProcessor": "AMD EPYC 7R32", "clockSpeed": "3.3 GHz",
         "currentGeneration": "Yes", "ecu": "NA", "gpu": "1", "gpuMemory": "24 GiB", "dedicatedEbsThroughput":
         "Up to 3500 Mbps", "enhancedNetworkingSupported": "Yes", "intelAvxAvailable": "No",
         "intelAvx2Available": "No", "intelTurboAvailable": "No", "normalizationSizeFactor": "8",
         "processorFeatures": "AMD Turbo", "servicename": "Amazon Elastic Compute Cloud", "vpcnetworkingsupport":
         "true", "classicnetworkingsupport": "false", "instancesku": "ABCDEFGHIJKLMNOP"}
    d = json.loads(F.price_doc("AmazonEC2", "Compute Instance", a, PRICE, sku))
    reserved = {}
    for k, (cls, years, pay) in enumerate((c, y, p) for c in ("standard", "convertible") for y in (1, 3)
                                          for p in ("No Upfront", "Partial Upfront", "All Upfront")):
        code = "%s.OFFER%04d" % (sku, k)
        dims = {}
        for unit, usd in (("Quantity", "2977"), ("Hrs", "0.3400000000")):
            if (unit == "Quantity") == (pay != "No Upfront"):
                rate = "%s.RATE%04d%s" % (code, k, unit[0])
                dims[rate] = {"unit": unit, "endRange": "Inf", "beginRange": "0", "appliesTo": [], "rateCode": rate,
                              "description": "%s reserved instance %s, %s %s" % (t, pay, years, unit),
                              "pricePerUnit": {"USD": usd}}
        reserved[code] = {"priceDimensions": dims, "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z",
                          "offerTermCode": "OFFER%04d" % k, "termAttributes": {
                              "LeaseContractLength": "%dyr" % years, "OfferingClass": cls, "PurchaseOption": pay}}
    d["terms"]["Reserved"] = reserved
    return json.dumps(d)


def json_page(doc, big):
    """DOC as JSON, BIG bytes longer by whitespace when BIG."""
    s = json.dumps(doc)
    return s[:-1] + " " * big + "}" if big else s


class Handler(testlib.ScriptedHandler):
    def do_POST(self):
        f, target = H.form(self)
        call = ("GetProducts" if "GetProducts" in target else "SavingsPlans" if "SavingsPlans" in self.path else
                f.get("Action"))
        STATE["count"][call] = STATE["count"].get(call, 0) + 1
        big, full = BIG if STATE["big"] == call else 0, STATE["full"]
        if call == "GetProducts":   # 100 (MaxResults) products at one price: no ambiguity
            docs = [product("SKU%05d" % k) for k in range(100 if full else 1)]
            return self.answer(200, json_page({"FormatVersion": "aws_v1", "PriceList": docs}, big),
                               "application/x-amz-json-1.1")
        if call == "SavingsPlans":   # 1,000 (maxResults) rates, all but one for another payment option
            res = [{"savingsPlanOffering": {"offeringId": "%08x-7ccf-4f8a-8ad4-9e4b3d5d3a84" % k,
                                            "paymentOption": "No Upfront" if k == 0 else "All Upfront",
                                            "planType": "Compute", "durationSeconds": 31536000, "currency": "USD",
                                            "planDescription": "1 year No Upfront Compute Savings Plan"},
                    "rate": RATE, "currency": "USD", "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2",
                    "usageType": "USE1-BoxUsage:g5.xlarge", "operation": "RunInstances",
                    "properties": [{"name": "region", "value": "us-east-1"},
                                   {"name": "instanceType", "value": "g5.xlarge"},
                                   {"name": "instanceFamily", "value": "g5"},
                                   {"name": "productDescription", "value": "Linux/UNIX"},
                                   {"name": "tenancy", "value": "shared"}]} for k in range(1000 if full else 1)]
            return self.answer(200, json_page({"searchResults": res}, big), "application/json")
        n = 1000 if full else 1
        if call == "DescribeSpotPriceHistory":   # the rest for a type not asked
            items = [{"instanceType": "g5.xlarge" if k == 0 else "m5.large", "spotPrice": "0.412300",
                      "timestamp": "2026-11-21T23:00:00.000Z", "availabilityZone": "us-east-1a" if k == 0 else
                      "us-east-1-z%04d" % k} for k in range(n)]
            return self.answer(200, H.spot_page(items, None, big))
        if call == "GetSpotPlacementScores":   # the rest for a region not asked
            items = [{"region": "us-east-1" if k == 0 else "eu-west-1", "score": 7} for k in range(n)]
            if f.get("SingleAvailabilityZone") == "true":
                for k, it in enumerate(items):
                    it["availabilityZoneId"] = "use1-az4" if k == 0 else "euw1-az%d" % k
            return self.answer(200, H.scores_page(items, None, big))
        if call == "DescribeAvailabilityZones":   # 64 zones: the most instbench takes
            pairs = [("us-east-1a", "use1-az4")] + [("us-east-1-z%02d-1a" % k, "use1-z%02d-az1" % k)
                                                    for k in range(1, 64 if full else 1)]
            return self.answer(200, H.zones_page(pairs, pad=big))
        if call == "DescribeCapacityBlockOfferings":   # the rest for another instance count
            end = START + datetime.timedelta(days=3)
            items = [{"capacityBlockOfferingId": "cb-%017x" % k, "instanceType": "p5.48xlarge",
                      "availabilityZone": "us-east-1a", "instanceCount": 2 if k == 0 else 4,
                      "startDate": START.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                      "endDate": end.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "capacityBlockDurationHours": 72,
                      "capacityBlockDurationMinutes": 0, "upfrontFee": FEE, "currencyCode": "USD",
                      "tenancy": "default"} for k in range(n)]
            fields = ("capacityBlockOfferingId", "instanceType", "availabilityZone", "instanceCount", "startDate",
                      "endDate", "capacityBlockDurationHours", "capacityBlockDurationMinutes", "upfrontFee",
                      "currencyCode", "tenancy")
            return self.answer(200, H.paged("DescribeCapacityBlockOfferingsResponse", "capacityBlockOfferingSet",
                                            items, fields, None, big))
        self.answer(400, "<Response><Errors><Error><Code>InvalidAction</Code></Error></Errors></Response>")


BASE = ["prices", "--region", "us-east-1", "--format", "json"]
G5 = ["--instance-types", "g5.xlarge"]
CALLS = {  # call: (the name instbench gives it, its queries, its arguments)
    "GetProducts": ("Pricing GetProducts", 1, G5 + ["--market", "on-demand", "--source", "live"]),
    "DescribeSpotPriceHistory": ("EC2 DescribeSpotPriceHistory", 1, G5 + ["--market", "spot", "--source", "live",
                                                                          "--no-placement-scores"]),
    # a type's score for the region and per zone
    "GetSpotPlacementScores": ("EC2 GetSpotPlacementScores", 2, G5 + ["--market", "spot", "--source", "live"]),
    "DescribeAvailabilityZones": ("EC2 DescribeAvailabilityZones", 1, G5 + ["--market", "spot", "--source", "live"]),
    "DescribeCapacityBlockOfferings": ("EC2 DescribeCapacityBlockOfferings", 1, [
        "--market", "capacity-block", "--instance-types", "p5.48xlarge", "--nodes", "2", "--block-duration", "3d"]),
    "SavingsPlans": ("Savings Plans DescribeSavingsPlansOfferingRates", 1, G5 + [
        "--market", "savings-plan", "--plan", "compute", "--term", "1y", "--payment", "none"]),
}


def run(url, args, home, big=None, full=False):
    STATE.update(big=big, full=full, count={})
    p = subprocess.run([INSTBENCH] + BASE + args, env=H.prices_env(url, os.path.join(TMP, home)),
                       capture_output=True, text=True, timeout=300)
    testlib.check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr, "sanitizer: %s" % p.stderr[-3000:])
    return p


def record(p):
    try:
        return json.loads(p.stdout)["prices"][0]
    except (ValueError, KeyError, IndexError):
        return {}


def offerings(p):
    try:
        return json.loads(p.stdout)["offerings"]
    except (ValueError, KeyError):
        return []


def cache_files(home):
    root = os.path.join(TMP, home, "cache")
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            with open(os.path.join(d, n), "rb") as f:
                out[os.path.join(d, n)] = (f.read(), os.stat(os.path.join(d, n)).st_mtime_ns)
    return out


def over_limit_said(call, p, url, where):
    """P's words for CALL's answer over its limit: the call, the endpoint, a limit of at most LIMIT
    (AWS's largest pages were read); and that each query sent one request."""
    name, queries = CALLS[call][:2]
    m = re.search(r"response larger than (\d+) bytes", p.stderr)
    said = name in p.stderr and url in p.stderr and "AWS_ENDPOINT_URL" in p.stderr
    testlib.check(m and LIMIT >= int(m.group(1)) and said,
          "%s, %s: the failure does not name the call, the endpoint and a limit of at most %d bytes: %s" %
          (call, where, LIMIT, p.stderr))
    testlib.check(STATE["count"].get(call) == queries, "%s, %s: %r requests, wanted %d (no retry)" %
          (call, where, STATE["count"].get(call), queries))


srv, url = testlib.scripted_server(Handler)
try:
    for call, (name, _, args) in CALLS.items():
        # AWS's largest page of the call is read
        p = run(url, args, "full-" + call, full=True)
        if "capacity-block" in args:
            got = [(o.get("offering_id"), o.get("upfront_fee_usd")) for o in offerings(p)]
            testlib.check(p.returncode == 0 and got == [("cb-%017x" % 0, float(FEE))],
                  "%s, AWS's largest page: rc %d, offerings %r: %s" % (call, p.returncode, got, p.stderr))
        else:
            testlib.check(p.returncode == 0 and "larger than" not in p.stderr,
                  "%s, AWS's largest page: rc %d: %s" % (call, p.returncode, p.stderr[-2000:]))
        # 12 MiB: refused, said once, not retried
        p = run(url, args, "big-" + call, big=call)
        lines = [ln for ln in p.stderr.splitlines() if "larger than" in ln]
        testlib.check(len(lines) == 1, "%s: %d lines say the answer is too large: %s" % (call, len(lines), p.stderr))
        over_limit_said(call, p, url, "12 MiB")
        if call in ("GetSpotPlacementScores", "DescribeAvailabilityZones"):
            # the prices stand; the scores are missing, said as such
            zones = record(p).get("spot", {}).get("zones") or [{}]
            testlib.check(p.returncode == 0 and zones[0].get("usd_per_hour") == 0.4123 and
                  zones[0].get("placement_score") is None, "%s: rc %d, zones %r: %s" %
                  (call, p.returncode, zones, p.stderr))
        else:
            testlib.check(p.returncode == 1 and not record(p) and not offerings(p), "%s: rc %d, stdout %r" %
                  (call, p.returncode, p.stdout[:300]))
    # the cache: filled by a run that was answered; an answer over the limit leaves it as it was
    p = run(url, CALLS["GetProducts"][2], "cache")
    before = cache_files("cache")
    testlib.check(p.returncode == 0 and len(before) == 1, "filling the cache: rc %d, %d files: %s" %
          (p.returncode, len(before), p.stderr))
    for source, rc in (("live", 1), ("auto", 0)):
        args = G5 + ["--market", "on-demand", "--source", source]
        p = run(url, args, "cache", big="GetProducts")
        testlib.check(p.returncode == rc, "--source %s over the limit: rc %d, wanted %d: %s" %
                      (source, p.returncode, rc, p.stderr))
        over_limit_said("GetProducts", p, url, "--source " + source)
        testlib.check(cache_files("cache") == before, "--source %s: the cache changed" % source)
        od = record(p).get("on_demand", {})
        testlib.check(source == "live" or (od.get("usd_per_hour") == PRICE and od.get("source") == "cache"),
              "--source auto: %r, wanted the cache's $%s" % (od, PRICE))
finally:
    srv.shutdown()
if testlib.failures:
    sys.exit(1)
print("ok")
