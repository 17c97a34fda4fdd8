#!/usr/bin/python3
"""The sweep's fault-injecting fake EC2: tests/aws/aws_fake_server.py (signatures checked with
botocore, its fake S3 with presigned URLs, IMDS, faults) plus the EC2 calls a sweep makes, with the
failures moto never produces.  Started as the fake AWS is (testlib.FakeAws with SERVER = this file;
the same command-line options); every other request goes to aws_fake_server's own handler.

EC2 calls served (query API, signing name "ec2", the region is the signing region):
  RunInstances, DescribeInstances (InstanceId.N or Filter tag:KEY = VALUE, '*' matching any value),
  TerminateInstances, CreatePlacementGroup / DeletePlacementGroup / DescribePlacementGroups (tag
  filter), DescribeVpcs / DescribeSubnets / DescribeSecurityGroups (one default VPC, one default
  subnet per zone REGIONa, REGIONb, REGIONc), DescribeImages (x86_64; an AMI starting "ami-arm"
  is arm64).
Instances go pending -> running on their second DescribeInstances, and stay until terminated
(shutting-down on TerminateInstances, terminated one describe later).

Scripted faults (POST /__sweep, JSON, merged into the current script):
  "capacity": {"ZONE": "InsufficientInstanceCapacity", ...}   RunInstances in that zone's subnet
              (or "TYPE@ZONE" for one type) answers that code
  "quota": {"TYPE": "VcpuLimitExceeded"}      RunInstances of TYPE answers that code
  "throttle": N                               the next N sweep EC2 calls answer 503 RequestLimitExceeded
  "throttle_op": {"ACTION": N}                the next N calls of ACTION answer 503 RequestLimitExceeded
  "dry_run_denied": 1                         a RunInstances DryRun answers 403 UnauthorizedOperation
  "lose_answers": N                           RunInstances launches, then its next N answers (the
                                              retries with the same ClientToken too) are 500s
  "hide_new": N                               a new instance is missing from its first N
                                              DescribeInstances answers (eventual consistency)
  "interrupt": {"TYPE": SECONDS}              a spot instance of TYPE is reclaimed that long after
                                              launch (terminated, Server.SpotInstanceTermination)
  "terminate_fail": N                         the next N TerminateInstances answer 400 IncorrectInstanceState
  "pg_in_use": N                              the next N DeletePlacementGroup answer InvalidPlacementGroup.InUse
  "plant": [{"id", "region", "state", "type", "launched", "ended_at", "tags"}]   instances that exist
              without a RunInstances (launched and ended_at in epoch seconds; ended_at: the time the
              StateTransitionReason names)
Instances live in the region that launched them: DescribeInstances and TerminateInstances signed
for another region do not see them, as EC2's regions are apart.  An ending instance's
StateTransitionReason (<reason>) names when it ended, as EC2's does: "User initiated (... GMT)".
GET /__sweep: {"instances": [...], "placement_groups": [...], "calls": {op: n}, "launches": [params]}."""
import json
import os
import sys
import threading
import time
import urllib.parse
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "aws"))
import aws_fake_server  # noqa: E402

NS = 'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"'
OPS = {"RunInstances", "DescribeInstances", "TerminateInstances", "CreatePlacementGroup", "DeletePlacementGroup",
       "DescribePlacementGroups", "DescribeVpcs", "DescribeSubnets", "DescribeSecurityGroups", "DescribeImages"}
CAPACITY_MSG = "We currently do not have sufficient capacity in the Availability Zone you requested."


class Sweep:
    def __init__(self):
        self.lock = threading.Lock()
        self.script = {"capacity": {}, "quota": {}, "throttle": 0, "hide_new": 0, "interrupt": {},
                       "terminate_fail": 0, "pg_in_use": 0, "throttle_op": {}, "stuck": [],
                       "dry_run_denied": 0, "lose_answers": 0}
        self.instances = {}      # id -> dict
        self.groups = {}         # name -> {"state", "tags"}
        self.calls = {}
        self.launches = []
        self.tokens = {}         # ClientToken -> reservation answer
        self.n = 0


