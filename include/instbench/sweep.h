/* sweep: `instbench sweep plan|run|status|cleanup` launches candidate configurations on EC2,
 * measures each, collects the results from S3, terminates everything and ranks (issue 23).
 *
 * Deciding apart from doing:
 *   src/sweep/candidates.c  "[Nx]TYPE[:on-demand|spot]" specs, checked against the catalogue
 *   src/sweep/plan.c        a pure function: candidates + prices + AMIs + bounds -> launch lines,
 *                           worst-case cost, the verdict against --max-cost
 *   src/sweep/userdata.c    the instance's script (src/sweep/userdata.sh, embedded at build time)
 *                           rendered with presigned URLs only, never a credential, <= 16 KB
 *   src/sweep/state.c       $XDG_STATE_HOME/instbench/sweeps/<id>.json, written atomically,
 *                           before the first RunInstances and at every change
 *   src/sweep/executor.c    the only part that talks to AWS (EC2, SSM, S3): launch, watch,
 *                           collect, terminate whatever happened
 * Every resource the sweep creates carries the tag SWEEP_TAG_SWEEP=<id>, so `sweep cleanup`
 * finds it by tag even when the state file is gone. */
#ifndef INSTBENCH_SWEEP_H
#define INSTBENCH_SWEEP_H

#include <stddef.h>
#include <time.h>

#include "instbench/util.h"

#define SWEEP_TAG_SWEEP "instbench:sweep"
#define SWEEP_TAG_CANDIDATE "instbench:candidate"
#define SWEEP_ID_MAX 32                  /* "20261125-213005-9f3a" + NUL, with room */
#define SWEEP_USERDATA_MAX 16384         /* EC2's limit on user data before base64 */

/* A new sweep id: "YYYYMMDD-HHMMSS-xxxx" (UTC of `now`, 4 random hex digits).  It is a valid EC2
 * tag value, file name and S3 key segment, and sorts by start time. */
int sweep_id_new(time_t now, char out[SWEEP_ID_MAX], ib_error *err);
/* 1 when ID has that shape (what `sweep status|cleanup ID` accept), else 0. */
int sweep_id_valid(const char *id);

/* One candidate configuration: N nodes of TYPE on one market. */
typedef struct sweep_candidate {
    int nodes;               /* N of "Nx"; 1 when absent */
    char type[64];           /* "g5.xlarge" */
    int spot;                /* 1 only when ":spot" was written; no market means on-demand */
    char spec[96];           /* canonical form, the candidate tag's value: "4xg5.xlarge:spot" */
} sweep_candidate;

/* The instance's side (src/sweep/userdata.c + the template src/sweep/userdata.sh, embedded at
 * build time).  The user data is a bash script: the values below are filled in as one block of
 * single-quoted shell assignments, the rest is the template as shipped.  It carries presigned URLs
 * only: the API has no field for a credential, and each URL is an S3 presigned one whose signature
 * proves the key without carrying the secret.  (A URL presigned with temporary credentials carries
 * the access key id and the session token as X-Amz-Credential / X-Amz-Security-Token, as every
 * presigned URL does; the secret access key is never anywhere in it.)
 *
 * Room: EC2 takes at most SWEEP_USERDATA_MAX bytes, and every node of a candidate gets the same
 * user data (one RunInstances call), so each node's log URL is in every node's copy.  A presigned
 * URL is ~600 bytes (~1,400 with a session token), so 64 nodes' log URLs (38 KB+) cannot fit.  The
 * renderer keeps the log URLs of the lowest launch indexes that fit, always node 0's (the result's
 * node; a build failure is the same on every node, and a failed rank makes node 0's measure fail
 * too, naming it), and drops the others; a node without a log URL says so in its own log and
 * powers off as the others do.  Only when the script with node 0's log URL alone does not fit is
 * rendering refused (the measure flags or URLs are too long). */
#define SWEEP_NODES_MAX 64               /* the largest candidate the user data is sized for */
/* The source archive's file name, beside the instbench executable (build dir, or install bindir). */
#define SWEEP_SOURCE_ARCHIVE_NAME "instbench-src.tar.gz"

typedef struct sweep_userdata_vars {
    const char *sweep_id;           /* sweep_id_valid */
    const char *candidate_spec;     /* "4xg5.xlarge:spot" (logged, not interpreted) */
    int nodes;                      /* 1..SWEEP_NODES_MAX */
    double max_minutes;             /* the instance's own timer: `shutdown -h +ceil(M)` set first */
    const char *region;
    const char *market;             /* "spot" | "on-demand" (logged; measure reads IMDS's) */
    const char *source_url;         /* presigned GET of the source archive */
    const char *source_sha256;      /* 64 hex digits; the script checks the download against it */
    const char *result_url;         /* presigned PUT: node 0 (launch index 0) delivers the result */
    const char *const *log_urls;    /* NODES presigned PUTs, by launch index: the last 64 KiB of the
                                       log on any failure (see "Room" above for which are kept) */
    const char *rendezvous_url;     /* presigned GET of the object holding node 0's private IP, one
                                       line (multi-node only; NULL for 1 node) */
    char *const *measure_args;      /* the flags after `--`, each quoted by the renderer */
    size_t n_measure_args;
} sweep_userdata_vars;

/* The script with every value filled in, shell-quoted (any byte but NUL is safe in a value), in a
 * malloc'd NUL-terminated *OUT.  Bad values (an invalid id, nodes out of range, a URL that is not
 * http(s), a digest that is not 64 hex digits, a missing log or rendezvous URL) are IB_EXIT_USAGE
 * errors; a script over SWEEP_USERDATA_MAX bytes even with node 0's log URL alone is an
 * IB_EXIT_USAGE error naming its size. */
int sweep_userdata_render(const sweep_userdata_vars *v, char **out, ib_error *err);
/* How many of V's log URLs (launch indexes 0..k-1) a rendered script carries: k, or -1 with ERR
 * set when it cannot be rendered (sweep_userdata_render's errors). */
int sweep_userdata_log_nodes(const sweep_userdata_vars *v, ib_error *err);
/* The source archive the build made beside this binary (SWEEP_SOURCE_ARCHIVE_NAME next to
 * /proc/self/exe): its path and SHA-256 (lower-case hex), or an IB_EXIT_RUNTIME error that says how
 * to build it (`cmake --build BUILD --target instbench_source_archive`). */
int sweep_source_archive(char *path, size_t path_len, char sha256_hex[65], ib_error *err);

#endif
