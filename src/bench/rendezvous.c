/* rendezvous: who this process is in a data-parallel job, and on which port global rank 0 serves the
 * NCCL unique id.  Every launcher teams use is read as it documents itself:
 * - torchrun (torch.distributed.run) sets WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
 *   MASTER_ADDR/PORT and always TORCHELASTIC_RUN_ID.  With TORCHELASTIC_USE_AGENT_STORE=True its agent's
 *   TCPStore already listens on MASTER_PORT, so the id travels on the next port; with False the agent
 *   only picked a free MASTER_PORT for the workers to listen on, and the id uses it.
 * - Kubeflow's PyTorchJob and Volcano's pytorch plugin set WORLD_SIZE (the number of pods), RANK (the
 *   pod's index), MASTER_ADDR and MASTER_PORT (the port the job's service exposes) and start the
 *   container's command directly: nothing listens on MASTER_PORT, and it is the one port the job
 *   declared, so the id uses it ("env").  Each such process drives the pod's GPUs (--ranks).
 *   Kubeflow's training-operator (v1.8+, pkg/controller.v1/pytorch/envvar.go) also sets PET_NNODES
 *   (the pod count), PET_NODE_RANK (= RANK) and, when the job has nprocPerNode, PET_NPROC_PER_NODE;
 *   a numeric nprocPerNode makes WORLD_SIZE pods x nprocPerNode (processes torchrun would start),
 *   while RANK stays the pod's index: the pods, not WORLD_SIZE, are the nodes then.
 * - Kubeflow Trainer v2's torch runtime sets only PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK,
 *   PET_MASTER_ADDR, PET_MASTER_PORT (torchrun's flags as variables).  Started directly, one process
 *   per node drives its GPUs; the id uses PET_MASTER_PORT ("kubeflow-trainer").
 * - srun sets SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NNODES, SLURM_NODEID and the node
 *   lists; the master is the first host of the step's list and MASTER_PORT (default 29500) the id's
 *   port.  A step may run on a subset of the allocation (srun -w, --exclude, --relative, -N 1 in a
 *   larger job): SLURM_STEP_NODELIST, SLURM_STEP_NUM_NODES and SLURM_STEP_NUM_TASKS are the step's
 *   (src/common/env.c, env_array_for_step), SLURM_JOB_NODELIST the allocation's (its first host may
 *   run no task of the step), and srun -E keeps the allocation's SLURM_NNODES and SLURM_NTASKS.
 * - flags: --nnodes --node-rank --master-addr --master-port.
 * Parsed, checked and recorded in the result. */
#include "instbench/aws_ids.h"
#include "instbench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env_default(const char *name) { return getenv(name); }

/* Reads an integer variable; absent -> *out untouched and 0; malformed -> usage error. */
static int env_int(const char *(*get)(const char *), const char *name, long min, long max, int *out, int *present,
                   ib_error *err)
{
    const char *v = get(name);
    if (present) *present = v && v[0];
    if (!v || !v[0]) return 0;
    long x;
    if (util_parse_int(v, min, max, &x) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "environment variable %s='%s' is not an integer in [%ld, %ld]", name, v,
                            min, max);
    *out = (int)x;
    return 0;
}

/* First host of a Slurm node list: "gpu[03-05,07],cpu1" -> "gpu03"; "a,b" -> "a". */
static void slurm_first_host(const char *list, char *out, size_t out_len)
{
    size_t n = 0;
    const char *p = list;
    while (*p && *p != ',' && *p != '[' && n + 1 < out_len) out[n++] = *p++;
    if (*p == '[') {
        p++;
        while (*p && *p != '-' && *p != ',' && *p != ']' && n + 1 < out_len) out[n++] = *p++;
    }
    out[n] = '\0';
}

/* Rank 0's address as SOURCE gave it (a flag, MASTER_ADDR, the first Slurm node): a host name
 * (RFC 1123) or an IP literal, else refused; it is recorded in the result's topology and printed,
 * so a value with spaces or terminal escapes never goes further than this message. */
