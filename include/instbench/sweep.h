/* sweep: `instbench sweep plan|run|status|cleanup` launches candidate configurations on EC2,
 * measures each, collects the results from S3, terminates everything and ranks (issue 23).
 *
 * Deciding apart from doing:
 *   src/sweep/candidates.c  "[Nx]TYPE[:on-demand|spot]" specs, checked against the catalogue
 *   src/sweep/plan.c        a pure function: candidates + prices + AMIs + bounds -> launch lines,
 *                           worst-case cost, the verdict against --max-cost
 *   src/sweep/userdata.c    the instance's script (src/sweep/userdata.sh, embedded at build time)
 *                           rendered with presigned URLs only, never a credential, <= 16 KB
 *   src/sweep/state.c       $XDG_STATE_HOME/instbench/sweeps/<id>.json, written atomically,
 *                           before the first RunInstances and at every change
 *   src/sweep/executor.c    the only part that talks to AWS (EC2, SSM, S3): launch, watch,
 *                           collect, terminate whatever happened
 * Every resource the sweep creates carries the tag SWEEP_TAG_SWEEP=<id>, so `sweep cleanup`
 * finds it by tag even when the state file is gone. */
#ifndef INSTBENCH_SWEEP_H
#define INSTBENCH_SWEEP_H

#include <stddef.h>
#include <time.h>

#include "instbench/aws_services.h"
#include "instbench/prices.h"
#include "instbench/util.h"

#define SWEEP_TAG_SWEEP EC2_TAG_SWEEP         /* "instbench:sweep" */
#define SWEEP_TAG_CANDIDATE EC2_TAG_CANDIDATE /* "instbench:candidate" */
#define SWEEP_ID_MAX 32                       /* "20261125-213005-9f3a" + NUL, with room */
#define SWEEP_USERDATA_MAX 16384              /* EC2's limit on user data before base64 */

/* A new sweep id: "YYYYMMDD-HHMMSS-xxxx" (UTC of `now`, 4 random hex digits).  It is a valid EC2
 * tag value, file name and S3 key segment, and sorts by start time. */
int sweep_id_new(time_t now, char out[SWEEP_ID_MAX], ib_error *err);
/* 1 when ID has that shape (what `sweep status|cleanup ID` accept), else 0. */
int sweep_id_valid(const char *id);

/* One candidate configuration: N nodes of TYPE on one market. */
typedef struct sweep_candidate {
    int nodes;               /* N of "Nx"; 1 when absent */
    char type[64];           /* "g5.xlarge" */
    int spot;                /* 1 only when ":spot" was written; no market means on-demand */
    int block;               /* 1 when ":capacity-block" was written: launched into the Capacity Block
                                of `--capacity-reservation`, whose fee the user has already paid */
    char reservation[32];    /* that block's cr-... (set once the reservation is checked) */
    char reservation_az[32]; /* its zone: the only one the candidate may launch in */
    char spec[96];           /* canonical form, the candidate tag's value: "4xg5.xlarge:spot",
                                "g5.12xlarge:on-demand" (always with its market) */
} sweep_candidate;

/* The instance's side (src/sweep/userdata.c + the template src/sweep/userdata.sh, embedded at
 * build time).  The user data is a bash script: the values below are filled in as one block of
 * single-quoted shell assignments, the rest is the template's code as shipped (its comment and
 * blank lines left out: EC2's 16 KB are for code and URLs).  It carries presigned URLs
 * only: the API has no field for a credential, and each URL is an S3 presigned one whose signature
 * proves the key without carrying the secret.  (A URL presigned with temporary credentials carries
 * the access key id and the session token as X-Amz-Credential / X-Amz-Security-Token, as every
 * presigned URL does; the secret access key is never anywhere in it.)
 *
 * Room: EC2 takes at most SWEEP_USERDATA_MAX bytes, and every node of a candidate gets the same
 * user data (one RunInstances call), so each node's log URL is in every node's copy.  A presigned
 * URL is ~600 bytes (~1,400 with a session token), so 64 nodes' log URLs (38 KB+) cannot fit.  The
 * renderer keeps the log URLs of the lowest launch indexes that fit, always node 0's (the result's
 * node; a build failure is the same on every node, and a failed rank makes node 0's measure fail
 * too, naming it), and drops the others; a node without a log URL says so in its own log and
 * powers off as the others do.  Only when the script with node 0's log URL alone does not fit is
 * rendering refused (the measure flags or URLs are too long). */
