"""The fake AWS's HTTP side (aws_fake_server.py's docstring says what it serves): the transport, the
control and stats API (/__control, /__stats, /__placement, /__shutdown), and the routing of each
service request through the signature check and the faults to its service's answers."""
import gzip
import json
import socket
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler

import aws_fake_faults
import aws_fake_metadata
import aws_fake_sigv4
import fake_s3
from aws_fake_ec2 import (default_group_rules, default_network, describe_availability_zones,
                          describe_capacity_block_offerings, describe_capacity_reservations,
                          describe_spot_price_history, ec2_error, get_spot_placement_scores, instance_types_xml,
                          numbered, placement_groups, run_instances, ssm_get_parameter)
from aws_fake_pricing import describe_savings_plans_offering_rates, get_products


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
            return aws_fake_metadata.imds(self, method, path)
        if path.startswith("/v2/credentials"):
            return aws_fake_metadata.container(self)
        if path == "/federation/credentials":
            return aws_fake_metadata.sso_portal(self)
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
            return aws_fake_faults.stall(self)
        if fault == "hold":
            aws_fake_faults.hold(self)
        err = aws_fake_faults.error_for(fault, service)
        if err:
            return fail(*err)
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
        """Returns (region, None) or (None, (code, message)): aws_fake_sigv4.verify."""
        return aws_fake_sigv4.verify(self, method, body, service)
