/* cuda_dp_procs: the CUDA data-parallel path (src/cuda/dp.c) across real processes: two forked
 * processes of one rank each meet over the TCP rendezvous on 127.0.0.1 and keep its liveness
 * channel, on the host stand-ins (tests/fakes/cuda_host_shim.c), the NCCL stand-in's collectives told
 * never to complete (nccl_shim_dead_peer 2: a peer that hangs, no NCCL error), so only the
 * liveness channel or a deadline can end a step.  With NCCL's deadline at 30 s, a
 * step must still end within 3 s when the other process is SIGKILLed, and its error must name
 * that process; a process that fails on its own (its deadline) must have its reason reach the
 * other; a process that finishes cleanly must not be reported as dead. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda/api.h"
#include "instbench/verify.h"

#include "check.h"
#include "procs.h"

enum { STEP, LEAVE };

static void say(int fd, const char *fmt, const char *a)
{
    char buf[1200];
    int n = snprintf(buf, sizeof buf, fmt, a);
    if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    if (write(fd, buf, (size_t)n) < 0) _exit(3);
}

/* One process of the job (global rank RANK of 2): joins, then steps (the step can only end in an
 * error) or leaves at once with a goodbye; tells the parent each stage on OUT. */
extern int nccl_shim_dead_peer; /* cuda_nccl_shim.c */

static void rank_process(int rank, int port, const char *timeout_s, int action, int out)
{
    alarm(20);
    nccl_shim_dead_peer = 2;
    setenv("INSTBENCH_NCCL_TIMEOUT_S", timeout_s, 1);
    ib_error err;
    verify_reference ref;
    ib_backend *b;
    ib_dp *dp;
    if (verify_reference_load("data/ref_a_adam_fp32.safetensors", &ref, &err) ||
        backend_create("cuda", &ref.cfg, &b, &err) || b->ops->set_params(b, ref.params, &err)) {
        say(out, "ERR %s", err.msg);
        _exit(1);
    }
    ib_dp_config dc = {.nlocal = 1,
                       .world_size = 2,
                       .first_rank = rank,
                       .master_addr = "127.0.0.1",
                       .port = port,
                       .timeout_s = 10,
                       .bucket_bytes = 4096};
    if (cuda_dp_create(&dc, &b, &dp, &err)) {
        say(out, "ERR %s", err.msg);
        _exit(1);
    }
    say(out, "UP%s", "");
    if (action == LEAVE) {
        cuda_dp_finish(dp, NULL);
        cuda_dp_destroy(dp);
        say(out, "BYE%s", "");
        _exit(0);
    }
    float loss;
    double tc;
    int rc = b->ops->set_inputs(b, ref.images, ref.labels, &err) || cuda_dp_step(dp, 0, b, &loss, &tc, &err);
    say(out, rc ? "STEP failed: %s" : "STEP succeeded%s", rc ? err.msg : "");
    cuda_dp_finish(dp, rc ? &err : NULL);
    cuda_dp_destroy(dp);
    _exit(0);
}

static proc spawn(int rank, int port, const char *timeout_s, int action)
{
    int out = -1;
    proc p = proc_fork(&out);
    if (p.pid < 0) CHECK(0, "pipe or fork: %s", strerror(errno));
    if (p.pid == 0) rank_process(rank, port, timeout_s, action, out);
    return p;
}

static void reap(proc *p)
{
    if (p->pid <= 0) return;
    int st;
    for (int i = 0; i < 300 && waitpid(p->pid, &st, WNOHANG) == 0; i++) usleep(10 * 1000);
    if (waitpid(p->pid, &st, WNOHANG) == 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &st, 0);
    }
    close(p->out);
    p->pid = -1;
}


/* Both processes joined, then: VICTIM (0 or 1) SIGKILLed, or -1 for none.  Returns the line the
 * survivor WATCHED printed after its step, and how long it took. */
