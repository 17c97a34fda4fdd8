/* prices_zones: zone names <-> zone IDs from live AWS.  A zone name (us-east-1a) is the account's
 * own label: AWS shuffles the letters per account, so us-east-1a is use1-az4 in one account and
 * use1-az1 in another.  The snapshot names spot zones by ID, live spot prices name them by the
 * caller's names; only the caller's own account, through EC2 DescribeAvailabilityZones (or an
 * instance's metadata, recorded in its result), can join the two.  No table of them is shipped. */
#include "prices/internal.h"
#include "instbench/aws_services.h"
#include "instbench/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the answer's well-formed pairs of REGION: a name of that region and an ID-shaped ID (a
 * server's answer is hostile input like any other). */
static size_t keep_pairs(const ec2_zone_map *m, prices_zone *out, size_t n)
{
    for (size_t z = 0; z < m->n; z++) {
        if (!names_zone_in_region(m->zones[z].name, m->region) || !names_zone_is_id(m->zones[z].id)) {
            ib_debug("prices: ignoring zone '%s' / '%s' of %s (not a zone name and ID)", m->zones[z].name,
                     m->zones[z].id, m->region);
            continue;
        }
        prices_zone *p = &out[n++];
        snprintf(p->region, sizeof p->region, "%s", m->region);
        snprintf(p->name, sizeof p->name, "%s", m->zones[z].name);
        snprintf(p->id, sizeof p->id, "%s", m->zones[z].id);
    }
    return n;
}

int prices_live_zones(const char *const *regions, size_t n_regions, double timeout_s, prices_zone **out, size_t *n_out,
                      ib_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (!n_regions) return 0;
    aws_client *c = NULL;
    int no_cred;
    if (prices_live_client(timeout_s, &c, &no_cred, err) != 0) return -1;
    size_t cap_zones = sizeof((ec2_zone_map *)0)->zones / sizeof((ec2_zone_map *)0)->zones[0];
    ec2_zone_map *maps = calloc(n_regions, sizeof *maps);
    ib_error *errs = calloc(n_regions, sizeof *errs);
    prices_zone *zones = calloc(n_regions * cap_zones, sizeof *zones);
    int rc = -1;
    if (!maps || !errs || !zones) {
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    for (size_t r = 0; r < n_regions; r++) snprintf(maps[r].region, sizeof maps[r].region, "%s", regions[r]);
    aws_ec2_zone_maps(c, maps, n_regions, errs);
    size_t n = 0, failed = 0;
    for (size_t r = 0; r < n_regions; r++) {
        if (errs[r].code) {
            if (!failed++) *err = errs[r];
            continue;
        }
        n = keep_pairs(&maps[r], zones, n);
    }
    if (failed == n_regions) goto out; /* ERR holds the first failure */
    if (failed) ib_warn("zone names of %zu of %zu regions unavailable (%s)", failed, n_regions, err->msg);
    *out = zones;
    *n_out = n;
    zones = NULL;
    rc = 0;
out:
    aws_client_destroy(c);
    free(maps);
    free(errs);
    free(zones);
    return rc;
}
