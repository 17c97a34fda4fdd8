/* Rendezvous settings from every launcher's variables and from flags, as those launchers document
 * them (torchrun: WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_*,
 * TORCHELASTIC_RUN_ID, TORCHELASTIC_USE_AGENT_STORE (torch/distributed/elastic/agent/server/
 * local_elastic_agent.py); Kubeflow PyTorchJob and Volcano: WORLD_SIZE = pods, RANK = pod index,
 * MASTER_*; Kubeflow Trainer v2: PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_*;
 * training-operator's PET_* beside WORLD_SIZE/RANK; Slurm: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
 * SLURM_NNODES, SLURM_NODEID, SLURM_STEP_*, node lists), and the
 * port each gives the NCCL unique id. */
#include <stdio.h>
#include <string.h>

#include "instbench/bench.h"

#include "check.h"

static const char *const *g_env; /* NULL-terminated "NAME=value" list */

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

    /* torchrun --nnodes 2 --nproc-per-node 4, the process with global rank 5 on node 1; its agent's
     * store listens on MASTER_PORT, so the id goes to the next port. */
    const char *tr[] = {"WORLD_SIZE=8",
                        "RANK=5",
                        "LOCAL_RANK=1",
                        "LOCAL_WORLD_SIZE=4",
                        "GROUP_RANK=1",
                        "MASTER_ADDR=10.0.0.7",
                        "MASTER_PORT=29400",
                        "TORCHELASTIC_RUN_ID=job7",
                        "TORCHELASTIC_USE_AGENT_STORE=True",
                        NULL};
    g_env = tr;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "torchrun"), "%s", r.kind);
    CHECK(r.id_port == 29401, "torchrun with its agent's store: id port %d", r.id_port);
    CHECK(r.world_size == 8 && r.rank == 5 && r.local_rank == 1 && r.local_world_size == 4,
          "ws %d rank %d lr %d lws %d", r.world_size, r.rank, r.local_rank, r.local_world_size);
    CHECK(r.nnodes == 2 && r.node_rank == 1, "nodes %d node rank %d", r.nnodes, r.node_rank);
    CHECK(!strcmp(r.master_addr, "10.0.0.7") && r.master_port == 29400, "%s:%d", r.master_addr, r.master_port);

    /* torchrun whose agent keeps no store (c10d rendezvous, TORCHELASTIC_USE_AGENT_STORE=False): it
     * picked MASTER_PORT free for the workers, and the id uses it. */
    const char *tr_c10d[] = {"WORLD_SIZE=2",
                             "RANK=0",
                             "LOCAL_RANK=0",
                             "LOCAL_WORLD_SIZE=2",
                             "MASTER_ADDR=h0",
                             "MASTER_PORT=41000",
                             "TORCHELASTIC_RUN_ID=x",
                             "TORCHELASTIC_USE_AGENT_STORE=False",
                             NULL};
    g_env = tr_c10d;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "torchrun") && r.id_port == 41000, "torchrun without a store: %s id port %d", r.kind,
          r.id_port);
    /* ... and an older torchrun that does not say: its static store listens on MASTER_PORT. */
    const char *tr_old[] = {"WORLD_SIZE=2", "RANK=1", "MASTER_PORT=41000", "TORCHELASTIC_RUN_ID=x", NULL};
    g_env = tr_old;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && r.id_port == 41001, "old torchrun: id port %d",
          r.id_port);
    const char *tr_top[] = {"WORLD_SIZE=2", "RANK=1", "MASTER_PORT=65535", "TORCHELASTIC_RUN_ID=x", NULL};
    g_env = tr_top;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
              strstr(err.msg, "65535"),
          "torchrun's store on 65535 leaves no port for the id: %s", err.msg);

    /* Kubeflow PyTorchJob (a master and two workers, container started directly): WORLD_SIZE is the
     * pod count, RANK the pod's index, MASTER_PORT the job's declared port where nothing listens yet.
     * This pod's process drives its 4 GPUs. */
    const char *pj[] = {"WORLD_SIZE=3",       "RANK=2", "MASTER_ADDR=bench-master-0", "MASTER_PORT=23456",
                        "PYTHONUNBUFFERED=0", NULL};
    g_env = pj;
    CHECK(rendezvous_resolve_with(&f, 4, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "env") && r.id_port == 23456, "PyTorchJob: %s id port %d", r.kind, r.id_port);
    CHECK(r.world_size == 12 && r.rank == 8 && r.nnodes == 3 && r.node_rank == 2 && r.local_rank == 0 &&
              r.local_world_size == 4 && !strcmp(r.master_addr, "bench-master-0"),
          "PyTorchJob: ws %d rank %d nodes %d node %d lws %d master %s", r.world_size, r.rank, r.nnodes, r.node_rank,
          r.local_world_size, r.master_addr);

    /* Kubeflow training-operator's PyTorchJob with nprocPerNode "8" (a Master and one Worker, port
     * 23456), the variables exactly as its controller writes them: kubeflow/training-operator commit
     * ee1162919408cbca4a899f2916cfcd0ecd562881, pkg/controller.v1/pytorch/envvar.go (setPodEnv:
     * PYTHONUNBUFFERED=1; WORLD_SIZE = getTotalReplicas x getNprocPerNodeInt; RANK and PET_NODE_RANK =
     * the replica index, +1 for workers; PET_NPROC_PER_NODE = the spec's string; PET_NNODES = the
     * replicas outside elastic mode) and master.go (MASTER_PORT, PET_MASTER_PORT, MASTER_ADDR and
     * PET_MASTER_ADDR = "<job>-master-0").  The worker's process drives its pod's 8 GPUs: 16 ranks on
     * 2 pods, its first global rank 8; read as 16 pods it would wait for ranks that never come. */
    const char *to_worker[] = {"PYTHONUNBUFFERED=1",
                               "MASTER_PORT=23456",
                               "PET_MASTER_PORT=23456",
                               "MASTER_ADDR=vit-master-0",
                               "PET_MASTER_ADDR=vit-master-0",
                               "WORLD_SIZE=16",
                               "RANK=1",
                               "PET_NODE_RANK=1",
                               "PET_NPROC_PER_NODE=8",
                               "PET_NNODES=2",
                               NULL};
    g_env = to_worker;
    CHECK(rendezvous_resolve_with(&f, 8, fake_getenv, &r, &err) == 0, "training-operator worker: %s", err.msg);
    CHECK(!strcmp(r.kind, "env") && r.id_port == 23456 && !strcmp(r.master_addr, "vit-master-0"),
          "training-operator: %s id port %d master %s", r.kind, r.id_port, r.master_addr);
    CHECK(r.world_size == 16 && r.rank == 8 && r.nnodes == 2 && r.node_rank == 1 && r.local_rank == 0 &&
              r.local_world_size == 8,
          "training-operator worker: ws %d rank %d nodes %d node %d lr %d lws %d", r.world_size, r.rank, r.nnodes,
          r.node_rank, r.local_rank, r.local_world_size);
    const char *to_master[] = {"PYTHONUNBUFFERED=1",
                               "MASTER_PORT=23456",
                               "PET_MASTER_PORT=23456",
                               "MASTER_ADDR=vit-master-0",
                               "PET_MASTER_ADDR=vit-master-0",
                               "WORLD_SIZE=16",
                               "RANK=0",
                               "PET_NODE_RANK=0",
                               "PET_NPROC_PER_NODE=8",
                               "PET_NNODES=2",
                               NULL};
    g_env = to_master;
    CHECK(rendezvous_resolve_with(&f, 8, fake_getenv, &r, &err) == 0 && r.world_size == 16 && r.rank == 0 &&
              r.nnodes == 2 && r.node_rank == 0,
          "training-operator master: %s ws %d rank %d nodes %d", err.msg, r.world_size, r.rank, r.nnodes);
    /* the pod's process drives 4 GPUs while the job says 8 per node: the pods would disagree (the
     * ranks counted in words, one rank singular) */
    CHECK(rendezvous_resolve_with(&f, 4, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
              strstr(err.msg, "PET_NPROC_PER_NODE=8, but this process drives 4 ranks:"),
          "training-operator nprocPerNode 8 with 4 ranks: %s", err.msg);
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
              strstr(err.msg, "PET_NPROC_PER_NODE=8, but this process drives 1 rank:"),
          "training-operator nprocPerNode 8 with 1 rank: %s", err.msg);
    /* nprocPerNode "auto" (getNprocPerNodeInt gives 1): WORLD_SIZE is the pod count, as before */
    const char *to_auto[] = {"PYTHONUNBUFFERED=1",
                             "MASTER_PORT=23456",
                             "PET_MASTER_PORT=23456",
                             "MASTER_ADDR=vit-master-0",
                             "PET_MASTER_ADDR=vit-master-0",
                             "WORLD_SIZE=2",
                             "RANK=1",
                             "PET_NODE_RANK=1",
                             "PET_NPROC_PER_NODE=auto",
                             "PET_NNODES=2",
                             NULL};
    g_env = to_auto;
    CHECK(rendezvous_resolve_with(&f, 4, fake_getenv, &r, &err) == 0 && r.world_size == 8 && r.rank == 4 &&
              r.nnodes == 2 && r.node_rank == 1,
          "training-operator auto: %s ws %d rank %d nodes %d", err.msg, r.world_size, r.rank, r.nnodes);
    /* a WORLD_SIZE that is not pods x nprocPerNode is not the operator's: refused, not guessed */
    const char *to_bad[] = {"WORLD_SIZE=12", "RANK=1", "MASTER_PORT=23456", "PET_NODE_RANK=1", "PET_NPROC_PER_NODE=8",
                            "PET_NNODES=2",  NULL};
    g_env = to_bad;
    CHECK(rendezvous_resolve_with(&f, 8, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
              strstr(err.msg, "WORLD_SIZE=12"),
          "WORLD_SIZE 12 with 2 pods x 8: %s", err.msg);

    /* Kubeflow Trainer v2's torch runtime, the container's command started directly (no torchrun):
     * only PET_* are set. */
    const char *pet[] = {"PET_NNODES=2",          "PET_NPROC_PER_NODE=4",
                         "PET_NODE_RANK=1",       "PET_MASTER_ADDR=tj-node-0-0.tj",
                         "PET_MASTER_PORT=29400", NULL};
    g_env = pet;
    CHECK(rendezvous_resolve_with(&f, 4, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "kubeflow-trainer") && r.id_port == 29400 && r.master_port == 29400, "PET: %s id port %d",
          r.kind, r.id_port);
    CHECK(r.world_size == 8 && r.rank == 4 && r.nnodes == 2 && r.node_rank == 1 && r.local_world_size == 4 &&
              !strcmp(r.master_addr, "tj-node-0-0.tj"),
          "PET: ws %d rank %d nodes %d node %d lws %d master %s", r.world_size, r.rank, r.nnodes, r.node_rank,
          r.local_world_size, r.master_addr);
    /* a per-node process count other than this process's ranks: the nodes would disagree */
    CHECK(rendezvous_resolve_with(&f, 2, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
              strstr(err.msg, "PET_NPROC_PER_NODE=4, but this process drives 2 ranks:"),
          "PET_NPROC_PER_NODE=4 with 2 ranks: %s", err.msg);
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
              strstr(err.msg, "PET_NPROC_PER_NODE=4, but this process drives 1 rank:"),
          "PET_NPROC_PER_NODE=4 with 1 rank: %s", err.msg);
    const char *pet_auto[] = {"PET_NNODES=2",      "PET_NPROC_PER_NODE=auto", "PET_NODE_RANK=0",
                              "PET_MASTER_ADDR=h", "PET_MASTER_PORT=29400",   NULL};
    g_env = pet_auto;
    CHECK(rendezvous_resolve_with(&f, 8, fake_getenv, &r, &err) == 0 && r.world_size == 16 && r.rank == 0,
          "PET auto: %s ws %d", err.msg, r.world_size);
    const char *pet_bad[] = {"PET_NNODES=2", "PET_NODE_RANK=2", "PET_MASTER_PORT=29400", NULL};
    g_env = pet_bad;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE,
          "PET node rank 2 of 2");
    /* torchrun inside a Trainer v2 pod: torchrun's variables win over the PET_* it read */
    const char *pet_tr[] = {"PET_NNODES=2",
                            "PET_NODE_RANK=1",
                            "PET_MASTER_PORT=29400",
                            "WORLD_SIZE=2",
                            "RANK=1",
                            "MASTER_PORT=29400",
                            "TORCHELASTIC_RUN_ID=tj",
                            "TORCHELASTIC_USE_AGENT_STORE=True",
                            NULL};
    g_env = pet_tr;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && !strcmp(r.kind, "torchrun") &&
              r.id_port == 29401,
          "torchrun under Trainer v2: %s id port %d", r.kind, r.id_port);

    /* a launcher of its own (no torchrun, no PET_*) with 4 processes a node: node rank from RANK and
     * LOCAL_WORLD_SIZE, as before the training-operator's variables were read */
    const char *own[] = {"WORLD_SIZE=8", "RANK=5", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "MASTER_ADDR=h0", NULL};
    g_env = own;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && r.nnodes == 2 && r.node_rank == 1 &&
              r.world_size == 8 && r.rank == 5,
          "own launcher: %s nodes %d node %d ws %d rank %d", err.msg, r.nnodes, r.node_rank, r.world_size, r.rank);

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
    const char *sl[] = {"SLURM_PROCID=3",
                        "SLURM_NTASKS=6",
                        "SLURM_LOCALID=1",
                        "SLURM_NNODES=3",
                        "SLURM_NODEID=1",
                        "SLURM_NTASKS_PER_NODE=2",
                        "SLURM_JOB_NODELIST=gpu[07-09]",
                        NULL};
    g_env = sl;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "slurm"), "%s", r.kind);
    CHECK(r.world_size == 6 && r.rank == 3 && r.local_rank == 1 && r.local_world_size == 2,
          "ws %d rank %d lr %d lws %d", r.world_size, r.rank, r.local_rank, r.local_world_size);
    CHECK(r.nnodes == 3 && r.node_rank == 1, "nodes %d node %d", r.nnodes, r.node_rank);
    CHECK(!strcmp(r.master_addr, "gpu07"), "master %s", r.master_addr);
    CHECK(!strcmp(r.nodelist, "gpu[07-09]"), "nodelist %s", r.nodelist);
    CHECK(r.master_port == 29500 && r.id_port == 29500, "srun: port %d id port %d", r.master_port, r.id_port);
    const char *sl2[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_NNODES=2", "SLURM_JOB_NODELIST=alpha,beta", NULL};
    g_env = sl2;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.master_addr, "alpha"), "master %s", r.master_addr);

    /* A step on part of the allocation: salloc -N 4 (gpu[01-04]), then srun -w gpu[03-04] -n 2 -N 2; the
     * task on gpu04.  Variables as Slurm writes them (SchedMD/slurm commit
     * 284c3b95f08a2dc2478499837b03355e1b9c5c75, src/common/env.c: env_array_for_step keeps the job's
     * SLURM_JOB_NODELIST (append only) and sets SLURM_STEP_NODELIST, SLURM_STEP_NUM_NODES/TASKS and,
     * without srun -E, SLURM_NNODES/NTASKS to the step's; setup_env sets SLURM_NODEID, SLURM_PROCID,
     * SLURM_LOCALID, SLURM_JOB_NUM_NODES).  gpu01 runs no task of the step: a master there never answers. */
    const char *step[] = {"SLURM_JOB_NODELIST=gpu[01-04]",
                          "SLURM_JOB_NUM_NODES=4",
                          "SLURM_NODELIST=gpu[03-04]",
                          "SLURM_STEP_NODELIST=gpu[03-04]",
                          "SLURM_STEP_NUM_NODES=2",
                          "SLURM_STEP_NUM_TASKS=2",
                          "SLURM_STEP_TASKS_PER_NODE=1(x2)",
                          "SLURM_TASKS_PER_NODE=1(x2)",
                          "SLURM_NNODES=2",
                          "SLURM_NTASKS=2",
                          "SLURM_NPROCS=2",
                          "SLURM_NODEID=1",
                          "SLURM_PROCID=1",
                          "SLURM_LOCALID=0",
                          "SLURM_STEP_ID=0",
                          NULL};
    g_env = step;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.master_addr, "gpu03") && !strcmp(r.nodelist, "gpu[03-04]"), "step on gpu[03-04]: master %s list %s",
          r.master_addr, r.nodelist);
    CHECK(r.world_size == 2 && r.rank == 1 && r.nnodes == 2 && r.node_rank == 1, "step: ws %d rank %d nodes %d node %d",
          r.world_size, r.rank, r.nnodes, r.node_rank);
    /* srun -E (preserve_env): SLURM_NNODES and SLURM_NTASKS stay the allocation's, the step's own
     * SLURM_STEP_NUM_* say what the step is */
    const char *step_e[] = {"SLURM_JOB_NODELIST=gpu[01-04]",
                            "SLURM_NODELIST=gpu[01-04]",
                            "SLURM_STEP_NODELIST=gpu[03-04]",
                            "SLURM_STEP_NUM_NODES=2",
                            "SLURM_STEP_NUM_TASKS=2",
                            "SLURM_NNODES=4",
                            "SLURM_NTASKS=4",
                            "SLURM_NODEID=0",
                            "SLURM_PROCID=0",
                            "SLURM_LOCALID=0",
                            NULL};
    g_env = step_e;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && r.world_size == 2 && r.nnodes == 2 &&
              !strcmp(r.master_addr, "gpu03"),
          "srun -E step: %s ws %d nodes %d master %s", err.msg, r.world_size, r.nnodes, r.master_addr);

    /* Flags win over the environment. */
    g_env = tr;
    f.nnodes = 4;
    f.node_rank = 2;
    f.master_addr = "head";
    f.master_port = 1234;
    CHECK(rendezvous_resolve_with(&f, 2, fake_getenv, &r, &err) == 0, "%s", err.msg);
    CHECK(!strcmp(r.kind, "flags") && r.nnodes == 4 && r.node_rank == 2 && r.world_size == 8 && r.rank == 4 &&
              r.local_world_size == 2 && !strcmp(r.master_addr, "head") && r.master_port == 1234 && r.id_port == 1234,
          "%s nodes %d ws %d rank %d", r.kind, r.nnodes, r.world_size, r.rank);
    f.node_rank = 4;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE,
          "node rank >= nodes");
    /* port 0 (job_procs reads another process's --master-port unchecked) is no port to meet on */
    f.node_rank = 2;
    f.master_port = 0;
    CHECK(rendezvous_resolve_with(&f, 2, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
              strstr(err.msg, "master port 0"),
          "master port 0 accepted: %s", err.msg);

    /* A rank without the count it is a rank of: the missing variable is named, not the rank. */
    f = no_flags();
    struct {
        const char *env[4], *missing;
    } partial[] = {{{"RANK=1", NULL}, "WORLD_SIZE"},
                   {{"WORLD_SIZE=2", NULL}, "RANK"},
                   {{"WORLD_SIZE=2", "RANK=1", "LOCAL_RANK=1", NULL}, "LOCAL_WORLD_SIZE"},
                   {{"SLURM_PROCID=1", NULL}, "SLURM_NTASKS"},
                   {{"SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_NODEID=1", NULL}, "SLURM_NNODES"}};
    for (size_t i = 0; i < sizeof partial / sizeof partial[0]; i++) {
        g_env = partial[i].env;
        err.msg[0] = '\0';
        CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) != 0 && err.code == IB_EXIT_USAGE &&
                  strstr(err.msg, partial[i].missing),
              "%s alone: want a usage error naming %s: '%s'", partial[i].env[0], partial[i].missing, err.msg);
    }

    /* Two launchers' variables (srun torchrun): torchrun's are followed and Slurm's named as
     * ignored; flags over a launcher's the same; one launcher alone, no note. */
    const char *both[] = {"WORLD_SIZE=2",   "RANK=1",         "MASTER_ADDR=h0",        "TORCHELASTIC_RUN_ID=j",
                          "SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURM_JOB_NODELIST=h0", NULL};
    g_env = both;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && !strcmp(r.kind, "torchrun") &&
              strstr(r.note, "SLURM") && strstr(r.note, "torchrun"),
          "torchrun and Slurm: %s, note '%s'", r.kind, r.note);
    g_env = tr;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && !r.note[0], "torchrun alone: note '%s'",
          r.note);
    g_env = sl2;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && !r.note[0], "Slurm alone: note '%s'", r.note);
    g_env = both;
    f.nnodes = 1;
    CHECK(rendezvous_resolve_with(&f, 1, fake_getenv, &r, &err) == 0 && !strcmp(r.kind, "flags") &&
              strstr(r.note, "WORLD_SIZE") && strstr(r.note, "SLURM"),
          "flags over both: %s, note '%s'", r.kind, r.note);

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("measure_rendezvous: all checks passed\n");
    return failures ? 1 : 0;
}
