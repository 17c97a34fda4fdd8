#!/usr/bin/python3
"""The sweep's fault-injecting fake EC2: tests/fakes/aws_fake_server.py (signatures checked with
botocore, its fake S3 with presigned URLs, IMDS, faults) plus the EC2 calls a sweep makes, with the
failures moto never produces.  Started as the fake AWS is (testlib.FakeAws with SERVER = this file;
the same command-line options); every other request goes to aws_fake_server's own handler.

EC2 calls served (query API, signing name "ec2", the region is the signing region):
  RunInstances, DescribeInstances (InstanceId.N or Filter tag:KEY = VALUE, '*' matching any value, or
  client-token = the ClientToken of the RunInstances that launched it),
  TerminateInstances, CreatePlacementGroup / DeletePlacementGroup / DescribePlacementGroups (tag
  filter), DescribeVpcs / DescribeSubnets / DescribeSecurityGroups (one default VPC, one default
  subnet per zone REGIONa, REGIONb, REGIONc), DescribeImages (x86_64; an AMI starting "ami-arm"
  is arm64); for EFA: DescribeInstanceTypes (aws_fake_server.EFA_TYPES), DescribeSecurityGroupRules,
  Create/DeleteSecurityGroup (DependencyViolation while a live instance is in it),
  AuthorizeSecurityGroupIngress/Egress, Allocate/Associate/Disassociate/ReleaseAddress
  (InvalidIPAddress.InUse while associated; a terminated instance's address is disassociated),
  DescribeAddresses (tag filter), DescribeNetworkInterfaces (attachment.instance-id).  RunInstances
  with NetworkInterface.N and a top-level SubnetId or SecurityGroupId is refused, as EC2 does.
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
  "default_sg_efa": 1                         the default group allows all traffic out to itself too
  "eip_limit": N                              AllocateAddress answers AddressLimitExceeded at N (default 5)
  "eni_late": N                               a new instance's interfaces are missing from its first N
                                              DescribeNetworkInterfaces (AssociateAddress: NotFound)
  "sg_in_use": N                              the next N DeleteSecurityGroup answer DependencyViolation
  "networks": {"TYPE": [efa, max_efa, [per-card max], [[types]...]]}   DescribeInstanceTypes answers
              that shape for TYPE (aws_fake_server.EFA_TYPES' form) instead of the table's
  "refuse": {"TYPE": "CODE"}                  RunInstances of TYPE answers 400 CODE (a refusal that is
                                              the candidate's, not capacity or a quota)
  "hold": ["TYPE", ...]                       RunInstances of TYPE launches at once, but its answer is
                                              held while TYPE stays listed (a launch in flight)
  "hold_by": {"AKID": ["ACTION", ...]}       a call of ACTION signed with access key AKID waits, before
                                              it is served, while ACTION stays listed for AKID (so
                                              one process's calls can be held, another's not);
                                              GET counts the calls that waited in calls["held ACTION"]
  "end": {"INSTANCE-ID": "REASON"}            that instance ends now, as if from outside the sweep (a
                                              failure, the console): shutting-down with REASON, then
                                              terminated
  "stop": ["INSTANCE-ID", ...]                those instances stop (stopping, then stopped), as
                                              StopInstances or a stop from the console does
  "quick_end": 1                               a terminated instance shows "terminated" at the first
                                              DescribeInstances after its TerminateInstances (not
                                              one look later): a confirmation in one round
RunInstances is refused (400 InvalidParameterValue), as EC2 refuses it, when an interface asks a
network card for an InterfaceType that card does not take (DescribeInstanceTypes' InterfaceTypes),
or an efa-only interface is the primary.
  "plant": [{"id", "region", "state", "type", "launched", "ended_at", "tags"}]   instances that exist
              without a RunInstances (launched and ended_at in epoch seconds; ended_at: the time the
              StateTransitionReason names)
Instances live in the region that launched them: DescribeInstances and TerminateInstances signed
for another region do not see them, as EC2's regions are apart.  An ending instance's
StateTransitionReason (<reason>) names when it ended, as EC2's does: "User initiated (... GMT)".
GET /__sweep: {"instances": [...], "placement_groups": [...], "calls": {op: n}, "launches": [params],
"refused": [params of each refused RunInstances]}."""
import json
import os
import sys
import threading
import time
import urllib.parse
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "fakes"))
import aws_fake_server  # noqa: E402

