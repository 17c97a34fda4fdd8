#!/usr/bin/python3
"""End-to-end cases for `instbench verify` that must FAIL or be refused, made at test time from a
committed timm fixture, plus the JSON report of a passing run.

usage: verify_cases.py INSTBENCH FIXTURE CASE
CASE:
  json          the fixture passes; the JSON report names every parameter's gradient and passes
                (every JSON report, here and below, is validated against schemas/verify-v1.json)
  grad          one gradient entry in the reference changed: exactly that grad.* check fails, exit 1
  weight        one weight (a LayerNorm bias) changed: logits/gradients no longer match, exit 1
  losses        the last entry of `losses` changed by 5%: only that losses[i] check fails, exit 1
  missing       a parameter removed: exit 1 and the message names it
  shape         a parameter reshaped: exit 1 and the message names it
  extra         an unknown tensor added (a timm option instbench lacks): exit 1
  labels        a label outside [0, classes): exit 1
  truncated     the file cut short: exit 1, no crash
  usage         bad flags: exit 2; missing file: exit 1; cuda in a CPU-only build: exit 1 or a verdict;
                a reference that is not a regular file (/dev/zero, a FIFO, a directory) or is over the
                8 GiB cap (a sparse file) refused at once, exit 1, naming the file (and the cap)
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import jsonschema

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "data"))
from make_reference import write_safetensors  # noqa: E402  (the same independent writer)

SCHEMA = json.load(open(os.path.join(ROOT, "schemas", "verify-v1.json")))
jsonschema.Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def read_safetensors(path):
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = buf[8 + n:]
    tensors = []
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        b, en = e["data_offsets"]
        tensors.append([name, e["dtype"], tuple(e["shape"]), bytearray(data[b:en])])
    return tensors, meta


def f32_get(t, i):
    return struct.unpack_from("<f", t[3], 4 * i)[0]


def f32_set(t, i, v):
    struct.pack_into("<f", t[3], 4 * i, v)


def run(bin_, *args):
    p = subprocess.run([bin_, "verify", *args], capture_output=True, text=True, timeout=300)
    # Sanitizers exit 1 too, which would pass for an expected FAIL: look for their reports.
    if "AddressSanitizer" in p.stderr or "LeakSanitizer" in p.stderr or "runtime error:" in p.stderr:
        fail(f"sanitizer report from verify {args}", p.stdout, p.stderr)
    return p.returncode, p.stdout, p.stderr


def fail(msg, out="", err=""):
    sys.exit(f"FAIL: {msg}\n--- stdout\n{out}\n--- stderr\n{err}")


def verify_json(bin_, path):
    rc, out, err = run(bin_, "--reference", path, "--format", "json")
    try:
        rep = json.loads(out)
    except ValueError:
        fail(f"exit {rc} and no JSON report", out, err)
    # every report, passing or failing, is what schemas/verify-v1.json says
    errors = sorted(VALIDATOR.iter_errors(rep), key=lambda e: list(e.absolute_path))
    if errors:
        fail(f"the report is not valid against schemas/verify-v1.json: {list(errors[0].absolute_path)}: "
             f"{errors[0].message}", out, err)
    return rc, rep, out, err


def expect_only_failures(bin_, path, want_failed):
    rc, rep, out, err = verify_json(bin_, path)
    failed = sorted(c["name"] for c in rep["checks"] if not c["pass"])
    if rc != 1 or rep["pass"] or failed != sorted(want_failed):
        fail(f"expected exit 1 with exactly {want_failed} failing, got exit {rc}, failing {failed}", out, err)


def main():
    bin_, fixture, case = sys.argv[1:4]
    tensors, meta = read_safetensors(fixture)
    by_name = {t[0]: t for t in tensors}
    tmp = tempfile.mkdtemp(prefix="verify_cases_")
    path = os.path.join(tmp, "ref.safetensors")

    def save():
        write_safetensors(path, [tuple(t) for t in tensors], meta)

    if case == "json":
        rc, rep, out, err = verify_json(bin_, fixture)
        names = {c["name"] for c in rep["checks"]}
        params = [t[0] for t in tensors if t[0].startswith("grad.")]
        missing = [p for p in params if p not in names]
        steps = int(meta["steps"])
        if rc != 0 or not rep["pass"] or missing or "logits" not in names or len(rep["losses"]) != steps:
            fail(f"exit {rc}, pass {rep.get('pass')}, unchecked {missing}", out, err)
        for c in rep["checks"]:   # the verdict must follow from the numbers it reports
            ok = c["value"] >= c["limit"] if c["metric"] == "cosine" else c["value"] <= c["limit"]
            if ok != c["pass"]:
                fail(f"check {c['name']} says pass={c['pass']} for {c['metric']} {c['value']} vs {c['limit']}")
    elif case == "grad":
        t = by_name["grad.blocks.0.attn.proj.weight"]
        norm = sum(f32_get(t, i) ** 2 for i in range(len(t[3]) // 4)) ** 0.5
        f32_set(t, 3, f32_get(t, 3) + 0.5 * norm)   # relative L2 0.5, cosine ~0.9: fails fp32 and bf16
        save()
        expect_only_failures(bin_, path, ["grad.blocks.0.attn.proj.weight"])
    elif case == "losses":
        t = by_name["losses"]
        n = len(t[3]) // 4
        f32_set(t, n - 1, f32_get(t, n - 1) * 1.05)   # beyond both the fp32 and the bf16 tolerance
        save()
        expect_only_failures(bin_, path, [f"losses[{n - 1}]"])
    elif case == "weight":
        t = by_name["norm.bias"]
        for i in range(len(t[3]) // 4):
            f32_set(t, i, f32_get(t, i) + 0.5)
        save()
        rc, rep, out, err = verify_json(bin_, path)
        failed = [c["name"] for c in rep["checks"] if not c["pass"]]
        if rc != 1 or rep["pass"] or "logits" not in failed:
            fail(f"changed weight: exit {rc}, failing {failed}", out, err)
    elif case == "claims":
        # metadata that claims a batch and an image far larger than the file's tensors: named for the
        # shapes that disagree, where buffers sized by the claim once ran out of memory first
        meta = dict(meta, batch_size=str(1 << 20), img_size=str(int(meta["img_size"]) * 8))
        save()
        rc, out, err = run(bin_, "--reference", path, "--format", "table")
        if rc != 1 or "has shape" not in err or "out of memory" in err:
            fail(f"claims: expected exit 1 naming a tensor's shape, got exit {rc}", out, err)
    elif case in ("missing", "shape", "extra", "labels"):
        if case == "missing":
            tensors = [t for t in tensors if t[0] != "blocks.0.mlp.fc2.bias"]
            name = "blocks.0.mlp.fc2.bias"
        elif case == "shape":
            t = by_name["head.weight"]
            t[2] = (t[2][1], t[2][0])
            name = "head.weight"
        elif case == "extra":
            tensors.append(["blocks.0.attn.q_norm.weight", "F32", (1,), bytearray(4)])
            name = "blocks.0.attn.q_norm.weight"
        else:
            t = by_name["labels"]
            struct.pack_into("<q", t[3], 0, int(meta["num_classes"]))
            name = "label"
        save()
        rc, out, err = run(bin_, "--reference", path, "--format", "table")
        if rc != 1 or name not in err or "PASS" in out:
            fail(f"{case}: expected exit 1 naming '{name}', got exit {rc}", out, err)
    elif case == "truncated":
        with open(fixture, "rb") as f:
            buf = f.read()
        for cut in (0, 5, 8, 100, len(buf) // 2, len(buf) - 1):
            with open(path, "wb") as f:
                f.write(buf[:cut])
            rc, out, err = run(bin_, "--reference", path)
            if rc != 1 or not err.strip():
                fail(f"truncated at {cut}: exit {rc}", out, err)
    elif case == "usage":
        for args, want in ((["--reference"], 2), ([], 2), (["--reference", fixture, "--precision", "fp16"], 2),
                           (["--reference", fixture, "--backend", "tpu"], 2),
                           (["--reference", fixture, "--format", "xml"], 2),
                           (["--reference", fixture, "--threads", "-1"], 2), (["--bogus"], 2),
                           (["--reference", os.path.join(tmp, "nope.safetensors")], 1)):
            rc, out, err = run(bin_, *args)
            if rc != want or not err.strip():
                fail(f"{args}: expected exit {want} with a message, got {rc}", out, err)
        # Not a reference: refused at once (the old reader grew a buffer until the memory ran out on
        # /dev/zero, and waited for a writer on a FIFO), never read whole first.
        fifo, big = os.path.join(tmp, "fifo"), os.path.join(tmp, "big.safetensors")
        os.mkfifo(fifo)
        with open(big, "wb") as f:
            f.truncate((8 << 30) + 1)   # sparse: one byte over the cap, none of it on disk
        for path, word in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"),
                           (tmp, "a directory"), (big, "over 8 GiB")):
            try:
                p = subprocess.run([bin_, "verify", "--reference", path], capture_output=True, text=True,
                                   timeout=60)
            except subprocess.TimeoutExpired:
                fail(f"--reference {path}: still running after 60 s")
            if p.returncode != 1 or path not in p.stderr or word not in p.stderr or p.stdout:
                fail(f"--reference {path}: want exit 1 naming it and {word!r}, got {p.returncode}", p.stdout, p.stderr)
        rc, out, err = run(bin_, "--help")
        if rc != 0 or "--reference" not in out:
            fail("--help", out, err)
        # --columns names the table's columns: into a pipe it asks for the table (it was ignored, the
        # JSON printed whole), and with --format json, whose fields it cannot choose, it is refused
        rc, out, err = run(bin_, "--reference", fixture, "--columns", "tensor,result")
        head = out.splitlines()[:1]
        if rc != 0 or not head or head[0].split() != ["TENSOR", "RESULT"]:
            fail("--columns tensor,result into a pipe: want exit 0 and a table of those two columns", out, err)
        rc, out, err = run(bin_, "--reference", fixture, "--columns", "tensor", "--format", "json")
        if rc != 2 or out or "--columns" not in err or "--format json" not in err:
            fail("--columns with --format json: want exit 2 naming both, nothing on stdout", out, err)
        rc, out, err = run(bin_, "--reference", fixture, "--backend", "cuda", "--format", "table")
        if rc == 2 and "PASS" not in out and "cuda" in err.lower():
            pass   # no CUDA here: a clear refusal, a usage error as in measure
        elif rc == 0 and "PASS" in out:
            pass   # a GPU build that matches the reference
        else:
            fail(f"--backend cuda: exit {rc}", out, err)
    else:
        sys.exit(f"unknown case {case}")
    print(f"verify_cases {case}: ok")
    shutil.rmtree(tmp, ignore_errors=True)   # a failed case exits above and keeps it


if __name__ == "__main__":
    main()
