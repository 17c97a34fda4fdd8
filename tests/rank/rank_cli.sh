#!/bin/sh
# `instbench rank` flag handling: every invalid flag or value is a usage error (exit 2) with a
# message naming the flag; help exits 0.  Usage: rank_cli.sh INSTBENCH
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
cat > "$T/r.json" <<'J'
{"schema": "instbench.result/v1", "instance": {"type": "g5.xlarge", "region": "us-east-1"},
 "workload": {"fingerprint": "abcdef"}, "topology": {"nodes": 1},
 "measurement": {"samples_per_second": 100}}
J
cat > "$T/p.json" <<'J'
{"schema": "instbench.prices/v1", "generated_at": "2026-11-21T00:00:00Z", "snapshot": null,
 "prices": [{"instance_type": "g5.xlarge", "region": "us-east-1",
   "on_demand": {"usd_per_hour": 1.0, "source": "file", "as_of": "2026-11-21T00:00:00Z"},
   "spot": null, "interruption": null, "placement_score": null}]}
J

expect() {   # expect CODE WORD args...: exit status CODE and WORD on stderr
    code=$1 word=$2
    shift 2
    "$BIN" rank "$@" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    if [ "$rc" != "$code" ] || ! grep -q -e "$word" "$T/err"; then
        echo "FAIL: rank $* -> exit $rc (want $code), stderr lacks '$word':"
        sed 's/^/    /' "$T/err"
        fail=1
    fi
}

R="$T/r.json"
P="--source=$T/p.json"
expect 2 "no result files"       "$P"
expect 2 "unknown option"        "$R" "$P" --frobnicate
expect 2 "--market"              "$R" "$P" --market cheap
expect 2 "--market needs"        "$R" "$P" --market
expect 2 "--sort"                "$R" "$P" --sort price
expect 2 "--spot-price"          "$R" "$P" --spot-price cheapest
expect 2 "needs --az"            "$R" "$P" --spot-price az
expect 2 "--az goes with"        "$R" "$P" --spot-price median --az us-east-1a
expect 2 "--format"              "$R" "$P" --format xml
expect 2 "--samples"             "$R" "$P" --samples -5
expect 2 "--samples"             "$R" "$P" --samples nan
expect 2 "--samples"             "$R" "$P" --samples 1e999
expect 2 "--samples"             "$R" "$P" --samples 12abc
expect 2 "--budget"              "$R" "$P" --budget 0
expect 2 "--deadline"            "$R" "$P" --deadline inf
expect 2 "--max-hourly"          "$R" "$P" --max-hourly=-1
expect 2 "need a target"         "$R" "$P" --deadline 5
expect 2 "need a target"         "$R" "$P" --budget 5
expect 2 "go together"           "$R" "$P" --epochs 3
expect 2 "not both"              "$R" "$P" --samples 10 --epochs 3 --dataset-size 10
expect 2 "--top"                 "$R" "$P" --top 0
expect 2 "--region"              "$R" "$P" --region 'us east;1'
# names that name nothing: exit 2 with the nearest real one (issue 13)
expect 2 "did you mean us-east-1?"      "$R" "$P" --region us-esat-1
expect 2 "did you mean us-east-1?"      "$R" "$P" --region US-EAST-1
expect 2 "did you mean g5.xlarge?"      "$R" "$P" --instance-types g5.xlarg
expect 2 "matches no configuration"     "$R" "$P" --instance-types 'p4*'
expect 2 "did you mean --region?"       "$R" "$P" --regoin us-east-1
expect 2 "--az: 'us east 1a'"           "$R" "$P" --az 'us east 1a'
expect 2 "--price"               "$R" "$P" --price g5.xlarge=abc
expect 2 "names no machine"      "$R" "$P" --price =3
expect 2 "--price"               "$R" "$P" --price x=-1
expect 2 "NAME=USD"              "$R" "$P" --price g5.xlarge
expect 2 "on-demand or spot"     "$R" "$P" --price g5.xlarge:reserved=1
expect 2 "twice"                 "$R" "$P" --price g5.xlarge=1 --price=g5.xlarge=2
expect 2 "matches no workload"   "$R" "$P" --workload ffff
expect 2 "non-empty"             "$R" "$P" --workload=
expect 1 "no usable results"     "$T/p.json" "$P"
# an empty folder: what rank looks for in it, and what writes it
mkdir "$T/empty"
expect 1 "no \*.json or \*.jsonl file (or .gz) in $T/empty; instbench measure writes them" "$T/empty" "$P"
# precise number messages; nothing priced is exit 1 with a line saying how to get prices
expect 2 "above the maximum"     "$R" "$P" --samples 1e300
# a sample count is at least one sample; an epoch count may be a fraction
expect 2 "'0' is below the minimum, 1 "             "$R" "$P" --samples 0
expect 2 "'0.5' is below the minimum, 1 "           "$R" "$P" --epochs 3 --dataset-size 0.5
expect 0 ""                      "$R" "$P" --samples 1 --format json
expect 0 ""                      "$R" "$P" --epochs 0.5 --dataset-size 10 --format json
# ... and so is a target given as epochs: --epochs E --dataset-size S is --samples E*S
expect 2 "the target (--epochs x --dataset-size) is below one sample" "$R" "$P" --epochs 0.5 --dataset-size 1
expect 2 "whitespace"            "$R" "$P" --top " 3"
expect 1 "instbench prices --instance-types g5.xlarge --region us-west-2" "$R" "$P" --region us-west-2
expect 1 "instbench prices"      "$R" "$P" --region us-west-2 --format json
expect 1 "nothere"               "$R" --source "$T/nothere.json"
"$BIN" rank --help >"$T/out" 2>&1 || { echo "FAIL: --help exit $?"; fail=1; }
for flag in --workload --source --region --market --spot-price --az --samples --epochs --dataset-size \
            --deadline --budget --max-hourly --pareto --sort --top --format --plot --price; do
    grep -q -e "$flag" "$T/out" || { echo "FAIL: --help does not document $flag"; fail=1; }
done
# Valid runs, both flag spellings; stdout carries only the result.
"$BIN" rank "$R" --source "$T/p.json" --format=csv --sort=cost --top 1 >"$T/out" 2>"$T/err" || { echo "FAIL: valid run"; fail=1; }
head -1 "$T/out" | grep -q '^rank,configuration,' || { echo "FAIL: CSV header"; fail=1; }
# the ranked rows (a rank in the first cell); unpriced rows follow with an empty rank
[ "$(grep -c "^[0-9]" "$T/out")" = 1 ] || { echo "FAIL: --top 1 gave $(grep -c "^[0-9]" "$T/out") ranked lines"; fail=1; }
# Prefix match of the workload is case-insensitive; an ambiguous prefix is refused.
"$BIN" rank "$R" --source "$T/p.json" --workload ABC --format json >/dev/null 2>&1 || { echo "FAIL: prefix"; fail=1; }
sed 's/abcdef/abc999/' "$R" > "$T/r2.json"
expect 2 "ambiguous"             "$R" "$T/r2.json" "$P" --workload abc
[ $fail = 0 ] && echo "rank cli: all checks passed"
exit $fail
