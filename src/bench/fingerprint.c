/* fingerprint: SHA-256 over a canonical string of every workload-defining field, so `rank` never
 * compares different work.  The model's name is left out on purpose (a preset and the same
 * dimensions given by flags are the same work), as are world size and the instance. */
#include "instbench/bench.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

void fingerprint_canonical(const bench_workload *w, char *out, size_t out_len)
{
    const vit_config *m = &w->model;
    snprintf(out, out_len,
             "instbench.workload/v1\n"
             "img_size=%d\npatch_size=%d\nin_chans=%d\nembed_dim=%d\ndepth=%d\nnum_heads=%d\n"
             "mlp_ratio=%.9g\nnum_classes=%d\n"
             "precision=%s\n"
             "optimizer=%s\nlr=%.9g\nbeta1=%.9g\nbeta2=%.9g\neps=%.9g\nweight_decay=%.9g\n"
             "batch_size_per_device=%d\ndata=%s\n",
             m->img_size, m->patch_size, m->in_chans, m->embed_dim, m->depth, m->num_heads, m->mlp_ratio,
             m->num_classes, w->precision == IB_PREC_BF16 ? "bf16" : "fp32",
             w->optim.kind == IB_OPT_ADAMW ? "adamw" : "adam", (double)w->optim.lr, (double)w->optim.beta1,
             (double)w->optim.beta2, (double)w->optim.eps, (double)w->optim.weight_decay, w->batch_size_per_device,
             w->data == BENCH_DATA_DEVICE ? "device" : "host");
}

void fingerprint_compute(const bench_workload *w, char out_hex[65])
{
    char canon[1024];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    fingerprint_canonical(w, canon, sizeof canon);
    if (EVP_Digest(canon, strlen(canon), md, &md_len, EVP_sha256(), NULL) != 1 || md_len != 32) {
        out_hex[0] = '\0';
        return;
    }
    util_hex(md, 32, out_hex);
}
