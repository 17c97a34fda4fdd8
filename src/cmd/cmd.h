/* cmd/: one file per subcommand.  Each describes its flags in an arg_command table (cmd/args.h:
 * parsing, --help and docs/cli.md come from it), calls modules, prints, and returns an exit code
 * (0 ok, 1 runtime, 2 usage).  Only cmd/ exits. */
#ifndef INSTBENCH_CMD_H
#define INSTBENCH_CMD_H

#include <stddef.h>

int cmd_measure(int argc, char **argv);
/* measure's own checks of its flags, without running anything: the parse, the identity names and
 * the model (what `sweep` runs on the flags after `--` before it launches).  ARGV[0] is the
 * command's name.  0; ARGS_HELP (cmd/args.h) after printing measure's help (-h among them); or the
 * exit status (2) with measure's message on stderr.  *GPU_BF16: 1 when a GPU would run bf16
 * matmuls (--precision bf16, its default, on any backend but cpu). */
int cmd_measure_check_args(int argc, char **argv, int *gpu_bf16);
/* args_value_follows for measure's flags: what cmd_measure hands bench (bench_measure_value_follows). */
int cmd_measure_value_follows(const char *a);
int cmd_prices(int argc, char **argv);
int cmd_rank(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_presign(int argc, char **argv);
int cmd_sweep(int argc, char **argv);         /* dispatches to the four below (cmd/cmd_sweep.c) */
int cmd_sweep_plan(int argc, char **argv);    /* cmd/cmd_sweep_plan.c */
int cmd_sweep_run(int argc, char **argv);     /* cmd/cmd_sweep_run.c */
int cmd_sweep_status(int argc, char **argv);  /* cmd/cmd_sweep_status.c */
int cmd_sweep_cleanup(int argc, char **argv); /* cmd/cmd_sweep_cleanup.c */

/* rank_s3.c: the s3:// inputs of rank (rank_load_options.remote). */
typedef struct rank_s3 rank_s3;
struct rank_sink;
rank_s3 *rank_s3_new(void);
void rank_s3_free(rank_s3 *r);
void rank_s3_read(void *ctx, const char *uri, struct rank_sink *sink);
struct ib_error;
/* Every s3:// input names a valid bucket: exit 2 with the reason otherwise. */
int rank_s3_check_inputs(char *const *paths, size_t n, struct ib_error *err);

struct arg_command;
extern const struct arg_command cmd_measure_args, cmd_prices_args, cmd_rank_args, cmd_verify_args, cmd_models_args,
    cmd_presign_args, cmd_sweep_args, cmd_sweep_plan_args, cmd_sweep_run_args, cmd_sweep_status_args,
    cmd_sweep_cleanup_args;
/* sweep's subcommands' tables, NULL-terminated: docs/cli.md prints each after sweep's own. */
extern const struct arg_command *const cmd_sweep_subcommands[];

#endif
