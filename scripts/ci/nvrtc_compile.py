#!/usr/bin/env python3
"""Compiles CUDA kernel files with NVRTC (the CUDA front end, as a library) to PTX and then with
ptxas to SASS for each architecture, warnings as errors at both stages, as nvcc
--Werror=all-warnings would: NVRTC has no -Werror, so any "warning" in its log fails the file.
Driven by scripts/ci/check_cuda12_kernels.sh (which says why the wheels' tools, not nvcc).

usage: nvrtc_compile.py --nvrtc LIBNVRTC --ptxas PTXAS --arch 75,80,... --pre-include H
                        [-I DIR]... [-D NAME=VAL]... --out DIR FILE.cu...
Prints one line per file and architecture; writes OUT/<file>.<arch>.ptx, .cubin and .ptxas.log
(ptxas -v: registers, shared memory, spills); exit 1 on any error or warning."""
import argparse
import ctypes
import os
import subprocess
import sys


def nvrtc_version(lib):
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return "%d.%d" % (major.value, minor.value)


def nvrtc_ptx(lib, path, options):
    """(ok, log, ptx) for one translation unit."""
    prog = ctypes.c_void_p()
    src = open(path, "rb").read()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, path.encode(), 0, None, None) != 0:
        return False, "nvrtcCreateProgram failed", b""
    try:
        opts = [o.encode() for o in options]
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        text = log.value.decode(errors="replace")
        if rc != 0:
            return False, text, b""
        lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
        ptx = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetPTX(prog, ptx)
        return "warning" not in text, text, ptx.value
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvrtc", required=True)
    ap.add_argument("--ptxas", required=True)
    ap.add_argument("--arch", required=True)
    ap.add_argument("--pre-include", required=True)
    ap.add_argument("-I", dest="inc", action="append", default=[])
    ap.add_argument("-D", dest="defs", action="append", default=[])
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    lib = ctypes.CDLL(a.nvrtc)
    print("nvrtc_compile: NVRTC %s, %s" % (nvrtc_version(lib),
          subprocess.run([a.ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]))
    os.makedirs(a.out, exist_ok=True)
    bad = 0
    for path in a.files:
        name = os.path.splitext(os.path.basename(path))[0]
        for arch in a.arch.split(","):
            opts = ["--gpu-architecture=compute_%s" % arch, "--std=c++17", "-default-device",
                    "--pre-include=%s" % a.pre_include, "--display-error-number"]
            opts += ["-I%s" % d for d in a.inc] + ["-D%s" % d for d in a.defs]
            ok, log, ptx = nvrtc_ptx(lib, path, opts)
            base = os.path.join(a.out, "%s.%s" % (name, arch))
            if not ok:
                bad += 1
                print("FAIL %s sm_%s: NVRTC %s\n%s" % (path, arch, "warning (warnings are errors)" if ptx else "error",
                                                      log.strip()))
                continue
            open(base + ".ptx", "wb").write(ptx)
            p = subprocess.run([a.ptxas, "-arch=sm_%s" % arch, "--warning-as-error", "-v", base + ".ptx", "-o",
                                base + ".cubin"], capture_output=True, text=True)
            open(base + ".ptxas.log", "w").write(p.stdout + p.stderr)
            if p.returncode != 0:
                bad += 1
                print("FAIL %s sm_%s: ptxas\n%s" % (path, arch, (p.stdout + p.stderr).strip()))
                continue
            entries = ptx.count(b".entry ")
            print("ok   %s sm_%s: %d kernels" % (path, arch, entries))
    print("nvrtc_compile: %d of %d compilations failed" % (bad, len(a.files) * len(a.arch.split(","))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