#define SWEEP_NODES_MAX 64 /* the largest candidate the user data is sized for */
/* The source archive's file name, beside the instbench executable (build dir, or install bindir). */
#define SWEEP_SOURCE_ARCHIVE_NAME "instbench-src.tar.gz"

typedef struct sweep_userdata_vars {
    const char *sweep_id;       /* sweep_id_valid */
    const char *candidate_spec; /* "4xg5.xlarge:spot" (logged, not interpreted) */
    int nodes;                  /* 1..SWEEP_NODES_MAX */
    double max_minutes;         /* the instance's own timer: `shutdown -h +T` set first, T =
                                       sweep_timer_minutes(M) */
    const char *region;
    const char *market;          /* "spot" | "on-demand" (logged; measure reads IMDS's) */
    const char *source_url;      /* presigned GET of the source archive */
    const char *source_sha256;   /* 64 hex digits; the script checks the download against it */
    const char *result_url;      /* presigned PUT: node 0 (launch index 0) delivers the result */
    const char *const *log_urls; /* NODES presigned PUTs, by launch index: the last 64 KiB of the
                                       log on any failure (see "Room" above for which are kept) */
    const char *rendezvous_url;  /* presigned GET of the object holding node 0's private IP, one
                                       line (multi-node only; NULL for 1 node) */
    char *const *measure_args;   /* the flags after `--`, each quoted by the renderer */
    size_t n_measure_args;
    int efa_devices; /* EFA devices each node must see before measuring (the interfaces the launch attached
                          whose type is efa or efa-only); 0: no EFA asked, no check */
} sweep_userdata_vars;

/* The script with every value filled in, shell-quoted (any byte but NUL is safe in a value), in a
 * malloc'd NUL-terminated *OUT.  Bad values (an invalid id, nodes out of range, a URL that is not
 * http(s), a digest that is not 64 hex digits, a missing log or rendezvous URL, efa_devices outside
 * 0..64) are IB_EXIT_USAGE
 * errors; a script over SWEEP_USERDATA_MAX bytes even with node 0's log URL alone is an
 * IB_EXIT_USAGE error naming its size. */
int sweep_userdata_render(const sweep_userdata_vars *v, char **out, ib_error *err);
/* How many of V's log URLs (launch indexes 0..k-1) a rendered script carries: k, or -1 with ERR
 * set when it cannot be rendered (sweep_userdata_render's errors). */
int sweep_userdata_log_nodes(const sweep_userdata_vars *v, ib_error *err);
/* The source archive the build made beside this binary (SWEEP_SOURCE_ARCHIVE_NAME next to
 * /proc/self/exe): its path and SHA-256 (lower-case hex), or an IB_EXIT_RUNTIME error that says how
 * to build it (`cmake --build BUILD --target instbench_source_archive`). */
int sweep_source_archive(char *path, size_t path_len, char sha256_hex[65], ib_error *err);
/* ---- candidates (candidates.c) -------------------------------------------------------------- */
#define SWEEP_MAX_NODES 64 /* N of "Nx": one cluster placement group's worth */
#define SWEEP_MAX_CANDIDATES 32

/* One SPEC, "[N x]TYPE[:on-demand|spot]": "4xg5.xlarge:spot", "4 x g5.xlarge" (as rank prints a
 * configuration), "g5.12xlarge" (on-demand).  TYPE must be in the price catalogue (the snapshot):
 * its hardware picks the AMI and its price bounds the cost.  IB_EXIT_USAGE with a message (and a
 * suggestion) for 0x, N > SWEEP_MAX_NODES, an unknown type or market. */
int sweep_candidate_parse(const char *spec, sweep_candidate *out, ib_error *err);
/* "on-demand", "spot" or "capacity-block": C's market as its spec, the plan and the state file spell it. */
const char *sweep_candidate_market(const sweep_candidate *c);
/* C into the JSON object O as the plan (`sweep --dry-run --json`) and the state file both write it:
 * spec, instance_type, nodes, market, and for a Capacity Block capacity_reservation(_az). */
