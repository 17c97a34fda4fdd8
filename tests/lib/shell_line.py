"""An instbench command line as the docs write it, read as the shell and a launcher would run it:
which words before `instbench` are environment assignments and a launcher (torchrun, srun), what
that launcher exports to its first process, and what a command that needs a GPU may say instead of
running (readme_examples, cli_doc_commands)."""
import re

# What a command that needs a GPU (the CUDA backend, data parallelism across processes), or more
# memory than this machine has, says with exit 2 where it cannot run.
NEEDS_GPU = re.compile(r"backend 'cuda' is not available|cross-process data parallelism needs the NCCL comm|"
                       r"needs about [0-9.]+ GiB but [0-9.]+ GiB is available")
LAUNCHERS = ("torchrun", "srun")


def launcher_flags(words):
    """--flag value pairs of a launcher's command line (flags without a value map to "")."""
    opts, k = {}, 0
    while k < len(words):
        if words[k].startswith("--"):
            name, eq, value = words[k].partition("=")
            has_value = not eq and k + 1 < len(words) and not words[k + 1].startswith("--")
            opts[name] = value if eq else words[k + 1] if has_value else ""
            k += 2 if has_value else 1
        else:
            k += 1
    return opts


def launcher_env(launcher, opts):
    """What LAUNCHER (with its flags OPTS) exports to the first process it starts."""
    if launcher == "torchrun":   # the process of local rank 0 on the node --node-rank names
        nnodes, per = int(opts.get("--nnodes", 1)), int(opts.get("--nproc-per-node", 1))
        node = int(opts.get("--node-rank", 0))
        return dict(WORLD_SIZE=str(nnodes * per), RANK=str(node * per), LOCAL_RANK="0", LOCAL_WORLD_SIZE=str(per),
                    GROUP_RANK=str(node), MASTER_ADDR=opts.get("--master-addr", "127.0.0.1"),
                    MASTER_PORT=opts.get("--master-port", "29500"))
    if launcher == "srun":       # task 0 of the job
        nnodes, per = int(opts.get("--nodes", 1)), int(opts.get("--ntasks-per-node", 1))
        return dict(SLURM_PROCID="0", SLURM_NTASKS=str(nnodes * per), SLURM_NNODES=str(nnodes), SLURM_NODEID="0",
                    SLURM_LOCALID="0", SLURM_NTASKS_PER_NODE=str(per), SLURM_JOB_NODELIST=f"node[0-{nnodes - 1}]")
    return {}


def instbench_words(words):
    """(env, args) of a shell command line's WORDS whose command is instbench (or .../instbench):
    ENV what its environment assignments and launcher give it, ARGS the words after `instbench`;
    None when instbench is not the command (`install -m 755 build/instbench ...`)."""
    env, k = {}, 0
    while k < len(words) and re.match(r"^[A-Z_][A-Z0-9_]*=", words[k]):
        name, value = words[k].split("=", 1)
        env[name] = value
        k += 1
    start = next((i for i in range(k, len(words)) if words[i] == "instbench" or words[i].endswith("/instbench")), None)
    if start is None or (start > k and words[k] not in LAUNCHERS):
        return None
    if start > k:
        env.update(launcher_env(words[k], launcher_flags(words[k + 1:start])))
    return env, words[start + 1:]
