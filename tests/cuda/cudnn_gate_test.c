/* The cuDNN version gates per GPU generation (src/cuda/cudnn_gate.c) against what NVIDIA states:
 * cuDNN's SDPA support matrix (SM80 or newer), cudnn-frontend 1.18.0's release notes and
 * TransformerEngine's Blackwell support matrix (PR 2584: bf16 SDPA on 10.x from cuDNN 9.7.0, a
 * deterministic backward only from 9.18.1).  GPUs by the compute capability their driver reports:
 * B200/GB200 10.0, B300/GB300 10.3, RTX PRO 6000/4500 Blackwell 12.0, H100 9.0, A10G 8.6, T4 7.5. */
#include <stdio.h>
#include <string.h>

#include "cuda/cudnn_gate.h"

static int failures;

static void expect(const char *gpu, int cc, int version, int deterministic, int ok, const char *says)
{
    char why[256] = "";
    const int rc = cudnn_gate_check(cc, version, deterministic, why, sizeof why);
    if ((rc == 0) != ok || (!ok && says && !strstr(why, says))) {
        fprintf(stderr, "FAIL %s (cc %d), cuDNN %d, %s: want %s%s%s, got rc %d \"%s\"\n", gpu, cc, version,
                deterministic ? "deterministic" : "non-deterministic", ok ? "accepted" : "refused",
                says ? " naming " : "", says ? says : "", rc, why);
        failures++;
    }
}

int main(void)
{
    /* Blackwell datacenter: deterministic backward from 9.18.1, SDPA at all from 9.7.0 */
    expect("B200", 100, 91800, 1, 0, "9.18.1");
    expect("B200", 100, 91801, 1, 1, NULL);
    expect("B200", 100, 91900, 1, 1, NULL);
    expect("GB200", 100, 91501, 1, 0, "cuDNN 9.15.1 on compute capability 10.0");
    expect("B300", 103, 91800, 1, 0, "9.18.1");
    expect("B300", 103, 91801, 1, 1, NULL);
    expect("B200", 100, 91501, 0, 1, NULL); /* non-deterministic: there since 9.7.0 */
    expect("B200", 100, 90700, 0, 1, NULL);
    expect("B200", 100, 90600, 0, 0, "9.7.0");
    /* no floor here elsewhere (the 9.15.1 ragged-T gate is the caller's) */
    expect("H100", 90, 91501, 1, 1, NULL);
    expect("A10G", 86, 91501, 1, 1, NULL);
    expect("RTX PRO 6000 Blackwell", 120, 91501, 1, 1, NULL);
    /* below Ampere cuDNN has no SDPA */
    expect("T4", 75, 91900, 1, 0, "8.0 or newer");
    expect("T4", 75, 91900, 0, 0, "8.0 or newer");
    /* the runtime could not say: no floor (the self-check decides) */
    expect("unknown", 0, 90000, 1, 1, NULL);
    if (cudnn_gate_min_version(100, 1) != 91801 || cudnn_gate_min_version(103, 0) != 90700 ||
        cudnn_gate_min_version(90, 1) != 0 || cudnn_gate_min_version(75, 0) != -1) {
        fprintf(stderr, "FAIL cudnn_gate_min_version\n");
        failures++;
    }
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("cuda_cudnn_gate: all checks passed\n");
    return failures ? 1 : 0;
}
