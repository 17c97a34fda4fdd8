/* bench: what `instbench measure` is made of.  Step statistics, the host data pipeline, the timed
 * training loop over one or more data-parallel ranks, system facts, rendezvous settings, the
 * workload fingerprint and the result JSON (schemas/result-v1.json).  Owned by measure. */
#ifndef INSTBENCH_BENCH_H
#define INSTBENCH_BENCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "instbench/backend.h"
#include "instbench/comm.h"
#include "instbench/util.h"

/* ---- stats.c: summary of per-step times ------------------------------------------------------ */
typedef struct bench_stats {
    double median, p10, p90, mean, stdev, cv; /* cv = stdev / mean (sample stdev, n-1) */
} bench_stats;

/* Percentiles by linear interpolation between order statistics (numpy's default "linear"). */
int stats_compute(const double *x, size_t n, bench_stats *out);
double stats_percentile(const double *sorted, size_t n, double q); /* q in [0,100] */
double stats_median(const double *x, size_t n);                    /* copies, does not reorder x */

/* ---- datapipe.c: PyTorch's FakeDataset on worker threads -------------------------------------- */
/* Every batch is new: images N(0,1) float32 [B,3,H,W] and labels uniform in [0, classes), made by
 * `workers` threads into one of two buffers while the consumer holds the other (double
 * buffering), so the consumer waits only when the producers are slower than the step. */
typedef struct bench_datapipe bench_datapipe;

/* Slots from backend->ops->host_alloc where it has one (pinned memory for cuda), so set_inputs
 * copies straight from them; backend NULL or without it: malloc.  Destroy before the backend. */
int datapipe_create(int batch, int channels, int img_size, int num_classes, int workers, uint64_t seed,
                    ib_backend *backend, bench_datapipe **out, ib_error *err);
/* Blocks until a batch is ready; *wait_s is the time spent waiting (the exposed data time).
 * The batch stays valid until datapipe_release(). */
int datapipe_acquire(bench_datapipe *p, const float **images, const int32_t **labels, double *wait_s, ib_error *err);
void datapipe_release(bench_datapipe *p);
/* From now on datapipe_throughput counts only the batches finished after this call: the runner
 * marks the timed window's start, so the pipeline's rate and the step's are of the same interval. */
void datapipe_mark(bench_datapipe *p);
/* Samples/s the producers sustained while busy (batches made x batch / busy wall time), since the
 * mark when batches have been finished since it, else since the start. */
double datapipe_throughput(const bench_datapipe *p);
void datapipe_destroy(bench_datapipe *p);

/* One batch of the same distribution made synchronously (the --data device mode on CPU, where the
 * device is the host: made once, outside the timed loop, like inputs made on the accelerator). */
void datapipe_fill(float *images, int32_t *labels, size_t n_pixels, int batch, int num_classes, uint64_t seed);

/* ---- runner.c: warm-up and the timed window --------------------------------------------------- */
/* The automatic warm-up (--warmup not given): until the step time settles, at least MIN steps, at
 * most MAX. */
enum { BENCH_WARMUP_MIN = 3, BENCH_WARMUP_MAX = 30 };
typedef enum bench_data_mode { BENCH_DATA_HOST = 0, BENCH_DATA_DEVICE = 1 } bench_data_mode;

/* A sample of the machine's CPU time (sysinfo.c, job_procs.c). */
#define BENCH_JOB_PEERS_MAX 64
typedef struct bench_cpu_sample {
    double wall_s, busy_s, steal_s, self_s;
    double peers_s; /* CPU time of the job's other processes here (peer[]), summed */
    int ok;
    int npeers;
    struct {
        int pid;
        unsigned long long started; /* its start time: a pid reused is not the peer */
        double cpu_s;
    } peer[BENCH_JOB_PEERS_MAX];
} bench_cpu_sample;

