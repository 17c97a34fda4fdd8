#!/usr/bin/env python3
"""docs/cli.md is what `instbench help --markdown` prints from the option tables, byte for byte,
so the reference cannot drift from --help; and README.md names every command and links the
reference; and README.md stays under 260 lines.  Usage: cli_docs.py INSTBENCH docs/cli.md README.md"""
import difflib
import re
import subprocess
import sys

binary, cli_md, readme = sys.argv[1:4]
failures = []
p = subprocess.run([binary, "help", "--markdown"], capture_output=True, text=True)
have = open(cli_md, encoding="utf-8").read()
if p.returncode != 0:
    failures.append(f"`instbench help --markdown` exited {p.returncode}: {p.stderr[-300:]}")
elif p.stdout != have:
    diff = "".join(list(difflib.unified_diff(have.splitlines(True), p.stdout.splitlines(True), "docs/cli.md",
                                             "instbench help --markdown"))[:40])
    failures.append("docs/cli.md is not what the option tables say; regenerate it with\n"
                    "    build/instbench help --markdown > docs/cli.md\n" + diff)
# a command without flags of its own (sweep: only subcommands) gets no flag table, not an empty one,
# and no help has two blank lines in a row (sweep's did, and docs/cli.md had a header with no rows)
if p.returncode == 0:
    for m in re.finditer(r"\| flag \| description \|\n\|---\|---\|\n(?!\| `)", p.stdout):
        section = p.stdout[:m.start()].rsplit("\n## ", 1)[-1].split("\n", 1)[0]
        failures.append(f"`instbench help --markdown`: '{section}' has a flag table with no rows")
    if "\n\n\n" in p.stdout:
        failures.append("`instbench help --markdown` has two blank lines in a row")
for cmd in ["measure", "prices", "rank", "verify", "models", "presign", "sweep", "sweep plan", "sweep run",
            "sweep status", "sweep cleanup"]:
    h = subprocess.run([binary, *cmd.split(), "--help"], capture_output=True, text=True)
    if "\n\n\n" in h.stdout:
        failures.append(f"`instbench {cmd} --help` has two blank lines in a row")
# every line of an example's comment is a comment: a wrapped one went on without its '#', a line a
# reader pasting the block would run (top-level --help's "./instbench-results/)")
for cmd in ["", "measure", "prices", "rank", "verify", "models", "presign", "sweep plan", "sweep run",
            "sweep status", "sweep cleanup"]:
    h = subprocess.run([binary, *cmd.split(), "--help"], capture_output=True, text=True)
    examples = h.stdout.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0] if "\nexamples:\n" in h.stdout else ""
    prev, who = "", " ".join(["instbench", *cmd.split()])
    for line in examples.splitlines():
        if not (line.startswith(("  # ", "  $ ")) or (prev.endswith("\\") and line.startswith("      "))):
            failures.append(f"`{who} --help`: an example line neither a comment nor a command: {line!r}")
        prev = line
if p.returncode == 0:
    for block in re.findall(r"```sh\n(.*?)```", p.stdout, re.S):
        prev = ""
        for line in block.splitlines():
            if not (line.startswith(("# ", "instbench ")) or prev.endswith("\\")):
                failures.append(f"`instbench help --markdown`: an example line neither a comment nor a command: "
                                f"{line!r}")
            prev = line
text = open(readme, encoding="utf-8").read()
for cmd in ["measure", "prices", "rank", "verify", "models"]:
    if f"`{cmd}`" not in text and f"instbench {cmd}" not in text:
        failures.append(f"README.md does not name the {cmd} command")
    if f"## instbench {cmd}" not in p.stdout:
        failures.append(f"the generated reference has no section for {cmd}")
if "docs/cli.md" not in text:
    failures.append("README.md does not link docs/cli.md")
# the README is a short front page; the detail lives in docs/ (issue 32: it had grown to 327 lines)
if len(text.splitlines()) >= 260:
    failures.append(f"README.md has {len(text.splitlines())} lines: keep it under 260 and move detail to docs/")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
