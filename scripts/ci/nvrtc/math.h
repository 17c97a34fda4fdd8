/* <math.h> for NVRTC: CUDA's device math functions come with cuda_runtime.h; what the kernels take
 * from the host's <math.h> under nvcc is only INFINITY. (scripts/ci/check_cuda12_kernels.sh) */
#pragma once
#ifndef INFINITY
#define INFINITY (__int_as_float(0x7f800000))
#endif
