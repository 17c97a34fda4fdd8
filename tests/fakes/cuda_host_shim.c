/* cuda_host_shim: host stand-ins for the kernel launchers of src/cuda/kernels.h and cuda_gemm,
 * so src/cuda/vit.c (the CUDA backend's training step: buffer
 * wiring, offsets, GEMM shapes and strides, op order, gradient-hook ranges) runs on a machine
 * without a GPU (tests/cuda/cuda_vit_host.c), with the runtime of cuda_host_runtime.c.  Each launcher
 * here is a plain loop with the semantics documented in kernels.h; GEMMs go through cuda_gemm_plan
 * like the real ones and an emulated column-major BLAS.  The real kernels and gemm.c run in
 * cuda_vit_sim (tests/fakes/cudasim, tests/fakes/cuda_cublaslt_standin.c) instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "cuda/gemm.h"
#include "cuda/kernels.h"
#include "cuda/layout.h"
#include "cuda_host_runtime.h"

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

cudaError_t cuk_patchify(const float *images, int B, int C, int S, int P, void *patches, ib_precision dt,
                         cudaStream_t s)
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
                x[((size_t)b * T + t) * D + d] =
                    (t ? pe[((size_t)b * (T - 1) + t - 1) * D + d] : cls[d]) + pos[(size_t)t * D + d];
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

cudaError_t cuk_layernorm_forward(const float *x_in, const void *res, float *x_out, const float *w, const float *b,
                                  void *y, ib_precision dt, float *mean, float *rstd, int R, int D, ptrdiff_t xs,
                                  cudaStream_t s)
{
    for (long r = 0; r < R; r++) {
        const float *x = x_in + r * xs;
        if (res) {
            for (int d = 0; d < D; d++) x_out[r * xs + d] = x[d] + ld_(res, dt, (size_t)(r * xs + d));
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
cudaError_t cuk_layernorm_backward(const void *dy, ib_precision dy_dt, const float *x, const float *mean,
                                   const float *rstd, const float *w, float *dx, ptrdiff_t dxs, float *dw, float *db,
                                   int R, int D, ptrdiff_t xs, void *next_act, ib_precision dt, float *next_db,
                                   float *partial, cudaStream_t s)
{
    if ((next_act || next_db) && dxs != D) return cudaErrorInvalidValue;
    for (int d = 0; d < D; d++) dw[d] = db[d] = 0;
    float *g = malloc((size_t)D * sizeof *g);
    if (!g) return cudaErrorMemoryAllocation;
    for (long r = 0; r < R; r++) {
        const float *xr = x + r * xs;
        for (int d = 0; d < D; d++) g[d] = ld_(dy, dy_dt, (size_t)r * D + d);
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
    free(g);
    if (next_db) return cuk_bias_backward(dx, next_db, next_act, dt, R, D, partial, s);
    return next_act ? cuk_store_act(next_act, dt, dx, (size_t)R * D, s) : cudaSuccess;
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

cudaError_t cuk_bias_backward_act(const void *dy, ib_precision dy_dt, float *db, int M, int N, float *partial,
                                  cudaStream_t s)
{
    for (int j = 0; j < N; j++) db[j] = 0;
    for (size_t i = 0; i < (size_t)M * N; i++) db[i % N] += ld_(dy, dy_dt, i);
    return cudaSuccess;
}

cudaError_t cuk_fill_bias(void *C, ib_precision dt, const void *bias, int M, int N, int ldc, cudaStream_t s)
{
    for (int r = 0; r < M; r++)
        for (int j = 0; j < N; j++) st(C, dt, (size_t)r * ldc + j, ld_(bias, dt, j));
    return cudaSuccess;
}

cudaError_t cuk_gelu_forward(const void *h, void *a, ib_precision dt, size_t n, cudaStream_t s)
{
    for (size_t i = 0; i < n; i++) {
        const float x = ld_(h, dt, i);
        st(a, dt, i, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)));
    }
    return cudaSuccess;
}

cudaError_t cuk_gelu_bias_backward(const void *h, void *g, float *db, ib_precision dt, int M, int F, float *partial,
                                   cudaStream_t s)
{
    for (int j = 0; j < F; j++) db[j] = 0;
    for (size_t i = 0; i < (size_t)M * F; i++) {
        const float x = ld_(h, dt, i);
        const float v = ld_(g, dt, i) * (0.5f * (1.0f + erff(x * 0.70710678118654752f)) +
                                         x * expf(-0.5f * x * x) * 0.39894228040143268f);
        db[i % F] += v;
        st(g, dt, i, v);
    }
    return cudaSuccess;
}

cudaError_t cuk_qkv_split(const void *qkv, void *qkvh, ib_precision dt, int B, int T, int H, int hd, cudaStream_t s)
{
    for (size_t i = 0; i < (size_t)B * T * 3 * H * hd; i++)
        st(qkvh, dt, cuk_qkv_split_index(i, B, T, H, hd), ld_(qkv, dt, i));
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

cudaError_t cuk_softmax_forward(float *S, void *p_act, ib_precision dt, size_t rows, int T, int ld, float scale,
                                cudaStream_t s)
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

cudaError_t cuk_crossentropy(const float *logits, const int32_t *labels, float *dlogits, double *row_loss, float *loss,
                             int B, int C, cudaStream_t s)
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
        for (int c = 0; c < C; c++)
            dlogits[(size_t)b * C + c] = (float)(exp((double)z[c] - lse) / B) - (c == labels[b] ? 1.0f / B : 0.0f);
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
#define SHIM_GEMM_SHAPES 64
struct cuda_gemm {
    int calls;
    int n; /* distinct shapes seen (the emulated BLAS takes every one: no slower road) */
    cuda_gemm_desc seen[SHIM_GEMM_SHAPES];
};
int cuda_gemm_create(cuda_gemm **g, size_t ws, ib_error *err)
{
    *g = calloc(1, sizeof **g);
    return 0;
}
void cuda_gemm_destroy(cuda_gemm *g) { free(g); }
void cuda_gemm_paths(const cuda_gemm *g, int *shapes, int *cublas_fallback, int *bias_kernel, int *tuned)
{
    *shapes = g ? g->n : 0, *cublas_fallback = *bias_kernel = *tuned = 0;
}

