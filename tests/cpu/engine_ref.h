/* engine_ref.h: an independent, compact double-precision ViT forward for the engine tests.
 * Written from the math of timm's VisionTransformer (not from src/cpu/): conv patch embedding,
 * class token, position embedding, pre-norm blocks (LayerNorm eps 1e-6), fused qkv, softmax
 * attention scaled by head_dim^-0.5, projection, MLP with exact-erf GELU, final norm, head on the
 * class token, mean cross-entropy.  Parameters are read by timm name from the layout. */
#ifndef ENGINE_REF_H
#define ENGINE_REF_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/model.h"

typedef struct ref_ctx {
    const vit_config *c;
    const model_layout *l;
    const double *p; /* parameters in double, layout order */
} ref_ctx;

static const double *ref_t(const ref_ctx *r, const char *fmt, int i)
{
    char n[64];
    snprintf(n, sizeof n, fmt, i);
    const model_tensor *t = model_layout_find(r->l, n);
    if (!t) {
        fprintf(stderr, "reference: no tensor %s\n", n);
        abort();
    }
    return r->p + t->offset;
}

static void ref_layernorm(const double *x, const double *w, const double *b, double *y, int D)
{
    double m = 0, v = 0;
    for (int d = 0; d < D; d++) m += x[d];
    m /= D;
    for (int d = 0; d < D; d++) v += (x[d] - m) * (x[d] - m);
    v /= D;
    for (int d = 0; d < D; d++) y[d] = (x[d] - m) / sqrt(v + 1e-6) * w[d] + b[d];
}

/* y[o] = sum_i W[o][i] x[i] + b[o]  (W is [out, in] as nn.Linear) */
static void ref_linear(const double *x, const double *W, const double *b, double *y, int in, int out)
{
    for (int o = 0; o < out; o++) {
        double s = b[o];
        for (int i = 0; i < in; i++) s += W[(size_t)o * in + i] * x[i];
        y[o] = s;
    }
}

/* Mean cross-entropy of the batch; logits_out [B,C] if non-NULL. */
static double ref_forward(const ref_ctx *r, const double *images, const int *labels, int B, double *logits_out)
{
    const vit_config *c = r->c;
    const int S = c->img_size, P = c->patch_size, G = S / P, N = G * G, T = N + 1, D = c->embed_dim;
    const int H = c->num_heads, hd = D / H, F = (int)(D * c->mlp_ratio), C = c->num_classes, Ch = c->in_chans;
    double *x = malloc(sizeof(double) * T * D), *y = malloc(sizeof(double) * T * D);
    double *qkv = malloc(sizeof(double) * T * 3 * D), *att = malloc(sizeof(double) * T * D);
    double *hid = malloc(sizeof(double) * F), *tmp = malloc(sizeof(double) * (D > C ? D : C));
    double *sc = malloc(sizeof(double) * T);
    double loss = 0;
    for (int b = 0; b < B; b++) {
        const double *img = images + (size_t)b * Ch * S * S;
        const double *cw = ref_t(r, "patch_embed.proj.weight", 0), *cb = ref_t(r, "patch_embed.proj.bias", 0);
        const double *pos = ref_t(r, "pos_embed", 0), *cls = ref_t(r, "cls_token", 0);
        for (int d = 0; d < D; d++) x[d] = cls[d] + pos[d];
        for (int n = 0; n < N; n++) { /* conv: kernel P, stride P, weight [D, Ch, P, P] */
            const int gy = n / G, gx = n % G;
            for (int d = 0; d < D; d++) {
                double s = cb[d];
                for (int ch = 0; ch < Ch; ch++)
                    for (int ky = 0; ky < P; ky++)
                        for (int kx = 0; kx < P; kx++)
                            s += cw[((d * Ch + ch) * P + ky) * P + kx] * img[(ch * S + gy * P + ky) * S + gx * P + kx];
                x[(n + 1) * D + d] = s + pos[(n + 1) * D + d];
            }
        }
        for (int l = 0; l < c->depth; l++) {
            for (int t = 0; t < T; t++) {
                ref_layernorm(x + t * D, ref_t(r, "blocks.%d.norm1.weight", l), ref_t(r, "blocks.%d.norm1.bias", l),
                              y + t * D, D);
                ref_linear(y + t * D, ref_t(r, "blocks.%d.attn.qkv.weight", l), ref_t(r, "blocks.%d.attn.qkv.bias", l),
                           qkv + t * 3 * D, D, 3 * D);
            }
            /* qkv row: [3, H, hd] */
            for (int h = 0; h < H; h++)
                for (int i = 0; i < T; i++) {
                    double mx = -1e300, sum = 0;
                    for (int j = 0; j < T; j++) {
                        double s = 0;
                        for (int e = 0; e < hd; e++) s += qkv[i * 3 * D + h * hd + e] * qkv[j * 3 * D + D + h * hd + e];
                        sc[j] = s / sqrt((double)hd);
                        if (sc[j] > mx) mx = sc[j];
                    }
                    for (int j = 0; j < T; j++) sum += (sc[j] = exp(sc[j] - mx));
                    for (int e = 0; e < hd; e++) {
                        double o = 0;
                        for (int j = 0; j < T; j++) o += sc[j] / sum * qkv[j * 3 * D + 2 * D + h * hd + e];
                        att[i * D + h * hd + e] = o;
                    }
                }
            for (int t = 0; t < T; t++) {
                ref_linear(att + t * D, ref_t(r, "blocks.%d.attn.proj.weight", l),
                           ref_t(r, "blocks.%d.attn.proj.bias", l), tmp, D, D);
                for (int d = 0; d < D; d++) x[t * D + d] += tmp[d];
                ref_layernorm(x + t * D, ref_t(r, "blocks.%d.norm2.weight", l), ref_t(r, "blocks.%d.norm2.bias", l),
                              y + t * D, D);
                ref_linear(y + t * D, ref_t(r, "blocks.%d.mlp.fc1.weight", l), ref_t(r, "blocks.%d.mlp.fc1.bias", l),
                           hid, D, F);
                for (int f = 0; f < F; f++) hid[f] = 0.5 * hid[f] * (1 + erf(hid[f] / sqrt(2.0)));
                ref_linear(hid, ref_t(r, "blocks.%d.mlp.fc2.weight", l), ref_t(r, "blocks.%d.mlp.fc2.bias", l), tmp, F,
                           D);
                for (int d = 0; d < D; d++) x[t * D + d] += tmp[d];
            }
        }
        ref_layernorm(x, ref_t(r, "norm.weight", 0), ref_t(r, "norm.bias", 0), y, D); /* class token */
        ref_linear(y, ref_t(r, "head.weight", 0), ref_t(r, "head.bias", 0), tmp, D, C);
        double mx = -1e300, sum = 0;
        for (int k = 0; k < C; k++) mx = tmp[k] > mx ? tmp[k] : mx;
        for (int k = 0; k < C; k++) sum += exp(tmp[k] - mx);
        loss += mx + log(sum) - tmp[labels[b]];
        if (logits_out) memcpy(logits_out + (size_t)b * C, tmp, sizeof(double) * C);
    }
    free(x), free(y), free(qkv), free(att), free(hid), free(tmp), free(sc);
    return loss / B;
}

#endif
