/* PLACEHOLDER: replaced by the module that owns `instbench models`. */
#include <stdio.h>
#include "cmd/cmd.h"
int cmd_models(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "instbench models: not built yet\n"); return 1; }
