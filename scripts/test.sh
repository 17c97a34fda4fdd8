#!/usr/bin/env bash
# The whole test suite: dependencies, a release build and an ASan+UBSan build, ctest on both,
# then the bounded fuzz runs.  This is what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --no-build --test-deps   # the build's packages and the tests' (LibreOffice, Slurm, torch, ...)
jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs") | tee -a "$log"

# CUDA 12.x compatibility: the CUDA module's host code against the CUDA 12.9 headers and libraries
# of PyPI's nvidia-*-cu12 wheels (cached under build/cuda12-wheels; SKIP without network unless CI).
scripts/check_cuda12.sh build

# arm64 (Graviton, Grace): a cross build with Debian's aarch64 compiler and arm64 libraries, its
# test programs run under qemu-user (SKIP where the packages cannot be had, unless CI).
scripts/check_aarch64.sh build-aarch64

# Sanitizers: the same suite with AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off: the
# sanitizers do not apply to device code and nvcc is not needed for them).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DINSTBENCH_SANITIZE=ON -DINSTBENCH_CUDA=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -LE slow) | tee -a "$log"

# Fuzzing: every tests/fuzz/fuzz_*.c target (price JSON/XML parsers, AWS config and error parsers,
# safetensors reader, result parser) built with clang's libFuzzer.  Here they gate: a fixed seed and
# a fixed number of inputs each (the seed corpus holds every input a crash was once found with), so
# the same tree passes or fails the same way every time; scripts/run_fuzzers.sh SECONDS explores.
FUZZ_RUNS=${INSTBENCH_FUZZ_RUNS:-60000} FUZZ_SEED=${INSTBENCH_FUZZ_SEED:-1} \
  scripts/run_fuzzers.sh "${INSTBENCH_FUZZ_SECONDS:-60}"

# One closing line over both ctest runs (set -e has stopped us before here on any failure).
awk '/tests passed, [0-9]+ tests failed out of/ {t += $NF; f += $(NF-4)} END {printf "tests: %d passed, %d failed\n", t - f, f}' "$log"
