#!/usr/bin/env python3
"""Files a GPU session's returned files (scripts/gpu/gpu_session.sh: console.txt, summary_pN.json,
logs.tgz) as docs/gpu-runs/<date>-<gpu>/, in the layout the earlier runs have by hand, then
rewrites the index (scripts/gpu/gpu_runs_index.py), so every figure of the call is kept with the
PyTorch run beside it and nothing is retyped.

What goes where (RUN = docs/gpu-runs/<date>-<gpu>):
  RUN/console.txt, RUN/summary_pN.json          as returned
  RUN/machine.txt                                nvidia-smi and nvcc of the call (p1/machine.log)
  RUN/verify_*.json, RUN/measure.json            verify and measure (p1)
  RUN/bench_<name>.json                          ViT-B/16 against PyTorch (p2/bench/<name>.json:
                                                 instbench, its unfused, non-deterministic, tuned
                                                 and traced runs, torch, torch_compile; PyTorch's
                                                 files hold the script's output, its last line kept)
  RUN/bench_table.txt, RUN/kernels.{txt,json}    the printed table, the per-kernel-class table
  RUN/kernels_nondet.{txt,json}                  the same with cuDNN's non-deterministic backward
  RUN/ab/                                        the A/B's runs and its printed table (ab.txt)
  RUN/<step>.log, RUN/<step>.json                realistic, sanitizers (sanitize_measure.json: the
                                                 measure memcheck ran), auto_batch, host_data (p3)
  RUN/<model>/bench_<name>.json                  the other models against PyTorch (p4)
  RUN/bench_table_others.txt                     their printed tables (p4/torch.log)
The date is the session's (console.txt's first line), the GPU the one PyTorch named in the same
call ("NVIDIA H200" -> h200). An existing run folder is never written into: --name picks another.
Kernel traces (traces.tgz) stay out: 10 MB of raw rows the tables summarise.

usage: gpu_import.py FROM_DIR [--runs DIR] [--name NAME]   (DIR: docs/gpu-runs)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = ["instbench", "instbench_unfused", "instbench_nondet", "instbench_tuned", "instbench_traced", "torch",
         "torch_compile"]
P3 = ["realistic", "sanitize", "sanitize_measure", "sanitize12", "auto_batch", "host_data"]


def fail(msg):
    sys.stderr.write("gpu_import: %s\n" % msg)
    sys.exit(1)


def last_json(data):
    """The last line of a file that is JSON (PyTorch's step prints warnings before it), else None."""
    for line in reversed(data.decode("utf-8", "replace").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def main(argv):
    args, runs, name = [], os.path.join(HERE, "..", "..", "docs", "gpu-runs"), None
    it = iter(argv)
    for a in it:
        if a in ("--runs", "--name"):
            v = next(it, None)
            if not v:
                fail("%s takes a value" % a)
            if a == "--runs":
                runs = v
            else:
                name = v
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            fail("unknown option %s (see --help)" % a)
        else:
            args.append(a)
    if len(args) != 1:
        fail("give the folder the session's files came back to (see --help)")
    src = args[0]
    try:
        console = open(os.path.join(src, "console.txt"), encoding="utf-8", errors="replace").read()
    except OSError as e:
        fail("%s: no console.txt (%s): not a gpu_session.sh output folder" % (src, e.strerror))
    logs = {}
    path = os.path.join(src, "logs.tgz")
    if os.path.exists(path):
        try:
            with tarfile.open(path) as t:
                for m in t.getmembers():
                    # only plain files, by a name inside the archive (never ../ or absolute)
                    if m.isfile() and not m.name.startswith("/") and ".." not in m.name.split("/"):
                        logs[os.path.normpath(m.name)] = t.extractfile(m).read()
        except (OSError, tarfile.TarError) as e:
            fail("%s: %s" % (path, e))

    files = {}   # path in the run folder -> bytes
    files["console.txt"] = console.encode()
    for f in sorted(os.listdir(src)):
        if re.fullmatch(r"summary_p[1-4]\.json", f):
            files[f] = open(os.path.join(src, f), "rb").read()
    take = {"p1/machine.log": "machine.txt", "p1/measure.json": "measure.json", "p2/torch.log": "bench_table.txt",
            "p2/bench/kernels.txt": "kernels.txt", "p2/bench/kernels.json": "kernels.json",
            "p2/bench/kernels_nondet.txt": "kernels_nondet.txt", "p2/bench/kernels_nondet.json": "kernels_nondet.json",
            "p4/torch.log": "bench_table_others.txt", "ab/ab.log": "ab/ab.txt"}
    for k, v in take.items():
        if k in logs:
            files[v] = logs[k]
    pytorch = {}
    for k, data in logs.items():
        parts = k.split("/")
        if parts[0] == "p1" and re.fullmatch(r"verify_[\w.-]+\.json", parts[-1]):
            files[parts[-1]] = data
        elif parts[0] == "ab" and re.fullmatch(r"[ab]\d+\.json", parts[-1]):
            files["ab/" + parts[-1]] = data
        elif parts[0] == "p3" and len(parts) == 2 and os.path.splitext(parts[1])[0] in P3:
            files[parts[1]] = data
        elif len(parts) == 3 and parts[0] in ("p2", "p4") and parts[1].startswith("bench") and \
                os.path.splitext(parts[2]) in [(b, ".json") for b in BENCH]:
            sub = "" if parts[1] == "bench" else parts[1][len("bench-"):] + "/"
            base = os.path.splitext(parts[2])[0]
            if base.startswith("torch"):
                doc = last_json(data)
                if doc is None:
                    continue
                pytorch.setdefault(sub, doc)
                data = (json.dumps(doc, indent=1) + "\n").encode()
            files[sub + "bench_" + parts[2]] = data
    if "bench_instbench.json" not in files:
        sys.stderr.write("gpu_import: no ViT-B/16 bench in %s (phase p2 did not finish): filing what there is\n" % src)

    m = re.search(r"gpu_session: (\d{4}-\d{2}-\d{2})T", console)
    date = m.group(1) if m else None
    device = (pytorch.get("") or next(iter(pytorch.values()), {})).get("device")
    if not device and "machine.txt" in files:
        m = re.search(r"NVIDIA [A-Z][\w -]+?(?=\s{2}|\||$)", files["machine.txt"].decode("utf-8", "replace"), re.M)
        device = m.group(0) if m else None
    if not name:
        if not date or not device:
            fail("no session date or GPU name in %s: give --name" % src)
        words = [w for w in device.split() if w.upper() != "NVIDIA"]
        name = "%s-%s" % (date, re.sub(r"[^a-z0-9]", "", words[0].lower()) if words else "gpu")
    if not re.fullmatch(r"[\w][\w.-]*", name):
        fail("--name %r: letters, digits, '.', '_' and '-' only" % name)
    dest = os.path.join(runs, name)
    if os.path.exists(dest):
        fail("%s exists: an earlier run is never written into (give --name)" % dest)
    os.makedirs(runs, exist_ok=True)
    # whole or not at all: written beside, then renamed into place
    tmp = tempfile.mkdtemp(prefix=".import-", dir=runs)
    try:
        for rel, data in sorted(files.items()):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)) or tmp, exist_ok=True)
            with open(os.path.join(tmp, rel), "wb") as f:
                f.write(data)
        os.rename(tmp, dest)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        fail("cannot write %s: %s" % (dest, e.strerror))
    index = subprocess.run([sys.executable, os.path.join(HERE, "gpu_runs_index.py"), runs])
    print("gpu_import: %d files into %s%s" % (len(files), dest, "" if index.returncode == 0 else
                                               " (the index was not rewritten: run gpu_runs_index.py)"))
    return 0 if index.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
