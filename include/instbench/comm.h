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

/* TCP rendezvous (comm/rendezvous_tcp.c): how a fixed-size blob (the NCCL unique id) made by the
 * job's rank-0 process reaches the other processes.  Rank 0 listens on MASTER_PORT (all
 * interfaces) and serves `npeers` peers; the others connect to MASTER_ADDR:MASTER_PORT, retrying
 * until the deadline (rank 0 may start later).  Wire format, both directions: "IBRV0001" then a
 * 4-byte big-endian length; the server's reply carries the blob after it.  A peer with another
 * magic or length is dropped and not counted.  Every wait is bounded by timeout_s. */
typedef struct rendezvous_tcp_server {
    int fd;
    int port;   /* the bound port (the one asked for, or the kernel's pick for 0) */
} rendezvous_tcp_server;
int rendezvous_tcp_listen(int port, rendezvous_tcp_server *s, ib_error *err);
int rendezvous_tcp_serve(rendezvous_tcp_server *s, int npeers, const void *blob, size_t len, double timeout_s,
                         ib_error *err);
void rendezvous_tcp_close(rendezvous_tcp_server *s);
int rendezvous_tcp_fetch(const char *addr, int port, void *blob, size_t len, double timeout_s, ib_error *err);

#endif
