/* cuda_dp_host: the CUDA backend's data parallelism (src/cuda/dp.c, ddp.c, bucket.c, comm_nccl.c,
 * backend_cuda.c) on the CPU: two rank threads on two pretend GPUs (tests/fakes/cuda_host_runtime.c) with
 * NCCL's collectives between threads (tests/fakes/cuda_nccl_shim.c); the loop launchers of
 * cuda_host_shim.c, or, built as cuda_dp_sim, the real kernels on ordered streams; built as
 * cuda_dp_module, through whichever CUDA module the loader finds (INSTBENCH_CUDA_MODULE: the real
 * one on a machine with two GPUs, scripts/gpu/gpu_check.sh; the simulated one in CI), without the
 * stand-ins' hooks.  Each DP step must also equal one rank at twice the batch.  With buckets small enough that
 * backward starts many allreduces, the averaged gradients on both ranks must equal the mean of
 * the two ranks' gradients computed separately, the parameters must stay identical after the
 * optimizer step, and cuda_dp_agree must hand every rank global rank 0's value. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/api.h"
#include "instbench/verify.h"

#include "check.h"
#ifndef CUDA_DP_MODULE
#include "cuda_host_runtime.h"
#endif

static verify_reference ref;
static float *images[2];
static int32_t *labels[2];

typedef struct rank_arg {
    ib_dp *dp;
    ib_backend *b;
    const float *img; /* the batch, in the backend's host memory (pinned: the async copy) */
    const int32_t *lab;
    int rank, agreed, rc;
    ib_error err;
} rank_arg;

static void *rank_main(void *p)
{
    rank_arg *a = p;
    float loss;
    double tc;
    a->rc = a->b->ops->set_inputs(a->b, a->img, a->lab, &a->err) ||
            a->b->ops->dp_step(a->dp, a->rank, a->b, &loss, &tc, &a->err) || a->b->ops->optimizer_step(a->b, &a->err) ||
            a->b->ops->synchronize(a->b, &a->err);
    a->agreed = a->rank == 0 ? 2 : 7;
    if (!a->rc) a->rc = a->b->ops->dp_agree(a->dp, a->rank, &a->agreed, &a->err);
    return NULL;
}

/* gradients of one batch on one backend, no communication */
static int grads_alone(int r, float *g, ib_error *err)
{
    ib_backend *b;
    float loss;
    if (backend_create("cuda", &ref.cfg, &b, err)) return -1;
    int rc = b->ops->set_params(b, ref.params, err) || b->ops->set_inputs(b, images[r], labels[r], err) ||
             b->ops->forward_backward(b, &loss, NULL, NULL, err) || b->ops->get_grads(b, g, err);
    b->ops->destroy(b);
    return rc ? -1 : 0;
}

/* the gradients of one rank at twice the batch: rank 0's batch then rank 1's */
static int grads_double(float *g, ib_error *err)
{
    const int B = ref.cfg.batch_size;
    const size_t px = (size_t)ref.cfg.model.in_chans * ref.cfg.model.img_size * ref.cfg.model.img_size;
    ib_train_config c = ref.cfg;
    c.batch_size = 2 * B;
    float *img = malloc(2 * (size_t)B * px * 4);
    int32_t *lab = malloc(2 * (size_t)B * 4);
    ib_backend *b = NULL;
    float loss;
    int rc = !img || !lab ? ib_error_set(err, IB_EXIT_RUNTIME, "out of memory") : 0;
    if (!rc) {
        memcpy(img, images[0], (size_t)B * px * 4), memcpy(img + (size_t)B * px, images[1], (size_t)B * px * 4);
        memcpy(lab, labels[0], (size_t)B * 4), memcpy(lab + B, labels[1], (size_t)B * 4);
        rc = backend_create("cuda", &c, &b, err) || b->ops->set_params(b, ref.params, err) ||
             b->ops->set_inputs(b, img, lab, err) || b->ops->forward_backward(b, &loss, NULL, NULL, err) ||
             b->ops->get_grads(b, g, err);
    }
    if (b) b->ops->destroy(b);
    free(img), free(lab);
    return rc ? -1 : 0;
}