static int take_addr(bench_rendezvous *r, const char *v, const char *source, ib_error *err)
{
    if (!aws_host_valid(v))
        return ib_error_set(err, IB_EXIT_USAGE, "%s '%s' is not a host name or IP address (rank 0's address)", source,
                            v);
    snprintf(r->master_addr, sizeof r->master_addr, "%s", v); /* 253 bytes at most: it fits */
    return 0;
}

/* A rank given without the count it is a rank of (RANK=1 and no WORLD_SIZE): the checks below
 * would blame the rank ("rank 1 is outside [0, 1)") when the count is what is missing.  Every
 * launcher sets both; a script standing in for one may not.  ALT: a second name for the count. */
static int count_missing(const char *(*get)(const char *), const char *rank_var, int rank, const char *count_var,
                         const char *alt_var, const char *what, ib_error *err)
{
    const char *c = get(count_var), *a = alt_var ? get(alt_var) : NULL;
    if (rank < 1 || (c && c[0]) || (a && a[0])) return 0;
    return ib_error_set(err, IB_EXIT_USAGE, "%s=%d is set, but %s (%s) is not: set both, as launchers do", rank_var,
                        rank, count_var, what);
}

/* Whose variables the rendezvous follows when another launcher's are set too (`srun torchrun`, a
 * script that exports both, flags under a launcher): the order in bench.h picks one, and the
 * user is told which in R->note.  PET_* beside torchrun's are not named: torchrun inside a
 * Kubeflow Trainer pod is the documented case, and the env kind reads them itself. */
static void note_ignored(const char *(*get)(const char *), bench_rendezvous *r)
{
    const char *ws = get("WORLD_SIZE"), *rk = get("RANK"), *pet = get("PET_NNODES"), *sp = get("SLURM_PROCID");
    const int has_torch = (ws && ws[0]) || (rk && rk[0]), has_pet = pet && pet[0], has_slurm = sp && sp[0];
    const int flags = !strcmp(r->kind, "flags");
    char ignored[160] = "";
    if (flags && has_torch) strcat(ignored, ", WORLD_SIZE/RANK/MASTER_*");
    if (flags && has_pet) strcat(ignored, ", Kubeflow Trainer's PET_*");
    if (strcmp(r->kind, "slurm") && has_slurm) strcat(ignored, ", Slurm's SLURM_*");
    if (!ignored[0]) return;
    const char *used = flags                          ? "the --nnodes/--node-rank/--master-* flags"
                       : !strcmp(r->kind, "torchrun") ? "torchrun's variables (WORLD_SIZE/RANK/MASTER_*)"
                       : !strcmp(r->kind, "env")      ? "WORLD_SIZE/RANK/MASTER_*"
                                                      : "Kubeflow Trainer's PET_* variables";
    snprintf(r->note, sizeof r->note, "the rendezvous follows %s; also set and ignored: %s", used, ignored + 2);
}

static int check_topology(bench_rendezvous *r, ib_error *err)
{
    if (r->nnodes < 1) return ib_error_set(err, IB_EXIT_USAGE, "number of nodes must be >= 1");
    if (r->node_rank < 0 || r->node_rank >= r->nnodes)
        return ib_error_set(err, IB_EXIT_USAGE, "node rank %d is outside [0, %d) nodes", r->node_rank, r->nnodes);
    if (r->world_size < 1) return ib_error_set(err, IB_EXIT_USAGE, "world size must be >= 1");
    if (r->rank < 0 || r->rank >= r->world_size)
        return ib_error_set(err, IB_EXIT_USAGE, "rank %d is outside [0, %d) (world size)", r->rank, r->world_size);
    if (r->local_world_size < 1 || r->local_rank < 0 || r->local_rank >= r->local_world_size)
        return ib_error_set(err, IB_EXIT_USAGE, "local rank %d is outside [0, %d) (local world size)", r->local_rank,
                            r->local_world_size);
    if (r->world_size < r->nnodes)
        return ib_error_set(err, IB_EXIT_USAGE, "world size %d is smaller than the number of nodes %d", r->world_size,
                            r->nnodes);
    if (r->master_port < 1 || r->master_port > 65535)
        return ib_error_set(err, IB_EXIT_USAGE, "master port %d is outside [1, 65535]", r->master_port);
    return 0;
}

