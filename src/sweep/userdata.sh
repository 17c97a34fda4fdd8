#!/bin/bash
# instbench sweep: what one instance of a candidate runs, as EC2 user data (issue 23).
# The template src/sweep/userdata.sh; `instbench sweep run` fills in the values below
# (src/sweep/userdata.c: single-quoted, presigned URLs only, never a credential).
# Timer, log, identity (IMDSv2), source (sha256 checked), [EFA checks], packages, build,
# [rendezvous], measure, result PUT (node 0); on any failure the log's last 64 KiB PUT; always
# power off.  Test hooks (environment only, the text stays as shipped): INSTBENCH_IMDS_ENDPOINT,
# INSTBENCH_USERDATA_PREBUILT (an instbench to use instead of building),
# INSTBENCH_USERDATA_SKIP_PACKAGES=1, INSTBENCH_USERDATA_MASTER_ADDR/_PORT (nodes sharing one
# loopback), INSTBENCH_USERDATA_ROOT (a fake / for the EFA checks' /sys and /opt), and PATH
# (stub shutdown, poweroff, apt-get).
set -euo pipefail
#@INSTBENCH_VALUES@
: "${SWEEP_ID:?this is the template: instbench sweep run renders it}"

# The build dependencies, the one list (docs/usage.md "On the instance" names the Ubuntu
# releases checked).  oneDNN only where the distribution's is 2.x, the API the CPU backend uses.
# python3-pip: cmake/cudnn_frontend.cmake fetches the pinned cudnn-frontend headers with it
PACKAGES=(build-essential cmake pkg-config libcjson-dev libcurl4-openssl-dev libexpat1-dev libssl-dev python3-pip)
DNNL_PACKAGE=libdnnl-dev

