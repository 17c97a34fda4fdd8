/* cuda_bucket: DDP bucketing of the CUDA backend's gradient ranges, checked on the CPU with the
 * real layouts of timm's ViT presets: walking model_grad_range in backward order, the emitted
 * buckets must cover every parameter exactly once, in descending adjacent order, each at least
 * the cap (but the last) and at most the cap plus one range; a non-adjacent range must start a
 * new bucket; an emit failure must be reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/bucket.h"
#include "instbench/model.h"

#include "check.h"

typedef struct rec {
    size_t off[4096], cnt[4096];
    int n, fail_at;
} rec;

static int record(void *user, size_t off, size_t cnt)
{
    rec *r = user;
    if (r->n == r->fail_at) return 7;
    r->off[r->n] = off, r->cnt[r->n] = cnt, r->n++;
    return 0;
}

static void walk_preset(const char *name, size_t cap)
{
    vit_config c;
    model_layout l;
    ib_error err;
    if (model_preset(name, &c, &err) || model_layout_build(&c, &l, &err)) {
        CHECK(0, "%s: %s", name, err.msg);
        return;
    }
    rec *r = calloc(1, sizeof *r);
    r->fail_at = -1;
    cuda_bucketer b;
    cuda_bucketer_init(&b, cap, record, r);
    size_t max_range = 0;
    for (int i = 0; i < model_grad_range_count(&c); i++) {
        size_t off, cnt;
        model_grad_range(&l, &c, i, &off, &cnt);
        if (cnt > max_range) max_range = cnt;
        CHECK(cuda_bucketer_add(&b, off, cnt) == 0, "%s: add failed", name);
    }
    CHECK(cuda_bucketer_flush(&b) == 0, "%s: flush failed", name);
    unsigned char *seen = calloc(l.total, 1);
    size_t covered = 0;
    for (int k = 0; k < r->n; k++) {
        for (size_t e = r->off[k]; e < r->off[k] + r->cnt[k] && e < l.total; e++) seen[e]++;
        covered += r->cnt[k];
        if (k > 0)
            CHECK(r->off[k] + r->cnt[k] == r->off[k - 1], "%s: bucket %d not just below bucket %d", name, k, k - 1);
        if (k + 1 < r->n)
            CHECK(r->cnt[k] >= cap, "%s: bucket %d of %zu floats is below the cap %zu", name, k, r->cnt[k], cap);
        CHECK(r->cnt[k] < cap + max_range, "%s: bucket %d of %zu floats overshoots", name, k, r->cnt[k]);
    }
    CHECK(covered == l.total, "%s: buckets cover %zu of %zu floats", name, covered, l.total);
    size_t bad = 0;
    for (size_t e = 0; e < l.total; e++) bad += seen[e] != 1;
    CHECK(bad == 0, "%s: %zu floats emitted zero or several times", name, bad);
    CHECK(r->n >= 1 && r->off[r->n - 1] == 0, "%s: the last bucket does not end at the block start", name);
    free(seen);
    free(r);
    model_layout_free(&l);
}

int main(void)
{
    const size_t cap25 = ((size_t)25 << 20) / 4; /* DDP's 25 MiB in floats */
    walk_preset("vit_base_patch16_224", cap25);
    walk_preset("vit_large_patch16_224", cap25);
    walk_preset("vit_tiny_patch16_224", cap25); /* smaller than one bucket: a single allreduce */
    walk_preset("vit_small_patch16_224", 1);    /* every range its own bucket */

    /* by hand: adjacency, a gap, flush of an empty bucketer, a failing emit */
    rec *r = calloc(1, sizeof *r);
    r->fail_at = -1;
    cuda_bucketer b;
    cuda_bucketer_init(&b, 100, record, r);
    CHECK(cuda_bucketer_flush(&b) == 0 && r->n == 0, "empty flush emitted");
    cuda_bucketer_add(&b, 90, 10); /* [90,100) */
    cuda_bucketer_add(&b, 50, 40); /* [50,100) */
    cuda_bucketer_add(&b, 10, 20); /* gap: emits [50,100), pending [10,30) */
    CHECK(r->n == 1 && r->off[0] == 50 && r->cnt[0] == 50, "gap: got %d buckets, first [%zu,+%zu)", r->n, r->off[0],
          r->cnt[0]);
    cuda_bucketer_add(&b, 0, 10); /* [0,30) */
    cuda_bucketer_flush(&b);
    CHECK(r->n == 2 && r->off[1] == 0 && r->cnt[1] == 30, "flush: got [%zu,+%zu)", r->off[1], r->cnt[1]);
    r->fail_at = r->n;
    cuda_bucketer_add(&b, 0, 200); /* over the cap: emits at once, and the emit fails */
    CHECK(r->n == 2, "a failed emit was recorded");
    CHECK(cuda_bucketer_add(&b, 0, 200) == 7, "emit failure not returned");
    free(r);

    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("cuda_bucket: all passed\n");
    return 0;
}
