#!/usr/bin/python3
"""A fake AWS for instbench's tests and benchmark (tests start it through testlib.FakeAws).

Runs on 127.0.0.1 (port 0 picks a free port; the port is printed as the first stdout line and
written to --port-file) and exits on its own once --timeout seconds pass without a request (what a
test or benchmark left running when it ended without stopping it; a bound on its whole life could
end it under a test still running on a loaded machine).  Every service request's SigV4 signature is
recomputed with botocore's SigV4Auth over the received request (the headers
named in SignedHeaders, the body, the X-Amz-Date time) and the known credentials: a difference is
answered 403 SignatureDoesNotMatch in the service's error format.

Served:
  Pricing  POST /  X-Amz-Target: AWSPriceListService.GetProducts   (AWS JSON 1.1; signing name
           "pricing").  PriceList entries are JSON documents inside strings; NextToken pagination,
           --page-size entries per page (or MaxResults when smaller).  Filters: TERM_MATCH/EQUALS,
           ANY_OF (comma list), CONTAINS, NONE_OF over product attributes (case-insensitive values).
  EC2      query API (GET ?Action=... or POST form body; signing name "ec2"; the region served is
           the signing region):  DescribeSpotPriceHistory (XML, NextToken pagination,
           --ec2-page-size or MaxResults), GetSpotPlacementScores (XML; its parameters checked as
           EC2 takes them, InstanceType.N and RegionName.N as botocore writes them, TargetCapacity
           1..2e9, the unit type, SingleAvailabilityZone, MaxResults 10..1000, unknown ones refused;
           score 1 + sha256("sorted types|region[|zone ID][|cap=N]") mod 10, the capacity when
           not 1; every accepted request kept for GET /__placement; UnauthorizedOperation with
           --placement-unauthorized) and DescribeAvailabilityZones (XML; the signing region's
           zones: zoneName, zoneId, regionName; UnauthorizedOperation with --zones-unauthorized).
  EC2      DescribeCapacityBlockOfferings (XML; the offerings of --capacity-blocks FILE, a JSON list of
           {"region", "instance_type", "availability_zone", "instance_count", "start", "end",
           "duration_hours", "duration_minutes", "upfront_fee", "currency", "id"[, "tenancy"]
           [, "ultraserver_type", "ultraserver_count"]} in the signing region whose type and count
           (UltraserverType and UltraserverCount for an UltraServer's) and duration hours equal the request's and
           whose start/end lie in StartDateRange/EndDateRange; CapacityDurationHours required,
           MaxResults 1..1000 or --ec2-page-size per page, NextToken pagination).
  Savings Plans  POST /DescribeSavingsPlansOfferingRates (REST-JSON, signing name "savingsplans"):
           the search results of --savings-plan-rates FILE (a JSON list, each as AWS's API reference
           shows one: savingsPlanOffering, rate, unit, productType, serviceCode, usageType,
           operation, properties) that every list of the request allows (savingsPlanTypes,
           savingsPlanPaymentOptions, products, serviceCodes, operations, usageTypes, filters over
           properties); maxResults or --sp-page-size per page, nextToken pagination.
  EC2      DescribeCapacityReservations (XML; the reservations of --capacity-reservations FILE, a JSON
           list of {"id", "region", "instance_type", "availability_zone", "total", "available",
           "state", "reservation_type", "start", "end"}; CapacityReservationId.N; an unknown id is
           400 InvalidCapacityReservationId.NotFound), and the default network the sweep asks for:
           DescribeVpcs (vpc-0fa4e0000000000001, isDefault), DescribeSecurityGroups (its "default"
           group sg-0fa4e0000000000001) and DescribeSubnets (one default subnet per zone of
           --zones, subnet-0fa4e00000000000N), DescribeInstanceTypes (EFA_TYPES' network info) and
           DescribeSecurityGroupRules (the default group's).  RunInstances with DryRun=true answers 412
           DryRunOperation, as EC2 does when the call would have succeeded.
  Every request of these two operations (and of DescribeCapacityReservations and RunInstances) is recorded in stats "requests_log" (op, method, path,
  content_type, the form's fields or the JSON body) for tests to compare with botocore's
  serializer.
  SSM      POST /  X-Amz-Target: AmazonSSM.GetParameter (AWS JSON 1.1; signing name "ssm"): the
           values given with --ssm-parameter NAME=VALUE, else 400 ParameterNotFound.
  EC2 (the sweep's calls, tests/aws/ec2_calls.py): CreatePlacementGroup (tags from TagSpecification;
           InvalidPlacementGroup.Duplicate), DeletePlacementGroup (InvalidPlacementGroup.Unknown),
           DescribePlacementGroups (GroupName.N, Filter tag:KEY), and RunInstances, idempotent
           by ClientToken (the same token answers the same instances); every RunInstances'
           ClientToken is recorded in stats "client_tokens" before any fault is applied.
  S3       requests signed for service "s3" (checked with botocore's S3SigV4Auth): HeadBucket,
           PutObject, GetObject, ListObjectsV2, region redirects and S3's faults, served by
           tests/fakes/fake_s3.py (its docstring says how; --s3-bucket NAME:REGION makes buckets).
  IMDSv2   PUT /latest/api/token (needs X-aws-ec2-metadata-token-ttl-seconds), then GET
           /latest/meta-data/{instance-id, instance-type, placement/region,
           placement/availability-zone, instance-life-cycle, iam/security-credentials/[ROLE]} and
           /latest/dynamic/instance-identity/document, each needing X-aws-ec2-metadata-token.
           (--imds-v1-only: an IMDS without sessions, token PUT 404 and GETs without a token.)
  Container credentials  GET /v2/credentials/<anything> (checks --container-auth-token against
           the Authorization header when given).
  Control  POST /__control  JSON {"faults": [{"kind": K, "count": N, "service": "pricing|ec2|any"}],
                                 "latency_ms": N, "hold_for": N, "placement_unauthorized": bool,
                                 "reset_stats": bool}
           GET  /__stats     JSON counters (requests per operation, signature failures, faults
                             applied, most requests in flight together, connections accepted,
                             credential fetches, ...) and "sequential_rounds": the longest chain
                             of service requests each received after the previous one's answer
                             was sent, i.e. the round trips the client made one after another
                             (a measure of its dependency depth that does not depend on load),
                             and "span_s", first service request received to last answered;
                             "stalls_cut_by_client": stalls the client hung up on before the
                             fake's --stall-seconds ran out; "holds": per held request, how many
                             other service requests were answered while it was held
           GET  /__placement JSON {"requests": [the parameters of every GetSpotPlacementScores
                             accepted]}
           POST /__shutdown

Prices data (--prices FILE): a JSON list of records
    {"instance_type": "p4d.24xlarge", "region": "us-east-1", "on_demand": 32.7726,
     "spot": {"us-east-1a": 9.83, "us-east-1b": 10.1}}
(on_demand may be null, spot may be {} or absent), or a CSV with the header
instance_type,region,on_demand[,availability_zone,spot] (one row per AZ); the repository's
data/aws-accelerated-prices.csv is read as is (on_demand_usd_per_hour, spot_usd_per_hour columns).
AZ keys are served verbatim as availabilityZone (the CSV's are AZ ids such as use1-az1), unless
--zone-names: then spot history names each zone as real AWS does, by this account's zone name
(placement scores still name zone IDs, as AWS's do).  The account's names (zone_names() below, for
tests to recompute): a region's plain zone IDs (two words, use1-az4), sorted, are named REGION + a
letter, the letters a, b, c, ... handed out starting at the ID with index (sum of the region
name's bytes) mod (number of IDs); a local zone ID (use1-atl2-az1) is named REGION-atl-2a.
Zone IDs are whatever the price data's AZ keys are; a key already shaped like a name is its own
name and has no ID.  Instance types starting
with "ml." are SageMaker: served under ServiceCode AmazonSageMaker with productFamily "ML Instance",
attributes instanceName=<type>, component="Training" (the record's price) beside a "Hosting"
distractor at a different price; EC2 types come with distractors too (Windows, Dedicated tenancy,
SQL Web pre-installed software, capacitystatus UnusedCapacityReservation, a Reserved term), so
only a client that filters like the AWS CLI would get the record's price.
Spot history: per (type, AZ) the record's price is the latest "Linux/UNIX" entry (timestamp
--spot-age-s before now, default 3600) after two older, different prices, beside "Windows" and
"Linux/UNIX (Amazon VPC)" distractors.  Placement score of a region or AZ: 1 + (sha256 of
"types|region[|az]") mod 10, so tests can recompute it.

Fault kinds (--fault KIND[:COUNT[:SERVICE]], repeatable, or via /__control), applied to the next
COUNT service requests (after the signature check):
  throttle   Pricing 400 ThrottlingException (JSON) / EC2 503 RequestLimitExceeded (XML)
  429        HTTP 429 TooManyRequestsException
  500, 503   InternalError / ServiceUnavailable in the service's format
  stall      answer nothing for --stall-seconds (past the client's timeout), then close; a client
             that hangs up first ends it then (counted in stats "stalls_cut_by_client")
  hold       answer only once hold_for (/__control, default 1) other service requests have been
             answered, or after --stall-seconds (a hang guard): a client that starts the next
             request as soon as a slot frees gets them answered while this one waits
  cut        send headers and half the body, then close the connection
  truncate   200 with the body cut in half (Content-Length matching: valid HTTP, broken JSON/XML)
  malformed  200 with a body that is not JSON/XML
  expired    403 ExpiredToken (EC2) / ExpiredTokenException (Pricing)
  denied     403 AccessDeniedException (Pricing) / UnauthorizedOperation (EC2)
TLS: --tls-cert/--tls-key serve https instead (tests point AWS_CA_BUNDLE at the certificate).
Credentials: --credentials AKID:SECRET[:TOKEN] (repeatable; default AKIDEXAMPLE with the SigV4
suite's example secret); --expired-token TOKEN makes that session token answer 403 ExpiredToken.
IMDS and container credentials are minted here (tokens included) and accepted for signing.
"""
import argparse
import base64
import csv
import datetime
import gzip
import hashlib
import json
import os
import re
import select
import socket
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_s3  # noqa: E402  (S3, in its own file: tests/fakes/fake_s3.py says what it serves)

