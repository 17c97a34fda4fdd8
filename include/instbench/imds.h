/* imds: EC2 instance identity through IMDSv2 (aws/imds.c).  Used by measure. */
#ifndef INSTBENCH_IMDS_H
#define INSTBENCH_IMDS_H

#include "instbench/util.h"

typedef struct aws_instance_identity {
    char instance_id[32];
    char instance_type[64];
    char region[32];
    char availability_zone[32];
    char availability_zone_id[32]; /* use1-az2; "" when IMDS has no placement/availability-zone-id */
    char lifecycle[16];            /* "spot" | "on-demand" | another word (e.g. "scheduled") | "" unknown */
} aws_instance_identity;

/* Honours AWS_EC2_METADATA_SERVICE_ENDPOINT and AWS_EC2_METADATA_DISABLED=true.  Off EC2 it fails
 * within about a second (short connect timeout), returning -1 with a message.  Every answer is
 * checked before it is kept (instbench/names.h: instance type, zone, region and the zone within
 * it; lifecycle one lower-case word): a malformed one returns -2 with a message naming the
 * metadata path, and OUT is left empty; so does an AWS_EC2_METADATA_SERVICE_ENDPOINT whose scheme
 * the server there does not speak (https:// at plain HTTP, http:// at TLS), naming the variable.  A malformed instance id is left "" (informational).  The
 * zone ID is optional (older IMDS versions lack it) but, when answered, must be shaped like one
 * (names_zone_is_id): it is what maps this account's zone name to the ID prices use. */
int aws_imds_identity(aws_instance_identity *out, ib_error *err);

#endif