/* relative L2 distance of GOT from WANT (in double: a reference exact to fp32 and beyond) */
static double rel_l2(const float *got, const double *want, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) num += (got[i] - want[i]) * (got[i] - want[i]), den += want[i] * want[i];
    return sqrt(num / den);
}

/* One data-parallel step of both ranks with buckets of bucket_bytes, checked against MEAN (of the
 * two ranks' gradients, each batch alone) and DOUBLE_BATCH (one rank at twice the batch). */
static void dp_round(size_t bucket_bytes, const double *mean, const double *double_batch)
{
    ib_error err;
    const size_t P = ref.layout.total;
    float *got = malloc(P * 4), *p0 = malloc(P * 4), *p1 = malloc(P * 4);
    ib_backend *bs[2];
    for (int r = 0; r < 2; r++) {
        ib_train_config c = ref.cfg;
        c.device = r;
        if (backend_create("cuda", &c, &bs[r], &err) || bs[r]->ops->set_params(bs[r], ref.params, &err)) {
            fprintf(stderr, "FAIL: backend %d: %s\n", r, err.msg);
            failures++;
            return;
        }
    }
    ib_dp *dp;
    ib_dp_config dc = {.nlocal = 2, .world_size = 2, .first_rank = 0, .bucket_bytes = bucket_bytes};
    if (bs[0]->ops->dp_create(&dc, bs, &dp, &err)) {
        fprintf(stderr, "FAIL: dp_create: %s\n", err.msg);
        failures++;
        return;
    }
    /* the batches in pinned memory, as the data pipeline's slots are: set_inputs copies them on its
     * copy stream, and the step must wait for that copy on the GPU */
    float *pin_img[2];
    int32_t *pin_lab[2];
    const size_t img_bytes = (size_t)ref.cfg.batch_size * ref.cfg.model.in_chans * ref.cfg.model.img_size *
                             ref.cfg.model.img_size * sizeof(float);
    for (int r = 0; r < 2; r++) {
        pin_img[r] = bs[r]->ops->host_alloc(bs[r], img_bytes);
        pin_lab[r] = bs[r]->ops->host_alloc(bs[r], (size_t)ref.cfg.batch_size * sizeof(int32_t));
        if (!pin_img[r] || !pin_lab[r]) {
            CHECK(0, "host_alloc failed");
            return;
        }
        memcpy(pin_img[r], images[r], img_bytes);
        memcpy(pin_lab[r], labels[r], (size_t)ref.cfg.batch_size * sizeof(int32_t));
    }
    rank_arg a[2];
    pthread_t th[2];
    for (int r = 0; r < 2; r++) {
        memset(&a[r], 0, sizeof a[r]);
        a[r].dp = dp, a[r].b = bs[r], a[r].rank = r, a[r].img = pin_img[r], a[r].lab = pin_lab[r];
        pthread_create(&th[r], NULL, rank_main, &a[r]);
    }
    for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < 2; r++) {
        CHECK(a[r].rc == 0, "rank %d: %s", r, a[r].err.msg);
        CHECK(a[r].agreed == 2, "rank %d agreed on %d, not rank 0's 2", r, a[r].agreed);
        if (bs[r]->ops->get_grads(bs[r], got, &err)) continue;
        const double off = rel_l2(got, mean, P), off2 = rel_l2(got, double_batch, P);
        CHECK(off < 1e-6, "buckets of %zu bytes, rank %d: averaged gradients off by relative L2 %.3g", bucket_bytes, r,
              off);
        /* the same as one rank at twice the batch, up to fp32 summation order */
        CHECK(off2 < 5e-5, "buckets of %zu bytes, rank %d: %.3g relative L2 from one rank at twice the batch",
              bucket_bytes, r, off2);
    }
    bs[0]->ops->get_params(bs[0], p0, &err);
    bs[1]->ops->get_params(bs[1], p1, &err);
    CHECK(!memcmp(p0, p1, P * 4), "parameters differ between the ranks after the step");
    CHECK(memcmp(p0, ref.params, P * 4) != 0, "the optimizer step changed nothing");
    bs[0]->ops->dp_finish(dp, NULL);
    bs[0]->ops->dp_destroy(dp);
    for (int r = 0; r < 2; r++) {
        bs[r]->ops->host_free(bs[r], pin_img[r]);
        bs[r]->ops->host_free(bs[r], pin_lab[r]);
        bs[r]->ops->destroy(bs[r]);
    }
    free(got), free(p0), free(p1);
}

