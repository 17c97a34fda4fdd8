#!/usr/bin/env python3
"""Every command parses its flags the one way (src/cmd/args.c): `--flag=value` and `--flag value`
mean the same, `--` ends the options, and an unknown flag, a missing value, a value out of range
and a choice that is not one all exit 2 with one line naming the flag, nothing on stdout; `--help`
exits 0 with a usage line.  Each case below is run for every command, so a command that parses
on its own again fails here.  Usage: cli_args.py INSTBENCH"""
import os
import subprocess
import sys

BIN = sys.argv[1]
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import absent_path, check, failures  # noqa: E402

NO_RESULT, NO_REF = absent_path("instbench-result.json"), absent_path("ref.safetensors")


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


# Per command: an integer flag with a valid value and an out-of-range one, a choice flag, and
# extra arguments that make a valid invocation fail fast without doing real work (rank: a missing
# result file; measure: --steps with --duration, a cross-flag rule checked after parsing).
CASES = {
    "measure": {"int": ("--warmup", "3", "-1"), "choice": ("--precision", "fp16"),
                "tail": ["--steps", "1", "--duration", "1"], "tail_word": "exclude each other"},
    "prices": {"int": ("--page-size", "10", "1001"), "choice": ("--market", "reserved"),
               "tail": ["--source", "snapshot", "--region", "us-east-9"], "tail_word": "not an AWS region"},
    "rank": {"int": ("--top", "3", "0"), "choice": ("--sort", "price"),
             "tail": [NO_RESULT, "--source", "snapshot"], "tail_word": NO_RESULT},
    "verify": {"int": ("--threads", "1", "5000"), "choice": ("--backend", "tpu"),
               "tail": ["--reference", NO_REF], "tail_word": NO_REF},
    "models": {"int": ("--depth", "2", "0"), "choice": ("--format", "xml"), "tail": [], "tail_word": None},
}

for cmd, c in CASES.items():
    flag, good, bad = c["int"]

    def usage_error(args, word, what):
        p = run(cmd, *args)
        msg = p.stderr.strip()
        check(p.returncode == 2, f"{cmd} {what}: exit {p.returncode}, want 2 ({msg[-200:]})")
        check(word in msg, f"{cmd} {what}: message does not name '{word}': {msg[-200:]}")
        check(p.stdout == "", f"{cmd} {what}: printed on stdout")
        check(msg.startswith(f"instbench {cmd}: ") and msg.count("\n") == 0,
              f"{cmd} {what}: not one line starting 'instbench {cmd}: ': {msg!r}")

    usage_error(["--no-such-flag"], "unknown option '--no-such-flag'", "unknown flag")
    usage_error(["--no-such-flag=1"], "unknown option '--no-such-flag'", "unknown --flag=value")
    usage_error([flag], f"{flag} needs a value", "missing value")
    usage_error([flag, bad], flag, "out of range")
    usage_error([f"{flag}={bad}"], flag, "out of range, --flag=value")
    usage_error([flag, "12abc"], flag, "not a number")
    usage_error([c["choice"][0], c["choice"][1]], c["choice"][0], "bad choice")
    usage_error(["--help=yes"], "--help takes no value", "value to a flag")

    p = run(cmd, "--help")
    check(p.returncode == 0 and p.stdout.startswith(f"usage: instbench {cmd}"), f"{cmd} --help: exit {p.returncode}")
    check(flag in p.stdout and c["choice"][0] in p.stdout, f"{cmd} --help does not list {flag}")
    p2 = run("help", cmd)
    check(p2.returncode == 0 and p2.stdout == p.stdout, f"instbench help {cmd} differs from {cmd} --help")

    # --flag=value and --flag value agree: the same run gets past parsing with either
    if c["tail_word"]:
        for form in ([flag, good], [f"{flag}={good}"]):
            p = run(cmd, *form, *c["tail"])
            check(c["tail_word"] in p.stderr, f"{cmd} {' '.join(form)}: did not reach '{c['tail_word']}': "
                                              f"{p.stderr.strip()[-200:]}")
    else:
        a, b = run(cmd, flag, good, "--format", "json"), run(cmd, f"{flag}={good}", "--format=json")
        check(a.returncode == 0 and a.stdout == b.stdout and a.stdout.startswith("{"), f"{cmd}: the two forms differ")

    # `--`: what follows is an argument, not a flag
    p = run(cmd, "--", "--help")
    if cmd == "rank":
        check(p.returncode == 1 and "--help" in p.stderr and not p.stdout.startswith("usage"),
              f"rank -- --help: exit {p.returncode}: {p.stderr[-200:]}")
    else:
        check(p.returncode == 2 and "unexpected argument '--help'" in p.stderr,
              f"{cmd} -- --help: exit {p.returncode}: {p.stderr[-200:]}")

