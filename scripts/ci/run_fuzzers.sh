#!/usr/bin/env bash
# Builds every libFuzzer target (tests/fuzz/fuzz_*.c) with clang in build-fuzz/ and runs each for
# a bounded time.  usage: scripts/ci/run_fuzzers.sh [SECONDS_EACH (default 30)] [NAME...]
# A fuzzer with a runner script tests/fuzz/<name>.sh is run through it (FUZZER SECONDS); otherwise
# its seeds are tests/fuzz/corpus/<name>/ (copied to a temp dir, so runs never write into the
# tree).  FUZZ_JOBS (default: the number of CPUs) fuzzers run at once.  Exit status: 0 when no
# fuzzer found a crash, leak or sanitizer report, 1 otherwise.
#
# Two ways to run.  Exploring (the default): a random seed and SECONDS each, to find new bugs.
# Gating (FUZZ_RUNS=N, as scripts/test.sh does): seed FUZZ_SEED (default 1) and N executions each,
# SECONDS only as a cap, so the same tree gives the same answer on every run and CI does not fail
# on a submission for a bug a lucky random seed found in code it did not touch.  A crash found by
# exploring is fixed and its input added to tests/fuzz/corpus/<name>/ so the gate replays it.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-30}
shift || true
gate=()
if [ -n "${FUZZ_RUNS:-}" ]; then gate=(-runs="$FUZZ_RUNS" -seed="${FUZZ_SEED:-1}"); fi
export FUZZ_GATE="${gate[*]:-}"
build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${FUZZ_JOBS:-$(nproc)}

if ! command -v clang >/dev/null; then
  echo "run_fuzzers: clang is required (apt-get install clang)" >&2
  exit 1
fi
# -gline-tables-only: file and line in a finding's stack, all a report needs (full -g: 10-25% more
# compile time per file)
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" -DINSTBENCH_FUZZ=ON -DINSTBENCH_CUDA=OFF >/dev/null

if [ $# -gt 0 ]; then
  names=("$@")
else
  names=()
  for src in tests/fuzz/fuzz_*.c; do names+=("$(basename "$src" .c)"); done
fi
cmake --build "$build" -j"$jobs" --target "${names[@]}"

# One fuzzer, its report on stdout; exit 1 when it found something.
fuzz_one() {
  local name=$1 bin corpus art
  bin=$(find "$build" -type f -name "$name" -perm -u+x | head -n 1)
  if [ -z "$bin" ]; then
    echo "run_fuzzers: $name was not built"
    return 1
  fi
  echo "== $name (${secs}s)"
  if [ -x "tests/fuzz/$name.sh" ]; then
    "tests/fuzz/$name.sh" "$bin" "$secs" || return 1
  else
    corpus=$(mktemp -d)
    if [ -d "tests/fuzz/corpus/$name" ]; then cp -r "tests/fuzz/corpus/$name"/. "$corpus"/; fi
    art=$(mktemp -d)
    if ! "$bin" "$corpus" ${gate[@]+"${gate[@]}"} -max_total_time="$secs" -max_len=65536 -artifact_prefix="$art/" \
         -print_final_stats=1 >"$art/log" 2>&1; then
      tail -n 40 "$art/log"
      echo "run_fuzzers: $name FAILED; reproducer(s) kept in $art"
      rm -rf "$corpus"
      return 1
    fi
    grep -E "^(stat::number_of_executed_units|Done)" "$art/log" || true
    rm -rf "$art" "$corpus"
  fi
}

# $jobs fuzzers at a time (each is one process on one core), each one's report printed whole when
# it ends; a fuzzer's exit status is kept in its own file beside its report.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
running=0
for name in "${names[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  ( rc=0; fuzz_one "$name" >"$out/$name.log" 2>&1 || rc=$?; echo "$rc" >"$out/$name.rc"; cat "$out/$name.log" ) &
  running=$((running + 1))
done
wait
failed=()
for name in "${names[@]}"; do
  [ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ] || failed+=("$name")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: failed: ${failed[*]}" >&2
  exit 1
fi
if [ -n "${FUZZ_RUNS:-}" ]; then
  echo "run_fuzzers: all ${#names[@]} fuzzers ran ${FUZZ_RUNS} inputs each (seed ${FUZZ_SEED:-1}) without a finding"
else
  echo "run_fuzzers: all ${#names[@]} fuzzers ran ${secs}s each without a finding"
fi
