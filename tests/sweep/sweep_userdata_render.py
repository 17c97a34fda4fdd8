#!/usr/bin/python3
"""sweep_userdata_render (src/sweep/userdata.c) through tests/sweep/userdata_probe:
- hostile values (quotes, $(...), backticks, newlines, globs, UTF-8) come back byte for byte when
  bash itself evaluates the rendered assignments, and run nothing;
- the template as shipped refuses to run unrendered; every rendering is valid bash (bash -n) and
  is the template's code, its comment and blank lines left out (the #! line kept), around the values;
- bad values are refused with exit 2 (id, nodes 0/65, minutes, digest, a URL that is not http(s),
  e.g. one starting with '-' that curl would take for an option, a missing log/rendezvous URL,
  efa_devices -1 / 65);
- efa_devices: EFA_DEVICES='N' for 0..64 as bash evaluates it, 0 when not given;
- shutdown's minutes are max_minutes rounded up;
- room: 64 nodes with botocore-presigned URLs (plain and with a session token) fit in 16,384 bytes
  with node 0's log URL first and as many more as fit (checked against a Python recomputation of
  the size), and measure flags too long even for node 0's URL alone are refused;
- no credential: the secret key appears nowhere; the access key id and session token only inside
  the presigned URLs' X-Amz-Credential / X-Amz-Security-Token parameters.
Usage: sweep_userdata_render.py USERDATA_PROBE TEMPLATE(src/sweep/userdata.sh)"""
import json
import os
import re
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), d) for d in ("lib", "fakes")]
from testlib import check, failures, scratch_dir  # noqa: E402

PROBE, TEMPLATE = sys.argv[1], sys.argv[2]
MAX = 16384
SHA = "ab" * 32
TMP = scratch_dir("ud-render-")


def base(**kw):
    v = {"sweep_id": "20261125-213005-9f3a", "candidate_spec": "g5.xlarge:spot", "nodes": 1, "max_minutes": 30,
         "region": "us-east-1", "market": "spot", "source_url": "https://b.s3.amazonaws.com/src.tgz?X-Amz-Signature=1",
         "source_sha256": SHA, "result_url": "https://b.s3.amazonaws.com/r.json?X-Amz-Signature=2",
         "log_urls": ["https://b.s3.amazonaws.com/l0.log?X-Amz-Signature=3"], "rendezvous_url": None,
         "measure_args": ["--model", "vit_tiny_patch16_224"]}
    v.update(kw)
    return v


def probe(cmd, v):
    path = os.path.join(TMP, "vars.json")
    with open(path, "w") as f:
        json.dump({k: x for k, x in v.items() if x is not None}, f)
    return subprocess.run([PROBE, cmd, path], capture_output=True, timeout=60)


def render(v):
    p = probe("render", v)
    if not check(p.returncode == 0, f"render failed: {p.stderr.decode()[-300:]}"):
        return None
    return p.stdout.decode()


def values_block(script):
    """The assignments the renderer wrote: from after `set -euo pipefail` to the guard line."""
    start = script.index("set -euo pipefail\n") + len("set -euo pipefail\n")
    return script[start:script.index(': "${SWEEP_ID:?')]


def evaluate(script):
    """bash evaluates the values; each comes back NUL-separated, arrays element by element."""
    prog = values_block(script) + r"""
for v in SWEEP_ID CANDIDATE NODES MAX_MINUTES REGION MARKET SOURCE_URL SOURCE_SHA256 RESULT_URL RENDEZVOUS_URL EFA_DEVICES; do
  printf '%s=%s\0' "$v" "${!v}"; done
for x in "${LOG_URLS[@]}"; do printf 'LOG=%s\0' "$x"; done
for x in "${MEASURE_ARGS[@]}"; do printf 'ARG=%s\0' "$x"; done
"""
    p = subprocess.run(["bash", "-c", prog], capture_output=True, cwd=TMP, timeout=30)
    check(p.returncode == 0, f"bash could not evaluate the values: {p.stderr.decode()[-300:]}")
    out = {"LOG": [], "ARG": []}
    for item in p.stdout.decode().split("\0")[:-1]:
        k, x = item.split("=", 1)
        if k in out:
            out[k].append(x)
        else:
            out[k] = x
    return out


# -- hostile values, byte for byte ---------------------------------------------------------------
HOSTILE = ["it's", "$(touch pwned)", "`touch pwned2`", "a\nb\n", "\"double\" \\back\\", "*", "; rm -rf ~",
           "'; touch pwned3; '", "${HOME}", "ümlaut → ✓", "-", "", "$'\\x41'", "\t\r"]
v = base(candidate_spec="'$(touch pwned4)'\n", region="us-east-1'\n", market="spot`id`",
         measure_args=HOSTILE, nodes=2, rendezvous_url="http://h/r?a='1'&b=$(x)",
         log_urls=["http://h/l0?x='$(touch pwned5)'", "http://h/l1?`id`"])
