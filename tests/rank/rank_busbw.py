#!/usr/bin/env python3
"""rank and the network between nodes: BUSBW (busbw_gbps), the bus bandwidth measure recorded
(communication.allreduce), and NETWORK (topology.network), for the rows where they say something:
- a 2-node configuration with two runs: the median of the runs' busbw, each taken at the largest
  size a 25 MiB DDP bucket holds (recomputed here from the entries);
- a run whose sizes are all above 25 MiB: the smallest size's busbw;
- a 1-node row, and a 4-node row extrapolated from a 1-node run (measure --count): null;
- a malformed allreduce (a string, a negative figure): null, and the result still ranked;
- the table shows it with --wide (or --columns), as GB/s; JSON and CSV carry it;
- a 2-node row of an EFA-capable type (p4d.24xlarge, AWS's EFA user guide) measured over TCP
  sockets is marked '#' (socket_on_efa, with a legend line); the same over EFA, and sockets on a
  type without EFA (g4dn.xlarge), are not; network says the transport ("socket" if any run on all
  nodes used sockets), null on one node.
Usage: rank_busbw.py INSTBENCH"""
import csv
import io
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures  # noqa: E402

BIN = sys.argv[1]
MIB = 1 << 20


def with_allreduce(doc, entries):
    """entries: [(bytes, time_s)]; the figures as measure writes them (nccl-tests' definitions)."""
    n = doc["topology"]["world_size"]
    doc["communication"] = {"allreduce": [
        {"bytes": b, "time_s": t, "algbw_gbps": b / t / 1e9, "busbw_gbps": b / t / 1e9 * 2 * (n - 1) / n}
        for b, t in entries]}
    return doc


def bucket_busbw(doc):
    ar = doc["communication"]["allreduce"]
    n = doc["topology"]["world_size"]
    inside = [e for e in ar if e["bytes"] <= 25 * MIB]
    e = max(inside, key=lambda e: e["bytes"]) if inside else min(ar, key=lambda e: e["bytes"])
    return e["bytes"] / e["time_s"] / 1e9 * 2 * (n - 1) / n


R = fx.result
runs_2n = [with_allreduce(R("g5.xlarge", "us-east-1", 2, 1, "NVIDIA A10G", 400.0, host="a"),
                          [(1 * MIB, 0.0004), (16 * MIB, 0.004), (25 * MIB, 0.006), (344 * MIB, 0.09)]),
           with_allreduce(R("g5.xlarge", "us-east-1", 2, 1, "NVIDIA A10G", 390.0, host="b"),
                          [(1 * MIB, 0.0005), (25 * MIB, 0.008), (344 * MIB, 0.1)])]
big_only = with_allreduce(R("g5.12xlarge", "us-east-1", 2, 4, "NVIDIA A10G", 1500.0),
                          [(100 * MIB, 0.02), (344 * MIB, 0.06)])
