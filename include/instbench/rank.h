/* rank: results x prices -> configurations scored in samples per dollar, time and cost to train.
 *
 * Pure module (no printing): load.c reads result files into rank_result, group.c splits them by
 * workload fingerprint and combines repeated runs of one configuration, score.c turns a
 * configuration plus a price into one row per market, filter.c/pareto.c/sort.c select and order
 * rows.  Rendering lives in output/ and report*.c.
 *
 * Money, exactly (tests recompute every one of these independently):
 *   usd_per_hour       = nodes x price per node-hour (spot: lowest AZ by default)
 *                        price per node-hour: the user's (rank --price, else the result's
 *                        measure --hourly-cost), else AWS's (live, cache, snapshot or a file)
 *   samples_per_dollar = samples_per_second x 3600 / usd_per_hour
 *   hours_to_target    = target_samples / samples_per_second / 3600
 *   cost_to_target     = hours_to_target x usd_per_hour, except on the markets bought ahead, which
 *                        answer the same question, what reaching the target costs:
 *     capacity-block:    ceil(hours_to_target / block hours) x the block's fee (each paid whole)
 *     savings-plan:      terms = ceil(hours_to_target / term hours); hours_to_target x usd_per_hour
 *                        + (terms x term hours - hours_to_target) x usd_per_hour x (1 - U), U the
 *                        --plan-utilisation the rest of the fleet gives the hours left (default 0:
 *                        the whole commitment is owed whether the nodes train or not)
 */
#ifndef INSTBENCH_RANK_H
#define INSTBENCH_RANK_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "instbench/prices.h"
#include "instbench/util.h"

/* Accepted input: "instbench.result/v1".  Throughput beyond this is treated as corrupt (it would
 * overflow the money arithmetic long before any real machine gets near it). */
#define RANK_RESULT_SCHEMA "instbench.result/v1"
#define RANK_MAX_SAMPLES_PER_SECOND 1e12
#define RANK_MIN_SAMPLES_PER_SECOND 1e-6 /* below: time to any target overflows into nonsense */
#define RANK_MAX_NODES 100000
/* A usable price per node-hour, whoever gives it (AWS, a prices file, the user's --price or
 * measure --hourly-cost): the floor keeps samples per dollar finite for any accepted throughput,
 * the ceiling is far above what any single machine costs an hour. */
#define RANK_MIN_USD_PER_HOUR 1e-6
#define RANK_MAX_USD_PER_HOUR 1e5

/* The markets bought ahead (capacity-block, savings-plan) are priced from live quotes the command
 * fetches (rank_options.blocks / .plans); a user price or a recorded one is for the first two. */
typedef enum rank_market {
    RANK_ON_DEMAND = 0,
    RANK_SPOT = 1,
    RANK_CAPACITY_BLOCK = 2,
    RANK_SAVINGS_PLAN = 3
} rank_market;
#define RANK_N_MARKETS 4
#define RANK_KEY_BYTES 32 /* SHA-256 */

/* A build of instbench (tool.revision): 40 hex digits, "-dirty" after them when its tree had
 * edits; "" unknown (results older than the field, or a value that is no revision). */
typedef struct rank_revision {
    char text[48];
} rank_revision;

/* One parsed result file (only the fields ranking needs). Strings are "" when unknown. */
typedef struct rank_result {
    char fingerprint[72];
    char model[64];
    char precision[16];
    char data[16];
    char optimizer[64];     /* workload.optimizer as "adamw lr 0.0003 wd 0.05" (wd when not 0),
                               "" when not said: a workload's fingerprint hashes it, so two groups
                               that differ only there are told apart by it */
    long batch_per_device;  /* -1 unknown */
    long global_batch;      /* -1 unknown */
    long params;            /* workload.params: model parameters, -1 unknown */
    double checkpoint_s;    /* checkpoint.write_s (measure's timed checkpoint), NAN when not measured */
    char instance_type[64]; /* "" when the run could not tell (no IMDS, no flag) */
    char host[72];          /* instance.hostname: names the machine when the type is "" */
    char region[32];
    char az[32], az_id[32]; /* the run's zone name and ID, both or neither ("" unknown): which ID
                                    a name stands for differs per account, and this pair is the
                                    measuring account's own answer */
    char market[16];        /* the market the run happened on; informational only */
    char backend[8];
    char attention[16];        /* hardware.attention: "cudnn", "unfused" ("fused" before issue 37), "" not
                                    said (CPU, older) */
    char accelerator[64];      /* devices[0].name */
    long accelerator_count;    /* per node, 0 on CPU */
    long vcpus;                /* per node, -1 unknown */
    long nodes;                /* max(topology.nodes, instance.count) */
    long measured_nodes;       /* topology.nodes: the nodes that really ran (nodes > measured_nodes:
                                    measure --count N on fewer nodes, an extrapolation) */
    double samples_per_second; /* global, > 0, finite, as measured on measured_nodes */
    int identity_mismatch;     /* instance.identity_mismatch: 1 the user kept a type that contradicts
                                    the hardware (measure --identity-mismatch ok), 0 checked, -1 unknown */
    double cv;                 /* measurement.step_time_s.cv, NAN unknown */
    char network[16];          /* topology.network.transport ("efa", "socket", ...), "" not recorded */
    double busbw_gbps;         /* communication.allreduce: busbw at the largest size <= DDP's 25 MiB
                                    bucket (else the smallest), NAN none or malformed */
    double gemm_share;         /* measurement.gemm_share: the step's share of the GEMM rate measured in
                                    situ (issue 37), NAN none or malformed */
    unsigned warnings;         /* RANK_WARN_* bits: measurement.warning_codes, or older results' texts */
    time_t timestamp;          /* 0 unknown */
    rank_revision revision;    /* the build that measured it: descriptive, never part of a key */
    double user_usd_per_hour;  /* price.usd_per_hour (measure --hourly-cost), per node; NAN none */
    rank_market user_market;   /* the market that price is for */
    /* What identifies the run (SHA-256 over fingerprint, timestamp, host, instance, nodes, backend,
     * device, samples/s, steps and duration): the same run read twice (a copy, the --append line
     * beside the file) has the same key and counts once. */
    unsigned char run_key[RANK_KEY_BYTES];
} rank_result;

