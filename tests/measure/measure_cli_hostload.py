"""A shared machine shows in the result: with a busy-looping process beside the run (one core of
the machine's vCPUs), measurement.host_load.other_processes_cpu_share reports at least a good part
of that core, and a warning says the machine is shared."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]  # tests/lib, tests/fakes: testlib, imds_standin
from measure_common import TINY, check, finish, run, scratch, validate  # noqa: E402

vcpus = os.cpu_count() or 1
hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
try:
    out = os.path.join(scratch(), "r.json")
    p = run(TINY + ["--duration", "1.5", "--warmup", "1", "--output", out])
finally:
    hog.kill()
    hog.wait()
if check(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-300:]}"):
    doc = json.load(open(out))
    validate(doc, "host load")
    share = doc["measurement"]["host_load"]["other_processes_cpu_share"]
    # The hog competes with the benchmark's threads; the scheduler gives it at least a third of a core.
    want = (1 / 3) / vcpus
    print(f"other processes' share {share} (hog alone would be {1 / vcpus:.2f}, want >= {want:.2f})")
    check(share is not None and share >= want, f"other_processes_cpu_share {share} < {want:.2f} with a busy process")
    if share is not None and share > 0.10:
        check(any("other processes" in w for w in doc["measurement"]["warnings"]), "no shared-machine warning")
finish("measure_cli_hostload")
