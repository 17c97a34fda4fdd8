#!/usr/bin/env bash
# The one style: every tracked C, C++ and CUDA source formatted as .clang-format says (issue 40).
# usage: scripts/ci/check_format.sh          exit 1 naming each file that differs (what CI runs)
#        scripts/ci/check_format.sh --fix    rewrite those files in place
# clang-format's output changes between releases, so the check uses release 14 (Debian 12's
# clang-format, which scripts/bootstrap.sh --test-deps installs): another release is refused
# rather than reporting differences that are only the tool's.  Without it: SKIP (exit 0), unless
# CI is set.
set -euo pipefail
cd "$(dirname "$0")/../.."
fix=0
[ "${1:-}" = "--fix" ] && fix=1

cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null 2>&1 && "$c" --version | grep -q "version 14\."; then cf=$c; break; fi
done
if [ -z "$cf" ]; then
  if [ -n "${CI:-}" ]; then
    echo "check_format: clang-format 14 is required (apt-get install clang-format)" >&2
    exit 1
  fi
  echo "check_format: SKIP (no clang-format 14 here; apt-get install clang-format on Debian 12)"
  exit 0
fi

mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.cu' '*.cuh' | grep -v '^tests/data/')
# one clang-format per file, as many at once as there are CPUs; the files it finds wrong, a line each
export cf fix
mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 -n 16 -P "$(nproc)" bash -c '
  for f; do
    if [ "$fix" = 1 ]; then "$cf" -i --style=file "$f" || echo "$f"
    elif ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then echo "$f"; fi
  done' _ | sort)
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check_format: not formatted as .clang-format says: %s\n' "${bad[@]}" >&2
  echo "check_format: ${#bad[@]} file(s); scripts/ci/check_format.sh --fix rewrites them" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted as .clang-format says ($("$cf" --version | head -n 1))"