/* Run-quality warnings, one bit each; rank_warning_codes[bit] is the short code results carry in
 * measurement.warning_codes and rank prints (JSON arrays, CSV joined with ';'). */
enum {
    RANK_WARN_CV_HIGH = 1u << 0,         /* step-time CV above 5% */
    RANK_WARN_DRIFT = 1u << 1,           /* step time drifted up during the window */
    RANK_WARN_MFU_OVER_100 = 1u << 2,    /* model FLOP/s above the peak: the peak or the timing is wrong */
    RANK_WARN_OTHER_PROCESSES = 1u << 3, /* other processes took CPU during the run */
    RANK_WARN_STEAL = 1u << 4,           /* hypervisor steal */
    RANK_WARN_SHARED_MACHINE = 1u << 5,  /* load average above the vCPUs before the run */
    RANK_WARN_GEMM_FALLBACK = 1u << 6,   /* GEMM shapes off cuBLASLt's algorithms or bias epilogue */
    RANK_WARN_OTHER = 1u << 7,           /* a warning this build has no code for */
    RANK_WARN_N = 8
};
extern const char *const rank_warning_codes[RANK_WARN_N];
/* Runs of one configuration whose fastest and slowest differ by more than this share of their
 * median are marked as disagreeing (the table's run-quality mark). */
#define RANK_SPREAD_LIMIT 0.10

typedef struct rank_results {
    rank_result *items;
    size_t n, cap;
    size_t files_read; /* files (or stdin) opened */
    size_t skipped;    /* files or lines rejected, each reported through on_skip */
    size_t duplicates; /* files, directories or runs reached again, ignored */
} rank_results;

/* Called once per rejected file or line: WHERE is "path" or "path:line", REASON one line. */
typedef void (*rank_skip_fn)(void *ctx, const char *where, const char *reason);

/* The other form of ZONE (a zone name <-> its ID) as the results recorded it (measure reads both
 * from instance metadata): 1 with ALT set; 0 when no result pairs ZONE; -1 when results pair it
 * differently (runs in different AWS accounts: a name means another zone in each), ALT "". */
int rank_zone_alias(const rank_results *r, const char *zone, char *alt, size_t len);

/* Parses one result document.  Returns 0 and fills OUT, or -1 with a one-line reason. */
int rank_parse_result(const char *json, size_t len, rank_result *out, char *reason, size_t reason_len);

/* 1 when NAME (a file name or an S3 key) is a result file a walk reads: *.json, *.jsonl, and
 * either gzip-compressed (*.json.gz, *.jsonl.gz). */
int rank_is_result_name(const char *name);

/* Inputs the loader does not read itself (s3://BUCKET/PREFIX/, read by cmd/cmd_rank_s3.c: rank stays
 * free of the network).  The source hands each object's bytes, already in memory, to
 * rank_sink_object (WHERE names it in messages; NAME's suffix picks .jsonl or one document, and
 * a .gz suffix decompression, its output capped at 64 MiB as the object is), or reports one that
 * cannot be read through rank_sink_skip. */
typedef struct rank_sink rank_sink;
void rank_sink_object(rank_sink *s, const char *where, const char *name, const char *data, size_t len);
void rank_sink_skip(rank_sink *s, const char *where, const char *reason);
/* The input could be read only in part (a listing that stopped after some pages): the load fails
 * with "WHERE: REASON", nothing is ranked, for a ranking of part of it would look whole. */
void rank_sink_fail(rank_sink *s, const char *where, const char *reason);
typedef void (*rank_remote_fn)(void *ctx, const char *uri, rank_sink *sink);

/* A file the command will write (-o, --plot), by device and inode, and what named it. */
typedef struct rank_written {
    unsigned long long dev, ino;
    const char *what; /* "-o FILE", ... */
} rank_written;

typedef struct rank_load_options {
    int follow;            /* follow symbolic links to directories found while walking */
    rank_remote_fn remote; /* reads "s3://" inputs; NULL: they are skipped as unreadable */
    void *remote_ctx;
    /* Files the command will replace: reading one as an input fails the load (IB_EXIT_USAGE),
     * since the ranking would overwrite a result it read. */
    const rank_written *writes;
    size_t n_writes;
} rank_load_options;

