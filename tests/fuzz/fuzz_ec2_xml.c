/* libFuzzer target: the EC2 XML parsers (aws/ec2.c, expat): DescribeSpotPriceHistory,
 * GetSpotPlacementScores and DescribeAvailabilityZones responses.  No input may crash, leak or
 * overflow a fixed-size field; accepted prices stay finite and plausible, scores within 1..10. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"

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