one_node = with_allreduce(R("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 150.0), [(1 * MIB, 0.0001)])
extrap = with_allreduce(R("g4dn.xlarge", "us-east-1", 1, 1, "NVIDIA T4", 90.0, count=4), [(1 * MIB, 0.0001)])
bad = R("g6.2xlarge", "us-east-1", 2, 1, "NVIDIA L4", 280.0)
bad["communication"] = {"allreduce": [{"bytes": 1 * MIB, "time_s": 0.001, "algbw_gbps": 1.0, "busbw_gbps": -3}]}
bad2 = R("g6.2xlarge", "us-east-1", 2, 1, "NVIDIA L4", 290.0, host="c")
bad2["communication"] = {"allreduce": "fast"}



def with_network(doc, transport):
    doc["topology"]["network"] = {"transport": transport, "nccl_net": {"socket": "Socket", "efa": "AWS Libfabric"}.get(transport)}
    return doc


net_runs = [with_network(R("p4d.24xlarge", "us-east-1", 2, 8, "NVIDIA A100-SXM4-40GB", 5000.0, host="p1"), "socket"),
            with_network(R("p4d.24xlarge", "us-east-1", 2, 8, "NVIDIA A100-SXM4-40GB", 5100.0, host="p2"), "efa"),
            with_network(R("p5.48xlarge", "us-east-1", 2, 8, "NVIDIA H100 80GB HBM3", 9000.0), "efa"),
            with_network(R("g4dn.xlarge", "us-east-1", 2, 1, "NVIDIA T4", 170.0, host="t"), "socket")]
PRICES = fx.prices_doc([fx.price_record(t, "us-east-1", 1.0 + i, None)
                        for i, t in enumerate(["g5.xlarge", "g5.12xlarge", "g6.xlarge", "g4dn.xlarge", "g6.2xlarge",
                                               "p4d.24xlarge", "p5.48xlarge"])])
want_net = {("p4d.24xlarge", 2): ("socket", True), ("p5.48xlarge", 2): ("efa", False),
            ("g4dn.xlarge", 2): ("socket", False), ("g6.xlarge", 1): (None, False), ("g5.xlarge", 2): (None, False)}
want = {("g5.xlarge", 2): statistics.median([bucket_busbw(d) for d in runs_2n]),
        ("g5.12xlarge", 2): bucket_busbw(big_only), ("g6.xlarge", 1): None, ("g4dn.xlarge", 4): None,
        ("g6.2xlarge", 2): None, ("p4d.24xlarge", 2): None, ("p5.48xlarge", 2): None, ("g4dn.xlarge", 2): None}

with tempfile.TemporaryDirectory() as d:
    res = os.path.join(d, "results")
    for i, doc in enumerate(runs_2n + [big_only, one_node, extrap, bad, bad2] + net_runs):
        fx.write_json(os.path.join(res, "r%d.json" % i), doc)
    prices = os.path.join(d, "prices.json")
    fx.write_json(prices, PRICES)
    base = [res, "--source", prices, "--market", "on-demand"]

    rc, out, err = fx.run(BIN, base + ["--format", "json"])
    if check(rc == 0, "json: exit %d: %s" % (rc, err[-400:])):
        rows = {(r["instance_type"], r["nodes"]): r for r in json.loads(out)["rows"]}
        check(set(rows) == set(want), "rows %s" % sorted(rows))
        for key, w in want.items():
            got = rows.get(key, {}).get("busbw_gbps", "missing")
            if w is None:
                check(got is None, "%s: busbw %r, want null" % (key, got))
            else:
                check(isinstance(got, float) and abs(got - w) <= 1e-9 * w, "%s: busbw %r, want %r" % (key, got, w))

        for key, (net, marked) in want_net.items():
            got = rows.get(key, {})
            check(got.get("network") == net and got.get("socket_on_efa") is marked,
                  "%s: network %r socket_on_efa %r, want %r %r" % (key, got.get("network"), got.get("socket_on_efa"),
                                                                   net, marked))

    rc, out, err = fx.run(BIN, base + ["--format", "table", "--columns", "configuration,network"])
    if check(rc == 0, "table (network): exit %d" % rc):
        marked = [line for line in out.splitlines() if "#" in line.split("NETWORK")[0] and " x " in line]
        check(len(marked) == 1 and "2 x p4d.24xlarge" in marked[0], "marked rows: %s" % marked)
        check("# sockets on an EFA type" in out, "no legend for #: %s" % out[-600:])

    rc, out, err = fx.run(BIN, base + ["--format", "csv"])
    if check(rc == 0, "csv: exit %d" % rc):
        rows = {(r["instance_type"], int(r["nodes"])): r for r in csv.DictReader(io.StringIO(out))}
        w = want[("g5.xlarge", 2)]
        check(abs(float(rows[("g5.xlarge", 2)]["busbw_gbps"]) - w) <= 1e-9 * w, "csv busbw %r" % rows[("g5.xlarge", 2)])
        check(rows[("g6.xlarge", 1)]["busbw_gbps"] == "", "csv: 1-node busbw %r" % rows[("g6.xlarge", 1)]["busbw_gbps"])

    rc, out, err = fx.run(BIN, base + ["--format", "table", "--columns", "configuration,busbw_gbps"])
    if check(rc == 0, "table: exit %d" % rc):
        check("BUSBW" in out and ("%.1f GB/s" % want[("g5.xlarge", 2)]) in out, "table: %s" % out)

print("rank_busbw: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
