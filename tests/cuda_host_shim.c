/* cuda_host_shim: a host-memory stand-in for the CUDA runtime calls, the kernel launchers of
 * src/cuda/kernels.h and cuda_gemm, so src/cuda/vit.c (the CUDA backend's training step: buffer
 * wiring, offsets, GEMM shapes and strides, op order, gradient-hook ranges) runs on a machine
 * without a GPU (tests/cuda_vit_host.c).  Each launcher here is a plain loop with the semantics
 * documented in kernels.h; GEMMs go through cuda_gemm_plan like the real ones and an emulated
 * column-major BLAS.  What this cannot check is the .cu kernels themselves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "cuda/gemm.h"
#include "cuda/kernels.h"
#include "cuda/layout.h"

/* ---- runtime ---- */
/* Streams and events are objects that carry one fact, whether their work can ever complete, as
 * the communicator that hangs them: a collective whose peer is gone hangs its stream
 * (cuda_nccl_shim.c), an event recorded there hangs, a stream made to wait on that event hangs
 * from then on; ncclCommAbort ends that communicator's work, so what it hung completes again.
 * Every other stream runs (all work is executed synchronously at the call). */
typedef struct shim_stream { const void *hung; } shim_stream;
typedef struct shim_event { const void *hung; } shim_event;
static shim_stream *live_streams[64];
/* which devices were made current (a context on a real GPU): tests check a probe touches none */
int shim_touched_devices;
static __thread int shim_current;
cudaError_t cudaSetDevice(int d)
{
    if (d < 0 || d >= 2) return cudaErrorInvalidDevice;
    shim_current = d;
    shim_touched_devices |= 1 << d;
    return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t n) { *p = aligned_alloc(256, (n + 255) / 256 * 256); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) { memset(p, v, n); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void *d, const void *s_, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    memcpy(d, s_, n);
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f)
{
    shim_stream *n = calloc(1, sizeof *n);
    for (size_t i = 0; n && i < sizeof live_streams / sizeof *live_streams; i++)
        if (__atomic_compare_exchange_n(&live_streams[i], &(shim_stream *){NULL}, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            *s = (cudaStream_t)n;
            return cudaSuccess;
        }
    free(n);
    return cudaErrorMemoryAllocation;
}
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    for (size_t i = 0; i < sizeof live_streams / sizeof *live_streams; i++)
        if (live_streams[i] == (shim_stream *)s) live_streams[i] = NULL;
    free(s);
    return cudaSuccess;
}
static int stream_hung(cudaStream_t s) { return s && ((shim_stream *)s)->hung; }
void shim_stream_hang(cudaStream_t s, const void *comm)
{
    if (s) ((shim_stream *)s)->hung = comm;
}
void shim_comm_aborted(const void *comm)
{
    for (size_t i = 0; i < sizeof live_streams / sizeof *live_streams; i++)
        if (live_streams[i] && live_streams[i]->hung == comm) live_streams[i]->hung = NULL;
}
/* A hung stream's work never completes: cudaStreamQuery says not ready; a blocking wait would
 * block for ever on a GPU, so here it is counted (a test asserts none happened) and fails at once. */
int shim_unbounded_waits;
cudaError_t cudaStreamQuery(cudaStream_t s) { return stream_hung(s) ? cudaErrorNotReady : cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (!stream_hung(s)) return cudaSuccess;
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f)
{
    *e = (cudaEvent_t)calloc(1, sizeof(shim_event));
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    ((shim_event *)e)->hung = s ? ((shim_stream *)s)->hung : NULL;
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (!((shim_event *)e)->hung) return cudaSuccess;
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaMemGetInfo(size_t *f, size_t *t) { *f = *t = 0; return cudaSuccess; }
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s) { return cudaMalloc(p, n); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { return cudaFree(p); }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f)
{
    if (((shim_event *)e)->hung && s) ((shim_stream *)s)->hung = ((shim_event *)e)->hung;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *lo, int *hi) { *lo = *hi = 0; return cudaSuccess; }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned f, int prio) { return cudaStreamCreateWithFlags(s, f); }