struct cJSON;
void sweep_candidate_json(struct cJSON *o, const sweep_candidate *c);
/* One --candidates value, SPEC[,SPEC...], appended to *v (malloc'd, *n entries): a candidate whose
 * canonical spec is already there (from this value or an earlier one) is IB_EXIT_USAGE. */
int sweep_candidates_add(const char *arg, sweep_candidate **v, size_t *n, ib_error *err);

/* ---- EFA (efa.c): the network interfaces each node of a candidate gets; a pure function ------
 * AWS's recommendation (docs/usage.md, "EFA between the nodes", has the table and sources): a type
 * with one EFA interface gets one interface of type efa (EFA with ENA) on network card 0, which
 * may keep the public IPv4 address the subnet gives; a type with several (p4d: 4, p5: 32) gets an
 * ENA interface as primary (card 0, device 0), an efa-only interface on card 0 device 1 when card 0
 * takes EFA, and one efa-only interface on device 0 of each further card that takes EFA, up to the
 * type's maximum EFA interfaces.  Which card takes what is DescribeInstanceTypes' per-card
 * interface types (P6-B300: card 0 ENA only, EFA on cards 1-16); a card whose answer names none
 * takes all three.
 * An instance with more than one interface gets no public IPv4 address from EC2: the sweep then
 * gives its primary interface an Elastic IP (released at the end) so it reaches S3. */
typedef struct sweep_efa {
    int n; /* interfaces per node; 0: no EFA (launched as a single-NIC node) */
    ec2_nic nic[EC2_NICS_MAX];
    int devices;    /* EFA devices per node: interfaces of type efa or efa-only */
    int elastic_ip; /* 1: more than one interface: an Elastic IP per node */
    char why[160];  /* n == 0: why not ("one node", "g5.xlarge has no EFA", "--efa off") */
} sweep_efa;
/* The layout of NODES nodes of the type NET describes (NULL: not described), or none with the
 * reason when OFF (--efa off), one node, or a type without EFA. */
void sweep_efa_layout(const ec2_type_network *net, const char *type, int nodes, int off, sweep_efa *out);
/* "card 0: interface (primary) + efa-only; cards 1-3: efa-only" (or the reason there is none). */
void sweep_efa_text(const sweep_efa *e, char *out, size_t len);
/* The default Elastic IP quota of a region ("EC2-VPC Elastic IPs"): a plan that needs more warns. */
#define SWEEP_EIP_DEFAULT_QUOTA 5

/* ---- AMIs ---------------------------------------------------------------------------------- */
/* The image a candidate boots: NVIDIA GPU types the Deep Learning Base OSS Nvidia Driver GPU AMI
 * (the driver and CUDA installed), CPU-only types Canonical's plain Ubuntu; each the current one,
 * named by an SSM public parameter, for the type's architecture.  Ubuntu 22.04 for both (GCC 11,
 * the release the instance's build is checked against). */
typedef enum sweep_ami_kind {
    SWEEP_AMI_GPU_X86_64 = 0,
    SWEEP_AMI_GPU_ARM64,
    SWEEP_AMI_CPU_X86_64,
    SWEEP_AMI_CPU_ARM64,
    SWEEP_AMI_KINDS
} sweep_ami_kind;
/* "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id", ... */
const char *sweep_ami_parameter(sweep_ami_kind kind);
/* "x86_64" | "arm64" (as DescribeImages names an AMI's architecture) */
const char *sweep_ami_kind_arch(sweep_ami_kind kind);
/* The kind of AMI TYPE needs: NVIDIA GPU or CPU from the instance-type catalogue (instbench/
 * instance_type.h; the price catalogue's hardware for a family it lacks), the architecture from
 * EC2_ARCH (DescribeInstanceTypes' answer; NULL when EC2 was not asked) or else the catalogue;
 * *arch_source (optional) says which.  IB_EXIT_USAGE with a message for a type instbench does not
 * measure (Trainium, Inferentia, other accelerators) or whose architecture nobody knows. */
int sweep_type_ami_kind(const char *type, const char *ec2_arch, sweep_ami_kind *kind, const char **arch_source,
                        ib_error *err);

typedef struct sweep_ami {
    char id[64];      /* "ami-0abc..." ("" when not resolved) */
    char source[200]; /* the SSM parameter it came from, or "--ami" */
} sweep_ami;