/* A pod of Kubeflow's training-operator started directly (no torchrun): its PET_* say what WORLD_SIZE
 * and RANK mean.  With a numeric PET_NPROC_PER_NODE, WORLD_SIZE = PET_NNODES x PET_NPROC_PER_NODE
 * counts the processes torchrun would have started and RANK is the pod's index; read as processes,
 * each pod would wait for ranks that never come.  This process drives the pod's GPUs instead, so
 * r's per-process values become per-pod (world_size = pods, rank = pod index) before the caller
 * multiplies them by ranks.  Without the variables (Volcano, an older operator) r is left as is. */
static int kubeflow_pods(const char *(*get)(const char *), int ranks, bench_rendezvous *r, ib_error *err)
{
    const char *npn = get("PET_NPROC_PER_NODE"), *nn = get("PET_NNODES");
    long n, pods = 0;
    int has_rank = 0, node_rank = r->rank;
    /* elastic jobs set PET_NNODES to "min:max": no fixed pod count there, WORLD_SIZE stays */
    if (nn && nn[0] && util_parse_int(nn, 1, 1 << 20, &pods) != 0) pods = 0;
    if (env_int(get, "PET_NODE_RANK", 0, 1 << 20, &node_rank, &has_rank, err)) return -1;
    if (!npn || !npn[0] || util_parse_int(npn, 1, 1 << 20, &n) != 0) {
        /* "auto", "gpu", none: WORLD_SIZE is the pod count the operator also gives as PET_NNODES */
        if (pods > 0) r->nnodes = (int)pods;
        if (has_rank) r->node_rank = node_rank;
        return 0;
    }
    if (!pods) pods = r->world_size / n;
    if (pods < 1 || (long)r->world_size != pods * n)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "WORLD_SIZE=%d is not PET_NNODES (%ld) x PET_NPROC_PER_NODE (%ld), as Kubeflow's "
                            "training-operator sets them",
                            r->world_size, pods, n);
    if (n != ranks)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "PET_NPROC_PER_NODE=%ld, but this process drives %d rank%s: started directly, "
                            "instbench runs one process per pod that drives all of its GPUs (--ranks %ld), "
                            "or start it under torchrun",
                            n, ranks, ranks == 1 ? "" : "s", n);
    r->nnodes = r->world_size = (int)pods;
    r->rank = r->node_rank = node_rank;
    r->local_rank = 0;
    return 0;
}

