/* <stdint.h> for NVRTC (no C library headers there): the LP64 types of x86-64 and aarch64 Linux,
 * as the host compiler nvcc uses would define them. (scripts/ci/check_cuda12_kernels.sh) */
#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
