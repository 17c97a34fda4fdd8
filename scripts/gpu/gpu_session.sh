#!/bin/bash
# gpu_session.sh: what a GPU lent for a few minutes runs in one call, so that the call that decides
# issue 37's bar is prepared before the machine starts and its results all come back.
#
# A lent GPU is scarce (15 minutes of device time a session, start-up included; one command at most
# 10 minutes), and what a call writes comes back only as a few small files (8 at most, 16 MiB
# each, two folders deep): the 2026-11-28 call lost its logs for one archive over that size.  So
# the checks of scripts/gpu/gpu_check.sh run here in phases, most important first, each bounded by
# what is left of --deadline, and the results are packed in at most 7 files:
#   p1  verify, measure        the CUDA step agrees with the CPU backend and timm, and runs; on a
#                              failure the session stops here (the device time left is kept for a
#                              rerun after a fix)
#   p2  torch, ViT-B/16        instbench against PyTorch eager and torch.compile (fused Adam) in the
#                              same call, with the per-kernel-class table: the bar
#   ab  A/B                    where the bundle has a baseline (gpu_bundle.sh --baseline REV):
#                              that commit's build and this one in turns, ViT-B/16 b128 bf16
#                              (scripts/bench/bench_gpu_ab.sh): what the change since REV is worth
#   p3  realistic, sanitize, auto_batch, host_data
#   p4  torch, ViT-S/16 and ViT-L/16
# OUTDIR gets summary_p<N>.json (gpu_check's summary of each phase that ran), console.txt (all
# that was printed), logs.tgz (every log and JSON of every phase, the kernel traces left out) and
# traces.tgz (the raw kernel traces, *_kernels.tsv); a file that would come back over 16 MiB is replaced by
# a line in console.txt saying so.  The phases' own folders are under a temporary directory.
#
# usage: scripts/gpu/gpu_session.sh [--deadline SECONDS] [--out DIR] [--leave-out STEP,...]
#                                   [--phases PHASE,...] [--bin PATH] [--ab-flags "MEASURE FLAGS"]
#                                   [-- GPU_CHECK_ARGS...]
#   --deadline   seconds from the start the phases must end by (default 520: a 600 s command
#                with time to pack, and 10 s more to kill what ignores SIGTERM); a phase that
#                would start with 20 s or less left is not run
#                (and the session exits 1)
#   --out        where the files go (default: $OUT when set, else build-gpu/session)
#   --leave-out  steps of gpu_check.sh taken out of every phase (a phase left empty is not run),
#                and ab for the A/B
#   --phases     only these of p1,p2,ab,p3,p4 (default all).  What is left of a call's device
#                time after a full session measures one change in about 170 s: --phases p1,p2,ab
#                --leave-out measure --deadline 280 --ab-flags "... --checkpoint off" (docs/benchmarks.md)
#   --bin        the instbench to check (default: bin/instbench beside this script's bundle); the
#                A/B's baseline is baseline/instbench beside it
#   --ab-flags   the A/B's measure flags instead of bench_gpu_ab.sh's ViT-B/16 workload
#   after --     more arguments for every gpu_check.sh phase (--model, --model-args, --steps, ...)
# Exit status: 0 when every phase passed (or had all its steps left out), 1 when one failed, was
# cut by the deadline or was not run for want of time, 2 for bad arguments.  In a bundle (scripts/gpu/gpu_bundle.sh): `./run session [ARGS]`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
DEADLINE=520
OUTDIR=${OUT:-}
LEAVE=
PHASES=p1,p2,ab,p3,p4
BIN=
AB_FLAGS=
while [ $# -gt 0 ]; do
    case "$1" in
        --deadline) DEADLINE=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --out) OUTDIR=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --leave-out) LEAVE=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --phases) PHASES=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --bin) BIN=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --ab-flags) AB_FLAGS=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --) shift; break ;;
        -h|--help) sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu_session.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$DEADLINE" in ''|*[!0-9]*) echo "gpu_session.sh: --deadline takes whole seconds" >&2; exit 2 ;; esac