from botocore.auth import S3SigV4Auth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

DEFAULT_AK = "AKIDEXAMPLE"
DEFAULT_SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
CLOCK_SKEW_S = 15 * 60


def utc(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc)


def iso(ts, millis=False):
    d = utc(ts)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + (".000Z" if millis else "Z")


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.creds = {}  # access key id -> (secret, token or None, expires_at or None)
        for spec in args.credentials or ["%s:%s" % (DEFAULT_AK, DEFAULT_SK)]:
            parts = spec.split(":", 2)
            if len(parts) < 2:
                sys.exit("--credentials wants AKID:SECRET[:TOKEN]")
            self.creds[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else None, None)
        self.expired_tokens = set(args.expired_token or [])
        self.faults = []
        for f in args.fault or []:
            p = f.split(":")
            self.faults.append({"kind": p[0], "count": int(p[1]) if len(p) > 1 else 1,
                                "service": p[2] if len(p) > 2 else "any"})
        self.latency_s = args.latency_ms / 1000.0
        self.hold_for = 1
        self.answered = 0   # service requests answered, for a held one to count (hold_answer)
        self.answered_cv = threading.Condition(self.lock)
        self.placement_unauthorized = args.placement_unauthorized
        self.imds_tokens = set()
        self.minted = 0
        self.records = load_prices(args.prices) if args.prices else []
        self.ssm = dict(p.split("=", 1) for p in args.ssm_parameter or [])
        self.blocks = json.load(open(args.capacity_blocks)) if args.capacity_blocks else []
        self.sp_rates = json.load(open(args.savings_plan_rates)) if args.savings_plan_rates else []
        self.reservations = json.load(open(args.capacity_reservations)) if args.capacity_reservations else []
        self.placement_groups = {}   # name -> {"strategy", "tags"}
        self.placement_requests = []   # every accepted GetSpotPlacementScores' parameters (GET /__placement)
        self.launches = {}           # ClientToken -> [instance ids]
        fake_s3.setup(self, args)
        self.reset_stats()

    def reset_stats(self):
        self.stats = {"requests": 0, "by_operation": {}, "signature_failures": 0, "auth_failures": 0,
                      "faults_applied": {}, "in_flight": 0, "max_in_flight": 0, "connections": 0,
                      "gzip_responses": 0, "stalls_cut_by_client": 0, "holds": [], "imds_token_requests": 0, "imds_credential_fetches": 0,
                      "container_credential_fetches": 0, "access_key_ids": [], "regions": {},
                      "intervals": [], "client_tokens": [], "requests_log": [],  # (received, answered) per service request, monotonic s
                      "minted_secrets": getattr(self, "stats", {}).get("minted_secrets", [])}  # test-only: lets tests grep output for every secret

    def count(self, key, sub=None):
        with self.lock:
            if sub is None:
                self.stats[key] += 1
            else:
                self.stats[key][sub] = self.stats[key].get(sub, 0) + 1

    def take_fault(self, service):
        with self.lock:
            for f in self.faults:
                if f["count"] > 0 and f["service"] in ("any", service):
                    f["count"] -= 1
                    self.stats["faults_applied"][f["kind"]] = self.stats["faults_applied"].get(f["kind"], 0) + 1
                    return f["kind"]
            return None

    def mint(self, kind, ttl_s):
        """Temporary credentials for IMDS or the container endpoint; each fetch gets new ones."""
        with self.lock:
            self.minted += 1
            n = self.minted
        ak = "ASIA%sTEST%04d" % (kind.upper()[:4], n)
        sk = "tmp%s%04dSECRET/%s" % (kind, n, uuid.uuid4().hex)
        tok = "TOKEN-%s-%04d-%s" % (kind, n, uuid.uuid4().hex * 4)
        exp = time.time() + ttl_s
        with self.lock:
            self.creds[ak] = (sk, tok, exp)
            self.stats["minted_secrets"] += [sk, tok]
        return {"AccessKeyId": ak, "SecretAccessKey": sk, "Token": tok, "Expiration": iso(exp)}


def load_prices(path):
    recs = {}
    with open(path, newline="") as f:
        if path.endswith(".csv"):
            for row in csv.DictReader(f):
                key = (row["instance_type"], row["region"])
                r = recs.setdefault(key, {"instance_type": key[0], "region": key[1], "on_demand": None, "spot": {}})
                od = row.get("on_demand") or row.get("on_demand_usd_per_hour")
                if od:
                    r["on_demand"] = float(od)
                az = row.get("availability_zone")
                sp = row.get("spot") or row.get("spot_usd_per_hour")
                if az and sp:
                    r["spot"][az] = float(sp)
        else:
            for r in json.load(f):
                key = (r["instance_type"], r["region"])
                recs[key] = {"instance_type": key[0], "region": key[1], "on_demand": r.get("on_demand"),
                             "spot": dict(r.get("spot") or {})}
    return list(recs.values())


# ---- Pricing ------------------------------------------------------------------------------------

def sku_of(*parts):
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16].upper()


