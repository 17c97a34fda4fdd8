#!/usr/bin/env python3
"""A fuzz build (-DINSTBENCH_FUZZ=ON with clang, what scripts/ci/run_fuzzers.sh configures) builds
whole: its modules are compiled with ASan, UBSan and libFuzzer's coverage callbacks, so every
program that links one of them (instbench, the unit tests, the fuzzers) must link the sanitizer
runtime too, or `cmake --build build-fuzz` fails linking it with thousands of undefined __asan_* and
__sanitizer_cov_* references.  Configured only, not compiled (a compile is minutes): the instrumented
libraries and each executable's link line are read from CMake's file API (codemodel-v2), and the
instrumented ones are those compiled with -fsanitize=fuzzer-no-link, whatever the list in
tests/fuzz/fuzz.cmake says.  Exit 77 (skipped) without clang.
Usage: fuzz_build_links.py CMAKE SOURCE_DIR"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import check, failures  # noqa: E402

CMAKE, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
if not shutil.which("clang"):
    print("fuzz_build_links: no clang on PATH, skipped")
    sys.exit(77)
d = tempfile.mkdtemp(prefix="fuzz-build-")
query = os.path.join(d, ".cmake", "api", "v1", "query")
os.makedirs(query)
open(os.path.join(query, "codemodel-v2"), "w").close()
p = subprocess.run([CMAKE, "-S", SRC, "-B", d, "-DCMAKE_C_COMPILER=clang", "-DINSTBENCH_FUZZ=ON", "-DINSTBENCH_CUDA=OFF"],
                   capture_output=True, text=True, timeout=300)
if p.returncode != 0:
    check(False, f"configuring a fuzz build: exit {p.returncode}: {p.stderr[-800:]}")
    sys.exit(1)

reply = os.path.join(d, ".cmake", "api", "v1", "reply")
index = json.load(open(sorted(glob.glob(os.path.join(reply, "index-*.json")))[-1]))
model = json.load(open(os.path.join(reply, index["reply"]["codemodel-v2"]["jsonFile"])))
targets = [json.load(open(os.path.join(reply, t["jsonFile"]))) for t in model["configurations"][0]["targets"]]


def compile_flags(t):
    return " ".join(f["fragment"] for g in t.get("compileGroups", []) for f in g.get("compileCommandFragments", []))


instrumented = {t["nameOnDisk"] for t in targets
                if t["type"] == "STATIC_LIBRARY" and "-fsanitize=fuzzer-no-link" in compile_flags(t)}
check("libinstbench_util.a" in instrumented, f"the modules are not instrumented: {sorted(instrumented)}")
linking = 0
for t in targets:
    if t["type"] != "EXECUTABLE":
        continue
    frags = t.get("link", {}).get("commandFragments", [])
    libs = {os.path.basename(f["fragment"]) for f in frags if f["role"] == "libraries"} & instrumented
    if not libs:
        continue
    linking += 1
    runtime = [f["fragment"] for f in frags
               if f["fragment"].startswith("-fsanitize=") and "address" in f["fragment"].split("=", 1)[1].split(",")]
    check(runtime, f"{t['name']} links {sorted(libs)[0]} (instrumented) without the sanitizer runtime: "
                   f"its link flags are {[f['fragment'] for f in frags if f['role'] == 'flags']}")
names = {t["name"] for t in targets}
# the program a developer builds first, and one of each kind of program besides
check({"instbench", "fuzz_markets", "rank_unit"} <= names, f"targets missing from the fuzz build: {sorted(names)[:20]}")
print(f"fuzz_build_links: {linking} executables link instrumented modules")
check(linking >= 3, "too few executables link the instrumented modules for this check to mean anything")
shutil.rmtree(d, ignore_errors=True)
print(f"fuzz_build_links: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
