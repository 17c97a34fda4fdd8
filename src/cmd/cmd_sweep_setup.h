/* cmd/sweep_setup: what `sweep plan` and `sweep run` share before anything is launched: their
 * common flags, the measure flags after `--` (checked by measure's own parser) and the plan's
 * printing; the prices, AMIs, default network, plan and DryRun are sweep/prepare.c's and
 * sweep/dry_run.c's, on the sweep's one client.  `run` adds its own flags to the same table
 * through SWEEP_COMMON_SPECS and then calls these in order:
 *
 *   sweep_flags f; sweep_flags_init(&f);
 *   int own = sweep_flags_split(argc, argv, &f);          // argv[own..]: after "--"
 *   args_parse(&cmd, own, argv, ...);                      // the table holds SWEEP_COMMON_SPECS(&f)
 *   sweep_flags_check(&cmd, &f);                           // exit 2 on bad input
 *   sweep_prepare_input in = sweep_flags_input(&f);
 *   sweep_context ctx; sweep_prepare(&in, &ctx, &err);     // client, prices, AMIs, network, plan
 *   sweep_plan_print(&f, &ctx, stdout);  sweep_dry_run(&ctx, ...);
 *   sweep_context_free(&ctx); sweep_flags_free(&f); */
#ifndef INSTBENCH_CMD_SWEEP_SETUP_H
#define INSTBENCH_CMD_SWEEP_SETUP_H

#include <math.h>
#include <stdio.h>

#include "cmd/args.h"
#include "instbench/aws.h"
#include "instbench/aws_services.h"
#include "instbench/prices.h"
#include "instbench/sweep.h"

#define SWEEP_DEFAULT_MAX_MINUTES 30.0

typedef struct sweep_flags {
    sweep_candidate *cands; /* --candidates, every value, in order (malloc'd) */
    size_t n_cands;
    const char *region;  /* --region; NULL: the configured region (AWS_REGION, profile) */
    const char *s3;      /* --s3 s3://BUCKET/PREFIX/, NULL when not given */
    double max_minutes;  /* --max-minutes, default SWEEP_DEFAULT_MAX_MINUTES */
    double max_cost_usd; /* --max-cost; NAN when not given */
    int max_cost_given;
    const char *ami;     /* --ami: every candidate boots it */
    int prices;          /* --prices: index into prices_source_names (auto) */
    int format;          /* --format: index into sweep_formats; -1: table on a terminal, else json */
    char **measure_args; /* after "--" (borrowed from argv) */
    int n_measure_args;
    char s3_bucket[64]; /* --s3 split (after sweep_flags_check) */
    char *s3_prefix;    /* malloc'd; "" or ending in '/' */
    char region_buf[32];
    const char *capacity_reservation; /* --capacity-reservation cr-...: the :capacity-block candidate's block */
    int efa;                          /* --efa: index into sweep_efa_modes (0 auto, 1 off) */
} sweep_flags;

extern const char *const sweep_efa_modes[]; /* "auto", "off", NULL */

extern const char *const sweep_formats[]; /* "table", "json", "csv", NULL */

/* Takes one --candidates value (ARG_FN; dst: the sweep_flags). */
int sweep_take_candidates(void *dst, const char *flag, const char *value, ib_error *err);

