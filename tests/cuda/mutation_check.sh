#!/usr/bin/env bash
# Deliberate bugs in the CUDA backend, each of which the CPU-run CUDA tests must catch (issue 12):
# a copy of the source tree gets every mutation at once as a mutant schema (below: each site
# rewritten to run the original unless its mutant is the one chosen at run time), is built once,
# and each test that should catch one runs once per mutant and once with none chosen.  With ccache
# on the PATH the copy builds through it (scripts/test.sh's release build fills the cache it
# shares: the copy's layout, src and b/, is the checkout's, so only the rewritten files compile).
# Prints one line per mutation (caught / MISSED, and its seconds) and exits non-zero when one is
# missed or a test fails unmutated.
# The tree itself is never touched, so this can run beside the rest of the suite.
# usage: tests/cuda/mutation_check.sh [SOURCE_DIR]      (needs the CUDA toolkit's headers, cmake, python3)
#        MUTATION_FILTER=TEXT tests/cuda/mutation_check.sh   only the mutations whose name contains TEXT
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the tree without build directories or git metadata
# (tests running beside this one write __pycache__ and logs into the tree: a file changed while tar read
# it is no error here, tar's exit 1; anything worse, 2, still stops the check)
(cd "$src" && { tar --exclude='./build*' --exclude='./.git' --exclude='__pycache__' --warning=no-file-changed -cf - . ||
  [ $? -eq 1 ]; }) | tar -C "$work" -xf -
# cudnn-frontend's headers: the ones the source tree's build fetched (build-venv/ is not copied)
fe_inc=()
[[ -f "$src/build-venv/cudnn-frontend/include/cudnn_frontend.h" ]] &&
    fe_inc=(-DINSTBENCH_CUDNN_FRONTEND_INCLUDE="$src/build-venv/cudnn-frontend/include")
launcher=()
if command -v ccache >/dev/null; then
    # paths under the copy are hashed relative to the build directory, so objects built in a
    # checkout's build/ (the same flags, the same relative paths) are hits here
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=true
fi
# the glue at -O0: compiled here mutated (its schemata), where -O2 costs a minute more
cmake -S "$work" -B "$work/b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=80 -DINSTBENCH_FUZZ=OFF \
    -DINSTBENCH_CUDNN_GLUE_OPT=-O0 "${fe_inc[@]}" "${launcher[@]}" >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; exit 1; }
targets="cuda_vit_sim cuda_gemm cuda_dp_host cuda_dp_sim"
# the cuDNN glue's test (issue 30), where the build has cudnn-frontend's headers
if [[ -f "$work/b/tests/CMakeFiles/cuda_cudnn_sdpa.dir/build.make" ]]; then
    targets+=" cuda_cudnn_sdpa"
else
    echo "mutation_check: no cudnn-frontend headers: the cuDNN glue's mutations are skipped" >&2
fi