/* Loads PATHS: files (.jsonl read line by line, anything else as one JSON document or an array of
 * them; a .gz suffix means gzip-compressed, the caps applying to the decompressed bytes),
 * directories (recursively, their result files by rank_is_result_name, sorted), glob patterns the
 * shell did not expand, and "-" (stdin, one document or JSON lines).  Unreadable or invalid
 * inputs are skipped through ON_SKIP; the call itself fails only on out-of-memory.
 * Each result counts once: a file or directory reached again (same device and inode: given
 * twice, inside a directory also given, through a link) and a run read again (same run_key) are
 * ignored and counted in out->duplicates.  Symbolic links to directories met in a walk are
 * skipped (reported) unless OPT->follow; directories nest at most RANK_MAX_DEPTH deep.  It fails
 * too when an input is one of OPT->writes. */
#define RANK_MAX_DEPTH 32
int rank_load(char *const *paths, size_t n_paths, const rank_load_options *opt, rank_results *out, rank_skip_fn on_skip,
              void *ctx, ib_error *err);
void rank_results_free(rank_results *r);

/* ---- grouping ---- */

/* Results of one workload (same fingerprint).  IDX indexes the rank_results. */
typedef struct rank_group {
    char fingerprint[72];
    char model[64];
    char precision[16];
    char data[16];
    char optimizer[64];
    long batch_per_device;
    long global_batch;
    long params; /* model parameters, -1 unknown (sizes the default checkpoint) */
    size_t *idx;
    size_t n;
    time_t newest;
} rank_group;

/* Groups in order: most results first, then newest, then fingerprint (deterministic). */
int rank_group_by_workload(const rank_results *r, rank_group **groups, size_t *n_groups, ib_error *err);
void rank_groups_free(rank_group *g, size_t n);
/* Picks the group whose fingerprint starts with PREFIX (case-insensitive), or else the only group
 * whose model is named PREFIX.  No match or an ambiguous choice is a usage error naming the
 * candidates. */
int rank_group_pick(const rank_group *g, size_t n, const char *prefix, size_t *chosen, ib_error *err);

/* A configuration: NODES x INSTANCE_TYPE priced in REGION; repeated runs combined.  Without an
 * instance type (off EC2) the machine is named by its hostname. */
typedef struct rank_config {
    char instance_type[64]; /* "" unknown */
    char host[72];          /* the runs' hostname when instance_type is "", else "" */
    char region[32];        /* effective region (--region wins), "" unknown */
    long nodes;
    char accelerator[64];
    long accelerator_count; /* per node */
    long vcpus;
    char backend[8];
    char attention[16];        /* how its runs ran attention (they share it: part of the key) */
    double samples_per_second; /* median of the runs, scaled to NODES when extrapolated */
    double sps_min, sps_max;   /* the runs' extremes, scaled alike */
    size_t runs;
    long measured_nodes;   /* the fewest nodes any of its runs really ran on */
    int extrapolated;      /* 1: nodes > measured_nodes; samples/s = measured x nodes / measured_nodes
                                    (linear scaling: no communication cost assumed) */
    size_t superseded;     /* extrapolated runs left out because a real NODES-node run exists */
    int identity_mismatch; /* 1 when any run's identity contradicted its hardware */
    double cv_max;         /* the worst run's step-time CV, NAN unknown */
    double busbw_gbps;     /* multi-node: the median busbw of its runs on all its nodes, else NAN */
    double gemm_share;     /* the median gemm_share of its runs that carry one, else NAN */
    char network[16];      /* multi-node: the transport its runs on all its nodes used ("socket" if
                                    any did), "" unknown or one node */
    int socket_on_efa;     /* 1: a multi-node configuration of an EFA-capable type measured over
                                    TCP sockets (marked #: its network was not the one it pays for) */
    unsigned warnings;     /* union of the runs' RANK_WARN_* */
    /* Per market (rank_market): the hourly cost per node the runs recorded (measure
     * --hourly-cost), from the newest run that recorded one; NAN when none did. */
    double recorded_usd_per_hour[2];
    time_t recorded_as_of[2];   /* that run's timestamp */
    int recorded_prices_differ; /* 1: runs recorded different costs for one market */
    char variant[128];          /* "" unless another configuration has the same type, nodes, region */
    /* The builds its counted runs came from, distinct and sorted ("" unknown last): more than one
     * means its median mixes builds.  They live in the block rank_combine_runs allocates for the
     * configurations and are freed with it. */
    const rank_revision *revisions;
    size_t n_revisions;
} rank_config;

/* Combines the group's runs by (instance type, nodes, effective region, backend, device name):
 * a CPU run and a CUDA run on one instance type are different configurations.  Runs of an
 * unknown instance type are also kept apart by hostname, accelerator count and vCPUs, so
 * different machines never merge.  Configurations that share type, nodes and region get a
 * VARIANT ("cpu", "cuda NVIDIA A10G") for their labels. */
int rank_combine_runs(const rank_results *r, const rank_group *g, const char *region_override, rank_config **configs,
                      size_t *n_configs, ib_error *err);

/* ---- scoring ---- */

enum {
    RANK_MARKETS_ON_DEMAND = 1,
    RANK_MARKETS_SPOT = 2,
    RANK_MARKETS_BOTH = 3,
    RANK_MARKETS_BLOCK = 4,
    RANK_MARKETS_PLAN = 8,
    RANK_MARKETS_ALL = 15
};

