/* cuda/attention_path: the attention path's decision and cuDNN's start-up self-check (see
 * attention_path.h).  The self-check runs the very graphs the step will replay, at the step's
 * shape, so a library that loads and passes check_support but computes wrong numbers on this GPU
 * (the cuDNN < 9.15.1 backward at T % 128 != 0 is such a case) never reaches a result. */
#include "cuda/attention_path.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/cudnn_gate.h"
#include "cuda/cudnn_sdpa.h"
#include "cuda/kernels.h"
#include "instbench/model.h"

/* The cuDNN release whose SDPA backward is right where T is not a multiple of 128. */
#define CUDNN_SDPA_MIN_RAGGED_T 91501
/* The CUDA runtime from which PyTorch runs cuDNN's SDPA by default (pytorch#171627): below it,
 * compute-sanitizer's memcheck finds an out-of-bounds read in the backward at T=261, hd=64
 * (pytorch#169849), so a run there would measure a kernel that may read past its operands. */
#define CUDA_SDPA_MIN_RUNTIME 12090
/* The batch the self-check runs at: it checks this library's numbers at the step's T, H and hd on
 * this GPU (the bugs that gate exists for are per sequence length), once per (T, H, hd, mode),
 * not at every batch --batch-size auto's search asks about. */
#define SELF_CHECK_MAX_B 2

int cuda_attention_asked(const char **text)
{
    const char *e = getenv("INSTBENCH_CUDA_ATTENTION");
    if (text) *text = e;
    if (!e || !*e) return -1;
    if (!strcmp(e, "cudnn")) return CUDA_ATT_CUDNN;
    if (!strcmp(e, "unfused")) return CUDA_ATT_UNFUSED;
    return -2;
}

const char *cuda_attention_name(int path) { return path == CUDA_ATT_CUDNN ? "cudnn" : "unfused"; }

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even (finite inputs only here) */
    return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ||got - ref|| / ||ref|| of one head: got bf16 [T,hd] at a token stride, ref float64 [T,hd] dense;
 * NaN when got holds one */
static double rel_err(const uint16_t *got, size_t stride, const double *ref, int T, int hd)
{
    double num = 0, den = 0;
    for (int t = 0; t < T; t++)
        for (int d = 0; d < hd; d++) {
            const double g = from_bf16(got[(size_t)t * stride + d]), r = ref[(size_t)t * hd + d];
            num += (g - r) * (g - r);
            den += r * r;
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* float64 attention of one (b, h) from the bf16 inputs as cuDNN reads them:
 * o [T,hd] = P v, P = softmax(scale q k^T); dq, dk, dv [T,hd] from dO. */
static void reference_head(const uint16_t *qkv, const uint16_t *dO, int b, int h, int T, int H, int hd, double scale,
                           double *P, double *o, double *dq, double *dk, double *dv, double *dP)
{
    const size_t row = (size_t)3 * H * hd, D = (size_t)H * hd;
#define Q(t, d) from_bf16(qkv[((size_t)b * T + (t)) * row + (size_t)h * hd + (d)])
#define K(t, d) from_bf16(qkv[((size_t)b * T + (t)) * row + D + (size_t)h * hd + (d)])
#define V(t, d) from_bf16(qkv[((size_t)b * T + (t)) * row + 2 * D + (size_t)h * hd + (d)])
#define G(t, d) from_bf16(dO[((size_t)b * T + (t)) * D + (size_t)h * hd + (d)])
    for (int i = 0; i < T; i++) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int d = 0; d < hd; d++) s += Q(i, d) * K(j, d);
            P[(size_t)i * T + j] = s * scale;
            if (s * scale > mx) mx = s * scale;
        }
        for (int j = 0; j < T; j++) sum += P[(size_t)i * T + j] = exp(P[(size_t)i * T + j] - mx);
        for (int j = 0; j < T; j++) P[(size_t)i * T + j] /= sum;
        for (int d = 0; d < hd; d++) {
            double a = 0;
            for (int j = 0; j < T; j++) a += P[(size_t)i * T + j] * V(j, d);
            o[(size_t)i * hd + d] = a;
        }
    }
    memset(dq, 0, sizeof(double) * T * hd), memset(dk, 0, sizeof(double) * T * hd),
        memset(dv, 0, sizeof(double) * T * hd);
    for (int i = 0; i < T; i++) {
        double rowdot = 0; /* <dO_i, o_i> = sum_j P_ij dP_ij */
        for (int d = 0; d < hd; d++) rowdot += G(i, d) * o[(size_t)i * hd + d];
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int d = 0; d < hd; d++) s += G(i, d) * V(j, d);
            dP[j] = P[(size_t)i * T + j] * (s - rowdot) * scale; /* dS_ij */
        }
        for (int j = 0; j < T; j++)
            for (int d = 0; d < hd; d++) {
                dv[(size_t)j * hd + d] += P[(size_t)i * T + j] * G(i, d);
                dq[(size_t)i * hd + d] += dP[j] * K(j, d);
                dk[(size_t)j * hd + d] += dP[j] * Q(i, d);
            }
    }
