/* cuda/comm_nccl: ib_comm over NCCL.  Each comm owns a stream for communication; allreduce waits
 * (on the GPU, through an event) for the work queued so far on the rank's compute stream, runs
 * ncclAllReduce(ncclAvg) there, so the compute stream keeps going (DDP's overlap), and join makes
 * the compute stream wait for the comm stream before the optimizer reads the averaged gradients. */
#include "cuda/api.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "cuda/check.h"

#ifdef INSTBENCH_HAVE_NCCL
#include <nccl.h>

_Static_assert(sizeof(ncclUniqueId) == CUDA_NCCL_ID_BYTES, "NCCL unique id size");

typedef struct nccl_impl {
    ncclComm_t comm;
    int aborted; /* ncclCommAbort ran: comm is gone, nothing may wait on it */
    int device;
    cudaStream_t compute, comm_stream; /* compute: the backend's; comm_stream: ours */
    cudaEvent_t ready, done;           /* compute -> comm, comm -> compute */
} nccl_impl;

static int nccl_check(ncclResult_t r, const char *what, ib_error *err)
{
    if (r == ncclSuccess) return 0;
    return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: %s failed: %s", what, ncclGetErrorString(r));
}
#define NCCL_TRY(call)                                 \
    do {                                               \
        if (nccl_check((call), #call, err)) return -1; \
    } while (0)

static nccl_impl *impl(ib_comm *c) { return (nccl_impl *)c->impl; }

int comm_nccl_available(void) { return 1; }

int comm_nccl_unique_id(unsigned char id[CUDA_NCCL_ID_BYTES], ib_error *err)
{
    ncclUniqueId u;
    NCCL_TRY(ncclGetUniqueId(&u));
    memcpy(id, u.internal, CUDA_NCCL_ID_BYTES);
    return 0;
}

/* comm stream waits for everything queued on the compute stream so far */
static int after_compute(nccl_impl *n, ib_error *err)
{
    CUDA_TRY(cudaSetDevice(n->device));
    CUDA_TRY(cudaEventRecord(n->ready, n->compute));
    CUDA_TRY(cudaStreamWaitEvent(n->comm_stream, n->ready, 0));
    return 0;
}

static int refuse_aborted(ib_comm *c, ib_error *err)
{
    return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: rank %d of %d: communicator aborted after a failure", c->rank,
                        c->world_size);
}

int comm_nccl_allreduce_async(ib_comm *c, float *buf, size_t count, ib_error *err)
{
    nccl_impl *n = impl(c);
    if (n->aborted) return refuse_aborted(c, err);
    if (count == 0) return 0;
    if (after_compute(n, err)) return -1;
    NCCL_TRY(ncclAllReduce(buf, buf, count, ncclFloat32, ncclAvg, n->comm, n->comm_stream));
    return 0;
}

int comm_nccl_join(ib_comm *c, ib_error *err)
{
    nccl_impl *n = impl(c);
    if (n->aborted) return refuse_aborted(c, err);
    CUDA_TRY(cudaSetDevice(n->device));
    CUDA_TRY(cudaEventRecord(n->done, n->comm_stream));
    CUDA_TRY(cudaStreamWaitEvent(n->compute, n->done, 0));
    return 0;
}

static int allreduce_mean(ib_comm *c, float *buf, size_t count, ib_error *err)
{
    if (comm_nccl_allreduce_async(c, buf, count, err)) return -1;
    return comm_nccl_join(c, err);
}

static int broadcast(ib_comm *c, float *buf, size_t count, int root, ib_error *err)
{
    nccl_impl *n = impl(c);
    if (n->aborted) return refuse_aborted(c, err);
    if (root < 0 || root >= c->world_size)
        return ib_error_set(err, IB_EXIT_RUNTIME, "broadcast root %d outside [0, %d)", root, c->world_size);
    if (after_compute(n, err)) return -1;
    NCCL_TRY(ncclBroadcast(buf, buf, count, ncclFloat32, root, n->comm, n->comm_stream));
    return comm_nccl_join(c, err);
}

double comm_nccl_timeout_s(void)
{
    const char *v = getenv("INSTBENCH_NCCL_TIMEOUT_S");
    char *end = NULL;
    double t = v ? strtod(v, &end) : 0;
    if (v && end != v && *end == '\0' && t > 0 && t < 1e7) return t;
    static int warned; /* read at every wait: said once */
    if (v && !__atomic_exchange_n(&warned, 1, __ATOMIC_ACQ_REL))
        ib_warn("INSTBENCH_NCCL_TIMEOUT_S='%.40s' is not a number of seconds in (0, 1e7): using 300\n", v);
    return 300.0;
}

void comm_nccl_abort(ib_comm *c)
{
    nccl_impl *n = c ? impl(c) : NULL;
    if (!n || n->aborted || !n->comm) return;
    cudaSetDevice(n->device);
    ncclCommAbort(n->comm); /* frees the comm; its kernels return */
    n->comm = NULL;
    n->aborted = 1;
}

int comm_nccl_wait(ib_comm *c, void *stream, const volatile int *stop, ib_error *err)
{
    nccl_impl *n = impl(c);
    const double limit = comm_nccl_timeout_s(), t0 = util_now_seconds();
    const struct timespec nap = {0, 200 * 1000}; /* 0.2 ms: a step's end is seen late by at most that */
    CUDA_TRY(cudaSetDevice(n->device));
    for (;;) {
        cudaError_t q = cudaStreamQuery((cudaStream_t)stream);
        if (q == cudaSuccess) return 0;
        if (q != cudaErrorNotReady) {
            comm_nccl_abort(c);
            return cuda_check(q, "cudaStreamQuery", err);
        }
        ncclResult_t a = ncclSuccess;
        if (n->aborted)
            return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: rank %d of %d: its communicator was aborted", c->rank,
                                c->world_size);
        if (ncclCommGetAsyncError(n->comm, &a) == ncclSuccess && a != ncclSuccess && a != ncclInProgress) {
            comm_nccl_abort(c);
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "NCCL: rank %d of %d: %s: another rank failed or left; communicator aborted", c->rank,
                                c->world_size, ncclGetErrorString(a));
        }
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
            comm_nccl_abort(c);
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "NCCL: rank %d of %d: stopped: another rank of this process failed", c->rank,
                                c->world_size);
        }
        if (util_now_seconds() - t0 > limit) {
            comm_nccl_abort(c);
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "NCCL: rank %d of %d: no progress for %.0f s: a rank has died or hangs; communicator "
                                "aborted (INSTBENCH_NCCL_TIMEOUT_S sets the limit)",
                                c->rank, c->world_size, limit);
        }
        nanosleep(&nap, NULL);
    }
}

