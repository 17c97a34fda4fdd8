#!/usr/bin/env python3
"""scripts/ci/audit_cuda_module.py on the module this build made (no finding), then on its own
resource dump with one planted fault of each kind (must be reported, naming the kernel):
static shared memory over 48 KiB, local memory (a spill), registers x block size over 65,536
(a block size of one integer, and of a dim3).
The DT_NEEDED list is checked against the sonames docs/design.md documents.
Usage: cuda_audit_test.py REPO_ROOT MODULE CUDA_MAJOR NCCL(0|1)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), d)
                for d in ("lib", "fakes")]
from testlib import check, failures  # noqa: E402

ROOT, MODULE, MAJOR, NCCL = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3], sys.argv[4]
AUDIT = [sys.executable, os.path.join(ROOT, "scripts", "ci", "audit_cuda_module.py")]

with tempfile.TemporaryDirectory() as tmp:
    dump = os.path.join(tmp, "usage.txt")
    p = subprocess.run(AUDIT + [MODULE, "--cuda-major", MAJOR, "--nccl", NCCL, "--save-dump", dump],
                       capture_output=True, text=True, timeout=300)
    if p.returncode == 77:
        print(p.stdout.strip())
        sys.exit(77)
    check(p.returncode == 0, "the audit of %s: exit %d\n%s%s" % (MODULE, p.returncode, p.stdout[-3000:], p.stderr[-1500:]))
    m = re.search(r"audit: DT_NEEDED (.*)", p.stdout)
    design = open(os.path.join(ROOT, "docs", "design.md")).read()
    for so in (m.group(1).split() if m else []):
        if re.match(r"lib(cudart|cublas|cublasLt|nccl)\.so", so):
            check(so.replace(MAJOR, "N") in design or so in design, "docs/design.md does not document %s" % so)

    text = open(dump).read()
    # one fault of each kind, in the sm_80 ELF section (the second "Fatbin elf code" with arch sm_80)
    def plant(text, func, field, value):
        pat = re.compile(r"(Function %s\w*:\n\s*REG:\d+ STACK:\d+ SHARED:\d+ LOCAL:\d+)" % func)
        out, n = [], 0
        for part in re.split(r"(?=Fatbin elf code)", text):
            # the part's own ELF header, not the next PTX section's that follows it in the text
            if n == 0 and re.match(r"Fatbin elf code:\s*=+\s*arch = sm_80\b", part) and pat.search(part):
                part = pat.sub(lambda mm: re.sub(r"%s:\d+" % field, "%s:%d" % (field, value), mm.group(1)), part,
                               count=1)
                n = 1
            out.append(part)
        check(n == 1, "no %s in an sm_80 section of the dump" % func)
        return "".join(out)

    # 255 registers (the most a thread can have) x 256 threads still fit an SM's 65,536: the
    # register case also launches adam_kernel with 512 threads (a copy of the kernel sources)
    kdir = os.path.join(tmp, "kernels")
    shutil.copytree(os.path.join(ROOT, "kernels"), kdir)
    adam = open(os.path.join(kdir, "adam.cu")).read()
    adam512 = re.sub(r"(CUK_LAUNCH\(adam_kernel, cuk_blocks\(n, 256\)), 256,", r"\1, 512,", adam)
    check(adam512 != adam, "adam.cu's launch site changed: update this test")
    open(os.path.join(kdir, "adam.cu"), "w").write(adam512)
    # and a block given as a dim3 (the bf16 column sums' 32 x 2), made 32 x 16
    bias = open(os.path.join(kdir, "bias.cu")).read()
    bias512 = bias.replace("dim3(COLSUM_X8_LANES, COLSUM_X8_CHUNKS)", "dim3(COLSUM_X8_LANES, 16)")
    check(bias512 != bias, "bias.cu's dim3 launch site changed: update this test")
    open(os.path.join(kdir, "bias.cu"), "w").write(bias512)
    here = os.path.join(ROOT, "kernels")
    cases = [("_Z11adam_kernel", "LOCAL", 64, "local memory", here),
             ("_Z11adam_kernel", "SHARED", 50000, "static shared memory", here),
             ("_Z11adam_kernel", "REG", 255, "registers x 512 threads", kdir),
             ("_Z20colsum_bf16x8_kernel", "REG", 255, "registers x 512 threads", kdir)]
    clean = subprocess.run(AUDIT + [MODULE, "--cuda-major", MAJOR, "--dump", dump], capture_output=True, text=True)
    check(clean.returncode == 0, "the saved dump alone: %s" % clean.stdout[-800:])
    for func, field, value, words, kernels in cases:
        bad = os.path.join(tmp, "bad.txt")
        open(bad, "w").write(plant(text, func, field, value))
        q = subprocess.run(AUDIT + [MODULE, "--cuda-major", MAJOR, "--dump", bad, "--kernels", kernels],
                           capture_output=True, text=True)
        check(q.returncode == 1 and re.search(r"FAIL %s\w* sm_80.*%s" % (func, re.escape(words)), q.stdout),
              "%s %s=%d: not reported (exit %d)\n%s" % (func, field, value, q.returncode, q.stdout[-800:]))

print("cuda_audit: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