[ -n "$OUTDIR" ] || OUTDIR=$here/../../build-gpu/session
[ -n "$BIN" ] || BIN=$here/../../bin/instbench
[ -x "$BIN" ] || { echo "gpu_session.sh: no instbench at $BIN (use --bin)" >&2; exit 2; }
steps_all="$(sed -n 's/^ALL_STEPS="\(.*\)"$/\1/p' "$here/gpu_check.sh") ab"
for s in $(echo "$LEAVE" | tr ',' ' '); do
    case " $steps_all " in *" $s "*) ;; *) echo "gpu_session.sh: --leave-out: no step '$s' (steps: $steps_all)" >&2; exit 2 ;; esac
done
[ -n "$PHASES" ] || { echo "gpu_session.sh: --phases takes a list of p1,p2,ab,p3,p4" >&2; exit 2; }
for s in $(echo "$PHASES" | tr ',' ' '); do
    case " p1 p2 ab p3 p4 " in *" $s "*) ;; *) echo "gpu_session.sh: --phases: no phase '$s' (phases: p1 p2 ab p3 p4)" >&2; exit 2 ;; esac
done
mkdir -p "$OUTDIR" || { echo "gpu_session.sh: cannot make $OUTDIR" >&2; exit 2; }
OUTDIR=$(cd "$OUTDIR" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/instbench-session.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
console=$OUTDIR/console.txt
rm -f "$OUTDIR"/summary_p[1-4].json "$OUTDIR/logs.tgz" "$OUTDIR/traces.tgz"   # an earlier session's
: > "$console" || { echo "gpu_session.sh: cannot write $console" >&2; exit 2; }

T0=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
keep() {   # keep STEPS: the comma list without the steps --leave-out names
    local s out=
    for s in $(echo "$1" | tr ',' ' '); do
        case ",$LEAVE," in *",$s,"*) ;; *) out=${out:+$out,}$s ;; esac
    done
    echo "$out"
}
bounded() {   # bounded SECONDS CMD...: CMD under timeout, then whatever it left behind killed
    local tpid rc
    # timeout makes its own process group (its pid) and signals all of it at SECONDS, and kills
    # its child 10 s later if that ignores SIGTERM; a grandchild ignoring it (a step hung on the
    # GPU) outlives a child that died, so what is left of the group is killed here
    timeout -k 10 "$@" &
    tpid=$!
    wait "$tpid"
    rc=$?
    kill -KILL -- "-$tpid" 2>/dev/null
    return $rc
}
asked() {   # asked PHASE: whether --phases names it
    case ",$PHASES," in *",$1,"*) return 0 ;; *) echo "== $1: not asked for (--phases $PHASES)"; return 1 ;; esac
}
phase() {   # phase NAME STEPS [GPU_CHECK_ARGS...]: 0 passed, 1 failed or cut, 3 not run
    local name=$1 steps l rc
    asked "$name" || return 3
    steps=$(keep "$2"); shift 2
    [ -n "$steps" ] || { echo "== $name: every step left out"; return 3; }
    l=$(left)
    [ "$l" -gt 20 ] || { echo "== $name ($steps): not run, ${l} s left of --deadline $DEADLINE"; return 1; }
    echo "== $name ($steps), ${l} s left"
    # no instbench or PyTorch run outlives the deadline by more than 10 s, so the session still
    # packs what it has before the call's limit
    bounded "$l" sh "$here/gpu_check.sh" --bin "$BIN" --out "$work/$name" --only "$steps" "$@"
    rc=$?
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || echo "== $name: cut at --deadline $DEADLINE"
    echo "== $name: exit $rc at $(($(date +%s) - T0)) s"
    [ $rc -eq 0 ] || return 1
}
ab() {   # the baseline's build and this one in turns: 0 passed, 1 failed or cut, 3 not run
    local base l rc
    base=$(dirname "$BIN")/baseline
    asked ab || return 3
    case ",$LEAVE," in *,ab,*) echo "== ab: left out"; return 3 ;; esac
    [ -x "$base/instbench" ] || { echo "== ab: no baseline beside $BIN (gpu_bundle.sh --baseline REV)"; return 3; }
    l=$(left)
    [ "$l" -gt 20 ] || { echo "== ab: not run, ${l} s left of --deadline $DEADLINE"; return 1; }
    echo "== ab: baseline $(cut -c1-12 "$base/REVISION" 2>/dev/null || echo '(no REVISION)') against this build, ${l} s left"
    mkdir -p "$work/ab"
    # shellcheck disable=SC2086 # --ab-flags is a list of flags
    bounded "$l" sh "$here/../bench/bench_gpu_ab.sh" --a "$base/instbench" --b "$BIN" --out "$work/ab" \
        ${AB_FLAGS:+-- $AB_FLAGS} > "$work/ab/ab.log" 2>&1
    rc=$?
    cat "$work/ab/ab.log"
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || echo "== ab: cut at --deadline $DEADLINE"
    echo "== ab: exit $rc at $(($(date +%s) - T0)) s"
    [ $rc -eq 0 ] || return 1
}
show() {   # show FILE...: the files a reader of console.txt needs, in full
    local f
    for f in "$@"; do [ -s "$f" ] && { echo "=== ${f#"$work"/}"; cat "$f"; }; done
    return 0
}
session() {   # the phases, then the packing; its exit status is the session's
    local status=0 rc d f have=() limit=$((16 * 1024 * 1024))
    echo "gpu_session: $(date -u +%FT%TZ), deadline $DEADLINE s, $("$BIN" --version 2>&1 | head -1)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
    phase p1 verify,measure "$@"
    rc=$?
    if [ $rc -eq 1 ]; then
        status=1
        echo "== p1 failed: the session stops here, the device time left kept for a rerun"
        show "$work"/p1/*.log
    else
        phase p2 torch --torch-models vit_base_patch16_224 "$@" || [ $? -eq 3 ] || status=1
        show "$work/p2/torch.log" "$work/p2/bench/kernels.txt" "$work/p2/bench/kernels_nondet.txt"
        ab || [ $? -eq 3 ] || status=1
        phase p3 realistic,sanitize,auto_batch,host_data "$@" || [ $? -eq 3 ] || status=1
        phase p4 torch --torch-models vit_small_patch16_224,vit_large_patch16_224 "$@" || [ $? -eq 3 ] || status=1
        show "$work/p4/torch.log"
    fi
    # pack: what comes back from a device call is a few small files (above)
    for d in p1 p2 ab p3 p4; do
        [ -d "$work/$d" ] || continue
        have+=("$d")
        [ -f "$work/$d/summary.json" ] && cp "$work/$d/summary.json" "$OUTDIR/summary_$d.json"
    done
    if [ ${#have[@]} -gt 0 ]; then
        (cd "$work" && tar czf "$OUTDIR/logs.tgz" --exclude='*_kernels.tsv' "${have[@]}")
        (cd "$work" && find "${have[@]}" -name '*_kernels.tsv' > "$work/traces.list" &&
            { [ ! -s "$work/traces.list" ] || tar czf "$OUTDIR/traces.tgz" -T "$work/traces.list"; })
    fi
    for f in "$OUTDIR/logs.tgz" "$OUTDIR/traces.tgz"; do
        [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt $limit ] || continue
        echo "gpu_session: $(basename "$f") left out: $(($(stat -c %s "$f") / 1048576)) MiB, over the 16 a call returns"
        rm -f "$f"
    done
    echo "gpu_session: exit $status after $(($(date +%s) - T0)) s; in $OUTDIR: $(cd "$OUTDIR" && ls | tr '\n' ' ')"
    return $status
}
session "$@" 2>&1 | tee -a "$console"
exit "${PIPESTATUS[0]}"
