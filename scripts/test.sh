#!/usr/bin/env bash
# The whole test suite: dependencies, a release build (through ccache) with an ASan+UBSan build
# beside it, the style check, the CUDA 12.9, aarch64 and fuzz checks at once, then every test once:
# under the sanitizers where that build has it, in the release build otherwise, the CPU-bound ones
# a core each and those that mostly wait beside them, both builds' tests in one ctest queue.  This
# is what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
log=$(mktemp)
times=$(mktemp)
subrows=$(mktemp)
spec=$(mktemp)       # ctest's resource specification (the ctest phase)
bg=$(mktemp -d)      # the jobs run side by side (bg_run below)
declare -A bg_pid=() # their subshells, by key
suite_start=$(date +%s)
# Where the time goes: each phase's wall time, printed at the end (on failure too) so a slow
# suite says which phase grew.
phase_name="" phase_start=0 phase_cpu=""
cpu_ticks() {   # "busy total" jiffies of all CPUs from /proc/stat (empty where there is none)
  awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t}' /proc/stat 2>/dev/null || true
}
phase() {
  local now cpu busy=-1
  now=$(date +%s) cpu=$(cpu_ticks)
  if [ -n "$phase_name" ]; then
    if [ -n "$cpu" ] && [ -n "$phase_cpu" ]; then
      busy=$(echo "$phase_cpu $cpu" | awk '{d = $4 - $2; if (d > 0) printf "%d", 100 * ($3 - $1) / d; else print -1}')
    fi
    printf '%s\t%d\t%s\n' "$phase_name" $((now - phase_start)) "$busy" >>"$times"
    cat "$subrows" >>"$times" 2>/dev/null && : >"$subrows"   # rows the phase left for beneath its own
  fi
  phase_name=$1 phase_start=$now phase_cpu=$cpu
  [ -z "$1" ] || echo "== test.sh: $1 ($(date -u +%H:%M:%S))"
}
# CPU busy: the share of all cores' time not idle during the phase (the whole machine's, so
# anything else running counts too); far under 100% means the phase waits more than it computes.
summary() {
  local rc=$?
  phase ""
  echo "== test.sh: time per phase (wall clock; CPU busy of $(nproc) cores)"
  awk -F'\t' '{printf "  %-34s %4d:%02d  %s\n", $1, $2 / 60, $2 % 60, ($3 >= 0 ? $3 "%" : "-")}' "$times"
  local total=$(( $(date +%s) - suite_start ))
  printf '  %-34s %4d:%02d%s\n' "total" $((total / 60)) $((total % 60)) "$([ $rc -eq 0 ] || echo "  (failed, exit $rc)")"
  for p in "${bg_pid[@]}"; do kill_tree "$p"; done   # a job still running when a phase failed
  rm -f "$log" "$times" "$subrows" "$spec"
  rm -rf "$bg"
}
trap summary EXIT
# Jobs run side by side: each one's output, exit status, seconds and CPU seconds under $bg, and a
# row of its own beneath its phase in the summary (its share of the cores while it ran).
bg_run() {   # KEY COMMAND...: COMMAND in the background
  local key=$1
  shift
  ( t0=$(date +%s) rc=0
    "$@" >"$bg/$key.log" 2>&1 || rc=$?
    # `times`' second line: the user and system time of this subshell's children, "1m2.5s 0m3.0s"
    # (into a file: in a $(...) it would be the command substitution's own, none)
    times >"$bg/$key.times"
    cpu=$(awk 'NR == 2 {for (i = 1; i <= 2; i++) {split($i, a, /[ms]/); t += 60 * a[1] + a[2]}; printf "%d", t}' \
      "$bg/$key.times")
    echo "$rc $(($(date +%s) - t0)) $cpu" >"$bg/$key.rc" ) &
  bg_pid[$key]=$!
}
# after KEY COMMAND...: COMMAND once the job KEY has ended, if it succeeded (a job started with
# bg_run that needs what KEY installs)
after() {
  local key=$1 rc
  shift
  while [ ! -s "$bg/$key.rc" ]; do sleep 1; done
  read -r rc _ <"$bg/$key.rc"
  [ "$rc" = 0 ] || { echo "not run: $key failed (exit $rc)"; return 1; }
  "$@"
}
# A job's subshell and everything under it (on an early exit: nothing may run on unnoticed)
kill_tree() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
  kill "$1" 2>/dev/null || true
}
bg_end() {   # KEY NAME, once it has ended: its summary row; its exit status is the function's
  local rc secs cpu
  read -r rc secs cpu <"$bg/$1.rc" || { rc=1 secs=0 cpu=0; }
  printf '  %s\t%d\t%d\n' "$2" "$secs" $((secs > 0 ? 100 * cpu / (secs * jobs) : -1)) >>"$subrows"
  return "$rc"
}