#ifndef CUDA_DP_MODULE           /* the stand-ins' hooks: a peer that dies */
extern int shim_touched_devices; /* cuda_host_shim.c */
extern int shim_unbounded_waits;
extern int nccl_shim_dead_peer, nccl_shim_aborts; /* cuda_nccl_shim.c */
extern char nccl_shim_violation[256];

static void *step_main(void *p)
{
    rank_arg *a = p;
    float loss;
    double tc;
    a->rc = a->b->ops->set_inputs(a->b, images[a->rank], labels[a->rank], &a->err) ||
            cuda_dp_step(a->dp, a->rank, a->b, &loss, &tc, &a->err);
    return NULL;
}

/* A peer that is gone (review item 1 of issue 12): both local ranks step while a peer never joins
 * the allreduce.  MODE 1: NCCL reports the dead peer asynchronously; MODE 2: nothing does, and only
 * the deadline (INSTBENCH_NCCL_TIMEOUT_S=1) ends the wait.  Either way each step returns an error
 * naming its rank within seconds, every local comm is aborted, each by its own thread (issue 25:
 * the first rank to fail used to abort its sibling's comm while the sibling was polling it, which
 * NCCL forbids; the stand-in records such concurrent entry), no unbounded wait was entered, and
 * teardown does not hang. */
static void dead_peer_round(int mode)
{
    ib_error err;
    ib_backend *bs[2];
    for (int r = 0; r < 2; r++) {
        ib_train_config c = ref.cfg;
        c.device = r;
        if (backend_create("cuda", &c, &bs[r], &err) || bs[r]->ops->set_params(bs[r], ref.params, &err)) {
            CHECK(0, "backend %d: %s", r, err.msg);
            return;
        }
    }
    ib_dp *dp;
    ib_dp_config dc = {.nlocal = 2, .world_size = 2, .first_rank = 0, .bucket_bytes = 4096};
    if (cuda_dp_create(&dc, bs, &dp, &err)) {
        CHECK(0, "cuda_dp_create: %s", err.msg);
        return;
    }
    setenv("INSTBENCH_NCCL_TIMEOUT_S", mode == 2 ? "1" : "600", 1);
    nccl_shim_dead_peer = mode, nccl_shim_aborts = 0, shim_unbounded_waits = 0, nccl_shim_violation[0] = 0;
    rank_arg a[2];
    memset(a, 0, sizeof a);
    pthread_t th[2];
    const double t0 = util_now_seconds();
    for (int r = 0; r < 2; r++) {
        a[r].dp = dp, a[r].b = bs[r], a[r].rank = r;
        pthread_create(&th[r], NULL, step_main, &a[r]);
    }
    for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
    const double took = util_now_seconds() - t0;
    for (int r = 0; r < 2; r++) {
        char rank[16];
        snprintf(rank, sizeof rank, "rank %d of 2", r);
        CHECK(a[r].rc != 0, "mode %d: rank %d's step succeeded without its peer", mode, r);
        /* the first to fail names the cause; its sibling may only have seen the stop flag */
        CHECK(strstr(a[r].err.msg, rank) &&
                  (strstr(a[r].err.msg, mode == 1 ? "another rank failed or left" : "no progress for 1 s") ||
                   strstr(a[r].err.msg, "another rank of this process failed")),
              "mode %d: the message does not name the rank and the cause: %s", mode, a[r].err.msg);
    }
#ifdef CUDA_DP_SIM
    const double slack = 10.0; /* both ranks' forward and backward on the simulated kernels first */
#else
    const double slack = 0.0;
#endif
    CHECK(took < (mode == 2 ? 5.0 : 2.0) + slack, "mode %d: the steps took %.1f s to give up", mode, took);
    CHECK(nccl_shim_aborts == 2, "mode %d: %d local comms aborted, want both", mode, nccl_shim_aborts);
    CHECK(!nccl_shim_violation[0], "mode %d: NCCL stand-in: %s", mode, nccl_shim_violation);
    const double t1 = util_now_seconds();
    cuda_dp_destroy(dp);
    for (int r = 0; r < 2; r++) bs[r]->ops->destroy(bs[r]);
    CHECK(util_now_seconds() - t1 < 2.0, "mode %d: teardown took %.1f s", mode, util_now_seconds() - t1);
    CHECK(shim_unbounded_waits == 0,
          "mode %d: %d unbounded waits (cudaStreamSynchronize / cudaEventSynchronize) "
          "while the peer was gone",
          mode, shim_unbounded_waits);
    nccl_shim_dead_peer = 0;
    unsetenv("INSTBENCH_NCCL_TIMEOUT_S");
}