typedef struct bench_run_config {
    ib_train_config train;         /* per-rank config (threads already divided between ranks) */
    const ib_backend_ops *backend; /* backend_find(name); its create makes every rank's backend */
    int ranks;                     /* data-parallel ranks in this process */
    bench_data_mode data;
    int workers;                 /* data-pipeline threads per rank */
    int warmup;                  /* fixed warm-up steps, or -1: until the step time settles */
    int steps;                   /* timed steps, or 0 when duration_s is used */
    double duration_s;           /* timed window when steps == 0 */
    int min_steps;               /* with duration_s: at least this many timed steps */
    int progress;                /* 1: progress line on stderr */
    int color;                   /* progress in colour */
    int markers;                 /* 1: print "instbench: timed window start/end" lines on stderr */
    volatile sig_atomic_t *stop; /* set asynchronously (SIGINT/SIGTERM): stop at the next step */
    /* Optional: "key=value" lines of what every process of a multi-process job must be given alike
     * (the workload fingerprint's fields, steps, warm-up, seed); the rendezvous compares them. */
    const char *workload_id;
    /* Optional (NULL: this process is the whole job).  With the cuda backend the ranks average
     * over NCCL: world_size, rank (this process's first global rank), local_rank (its first GPU)
     * and master_addr/master_port (the NCCL id rendezvous) are used from it. */
    const struct bench_rendezvous *rdv;
    /* Optional: called once, on this process's first rank, after a completed timed window (never
     * after an interruption or a failure) with its backend still alive and the job's
     * communication already closed: measure's checkpoint timing (checkpoint.c). */
    void (*after_window)(void *user, ib_backend *b);
    void *after_user;
} bench_run_config;

enum { BENCH_ALLREDUCE_SIZES = 8, BENCH_ALLREDUCE_WARMUP = 2, BENCH_ALLREDUCE_ITERS = 20 };
typedef struct bench_result {
    int warmup_steps, steps;
    double duration_s;         /* wall time of the timed window (rank 0) */
    double samples_per_second; /* global: steps x global batch / duration */
    double samples_per_second_per_device;
    bench_stats step_time;            /* rank 0, seconds */
    double data_s, compute_s, comm_s; /* per-step medians, rank 0 */
    double first_loss, last_loss;     /* rank 0, first warm-up step and last timed step */
    double pipeline_sps;              /* data pipeline capacity (all ranks), 0 when not measured */
    int drift;                        /* 1 when the second half of the window is >10% slower */
    int interrupted;                  /* stopped by *stop: nothing should be written */
    /* After the window, on the run's own communicator (NCCL, or the in-process comm) when it has
     * more than one rank: allreduces over a size sweep up to the gradient (DDP's 25 MiB buckets
     * and the whole gradient among them), timed as nccl-tests times them (bench_time_allreduce),
     * each time averaged over the ranks. */
    size_t n_allreduce;
    struct {
        double bytes, time_s;
    } allreduce[BENCH_ALLREDUCE_SIZES];
    /* multi-node runs over the backend's own comm: the transport NCCL chose between the nodes
     * (nccl_net.c), "" when not a multi-node run */
    char network[16], nccl_net[64];
    /* rank 0's backend after the run (every rank issues the same GEMMs): hardware.gemm */
    int have_gemm_paths;
    ib_gemm_paths gemm_paths;
    /* the machine's CPU at the timed window's start and end (sysinfo_cpu_sample_job): the host
     * load over the window, the job's other processes here subtracted */
    bench_cpu_sample load_start, load_end;
} bench_result;
/* nccl-tests' definitions (its PERFORMANCE.md): algbw = bytes / time; for an allreduce over n
 * ranks busbw = algbw x 2(n-1)/n, in GB/s (10^9 bytes per second, as nccl-tests prints). */
double bench_algbw_gbps(double bytes, double time_s);
double bench_allreduce_busbw_gbps(double bytes, double time_s, int world_size);
/* One size of the allreduce sweep on this rank, as nccl-tests' BenchTime (src/common.cu) times it:
 * BENCH_ALLREDUCE_WARMUP allreduces each waited for, a barrier so that every rank starts together,
 * then BENCH_ALLREDUCE_ITERS allreduces queued back to back and one wait (SYNC: the backend's
 * synchronize) for all of them; *time_s = that host time / BENCH_ALLREDUCE_ITERS.  Every rank calls
 * it; the caller averages the ranks' times (comm->mean_host), as nccl-tests does. */
int bench_time_allreduce(ib_comm *comm, int (*sync)(void *ctx, ib_error *err), void *ctx, float *buf, size_t count,
                         double *time_s, ib_error *err);

