#!/usr/bin/env python3
"""engine_cli: `instbench models` flag handling.  Every bad model flag or value is a usage error
(exit 2, a message on stderr naming the problem, nothing on stdout); good overrides are applied
(the config is renamed "custom", its dimensions and parameter count follow by hand)."""
import json
import subprocess
import sys

BIN = sys.argv[1]
failures = []


def run(*args):
    return subprocess.run([BIN, "models", *args], capture_output=True, text=True)


bad = [
    (["--model", "vit_huge_patch14_224"], "--model: unknown model 'vit_huge_patch14_224'"),
    (["--heads", "7"], "not divisible by heads"),
    (["--patch-size", "15"], "not a multiple of patch size"),
    (["--depth", "0"], "--depth"),
    (["--embed-dim", "-4"], "--embed-dim"),
    (["--mlp-ratio", "abc"], "--mlp-ratio"),
    (["--mlp-ratio", "nan"], "--mlp-ratio"),
    (["--classes", "1e3"], "--classes"),
    (["--image-size", "99999999999"], "--image-size"),
    (["--depth", "300"], "depth 300 out of range"),
    (["--depth"], "needs a value"),
    (["--format", "xml"], "--format"),
    (["--frobnicate"], "unknown option"),
]
for args, needle in bad:
    r = run(*args)
    if r.returncode != 2 or needle not in r.stderr or r.stdout:
        failures.append(f"models {' '.join(args)}: exit {r.returncode}, stderr {r.stderr.strip()!r}, "
                        f"stdout {r.stdout.strip()[:60]!r} (want exit 2 and '{needle}')")

r = run("--format", "json", "--model", "vit_small_patch16_224", "--depth", "3", "--classes", "10", "--image-size", "32")
if r.returncode != 0:
    failures.append(f"override run failed: {r.stderr}")
else:
    c = json.loads(r.stdout)["models"][0]   # instbench.models/v1
    D, T, F = 384, (32 // 16) ** 2 + 1, 4 * 384
    block = 4 * D + 3 * D * D + 3 * D + D * D + D + F * D + F + D * F + D
    want = D + T * D + D * 3 * 16 * 16 + D + 3 * block + 2 * D + 10 * D + 10
    if (c["name"], c["preset"], c["depth"], c["num_classes"], c["seq_len"], c["params"]) != \
            ("custom", "vit_small_patch16_224", 3, 10, T, want):
        failures.append(f"override config wrong: {c}")
r = run("--format", "json", "--model", "vit_tiny_patch16_224", "--depth", "12")   # same as the preset
if r.returncode != 0 or json.loads(r.stdout)["models"][0]["name"] != "vit_tiny_patch16_224":
    failures.append("an override equal to the preset must keep the preset name")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
print(f"{len(bad)} bad invocations checked; {'FAILED' if failures else 'ok'}")
sys.exit(1 if failures else 0)
