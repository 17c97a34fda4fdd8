/* PLACEHOLDER: replaced by the module that owns `instbench measure`. */
#include <stdio.h>
#include "cmd/cmd.h"
int cmd_measure(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "instbench measure: not built yet\n"); return 1; }
