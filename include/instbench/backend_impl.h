/* backend_impl: what creating and destroying a backend shares across backends (the ib_backend,
 * its impl and its layout), for the backends alone.  Header-only: the CPU backend is in the core
 * and the CUDA backend in its own module, which links none of the core's backend code. */
#ifndef INSTBENCH_BACKEND_IMPL_H
#define INSTBENCH_BACKEND_IMPL_H

#include <stdlib.h>
#include "instbench/backend.h"
#include "instbench/model_plan.h"

/* Frees what backend_impl_create made (b may be NULL), after the backend freed its impl's contents. */
static inline void backend_impl_free(ib_backend *b)
{
    if (!b) return;
    free(b->impl);
    model_layout_free(&b->layout);
    free(b);
}

/* A backend's own init of its impl (zeroed bytes) for cfg and the layout beside it: 0, or -1 with
 * err set and nothing of its own left behind. */
typedef int (*backend_impl_init_fn)(void *impl, const ib_train_config *cfg, const model_layout *layout, ib_error *err);

/* *out: a backend with OPS for cfg, its layout built and IMPL_SIZE zeroed bytes as its impl, which
 * INIT makes.  -1 with err set and *out NULL when out of memory, the model is invalid or INIT fails;
 * nothing is left behind then. */
static inline int backend_impl_create(const ib_backend_ops *ops, const ib_train_config *cfg, size_t impl_size,
                                      backend_impl_init_fn init, ib_backend **out, ib_error *err)
{
    *out = NULL;
    ib_backend *b = calloc(1, sizeof *b);
    if (!b || !(b->impl = calloc(1, impl_size))) {
        free(b);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    b->ops = ops, b->cfg = *cfg;
    if (model_layout_build(&cfg->model, &b->layout, err) || init(b->impl, cfg, &b->layout, err)) {
        backend_impl_free(b);
        return -1;
    }
    *out = b;
    return 0;
}

/* Where state block WHICH lives in BUF (host or device pointers alike) and its size in bytes for P
 * parameters: get_state's lookup, shared so both backends name the same blocks and refuse the same
 * way.  NULL with err set when the run has no such block (the bf16 copy of an fp32 run). */
static inline const void *backend_state_block(const model_buffers *buf, ib_state_block which, size_t P, size_t *bytes,
                                              ib_error *err)
{
    const void *src = which == IB_STATE_PARAMS         ? (const void *)buf->params
                      : which == IB_STATE_ADAM_M       ? (const void *)buf->m
                      : which == IB_STATE_ADAM_V       ? (const void *)buf->v
                      : which == IB_STATE_WEIGHTS_BF16 ? (const void *)buf->wbf
                                                       : NULL;
    *bytes = P * (which == IB_STATE_WEIGHTS_BF16 ? sizeof(uint16_t) : sizeof(float));
    if (!src) ib_error_set(err, IB_EXIT_RUNTIME, "state block %d does not exist in this run", (int)which);
    return src;
}

#endif
