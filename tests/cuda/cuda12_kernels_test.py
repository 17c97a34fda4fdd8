#!/usr/bin/env python3
"""scripts/ci/check_cuda12_kernels.sh: the real kernels compile with CUDA 12.9's NVRTC and ptxas for
every architecture the build targets, and the check fails on a kernel file with a warning (an
unused variable, #177-D, which nvcc --Werror=all-warnings rejects) naming the file.
Usage: cuda12_kernels_test.py REPO_ROOT"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), d)
                for d in ("lib", "fakes")]
from testlib import check, failures  # noqa: E402

ROOT = os.path.abspath(sys.argv[1])
SCRIPT = os.path.join(ROOT, "scripts", "ci", "check_cuda12_kernels.sh")
# CMAKE_CUDA_ARCHITECTURES' default in CMakeLists.txt with nvcc >= 12.8 (Blackwell: 10.0, 12.0)
ARCHS = ["75", "80", "86", "89", "90", "100", "120"]

with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run(["bash", SCRIPT, "--out", os.path.join(tmp, "out")], capture_output=True, text=True,
                       timeout=800)
    if p.returncode == 77:
        print(p.stdout.strip())
        sys.exit(77)
    check(p.returncode == 0, "check_cuda12_kernels.sh exit %d:\n%s\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-2000:]))
    check("NVRTC 12.9" in p.stdout, "not NVRTC 12.9: %s" % p.stdout[:200])
    cmake = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    check(re.search(r"set\(CMAKE_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90 100-real 120\)", cmake)
          is not None,
          "CMakeLists.txt's default architectures changed: update ARCHS here and in the script")
    cus = sorted(glob.glob(os.path.join(ROOT, "kernels", "*.cu")))
    check(len(cus) > 0, "no kernels/*.cu under %s: nothing was checked" % ROOT)
    for cu in cus:
        rel = os.path.relpath(cu, ROOT)
        kernels = len(re.findall(r"__global__", open(cu).read()))
        for arch in ARCHS:
            m = re.search(r"^ok   %s sm_%s: (\d+) kernels$" % (re.escape(rel), arch), p.stdout, re.M)
            check(m is not None, "%s sm_%s: not compiled" % (rel, arch))
            # each __global__ template is instantiated once per head dim: at least one entry per kernel
            check(m is None or int(m.group(1)) >= kernels, "%s sm_%s: %s PTX entries for %d kernels"
                  % (rel, arch, m.group(1) if m else "?", kernels))

    # a kernel file with a warning fails the check, naming it (one architecture: the warning is
    # NVRTC's, before any architecture's ptxas; all seven cost 6 CPU-seconds more)
    kdir = os.path.join(tmp, "kernels")
    os.makedirs(kdir)
    shutil.copy(os.path.join(ROOT, "kernels", "common.cuh"), kdir)
    src = open(os.path.join(ROOT, "kernels", "gelu.cu")).read()
    bad = re.sub(r"(__global__[^{]*\{)", r"\1\n    int never_read = 1;", src, count=1)
    check(bad != src, "gelu.cu has no kernel to plant the warning in")
    open(os.path.join(kdir, "gelu.cu"), "w").write(bad)
    p = subprocess.run(["bash", SCRIPT, "--kernels", kdir, "--out", os.path.join(tmp, "out2"), "--arch", "80"],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 1 and "FAIL" in p.stdout and "gelu.cu" in p.stdout and "#177" in p.stdout,
          "a kernel with an unused variable: exit %d\n%s" % (p.returncode, p.stdout[-1500:]))

print("cuda12_kernels: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
