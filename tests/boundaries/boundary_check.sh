#!/bin/sh
# boundary_check.sh CC "INCLUDE_DIRS" OWN HEADER...: compiles a one-line file including each
# HEADER with a target's include directories (as the build gives them to it) and expects the
# modules' private headers to resolve only for their own module: HEADER under OWN/ (or a public
# instbench/ header) must compile, any other module's must fail.  The probe sits in a temporary
# directory so that nothing resolves relative to a source file.
set -u
cc=$1 dirs=$2 own=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=
for d in $(echo "$dirs" | tr ';' ' '); do flags="$flags -I$d"; done
bad=0
for h in "$@"; do
  printf '#include "%s"\nint boundary_probe;\n' "$h" > "$tmp/probe.c"
  # shellcheck disable=SC2086  # one word per flag
  if "$cc" -E $flags "$tmp/probe.c" -o /dev/null 2> "$tmp/err"; then got=compiles; else got=fails; fi
  case $h in
    "$own"/* | instbench/*) want=compiles ;;
    *) want=fails ;;
  esac
  if [ "$got" != "$want" ]; then
    echo "FAIL: $own: #include \"$h\" $got (should $( [ $want = fails ] && echo fail || echo compile))"
    cat "$tmp/err"
    bad=1
  else
    echo "ok: $own: #include \"$h\" $got"
  fi
done
exit $bad