def price_doc(service_code, family, attrs, usd, sku):
    term = "JRTCKXETXF"
    ondemand = {"%s.%s" % (sku, term): {
        "priceDimensions": {"%s.%s.6YS6EN2CT7" % (sku, term): {
            "unit": "Hrs", "endRange": "Inf", "beginRange": "0", "appliesTo": [],
            "rateCode": "%s.%s.6YS6EN2CT7" % (sku, term),
            "description": "$%s per On Demand %s %s Instance Hour" % (usd, attrs.get("operatingSystem", ""),
                                                                       attrs.get("instanceType", "")),
            "pricePerUnit": {"USD": "%.10f" % usd}}},
        "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "offerTermCode": term, "termAttributes": {}}}
    reserved = {"%s.38NPMPTW36" % sku: {
        "priceDimensions": {"%s.38NPMPTW36.2TG2D8R56U" % sku: {
            "unit": "Quantity", "description": "Upfront Fee", "appliesTo": [],
            "rateCode": "%s.38NPMPTW36.2TG2D8R56U" % sku, "pricePerUnit": {"USD": "%.0f" % (usd * 3000)}}},
        "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "offerTermCode": "38NPMPTW36",
        "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "standard",
                           "PurchaseOption": "Partial Upfront"}}}
    attrs = dict(attrs)
    attrs["servicecode"] = service_code
    return json.dumps({"product": {"productFamily": family, "attributes": attrs, "sku": sku},
                       "serviceCode": service_code, "terms": {"OnDemand": ondemand, "Reserved": reserved},
                       "version": "20261120000000", "publicationDate": "2026-11-20T00:00:00Z"})


def lowered(attrs, service_code):
    d = {k.lower(): v.lower() for k, v in attrs.items()}
    d["servicecode"] = service_code.lower()
    return d


def products(state):
    """Every product the endpoint knows, as (attributes, PriceList string)."""
    if getattr(state, "_products", None) is not None:
        return state._products
    out = []
    for r in state.records:
        if r["on_demand"] is None:
            continue
        t, reg, usd = r["instance_type"], r["region"], float(r["on_demand"])
        if t.startswith("ml."):
            for comp, mult in (("Training", 1.0), ("Hosting", 1.17)):
                a = {"instanceName": t, "component": comp, "regionCode": reg, "location": reg,
                     "usagetype": "%s-%s:%s" % (reg, "Train" if comp == "Training" else "Host", t),
                     "operation": "RunInstance", "instanceType": "%s-%s" % (t, comp)}
                out.append((lowered(a, "AmazonSageMaker"), price_doc("AmazonSageMaker", "ML Instance", a,
                                                                      round(usd * mult, 4), sku_of(t, reg, comp))))
            continue
        variants = [("Linux", "Shared", "NA", "Used", 1.0), ("Windows", "Shared", "NA", "Used", 1.5),
                    ("Linux", "Dedicated", "NA", "Used", 1.1), ("Linux", "Shared", "SQL Web", "Used", 1.3),
                    ("Linux", "Shared", "NA", "UnusedCapacityReservation", 1.0001)]
        for os_, ten, sw, cap, mult in variants:
            a = {"instanceType": t, "regionCode": reg, "location": reg, "operatingSystem": os_, "tenancy": ten,
                 "preInstalledSw": sw, "capacitystatus": cap, "licenseModel": "No License required",
                 "usagetype": "%s-BoxUsage:%s" % (reg, t), "operation": "RunInstances", "marketoption": "OnDemand"}
            out.append((lowered(a, "AmazonEC2"), price_doc("AmazonEC2", "Compute Instance", a, round(usd * mult, 4),
                                                           sku_of(t, reg, os_, ten, sw, cap))))
    state._products = out
    return out


INDEXED = ("instancetype", "instancename")


def candidates(state, filters):
    """The products an exact instance type filter can match (all of them without one): a query
    scanning all ~2,600 took ~7 ms of Python, which 20 concurrent queries pay one after another
    (the GIL), so the server, not the client, dominated the latency benchmark.  Every filter is
    still applied to what this returns."""
    if getattr(state, "_index", None) is None:
        index = {}
        for prod in products(state):
            for field in INDEXED:
                if field in prod[0]:
                    index.setdefault((field, prod[0][field]), []).append(prod)
        state._index = index
    for f in filters:
        field = f.get("Field", "").lower()
        if field in INDEXED and f.get("Type", "TERM_MATCH") in ("TERM_MATCH", "EQUALS"):
            return state._index.get((field, str(f.get("Value", "")).lower()), [])
    return products(state)


def filter_match(attrs, f):
    """attrs: lower-cased attribute name -> lower-cased value (servicecode included)."""
    field, value, typ = f.get("Field", "").lower(), str(f.get("Value", "")).lower(), f.get("Type", "TERM_MATCH")
    hv = attrs.get(field)
    if hv is None:
        return typ == "NONE_OF"
    if typ in ("TERM_MATCH", "EQUALS"):
        return hv == value
    if typ == "ANY_OF":
        return hv in [v.strip() for v in value.split(",")]
    if typ == "NONE_OF":
        return hv not in [v.strip() for v in value.split(",")]
    if typ == "CONTAINS":
        return value in hv
    raise ValueError(typ)


def get_products(state, body):
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        return 400, {"__type": "SerializationException", "message": "request body is not JSON"}
    code = req.get("ServiceCode")
    if not code:
        return 400, {"__type": "ValidationException", "message": "ServiceCode is required"}
    if req.get("FormatVersion", "aws_v1") != "aws_v1":
        return 400, {"__type": "InvalidParameterException", "message": "FormatVersion must be aws_v1"}
    filters = req.get("Filters") or []
    for f in filters:
        if f.get("Type", "TERM_MATCH") not in ("TERM_MATCH", "EQUALS", "ANY_OF", "NONE_OF", "CONTAINS"):
            return 400, {"__type": "InvalidParameterException", "message": "bad filter type %r" % f.get("Type")}
    items = [doc for a, doc in candidates(state, filters)
             if a["servicecode"] == code.lower() and all(filter_match(a, f) for f in filters)]
    page = state.args.page_size
    if req.get("MaxResults"):
        page = min(page, int(req["MaxResults"]))
    start = 0
    if req.get("NextToken"):
        try:
            start = int(base64.b64decode(req["NextToken"]).decode().split(":")[1])
        except Exception:
            return 400, {"__type": "InvalidNextTokenException", "message": "The NextToken is invalid."}
    resp = {"FormatVersion": "aws_v1", "PriceList": items[start:start + page]}
    if start + page < len(items):
        resp["NextToken"] = base64.b64encode(("pricing:%d:%s" % (start + page, uuid.uuid4().hex)).encode()).decode()
    return 200, resp


# ---- EC2 ----------------------------------------------------------------------------------------

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


def numbered(params, prefix):
    """InstanceType.1, InstanceType.2, ... -> values in numeric order."""
    out = []
    for k, v in params.items():
        if k.startswith(prefix + "."):
            rest = k[len(prefix) + 1:]
            if rest.isdigit():
                out.append((int(rest), v))
    return [v for _, v in sorted(out)]


def spot_history(state, region):
    now = time.time()
    age = state.args.spot_age_s
    rows = []
    names = zone_names(state, region) if state.args.zone_names else {}
    for r in state.records:
        if r["region"] != region:
            continue
        for key, price in sorted(r["spot"].items()):
            az = names.get(key, key)
            p = float(price)
            hist = [(now - age, p), (now - age - 86400, p * 1.07), (now - age - 3 * 86400, p * 0.93)]
            for ts, pp in hist:
                rows.append((ts, r["instance_type"], "Linux/UNIX", az, pp))
            rows.append((now - age - 600, r["instance_type"], "Windows", az, p * 1.9))
            rows.append((now - age - 1200, r["instance_type"], "Linux/UNIX (Amazon VPC)", az, p * 1.2))
    rows.sort(key=lambda x: (-x[0], x[1], x[3], x[2]))
    return rows


def is_zone_id(az):
    return any(c.isdigit() for c in az.split("-")[0])


def zone_names(state, region):
    """{zone ID: this account's zone name} for REGION, by the rule in the module docstring."""
    ids = sorted({az for r in state.records if r["region"] == region for az in r["spot"] if is_zone_id(az)})
    plain = [z for z in ids if len(z.split("-")) == 2]
    out = {}
    if plain:
        start = sum(region.encode()) % len(plain)
        for k, z in enumerate(plain[start:] + plain[:start]):
            out[z] = region + "abcdefghijklmnopqrstuvwxyz"[k]
    for z in ids:
        if len(z.split("-")) > 2:   # use1-atl2-az1 -> us-east-1-atl-2a
            mid = z.split("-")[1]
            i = len(mid.rstrip("0123456789"))
            out[z] = "%s-%s-%sa" % (region, mid[:i], mid[i:])
    return out


def describe_availability_zones(state, region):
    if state.args.zones_unauthorized:
        return ec2_error(403, "UnauthorizedOperation", "You are not authorized to perform this operation.")
    items = "".join("<item><zoneState>available</zoneState><regionName>%s</regionName><zoneName>%s</zoneName>"
                    "<zoneId>%s</zoneId><zoneType>availability-zone</zoneType></item>" % (region, name, zid)
                    for zid, name in sorted(zone_names(state, region).items(), key=lambda x: x[1]))
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<DescribeAvailabilityZonesResponse xmlns="%s">'
            "<requestId>%s</requestId><availabilityZoneInfo>%s</availabilityZoneInfo>"
            "</DescribeAvailabilityZonesResponse>" % (EC2_NS, uuid.uuid4(), items))
    return 200, body


def ec2_error(status, code, msg):
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>%s</Code><Message>%s</Message>'
            '</Error></Errors><RequestID>%s</RequestID></Response>' % (code, msg, uuid.uuid4()))
    return status, body


