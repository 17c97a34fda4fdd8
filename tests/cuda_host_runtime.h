/* cuda_host_runtime: what the host stand-in of the CUDA runtime (cuda_host_runtime.c) offers the
 * other stand-ins and the tests beyond CUDA's own API. */
#ifndef INSTBENCH_TESTS_CUDA_HOST_RUNTIME_H
#define INSTBENCH_TESTS_CUDA_HOST_RUNTIME_H

#include <stddef.h>

/* The cudaMalloc allocation P points into (its end included): 1 with its base and exact size, or 0. */
int shim_device_allocation(const void *p, const char **base, size_t *size);
extern int shim_malloc_fails;       /* test hook: cudaMalloc fails while set */
extern int shim_live_allocations;   /* cudaMalloc'd and not yet freed */

#endif