/* The flags plan and run share, as rows of an arg_spec table (F: a sweep_flags *). */
#define SWEEP_COMMON_SPECS(F)                                                                                       \
    {"--candidates",                                                                                                \
     0,                                                                                                             \
     ARG_FN,                                                                                                        \
     (F),                                                                                                           \
     "SPEC[,SPEC...]",                                                                                              \
     "the configurations to measure: [Nx]TYPE[:on-demand|spot|capacity-block],\n"                                   \
     "e.g. 4xg5.xlarge:spot, g5.12xlarge:on-demand (no market: on-demand;\n"                                        \
     "\"4 x g5.xlarge\" as rank prints it is accepted too; capacity-block:\n"                                       \
     "with --capacity-reservation); repeatable. Every type must be in the\n"                                        \
     "price catalogue",                                                                                             \
     .fn = sweep_take_candidates,                                                                                   \
     .group = "what to launch"},                                                                                    \
        {"--region",                                                                                                \
         0,                                                                                                         \
         ARG_STRING,                                                                                                \
         &(F)->region,                                                                                              \
         "R",                                                                                                       \
         "the one region of the sweep (default: the configured\n"                                                   \
         "region, AWS_REGION or the profile's)",                                                                    \
         .check = names_region_problem,                                                                             \
         .suggest = prices_suggest_region},                                                                         \
        {"--ami",                                                                                                   \
         0,                                                                                                         \
         ARG_STRING,                                                                                                \
         &(F)->ami,                                                                                                 \
         "AMI-ID",                                                                                                  \
         "boot every candidate from this AMI instead of the current\n"                                              \
         "Deep Learning Base OSS Nvidia Driver GPU AMI (GPU types) or\n"                                            \
         "Ubuntu 22.04 (CPU types) named by AWS's SSM public parameters;\n"                                         \
         "its architecture must match every candidate's"},                                                          \
        {"--s3", 0, ARG_STRING, &(F)->s3, "s3://BUCKET/PREFIX/", "where the sweep's sources, results and logs go"}, \
        {"--capacity-reservation",                                                                                  \
         0,                                                                                                         \
         ARG_STRING,                                                                                                \
         &(F)->capacity_reservation,                                                                                \
         "cr-ID",                                                                                                   \
         "launch the :capacity-block\n"                                                                             \
         "candidate into this Capacity Block the account already bought (checked:\n"                                \
         "a Capacity Block, active now, its type, zone and free instances;\n"                                       \
         "--max-minutes must end before it does).  Its fee is already paid:\n"                                      \
         "counted as committed, not as the sweep's spend.  instbench never\n"                                       \
         "purchases a block or a Savings Plan"},                                                                    \
        {"--max-minutes",                                                                                           \
         0,                                                                                                         \
         ARG_DOUBLE,                                                                                                \
         &(F)->max_minutes,                                                                                         \
         "M",                                                                                                       \
         "each instance's life, from launch to termination\n"                                                       \
         "(default 30).  A fraction is rounded up to whole minutes for the\n"                                       \
         "instance's own timer (shutdown -h +M) and for the worst case, which\n"                                    \
         "adds 5 minutes for its boot and halt (the sweep itself still stops\n"                                     \
         "watching at M)",                                                                                          \
         0.01,                                                                                                      \
         7 * 24 * 60.0,                                                                                             \
         .want = "minutes",                                                                                         \
         .group = "bounds"},                                                                                        \
        {"--max-cost",                                                                                              \
         0,                                                                                                         \
         ARG_DOUBLE,                                                                                                \
         &(F)->max_cost_usd,                                                                                        \
         "USD",                                                                                                     \
         "the ceiling on the worst-case total in US dollars\n"                                                      \
         "(every node billed for --max-minutes rounded up + 5 minutes,\n"                                           \
         "spot nodes at most at the price used, set as their MaxPrice)",                                            \
         0,                                                                                                         \
         1e7,                                                                                                       \
         .want = "an amount of US dollars",                                                                         \
         .given = &(F)->max_cost_given},                                                                            \
        {"--source",                                                                                                \
         0,                                                                                                         \
         ARG_CHOICE,                                                                                                \
         &(F)->prices,                                                                                              \
         NULL,                                                                                                      \
         "where prices come from (default auto: live AWS, then the\n"                                               \
         "cache, then the snapshot built in)",                                                                      \
         .choices = prices_source_names,                                                                            \
         .group = "output",                                                                                         \
         .old_name = "--prices"},                                                                                   \
        {"--efa",                                                                                                   \
         0,                                                                                                         \
         ARG_CHOICE,                                                                                                \
         &(F)->efa,                                                                                                 \
         NULL,                                                                                                      \
         "auto (default): a multi-node candidate of a type with EFA\n"                                              \
         "gets EFA interfaces as AWS lays them out (docs/usage.md), a\n"                                            \
         "security group open to itself and, with several interfaces, an\n"                                         \
         "Elastic IP per node, all removed at the end; off: one plain\n"                                            \
         "interface (the row then measures TCP sockets, and rank marks it)",                                        \
         .choices = sweep_efa_modes,                                                                                \
         .group = "what to launch"},                                                                                \
    {                                                                                                               \
        "--format", 0, ARG_CHOICE, &(F)->format, NULL,                                                              \
            "table (default on a terminal) or json\n"                                                               \
            "(default otherwise); csv: run's ranking only (the plan is a table or json)",                           \
            .choices = sweep_formats                                                                                \
    }

void sweep_flags_init(sweep_flags *f);
void sweep_flags_free(sweep_flags *f);
/* Where the measure flags start: argv[i] == "--" gives f->measure_args = argv[i+1..]; returns the
 * count of argv entries that are the sweep's own (to give args_parse). */
int sweep_flags_split(int argc, char **argv, sweep_flags *f);
/* The rules between flags, after args_parse: candidates given, a region (resolved when not
 * given, checked against what instbench knows), --s3's form, the measure flags through measure's
 * own parser (and none of those the sweep sets itself: identity, topology, output).  0, or the
 * exit status (2) with the message printed. */
int sweep_flags_check(const arg_command *cmd, sweep_flags *f);

/* The flags as sweep_prepare takes them (after sweep_flags_check). */
sweep_prepare_input sweep_flags_input(const sweep_flags *f);

/* The plan as a table (per candidate: instances, AMI and its source, market, price per node-hour
 * and its source, worst case; the total; the verdict when --max-cost was given) or JSON
 * (instbench.sweep-plan/v1, with DRY[i] per candidate when dry-run results are given). */
void sweep_plan_print(const sweep_flags *f, const sweep_context *ctx, const char (*dry)[64], FILE *out);

#endif
