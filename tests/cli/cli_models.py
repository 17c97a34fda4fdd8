#!/usr/bin/env python3
"""`instbench models` behaves like the other commands (issue 21): --format table|json|csv, table on a
terminal and JSON otherwise (as prices and rank), a JSON document with "schema":
"instbench.models/v1" and the presets in a named array, CSV with a header row and plain numbers
(read by pandas), and the same for --layout (instbench.model-layout/v1).  The expectations are
timm's published ViT dimensions and parameter counts and a FLOP formula written out here, read
through jq and pandas, never instbench's other formats; the JSON validates against
schemas/models-v1.json and schemas/model-layout-v1.json.  Usage: cli_models.py INSTBENCH SCHEMAS_DIR"""
import io
import json
import os
import subprocess
import sys

import jsonschema
import pandas

BIN, SCHEMAS = sys.argv[1], sys.argv[2]
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import check, failures, on_pty  # noqa: E402

# timm's ViT presets: (embed_dim, depth, num_heads), patch 16, 224 pixels, MLP ratio 4, 1000
# classes, and the parameter counts timm reports (sum of numel over model.parameters()).
PRESETS = {"vit_tiny_patch16_224": (192, 12, 3, 5717416), "vit_small_patch16_224": (384, 12, 6, 22050664),
           "vit_base_patch16_224": (768, 12, 12, 86567656), "vit_large_patch16_224": (1024, 24, 16, 304326632)}
NUMERIC = ["img_size", "patch_size", "in_chans", "embed_dim", "depth", "num_heads", "mlp_ratio", "mlp_hidden",
           "num_classes", "seq_len", "params", "forward_flops_per_sample", "train_flops_per_sample"]