def ssm_get_parameter(state, body):
    name = json.loads(body or b"{}").get("Name")
    if name not in state.ssm:
        return 400, {"__type": "ParameterNotFound", "message": "Parameter %s not found." % name}
    return 200, {"Parameter": {"Name": name, "Type": "String", "Value": state.ssm[name], "Version": 1,
                               "LastModifiedDate": time.time(), "DataType": "aws:ec2:image"}}


def tag_specs(params, resource_type):
    """TagSpecification.N.Tag.M.Key/Value of the spec whose ResourceType is resource_type."""
    for n in range(1, 10):
        if params.get("TagSpecification.%d.ResourceType" % n) == resource_type:
            return {params["TagSpecification.%d.Tag.%d.Key" % (n, m)]: params.get("TagSpecification.%d.Tag.%d.Value" % (n, m), "")
                    for m in range(1, 51) if "TagSpecification.%d.Tag.%d.Key" % (n, m) in params}
    return {}


def tag_filters(params):
    """Filter.N.Name = tag:KEY with Filter.N.Value.M -> {KEY: set of values}."""
    out = {}
    for n in range(1, 50):
        name = params.get("Filter.%d.Name" % n)
        if name is None:
            break
        if name.startswith("tag:"):
            out[name[4:]] = set(numbered(params, "Filter.%d.Value" % n))
    return out


def placement_groups(state, op, params):
    with state.lock:
        pgs = state.placement_groups
        name = params.get("GroupName")
        if op == "CreatePlacementGroup":
            if name in pgs:
                return ec2_error(400, "InvalidPlacementGroup.Duplicate", "The placement group '%s' already exists." % name)
            pgs[name] = {"strategy": params.get("Strategy", ""), "tags": tag_specs(params, "placement-group")}
            return 200, '<CreatePlacementGroupResponse xmlns="%s"><return>true</return></CreatePlacementGroupResponse>' % EC2_NS
        if op == "DeletePlacementGroup":
            if name not in pgs:
                return ec2_error(400, "InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown." % name)
            del pgs[name]
            return 200, '<DeletePlacementGroupResponse xmlns="%s"><return>true</return></DeletePlacementGroupResponse>' % EC2_NS
        names, tags = set(numbered(params, "GroupName")), tag_filters(params)
        items = "".join("<item><groupName>%s</groupName><state>available</state><strategy>%s</strategy>"
                        "<tagSet>%s</tagSet></item>" % (n, g["strategy"], "".join(
                            "<item><key>%s</key><value>%s</value></item>" % kv for kv in g["tags"].items()))
                        for n, g in sorted(pgs.items())
                        if (not names or n in names) and all(g["tags"].get(k) in v or ("*" in v and k in g["tags"])
                                                             for k, v in tags.items()))
        return 200, ('<DescribePlacementGroupsResponse xmlns="%s"><placementGroupSet>%s</placementGroupSet>'
                     '</DescribePlacementGroupsResponse>' % (EC2_NS, items))


def describe_capacity_reservations(state, region, params):
    ids = numbered(params, "CapacityReservationId")
    known = {r["id"]: r for r in state.reservations if r["region"] == region}
    for i in ids:
        if i not in known:
            return ec2_error(400, "InvalidCapacityReservationId.NotFound",
                             "The capacity reservation ID '%s' does not exist" % i)
    items = "".join(
        "<item><capacityReservationId>%s</capacityReservationId><instanceType>%s</instanceType>"
        "<availabilityZone>%s</availabilityZone><totalInstanceCount>%d</totalInstanceCount>"
        "<availableInstanceCount>%d</availableInstanceCount><state>%s</state><reservationType>%s</reservationType>"
        "<startDate>%s</startDate><endDate>%s</endDate><instancePlatform>Linux/UNIX</instancePlatform></item>"
        % (r["id"], r["instance_type"], r["availability_zone"], r["total"], r["available"], r["state"],
           r["reservation_type"], r["start"], r["end"])
        for i, r in known.items() if not ids or i in ids)
    return 200, ('<DescribeCapacityReservationsResponse xmlns="%s"><requestId>%s</requestId>'
                 "<capacityReservationSet>%s</capacityReservationSet></DescribeCapacityReservationsResponse>"
                 % (EC2_NS, uuid.uuid4(), items))


def default_network(state, op, region):
    vpc, sg = "vpc-0fa4e0000000000001", "sg-0fa4e0000000000001"
    if op == "DescribeVpcs":
        return 200, ('<DescribeVpcsResponse xmlns="%s"><vpcSet><item><vpcId>%s</vpcId><isDefault>true</isDefault>'
                     "</item></vpcSet></DescribeVpcsResponse>" % (EC2_NS, vpc))
    if op == "DescribeSecurityGroups":
        return 200, ('<DescribeSecurityGroupsResponse xmlns="%s"><securityGroupInfo><item><groupId>%s</groupId>'
                     "<groupName>default</groupName></item></securityGroupInfo></DescribeSecurityGroupsResponse>"
                     % (EC2_NS, sg))
    zones = [region + z for z in (state.args.zones or "abc")]
    items = "".join("<item><subnetId>subnet-0fa4e%012x</subnetId><availabilityZone>%s</availabilityZone>"
                    "<defaultForAz>true</defaultForAz></item>" % (k + 1, z) for k, z in enumerate(zones))
    return 200, '<DescribeSubnetsResponse xmlns="%s"><subnetSet>%s</subnetSet></DescribeSubnetsResponse>' % (EC2_NS, items)


# DescribeInstanceTypes' networkInfo as AWS states it: (efaSupported, maximumEfaInterfaces,
# maximumNetworkInterfaces per network card[, each card's InterfaceTypes]); any other type: no EFA,
# one card.  Without the fourth, every card names all three types, as AWS's answer does for these
# (moto's copy of AWS's data); p6-b300.48xlarge's card 0 takes ENA only (aws-parallelcluster
# #7143).  tests/sweep/fake_ec2.py serves the same.
ALL_IF = ["interface", "efa", "efa-only"]
EFA_TYPES = {"p4d.24xlarge": (True, 4, [15] * 4), "p5.48xlarge": (True, 32, [2] * 32), "g5.12xlarge": (True, 1, [15]),
             "p6-b300.48xlarge": (True, 16, [4] * 17, [["interface"]] + [ALL_IF] * 16)}


def instance_types_xml(types, table=None):
    items = []
    for t in types:
        shape = (table or {}).get(t) or EFA_TYPES.get(t, (False, 0, [4]))
        efa, max_efa, cards = shape[:3]
        kinds = shape[3] if len(shape) > 3 else [ALL_IF if efa else ["interface"]] * len(cards)
        card_xml = "".join("<item><networkCardIndex>%d</networkCardIndex><maximumNetworkInterfaces>%d"
                           "</maximumNetworkInterfaces><interfaceTypeSet>%s</interfaceTypeSet></item>" % (
                               k, m, "".join("<item>%s</item>" % x for x in kinds[k]))
                           for k, m in enumerate(cards))
        items.append("<item><instanceType>%s</instanceType><networkInfo><maximumNetworkCards>%d</maximumNetworkCards>"
                     "<networkCards>%s</networkCards><efaSupported>%s</efaSupported>%s</networkInfo></item>" % (
                         t, len(cards), card_xml, "true" if efa else "false",
                         "<efaInfo><maximumEfaInterfaces>%d</maximumEfaInterfaces></efaInfo>" % max_efa if efa else ""))
    return '<DescribeInstanceTypesResponse xmlns="%s"><instanceTypeSet>%s</instanceTypeSet></DescribeInstanceTypesResponse>' % (
        EC2_NS, "".join(items))


def default_group_rules(group):
    """The default group's rules as a default VPC has them: all traffic in from itself, out to 0.0.0.0/0."""
    return 200, ('<DescribeSecurityGroupRulesResponse xmlns="%s"><securityGroupRuleSet>'
                 "<item><groupId>%s</groupId><isEgress>false</isEgress><ipProtocol>-1</ipProtocol>"
                 "<referencedGroupInfo><groupId>%s</groupId></referencedGroupInfo></item>"
                 "<item><groupId>%s</groupId><isEgress>true</isEgress><ipProtocol>-1</ipProtocol><cidrIpv4>0.0.0.0/0"
                 "</cidrIpv4></item></securityGroupRuleSet></DescribeSecurityGroupRulesResponse>" % (EC2_NS, group, group, group))


