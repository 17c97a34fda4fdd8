"""Every command that prints exits 1 with a message when stdout cannot be written (a full disk:
/dev/full, or a closed descriptor: >&-), and 0 when it can; a usage error keeps its exit 2.  A
command whose output goes to -o FILE and that prints nothing on stdout succeeds with stdout closed
(it used to write the file, then exit 1 "cannot write to stdout: Bad file descriptor"), and a file
it opens never takes over the closed descriptor.
usage: cli_stdout.py INSTBENCH TEST_DATA_DIR"""
import json
import os
import subprocess
import sys
import tempfile

BIN, DATA = sys.argv[1], sys.argv[2]
failures = []
bad_commands = 0
tmp = tempfile.mkdtemp(prefix="instbench-stdout-")
result = {"schema": "instbench.result/v1", "instance": {"type": "g5.xlarge", "region": "us-east-1"},
          "workload": {"fingerprint": "abcdef"}, "topology": {"nodes": 1},
          "measurement": {"samples_per_second": 100}}
prices = {"schema": "instbench.prices/v1", "generated_at": "2026-11-21T00:00:00Z", "snapshot": None,
          "prices": [{"instance_type": "g5.xlarge", "region": "us-east-1",
                      "on_demand": {"usd_per_hour": 1.0, "source": "file", "as_of": "2026-11-21T00:00:00Z"},
                      "spot": None, "interruption": None, "placement_score": None}]}
for name, doc in (("r.json", result), ("p.json", prices)):
    with open(os.path.join(tmp, name), "w") as f:
        json.dump(doc, f)
env = dict(os.environ, AWS_EC2_METADATA_DISABLED="true", INSTBENCH_CPU_PEAK_SECONDS="0.05", NO_COLOR="1",
           HOME=tmp, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
for k in [k for k in env if k.startswith("AWS_") and k != "AWS_EC2_METADATA_DISABLED"]:
    del env[k]
SMALL = ["--backend", "cpu", "--precision", "fp32", "--model", "vit_tiny_patch16_224", "--depth", "1",
         "--image-size", "32", "--patch-size", "8", "--embed-dim", "32", "--heads", "2", "--classes", "10",
         "--batch-size", "2", "--steps", "2", "--warmup", "1"]
COMMANDS = [["--version"], ["--help"],
            ["models"], ["models", "--format", "json"], ["models", "--format", "csv"], ["models", "--layout"],
            ["models", "--layout", "--format", "csv"],
            ["verify", "--reference", os.path.join(DATA, "ref_a_adam_fp32.safetensors")],
            ["verify", "--reference", os.path.join(DATA, "ref_a_adam_fp32.safetensors"), "--format", "json"],
            ["rank", os.path.join(tmp, "r.json"), "--source", os.path.join(tmp, "p.json"), "--format", "json"],
            ["rank", os.path.join(tmp, "r.json"), "--source", os.path.join(tmp, "p.json"), "--format", "table"],
            ["rank", os.path.join(tmp, "r.json"), "--source", os.path.join(tmp, "p.json"), "--format", "csv"],
            ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1"],
            ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1",
             "--format", "csv"],
            ["measure"] + SMALL + ["--output", "-"]]
COMMANDS += [[c, "--help"] for c in ("measure", "prices", "rank", "verify", "models")]

for args in COMMANDS:
    before = len(failures)
    what = "instbench " + " ".join(a if not a.startswith("/") else os.path.basename(a) for a in args)
    ok = subprocess.run([BIN] + args, capture_output=True, text=True, env=env, cwd=tmp, timeout=300)
    if ok.returncode != 0 or not ok.stdout:
        failures.append(f"{what}: exit {ok.returncode} with a pipe, printed {len(ok.stdout)} chars: {ok.stderr[-300:]}")
        continue
    with open("/dev/full", "w") as full:
        p = subprocess.run([BIN] + args, stdout=full, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp,
                           timeout=300)
    if p.returncode != 1:
        failures.append(f"{what} > /dev/full: exit {p.returncode}, want 1")
    if "cannot write to stdout" not in p.stderr:
        failures.append(f"{what} > /dev/full: no message saying stdout failed: {p.stderr[-300:]!r}")
    if "Sanitizer" in p.stderr or "runtime error:" in p.stderr:
        failures.append(f"{what}: sanitizer report: {p.stderr[-2000:]}")
    bad_commands += len(failures) > before


def closed_stdout(args):
    """ARGS run with file descriptor 1 closed, as `instbench ARGS >&-` runs it."""
    return subprocess.run([BIN] + args, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=tmp, timeout=300, preexec_fn=lambda: os.close(1))


# Closed stdout: what prints there fails, saying so ...
for args in (["models"], ["--version"],
             ["rank", os.path.join(tmp, "r.json"), "--source", os.path.join(tmp, "p.json"), "--format", "json"],
             ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1"]):
    p = closed_stdout(args)
    if p.returncode != 1 or "cannot write to stdout" not in p.stderr:
        failures.append(f"{args} >&-: exit {p.returncode}, want 1 saying stdout failed: {p.stderr[-300:]!r}")
        bad_commands += 1
# ... and what writes its output to -o FILE, printing nothing on stdout, succeeds and writes FILE whole
out = os.path.join(tmp, "out")
for args, check_file in (
        (["rank", os.path.join(tmp, "r.json"), "--source", os.path.join(tmp, "p.json"), "--format", "json", "-o", out],
         lambda d: json.loads(d)["schema"].startswith("instbench.rank")),
        (["rank", os.path.join(tmp, "r.json"), "--source", "snapshot", "--format", "csv", "-o", out],
         lambda d: d.startswith("rank,")),
        (["prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1", "-o", out],
         lambda d: json.loads(d)["schema"] == "instbench.prices/v1"),
        (["prices", "--source", "snapshot", "--region", "all", "--format", "csv", "-o", out],
         lambda d: d.startswith("instance_type,"))):
    if os.path.exists(out):
        os.unlink(out)
    p = closed_stdout(args)
    try:
        with open(out) as f:
            ok = check_file(f.read())
    except (OSError, ValueError, KeyError):
        ok = False
    if p.returncode != 0 or "cannot write to stdout" in p.stderr or not ok:
        failures.append(f"{args} >&-: exit {p.returncode}, file whole: {ok}, want 0: {p.stderr[-300:]!r}")
        bad_commands += 1
if os.path.exists(out):
    os.unlink(out)
CLOSED_RUNS = 8  # the runs above, for the count below

with open("/dev/full", "w") as full:
    p = subprocess.run([BIN, "models", "--format", "yaml"], stdout=full, stderr=subprocess.PIPE, env=env)
if p.returncode != 2:
    failures.append(f"a usage error with stdout full: exit {p.returncode}, want 2")
    bad_commands += 1
leftover = sorted(set(os.listdir(tmp)) - {"r.json", "p.json", "cache"})
if leftover:
    failures.append(f"files left in the working directory: {leftover}")
subprocess.run(["rm", "-rf", tmp])
for f in failures:
    print("FAIL:", f)
print(f"cli_stdout: {len(COMMANDS) + 1 + CLOSED_RUNS - bad_commands} command(s) ok, {bad_commands} failed")
sys.exit(1 if failures else 0)