SWEEP = Sweep()


def numbered(params, prefix):
    out, i = [], 1
    while "%s.%d" % (prefix, i) in params:
        out.append(params["%s.%d" % (prefix, i)])
        i += 1
    return out


def tag_specs(params, rtype):
    tags = {}
    i = 1
    while "TagSpecification.%d.ResourceType" % i in params:
        if params["TagSpecification.%d.ResourceType" % i] == rtype:
            j = 1
            while "TagSpecification.%d.Tag.%d.Key" % (i, j) in params:
                tags[params["TagSpecification.%d.Tag.%d.Key" % (i, j)]] = params.get("TagSpecification.%d.Tag.%d.Value" % (i, j), "")
                j += 1
        i += 1
    return tags


def tag_filters(params):
    """[(key, [values])] of Filter.N.Name=tag:KEY."""
    out, i = [], 1
    while "Filter.%d.Name" % i in params:
        name = params["Filter.%d.Name" % i]
        vals = numbered(params, "Filter.%d.Value" % i)
        out.append((name, vals))
        i += 1
    return out


def matches(tags, filters):
    for name, vals in filters:
        if name.startswith("tag:"):
            v = tags.get(name[4:])
            if v is None or not any(x == "*" or x == v for x in vals):
                return False
        elif name == "tag-key":
            if not any(k in tags for k in vals):
                return False
        elif name == "instance-state-name":
            pass   # handled by the caller
    return True


def tagset(tags):
    return "<tagSet>%s</tagSet>" % "".join("<item><key>%s</key><value>%s</value></item>" % (escape(k), escape(v))
                                           for k, v in tags.items())


STATE_CODES = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48}


def instance_xml(i):
    reason = ""
    if i["reason"]:
        reason = "<stateReason><code>%s</code><message>%s</message></stateReason>" % (escape(i["reason"]), escape(i["reason"]))
    if i.get("ended_at"):
        reason += "<reason>%s initiated (%s GMT)</reason>" % (
            "Service" if i["reason"] == "Server.SpotInstanceTermination" else "User",
            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(i["ended_at"])))
    return ("<item><instanceId>%s</instanceId><imageId>%s</imageId><instanceState><code>%d</code><name>%s</name>"
            "</instanceState><privateIpAddress>%s</privateIpAddress><amiLaunchIndex>%d</amiLaunchIndex>"
            "<instanceType>%s</instanceType><launchTime>%s</launchTime><placement><availabilityZone>%s"
            "</availabilityZone><groupName>%s</groupName><tenancy>default</tenancy></placement><subnetId>%s</subnetId>"
            "<vpcId>vpc-0fake</vpcId>%s%s%s</item>") % (
        i["id"], escape(i["image"]), STATE_CODES[i["state"]], i["state"], i["ip"], i["index"], escape(i["type"]),
        time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(i["launched"])), i["az"], escape(i["group"]), i["subnet"],
        "<instanceLifecycle>spot</instanceLifecycle>" if i["spot"] else "", reason, tagset(i["tags"]))


def err(status, code, msg):
    return status, ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>%s</Code><Message>%s'
                    '</Message></Error></Errors><RequestID>fake</RequestID></Response>') % (code, escape(msg))


def ok(op, inner):
    return 200, '<?xml version="1.0" encoding="UTF-8"?>\n<%sResponse %s><requestId>fake</requestId>%s</%sResponse>' % (
        op, NS, inner, op)


def zones(region):
    return [region + z for z in "abc"]


def advance(i, now):
    """An instance's life between two looks at it."""
    s = SWEEP.script
    if i["state"] == "shutting-down" and i["seen_ending"] and i["type"] not in s["stuck"]:
        i["state"] = "terminated"
    if i["state"] == "shutting-down":
        i["seen_ending"] = True
    if i["state"] == "pending" and i["seen"] >= 1:
        i["state"] = "running"
    after = s["interrupt"].get(i["type"])
    if i["spot"] and after is not None and i["state"] in ("pending", "running") and now - i["launched"] >= after:
        i["state"] = "shutting-down"
        i["seen_ending"] = False
        i["reason"] = "Server.SpotInstanceTermination"
        i["ended_at"] = now


