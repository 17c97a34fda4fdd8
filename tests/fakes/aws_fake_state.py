"""The fake AWS's state (aws_fake_server.py says what the fake serves): the credentials it knows,
its faults to come, its stats, the price records it serves (--prices), and what every service's
answers share (times, NextTokens)."""
import base64
import csv
import datetime
import json
import sys
import threading
import time
import uuid

import fake_s3  # S3, in its own file: tests/fakes/fake_s3.py says what it serves


DEFAULT_AK = "AKIDEXAMPLE"
DEFAULT_SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


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


def offset_of(token, kind):
    """A NextToken of ours back to its offset (ValueError when it is not one)."""
    k, off, _ = base64.b64decode(token).decode().split(":")
    if k != kind:
        raise ValueError(token)
    return int(off)


def token_for(kind, off):
    return base64.b64encode(("%s:%d:%s" % (kind, off, uuid.uuid4().hex)).encode()).decode()