static const char *round_trip(proc p[2], const char *timeout0, const char *timeout1, int action1, int victim,
                              int watched, int ms, double *took)
{
    for (int tries = 1;; tries++) {
        const int port = free_port();
        p[0] = spawn(0, port, timeout0, STEP);
        p[1] = spawn(1, port, timeout1, action1);
        const char *l = proc_next_line(&p[0], 10000);
        if (!port_taken(l) || tries == PORT_TRIES) break;
        printf("  port %d was taken before rank 0 bound it: again on another port\n", port);
        kill(p[1].pid, SIGKILL);
        reap(&p[0]), reap(&p[1]);
    }
    for (int r = 0; r < 2; r++) {
        const char *l = r == 0 ? p[0].line : proc_next_line(&p[r], 10000);
        CHECK(!strcmp(l, "UP"), "process of rank %d did not join: '%s'", r, l);
        if (strcmp(l, "UP")) return "";
    }
    usleep(200 * 1000); /* the survivor is waiting in its step */
    const double t0 = util_now_seconds();
    if (victim >= 0) kill(p[victim].pid, SIGKILL);
    const char *l = proc_next_line(&p[watched], ms);
    *took = util_now_seconds() - t0;
    printf("  rank %d after %.2f s: %s\n", watched, *took, l);
    return l;
}

static void expect(const char *line, const char *const *words, const char *what)
{
    CHECK(!strncmp(line, "STEP failed: ", 13), "%s: the step did not fail: '%s'", what, line);
    for (const char *const *w = words; *w; w++) CHECK(strstr(line, *w), "%s: '%s' lacks '%s'", what, line, *w);
}

int main(void)
{
    alarm(60);
    signal(SIGPIPE, SIG_IGN);
    proc p[2];
    double took;

    /* a peer process is killed: rank 0 names it within 3 s, not after NCCL's 30 s */
    const char *l = round_trip(p, "30", "30", STEP, 1, 0, 5000, &took);
    const char *dead1[] = {"rank 0 of 2", "the process of rank 1 on 127.0.0.1 died", "communicator aborted", NULL};
    expect(l, dead1, "peer killed");
    CHECK(took < 3.0, "peer killed: rank 0 took %.1f s", took);
    reap(&p[0]), reap(&p[1]);

    /* rank 0's process is killed: the peer names it */
    l = round_trip(p, "30", "30", STEP, 0, 1, 5000, &took);
    const char *dead0[] = {"rank 1 of 2", "the process of rank 0 on 127.0.0.1 died", NULL};
    expect(l, dead0, "rank 0 killed");
    CHECK(took < 3.0, "rank 0 killed: the peer took %.1f s", took);
    reap(&p[0]), reap(&p[1]);

    /* the peer gives up on its own (its deadline, 1 s): rank 0 reports the peer's reason */
    l = round_trip(p, "30", "1", STEP, -1, 0, 8000, &took);
    const char *failed1[] = {"rank 0 of 2", "the process of rank 1 on 127.0.0.1 failed",
                             "rank 1 of 2: no progress for 1 s", NULL};
    expect(l, failed1, "peer failed");
    CHECK(took < 4.5, "peer failed: rank 0 took %.1f s", took);
    const char *own = proc_next_line(&p[1], 3000);
    CHECK(strstr(own, "rank 1 of 2: no progress for 1 s"), "the failing peer's own message: '%s'", own);
    reap(&p[0]), reap(&p[1]);

    /* the peer finishes cleanly: rank 0 is not told of a death, only its own deadline ends the wait */
    l = round_trip(p, "2", "30", LEAVE, -1, 0, 6000, &took);
    const char *alone[] = {"rank 0 of 2", "no progress for 2 s", NULL};
    expect(l, alone, "peer left cleanly");
    CHECK(!strstr(l, "the process of"), "a clean goodbye was reported: '%s'", l);
    CHECK(!strcmp(proc_next_line(&p[1], 1000), "BYE"), "the leaving peer: '%s'", p[1].line);
    reap(&p[0]), reap(&p[1]);

    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("cuda_dp_procs: all passed\n");
    return 0;
}