int bench_run(const bench_run_config *cfg, bench_result *out, ib_error *err);

/* Settled when the last 3 steps' times are within 10% of their median (used for --warmup auto). */
int bench_warmup_settled(const double *times, size_t n);

/* ---- probe.c: measure --dry-run's time estimate ----------------------------------------------- */
typedef struct bench_probe {
    int batch;                 /* the batch the step was timed at (at most the run's) */
    double forward_backward_s; /* forward + backward at that batch: grows with the batch */
    double optimizer_s;        /* the optimizer step: one pass over the parameters, any batch */
} bench_probe;
/* One real training step of TRAIN (its backend OPS, model, precision, optimizer, threads and
 * device) timed after a warm-up step (the fastest of 3 when a step takes under a second), at
 * batch 1, then x8 while a step takes under TARGET_S (at most 4 rounds, never past TRAIN's
 * batch).  Inputs are made once, as --data device does.
 * -1 with ERR when the model cannot be built or run, or STOP was raised. */
int bench_probe_step(const ib_backend_ops *ops, const ib_train_config *train, double target_s,
                     const volatile sig_atomic_t *stop, bench_probe *out, ib_error *err);
typedef struct bench_estimate {
    double step_s;    /* forward_backward_s x batch / probe batch + optimizer_s */
    int warmup_steps; /* --warmup, else BENCH_WARMUP_MIN */
    int timed_steps;  /* --steps, else max(min_steps, ceil(duration_s / step_s)) */
    double total_s;   /* (warmup_steps + timed_steps) x step_s, at least warm-up + duration_s */
} bench_estimate;
/* The run's time from probe P: WARMUP -1 automatic, STEPS 0 when DURATION_S (with MIN_STEPS)
 * sets the window.  Pure arithmetic (docs/usage.md, --dry-run). */
void bench_estimate_run(const bench_probe *p, int batch, int warmup, int steps, double duration_s, int min_steps,
                        bench_estimate *out);

/* ---- checkpoint.c: one checkpoint of the training state, timed ------------------------------ */
typedef struct bench_checkpoint {
    int measured;    /* 1: the figures below hold */
    uint64_t bytes;  /* written: checkpoint_state_bytes of the run */
    double write_s;  /* fetching every block (device-to-host included), writing, fsync */
    double read_s;   /* reading the file back after dropping its cached pages (best effort) */
    char dir_fs[32]; /* the directory's file system (statfs f_type): "ext4", "tmpfs", "nfs", ... */
} bench_checkpoint;

/* The bytes one checkpoint holds: fp32 weights + Adam's m and v (12 per parameter), + the bf16
 * working copy under bf16 (2 more). */
uint64_t checkpoint_state_bytes(uint64_t params, ib_precision precision);
/* --checkpoint-dir before the run: an existing, writable directory (IB_EXIT_USAGE otherwise). */
int checkpoint_check_dir(const char *dir, ib_error *err);
/* Writes B's state to a new file in DIR with fsync, reads it back, removes it, and fills OUT.
 * 0 measured; 1 stopped by *STOP (nothing left behind); -1 not measured, ERR says why (too little
 * free space, an I/O error): the run's figures stand without it. */
int checkpoint_measure(ib_backend *b, const char *dir, volatile sig_atomic_t *stop, bench_checkpoint *out,
                       ib_error *err);
/* From a signal handler about to let the process die: removes the file being written, if any. */
void checkpoint_remove_pending(void);
/* DIR's file system by name (statfs f_type), "0x<magic>" for one the list lacks, "unknown". */
void checkpoint_fs_name(const char *dir, char *out, size_t n);

/* ---- sysinfo.c ----------------------------------------------------------------------------- */
typedef struct bench_gpu {
    char name[128];
    uint64_t memory_bytes;
    char compute_capability[16]; /* "9.0" */
} bench_gpu;

typedef struct bench_sysinfo {
    char hostname[256];
    char cpu_model[256];
    int vcpus;
    uint64_t memory_bytes, memory_available_bytes;
    char os[256], kernel[256];
    double loadavg1;
    char onednn_version[64], onednn_isa[64]; /* isa: "avx512_core_amx"; aarch64: "sve_256", "asimd" */
    char onednn_isa_source[16];              /* "runtime" | "env" */
    char onednn_max_isa_env[64];             /* ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA value, "" unset */
    int gpu_count;
    bench_gpu gpus[16];
    char driver[64], cuda[32], nccl[32]; /* "" when unknown */
} bench_sysinfo;