/* A Capacity Block offering for NODES x INSTANCE_TYPE in REGION (prices_fetch_blocks): the whole
 * block, HOURS long from START, costs FEE_USD up front, used or not, never interrupted.  An entry
 * with WHY set is no offering but a gap: no offering could be asked for REGION ("" every region),
 * and WHY says why (offline, no credentials, the request failed); the rows there carry it. */
typedef struct rank_block_quote {
    char instance_type[64], region[32], az[32];
    long nodes;
    double hours, fee_usd;
    time_t start;
    char why[320];
} rank_block_quote;
/* A Savings Plan's rate for INSTANCE_TYPE in REGION (prices_fetch_plan_rates), per node-hour; with
 * WHY set, a gap as in rank_block_quote. */
typedef struct rank_plan_quote {
    char instance_type[64], region[32];
    double usd_per_hour;
    char why[320];
} rank_plan_quote;
typedef enum rank_spot_mode { RANK_SPOT_LOWEST = 0, RANK_SPOT_MEDIAN, RANK_SPOT_AZ } rank_spot_mode;
typedef enum rank_sort_key {
    RANK_SORT_SAMPLES_PER_DOLLAR = 0,
    RANK_SORT_THROUGHPUT,
    RANK_SORT_COST,
    RANK_SORT_TIME
} rank_sort_key;

/* A price the user gives on the command line (rank --price NAME[:MARKET]=USD). */
typedef struct rank_user_price {
    char name[72];       /* an instance type, or the hostname of results without one */
    rank_market market;  /* plain NAME=USD: on-demand */
    double usd_per_hour; /* per node, in [RANK_MIN_USD_PER_HOUR, RANK_MAX_USD_PER_HOUR] */
} rank_user_price;

/* ---- spot risk (spot_risk.c): spot priced with its interruptions ----
 *
 * Every default of the model, in one place (docs/design.md, "Spot risk", states each assumption):
 * - the Spot Instance Advisor's bucket (<5%, 5-10%, 10-15%, 15-20%, >20% of spot capacity
 *   reclaimed over the trailing month) stands for its midpoint share p (>20%: 25%), and
 *   a node's interruption rate is lambda = -ln(1 - p) / 720 h (one month): prices/interruption.c,
 *   the one mapping, which `prices --nodes` shows too;
 * - N nodes stop at Lambda = N x lambda (independent reclaims; data parallel stops on the first);
 * - a checkpoint costs delta = the training state (fp32 weights and both Adam moments, 12 B per
 *   parameter, plus a 2 B bf16/fp16 copy) / 125 MB/s (an EBS gp3 volume's baseline throughput);
 *   RANK_SPOT_CHECKPOINT_S_UNKNOWN when the results do not give the parameter count;
 * - a restart (new instance, boot, load the checkpoint) costs R = 10 minutes;
 * - the checkpoint interval is Daly's higher-order optimum (Daly 2006, FGCS 22(3)). */
#define RANK_SPOT_ADVISOR_WINDOW_H PRICES_ADVISOR_WINDOW_H /* the bucket's mapping lives in prices/interruption.c */
#define RANK_SPOT_RESTART_S 600.0
#define RANK_SPOT_DISK_BYTES_PER_S 125e6
#define RANK_SPOT_STATE_BYTES_PER_PARAM 12.0    /* fp32 weights + Adam m and v */
#define RANK_SPOT_HALF_COPY_BYTES_PER_PARAM 2.0 /* the bf16/fp16 working copy, where one exists */
#define RANK_SPOT_CHECKPOINT_S_UNKNOWN 60.0
/* The quantile reported as "P90". */
#define RANK_SPOT_P90 0.9
/* The break-even search's range, per node-hour: beyond the upper end a node would not survive
 * an hour, and "never" is said instead (the top is the row's own rate where a user's
 * --interruption-rate is above it). */
#define RANK_SPOT_BREAKEVEN_MIN_RATE 1e-12
#define RANK_SPOT_BREAKEVEN_MAX_RATE 1.0
/* What --interruption-rate, --checkpoint-cost, --restart-minutes, --checkpoint-every accept. */
#define RANK_SPOT_MIN_RATE 1e-9
#define RANK_SPOT_MAX_RATE 100.0
#define RANK_SPOT_MIN_CHECKPOINT_S 1e-3
#define RANK_SPOT_MAX_CHECKPOINT_S 86400.0

typedef struct rank_spot_options {
    int off;                       /* --spot-risk off: spot ranks at its raw price */
    double rate_per_node_hour;     /* --interruption-rate, NAN: from each row's Advisor bucket */
    double checkpoint_s;           /* delta, > 0 (the command fills the default) */
    const char *checkpoint_source; /* "default" or "user" ("measured" once measure times one) */
    double restart_s;              /* R, >= 0 */
    double interval_s;             /* --checkpoint-every, NAN: Daly's optimum */
} rank_spot_options;

/* A spot row's figures under the model; VALID 0 (on-demand, --spot-risk off, no rate known)
 * leaves every other field unset and the row ranked at its raw price. */