# Every mutation is a mutant schema: its text is rewritten, in the copy before it is built, into
# code that runs the original unless MUTANT (mutant k of this list is the one chosen,
# INSTBENCH_MUTANT=k at run time).  The copy builds once; each mutation is one run of its test,
# and each test runs once with none chosen, where the rewritten code must pass as the original
# does.  (Rebuilding per mutation cost more than the runs: the common.cuh one rebuilt every
# kernel, the cuDNN glue's a minute each.)
# name | file | test that must fail | text | the text with MUTANT   (each text must occur once in
# its file, after the schemata above it in the same file are written)
mutations=(
    "kernel index off by one|kernels/bias.cu|cuda_vit_sim|const size_t i = (size_t)r * N + j;|const size_t i = (size_t)r * N + ((MUTANT) ? (j + 1) % N : j);"
    "__syncthreads dropped from a block reduction|kernels/crossentropy.cu|cuda_vit_sim|if (tid < o) smax[tid] = fmaxf(smax[tid], smax[tid + o]);
        __syncthreads();|if (tid < o) smax[tid] = fmaxf(smax[tid], smax[tid + o]);
        if (!(MUTANT)) __syncthreads();"
    "warp reduction one shuffle short|kernels/common.cuh|cuda_vit_sim|for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync|for (int o = (MUTANT) ? 8 : 16; o > 0; o >>= 1) v += __shfl_xor_sync"
    "wrong leading dimension (P v, dv, dq, dk read P or dS densely)|src/cuda/vit.c|cuda_vit_sim|.lda = pl->Ts,|.lda = (MUTANT) ? pl->T : pl->Ts,"
    "wrong epilogue (bias not added)|src/cuda/gemm.c|cuda_gemm|const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;|const cublasLtEpilogue_t epi = (MUTANT) ? CUBLASLT_EPILOGUE_DEFAULT : CUBLASLT_EPILOGUE_BIAS;"
    "wrong leading dimension in the cuBLAS fallback|src/cuda/gemm.c|cuda_gemm|p.first.ld, p.first.stride, A|(MUTANT) ? p.second.ld : p.first.ld, p.first.stride, A"
    "heuristic NOT_SUPPORTED taken for an error|src/cuda/gemm.c|cuda_gemm|if (st == CUBLAS_STATUS_NOT_SUPPORTED) found = 0;|if (st == CUBLAS_STATUS_NOT_SUPPORTED \&\& !(MUTANT)) found = 0;"
    "event wait dropped before a bucket's all-reduce|src/cuda/comm_nccl.c|cuda_dp_sim|    CUDA_TRY(cudaStreamWaitEvent(n->comm_stream, n->ready, 0));|    if (!(MUTANT)) CUDA_TRY(cudaStreamWaitEvent(n->comm_stream, n->ready, 0));"
    "the step not waiting for its pinned input copy|src/cuda/backend_cuda.c|cuda_dp_sim|    CUDA_TRY(cudaStreamWaitEvent(v->stream, v->inputs_ready, 0));|    if (!(MUTANT)) CUDA_TRY(cudaStreamWaitEvent(v->stream, v->inputs_ready, 0));"
    "the captured step never launched as a graph|src/cuda/vit.c|cuda_vit_sim|    KTRY(cudaGraphLaunch(v->graph, v->stream));|    if (!(MUTANT)) KTRY(cudaGraphLaunch(v->graph, v->stream));"
    "a gradient bucket skipped|src/cuda/ddp.c|cuda_dp_host|if (comm_nccl_allreduce_async(d->comm, d->grads + offset, count, \&d->err)) {|if (!((MUTANT) \&\& d->started == 0) \&\& comm_nccl_allreduce_async(d->comm, d->grads + offset, count, \&d->err)) {"
    # --- cudasim's shared-memory checks (issue 25): each must be caught naming the race or the
    # undefined read (must_say below), not only by wrong numbers
    "block reduction: first __syncthreads of the max dropped|kernels/crossentropy.cu|cuda_vit_sim|    smax[tid] = mx;
    __syncthreads();|    smax[tid] = mx;
    if (!(MUTANT)) __syncthreads();"
    "block reduction: first __syncthreads of the sum dropped|kernels/crossentropy.cu|cuda_vit_sim|    ssum[tid] = sum;
    __syncthreads();|    ssum[tid] = sum;
    if (!(MUTANT)) __syncthreads();"
    "LayerNorm backward: the barrier before the next column sum's writes dropped|kernels/layernorm.cu|cuda_vit_sim|            partial[((size_t)blockIdx.x * nacc + a) * D + d] = t;
        }
        __syncthreads();|            partial[((size_t)blockIdx.x * nacc + a) * D + d] = t;
        }
        if (!(MUTANT)) __syncthreads();"
)
race='racecheck: shared-memory race|initcheck: read of undefined shared memory'
declare -A must_say=(
    ["__syncthreads dropped from a block reduction"]=$race
    ["block reduction: first __syncthreads of the max dropped"]=$race
    ["block reduction: first __syncthreads of the sum dropped"]=$race
    ["LayerNorm backward: the barrier before the next column sum's writes dropped"]=$race
)
# --- end of cudasim's block