static int barrier(ib_comm *c, ib_error *err)
{
    /* A one-element allreduce completes only when every rank has reached it. */
    nccl_impl *n = impl(c);
    float *one = NULL;
    if (n->aborted) return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: rank %d: communicator aborted", c->rank);
    CUDA_TRY(cudaSetDevice(n->device));
    CUDA_TRY(cudaMallocAsync((void **)&one, sizeof(float), n->comm_stream));
    int rc = 0;
    if (cuda_check(cudaMemsetAsync(one, 0, sizeof(float), n->comm_stream), "cudaMemsetAsync", err) ||
        nccl_check(ncclAllReduce(one, one, 1, ncclFloat32, ncclSum, n->comm, n->comm_stream), "ncclAllReduce", err) ||
        comm_nccl_wait(c, n->comm_stream, NULL, err) || comm_nccl_wait(c, n->compute, NULL, err))
        rc = -1;
    cudaFreeAsync(one, n->comm_stream);
    return rc;
}

/* Host values averaged over the ranks (measure's allreduce times, as nccl-tests' Allreduce(&deltaSec,
 * average)): through a scratch device buffer on the comm stream, waited for with the usual bound. */
static int mean_host(ib_comm *c, double *vals, size_t count, ib_error *err)
{
    nccl_impl *n = impl(c);
    float host[COMM_MEAN_HOST_MAX], *dev = NULL;
    if (n->aborted) return refuse_aborted(c, err);
    if (count == 0) return 0;
    if (count > COMM_MEAN_HOST_MAX) return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: %zu host values", count);
    for (size_t i = 0; i < count; i++) host[i] = (float)vals[i];
    CUDA_TRY(cudaSetDevice(n->device));
    CUDA_TRY(cudaMallocAsync((void **)&dev, count * sizeof(float), n->comm_stream));
    int rc = 0;
    if (cuda_check(cudaMemcpyAsync(dev, host, count * sizeof(float), cudaMemcpyHostToDevice, n->comm_stream),
                   "cudaMemcpyAsync", err) ||
        nccl_check(ncclAllReduce(dev, dev, count, ncclFloat32, ncclAvg, n->comm, n->comm_stream), "ncclAllReduce",
                   err) ||
        cuda_check(cudaMemcpyAsync(host, dev, count * sizeof(float), cudaMemcpyDeviceToHost, n->comm_stream),
                   "cudaMemcpyAsync", err) ||
        comm_nccl_wait(c, n->comm_stream, NULL, err))
        rc = -1;
    cudaFreeAsync(dev, n->comm_stream);
    if (rc == 0)
        for (size_t i = 0; i < count; i++) vals[i] = host[i];
    return rc;
}