/* ---- what an instance can cost at most (plan.c) ----------------------------------------------
 * When the process that started a sweep is gone, each instance is ended by its own timer only:
 * `shutdown -h +T` (shutdown(8) takes whole minutes: T = --max-minutes rounded up), which its user
 * data sets first, once the instance has booted far enough to run it.  EC2 bills from "running",
 * so the minutes before cloud-init runs the user data, and the halt after the timer, are billed
 * too: SWEEP_BOOT_ALLOWANCE_MINUTES covers both.  EC2 bills at least 60 seconds an instance.  The
 * plan's worst case, the --max-cost check and the cost of an instance whose end is not known all
 * use this one bound; the sweep's own watch still ends a candidate at --max-minutes itself. */
#define SWEEP_BOOT_ALLOWANCE_MINUTES 5
/* T: the instance's own timer, --max-minutes rounded up to whole minutes (at least 1). */
int sweep_timer_minutes(double max_minutes);
/* The most minutes one instance can be billed: T + SWEEP_BOOT_ALLOWANCE_MINUTES, at least 1. */
double sweep_billed_minutes_max(double max_minutes);

/* ---- the plan (plan.c): a pure function, no I/O ---------------------------------------------- */
typedef struct sweep_plan_input {
    const char *region;
    const sweep_candidate *cands;
    size_t n;
    const price_record *const *prices;   /* per candidate: its type's record in region, NULL: none */
    const sweep_ami *amis;               /* [SWEEP_AMI_KINDS], resolved for the kinds the candidates need */
    const sweep_ami *ami_override;       /* --ami: every candidate boots it; NULL: none */
    double max_minutes;                  /* > 0: each instance's life; every node is billed at most
                                            sweep_billed_minutes_max(max_minutes) */
    double max_cost_usd;                 /* NAN: no ceiling given (plan without --max-cost) */
    const ec2_type_network *const *nets; /* per candidate: DescribeInstanceTypes' network of its type,
                                            NULL: not asked (one node) */
    const char *const *ec2_archs;        /* per candidate: DescribeInstanceTypes' architecture of its
                                           type, NULL (or a NULL array): not asked */
    int efa_off;                         /* --efa off */
} sweep_plan_input;

typedef struct sweep_plan_line {
    sweep_candidate cand;
    sweep_ami_kind kind;
    const char *arch_source; /* "DescribeInstanceTypes" | "instance-type catalogue" */
    sweep_ami ami;
    double usd_per_node_hour; /* what one node is taken to cost an hour; NAN: unpriced */
    char price_source[160];   /* "snapshot 2026-11-21", "live 2026-11-25, highest of 4 zones" */
    int spot_at_on_demand;    /* a spot row priced at on-demand: no spot price known */
    double worst_case_usd;    /* nodes x usd_per_node_hour x sweep_billed_minutes_max / 60;
                                 NAN: unpriced */
    double spot_max_price;    /* spot rows: the MaxPrice the launch sets (usd_per_node_hour, so
                                 EC2 never bills a node-hour above what the worst case used);
                                 NAN otherwise */
    int committed;            /* a Capacity Block candidate: its fee is already paid (committed
                                           spend), so it adds nothing to the sweep's own worst case */
    sweep_efa efa;            /* the interfaces each node gets (efa.n == 0: no EFA, efa.why) */
} sweep_plan_line;

typedef enum sweep_verdict {
    SWEEP_NO_CEILING = 0, /* no --max-cost: nothing to judge */
    SWEEP_WITHIN,         /* total <= --max-cost */
    SWEEP_OVER,           /* total > --max-cost */
    SWEEP_UNPRICED        /* a line has no price: the total is unknown, never within */
} sweep_verdict;

typedef struct sweep_plan {
    sweep_plan_line *lines; /* one per candidate, in the order given (malloc'd) */
    size_t n;
    int instances; /* sum of nodes */
    double max_minutes, max_cost_usd;
    double billed_minutes_max; /* sweep_billed_minutes_max(max_minutes): what each node may cost */
    double total_usd;          /* sum of worst cases; NAN when a line is unpriced */
    sweep_verdict verdict;
    int elastic_ips; /* Elastic IPs the sweep will hold at once (EFA nodes with several
                                           interfaces): more than SWEEP_EIP_DEFAULT_QUOTA is warned of */
} sweep_plan;

