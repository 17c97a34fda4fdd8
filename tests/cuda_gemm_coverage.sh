#!/usr/bin/env bash
# The line coverage of src/cuda/gemm.c reached by tests/cuda_gemm.c on the cuBLASLt stand-in
# (issue 12's bar: every function of gemm.c executes without a GPU).  Runs the --coverage build
# of the test, asks gcov, prints the figure, and fails below MIN percent of lines or when any
# function of gemm.c never ran.
# usage: cuda_gemm_coverage.sh TEST_BINARY OBJECT_DIR MIN
set -euo pipefail
bin=$1 objdir=$2 min=$3
find "$objdir" -name '*.gcda' -delete
"$bin" >/dev/null
gcda=$(find "$objdir" -name 'gemm.c.gcda' | head -n 1)
[ -n "$gcda" ] || { echo "no coverage data for gemm.c under $objdir" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
out=$(gcov -f -o "$(dirname "$gcda")" "$gcda" 2>/dev/null)
# gcov -f prints "Function 'name'" / "Lines executed:P% of N" pairs, then the file's own pair
lines=$(printf '%s\n' "$out" | awk "/^File '.*src\/cuda\/gemm.c'/ {f=1; next} f && /^Lines executed/ {print; exit}")
pct=$(printf '%s\n' "$lines" | sed 's/Lines executed:\([0-9.]*\)%.*/\1/')
unrun=$(printf '%s\n' "$out" | awk '/^Function / {fn=$2} /^Lines executed:0.00%/ && fn {print fn} /^File/ {fn=""}')
echo "src/cuda/gemm.c: $lines"
[ -z "$unrun" ] || { echo "functions of gemm.c never run: $unrun" >&2; exit 1; }
awk -v p="$pct" -v m="$min" 'BEGIN {exit !(p + 0 >= m + 0)}' || { echo "below the $min% floor" >&2; exit 1; }