def expected(dim, depth, heads, params, img=224, patch=16, ratio=4.0, classes=1000, chans=3):
    n = (img // patch) ** 2
    t, hidden = n + 1, int(dim * ratio)
    fwd = 2 * n * chans * patch * patch * dim + 2 * dim * classes + depth * (
        2 * t * dim * 3 * dim + 2 * t * dim * dim + 4 * t * dim * hidden + 4 * t * t * dim)
    return dict(img_size=img, patch_size=patch, in_chans=chans, embed_dim=dim, depth=depth, num_heads=heads,
                mlp_ratio=ratio, mlp_hidden=hidden, num_classes=classes, seq_len=t, params=params,
                forward_flops_per_sample=fwd, train_flops_per_sample=3 * fwd)


def run(*args, stdin=None):
    return subprocess.run([BIN, "models", *args], capture_output=True, text=True, timeout=60, input=stdin)


def jq(filter_, text):
    p = subprocess.run(["jq", "-c", filter_], input=text, capture_output=True, text=True)
    check(p.returncode == 0, f"jq {filter_}: {p.stderr.strip()}")
    return [json.loads(ln) for ln in p.stdout.splitlines()]


# Piped, the default is JSON (prices and rank: table on a terminal, JSON otherwise)
piped = run()
check(piped.returncode == 0 and piped.stdout == run("--format", "json").stdout,
      f"models piped is not its JSON: exit {piped.returncode}, {piped.stdout[:80]!r}")
check(jq(".schema", piped.stdout) == ["instbench.models/v1"], "no schema instbench.models/v1")
names = jq(".models[] | .name", piped.stdout)
check(names == list(PRESETS), f"presets by jq: {names}")
for rec in jq(".models[]", piped.stdout):
    want = expected(*PRESETS[rec["name"]])
    got = {k: rec.get(k) for k in want}
    check(got == want and rec["preset"] == rec["name"], f"{rec['name']}: JSON {got}, timm/formula {want}")

# On a terminal: the table (and --format json there is still JSON)
rc, text = on_pty([BIN, "models"], dict(os.environ, COLUMNS="200"), cols=200)
text = text.decode()
check(rc == 0 and "vit_base_patch16_224" in text and "86,567,656" in text and not text.lstrip().startswith("{"),
      f"models on a terminal: exit {rc}, not a table: {text[:120]!r}")
rc, text = on_pty([BIN, "models", "--format", "json"], dict(os.environ), cols=200)
check(rc == 0 and json.loads(text.decode().replace("\r\n", "\n"))["schema"] == "instbench.models/v1",
      "models --format json on a terminal is not JSON")



def valid(doc, schema_file, what):
    try:
        jsonschema.validate(doc, json.load(open(os.path.join(SCHEMAS, schema_file))))
    except jsonschema.ValidationError as e:
        check(False, f"{what}: not valid against {schema_file}: {e.message}")


valid(json.loads(piped.stdout), "models-v1.json", "models --format json")
valid(json.loads(run("--format", "json", "--model", "vit_tiny_patch16_224", "--mlp-ratio", "2.5").stdout),
      "models-v1.json", "a custom configuration")

# CSV: a header row, plain numbers pandas reads as numbers, the same figures as JSON and timm
csv = run("--format", "csv")
check(csv.returncode == 0, f"--format csv: exit {csv.returncode}: {csv.stderr}")
df = pandas.read_csv(io.StringIO(csv.stdout))
check(list(df.columns) == ["name", "preset"] + NUMERIC, f"CSV header {list(df.columns)}")
for col in NUMERIC:
    check(pandas.api.types.is_numeric_dtype(df[col]), f"CSV column {col} is not numeric ({df[col].dtype})")
check(list(df["name"]) == list(PRESETS), f"CSV rows {list(df['name'])}")
for _, row in df.iterrows():
    want = expected(*PRESETS[row["name"]])
    for k, v in want.items():
        check(row[k] == v, f"CSV {row['name']} {k}: {row[k]}, want {v}")
check("e+" not in csv.stdout and "E+" not in csv.stdout, "CSV numbers in exponent form")
# an overridden configuration: its fractional MLP ratio round-trips, hidden = int(D x ratio)
one = run("--format", "csv", "--model", "vit_small_patch16_224", "--mlp-ratio", "2.7", "--depth", "3")
row = pandas.read_csv(io.StringIO(one.stdout)).iloc[0]
want = expected(384, 3, 6, None, ratio=2.7)
check(one.returncode == 0 and row["name"] == "custom" and row["mlp_ratio"] == 2.7 and
      one.stdout.splitlines()[1].split(",")[8] == "2.7" and
      all(row[k] == v for k, v in want.items() if k != "params"), f"custom CSV row: {one.stdout!r}")
js = json.loads(run("--format", "json", "--model", "vit_small_patch16_224", "--mlp-ratio", "2.7", "--depth", "3").stdout)
check([m["params"] for m in js["models"]] == [row["params"]], "custom: CSV and JSON parameter counts differ")

# --layout: instbench.model-layout/v1 and CSV; contiguous offsets, numel = product of the shape,
# the sum equal to timm's parameter count
lay = run("--layout", "--model", "vit_tiny_patch16_224")
check(lay.returncode == 0 and jq(".schema", lay.stdout) == ["instbench.model-layout/v1"], "layout: no schema")
doc = json.loads(lay.stdout)
off = 0
for t in doc["tensors"]:
    n = 1
    for d in t["shape"]:
        n *= d
    check(t["offset"] == off and t["numel"] == n, f"layout {t['name']}: offset {t['offset']} numel {t['numel']}")
    off += n
valid(doc, "model-layout-v1.json", "models --layout --format json")
check(off == doc["params"] == PRESETS["vit_tiny_patch16_224"][3] and doc["model"]["name"] == "vit_tiny_patch16_224",
      f"layout total {off}, params {doc['params']}")
check(jq("[.tensors[] | .name] | .[0:3]", lay.stdout) == [["cls_token", "pos_embed", "patch_embed.proj.weight"]],
      "layout: not timm's order")
lc = run("--layout", "--model", "vit_tiny_patch16_224", "--format", "csv")
ldf = pandas.read_csv(io.StringIO(lc.stdout))
check(list(ldf.columns) == ["name", "shape", "offset", "numel"] and
      list(ldf["name"]) == [t["name"] for t in doc["tensors"]] and
      list(ldf["offset"]) == [t["offset"] for t in doc["tensors"]] and
      list(ldf["numel"]) == [t["numel"] for t in doc["tensors"]] and
      [json.loads(s) for s in ldf["shape"]] == [t["shape"] for t in doc["tensors"]],
      f"layout CSV differs from its JSON: {lc.stdout[:200]!r}")

# --columns names the JSON's fields in every format (one set of keys): the same key picks the same
# field from the table, the CSV and the JSON, in the order asked; the table's short keys of before
# are still read; a field the table lacks is said for the table only
full = json.loads(run("--format", "json").stdout)["models"]
for cols in (["name", "params"], ["train_flops_per_sample", "name", "num_heads"]):
    p = run("--format", "csv", "--columns", ",".join(cols))
    df = pandas.read_csv(io.StringIO(p.stdout)) if p.returncode == 0 else None
    check(df is not None and list(df.columns) == cols and
          [list(r) for r in df.itertuples(index=False)] == [[m[c] for c in cols] for m in full],
          f"--columns {cols} csv: exit {p.returncode} {p.stdout[:120]!r} {p.stderr!r}")
    p = run("--format", "json", "--columns", ",".join(cols))
    got = json.loads(p.stdout)["models"] if p.returncode == 0 else None
    check(got == [{c: m[c] for c in cols} for m in full] and all(list(g) == cols for g in got or []),
          f"--columns {cols} json: exit {p.returncode} {p.stdout[:120]!r}")
p = run("--format", "table", "--columns", "name,params")
check(p.returncode == 0 and p.stdout.split()[:2] == ["MODEL", "PARAMS"], f"--columns table: {p.stdout[:80]!r}")
# the GFLOP note only under a table that shows GFLOP
check("GFLOP" not in p.stdout, f"--columns name,params: a note on columns not shown: {p.stdout[-120:]!r}")
p = run("--format", "table", "--columns", "name,train_flops_per_sample")
check(p.returncode == 0 and "(GFLOP per sample; training = 3 x forward)" in p.stdout, f"GFLOP note: {p.stdout!r}")
p = run("--format", "table", "--columns", "model,params")
check(p.returncode == 0 and p.stdout.split()[:2] == ["MODEL", "PARAMS"], f"--columns table alias: {p.stdout[:80]!r}")
p = run("--format", "csv", "--columns", "model,fwd_gflop")
check(p.returncode == 0 and p.stdout.splitlines()[0] == "name,forward_flops_per_sample", f"aliases in csv: {p.stdout[:80]!r}")
p = run("--format", "table", "--columns", "seq_len")
check(p.returncode == 2 and "field of --format json and csv, not a column of the table" in p.stderr, f"seq_len: {p.stderr!r}")
p = run("--format", "csv", "--columns", "bogus")
check(p.returncode == 2 and p.stdout == "" and "'bogus' is not a column (columns: name, preset" in p.stderr,
      f"bogus: {p.stderr!r}")
# a typo names the nearest key, as prices' and rank's --columns do
p = run("--format", "csv", "--columns", "name,parms")
check(p.returncode == 2 and "'parms' is not a column; did you mean params? (columns: name," in p.stderr,
      f"parms: {p.stderr!r}")
p = run("--layout", "--format", "csv", "--columns", "tensor,numel")
check(p.returncode == 0 and p.stdout.splitlines()[0] == "name,numel", f"layout --columns: {p.stdout[:80]!r}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("cli_models: ok")
