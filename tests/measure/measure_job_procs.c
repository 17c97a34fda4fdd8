/* measure_job_procs: the host load leaves out the job's own processes on this machine.  This
 * process plays rank 0 of a job and starts copies of itself (`measure ...`, as instbench's) that
 * burn CPU, one of the job and one of another job; each copy measures its own CPU time
 * (CLOCK_PROCESS_CPUTIME_ID), the reference.  Twice:
 * - a torchrun-style job (WORLD_SIZE=3, MASTER_ADDR/PORT): A has the job's variables (RANK=1), B
 *   another job's (another MASTER_PORT);
 * - a job of the flags (--nnodes 2 --node-rank 0 --master-addr --master-port), its processes on one
 *   machine: C has the job's flags (after an instbench option, one as --name=value, then an
 *   --output named like a flag, read as measure's parser reads it: a value) and the variables of
 *   another job, which its flags override; D the job's port, then another (the last one given is
 *   the one measure uses); E the job's flags under another command.
 * Then each time:
 * - the window's first sample finds A (C) as the job's, and no other copy (nor itself);
 * - the samples' peer CPU grows by what A (C) says it burnt, and B's (D's) burn stays in "other
 *   processes";
 * - without a launcher (kind none) no process is taken for the job's. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
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

/* This executable again with ARGS (NULL-terminated, at most 15) and ENV (NULL-terminated "NAME=value"). */
static copy start(char *const *args, char *const *env)
{
    copy k = {-1, -1, -1, ""};
    int i[2], o[2];
    if (pipe(i) || pipe(o)) return k;
    k.pid = fork();
    if (k.pid == 0) {
        dup2(i[0], 0), dup2(o[1], 1);
        close(i[0]), close(i[1]), close(o[0]), close(o[1]);
        char *argv[16] = {"measure_job_procs"};
        for (int n = 0; args[n] && n < 15; n++) argv[n + 1] = args[n];
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

/* RDV's job: MINE is one of its processes, FOREIGN not, OTHER (may be NULL) not either; MINE and
 * FOREIGN burn CPU in the window. */
static void window(const char *what, const bench_rendezvous *rdv, copy *mine, copy *foreign, copy *other)
{
    copy *all[] = {mine, foreign, other};
    for (int i = 0; i < 3; i++)
        if (all[i])
            CHECK(!strcmp(read_line_within(all[i]->out, all[i]->line, sizeof all[i]->line, 10000), "up"),
                  "%s: copy %d did not start: '%s'", what, i, all[i]->line);
    bench_cpu_sample s0, s1;
    sysinfo_cpu_sample_job(&s0, rdv, NULL);
    CHECK(s0.npeers == 1 && s0.peer[0].pid == mine->pid, "%s: found %d peer(s) (first %d), want %d only (%d, %d not)",
          what, s0.npeers, s0.npeers ? s0.peer[0].pid : 0, (int)mine->pid, (int)foreign->pid,
          other ? (int)other->pid : 0);
    if (write(mine->in, "g", 1) != 1 || write(foreign->in, "g", 1) != 1) CHECK(0, "go: %s", strerror(errno));
    const double burnt = atof(read_line_within(mine->out, mine->line, sizeof mine->line, 30000));
    const double burnt_f = atof(read_line_within(foreign->out, foreign->line, sizeof foreign->line, 30000));
    CHECK(burnt >= BURN_S && burnt_f >= BURN_S, "%s: the copies say they burnt %.3f and %.3f s", what, burnt, burnt_f);
    sysinfo_cpu_sample_job(&s1, rdv, &s0);
    const double peers = s1.peers_s - s0.peers_s;
    /* /proc counts whole clock ticks (10 ms), a little before and after the burn */
    CHECK(peers > burnt - 0.03 && peers < burnt + 0.05, "%s: the job's other process used %.3f s, it says %.3f s", what,
          peers, burnt);
    double others, steal;
    const int vcpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    sysinfo_host_load(&s0, &s1, vcpus, &others, &steal);
    const double cap = (s1.wall_s - s0.wall_s) * vcpus;
    CHECK(others * cap > burnt_f - 0.05 || others >= 1,
          "%s: other processes' share %.3f x %.2f s: the foreign copy's %.3f s is not in it", what, others, cap,
          burnt_f);
    CHECK(others * cap <= (s1.busy_s - s0.busy_s) - (s1.self_s - s0.self_s) - burnt + 0.05,
          "%s: other processes' share %.3f x %.2f s still holds the job's copy's %.3f s", what, others, cap, burnt);
    printf("%s: the job's copy burnt %.3f s, its peers %.3f s; the other %.3f s stays foreign\n", what, burnt, peers,
           burnt_f);
}

static const char *const job_vars[] = {
    "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "RANK", "LOCAL_RANK"};

/* A torchrun-style job in the environment. */
static void test_launcher(const char *port, const char *other_port)
{
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
    char *measure[] = {"measure", NULL};
    copy a = start(measure, env_a), b = start(measure, env_b);
    window("torchrun", &rdv, &a, &b, NULL);

    /* no launcher: every instbench process would look alike, so none is the job's */
    bench_rendezvous none = rdv;
    strcpy(none.kind, "none");
    bench_cpu_sample s;
    sysinfo_cpu_sample_job(&s, &none, NULL);
    CHECK(s.npeers == 0, "without a launcher %d process(es) taken for the job's", s.npeers);
    stop(&a), stop(&b);
    for (size_t i = 0; i < sizeof job_vars / sizeof job_vars[0]; i++) unsetenv(job_vars[i]);
}

/* A job of the flags, two of its "nodes" on this machine. */
static void test_flags(char *port, char *other_port)
{
    const bench_rendezvous_flags flags = {2, 0, atoi(port), "127.0.0.1", 0};
    bench_rendezvous rdv;
    ib_error err = {0};
    CHECK(rendezvous_resolve(&flags, 1, &rdv, &err) == 0 && !strcmp(rdv.kind, "flags"), "resolve: %s", err.msg);
    char mp[32], omp[32];
    snprintf(mp, sizeof mp, "--master-port=%s", port);
    snprintf(omp, sizeof omp, "MASTER_PORT=%s", other_port);
    char *args_c[] = {"-v", "measure",  "--nnodes",      "2", "--node-rank", "1", "--master-addr", "127.0.0.1",
                      mp,   "--output", "--master-port", NULL};
    char *env_c[] = {"WORLD_SIZE=3", "RANK=1", "MASTER_ADDR=127.0.0.1", omp, NULL};
    char *args_d[] = {"measure", "--master-port", port,        "--nnodes",      "2",        "--node-rank",
                      "1",       "--master-addr", "127.0.0.1", "--master-port", other_port, NULL};
    char *args_e[] = {"sweep", "--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1", mp, NULL};
    char *no_env[] = {NULL};
    copy c = start(args_c, env_c), d = start(args_d, no_env), e = start(args_e, no_env);
    window("flags", &rdv, &c, &d, &e);
    stop(&c), stop(&d), stop(&e);
}

int main(int argc, char **argv)
{
    if (argc > 1) return burner(); /* a copy */
    alarm(60);
    bench_measure_value_follows(cmd_measure_value_follows); /* as cmd_measure does */
    char port[16], other_port[16];
    snprintf(port, sizeof port, "%d", free_port());
    snprintf(other_port, sizeof other_port, "%d", atoi(port) + 1);
    test_launcher(port, other_port);
    test_flags(port, other_port);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
