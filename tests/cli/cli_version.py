"""`instbench --version` names what this build runs on, each fact checked against a source that is
not instbench: the project version CMake was given and the source revision the build recorded
(cmake/revision.cmake's text file; naming a commit git has in the source tree, and known where git
answers there: testlib.build_revision), Debian's libdnnl2 package version, the CPU's
flags in /proc/cpuinfo (with DNNL_MAX_CPU_ISA=AVX2 the ISA is avx2 and bf16 is emulated), nvcc's
release and the NCCL version macros of nccl.h read here.  The binary copied alone into an empty
directory reports its CUDA module missing, and so does a build of the CUDA host code only
(INSTBENCH_CUDA_HOST_ONLY: the ASan+UBSan build), which has no module anywhere.
Usage: cli_version.py INSTBENCH PROJECT_VERSION CUDA(ON|HOST_ONLY|OFF) NCCL_H(or "") SOURCE_DIR REVISION_TEXT"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib
from testlib import build_revision, check, failures, short_revision  # noqa: E402

BIN, VERSION, CUDA_MODE, NCCL_H, SRC, REVISION = sys.argv[1:7]
CUDA, MODULE = CUDA_MODE in ("ON", "HOST_ONLY"), CUDA_MODE == "ON"   # built with CUDA; its module beside it


def version(binary, *flags, env=None):
    e = dict(os.environ, **(env or {}))
    e.pop("ONEDNN_MAX_CPU_ISA", None)
    p = subprocess.run([binary, *flags, "--version"], capture_output=True, text=True, env=e, timeout=60)
    check(p.returncode == 0, f"--version {flags}: exit {p.returncode}: {p.stderr}")
    return p.stdout.splitlines()


lines = version(BIN, env={"DNNL_MAX_CPU_ISA": "AVX2"})
check(len(lines) == 3, f"three lines, got {lines}")
rev, wrong = build_revision(REVISION, SRC)
check(not wrong, wrong)
want = f"instbench {VERSION} (revision {short_revision(rev)})"
check(lines[0] == want, f"first line {lines[0]!r}, want {want!r} (the build recorded {rev or 'unknown'})")
cpu = lines[1] if len(lines) > 1 else ""
dpkg = shutil.which("dpkg-query") and subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libdnnl2"],
                                                     capture_output=True, text=True)
if dpkg and dpkg.returncode == 0 and dpkg.stdout:
    upstream = dpkg.stdout.split("-")[0]
    check(f"oneDNN {upstream}," in cpu, f"oneDNN version: {cpu!r}, Debian's libdnnl2 is {dpkg.stdout}")
flags = set()
for line in open("/proc/cpuinfo"):
    if line.startswith("flags"):
        flags = set(line.split(":", 1)[1].split())
        break
if "avx2" in flags:
    check("CPU ISA avx2 (capped by AVX2)" in cpu, f"DNNL_MAX_CPU_ISA=AVX2 on an AVX2 CPU: {cpu!r}")
    check(cpu.endswith("bf16 emulated (fp32 GEMMs)"), f"bf16 under an AVX2 cap must be emulated: {cpu!r}")
if not {"avx512_bf16", "amx_bf16", "avx512f"} & flags:
    native = version(BIN)
    check(len(native) > 1 and "bf16 emulated" in native[1] and "capped" not in native[1],
          f"no AVX-512 here, so bf16 is emulated with no cap: {native}")

gpu = lines[2] if len(lines) > 2 else ""
if not CUDA:
    check(gpu.startswith("cuda: not in this build"), f"CPU-only build: {gpu!r}")
else:
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True) if shutil.which("nvcc") else None
    m = nv and re.search(r"release (\d+\.\d+)", nv.stdout)
    if m:
        check(re.match(rf"cuda: built with CUDA {re.escape(m.group(1))}\b", gpu), f"nvcc is {m.group(1)}: {gpu!r}")
    if NCCL_H and os.path.exists(NCCL_H):
        h = open(NCCL_H).read()
        v = [re.search(rf"#define NCCL_{k}\s+(\d+)", h) for k in ("MAJOR", "MINOR", "PATCH")]
        if all(v):
            want = ".".join(x.group(1) for x in v)
            check(f", NCCL {want};" in gpu, f"nccl.h says {want}: {gpu!r}")
    where = "beside the binary" if MODULE else "missing"
    check(gpu.endswith(f"module libinstbench-cuda.so {where}"), f"the build's module {where}?: {gpu!r}")
    with tempfile.TemporaryDirectory() as d:
        alone = os.path.join(d, "instbench")
        shutil.copy2(BIN, alone)
        out = version(alone)
        check(len(out) == 3 and out[2].endswith("module libinstbench-cuda.so missing"), f"alone: {out}")
        # INSTBENCH_CUDA_MODULE names the module a run loads: the line names that file, not the one
        # beside the binary
        module = os.path.join(os.path.dirname(os.path.abspath(BIN)), "libinstbench-cuda.so")
        out = version(alone, env={"INSTBENCH_CUDA_MODULE": module})
        named = f"module {module} (INSTBENCH_CUDA_MODULE)" + ("" if MODULE else " missing")
        check(len(out) == 3 and out[2].endswith(named), f"named: {out}")
        out = version(BIN, env={"INSTBENCH_CUDA_MODULE": os.path.join(d, "none.so")})
        check(len(out) == 3 and out[2].endswith(f"module {os.path.join(d, 'none.so')} (INSTBENCH_CUDA_MODULE) missing"),
              f"named, absent: {out}")

print("cli_version: " + ("all checks passed" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