# issue 25, defects found by reading (helper GPU): each one's fix undone
mutations+=(
    "the cuBLASLt heuristic asked with a NULL bias pointer|src/cuda/gemm.c|cuda_gemm|        CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, \&bias, sizeof bias));
    }|        if (!(MUTANT)) CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, \&bias, sizeof bias));
    }"
    "the plan cache blind to the bias alignment|src/cuda/gemm.c|cuda_gemm|k.alignBias = bias ? alignment(bias, 0, esize(d->c), 1) : 0;|k.alignBias = bias \&\& !(MUTANT) ? alignment(bias, 0, esize(d->c), 1) : 0;"
    "an allocation inside the captured step|src/cuda/vit.c|cuda_vit_sim|        KTRY(cudaStreamBeginCapture(v->stream, cudaStreamCaptureModeThreadLocal));|        KTRY(cudaStreamBeginCapture(v->stream, cudaStreamCaptureModeThreadLocal));
        if (MUTANT) {
            void *extra = NULL;
            if (cudaMalloc(\&extra, 256) == cudaSuccess) cudaFree(extra);
        }"
    "a failing rank aborts its siblings' NCCL communicators|src/cuda/dp.c|cuda_dp_host|    comm_nccl_abort(dp->comms[i]);
    int idle = 0;|    if (MUTANT)
        for (int k = 0; k < dp->nlocal; k++) comm_nccl_abort(dp->comms[k]);
    else
        comm_nccl_abort(dp->comms[i]);
    int idle = 0;"
)

# issue 30: the cuDNN attention glue (src/cuda/cudnn_sdpa.cpp, NVIDIA's cudnn-frontend), which
# only executing it can check: run through the CPU stand-in of libcudnn against float64 attention
# (tests/cuda/cudnn_sdpa_test.c).
if [[ $targets == *cuda_cudnn_sdpa* ]]; then
mutations+=(
    "cuDNN: q, k, v viewed with o's token stride|src/cuda/cudnn_sdpa.cpp|cuda_cudnn_sdpa|{T * row, hd, row, 1}|{T * row, hd, MUTANT ? H * hd : row, 1}"
    "cuDNN: dK and dV swapped|src/cuda/cudnn_sdpa.cpp|cuda_cudnn_sdpa|set_uid(UID_DK).set_dim(grad.get_dim()).set_stride(grad.get_stride());
        dv->set_output(true).set_uid(UID_DV)|set_uid(MUTANT ? UID_DV : UID_DK).set_dim(grad.get_dim()).set_stride(grad.get_stride());
        dv->set_output(true).set_uid(MUTANT ? UID_DK : UID_DV)"
    "cuDNN: the forward's softmax scale dropped|src/cuda/cudnn_sdpa.cpp|cuda_cudnn_sdpa|.set_generate_stats(true).set_attn_scale(scale);|.set_generate_stats(true);
        if (!(MUTANT)) opt.set_attn_scale(scale);"
    "cuDNN: the statistics in bf16|src/cuda/cudnn_sdpa.cpp|cuda_cudnn_sdpa|set_uid(UID_STATS)
            .set_data_type(fe::DataType_t::FLOAT)|set_uid(UID_STATS)
            .set_data_type(MUTANT ? fe::DataType_t::BFLOAT16 : fe::DataType_t::FLOAT)"
    "cuDNN: graphs cached without T (reused across shapes)|src/cuda/cudnn_sdpa.cpp|cuda_cudnn_sdpa|key{device, B, T, H|key{device, B, MUTANT ? 0 : T, H"
    "cuDNN: graphs cached without the backward's mode (issue 37, D7)|src/cuda/cudnn_sdpa.cpp|cuda_cudnn_sdpa|scale, deterministic ? 1 : 0};|scale, (MUTANT) ? 0 : (deterministic ? 1 : 0)};"
    "cuDNN: the workspace an estimate, not the built graphs' (issue 37, D5)|src/cuda/cudnn_sdpa.cpp|cuda_cudnn_sdpa|a.workspace = (size_t)(ws_f > ws_b ? ws_f : ws_b);|a.workspace = (MUTANT) ? (size_t)B * H * ((T + 127) / 128 * 128) * a.hd * 4 + ((size_t)16 << 20)
                                : (size_t)(ws_f > ws_b ? ws_f : ws_b);"
)
fi

