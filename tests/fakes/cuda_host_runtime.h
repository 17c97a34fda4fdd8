/* cuda_host_runtime: what the host stand-in of the CUDA runtime (cuda_host_runtime.c) offers the
 * other stand-ins and the tests beyond CUDA's own API. */
#ifndef INSTBENCH_TESTS_CUDA_HOST_RUNTIME_H
#define INSTBENCH_TESTS_CUDA_HOST_RUNTIME_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The cudaMalloc allocation P points into (its end included): 1 with its base and exact size, or 0. */
int shim_device_allocation(const void *p, const char **base, size_t *size);
extern int shim_malloc_fails;     /* test hook: cudaMalloc fails while set */
extern int shim_live_allocations; /* cudaMalloc'd and not yet freed */
/* test hook: the architecture (x10) cudaFuncGetAttributes says the loaded kernels were compiled
 * for, ptxVersion and binaryVersion alike (default 90; 75: a build without 8.0+ code) */
extern int shim_code_version;

/* One piece of stream-ordered work (a kernel, a GEMM, a copy, a collective).  run does it;
 * ready, if set, says whether it may start now that it heads its stream: 1 yes, 0 not yet (a
 * peer has still to come), -1 never (a peer that is gone: only an abort of OWNER ends it);
 * release frees arg once the op has run or was dropped.  ready may be asked many times. */
typedef struct shim_work {
    void (*run)(void *arg);
    int (*ready)(void *arg);
    void (*release)(void *arg);
    void *arg;
    const void *owner; /* the communicator whose abort drops it, or NULL */
} shim_work;

/* Queues W on stream S (NULL: the default stream).  Ordered mode: W runs when the scheduler
 * reaches it; immediate mode: before this returns, unless a peer it waits for never comes. */
void shim_enqueue(cudaStream_t s, const shim_work *w);
/* 1 while the op this host thread runs was queued by cudaGraphLaunch (a captured graph replayed). */
int shim_op_replayed(void);
/* Drops every queued op of OWNER (ncclCommAbort): what waited behind it runs again. */
void shim_drop_owner(const void *owner);
/* Ordered mode with the scheduler seeded by SEED (tests/fakes/cudasim turns it on; CUDASIM_STREAMS=
 * immediate keeps the immediate mode, CUDASIM_SEED picks another seed). */
void shim_streams_ordered(unsigned long long seed);
int shim_streams_are_ordered(void);
/* Advances the clock cudaEventElapsedTime reads by PS picoseconds (virtual: only work that calls
 * this takes any time there; the cuBLASLt stand-in's algorithms of a set speed do).  Each device has
 * its own: that of the stream whose op calls this (outside an op, the current device's). */
void shim_clock_advance(unsigned long long ps);
/* An error found while work ran (a kernel's divergent barrier): returned by the next
 * synchronisation and by cudaGetLastError, as a GPU's sticky launch failure is. */
void shim_report_async_error(cudaError_t e);
/* Set by tests/fakes/cudasim: appends to BUF (N bytes) what runs now on this host thread ("in kernel K,
 * block (x,y,z), thread (x,y,z)"), or nothing; the guard-page handler adds it to its report. */
extern void (*shim_fault_where)(char *buf, size_t n);
/* With CUDASIM_TRACE=PATH set, one line per call appended to PATH in program order: "launch NAME"
 * for a kernel (cudasim), "gemm batch=.. M=.. N=.. K=.. ab=.. c=.. bias=0|1" for a cuBLASLt matmul in
 * the row-major terms of src/cuda/gemm.h (the stand-in): the order of one step's work, for a
 * person reading it. */
void shim_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
