/* PLACEHOLDER: replaced by the module that owns `instbench prices`. */
#include <stdio.h>
#include "cmd/cmd.h"
int cmd_prices(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "instbench prices: not built yet\n"); return 1; }