/* The plan of IN: per candidate its AMI (the override, else amis[kind]; an unresolved one is an
 * error), market, price per node-hour and its source, and worst case; the total and the verdict.
 * Spot rows take the highest spot price of the region's Availability Zones (a launch may land in
 * any), capped at on-demand (spot never bills above it); with no spot price known, on-demand, said
 * so.  That price is also the spot row's MaxPrice, so what EC2 bills stays within it.  -1
 * (IB_EXIT_USAGE) for bad bounds or an AMI missing. */
int sweep_plan_build(const sweep_plan_input *in, sweep_plan *out, ib_error *err);
void sweep_plan_free(sweep_plan *p);

/* ---- before the launch (prepare.c, dry_run.c): what a plan needs from AWS --------------------
 * `sweep plan` and `sweep run` alike: credentials and the sweep's one client (the executor uses it
 * too), prices, the block of --capacity-reservation, DescribeInstanceTypes, the AMIs (SSM, or
 * --ami checked with DescribeImages), the default network, then sweep_plan_build; the DryRun per
 * candidate; `run`'s bucket.  Nothing here creates anything. */
typedef struct sweep_prepare_input {
    const char *region;
    const sweep_candidate *cands; /* --candidates, in order */
    size_t n_cands;
    prices_source source;             /* --source */
    const char *ami;                  /* --ami, NULL: SSM's current AMI per kind */
    const char *capacity_reservation; /* --capacity-reservation cr-..., NULL: none */
    double max_minutes, max_cost_usd; /* --max-minutes; --max-cost (NAN: not given) */
    int efa_off;                      /* --efa off */
} sweep_prepare_input;

typedef struct sweep_context {
    aws_credentials cred;
    aws_client *client; /* the sweep's one client: the plan's requests and the executor's */
    price_set prices;
    const price_record **per_cand; /* per candidate: its record in the region, NULL: none */
    sweep_ami amis[SWEEP_AMI_KINDS];
    sweep_ami override; /* --ami, when given */
    char vpc_id[32], sg_id[32];
    ec2_subnet *subnets; /* the default VPC's default subnets, one per zone */
    size_t n_subnets;
    sweep_plan plan;
    sweep_candidate *cands;          /* the input's candidates, the block's checked reservation filled in */
    ec2_capacity_reservation block;  /* --capacity-reservation as EC2 describes it ("" id: none) */
    ec2_type_network *nets;          /* per candidate: its type's network (DescribeInstanceTypes,
                                       multi-node candidates only; efa_supported 0 otherwise) */
    const ec2_type_network **net_of; /* per candidate: &nets[i] when asked, NULL otherwise */
    const char **ec2_arch;           /* per candidate: DescribeInstanceTypes' architecture of its type
                                       (asked for multi-node candidates and for families the
                                       instance-type catalogue lacks), NULL: not asked */
    int efa_wanted;                  /* some candidate gets EFA interfaces */
    int default_sg_efa_ready;        /* the default group already allows all traffic to and from itself */
} sweep_context;

/* Fills CTX from IN (in this order: the catalogue's refusals, credentials and client, the block,
 * prices, DescribeInstanceTypes, AMIs, the default network, the plan, the default group's rules
 * when a candidate gets EFA).  0, or -1 with err (IB_EXIT_USAGE for what the user can fix in the
 * flags, IB_EXIT_RUNTIME for AWS).  sweep_context_free either way. */
int sweep_prepare(const sweep_prepare_input *in, sweep_context *ctx, ib_error *err);
void sweep_context_free(sweep_context *ctx);

/* RunInstances with DryRun=true for each candidate of the plan (its type, count, market, AMI, EFA
 * interfaces in a default subnet with the default group, tags, shutdown behaviour), so a missing
 * permission shows before anything is spent.  dry[i] (one per candidate) gets "permitted" or AWS's
 * code.  0 when every one is permitted; -1 with err naming the action and the candidate
 * (UnauthorizedOperation: the IAM action to grant) otherwise. */
int sweep_dry_run(sweep_context *ctx, const char *region, char (*dry)[64], ib_error *err);
/* `run`'s bucket, before anything is created: HeadBucket (it exists, these credentials may use it)
 * in the sweep's REGION.  0; -1 with err: IB_EXIT_USAGE for a bucket in another region,
 * IB_EXIT_RUNTIME for one that cannot be reached (missing, denied). */