phase "packages to build"
# the build's packages and ccache: what compiling needs, before it starts
scripts/bootstrap.sh --no-build --build-cache
# One compiler cache for the suite's builds, in build/: the release build fills it, and the
# mutation check's copy of the tree and the build from the source archive (tests/cuda,
# tests/sweep), laid out as a checkout is, find their objects there and compile only what differs.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_DIR=$PWD/build/ccache CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# The tests' packages (LibreOffice, Slurm, torch, moto's venv, ...) download and unpack while the
# release build compiles: one waits on the network and dpkg, the other on the CPU; and so do the
# CUDA 12.9 wheels of the CUDA 12 check (its own phase below retries or reports).
phase "release + ASan+UBSan builds, test packages"
bg_run packages scripts/bootstrap.sh --no-build --test-deps
bg_run wheels scripts/ci/check_cuda12.sh --fetch build
# The ASan+UBSan build beside it too, with the CUDA backend's host code but none of its device
# code (INSTBENCH_CUDA_HOST_ONLY: src/cuda, the cuDNN glue, the stand-ins and cudasim, no nvcc;
# the sanitizers cannot see into a GPU), so the tests on the CUDA stand-ins run under the
# sanitizers too (tests/cuda/cuda.cmake says which).  That makes it the larger build of the two
# (about 200 CPU-seconds, 105 s on 2 cores alone, against 125 with CUDA off; the cuDNN glue, 76 of
# them, on one core; 320 before the stand-in programs shared one compile of src/cuda), so it no
# longer runs at a lower priority: niced, it got the cores only once the release build was done
# and ended 130 s after it.  The two side by side on 2 cores, without the packages: 337 s at equal
# priority, 352 s niced, 230 s before (CUDA off, niced), measured before that sharing.
# -O2: the sanitizers instrument every load, store and undefined operation whatever the level
# (AddressSanitizer's documentation asks for -O1 or more, for speed), and -O2 inlines and
# vectorises the CPU engine's loops, which -O1 leaves as instrumented calls: a ViT-B dry run took
# 17 CPU-seconds against 39 at -O1.  Over the whole ASan+UBSan ctest of a clean clone the gain is
# smaller (942 to 897 CPU-seconds), about what the build costs more (152 against 120).  (-O0 had
# run 38 of the tests 1.4x slower than -O1.)  -g1: line tables (with inlined frames), all a
# sanitizer report names, not the variables' descriptions a debugger reads: a quarter less compile
# time per file.
asan_build() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O2 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O2 -g1" \
    -DINSTBENCH_SANITIZE=ON -DINSTBENCH_CUDA=AUTO -DINSTBENCH_CUDA_HOST_ONLY=ON >/dev/null &&
    cmake --build build-asan -j"$jobs"
}
release_build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null && cmake --build build -j"$jobs"
}
bg_run asan asan_build
bg_run release release_build
# Two of the checks below need nothing the release build makes: the aarch64 cross build and the
# fuzzers (clang is one of the test packages).  They start once the packages are in, niced, on the
# cores the builds leave idle, and run on into the next phases; the checks phase collects them.
bg_run aarch64 after packages nice -n 10 scripts/ci/check_aarch64.sh build-aarch64
bg_run fuzz after packages nice -n 10 env FUZZ_RUNS="${INSTBENCH_FUZZ_RUNS:-60000}" \
  FUZZ_SEED="${INSTBENCH_FUZZ_SEED:-1}" scripts/ci/run_fuzzers.sh "${INSTBENCH_FUZZ_SECONDS:-300}"
