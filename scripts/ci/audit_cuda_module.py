#!/usr/bin/env python3
"""Static audit of the built CUDA module (libinstbench-cuda.so), what a GPU would refuse or
punish before a kernel runs, read from the binary with cuobjdump and readelf (issue 25):
  - static shared memory per kernel and architecture <= 48 KiB (above it a static allocation
    does not link; dynamic memory above it needs an opt-in the launchers do not make)
  - registers x block size <= 65,536 (the register file of one SM on 7.5-9.0: a block that
    needs more fails to launch, "too many resources requested"); block sizes from the launch
    sites in kernels/*.cu (CUK_LAUNCH's third argument, an integer expression or a dim3 of
    them, the file's #defines and the kernel's template arguments substituted)
  - no local memory (register spills or local arrays: slow, and a sign a tile got too big)
  - every kernel also as compute_90 PTX (GPUs newer than Hopper JIT-compile it), and as PTX of
    the newest architecture with SASS in the module (compute_120 with nvcc >= 12.8)
  - the module's DT_NEEDED sonames are the documented ones (docs/design.md, "The CUDA module")
cuobjdump comes from PyPI's nvidia-cuda-cuobjdump (scripts/ci/cuda_tools_env.sh audit) unless
--cuobjdump names one.  Exit 0 all good, 1 a finding, 77 no cuobjdump could be installed
(outside CI; see check_cuda12_kernels.sh for the rule).

usage: audit_cuda_module.py MODULE --cuda-major N [--nccl 0|1] [--cuobjdump PATH] [--dump FILE]
       [--save-dump FILE] [--max-shared BYTES]
  --dump reads a saved cuobjdump --dump-resource-usage output instead of the module's (the
  resource checks only), --save-dump saves the module's"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REGFILE = 65536


def demangle_base(mangled):
    """(name, [int template args]) of an Itanium-mangled free function: _Z11some_kernelILi32ELi4EE..."""
    m = re.match(r"_Z(\d+)", mangled)
    if not m:
        return mangled, []
    n = int(m.group(1))
    start = m.end()
    name = mangled[start:start + n]
    rest = mangled[start + n:]
    args = [int(x) for x in re.findall(r"Li(-?\d+)E", rest.split("EE")[0] + "E")] if rest.startswith("I") else []
    return name, args


def split_args(text):
    """Top-level comma split of a macro argument list (parentheses and angle brackets nest)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def launch_sites(kernel_dir):
    """{kernel name: [(block expression, {name: value} of the file's int #defines, template
    parameter names of the kernel, file)]}"""
    sites = {}
    for path in sorted(glob.glob(os.path.join(kernel_dir, "*.cu"))):
        src = open(path).read()
        defines = {k: int(v) for k, v in re.findall(r"^#define (\w+) (\d+)\b", src, re.M)}
        tparams = {}
        for params, name in re.findall(r"template\s*<([^>]*)>\s*__global__[^(]*?\b(\w+)\s*\(", src):
            tparams[name] = [p.split()[-1] for p in params.split(",")]
        for m in re.finditer(r"CUK_LAUNCH\(", src):
            depth, i = 1, m.end()
            while depth:
                depth += {"(": 1, ")": -1}.get(src[i], 0)
                i += 1
            args = split_args(src[m.end():i - 1])
            kernel = re.match(r"\(?\s*(\w+)", args[0]).group(1)
            sites.setdefault(kernel, []).append((args[2], defines, tparams.get(kernel, []), os.path.basename(path)))
    return sites


def block_size(sites, name, targs):
    """Largest block size any launch site of kernel `name` (template args targs) uses, or None."""
    best = None
    for expr, defines, tnames, _ in sites.get(name, []):
        env = dict(defines)
        env.update({t: v for t, v in zip(tnames, targs)})
        # a block of dim3(x, y[, z]) holds x*y*z threads
        d3 = re.fullmatch(r"\s*dim3\s*\((.*)\)\s*", expr)
        parts = split_args(d3.group(1)) if d3 else [expr]
        v = 1
        for part in parts:
            if not re.fullmatch(r"[\w\s*+()-]+", part):
                return None
            try:
                v *= eval(part, {"__builtins__": {}}, env)   # only names, integers and + - * ( )
            except (NameError, SyntaxError, TypeError):
                return None
        best = v if best is None else max(best, v)
    return best


def parse_usage(text):
    """[(arch, mangled, {REG, STACK, SHARED, LOCAL})] of the ELF (SASS) sections."""
    rows, arch, kind = [], None, None
    for line in text.splitlines():
        if line.startswith("Fatbin elf code"):
            kind = "elf"
        elif line.startswith("Fatbin ptx code"):
            kind = "ptx"
        m = re.match(r"arch = sm_(\d+)", line)
        if m:
            arch = int(m.group(1))
        m = re.match(r"\s*Function (\S+):", line)
        if m and kind == "elf":
            fn = m.group(1)
        m2 = re.match(r"\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", line)
        if m2 and kind == "elf":
            rows.append((arch, fn, dict(zip(("REG", "STACK", "SHARED", "LOCAL"), map(int, m2.groups())))))
    return rows


