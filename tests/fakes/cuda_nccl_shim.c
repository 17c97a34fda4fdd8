/* cuda_nccl_shim: NCCL's collectives for the CPU tests of the CUDA data-parallel path
 * (tests/cuda/cuda_dp_host.c, cuda_runner_host.c, the simulated module), between the rank threads of
 * one process (ncclCommInitAll) or between processes (ncclCommInitRank with the unique id that
 * src/cuda/dp.c hands out over the real TCP rendezvous).  Host memory only.
 *
 * Like NCCL's, a collective is work on its stream (cuda_host_runtime.c's shim_enqueue): the call
 * returns at once; the op may start when it heads its stream (so after whatever the stream was
 * made to wait for) and every rank of the communicator has reached the same collective (the k-th
 * call of each rank).  A rank reaching it copies its send buffer into the group's shared memory;
 * when all have, each rank reduces the copies, in rank order, into its receive buffer.  So a rank
 * that starts a collective before its data is ready reduces stale data, as on a GPU.
 *
 * The group's state lives in one shared mapping: anonymous for threads; for processes a POSIX
 * shared-memory object named after the unique id, unlinked once every rank has attached (so a
 * crashed test leaves nothing behind).  Its lock is a robust process-shared mutex: a rank killed
 * while holding it does not hang the others.  A dead process is not reported by
 * ncclCommGetAsyncError (NCCL over shared memory or NVLink does not either): its peers' collectives
 * simply never complete, which is what the job's own liveness channel and deadline must handle. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nccl.h>

#include "cuda_host_runtime.h"

#define MAX_RANKS 8
#define SLOTS 8                       /* collectives in flight per communicator */
#define SLOT_FLOATS ((size_t)8 << 20) /* 32 MiB per rank per collective (DDP's 25 MiB buckets fit) */

typedef struct slot {
    unsigned long seq; /* which collective (0: free) */
    int arrived, ran;  /* ranks that posted their data / that ran it */
    int posted[MAX_RANKS];
} slot;

typedef struct shared_group {
    int state; /* 0 fresh, 1 being set up, 2 ready */
    int n, attached;
    pthread_mutex_t lock; /* robust, process-shared */
    slot slots[SLOTS];
} shared_group;
#define HEADER_BYTES ((sizeof(shared_group) + 4095) / 4096 * 4096)
#define MAP_BYTES (HEADER_BYTES + (size_t)SLOTS * MAX_RANKS * SLOT_FLOATS * sizeof(float))

struct ncclComm {
    shared_group *g;
    int rank;
    unsigned long issued; /* collectives this rank has called */
    int *maps;            /* this process's comms on g's mapping: the last to go unmaps it */
    int entered;          /* threads inside a call on this comm now (NCCL allows one) */
    char name[64];        /* the shared-memory object, while not every rank has joined ("" after) */
};

/* NCCL forbids concurrent calls on one communicator (an abort from one thread while another is in
 * ncclCommGetAsyncError or a collective on it): every call on a comm enters it, and a second
 * thread inside at once is recorded here (the first one; "" if none), for the tests to fail on. */
char nccl_shim_violation[256];
static void enter(ncclComm_t c, const char *call)
{
    if (__atomic_fetch_add(&c->entered, 1, __ATOMIC_ACQ_REL) && !nccl_shim_violation[0])
        snprintf(nccl_shim_violation, sizeof nccl_shim_violation,
                 "%s on the communicator of rank %d while another thread is inside a call on it", call, c->rank);
}
static void leave(ncclComm_t c) { __atomic_fetch_sub(&c->entered, 1, __ATOMIC_ACQ_REL); }

static float *slot_data(shared_group *g, unsigned long seq, int rank)
{
    return (float *)((char *)g + HEADER_BYTES) + ((seq % SLOTS) * MAX_RANKS + (size_t)rank) * SLOT_FLOATS;
}

static void group_lock(shared_group *g)
{
    if (pthread_mutex_lock(&g->lock) == EOWNERDEAD) pthread_mutex_consistent(&g->lock); /* its owner died */
}

/* Sets up a fresh mapping once, whoever gets there first; the others wait for it. */
static void group_setup(shared_group *g, int n)
{
    int fresh = 0;
    if (__atomic_compare_exchange_n(&g->state, &fresh, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&g->lock, &a);
        pthread_mutexattr_destroy(&a);
        g->n = n;
        __atomic_store_n(&g->state, 2, __ATOMIC_RELEASE);
        return;
    }
    const struct timespec nap = {0, 100 * 1000};
    while (__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) != 2) nanosleep(&nap, NULL);
}

static void group_unmap(shared_group *g) { munmap(g, MAP_BYTES); }

int nccl_shim_allreduces; /* calls so far (rank 0's), for tests that a path really used NCCL */
/* A peer that is gone (test hook): 1, collectives are queued and never complete (their streams
 * are stuck) and the async error reports ncclRemoteError, as NCCL does when a peer's connection
 * drops; 2, the same without any error (a peer that hangs: only a deadline helps). */
