"""measure's timed checkpoint (src/bench/checkpoint.c, the result's `checkpoint`).

References are independent of instbench: the state's size from the ViT parameter formula computed
here (12 bytes per parameter for fp32 weights + Adam's m and v, 2 more for the bf16 copy), the
file system's name from `stat -f` (coreutils), the slow disk's lower bound from the rate the shim
imposes.  The slow disk and the full disk are an LD_PRELOAD shim (checkpoint_io_shim.c: write()
to the checkpoint file sleeps bytes/rate; statvfs() reports a given free space): no root, FUSE or
loop device is needed, and only the checkpoint file is slowed.  INSTBENCH_TEST_CHECKPOINT_PAUSE
(a test hook, documented in checkpoint.c) holds the checkpoint after its fsync so that the file on
disk can be measured and the run interrupted inside the checkpoint.

usage: measure_cli_checkpoint.py BIN SCHEMA SHIM.so"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 for d in ("lib", "fakes")]
from measure_common import BIN, TINY, VALIDATOR, check, env, finish, scratch  # noqa: E402

SHIM = os.path.abspath(sys.argv[3])
# TINY's model: 32 px images, 8 px patches, 64 wide, 2 blocks, 2 heads, MLP ratio 4, 10 classes
IMG, PATCH, D, DEPTH, CLASSES, CHANS = 32, 8, 64, 2, 10, 3


def vit_params():
    """timm VisionTransformer's parameter count, term by term."""
    n = (IMG // PATCH) ** 2
    k = CHANS * PATCH * PATCH
    f = 4 * D
    embed = k * D + D + D + (n + 1) * D          # patch_embed.proj (weight, bias), cls_token, pos_embed
    block = (2 * D                               # norm1
             + 3 * D * D + 3 * D                 # attn.qkv
             + D * D + D                         # attn.proj
             + 2 * D                             # norm2
             + D * f + f + f * D + D)            # mlp.fc1, mlp.fc2
    return embed + DEPTH * block + 2 * D + D * CLASSES + CLASSES   # + norm, head


def fs_name(path):
    """coreutils' name of the file system, in the result's spelling (ext2/3/4 share one magic)."""
    t = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True).stdout.strip()
    return {"ext2/ext3": "ext4"}.get(t, t)


def shimmed(**envs):
    """The environment of a run under the LD_PRELOAD shim.  In the ASan build the shim is loaded
    before ASan's runtime, which ASan refuses unless told that the order is intended."""
    asan = os.environ.get("ASAN_OPTIONS", "")
    return dict(envs, LD_PRELOAD=SHIM, ASAN_OPTIONS=(asan + ":" if asan else "") + "verify_asan_link_order=0")


def measure(d, extra, **envs):
    out = os.path.join(d, "r.json")
    p = subprocess.run([BIN, "measure"] + TINY + ["--warmup", "1", "--steps", "2", "-o", out] + extra,
                       capture_output=True, text=True, timeout=180, env=env(**envs), cwd=d)
    doc = json.load(open(out)) if p.returncode == 0 and os.path.exists(out) else None
    return p, doc


def leftovers(d):
    return [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if ".instbench-checkpoint-" in f]


P = vit_params()

# ---- the state's size, both precisions; the file system named as statfs knows it ----
for prec, per_param in (("bf16", 14), ("fp32", 12)):
    d = scratch()
    p, doc = measure(d, ["--precision", prec])
    check(p.returncode == 0, f"{prec}: exit {p.returncode}: {p.stderr[-400:]}")
    if doc:
        errs = sorted(VALIDATOR.iter_errors(doc), key=str)
        check(not errs, f"{prec}: schema: {[e.message for e in errs[:3]]}")
        ck = doc.get("checkpoint")
        check(isinstance(ck, dict), f"{prec}: no checkpoint object: {ck!r}")
        if isinstance(ck, dict):
            check(doc["workload"]["params"] == P, f"{prec}: workload.params {doc['workload']['params']} != {P}")
            check(ck["bytes"] == P * per_param, f"{prec}: bytes {ck['bytes']} != {P} x {per_param} = {P * per_param}")
            check(ck["write_s"] > 0 and ck["read_s"] > 0, f"{prec}: times {ck['write_s']}, {ck['read_s']}")
            check(ck["dir_fs"] == fs_name(d), f"{prec}: dir_fs {ck['dir_fs']!r}, stat -f says {fs_name(d)!r}")
    check(leftovers(d) == [], f"{prec}: left {leftovers(d)}")
    base_write = doc["checkpoint"]["write_s"] if doc and doc.get("checkpoint") else None

