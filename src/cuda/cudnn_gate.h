/* cuda/cudnn_gate: which cuDNN releases may run the bf16 SDPA step on which GPU generation, from
 * NVIDIA's own statements (pure: no GPU, no cuDNN loaded; the caller passes both versions).
 *   - cuDNN's SDPA needs compute capability 8.0+ (its support matrix: "requires SM80 (Ampere) or
 *     newer").
 *   - Blackwell datacenter parts (10.x: B200, GB200 10.0; B300, GB300 10.3) have SDPA from cuDNN
 *     9.7.0, but a deterministic bf16 backward only from 9.18.1 (cudnn-frontend 1.18.0's notes,
 *     "now allows deterministic bprop"; TransformerEngine's support matrix for Blackwell, PR 2584:
 *     9.7.0-9.18.0 non-deterministic only).  Below that the graph does not build, or worse builds
 *     an engine the self-check then has to catch.
 * Other generations (8.x, 9.0, 12.0 RTX PRO Blackwell) have no floor here beyond the callers' own
 * gates (9.15.1 where T is not a multiple of 128); check_support and the self-check decide. */
#ifndef INSTBENCH_CUDA_CUDNN_GATE_H
#define INSTBENCH_CUDA_CUDNN_GATE_H

#include <stddef.h>

/* cuDNN releases as cudnnGetVersion() numbers them (major * 10000 + minor * 100 + patch) */
#define CUDNN_GATE_SM100_SDPA 90700          /* first SDPA on 10.x */
#define CUDNN_GATE_SM100_DETERMINISTIC 91801 /* first deterministic SDPA backward on 10.x */

/* The oldest cuDNN whose SDPA runs a bf16 training step on compute capability CC (major * 10 +
 * minor: 100 for 10.0) with a deterministic backward (DETERMINISTIC 1) or not (0); 0: no floor
 * known, -1: no cuDNN SDPA at all on CC. */
int cudnn_gate_min_version(int cc, int deterministic);

/* 0 when cuDNN VERSION may run it on CC (CC 0: unknown, no floor); else -1 with WHY (N bytes) naming the GPU generation,
 * the version loaded and the one needed. */
int cudnn_gate_check(int cc, int version, int deterministic, char *why, size_t n);

#endif