/* A peer that never arrives at initialisation (issue 25: ncclCommInitRank inside the group blocked
 * without bound, so a process that died after the rendezvous hung the others for ever): one rank
 * of a world of two, across processes (a unique id), nobody else.  The init gives up within the
 * NCCL timeout naming it, or at once when the stop flag is up, and leaves no comm behind. */
static void init_peer_never_arrives(void)
{
    ib_error err;
    unsigned char id[CUDA_NCCL_ID_BYTES];
    cudaStream_t s;
    const int dev = 0;
    if (comm_nccl_unique_id(id, &err) || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        CHECK(0, "init test setup: %s", err.msg);
        return;
    }
    void *streams[1] = {s};
    setenv("INSTBENCH_NCCL_TIMEOUT_S", "1", 1);
    for (int stopped = 0; stopped < 2; stopped++) {
        ib_comm *c = NULL;
        volatile int stop = stopped;
        nccl_shim_aborts = 0;
        const double t0 = util_now_seconds();
        const int rc = comm_nccl_create(1, &dev, streams, 2, 0, id, &stop, &c, &err);
        const double took = util_now_seconds() - t0;
        CHECK(rc != 0 && !c, "init %s: succeeded with a peer that never came", stopped ? "stopped" : "timed");
        CHECK(took < (stopped ? 0.5 : 4.0), "init %s: took %.1f s to give up", stopped ? "stopped" : "timed", took);
        CHECK(strstr(err.msg, stopped ? "stopped" : "not every rank joined within 1 s"),
              "init %s: the message does not say why: %s", stopped ? "stopped" : "timed", err.msg);
        CHECK(nccl_shim_aborts == 1, "init %s: %d comms aborted, want the one begun", stopped ? "stopped" : "timed",
              nccl_shim_aborts);
        comm_nccl_unique_id(id, &err); /* a fresh group for the next try */
    }
    unsetenv("INSTBENCH_NCCL_TIMEOUT_S");
    cudaStreamDestroy(s);
}
#endif

#if defined(CUDA_DP_SIM) || defined(CUDA_DP_MODULE)
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procs.h"

static int write_all(int fd, const void *p, size_t n)
{
    for (const char *c = p; n;) {
        ssize_t k = write(fd, c, n);
        if (k <= 0) return -1;
        c += k, n -= (size_t)k;
    }
    return 0;
}

/* One process of a 2-process job: global rank R over the TCP rendezvous and ncclCommInitRank
 * (the NCCL stand-in's shared-memory group), one step, then its averaged gradients and its
 * parameters after the optimizer step down FD.  Exit status 0 on success, EADDRINUSE when the
 * port was taken (port_taken). */
