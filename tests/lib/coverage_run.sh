#!/usr/bin/env bash
# Runs a test program built with --coverage (from tests/, as ctest runs tests), then
# coverage_report.py on what it reached: the test's own verdict first, then the coverage floor.
# usage: coverage_run.sh PYTHON BINARY OBJECT_DIR MIN PATH...
set -euo pipefail
python=$1 bin=$2 objdir=$3
shift 3
find "$objdir" -name '*.gcda' -delete
"$bin"
"$python" "$(dirname "$0")/coverage_report.py" "$objdir" "$@"