int sweep_check_bucket(sweep_context *ctx, const char *region, const char *bucket, ib_error *err);

/* ---- the sweep's state file and its execution (EXEC: state.c, executor.c, collect.c,
 * cleanup.c) ------------------------------------------------------------------------------------ */
/* S3 keys under the sweep's prefix (PREFIX ends with '/' or is ""): a candidate's key name is
 * "<index>-<spec with ':' as '-'>", e.g. "1-4xg5.xlarge-spot":
 *   PREFIX/sources/<sha256>.tar.gz                   the source archive, once (content-addressed)
 *   PREFIX/sweep-<id>/results/<name>.json            node 0's result
 *   PREFIX/sweep-<id>/logs/<name>-node<k>.log        node k's log tail on failure
 *   PREFIX/sweep-<id>/rendezvous/<index>             node 0's private IP (multi-node) */
#define SWEEP_STATE_VERSION 1

/* A candidate's outcome.  Only RESULT delivered a measurement; the rest say why not. */
typedef enum sweep_outcome {
    SWEEP_PENDING = 0, /* not launched yet */
    SWEEP_RUNNING,     /* launched, no result yet */
    SWEEP_RESULT,      /* node 0's result is in S3 (and downloaded) */
    SWEEP_FAILED,      /* a node delivered its log (build or measure failed), or ended without a result */
    SWEEP_INTERRUPTED, /* spot reclaimed (Server.SpotInstanceTermination): not a failure of the code */
    SWEEP_NO_CAPACITY, /* every zone tried answered a capacity error */
    SWEEP_TIMED_OUT,   /* --max-minutes passed without a result */
    SWEEP_NOT_RUN,     /* the sweep stopped before launching it (quota, launch error, signal) */
    SWEEP_OUTCOME_COUNT
} sweep_outcome;
const char *sweep_outcome_name(sweep_outcome o); /* "running", "no capacity", ... */

typedef struct sweep_state_candidate {
    sweep_candidate c;
    char ami[64];
    double usd_per_hour;    /* per node, the price the worst case used; NAN unknown */
    char price_source[160]; /* the plan's: "snapshot 2026-11-21", "live ..., highest of 4 zones" */
    sweep_outcome outcome;
    char reason[1024];         /* why not a result: zones tried, the log's last lines, ... */
    char placement_group[256]; /* "" for one node; recorded before it is created */
    int placement_group_deleted;
    time_t launched, ended; /* 0: not yet */
    char result_path[512];  /* the downloaded result, "" until then */
    sweep_efa efa;          /* the plan's interfaces per node (efa.n == 0: none) */
} sweep_state_candidate;

typedef struct sweep_state_instance {
    char id[32];
    int candidate;    /* index into candidates */
    int launch_index; /* the node's rank */
    char state[24];   /* EC2's state name, "unknown" until DescribeInstances answers */
    char az[32];
    char private_ip[48];
    char state_reason[64]; /* EC2's StateReason code when it ended */
    time_t launched;
    time_t ended;            /* its real end: the time EC2's StateTransitionReason gives, else
                                      when our TerminateInstances was accepted; 0 while unknown */
    time_t terminate_sent;   /* not saved: when this process's TerminateInstances took it */
    char eip_allocation[64]; /* its Elastic IP (EFA nodes with several interfaces), "" none */
    char eip_public_ip[48];
    int eip_associated, eip_released;
} sweep_state_instance;

typedef struct sweep_state {
    int version;
    char id[SWEEP_ID_MAX];
    char region[32];
    char s3_bucket[64];
    char s3_prefix[512]; /* ends with '/' or "" */
    double max_minutes, max_cost_usd;
    time_t created, finished; /* finished 0: still running (or the process died) */
    char phase[16];           /* "launching" | "watching" | "terminating" | "done" | "needs-cleanup" */
    char note[512];           /* why the sweep stopped early, "" if it did not */
    sweep_state_candidate *cand;
    size_t n_cand;
    sweep_state_instance *inst;
    size_t n_inst, cap_inst;
    /* The security group EFA candidates launch in when the default one lacks all-traffic rules to
     * and from itself: its name recorded before it is created, its id after; "" when none. */
    char sg_name[64];
    char sg_id[32];
    int sg_deleted;
    /* Not saved: set by sweep_save_or_warn when a save failed (the file on disk is then behind what
     * the sweep did), with the first failure's message.  `run` launches nothing more after it. */
    int save_failed;
    char save_error[256];
} sweep_state;

