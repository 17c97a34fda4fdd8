/* Linked into the test programs and the simulated module that carry the cuDNN glue: they load the
 * CPU stand-in of libcudnn (cudnn_standin.c) unless INSTBENCH_CUDNN_LIBRARY already names a
 * library (a test of the fallback names one that cannot load).  Set before main, and before the
 * simulated module's first call, so every process a test starts sees the same. */
#include <stdlib.h>

__attribute__((constructor)) static void use_the_cudnn_standin(void)
{
    setenv("INSTBENCH_CUDNN_LIBRARY", INSTBENCH_CUDNN_STANDIN, 0);
}