/* Never fails: unknown facts stay empty/0.  GPUs through NVML when libnvidia-ml can be loaded. */
void sysinfo_collect(bench_sysinfo *out);
/* The GPUs as the backend that will run sees them (ops->device_describe), replacing NVML's list:
 * NVML ignores CUDA_VISIBLE_DEVICES and reports a MIG-partitioned board whole, so its count and
 * memory size the ranks and the batch wrongly.  Backends without device_describe change nothing. */
void sysinfo_gpus_from_backend(bench_sysinfo *s, const ib_backend_ops *ops);
/* Only the onednn_* fields (cheap: no files, no GPU library; `instbench --version`). */
void sysinfo_onednn(bench_sysinfo *out);
/* An Arm CPU's name from /proc/cpuinfo's text (its first "CPU implementer" and "CPU part": "ARM
 * Neoverse-V2" on Graviton4 and Grace), "" when the text has neither (x86's has "model name"). */
void sysinfo_arm_cpu_model(const char *cpuinfo, char *out, size_t out_len);

/* Who else used the machine during the timed window (sampled at its start and end by the runner,
 * bench_result.load_*): CPU time of the whole machine (/proc/stat), of this process (getrusage)
 * and of the job's other processes here (job_procs.c).  Shares are of wall x vCPUs; -1 unknown. */
void sysinfo_cpu_sample(bench_cpu_sample *out);
/* The same, with the CPU time of this job's other processes on this machine (peers_s): BEFORE
 * NULL finds them (job_procs.c says how), else BEFORE's are read again. */
void sysinfo_cpu_sample_job(bench_cpu_sample *out, const struct bench_rendezvous *rdv, const bench_cpu_sample *before);
/* others: the machine's CPU less this process's and its job's, between the two samples. */
void sysinfo_host_load(const bench_cpu_sample *before, const bench_cpu_sample *after, int vcpus, double *others_share,
                       double *steal_share);

/* ---- rendezvous.c ----------------------------------------------------------------------- */
typedef struct bench_rendezvous {
    /* "none" | "torchrun" (a real torchrun: TORCHELASTIC_RUN_ID set) | "env" (WORLD_SIZE/RANK with
     * no launcher behind them: Kubeflow PyTorchJob, Volcano, a script) | "kubeflow-trainer"
     * (Trainer v2's PET_* only) | "slurm" | "flags" */
    char kind[24];
    int nnodes, node_rank;
    int world_size, rank, local_rank, local_world_size;
    char master_addr[256];
    int master_port;
    int id_port;        /* where global rank 0 serves the NCCL unique id: master_port, or the next
                           * one where torchrun's own store already listens on master_port */
    char nodelist[512]; /* Slurm: the step's node list (SLURM_STEP_NODELIST, else the job's), "" otherwise */
    double timeout_s;   /* how long the processes wait for each other there (--rendezvous-timeout) */
    char note[320];     /* "" or which launcher's variables are followed when another's are set too */
} bench_rendezvous;

/* The rendezvous's limit without --rendezvous-timeout: long enough for the slowest node of a job
 * to load its libraries and plan its memory, short enough that a node that never comes ends the job. */
#define BENCH_RENDEZVOUS_TIMEOUT_S 600.0

typedef struct bench_rendezvous_flags {
    int nnodes, node_rank, master_port; /* -1 when not given */
    const char *master_addr;            /* NULL when not given */
    double timeout_s;                   /* <= 0 when not given (BENCH_RENDEZVOUS_TIMEOUT_S) */
} bench_rendezvous_flags;

/* Whether the argument after A on a `measure` command line is A's value, as measure's parser reads
 * it: cmd/ hands bench the parser's answer before measuring (bench may not depend on cmd/), so that
 * another process's flags (job_procs.c, /proc/PID/cmdline) are read as that process read them.
 * Unset (NULL): only the rendezvous flags are known to take one. */
void bench_measure_value_follows(int (*fn)(const char *a));

