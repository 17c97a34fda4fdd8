/* cudnn_standin: what the CPU stand-in of libcudnn (cudnn_standin.c) tells the tests beyond
 * cuDNN's own API; looked up with dlsym on the library the glue loaded. */
#ifndef INSTBENCH_TESTS_CUDNN_STANDIN_H
#define INSTBENCH_TESTS_CUDNN_STANDIN_H

typedef struct cudnn_standin_counts {
    long handles;        /* live cudnnHandle_t */
    long descriptors;    /* live backend descriptors */
    long graphs;         /* operation graphs finalized (read, checked) */
    long plans;          /* execution plans finalized */
    long executions;     /* cudnnBackendExecute calls (queued) */
    long executions_run; /* ... of which ran on their stream (a captured one runs once per launch) */
} cudnn_standin_counts;

typedef void (*cudnn_standin_get_counts_fn)(cudnn_standin_counts *out);
void cudnn_standin_get_counts(cudnn_standin_counts *out);

#endif
