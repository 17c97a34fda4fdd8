#!/usr/bin/python3
"""Differential test: the shared config/credentials file parser (aws/config_file.c) against
botocore's own reader (botocore.configloader: configparser underneath) on random files.

Random section headers (profile spellings with tabs and spaces, non-profile sections, [DEFAULT]),
keys in mixed case with '=' or ':' and spacing, values holding '=', ':', '#', ';', indented
option lines, multi-line values with blank and comment lines inside, full-line comments, and
\\n, \\r\\n and \\r line ends.  Files botocore rejects (duplicate sections or keys) are skipped.
For every (profile, key) the value must be the same, or absent in both.  Then one large file (20,000
SSO profiles, 3.5 MB, as a tool that writes a profile per account and role makes) is read in well
under a second, with botocore's values.

usage: aws_config_botocore.py PROBE [CASES] [SEED]
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from botocore import configloader
from botocore.exceptions import ConfigParseError

HEADERS = ["default", "profile dev", "profile\tqa", "profile  x ", "dev", "sso-session s", "DEFAULT",
           "profile a b", "profilez y", " default ", "services s3"]
PROFILES = ["default", "dev", "qa", "x", "y", "a b", "profile dev", "profile\tqa", "profile  x ", "sso-session s",
            " default ", "profilez y"]
KEYS = ["aws_access_key_id", "aws_secret_access_key", "region", "aws_session_token", "output"]
VALUE_CHARS = list("abcXYZ0129+/=:#;.-_ ") + ["\t"]


def rand_value(rng):
    v = "".join(rng.choice(VALUE_CHARS) for _ in range(rng.randint(0, 16)))
    return v


def make_file(rng):
    lines = []
    for _ in range(rng.randint(0, 2)):
        lines.append(rng.choice(["", "# top comment", "; another", "   # indented comment"]))
    for h in rng.sample(HEADERS, rng.randint(1, 5)):
        lines.append("[%s]" % h)
        keys = rng.sample(KEYS, rng.randint(0, len(KEYS)))
        for k in keys:
            kk = "".join(c.upper() if rng.random() < 0.2 else c for c in k)
            indent = " " * rng.choice([0, 0, 0, 1]) if not lines[-1].startswith("[") or rng.random() < 0.5 else ""
            delim = rng.choice(["=", " = ", ":", " : ", "=  ", "\t=\t"])
            lines.append("%s%s%s%s" % (indent, kk, delim, rand_value(rng)))
            r = rng.random()
            if r < 0.15:  # a multi-line value, maybe with a blank or a comment inside
                lines.append("   " + rand_value(rng).strip() + "x")
                if rng.random() < 0.5:
                    lines.append(rng.choice(["", "# inner comment"]))
                    lines.append("    more" + rand_value(rng).strip())
            elif r < 0.25:
                lines.append(rng.choice(["", "# c", "; c", "  ; c"]))
        if rng.random() < 0.2:
            lines.append("s3 =\n  max_concurrent_requests = 10\n  addressing_style = path")
    eol = rng.choice(["\n", "\r\n", "\r", "\n"])
    return eol.join("\n".join(lines).split("\n")) + (eol if rng.random() < 0.7 else "")


def botocore_view(path, is_config):
    raw = configloader.raw_config_parse(path)
    if is_config:
        return configloader.build_profile_map(raw)["profiles"]
    return raw


def read_profiles(probe, tmp, n):
    """A config of N profiles read by the probe: (seconds, its values, botocore's) for the first,
    middle and last profile and one past the end."""
    path = os.path.join(tmp, "large%d" % n)
    with open(path, "w") as f:
        for i in range(n):
            f.write("[profile acct%06d-admin]\nsso_start_url = https://example.awsapps.com/start\nsso_region = "
                    "us-east-1\nsso_account_id = %012d\nsso_role_name = Admin\nregion = eu-west-%d\n" % (i, i, i % 3 + 1))
    view = botocore_view(path, 1)
    pairs = [("acct%06d-admin" % i, k) for i in (0, n // 2 - 1, n - 1) for k in ("region", "sso_account_id")] + \
        [("acct%06d-admin" % n, "region")]
    t0 = time.monotonic()
    p = subprocess.run([probe, "config", path, "1"] + [x for pk in pairs for x in pk], capture_output=True, text=True,
                       timeout=300)
    dt = time.monotonic() - t0
    want = [view.get(pr, {}).get(k) for pr, k in pairs]
    return dt, json.loads(p.stdout) if p.returncode == 0 else p.stderr, want


def large_file(probe, tmp):
    """20,000 profiles: read in linear time (a check for an earlier duplicate at every line took 16 s).
    Linear is judged against a quarter of the file, not a clock bound (machines differ): 4 times the
    profiles may take at most 8 times as long, with 0.3 s for the process's own start; the check
    before took 16 times as long."""
    quarter, _, _ = read_profiles(probe, tmp, 5000)
    dt, got, want = read_profiles(probe, tmp, 20000)
    print("a config of 20,000 profiles: read in %.2f s (5,000: %.2f s)" % (dt, quarter))
    return got == want and dt < 8 * quarter + 0.3, \
        "the large file: %.2f s against %.2f s for a quarter of it, botocore %r, ours %r" % (dt, quarter, want, got)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    probe = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1122
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="awscfg")
    compared = skipped = failures = 0
    pairs = [(p, k) for p in PROFILES for k in KEYS]
    cases = []   # (file number, text, is_config, botocore's values), each compared once the probe has run
    for i in range(n):
        text = make_file(rng)
        path = os.path.join(tmp, "f%d" % i)
        with open(path, "w", newline="") as f:
            f.write(text)
        for is_config in (0, 1):
            try:
                view = botocore_view(path, is_config)
            except ConfigParseError:
                skipped += 1
                continue
            want = []
            for p, k in pairs:
                v = view.get(p, {}).get(k)
                want.append(v if isinstance(v, str) else None)
            cases.append((i, text, is_config, [path, str(is_config)] + [x for pk in pairs for x in pk], want))
    # every case to one probe process (`config -`): its arguments a line, its values a line
    p = subprocess.run([probe, "config", "-"], input="".join(json.dumps(c[3]) + "\n" for c in cases),
                       capture_output=True, text=True, timeout=300)
    results = p.stdout.splitlines()
    if p.returncode != 0 or len(results) != len(cases):
        print("probe: exit %d, %d answers for %d files: %s" % (p.returncode, len(results), len(cases), p.stderr[-2000:]))
        sys.exit(1)
    for (i, text, is_config, _, want), line in zip(cases, results):
        got = json.loads(line)
        compared += 1
        if got != want:
            failures += 1
            diffs = [(p, k, w, g) for (p, k), w, g in zip(pairs, want, got) if w != g]
            print("file %d (%s) differs: %r\n%s\n" % (i, "config" if is_config else "credentials", text,
                                                      "\n".join("  [%r] %s: botocore %r, ours %r" % d for d in diffs[:6])))
    print("%d/%d parses agree with botocore (%d rejected by botocore, skipped)" % (compared - failures, compared, skipped))
    if compared < n // 2:
        print("too few files compared")
        sys.exit(1)
    ok, why = large_file(probe, tmp)
    if not ok:
        print(why)
        failures += 1
    if failures:
        print("the files are in %s" % tmp)   # kept for whoever looks into the difference
        sys.exit(1)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