static int process_rank(int r, int port, int fd)
{
    ib_error err;
    ib_backend *b;
    ib_train_config c = ref.cfg;
    c.device = r; /* a GPU each */
    if (backend_create("cuda", &c, &b, &err) || b->ops->set_params(b, ref.params, &err)) {
        fprintf(stderr, "rank %d: backend: %s\n", r, err.msg);
        return 1;
    }
    ib_dp *dp;
    ib_dp_config dc = {.nlocal = 1,
                       .world_size = 2,
                       .first_rank = r,
                       .master_addr = "127.0.0.1",
                       .port = port,
                       .timeout_s = 30,
                       .bucket_bytes = 4096};
    float loss;
    double tc;
    const size_t P = ref.layout.total;
    float *g = malloc(P * 4), *p = malloc(P * 4);
    if (b->ops->dp_create(&dc, &b, &dp, &err) || b->ops->set_inputs(b, images[r], labels[r], &err) ||
        b->ops->dp_step(dp, 0, b, &loss, &tc, &err) || b->ops->get_grads(b, g, &err) ||
        b->ops->optimizer_step(b, &err) || b->ops->synchronize(b, &err) || b->ops->get_params(b, p, &err)) {
        fprintf(stderr, "rank %d: %s\n", r, err.msg);
        return port_taken(err.msg) ? EADDRINUSE : 1;
    }
    int rc = write_all(fd, g, P * 4) || write_all(fd, p, P * 4);
    b->ops->dp_finish(dp, rc ? &err : NULL);
    b->ops->dp_destroy(dp);
    b->ops->destroy(b);
    free(g), free(p);
    return rc;
}

static int read_all(int fd, void *p, size_t n)
{
    for (char *c = p; n;) {
        ssize_t k = read(fd, c, n);
        if (k <= 0) return -1;
        c += k, n -= (size_t)k;
    }
    return 0;
}

/* Two processes, one rank each, over the real rendezvous: the same averaged gradients as the
 * mean of the two ranks alone, and identical parameters after the step. */
static void processes_round(const double *mean)
{
    const size_t P = ref.layout.total;
    int fds[2][2];
    pid_t pid[2];
    float *g[2] = {malloc(P * 4), malloc(P * 4)}, *p[2] = {malloc(P * 4), malloc(P * 4)};
    int got[2], st[2] = {0, 0};
    for (int tries = 1;; tries++) {
        const int port = free_port();
        for (int r = 0; r < 2; r++) {
            if (pipe(fds[r]) != 0) {
                CHECK(0, "pipe");
                return;
            }
            fflush(NULL); /* nothing buffered is written twice */
            pid[r] = fork();
            if (pid[r] == 0) {
                close(fds[r][0]);
                alarm(120); /* a hang fails the test instead of stalling it */
                _exit(process_rank(r, port, fds[r][1]));
            }
            close(fds[r][1]);
        }
        got[0] = read_all(fds[0][0], g[0], P * 4) == 0 && read_all(fds[0][0], p[0], P * 4) == 0;
        if (!got[0]) waitpid(pid[0], &st[0], 0), pid[0] = -1;
        if (got[0] || !WIFEXITED(st[0]) || WEXITSTATUS(st[0]) != EADDRINUSE || tries == PORT_TRIES) break;
        printf("  port %d was taken before rank 0 bound it: again on another port\n", port);
        kill(pid[1], SIGKILL);
        waitpid(pid[1], NULL, 0);
        close(fds[0][0]), close(fds[1][0]);
    }
    got[1] = read_all(fds[1][0], g[1], P * 4) == 0 && read_all(fds[1][0], p[1], P * 4) == 0;
    for (int r = 0; r < 2; r++) {
        close(fds[r][0]);
        if (pid[r] > 0) waitpid(pid[r], &st[r], 0);
        CHECK(WIFEXITED(st[r]) && WEXITSTATUS(st[r]) == 0 && got[r], "process of rank %d failed (status 0x%x)", r,
              st[r]);
    }
    if (got[0] && got[1]) {
        for (int r = 0; r < 2; r++) {
            const double off = rel_l2(g[r], mean, P);
            CHECK(off < 1e-6, "2 processes, rank %d: averaged gradients off by relative L2 %.3g", r, off);
        }
        CHECK(!memcmp(p[0], p[1], P * 4), "2 processes: parameters differ between the ranks after the step");
    }
    for (int r = 0; r < 2; r++) free(g[r]), free(p[r]);
}
#endif