# -o takes its value attached or separate (prices), and the global flags go anywhere
p1 = run("prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1", "-o", "/dev/stdout")
p2 = run("prices", "--source=snapshot", "--instance-types=g5.xlarge", "--region=us-east-1", "-o/dev/stdout")
check(p1.returncode == 0 and '"g5.xlarge"' in p1.stdout, f"prices -o FILE: exit {p1.returncode}: {p1.stderr[-200:]}")
check(p2.returncode == 0 and p2.stdout.replace(p2.stdout[p2.stdout.find('"generated_at"'):].split(",")[0], "")
      == p1.stdout.replace(p1.stdout[p1.stdout.find('"generated_at"'):].split(",")[0], ""),
      "prices -oFILE differs from -o FILE")
p = run("help", "nosuch")
check(p.returncode == 2 and "unknown command 'nosuch'" in p.stderr, f"help nosuch: exit {p.returncode}")

# instbench's own options go through the same parser: same wording, flags without a value run
# together (-vv) there and in every command
for args, want in ((["--no-such-flag", "models"], "instbench: unknown option '--no-such-flag' (try: instbench --help)"),
                   (["--version=1"], "instbench: --version takes no value"),
                   (["nosuch"], "instbench: unknown command 'nosuch' (try: instbench --help)"),
                   (["models", "-vx"], "instbench models: unknown option '-x'")):
    p = run(*args)
    check(p.returncode == 2 and p.stderr.startswith(want) and p.stdout == "",
          f"{' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")
p = run("--help")
check(p.returncode == 0 and p.stdout.startswith("usage: instbench ") and "--version" in p.stdout,
      f"--help: exit {p.returncode}")
ref = run("models", "--format", "json").stdout
for args in (["-vv", "models"], ["-q", "--", "models"], ["models", "-qq"], ["-v", "models", "-vv"]):
    p = run(*args, "--format=json")
    check(p.returncode == 0 and p.stdout == ref, f"{' '.join(args)}: exit {p.returncode}: {p.stderr[-200:]}")
# -q and -v contradict each other wherever they stand (issue 13: a usage error, not the last one winning)
for args, who in ((["models", "-vq"], "instbench models"), (["-vq", "models"], "instbench"),
                  (["-q", "models", "-v"], "instbench models"), (["-v", "prices", "--quiet"], "instbench prices")):
    p = run(*args)
    check(p.returncode == 2 and p.stderr.startswith(f"{who}: -q and -v contradict each other") and p.stdout == "",
          f"{' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")

# Lists (comma-separated): each item checked, none empty or twice
for args, want in ((["--region", "us-east-1,us-east-1"], "--region: 'us-east-1' is listed twice"),
                   (["--region=, ,"], "--region needs a non-empty value"),
                   (["--region", "us-east-1,US-WEST-2"], "--region: 'US-WEST-2' is not a region"),
                   (["--instance-types=g5.xlarge,G5"], "--instance-types: 'G5' is not an instance type")):
    p = run("prices", "--source", "snapshot", *args)
    check(p.returncode == 2 and p.stderr.startswith("instbench prices: " + want),
          f"prices {' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")

# Lists given again add up, in every command (issue 13, as spotinfo's --region a --region b); an item
# repeated across the flags is still a typo.  A near miss of a flag or a choice names the real one.
p1 = run("prices", "--source", "snapshot", "--instance-types", "g5.xlarge", "--region", "us-east-1", "--format",
         "table", "--columns", "instance_type", "--columns", "region,on_demand_usd_per_hour")
head = p1.stdout.splitlines()[0].split() if p1.stdout else []
check(p1.returncode == 0 and head == ["INSTANCE", "TYPE", "REGION", "ON-DEMAND", "$/h"],
      f"repeated --columns: exit {p1.returncode}, header {head}: {p1.stderr[-200:]}")
p = run("prices", "--source", "snapshot", "--columns", "region", "--columns", "region")
check(p.returncode == 2 and "'region' is listed twice" in p.stderr, f"--columns twice over two flags: {p.stderr[-200:]}")
for args, want in ((["prices", "--instance-type", "g5.xlarge"], "did you mean --instance-types?"),
                   (["rank", "--regoin", "us-east-1", "r.json"], "did you mean --region?"),
                   (["prices", "--market", "spto"], "did you mean spot?"),
                   (["rank", "--sort", "troughput", "r.json"], "did you mean throughput?")):
    p = run(*args)
    check(p.returncode == 2 and want in p.stderr and p.stderr.count("\n") == 1,
          f"{' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")