/* $XDG_STATE_HOME/instbench/sweeps (an absolute XDG_STATE_HOME; else ~/.local/state/...). */
int sweep_state_dir(char *out, size_t len, ib_error *err);
int sweep_state_path(const char *id, char *out, size_t len, ib_error *err);
/* Written whole through util_write_file_atomic: a reader never sees half a state. */
int sweep_state_save(const sweep_state *st, ib_error *err);
/* The state file's advisory lock: flock(2) on <state dir>/<ID>.lock (beside the state file, which
 * is replaced by rename at every save and so cannot carry a lock itself).  Whoever writes the state
 * file holds it: `sweep run` for its whole life, `status --refresh` and `cleanup` while they work.
 * WHO ("sweep run", ...) and the pid are written into the lock file, so a refusal can name the
 * holder.  Waits up to WAIT_S seconds for a holder to let go.  0: locked, *fd holds it (closing it,
 * or the process ending, releases it); 1: another process holds it (err names it); -1: the lock
 * file cannot be opened or created (err says why; a read-only directory, say). */
#define SWEEP_LOCK_WAIT_S 5.0
int sweep_state_lock(const char *id, const char *who, double wait_s, int *fd, ib_error *err);
void sweep_state_unlock(int fd);
/* 1 when a live process holds ID's lock (HOLDER, when given, gets "sweep run, pid 1234"), else 0. */
int sweep_state_locked(const char *id, char *holder, size_t len);
/* 1 when a live process holds ID's lock, with what the lock file records of it: WHO ("sweep run",
 * "sweep cleanup") and *PID (0: none).  The file names its last taker, so it is the holder's name
 * (a name only: the taker writes it just after taking the lock). */
int sweep_state_held_by(const char *id, char *who, size_t len, long *pid);
/* `sweep cleanup --force` on a sweep whose `sweep run` is alive (stop.c): asks that process to stop
 * as Ctrl-C does (SIGINT), so that it launches nothing more and takes its own end (everything it
 * launched terminated, its state file written) before it lets go of the lock.  The
 * pid its lock file records is only a name: the process is signalled only when it is an
 * `instbench sweep run` (its command line) that has this sweep's lock file open, and the signal
 * goes through a pidfd taken before those checks, so a pid the kernel gave to another process in
 * between is never signalled.  The signal carries SWEEP_STOP_BY_CLEANUP (sigqueue's value), so
 * the run's state file can say who stopped it.  0: signalled (*pid says whom); 1: not (err says
 * why: another holder, not such a process, not permitted, gone); *pid: the pid the file names. */
#define SWEEP_STOP_BY_CLEANUP 0x1b5ee9
int sweep_run_stop(const char *id, long *pid, ib_error *err);
/* The sweep's timings that only tests change (INSTBENCH_SWEEP_POLL_S, ..._HOLDER_WAIT_S: docs/usage.md):
 * NAME's value as seconds (0.01..86400), DFLT when unset; a bad value is warned about. */
double sweep_env_seconds(const char *name, double dflt);
/* Read back as hostile input: sizes bounded, every id, name and number checked; 1 when the file
 * does not exist (err says so), -1 for any other problem. */
int sweep_state_load(const char *id, sweep_state *st, ib_error *err);
int sweep_state_parse(const char *json, size_t len, sweep_state *st, ib_error *err);
char *sweep_state_json(const sweep_state *st); /* malloc'd; NULL when out of memory */
/* The ids of every state file, oldest first (*ids malloc'd, free with util_free_strv). */
int sweep_state_list(char ***ids, size_t *n, ib_error *err);
void sweep_state_free(sweep_state *st);
sweep_state_instance *sweep_state_add_instance(sweep_state *st, ib_error *err);
/* The sweep's own cost so far: every instance's seconds from launch to its end x its candidate's
 * price per node-hour.  An instance whose end is not known (no end from EC2) counts up to NOW but
 * never past launch + sweep_billed_minutes_max(max_minutes), the most its own shutdown timer
 * allows; those are counted in *estimated (may be NULL), instances of unknown price in *unpriced. */
