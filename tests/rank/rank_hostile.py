"""`instbench rank` on malformed and hostile inputs: every bad file or line is skipped with a
one-line reason naming it, the good results are still ranked, nothing crashes (a signal fails the
test; run it under the ASan build to catch memory errors), and bad price files are refused with a
message.  With --big: ranks 10,000 result files instead.  Usage: rank_hostile.py INSTBENCH [--big]"""
import json
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN = sys.argv[1]
BIG = "--big" in sys.argv[2:]
from testlib import check, failures


GOOD = fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 330.0)
PRICES = fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45, "us-east-1b": 0.41},
                                        bucket=1, placement=7)])


def mutated(path, value):
    """GOOD with the field at PATH (list of keys) set to VALUE, or deleted when VALUE is DELETE."""
    doc = json.loads(json.dumps(GOOD))
    node = doc
    for k in path[:-1]:
        node = node[k]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return json.dumps(doc)


DELETE = object()
good_text = json.dumps(GOOD)
# Other runs of the same configuration (a copy of GOOD would be the same run, counted once).
GOOD2 = dict(GOOD, timestamp="2026-11-21T11:00:00Z")
GOOD3 = dict(GOOD, timestamp="2026-11-21T12:00:00Z")
good2_text, good3_text = json.dumps(GOOD2), json.dumps(GOOD3)