typedef struct rank_spot_risk {
    int valid;
    double rate_per_node_hour;                  /* lambda */
    const char *rate_source;                    /* "advisor" or "user" */
    double job_rate_per_hour;                   /* Lambda = nodes x lambda */
    double checkpoint_s, restart_s, interval_s; /* delta, R, tau */
    const char *checkpoint_source;
    double efficiency; /* T_s / T_w, in (0, 1) */
    /* measured x efficiency; with a target, the job's average: target / expected hours */
    double samples_per_second;
    double samples_per_dollar; /* effective samples/s x 3600 / usd_per_hour (with a target: target / expected cost) */
    double expected_hours, p90_hours, expected_cost, p90_cost; /* NAN without a target */
    double p_no_interruption;                                  /* NAN without a target */
    /* The per-node rate at which samples_per_dollar falls to the best on-demand row's: NAN
     * "never" (ahead up to RANK_SPOT_BREAKEVEN_MAX_RATE, or the row's rate if higher), 0 when
     * behind at any rate; only
     * when BREAKEVEN_AGAINST names that on-demand row (the configs index, else -1). */
    double breakeven_rate;
    long breakeven_against;
    rank_market breakeven_against_market; /* that row's market (on-demand unless --versus says) */
} rank_spot_risk;

/* lambda per node-hour for an Advisor bucket 0..4 (NAN otherwise): prices_interruption_rate. */
double rank_spot_bucket_rate(int bucket);
/* Daly's higher-order optimum interval for checkpoint cost DELTA and mean time to interruption M
 * (any one unit): sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta for
 * delta < 2M, else M. */
double rank_spot_daly_interval(double delta, double m);
/* T_s / T_w = tau / (M e^(R/M) (e^((tau + delta)/M) - 1)) at job rate JOB_RATE (per hour), all
 * times in hours. */
double rank_spot_efficiency(double job_rate, double delta_h, double restart_h, double tau_h);
/* Mean (h), variance (h^2) and third cumulant (h^3) of the wall time one segment of S_H hours
 * (work + checkpoint) takes: failed attempts lose their time and each costs a restart of
 * RESTART_H that itself restarts when interrupted (the renewal process whose mean is Daly's). */
typedef struct rank_spot_moments {
    double mean, var, k3;
} rank_spot_moments;
rank_spot_moments rank_spot_segment_moments(double job_rate, double s_h, double restart_h);
/* A target of WORK_H hours of work in ceil(WORK_H / TAU_H) segments, at least one (each TAU_H of
 * work, the last the rest, each + DELTA_H), from one pass over the segments' exact cumulants: the expected wall time
 * (h; the sum of their means, work / efficiency when the work is whole intervals); its 90th
 * percentile (the uninterrupted time when that has a 90% chance, else that time plus the delay
 * given an interruption at the matching quantile, Cornish-Fisher to the skewness term); and the
 * chance of no interruption (e^(-Lambda x the uninterrupted time)). */
typedef struct rank_spot_target {
    double expected_hours, p90_hours, p_no_interruption;
} rank_spot_target;
rank_spot_target rank_spot_to_target(double job_rate, double work_h, double tau_h, double delta_h, double restart_h);
/* The default checkpoint cost in seconds for a model of PARAMS parameters (<= 0 unknown) trained
 * in PRECISION ("bf16", "fp16" add the half copy). */
double rank_spot_default_checkpoint_s(long params, const char *precision);
/* The measured checkpoint cost of workload G: the slowest checkpoint its results timed (seconds;
 * the slowest disk is the one a job spanning those machines waits for), NAN when none did. */
double rank_spot_measured_checkpoint_s(const rank_results *res, const rank_group *g);
/* --interruption-rate: "X" per node-hour, "Nh" once per N hours, "Nd" once per N days.  0 ok with
 * *RATE per node-hour; -1 with a one-line reason. */
int rank_spot_parse_rate(const char *s, double *rate, char *why, size_t len);

typedef struct rank_options {
    int markets; /* RANK_MARKETS_* */
    rank_spot_mode spot_mode;
    char az[32];             /* for RANK_SPOT_AZ: a zone name (us-east-1a) or ID (use1-az2) */
    char az_alt[32];         /* the same zone in the other form, when known (the results' own
                                    pairs, or the account's DescribeAvailabilityZones), else "" */
    int include_local_zones; /* Local and Wavelength Zones count for lowest and median spot
                                    (prices_zone_counts); an --az names its zone whatever it is */
    double target_samples;   /* 0 = no target: time/cost columns are NAN */
    double deadline_hours;   /* NAN = none; the rest likewise */
    double budget_usd;
    double max_hourly_usd;
    rank_sort_key sort;
    int pareto_only;
    time_t now;                         /* for price age */
    const rank_user_price *user_prices; /* --price flags; they beat every other price */
    size_t n_user_prices;
    rank_spot_options spot;
    /* The markets bought ahead: their live quotes, and the gaps where none could be asked
     * (rank_block_quote: a gap's WHY is the reason its rows give). */
    const rank_block_quote *blocks;
    size_t n_blocks;
    double block_hours; /* --block-duration, hours */
    const rank_plan_quote *plans;
    size_t n_plans;
    double plan_term_hours; /* 8760 or 26280 */
    /* --plan-utilisation: the share of the term's hours outside the target's that other work keeps
     * the plan busy; the rest of the commitment counts in a savings-plan row's cost to target
     * (0, the default: the whole term is owed to the target) */
    double plan_utilisation;
    const char *plan_label;     /* "Compute 1y No Upfront" */
    const char *quotes_missing; /* "" or why no quote could be asked, for rows without a gap of
                                   their own in BLOCKS or PLANS (rank_block_quote) */
    /* --versus: the row every spot row's break-even is against (configs index and market); -1:
     * the best on-demand row */
    long versus_config;
    rank_market versus_market;
} rank_options;