int nccl_shim_dead_peer, nccl_shim_aborts;

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int n, const int *devs)
{
    (void)devs;
    if (n < 1 || n > MAX_RANKS) return ncclInvalidArgument;
    shared_group *g = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (g == MAP_FAILED) return ncclSystemError;
    group_setup(g, n);
    g->attached = n;
    int *maps = malloc(sizeof *maps);
    if (!maps) return ncclSystemError;
    *maps = n;
    for (int i = 0; i < n; i++) {
        comms[i] = calloc(1, sizeof **comms);
        comms[i]->g = g, comms[i]->rank = i, comms[i]->maps = maps;
    }
    return ncclSuccess;
}

/* The shared-memory object of unique id ID: "/instbench-nccl-shim-" and the id's first 16 bytes in hex. */
static void object_name(const ncclUniqueId *id, char name[64])
{
    int len = snprintf(name, 64, "/instbench-nccl-shim-");
    for (int i = 0; i < 16; i++)
        len += snprintf(name + len, (size_t)(64 - len), "%02x", (unsigned char)id->internal[i]);
}

/* The ranks of C's group that have joined (ncclCommInitRank* calls made so far, over all processes). */
static int joined(ncclComm_t c)
{
    group_lock(c->g);
    const int a = c->g->attached;
    pthread_mutex_unlock(&c->g->lock);
    return a;
}

static ncclResult_t init_rank(ncclComm_t *c, int n, ncclUniqueId id, int rank);

/* A blocking init returns only once every rank has joined, as NCCL's does (it has no bound: a
 * peer that never comes hangs it).  The stand-in gives up after INIT_BLOCK_S with a message, so
 * a test of such a path fails instead of hanging. */
#define INIT_BLOCK_S 60
ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int rank)
{
    ncclResult_t r = init_rank(c, n, id, rank);
    if (r != ncclSuccess) return r;
    const struct timespec nap = {0, 1000 * 1000};
    for (long waited = 0; joined(*c) < n; waited++) {
        if (waited > INIT_BLOCK_S * 1000L) {
            fprintf(stderr,
                    "nccl shim: ncclCommInitRank (rank %d of %d) blocked %d s for ranks that never joined: "
                    "NCCL would block for ever here\n",
                    rank, n, INIT_BLOCK_S);
            ncclCommAbort(*c);
            *c = NULL;
            return ncclSystemError;
        }
        nanosleep(&nap, NULL);
    }
    return ncclSuccess;
}

/* config->blocking 0: returns ncclInProgress at once while a rank has not joined yet; the comm's
 * ncclCommGetAsyncError says ncclInProgress until they all have (a peer that never arrives: for
 * ever), then ncclSuccess.  Blocking configs behave as ncclCommInitRank. */
ncclResult_t ncclCommInitRankConfig(ncclComm_t *c, int n, ncclUniqueId id, int rank, ncclConfig_t *config)
{
    if (!config || config->blocking) return ncclCommInitRank(c, n, id, rank);
    ncclResult_t r = init_rank(c, n, id, rank);
    if (r != ncclSuccess) return r;
    return joined(*c) < n ? ncclInProgress : ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *c, int n, ncclUniqueId id, int rank)
{
    *c = NULL;
    if (n < 1 || n > MAX_RANKS || rank < 0 || rank >= n) return ncclInvalidArgument;
    char name[64];
    object_name(&id, name);
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)MAP_BYTES) != 0) {
        fprintf(stderr, "nccl shim: %s: %s\n", name, strerror(errno));
        if (fd >= 0) close(fd);
        return ncclSystemError;
    }
    shared_group *g = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (g == MAP_FAILED) return ncclSystemError;
    group_setup(g, n);
    group_lock(g);
    const int ok = g->n == n && g->attached < n;
    const int all = ok && ++g->attached == n;
    pthread_mutex_unlock(&g->lock);
    if (!ok) {
        group_unmap(g);
        return ncclInvalidUsage; /* another world size under the same id, or one rank too many */
    }
    if (all) shm_unlink(name); /* everyone has it mapped: nothing left behind from here on */
    *c = calloc(1, sizeof **c);
    int *maps = malloc(sizeof *maps);
    if (!*c || !maps) {
        free(*c), free(maps);
        *c = NULL;
        group_unmap(g);
        return ncclSystemError;
    }
    *maps = 1;
    (*c)->g = g, (*c)->rank = rank, (*c)->maps = maps;
    if (!all) snprintf((*c)->name, sizeof(*c)->name, "%s", name); /* unlinked by an abort if no one else does */
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    /* ncclCommInitAll's ranks share one mapping: the last one unmaps it */
    if (__atomic_sub_fetch(c->maps, 1, __ATOMIC_ACQ_REL) == 0) {
        group_unmap(c->g);
        free(c->maps);
    }
    free(c);
    return ncclSuccess;
}

typedef enum { ALLREDUCE_SUM, ALLREDUCE_AVG, BROADCAST } coll_kind;
typedef struct coll_op {
    ncclComm_t c;
    unsigned long seq; /* 1-based */
    coll_kind kind;
    int root;
    const float *send;
    float *recv;
    size_t count;
} coll_op;

