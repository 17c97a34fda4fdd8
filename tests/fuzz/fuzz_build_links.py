#!/usr/bin/env python3
"""A fuzz build (-DINSTBENCH_FUZZ=ON with clang, what scripts/ci/run_fuzzers.sh configures) builds
whole: its modules are compiled with ASan, UBSan and libFuzzer's coverage callbacks, so every
program that links one of them (instbench, the unit tests, the fuzzers) must link the sanitizer
runtime too, or `cmake --build build-fuzz` fails linking it with thousands of undefined __asan_* and
__sanitizer_cov_* references.  Configured only, not compiled (a compile is minutes): the instrumented
libraries and each executable's link line are read from CMake's file API (codemodel-v2), and the
instrumented ones are those compiled with -fsanitize=fuzzer-no-link, whatever the list in
tests/fuzz/fuzz.cmake says.  Configured with the CUDA module asked for: a fuzz build builds none, and
says so on one line (nvcc cannot compile it with the instrumentation, and a shared module can carry
no runtime the fuzz build's programs load: CMakeLists.txt), so no shared library links an
instrumented module, and the configure needs no nvcc.  Exit 77 (skipped) without clang.
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
p = subprocess.run([CMAKE, "-S", SRC, "-B", d, "-DCMAKE_C_COMPILER=clang", "-DINSTBENCH_FUZZ=ON",
                    "-DINSTBENCH_CUDA=ON"], capture_output=True, text=True, timeout=300)
if p.returncode != 0:
    check(False, f"configuring a fuzz build with -DINSTBENCH_CUDA=ON: exit {p.returncode}: {p.stderr[-800:]}")
    sys.exit(1)
said = [ln for ln in p.stdout.splitlines() + p.stderr.splitlines()
        if "INSTBENCH_FUZZ=ON" in ln and "no CUDA module" in ln and "INSTBENCH_CUDA=OFF" in ln]
check(said, f"the configure did not say on one line that INSTBENCH_CUDA=ON was turned off: {p.stderr[-800:]}")

reply = os.path.join(d, ".cmake", "api", "v1", "reply")
index = json.load(open(sorted(glob.glob(os.path.join(reply, "index-*.json")))[-1]))
model = json.load(open(os.path.join(reply, index["reply"]["codemodel-v2"]["jsonFile"])))
targets = [json.load(open(os.path.join(reply, t["jsonFile"]))) for t in model["configurations"][0]["targets"]]


def compile_flags(t):
    return " ".join(f["fragment"] for g in t.get("compileGroups", []) for f in g.get("compileCommandFragments", []))


instrumented = {t["nameOnDisk"] for t in targets
                if t["type"] == "STATIC_LIBRARY" and "-fsanitize=fuzzer-no-link" in compile_flags(t)}
check("libinstbench_util.a" in instrumented, f"the modules are not instrumented: {sorted(instrumented)}")


def link_of(t):
    """T's link fragments, and the instrumented libraries among them."""
    frags = t.get("link", {}).get("commandFragments", [])
    return frags, {os.path.basename(f["fragment"]) for f in frags if f["role"] == "libraries"} & instrumented


linking = 0
for t in targets:
    if t["type"] != "EXECUTABLE":
        continue
    frags, libs = link_of(t)
    if not libs:
        continue
    linking += 1
    runtime = [f["fragment"] for f in frags
               if f["fragment"].startswith("-fsanitize=") and "address" in f["fragment"].split("=", 1)[1].split(",")]
    check(runtime, f"{t['name']} links {sorted(libs)[0]} (instrumented) without the sanitizer runtime: "
                   f"its link flags are {[f['fragment'] for f in frags if f['role'] == 'flags']}")
# a shared module gets no sanitizer runtime from clang, and one linked by g++ gets GCC's, which the
# programs, on clang's, refuse to load
for t in targets:
    if t["type"] in ("MODULE_LIBRARY", "SHARED_LIBRARY"):
        libs = link_of(t)[1]
        check(not libs, f"{t['name']} ({t['nameOnDisk']}), a shared library, links {sorted(libs)} (instrumented): "
                        "no runtime it can carry is one the fuzz build's programs load")
names = {t["name"] for t in targets}
check("instbench_cuda" not in names, "the fuzz build builds the CUDA module (asked for with -DINSTBENCH_CUDA=ON)")
# the program a developer builds first, and one of each kind of program besides
check({"instbench", "fuzz_markets", "rank_unit"} <= names, f"targets missing from the fuzz build: {sorted(names)[:20]}")
print(f"fuzz_build_links: {linking} executables link instrumented modules")
check(linking >= 3, "too few executables link the instrumented modules for this check to mean anything")
shutil.rmtree(d, ignore_errors=True)
print(f"fuzz_build_links: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
