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
  IAM Identity Center  GET /federation/credentials?account_id=A&role_name=R (GetRoleCredentials:
           x-amz-sso_bearer_token must be --sso-access-token, else 401 UnauthorizedException;
           each request in stats "sso_requests")
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
(placement scores still name zone IDs, as AWS's do).  The account's names (aws_fake_ec2.py's
zone_names(), for tests to recompute): a region's plain zone IDs (two words, use1-az4), sorted, are named REGION + a
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

The fake in files (each under 800 lines): this one (the command line, the server, and every name
tests import from aws_fake_server), aws_fake_http.py (the transport, the control and stats API,
the routing of a service request), aws_fake_sigv4.py (the signature check), aws_fake_faults.py
(the fault kinds), aws_fake_state.py (credentials, faults to come, stats, price records),
aws_fake_pricing.py (Pricing, Savings Plans), aws_fake_ec2.py (EC2, SSM), aws_fake_metadata.py
(IMDS, container credentials) and fake_s3.py (S3).
"""
import argparse
import os
import sys
import threading
import time
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Every name the fake had in one file stays importable from here (tests use price_doc, Handler,
# EFA_TYPES, ALL_IF, instance_types_xml, ec2_error); main() builds its server from the name
# Handler of this module, which tests/sweep/fake_ec2.py replaces with its own.
from aws_fake_ec2 import *  # noqa: E402,F401,F403
from aws_fake_faults import *  # noqa: E402,F401,F403
from aws_fake_http import *  # noqa: E402,F401,F403
from aws_fake_http import Handler  # noqa: E402
from aws_fake_metadata import *  # noqa: E402,F401,F403
from aws_fake_pricing import *  # noqa: E402,F401,F403
from aws_fake_pricing import products  # noqa: E402
from aws_fake_sigv4 import *  # noqa: E402,F401,F403
from aws_fake_state import *  # noqa: E402,F401,F403
from aws_fake_state import State  # noqa: E402


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
    ap.add_argument("--sso-access-token")
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
