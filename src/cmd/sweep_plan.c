/* cmd/sweep_plan: `instbench sweep plan` -- SCAFFOLD, replaced by the plan's implementation. */
#include <stdio.h>

#include "cmd/args.h"
#include "cmd/cmd.h"

static const arg_spec plan_specs[] = {{0}};
const arg_command cmd_sweep_plan_args = {"sweep plan", "[options]", "(not built yet)", NULL, plan_specs, NULL, NULL};

int cmd_sweep_plan(int argc, char **argv)
{
    int rc = args_parse(&cmd_sweep_plan_args, argc, argv, NULL, NULL);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    fprintf(stderr, "instbench sweep plan: not built yet\n");
    return IB_EXIT_RUNTIME;
}