NS = 'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"'
OPS = {"RunInstances", "DescribeInstances", "TerminateInstances", "CreatePlacementGroup", "DeletePlacementGroup",
       "DescribePlacementGroups", "DescribeVpcs", "DescribeSubnets", "DescribeSecurityGroups", "DescribeImages",
       "DescribeInstanceTypes", "DescribeSecurityGroupRules", "CreateSecurityGroup", "AuthorizeSecurityGroupIngress",
       "AuthorizeSecurityGroupEgress", "DeleteSecurityGroup", "AllocateAddress", "AssociateAddress",
       "DisassociateAddress", "ReleaseAddress", "DescribeAddresses", "DescribeNetworkInterfaces"}

CAPACITY_MSG = "We currently do not have sufficient capacity in the Availability Zone you requested."


class Sweep:
    def __init__(self):
        self.lock = threading.Lock()
        self.script = {"capacity": {}, "quota": {}, "throttle": 0, "hide_new": 0, "interrupt": {},
                       "terminate_fail": 0, "pg_in_use": 0, "throttle_op": {}, "stuck": [],
                       "dry_run_denied": 0, "lose_answers": 0, "default_sg_efa": 0, "eip_limit": 5,
                       "eni_late": 0, "sg_in_use": 0, "networks": {}, "refuse": {}, "hold": [],
                       "hold_by": {}, "quick_end": 0}
        self.instances = {}      # id -> dict
        self.groups = {}         # name -> {"state", "tags"}
        self.calls = {}
        self.launches = []
        self.refused = []
        self.tokens = {}         # ClientToken -> reservation answer
        self.n = 0
        self.sgs = {}            # id -> {"name", "tags", "rules"}
        self.addresses = {}      # allocation id -> {"ip", "tags", "eni", "assoc"}


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


STATE_CODES = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48, "stopping": 64, "stopped": 80}


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
    if i["state"] == "stopping":
        i["state"] = "stopped"
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


def interfaces_refused(itype, p):
    """Why EC2 would refuse the interfaces P asks for ITYPE ("" when it would not)."""
    shape = SWEEP.script["networks"].get(itype) or aws_fake_server.EFA_TYPES.get(itype, (False, 0, [4]))
    efa, cards = shape[0], shape[2]
    kinds = shape[3] if len(shape) > 3 else [aws_fake_server.ALL_IF if efa else ["interface"]] * len(cards)
    n = 1
    while "NetworkInterface.%d.DeviceIndex" % n in p:
        card = int(p.get("NetworkInterface.%d.NetworkCardIndex" % n, "0"))
        dev = int(p["NetworkInterface.%d.DeviceIndex" % n])
        kind = p.get("NetworkInterface.%d.InterfaceType" % n, "interface")
        if card >= len(cards) or kind not in kinds[card]:
            return "Network card %d of %s does not support interface type %s." % (card, itype, kind)
        if card == 0 and dev == 0 and kind == "efa-only":
            return "An EFA-only network interface cannot be the primary network interface."
        n += 1
    return ""


