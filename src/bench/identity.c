/* identity: which instance this result stands for.  EC2 instance metadata (IMDSv2) unless the
 * flags give all of type, region and market; flags override what IMDS says.  Off EC2 the lookup
 * costs at most about a second (aws/imds.c); what it answers is checked there, and a malformed
 * answer is an error rather than an identity. */
#include "instbench/bench.h"

#include <stdio.h>
#include <string.h>

#include "instbench/imds.h"

int identity_resolve(const char *type, const char *region, const char *market, int count, bench_identity *id,
                     ib_error *err)
{
    memset(id, 0, sizeof *id);
    strcpy(id->source, "unknown");
    id->count = count > 0 ? count : 1;
    if (!(type && region && market)) {
        aws_instance_identity imds;
        ib_error ierr = {0};
        double t0 = util_now_seconds();
        ib_debug("identity: reading EC2 instance metadata (IMDSv2)");
        int rc = aws_imds_identity(&imds, &ierr);
        /* A malformed answer is not "off EC2": a result must not carry, nor rank later reject, it. */
        if (rc == -2)
            return ib_error_set(err, IB_EXIT_RUNTIME, "instance identity: %s (--instance-type, --region and "
                                "--market together skip instance metadata)", ierr.msg);
        if (rc == 0) {
            ib_debug("identity: instance metadata answered in %.2f s", util_now_seconds() - t0);
            snprintf(id->type, sizeof id->type, "%s", imds.instance_type);
            snprintf(id->region, sizeof id->region, "%s", imds.region);
            snprintf(id->availability_zone, sizeof id->availability_zone, "%s", imds.availability_zone);
            snprintf(id->availability_zone_id, sizeof id->availability_zone_id, "%s", imds.availability_zone_id);
            /* "scheduled" and other lifecycles are not markets `rank` prices: leave them unknown */
            if (!strcmp(imds.lifecycle, "spot") || !strcmp(imds.lifecycle, "on-demand"))
                snprintf(id->market, sizeof id->market, "%s", imds.lifecycle);
            strcpy(id->source, "imds");
        } else {
            ib_debug("identity: instance metadata not available (%.2f s): %s", util_now_seconds() - t0, ierr.msg);
        }
    }
    /* The source names where the instance type came from. */
    if (type) {
        snprintf(id->type, sizeof id->type, "%s", type);
        strcpy(id->source, "flag");
    }
    if (region) {
        /* An AZ read from IMDS belongs to IMDS's region only. */
        if (strcmp(id->region, region) != 0) id->availability_zone[0] = id->availability_zone_id[0] = '\0';
        snprintf(id->region, sizeof id->region, "%s", region);
    }
    if (market) snprintf(id->market, sizeof id->market, "%s", market);
    if (!strcmp(id->source, "unknown") && (region || market)) strcpy(id->source, "flag");
    return 0;
}