/* two pretend GPUs, compute capability 9.0, so backend_create("cuda") and multi-rank paths run */
cudaError_t cudaGetDeviceCount(int *n) { *n = 2; return cudaSuccess; }
cudaError_t cudaGetDevice(int *d) { *d = shim_current; return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    *v = a == cudaDevAttrComputeCapabilityMajor ? 9 : a == cudaDevAttrMultiProcessorCount ? 1 : 0;
    return d >= 0 && d < 2 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    memset(p, 0, sizeof *p);
    strcpy(p->name, "host shim");
    p->major = 9, p->minor = 0, p->totalGlobalMem = (size_t)1 << 34, p->multiProcessorCount = 1;
    return d >= 0 && d < 2 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaDriverGetVersion(int *v) { *v = 0; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 0; return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t e) { return "host shim error"; }
const char *cudaGetErrorName(cudaError_t e) { return "cudaErrorShim"; }

/* ---- act helpers ---- */
static void st(void *a, int dt, size_t i, float x)
{
    if (dt == IB_PREC_BF16) ((bf16 *)a)[i] = cpu_bf16_from_f32(x);
    else ((float *)a)[i] = x;
}
static float ld_(const void *a, int dt, size_t i)
{
    return dt == IB_PREC_BF16 ? cpu_f32_from_bf16(((const bf16 *)a)[i]) : ((const float *)a)[i];
}

cudaError_t cuk_store_act(void *dst, ib_precision dt, const float *src, size_t n, cudaStream_t s)
{
    for (size_t i = 0; i < n; i++) st(dst, dt, i, src[i]);
    return cudaSuccess;
}

cudaError_t cuk_patchify(const float *images, int B, int C, int S, int P, void *patches, ib_precision dt, cudaStream_t s)
{
    const size_t n = (size_t)B * (S / P) * (S / P) * C * P * P;
    for (size_t i = 0; i < n; i++) st(patches, dt, i, images[cuk_patch_src(i, C, S, P)]);
    return cudaSuccess;
}

cudaError_t cuk_tokens_forward(const float *pe, const float *cls, const float *pos, float *x, int B, int T, int D,
                               cudaStream_t s)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++)
                x[((size_t)b * T + t) * D + d] = (t ? pe[((size_t)b * (T - 1) + t - 1) * D + d] : cls[d]) + pos[(size_t)t * D + d];
    return cudaSuccess;
}

cudaError_t cuk_tokens_backward(const float *dx, float *dcls, float *dpos, float *dpe, int B, int T, int D,
                                cudaStream_t s)
{
    for (int t = 0; t < T; t++)
        for (int d = 0; d < D; d++) {
            float a = 0;
            for (int b = 0; b < B; b++) {
                const float g = dx[((size_t)b * T + t) * D + d];
                a += g;
                if (t) dpe[((size_t)b * (T - 1) + t - 1) * D + d] = g;
            }
            dpos[(size_t)t * D + d] = a;
            if (!t) dcls[d] = a;
        }
    return cudaSuccess;
}

cudaError_t cuk_layernorm_forward(const float *x_in, const float *res, float *x_out, const float *w, const float *b,
                                  void *y, ib_precision dt, float *mean, float *rstd, int R, int D, ptrdiff_t xs, cudaStream_t s)
{
    for (long r = 0; r < R; r++) {
        const float *x = x_in + r * xs;
        if (res) {
            for (int d = 0; d < D; d++) x_out[r * xs + d] = x[d] + res[r * xs + d];
            x = x_out + r * xs;
        }
        float m = 0, v = 0;
        for (int d = 0; d < D; d++) m += x[d];
        m /= D;
        for (int d = 0; d < D; d++) v += (x[d] - m) * (x[d] - m);
        const float rs = 1.0f / sqrtf(v / D + 1e-6f);
        for (int d = 0; d < D; d++) st(y, dt, (size_t)r * D + d, (x[d] - m) * rs * w[d] + b[d]);
        mean[r] = m, rstd[r] = rs;
    }
    return cudaSuccess;
}