#undef Q
#undef K
#undef V
#undef G
}

/* The self-check of graphs A for [B,T,H,hd] (see attention_path.h): 0, or -1 with why. */
static int self_check(const cudnn_sdpa *a, int B, int T, int H, int hd, float scale, int deterministic, char *why,
                      size_t n)
{
    const size_t nqkv = (size_t)B * T * 3 * H * hd, no = (size_t)B * T * H * hd, nst = (size_t)B * H * T;
    const size_t ws = cudnn_sdpa_workspace(a);
    uint16_t *hqkv = malloc(nqkv * 2), *hdo = malloc(no * 2), *ho = malloc(no * 2), *hdq = malloc(nqkv * 2),
             *hdq2 = malloc(nqkv * 2);
    const size_t tt = (size_t)T * T, th = (size_t)T * hd;
    double *P = malloc(sizeof(double) * tt), *ref = malloc(sizeof(double) * 4 * th), *dP = malloc(sizeof(double) * T);
    void *dqkv_in = NULL, *d_o = NULL, *d_do = NULL, *d_dqkv = NULL, *d_ws = NULL;
    float *d_st = NULL;
    cudaStream_t s = NULL;
    int rc = -1;
    if (!hqkv || !hdo || !ho || !hdq || !hdq2 || !P || !ref || !dP) {
        snprintf(why, n, "cuDNN self-check: out of host memory");
        goto out;
    }
    uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift: values in [-2, 2), never all zero */
    for (size_t i = 0; i < nqkv + no; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const float r = (float)((x >> 11) * (1.0 / 9007199254740992.0)) * 4.0f - 2.0f;
        if (i < nqkv) hqkv[i] = to_bf16(r);
        else hdo[i - nqkv] = to_bf16(r * 0.25f);
    }
    cudaError_t e;
    if ((e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaMalloc(&dqkv_in, nqkv * 2)) != cudaSuccess || (e = cudaMalloc(&d_o, no * 2)) != cudaSuccess ||
        (e = cudaMalloc(&d_do, no * 2)) != cudaSuccess || (e = cudaMalloc(&d_dqkv, nqkv * 2)) != cudaSuccess ||
        (e = cudaMalloc((void **)&d_st, nst * 4)) != cudaSuccess ||
        (ws && (e = cudaMalloc(&d_ws, ws)) != cudaSuccess)) {
        cudaGetLastError();
        snprintf(why, n, "cuDNN self-check: %s", cudaGetErrorString(e));
        goto out;
    }
    /* outputs poisoned (all-ones bf16 is a NaN): an element the graphs leave unwritten shows */
    if ((e = cudaMemcpyAsync(dqkv_in, hqkv, nqkv * 2, cudaMemcpyHostToDevice, s)) != cudaSuccess ||
        (e = cudaMemcpyAsync(d_do, hdo, no * 2, cudaMemcpyHostToDevice, s)) != cudaSuccess ||
        (e = cudaMemsetAsync(d_o, 0xff, no * 2, s)) != cudaSuccess ||
        (e = cudaMemsetAsync(d_dqkv, 0xff, nqkv * 2, s)) != cudaSuccess ||
        (e = cudaMemsetAsync(d_st, 0xff, nst * 4, s)) != cudaSuccess) {
        snprintf(why, n, "cuDNN self-check: %s", cudaGetErrorString(e));
        goto out;
    }
    if (cudnn_sdpa_forward(a, dqkv_in, d_o, d_st, d_ws, s, why, n) ||
        cudnn_sdpa_backward(a, dqkv_in, d_o, d_do, d_st, d_dqkv, d_ws, s, why, n))
        goto out;
    if ((e = cudaMemcpyAsync(ho, d_o, no * 2, cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
        (e = cudaMemcpyAsync(hdq, d_dqkv, nqkv * 2, cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
        (e = cudaMemsetAsync(d_dqkv, 0xff, nqkv * 2, s)) != cudaSuccess) {
        snprintf(why, n, "cuDNN self-check: %s", cudaGetErrorString(e));
        goto out;
    }
    /* the backward once more on the same inputs: a deterministic algorithm repeats bit for bit */
    if (cudnn_sdpa_backward(a, dqkv_in, d_o, d_do, d_st, d_dqkv, d_ws, s, why, n)) goto out;
    if ((e = cudaMemcpyAsync(hdq2, d_dqkv, nqkv * 2, cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
        (e = cudaStreamSynchronize(s)) != cudaSuccess) {
        snprintf(why, n, "cuDNN self-check: %s", cudaGetErrorString(e));
        goto out;
    }
    for (size_t i = 0; i < no; i++)
        if ((ho[i] & 0x7f80u) == 0x7f80u) {
            snprintf(why, n, "cuDNN self-check: the forward left element %zu of O unwritten or not finite", i);
            goto out;
        }
    for (size_t i = 0; i < nqkv; i++)
        if ((hdq[i] & 0x7f80u) == 0x7f80u) {
            snprintf(why, n, "cuDNN self-check: the backward left element %zu of dQKV unwritten or not finite", i);
            goto out;
        }
    if (deterministic && memcmp(hdq, hdq2, nqkv * 2)) {
        snprintf(why, n, "cuDNN self-check: two backward passes on the same inputs differ (not deterministic)");
        goto out;
    }
    /* the first and last head of the first and last sample against float64 */
    const int bs[2] = {0, B - 1}, hs[2] = {0, H - 1};
    const size_t row = (size_t)3 * H * hd, D = (size_t)H * hd;
    for (int bi = 0; bi < 2; bi++)
        for (int hi = 0; hi < 2; hi++) {
            const int b = bs[bi], h = hs[hi];
            double *o = ref, *dq = ref + th, *dk = ref + 2 * th, *dv = ref + 3 * th;
            reference_head(hqkv, hdo, b, h, T, H, hd, scale, P, o, dq, dk, dv, dP);
            struct {
                const char *name;
                const uint16_t *got;
                size_t stride;
                const double *want;
                double tol;
            } cmp[4] = {{"O", ho + (size_t)b * T * D + (size_t)h * hd, D, o, 1.5e-2},
                        {"dQ", hdq + (size_t)b * T * row + (size_t)h * hd, row, dq, 3e-2},
                        {"dK", hdq + (size_t)b * T * row + D + (size_t)h * hd, row, dk, 3e-2},
                        {"dV", hdq + (size_t)b * T * row + 2 * D + (size_t)h * hd, row, dv, 3e-2}};
            for (int c = 0; c < 4; c++) {
                const double err = rel_err(cmp[c].got, cmp[c].stride, cmp[c].want, T, hd);
                if (!(err <= cmp[c].tol)) {
                    snprintf(why, n,
                             "cuDNN self-check: %s of sample %d head %d is off by %.3g (relative to a float64 "
                             "reference; at most %.3g expected of bf16)",
                             cmp[c].name, b, h, err, cmp[c].tol);
                    goto out;
                }
            }
        }
    rc = 0;
out:
    if (s) cudaStreamSynchronize(s), cudaStreamDestroy(s);
    cudaFree(dqkv_in), cudaFree(d_o), cudaFree(d_do), cudaFree(d_dqkv), cudaFree(d_st), cudaFree(d_ws);
    cudaGetLastError();
    free(hqkv), free(hdo), free(ho), free(hdq), free(hdq2), free(P), free(ref), free(dP);
    return rc;
}

/* DEVICE's compute capability x10 (100 for 10.0); 0 when the runtime cannot say (no floor then:
 * the self-check still decides). */
static int device_cc(int device)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return major * 10 + minor;
}

/* Self-check verdicts per (device, T, H, hd, mode): 1 passed, -1 failed (why kept). */
enum { CHECKS = 16 };
static struct {
    int device, T, H, hd, deterministic, verdict;
    char why[512];
} checks[CHECKS];
static int n_checks;

static int checked(int device, int B, int T, int H, int hd, float scale, int deterministic, char *why, size_t n)
{
    for (int i = 0; i < n_checks; i++)
        if (checks[i].device == device && checks[i].T == T && checks[i].H == H && checks[i].hd == hd &&
            checks[i].deterministic == deterministic) {
            if (checks[i].verdict < 0) snprintf(why, n, "%s", checks[i].why);
            return checks[i].verdict > 0 ? 0 : -1;
        }
    const int Bc = B < SELF_CHECK_MAX_B ? B : SELF_CHECK_MAX_B;
    const cudnn_sdpa *a = cudnn_sdpa_get(Bc, T, H, hd, scale, deterministic, why, n);
    const int rc = a ? self_check(a, Bc, T, H, hd, scale, deterministic, why, n) : -1;
    const int slot = n_checks < CHECKS ? n_checks++ : (T + hd) % CHECKS;
    checks[slot].device = device, checks[slot].T = T, checks[slot].H = H, checks[slot].hd = hd;
    checks[slot].deterministic = deterministic, checks[slot].verdict = rc ? -1 : 1;
    snprintf(checks[slot].why, sizeof checks[slot].why, "%s", rc ? why : "");
    return rc;
}

/* cuDNN's graphs for the step's shape, deterministic backward first and the non-deterministic
 * one where that cannot be built or fails its check (PyTorch runs the latter: a GPU whose cuDNN
 * has no deterministic engine still runs cuDNN, and the result says which); each mode's
 * self-check once.  0 with c's cuDNN fields set, or -1 with why. */
static int cudnn_choose_graphs(int B, int T, int H, int hd, float scale, int cc, cuda_attention_choice *c, char *why,
                               size_t n)
{
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) device = -1, cudaGetLastError();
    const char *nd = getenv("INSTBENCH_CUDNN_NONDETERMINISTIC");
    /* first and w, with "; " between, fit decide()'s why (sizeof c->why - 64) untruncated */
    char first[(sizeof c->why - 64) / 2 - 1] = "";
    for (int det = !(nd && !strcmp(nd, "1")); det >= 0; det--) {
        char w[sizeof first] = "";
        /* a GPU generation whose cuDNN has no deterministic backward yet (10.x below 9.18.1,
         * cuda/cudnn_gate.h) goes straight to the non-deterministic graph */
        if (det && cudnn_gate_check(cc, c->cudnn_version, 1, w, sizeof w)) {
            snprintf(first, sizeof first, "%s", w);
            continue;
        }
        const cudnn_sdpa *a = cudnn_sdpa_get(B, T, H, hd, scale, det, w, sizeof w);
        if (a && checked(device, B, T, H, hd, scale, det, w, sizeof w) == 0) {
            c->cudnn_deterministic = det;
            c->cudnn_workspace = cudnn_sdpa_workspace(a);
            if (!det && first[0]) {
                snprintf(c->nondeterministic_why, sizeof c->nondeterministic_why, "%s", first);
                static int warned; /* once per process: every rank would say the same */
                if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
                    ib_warn("cuDNN attention runs its non-deterministic backward (gradients may differ in the last "
                            "bits between identical runs): %s\n",
                            first);
            }
            return 0;
        }
        if (det) snprintf(first, sizeof first, "%s", w);
        else if (first[0]) snprintf(why, n, "%s; %s", first, w);
        else snprintf(why, n, "%s", w);
    }
    return -1;
}

static void decide(const ib_train_config *cfg, cuda_attention_choice *c)
{
    const int H = cfg->model.num_heads, D = cfg->model.embed_dim, hd = H > 0 ? D / H : 0;
    /* batch 0: a plan asked before --batch-size auto has picked one; the gates do not depend on B */
    const int T = model_seq_len(&cfg->model), B = cfg->batch_size > 0 ? cfg->batch_size : 1;
    const char *asked = NULL;
    const int want = cuda_attention_asked(&asked);
    if (want == -2) {
        c->refused = 1;
        /* fused named the built-in flash-attention kernels, removed (issue 37): slower than cuDNN and
         * than unfused at every shape measured, so no machine ran them fastest */
        snprintf(c->why, sizeof c->why, "INSTBENCH_CUDA_ATTENTION=%s: expected cudnn or unfused%s", asked,
                 !strcmp(asked, "fused") ? " (the built-in fused kernels were removed: cudnn is the fast path)" : "");
        return;
    }
    if (cfg->precision != IB_PREC_BF16) { /* fp32: unfused, op for op as the CPU (verify's exact path) */
        if (want >= 0 && want != CUDA_ATT_UNFUSED) {
            c->refused = 1;
            snprintf(c->why, sizeof c->why, "INSTBENCH_CUDA_ATTENTION=%s needs --precision bf16", asked);
            return;
        }
        /* the result says why, as for every other unfused run; a GPU without cuDNN's SDPA (a T4)
         * could not run it in bf16 either, which a reader comparing rows needs to know */
        const int cc = device_cc(cfg->device);
        char gen[160] = "";
        if (cc > 0 && cudnn_gate_min_version(cc, 0) < 0) cudnn_gate_check(cc, 0, 0, gen, sizeof gen);
        snprintf(c->why, sizeof c->why, "--precision fp32: cuDNN's fused SDPA has no fp32 form%s%s", gen[0] ? "; " : "",
                 gen);
        return;
    }
    if (want == CUDA_ATT_UNFUSED) {
        snprintf(c->why, sizeof c->why, "INSTBENCH_CUDA_ATTENTION=unfused");
        return;
    }
    char why[sizeof c->why - 64] = "";
    cudnn_sdpa_lib lib;
    int rt = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = 0, cudaGetLastError();
    if (!cudnn_sdpa_load) {
        snprintf(why, sizeof why, "this build has no cuDNN attention (built without the cudnn-frontend headers)");
    } else if (cudnn_sdpa_load(&lib, why, sizeof why) == 0) {
        c->cudnn_version = lib.version;
        snprintf(c->cudnn_library, sizeof c->cudnn_library, "%s", lib.path);
        if (T % 128 && lib.version < CUDNN_SDPA_MIN_RAGGED_T) {
            snprintf(why, sizeof why,
                     "cuDNN %d.%d.%d is older than 9.15.1, whose SDPA backward is the first that is right where the "
                     "sequence length (%d) is not a multiple of 128 (PyTorch gates the same)",
                     lib.version / 10000, lib.version / 100 % 100, lib.version % 100, T);
        } else if (rt > 0 && rt < CUDA_SDPA_MIN_RUNTIME && want != CUDA_ATT_CUDNN) {
            snprintf(why, sizeof why,
                     "this build's CUDA runtime %d.%d is older than 12.9: cuDNN's SDPA reads out of bounds there at "
                     "some sequence lengths (PyTorch keeps it off below 12.9, pytorch#169849); "
                     "INSTBENCH_CUDA_ATTENTION=cudnn runs it anyway",
                     rt / 1000, rt % 1000 / 10);
        } else if (cudnn_gate_check(device_cc(cfg->device), lib.version, 0, why, sizeof why)) {
            /* no cuDNN SDPA on this GPU generation with this cuDNN, in either backward mode: why names
             * the generation and the cuDNN it needs (cuda/cudnn_gate.h) */
        } else {
            const float scale = 1.0f / sqrtf((float)hd);
            if (cudnn_choose_graphs(B, T, H, hd, scale, device_cc(cfg->device), c, why, sizeof why) == 0) {
                c->path = CUDA_ATT_CUDNN;
                return;
            }
        }
    }
    if (want == CUDA_ATT_CUDNN) {
        c->refused = 1;
        snprintf(c->why, sizeof c->why, "INSTBENCH_CUDA_ATTENTION=cudnn: %s", why);
        return;
    }
    c->path = CUDA_ATT_UNFUSED;
    snprintf(c->why, sizeof c->why, "%s", why);
    static int warned; /* once per process: every rank would say the same */
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        ib_warn("attention runs unfused, not through cuDNN: %s\n", why);
}

enum { CHOICES = 16 };
static struct {
    int device, B, T, H, hd, precision, asked, nondet, used;
    cuda_attention_choice c;
} choices[CHOICES];
static pthread_mutex_t choices_mu = PTHREAD_MUTEX_INITIALIZER;

void cuda_attention_choose(const ib_train_config *cfg, cuda_attention_choice *out)
{
    const int H = cfg->model.num_heads, hd = H > 0 ? cfg->model.embed_dim / H : 0, T = model_seq_len(&cfg->model);
    /* the variables decide() reads are part of the key: a choice made before one changed (a test
     * that asks for unfused attention at a shape that ran cuDNN) is not the answer after */
    const char *nd = getenv("INSTBENCH_CUDNN_NONDETERMINISTIC");
    const int asked = cuda_attention_asked(NULL), nondet = nd && !strcmp(nd, "1");
    pthread_mutex_lock(&choices_mu);
    int slot = -1;
    for (int i = 0; i < CHOICES; i++) {
        if (choices[i].used && choices[i].device == cfg->device && choices[i].B == cfg->batch_size &&
            choices[i].T == T && choices[i].H == H && choices[i].hd == hd &&
            choices[i].precision == (int)cfg->precision && choices[i].asked == asked && choices[i].nondet == nondet) {
            *out = choices[i].c;
            pthread_mutex_unlock(&choices_mu);
            return;
        }
        if (slot < 0 && !choices[i].used) slot = i;
    }
    if (slot < 0) slot = (int)(((unsigned)cfg->batch_size * 31u + (unsigned)T) % CHOICES); /* evict one */
    cuda_attention_choice *c = &choices[slot].c;
    memset(c, 0, sizeof *c);
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) cur = -1, cudaGetLastError();
    if (cur != cfg->device && cudaSetDevice(cfg->device) != cudaSuccess) cudaGetLastError();
    decide(cfg, c);
    if (cur >= 0 && cur != cfg->device) cudaSetDevice(cur);
    choices[slot].device = cfg->device, choices[slot].B = cfg->batch_size, choices[slot].T = T, choices[slot].H = H;
    choices[slot].hd = hd, choices[slot].precision = (int)cfg->precision, choices[slot].used = 1;
    choices[slot].asked = asked, choices[slot].nondet = nondet;
    *out = *c;
    pthread_mutex_unlock(&choices_mu);
}