IMDS=${INSTBENCH_IMDS_ENDPOINT:-http://169.254.169.254}
PORT=${INSTBENCH_USERDATA_MASTER_PORT:-29500}
RANK=0
LOG=/dev/null

say() { printf '%s instbench-sweep: %s\n' "$(date -u +%FT%TZ)" "$*"; }

# PUT file $1 to presigned URL $2; fails unless S3 answers 200.  The answer goes to a file: curl
# cannot truncate /dev/null before a retry.
put() {
    local code
    code=$(curl -sS --retry 5 --retry-connrefused -o "$1.answer" -w '%{http_code}' -T "$1" "$2") || code=000
    [[ $code == 200 ]] || { say "PUT of $1 answered HTTP $code"; return 1; }
}

# On any exit: a failure sends the log's last 64 KiB to this node's log URL; then power off
# (InstanceInitiatedShutdownBehavior=terminate ends the instance).
finish() {
    local rc=$?
    trap - EXIT
    set +e
    if ((rc != 0)); then
        say "failed (exit $rc)"
        local url=${LOG_URLS[$RANK]:-}
        if [[ -n $url && -f $LOG ]]; then
            tail -c 65536 "$LOG" >"$LOG.tail" && put "$LOG.tail" "$url" && say "log tail delivered"
        else
            say "node $RANK has no log URL (user data room: docs/usage.md)"
        fi
    fi
    say "powering off"
    poweroff
    exit "$rc"
}
trap finish EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# 1. The instance's own end, before anything else: the laptop that started the sweep may close.
shutdown -h "+$MAX_MINUTES"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/instbench-sweep.XXXXXX")
LOG=$WORK/sweep.log
exec >>"$LOG" 2>&1
say "sweep $SWEEP_ID candidate $CANDIDATE ($NODES node(s), $MARKET, $REGION), off in $MAX_MINUTES min"

# 2. Identity from IMDSv2; measure reads the same service for its own (type, zone, market).
export AWS_EC2_METADATA_SERVICE_ENDPOINT=$IMDS
TOKEN=$(curl -sSf --retry 5 --retry-connrefused -X PUT \
    -H 'X-aws-ec2-metadata-token-ttl-seconds: 21600' "$IMDS/latest/api/token")
imds() { curl -sSf --retry 5 -H "X-aws-ec2-metadata-token: $TOKEN" "$IMDS/latest/meta-data/$1"; }
# RANK stays 0 (node 0's log URL) until the index is known to be one of this candidate's
index=$(imds ami-launch-index)
[[ $index =~ ^[0-9]+$ ]] && ((index < NODES)) || { say "launch index '$index' is not below $NODES"; exit 1; }
RANK=$index
say "instance $(imds instance-id) $(imds instance-type) in $(imds placement/region)," \
    "$(imds instance-life-cycle), launch index $RANK, address $(imds local-ipv4)"

# 3. The source the user's build came from, checked against the digest the sweep computed.  An
# EFA launch has no public address until the sweep associates its Elastic IP: S3 is waited for.
if ((EFA_DEVICES > 0)); then
    t=0 w=$((MAX_MINUTES * 30 < 900 ? MAX_MINUTES * 30 : 900))
    until curl -s -o /dev/null -r 0-0 --connect-timeout 10 -m 30 "$SOURCE_URL"; do
        ((t)) || say "no route to S3: waiting up to ${w}s for the public address (Elastic IP)"
        ((t < w)) || { say "S3 unreachable for ${w}s"; exit 1; }
        sleep 5
        t=$((t + 5))
    done
    say "S3 reachable (waited ${t}s)"
fi
curl -sSf --retry 5 --retry-connrefused -o "$WORK/src.tar.gz" "$SOURCE_URL"
echo "$SOURCE_SHA256  $WORK/src.tar.gz" | sha256sum -c -

# EFA: the devices the launch attached, libfabric's efa provider and the AMI's aws-ofi-nccl, or
# no measurement (one over TCP sockets would be a wrong row).  docs/usage.md "On the instance";
# fi_info -p efa -t FI_EP_RDM: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start.html
if ((EFA_DEVICES > 0)); then
    R=${INSTBENCH_USERDATA_ROOT:-} efa=()
    for d in "$R"/sys/class/infiniband/*; do
        [[ $(readlink "$d/device/driver") == */efa ]] && efa+=("${d##*/}")
    done
    say "EFA: ${#efa[@]} device(s) ${efa[*]}"
    ((${#efa[@]} >= EFA_DEVICES)) || { say "EFA: $EFA_DEVICES device(s) expected, ${#efa[@]} found"; exit 1; }
    E=$R/opt/amazon/efa
    if [[ -x $E/bin/fi_info ]]; then
        out=$("$E/bin/fi_info" -p efa -t FI_EP_RDM 2>&1) && [[ $out == *"provider: efa"* ]] ||
            { say "EFA: $E/bin/fi_info -p efa found no efa provider: $out"; exit 1; }
        say "EFA: fi_info: $(grep -c 'domain:' <<<"$out") efa domain(s)"
    else
        say "EFA: no $E/bin/fi_info"
    fi
    # the .deb put it in lib/<multiarch> up to 1.16 (aws-ofi-nccl 6eb0870a): amd64's and arm64's are uname -m's
    dirs=("$R"/opt/amazon/ofi-nccl/lib "$R"/opt/amazon/ofi-nccl/lib/"$(uname -m)"-linux-gnu
          "$R"/opt/amazon/aws-ofi-nccl/lib "$R"/opt/aws-ofi-nccl/lib) lib=
    for d in "${dirs[@]}"; do
        for f in "$d"/libnccl-net.so "$d"/libnccl-net-*.so; do [[ -z $lib && -f $f ]] && lib=$f; done
    done
    [[ -n $lib ]] || { say "EFA: no aws-ofi-nccl (libnccl-net*.so) in ${dirs[*]}"; exit 1; }
    say "EFA: aws-ofi-nccl $lib"
fi

if [[ -n ${INSTBENCH_USERDATA_PREBUILT:-} ]]; then
    BIN=$INSTBENCH_USERDATA_PREBUILT
    say "using the prebuilt $BIN"
else
    # 4. Build dependencies; a fresh AMI's unattended upgrades may hold the dpkg lock a while.
    if [[ ${INSTBENCH_USERDATA_SKIP_PACKAGES:-0} != 1 ]]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get -o DPkg::Lock::Timeout=600 update -q
        dnnl=$(apt-cache policy "$DNNL_PACKAGE" | sed -n 's/^ *Candidate: *//p')
        if [[ $dnnl == 2.* ]]; then PACKAGES+=("$DNNL_PACKAGE"); else say "no oneDNN 2.x ($dnnl): no CPU backend"; fi
        apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${PACKAGES[@]}"
    fi
    # 5. Build: the AMI's CUDA when it has one, for this machine's GPU only.
    mkdir "$WORK/src"
    tar -xzf "$WORK/src.tar.gz" -C "$WORK/src"
    export PATH=$PATH:/usr/local/cuda/bin
    flags=(-DCMAKE_BUILD_TYPE=Release -DINSTBENCH_TESTS=OFF)
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d .) || cap=
    [[ $cap =~ ^[0-9]+$ ]] && flags+=("-DCMAKE_CUDA_ARCHITECTURES=$cap")
    # build/ inside the sources, as in a checkout: a compiler cache given through CMake's
    # CMAKE_<LANG>_COMPILER_LAUNCHER then shares its objects with a checkout's build
    cmake -S "$WORK/src" -B "$WORK/src/build" "${flags[@]}"
    export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
    cmake --build "$WORK/src/build"
    BIN=$WORK/src/build/instbench
fi
"$BIN" --version

# 6. Multi-node: node 0's private IP appears at the rendezvous URL once every node has started.
topology=()
if ((NODES > 1)); then
    until MASTER=$(curl -sf "$RENDEZVOUS_URL"); do sleep 2; done
    MASTER=$(printf '%s' "$MASTER" | head -n1 | tr -d '[:space:]')
    [[ $MASTER =~ ^[0-9A-Za-z.:-]+$ ]] || { say "rendezvous answered no address"; exit 1; }
    say "node 0 is at $MASTER"
    MASTER=${INSTBENCH_USERDATA_MASTER_ADDR:-$MASTER}
    topology=(--nnodes "$NODES" --node-rank "$RANK" --master-addr "$MASTER" --master-port "$PORT")
fi

# 7. Measure, then node 0 delivers the result.  EFA: NCCL loads aws-ofi-nccl (libnccl-net.so, or
# libnccl-net-NAME.so by NCCL_NET_PLUGIN=NAME) and libfabric from the loader path, efa provider only
# (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start-nccl.html,
# https://docs.aws.amazon.com/dlami/latest/devguide/tutorial-efa-using.html); the plugin sets its
# per-type defaults itself, libfabric turns RDMA on where the device has it.
if ((EFA_DEVICES > 0)); then
    export FI_PROVIDER=efa LD_LIBRARY_PATH=${lib%/*}:$E/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    [[ $lib != */libnccl-net.so ]] && n=${lib##*/libnccl-net-} && export NCCL_NET_PLUGIN=${n%.so}
fi
# cuDNN: the Base OSS DLAMI ships it inside each toolkit (/usr/local/cuda-12.x/lib), with no Python
# environment; instbench loads the newest cuDNN it finds there itself (docs/usage.md), so nothing
# goes on LD_LIBRARY_PATH; the log says what the machine has, the result which one ran.
for f in "${INSTBENCH_USERDATA_ROOT:-}"/usr/local/cuda*/lib{,64}/libcudnn.so.9; do
    if [[ -e $f ]]; then say "cuDNN found: $f -> $(readlink -f "$f")"; fi
done
"$BIN" measure "${topology[@]}" "${MEASURE_ARGS[@]}" --output "$WORK/result.json"
if ((RANK == 0)); then
    put "$WORK/result.json" "$RESULT_URL"
    say "result delivered"
fi