keep_filtered() {   # the mutations whose name holds MUTATION_FILTER; their tests become the targets
    local kept=() m t
    targets=""
    for m in "${mutations[@]}"; do
        [[ ${m%%|*} == *"$MUTATION_FILTER"* ]] || continue
        kept+=("$m")
        t=${m#*|*|} t=${t%%|*}
        [[ " $targets " == *" $t "* ]] || targets+=" $t"
    done
    mutations=("${kept[@]}")
}
[[ -z ${MUTATION_FILTER:-} ]] || keep_filtered   # those mutations only, and only the tests they need

# The schemata, written into the copy before it is built: every site of a file at once, the
# mutant chosen at run time (read once; 0: none).
declare -A schema_files=()
for m in "${mutations[@]}"; do
    f=${m#*|} f=${f%%|*}
    schema_files[$f]=1
done
for file in "${!schema_files[@]}"; do
    python3 - "$work/$file" "$file" "${mutations[@]}" <<'PY' || exit 1
import sys
path, rel, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
s = open(path).read()
for k, m in enumerate(entries, 1):
    name, file, test, text, repl = m.split("|", 4)
    if file != rel:
        continue
    # '\&' in the list is a plain '&'; a '|' (C's ||) would have split the fields wrongly
    text, repl = text.replace("\\&", "&"), repl.replace("\\&", "&")
    if "|" in repl or "MUTANT" not in repl:
        sys.exit("mutation_check: '%s': its schema text holds a '|' or no MUTANT" % name)
    if s.count(text) != 1:
        sys.exit("mutation_check: '%s': its text occurs %d times in %s, not once (update the script)"
                 % (name, s.count(text), file))
    s = s.replace(text, repl.replace("MUTANT", "(instbench_mutant_() == %d)" % k))
# guarded: kernels/common.cuh is a header, included with a kernel file that may have its own
open(path, "w").write("#ifndef INSTBENCH_MUTANT_\n#define INSTBENCH_MUTANT_\n#include <stdlib.h>\n"
                      "static int instbench_mutant_(void) __attribute__((unused));\n"
                      "static int instbench_mutant_(void)\n{\n"
                      "    static int m = -1;\n"
                      "    if (m < 0) m = getenv(\"INSTBENCH_MUTANT\") ? atoi(getenv(\"INSTBENCH_MUTANT\")) : 0;\n"
                      "    return m;\n}\n#endif\n" + s)
PY
done

t0=$SECONDS
cmake --build "$work/b" -j"$(nproc)" --target $targets >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log" >&2; exit 1; }
echo "mutation_check: the copy built in $((SECONDS - t0))s"
run_test() {   # the test binary, from tests/ as ctest runs it, mutant ${2:-0} chosen; 0 when it passes
    (cd "$work/tests" && CUDA_VIT_FAIL_FAST=1 INSTBENCH_MUTANT=${2:-0} timeout 600 "$work/b/tests/$1" \
        >"$work/test.log" 2>&1)
}
for t in $targets; do
    t0=$SECONDS
    run_test "$t" || { echo "mutation_check: $t fails without any mutation:" >&2; tail -n 20 "$work/test.log" >&2; exit 1; }
    echo "mutation_check: $t passes with its schemata, no mutant chosen ($((SECONDS - t0))s)"
done

missed=0
for k in "${!mutations[@]}"; do
    m=${mutations[$k]} name=${m%%|*} t=${m#*|*|} t=${t%%|*}
    t0=$SECONDS
    if run_test "$t" $((k + 1)); then
        result="MISSED"
        missed=$((missed + 1))
    else
        result="caught by $t"
    fi
    if [[ $result == caught\ by* && -n ${must_say[$name]:-} ]] && ! grep -Eq "${must_say[$name]}" "$work/test.log"; then
        result="MISSED (failed, but its log does not say: ${must_say[$name]})"   # cudasim's block
        missed=$((missed + 1))
    fi
    printf '%-62s %-28s %4ds\n' "$name" "$result" $((SECONDS - t0))   # the seconds: what each costs the suite
done
echo "mutation_check: ${#mutations[@]} mutations, $missed missed"
exit $((missed > 0))
