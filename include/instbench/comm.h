/* comm: averaging gradients between data-parallel ranks.  local (in-process threads) now, NCCL later. */
#ifndef INSTBENCH_COMM_H
#define INSTBENCH_COMM_H

#include <stddef.h>
#include "instbench/util.h"

typedef struct ib_comm ib_comm;
struct ib_comm {
    const char *name;      /* "local", "nccl" */
    int rank, world_size;
    void *impl;
    /* In place: buf[i] = mean over ranks of buf[i].  Every rank calls it with the same count. */
    int (*allreduce_mean)(ib_comm *c, float *buf, size_t count, ib_error *err);
    int (*broadcast)(ib_comm *c, float *buf, size_t count, int root, ib_error *err);
    int (*barrier)(ib_comm *c, ib_error *err);
    void (*destroy)(ib_comm *c);
};

/* N ranks in one process (one thread each): returns world_size handles, comms[r] for rank r. */
int comm_local_create(int world_size, ib_comm **comms, ib_error *err);

#endif
