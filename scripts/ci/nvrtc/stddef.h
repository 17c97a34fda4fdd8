/* NVRTC has no C library headers; it predefines size_t and ptrdiff_t itself (its builtin header).
 * Only what kernels/ use of <stddef.h>. (scripts/ci/check_cuda12_kernels.sh) */
#pragma once
#ifndef NULL
#define NULL 0
#endif
