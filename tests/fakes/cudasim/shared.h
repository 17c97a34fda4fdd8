/* cudasim's checks of block-shared memory (shared.cpp), as compute-sanitizer's racecheck and
 * initcheck make them on a GPU, for the scheduler (cudasim.cpp).
 *
 * `__shared__` stays `static thread_local` (cudasim.h): every __shared__ object is a local static
 * of a kernel in the module's TLS image, named in its symbol table (ce_row_kernel(...)::smax).
 * The kernel sources are compiled with -fsanitize=thread, but linked without its runtime: the
 * compiler's __tsan_read/__tsan_write calls before every load and store land here, and an access
 * to one of those objects while a block runs is checked (the rest returns at once):
 * - undefined at block start: the first access of a block to a byte fills it with 0x7fa5 half
 *   words (a signalling NaN as fp32 and as bf16, 5.6e306 as fp64), and a read of a byte no thread
 *   of the block has written is reported (initcheck);
 * - races: a byte written by one thread and read or written by another with no barrier between
 *   them (__syncthreads for any two threads; __syncwarp or a shuffle for two lanes of
 *   one warp) is reported with the kernel, block, both threads and the object and byte (racecheck);
 * - the 48 KiB limit: a kernel whose __shared__ objects add up to more is reported (ptxas would
 *   refuse it).
 * Reports go to stderr and cudasim_problem, and fail the launch (cudaErrorLaunchFailure at the
 * next synchronisation).  CUDASIM_RACECHECK=0 keeps the poisoning but reports nothing. */
#ifndef INSTBENCH_TESTS_CUDASIM_SHARED_H
#define INSTBENCH_TESTS_CUDASIM_SHARED_H

#include "cudasim.h"

namespace cudasim_shared {
/* Before the first block a host thread runs: finds the objects and this thread's copy of them. */
void thread_begin();
/* A block of KERNEL starts on this host thread with THREADS threads: its shared memory becomes
 * undefined and unordered with everything before. */
void block_begin(const char *kernel, cudasim_dim block, unsigned threads);
void block_end();
/* whether this block broke a rule, or a kernel is over the 48 KiB limit (the launch then fails) */
bool block_failed();
/* barriers that opened: every thread of the block, or the lanes of warp W */
void block_barrier();
void warp_barrier(unsigned w);
} // namespace cudasim_shared

/* cudasim.cpp, for shared.cpp: the running thread (threadIdx flattened), a switch to another
 * thread when the schedule asks for one at a shared-memory access, and a reported problem. */
unsigned cudasim_running_thread();
void cudasim_maybe_switch();
void cudasim_report(const char *line);

#endif
