"""What the Python tests share: check() records a failed expectation and prints it at once (so a
hung or crashing test still shows what had failed), and `failures` holds them for the test's own
summary and exit status.  require() is the fatal form, for tests that stop at the first failure.
FakeAws starts the fake AWS server (tests/fakes/aws_fake_server.py).  Every test imports these instead
of keeping a copy."""
import atexit
import http.server
import json
import math
import os
import re
import select
import shutil
import socket
import ssl
import subprocess
import struct
import sys
import tempfile
import threading
import time
import urllib.request

failures = []
label = ""   # a fatal failure's context, e.g. the case a multi-case test runs
_scratch = []   # scratch_dir()'s folders
_stopped = []   # a fail() or an uncaught exception: the scratch folders are kept


def scratch_dir(prefix):
    """A new folder under the system's temporary one, removed when the test ends without a failure
    (check, fail, require or an uncaught exception); a failing test keeps it and names it on stderr,
    for whoever looks into the failure.  (Tests that made theirs with tempfile.mkdtemp alone left
    about 50 MB in /tmp a suite run: a source archive's build, the instance sandboxes.)"""
    d = tempfile.mkdtemp(prefix=prefix)
    if not _scratch:
        atexit.register(_remove_scratch)
        hook = sys.excepthook

        def note_exception(*exc):
            _stopped.append(exc[0].__name__)
            hook(*exc)
        sys.excepthook = note_exception
    _scratch.append(d)
    return d


def absent_path(*names):
    """A path where nothing is: NAMES under a folder that is never made, in a new scratch folder, so
    a read of it fails with ENOENT.  Not /nonexistent: it is the home of Debian's system users
    (nobody), so tools running as them may create it, and a cache pointed there once left
    /nonexistent/ro/dconf behind, root's, on a developer's machine."""
    return os.path.join(scratch_dir("instbench-absent-"), "nonexistent", *names)


def _remove_scratch():
    if failures or _stopped:
        print("kept for inspection: " + " ".join(_scratch), file=sys.stderr, flush=True)
        return
    for d in _scratch:
        shutil.rmtree(d, ignore_errors=True)


def check(cond, msg):
    """Records msg unless cond holds; returns cond, so a test can skip what depended on it."""
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, flush=True)
    return cond


def fail(msg):
    """Stops the test now, exit status 1."""
    print("FAIL%s: %s" % (" [%s]" % label if label else "", msg), file=sys.stderr, flush=True)
    _stopped.append("fail")
    sys.exit(1)


def require(cond, msg):
    if not cond:
        fail(msg)