def run_instances(region, p):
    s = SWEEP.script
    token = p.get("ClientToken", "")
    if token and token in SWEEP.tokens:
        if s["lose_answers"] > 0:   # launched, but every answer lost on the way back
            s["lose_answers"] -= 1
            return err(500, "InternalError", "An internal error has occurred.")
        return ok("RunInstances", SWEEP.tokens[token])   # idempotent: the same answer, nothing new
    itype, count = p.get("InstanceType", ""), int(p.get("MinCount", "1"))
    subnet = p.get("SubnetId", "") or p.get("NetworkInterface.1.SubnetId", "")
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
    if "NetworkInterface.1.DeviceIndex" in p and ("SubnetId" in p or "SecurityGroupId.1" in p):
        return err(400, "InvalidParameterCombination", "Network interfaces and an instance-level subnet ID or "
                   "security group may not be specified on the same request")
    why = interfaces_refused(itype, p)
    code = s["refuse"].get(itype)
    if why or code:
        SWEEP.refused.append(dict(p))
        return err(400, code or "InvalidParameterValue", why or "the fake refuses this launch (scripted)")
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
                "volume_tags": tag_specs(p, "volume"), "region": region, "ended_at": None, "token": token,
                "sg": p.get("NetworkInterface.1.SecurityGroupId.1") or p.get("SecurityGroupId.1", "sg-0fake"),
                "enis": [], "eni_hidden": s["eni_late"]}
        n = 1
        while "NetworkInterface.%d.DeviceIndex" % n in p:   # one ENI per interface asked; eni-<instance>-<k>
            inst["enis"].append({"id": "eni-%s%02d" % (iid[2:], n), "card": int(p.get("NetworkInterface.%d.NetworkCardIndex" % n, "0")),
                                 "device": int(p["NetworkInterface.%d.DeviceIndex" % n]),
                                 "type": p.get("NetworkInterface.%d.InterfaceType" % n, "interface")})
            n += 1
        if not inst["enis"]:
            inst["enis"].append({"id": "eni-%s00" % iid[2:], "card": 0, "device": 0, "type": "interface"})
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
    tokens = [v for name, vals in filters if name == "client-token" for v in vals]
    now = time.time()
    items = []
    for i in SWEEP.instances.values():
        if i.get("region", region) != region:
            continue
        if ids and i["id"] not in ids:
            continue
        if any(name == "client-token" for name, _ in filters) and i.get("token") not in tokens:
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
            i["seen_ending"] = bool(s["quick_end"])
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
        filters = tag_filters(p)
        names = [v for name, vals in filters if name == "group-name" for v in vals]
        groups = [("sg-0fake", "default", {})] + [(k, g["name"], g["tags"]) for k, g in SWEEP.sgs.items()]
        items = "".join("<item><ownerId>123456789012</ownerId><groupId>%s</groupId><groupName>%s</groupName>"
                        "<groupDescription>d</groupDescription><vpcId>vpc-0fake</vpcId>%s</item>" % (k, escape(n), tagset(t))
                        for k, n, t in groups if (not names or n in names) and matches(t, filters))
        return ok(op, "<securityGroupInfo>%s</securityGroupInfo>" % items)
    images = numbered(p, "ImageId") + [v for name, vals in tag_filters(p) if name == "image-id" for v in vals]
    items = "".join("<item><imageId>%s</imageId><imageState>available</imageState><architecture>%s</architecture></item>" % (
        escape(i), "arm64" if i.startswith("ami-arm") else "x86_64") for i in images)
    return ok(op, "<imagesSet>%s</imagesSet>" % items)


def live(i):
    return i["state"] != "terminated"


def eni_owner(eni):
    for i in SWEEP.instances.values():
        if any(e["id"] == eni for e in i.get("enis", [])):
            return i
    return None


def addresses_settle():
    """An address on a terminated instance's interface is disassociated, as EC2 does."""
    for a in SWEEP.addresses.values():
        owner = eni_owner(a["eni"]) if a["eni"] else None
        if owner and not live(owner):
            a["eni"] = a["assoc"] = None