void rank_options_init(rank_options *o);

typedef struct rank_row {
    size_t config; /* index into the configs */
    rank_market market;
    int priced;                /* 0: UNPRICED_REASON says why */
    char unpriced_reason[320]; /* room for a hostname twice and the --price that would fix it */
    double price_per_node;     /* $/h of one instance */
    double usd_per_hour;       /* nodes x price_per_node */
    char az[40];               /* spot: the AZ priced, or "median of N AZs" */
    double samples_per_second;
    double samples_per_dollar;
    double hours_to_target; /* NAN without a target */
    double cost_to_target;
    int interruption_bucket; /* spot only, -1 unknown */
    int placement_score;     /* spot only, -1 unknown */
    /* What the score answers (spot rows with a score): GetSpotPlacementScores for this many
     * instances (TargetCapacity) of this many types (the row's and --placement-pool's), for one
     * zone (placement_zone, the priced one) or the whole region (""). */
    int placement_capacity, placement_types;
    char placement_zone[40];
    char price_source[16];
    time_t price_as_of;  /* 0 unknown */
    rank_spot_risk risk; /* spot rows: the interruption-aware figures */
    /* The figures the row is ranked, filtered and Pareto-marked by: the risk-adjusted ones on a
     * spot row with a valid risk; with a target, on a capacity-block or savings-plan row, samples
     * per dollar of what the target costs there (blocks paid whole, the plan's idle commitment),
     * not of its $/h as if every hour trained; else the raw ones above. */
    double rank_samples_per_second, rank_samples_per_dollar, rank_hours_to_target, rank_cost_to_target;
    /* capacity-block rows: the block priced (the cheapest per hour offered), how many blocks the
     * target needs (each paid whole), and the wait until it starts; NAN elsewhere */
    double block_hours, block_fee_usd, blocks_to_target, wait_hours;
    /* savings-plan rows: the commitment (nodes x rate, owed every hour of the term) and the share
     * of the term's hours the nodes must train for the plan to cost no more than on-demand, and
     * than spot at its risk-adjusted (Daly) efficiency; NAN elsewhere or when unknown */
    double plan_commitment_usd_per_hour, plan_term_usd, plan_break_even_on_demand, plan_break_even_spot;
    int pareto; /* 1: no other row is at least as fast AND as cheap, better in one */
    int rank;   /* 1-based after sorting; 0 for unpriced */
} rank_row;

/* One row per configuration and requested market (ml.* SageMaker types: on-demand only). */
int rank_score(const rank_config *configs, size_t n_configs, const price_set *prices, const rank_options *o,
               rank_row **rows, size_t *n_rows, ib_error *err);

/* ---- placement.c: placement scores asked as the row needs them --------------------------- */
/* A price set's placement score asks for one instance of one type; that answers a 1-node row
 * without a pool only (rank_score keeps it there and drops it on multi-node rows).  The asks a
 * set of rows needs beyond that: one per (region, type, nodes) of a priced spot row with several
 * nodes, or of every priced spot row when N_POOL > 0; single-AZ each (a cluster placement group
 * is in one zone; a 1-node row is priced in one zone too).  *ASKS is malloc'd (NULL when none). */
size_t rank_placement_plan(const rank_config *configs, const rank_row *rows, size_t n_rows, size_t n_pool,
                           placement_ask **asks);
/* Gives each row the score of its ask for the zone it is priced in (the best zone's when priced
 * over several), -1 when the ask failed or that zone has none; records capacity, types, zone. */
void rank_placement_apply(const rank_config *configs, rank_row *rows, size_t n_rows, const placement_ask *asks,
                          size_t n_asks, char *const *pool, size_t n_pool);

/* Fills every spot row's RISK (and the rank_* figures of every priced row) from O->spot; the
 * break-even against the best on-demand row among ROWS. */
void rank_spot_risk_fill(rank_row *rows, size_t n, const rank_config *configs, const rank_options *o);

/* Why rows left: counts per filter, in the order applied. */
typedef struct rank_filter_stats {
    size_t unpriced, by_max_hourly, by_deadline, by_budget, by_pareto;
} rank_filter_stats;

/* Moves unpriced rows to the end (kept, with their reason) and drops priced rows failing
 * --max-hourly/--deadline/--budget.  Returns the number of priced rows kept; *N becomes the
 * total kept including unpriced. */
size_t rank_filter(rank_row *rows, size_t *n, const rank_options *o, rank_filter_stats *st);
/* Marks pareto on the first N_PRICED rows (objectives: samples/s up, samples per dollar up,
 * i.e. time and cost to any target both down). */
void rank_pareto_mark(rank_row *rows, size_t n_priced);
/* Keeps only pareto rows among the first *N_PRICED, unpriced rows follow; updates both counts. */
void rank_pareto_keep(rank_row *rows, size_t *n_priced, size_t *n, rank_filter_stats *st);
/* Sorts the first N_PRICED rows by KEY and numbers them 1..N_PRICED. */
void rank_sort(rank_row *rows, size_t n_priced, const rank_config *configs, rank_sort_key key);
/* select.c: all of the above in order (filter, Pareto mark and --pareto, sort), then TOP > 0 keeps
 * that many ranked rows (the unpriced follow); says on stderr what each filter removed.  Returns
 * the number of priced rows; *N_ROWS becomes the total. */