def run_instances(region, p):
    s = SWEEP.script
    token = p.get("ClientToken", "")
    if token and token in SWEEP.tokens:
        if s["lose_answers"] > 0:   # launched, but every answer lost on the way back
            s["lose_answers"] -= 1
            return err(500, "InternalError", "An internal error has occurred.")
        return ok("RunInstances", SWEEP.tokens[token])   # idempotent: the same answer, nothing new
    itype, count = p.get("InstanceType", ""), int(p.get("MinCount", "1"))
    subnet = p.get("SubnetId", "")
    az = subnet.replace("subnet-", "") if subnet else zones(region)[0]
    code = s["quota"].get(itype)
    if code:
        return err(400, code, "You have requested more vCPU capacity than your current vCPU limit allows.")
    code = s["capacity"].get("%s@%s" % (itype, az)) or s["capacity"].get(az)
    if code:
        # EC2 lists InsufficientInstanceCapacity among its server errors (HTTP 500): retried first
        return err(500 if code == "InsufficientInstanceCapacity" else 400, code, CAPACITY_MSG)
    group = p.get("Placement.GroupName", "")
    if group and group not in SWEEP.groups:
        return err(400, "InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown." % group)
    if p.get("InstanceInitiatedShutdownBehavior") != "terminate":
        return err(400, "InvalidParameterValue", "the fake wants InstanceInitiatedShutdownBehavior=terminate")
    spot = p.get("InstanceMarketOptions.MarketType") == "spot"
    tags = tag_specs(p, "instance")
    SWEEP.launches.append(dict(p))
    now = time.time()
    items = []
    for k in range(count):
        SWEEP.n += 1
        iid = "i-%017x" % (0xfa4e0000 + SWEEP.n)
        inst = {"id": iid, "image": p.get("ImageId", ""), "state": "pending", "ip": "10.0.%d.%d" % (SWEEP.n // 250, SWEEP.n % 250 + 1),
                "index": k, "type": itype, "launched": now, "az": az, "group": group, "subnet": subnet or "subnet-" + az,
                "spot": spot, "reason": "", "tags": tags, "seen": 0, "hidden": s["hide_new"], "seen_ending": False,
                "volume_tags": tag_specs(p, "volume"), "region": region, "ended_at": None}
        SWEEP.instances[iid] = inst
        items.append(instance_xml(inst))
    inner = "<reservationId>r-fake%d</reservationId><ownerId>123456789012</ownerId><groupSet/><instancesSet>%s</instancesSet>" % (
        SWEEP.n, "".join(items))
    if token:
        SWEEP.tokens[token] = inner
    if s["lose_answers"] > 0:
        s["lose_answers"] -= 1
        return err(500, "InternalError", "An internal error has occurred.")
    return ok("RunInstances", inner)


def describe_instances(region, p):
    filters = tag_filters(p)
    ids = numbered(p, "InstanceId") + [v for name, vals in filters if name == "instance-id" for v in vals]
    now = time.time()
    items = []
    for i in SWEEP.instances.values():
        if i.get("region", region) != region:
            continue
        if ids and i["id"] not in ids:
            continue
        if not matches(i["tags"], filters):
            continue
        if i["hidden"] > 0:
            i["hidden"] -= 1
            continue
        advance(i, now)
        i["seen"] += 1
        items.append(instance_xml(i))
    res = "".join("<item><reservationId>r-fake</reservationId><ownerId>123456789012</ownerId><groupSet/>"
                  "<instancesSet>%s</instancesSet></item>" % x for x in items)
    return ok("DescribeInstances", "<reservationSet>%s</reservationSet>" % res)


def terminate_instances(region, p):
    s = SWEEP.script
    if s["terminate_fail"] > 0:
        s["terminate_fail"] -= 1
        return err(400, "IncorrectInstanceState", "The instance is not in a state from which it can be terminated.")
    items = []
    for iid in numbered(p, "InstanceId"):
        i = SWEEP.instances.get(iid)
        if not i or i.get("region", region) != region:
            return err(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist" % iid)
        prev = i["state"]
        if prev != "terminated":
            i["state"] = "shutting-down"
            i["seen_ending"] = False
            i["ended_at"] = time.time()
            if not i["reason"]:
                i["reason"] = "Client.UserInitiatedShutdown"
        items.append("<item><instanceId>%s</instanceId><currentState><code>%d</code><name>%s</name></currentState>"
                     "<previousState><code>%d</code><name>%s</name></previousState></item>" % (
                         iid, STATE_CODES[i["state"]], i["state"], STATE_CODES[prev], prev))
    return ok("TerminateInstances", "<instancesSet>%s</instancesSet>" % "".join(items))


def placement_groups(op, p):
    s = SWEEP.script
    name = p.get("GroupName", "")
    if op == "CreatePlacementGroup":
        if name in SWEEP.groups and SWEEP.groups[name]["state"] != "deleted":
            return err(400, "InvalidPlacementGroup.Duplicate", "The Placement Group '%s' already exists." % name)
        SWEEP.groups[name] = {"state": "available", "tags": tag_specs(p, "placement-group"), "strategy": p.get("Strategy", "")}
        return ok(op, "<return>true</return><placementGroup><groupName>%s</groupName><state>available</state>"
                      "<strategy>%s</strategy>%s</placementGroup>" % (escape(name), escape(p.get("Strategy", "")),
                                                                     tagset(SWEEP.groups[name]["tags"])))
    if op == "DeletePlacementGroup":
        g = SWEEP.groups.get(name)
        if not g or g["state"] == "deleted":
            return err(400, "InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown." % name)
        in_use = any(i["group"] == name and i["state"] != "terminated" for i in SWEEP.instances.values())
        if in_use or s["pg_in_use"] > 0:
            s["pg_in_use"] = max(0, s["pg_in_use"] - 1)
            return err(400, "InvalidPlacementGroup.InUse", "The placement group '%s' is in use." % name)
        g["state"] = "deleted"
        return ok(op, "<return>true</return>")
    filters = tag_filters(p)
    names = numbered(p, "GroupName")
    items = "".join("<item><groupName>%s</groupName><state>%s</state><strategy>%s</strategy><groupId>pg-%s</groupId>%s</item>" % (
        escape(n), g["state"], g["strategy"], abs(hash(n)) % 10**12, tagset(g["tags"]))
        for n, g in SWEEP.groups.items()
        if g["state"] != "deleted" and (not names or n in names) and matches(g["tags"], filters))
    return ok(op, "<placementGroupSet>%s</placementGroupSet>" % items)


def network(op, region, p):
    if op == "DescribeVpcs":
        return ok(op, "<vpcSet><item><vpcId>vpc-0fake</vpcId><state>available</state><cidrBlock>172.31.0.0/16</cidrBlock>"
                      "<isDefault>true</isDefault></item></vpcSet>")
    if op == "DescribeSubnets":
        items = "".join("<item><subnetId>subnet-%s</subnetId><state>available</state><vpcId>vpc-0fake</vpcId>"
                        "<availabilityZone>%s</availabilityZone><defaultForAz>true</defaultForAz>"
                        "<mapPublicIpOnLaunch>true</mapPublicIpOnLaunch></item>" % (z, z) for z in zones(region))
        return ok(op, "<subnetSet>%s</subnetSet>" % items)
    if op == "DescribeSecurityGroups":
        return ok(op, "<securityGroupInfo><item><ownerId>123456789012</ownerId><groupId>sg-0fake</groupId>"
                      "<groupName>default</groupName><groupDescription>default VPC security group</groupDescription>"
                      "<vpcId>vpc-0fake</vpcId></item></securityGroupInfo>")
    images = numbered(p, "ImageId") + [v for name, vals in tag_filters(p) if name == "image-id" for v in vals]
    items = "".join("<item><imageId>%s</imageId><imageState>available</imageState><architecture>%s</architecture></item>" % (
        escape(i), "arm64" if i.startswith("ami-arm") else "x86_64") for i in images)
    return ok(op, "<imagesSet>%s</imagesSet>" % items)


def instance_view(i):
    return {k: i.get(k) for k in ("id", "state", "type", "az", "index", "spot", "reason", "tags", "group", "ip", "image",
                                  "volume_tags", "subnet", "region", "ended_at")}


def plant(p):
    """An instance that exists without a RunInstances of this fake (a test's past)."""
    region = p.get("region", "us-east-1")
    SWEEP.instances[p["id"]] = {
        "id": p["id"], "image": "ami-0fake", "state": p.get("state", "running"), "ip": "10.0.9.9", "index": 0,
        "type": p.get("type", "g5.xlarge"), "launched": p.get("launched", time.time()), "az": region + "a", "group": "",
        "subnet": "subnet-" + region + "a", "spot": False, "reason": p.get("reason", ""), "tags": p.get("tags", {}),
        "seen": 1, "hidden": 0, "seen_ending": p.get("state") == "shutting-down", "volume_tags": {}, "region": region,
        "ended_at": p.get("ended_at")}


class SweepHandler(aws_fake_server.Handler):
    def dispatch(self, method):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/__sweep":
            body = self.read_body()
            with SWEEP.lock:
                if method == "POST":
                    script = json.loads(body or b"{}")
                    for p in script.pop("plant", []):
                        plant(p)
                    SWEEP.script.update(script)
                out = {"instances": [instance_view(i) for i in SWEEP.instances.values()],
                       "placement_groups": [{"name": n, **g} for n, g in SWEEP.groups.items()],
                       "calls": dict(SWEEP.calls), "launches": SWEEP.launches}
            return self.send_json(200, out, "application/json")
        return super().dispatch(method)

    def service(self, method, body):
        parts = urllib.parse.urlsplit(self.path)
        params = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        if method == "POST" and "x-www-form-urlencoded" in (self.headers.get("Content-Type") or ""):
            params.update(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        op = params.get("Action", "")
        if self.headers.get("X-Amz-Target") or op not in OPS or "/ec2/aws4_request" not in (self.headers.get("Authorization") or ""):
            return super().service(method, body)
        region, why = self.verify(method, body, "ec2")
        if why:
            s, b = aws_fake_server.ec2_error(403, why[0], why[1])
            return self.send(s, b, "text/xml;charset=UTF-8")
        with SWEEP.lock:
            SWEEP.calls[op] = SWEEP.calls.get(op, 0) + 1
            per_op = SWEEP.script["throttle_op"]
            if SWEEP.script["throttle"] > 0 or per_op.get(op, 0) > 0:
                if per_op.get(op, 0) > 0:
                    per_op[op] -= 1
                else:
                    SWEEP.script["throttle"] -= 1
                SWEEP.calls["throttled"] = SWEEP.calls.get("throttled", 0) + 1
                status, xml = err(503, "RequestLimitExceeded", "Request limit exceeded.")
            elif params.get("DryRun") == "true" and SWEEP.script["dry_run_denied"]:
                status, xml = err(403, "UnauthorizedOperation", "You are not authorized to perform this operation.")
            elif params.get("DryRun") == "true":
                status, xml = err(412, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
            elif op == "RunInstances":
                status, xml = run_instances(region, params)
            elif op == "DescribeInstances":
                status, xml = describe_instances(region, params)
            elif op == "TerminateInstances":
                status, xml = terminate_instances(region, params)
            elif "PlacementGroup" in op:
                status, xml = placement_groups(op, params)
            else:
                status, xml = network(op, region, params)
        return self.send(status, xml, "text/xml;charset=UTF-8")


if __name__ == "__main__":
    aws_fake_server.Handler = SweepHandler   # main() builds its server from this name
    aws_fake_server.main()
