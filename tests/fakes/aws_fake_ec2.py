"""The fake AWS's EC2 query API answers (aws_fake_server.py's docstring says what each serves):
spot history, zones, placement scores and groups, Capacity Blocks and Reservations, the default
network, instance types, RunInstances; and SSM's GetParameter (the AMI a launch reads)."""
import base64
import datetime
import hashlib
import json
import re
import time
import uuid

from aws_fake_state import iso, offset_of, token_for


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
