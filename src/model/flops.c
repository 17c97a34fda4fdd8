/* model/flops: exact matmul FLOPs per sample, 2*M*N*K for every matmul.  Training counts the
 * backward pass as twice the forward (grad wrt input + grad wrt weight), so train = 3 x forward. */
#include "instbench/model.h"

void model_flops_per_sample(const vit_config *c, model_flops *f)
{
    const double D = c->embed_dim, N = model_num_patches(c), T = model_seq_len(c), Hd = model_mlp_hidden(c);
    const double K = (double)c->in_chans * c->patch_size * c->patch_size;
    f->patch_embed = 2.0 * N * K * D;                                  /* [N,K] x [K,D] */
    f->linear = c->depth * 2.0 * T * (D * 3 * D + D * D + 2 * D * Hd); /* qkv, proj, fc1, fc2 */
    f->attention = c->depth * 2.0 * (2.0 * T * T * D);                 /* QK^T and AV over all heads */
    f->head = 2.0 * D * c->num_classes;                                /* class token only */
    f->forward = f->patch_embed + f->linear + f->attention + f->head;
    f->train = 3.0 * f->forward;
}

double model_train_flops_per_sample(const vit_config *c)
{
    model_flops f;
    model_flops_per_sample(c, &f);
    return f.train;
}
