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
SCHEMA = json.load(open(sys.argv[2]))
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


def validate(doc, what):
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        check(False, f"{what}: schema: {'/'.join(map(str, e.path))}: {e.message}")
    return not errors


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