/* Resolution order: flags (when any is given), torchrun's variables (WORLD_SIZE or RANK set; "torchrun"
 * when torchrun itself started the process, "env" otherwise), Kubeflow Trainer v2's PET_* (PET_NNODES
 * set, no WORLD_SIZE), Slurm env (SLURM_PROCID set), else none.  `ranks` is the in-process rank count (--ranks).  Invalid or
 * inconsistent values are usage errors. */
int rendezvous_resolve(const bench_rendezvous_flags *flags, int ranks, bench_rendezvous *out, ib_error *err);
/* Whether HOST (rank 0's MASTER_ADDR) names this machine: 1 yes, 0 no (no address of it can be
 * bound here), -1 cannot tell (it does not resolve).  SHOWN gets the addresses it resolved to. */
int rendezvous_master_here(const char *host, char *shown, size_t shown_len);
/* A warning when R is the job's rank 0 with other processes (RANKS its own) and MASTER_ADDR is
 * not this machine: the others would look for rank 0 elsewhere while it waits out its limit. */
void rendezvous_check_master(const bench_rendezvous *r, int ranks);
/* Same, reading variables through `getenv_fn` (tests). */
int rendezvous_resolve_with(const bench_rendezvous_flags *flags, int ranks, const char *(*getenv_fn)(const char *name),
                            bench_rendezvous *out, ib_error *err);

/* ---- nccl_net.c: the network NCCL chose, from NCCL's own log --------------------------------- */
typedef struct bench_nccl_log {
    char dir[256], path[300];
    int active;
} bench_nccl_log;
/* Before the first NCCL call of a multi-node run: points NCCL's INFO log (INIT, NET) at a private
 * file, unless the user set NCCL_DEBUG or NCCL_DEBUG_FILE.  1 when armed. */
int nccl_log_begin(bench_nccl_log *l);
/* After the communicators exist: the variables unset, the log read and removed; NAME is NCCL's
 * "Using network" name ("" unknown), TRANSPORT "efa", "infiniband", "socket", "other" or "unknown". */
void nccl_log_end(bench_nccl_log *l, char *name, size_t name_len, char *transport, size_t tlen);
/* The parse alone: the last "Using network NAME" of LOG; Libfabric/OFI is "efa" only when
 * aws-ofi-nccl says it selected the efa provider. */
void nccl_net_from_log(const char *log, char *name, size_t name_len, char *transport, size_t tlen);

/* ---- fingerprint.c ---------------------------------------------------------------------- */
typedef struct bench_workload {
    vit_config model;
    ib_precision precision;
    ib_optim_config optim;
    int batch_size_per_device;
    bench_data_mode data;
} bench_workload;

/* The canonical string (one "key=value\n" per field, fixed order, after an
 * "instbench.workload/v1" line; integers in %d, mlp_ratio and the optimizer's float32
 * hyperparameters in %.9g; precision, optimizer and data by name), and its
 * SHA-256 hex (64 chars).  World size and instance never enter it: the same work on 1 or 8 GPUs
 * has one fingerprint, so `rank` compares like with like. */
void fingerprint_canonical(const bench_workload *w, char *out, size_t out_len);
void fingerprint_compute(const bench_workload *w, char out_hex[65]);

/* ---- peak.c: peak TFLOP/s for MFU ------------------------------------------------------------ */
/* Looks the GPU name up in configs/gpu-peak-flops.json (path: $INSTBENCH_GPU_PEAK_FLOPS, else
 * the source tree's configs/).  Returns 0 and fills tflops and source, -1 when unknown. */
int peak_gpu_lookup(const char *gpu_name, ib_precision p, double *tflops, char *source, size_t source_len);

/* ---- memfit.c: will a batch fit? (before allocating) ---------------------------------------- */
/* Bytes one rank needs of the memory the backend runs in: its estimate, plus the host input
 * buffers on the CPU.  IB_MEMORY_REFUSED or more when the configuration cannot run at all. */
