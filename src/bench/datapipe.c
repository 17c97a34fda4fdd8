/* datapipe: PyTorch's FakeDataset + DataLoader (the benchmark loop this tool reproduces) on worker threads.  Two batch buffers: workers
 * fill one (samples split between them) while the training step holds the other, so the step
 * waits only when the producers are slower than it.  Each batch is new random data:
 * images float32 [B,3,H,W] ~ N(0,1), labels int32 [B] uniform in [0, classes). */
#define _GNU_SOURCE /* sincosf */
#include "instbench/bench.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { SLOT_EMPTY, SLOT_FILLING, SLOT_READY, SLOT_HELD };

typedef struct slot {
    float *images;
    int32_t *labels;
    int state;
    uint64_t batch_index; /* seeds the batch: reproducible, and different every step */
} slot;

struct bench_datapipe {
    ib_backend *mem; /* whose host_alloc made the slots (NULL: malloc) */
    int batch, num_classes, n_workers;
    size_t sample_pixels; /* 3*H*W */
    uint64_t seed;
    slot slots[2];
    int consume; /* slot the consumer takes next */
    int filling; /* slot being filled, -1 none */
    int next_sample, samples_done;
    uint64_t batches_started;
    double fill_start, busy_s;
    uint64_t batches_made;
    double mark_busy_s; /* busy_s and batches_made at datapipe_mark */
    uint64_t mark_batches;
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, ready_cv;
    pthread_t *threads;
    int n_threads;
};

/* splitmix64: seeds one independent stream per sample from (seed, batch, sample). */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* xorshift64*: one stream per sample; statistical quality far beyond what synthetic pixels need. */
static inline uint64_t xs64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* One sample: n pixels by Box-Muller (two normals per pair of uniforms), and its label. */
static void fill_sample(float *img, int32_t *label, size_t n, int num_classes, uint64_t seed, uint64_t batch_index,
                        uint64_t sample)
{
    uint64_t s = seed ^ (batch_index * 0xD1B54A32D192ED03ull) ^ (sample * 0xABC98388FB8FAC03ull);
    uint64_t st = splitmix64(&s) | 1;
    const float two_pi = 6.28318530717958647692f;
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        uint64_t r = xs64(&st);
        /* 24-bit uniforms; u1 in (0,1] so log never sees 0. */
        float u1 = ((float)((r >> 40) & 0xFFFFFF) + 1.0f) * (1.0f / 16777216.0f);
        float u2 = (float)((r >> 8) & 0xFFFFFF) * (1.0f / 16777216.0f);
        float rad = sqrtf(-2.0f * logf(u1));
        float sn, cs;
        sincosf(two_pi * u2, &sn, &cs);
        img[i] = rad * cs;
        img[i + 1] = rad * sn;
    }
    if (i < n) {
        uint64_t r = xs64(&st);
        float u1 = ((float)((r >> 40) & 0xFFFFFF) + 1.0f) * (1.0f / 16777216.0f);
        float u2 = (float)((r >> 8) & 0xFFFFFF) * (1.0f / 16777216.0f);
        img[i] = sqrtf(-2.0f * logf(u1)) * cosf(two_pi * u2);
    }
    *label = (int32_t)(xs64(&st) % (uint64_t)num_classes);
}

void datapipe_fill(float *images, int32_t *labels, size_t n_pixels, int batch, int num_classes, uint64_t seed)
{
    for (int b = 0; b < batch; b++)
        fill_sample(images + (size_t)b * n_pixels, labels + b, n_pixels, num_classes, seed, 0, (uint64_t)b);
}

/* Starts filling an empty slot if none is being filled.  Caller holds mu. */
static void maybe_start_fill(bench_datapipe *p)
{
    if (p->filling >= 0) return;
    /* The slot the consumer needs soonest: the one after `consume` if `consume` is already ready. */
    int order[2] = {p->consume, 1 - p->consume};
    for (int k = 0; k < 2; k++) {
        slot *s = &p->slots[order[k]];
        if (s->state != SLOT_EMPTY) continue;
        s->state = SLOT_FILLING;
        s->batch_index = p->batches_started++;
        p->filling = order[k];
        p->next_sample = p->samples_done = 0;
        p->fill_start = util_now_seconds();
        pthread_cond_broadcast(&p->work_cv);
        return;
    }
}

