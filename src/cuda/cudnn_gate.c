/* cuda/cudnn_gate: see cudnn_gate.h. */
#include "cuda/cudnn_gate.h"

#include <stdio.h>

int cudnn_gate_min_version(int cc, int deterministic)
{
    if (cc < 80) return -1;
    if (cc >= 100 && cc < 110) return deterministic ? CUDNN_GATE_SM100_DETERMINISTIC : CUDNN_GATE_SM100_SDPA;
    return 0;
}

int cudnn_gate_check(int cc, int version, int deterministic, char *why, size_t n)
{
    if (cc <= 0) return 0; /* the runtime could not say: no floor; check_support and the self-check decide */
    const int need = cudnn_gate_min_version(cc, deterministic);
    if (need < 0) {
        snprintf(why, n, "cuDNN's SDPA needs compute capability 8.0 or newer; this GPU is %d.%d", cc / 10, cc % 10);
        return -1;
    }
    if (version >= need) return 0;
    snprintf(why, n,
             "cuDNN %d.%d.%d on compute capability %d.%d (Blackwell): its %s SDPA backward needs cuDNN %d.%d.%d or "
             "newer",
             version / 10000, version / 100 % 100, version % 100, cc / 10, cc % 10,
             deterministic ? "deterministic" : "bf16", need / 10000, need / 100 % 100, need % 100);
    return -1;
}
