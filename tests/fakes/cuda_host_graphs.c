/* cuda_host_graphs: stream capture and CUDA graphs in the CUDA runtime stand-in (cuda_host_runtime.c
 * says what the three files hold): a capture records the ops queued on its stream instead of
 * running them, and a launch queues them again, marked as replayed. */
#include <pthread.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "cuda_host_runtime.h"
#include "cuda_host_runtime_internal.h"

/* ---------------------------------------------------------------- graphs (stream capture) */

static void graph_unref(shim_graph *g)
{
    if (__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL)) return;
    for (size_t i = 0; i < g->n; i++)
        if (g->ops[i].release) g->ops[i].release(g->ops[i].arg);
    free(g->ops);
    free(g);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    shim_stream *st = shim_stream_of(s);
    if (!s) return cudaErrorStreamCaptureUnsupported; /* the legacy stream cannot be captured */
    if (st->capture) return cudaErrorIllegalState;
    shim_graph *g = calloc(1, sizeof *g);
    if (!g) return cudaErrorMemoryAllocation;
    g->refs = 1;
    pthread_mutex_lock(&shim_sched_lock);
    st->capture = g;
    pthread_mutex_unlock(&shim_sched_lock);
    if (mode != cudaStreamCaptureModeRelaxed) shim_thread_capture = g;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *out)
{
    shim_stream *st = shim_stream_of(s);
    pthread_mutex_lock(&shim_sched_lock);
    shim_graph *g = st->capture;
    st->capture = NULL;
    pthread_mutex_unlock(&shim_sched_lock);
    if (shim_thread_capture == g) shim_thread_capture = NULL;
    *out = NULL;
    if (!g) return cudaErrorIllegalState;
    if (g->invalid != cudaSuccess) {
        graph_unref(g);
        return cudaErrorStreamCaptureInvalidated;
    }
    *out = (cudaGraph_t)g;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
    *status = shim_stream_of(s)->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    (void)flags;
    shim_graph *g = (shim_graph *)graph;
    if (!g) return cudaErrorInvalidValue;
    __atomic_add_fetch(&g->refs, 1, __ATOMIC_ACQ_REL);
    *exec = (cudaGraphExec_t)g;
    return cudaSuccess;
}

/* The graph's ops queued again, in capture order, on S; they stay the graph's (no release). */
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    shim_graph *g = (shim_graph *)exec;
    if (!g) return cudaErrorInvalidValue;
    for (size_t i = 0; i < g->n; i++) {
        shim_work w = g->ops[i];
        w.release = NULL;
        shim_enqueue_op(s, &w, 1);
    }
    return shim_sticky();
}

/* Launched work may still be queued: it finishes first (CUDA frees an exec's resources after its
 * launches complete). */
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    int dev = shim_current;
    if (!exec) return cudaErrorInvalidValue;
    shim_drive_until(shim_device_idle, &dev);
    graph_unref((shim_graph *)exec);
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (!graph) return cudaErrorInvalidValue;
    graph_unref((shim_graph *)graph);
    return cudaSuccess;
}
