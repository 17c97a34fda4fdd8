/* measure_allreduce_timing: communication.allreduce is timed as nccl-tests times it (issue 38).
 * nccl-tests' BenchTime (NVIDIA/nccl-tests a0b82b2260cf5152b9f8c061bbf7eaf0ba096432, src/common.cu):
 * warm-up, a synchronised operation and Barrier(args), then `iters` (default 20, src/common.cu's
 * `int iters = 20`) startColl back to back, one completeColl, deltaSec = elapsed / iters, then
 * Allreduce(args, &deltaSec, average) over the ranks.
 *
 * A stand-in comm whose allreduce queues 10 ms of simulated device work (returning at once, as
 * ncclAllReduce does) and whose sync waits for the queue: the order of calls must be that of
 * BenchTime (each warm-up waited for, a barrier, 20 queued operations, one wait) and the time the
 * device's 10 ms per operation (the sum of 20, divided by 20).  Then the in-process comm's
 * mean_host over two ranks that measured different times gives both ranks their mean. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "instbench/bench.h"
#include "instbench/comm.h"

#define OP_S 0.010

static char calls[256];
static size_t ncalls;
static double busy_until; /* the simulated device's queue ends then */

static void note(char c)
{
    if (ncalls + 1 < sizeof calls) calls[ncalls++] = c;
}

static void sleep_until(double t)
{
    for (double now = util_now_seconds(); now < t; now = util_now_seconds()) {
        struct timespec ts = {0, (long)((t - now) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static int fake_allreduce(ib_comm *c, float *buf, size_t count, ib_error *err)
{
    const double now = util_now_seconds();
    busy_until = (busy_until > now ? busy_until : now) + OP_S;
    note('A');
    return 0;
}
static int fake_barrier(ib_comm *c, ib_error *err)
{
    note('B');
    return 0;
}
static int fake_sync(void *ctx, ib_error *err)
{
    sleep_until(busy_until);
    note('S');
    return 0;
}

typedef struct mean_arg {
    ib_comm *c;
    double v[3];
    int rc;
} mean_arg;
static void *mean_thread(void *p)
{
    mean_arg *a = p;
    ib_error err = {0};
    a->rc = a->c->mean_host(a->c, a->v, 3, &err);
    return NULL;
}

int main(void)
{
    ib_comm fake = {
        .name = "fake", .rank = 0, .world_size = 2, .allreduce_mean = fake_allreduce, .barrier = fake_barrier};
    ib_error err = {0};
    float buf[4] = {0};
    double t = -1;
    CHECK(bench_time_allreduce(&fake, fake_sync, NULL, buf, 4, &t, &err) == 0, "%s", err.msg);
    calls[ncalls] = '\0';
    char want[64] = "";
    for (int i = 0; i < BENCH_ALLREDUCE_WARMUP; i++) strcat(want, "AS");
    strcat(want, "B");
    for (int i = 0; i < 20; i++) strcat(want, "A");
    strcat(want, "S");
    CHECK(BENCH_ALLREDUCE_ITERS == 20, "nccl-tests times 20 operations, not %d", BENCH_ALLREDUCE_ITERS);
    CHECK(!strcmp(calls, want), "calls %s, want %s (warm-ups waited for, a barrier, 20 queued, one wait)", calls, want);
    /* 20 queued operations of 10 ms end 200 ms after the first: 10 ms each (divided by 10: 20 ms;
     * by 40: 5 ms); a loaded machine adds host time to the one wait, never less than the device's */
    CHECK(t >= OP_S * 0.99 && t < OP_S * 1.9, "time %.6f s per operation, the device takes %.6f", t, OP_S);

    /* the ranks' times averaged, as nccl-tests' Allreduce(&deltaSec, average) */
    ib_comm *comms[2];
    CHECK(comm_local_create(2, comms, &err) == 0, "%s", err.msg);
    mean_arg a[2] = {{comms[0], {1e-3, 4e-3, 0.25}, -1}, {comms[1], {3e-3, 2e-3, 0.75}, -1}};
    pthread_t th[2];
    for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, mean_thread, &a[r]);
    for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < 2; r++) {
        CHECK(a[r].rc == 0, "rank %d: mean_host failed", r);
        CHECK(a[r].v[0] > 1.999e-3 && a[r].v[0] < 2.001e-3 && a[r].v[1] > 2.999e-3 && a[r].v[1] < 3.001e-3 &&
                  a[r].v[2] > 0.4999 && a[r].v[2] < 0.5001,
              "rank %d: %g %g %g, want the means 2e-3 3e-3 0.5", r, a[r].v[0], a[r].v[1], a[r].v[2]);
    }
    for (int r = 0; r < 2; r++) comms[r]->destroy(comms[r]);

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("measure_allreduce_timing: all checks passed\n");
    return failures ? 1 : 0;
}
