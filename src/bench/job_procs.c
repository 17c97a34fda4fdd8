/* job_procs: the other processes of this job on this machine, and their CPU time.  Under a
 * per-GPU launcher (torchrun --nproc-per-node, srun with several tasks a node) the job's local
 * ranks are separate processes, and so are the "nodes" of a job started with the flags on one
 * machine (--nnodes 2 --node-rank 0/1, one GPU each); the host load of a result subtracts their
 * CPU as it subtracts this process's own, or a machine running nothing but the job would read as
 * shared.
 *
 * A peer is found by what makes it one, not by ancestry (torchrun's agent, slurmstepd and a shell
 * script parent their workers differently): a process of this user running this executable whose
 * rendezvous, resolved as its own `measure` resolved it (the flags on its command line,
 * /proc/PID/cmdline, else the launcher environment, /proc/PID/environ: both fixed at its exec), is
 * this one's (kind, rank 0's address and port, node count), with the same job ids
 * (TORCHELASTIC_RUN_ID, SLURM_JOB_ID, SLURM_STEP_ID).  Linux only (no /proc: no peers). */
#include "instbench/bench.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENVIRON_MAX (256 * 1024) /* a launcher's variables come early; a longer environment is cut */
#define CMDLINE_MAX (64 * 1024)  /* measure's flags are a few dozen bytes; a longer command line is cut */

/* PID's CPU time (user + system) and start time (clock ticks since boot: a reused pid differs). */
static int proc_cpu(int pid, double *cpu_s, unsigned long long *started)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ..." with comm free text: the fields start after the last ')' */
    const char *p = strrchr(buf, ')');
    unsigned long long utime, stime, start;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
                     &utime, &stime, &start) != 3)
        return -1;
    const long hz = sysconf(_SC_CLK_TCK);
    *cpu_s = (double)(utime + stime) / (hz > 0 ? hz : 100);
    *started = start;
    return 0;
}

/* The environment block being read, for resolve_get (rendezvous_resolve_with takes no context). */
static __thread const char *g_env;
static __thread size_t g_env_len;

static const char *env_get(const char *name)
{
    const size_t n = strlen(name);
    for (const char *e = g_env; e < g_env + g_env_len; e += strlen(e) + 1)
        if (!strncmp(e, name, n) && e[n] == '=') return e + n + 1;
    return NULL;
}

static int same_value(const char *name)
{
    const char *mine = getenv(name), *theirs = env_get(name);
    return !strcmp(mine ? mine : "", theirs ? theirs : "");
}

/* The rendezvous flags of a `measure` command line (CMD, LEN bytes of NUL-ended arguments, as
 * /proc/PID/cmdline has them) into F, read as src/main.c and src/cmd/args.c read them: instbench's
 * own options before the command, "--name value" or "--name=value", the last one given winning,
 * "--" ending the options.  0, 1 when it is not measure's (F untouched), -1 when it holds a value
 * measure's parser refuses (that process stops at once).  Which other options take a value only the
 * parser's tables know: cmd_measure hands over their answer (bench_measure_value_follows), without
 * which a value spelled as one of these flags (--output --nnodes) is misread. */
static int (*value_follows)(const char *a);

void bench_measure_value_follows(int (*fn)(const char *a)) { value_follows = fn; }

static int measure_flags(const char *cmd, size_t len, bench_rendezvous_flags *f)
{
    const char *end = cmd + len, *a = util_cmdline_command(cmd, len);
    if (!a || strcmp(a, "measure")) return 1;
    int *const ints[] = {&f->nnodes, &f->node_rank, &f->master_port};
    static const char *const names[] = {"--nnodes", "--node-rank", "--master-port", "--master-addr"};
    for (a += strlen(a) + 1; a < end && strcmp(a, "--"); a += strlen(a) + 1) {
        const size_t n = strcspn(a, "=");
        int k = 0;
        while (k < 4 && (strlen(names[k]) != n || strncmp(a, names[k], n))) k++;
        if (k == 4) {
            if (value_follows && value_follows(a) && a + strlen(a) + 1 < end) a += strlen(a) + 1;
            continue;
        }
        const char *v = a + n + 1;
        if (!a[n]) {
            if ((v = a + strlen(a) + 1) >= end) return -1;
            a = v;
        }
        long x;
        if (k == 3) f->master_addr = v;
        else if (util_parse_int(v, 0, 1 << 30, &x) == 0) *ints[k] = (int)x;
        else return -1;
    }
    return 0;
}

