/* cuda_host_runtime_internal: what the three files of the CUDA runtime stand-in
 * (cuda_host_runtime.c, cuda_host_streams.c, cuda_host_graphs.c) share, and nothing else sees:
 * hidden, so the shared library exports only CUDA's API and cuda_host_runtime.h. */
#ifndef INSTBENCH_TESTS_CUDA_HOST_RUNTIME_INTERNAL_H
#define INSTBENCH_TESTS_CUDA_HOST_RUNTIME_INTERNAL_H

#include <pthread.h>

#include <cuda_runtime_api.h>

#include "cuda_host_runtime.h"

#pragma GCC visibility push(hidden)

#define SHIM_DEVICES 2            /* cudaGetDeviceCount's */
extern __thread int shim_current; /* cudaSetDevice's, per host thread */

/* A captured graph: the ops queued on the capturing stream, in order, not run.  A launch queues
 * them again on its stream (the graph keeps them: they run once per launch); the graph and every
 * exec made from it hold a reference, and the ops are released with the last. */
struct shim_graph {
    shim_work *ops;
    size_t n, cap;
    int refs;
    cudaError_t invalid; /* what invalidated the capture (cudaSuccess: nothing) */
};
typedef struct shim_graph shim_graph;

typedef struct shim_op shim_op;
typedef struct shim_stream {
    shim_op *head, *tail;
    shim_graph *capture; /* between cudaStreamBeginCapture and End: its ops are recorded here */
    int busy;            /* its head op is running on some thread: the next one waits */
    int device;          /* current when it was made: cudaFree and cudaDeviceSynchronize wait for its work */
    int made;            /* creation order: the priority under seeds 1 and 2 */
} shim_stream;

/* One lock over every queue; ops run without it (so they may take their own locks, and two
 * streams' ops may run at once on two threads). */
extern pthread_mutex_t shim_sched_lock;
shim_stream *shim_stream_of(cudaStream_t s); /* NULL: the default stream */
/* Queues W on S, as shim_enqueue; REPLAY: queued by cudaGraphLaunch (shim_op_replayed). */
void shim_enqueue_op(cudaStream_t s, const shim_work *w, int replay);
/* Drives the scheduler until done(arg): 0, or -1 when it never will (a peer that is gone). */
int shim_drive_until(int (*done)(void *), void *arg);
int shim_device_idle(void *dev); /* every stream of device *(int *)dev (NULL: of every device) drained */
cudaError_t shim_sticky(void);   /* the sticky error of work that ran */
/* Waiting on a capturing stream S fails and invalidates its capture. */
cudaError_t shim_capture_refuses(cudaStream_t s);
/* The capture the calling thread began in a mode that checks unsafe calls (NULL: none), and the
 * check itself: such a call fails and invalidates that capture. */
extern __thread shim_graph *shim_thread_capture;
cudaError_t shim_unsafe_call(void);

#pragma GCC visibility pop

#endif
