"""A decimal-comma locale changes nothing: instbench never calls setlocale, so printf and strtod stay
in the C locale whatever LANG and LC_ALL say.  Under de_DE.UTF-8 (built here with localedef into a
scratch folder, no root needed), `rank` and `prices` on the shipped snapshot write the same bytes as
under C.UTF-8 (the clock's generated_at aside), the JSON parses with Python's json and the CSV's
numbers have '.' points; a float flag written with a comma ('1,5') is refused (exit 2, naming the
flag), not read as 1.  instbench starts no program of its own that could bring the locale back.

localedef's German source comes with Debian's `locales` (scripts/bootstrap.sh --test-deps installs
it): without it the test is skipped (exit 77), but fails where CI is set, so CI never skips it.

Usage: cli_locale.py INSTBENCH"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TESTS, d) for d in ("lib", "fakes", "rank")]  # testlib, rank_fixtures
import rank_fixtures as fx  # noqa: E402
from testlib import check, failures, fail, offline_env, scratch_dir  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
d = scratch_dir("instbench-locale-")
LOCALES = os.path.join(d, "locales")


def no_locale(why):
    if os.environ.get("CI", "") not in ("", "false", "0"):
        fail(f"cannot build the de_DE.UTF-8 locale ({why}): install Debian's locales package "
             "(scripts/bootstrap.sh --test-deps)")
    print(f"cli_locale: skipped: cannot build the de_DE.UTF-8 locale ({why}; Debian's locales package has it)")
    sys.exit(77)


if not shutil.which("localedef"):
    no_locale("no localedef on PATH: Debian's libc-bin")
os.makedirs(LOCALES)
p = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", os.path.join(LOCALES, "de_DE.UTF-8")],
                   capture_output=True, text=True, timeout=120)
# localedef exits 1 on warnings alone, with the locale written
if not os.path.exists(os.path.join(LOCALES, "de_DE.UTF-8", "LC_NUMERIC")):
    no_locale(f"localedef -i de_DE -f UTF-8: exit {p.returncode}: {p.stderr.strip()[-300:]}")

DE = {"LOCPATH": LOCALES, "LC_ALL": "de_DE.UTF-8", "LANG": "de_DE.UTF-8"}
# Under the ASan build: libp11-kit (loaded with libcurl's TLS) calls newlocale() from its
# initialiser, and glibc keeps the LOCPATH string it splits then (__argz_add_sep) for the process's
# life, which LeakSanitizer reports (its fast unwinder stops inside glibc, so the stack names only
# that function); not instbench's, and only with LOCPATH set, so suppressed here alone.
SUPPRESS = os.path.join(d, "lsan.supp")
with open(SUPPRESS, "w") as f:
    f.write("leak:__argz_add_sep\n")
lsan = os.environ.get("LSAN_OPTIONS", "")
DE["LSAN_OPTIONS"] = (lsan + ":" if lsan else "") + "print_suppressions=0:suppressions=" + SUPPRESS
home = os.path.join(d, "home")
os.makedirs(home)
C_ENV = offline_env(home)                  # LC_ALL=C.UTF-8
DE_ENV = offline_env(home, DE)

# The premise: a program that does call setlocale gets a decimal comma from this locale.
p = subprocess.run([sys.executable, "-c", "import locale; locale.setlocale(locale.LC_ALL, ''); "
                    "print(locale.localeconv()['decimal_point'], locale.str(1.5))"],
                   env=DE_ENV, capture_output=True, text=True, timeout=60)
if p.stdout.split() != [",", "1,5"]:
    no_locale(f"Python under it prints {p.stdout.strip()!r} {p.stderr.strip()[-200:]!r}, not a decimal comma")

results = os.path.join(d, "results")
fx.write_seed_results(results)
fx.write_json(os.path.join(results, "odd.json"),   # a rate with a fraction of its own
              fx.result("g5.2xlarge", "us-east-1", 1, 1, "NVIDIA A10G", 231.75, host="node3"))

STAMP = re.compile(rb'("generated_at": ")\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ(")')


def run(args, env):
    p = subprocess.run([BIN] + args, env=env, capture_output=True, timeout=120, cwd=d)
    return p.returncode, STAMP.sub(rb"\1(now)\2", p.stdout), p.stderr


def numbers_have_points(text, what):
    """Every CSV field that is a number reads as one in Python (a '.' point), and no field is a
    comma-decimal: returns how many fields held a fraction, so a check on none proves nothing."""
    rows = list(csv.reader(io.StringIO(text)))
    fractions = 0
    for row in rows[1:]:
        for field in row:
            check(not re.fullmatch(r"[-+]?\d+,\d+", field), f"{what}: a comma-decimal field {field!r}")
            if re.fullmatch(r"[-+]?\d+\.\d+(e[-+]?\d+)?", field):
                fractions += float(field) != int(float(field))
    return fractions


RANK = ["rank", results, "--source", "snapshot", "--samples", "1e9"]
PRICES = ["prices", "--source", "snapshot", "--instance-types", "g5.xlarge,g5.12xlarge", "--region", "us-east-1"]
for args in (RANK + ["--max-hourly", "100.5"], PRICES):
    for fmt in ("json", "csv"):
        what = f"{args[0]} --format {fmt}"
        c = run(args + ["--format", fmt], C_ENV)
        de = run(args + ["--format", fmt], DE_ENV)
        if not check(c[0] == 0, f"{what} under C.UTF-8: exit {c[0]}: {c[2][-300:]!r}"):
            continue
        check(de == c, f"{what}: de_DE.UTF-8 changed the output:\n  C:  {c[1][:300]!r} {c[2][-200:]!r}\n"
                       f"  de: {de[1][:300]!r} {de[2][-200:]!r}")
        text = de[1].decode()
        if fmt == "json":
            try:
                json.loads(text)
            except ValueError as e:
                check(False, f"{what} under de_DE.UTF-8: not JSON: {e}")
        else:
            check(numbers_have_points(text, what) > 0, f"{what}: no number with a fraction to check")

# a run over in a moment, should the price be taken
MEASURE = ["measure", "--backend", "cpu", "--model", "vit_tiny_patch16_224", "--depth", "1", "--image-size", "32",
           "--patch-size", "16", "--embed-dim", "32", "--heads", "2", "--classes", "10", "--batch-size", "2",
           "--steps", "1", "--warmup", "0", "--checkpoint", "off", "--output", os.path.join(d, "m.json")]
# A float written the German way is no number here: refused, not read as its integer part.
for args, flag in ((RANK + ["--max-hourly", "1,5"], "--max-hourly"),
                   (RANK + ["--checkpoint-cost", "9,5"], "--checkpoint-cost"),
                   (MEASURE + ["--hourly-cost", "1,5"], "--hourly-cost")):
    rc, out, err = run(args, DE_ENV)
    err = err.decode()
    check(rc == 2 and f"{flag}: '{args[-1]}' is not a " in err
          and f"(try: instbench {args[0]} --help)" in err and out == b"",
          f"{args[0]} {flag} {args[-1]} under de_DE.UTF-8: exit {rc}, {err.strip()[-300:]!r}")
# and the '.' the docs show still reads as a number there
rc, _, err = run(RANK + ["--max-hourly", "1.5", "--format", "json"], DE_ENV)
check(rc == 0, f"rank --max-hourly 1.5 under de_DE.UTF-8: exit {rc}: {err[-300:]!r}")

if failures:
    sys.exit(1)
print("cli_locale: ok")
