/* comm/local: N data-parallel ranks as threads of one process.  allreduce_mean is a reduce-scatter
 * + all-gather done in place: each rank averages its own slice of the element range across every
 * rank's buffer (summing ranks in order 0..N-1, so the result is bitwise the same on all ranks and
 * run to run) and writes it back into all buffers; two barriers fence the exchange. */
#include "instbench/comm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct local_shared {
    int world, refs;
    pthread_barrier_t barrier;
    pthread_mutex_t lock;
    float **bufs; /* [world] buffer published by each rank for the current collective */
} local_shared;

static local_shared *shared_of(ib_comm *c) { return (local_shared *)c->impl; }

static int local_barrier(ib_comm *c, ib_error *err)
{
    int r = pthread_barrier_wait(&shared_of(c)->barrier);
    if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD)
        return ib_error_set(err, IB_EXIT_RUNTIME, "comm local: barrier failed (%d)", r);
    return 0;
}

static int local_allreduce_mean(ib_comm *c, float *buf, size_t count, ib_error *err)
{
    local_shared *s = shared_of(c);
    const int W = s->world;
    if (W == 1) return 0;
    s->bufs[c->rank] = buf;
    if (local_barrier(c, err)) return -1;
    const size_t per = (count + W - 1) / W, lo = per * c->rank, hi = lo + per < count ? lo + per : count;
    const float inv = 1.0f / (float)W;
    for (size_t i = lo; i < hi; i++) {
        float sum = 0;
        for (int r = 0; r < W; r++) sum += s->bufs[r][i];
        const float mean = sum * inv;
        for (int r = 0; r < W; r++) s->bufs[r][i] = mean;
    }
    return local_barrier(c, err);
}

static int local_mean_host(ib_comm *c, double *vals, size_t n, ib_error *err)
{
    float f[COMM_MEAN_HOST_MAX];
    if (n > COMM_MEAN_HOST_MAX) return ib_error_set(err, IB_EXIT_RUNTIME, "comm local: %zu host values", n);
    for (size_t i = 0; i < n; i++) f[i] = (float)vals[i];
    if (local_allreduce_mean(c, f, n, err)) return -1;
    for (size_t i = 0; i < n; i++) vals[i] = f[i];
    return 0;
}

static int local_broadcast(ib_comm *c, float *buf, size_t count, int root, ib_error *err)
{
    local_shared *s = shared_of(c);
    if (root < 0 || root >= s->world)
        return ib_error_set(err, IB_EXIT_RUNTIME, "comm local: broadcast root %d outside [0, %d)", root, s->world);
    s->bufs[c->rank] = buf;
    if (local_barrier(c, err)) return -1;
    if (c->rank != root) memcpy(buf, s->bufs[root], count * sizeof(float));
    return local_barrier(c, err);
}

static void local_destroy(ib_comm *c)
{
    if (!c) return;
    local_shared *s = shared_of(c);
    pthread_mutex_lock(&s->lock);
    int last = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (last) {
        pthread_barrier_destroy(&s->barrier);
        pthread_mutex_destroy(&s->lock);
        free(s->bufs);
        free(s);
    }
    free(c);
}

int comm_local_create(int world_size, ib_comm **comms, ib_error *err)
{
    if (world_size < 1 || world_size > 4096)
        return ib_error_set(err, IB_EXIT_USAGE, "comm local: world size %d out of range [1, 4096]", world_size);
    local_shared *s = calloc(1, sizeof *s);
    float **bufs = calloc(world_size, sizeof *bufs);
    if (!s || !bufs || pthread_barrier_init(&s->barrier, NULL, (unsigned)world_size)) {
        free(s);
        free(bufs);
        return ib_error_set(err, IB_EXIT_RUNTIME, "comm local: out of memory");
    }
    pthread_mutex_init(&s->lock, NULL);
    s->world = world_size, s->refs = world_size, s->bufs = bufs;
    for (int r = 0; r < world_size; r++) {
        ib_comm *c = calloc(1, sizeof *c);
        if (!c) {
            s->refs = r; /* destroy the ones made so far; the last frees the shared state */
            for (int q = 0; q < r; q++) local_destroy(comms[q]);
            if (r == 0) {
                pthread_barrier_destroy(&s->barrier);
                pthread_mutex_destroy(&s->lock);
                free(bufs);
                free(s);
            }
            return ib_error_set(err, IB_EXIT_RUNTIME, "comm local: out of memory");
        }
        c->name = "local", c->rank = r, c->world_size = world_size, c->impl = s;
        c->allreduce_mean = local_allreduce_mean;
        c->broadcast = local_broadcast;
        c->barrier = local_barrier;
        c->mean_host = local_mean_host;
        c->destroy = local_destroy;
        comms[r] = c;
    }
    return 0;
}
