#!/usr/bin/python3
"""A Pricing endpoint that answers GetProducts in one of several hostile ways (after an auditor's
script), for tests that need answers the fake AWS (tests/fakes/aws_fake_server.py) does not give.
Signatures are not checked (aws_fake_server.py checks them); EC2 calls get an empty spot history.

usage: hostile_pricing.py MODE   prints its port, then serves until POST /__shutdown (or 600 s).
POST /__mode/NAME switches the mode; GET /__count answers the GetProducts requests received.
Modes (each answer's documents are shaped by aws_fake_server.price_doc, AWS's own shape):
  ok        one g5.xlarge product in the region asked, $1.006/h
  dup       two products passing every filter: SKU A $1.006/h, then SKU B $9.5/h
  duprev    the same two, B listed first
  dupsame   two products (SKU A, SKU C) at the same $1.006/h
  none      no product at all
  zero      one product whose only hourly price is $0
  fresh     no product, and a fresh NextToken on every page (pagination that never ends)
  paged     three products as AWS pages them (MaxResults a page, NextToken the next offset): SKU A
            $1.006/h, SKU CB $31.464/h sold as a Capacity Block (marketoption CapacityBlock), SKU C
            $1.006/h
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fakes"))
import aws_fake_server as F  # noqa: E402

STATE = {"mode": sys.argv[1], "n": 0}
LOCK = threading.Lock()


def doc(price, sku, t="g5.xlarge", reg="us-east-1", market="OnDemand"):
    a = {"instanceType": t, "regionCode": reg, "location": reg, "operatingSystem": "Linux", "tenancy": "Shared",
         "preInstalledSw": "NA", "capacitystatus": "Used", "licenseModel": "No License required",
         "usagetype": "USE1-BoxUsage:%s" % t, "operation": "RunInstances", "marketoption": market}
    d = json.loads(F.price_doc("AmazonEC2", "Compute Instance", a, 1.006, sku))
    for term in d["terms"]["OnDemand"].values():
        for pd in term["priceDimensions"].values():
            pd["pricePerUnit"]["USD"] = price
    return json.dumps(d)


def page(docs, token=None):
    out = {"FormatVersion": "aws_v1", "PriceList": docs}
    if token:
        out["NextToken"] = token
    return json.dumps(out)


def paged(docs, req):
    """The page of DOCS that the request REQ asks for, as AWS pages them."""
    start, size = int(req.get("NextToken") or 0), int(req.get("MaxResults") or 100)
    return page(docs[start:start + size], str(start + size) if start + size < len(docs) else None)


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/x-amz-json-1.1"):
        b = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        if self.path == "/__count":
            return self.send(200, json.dumps({"GetProducts": STATE["n"]}), "application/json")
        self.do_POST()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/__mode/"):
            with LOCK:
                STATE["mode"], STATE["n"] = self.path[len("/__mode/"):], 0
            return self.send(200, "{}", "application/json")
        if self.path == "/__shutdown":
            self.send(200, "{}", "application/json")
            threading.Thread(target=self.server.shutdown, daemon=True).start()
            return
        if "GetProducts" not in self.headers.get("X-Amz-Target", ""):
            return self.send(200, '<DescribeSpotPriceHistoryResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
                             '<requestId>x</requestId><spotPriceHistorySet/><nextToken/>'
                             '</DescribeSpotPriceHistoryResponse>', "text/xml")
        with LOCK:
            STATE["n"] += 1
            n, m = STATE["n"], STATE["mode"]
        region, req = "us-east-1", json.loads(body or b"{}")
        for f in req.get("Filters", []):
            if f.get("Field") == "regionCode":
                region = f["Value"]
        answers = {
            "ok": lambda: page([doc("1.0060000000", "A", reg=region)]),
            "dup": lambda: page([doc("1.0060000000", "A", reg=region), doc("9.5000000000", "B", reg=region)]),
            "duprev": lambda: page([doc("9.5000000000", "B", reg=region), doc("1.0060000000", "A", reg=region)]),
            "dupsame": lambda: page([doc("1.0060000000", "A", reg=region), doc("1.0060000000", "C", reg=region)]),
            "none": lambda: page([]),
            "zero": lambda: page([doc("0.0000000000", "Z", reg=region)]),
            "fresh": lambda: page([], "t%d" % n),
            "paged": lambda: paged([doc("1.0060000000", "A", reg=region),
                                    doc("31.4640000000", "CB", reg=region, market="CapacityBlock"),
                                    doc("1.0060000000", "C", reg=region)], req),
        }
        if m not in answers:
            return self.send(500, "unknown mode")
        self.send(200, answers[m]())


s = ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
print(s.server_address[1], flush=True)
threading.Timer(600, lambda: os._exit(0)).start()
s.serve_forever()
os._exit(0)