static void *worker_main(void *arg)
{
    bench_datapipe *p = arg;
    /* Chunks of a few samples keep every worker busy without contention on the lock. */
    int chunk = p->batch / (4 * p->n_workers);
    if (chunk < 1) chunk = 1;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && (p->filling < 0 || p->next_sample >= p->batch)) pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop) break;
        int si = p->filling;
        slot *s = &p->slots[si];
        int first = p->next_sample;
        int count = p->batch - first < chunk ? p->batch - first : chunk;
        p->next_sample += count;
        uint64_t bi = s->batch_index;
        pthread_mutex_unlock(&p->mu);
        for (int b = first; b < first + count; b++)
            fill_sample(s->images + (size_t)b * p->sample_pixels, s->labels + b, p->sample_pixels, p->num_classes,
                        p->seed, bi, (uint64_t)b);
        pthread_mutex_lock(&p->mu);
        p->samples_done += count;
        if (p->samples_done == p->batch) {
            s->state = SLOT_READY;
            p->busy_s += util_now_seconds() - p->fill_start;
            p->batches_made++;
            p->filling = -1;
            pthread_cond_broadcast(&p->ready_cv);
            maybe_start_fill(p);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The slots' memory: the backend's (pinned for cuda: set_inputs then copies without staging). */
static void *slot_alloc(bench_datapipe *p, size_t bytes)
{
    return p->mem ? p->mem->ops->host_alloc(p->mem, bytes) : malloc(bytes);
}

static void slot_free(bench_datapipe *p, void *m)
{
    if (!m) return;
    if (p->mem) p->mem->ops->host_free(p->mem, m);
    else free(m);
}

int datapipe_create(int batch, int channels, int img_size, int num_classes, int workers, uint64_t seed,
                    ib_backend *backend, bench_datapipe **out, ib_error *err)
{
    *out = NULL;
    if (batch < 1 || channels < 1 || img_size < 1 || num_classes < 1 || workers < 1)
        return ib_error_set(err, IB_EXIT_USAGE, "data pipeline: invalid batch/shape/workers");
    bench_datapipe *p = calloc(1, sizeof *p);
    if (!p) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    p->mem = backend && backend->ops->host_alloc && backend->ops->host_free ? backend : NULL;
    p->batch = batch;
    p->num_classes = num_classes;
    p->n_workers = workers;
    p->sample_pixels = (size_t)channels * img_size * img_size;
    p->seed = seed;
    p->filling = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->ready_cv, NULL);
    for (int k = 0; k < 2; k++) {
        p->slots[k].images = slot_alloc(p, (size_t)batch * p->sample_pixels * sizeof(float));
        p->slots[k].labels = slot_alloc(p, (size_t)batch * sizeof(int32_t));
        if (!p->slots[k].images || !p->slots[k].labels) {
            datapipe_destroy(p);
            return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory for the data pipeline (2 x %d images)", batch);
        }
    }
    p->threads = calloc((size_t)workers, sizeof *p->threads);
    if (!p->threads) {
        datapipe_destroy(p);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    pthread_mutex_lock(&p->mu);
    maybe_start_fill(p);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
            datapipe_destroy(p);
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot start data-pipeline thread %d", i);
        }
        p->n_threads++;
    }
    *out = p;
    return 0;
}

int datapipe_acquire(bench_datapipe *p, const float **images, const int32_t **labels, double *wait_s, ib_error *err)
{
    double t0 = util_now_seconds();
    pthread_mutex_lock(&p->mu);
    slot *s = &p->slots[p->consume];
    if (s->state == SLOT_HELD) {
        pthread_mutex_unlock(&p->mu);
        return ib_error_set(err, IB_EXIT_RUNTIME, "data pipeline: batch acquired twice");
    }
    while (s->state != SLOT_READY) pthread_cond_wait(&p->ready_cv, &p->mu);
    s->state = SLOT_HELD;
    pthread_mutex_unlock(&p->mu);
    *images = s->images;
    *labels = s->labels;
    if (wait_s) *wait_s = util_now_seconds() - t0;
    return 0;
}

void datapipe_release(bench_datapipe *p)
{
    pthread_mutex_lock(&p->mu);
    slot *s = &p->slots[p->consume];
    if (s->state == SLOT_HELD) {
        s->state = SLOT_EMPTY;
        p->consume = 1 - p->consume;
        maybe_start_fill(p);
    }
    pthread_mutex_unlock(&p->mu);
}

void datapipe_mark(bench_datapipe *p)
{
    pthread_mutex_lock(&p->mu);
    p->mark_busy_s = p->busy_s;
    p->mark_batches = p->batches_made;
    pthread_mutex_unlock(&p->mu);
}

/* The first fills touch fresh pages and run while the backend warms up: counted with the window's,
 * they made the pipeline read slower than the steps it fed (measure_runner under qemu: 16.2
 * samples/s against 19.6 taken). */
double datapipe_throughput(const bench_datapipe *p)
{
    bench_datapipe *q = (bench_datapipe *)p;
    pthread_mutex_lock(&q->mu);
    const int since = q->batches_made > q->mark_batches && q->busy_s > q->mark_busy_s;
    const double made = (double)(q->batches_made - (since ? q->mark_batches : 0)),
                 busy = q->busy_s - (since ? q->mark_busy_s : 0);
    double v = busy > 0 ? made * q->batch / busy : 0.0;
    pthread_mutex_unlock(&q->mu);
    return v;
}

void datapipe_destroy(bench_datapipe *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    free(p->threads);
    for (int k = 0; k < 2; k++) {
        slot_free(p, p->slots[k].images);
        slot_free(p, p->slots[k].labels);
    }
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->ready_cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