size_t memfit_rank_bytes(const ib_backend_ops *backend, const ib_train_config *t, bench_data_mode data);
/* Device memory one GPU rank of this process can fill, before the 10% headroom: the least free
 * memory among devices [first, first + n) read after this process's context exists on each
 * (backend->device_memory_free), else their total as sysinfo knows it; less MEMFIT_NCCL_BYTES when
 * ranks average over NCCL (its channel buffers are allocated by ncclCommInit, outside the
 * backend's estimate).  0 when nothing is known. */
#define MEMFIT_NCCL_BYTES ((uint64_t)512 << 20)
uint64_t memfit_device_available(const ib_backend_ops *backend, const bench_sysinfo *sys, int first, int n,
                                 int averaging);
/* Largest per-device batch in [0, max_batch] whose `ranks` copies fit in `avail` bytes. */
int memfit_largest_batch(const ib_backend_ops *backend, ib_train_config t, bench_data_mode data, int ranks,
                         uint64_t avail, int max_batch);

/* ---- sagemaker.c: a SageMaker training job's node, from its resource config -------------------- */
typedef struct bench_sagemaker {
    char instance_type[48]; /* current_instance_type: "ml.g5.xlarge" */
    char current_host[64];  /* "algo-2" */
    char master_host[64];   /* the first of the sorted hosts: node rank 0 */
    int node_rank;          /* current_host's place among the sorted hosts */
    int nodes;              /* hosts in the job; 0: no SageMaker identity */
} bench_sagemaker;
/* /opt/ml/input/config/resourceconfig.json, or $INSTBENCH_SAGEMAKER_RESOURCE_CONFIG (tests). */
const char *sagemaker_resource_config_path(void);
/* 0: read and checked into OUT; 1: no such file (not in SageMaker); -1: the file is there but
 * refused (too big, not JSON, a field missing or of the wrong type, an instance type not ml.*,
 * current_host not among hosts), ERR naming the file and the field. */
int sagemaker_identity(bench_sagemaker *out, ib_error *err);
/* The same for the file's LEN bytes TEXT, PATH naming it in ERR: 0 or -1. */
int sagemaker_parse_config(const char *text, size_t len, const char *path, bench_sagemaker *out, ib_error *err);

/* ---- identity.c ----------------------------------------------------------------------------- */
enum { IDENTITY_MAX_DIFFERENCES = 2 }; /* accelerators, vcpus */
typedef struct bench_identity {
    char type[64], region[32], availability_zone[32], market[16]; /* "" = unknown (null) */
    char availability_zone_id[32]; /* use1-az2, from IMDS beside the zone name; "" = unknown */
    char source[16];               /* "imds" | "sagemaker" | "flag" | "unknown" */
    int count;
    bench_sagemaker sagemaker; /* nodes > 0: read from SageMaker's resource config (no IMDS there) */
    /* A type the user gave against what this run has (identity_check): 1 it contradicts it, 0 it
     * agrees or came from instance metadata (the machine itself), -1 not checked (no type, or one
     * the catalogue has no hardware for).  Each difference is one line, "vcpus: g5.12xlarge has 48,
     * this machine has 2". */
    int mismatch;
    char differences[IDENTITY_MAX_DIFFERENCES][256];
    int n_differences;
} bench_identity;
/* IMDS unless type, region and market are all given (non-NULL); flags override IMDS.  No IMDS:
 * a SageMaker training job's resource config (sagemaker.c) gives the type (ml.*) and the region
 * comes from AWS_REGION, which SageMaker sets; a refused resource config is an error.  Neither
 * (off AWS) leaves the identity unknown; an IMDS answer that fails validation (aws_imds_identity)
 * is an error naming the field. */
int identity_resolve(const char *type, const char *region, const char *market, int count, bench_identity *out,
                     ib_error *err);

/* What the catalogue states for an instance type (cmd looks it up: bench does not read prices). */
typedef struct bench_type_hardware {
    int vcpus;
    const char *accelerator; /* the catalogue's name: "A10G", "A100-80GB"; NULL or "": none */
    int accelerator_count;
    /* Every accelerator name of the catalogue: a device is the most specific of them it matches,
     * so an "NVIDIA A100-SXM4-80GB" is an A100-80GB, not an A100. */
    const char *const *known_accelerators;
    size_t n_known_accelerators;
} bench_type_hardware;
/* What this run has on this node. */
typedef struct bench_run_hardware {
    const char *backend;     /* "cpu", "cuda" */
    int accelerators;        /* devices the job drives on this node; 0 on a host backend */
    const char *device_name; /* the first of them as the backend names it ("NVIDIA A10G") */
    int vcpus;               /* online CPUs of the machine (sysinfo) */
} bench_run_hardware;
/* Checks a type given by flag against HW (NULL: the catalogue does not know the type: -1,
 * unchecked) and sets id->mismatch and id->differences; an identity from instance metadata is the
 * machine's own and never contradicts it (0).  Returns id->mismatch. */