# name -> (bytes, a word the reason must contain)
BAD = {
    "truncated.json": (good_text[: len(good_text) // 2].encode(), "invalid JSON"),
    "empty.json": (b"", "empty"),
    "garbage.json": (bytes(random.Random(1).randrange(256) for _ in range(4096)), ""),
    "nul.json": (b'{"schema": "instbench.result/v1"\x00}', "binary"),
    "nan.json": (good_text.replace('"samples_per_second": 330.0', '"samples_per_second": NaN').encode(),
                 "invalid JSON"),
    "huge.json": (good_text.replace('"samples_per_second": 330.0', '"samples_per_second": 1e999').encode(),
                  "finite"),
    "implausible.json": (mutated(["measurement", "samples_per_second"], 1e300).encode(), "implausibly"),
    "negative.json": (mutated(["measurement", "samples_per_second"], -5.0).encode(), "not positive"),
    "zero.json": (mutated(["measurement", "samples_per_second"], 0).encode(), "not positive"),
    "denormal.json": (mutated(["measurement", "samples_per_second"], 5e-324).encode(), "implausibly small"),
    "string_sps.json": (mutated(["measurement", "samples_per_second"], "fast").encode(), "not a number"),
    "no_sps.json": (mutated(["measurement", "samples_per_second"], DELETE).encode(), "samples_per_second"),
    "no_measurement.json": (mutated(["measurement"], DELETE).encode(), "measurement"),
    "no_workload.json": (mutated(["workload"], DELETE).encode(), "workload"),
    "no_fingerprint.json": (mutated(["workload", "fingerprint"], DELETE).encode(), "fingerprint"),
    "no_topology.json": (mutated(["topology"], DELETE).encode(), "topology"),
    "zero_nodes.json": (mutated(["topology", "nodes"], 0).encode(), "topology.nodes"),
    "frac_nodes.json": (mutated(["topology", "nodes"], 1.5).encode(), "topology.nodes"),
    "huge_nodes.json": (mutated(["topology", "nodes"], 1e30).encode(), "topology.nodes"),
    "no_instance.json": (mutated(["instance"], DELETE).encode(), "instance"),
    "bad_type.json": (mutated(["instance", "type"], "g5.x<script>").encode(), "instance.type"),
    "long_type.json": (mutated(["instance", "type"], "g" * 5000).encode(), "too long"),
    "type_number.json": (mutated(["instance", "type"], 5).encode(), "instance.type"),
    "no_schema.json": (json.dumps({"hello": "world"}).encode(), "schema"),
    "wrong_schema.json": (mutated(["schema"], "someone.else/v3").encode(), "not an instbench result"),
    "future_schema.json": (mutated(["schema"], "instbench.result/v9").encode(), "unsupported"),
    "prices_as_result.json": (json.dumps(PRICES).encode(), "not an instbench result"),
    "array_top.json": (b"[1, 2]", "not a JSON object"),
    "string_top.json": (b'"just a string"', "not a JSON object"),
    "deep.json": (b"[" * 100000 + b"]" * 100000, ""),
    "trailing.json": (good_text.encode() + b" {}", "trailing"),
    "control_chars.json": (mutated(["schema"], "\x1b[31mred\x1b[0m").encode(), "not an instbench result"),
    # \u0000 cuts cJSON's string where Python keeps the rest: two readers would disagree (issue 33)
    "nul_in_type.json": (mutated(["instance", "type"], "g5.xlarge\u0000<script>").encode(), "\\u0000"),
    "nul_in_schema.json": (mutated(["schema"], "instbench.result/v1\u0000junk").encode(), "\\u0000"),
}


def hostile(d):
    res = os.path.join(d, "results")
    os.makedirs(res)
    for name, (data, _) in BAD.items():
        with open(os.path.join(res, name), "wb") as f:
            f.write(data)
    fx.write_json(os.path.join(res, "good.json"), GOOD)
    # Files a directory walk must ignore silently: not *.json / *.jsonl, hidden.
    with open(os.path.join(res, "README.txt"), "w") as f:
        f.write("not a result")
    with open(os.path.join(res, ".hidden.json"), "w") as f:
        f.write("{")
    # A symlink loop must not hang the walk.
    os.symlink(res, os.path.join(res, "loop"))
    # JSON lines: two good lines (two more runs), a bad one, a blank one.
    with open(os.path.join(res, "more.jsonl"), "w") as f:
        f.write(good2_text + "\n\n{broken\n" + good3_text + "\n")
    fx.write_json(os.path.join(d, "prices.json"), PRICES)

    rc, out, err = fx.run(BIN, [res, "--source", os.path.join(d, "prices.json"), "--format", "json"])
    check(rc == 0, f"mixed dir: exit {rc}: {err[-2000:]}")
    skipped = [l for l in err.splitlines() if l.startswith("warning: skipped ")]
    for name, (_, word) in BAD.items():
        lines = [l for l in skipped if f"/{name}: " in l or f"/{name}[" in l]
        # An array is read element by element: "[1, 2]" gives one line per element.
        want = 2 if name == "array_top.json" else 1
        check(len(lines) == want, f"{name}: expected {want} skip line(s), got {lines}")
        if lines and word:
            check(word in lines[0], f"{name}: reason {lines[0]!r} lacks {word!r}")
    check(any("more.jsonl:3: " in l and "invalid JSON" in l for l in skipped), "jsonl bad line not reported")
    check(not any("README.txt" in l or ".hidden" in l for l in err.splitlines()), "ignored files were reported")
    check(all("\x1b" not in l for l in err.splitlines()), "control characters echoed to the terminal")
    if rc == 0:
        doc = json.loads(out)
        check(doc["inputs"]["skipped"] >= len(BAD) + 1, f"skipped count {doc['inputs']['skipped']}")
        # good.json + 2 jsonl lines: one configuration of 3 runs (the loop is not walked twice).
        check(len(fx.ranked(doc)) == 2 and fx.ranked(doc)[0]["runs"] == 3, f"rows {fx.ranked(doc)}")
        check(f"{doc['inputs']['skipped']} skipped" in err, "skip count not summarised on stderr")
    check(sum("loop" in l for l in skipped) == 1, "symlink loop not reported exactly once")

    # Nothing usable: runtime error with a message, not a crash.
    rc, out, err = fx.run(BIN, [os.path.join(res, "truncated.json"), "--source", os.path.join(d, "prices.json")])
    check(rc == 1 and "no usable results" in err, f"all-bad input: exit {rc}: {err}")
    rc, out, err = fx.run(BIN, [os.path.join(d, "missing.json"), "--source", os.path.join(d, "prices.json")])
    check(rc == 1 and "missing.json" in err, f"missing file: exit {rc}: {err}")
    if os.path.exists("/dev/zero"):   # an endless named input is cut off at its first NUL bytes
        rc, out, err = fx.run(BIN, ["/dev/zero", "--source", os.path.join(d, "prices.json")])
        check(rc == 1 and "/dev/zero: binary data" in err, f"/dev/zero: exit {rc}: {err}")
    rc, out, err = fx.run(BIN, [os.path.join(d, "nomatch*.json"), "--source", os.path.join(d, "prices.json")])
    check(rc == 1 and "no files match" in err, f"unmatched glob: exit {rc}: {err}")

    # Glob expanded by instbench itself, and stdin (one document, then JSON lines).
    rc, out, err = fx.run(BIN, [os.path.join(res, "goo*.json"), "--source", os.path.join(d, "prices.json"),
                                "--format", "json"])
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 1, f"glob: exit {rc}: {err}")
    rc, out, err = fx.run(BIN, ["-", "--source", os.path.join(d, "prices.json"), "--format", "json"],
                          stdin=json.dumps(GOOD, indent=2).encode())
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 1, f"stdin document: exit {rc}: {err}")
    rc, out, err = fx.run(BIN, ["-", "--source", os.path.join(d, "prices.json"), "--format", "json"],
                          stdin=(good_text + "\n" + good2_text + "\nnope\n").encode())
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 2 and "<stdin>:3" in err, f"stdin lines: {rc}: {err}")
    # An array of results in one file.
    fx.write_json(os.path.join(d, "array.json"), [GOOD, {"schema": "x"}, GOOD2])
    rc, out, err = fx.run(BIN, [os.path.join(d, "array.json"), "--source", os.path.join(d, "prices.json"),
                                "--format", "json"])
    check(rc == 0 and json.loads(out)["inputs"]["results"] == 2 and "array.json[1]" in err, f"array: {rc}: {err}")

    # Hostile price files: refused with a message (exit 1), never a crash.
    good = os.path.join(res, "good.json")
    for name, doc in {
        "zero": fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 0.0, None)]),
        "negative": fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", -1.0, {"us-east-1a": -0.2})]),
        "huge": fx.prices_doc([fx.price_record("g5.xlarge", "us-east-1", 1e308, None)]),
        "wrong schema": {"schema": "instbench.result/v1"},
    }.items():
        p = os.path.join(d, "bad-prices.json")
        fx.write_json(p, doc)
        rc, out, err = fx.run(BIN, [good, "--source", p])
        check(rc == 1 and "bad-prices.json" in err, f"prices {name}: exit {rc}: {err}")
    for name, data in {"truncated": json.dumps(PRICES)[:50].encode(), "garbage": os.urandom(2000)}.items():
        p = os.path.join(d, "bad-prices.json")
        with open(p, "wb") as f:
            f.write(data)
        rc, out, err = fx.run(BIN, [good, "--source", p])
        check(rc == 1 and "instbench rank:" in err, f"prices {name}: exit {rc}: {err}")
    # A price file that is no file, or too large: refused at once, naming it (and the 256 MiB cap),
    # never read to its end (/dev/zero made the ASan build abort, out of memory, and the release
    # build grow past 12 GB).
    fifo, sparse = os.path.join(d, "prices-fifo"), os.path.join(d, "prices-big.json")
    os.mkfifo(fifo)
    with open(sparse, "wb") as f:
        f.truncate((256 << 20) + 1)
    for p, word in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"), (d, "is a directory"),
                    (sparse, "over 256 MiB")):
        rc, out, err = fx.run(BIN, [good, "--source", p])
        check(rc == 1 and p in err and word in err and not out, f"--source {p}: exit {rc}: {err[-400:]}")