s = render(v)
if s:
    got = evaluate(s)
    check(got["ARG"] == HOSTILE, f"measure args changed: {got['ARG']!r}")
    check(got["CANDIDATE"] == v["candidate_spec"] and got["REGION"] == v["region"] and got["MARKET"] == v["market"],
          f"scalars changed: {got!r}")
    check(got["LOG"] == v["log_urls"] and got["RENDEZVOUS_URL"] == v["rendezvous_url"], f"URLs changed: {got!r}")
    check(got["NODES"] == "2" and got["SOURCE_SHA256"] == SHA, f"nodes/sha: {got!r}")
    check(not any(n.startswith("pwned") for n in os.listdir(TMP)), f"a value ran: {os.listdir(TMP)}")
    check(subprocess.run(["bash", "-n"], input=s.encode()).returncode == 0, "rendered script is not valid bash")
    # the rest is the template's code: every line but comments and blank ones, the #! line kept
    tpl = open(TEMPLATE).read()
    mark = "#@INSTBENCH_VALUES@\n"
    check(tpl.count(mark) == 1, "template: the values line is not there once")

    def code(text, first):
        lines = text.splitlines(keepends=True)
        return "".join(x for i, x in enumerate(lines)
                       if (first and i == 0) or (x.strip() and not x.lstrip(" \t").startswith("#")))
    head, tail = tpl.split(mark)
    check(s.startswith(code(head, True)) and s.endswith(code(tail, False)),
          "rendered script is not the template's code around the values")
    check(s.startswith("#!/bin/bash\n") and "set -euo pipefail\n" in s and 'curl -sSf' in s,
          "rendered script lost its #! line or its code")
    check(not re.search(r"(?m)^\s*#(?!!/bin/bash)", s),
          "a comment line is in the rendered script")

# -- the template refuses to run unrendered, before any timer or download -------------------------
calls = os.path.join(TMP, "calls")
bindir = os.path.join(TMP, "bin")
os.makedirs(bindir)
for name in ("shutdown", "poweroff", "curl"):
    with open(os.path.join(bindir, name), "w") as f:
        f.write(f"#!/bin/sh\necho {name} >>{calls}\n")
    os.chmod(os.path.join(bindir, name), 0o755)
p = subprocess.run(["bash", TEMPLATE], capture_output=True, text=True, timeout=30,
                   env=dict(os.environ, PATH=bindir + ":" + os.environ["PATH"]))
check(p.returncode != 0 and "instbench sweep run renders it" in p.stderr, f"unrendered template: {p.returncode} {p.stderr!r}")
check(not os.path.exists(calls), "the unrendered template called shutdown/poweroff/curl")

# -- bad values: exit 2 with a message -------------------------------------------------------------
BAD = [
    (base(sweep_id="20261125-213005-9F3A"), "not a sweep id"),
    (base(sweep_id=None), "not a sweep id"),
    (base(nodes=0), "0 nodes"),
    (base(nodes=65, log_urls=["http://l"] * 65, rendezvous_url="http://r"), "65 nodes"),
    (base(max_minutes=0), "max minutes"),
    (base(max_minutes=-1), "max minutes"),
    (base(max_minutes=10081), "max minutes"),
    (base(source_sha256="AB" * 32), "digest"),
    (base(source_sha256="ab" * 31), "digest"),
    (base(source_url="-o/tmp/x http://h/"), "source URL"),
    (base(source_url="file:///etc/passwd"), "source URL"),
    (base(result_url=None), "result URL"),
    (base(log_urls=[]), "log URL of node 0"),
    (base(nodes=2, rendezvous_url="http://r"), "log URL of node 1"),
    (base(nodes=2, log_urls=["http://l0", "http://l1"]), "rendezvous URL"),
    (base(efa_devices=-1), "-1 EFA devices"),
    (base(efa_devices=65), "65 EFA devices"),
    (base(efa_devices=2 ** 40), "EFA devices"),
]
for vv, want in BAD:
    p = probe("render", vv)
    err = p.stderr.decode()
    check(p.returncode == 2 and want in err and err.count("\n") == 1, f"bad {want!r}: exit {p.returncode}, {err!r}")
    check(p.stdout == b"", f"bad {want!r}: printed a script")

# -- efa_devices: the value bash sees, 0 when not given ---------------------------------------------
for n, want in [(None, "0"), (0, "0"), (1, "1"), (4, "4"), (32, "32"), (64, "64")]:
    s = render(base(efa_devices=n))
    if s:
        check(evaluate(s).get("EFA_DEVICES") == want, f"efa_devices {n}: EFA_DEVICES != {want!r}")
        check(f"\nEFA_DEVICES='{want}'\n" in s, f"efa_devices {n}: not a single-quoted assignment")

