/* cmd/: one file per subcommand.  Each describes its flags in an arg_command table (cmd/args.h:
 * parsing, --help and docs/cli.md come from it), calls modules, prints, and returns an exit code
 * (0 ok, 1 runtime, 2 usage).  Only cmd/ exits. */
#ifndef INSTBENCH_CMD_H
#define INSTBENCH_CMD_H

int cmd_measure(int argc, char **argv);
int cmd_prices(int argc, char **argv);
int cmd_rank(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_presign(int argc, char **argv);

struct arg_command;
extern const struct arg_command cmd_measure_args, cmd_prices_args, cmd_rank_args, cmd_verify_args, cmd_models_args,
    cmd_presign_args;

#endif
