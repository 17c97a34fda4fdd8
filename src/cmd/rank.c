/* PLACEHOLDER: replaced by the module that owns `instbench rank`. */
#include <stdio.h>
#include "cmd/cmd.h"
int cmd_rank(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "instbench rank: not built yet\n"); return 1; }
