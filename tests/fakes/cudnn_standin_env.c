/* Linked into the test programs and the simulated module that carry the cuDNN glue: they load the
 * CPU stand-in of libcudnn (cudnn_standin.c) unless INSTBENCH_CUDNN_LIBRARY already names a
 * library (a test of the fallback names one that cannot load).  Set before main, and before the
 * simulated module's first call, so every process a test starts sees the same.
 *
 * With INSTBENCH_TEST_CUDNN_RUNS set (ctest sets it where a fixture's shape is one cuDNN takes),
 * a program in which no attention ran through the stand-in fails at exit: a glue that silently
 * fell back to the unfused path would otherwise pass every comparison with timm. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cudnn_standin.h"

__attribute__((constructor)) static void use_the_cudnn_standin(void)
{
    setenv("INSTBENCH_CUDNN_LIBRARY", INSTBENCH_CUDNN_STANDIN, 0);
}

__attribute__((destructor)) static void check_the_cudnn_standin_ran(void)
{
    const char *want = getenv("INSTBENCH_TEST_CUDNN_RUNS");
    if (!want || !*want) return;
    void *h = dlopen(INSTBENCH_CUDNN_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    cudnn_standin_get_counts_fn counts = h ? (cudnn_standin_get_counts_fn)dlsym(h, "cudnn_standin_get_counts") : NULL;
    cudnn_standin_counts c = {0};
    if (counts) counts(&c);
    if (c.executions_run < 1) {
        fprintf(stderr, "FAIL: no attention ran through the cuDNN stand-in (%s)\n",
                h ? "loaded, never executed" : "never loaded");
        fflush(stderr);
        _exit(1);
    }
}
