/* PLACEHOLDER: replaced by the module that owns `instbench verify`. */
#include <stdio.h>
#include "cmd/cmd.h"
int cmd_verify(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "instbench verify: not built yet\n"); return 1; }
