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

#include "instbench/aws_services.h"
#include "instbench/util.h"

#define SWEEP_TAG_SWEEP EC2_TAG_SWEEP            /* "instbench:sweep" */
#define SWEEP_TAG_CANDIDATE EC2_TAG_CANDIDATE    /* "instbench:candidate" */
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

#endif