def free_port():
    """A TCP port nothing is bound to now: the kernel's pick on loopback, released for the program
    under test to bind.  Another program can take it in between (ctest -j, a busy machine): a test
    whose program listens on it runs that case through on_free_port()."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reserved_port():
    """(socket, port): a free port kept bound, with SO_REUSEADDR and never listening, for a program
    that binds it long after the test picked it and cannot simply be run again on another port (a
    simulated instance's rank 0, a Slurm daemon).  While the socket is open Linux hands the port to
    no one else (a bind to port 0, connect()'s local ports), and a program that sets SO_REUSEADDR
    itself, as instbench's rendezvous and Slurm's daemons do, still binds it and listens.  Close
    the socket once the program is done."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    return s, s.getsockname()[1]


_refusing = []   # refused_port()'s socket, open until the test ends


def refused_port():
    """A loopback TCP port where every connection is refused for as long as the test runs: one
    bound socket that never listens (Linux answers a SYN to it with a reset, ECONNREFUSED), held
    open so nothing else can bind the port, and no connect() picks it as its own local port.  Not
    port 9: a machine may run a discard service there, which accepts and never answers, and a
    port merely closed again can be taken by anything meanwhile."""
    if not _refusing:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        _refusing.append(s)
    return _refusing[0].getsockname()[1]


def refused_url(path="", userinfo=""):
    """http://[USERINFO@]127.0.0.1:PORT[PATH] at refused_port(): an endpoint that refuses."""
    return "http://%s127.0.0.1:%d%s" % (userinfo + "@" if userinfo else "", refused_port(), path)


def port_taken(said):
    """SAID, what a process wrote on stderr, says it could not bind its port: EADDRINUSE, as
    instbench and torch word it."""
    return "address already in use" in said.lower()


def on_free_port(case, tries=3):
    """CASE(port) runs a case whose program listens on PORT and returns what its processes wrote on
    stderr (a list of texts).  When one of them could not bind the port (port_taken: taken after
    free_port() released it), the case's failures are dropped and it runs again on another port;
    any other failure, and the last try's, stands."""
    for attempt in range(tries):
        mark = len(failures)
        said = case(free_port())
        if attempt + 1 == tries or not any(port_taken(t) for t in said):
            return
        print("the port was taken before the program bound it: the case again on another port", flush=True)
        del failures[mark:]


def wait_job(jobs, timeout):
    """The exit statuses of a job's processes, JOBS [(Popen, the file its stderr goes to)], within
    TIMEOUT seconds in all ("timeout" for one killed then).  Once one has ended saying its port was
    taken, the others are killed at once: the case runs again on another port (on_free_port), and
    they would wait for their rank 0 until their rendezvous timeout (600 s)."""
    deadline = time.monotonic() + timeout
    rcs = [None] * len(jobs)
    while None in rcs:
        for i, (p, err) in enumerate(jobs):
            if rcs[i] is None and p.poll() is not None:
                rcs[i] = p.returncode
                with open(err, errors="replace") as f:
                    if rcs[i] != 0 and port_taken(f.read()):
                        for q, _ in jobs:
                            if q.poll() is None:
                                q.kill()
            elif rcs[i] is None and time.monotonic() > deadline:
                p.kill()
                p.wait()
                rcs[i] = "timeout"
        time.sleep(0.05)
    return rcs


def on_pty(argv, env, cols=80, rows=50, stderr=None, timeout=120):
    """Runs argv with stdout (and stderr if stderr == "pty") on a pseudo-terminal COLS wide and
    returns (exit code, bytes printed there).  The parent keeps its own copy of the terminal's
    slave side open until the child has exited and then drains what is left: reading until EIO
    instead loses output on Linux when the child exits before the pty has passed its last
    bytes on (seen in CI as a table of two lines)."""
    import fcntl
    import termios
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=slave if stderr == "pty" else subprocess.DEVNULL, env=env)
    chunks = []

    def drain(wait):
        while select.select([master], [], [], wait)[0]:
            try:
                b = os.read(master, 65536)
            except OSError:
                return
            if not b:
                return
            chunks.append(b)

    try:
        deadline = time.monotonic() + timeout
        while p.poll() is None:
            if time.monotonic() > deadline:
                p.kill()
                p.wait()
                break
            drain(0.05)
        drain(0.2)
    finally:
        os.close(slave)
        os.close(master)
    return p.returncode, b"".join(chunks)


def offline_env(d, extra=None):
    """The environment of a command run as a new user off EC2 would run it, in scratch folder D: no
    AWS credentials, profile or launcher variables, IMDS off, an empty cache (so `auto` prices come
    from the shipped snapshot) and no sweeps on file (XDG_STATE_HOME: the caller's would be read,
    since it outranks HOME), no colour; EXTRA added last."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and not k.startswith("SLURM_") and
           k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(HOME=d, XDG_CACHE_HOME=os.path.join(d, "cache"), XDG_STATE_HOME=os.path.join(d, "state"),
               AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=os.path.join(d, "none"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(d, "none"),
               NO_COLOR="1", LC_ALL="C.UTF-8")
    env.update(extra or {})
    return env


def read_result(path, what):
    """The result `measure` wrote at PATH, checked against schemas/result-v1.json where jsonschema is
    installed (a mismatch is a failure, named with WHAT)."""
    doc = json.load(open(path))
    try:
        import jsonschema
    except ImportError:
        return doc
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        jsonschema.validate(doc, json.load(open(os.path.join(root, "schemas", "result-v1.json"))))
    except jsonschema.ValidationError as e:
        check(False, "%s: result does not match result-v1: %s" % (what, e.message))
    return doc


# The flags that shape the training step measure --dry-run's probe times.
STEP_FLAGS = ("--backend", "--model", "--image-size", "--patch-size", "--embed-dim", "--depth", "--heads", "--mlp-ratio",
              "--classes", "--batch-size", "--precision", "--optimizer", "--data", "--ranks")


def probe_once(argv, probed):
    """The environment's addition for `measure --dry-run` ARGV in a test that runs several: the
    probe (one real training step at batch 1 to estimate the run's time; a ViT-B one is 17 CPU
    seconds under ASan) runs for the first dry run of each step configuration, PROBED the set of
    those seen, and the others skip it (INSTBENCH_PROBE_SECONDS=off), since it would time the same
    step again.  The estimate itself is tests/measure/measure_cli_estimate.py's."""
    shape, i = [], 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name in STEP_FLAGS:
            if not eq:
                i += 1
                value = argv[i] if i < len(argv) else ""
            shape.append((name, value))
        i += 1
    key = tuple(sorted(shape))
    if key in probed:
        return {"INSTBENCH_PROBE_SECONDS": "off"}
    probed.add(key)
    return {}


def usd(v):
    """Money as docs/usage.md says tables show it, computed here from the rule, not from instbench:
    "$" and 2 decimals with thousands separators; below $0.10 three significant digits."""
    exp10 = int(f"{abs(v):.2e}".split("e")[1]) if v else 0
    decimals = 2 - exp10 if exp10 < -1 else 2
    return ("-" if v < 0 else "") + f"${abs(v):,.{decimals}f}"


def duration(seconds):
    """A duration as docs/usage.md says tables show it: whole minutes under an hour ("<1 min",
    "45 min"), tenths of an hour under 48 h ("5.3 h"), else days and whole hours ("2d 21h")."""
    def rnd(x):   # half away from zero, as C's round()
        return math.floor(x + 0.5)
    minutes, tenths, hours = rnd(seconds / 60), rnd(seconds / 360), rnd(seconds / 3600)
    if minutes < 1:
        return "<1 min"
    if minutes < 60:
        return f"{minutes} min"
    if tenths < 480:
        return f"{tenths // 10}.{tenths % 10} h"
    days, hours = divmod(hours, 24)
    return f"{days:,}d" if days >= 100000 else f"{days:,}d {hours}h"


def probability(p):
    """A probability as docs/usage.md says tables show it: one decimal, never a certainty it is not
    (">99.9%" above 99.95% but below 1, "<0.1%" below 0.05% but above 0)."""
    if p is None or not 0 <= p <= 1:
        return "-"
    if 0.9995 <= p < 1:
        return ">99.9%"
    if 0 < p < 0.0005:
        return "<0.1%"
    return f"{100 * p:.1f}%"


def parse_table(text):
    """The first aligned table in TEXT (a header line, then a rule of dashes): its headers and its
    rows as {header: cell}, cut by the rule's column spans; it ends at the first blank line."""
    lines = text.splitlines()
    at = next((i for i in range(1, len(lines)) if lines[i] and set(lines[i]) <= {"-", " "}), None)
    if at is None:
        return [], []
    spans, col = [], 0
    for dashes in lines[at].split("  "):
        spans.append((col, col + len(dashes)))
        col += len(dashes) + 2

    def cut(line):
        return [line[a:b].strip() for a, b in spans]
    headers = cut(lines[at - 1])
    rows = []
    for line in lines[at + 1:]:
        if not line.strip():
            break
        rows.append(dict(zip(headers, cut(line))))
    return headers, rows


class ScriptedHandler(http.server.BaseHTTPRequestHandler):
    """A test's own endpoint, for answers the fake AWS does not give: a subclass's do_* methods
    decide, answer() sends one whole reply.  No access log on the test's output."""

    def answer(self, status, body, content_type="application/xml"):
        data = body if isinstance(body, bytes) else body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client stopped reading: a cap it keeps, which the test checks

    def log_message(self, *a):
        pass


def scripted_server(handler):
    """HANDLER (a ScriptedHandler) served on a free port of 127.0.0.1 from a daemon thread: the
    server (shutdown() ends it) and its URL."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, "http://127.0.0.1:%d" % srv.server_address[1]


class FakeAws:
    """tests/fakes/aws_fake_server.py on a free port of 127.0.0.1, with ARGS (its --help lists them);
    tls_ca: serve https with the server's --tls-cert, trusted through this CA file."""
    SERVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fakes",
                          "aws_fake_server.py")

    def __init__(self, *args, tls_ca=None):
        self.ctx = ssl.create_default_context(cafile=tls_ca) if tls_ca else None
        # its log goes to a file: a pipe nobody reads could fill and stall the server
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, self.SERVER, "--port", "0"] + list(args),
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.proc.wait()
            self.log.seek(0)
            raise RuntimeError("the fake AWS server did not start: %r %s" % (line, self.log.read()))
        self.port = int(line)
        self.url = "%s://127.0.0.1:%d" % ("https" if tls_ca else "http", self.port)

    def call(self, path, obj=None):
        """POSTs obj as JSON (GET when None) to one of the control paths; the answer, parsed."""
        data = json.dumps(obj).encode() if obj is not None else None
        req = urllib.request.Request(self.url + path, data=data)
        with urllib.request.urlopen(req, timeout=10, context=self.ctx) as r:
            return json.loads(r.read())

    def stats(self):
        return self.call("/__stats")

    def control(self, **kw):
        return self.call("/__control", kw)

    def stop(self):
        try:
            self.call("/__shutdown", {})
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.log.close()


