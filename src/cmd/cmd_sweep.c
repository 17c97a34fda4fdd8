/* cmd/sweep: `instbench sweep plan|run|status|cleanup`, one command with subcommands.  This file
 * only dispatches; `plan` is cmd/cmd_sweep_plan.c, `run` cmd/cmd_sweep_run.c, `status` and `cleanup`
 * cmd/cmd_sweep_status.c, each with its own flag table (so each has its own --help and its own
 * section in docs/cli.md). */
#include <string.h>
#include <strings.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/suggest.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const arg_command *args;
} subs[] = {
    {"plan", cmd_sweep_plan, &cmd_sweep_plan_args},
    {"run", cmd_sweep_run, &cmd_sweep_run_args},
    {"status", cmd_sweep_status, &cmd_sweep_status_args},
    {"cleanup", cmd_sweep_cleanup, &cmd_sweep_cleanup_args},
};
enum { N_SUBS = sizeof subs / sizeof subs[0] };

const arg_command *const cmd_sweep_subcommands[N_SUBS + 1] = {&cmd_sweep_plan_args, &cmd_sweep_run_args,
                                                              &cmd_sweep_status_args, &cmd_sweep_cleanup_args, NULL};

static const arg_spec sweep_specs[] = {{0}};

const arg_command cmd_sweep_args = {
    "sweep",
    "plan|run|status|cleanup [options]",
    "Launches every candidate configuration on EC2, measures it there, collects the results from\n"
    "S3, terminates everything it launched and ranks, under a hard cost ceiling: what the instances\n"
    "can cost if the sweep's process dies (each one's own timer, --max-minutes rounded up, + 5\n"
    "minutes of boot and halt; spot capped by its MaxPrice).  Ctrl-C, SIGTERM, SIGHUP, SIGQUIT or a\n"
    "closed terminal or pipe never leave an instance running unnoticed.\n\n"
    "subcommands:\n"
    "  plan      what a sweep would launch and its worst-case cost; launches nothing (EC2 DryRun)\n"
    "  run       launch, measure, collect, terminate, rank (needs --max-cost)\n"
    "  status    the sweeps started here, with each instance's state and result, and what each may\n"
    "            have left (instances, Elastic IPs, groups)\n"
    "  cleanup   terminate every instance a sweep left and remove its groups and addresses, found by tag",
    "`instbench sweep SUBCOMMAND --help` lists a subcommand's options.\n",
    sweep_specs,
    "SUBCOMMAND",
    (const arg_example[]){{"what a three-candidate sweep would launch and cost",
                           "instbench sweep plan --region us-east-1 --s3 s3://my-bucket/instbench/ "
                           "--candidates g5.xlarge:spot,4xg5.xlarge:spot,g5.12xlarge:on-demand"},
                          {0}},
};

int cmd_sweep(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        /* `instbench sweep -h` (or a flag before any subcommand): the parser prints help or the error. */
        int rc = args_parse(&cmd_sweep_args, argc, argv, NULL, NULL);
        if (rc == ARGS_HELP) return IB_EXIT_OK;
        if (rc) return rc;
        return args_usage_error(&cmd_sweep_args, "give a subcommand: plan, run, status or cleanup");
    }
    const char *names[N_SUBS];
    for (size_t i = 0; i < N_SUBS; i++) {
        names[i] = subs[i].name;
        if (!strcasecmp(argv[1], subs[i].name)) return subs[i].run(argc - 1, argv + 1);
    }
    char dym[128];
    return args_usage_error(&cmd_sweep_args, "unknown subcommand '%s'%s", argv[1],
                            args_did_you_mean(suggest_closest(argv[1], names, N_SUBS), dym, sizeof dym));
}
