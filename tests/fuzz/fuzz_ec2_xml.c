/* libFuzzer target: the EC2 XML parsers (aws/ec2.c, expat): DescribeSpotPriceHistory,
 * GetSpotPlacementScores and DescribeAvailabilityZones responses.  No input may crash, leak or
 * overflow a fixed-size field; accepted prices stay finite and plausible, scores within 1..10.
 * A spot page is read again into the same query, as the pager reads the next one (after a sort for
 * the filtered query, which drops the hash index: spot_index_grow rebuilds it for the entries
 * kept): it adds no (type, zone), and sorted, every pair is there once and each type's run
 * (ec2_spot_query_run) holds its entries alone. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"

/* Q sorted: each (type, zone) once, in order, and each type's run exactly its entries. */
static void check_sorted(const ec2_spot_query *q)
{
    if (!q->n_entries) return; /* entries NULL: no pointer arithmetic on it */
    const ec2_spot_entry *end = q->entries + q->n_entries;
    for (const ec2_spot_entry *e = q->entries; e < end; e++) {
        const int c = e > q->entries ? strcmp(e[-1].instance_type, e->instance_type) : -1;
        if (c > 0 || (c == 0 && strcmp(e[-1].az, e->az) >= 0)) abort();
        size_t n;
        const ec2_spot_entry *run = ec2_spot_query_run(q, e->instance_type, &n);
        if (e < run || e >= run + n || (run > q->entries && !strcmp(run[-1].instance_type, e->instance_type)) ||
            (run + n < end && !strcmp(run[n].instance_type, e->instance_type)))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *xml = (const char *)data;
    char *types[] = {"g5.xlarge", "p4d.24xlarge"};
    for (int filtered = 0; filtered < 2; filtered++) {
        ec2_spot_query q = {0};
        strcpy(q.region, "us-east-1");
        q.instance_types = types;
        q.n_types = filtered ? 2 : 0;
        char *next = NULL;
        ib_error err = {0};
        if (aws_ec2_parse_spot_page(xml, size, &q, &next, &err) == 0) {
            for (size_t i = 0; i < q.n_entries; i++) {
                const ec2_spot_entry *e = &q.entries[i];
                if (!(e->usd_per_hour > 0 && e->usd_per_hour <= 2000) || strlen(e->az) >= sizeof e->az) abort();
            }
            if (next) (void)strlen(next);
            free(next);
            next = NULL;
            if (filtered) ec2_spot_query_sort(&q);
            const size_t kept = q.n_entries;
            if (aws_ec2_parse_spot_page(xml, size, &q, &next, &err) != 0 || q.n_entries != kept) abort();
            ec2_spot_query_sort(&q);
            check_sorted(&q);
        }
        free(next);
        ec2_spot_query_free(&q);
    }
    {
        char *regions[] = {"us-east-1"};
        ec2_score_query q = {.regions = regions, .n_regions = 1};
        strcpy(q.instance_type, "g5.xlarge");
        char *next = NULL;
        ib_error err = {0};
        if (aws_ec2_parse_scores_page(xml, size, &q, &next, &err) == 0)
            for (size_t i = 0; i < q.n_scores; i++)
                if (q.scores[i].score < 1 || q.scores[i].score > 10) abort();
        free(next);
        ec2_score_query_free(&q);
    }
    {
        ec2_zone_map m = {0};
        strcpy(m.region, "us-east-1");
        ib_error err = {0};
        (void)aws_ec2_parse_zones(xml, size, &m, &err);
        if (m.n > sizeof m.zones / sizeof m.zones[0]) abort();
    }
    return 0;
}