# The natural order of EC2 instance type names, written from AWS's naming, not from instbench:
# family with its digits as numbers, then size: nano < ... < large < xlarge < 2xlarge < ... < metal.
# AWS's zone forms (the Local Zones and Wavelength user guides): an Availability Zone is
# <region code>-az<N> by ID (use1-az2) or <region><letter> by name (us-east-1a); a Local Zone has a
# city between them (use1-atl2-az1, us-east-1-atl-2a), a Wavelength Zone -wl<N>-<city>-wlz<N>
# (use1-wl1-bos-wlz1, us-east-1-wl1-bos-wlz-1).  Only Availability Zones count for a lowest or
# median spot price unless --include-local-zones.
AVAILABILITY_ZONE = re.compile(r"[a-z]+[0-9]+-az[0-9]+|[a-z]{2}(-gov)?-[a-z]+-[0-9]+[a-z]")


def availability_zone(zone):
    """ZONE (a name or an ID) is an Availability Zone, not a Local or Wavelength Zone."""
    return AVAILABILITY_ZONE.fullmatch(zone) is not None


def regular_zones(zones):
    """{zone: price} of the Availability Zones among ZONES ({zone: price})."""
    return {z: p for z, p in zones.items() if availability_zone(z)}


INSTANCE_SIZES = ["nano", "micro", "small", "medium", "large"]