double sweep_state_cost(const sweep_state *st, time_t now, size_t *unpriced, size_t *estimated);
/* "<index>-<spec with ':' as '-'>": a candidate's name in S3 keys and result files. */
void sweep_candidate_key_name(const sweep_state *st, size_t i, char *out, size_t len);

/* What `sweep run` needs besides the state (the candidates, region, S3 place and bounds live in
 * the state it is given). */
typedef struct sweep_exec_options {
    char *const *measure_args; /* the flags after `--`, already checked by measure's parser */
    size_t n_measure_args;
    const char *results_dir;       /* where results are downloaded: instbench-results/sweep-<id> */
    double poll_s;                 /* INSTBENCH_SWEEP_POLL_S, default 15 */
    double terminate_wait_s;       /* how long to wait for "terminated" at the end (default 600) */
    volatile int *stop;            /* set to the signal's number by the command's handlers */
    volatile int *stop_by_cleanup; /* set with *stop when the signal was `sweep cleanup --force`'s
                                      (SWEEP_STOP_BY_CLEANUP): the state's note names it (NULL: never) */
    const ec2_subnet *subnets;     /* the default subnets the plan found (one per zone, tried in
                                      turn on capacity errors) and its security group; NULL / "":
                                      the executor looks them up */
    size_t n_subnets;
    const char *security_group_id;
    const char *vpc_id; /* the default VPC (where an EFA security group is created) */
    aws_client *client; /* the sweep's one client (sweep_prepare's) and its credentials
                                      (for presigning); NULL: the executor makes its own */
    const aws_credentials *cred;
    double lookup_s;     /* a launch whose answer never came: how long its instances are looked
                            for by ClientToken (EC2's eventual consistency; default 60) */
    double node_grace_s; /* a node other than node 0 ended before its candidate's outcome: how long
                            node 0's result or a log may still take to arrive (default 30) */
    void (*tick)(void);  /* called at every poll (NULL: none): the command checks its outputs */
} sweep_exec_options;

/* Launches every candidate of ST, watches until each has an outcome or --max-minutes passed, and
 * then, whatever happened (a launch error, a quota, *stop), terminates every instance, waits until
 * each is confirmed terminated and deletes the placement groups.  ST is saved at every change.
 * 0: every instance confirmed terminated (the outcomes say what each candidate gave); -1 with err:
 * the sweep stopped early (quota, launch error) or something could not be confirmed terminated
 * (st->phase is then "needs-cleanup"). */
int sweep_execute(sweep_state *st, const sweep_exec_options *o, ib_error *err);

/* `sweep status --refresh`: each instance's state as EC2 says now, and every instance tagged with
 * the sweep that the file does not record (a launch whose answer or save was lost: kill -9, a
 * read-only disk) recorded from EC2's answer; saved when SAVE.  *found (may be NULL) counts those
 * newly recorded. */
int sweep_state_refresh(sweep_state *st, int save, size_t *found, ib_error *err);

/* `sweep cleanup`, and the end of `sweep run`: every instance tagged instbench:sweep=ID (ID "*":
 * any sweep) in REGION terminated and confirmed (asking EC2 every POLL_S seconds for up to WAIT_S;
 * a signal does not cut it short), then every placement group with that tag deleted.  Found by tag
 * alone, so it works when the state file is gone.  CLIENT: the caller's, or NULL for one of its
 * own.  What EC2 showed is written into STATES (the sweep's own, matched by id and region): an
 * instance one of them does not record is recorded.  *found counts the instances not already
 * terminated; 0 when everything is gone, -1 with err otherwise. */
int sweep_cleanup_region(aws_client *client, const char *region, const char *id, double wait_s, double poll_s,
                         sweep_state *states, size_t n_states, size_t *found, ib_error *err);
/* What EC2 said of instance E, found in REGION, written into whichever of STATES records it: its
 * state, reason and (when it ended) its end.  Returns 1 when one did. */
int sweep_states_note(sweep_state *states, size_t n_states, const ec2_instance *e);
/* E, found by ST's tag, recorded in ST when ST does not record it yet (its candidate from its
 * instbench:candidate tag; a candidate still "pending" becomes "running").  1 recorded, 0 already
 * there, -1 not recordable (no candidate of ST by that name, out of memory: warned). */
int sweep_state_adopt(sweep_state *st, const ec2_instance *e);

#endif