wait "${bg_pid[asan]}" "${bg_pid[release]}" "${bg_pid[packages]}" "${bg_pid[wheels]}" || true
cat "$bg/packages.log" "$bg/wheels.log" "$bg/release.log" >&2
failed=()
bg_end release "release build (CUDA on)" || failed+=("the release build (exit $?)")
bg_end asan "ASan+UBSan build" || { tail -n 60 "$bg/asan.log" >&2; failed+=("the ASan+UBSan build (exit $?)"); }
bg_end packages "test packages" || failed+=("installing the tests' packages (exit $?)")
bg_end wheels "CUDA 12.9 wheels" || true
if [ ${#failed[@]} -gt 0 ]; then echo "test.sh: failed: ${failed[*]}" >&2; exit 1; fi
echo "test.sh: the release build is in build/, the ASan+UBSan build in build-asan/"
# The one style (.clang-format), before anything long: a misformatted file fails in seconds.
phase "format check"
scripts/ci/check_format.sh

# Three checks, run at once: each alone leaves a core idle much of its time (the CUDA 12 check
# compiles the glue on one core; the fuzzers and the arm64 tests under qemu are single processes
# in turn).  Each one's output is printed whole when all three have ended.
# - CUDA 12.x compatibility: the CUDA module's host code against the CUDA 12.9 headers and
#   libraries of PyPI's nvidia-*-cu12 wheels (cached under build/cuda12-wheels; SKIP without
#   network unless CI).
# - arm64 (Graviton, Grace): a cross build with Debian's aarch64 compiler and arm64 libraries, its
#   test programs run under qemu-user (SKIP where the packages cannot be had, unless CI).
# - Fuzzing: every tests/fuzz/fuzz_*.c target (price JSON/XML parsers, AWS config and error
#   parsers, safetensors reader, result parser, the rendezvous wire, launcher variables, SageMaker's
#   resource config) built with clang's libFuzzer.  Here they gate: a
#   fixed seed and a fixed number of inputs each (the seed corpus holds every input a crash was once
#   found with), so the same tree passes or fails the same way every time; the seconds are only a
#   cap for a slow machine, generous because the three share the cores (a fuzzer stopped by the cap
#   would have run fewer inputs); scripts/ci/run_fuzzers.sh SECONDS explores.
phase "checks: CUDA 12.9, aarch64, fuzz"
bg_run cuda12 scripts/ci/check_cuda12.sh build
wait   # the aarch64 and fuzz checks too, started with the builds
failed=()
for check in "cuda12 CUDA 12.9 host check" "aarch64 aarch64 cross build + qemu" "fuzz fuzz (build + gate)"; do
  key=${check%% *} name=${check#* }
  echo "== test.sh: $name"
  cat "$bg/$key.log"
  bg_end "$key" "$name" || failed+=("$name (exit $?)")
done
if [ ${#failed[@]} -gt 0 ]; then echo "test.sh: failed: ${failed[*]}" >&2; exit 1; fi


# Each test runs once (tests/README.md): under the sanitizers where the ASan+UBSan build has it
# (they check all that a release run checks, and every read and write besides), in the release
# build where that build has not (the tests of the module nvcc builds) or the test is labelled slow
# or release_only (among them the tests that run the kernels through cudasim, whose shared-memory
# checks are the release build's), and in both where it is labelled release_too (the README's
# examples, on the binary users build; cuda_vit_sim, the kernels' checks in one build and the host
# code driving them in the other).  The two full passes this replaces took 29 of the suite's 42
# minutes, most of one spent on repeats.
asan_skip='slow|release_only'
names() {   # the tests ctest would run in build dir $1 with the options that follow, a name a line
  (cd "$1" && shift && ctest -N "$@") | sed -n 's/^ *Test *#[0-9]*: //p'
}
release_only=$(comm -23 <(names build | sort) <(names build-asan -LE "$asan_skip" | sort))
queue=build/all-tests   # both builds' tests, named release/NAME and asan/NAME (scripts/ci/one_ctest.py)
mkdir -p "$queue"
printf '%s\n' $release_only $(names build -L release_too) | sort -u >"$queue/release.txt"
names build-asan -LE "$asan_skip" >"$queue/asan.txt"
python3 scripts/ci/one_ctest.py "$queue" --suite build release "$queue/release.txt" \
  --suite build-asan asan "$queue/asan.txt" --env asan ASAN_OPTIONS=detect_leaks=1
# Slots of "cores" (tests/CMakeLists.txt): every test holds one but those labelled waits, which
# spend most of their time on the timers they test (33-88 s each for 16-26 s of CPU) and run beside
# the others, in the jobs above the core count, instead of idling in a core's slot.  One slot more
# than the cores: the tests that hold one still wait a tenth of their time (a server starting,
# their processes' start and exit, a signal's delay), and with a slot a core the cores were idle
# 10% of the ctest; with one more, 4% (the same tests on 2 cores, one after the other; 2% in a
# clean clone's run).
printf '{"version": {"major": 1, "minor": 0}, "local": [{"cores": [{"id": "0", "slots": %d}]}]}\n' "$((jobs + 1))" >"$spec"
# One queue, not a ctest per build one after the other, each of which ended on its longest test with
# a core idle.  A test in both (release_too) never runs beside itself.  To run one again:
# (cd build/all-tests && ctest -R asan/NAME).
ctest_all=(ctest --output-on-failure -j$((jobs + 4)) --resource-spec-file "$spec")
phase "ctest: release and ASan+UBSan tests in one queue"
echo "test.sh: $(wc -l <"$queue/release.txt") tests in the release build: $(paste -sd' ' "$queue/release.txt")"
echo "test.sh: $(wc -l <"$queue/asan.txt") tests in the ASan+UBSan build"
(cd "$queue" && "${ctest_all[@]}") | tee -a "$log"

phase ""
# One closing line (set -e has stopped us before here on any failure).
awk '/tests passed, [0-9]+ tests failed out of/ {t += $NF; f += $(NF-4)} END {printf "tests: %d passed, %d failed\n", t - f, f}' "$log"
