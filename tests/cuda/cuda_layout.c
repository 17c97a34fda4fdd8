/* cuda_layout: the index arithmetic of the CUDA backend's data-movement kernels (src/cuda/layout.h),
 * on the CPU: patchify against the CPU backend's cpu_patchify, and the attention head split/merge
 * against plain nested loops over the named dimensions; every map must also be a bijection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "cuda/layout.h"

#include "check.h"

static void check_patch(int B, int C, int S, int P)
{
    const size_t npix = (size_t)B * C * S * S, n = (size_t)B * (S / P) * (S / P) * C * P * P;
    float *img = malloc(npix * 4), *ref = malloc(n * 4);
    for (size_t i = 0; i < npix; i++) img[i] = (float)i; /* each pixel names its own index */
    cpu_patchify(img, B, C, S, P, ref, IB_PREC_FP32);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += img[cuk_patch_src(i, C, S, P)] != ref[i];
    CHECK(bad == 0, "patchify B%d C%d S%d P%d: %zu of %zu elements differ from cpu_patchify", B, C, S, P, bad, n);
    free(img);
    free(ref);
}

static void check_heads(int B, int T, int H, int hd)
{
    const int D = H * hd;
    const size_t n = (size_t)B * T * D, plane = n;
    unsigned char *hit = calloc(3 * n, 1);
    size_t bad = 0, i = 0;
    /* qkv [B,T,3,H,hd] walked in storage order, each element's place in [3][B,H,T,hd] by name */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int w = 0; w < 3; w++)
                for (int h = 0; h < H; h++)
                    for (int e = 0; e < hd; e++, i++) {
                        const size_t want = w * plane + (((size_t)b * H + h) * T + t) * hd + e;
                        const size_t got = cuk_qkv_split_index(i, B, T, H, hd);
                        bad += got != want;
                        if (got < 3 * n) hit[got]++;
                    }
    size_t once = 0;
    for (size_t k = 0; k < 3 * n; k++) once += hit[k] == 1;
    CHECK(bad == 0 && once == 3 * n, "qkv split B%d T%d H%d hd%d: %zu misplaced, %zu of %zu hit once", B, T, H, hd, bad,
          once, 3 * n);
    memset(hit, 0, n);
    bad = 0, i = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++)
                for (int e = 0; e < hd; e++, i++) {
                    const size_t got = cuk_heads_index(i, T, H, hd);
                    bad += got != (((size_t)b * H + h) * T + t) * hd + e;
                    if (got < n) hit[got]++;
                }
    once = 0;
    for (size_t k = 0; k < n; k++) once += hit[k] == 1;
    CHECK(bad == 0 && once == n, "heads B%d T%d H%d hd%d: %zu misplaced, %zu of %zu hit once", B, T, H, hd, bad, once,
          n);
    free(hit);
}

int main(void)
{
    check_patch(2, 3, 32, 8);
    check_patch(1, 3, 224, 16); /* ViT-B/16's patches */
    check_patch(3, 2, 12, 4);
    check_heads(2, 5, 3, 4);
    check_heads(2, 197, 12, 64); /* ViT-B/16's attention */
    check_heads(1, 17, 2, 16);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("cuda_layout: all passed\n");
    return 0;
}
