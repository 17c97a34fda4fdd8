/* libFuzzer target: the answers of the markets bought ahead, from any server an endpoint override
 * points at.  Input goes to the DescribeCapacityBlockOfferings page parser (ec2_blocks.c: EC2's
 * XML) and to the DescribeSavingsPlansOfferingRates page parser (savingsplans.c: JSON).  No input
 * may crash, leak or read out of bounds, and whatever either accepts must be a figure instbench
 * would print: a block of 1..64 instances with a fee of at least a cent (no subnormal "1e-300")
 * and an end after its start, both times that exist on the calendar (each reads back the same
 * through util_aws_time), only of the type and count asked (asked for an UltraServer: only its
 * type and count, of at most 64 x 72 instances); a rate in [1e-6, 2000] USD per hour.
 * The seeds (corpus/fuzz_markets/) include the hostile shapes of issue 39: fees "0x10", " 100" and
 * "1e-300", a count "+2", dates 2026-02-30, 2026-11-31 and 25:30, an offering that started long
 * ago, rates "0x1", " 100", "1.45e1" and one far above on-demand. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"
#include "instbench/aws_values.h"

/* T as AWS writes it, read back: the same second, or T was no calendar time */
static int calendar_time(time_t t)
{
    char iso[32];
    time_t back;
    util_utc_iso8601(t, iso);
    return util_aws_time(iso, &back) == 0 && back == t;
}

/* The blocks page TEXT holds for Q: every offering kept one Q asked for, as instbench prints it. */
static void blocks(const char *text, size_t size, ec2_block_query *q)
{
    char *next = NULL;
    ib_error err = {0};
    strcpy(q->region, "us-east-1");
    if (aws_ec2_parse_blocks_page(text, size, q, &next, &err) == 0) {
        for (size_t i = 0; i < q->n; i++) {
            const ec2_block_offering *o = &q->offerings[i];
            const int asked = q->ultraserver_type ? !strcmp(o->ultraserver_type, q->ultraserver_type) &&
                                                        o->ultraserver_count == q->ultraserver_count &&
                                                        o->instance_count >= 1 && o->instance_count <= 64 * 72
                                                  : o->instance_count == q->instance_count &&
                                                        !strcmp(o->instance_type, q->instance_type);
            if (!asked || !(o->upfront_fee >= 0.01) || !isfinite(o->upfront_fee) || o->end <= o->start ||
                o->duration_hours * 60 + o->duration_minutes <= 0 || !calendar_time(o->start) || !calendar_time(o->end))
                abort();
        }
        if (next) (void)strlen(next);
    }
    free(next);
    ec2_block_query_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    ec2_block_query q = {.instance_type = "p5.48xlarge", .instance_count = 2, .duration_hours = 72};
    blocks(text, size, &q);
    ec2_block_query u = {.ultraserver_type = "u-p6e-gb200x72", .ultraserver_count = 1, .duration_hours = 72};
    blocks(text, size, &u);

    char *next;
    ib_error err = {0};
    static const char *const plans[] = {"Compute", "SageMaker"};
    for (int k = 0; k < 2; k++) {
        sp_query s = {.instance_type = k ? "ml.p5.48xlarge" : "p5.48xlarge",
                      .region = "us-east-1",
                      .plan_type = plans[k],
                      .payment = "No Upfront",
                      .duration_s = 31536000};
        next = NULL;
        if (aws_savingsplans_parse_page(text, size, &s, &next, &err) == 0) {
            for (size_t i = 0; i < s.n; i++)
                if (!(s.rates[i].usd_per_hour >= 1e-6 && s.rates[i].usd_per_hour <= 2000)) abort();
            if (next) (void)strlen(next);
        }
        free(next);
        sp_query_free(&s);
    }
    return 0;
}