def find_cuobjdump():
    p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "ci", "cuda_tools_env.sh"), "audit"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None
    hits = glob.glob(os.path.join(p.stdout.strip(), "*", "bin", "cuobjdump"))
    return hits[0] if hits else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--cuda-major", type=int, required=True)
    ap.add_argument("--nccl", type=int, default=1)
    ap.add_argument("--cuobjdump")
    ap.add_argument("--dump")
    ap.add_argument("--save-dump")
    ap.add_argument("--max-shared", type=int, default=48 * 1024)
    ap.add_argument("--kernels", default=os.path.join(ROOT, "kernels"))
    a = ap.parse_args()
    findings = []

    def finding(msg):
        findings.append(msg)
        print("FAIL " + msg)

    tool = a.cuobjdump or (None if a.dump else find_cuobjdump())
    if not a.dump and not tool:
        ci = os.environ.get("CI", "") not in ("", "false", "0") and os.environ.get("INSTBENCH_SKIP_CUDA12") != "1"
        print("%s: audit_cuda_module: no cuobjdump (scripts/ci/cuda_tools_env.sh audit could not install it)"
              % ("FAIL" if ci else "SKIP"))
        return 1 if ci else 77
    usage = open(a.dump).read() if a.dump else subprocess.run(
        [tool, "--dump-resource-usage", a.module], capture_output=True, text=True, check=True).stdout
    if a.save_dump:
        open(a.save_dump, "w").write(usage)
    rows = parse_usage(usage)
    if not rows:
        finding("no kernels in %s's fatbinary" % a.module)
    sites = launch_sites(a.kernels)
    archs = sorted({r[0] for r in rows})
    for arch, fn, u in rows:
        name, targs = demangle_base(fn)
        where = "%s sm_%d" % (fn, arch)
        if u["SHARED"] > a.max_shared:
            finding("%s: %d bytes of static shared memory, over %d" % (where, u["SHARED"], a.max_shared))
        if u["LOCAL"] or u["STACK"]:
            finding("%s: %d bytes of local memory, %d of stack (spills or local arrays)" % (where, u["LOCAL"], u["STACK"]))
        bs = block_size(sites, name, targs)
        if bs is None:
            finding("%s: no launch site in %s whose block size can be read" % (where, a.kernels))
        elif u["REG"] * bs > REGFILE:
            finding("%s: %d registers x %d threads = %d, over the %d of an SM" % (where, u["REG"], bs, u["REG"] * bs,
                                                                                  REGFILE))
    if not a.dump:
        ptx = subprocess.run([tool, "--dump-ptx", a.module], capture_output=True, text=True, check=True).stdout
        # compute_90 PTX for any GPU after Hopper; and, where the build has SASS past 9.0 (Blackwell,
        # nvcc >= 12.8), PTX of the newest architecture built too, for what comes after it
        newest = max(archs) if archs else 90
        for want in sorted({90, newest}):
            entries = set()
            for part in re.split(r"\nFatbin ptx code:", ptx):
                if re.search(r"arch = sm_%d\b" % want, part):
                    entries |= set(re.findall(r"\.entry (\w+)\(", part))
            for fn in sorted({fn for _, fn, _ in rows} - entries):
                finding("%s: no compute_%d PTX (GPUs newer than sm_%d could not JIT it)" % (fn, want, want))
        dyn = subprocess.run(["readelf", "-d", a.module], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
        cuda = ["libcudart.so.%d" % a.cuda_major, "libcublasLt.so.%d" % a.cuda_major, "libcublas.so.%d" % a.cuda_major]
        want = set(cuda + (["libnccl.so.2"] if a.nccl else []) + ["libstdc++.so.6", "libgcc_s.so.1", "libc.so.6",
                                                                    "libm.so.6"])
        # ld-linux: glibc's loader, for __tls_get_addr (the cuDNN glue's C++ thread-local state)
        extra = sorted(set(needed) - want - {"libdl.so.2", "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2",
                                             "ld-linux-aarch64.so.1"})
        missing = sorted(want - set(needed) - {"libm.so.6", "libgcc_s.so.1", "libstdc++.so.6"})
        if extra or missing:
            finding("DT_NEEDED %s: undocumented %s, missing %s" % (needed, extra, missing))
        print("audit: DT_NEEDED %s" % " ".join(needed))
    print("audit: %d kernels x %d architectures (%s), %d finding(s)" % (len({fn for _, fn, _ in rows}), len(archs),
          ",".join("sm_%d" % x for x in archs), len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