# Choice values take any case (issue 21: --format CSV was refused), in every command; a wrong one in
# any case still names the nearest choice.
for args, same_as in ((["models", "--format", "JSON"], ["models", "--format", "json"]),
                      (["models", "--format=Csv", "--model", "vit_tiny_patch16_224"],
                       ["models", "--format=csv", "--model", "vit_tiny_patch16_224"]),
                      (["prices", "--source", "SNAPSHOT", "--format", "CSV", "--market", "Spot", "--instance-types",
                        "g5.xlarge", "--region", "us-east-1"],
                       ["prices", "--source", "snapshot", "--format", "csv", "--market", "spot", "--instance-types",
                        "g5.xlarge", "--region", "us-east-1"])):
    a, b = run(*args), run(*same_as)
    check(a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout and a.stdout,
          f"{' '.join(args)}: exit {a.returncode}, differs from {' '.join(same_as)}: {a.stderr.strip()[-200:]!r}")
for cmd, args, past in (("rank", ["--sort", "THROUGHPUT", "--format", "Csv", "--market", "ON-DEMAND",
                                  NO_RESULT], NO_RESULT),
                        ("verify", ["--backend", "CPU", "--precision", "FP32", "--format", "Json",
                                    "--reference", NO_REF], NO_REF),
                        ("measure", ["--backend", "Cpu", "--precision", "FP32", "--data", "DEVICE", "--optimizer",
                                     "AdamW", "--steps", "1", "--duration", "1"], "exclude each other")):
    p = run(cmd, *args)
    check(past in p.stderr and "is not" not in p.stderr, f"{cmd} {' '.join(args)}: a choice in another case refused: "
                                                           f"{p.stderr.strip()[-200:]!r}")
for args, want in ((["models", "--format", "JSNO"], "'JSNO' is not table, json or csv; did you mean json?"),
                   (["prices", "--market", "SPTO"], "did you mean spot?")):
    p = run(*args)
    check(p.returncode == 2 and want in p.stderr and p.stderr.count("\n") == 1,
          f"{' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")
# A word where a command takes no argument that is one flag's value (a choice in any case, a --model
# preset: timm's names) points at that flag; a word two flags take (prices: --market spot and
# --sort spot) or none is only unexpected.
for args, want in ((["models", "--layout", "vit_tiny_patch16_224"],
                    "unexpected argument 'vit_tiny_patch16_224'; did you mean --model vit_tiny_patch16_224?"),
                   (["measure", "vit_base_patch16_224", "--dry-run"],
                    "unexpected argument 'vit_base_patch16_224'; did you mean --model vit_base_patch16_224?"),
                   (["models", "JSON"], "unexpected argument 'JSON'; did you mean --format json?"),
                   (["verify", "fp32"], "unexpected argument 'fp32'; did you mean --precision fp32?"),
                   (["prices", "spot"], "unexpected argument 'spot' (try: instbench prices --help)"),
                   (["models", "vit_tiny_patch16"], "unexpected argument 'vit_tiny_patch16' (try:")):
    p = run(*args)
    check(p.returncode == 2 and want in p.stderr and p.stderr.count("\n") == 1 and not p.stdout,
          f"{' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")
# a flag with one accepted value names that value, rather than reading "'yes' is not ok"
p = run("measure", "--identity-mismatch", "yes")
check(p.returncode == 2 and "--identity-mismatch: 'yes' is not accepted: the one value --identity-mismatch takes is 'ok'"
      in p.stderr and p.stderr.count("\n") == 1, f"--identity-mismatch yes: {p.stderr.strip()!r}")
p = run("prices", "--bogus-flag")
check("did you mean" not in p.stderr, f"a flag close to nothing got a suggestion: {p.stderr.strip()!r}")

# One rule for what a region looks like, the same in every command: every real region (the
# snapshot's, and partitions and newer regions it lacks) passes, anything else is a usage error
REGIONS = ["us-east-1", "us-gov-west-1", "us-gov-east-1", "cn-north-1", "cn-northwest-1", "eu-central-2",
           "ap-southeast-5", "ap-southeast-7", "mx-central-1", "il-central-1", "ca-west-1", "eusc-de-east-1"]
NOT_REGIONS = ["us-east", "useast1", "US-EAST-1", "us-east-1a", "us_east_1", "-east-1", "us--east-1", "1-us-east"]
for r in REGIONS + NOT_REGIONS:
    ok = r in REGIONS
    for cmd, args, past in (("measure", ["--region", r, "--steps", "1", "--duration", "1"], "exclude each other"),
                            ("rank", [f"--region={r}", NO_RESULT], NO_RESULT),
                            ("prices", ["--region", r, "--source", "cache", "--instance-types", "zz9.nosuch"],
                             "instbench prices: ")):
        p = run(cmd, *args)
        if ok:
            check(past in p.stderr and "not a region" not in p.stderr, f"{cmd} rejects region {r}: {p.stderr[-200:]}")
        else:
            check(p.returncode == 2 and f"'{r}' is not a region like us-east-1" in p.stderr,
                  f"{cmd} accepts region {r!r}: exit {p.returncode}, {p.stderr.strip()[-200:]!r}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("cli_args: ok")
