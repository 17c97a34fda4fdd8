/* cmd/sweep_plan: `instbench sweep plan`: what a sweep would launch and its worst-case cost,
 * without launching anything.  The flags, prices, AMIs and plan are cmd/cmd_sweep_setup.c's (shared
 * with `sweep run`); this adds the EC2 DryRun per candidate and the exit status. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "cmd/cmd_sweep_setup.h"

static sweep_flags F;

static const arg_spec plan_specs[] = {SWEEP_COMMON_SPECS(&F), {0}};

const arg_command cmd_sweep_plan_args = {
    "sweep plan",
    "--candidates SPEC[,SPEC...] [options] [-- MEASURE-FLAGS]",
    "Prints what `sweep run` would launch, without launching anything: per candidate its\n"
    "instances, AMI (and the SSM parameter it came from), market, price per node-hour\n"
    "and its source, and worst case (every node billed for --max-minutes; spot at the\n"
    "highest zone's price, or at on-demand when no spot price is known); the total, and\n"
    "with --max-cost whether `sweep run` would accept it.  It also asks EC2 for a\n"
    "RunInstances DryRun per candidate, so a missing permission shows before anything is\n"
    "spent.  Flags after -- are measure's (model, batch, precision, duration), checked\n"
    "by measure's own parser.",
    "Needs AWS credentials (SSM for the AMIs, EC2 for the network and the DryRun).\n"
    "Exit status: 0 the plan (within --max-cost when given); 1 over --max-cost or\n"
    "unpriced, a DryRun refused, or an AWS failure; 2 bad input.\n",
    plan_specs,
    NULL,
    (const arg_example[]){
        {"what a three-candidate sweep would launch and cost, at most 20 minutes each",
         "instbench sweep plan --region us-east-1 --candidates g5.xlarge:spot,4xg5.xlarge:spot,g5.12xlarge "
         "--max-minutes 20 --max-cost 15 -- --model vit_base_patch16_224 --duration 60"},
        {0}},
};

int cmd_sweep_plan(int argc, char **argv)
{
    sweep_flags_init(&F);
    int own = sweep_flags_split(argc, argv, &F);
    int rc = args_parse(&cmd_sweep_plan_args, own, argv, NULL, NULL);
    if (!rc) rc = sweep_flags_check(&cmd_sweep_plan_args, &F);
    if (!rc && F.format == 2)
        rc = args_usage_error(&cmd_sweep_plan_args,
                              "--format csv is for `sweep run`'s ranking; a plan prints as table or json");
    if (rc) {
        sweep_flags_free(&F);
        return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    }
    sweep_context ctx;
    ib_error err = {0};
    sweep_prepare_input in = sweep_flags_input(&F);
    if (sweep_prepare(&in, &ctx, &err) != 0) {
        fprintf(stderr, "instbench sweep plan: %s\n", err.msg);
        sweep_context_free(&ctx);
        sweep_flags_free(&F);
        return err.code ? err.code : IB_EXIT_RUNTIME;
    }
    char dry[SWEEP_MAX_CANDIDATES][64] = {{0}};
    int drc = sweep_dry_run(&ctx, F.region, dry, &err);
    sweep_plan_print(&F, &ctx, (const char(*)[64])dry, stdout);
    rc = IB_EXIT_OK;
    if (drc != 0) {
        fprintf(stderr, "instbench sweep plan: %s\n", err.msg);
        rc = IB_EXIT_RUNTIME;
    } else if (ctx.plan.verdict == SWEEP_OVER || ctx.plan.verdict == SWEEP_UNPRICED) {
        rc = IB_EXIT_RUNTIME;
    }
    sweep_context_free(&ctx);
    sweep_flags_free(&F);
    return rc;
}