/* Whether the process of command line CMD and environment ENV (CLEN and ELEN bytes) is in MINE's
 * job: its rendezvous resolved as it resolved it, flags over its environment. */
static int in_job(const char *cmd, size_t clen, const char *env, size_t elen, const bench_rendezvous *mine)
{
    bench_rendezvous_flags flags = {-1, -1, -1, NULL, 0}; /* none given: its environment alone */
    if (measure_flags(cmd, clen, &flags) < 0) return 0;
    g_env = env, g_env_len = elen;
    bench_rendezvous theirs;
    ib_error err = {0};
    const int same = rendezvous_resolve_with(&flags, 1, env_get, &theirs, &err) == 0 &&
                     !strcmp(theirs.kind, mine->kind) && !strcmp(theirs.master_addr, mine->master_addr) &&
                     theirs.id_port == mine->id_port && theirs.nnodes == mine->nnodes &&
                     same_value("TORCHELASTIC_RUN_ID") && same_value("SLURM_JOB_ID") && same_value("SLURM_STEP_ID");
    g_env = NULL, g_env_len = 0;
    return same;
}


/* ENV (ENVIRON_MAX bytes) and CMD (CMDLINE_MAX) are buffers for PID's. */
static int is_peer(int pid, const char *self_exe, const bench_rendezvous *rdv, char *env, char *cmd)
{
    char path[64], exe[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1); /* another user's process: EACCES, and skipped */
    if (n <= 0) return 0;
    exe[n] = '\0';
    if (strcmp(exe, self_exe)) return 0;
    const long elen = util_proc_read(pid, "environ", env, ENVIRON_MAX),
               clen = util_proc_read(pid, "cmdline", cmd, CMDLINE_MAX);
    return elen >= 0 && clen > 0 && in_job(cmd, (size_t)clen, env, (size_t)elen, rdv);
}

/* Finds this job's other processes here into S->peer[] with their CPU time now. */
static void find_peers(bench_cpu_sample *s, const bench_rendezvous *rdv)
{
    char self_exe[4096];
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    DIR *d = n > 0 ? opendir("/proc") : NULL;
    char *env = d ? malloc(ENVIRON_MAX + CMDLINE_MAX) : NULL;
    if (!env) {
        if (d) closedir(d);
        return;
    }
    self_exe[n] = '\0';
    const int self = (int)getpid();
    for (struct dirent *e; (e = readdir(d)) != NULL && s->npeers < BENCH_JOB_PEERS_MAX;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self || !is_peer((int)pid, self_exe, rdv, env, env + ENVIRON_MAX)) continue;
        double cpu;
        unsigned long long started;
        if (proc_cpu((int)pid, &cpu, &started)) continue; /* it just left */
        s->peer[s->npeers].pid = (int)pid, s->peer[s->npeers].started = started, s->peer[s->npeers].cpu_s = cpu;
        s->peers_s += cpu;
        s->npeers++;
    }
    free(env);
    closedir(d);
}

void sysinfo_cpu_sample_job(bench_cpu_sample *out, const bench_rendezvous *rdv, const bench_cpu_sample *before)
{
    sysinfo_cpu_sample(out);
    if (!before) {
        /* a launcher's job with more than one rank here; a flags job of more than one process, as
         * the flags do not say how many of them share this machine (without either every
         * instbench process would look alike) */
        const int flags = rdv && !strcmp(rdv->kind, "flags");
        if (rdv && (flags ? rdv->nnodes > 1 : rdv->local_world_size > 1 && strcmp(rdv->kind, "none")))
            find_peers(out, rdv);
        return;
    }
    out->npeers = before->npeers;
    for (int i = 0; i < before->npeers; i++) {
        out->peer[i] = before->peer[i];
        double cpu;
        unsigned long long started;
        /* one that left (or whose pid was reused) adds nothing after its first sample */
        if (proc_cpu(before->peer[i].pid, &cpu, &started) == 0 && started == before->peer[i].started)
            out->peer[i].cpu_s = cpu;
        out->peers_s += out->peer[i].cpu_s;
    }
}
