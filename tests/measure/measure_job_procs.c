/* measure_job_procs: the host load leaves out the job's own processes on this machine.  This
 * process plays rank 0 of a torchrun-style job (WORLD_SIZE=3, MASTER_ADDR/PORT); it starts two
 * copies of itself that burn CPU: A with the job's variables (RANK=1), B with another job's
 * (another MASTER_PORT).  Each copy measures its own CPU time (CLOCK_PROCESS_CPUTIME_ID), the
 * reference.  Then:
 * - the window's first sample finds A as the job's, not B (nor itself);
 * - the samples' peer CPU grows by what A says it burnt, and B's burn stays in "other processes";
 * - without a launcher (kind none) no process is taken for the job's. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "instbench/bench.h"

#include "check.h"
#include "procs.h"

#define BURN_S 0.3 /* CPU seconds each copy burns: 30 clock ticks, far above a tick's rounding */

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The copy: says it is up, burns BURN_S of CPU on 'g', says how much it burnt, stays until EOF. */
static int burner(void)
{
    char c;
    if (write(1, "up\n", 3) != 3 || read(0, &c, 1) != 1) return 1;
    const double t0 = cpu_now();
    volatile double x = 1;
    while (cpu_now() - t0 < BURN_S) x = x * 1.0000001 + 1e-9;
    char line[64];
    int n = snprintf(line, sizeof line, "%.4f\n", cpu_now() - t0);
    if (write(1, line, (size_t)n) != n) return 1;
    while (read(0, &c, 1) > 0) {}
    return 0;
}

typedef struct copy {
    pid_t pid;
    int in, out;
    char line[64];
} copy;

/* This executable again, as "burn", with ENV (NULL-terminated "NAME=value"). */
static copy start(char *const *env)
{
    copy k = {-1, -1, -1, ""};
    int i[2], o[2];
    if (pipe(i) || pipe(o)) return k;
    k.pid = fork();
    if (k.pid == 0) {
        dup2(i[0], 0), dup2(o[1], 1);
        close(i[0]), close(i[1]), close(o[0]), close(o[1]);
        char *argv[] = {"measure_job_procs", "burn", NULL};
        execve("/proc/self/exe", argv, env);
        _exit(127);
    }
    close(i[0]), close(o[1]);
    k.in = i[1], k.out = o[0];
    return k;
}

static void stop(copy *k)
{
    if (k->pid <= 0) return;
    close(k->in), close(k->out);
    kill(k->pid, SIGKILL);
    waitpid(k->pid, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "burn")) return burner();
    alarm(60);
    char port[16], other_port[16];
    snprintf(port, sizeof port, "%d", free_port());
    snprintf(other_port, sizeof other_port, "%d", atoi(port) + 1);
    const char *job[][2] = {{"WORLD_SIZE", "3"},
                            {"LOCAL_WORLD_SIZE", "3"},
                            {"MASTER_ADDR", "127.0.0.1"},
                            {"MASTER_PORT", port},
                            {"TORCHELASTIC_RUN_ID", "j1"}};
    for (size_t i = 0; i < sizeof job / sizeof job[0]; i++) setenv(job[i][0], job[i][1], 1);
    setenv("RANK", "0", 1), setenv("LOCAL_RANK", "0", 1);
    char mp[32], omp[32];
    snprintf(mp, sizeof mp, "MASTER_PORT=%s", port);
    snprintf(omp, sizeof omp, "MASTER_PORT=%s", other_port);
    char *env_a[] = {"WORLD_SIZE=3",           "LOCAL_WORLD_SIZE=3",
                     "MASTER_ADDR=127.0.0.1",  mp,
                     "TORCHELASTIC_RUN_ID=j1", "RANK=1",
                     "LOCAL_RANK=1",           NULL};
    char *env_b[] = {"WORLD_SIZE=3",           "LOCAL_WORLD_SIZE=3",
                     "MASTER_ADDR=127.0.0.1",  omp,
                     "TORCHELASTIC_RUN_ID=j1", "RANK=2",
                     "LOCAL_RANK=2",           NULL};
    const bench_rendezvous_flags no_flags = {-1, -1, -1, NULL, 0};
    bench_rendezvous rdv;
    ib_error err = {0};
    CHECK(rendezvous_resolve(&no_flags, 1, &rdv, &err) == 0 && !strcmp(rdv.kind, "torchrun"), "resolve: %s", err.msg);

    copy a = start(env_a), b = start(env_b);
    CHECK(!strcmp(read_line_within(a.out, a.line, sizeof a.line, 10000), "up") &&
              !strcmp(read_line_within(b.out, b.line, sizeof b.line, 10000), "up"),
          "the copies did not start: '%s' '%s'", a.line, b.line);
    bench_cpu_sample s0, s1;
    sysinfo_cpu_sample_job(&s0, &rdv, NULL);
    CHECK(s0.npeers == 1 && s0.peer[0].pid == a.pid, "found %d peer(s) (first %d), want A only (%d; B is %d)",
          s0.npeers, s0.npeers ? s0.peer[0].pid : 0, (int)a.pid, (int)b.pid);
    if (write(a.in, "g", 1) != 1 || write(b.in, "g", 1) != 1) CHECK(0, "go: %s", strerror(errno));
    const double burnt_a = atof(read_line_within(a.out, a.line, sizeof a.line, 30000));
    const double burnt_b = atof(read_line_within(b.out, b.line, sizeof b.line, 30000));
    CHECK(burnt_a >= BURN_S && burnt_b >= BURN_S, "the copies say they burnt %.3f and %.3f s", burnt_a, burnt_b);
    sysinfo_cpu_sample_job(&s1, &rdv, &s0);
    const double peers = s1.peers_s - s0.peers_s;
    /* /proc counts whole clock ticks (10 ms), a little before and after the burn */
    CHECK(peers > burnt_a - 0.03 && peers < burnt_a + 0.05, "the job's other process used %.3f s, A says %.3f s", peers,
          burnt_a);
    double others, steal;
    const int vcpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    sysinfo_host_load(&s0, &s1, vcpus, &others, &steal);
    const double cap = (s1.wall_s - s0.wall_s) * vcpus;
    CHECK(others * cap > burnt_b - 0.05 || others >= 1, "other processes' share %.3f x %.2f s: B's %.3f s is not in it",
          others, cap, burnt_b);
    CHECK(others * cap <= (s1.busy_s - s0.busy_s) - (s1.self_s - s0.self_s) - burnt_a + 0.05,
          "other processes' share %.3f x %.2f s still holds A's %.3f s", others, cap, burnt_a);

    /* no launcher: every instbench process would look alike, so none is the job's */
    bench_rendezvous none = rdv;
    strcpy(none.kind, "none");
    sysinfo_cpu_sample_job(&s0, &none, NULL);
    CHECK(s0.npeers == 0, "without a launcher %d process(es) taken for the job's", s0.npeers);
    stop(&a), stop(&b);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("measure_job_procs: A burnt %.3f s, the job's peers %.3f s; B %.3f s stays foreign\n", burnt_a, peers,
               burnt_b);
    return failures ? 1 : 0;
}
