"""Shared by the measure_cli_*.py tests: a tiny ViT config, running the CLI, schema validation."""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

BIN = os.path.abspath(sys.argv[1])
SCHEMA_PATH = os.path.abspath(sys.argv[2])   # schemas/result-v1.json of the source tree
SCHEMA = json.load(open(SCHEMA_PATH))
jsonschema.Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# ~0.1 MFLOP per sample: steps of a few milliseconds, so every test stays short.
TINY = ["--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "2", "--image-size", "32",
        "--patch-size", "8", "--embed-dim", "64", "--heads", "2", "--classes", "10", "--batch-size", "4"]

from testlib import check, failures as FAILURES  # noqa: F401 (re-exported)


def env(**extra):
    e = dict(os.environ)
    # Off EC2 by default: no IMDS lookup delay in tests that are not about identity.
    e.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    e.update({k: v for k, v in extra.items() if v is not None})
    for k, v in extra.items():
        if v is None:
            e.pop(k, None)
    return e


def run(args, cwd=None, timeout=120, **envs):
    return subprocess.run([BIN, "measure"] + args, capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env=env(**envs))


# measurement.warning_codes in the order docs/formats.md lists them, each recomputed below from
# the figures the result itself carries (drift alone is not recorded as a number: its sentence).
WARNING_CODES = ["cv_high", "drift", "mfu_over_100", "other_processes", "steal", "shared_machine"]


def expected_warning_codes(doc):
    m, hl = doc["measurement"], doc["measurement"]["host_load"]
    due = {"cv_high": m["step_time_s"]["cv"] > 0.05,
           "drift": any(w.startswith("step time drifted") for w in m["warnings"]),
           "mfu_over_100": m["mfu"] is not None and m["mfu"] > 1,
           "other_processes": (hl["other_processes_cpu_share"] or 0) > 0.10,
           "steal": (hl["steal_share"] or 0) > 0.05,
           "shared_machine": hl["loadavg_1m_before"] > doc["hardware"]["vcpus"]}
    return [c for c in WARNING_CODES if due[c]]


def validate(doc, what):
    """The schema, and one warning code per warning, each the one the result's figures call for."""
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        check(False, f"{what}: schema: {'/'.join(map(str, e.path))}: {e.message}")
    if errors or "measurement" not in doc:
        return not errors
    m = doc["measurement"]
    want = expected_warning_codes(doc)
    check(m.get("warning_codes") == want, f"{what}: warning_codes {m.get('warning_codes')} != {want} "
          f"(warnings {m['warnings']})")
    check(len(m["warnings"]) == len(m.get("warning_codes", [])), f"{what}: {len(m['warnings'])} warnings, "
          f"{len(m.get('warning_codes', []))} codes")
    return True


_SCRATCH = []


def scratch():
    d = tempfile.mkdtemp(prefix="instbench-measure-")
    _SCRATCH.append(d)
    return d


@atexit.register
def _cleanup():
    for d in _SCRATCH:
        shutil.rmtree(d, ignore_errors=True)


def finish(name):
    if FAILURES:
        print(f"{name}: {len(FAILURES)} failure(s)")
        sys.exit(1)
    print(f"{name}: ok")
    sys.exit(0)