def run_instances(state, params):
    """Idempotent by ClientToken, as EC2 is: the same token answers the instances it launched."""
    if params.get("DryRun") == "true":
        return ec2_error(412, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
    count = int(params.get("MinCount", "1"))
    with state.lock:
        token = params.get("ClientToken") or uuid.uuid4().hex
        ids = state.launches.setdefault(token, ["i-%017x" % (len(state.launches) * 1000 + k) for k in range(count)])
    items = "".join("<item><instanceId>%s</instanceId><instanceType>%s</instanceType><amiLaunchIndex>%d</amiLaunchIndex>"
                    "<instanceState><code>0</code><name>pending</name></instanceState></item>"
                    % (i, params.get("InstanceType", ""), k) for k, i in enumerate(ids))
    return 200, '<RunInstancesResponse xmlns="%s"><instancesSet>%s</instancesSet></RunInstancesResponse>' % (EC2_NS, items)


def describe_spot_price_history(state, region, params):
    types = set(numbered(params, "InstanceType"))
    descs = set(numbered(params, "ProductDescription"))
    for i in range(1, 50):
        name = params.get("Filter.%d.Name" % i)
        if name is None:
            break
        vals = set(numbered(params, "Filter.%d.Value" % i))
        if name == "instance-type":
            types |= vals
        elif name == "product-description":
            descs |= vals
    az_filter = params.get("AvailabilityZone")
    start = None
    if params.get("StartTime"):
        try:
            start = datetime.datetime.fromisoformat(params["StartTime"].replace("Z", "+00:00")).timestamp()
        except ValueError:
            return ec2_error(400, "InvalidParameterValue", "StartTime is not a timestamp")
    rows = [x for x in spot_history(state, region)
            if (not types or x[1] in types) and (not descs or x[2] in descs) and (not az_filter or x[3] == az_filter)]
    if start is not None:
        # the window holds the entries after StartTime plus the price in effect at StartTime
        keep, seen = [], set()
        for x in rows:
            k = (x[1], x[2], x[3])
            if x[0] >= start:
                keep.append(x)
            elif k not in seen:
                keep.append(x)
                seen.add(k)
                continue
            if x[0] < start:
                seen.add(k)
        rows = keep
    page = state.args.ec2_page_size
    if params.get("MaxResults"):
        try:
            mr = int(params["MaxResults"])
        except ValueError:
            return ec2_error(400, "InvalidParameterValue", "MaxResults must be an integer")
        if mr < 5 or mr > 1000:
            return ec2_error(400, "InvalidParameterValue", "MaxResults must be between 5 and 1000")
        page = mr
    off = 0
    if params.get("NextToken"):
        try:
            off = int(base64.b64decode(params["NextToken"]).decode().split(":")[1])
        except Exception:
            return ec2_error(400, "InvalidNextToken", "The token is invalid")
    chunk = rows[off:off + page]
    items = "".join(
        "<item><instanceType>%s</instanceType><productDescription>%s</productDescription><spotPrice>%.6f</spotPrice>"
        "<timestamp>%s</timestamp><availabilityZone>%s</availabilityZone></item>" % (t, d, p, iso(ts, True), az)
        for ts, t, d, az, p in chunk)
    nt = ""
    if off + page < len(rows):
        nt = "<nextToken>%s</nextToken>" % base64.b64encode(("ec2:%d:%s" % (off + page, uuid.uuid4().hex)).encode()).decode()
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<DescribeSpotPriceHistoryResponse xmlns="%s">'
            "<requestId>%s</requestId><spotPriceHistorySet>%s</spotPriceHistorySet>%s"
            "</DescribeSpotPriceHistoryResponse>" % (EC2_NS, uuid.uuid4(), items, nt))
    return 200, body


def parse_ts(v):
    return datetime.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()


def offset_of(token, kind):
    """A NextToken of ours back to its offset (ValueError when it is not one)."""
    k, off, _ = base64.b64decode(token).decode().split(":")
    if k != kind:
        raise ValueError(token)
    return int(off)


def token_for(kind, off):
    return base64.b64encode(("%s:%d:%s" % (kind, off, uuid.uuid4().hex)).encode()).decode()


def describe_capacity_block_offerings(state, region, params):
    if "CapacityDurationHours" not in params:
        return ec2_error(400, "MissingParameter", "The request must contain the parameter CapacityDurationHours")
    try:
        hours = int(params["CapacityDurationHours"])
        ultra = params.get("UltraserverType")
        count = int(params.get("UltraserverCount" if ultra else "InstanceCount", "1"))
        lo = parse_ts(params["StartDateRange"]) if "StartDateRange" in params else None
        hi = parse_ts(params["EndDateRange"]) if "EndDateRange" in params else None
        page = int(params.get("MaxResults", state.args.ec2_page_size))
        off = offset_of(params["NextToken"], "cb") if params.get("NextToken") else 0
    except ValueError:
        return ec2_error(400, "InvalidParameterValue", "a parameter is malformed")
    if not 1 <= page <= 1000:
        return ec2_error(400, "InvalidParameterValue", "MaxResults must be between 1 and 1000")
    page = min(page, state.args.ec2_page_size)
    if ultra and ("InstanceType" in params or "InstanceCount" in params):
        return ec2_error(400, "InvalidParameterCombination", "UltraserverType and InstanceType/InstanceCount together")
    # an UltraServer is asked by its type and count (an offering of UltraServers answers no other question)
    rows = [b for b in state.blocks
            if b["region"] == region and
            ((b.get("ultraserver_type") == ultra and b.get("ultraserver_count") == count) if ultra else
             (not b.get("ultraserver_type") and b["instance_type"] == params.get("InstanceType") and
              b["instance_count"] == count)) and b["duration_hours"] == hours and
            (lo is None or parse_ts(b["start"]) >= lo) and (hi is None or parse_ts(b["end"]) <= hi)]
    chunk = rows[off:off + page]
    items = "".join(
        "<item><capacityBlockOfferingId>%s</capacityBlockOfferingId><instanceType>%s</instanceType>"
        "<availabilityZone>%s</availabilityZone><instanceCount>%d</instanceCount><startDate>%s</startDate>"
        "<endDate>%s</endDate><capacityBlockDurationHours>%d</capacityBlockDurationHours>"
        "<capacityBlockDurationMinutes>%d</capacityBlockDurationMinutes><upfrontFee>%s</upfrontFee>"
        "<currencyCode>%s</currencyCode><tenancy>%s</tenancy>%s</item>"
        % (b["id"], b["instance_type"], b["availability_zone"], b["instance_count"], b["start"], b["end"],
           b["duration_hours"], b.get("duration_minutes", 0), b["upfront_fee"], b.get("currency", "USD"),
           b.get("tenancy", "default"),
           "<ultraserverType>%s</ultraserverType><ultraserverCount>%d</ultraserverCount>" % (
               b["ultraserver_type"], b["ultraserver_count"]) if b.get("ultraserver_type") else "")
        for b in chunk)
    nt = "<nextToken>%s</nextToken>" % token_for("cb", off + page) if off + page < len(rows) else ""
    return 200, ('<?xml version="1.0" encoding="UTF-8"?>\n<DescribeCapacityBlockOfferingsResponse xmlns="%s">'
                 "<requestId>%s</requestId><capacityBlockOfferingSet>%s</capacityBlockOfferingSet>%s"
                 "</DescribeCapacityBlockOfferingsResponse>" % (EC2_NS, uuid.uuid4(), items, nt))


def describe_savings_plans_offering_rates(state, req):
    def allows(key, value):
        return key not in req or value in req[key]
    try:
        page = min(int(req.get("maxResults", 1000)), state.args.sp_page_size)
        off = offset_of(req["nextToken"], "sp") if req.get("nextToken") else 0
        filters = {f["name"]: f["values"] for f in req.get("filters", [])}
    except (ValueError, KeyError, TypeError):
        return 400, {"__type": "ValidationException", "message": "the request is malformed"}
    rows = []
    for r in state.sp_rates:
        o, props = r["savingsPlanOffering"], {p["name"]: p["value"] for p in r.get("properties", [])}
        if (allows("savingsPlanTypes", o["planType"]) and allows("savingsPlanPaymentOptions", o["paymentOption"]) and
                allows("products", r.get("productType")) and allows("serviceCodes", r.get("serviceCode")) and
                allows("operations", r.get("operation")) and allows("usageTypes", r.get("usageType")) and
                all(props.get(k) in v for k, v in filters.items())):
            rows.append(r)
    out = {"searchResults": rows[off:off + page]}
    if off + page < len(rows):
        out["nextToken"] = token_for("sp", off + page)
    return 200, out