int identity_check(bench_identity *id, const bench_type_hardware *hw, const bench_run_hardware *run);
/* The differences identity_check found, as one line in BUF: "accelerators: ...; vcpus: ...". */
const char *identity_differences_text(const bench_identity *id, char *buf, size_t n);
/* The catalogue accelerator name DEVICE is (see known_accelerators), or NULL when none fits: each
 * '-'-separated part of the name appears in DEVICE as a word, ignoring case ("L4" is not in
 * "NVIDIA L40S"); of several, the one with the most parts. */
const char *identity_device_kind(const char *device, const char *const *known, size_t n_known);

/* ---- result.c ------------------------------------------------------------------------------ */

typedef struct bench_report {
    const char *timestamp; /* ISO 8601 UTC */
    bench_identity identity;
    const bench_sysinfo *sys;
    const char *backend;
    int accelerator_count; /* GPUs per node used; 0 on CPU */
    bench_workload workload;
    size_t params;
    double train_flops_per_sample;
    int global_batch_size;
    bench_rendezvous topology;
    const bench_result *m;
    double others_share, steal_share; /* sysinfo_host_load over the run; < 0 unknown */
    double peak_tflops;               /* <= 0: unknown (null) */
    const char *peak_source;          /* NULL when unknown */
    /* The GEMM library's rate on this model's GEMM shapes, measured in situ on one device (cuda:
     * cuBLASLt, cuda/gemm_rate.h; cpu: oneDNN on all cores, the same figure as peak_tflops per
     * node), TFLOP/s: hardware.gemm_tflops_measured; <= 0 unknown (null).  gemm_devices: how many
     * such devices the job ran on (GPUs in the job; nodes on CPU), so gemm_share =
     * model_tflops / (gemm_tflops x gemm_devices). */
    double gemm_tflops;
    int gemm_devices;
    const char *cpu_bf16;                          /* CPU bf16 runs: "native" | "emulated" (cpu.h); else NULL */
    const char *attention;                         /* "cudnn" | "unfused" (backend_attention); NULL: not recorded */
    const ib_attention_library *attention_library; /* GPU: hardware.cudnn; NULL: absent (CPU) */
    int cuda_graphs;                               /* 1 forward + backward replayed as a CUDA graph, 0 not, -1 CPU */
    double hourly_cost_usd;                        /* measure --hourly-cost: USD per node-hour; 0 = not given */
    const bench_checkpoint *checkpoint;            /* NULL or not measured: "checkpoint": null */
} bench_report;

/* The run-quality warnings of a result, in the order measurement.warnings lists them: CODE is
 * what measurement.warning_codes carries (docs/formats.md lists them: cv_high, drift, mfu_over_100,
 * other_processes, steal, shared_machine, gemm_fallback), TEXT the sentence (kept as results have
 * always said it). */
enum { RESULT_MAX_WARNINGS = 7 };
typedef struct result_warning {
    const char *code;
    char text[160];
} result_warning;
size_t result_warnings(const bench_report *r, result_warning out[RESULT_MAX_WARNINGS]);

/* Builds the instbench.result/v1 document; returns a malloc'd JSON string: pretty (util_json_print's
 * layout, newline-terminated) or one line without a newline. */
char *result_to_json(const bench_report *r, int pretty);
/* Human summary (the table format). */
void result_print_summary(FILE *out, const bench_report *r, int color);
/* ---- result_save.c: where a result goes ---------------------------------------------------- */
/* instbench-results/<instance type, else hostname>-<6 random hex>-<20261122T001045.123Z>.json */
void result_default_path(const char *instance_type, const char *host, const struct timespec *when, char *out,
                         size_t len);