# ---- the default result, in a fresh folder: the checkpoint goes where --help says, the result's
# folder ./instbench-results/ (made for it), never the current directory; seen on disk while the
# test hook holds it ----
d = scratch()
proc = subprocess.Popen([BIN, "measure"] + TINY + ["--warmup", "1", "--steps", "2"], cwd=d, text=True,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(INSTBENCH_TEST_CHECKPOINT_PAUSE="3"))
seen, t0 = [], time.time()
while proc.poll() is None and not seen and time.time() - t0 < 170:
    seen = leftovers(d)
    time.sleep(0.02)
out, err = proc.communicate(timeout=180)
check(proc.returncode == 0, f"default result: exit {proc.returncode}: {err[-400:]}")
check(len(seen) == 1 and os.path.dirname(seen[0]) == os.path.join(d, "instbench-results"),
      f"default result: the checkpoint was written at {seen}, not in {d}/instbench-results/")
results = os.listdir(os.path.join(d, "instbench-results")) if os.path.isdir(os.path.join(d, "instbench-results")) else []
check(len(results) == 1 and results[0].endswith(".json"), f"default result: instbench-results/ holds {results}")
check(sorted(os.listdir(d)) == ["instbench-results"], f"default result: the folder holds {os.listdir(d)}")
check(leftovers(d) == [], f"default result: left {leftovers(d)}")

# ---- -o into folders --create-dirs makes: the checkpoint is timed on the file system they are made
# on (their nearest existing folder, here the scratch folder), not skipped because the result's
# folder is not there yet; nothing is left but the result ----
d = scratch()
out = os.path.join(d, "new", "deeper", "r.json")
p = subprocess.run([BIN, "measure"] + TINY + ["--warmup", "1", "--steps", "2", "-o", out, "--create-dirs"],
                   capture_output=True, text=True, timeout=180, env=env(), cwd=d)
doc = json.load(open(out)) if p.returncode == 0 and os.path.exists(out) else None
ck = doc and doc.get("checkpoint")
check(p.returncode == 0 and bool(ck) and "not timed" not in p.stderr,
      f"--create-dirs: exit {p.returncode}, checkpoint {ck!r}: {p.stderr[-400:]}")
check(not ck or (ck["bytes"] == P * 14 and ck["dir_fs"] == fs_name(d)), f"--create-dirs: {ck!r}")
check(leftovers(d) == [] and os.listdir(os.path.dirname(out)) == ["r.json"], f"--create-dirs: left {leftovers(d)}")

# ---- --checkpoint-dir on another file system (/dev/shm is tmpfs where it exists) ----
if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
    d = scratch()
    shm = os.path.join("/dev/shm", f"ib-ckpt-{os.getpid()}")
    os.makedirs(shm, exist_ok=True)
    p, doc = measure(d, ["--checkpoint-dir", shm])
    ck = doc and doc.get("checkpoint")
    check(bool(ck) and ck["dir_fs"] == fs_name(shm), f"--checkpoint-dir {shm}: {ck!r}, stat -f: {fs_name(shm)!r}")
    check(os.listdir(shm) == [], f"--checkpoint-dir: left {os.listdir(shm)}")
    os.rmdir(shm)

# ---- a slow disk raises write_s: at RATE bytes/s, writing the state takes at least bytes / RATE ----
RATE = P * 14 / 1.5   # 1.5 s for the bf16 state
d = scratch()
p, doc = measure(d, [], **shimmed(CHECKPOINT_SHIM_WRITE_BPS=str(RATE)))
ck = doc and doc.get("checkpoint")
check(bool(ck), f"slow disk: no checkpoint: {p.stderr[-400:]}")
if ck:
    floor = ck["bytes"] / RATE
    check(ck["write_s"] >= 0.95 * floor, f"slow disk: write_s {ck['write_s']:.3f} below bytes/rate {floor:.3f}")
    check(base_write is None or ck["write_s"] > base_write + 1.0,
          f"slow disk: write_s {ck['write_s']:.3f} not above the plain disk's {base_write}")
    check(ck["read_s"] < floor, f"slow disk: read_s {ck['read_s']:.3f}: reads were not slowed, should be fast")