def placement_score(types, region, az=None):
    key = ",".join(sorted(types)) + "|" + region + ("|" + az if az else "")
def placement_score(types, region, az=None, capacity=1):
    """1 + sha256("types|region[|az][|cap=N]") mod 10; the capacity only when it is not 1."""
    key = ",".join(sorted(types)) + "|" + region + ("|" + az if az else "") + ("|cap=%d" % capacity if capacity != 1 else "")
    return 1 + int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10


# GetSpotPlacementScores' parameters on the wire (botocore's EC2 serializer: list members by their
# locationName, InstanceType.N and RegionName.N); anything else is refused as EC2 refuses it.
PLACEMENT_PARAMS = re.compile(r"Action|Version|InstanceType\.[1-9][0-9]*|TargetCapacity|TargetCapacityUnitType|"
                              r"SingleAvailabilityZone|RegionName\.[1-9][0-9]*|MaxResults|NextToken|DryRun")


def get_spot_placement_scores(state, region, params):
    if state.placement_unauthorized:
        return ec2_error(403, "UnauthorizedOperation", "You are not authorized to perform this operation.")
    for k in params:
        if not PLACEMENT_PARAMS.fullmatch(k):
            return ec2_error(400, "UnknownParameter", "The parameter %s is not recognized" % k)
    types = numbered(params, "InstanceType")
    if not types or not params.get("TargetCapacity"):
        return ec2_error(400, "MissingParameter", "InstanceType and TargetCapacity are required")
    if len(set(types)) != len(types) or len(types) > 1000:
        return ec2_error(400, "InvalidParameterValue", "InstanceType: duplicates or more than 1000")
    cap = params["TargetCapacity"]
    if not cap.isdigit() or not 1 <= int(cap) <= 2000000000:
        return ec2_error(400, "InvalidParameterValue", "TargetCapacity %r is not in 1..2000000000" % cap)
    if params.get("TargetCapacityUnitType", "units") not in ("units", "vcpu", "memory-mib"):
        return ec2_error(400, "InvalidParameterValue", "TargetCapacityUnitType %r" % params["TargetCapacityUnitType"])
    if params.get("SingleAvailabilityZone", "false") not in ("true", "false"):
        return ec2_error(400, "InvalidParameterValue", "SingleAvailabilityZone %r" % params["SingleAvailabilityZone"])
    mr = params.get("MaxResults", "1000")
    if not mr.isdigit() or not 10 <= int(mr) <= 1000:
        return ec2_error(400, "InvalidParameterValue", "MaxResults %r is not in 10..1000" % mr)
    regions = numbered(params, "RegionName")
    if len(regions) > 10:
        return ec2_error(400, "InvalidParameterValue", "more than 10 RegionName")
    single = params.get("SingleAvailabilityZone", "false") == "true"
    capacity = int(cap)
    state.placement_requests.append({k: v for k, v in params.items()})
    have = {}
    for r in state.records:
        if r["instance_type"] in types:
            have.setdefault(r["region"], set()).update(r["spot"].keys())
    items = []
    for reg in sorted(have):
        if regions and reg not in regions:
            continue
        if single:
            for az in sorted(have[reg]):
                items.append("<item><regionName>%s</regionName><availabilityZoneId>%s</availabilityZoneId>"
                             "<score>%d</score></item>" % (reg, az, placement_score(types, reg, az, capacity)))
        else:
            items.append("<item><regionName>%s</regionName><score>%d</score></item>"
                         % (reg, placement_score(types, reg, None, capacity)))
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<GetSpotPlacementScoresResponse xmlns="%s">'
            "<requestId>%s</requestId><spotPlacementScoreSet>%s</spotPlacementScoreSet>"
            "</GetSpotPlacementScoresResponse>" % (EC2_NS, uuid.uuid4(), "".join(items)))
    return 200, body


# ---- HTTP ---------------------------------------------------------------------------------------