int main(void)
{
    ib_error err;
#ifndef CUDA_DP_MODULE
    /* facts about device 1 make no device current: a per-GPU process probing its GPU must not
     * open a context on another (review item 2: the probe used to switch to it and back to 0) */
    cuda_device_info di;
    shim_touched_devices = 0;
    if (cuda_device_info_get(1, &di, &err) || shim_touched_devices || di.cc_major != 9) {
        fprintf(stderr, "FAIL: cuda_device_info_get(1) made devices 0x%x current (cc %d)\n", shim_touched_devices,
                di.cc_major);
        return 1;
    }
#endif
    if (verify_reference_load("data/ref_a_adam_fp32.safetensors", &ref, &err)) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
#ifdef CUDA_DP_MODULE
    /* the module the loader finds (INSTBENCH_CUDA_MODULE): two GPUs, or nothing to prove here */
    ib_backend *second;
    ib_train_config c1 = ref.cfg;
    c1.device = 1;
    if (backend_create("cuda", &c1, &second, &err)) {
        printf("SKIP: cuda_dp_module needs two GPUs: %s\n", err.msg);
        return 77;
    }
    second->ops->destroy(second);
#endif
    const int B = ref.cfg.batch_size;
    const size_t px = (size_t)ref.cfg.model.in_chans * ref.cfg.model.img_size * ref.cfg.model.img_size;
    const size_t P = ref.layout.total;
    /* rank 1's batch: the reference batch in reverse order, a little brighter */
    for (int r = 0; r < 2; r++) {
        images[r] = malloc((size_t)B * px * 4);
        labels[r] = malloc((size_t)B * 4);
    }
    memcpy(images[0], ref.images, (size_t)B * px * 4);
    memcpy(labels[0], ref.labels, (size_t)B * 4);
    for (int i = 0; i < B; i++) {
        for (size_t k = 0; k < px; k++)
            images[1][(size_t)i * px + k] = ref.images[(size_t)(B - 1 - i) * px + k] * 1.5f + 0.1f;
        labels[1][i] = ref.labels[B - 1 - i];
    }
    float *g0 = malloc(P * 4), *g1 = malloc(P * 4), *g2 = malloc(P * 4);
    if (grads_alone(0, g0, &err) || grads_alone(1, g1, &err) || grads_double(g2, &err)) {
        fprintf(stderr, "FAIL: single-rank run: %s\n", err.msg);
        return 1;
    }
    double *mean = malloc(P * sizeof *mean), *double_batch = malloc(P * sizeof *double_batch);
    for (size_t i = 0; i < P; i++) mean[i] = 0.5 * ((double)g0[i] + g1[i]), double_batch[i] = g2[i];
    free(g0), free(g1), free(g2);

    /* 4 KiB buckets: the 29k-parameter fixture's backward starts many allreduces as it goes;
     * 25 MiB (DDP's default): one bucket, started only by the final flush */
#ifdef CUDA_DP_SIM
    /* cuda_dp_sim: ordered streams; each seed orders the ranks' streams differently */
    for (unsigned long long seed = 1; seed <= 3; seed++) {
        shim_streams_ordered(seed);
        dp_round(4096, mean, double_batch);
    }
#else
    dp_round(4096, mean, double_batch);
#endif
    dp_round((size_t)25 << 20, mean, double_batch);
#if defined(CUDA_DP_SIM) || defined(CUDA_DP_MODULE)
    processes_round(mean);
#endif
#ifndef CUDA_DP_MODULE
    init_peer_never_arrives();
    dead_peer_round(1);
    dead_peer_round(2);
#endif
    free(mean), free(double_batch);
    verify_reference_free(&ref);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
#if defined(CUDA_DP_SIM)
    printf("cuda_dp_sim: all passed\n");
#elif defined(CUDA_DP_MODULE)
    printf("cuda_dp_module: all passed\n");
#else
    printf("cuda_dp_host: all passed\n");
#endif
    return 0;
}