/* Before the run: can OUTPUT (NULL: a new file under instbench-results/; "-": stdout, nothing to
 * check) and APPEND (NULL: none) be written?  err.code IB_EXIT_USAGE for a directory or a link,
 * and unless CREATE_DIRS for a directory of OUTPUT or APPEND that does not exist (the default
 * instbench-results/ may be missing: the write makes it).  Creates nothing. */
int result_check_output(const char *output, const char *append, int create_dirs, ib_error *err);
/* Writes JSON to OUTPUT (replaced atomically, or written through a device), or with OUTPUT NULL to
 * a new default-named file, never replacing one (a taken name is retried with another random
 * part).  0: saved there.  When that fails, the result goes to a new
 * ./instbench-result-<name>.json, else in $TMPDIR or /tmp: 1, err says why the requested write
 * failed.  -1: saved nowhere.  SAVED names the file written (or attempted). */
int result_save(const char *output, const char *instance_type, const char *host, const struct timespec *when,
                const char *json, char *saved, size_t saved_len, ib_error *err);
/* ---- result_upload.c: results sent to S3 ------------------------------------------------------ */
/* OUTPUT is s3://BUCKET/KEY or an http(s) URL (which must be a presigned S3 URL).  result_check_output
 * and result_save hand such an OUTPUT to the two below. */
int result_output_is_remote(const char *output);
/* s3://: a marker object written and removed beside KEY; a URL: presigned and not expired (exit 2
 * otherwise).  Sends nothing to a presigned URL. */
int result_check_remote(const char *output, ib_error *err);
/* PUT to S3 (a KEY ending in '/', or none, gets NAME, the generated result name, under it) or to
 * the presigned URL.  0: uploaded, SAVED names where (a URL without its signature); -1: err says
 * why (result_save then keeps the result locally and returns 1). */
int result_upload(const char *output, const char *name, const char *json, char *saved, size_t saved_len, ib_error *err);
/* Appends json + '\n' to path (JSON Lines) in one write; creates missing parent directories
 * (result_check_output has refused them unless measure --create-dirs). */
int result_append_line(const char *path, const char *json, ib_error *err);

/* ---- measure_run.c: the measure command's run (src/cmd/cmd_measure.c parses its flags) -------------- */
typedef struct bench_measure_options {
    const ib_backend_ops *backend; /* NULL: a usable GPU backend, else cpu */
    model_cli model;               /* resolved and validated by bench_measure_model */
    ib_precision precision;
    ib_optimizer optimizer;
    double lr; /* <= 0: the optimizer's default */
    uint64_t seed;
    bench_data_mode data;
    int workers;     /* data-pipeline threads per rank; 0: vCPUs / local ranks */
    int cuda_graphs; /* 1: a one-rank CUDA run replays its step as a graph */
    int batch;       /* per device; 0: the largest that fits */
    int steps;       /* timed steps; 0: duration_s sets the window */
    double duration_s;
    int min_steps; /* with duration_s: at least this many timed steps */
    int warmup;    /* -1: until the step time settles */
    int ranks;     /* in this process; 0: every local GPU on a GPU backend, 1 on cpu */
    bench_rendezvous_flags rdv;
    const char *instance_type, *region, *market; /* NULL: not given */
    int count;                                   /* nodes the result stands for; 0: the run's */
    double hourly_cost;                          /* USD per node-hour; 0: not given */
    const char *output, *append;                 /* NULL: a new file in ./instbench-results/, no JSON Lines file */
    int create_dirs;
    int identity_mismatch_ok;   /* record a type that is not this machine, marked */
    int dry_run;                /* check everything, estimate the time, measure nothing */
    int checkpoint;             /* 1: time one checkpoint after the window */
    const char *checkpoint_dir; /* NULL: the result's directory */
    int format;                 /* stdout: -1 table on a terminal, else JSON; 0 table; 1 JSON */
} bench_measure_options;
/* The model CLI names, checked: -1 with a message on stderr when it names none that can be built. */
int bench_measure_model(const model_cli *cli, vit_config *model);
/* The whole measure command after its flags: checks, (dry run or) run, result.  An exit status:
 * 0, 1 (a runtime failure), 2 (refused before measuring), 130 / 143 (interrupted). */
int bench_measure(const bench_measure_options *o);

#endif