size_t rank_select(rank_row *rows, size_t *n_rows, const rank_config *configs, const rank_options *o, int top,
                   rank_filter_stats *st);

/* ---- user prices (user_price.c) ---- */

/* Parses "NAME=USD", "NAME:on-demand=USD" or "NAME:spot=USD".  0 ok; -1 with a one-line reason. */
int rank_parse_user_price(const char *spec, rank_user_price *out, char *why, size_t len);
/* What --price NAME matches: the instance type, else the hostname ("" when neither is known). */
const char *rank_config_name(const rank_config *c);
/* The user's price per node for C on market M: a --price flag for its name, else what its runs
 * recorded (measure --hourly-cost).  Returns 1 with *USD and *AS_OF (0 for a flag: it is the
 * user's price now; a recorded one is as old as its run), 0 when the user gave none. */
int rank_user_price_for(const rank_config *c, rank_market m, const rank_options *o, double *usd, time_t *as_of);

/* Parsing of flag values; -1 when unknown. */
extern const char *const rank_sort_names[]; /* in rank_sort_key order, NULL-terminated */
const char *rank_sort_key_name(rank_sort_key k);
const char *rank_market_name(rank_market m);

/* "4 x g5.xlarge spot" ("1 x g5.xlarge spot (cpu)" with a variant), "1 x HOSTNAME on-demand" off
 * EC2; "4 x NVIDIA A10G" (with
 * "(4 nodes x 1)" when nodes > 1). */
void rank_config_label(const rank_config *c, rank_market m, char *out, size_t len);
void rank_accelerator_label(const rank_config *c, char *out, size_t len);

/* ---- report: everything the renderers need (report.c: table/CSV, report_json.c, report_plot.c) ---- */

typedef struct rank_report {
    const rank_group *group;  /* the workload ranked */
    const rank_group *groups; /* every workload found, for "which groups exist" */
    size_t n_groups;
    const rank_config *configs;
    size_t n_configs;
    const rank_row *rows; /* priced rows (ranked) first, then unpriced */
    size_t n_priced, n_rows;
    const rank_options *opts;
    rank_filter_stats removed;
    double epochs, dataset_size; /* 0 when the target came from --samples or is absent */
    const char *region_override; /* NULL or the --region value */
    const char *prices_origin;   /* "snapshot of 2026-11-21 (...)", "file prices.json", "live" */
    size_t files_read, results, skipped, duplicates;
    size_t superseded;    /* extrapolated runs left out for a real run of their nodes */
    char *const *columns; /* --columns: the keys to show, in order (every format) */
    size_t n_columns;     /* 0: each format's default (table: what fits; CSV, JSON: all) */
    int wide;             /* --wide: the table adds P90 time and P(no interruption) */
    int explain;          /* --explain (or -v): the legend says how every figure is made */
} rank_report;

/* "snapshot 2026-11-21" style summary of the prices the rows used: sources and as-of dates. */
void rank_report_price_summary(const rank_report *r, char *out, size_t len);
/* Aligned table for people: header lines, ranked rows (configurations marked when extrapolated,
 * mislabelled or noisy, with a legend line per mark), then the unpriced rows with reasons. */
int rank_report_write_table(const rank_report *r, FILE *out, ib_error *err);
/* CSV: a header row of column keys, the ranked rows, then the unpriced ones (empty price cells and
 * their unpriced_reason); plain numbers, date-times as "YYYY-MM-DDTHH:MM:SS" UTC (util_utc_spreadsheet). */
int rank_report_write_csv(const rank_report *r, FILE *out, ib_error *err);
/* JSON document "instbench.rank/v2" (schemas/rank-v2.json): rows are flat objects whose keys are
 * the same column keys as the CSV header and `--columns`. */
int rank_report_write_json(const rank_report *r, FILE *out, ib_error *err);
/* SVG: samples/s against $/h, one labelled point per ranked row, Pareto frontier joined,
 * extrapolated rows drawn hollow. */
int rank_report_write_svg(const rank_report *r, const char *path, ib_error *err);

/* ---- columns (report_columns.c): the one set of names of table, CSV and JSON ---- */

/* TIME: NUMBER holds a time_t; JSON writes ISO 8601 ("2026-11-21T00:00:00Z", what jq's fromdate
 * reads), CSV "2026-11-21T00:00:00" (what a spreadsheet reads as a date-time; the key says UTC). */
typedef enum rank_value_kind {
    RANK_V_NONE = 0,
    RANK_V_NUMBER,
    RANK_V_TEXT,
    RANK_V_BOOL,
    RANK_V_LIST,
    RANK_V_TIME
} rank_value_kind;
/* One cell before it is formatted: NONE is an empty CSV cell, JSON null, "-" in the table. */
typedef struct rank_value {
    rank_value_kind kind;
    double number;
    int flag;
    const char *text;               /* TEXT: points into BUF or at a string that outlives the row */
    const char *items[RANK_WARN_N]; /* LIST */
    size_t n_items;
    char buf[320];
} rank_value;

