/* engine_plan: the buffer plan both backends carve their memory from (instbench/model_plan.h), and
 * the CPU backend's memory estimate made from it.
 * 1. Every entry is aligned, lies after the one before, and holds dtype size x its shape; the
 *    shared buffers add up to the sizes written out below from the shapes the steps use.
 * 2. Carving stores each entry's address (base + offset) where the steps read it.
 * 3. The estimate is at least what creating a CPU backend really allocates (glibc's count), grows
 *    linearly with the batch, and is IB_MEMORY_REFUSED for configs no backend runs. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "instbench/backend.h"
#include "instbench/cpu.h"
#include "instbench/model_plan.h"

/* The shared buffers' bytes, from their shapes (a: bytes of an act element, Ts: T x T row stride). */
static size_t expected_bytes(const vit_config *c, size_t B, size_t a, size_t Ts)
{
    const size_t T = model_seq_len(c), N = model_num_patches(c), D = c->embed_dim, H = c->num_heads;
    const size_t F = model_mlp_hidden(c), C = c->num_classes, K = 3 * c->patch_size * c->patch_size, BT = B * T;
    const size_t P = model_param_count(c), S = c->img_size, W = 3 * D > F ? 3 * D : F;
    const size_t block =
        BT * D * (4 + a + a + 4 + a) + 4 * BT * 4 + BT * 3 * D * a + B * H * T * Ts * a + BT * F * (a + a);
    /* under bf16 also the act copy of dx and the dgrads before the norms, bf16 [BT,D] each */
    return 16 * P + (a == 2 ? 2 * P : 0) + B * 3 * S * S * 4 + B * 4 + c->depth * block + BT * D * 4 + B * N * K * a +
           2 * B * 4 + B * D * (a + 4) + B * C * (8 + a) + BT * W * a + BT * D * (8 + a) +
           (a == 2 ? 2 * BT * D * a : 0);
}

static const model_plan_entry *find(const model_plan *p, const char *name)
{
    for (size_t i = 0; i < p->count; i++)
        if (!strcmp(p->entries[i].name, name)) return &p->entries[i];
    return NULL;
}

static void check_plan(const vit_config *c, int batch, ib_precision prec, int tt_align, size_t align)
{
    model_plan p;
    ib_error err;
    if (model_plan_build(c, batch, prec, tt_align, align, &p, &err)) {
        CHECK(0, "%s batch %d: %s", c->name, batch, err.msg);
        return;
    }
    const size_t a = ib_precision_size(prec), Ts = (size_t)(model_seq_len(c) + tt_align - 1) / tt_align * tt_align;
    size_t end = 0, sum = 0;
    for (size_t i = 0; i < p.count; i++) {
        const model_plan_entry *e = &p.entries[i];
        size_t n = model_dtype_size(e->dtype);
        for (int d = 0; d < e->ndim; d++) n *= e->shape[d];
        CHECK(e->offset % align == 0 && e->offset >= end && e->bytes == n, "%s: entry %s at %zu, %zu bytes (shape %zu)",
              c->name, e->name, e->offset, e->bytes, n);
        end = e->offset + e->bytes, sum += e->bytes;
    }
    CHECK(p.bytes == end && !p.failed, "%s: arena %zu bytes, last entry ends at %zu", c->name, p.bytes, end);
    CHECK(sum == expected_bytes(c, batch, a, Ts), "%s batch %d %s: %zu bytes planned, %zu from the shapes", c->name,
          batch, backend_precision_name(prec), sum, expected_bytes(c, batch, a, Ts));
    CHECK(p.count == 7 + 3 * (prec == IB_PREC_BF16) + 13 * (size_t)c->depth + 12, "%s: %zu entries", c->name, p.count);

    /* carving: into a fake base (addresses are only stored, never dereferenced) */
    model_buffers buf;
    char *base = (char *)(uintptr_t)0x100000;
    const int carved = model_plan_carve(&p, base, &buf, NULL, &err) == 0;
    CHECK(carved, "carve: %s", err.msg);
    if (!carved) {
        model_plan_free(&p, NULL);
        return;
    }
    struct {
        const char *name;
        const void *got;
    } at[] = {
        {"params", buf.params},
        {"grads", buf.grads},
        {"m", buf.m},
        {"v", buf.v},
        {"images", buf.images},
        {"labels", buf.labels},
        {"logits", buf.logits},
        {"datt", buf.datt},
        {"blocks.0.x_in", buf.blk[0].x_in},
        {"blocks.0.qkv", buf.blk[0].qkv},
        {"blocks.0.P", buf.blk[0].P},
        {"blocks.0.a", buf.blk[0].a},
    };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        const model_plan_entry *e = find(&p, at[i].name);
        CHECK(e && at[i].got == base + e->offset, "%s: %s carved at %p", c->name, at[i].name, at[i].got);
    }
    char last[32];
    snprintf(last, sizeof last, "blocks.%d.rstd2", c->depth - 1);
    const model_plan_entry *e = find(&p, last);
    CHECK(e && (const char *)buf.blk[c->depth - 1].rstd2 == base + e->offset, "%s: %s", c->name, last);
    CHECK((buf.wbf != NULL) == (prec == IB_PREC_BF16), "%s: bf16 weight copy %p", c->name, (void *)buf.wbf);
    model_plan_free(&p, &buf);
}

