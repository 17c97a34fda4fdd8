/* libFuzzer target: the rendezvous read from a launcher's environment (src/bench/rendezvous.c):
 * torchrun's, Kubeflow's and Slurm's variables, which a job's template, a script or another
 * process's /proc/PID/environ (job_procs.c) supply.  Input: byte 0 the in-process ranks (1..256,
 * --ranks' bounds), byte 1 which rendezvous flags are given (bit 0 --nnodes, 1 --node-rank,
 * 2 --master-port, 3 --master-addr, its value the variable FLAG_MASTER_ADDR), bytes 2-3 their
 * numbers, then "NAME=value" strings, each ended by a NUL, as /proc/PID/environ holds them.
 * No input may crash or overflow; a refusal is a usage error in one terminal-safe line; whatever
 * is accepted is a topology the job can have: every rank inside its count, the world a multiple
 * of the in-process ranks and no smaller than the node count, the id's port a port, rank 0's
 * address a host name or an IP address. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_ids.h"
#include "instbench/bench.h"

/* The strings, each after a NUL (one added in front of the first, one after the last). */
static char *block;
static size_t block_len;

/* NAME's value: the first string of the block that starts "NAME=". */
static const char *get(const char *name)
{
    char key[80];
    const int k = snprintf(key + 1, sizeof key - 1, "%s=", name) + 1;
    key[0] = '\0';
    const char *hit = memmem(block, block_len, key, (size_t)k);
    return hit ? hit + k : NULL;
}

static void terminal_safe(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    const int ranks = 1 + data[0];
    const int given = data[1];
    bench_rendezvous_flags f = {-1, -1, -1, NULL, 0};
    /* within the bounds measure's parser gives these flags */
    if (given & 1) f.nnodes = 1 + (data[2] << 8 | data[3]) % 100000;
    if (given & 2) f.node_rank = data[3] % 4;
    if (given & 4) f.master_port = 1 + (data[2] << 8 | data[3]) % 65535;
    block_len = size - 4 + 2;
    if (!(block = malloc(block_len))) return 0;
    block[0] = block[block_len - 1] = '\0';
    memcpy(block + 1, data + 4, size - 4);
    if (given & 8) f.master_addr = get("FLAG_MASTER_ADDR");

    bench_rendezvous r;
    ib_error err = {0};
    if (rendezvous_resolve_with(&f, ranks, get, &r, &err) != 0) {
        terminal_safe(err.msg);
        if (err.code != IB_EXIT_USAGE || !err.msg[0]) abort();
    } else {
        static const char *const kinds[] = {"none", "torchrun", "env", "kubeflow-trainer", "slurm", "flags"};
        int known = 0;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) known |= !strcmp(r.kind, kinds[k]);
        if (!known) abort();
        if (r.nnodes < 1 || r.node_rank < 0 || r.node_rank >= r.nnodes || r.world_size < r.nnodes || r.rank < 0 ||
            r.rank >= r.world_size || r.world_size % ranks || r.rank % ranks || r.local_rank < 0 ||
            r.local_rank >= r.local_world_size || r.local_world_size % ranks)
            abort();
        if (r.id_port < 1 || r.id_port > 65535 || r.master_port < 1 || r.master_port > 65535) abort();
        if (!aws_host_valid(r.master_addr)) abort();
        terminal_safe(r.note);
    }
    free(block);
    block = NULL;
    return 0;
}
