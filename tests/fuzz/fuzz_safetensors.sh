#!/usr/bin/env bash
# Bounded libFuzzer run of the safetensors reader.  usage: fuzz_safetensors.sh FUZZER [SECONDS]
# Seeds: small valid files made here plus the committed reference fixtures, copied to a temp
# corpus so the run never writes into tests/data.
set -euo pipefail
fuzzer=$1
secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$here"/../data/ref_*.safetensors "$corpus"/
python3 - "$corpus" <<'PY'
import json, struct, sys
def w(name, header, data):
    h = json.dumps(header).encode()
    open(f"{sys.argv[1]}/{name}", "wb").write(struct.pack("<Q", len(h)) + h + data)
w("seed_empty", {}, b"")
w("seed_meta", {"__metadata__": {"steps": "3"}}, b"")
w("seed_two", {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
               "b": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]}}, bytes(16))
w("seed_bf16", {"x": {"dtype": "BF16", "shape": [1, 3], "data_offsets": [0, 6]}}, bytes(6))
PY
# FUZZ_GATE: run_fuzzers.sh's fixed seed and run count when gating (empty when exploring)
# shellcheck disable=SC2086
"$fuzzer" "$corpus" ${FUZZ_GATE:-} -max_total_time="$secs" -max_len=65536 -print_final_stats=1 2>&1 | tail -n 20
