/* GPU peak lookup: NVML's device names map to the right datasheet column (more specific names
 * first: H100 PCIe is not H100 SXM, L40S is not L4, A10G is not A10 or A100), GPUs without BF16
 * tensor cores have no bf16 peak, and unknown GPUs have none at all.  Expected figures are the
 * dense ones printed in NVIDIA's datasheets.  A100s of either memory size share their peak, and
 * each lands on its own datasheet column (named in the source). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "instbench/bench.h"

static int failures;

static void expect(const char *name, ib_precision p, double want)
{
    double t = -1;
    char src[512] = "";
    int rc = peak_gpu_lookup(name, p, &t, src, sizeof src);
    if (want < 0) {
        if (rc == 0) {
            failures++;
            fprintf(stderr, "FAIL %s %s: want no peak, got %g (%s)\n", name, backend_precision_name(p), t, src);
        }
        return;
    }
    if (rc != 0 || fabs(t - want) > 1e-9 * want || !src[0]) {
        failures++;
        fprintf(stderr, "FAIL %s %s: want %g, got rc %d %g (%s)\n", name, backend_precision_name(p), want, rc, t, src);
    }
}

/* The entry that matched is the one whose source names `column`. */
static void expect_source(const char *name, const char *column)
{
    double t = -1;
    char src[512] = "";
    if (peak_gpu_lookup(name, IB_PREC_BF16, &t, src, sizeof src) != 0 || !strstr(src, column)) {
        failures++;
        fprintf(stderr, "FAIL %s: want the %s entry, got '%s'\n", name, column, src);
    }
}

int main(void)
{
    expect("NVIDIA H100 80GB HBM3", IB_PREC_BF16, 989.5);
    expect("NVIDIA H100 PCIe", IB_PREC_BF16, 756.5);
    expect("NVIDIA H100 NVL", IB_PREC_BF16, 835.5);
    expect("NVIDIA H200", IB_PREC_BF16, 989.5);
    expect("NVIDIA H200 NVL", IB_PREC_BF16, 835.5); /* not the SXM column its name contains */
    expect("NVIDIA H200 NVL", IB_PREC_FP32, 60);
    expect("NVIDIA H100 80GB HBM3", IB_PREC_FP32, 67);
    expect("NVIDIA A100-SXM4-40GB", IB_PREC_BF16, 312);
    expect("NVIDIA A100-SXM4-80GB", IB_PREC_FP32, 19.5);
    expect("NVIDIA A100 80GB PCIe", IB_PREC_BF16, 312);
    expect_source("NVIDIA A100-SXM4-40GB", "A100 40GB SXM column");
    expect_source("NVIDIA A100-SXM4-80GB", "A100 80GB SXM column");
    expect_source("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe column");
    expect_source("NVIDIA A100 80GB PCIe", "A100 80GB PCIe column");
    expect("NVIDIA A10G", IB_PREC_BF16, 125);
    expect("NVIDIA A10", IB_PREC_FP32, 31.2);
    expect("NVIDIA L40S", IB_PREC_BF16, 362.05);
    expect("NVIDIA L40", IB_PREC_BF16, 181.05);
    expect("NVIDIA L4", IB_PREC_BF16, 121);
    expect("Tesla T4", IB_PREC_FP32, 8.1);
    expect("Tesla T4", IB_PREC_BF16, -1); /* Turing: no BF16 tensor cores */
    expect("Tesla V100-SXM2-16GB", IB_PREC_BF16, -1);
    expect("Tesla V100-SXM2-16GB", IB_PREC_FP32, 15.7);
    expect("Tesla V100-PCIE-16GB", IB_PREC_FP32, 14);
    /* Blackwell by the names their drivers report (NVML): per-GPU dense figures of the HGX and
     * NVL72 sheets; GB200 is not taken for B200, whose name it contains */
    expect("NVIDIA B200", IB_PREC_BF16, 2250);
    expect("NVIDIA B200", IB_PREC_FP32, 75);
    expect("NVIDIA B300 SXM6 AC", IB_PREC_BF16, 2250);
    expect("NVIDIA GB200", IB_PREC_BF16, 2500);
    expect("NVIDIA GB200", IB_PREC_FP32, 80);
    expect_source("NVIDIA GB200", "GB200 NVL72 datasheet");
    expect_source("NVIDIA B200", "HGX B200 datasheet");
    expect("Some Future GPU", IB_PREC_BF16, -1);
    expect("", IB_PREC_BF16, -1);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("measure_peak: all checks passed\n");
    return failures ? 1 : 0;
}
