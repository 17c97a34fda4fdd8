/* cuda_runner_host: bench_run (measure's timed loop) with the cuda backend over two ranks, on the
 * CPU through the host shims: the ranks must average through NCCL (the shim counts its
 * allreduces), step in lockstep to the end, and report the global throughput. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "instbench/bench.h"

extern int nccl_shim_allreduces;

int main(void)
{
    bench_run_config c;
    memset(&c, 0, sizeof c);
    ib_error err;
    if (model_preset("vit_tiny_patch16_224", &c.train.model, &err)) return 1;
    /* a tiny custom ViT keeps the host-emulated GEMMs fast */
    c.train.model.img_size = 32, c.train.model.patch_size = 8, c.train.model.embed_dim = 32;
    c.train.model.depth = 2, c.train.model.num_heads = 2, c.train.model.num_classes = 10;
    c.train.batch_size = 2;
    c.train.precision = IB_PREC_BF16;
    backend_default_optim(IB_OPT_ADAM, &c.train.optim);
    c.backend = backend_find("cuda");
    c.ranks = 2;
    c.data = BENCH_DATA_DEVICE;
    c.warmup = 1;
    c.steps = 3;
    bench_result r;
    int failures = 0;
    if (bench_run(&c, &r, &err)) {
        fprintf(stderr, "FAIL: bench_run: %s\n", err.msg);
        return 1;
    }
    if (r.steps != 3 || r.warmup_steps != 1)
        fprintf(stderr, "FAIL: %d timed / %d warm-up steps\n", r.steps, r.warmup_steps), failures++;
    if (nccl_shim_allreduces < 4)
        fprintf(stderr, "FAIL: %d NCCL allreduces for 4 steps: the ranks did not average over NCCL\n",
                nccl_shim_allreduces),
            failures++;
    if (!(r.samples_per_second > 0) ||
        fabs(r.samples_per_second_per_device * 2 - r.samples_per_second) > 1e-9 * r.samples_per_second)
        fprintf(stderr, "FAIL: samples/s %g, per device %g\n", r.samples_per_second, r.samples_per_second_per_device),
            failures++;
    if (!isfinite(r.first_loss) || !isfinite(r.last_loss))
        fprintf(stderr, "FAIL: losses %g %g\n", r.first_loss, r.last_loss), failures++;
    if (failures) return 1;
    printf("cuda_runner_host: all passed (%d allreduces)\n", nccl_shim_allreduces);
    return 0;
}