int cuda_gemm_exec(cuda_gemm *g, const cuda_gemm_desc *in, const void *A, const void *B, void *C, const void *bias,
                   cudaStream_t s, ib_error *err)
{
    cuda_gemm_desc d = *in;
    cuda_gemm_desc_defaults(&d);
    cuda_gemm_plan p;
    cuda_gemm_plan_make(&d, &p);
    if (p.first.ld < p.first.rows || p.second.ld < p.second.rows || p.out.ld < p.out.rows)
        return ib_error_set(err, IB_EXIT_RUNTIME, "shim: leading dimension below rows");
    g->calls++;
    int known = 0;
    for (int i = 0; i < g->n && !known; i++) known = !memcmp(&g->seen[i], &d, sizeof d);
    if (!known && g->n < SHIM_GEMM_SHAPES) g->seen[g->n++] = d;
    for (int b = 0; b < p.batch; b++)
        for (int i = 0; i < p.m; i++) /* rows of the column-major output = our columns */
            for (int j = 0; j < p.n; j++) {
                float acc = 0;
                for (int l = 0; l < p.k; l++) {
                    const size_t xi =
                        b * p.first.stride + (p.first.trans ? l + (size_t)i * p.first.ld : i + (size_t)l * p.first.ld);
                    const size_t yi = b * p.second.stride +
                                      (p.second.trans ? j + (size_t)l * p.second.ld : l + (size_t)j * p.second.ld);
                    acc += ld_(B, d.ab, xi) * ld_(A, d.ab, yi); /* first = our B, second = our A */
                }
                const size_t ci = b * p.out.stride + i + (size_t)j * p.out.ld;
                if (d.accumulate) acc += ld_(C, d.c, ci);
                if (bias) acc += ld_(bias, d.c, i); /* the bias has C's dtype */
                st(C, d.c, ci, acc);
            }
    return 0;
}
