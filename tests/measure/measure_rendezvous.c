/* Rendezvous settings from torchrun's and Slurm's variables and from flags, as those launchers
 * document them (torchrun: WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_*;
 * Slurm: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NNODES, SLURM_NODEID, node list). */
#include <stdio.h>
#include <string.h>

#include "instbench/bench.h"

#include "check.h"

static const char *const *g_env;   /* NULL-terminated "NAME=value" list */

static const char *fake_getenv(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = g_env; e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

static bench_rendezvous_flags no_flags(void)
{
    bench_rendezvous_flags f = {-1, -1, -1, NULL};
    return f;
}

int main(void)
{
    bench_rendezvous r;
    ib_error err = {0};
    bench_rendezvous_flags f = no_flags();

    /* Nothing set: one process, --ranks threads. */
    const char *none[] = {NULL};
    g_env = none;
    CHECK(rendezvous_resolve_with(&f, 2, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "none") && r.nnodes == 1 && r.world_size == 2 && r.local_world_size == 2 && r.rank == 0,
          "%s %d %d", r.kind, r.world_size, r.local_world_size);

    /* torchrun --nnodes 2 --nproc-per-node 4, the process with global rank 5 on node 1. */
    const char *tr[] = {"WORLD_SIZE=8", "RANK=5", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "GROUP_RANK=1",
                        "MASTER_ADDR=10.0.0.7", "MASTER_PORT=29400", NULL};
    g_env = tr;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "torchrun"), "%s", r.kind);
    CHECK(r.world_size == 8 && r.rank == 5 && r.local_rank == 1 && r.local_world_size == 4, "ws %d rank %d lr %d lws %d",
          r.world_size, r.rank, r.local_rank, r.local_world_size);
    CHECK(r.nnodes == 2 && r.node_rank == 1, "nodes %d node rank %d", r.nnodes, r.node_rank);
    CHECK(!strcmp(r.master_addr, "10.0.0.7") && r.master_port == 29400, "%s:%d", r.master_addr, r.master_port);

    /* NNODES / NODE_RANK given explicitly win over the derived values. */
    const char *tr2[] = {"WORLD_SIZE=4", "RANK=0", "NNODES=4", "NODE_RANK=0", NULL};
    g_env = tr2;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(r.nnodes == 4 && r.node_rank == 0, "nodes %d", r.nnodes);

    /* Malformed and inconsistent torchrun values are usage errors. */
    const char *bad1[] = {"WORLD_SIZE=four", "RANK=0", NULL};
    g_env = bad1;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE, "non-number");
    const char *bad2[] = {"WORLD_SIZE=2", "RANK=2", NULL};
    g_env = bad2;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE, "rank >= world");
    const char *bad3[] = {"WORLD_SIZE=2", "RANK=0", "MASTER_PORT=70000", NULL};
    g_env = bad3;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE, "port range");

    /* srun -N 3 --ntasks-per-node 2: task 3 is local task 1 on node 1; master = first node. */
    const char *sl[] = {"SLURM_PROCID=3", "SLURM_NTASKS=6", "SLURM_LOCALID=1", "SLURM_NNODES=3", "SLURM_NODEID=1",
                        "SLURM_NTASKS_PER_NODE=2", "SLURM_JOB_NODELIST=gpu[07-09]", NULL};
    g_env = sl;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "slurm"), "%s", r.kind);
    CHECK(r.world_size == 6 && r.rank == 3 && r.local_rank == 1 && r.local_world_size == 2, "ws %d rank %d lr %d lws %d",
          r.world_size, r.rank, r.local_rank, r.local_world_size);
    CHECK(r.nnodes == 3 && r.node_rank == 1, "nodes %d node %d", r.nnodes, r.node_rank);
    CHECK(!strcmp(r.master_addr, "gpu07"), "master %s", r.master_addr);
    CHECK(!strcmp(r.nodelist, "gpu[07-09]"), "nodelist %s", r.nodelist);
    const char *sl2[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_NNODES=2", "SLURM_JOB_NODELIST=alpha,beta", NULL};
    g_env = sl2;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.master_addr, "alpha"), "master %s", r.master_addr);

    /* Flags win over the environment. */
    g_env = tr;
    f.nnodes = 4;
    f.node_rank = 2;
    f.master_addr = "head";
    f.master_port = 1234;
    CHECK(rendezvous_resolve_with(&f, 2, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "flags") && r.nnodes == 4 && r.node_rank == 2 && r.world_size == 8 && r.rank == 4 &&
              r.local_world_size == 2 && !strcmp(r.master_addr, "head") && r.master_port == 1234,
          "%s nodes %d ws %d rank %d", r.kind, r.nnodes, r.world_size, r.rank);
    f.node_rank = 4;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE,
          "node rank >= nodes");

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("measure_rendezvous: all checks passed\n");
    return failures ? 1 : 0;
}
