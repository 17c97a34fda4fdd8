"""The rank JSON validates against schemas/rank-v2.json in every mode (with and without a target,
unpriced rows, Pareto, spot modes), and the result fixtures the rank tests build validate against
schemas/result-v1.json (so the tests feed rank what `measure` really writes).
Usage: rank_schema.py INSTBENCH RANK_SCHEMA RESULT_SCHEMA"""
import json
import os
import sys
import tempfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
# this area's helpers, then tests/lib (testlib) and tests/fakes
sys.path[:0] = [HERE] + [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
import rank_fixtures as fx  # noqa: E402

BIN, RANK_SCHEMA, RESULT_SCHEMA = sys.argv[1:4]
rank_schema = json.load(open(RANK_SCHEMA))
result_schema = json.load(open(RESULT_SCHEMA))
failures = []

results = [fx.result("g5.xlarge", "us-east-1", 4, 1, "NVIDIA A10G", 1250.0),
           fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 1250.0, count=4),
           fx.result("ml.g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 320.0),
           fx.result("g5.12xlarge", "us-east-1", 1, 4, "NVIDIA A10G", 1300.0),
           fx.result("g6.xlarge", "us-east-1", 1, 1, "NVIDIA L4", 200.0),
           fx.result(None, None, 1, 0, None, 3.0, backend="cpu"),
           fx.result("g5.xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 30.0, fingerprint="0" * 64)]
prices = fx.prices_doc([
    fx.price_record("g5.xlarge", "us-east-1", 1.006, {"us-east-1a": 0.45, "us-east-1b": 0.41}, bucket=1, placement=7),
    fx.price_record("ml.g5.xlarge", "us-east-1", 1.41, None),
    fx.price_record("g5.12xlarge", "us-east-1", 5.672, None),
    # one price in us-west-2, so that `--region us-west-2` has a ranked row beside its unpriced ones
    # (nothing priced at all is exit 1, checked below)
    fx.price_record("g6.xlarge", "us-west-2", 0.805, None)])
for r in results:
    if (r["instance"]["type"] or "").startswith("ml."):
        continue   # result-v1 does not (yet) admit SageMaker names; rank prices them on-demand
    try:
        jsonschema.validate(r, result_schema)
    except jsonschema.ValidationError as e:
        failures.append(f"fixture does not match result-v1: {e.message}")

with tempfile.TemporaryDirectory() as d:
    for i, r in enumerate(results):
        fx.write_json(os.path.join(d, "res", f"{i}.json"), r)
    fx.write_json(os.path.join(d, "p.json"), prices)
    base = [os.path.join(d, "res"), "--source", os.path.join(d, "p.json"), "--format", "json"]
    for extra in ([], ["--samples", "1e7"], ["--epochs", "3", "--dataset-size", "1000"], ["--pareto"],
                  ["--spot-price", "median"], ["--az", "us-east-1a", "--market", "spot"], ["--region", "us-west-2"],
                  ["--max-hourly", "0.001"], ["--workload", "000"], ["--samples", "1e6", "--budget", "1", "--sort", "cost"]):
        rc, out, err = fx.run(BIN, base + extra)
        if rc != 0:
            failures.append(f"{extra}: exit {rc}: {err}")
            continue
        doc = json.loads(out)
        try:
            jsonschema.validate(doc, rank_schema)
        except jsonschema.ValidationError as e:
            failures.append(f"{extra}: output does not match rank-v2 at {list(e.absolute_path)}: {e.message}")

    # Nothing priced (no price in eu-west-1): exit 1 with one line saying how to get prices, and
    # the document still valid.
    rc, out, err = fx.run(BIN, base + ["--region", "eu-west-1"])
    if rc != 1 or "--source" not in err.strip().splitlines()[-1]:
        failures.append(f"nothing priced: exit {rc} (want 1), last line {err.strip().splitlines()[-1:]}")
    else:
        try:
            jsonschema.validate(json.loads(out), rank_schema)
        except (ValueError, jsonschema.ValidationError) as e:
            failures.append(f"nothing priced: output does not match rank-v2: {e}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("rank json schema: all checks passed")