static void destroy(ib_comm *c)
{
    if (!c) return;
    nccl_impl *n = impl(c);
    if (n) {
        cudaSetDevice(n->device);
        /* the communication still queued, waited for with the same bound (peers gone: aborted) */
        ib_error ignored;
        if (n->comm && n->comm_stream && comm_nccl_wait(c, n->comm_stream, NULL, &ignored)) ib_debug("%s", ignored.msg);
        if (n->comm) ncclCommDestroy(n->comm);
        if (n->ready) cudaEventDestroy(n->ready);
        if (n->done) cudaEventDestroy(n->done);
        if (n->comm_stream) cudaStreamDestroy(n->comm_stream);
        free(n);
    }
    free(c);
}

/* The nlocal communicators of a non-blocking init (ncclInProgress) until each is ready, under the
 * same bound and stop flag as every other host wait: a peer that dies after the rendezvous (or
 * never starts) must not hang initialisation, as a blocking ncclCommInitRank would, for ever. */
static int init_wait(ncclComm_t *raw, int nlocal, const int *devices, int world_size, int first_rank,
                     const volatile int *stop, ib_error *err)
{
    const double limit = comm_nccl_timeout_s(), t0 = util_now_seconds();
    const struct timespec nap = {0, 1000 * 1000};
    for (;;) {
        int pending = 0;
        for (int i = 0; i < nlocal; i++) {
            ncclResult_t a = ncclSuccess;
            CUDA_TRY(cudaSetDevice(devices[i]));
            NCCL_TRY(ncclCommGetAsyncError(raw[i], &a));
            if (a == ncclInProgress) pending = 1;
            else if (a != ncclSuccess)
                return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: initialising rank %d of %d failed: %s", first_rank + i,
                                    world_size, ncclGetErrorString(a));
        }
        if (!pending) return 0;
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "NCCL: initialising ranks %d-%d of %d: stopped: another rank "
                                "failed",
                                first_rank, first_rank + nlocal - 1, world_size);
        if (util_now_seconds() - t0 > limit)
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "NCCL: initialising ranks %d-%d of %d: not every rank joined within %.0f s: a process "
                                "died after the rendezvous or hangs (INSTBENCH_NCCL_TIMEOUT_S sets the limit)",
                                first_rank, first_rank + nlocal - 1, world_size, limit);
        nanosleep(&nap, NULL);
    }
}