def sequential_rounds(intervals):
    """The longest chain of (received, answered) intervals in which each request arrived after
    the previous one was answered: requests in flight together count once, a NextToken page or a
    request that had to wait for a free connection counts again.  O(n log n): by answer time, each
    interval extends the longest chain among those answered before it arrived."""
    import bisect
    ends, best = [], []   # answer times in order, and the longest chain ending at or before each
    for rec, ans in sorted(intervals, key=lambda iv: iv[1]):
        k = bisect.bisect_right(ends, rec)
        n = 1 + (best[k - 1] if k else 0)
        ends.append(ans)
        best.append(max(n, best[-1] if best else 0))
    return best[-1] if best else 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "instbench-aws-test-endpoint"

    def setup(self):
        super().setup()
        # headers and body go out in two writes: without NODELAY, Nagle + the client's delayed ACK
        # would add ~40 ms to every response on a kept-alive connection
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        self.server.state.count("connections")

    def handle_one_request(self):
        self.server.state.last_request = time.monotonic()   # --timeout counts from the last one
        super().handle_one_request()

    def log_message(self, fmt, *args):
        if self.server.state.args.verbose:
            sys.stderr.write("endpoint: " + (fmt % args) + "\n")

    # -- plumbing
    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send(self, status, body, ctype, extra=None, mode=None):
        st = self.server.state
        if isinstance(body, str):
            body = body.encode()
        if mode == "truncate":
            body = body[: len(body) // 2]
        if mode == "malformed":
            body = b"{\"PriceList\": [\"{\\\"product\\\": oops" if "json" in ctype else b"<Response><item><spotPrice>1.0</spot"
        enc = None
        if mode != "cut" and len(body) > 64 and "gzip" in (self.headers.get("Accept-Encoding") or ""):
            body = gzip.compress(body)
            enc = "gzip"
            st.count("gzip_responses")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        if enc:
            self.send_header("Content-Encoding", enc)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if mode == "cut":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(body)

    def send_json(self, status, obj, ctype="application/x-amz-json-1.1", mode=None):
        extra = {}
        if status >= 400 and isinstance(obj, dict) and "__type" in obj:
            extra["x-amzn-ErrorType"] = obj["__type"] + ":"
        self.send(status, json.dumps(obj), ctype, extra, mode)

    def do_DELETE(self):
        self.dispatch("DELETE")

    def do_HEAD(self):
        self.dispatch("HEAD")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def dispatch(self, method):
        st = self.server.state
        body = self.read_body()
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/latest/"):
            return self.imds(method, path)
        if path.startswith("/v2/credentials"):
            return self.container()
        if path == "/__stats":
            with st.lock:
                out = {k: v for k, v in st.stats.items() if k != "intervals"}
                out["sequential_rounds"] = sequential_rounds(st.stats["intervals"])
                iv = st.stats["intervals"]
                out["span_s"] = max(a for _, a in iv) - min(r for r, _ in iv) if iv else 0.0
            return self.send_json(200, out, "application/json")
        if path == "/__placement":
            with st.lock:
                return self.send_json(200, {"requests": list(st.placement_requests)}, "application/json")
        if path == "/__control" and method == "POST":
            return self.control(body)
        if path == "/__shutdown":
            self.send_json(200, {"ok": True}, "application/json")
            threading.Thread(target=self.server.shutdown, daemon=True).start()
            return
        with st.lock:
            st.stats["in_flight"] += 1
            st.stats["max_in_flight"] = max(st.stats["max_in_flight"], st.stats["in_flight"])
        received = time.monotonic()
        try:
            if st.latency_s:
                time.sleep(st.latency_s)
            self.service(method, body)   # wfile is unbuffered: answered when this returns
        finally:
            with st.lock:
                st.stats["in_flight"] -= 1
                st.stats["intervals"].append((received, time.monotonic()))
                st.answered += 1
                st.answered_cv.notify_all()

    def control(self, body):
        st = self.server.state
        try:
            c = json.loads(body)
        except ValueError:
            return self.send_json(400, {"error": "not JSON"}, "application/json")
        with st.lock:
            if c.get("clear_faults"):
                st.faults = []
            for f in c.get("faults", []):
                st.faults.append({"kind": f["kind"], "count": int(f.get("count", 1)), "service": f.get("service", "any")})
            if "latency_ms" in c:
                st.latency_s = float(c["latency_ms"]) / 1000.0
            if "hold_for" in c:
                st.hold_for = int(c["hold_for"])
            if "placement_unauthorized" in c:
                st.placement_unauthorized = bool(c["placement_unauthorized"])
            for t in c.get("expired_tokens", []):
                st.expired_tokens.add(t)
            fake_s3.control(st, c)
        if c.get("reset_stats"):
            with st.lock:
                st.reset_stats()
        self.send_json(200, {"ok": True}, "application/json")

    def stall(self):
        """Says nothing for --stall-seconds, then closes; a client that hangs up first (its own
        timeout) ends it at once and is counted, so a test can tell that timeout from the fake's."""
        st = self.server.state
        watch = select.poll()   # RDHUP: the client's FIN, even behind unread bytes (a TLS alert)
        watch.register(self.connection.fileno(), select.POLLRDHUP)
        if watch.poll(int(st.args.stall_seconds * 1000)):
            st.count("stalls_cut_by_client")
        self.close_connection = True

    def hold(self):
        """Waits until hold_for other service requests have been answered (or --stall-seconds, a
        hang guard) and records how many were: the order of events, not their timing, shows
        whether the client kept its other slots busy meanwhile."""
        st = self.server.state
        deadline = time.monotonic() + st.args.stall_seconds
        with st.answered_cv:
            start, want = st.answered, st.hold_for
            while st.answered - start < want and deadline > time.monotonic():
                st.answered_cv.wait(deadline - time.monotonic())
            st.stats["holds"].append(st.answered - start)

    # -- IMDS and container credentials
    def imds(self, method, path):
        st, a = self.server.state, self.server.state.args
        if a.imds_v1_only and path == "/latest/api/token":
            return self.send(404, "", "text/plain")
        if path == "/latest/api/token":
            if method != "PUT":
                return self.send(405, "", "text/plain")
            ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
            if not ttl or not ttl.isdigit() or not (1 <= int(ttl) <= 21600):
                return self.send(400, "", "text/plain")
            st.count("imds_token_requests")
            tok = "IMDSTOKEN" + uuid.uuid4().hex
            with st.lock:
                st.imds_tokens.add(tok)
            return self.send(200, tok, "text/plain", {"X-aws-ec2-metadata-token-ttl-seconds": ttl})
        tok = self.headers.get("X-aws-ec2-metadata-token")
        with st.lock:
            ok = tok in st.imds_tokens
        if not ok and not a.imds_v1_only:
            return self.send(401, "", "text/plain")
        role = a.imds_role
        ident = {"instanceId": "i-0123456789abcdef0", "instanceType": a.imds_instance_type, "region": a.imds_region,
                 "availabilityZone": a.imds_az, "architecture": "x86_64", "imageId": "ami-0123456789abcdef0",
                 "pendingTime": "2026-11-21T00:00:00Z", "accountId": "123456789012", "version": "2017-09-30"}
        md = {"/latest/meta-data/instance-id": ident["instanceId"],
              "/latest/meta-data/instance-type": a.imds_instance_type,
              "/latest/meta-data/placement/region": a.imds_region,
              "/latest/meta-data/placement/availability-zone": a.imds_az,
              "/latest/meta-data/instance-life-cycle": a.imds_lifecycle,
              "/latest/dynamic/instance-identity/document": json.dumps(ident, indent=2)}
        if path in md:
            return self.send(200, md[path], "text/plain")
        if path == "/latest/meta-data/iam/security-credentials/" and role:
            return self.send(200, role, "text/plain")
        if role and path == "/latest/meta-data/iam/security-credentials/" + role:
            st.count("imds_credential_fetches")
            c = st.mint("imds", a.imds_cred_ttl)
            doc = dict(Code="Success", LastUpdated=iso(time.time()), Type="AWS-HMAC", **c)
            return self.send(200, json.dumps(doc, indent=2), "text/plain")
        return self.send(404, "", "text/plain")

    def container(self):
        st, a = self.server.state, self.server.state.args
        if a.container_auth_token and self.headers.get("Authorization") != a.container_auth_token:
            return self.send_json(403, {"code": "AccessDenied", "message": "bad authorization token"}, "application/json")
        st.count("container_credential_fetches")
        c = st.mint("container", a.container_cred_ttl)
        c["RoleArn"] = "arn:aws:iam::123456789012:role/instbench-test"
        return self.send_json(200, c, "application/json")

    # -- signed service requests
    def service(self, method, body):
        st = self.server.state
        parts = urllib.parse.urlsplit(self.path)
        target = self.headers.get("X-Amz-Target")
        params = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        ctype = self.headers.get("Content-Type") or ""
        if method == "POST" and "x-www-form-urlencoded" in ctype:
            params.update(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        service = ("ssm" if target.startswith("AmazonSSM.") else "pricing") if target else "ec2"
        if "/s3/aws4_request" in (self.headers.get("Authorization") or ""):
            service = "s3"
        if "/savingsplans/aws4_request" in (self.headers.get("Authorization") or ""):
            service = "savingsplans"
        if fake_s3.is_presigned(params):
            st.count("requests")
            return fake_s3.serve_presigned(self, method, body)
        op = target.split(".")[-1] if target else params.get("Action", "")
        if service == "savingsplans":
            op = parts.path.lstrip("/")
        st.count("requests")
        st.count("by_operation", op or "(none)")

        if op in ("DescribeCapacityBlockOfferings", "DescribeCapacityReservations", "RunInstances") or \
                service == "savingsplans":
            entry = {"op": op, "method": method, "path": parts.path, "content_type": ctype}
            if service == "savingsplans":
                try:
                    entry["json"] = json.loads(body or b"null")
                except ValueError:
                    entry["json"] = "(not JSON)"
            else:
                entry["form"] = params
            with st.lock:
                st.stats["requests_log"].append(entry)

        def fail(status, code, msg):
            if service in ("pricing", "ssm", "savingsplans"):
                return self.send_json(status, {"__type": code, "message": msg})
            s, b = ec2_error(status, code, msg)
            return self.send(s, b, "text/xml;charset=UTF-8")

        region, why = self.verify(method, body, service)
        if why:
            return fail(403, why[0], why[1])
        st.count("regions", region)
        if op == "RunInstances":
            with st.lock:
                st.stats["client_tokens"].append(params.get("ClientToken"))
        fault = st.take_fault(service)
        if service == "s3":
            return fake_s3.serve(self, method, body, region, fault if fault not in ("stall", "hold") else None)
        if fault == "stall":
            return self.stall()
        if fault == "hold":
            self.hold()
        if fault == "throttle":
            return fail(400, "ThrottlingException", "Rate exceeded") if service == "pricing" else \
                fail(503, "RequestLimitExceeded", "Request limit exceeded.")
        if fault == "429":
            return fail(429, "TooManyRequestsException", "Too Many Requests")
        if fault == "500":
            return fail(500, "InternalErrorException" if service == "pricing" else "InternalError",
                        "An internal error has occurred")
        if fault == "503":
            return fail(503, "ServiceUnavailableException" if service == "pricing" else "Unavailable",
                        "The service is unavailable")
        if fault == "expired":
            return fail(403, "ExpiredTokenException" if service == "pricing" else "ExpiredToken",
                        "The security token included in the request is expired")
        if fault == "denied":
            return fail(403, "AccessDeniedException" if service == "pricing" else "UnauthorizedOperation",
                        "User is not authorized to perform this operation")
        mode = fault if fault in ("cut", "truncate", "malformed") else None
        if service == "savingsplans":
            if op != "DescribeSavingsPlansOfferingRates" or method != "POST":
                return fail(404, "UnknownOperationException", "unknown operation %s" % op)
            try:
                req = json.loads(body)
            except ValueError:
                return fail(400, "SerializationException", "the body is not JSON")
            status, obj = describe_savings_plans_offering_rates(st, req)
            return self.send_json(status, obj, "application/json", mode=mode if status == 200 else None)
        if service == "ssm":
            if target != "AmazonSSM.GetParameter":
                return fail(400, "UnknownOperationException", "unknown operation %s" % target)
            status, obj = ssm_get_parameter(st, body)
            return self.send_json(status, obj)
        if service == "pricing":
            if op != "GetProducts" or target != "AWSPriceListService.GetProducts":
                return fail(400, "UnknownOperationException", "unknown operation %s" % target)
            status, obj = get_products(st, body)
            return self.send_json(status, obj, mode=mode if status == 200 else None)
        if params.get("Version") != "2016-11-15":
            return fail(400, "InvalidParameterValue" if params.get("Version") else "MissingParameter",
                        "Version must be 2016-11-15")
        if op == "DescribeSpotPriceHistory":
            status, xml = describe_spot_price_history(st, region, params)
        elif op == "GetSpotPlacementScores":
            status, xml = get_spot_placement_scores(st, region, params)
        elif op == "DescribeAvailabilityZones":
            status, xml = describe_availability_zones(st, region)
        elif op in ("CreatePlacementGroup", "DeletePlacementGroup", "DescribePlacementGroups"):
            status, xml = placement_groups(st, op, params)
        elif op == "RunInstances":
            status, xml = run_instances(st, params)
        elif op == "DescribeCapacityReservations":
            status, xml = describe_capacity_reservations(st, region, params)
        elif op in ("DescribeVpcs", "DescribeSecurityGroups", "DescribeSubnets"):
            status, xml = default_network(st, op, region)
        elif op == "DescribeCapacityBlockOfferings":
            status, xml = describe_capacity_block_offerings(st, region, params)
        elif op == "DescribeInstanceTypes":
            status, xml = 200, instance_types_xml(numbered(params, "InstanceType"))
        elif op == "DescribeSecurityGroupRules":
            status, xml = default_group_rules(params.get("Filter.1.Value.1", ""))
        else:
            return fail(400, "InvalidAction", "The action %s is not valid for this web service." % op)
        return self.send(status, xml, "text/xml;charset=UTF-8", mode=mode if status == 200 else None)

    def verify(self, method, body, service):
        """Returns (region, None) or (None, (code, message))."""
        st = self.server.state
        auth = self.headers.get("Authorization") or ""
        amz_date = self.headers.get("X-Amz-Date") or ""
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            st.count("auth_failures")
            return None, ("MissingAuthenticationToken", "Request is missing Authentication Token")
        fields = {}
        for part in auth[len("AWS4-HMAC-SHA256 "):].split(","):
            k, _, v = part.strip().partition("=")
            fields[k] = v
        try:
            ak, date, region, svc, term = fields["Credential"].split("/")
            signed = fields["SignedHeaders"].split(";")
            given = fields["Signature"]
        except (KeyError, ValueError):
            st.count("auth_failures")
            return None, ("IncompleteSignature", "Authorization header is malformed")
        with st.lock:
            if ak not in st.stats["access_key_ids"]:
                st.stats["access_key_ids"].append(ak)
            known = st.creds.get(ak)
        if not known:
            st.count("auth_failures")
            return None, ("UnrecognizedClientException" if service == "pricing" else "AuthFailure",
                          "The security token included in the request is invalid.")
        secret, token, expires = known
        sent_token = self.headers.get("X-Amz-Security-Token")
        if sent_token and sent_token in st.expired_tokens:
            st.count("auth_failures")
            return None, ("ExpiredTokenException" if service == "pricing" else "ExpiredToken",
                          "The security token included in the request is expired")
        if token != sent_token:
            st.count("auth_failures")
            return None, ("UnrecognizedClientException" if service == "pricing" else "AuthFailure",
                          "The security token included in the request is invalid.")
        if expires is not None and time.time() > expires:
            st.count("auth_failures")
            return None, ("ExpiredTokenException" if service == "pricing" else "ExpiredToken",
                          "The security token included in the request is expired")
        if svc != service or term != "aws4_request" or "host" not in signed or "x-amz-date" not in signed:
            st.count("signature_failures")
            return None, ("SignatureDoesNotMatch", "Credential should be scoped to correct service: '%s'." % service)
        try:
            t = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            st.count("signature_failures")
            return None, ("SignatureDoesNotMatch", "X-Amz-Date is missing or malformed")
        if abs(t.timestamp() - time.time()) > CLOCK_SKEW_S or date != amz_date[:8]:
            st.count("signature_failures")
            return None, ("SignatureDoesNotMatch", "Signature expired: %s is outside the 15 minute window" % amz_date)
        if sent_token and "x-amz-security-token" not in signed:
            st.count("signature_failures")
            return None, ("SignatureDoesNotMatch", "X-Amz-Security-Token must be signed")
        # botocore recomputes the signature over exactly the headers the client said it signed.
        hdrs = {}
        for name in signed:
            vals = self.headers.get_all(name)
            if vals is None:
                st.count("signature_failures")
                return None, ("SignatureDoesNotMatch", "signed header %s is missing" % name)
            hdrs[name] = ",".join(vals) if len(vals) > 1 else vals[0]
        url = "http://%s%s" % (self.headers.get("Host", ""), self.path)
        req = AWSRequest(method=method, url=url, headers=hdrs, data=body)
        req.context["timestamp"] = amz_date
        signer = (S3SigV4Auth if svc == "s3" else SigV4Auth)(Credentials(ak, secret, token), svc, region)
        cr = signer.canonical_request(req)
        sts = signer.string_to_sign(req, cr)
        want = signer.signature(sts, req)
        if want != given:
            st.count("signature_failures")
            if st.args.verbose:
                sys.stderr.write("endpoint: signature mismatch; canonical request was:\n%s\n" % cr)
            return None, ("SignatureDoesNotMatch",
                          "The request signature we calculated does not match the signature you provided. "
                          "Check your AWS Secret Access Key and signing method.")
        return region, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--timeout", type=float, default=300, help="exit after this many seconds without a request")
    ap.add_argument("--prices", help="JSON list (or CSV) of price records")
    ap.add_argument("--page-size", type=int, default=100, help="GetProducts entries per page")
    ap.add_argument("--ec2-page-size", type=int, default=1000, help="spot history entries per page")
    ap.add_argument("--spot-age-s", type=float, default=3600)
    ap.add_argument("--latency-ms", type=float, default=0)
    ap.add_argument("--stall-seconds", type=float, default=30)
    ap.add_argument("--credentials", action="append")
    ap.add_argument("--expired-token", action="append")
    ap.add_argument("--fault", action="append")
    ap.add_argument("--s3-bucket", action="append", help="NAME:REGION, a bucket of the fake S3")
    ap.add_argument("--ssm-parameter", action="append", help="NAME=VALUE, a parameter SSM GetParameter answers")
    ap.add_argument("--capacity-blocks", help="JSON list of Capacity Block offerings (the docstring says their fields)")
    ap.add_argument("--savings-plan-rates", help="JSON list of DescribeSavingsPlansOfferingRates search results")
    ap.add_argument("--capacity-reservations", help="JSON list of Capacity Reservations (the docstring says their fields)")
    ap.add_argument("--zones", help="zone letters of the default subnets (default abc)")
    ap.add_argument("--sp-page-size", type=int, default=1000, help="Savings Plans rates per page")
    ap.add_argument("--placement-unauthorized", action="store_true")
    ap.add_argument("--zones-unauthorized", action="store_true",
                    help="DescribeAvailabilityZones answers UnauthorizedOperation")
    ap.add_argument("--zone-names", action="store_true",
                    help="spot history names zones by this account's names, as AWS does (default: the data's keys)")
    ap.add_argument("--imds-instance-type", default="p4d.24xlarge")
    ap.add_argument("--imds-region", default="us-east-1")
    ap.add_argument("--imds-az", default="us-east-1b")
    ap.add_argument("--imds-lifecycle", default="on-demand")
    ap.add_argument("--imds-role", default="instbench-test-role", help="'' for no role")
    ap.add_argument("--imds-cred-ttl", type=float, default=6 * 3600)
    ap.add_argument("--container-auth-token")
    ap.add_argument("--container-cred-ttl", type=float, default=6 * 3600)
    ap.add_argument("--tls-cert", help="serve https with this PEM certificate (and --tls-key)")
    ap.add_argument("--tls-key")
    ap.add_argument("--imds-v1-only", action="store_true",
                    help="an IMDS without sessions: the token PUT answers 404, GETs need no token")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.host.split(".")[0] != "127" and args.host != "localhost":
        sys.exit("the test endpoint only listens on 127.0.0.0/8")
    # a deep accept queue: the client opens up to 16+ connections at once, and dropped SYNs would
    # cost a 1 s retransmit each
    ThreadingHTTPServer.request_queue_size = 256
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    if args.tls_cert:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.state = State(args)
    products(server.state)  # built once, before requests arrive
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print(port, flush=True)
    server.state.last_request = time.monotonic()

    def idle_exit():
        while time.monotonic() - server.state.last_request < args.timeout:
            time.sleep(min(1.0, args.timeout))
        os._exit(0)
    threading.Thread(target=idle_exit, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
