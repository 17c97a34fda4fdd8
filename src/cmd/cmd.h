/* cmd/: one file per subcommand.  Each parses its own flags (argv[0] is the subcommand name),
 * calls modules, prints, and returns an exit code (0 ok, 1 runtime, 2 usage).  Only cmd/ exits. */
#ifndef INSTBENCH_CMD_H
#define INSTBENCH_CMD_H

int cmd_measure(int argc, char **argv);
int cmd_prices(int argc, char **argv);
int cmd_rank(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_models(int argc, char **argv);

#endif