int comm_nccl_create(int nlocal, const int *devices, void *const *streams, int world_size, int first_rank,
                     const unsigned char *id, const volatile int *stop, ib_comm **comms, ib_error *err)
{
    if (nlocal < 1 || world_size < nlocal || first_rank < 0 || first_rank + nlocal > world_size)
        return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: inconsistent ranks (%d local from rank %d of %d)", nlocal,
                            first_rank, world_size);
    if (!id && world_size != nlocal)
        return ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: %d ranks across processes need a unique id", world_size);
    for (int i = 0; i < nlocal; i++) comms[i] = NULL;
    ncclComm_t *raw = calloc((size_t)nlocal, sizeof *raw);
    if (!raw) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    int rc = -1;
    if (!id) {
        if (nccl_check(ncclCommInitAll(raw, nlocal, devices), "ncclCommInitAll", err)) goto fail;
    } else {
        ncclUniqueId u;
        memcpy(u.internal, id, CUDA_NCCL_ID_BYTES);
        /* One thread initialising several devices groups the calls; non-blocking, so each returns
         * (ncclInProgress) and init_wait polls them with a bound */
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        if (nccl_check(ncclGroupStart(), "ncclGroupStart", err)) goto fail;
        int bad = 0;
        for (int i = 0; i < nlocal && !bad; i++) {
            if (cuda_check(cudaSetDevice(devices[i]), "cudaSetDevice", err)) bad = 1;
            ncclResult_t r =
                bad ? ncclSuccess : ncclCommInitRankConfig(&raw[i], world_size, u, first_rank + i, &config);
            if (r != ncclInProgress && nccl_check(r, "ncclCommInitRankConfig", err)) bad = 1;
        }
        ib_error e2;
        ncclResult_t r = ncclGroupEnd();
        if ((r != ncclInProgress && nccl_check(r, "ncclGroupEnd", bad ? &e2 : err)) || bad ||
            init_wait(raw, nlocal, devices, world_size, first_rank, stop, err))
            goto fail;
    }
    for (int i = 0; i < nlocal; i++) {
        ib_comm *c = calloc(1, sizeof *c);
        nccl_impl *n = calloc(1, sizeof *n);
        if (!c || !n) {
            free(c);
            free(n);
            ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            goto fail;
        }
        c->name = "nccl";
        c->rank = first_rank + i;
        c->world_size = world_size;
        c->impl = n;
        c->allreduce_mean = allreduce_mean;
        c->broadcast = broadcast;
        c->barrier = barrier;
        c->mean_host = mean_host;
        c->destroy = destroy;
        comms[i] = c;
        n->comm = raw[i];
        raw[i] = NULL;
        n->device = devices[i];
        n->compute = (cudaStream_t)streams[i];
        /* Higher priority than compute, so a ready bucket's allreduce is not starved by backward. */
        int lo = 0, hi = 0;
        if (cuda_check(cudaSetDevice(n->device), "cudaSetDevice", err) ||
            cuda_check(cudaDeviceGetStreamPriorityRange(&lo, &hi), "cudaDeviceGetStreamPriorityRange", err) ||
            cuda_check(cudaStreamCreateWithPriority(&n->comm_stream, cudaStreamNonBlocking, hi), "cudaStreamCreate",
                       err) ||
            cuda_check(cudaEventCreateWithFlags(&n->ready, cudaEventDisableTiming), "cudaEventCreate", err) ||
            cuda_check(cudaEventCreateWithFlags(&n->done, cudaEventDisableTiming), "cudaEventCreate", err))
            goto fail;
    }
    rc = 0;
fail:
    if (rc) {
        for (int i = 0; i < nlocal; i++) {
            if (raw[i]) ncclCommAbort(raw[i]); /* whatever state its init reached */
            if (comms[i]) destroy(comms[i]);
            comms[i] = NULL;
        }
    }
    free(raw);
    return rc;
}

#else /* built without NCCL */

static int no_nccl(ib_error *err)
{
    return ib_error_set(err, IB_EXIT_RUNTIME,
                        "this binary was built without NCCL: multi-GPU data parallelism is unavailable "
                        "(install NCCL and rebuild)");
}
int comm_nccl_available(void) { return 0; }
int comm_nccl_unique_id(unsigned char id[CUDA_NCCL_ID_BYTES], ib_error *err) { return no_nccl(err); }
int comm_nccl_create(int nlocal, const int *devices, void *const *streams, int world_size, int first_rank,
                     const unsigned char *id, const volatile int *stop, ib_comm **comms, ib_error *err)
{
    return no_nccl(err);
}
int comm_nccl_allreduce_async(ib_comm *c, float *buf, size_t count, ib_error *err) { return no_nccl(err); }
int comm_nccl_join(ib_comm *c, ib_error *err) { return no_nccl(err); }
int comm_nccl_wait(ib_comm *c, void *stream, const volatile int *stop, ib_error *err) { return no_nccl(err); }
void comm_nccl_abort(ib_comm *c) {}
double comm_nccl_timeout_s(void) { return 300.0; }

#endif
