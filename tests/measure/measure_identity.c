/* identity_check and identity_device_kind on GPU runs (CI has no GPU): device names as CUDA's
 * cudaGetDeviceProperties / nvidia-smi report them on the EC2 types that carry them, against the
 * accelerator names of the embedded price snapshot (the catalogue measure checks a type with). */
#include <stdio.h>
#include <string.h>

#include "instbench/bench.h"
#include "instbench/prices.h"

#include "check.h"

static const char *const *known;
static size_t n_known;

static void kind_is(const char *device, const char *want)
{
    const char *got = identity_device_kind(device, known, n_known);
    CHECK(want ? got && !strcmp(got, want) : !got, "'%s' is '%s', want '%s'", device, got ? got : "(none)",
          want ? want : "(none)");
}

/* One GPU run of TYPE's hardware against a flag-given TYPE; returns the differences found. */
static int check_run(const bench_type_hardware *hw, int devices, const char *name, int vcpus, bench_identity *id)
{
    memset(id, 0, sizeof *id);
    snprintf(id->type, sizeof id->type, "g5.12xlarge");
    strcpy(id->source, "flag");
    const bench_run_hardware run = {"cuda", devices, name, vcpus};
    identity_check(id, hw, &run);
    return id->n_differences;
}

int main(void)
{
    n_known = prices_catalogue_accelerators(&known);
    CHECK(n_known >= 5, "the snapshot names %zu accelerators", n_known);

    kind_is("NVIDIA A10G", "A10G");
    kind_is("nvidia a10g", "A10G");                /* case ignored */
    kind_is("NVIDIA A100-SXM4-40GB", "A100");      /* p4d */
    kind_is("NVIDIA A100-SXM4-80GB", "A100-80GB"); /* p4de: the more specific name */
    kind_is("NVIDIA H100 80GB HBM3", "H100");
    kind_is("NVIDIA H200", "H200");
    kind_is("NVIDIA L4", "L4");
    kind_is("NVIDIA L40S", "L40S"); /* not L4: a name is a whole word */
    kind_is("Tesla T4", "T4");
    kind_is("Tesla V100-SXM2-16GB", "V100");
    kind_is("Tesla V100-SXM2-32GB", "V100-32GB");
    kind_is("NVIDIA GeForce RTX 4090", NULL);
    /* the 2026 families: p6-b200's B200, g7e's GPU (the product's name, NVIDIA RTX PRO 6000 Blackwell
     * Server Edition, against DescribeInstanceTypes' "RTX PRO Server 6000": every word of it) */
    kind_is("NVIDIA B200", "B200");
    kind_is("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO Server 6000");
    kind_is("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", NULL); /* no "Server": not g7e's */
    kind_is("", NULL);

    /* g5.12xlarge as data/aws-accelerated-prices.csv states it: 4 x A10G, 48 vCPUs */
    const bench_type_hardware g5 = {48, "A10G", 4, known, n_known};
    bench_identity id;
    CHECK(check_run(&g5, 4, "NVIDIA A10G", 48, &id) == 0 && id.mismatch == 0, "the machine itself: %d", id.mismatch);
    CHECK(check_run(&g5, 1, "NVIDIA A10G", 48, &id) == 1 && id.mismatch == 1 &&
              !strcmp(id.differences[0], "accelerators: g5.12xlarge has 4 x A10G, this run has 1 x NVIDIA A10G"),
          "one of four GPUs: '%s'", id.differences[0]);
    CHECK(check_run(&g5, 4, "NVIDIA L4", 48, &id) == 1 &&
              !strcmp(id.differences[0], "accelerators: g5.12xlarge has 4 x A10G, this run has 4 x NVIDIA L4"),
          "another GPU: '%s'", id.differences[0]);
    CHECK(check_run(&g5, 4, "NVIDIA A10G", 8, &id) == 1 &&
              !strcmp(id.differences[0], "vcpus: g5.12xlarge has 48, this machine has 8"),
          "other vCPUs: '%s'", id.differences[0]);
    const bench_type_hardware cpu_type = {48, "", 0, known, n_known};
    CHECK(check_run(&cpu_type, 1, "NVIDIA A10G", 48, &id) == 1 &&
              !strcmp(id.differences[0], "accelerators: g5.12xlarge has none, this run has 1 x NVIDIA A10G"),
          "a GPU run under a CPU type: '%s'", id.differences[0]);

    /* unknown type: unchecked; instance metadata: the machine's own, never a mismatch */
    check_run(NULL, 1, "NVIDIA A10G", 2, &id);
    CHECK(id.mismatch == -1 && id.n_differences == 0, "unknown type: %d", id.mismatch);
    memset(&id, 0, sizeof id);
    snprintf(id.type, sizeof id.type, "g5.12xlarge");
    strcpy(id.source, "imds");
    const bench_run_hardware cpu_run = {"cpu", 0, NULL, 2};
    CHECK(identity_check(&id, &g5, &cpu_run) == 0 && id.n_differences == 0, "imds: %d", id.mismatch);

    if (failures) fprintf(stderr, "measure_identity: %d failure(s)\n", failures);
    else printf("measure_identity: ok\n");
    return failures != 0;
}
