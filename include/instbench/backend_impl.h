/* backend_impl: what creating and destroying a backend shares across backends (the ib_backend,
 * its impl and its layout), for the backends alone.  Header-only: the CPU backend is in the core
 * and the CUDA backend in its own module, which links none of the core's backend code. */
#ifndef INSTBENCH_BACKEND_IMPL_H
#define INSTBENCH_BACKEND_IMPL_H

#include <stdlib.h>
#include "instbench/backend.h"
#include "instbench/model_plan.h"

/* Frees what backend_impl_new made (b may be NULL), after the backend freed its impl's contents. */
static inline void backend_impl_free(ib_backend *b)
{
    if (!b) return;
    free(b->impl);
    model_layout_free(&b->layout);
    free(b);
}

/* A backend with OPS for cfg: its layout built and IMPL_SIZE zeroed bytes as its impl, for the
 * backend's own init.  NULL with err set when out of memory or the model is invalid. */
static inline ib_backend *backend_impl_new(const ib_backend_ops *ops, const ib_train_config *cfg, size_t impl_size,
                                           ib_error *err)
{
    ib_backend *b = calloc(1, sizeof *b);
    if (!b || !(b->impl = calloc(1, impl_size))) {
        free(b);
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        return NULL;
    }
    b->ops = ops, b->cfg = *cfg;
    if (model_layout_build(&cfg->model, &b->layout, err)) {
        backend_impl_free(b);
        return NULL;
    }
    return b;
}

/* Where state block WHICH lives in BUF (host or device pointers alike) and its size in bytes for P
 * parameters: get_state's lookup, shared so both backends name the same blocks.  NULL when the run
 * has no such block (the bf16 copy of an fp32 run). */
static inline const void *backend_state_block(const model_buffers *buf, ib_state_block which, size_t P, size_t *bytes)
{
    const void *src = which == IB_STATE_PARAMS         ? (const void *)buf->params
                      : which == IB_STATE_ADAM_M       ? (const void *)buf->m
                      : which == IB_STATE_ADAM_V       ? (const void *)buf->v
                      : which == IB_STATE_WEIGHTS_BF16 ? (const void *)buf->wbf
                                                       : NULL;
    *bytes = P * (which == IB_STATE_WEIGHTS_BF16 ? sizeof(uint16_t) : sizeof(float));
    return src;
}

#endif