def natural_key(t):
    """Family (digits as numbers), then size: nano < ... < large < xlarge < 2xlarge < ... < metal."""
    family, size = t.rsplit(".", 1)
    fam = [(0, int(x), "") if x.isdigit() else (1, 0, x) for x in re.findall(r"\d+|\D+", family)]
    if size in INSTANCE_SIZES:
        s = (0, INSTANCE_SIZES.index(size))
    elif size == "xlarge":
        s = (1, 1)
    elif size.endswith("xlarge"):
        s = (1, int(size[:-6]))
    elif size == "metal":
        s = (2, 0)
    else:
        s = (2, int(size[6:-2]))   # metal-24xl
    return fam, s


def build_revision(text_file, src):
    """The revision the build compiled, as cmake/revision.cmake recorded it beside the header main.c
    includes (the build folder's generated/revision/REVISION): (40 hex digits with "-dirty" after them
    when the tree had edits, or None unknown; what is wrong with it, or None).  git in the checkout SRC
    is the reference, but not the checkout's state now, which may have moved since the build (an edit
    or a commit made after it, with no rebuild before ctest): the value must name a commit git has,
    and be known wherever git answers in SRC.  A tree without .git (a source archive) is not checked."""
    line = open(text_file).read().strip() if os.path.isfile(text_file) else "(%s is missing)" % text_file
    rev = None if line == "unknown" else line
    if rev is not None and not re.fullmatch(r"[0-9a-f]{40}(-dirty)?", rev):
        return rev, "the build's revision %r is no revision" % rev
    if not os.path.exists(os.path.join(src, ".git")) or not shutil.which("git"):
        return rev, None
    head = subprocess.run(["git", "-C", src, "rev-parse", "--verify", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return rev, None
    if rev is None:
        return None, "the build recorded no revision, but git answers in %s (HEAD %s)" % (src, head.stdout.strip())
    known = subprocess.run(["git", "-C", src, "cat-file", "-e", rev[:40] + "^{commit}"], capture_output=True)
    return rev, None if known.returncode == 0 else "the build's revision %s is no commit of %s" % (rev, src)


def short_revision(rev):
    """How people are shown a revision: 12 hex digits, -dirty kept; None is unknown."""
    return "unknown" if rev is None else rev[:12] + ("-dirty" if rev.endswith("-dirty") else "")