int rendezvous_resolve_with(const bench_rendezvous_flags *f, int ranks, const char *(*get)(const char *),
                            bench_rendezvous *r, ib_error *err)
{
    memset(r, 0, sizeof *r);
    if (ranks < 1) ranks = 1;
    /* One process with `ranks` threads: the single-node default every mode starts from. */
    r->nnodes = 1;
    r->world_size = r->local_world_size = ranks;
    r->master_port = 29500;
    strcpy(r->kind, "none");
    strcpy(r->master_addr, "127.0.0.1");
    r->timeout_s = f && f->timeout_s > 0 ? f->timeout_s : BENCH_RENDEZVOUS_TIMEOUT_S;

    int flags_given = f && (f->nnodes >= 0 || f->node_rank >= 0 || f->master_port >= 0 || f->master_addr);
    const char *ws = get("WORLD_SIZE"), *rk = get("RANK"), *sp = get("SLURM_PROCID"), *pet = get("PET_NNODES");
    int p, store_listens = 0;

    if (flags_given) {
        strcpy(r->kind, "flags");
        if (f->nnodes >= 0) r->nnodes = f->nnodes;
        if (f->node_rank >= 0) r->node_rank = f->node_rank;
        if (f->master_port >= 0) r->master_port = f->master_port;
        if (f->master_addr && take_addr(r, f->master_addr, "--master-addr", err)) return -1;
        r->world_size = r->nnodes * ranks;
        r->rank = r->node_rank * ranks;
    } else if ((ws && ws[0]) || (rk && rk[0])) {
        const char *run_id = get("TORCHELASTIC_RUN_ID"), *agent_store = get("TORCHELASTIC_USE_AGENT_STORE");
        const int torchrun = run_id && run_id[0];
        strcpy(r->kind, torchrun ? "torchrun" : "env");
        /* torchrun writes str(bool): "True" or "False"; an older one without the variable always
         * served its static store on MASTER_PORT */
        store_listens = torchrun && !(agent_store && !strcmp(agent_store, "False"));
        int lws = 1;
        r->world_size = 1;
        int rank_present = 0;
        if (env_int(get, "WORLD_SIZE", 1, 1 << 20, &r->world_size, &p, err) ||
            env_int(get, "RANK", 0, 1 << 20, &r->rank, &rank_present, err) ||
            env_int(get, "LOCAL_RANK", 0, 1 << 20, &r->local_rank, &p, err) ||
            env_int(get, "LOCAL_WORLD_SIZE", 1, 1 << 20, &lws, &p, err) ||
            count_missing(get, "RANK", r->rank, "WORLD_SIZE", NULL, "the job's process count", err) ||
            count_missing(get, "LOCAL_RANK", r->local_rank, "LOCAL_WORLD_SIZE", NULL, "this node's process count", err))
            return -1;
        if (!rank_present && r->world_size > 1)
            return ib_error_set(err, IB_EXIT_USAGE,
                                "WORLD_SIZE=%d is set, but RANK (this process's place in the job) is not: set both, "
                                "as launchers do",
                                r->world_size);
        int nn_present = 0, nr_present = 0;
        r->nnodes = 0;
        if (env_int(get, "NNODES", 1, 1 << 20, &r->nnodes, &nn_present, err)) return -1;
        if (!nn_present) r->nnodes = r->world_size / lws > 0 ? r->world_size / lws : 1;
        if (env_int(get, "NODE_RANK", 0, 1 << 20, &r->node_rank, &nr_present, err)) return -1;
        if (!nr_present && env_int(get, "GROUP_RANK", 0, 1 << 20, &r->node_rank, &nr_present, err)) return -1;
        if (!nr_present) r->node_rank = r->rank / lws;
        if (env_int(get, "MASTER_PORT", 1, 65535, &r->master_port, &p, err)) return -1;
        const char *ma = get("MASTER_ADDR");
        if (ma && ma[0] && take_addr(r, ma, "MASTER_ADDR", err)) return -1;
        if (!torchrun && kubeflow_pods(get, ranks, r, err)) return -1;
        /* In-process ranks multiply each process's share. */
        r->world_size *= ranks;
        r->rank *= ranks;
        r->local_rank *= ranks;
        r->local_world_size = lws * ranks;
    } else if (pet && pet[0]) {
        strcpy(r->kind, "kubeflow-trainer");
        if (env_int(get, "PET_NNODES", 1, 1 << 20, &r->nnodes, &p, err) ||
            env_int(get, "PET_NODE_RANK", 0, 1 << 20, &r->node_rank, &p, err) ||
            env_int(get, "PET_MASTER_PORT", 1, 65535, &r->master_port, &p, err))
            return -1;
        /* "auto", "cpu", "gpu" let torchrun count; a number must be what this process drives, or
         * the nodes would not agree on the world size */
        const char *npn = get("PET_NPROC_PER_NODE");
        long n;
        if (npn && npn[0] && util_parse_int(npn, 1, 1 << 20, &n) == 0 && n != ranks)
            return ib_error_set(err, IB_EXIT_USAGE,
                                "PET_NPROC_PER_NODE=%ld, but this process drives %d rank%s: started directly, "
                                "instbench runs one process per node that drives all of its GPUs (--ranks %ld), "
                                "or start it under torchrun",
                                n, ranks, ranks == 1 ? "" : "s", n);
        const char *ma = get("PET_MASTER_ADDR");
        if (ma && ma[0] && take_addr(r, ma, "PET_MASTER_ADDR", err)) return -1;
        r->world_size = r->nnodes * ranks;
        r->rank = r->node_rank * ranks;
    } else if (sp && sp[0]) {
        strcpy(r->kind, "slurm");
        int ntasks = 1, nodeid = 0, localid = 0, tpn = 0, step_tasks = 0, step_nodes = 0;
        if (env_int(get, "SLURM_PROCID", 0, 1 << 20, &r->rank, &p, err) ||
            env_int(get, "SLURM_NTASKS", 1, 1 << 20, &ntasks, &p, err) ||
            env_int(get, "SLURM_LOCALID", 0, 1 << 20, &localid, &p, err) ||
            env_int(get, "SLURM_NNODES", 1, 1 << 20, &r->nnodes, &p, err) ||
            env_int(get, "SLURM_NODEID", 0, 1 << 20, &nodeid, &p, err) ||
            env_int(get, "SLURM_STEP_NUM_TASKS", 1, 1 << 20, &step_tasks, &p, err) ||
            env_int(get, "SLURM_STEP_NUM_NODES", 1, 1 << 20, &step_nodes, &p, err) ||
            count_missing(get, "SLURM_PROCID", r->rank, "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "the task count",
                          err) ||
            count_missing(get, "SLURM_NODEID", nodeid, "SLURM_NNODES", "SLURM_STEP_NUM_NODES", "the node count", err))
            return -1;
        /* the step's counts over the allocation's (srun -E leaves those as the job's) */
        if (step_tasks) ntasks = step_tasks;
        if (step_nodes) r->nnodes = step_nodes;
        /* SLURM_NTASKS_PER_NODE may read "4" or "4(x2)"; only a plain number is used. */
        const char *tpn_s = get("SLURM_NTASKS_PER_NODE");
        long t;
        if (tpn_s && util_parse_int(tpn_s, 1, 1 << 20, &t) == 0) tpn = (int)t;
        if (tpn == 0) tpn = ntasks / r->nnodes > 0 ? ntasks / r->nnodes : 1;
        r->node_rank = nodeid;
        const char *nl = get("SLURM_STEP_NODELIST"), *nl_name = "SLURM_STEP_NODELIST";
        if (!nl || !nl[0]) nl = get("SLURM_JOB_NODELIST"), nl_name = "SLURM_JOB_NODELIST";
        if (!nl || !nl[0]) nl = get("SLURM_NODELIST"), nl_name = "SLURM_NODELIST";
        if (nl && nl[0]) {
            snprintf(r->nodelist, sizeof r->nodelist, "%s", nl);
            char first[sizeof r->master_addr];
            slurm_first_host(nl, first, sizeof first);
            const char *ma = get("MASTER_ADDR"); /* given, it is the address: the list's first host is not used */
            char source[64];
            snprintf(source, sizeof source, "%s's first host", nl_name);
            if (!(ma && ma[0]) && take_addr(r, first, source, err)) return -1;
        }
        const char *ma = get("MASTER_ADDR");
        if (ma && ma[0] && take_addr(r, ma, "MASTER_ADDR", err)) return -1;
        if (env_int(get, "MASTER_PORT", 1, 65535, &r->master_port, &p, err)) return -1;
        r->world_size = ntasks * ranks;
        r->rank = r->rank * ranks;
        r->local_rank = localid * ranks;
        r->local_world_size = tpn * ranks;
    }
    if (check_topology(r, err)) return -1;
    note_ignored(get, r);
    if (store_listens && r->master_port == 65535)
        return ib_error_set(
            err, IB_EXIT_USAGE,
            "MASTER_PORT=65535 is torchrun's store; the NCCL id needs the next port, and there is none");
    r->id_port = store_listens ? r->master_port + 1 : r->master_port;
    return 0;
}

int rendezvous_resolve(const bench_rendezvous_flags *flags, int ranks, bench_rendezvous *out, ib_error *err)
{
    return rendezvous_resolve_with(flags, ranks, env_default, out, err);
}
