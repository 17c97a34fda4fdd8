#!/usr/bin/env python3
"""The coverage a CPU-run CUDA test reaches in the backend's own sources (issue 12: every kernel
of kernels/ and every function of src/cuda/gemm.c executes without a GPU).  Reads gcov's
JSON for the .gcda files a --coverage build of the test left under OBJDIR, prints the line
coverage of each source whose path contains one of PATHS, and fails when a function defined in
one of them never ran or a source is below MIN percent of its lines.
Usage: coverage_report.py OBJDIR MIN PATH...    (e.g. src/cuda/gemm.c kernels/)"""
import json
import os
import subprocess
import sys

objdir, floor, wanted = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
gcdas = [os.path.join(d, f) for d, _, fs in os.walk(objdir) for f in fs if f.endswith(".gcda")]
if not gcdas:
    sys.exit("coverage_report: no .gcda under %s: did the test run?" % objdir)

lines, functions = {}, {}   # path -> {line: count}; path -> {name: count}
for gcda in gcdas:
    out = subprocess.run(["gcov", "--json-format", "--stdout", "-o", os.path.dirname(gcda), gcda],
                         capture_output=True, text=True, check=True).stdout
    for doc in out.splitlines():
        for f in json.loads(doc)["files"]:
            path = f["file"]
            if not any(w in path for w in wanted):
                continue
            ls, fs = lines.setdefault(path, {}), functions.setdefault(path, {})
            for ln in f["lines"]:   # a header's lines can come from several objects: add them up
                ls[ln["line_number"]] = ls.get(ln["line_number"], 0) + ln["count"]
            for fn in f["functions"]:
                name = fn.get("demangled_name") or fn["name"]
                fs[name] = fs.get(name, 0) + fn["execution_count"]

if not lines:
    sys.exit("coverage_report: nothing of %s was compiled with --coverage" % ", ".join(wanted))
total = run = 0
never, low = [], []
for path in sorted(lines):
    n, hit = len(lines[path]), sum(1 for c in lines[path].values() if c)
    total, run = total + n, run + hit
    pct = 100.0 * hit / n if n else 100.0
    fs = functions[path]
    print("%-44s %6.2f%% of %4d lines, %d of %d functions run" % (os.path.relpath(path), pct, n,
                                                                  sum(1 for c in fs.values() if c), len(fs)))
    never += ["%s (%s)" % (name, os.path.basename(path)) for name, c in sorted(fs.items()) if not c]
    if pct < floor:
        low.append(os.path.relpath(path))
print("all: %.2f%% of %d lines; functions never run: %s" % (100.0 * run / max(total, 1), total,
                                                           ", ".join(never) if never else "none"))
problems = (["functions never run: " + ", ".join(never)] if never else []) + \
           (["below %g%% of lines: %s" % (floor, ", ".join(low))] if low else [])
if problems:
    sys.exit("coverage_report: " + "; ".join(problems))