def efa_network(op, p):
    s = SWEEP.script
    if op == "DescribeInstanceTypes":   # aws_fake_server's table (EFA_TYPES)
        return 200, aws_fake_server.instance_types_xml(numbered(p, "InstanceType"), s["networks"])
    if op == "DescribeSecurityGroupRules":
        gid = next((v for name, vals in tag_filters(p) if name == "group-id" for v in vals), "")
        rules = [(False, "sg-0fake"), (True, None)]   # the default group: in from itself, out to 0.0.0.0/0
        if gid != "sg-0fake":
            rules = SWEEP.sgs.get(gid, {}).get("rules", [])
        elif s["default_sg_efa"]:
            rules = rules + [(True, "sg-0fake")]
        items = "".join("<item><groupId>%s</groupId><isEgress>%s</isEgress><ipProtocol>-1</ipProtocol>%s</item>" % (
            gid, "true" if egress else "false",
            "<referencedGroupInfo><groupId>%s</groupId></referencedGroupInfo>" % ref if ref else
            "<cidrIpv4>0.0.0.0/0</cidrIpv4>") for egress, ref in rules)
        return ok(op, "<securityGroupRuleSet>%s</securityGroupRuleSet>" % items)
    if op == "CreateSecurityGroup":
        name = p.get("GroupName", "")
        if not p.get("GroupDescription") or not p.get("VpcId"):
            return err(400, "MissingParameter", "GroupDescription and VpcId are needed")
        if name == "default" or any(g["name"] == name for g in SWEEP.sgs.values()):
            return err(400, "InvalidGroup.Duplicate", "The security group '%s' already exists" % name)
        gid = "sg-0%016x" % (0xe0a0000 + len(SWEEP.sgs) + 1)
        SWEEP.sgs[gid] = {"name": name, "tags": tag_specs(p, "security-group"), "rules": [(True, None)]}
        return ok(op, "<return>true</return><groupId>%s</groupId>" % gid)
    if op in ("AuthorizeSecurityGroupIngress", "AuthorizeSecurityGroupEgress"):
        g = SWEEP.sgs.get(p.get("GroupId", ""))
        if not g:
            return err(400, "InvalidGroup.NotFound", "The security group '%s' does not exist" % p.get("GroupId", ""))
        rule = (op.endswith("Egress"), p.get("IpPermissions.1.Groups.1.GroupId"))
        if p.get("IpPermissions.1.IpProtocol") != "-1" or not rule[1]:
            return err(400, "InvalidParameterValue", "the fake takes all-protocol rules to a group only")
        if rule in g["rules"]:
            return err(400, "InvalidPermission.Duplicate", "the specified rule already exists")
        g["rules"].append(rule)
        return ok(op, "<return>true</return>")
    if op == "DeleteSecurityGroup":
        gid = p.get("GroupId", "")
        if gid not in SWEEP.sgs:
            return err(400, "InvalidGroup.NotFound", "The security group '%s' does not exist" % gid)
        if s["sg_in_use"] > 0 or any(i.get("sg") == gid and live(i) for i in SWEEP.instances.values()):
            s["sg_in_use"] = max(0, s["sg_in_use"] - 1)
            return err(400, "DependencyViolation", "resource %s has a dependent object" % gid)
        del SWEEP.sgs[gid]
        return ok(op, "<return>true</return>")
    addresses_settle()
    if op == "AllocateAddress":
        if len(SWEEP.addresses) >= s["eip_limit"]:
            return err(400, "AddressLimitExceeded", "The maximum number of addresses has been reached.")
        alloc = "eipalloc-0%016x" % (0xadd0000 + SWEEP.n * 100 + len(SWEEP.addresses) + 1)
        SWEEP.n += 1
        SWEEP.addresses[alloc] = {"ip": "198.51.100.%d" % (len(SWEEP.addresses) + 1), "tags": tag_specs(p, "elastic-ip"),
                                  "eni": None, "assoc": None}
        return ok(op, "<publicIp>%s</publicIp><domain>vpc</domain><allocationId>%s</allocationId>" % (
            SWEEP.addresses[alloc]["ip"], alloc))
    if op == "AssociateAddress":
        a = SWEEP.addresses.get(p.get("AllocationId", ""))
        owner = eni_owner(p.get("NetworkInterfaceId", ""))
        if not a:
            return err(400, "InvalidAllocationID.NotFound", "no such allocation")
        if not owner or not live(owner) or owner.get("eni_hidden", 0) > 0:
            return err(400, "InvalidNetworkInterfaceID.NotFound", "The networkInterface ID '%s' does not exist" %
                       p.get("NetworkInterfaceId", ""))
        a["eni"], a["assoc"] = p["NetworkInterfaceId"], "eipassoc-" + p["AllocationId"][9:]
        return ok(op, "<return>true</return><associationId>%s</associationId>" % a["assoc"])
    if op == "DisassociateAddress":
        for a in SWEEP.addresses.values():
            if a["assoc"] == p.get("AssociationId"):
                a["eni"] = a["assoc"] = None
                return ok(op, "<return>true</return>")
        return err(400, "InvalidAssociationID.NotFound", "no such association")
    if op == "ReleaseAddress":
        alloc = p.get("AllocationId", "")
        if alloc not in SWEEP.addresses:
            return err(400, "InvalidAllocationID.NotFound", "The allocation ID '%s' does not exist" % alloc)
        if SWEEP.addresses[alloc]["assoc"]:
            return err(400, "InvalidIPAddress.InUse", "Address %s is in use." % SWEEP.addresses[alloc]["ip"])
        del SWEEP.addresses[alloc]
        return ok(op, "<return>true</return>")
    if op == "DescribeAddresses":
        filters = tag_filters(p)
        items = "".join("<item><allocationId>%s</allocationId><publicIp>%s</publicIp>%s%s</item>" % (
            k, a["ip"], "<associationId>%s</associationId>" % a["assoc"] if a["assoc"] else "", tagset(a["tags"]))
            for k, a in SWEEP.addresses.items() if matches(a["tags"], filters))
        return ok(op, "<addressesSet>%s</addressesSet>" % items)
    # DescribeNetworkInterfaces, Filter attachment.instance-id
    want = [v for name, vals in tag_filters(p) if name == "attachment.instance-id" for v in vals]
    items = []
    for i in SWEEP.instances.values():
        if i["id"] not in want or not live(i):
            continue
        if i.get("eni_hidden", 0) > 0:   # interfaces attached a moment after the launch
            i["eni_hidden"] -= 1
            continue
        for e in i["enis"]:
            ip = i["ip"] if (e["card"], e["device"]) == (0, 0) else "10.9.%d.%d" % (e["card"], e["device"] + 1)
            items.append("<item><networkInterfaceId>%s</networkInterfaceId><interfaceType>%s</interfaceType>"
                         "<privateIpAddress>%s</privateIpAddress><attachment><instanceId>%s</instanceId>"
                         "<deviceIndex>%d</deviceIndex><networkCardIndex>%d</networkCardIndex><status>attached</status>"
                         "</attachment></item>" % (e["id"], e["type"], ip, i["id"], e["device"], e["card"]))
    return ok(op, "<networkInterfaceSet>%s</networkInterfaceSet>" % "".join(items))


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
                    for iid, reason in script.pop("end", {}).items():
                        i = SWEEP.instances[iid]
                        i.update(state="shutting-down", seen_ending=False, reason=reason, ended_at=time.time())
                    for iid in script.pop("stop", []):
                        SWEEP.instances[iid].update(state="stopping", reason="Client.UserInitiatedShutdown")
                    SWEEP.script.update(script)
                out = {"instances": [instance_view(i) for i in SWEEP.instances.values()],
                       "addresses": [{"allocation_id": k, **a} for k, a in SWEEP.addresses.items()],
                       "security_groups": [{"id": k, "name": g["name"], "tags": g["tags"]} for k, g in SWEEP.sgs.items()],
                       "placement_groups": [{"name": n, **g} for n, g in SWEEP.groups.items()],
                       "calls": dict(SWEEP.calls), "launches": SWEEP.launches, "refused": SWEEP.refused}
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
        akid = (self.headers.get("Authorization") or "").partition("Credential=")[2].partition("/")[0]
        if op in SWEEP.script["hold_by"].get(akid, ()):
            with SWEEP.lock:
                SWEEP.calls["held " + op] = SWEEP.calls.get("held " + op, 0) + 1
            while op in SWEEP.script["hold_by"].get(akid, ()):
                time.sleep(0.05)
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
            elif op in OPS - {"DescribeVpcs", "DescribeSubnets", "DescribeSecurityGroups", "DescribeImages"}:
                status, xml = efa_network(op, params)
            else:
                status, xml = network(op, region, params)
        # a held launch exists already; its answer waits outside the lock, so the fake goes on serving
        while op == "RunInstances" and status == 200 and params.get("InstanceType") in SWEEP.script["hold"]:
            time.sleep(0.05)
        return self.send(status, xml, "text/xml;charset=UTF-8")


if __name__ == "__main__":
    aws_fake_server.Handler = SweepHandler   # main() builds its server from this name
    aws_fake_server.main()
