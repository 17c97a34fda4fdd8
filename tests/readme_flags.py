#!/usr/bin/env python3
"""The README documents every command and flag: each --flag that `instbench <cmd> --help` prints
must appear in README.md, and each command's help must exit 0.  Keeps the README true as flags
are added.  usage: readme_flags.py INSTBENCH README.md"""
import re
import subprocess
import sys

binary, readme_path = sys.argv[1], sys.argv[2]
readme = open(readme_path, encoding="utf-8").read()
missing = []
for cmd in ["measure", "prices", "rank", "verify", "models"]:
    p = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True)
    if p.returncode != 0:
        missing.append(f"`instbench {cmd} --help` exited {p.returncode}")
        continue
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", p.stdout))
    if len(flags) < 2:
        missing.append(f"`instbench {cmd} --help` lists no flags")
    for f in sorted(flags):
        if f not in readme:
            missing.append(f"{cmd} {f}")
    if f"instbench {cmd}" not in readme:
        missing.append(f"no section for instbench {cmd}")
for m in missing:
    print("README lacks:", m)
print(f"{0 if missing else 1} passed, {1 if missing else 0} failed")
sys.exit(1 if missing else 0)