/* the slot of collective SEQ, claimed by the first rank to get there; NULL while it still holds
 * collective SEQ - SLOTS (a rank may run that far ahead of the slowest).  Under the lock. */
static slot *slot_of(shared_group *g, unsigned long seq)
{
    slot *s = &g->slots[seq % SLOTS];
    if (s->seq == seq) return s;
    if (s->seq != 0) return NULL;
    memset(s, 0, sizeof *s);
    s->seq = seq;
    return s;
}

/* Heading its stream: post this rank's data (once), then ready when every rank has. */
static int coll_ready(void *p)
{
    coll_op *o = p;
    if (nccl_shim_dead_peer) return -1; /* the peer never joins */
    shared_group *g = o->c->g;
    const int me = o->c->rank;
    group_lock(g);
    slot *s = slot_of(g, o->seq);
    int ready = 0;
    if (s) {
        if (!s->posted[me]) {
            if (o->kind != BROADCAST || me == o->root)
                memcpy(slot_data(g, o->seq, me), o->send, o->count * sizeof(float));
            s->posted[me] = 1;
            s->arrived++;
        }
        ready = s->arrived == g->n;
    }
    pthread_mutex_unlock(&g->lock);
    return ready;
}

/* Every rank's data is posted: this rank's result, summed in rank order like every other rank's. */
static void coll_run(void *p)
{
    coll_op *o = p;
    shared_group *g = o->c->g;
    const int n = g->n;
    if (o->kind == BROADCAST) memcpy(o->recv, slot_data(g, o->seq, o->root), o->count * sizeof(float));
    else
        for (size_t i = 0; i < o->count; i++) {
            float a = 0;
            for (int r = 0; r < n; r++) a += slot_data(g, o->seq, r)[i];
            o->recv[i] = o->kind == ALLREDUCE_AVG ? a / n : a;
        }
    group_lock(g);
    slot *s = &g->slots[o->seq % SLOTS];
    if (++s->ran == n) s->seq = 0; /* every rank has its result: the slot is free */
    pthread_mutex_unlock(&g->lock);
}

static ncclResult_t collective(coll_kind kind, const void *send, void *recv, size_t count, ncclDataType_t dt, int root,
                               ncclComm_t c, cudaStream_t s)
{
    if (dt != ncclFloat32 || !c || (kind == BROADCAST && (root < 0 || root >= c->g->n))) return ncclInvalidArgument;
    if (count > SLOT_FLOATS) {
        fprintf(stderr, "nccl shim: a collective of %zu floats; at most %zu\n", count, SLOT_FLOATS);
        return ncclInvalidArgument;
    }
    coll_op *o = malloc(sizeof *o);
    if (!o) return ncclSystemError;
    enter(c, kind == BROADCAST ? "ncclBroadcast" : "ncclAllReduce");
    *o = (coll_op){c, ++c->issued, kind, root, send, recv, count};
    shim_enqueue(s, &(shim_work){coll_run, coll_ready, free, o, c});
    leave(c);
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op, ncclComm_t c,
                           cudaStream_t s)
{
    if (op != ncclSum && op != ncclAvg) return ncclInvalidArgument;
    if (c && c->rank == 0) __atomic_add_fetch(&nccl_shim_allreduces, 1, __ATOMIC_SEQ_CST);
    return collective(op == ncclAvg ? ALLREDUCE_AVG : ALLREDUCE_SUM, send, recv, count, dt, 0, c, s);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t dt, int root, ncclComm_t c,
                           cudaStream_t s)
{
    return collective(BROADCAST, send, recv, count, dt, root, c, s);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r)
{
    enter(c, "ncclCommGetAsyncError");
    *r = joined(c) < c->g->n ? ncclInProgress : nccl_shim_dead_peer == 1 ? ncclRemoteError : ncclSuccess;
    leave(c);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c)
{
    enter(c, "ncclCommAbort");
    __atomic_add_fetch(&nccl_shim_aborts, 1, __ATOMIC_SEQ_CST);
    /* NCCL's abort takes a while (it tears down connections and kernels): long enough here that a
     * thread polling the same comm meanwhile is seen */
    const struct timespec nap = {0, 2 * 1000 * 1000};
    nanosleep(&nap, NULL);
    shim_drop_owner(c);                  /* its queued collectives end: what waited on them runs */
    if (c->name[0]) shm_unlink(c->name); /* a group that never completed leaves nothing behind */
    leave(c);
    return ncclCommDestroy(c);
}

/* random bytes, so two jobs (two tests at once) never share a group */
ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, id->internal, 16) : -1;
    if (fd >= 0) close(fd);
    return got == 16 ? ncclSuccess : ncclSystemError;
}
ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }
ncclResult_t ncclGetVersion(int *v)
{
    *v = 0;
    return ncclSuccess;
}
const char *ncclGetErrorString(ncclResult_t r) { return "nccl shim error"; }
