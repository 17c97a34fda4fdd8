/* libFuzzer target: the answers of the markets bought ahead, from any server an endpoint override
 * points at.  Input goes to the DescribeCapacityBlockOfferings page parser (ec2_blocks.c: EC2's
 * XML) and to the DescribeSavingsPlansOfferingRates page parser (savingsplans.c: JSON).  No input
 * may crash, leak or read out of bounds, and whatever either accepts must be a figure instbench
 * would print: a block of 1..64 instances with a positive fee and an end after its start, only of
 * the type and count asked; a rate in (0, 2000] USD per hour. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    ec2_block_query q = {.instance_type = "p5.48xlarge", .instance_count = 2, .duration_hours = 72};
    strcpy(q.region, "us-east-1");
    char *next = NULL;
    ib_error err = {0};
    if (aws_ec2_parse_blocks_page(text, size, &q, &next, &err) == 0) {
        for (size_t i = 0; i < q.n; i++) {
            const ec2_block_offering *o = &q.offerings[i];
            if (o->instance_count != 2 || strcmp(o->instance_type, "p5.48xlarge") || !(o->upfront_fee > 0) ||
                !isfinite(o->upfront_fee) || o->end <= o->start || o->duration_hours * 60 + o->duration_minutes <= 0)
                abort();
        }
        if (next) (void)strlen(next);
    }
    free(next);
    ec2_block_query_free(&q);

    static const char *const plans[] = {"Compute", "SageMaker"};
    for (int k = 0; k < 2; k++) {
        sp_query s = {.instance_type = k ? "ml.p5.48xlarge" : "p5.48xlarge", .region = "us-east-1",
                      .plan_type = plans[k], .payment = "No Upfront", .duration_s = 31536000};
        next = NULL;
        if (aws_savingsplans_parse_page(text, size, &s, &next, &err) == 0) {
            for (size_t i = 0; i < s.n; i++)
                if (!(s.rates[i].usd_per_hour > 0 && s.rates[i].usd_per_hour <= 2000)) abort();
            if (next) (void)strlen(next);
        }
        free(next);
        sp_query_free(&s);
    }
    return 0;
}
