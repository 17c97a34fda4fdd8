/* network: which instance types can carry NCCL's traffic over EFA, so a multi-node row that ran
 * over TCP sockets on one of them is marked.  The list is AWS's "Supported instance types" of the
 * Elastic Fabric Adapter user guide (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html,
 * read 2026-11-27), accelerated computing types (the ones instbench measures) only; a type it lacks
 * is simply not marked.  DescribeInstanceTypes' NetworkInfo.EfaSupported says the same per type. */
#include "rank/internal.h"

#include <string.h>

static const char *const efa_types[] = {
    "dl1.24xlarge",  "dl2q.24xlarge", "g4dn.8xlarge",   "g4dn.12xlarge",  "g4dn.16xlarge",  "g4dn.metal",
    "g5.8xlarge",    "g5.12xlarge",   "g5.16xlarge",    "g5.24xlarge",    "g5.48xlarge",    "g6.8xlarge",
    "g6.12xlarge",   "g6.16xlarge",   "g6.24xlarge",    "g6.48xlarge",    "g6e.8xlarge",    "g6e.12xlarge",
    "g6e.16xlarge",  "g6e.24xlarge",  "g6e.48xlarge",   "gr6.8xlarge",    "inf2.48xlarge",  "p3dn.24xlarge",
    "p4d.24xlarge",  "p4de.24xlarge", "p5.48xlarge",    "p5e.48xlarge",   "p5en.48xlarge",  "trn1.32xlarge",
    "trn1n.32xlarge", "trn2.48xlarge",
};

int rank_type_has_efa(const char *type)
{
    for (size_t i = 0; i < sizeof efa_types / sizeof *efa_types; i++)
        if (!strcmp(type, efa_types[i])) return 1;
    return 0;
}