# -- shutdown's minutes: rounded up ----------------------------------------------------------------
for m, want in [(30, 30), (1.5, 2), (0.01, 1), (29.0001, 30)]:
    s = render(base(max_minutes=m))
    if s:
        check(evaluate(s)["MAX_MINUTES"] == str(want), f"max_minutes {m}: MAX_MINUTES != {want}")

# -- room, and no credential -----------------------------------------------------------------------
import botocore.session  # noqa: E402

AKID, SECRET, TOKEN = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", \
    "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD" + "Zm9vYmFy/+=" * 90


def presigner(token):
    c = botocore.session.get_session().create_client(
        "s3", region_name="eu-central-1", aws_access_key_id=AKID, aws_secret_access_key=SECRET,
        aws_session_token=token, config=botocore.config.Config(signature_version="s3v4"))
    return lambda method, key: c.generate_presigned_url(
        method, Params={"Bucket": "my-sweep-bucket-eu", "Key": key}, ExpiresIn=3 * 3600)


import botocore.config  # noqa: E402


def quoted_len(x):
    return len("'" + x.replace("'", "'\\''") + "'")


for token in (None, TOKEN):
    sign = presigner(token)
    spec = "64xg5.xlarge-spot"
    pre = "benchmarks/instbench/sweep-20261125-213005-9f3a/"
    logs = [sign("put_object", f"{pre}logs/0-{spec}-node{k}.log") for k in range(64)]
    v = base(nodes=64, candidate_spec="64xg5.xlarge:spot", max_minutes=45,
             source_url=sign("get_object", "benchmarks/instbench/sources/" + SHA + ".tar.gz"),
             result_url=sign("put_object", f"{pre}results/0-{spec}.json"),
             rendezvous_url=sign("get_object", f"{pre}rendezvous/0"), log_urls=logs,
             measure_args=["--model", "vit_base_patch16_224", "--batch-size", "64", "--precision", "bf16",
                           "--duration", "120"])
    what = "with a session token" if token else "plain keys"
    s = render(v)
    kp = probe("log-nodes", v)
    if not s or not check(kp.returncode == 0, f"{what}: log-nodes failed"):
        continue
    k = int(kp.stdout)
    size = len(s.encode())
    check(size <= MAX, f"{what}: {size} bytes > {MAX}")
    got = evaluate(s)
    check(got["LOG"] == logs[:k] and k >= 1, f"{what}: the log URLs are not the first {k}")
    # the reference: the script with k URLs is this size, one more URL would not fit
    check(k == 64 or size + 1 + quoted_len(logs[k]) > MAX, f"{what}: room for log URL {k} was left")
    print(f"{what}: 64 nodes, {k} log URLs, {size} bytes (URL ~{len(logs[0])} bytes)")
    # credentials: the secret nowhere (raw or URL-encoded); the key id and token only in the URLs
    for form in (SECRET, urllib.parse.quote(SECRET, safe=""), urllib.parse.quote(SECRET)):
        check(form not in s, f"{what}: the secret key is in the user data")
    urls = [v["source_url"], v["result_url"], v["rendezvous_url"]] + logs[:k]
    check(s.count(AKID) == sum(u.count(AKID) for u in urls) == len(urls),
          f"{what}: the access key id appears outside the presigned URLs' X-Amz-Credential")
    for u in urls:
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(u).query)
        check(q["X-Amz-Credential"][0].startswith(AKID + "/"), "a URL without its credential scope")
    if token:
        enc = urllib.parse.quote(TOKEN, safe="")
        check(TOKEN not in s and s.count(enc) == len(urls),
              f"{what}: the session token appears other than as the URLs' X-Amz-Security-Token")
    stripped = s
    for u in urls:
        stripped = stripped.replace(u, "")
    check(AKID not in stripped and (not token or urllib.parse.quote(TOKEN, safe="") not in stripped),
          f"{what}: a credential outside the URLs")
    check(not re.search(r"AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN)=", s), f"{what}: AWS_* credential variables")

# every log URL fits when there is room; flags too long even for node 0's URL alone are refused
v = base(nodes=3, rendezvous_url="http://r", log_urls=["http://l0", "http://l1", "http://l2"])
p = probe("log-nodes", v)
check(p.returncode == 0 and p.stdout.strip() == b"3", f"3 short log URLs: {p.stdout!r}")
# the sizes from the rendering of base() with a one-byte model name: the argument adds len - 1 bytes
small = len(render(base(measure_args=["--model", "x"])).encode())
v = base(measure_args=["--model", "x" * (MAX - small + 2)])
p = probe("render", v)
err = p.stderr.decode()
check(p.returncode == 2 and f"{MAX + 1} bytes with node 0's log URL alone" in err and str(MAX) in err,
      f"oversize: {p.returncode} {err!r}")
v = base(measure_args=["--model", "x" * (MAX - small + 1)])
s = render(v)
check(s is not None and len(s.encode()) == MAX, "a script of exactly the limit was refused")

sys.exit(1 if failures else 0)