/* glibc's count of bytes in use; under AddressSanitizer, whose allocator glibc does not see, the
 * comparison with the estimate is skipped (the release build makes it). */
#if defined(__SANITIZE_ADDRESS__)
#define GLIBC_COUNTS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLIBC_COUNTS 0
#endif
#endif
#ifndef GLIBC_COUNTS
#define GLIBC_COUNTS 1
#endif

static size_t allocated(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

int main(void)
{
    for (size_t i = 0; i < model_preset_count(); i++)
        for (int prec = IB_PREC_FP32; prec <= IB_PREC_BF16; prec++) {
            check_plan(model_preset_at(i), 3, (ib_precision)prec, 1, 4096); /* the CPU backend's */
            check_plan(model_preset_at(i), 5, (ib_precision)prec, 8, 256);  /* the CUDA backend's */
        }

    ib_train_config cfg;
    memset(&cfg, 0, sizeof cfg);
    ib_error err;
    CHECK(model_preset("vit_tiny_patch16_224", &cfg.model, &err) == 0, "preset");
    cfg.batch_size = 4, cfg.threads = 2;
    backend_default_optim(IB_OPT_ADAM, &cfg.optim);
    for (int prec = IB_PREC_FP32; prec <= IB_PREC_BF16; prec++) {
        cfg.precision = (ib_precision)prec;
        const size_t est = cpu_backend_memory_estimate(&cfg), before = allocated();
        ib_backend *b = NULL;
        const int created = backend_create("cpu", &cfg, &b, &err) == 0;
        CHECK(created, "create: %s", err.msg);
        if (created) {
            const size_t used = allocated() - before;
            CHECK(!GLIBC_COUNTS || (used <= est && used > est / 2),
                  "%s: creating the backend allocated %zu bytes, the estimate is %zu",
                  backend_precision_name(cfg.precision), used, est);
            b->ops->destroy(b);
        }
        size_t e[4];
        for (int k = 1; k <= 3; k++) {
            cfg.batch_size = 1000 * k;
            e[k] = cpu_backend_memory_estimate(&cfg);
        }
        const double d1 = (double)e[2] - e[1], d2 = (double)e[3] - e[2];
        CHECK(e[1] < e[2] && e[2] < e[3] && d1 > 0 && d2 / d1 > 0.999 && d2 / d1 < 1.001,
              "estimate not linear in the batch: %zu, %zu, %zu", e[1], e[2], e[3]);
        cfg.batch_size = 4;
    }
    cfg.batch_size = 0;
    CHECK(cpu_backend_memory_estimate(&cfg) == IB_MEMORY_REFUSED, "batch 0");
    cfg.batch_size = (1 << 20) + 1;
    CHECK(cpu_backend_memory_estimate(&cfg) == IB_MEMORY_REFUSED, "batch 2^20 + 1");
    cfg.batch_size = 4, cfg.model.depth = 0;
    CHECK(cpu_backend_memory_estimate(&cfg) == IB_MEMORY_REFUSED, "depth 0");
    if (!failures) printf("engine_plan: all passed\n");
    return failures != 0;
}