def many(d):
    fx.write_json(os.path.join(d, "prices.json"), PRICES)
    # 10,000 result files (a few bad): all read, the bad ones named, one configuration per type.
    big = os.path.join(d, "big")
    os.makedirs(big)
    types = [("g5.xlarge", 1), ("g5.12xlarge", 4), ("p4d.24xlarge", 8)]
    for i in range(10000):
        t, acc = types[i % 3]
        with open(os.path.join(big, f"r{i:05d}.json"), "w") as f:
            if i % 1000 == 999:
                f.write("{ not json")
            else:
                # One run each: its own timestamp (runs read twice count once).
                ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1795000000 + 60 * i))
                json.dump(fx.result(t, "us-east-1", 1, acc, "NVIDIA A10G", 100.0 * acc + i % 7, timestamp=ts), f)
    rc, out, err = fx.run(BIN, [big, "--source", os.path.join(d, "prices.json"), "--format", "json"])
    check(rc == 0, f"10k files: exit {rc}: {err[-500:]}")
    if rc == 0:
        doc = json.loads(out)
        check(doc["inputs"]["results"] == 9990 and doc["inputs"]["skipped"] == 10, f"10k: {doc['inputs']}")
        runs = sum(1 for i in range(10000) if i % 3 == 0 and i % 1000 != 999)
        check(len(fx.ranked(doc)) == 2 and fx.ranked(doc)[0]["runs"] == runs, f"10k rows {fx.ranked(doc)[:1]}")
        check(len(fx.unpriced(doc)) == 4, f"10k unpriced {fx.unpriced(doc)}")


with tempfile.TemporaryDirectory() as d:
    many(d) if BIG else hostile(d)

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("rank hostile inputs: all checks passed")