# ---- too little free space: skipped with a warning, the result still written, nothing left ----
d = scratch()
p, doc = measure(d, [], **shimmed(CHECKPOINT_SHIM_FREE_BYTES=str(P * 14 + 1000)))
check(p.returncode == 0, f"full disk: exit {p.returncode}: {p.stderr[-300:]}")
check(doc is not None and doc.get("checkpoint", "absent") is None, f"full disk: checkpoint {doc and doc.get('checkpoint')!r}")
check("would not fit" in p.stderr, f"full disk: no warning: {p.stderr[-300:]}")
check(leftovers(d) == [], f"full disk: left {leftovers(d)}")

# ---- --checkpoint off; bad --checkpoint-dir ----
d = scratch()
p, doc = measure(d, ["--checkpoint", "off"])
check(doc is not None and doc.get("checkpoint", "absent") is None and "checkpoint" not in p.stderr,
      f"--checkpoint off: {doc and doc.get('checkpoint')!r} / {p.stderr[-200:]}")
d = scratch()
a_file = os.path.join(d, "a-file")
open(a_file, "w").close()
for extra, why in ((["--checkpoint-dir", os.path.join(d, "nonexistent")], "missing dir"),
                   (["--checkpoint-dir", a_file], "a file"),
                   (["--checkpoint", "off", "--checkpoint-dir", "."], "dir with off")):
    p, doc = measure(scratch(), extra)
    check(p.returncode == 2 and p.stderr.count("\n") == 1, f"{why}: exit {p.returncode}, stderr {p.stderr!r}")


# ---- Ctrl-C inside the checkpoint: exit 130, no result, no checkpoint file ----
def interrupt_inside(how, sig, want, **envs):
    d = scratch()
    ckdir = os.path.join(d, "ck")
    os.makedirs(ckdir)
    out = os.path.join(d, "r.json")
    proc = subprocess.Popen([BIN, "measure"] + TINY + ["--warmup", "1", "--steps", "2", "-o", out,
                                                       "--checkpoint-dir", ckdir],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(**envs), cwd=d)
    seen, size, deadline = None, -1, time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        names = [f for f in os.listdir(ckdir) if f.startswith(".instbench-checkpoint-")]
        if names:
            seen = os.path.join(ckdir, names[0])
            break
        time.sleep(0.005)
    if seen and "INSTBENCH_TEST_CHECKPOINT_PAUSE" in envs:
        # inside the pause (60 s), once written and synced: the whole state on disk, however long
        # a loaded machine takes to write it (a fixed 0.3 s was a guess at that)
        until = time.monotonic() + 30
        while True:
            try:
                size = os.stat(seen).st_size
            except FileNotFoundError:
                size = -2
            if size in (P * 14, -2) or time.monotonic() > until or proc.poll() is not None:
                break
            time.sleep(0.01)
        check(size == P * 14, f"{how}: the file on disk has {size} bytes, the state is {P * 14}")
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        err = ""
    check(seen is not None, f"{how}: the checkpoint file never appeared")
    check(proc.returncode == want, f"{how}: exit {proc.returncode}, want {want}: {err[-300:]}")
    check(not os.path.exists(out), f"{how}: a result was written")
    check(os.listdir(ckdir) == [], f"{how}: left {os.listdir(ckdir)}")
    check("interrupted" in err, f"{how}: no 'interrupted' on stderr")


interrupt_inside("SIGINT while paused after fsync", signal.SIGINT, 130, INSTBENCH_TEST_CHECKPOINT_PAUSE="60")
interrupt_inside("SIGTERM while paused after fsync", signal.SIGTERM, 143, INSTBENCH_TEST_CHECKPOINT_PAUSE="60")
interrupt_inside("SIGINT during a slow write", signal.SIGINT, 130, **shimmed(CHECKPOINT_SHIM_WRITE_BPS=str(P * 14 / 8)))
finish("measure_cli_checkpoint")
