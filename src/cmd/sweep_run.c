/* cmd/sweep_run: `instbench sweep run|status|cleanup` -- SCAFFOLD, replaced by the executor's CLI. */
#include <stdio.h>

#include "cmd/args.h"
#include "cmd/cmd.h"

static const arg_spec none[] = {{0}};
const arg_command cmd_sweep_run_args = {"sweep run", "[options]", "(not built yet)", NULL, none, NULL, NULL};
const arg_command cmd_sweep_status_args = {"sweep status", "[ID]", "(not built yet)", NULL, none, "ID", NULL};
const arg_command cmd_sweep_cleanup_args = {"sweep cleanup", "ID|--all", "(not built yet)", NULL, none, "ID", NULL};

static int scaffold(const arg_command *a, int argc, char **argv)
{
    char *pos[argc];
    int n = 0, rc = args_parse(a, argc, argv, pos, &n);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    fprintf(stderr, "instbench %s: not built yet\n", a->name);
    return IB_EXIT_RUNTIME;
}

int cmd_sweep_run(int argc, char **argv) { return scaffold(&cmd_sweep_run_args, argc, argv); }
int cmd_sweep_status(int argc, char **argv) { return scaffold(&cmd_sweep_status_args, argc, argv); }
int cmd_sweep_cleanup(int argc, char **argv) { return scaffold(&cmd_sweep_cleanup_args, argc, argv); }
