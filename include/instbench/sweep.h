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

#define SWEEP_TAG_SWEEP EC2_TAG_SWEEP            /* "instbench:sweep" */
#define SWEEP_TAG_CANDIDATE EC2_TAG_CANDIDATE    /* "instbench:candidate" */
#define SWEEP_ID_MAX 32                  /* "20261125-213005-9f3a" + NUL, with room */
#define SWEEP_USERDATA_MAX 16384         /* EC2's limit on user data before base64 */

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
    char spec[96];           /* canonical form, the candidate tag's value: "4xg5.xlarge:spot",
                                "g5.12xlarge:on-demand" (always with its market) */
} sweep_candidate;

/* ---- candidates (candidates.c) -------------------------------------------------------------- */
#define SWEEP_MAX_NODES 64       /* N of "Nx": one cluster placement group's worth */
#define SWEEP_MAX_CANDIDATES 32

/* One SPEC, "[N x]TYPE[:on-demand|spot]": "4xg5.xlarge:spot", "4 x g5.xlarge" (as rank prints a
 * configuration), "g5.12xlarge" (on-demand).  TYPE must be in the price catalogue (the snapshot):
 * its hardware picks the AMI and its price bounds the cost.  IB_EXIT_USAGE with a message (and a
 * suggestion) for 0x, N > SWEEP_MAX_NODES, an unknown type or market. */
int sweep_candidate_parse(const char *spec, sweep_candidate *out, ib_error *err);
/* One --candidates value, SPEC[,SPEC...], appended to *v (malloc'd, *n entries): a candidate whose
 * canonical spec is already there (from this value or an earlier one) is IB_EXIT_USAGE. */
int sweep_candidates_add(const char *arg, sweep_candidate **v, size_t *n, ib_error *err);

/* ---- AMIs ---------------------------------------------------------------------------------- */
/* The image a candidate boots: NVIDIA GPU types the Deep Learning Base OSS Nvidia Driver GPU AMI
 * (the driver and CUDA installed), CPU-only types Canonical's plain Ubuntu; each the current one,
 * named by an SSM public parameter, for the type's architecture.  Ubuntu 22.04 for both (GCC 11,
 * the release the instance's build is checked against). */
typedef enum sweep_ami_kind {
    SWEEP_AMI_GPU_X86_64 = 0, SWEEP_AMI_GPU_ARM64, SWEEP_AMI_CPU_X86_64, SWEEP_AMI_CPU_ARM64, SWEEP_AMI_KINDS
} sweep_ami_kind;
/* "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id", ... */
const char *sweep_ami_parameter(sweep_ami_kind kind);
/* "x86_64" | "arm64" (as DescribeImages names an AMI's architecture) */
const char *sweep_ami_kind_arch(sweep_ami_kind kind);
/* TYPE's architecture from its name: arm64 for AWS Graviton families (a 'g' after the
 * generation: c7g, g5g, im4gn; and a1), else x86_64. */
const char *sweep_type_arch(const char *type);
/* The kind of AMI TYPE needs, from the catalogue's hardware: IB_EXIT_USAGE with a message for a
 * type instbench cannot measure from an AMI it knows (an accelerator that is not NVIDIA's:
 * Trainium, Inferentia, ...). */
int sweep_type_ami_kind(const char *type, sweep_ami_kind *kind, ib_error *err);

typedef struct sweep_ami {
    char id[64];              /* "ami-0abc..." ("" when not resolved) */
    char source[200];         /* the SSM parameter it came from, or "--ami" */
} sweep_ami;

/* ---- the plan (plan.c): a pure function, no I/O ---------------------------------------------- */
typedef struct sweep_plan_input {
    const char *region;
    const sweep_candidate *cands;
    size_t n;
    const price_record *const *prices;  /* per candidate: its type's record in region, NULL: none */
    const sweep_ami *amis;              /* [SWEEP_AMI_KINDS], resolved for the kinds the candidates need */
    const sweep_ami *ami_override;      /* --ami: every candidate boots it; NULL: none */
    double max_minutes;                 /* > 0: each instance's life, what every node is billed */
    double max_cost_usd;                /* NAN: no ceiling given (plan without --max-cost) */
} sweep_plan_input;

typedef struct sweep_plan_line {
    sweep_candidate cand;
    sweep_ami_kind kind;
    sweep_ami ami;
    double usd_per_node_hour;           /* what one node is taken to cost an hour; NAN: unpriced */
    char price_source[160];             /* "snapshot 2026-11-21", "live 2026-11-25, highest of 4 zones" */
    int spot_at_on_demand;              /* a spot row priced at on-demand: no spot price known */
    double worst_case_usd;              /* nodes x usd_per_node_hour x max_minutes / 60; NAN: unpriced */
} sweep_plan_line;

typedef enum sweep_verdict {
    SWEEP_NO_CEILING = 0,               /* no --max-cost: nothing to judge */
    SWEEP_WITHIN,                       /* total <= --max-cost */
    SWEEP_OVER,                         /* total > --max-cost */
    SWEEP_UNPRICED                      /* a line has no price: the total is unknown, never within */
} sweep_verdict;

typedef struct sweep_plan {
    sweep_plan_line *lines;             /* one per candidate, in the order given (malloc'd) */
    size_t n;
    int instances;                      /* sum of nodes */
    double max_minutes, max_cost_usd;
    double total_usd;                   /* sum of worst cases; NAN when a line is unpriced */
    sweep_verdict verdict;
} sweep_plan;

/* The plan of IN: per candidate its AMI (the override, else amis[kind]; an unresolved one is an
 * error), market, price per node-hour and its source, and worst case; the total and the verdict.
 * Spot rows take the highest spot price of the region's Availability Zones (a launch may land in
 * any, and no MaxPrice is set), capped at on-demand (spot never bills above it); with no spot
 * price known, on-demand, said so.  -1 (IB_EXIT_USAGE) for bad bounds or an AMI missing. */
int sweep_plan_build(const sweep_plan_input *in, sweep_plan *out, ib_error *err);
void sweep_plan_free(sweep_plan *p);

#endif