typedef struct rank_column {
    const char *key;    /* CSV header, JSON key, --columns name */
    const char *header; /* the table's header */
    int right;          /* right-aligned in the table */
    int priority;       /* table: higher stays longer on a narrow terminal */
    void (*get)(const rank_report *r, const rank_row *row, rank_value *v);
    /* the table's text when it differs from the plain value (money, durations, grouping) */
    void (*show)(const rank_report *r, const rank_row *row, char *out, size_t len);
} rank_column;

extern const rank_column rank_columns[]; /* CSV/JSON order; ends with a NULL key */
#define RANK_MAX_COLUMNS 96              /* at least how many rank_columns holds (every buffer of them) */
/* The table's columns when --columns is not given, in its order, NULL-terminated. */
extern const char *const rank_table_keys[];
/* The column named KEY (or one of the names before version 2: samples_per_usd, config, ...). */
const rank_column *rank_column_find(const char *key);
/* The columns a format shows, into OUT (room for CAP): --columns when given (the command has checked
 * every name), else DEFAULTS (NULL-terminated keys), else (DEFAULTS NULL) every column. */
size_t rank_report_columns(const rank_report *r, const char *const *defaults, const rank_column **out, size_t cap);
/* 1 when the row's runs disagree by more than RANK_SPREAD_LIMIT or carry a warning. */
int rank_config_noisy(const rank_config *c);

/* ---- the command's steps between loading and scoring ----------------------------------------
 * Checks of the names the user gave fail with ERR's code IB_EXIT_USAGE and a message that
 * `instbench rank` prints in its usage form (the nearest name suggested); anything else is
 * IB_EXIT_RUNTIME.  SOURCE is --source as given (NULL: auto).  ask.c is the one file of rank/
 * that asks AWS (through prices/); the rest stays pure. */

/* type_filter.c: --instance-types: keeps the configurations whose name (instance type, else
 * hostname) one of the N_TYPES names or patterns matches; one that matches none is refused. */
int rank_filter_types(char *const *types, size_t n_types, rank_config *c, size_t *n, ib_error *err);
/* versus.c: --versus CONFIG ("N x TYPE MARKET" as rank labels a row, or "[Nx]TYPE[:MARKET]" as
 * sweep takes a candidate) into O->versus_config and O->versus_market; it must name one
 * configuration of C and a market O ranks other than spot. */
int rank_resolve_versus(const char *versus, const rank_config *c, size_t n, rank_options *o, ib_error *err);
/* az.c: --region: a region no source knows and nothing in PS is priced in is a typo. */
int rank_check_region(const char *region, const price_set *ps, ib_error *err);
/* az.c: --az (O->az): finds the zone in its other form (O->az_alt) from the results' own pairs
 * or, when ASK_LIVE, the account's DescribeAvailabilityZones, and refuses a zone nothing knows
 * or a name that cannot be mapped to the IDs the prices use. */
int rank_resolve_az(rank_options *o, int ask_live, const rank_results *res, const rank_config *c, size_t n,
                    const price_set *ps, ib_error *err);
/* input_warnings.c: warns about --price flags that name no configuration, configurations whose
 * runs recorded different prices, configurations that ran attention different ways, and runs
 * measured by different builds (revision.c). */
void rank_warn_inputs(const rank_config *c, size_t n, const rank_options *o);
/* revision.c: the distinct builds the runs of C[0..N) came from, sorted ("" unknown last), into
 * *OUT (malloc'd, the caller frees; NULL when N is 0).  The count, or -1 out of memory. */
long rank_revisions(const rank_config *c, size_t n, const char ***out);
/* hint.c: nothing could be priced: the one line saying how to get a priced row, into OUT. */
void rank_nothing_priced_hint(const char *source, const rank_options *o, const rank_config *c, size_t n, size_t n_rows,
                              char *out, size_t len);
/* group.c: lists the workloads found on stderr, CHOSEN marked (EXPLICIT: --workload chose it). */
void rank_groups_list(const rank_group *g, size_t n, size_t chosen, int explicit);

/* ask.c: the prices for the configurations: SOURCE a prices file, or prices_get over the types
 * and regions no user price covers.  ORIGIN: "file PATH" or "". */
int rank_load_prices(const char *source, const rank_config *c, size_t n, const rank_options *o, price_set *ps,
                     char *origin, size_t olen, ib_error *err);
/* ask.c: the live quotes of the markets bought ahead O ranks (a Capacity Block offering per
 * (type, nodes, region), a Savings Plan rate of PLAN_TYPE and PAYMENT per (type, region)), into
 * *BLOCKS and *PLANS (malloc'd, the caller frees) and O.  What could not be asked is a gap in them
 * (rank_block_quote), said once on stderr here: offline, without credentials, or (SOURCE auto) a
 * request that failed, whose rows are then unpriced with the reason while the rest are ranked.
 * With SOURCE live a failed request is an error naming the market and --source live.  MISSING is
 * left "" (each row carries its own market's reason). */
int rank_load_quotes(const char *source, const char *plan_type, const char *payment, const rank_config *c, size_t n,
                     rank_options *o, rank_block_quote **blocks, rank_plan_quote **plans, char *missing, size_t mlen,
                     ib_error *err);
/* ask.c: placement scores for the rows a price set cannot answer (multi-node rows and, with a
 * pool, every spot row), asked live where SOURCE allows; the rows without one say why (-v). */
void rank_ask_placement(const char *source, char **pool, size_t n_pool, const rank_config *c, rank_row *rows,
                        size_t n_rows);

#endif
