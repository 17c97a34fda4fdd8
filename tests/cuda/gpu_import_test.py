#!/usr/bin/env python3
"""scripts/gpu/gpu_import.py: a GPU session's returned files (gpu_session.sh's console.txt,
summary_pN.json and logs.tgz, made here by hand with set figures) filed as docs/gpu-runs/<date>-<gpu>/.
The run folder is named from the session's date and the GPU PyTorch named; each file lands where
the earlier runs keep it; PyTorch's files are its JSON line alone; the index row's ratios are the
set figures' own (3300 / 2500, 3300 / 3000); an archive member outside the archive (../, an absolute
path, a link) is never written; an existing run is never written into.
Usage: gpu_import_test.py REPO_ROOT"""
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testlib import check, failures  # noqa: E402

ROOT = os.path.abspath(sys.argv[1])
IMPORT = os.path.join(ROOT, "scripts", "gpu", "gpu_import.py")


def ib(sps):
    return json.dumps({"workload": {"model": "vit_base_patch16_224", "batch_size_per_device": 128, "precision": "bf16"},
                       "hardware": {"attention": "cudnn"}, "measurement": {"samples_per_second": sps, "mfu": 0.375}})


def torch(sps, mode):
    return ("UserWarning: something PyTorch says first\n" +
            json.dumps({"samples_per_second": sps, "device": "NVIDIA H200", "mode": mode}) + "\n")


MEMBERS = {
    "p1/machine.log": "| NVIDIA H200  On |\n", "p1/verify_ref_a_adam_bf16.json": '{"ok": true}',
    "p1/measure.json": ib(3290.0), "p1/summary.json": "{}",
    "p2/torch.log": "MODEL ... table\n", "p2/bench/instbench.json": ib(3300.0),
    "p2/bench/instbench_tuned.json": ib(3350.0), "p2/bench/torch.json": torch(2500.0, "eager"),
    "p2/bench/torch_compile.json": torch(3000.0, "compile"), "p2/bench/kernels.txt": "CLASS ...\n", "p2/bench/kernels_nondet.txt": "CLASS ...\n",
    "p2/bench/instbench.err": "progress\n",
    "ab/a1.json": ib(3000.0), "ab/b1.json": ib(3300.0), "ab/ab.log": "B against A: +10.0%\n",
    "p3/sanitize.log": "memcheck: 0 errors\n", "p3/auto_batch.json": ib(3400.0),
    "p4/bench-vit_small_patch16_224/instbench.json": ib(9000.0),
    "p4/bench-vit_small_patch16_224/torch.json": torch(6000.0, "eager"),
}


def session_output(d, evil=True):
    os.makedirs(d)
    with open(os.path.join(d, "console.txt"), "w") as f:
        f.write("gpu_session: 2026-12-01T10:00:00Z, deadline 520 s, instbench 0.1.0\n== p1 ...\n")
    with open(os.path.join(d, "summary_p1.json"), "w") as f:
        f.write('{"steps": []}')
    with tarfile.open(os.path.join(d, "logs.tgz"), "w:gz") as t:
        for name, text in MEMBERS.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        if evil:
            for name in ("../escaped.json", "/tmp/instbench-gpu-import-absolute.json"):
                info = tarfile.TarInfo(name)
                info.size = 2
                t.addfile(info, io.BytesIO(b"{}"))
            link = tarfile.TarInfo("p1/verify_link.json")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
            t.addfile(link)


with tempfile.TemporaryDirectory() as tmp:
    src, runs = os.path.join(tmp, "from-device"), os.path.join(tmp, "runs")
    session_output(src)
    p = subprocess.run([sys.executable, IMPORT, src, "--runs", runs], capture_output=True, text=True, timeout=60)
    run = os.path.join(runs, "2026-12-01-h200")
    check(p.returncode == 0 and os.path.isdir(run), "import: exit %d, %s %s" % (p.returncode, p.stdout, p.stderr))
    got = sorted(os.path.relpath(os.path.join(dp, f), run) for dp, _, fs in os.walk(run) for f in fs)
    want = sorted(["console.txt", "summary_p1.json", "machine.txt", "verify_ref_a_adam_bf16.json", "measure.json",
                   "bench_table.txt", "bench_instbench.json", "bench_instbench_tuned.json", "bench_torch.json",
                   "bench_torch_compile.json", "kernels.txt", "kernels_nondet.txt", "ab/a1.json", "ab/b1.json", "ab/ab.txt", "sanitize.log",
                   "auto_batch.json", "vit_small_patch16_224/bench_instbench.json",
                   "vit_small_patch16_224/bench_torch.json"])
    check(got == want, "files filed: %s\nwant %s" % (got, want))
    try:
        doc = json.load(open(os.path.join(run, "bench_torch.json")))
        check(doc.get("samples_per_second") == 2500.0, "bench_torch.json: %r" % doc)
    except (OSError, ValueError) as e:
        check(False, "bench_torch.json is not PyTorch's JSON line: %s" % e)
    for escaped in (os.path.join(tmp, "escaped.json"), os.path.join(runs, "escaped.json"),
                    "/tmp/instbench-gpu-import-absolute.json"):
        check(not os.path.exists(escaped), "an archive member was written outside the run: %s" % escaped)
    index = open(os.path.join(runs, "README.md")).read() if os.path.exists(os.path.join(runs, "README.md")) else ""
    row = [l for l in index.splitlines() if l.startswith("| [2026-12-01-h200](")]
    check(len(row) == 1 and "| 3300 | 2500 | 1.320x | 3000 | 1.100x | cudnn | 37.5% |" in row[0],
          "index row: %s\n%s" % (row, index))
    check(any(l.startswith("| [2026-12-01-h200/vit_small_patch16_224](") and "| 1.500x |" in l
              for l in index.splitlines()), "no index row for ViT-S/16:\n%s" % index)
    # again: the run exists, nothing is written into it
    before = {f: os.path.getmtime(os.path.join(run, f)) for f in got}
    p = subprocess.run([sys.executable, IMPORT, src, "--runs", runs], capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "exists" in p.stderr and
          before == {f: os.path.getmtime(os.path.join(run, f)) for f in got},
          "second import: exit %d, %s" % (p.returncode, p.stderr))
    p = subprocess.run([sys.executable, IMPORT, src, "--runs", runs, "--name", "2026-12-01-h200-call2"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and os.path.isfile(os.path.join(runs, "2026-12-01-h200-call2", "bench_instbench.json")),
          "--name: exit %d, %s" % (p.returncode, p.stderr))
    # not a session's folder; a bad name
    for args, msg in (([tmp], "no console.txt"), ([src, "--name", "../x"], "letters, digits")):
        p = subprocess.run([sys.executable, IMPORT] + args + ["--runs", runs], capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 1 and msg in p.stderr, "%s: exit %d, %s" % (args, p.returncode, p.stderr))
print("gpu_import: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