size_t cuk_layernorm_partial_floats(int D) { return (size_t)2 * D; }
cudaError_t cuk_layernorm_backward(const float *dy, const float *x, const float *mean, const float *rstd,
                                   const float *w, float *dx, ptrdiff_t dxs, float *dw, float *db, int R, int D,
                                   ptrdiff_t xs, float *partial, cudaStream_t s)
{
    for (int d = 0; d < D; d++) dw[d] = db[d] = 0;
    for (long r = 0; r < R; r++) {
        const float *g = dy + (size_t)r * D, *xr = x + r * xs;
        float sg = 0, sgx = 0;
        for (int d = 0; d < D; d++) {
            const float xh = (xr[d] - mean[r]) * rstd[r];
            sg += g[d] * w[d], sgx += g[d] * w[d] * xh;
            dw[d] += g[d] * xh, db[d] += g[d];
        }
        sg /= D, sgx /= D;
        for (int d = 0; d < D; d++) {
            const float xh = (xr[d] - mean[r]) * rstd[r];
            dx[r * dxs + d] += rstd[r] * (g[d] * w[d] - sg - xh * sgx);
        }
    }
    return cudaSuccess;
}

size_t cuk_colsum_partial_floats(int N) { return (size_t)N; }
cudaError_t cuk_bias_backward(const float *dy, float *db, void *dy_act, ib_precision dt, int M, int N, float *partial,
                              cudaStream_t s)
{
    for (int j = 0; j < N; j++) db[j] = 0;
    for (size_t i = 0; i < (size_t)M * N; i++) {
        db[i % N] += dy[i];
        if (dy_act) st(dy_act, dt, i, dy[i]);
    }
    return cudaSuccess;
}

cudaError_t cuk_add_bias(float *C, const float *bias, int M, int N, int ldc, cudaStream_t s)
{
    for (int r = 0; r < M; r++)
        for (int j = 0; j < N; j++) C[(size_t)r * ldc + j] += bias[j];
    return cudaSuccess;
}

cudaError_t cuk_bias_gelu_forward(float *h, const float *bias, void *a, ib_precision dt, int M, int F, cudaStream_t s)
{
    for (size_t i = 0; i < (size_t)M * F; i++) {
        const float x = h[i] + bias[i % F];
        h[i] = x;
        st(a, dt, i, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)));
    }
    return cudaSuccess;
}

cudaError_t cuk_gelu_backward(const float *h, float *g, size_t n, cudaStream_t s)
{
    for (size_t i = 0; i < n; i++) {
        const float x = h[i];
        g[i] *= 0.5f * (1.0f + erff(x * 0.70710678118654752f)) + x * expf(-0.5f * x * x) * 0.39894228040143268f;
    }
    return cudaSuccess;
}

cudaError_t cuk_qkv_split(const float *qkv, void *qkvh, ib_precision dt, int B, int T, int H, int hd, cudaStream_t s)
{
    for (size_t i = 0; i < (size_t)B * T * 3 * H * hd; i++) st(qkvh, dt, cuk_qkv_split_index(i, B, T, H, hd), qkv[i]);
    return cudaSuccess;
}

cudaError_t cuk_qkv_merge(const float *dqkvh, float *dqkv, int B, int T, int H, int hd, cudaStream_t s)
{
    for (size_t i = 0; i < (size_t)B * T * 3 * H * hd; i++) dqkv[i] = dqkvh[cuk_qkv_split_index(i, B, T, H, hd)];
    return cudaSuccess;
}

cudaError_t cuk_heads_merge(const void *o, void *att, ib_precision dt, int B, int T, int H, int hd, cudaStream_t s)
{
    for (size_t i = 0; i < (size_t)B * T * H * hd; i++) st(att, dt, i, ld_(o, dt, cuk_heads_index(i, T, H, hd)));
    return cudaSuccess;
}

cudaError_t cuk_heads_split(const void *datt, void *dO, ib_precision dt, int B, int T, int H, int hd, cudaStream_t s)
{
    for (size_t i = 0; i < (size_t)B * T * H * hd; i++) st(dO, dt, cuk_heads_index(i, T, H, hd), ld_(datt, dt, i));
    return cudaSuccess;
}

cudaError_t cuk_softmax_forward(float *S, void *p_act, ib_precision dt, size_t rows, int T, int ld, float scale, cudaStream_t s)
{
    for (size_t r = 0; r < rows; r++) {
        float *x = S + r * ld, mx = -INFINITY, sum = 0;
        for (int j = 0; j < T; j++) mx = x[j] > mx ? x[j] : mx;
        for (int j = 0; j < T; j++) sum += (x[j] = expf((x[j] - mx) * scale));
        /* with p_act, S keeps the exponentials (kernels.h): a reader of S as P would show */
        for (int j = 0; j < T; j++)
            if (p_act) st(p_act, dt, r * ld + j, x[j] * (1.0f / sum));
            else x[j] *= 1.0f / sum;
    }
    return cudaSuccess;
}

