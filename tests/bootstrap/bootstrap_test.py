#!/usr/bin/env python3
"""scripts/bootstrap.sh installs in proportion and starts nothing:
1. `--list` (what the README's first command installs) names no package only the tests need, and
   `--list --test-deps` (what scripts/test.sh installs) names every one the tests call for;
2. a package install, played with stub apt-get/dpkg/systemctl on PATH, runs while a policy-rc.d
   refuses every service start (exit 101, what invoke-rc.d obeys), leaves no policy-rc.d of its own
   behind, and disables every systemd unit the installed packages ship;
3. on this machine: where systemctl exists, the tests' daemons (slurmctld, slurmd, munge) are not
   enabled, and none of them runs outside a test (the tests start theirs with files in a temporary
   directory).
Usage: bootstrap_test.py REPO"""
import os
import stat
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                for d in ("lib", "fakes")]
from testlib import check, failures, scratch_dir  # noqa: E402

REPO = os.path.abspath(sys.argv[1])
SCRIPT = os.path.join(REPO, "scripts", "bootstrap.sh")
# What only the tests need (issue 41: a newcomer trying the CLI gets none of these).
TEST_ONLY = ("libreoffice", "slurm", "munge", "awscli", "python3-torch", "clang", "jq", "python3-pandas",
             "python3-openpyxl", "python3-botocore", "python3-jsonschema", "librsvg2-bin", "python3-venv", "locales")
# What the tests call for, by the Debian package that brings it.
TESTS_NEED = ("slurmctld", "slurmd", "slurm-client", "munge", "libreoffice-calc-nogui", "jq", "python3-torch",
              "awscli", "python3-botocore", "librsvg2-bin", "clang", "python3-pandas", "python3-openpyxl", "locales")


def listed(*flags):
    p = subprocess.run(["bash", SCRIPT, "--list", *flags], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"bootstrap.sh --list {' '.join(flags)}: exit {p.returncode} {p.stderr}")
    return p.stdout.split()


build = listed()
full = listed("--test-deps")
check({"cmake", "build-essential", "libdnnl-dev", "libcurl4-openssl-dev"} <= set(build), f"build list: {build}")
check(not [p for p in build if p.startswith(TEST_ONLY)], f"the first command installs test-only packages: "
      f"{[p for p in build if p.startswith(TEST_ONLY)]}")
check(set(build) <= set(full) and set(TESTS_NEED) <= set(full), f"--test-deps lacks {set(TESTS_NEED) - set(full)}")

# --- 2: an install played with stubs
d = scratch_dir("bootstrap-")
stubs, state, policy = os.path.join(d, "bin"), os.path.join(d, "state"), os.path.join(d, "policy-rc.d")
os.makedirs(stubs)
os.makedirs(state)


def stub(name, body):
    path = os.path.join(stubs, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nS=" + state + "\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


stub("id", 'echo 0\n')
stub("dpkg-query", 'exit 1\n')   # nothing installed yet
# apt-get install: what a package's postinst does: enable its unit, then ask policy-rc.d to start it
stub("apt-get", f'''case "$1" in update) exit 0;; esac
[ -x "{policy}" ] || {{ echo "no policy-rc.d during the install" >> $S/log; }}
echo enabled > $S/slurmctld.service
"{policy}" slurmctld start; echo "start-answer $?" >> $S/log
exit 0
''')
stub("dpkg", 'echo /lib/systemd/system/slurmctld.service; echo /usr/lib/systemd/system/munge.socket; '
              'echo /usr/sbin/slurmctld\n')
stub("systemctl", '''echo "systemctl $*" >> $S/log
case "$1" in
  is-enabled) cat "$S/$2" 2>/dev/null || { echo disabled; exit 1; };;
  disable) [ "$2" = --quiet ] && shift; echo disabled > "$S/$2";;
  is-active) exit 3;;
esac
''')
env = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"], INSTBENCH_TEST_POLICY_RC_D=policy)
p = subprocess.run(["bash", SCRIPT, "--no-build"], env=env, capture_output=True, text=True, timeout=120)
log = open(os.path.join(state, "log")).read() if os.path.exists(os.path.join(state, "log")) else ""
check(p.returncode == 0, f"stubbed bootstrap: exit {p.returncode}: {p.stderr[-800:]}")
check("start-answer 101" in log and "no policy-rc.d" not in log,
      f"a service start during the install was not refused (policy-rc.d exit 101): {log}")
check(not os.path.exists(policy), "bootstrap left its policy-rc.d behind")
check(open(os.path.join(state, "slurmctld.service")).read().strip() == "disabled" if
      os.path.exists(os.path.join(state, "slurmctld.service")) else False,
      f"the installed package's unit is still enabled: {log}")
check("is-enabled munge.socket" in log, f"the package's socket unit was not looked at: {log}")
# a policy-rc.d the machine has is its own: kept as it was
with open(policy, "w") as f:
    f.write("#!/bin/sh\nexit 101\n")
os.chmod(policy, 0o755)
p = subprocess.run(["bash", SCRIPT, "--no-build"], env=env, capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and os.path.exists(policy), f"the machine's own policy-rc.d was removed: {p.stderr[-400:]}")

# --- 3: this machine
if subprocess.run(["sh", "-c", "command -v systemctl"], capture_output=True).returncode == 0:
    for unit in ("slurmctld.service", "slurmd.service", "munge.service"):
        r = subprocess.run(["systemctl", "is-enabled", unit], capture_output=True, text=True)
        check(r.stdout.strip() not in ("enabled", "enabled-runtime"),
              f"{unit} is enabled as a service here (scripts/bootstrap.sh --test-deps disables what an install left)")
else:
    print("no systemctl here: the enabled-unit check does not apply")
tmp = os.path.realpath(tempfile.gettempdir())
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except OSError:
        continue
    if os.path.basename(argv[0]) in ("slurmctld", "slurmd", "munged"):
        check(any(tmp in a or a.startswith("/tmp") for a in argv[1:]),
              f"{' '.join(argv)} (pid {pid}) runs outside the tests (none of its files in a temporary directory)")
print(f"bootstrap_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
