# Sourced (from the repository root) by the benchmarks that talk to the fake AWS (scripts/bench/bench_prices.sh,
# scripts/bench/bench_prices_latency.sh): a scratch directory removed on exit, and the server started on
# a free loopback port.
#   find_instbench NAME       sets $bin, unless given, to build/instbench or the first build*/instbench
#   fake_aws_workdir          sets $work (mktemp -d) and an EXIT trap removing it and stopping the server
#   fake_aws_start NAME ARGS  starts tests/fakes/aws_fake_server.py ARGS, sets $ep (its URL) and $ep_port;
#                             NAME prefixes the error when it does not start
ep_pid=""

find_instbench() {
  if [ -z "${bin:-}" ]; then
    for b in build/instbench build*/instbench; do [ -x "$b" ] && { bin=$b; break; }; done
  fi
  [ -x "${bin:-}" ] || { echo "$1: no instbench binary (build it, or pass --instbench)" >&2; exit 1; }
}

fake_aws_workdir() {
  work=$(mktemp -d)
  trap fake_aws_cleanup EXIT
}

fake_aws_cleanup() {
  local rc=$?
  if [ -n "$ep_pid" ]; then kill "$ep_pid" 2>/dev/null || true; wait "$ep_pid" 2>/dev/null || true; fi
  rm -rf "$work"
  exit "$rc"
}

fake_aws_start() {
  local name=$1
  shift
  /usr/bin/python3 tests/fakes/aws_fake_server.py "$@" --port-file "$work/port" >/dev/null 2>"$work/endpoint.log" &
  ep_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { echo "$name: the endpoint did not start" >&2; cat "$work/endpoint.log" >&2; exit 1; }
  ep_port=$(cat "$work/port")
  ep=http://127.0.0.1:$ep_port
}