cudaError_t cuk_softmax_backward(const void *P, float *g, void *ds_act, ib_precision dt, size_t rows, int T, int ld,
                                 float scale, cudaStream_t s)
{
    for (size_t r = 0; r < rows; r++) {
        float *x = g + r * ld, dot = 0;
        for (int j = 0; j < T; j++) dot += ld_(P, dt, r * ld + j) * x[j];
        for (int j = 0; j < T; j++) {
            x[j] = ld_(P, dt, r * ld + j) * (x[j] - dot) * scale;
            if (ds_act) st(ds_act, dt, r * ld + j, x[j]);
        }
    }
    return cudaSuccess;
}

cudaError_t cuk_crossentropy(const float *logits, const int32_t *labels, float *dlogits, double *row_loss,
                             float *loss, int B, int C, cudaStream_t s)
{
    double t = 0;
    for (int b = 0; b < B; b++) {
        const float *z = logits + (size_t)b * C;
        float mx = -INFINITY;
        for (int c = 0; c < C; c++) mx = z[c] > mx ? z[c] : mx;
        double sum = 0;
        for (int c = 0; c < C; c++) sum += exp((double)z[c] - mx);
        const double lse = mx + log(sum);
        row_loss[b] = lse - z[labels[b]];
        t += row_loss[b];
        for (int c = 0; c < C; c++) dlogits[(size_t)b * C + c] = (float)(exp((double)z[c] - lse) / B) - (c == labels[b] ? 1.0f / B : 0.0f);
    }
    *loss = (float)(t / B);
    return cudaSuccess;
}

cudaError_t cuk_adam_step(float *p, const float *g, float *m, float *v, uint16_t *wbf, size_t n,
                          const cuk_adam_scalars *k, cudaStream_t s)
{
    for (size_t i = 0; i < n; i++) {
        float gi = g[i], pi = p[i];
        if (k->decoupled) pi *= k->decay;
        else gi += k->wd * pi;
        m[i] = m[i] * k->beta1 + gi * k->omb1;
        v[i] = v[i] * k->beta2 + k->omb2 * gi * gi;
        p[i] = pi + (-k->step_size * m[i]) / (sqrtf(v[i]) / k->bc2_sqrt + k->eps);
        if (wbf) wbf[i] = cpu_bf16_from_f32(p[i]);
    }
    return cudaSuccess;
}

/* ---- GEMM through the plan and an emulated column-major BLAS ---- */
struct cuda_gemm { int calls; };
int cuda_gemm_create(cuda_gemm **g, size_t ws, ib_error *err) { *g = calloc(1, sizeof **g); return 0; }
void cuda_gemm_destroy(cuda_gemm *g) { free(g); }

int cuda_gemm_exec(cuda_gemm *g, const cuda_gemm_desc *in, const void *A, const void *B, void *C, const float *bias,
                   cudaStream_t s, ib_error *err)
{
    cuda_gemm_desc d = *in;
    cuda_gemm_desc_defaults(&d);
    cuda_gemm_plan p;
    cuda_gemm_plan_make(&d, &p);
    if (p.first.ld < p.first.rows || p.second.ld < p.second.rows || p.out.ld < p.out.rows)
        return ib_error_set(err, IB_EXIT_RUNTIME, "shim: leading dimension below rows");
    g->calls++;
    for (int b = 0; b < p.batch; b++)
        for (int i = 0; i < p.m; i++)       /* rows of the column-major output = our columns */
            for (int j = 0; j < p.n; j++) {
                float acc = 0;
                for (int l = 0; l < p.k; l++) {
                    const size_t xi = b * p.first.stride + (p.first.trans ? l + (size_t)i * p.first.ld : i + (size_t)l * p.first.ld);
                    const size_t yi = b * p.second.stride + (p.second.trans ? j + (size_t)l * p.second.ld : l + (size_t)j * p.second.ld);
                    acc += ld_(B, d.ab, xi) * ld_(A, d.ab, yi);   /* first = our B, second = our A */
                }
                const size_t ci = b * p.out.stride + i + (size_t)j * p.out.ld;
                if (d.accumulate) acc += ld_(C, d.c, ci);
                if (bias) acc += bias[i];
                st(C, d.c, ci, acc);
            }
    return 0;
}
