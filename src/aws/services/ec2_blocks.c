/* ec2_blocks: DescribeCapacityBlockOfferings, the offerings of EC2 Capacity Blocks for ML.
 *
 * Request (EC2 query API, form body): Action=DescribeCapacityBlockOfferings&Version=2016-11-15&
 * InstanceType=p5.48xlarge&InstanceCount=2 (or, for UltraServers, UltraserverType=u-p6e-gb200x72&
 * UltraserverCount=1)&CapacityDurationHours=72[&StartDateRange=ISO8601][&EndDateRange=ISO8601]&
 * MaxResults=1000[&NextToken=...].
 * Answer: <DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet><item>
 *   <capacityBlockOfferingId/><instanceType/><availabilityZone/><instanceCount/><startDate/>
 *   <endDate/><capacityBlockDurationHours/><capacityBlockDurationMinutes/><upfrontFee/>
 *   <currencyCode/><tenancy/>[<ultraserverType/><ultraserverCount/>]</item>...
 *   </capacityBlockOfferingSet><nextToken/></...>
 * (member names from botocore's EC2 model, CapacityBlockOffering).  An UltraServer offering is
 * its instances (instanceType, instanceCount: 18 p6e-gb200.36xlarge per u-p6e-gb200x72) sold
 * together; it is priced per instance and per accelerator like any other block.
 * The duration is hours plus minutes ("in addition", EC2's API reference).  Every field is read as
 * hostile (include/instbench/aws_values.h): a fee that is no plain decimal of at least a cent, a
 * date that is not a calendar-valid ISO 8601 time, an end before the start, a count that is not
 * digits in 1..64 fails the page rather than showing a figure. */
#include "internal.h"

#include "instbench/aws_values.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Far above any real block (64 x p6 for 182 days is about $30 M), far below what breaks a double;
 * below a cent no block is sold (AWS quotes fees to the cent). */
#define MAX_SANE_FEE 1e9
#define MIN_SANE_FEE 0.01
/* The most one answer may be: 10 times AWS's largest, 1,000 offerings (MaxResults) of under 800
 * bytes each, so that a hostile endpoint holds (requests in flight) x this, not 64 MiB each. */
#define BLOCKS_MAX_PAGE ((size_t)8 << 20)

enum {
    CB_ID,
    CB_TYPE,
    CB_AZ,
    CB_COUNT,
    CB_START,
    CB_END,
    CB_HOURS,
    CB_MINUTES,
    CB_FEE,
    CB_CURRENCY,
    CB_TENANCY,
    CB_US_TYPE,
    CB_US_COUNT
};

/* The most instances an UltraServer offering may hold: 64 UltraServers of 72 hosts, far above any
 * sold (a u-p6e-gb200x72 is 18 instances). */
#define MAX_ULTRASERVER_INSTANCES (64 * 72)
#define MAX_BLOCK_INSTANCES 64 /* a block of loose instances (prices.h: MARKETS_BLOCK_MAX_INSTANCES) */

/* A count or a duration: digits only ("+2", " 2" and "0x2" are no count AWS writes). */
static int whole(const char *s, long lo, long hi, int *out)
{
    double v;
    if (strchr(s, '.') || util_aws_decimal(s, (double)lo, (double)hi, &v) != 0) return -1;
    *out = (int)v;
    return 0;
}

static int block_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    ec2_block_query *q = ctx;
    ec2_block_offering o;
    memset(&o, 0, sizeof o);
    const char *what = "EC2 DescribeCapacityBlockOfferings";
    if (!v[CB_TYPE][0] || !v[CB_AZ][0] || strlen(v[CB_TYPE]) >= sizeof o.instance_type ||
        strlen(v[CB_AZ]) >= sizeof o.az || strlen(v[CB_ID]) >= sizeof o.id)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: an offering without a plausible instanceType/availabilityZone",
                            what);
    int ultra = v[CB_US_TYPE][0] != '\0';
    if (ultra && (strlen(v[CB_US_TYPE]) >= sizeof o.ultraserver_type ||
                  whole(v[CB_US_COUNT], 1, MAX_BLOCK_INSTANCES, &o.ultraserver_count) != 0))
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "%s: implausible ultraserverType/ultraserverCount \"%.40s\" x \"%.20s\"", what,
                            v[CB_US_TYPE], v[CB_US_COUNT]);
    if (whole(v[CB_COUNT], 1, ultra ? MAX_ULTRASERVER_INSTANCES : MAX_BLOCK_INSTANCES, &o.instance_count) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: implausible instanceCount \"%.40s\"", what, v[CB_COUNT]);
    if (util_aws_time(v[CB_START], &o.start) != 0 || util_aws_time(v[CB_END], &o.end) != 0 || o.end <= o.start)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: bad startDate/endDate \"%.40s\" .. \"%.40s\"", what, v[CB_START],
                            v[CB_END]);
    if (whole(v[CB_HOURS], 0, 182 * 24, &o.duration_hours) != 0 ||
        (v[CB_MINUTES][0] ? whole(v[CB_MINUTES], 0, 59, &o.duration_minutes) : 0) != 0 ||
        o.duration_hours * 60 + o.duration_minutes <= 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: implausible duration %.20s h %.20s min", what, v[CB_HOURS],
                            v[CB_MINUTES]);
    if (util_aws_decimal(v[CB_FEE], MIN_SANE_FEE, MAX_SANE_FEE, &o.upfront_fee) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: implausible upfrontFee \"%.40s\"", what, v[CB_FEE]);
    if (strlen(v[CB_CURRENCY]) >= sizeof o.currency)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: implausible currencyCode \"%.40s\"", what, v[CB_CURRENCY]);
    /* a dedicated-tenancy block is another product; an answer for another type or count was not asked */
    if (v[CB_TENANCY][0] && strcmp(v[CB_TENANCY], "default") != 0) return 0;
    if (q->ultraserver_type) {
        if (!ultra || strcmp(v[CB_US_TYPE], q->ultraserver_type) != 0 || o.ultraserver_count != q->ultraserver_count)
            return 0;
        snprintf(o.ultraserver_type, sizeof o.ultraserver_type, "%s", v[CB_US_TYPE]);
    } else if (ultra || strcmp(v[CB_TYPE], q->instance_type) != 0 || o.instance_count != q->instance_count) {
        return 0; /* an UltraServer's offering answers no question for loose instances */
    }
    snprintf(o.id, sizeof o.id, "%s", v[CB_ID]);
    snprintf(o.instance_type, sizeof o.instance_type, "%s", v[CB_TYPE]);
    snprintf(o.az, sizeof o.az, "%s", v[CB_AZ]);
    snprintf(o.currency, sizeof o.currency, "%s", v[CB_CURRENCY][0] ? v[CB_CURRENCY] : "USD");
    if (q->n == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 16;
        if (nc > 100000) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: more than 100000 offerings", what);
        ec2_block_offering *no = realloc(q->offerings, nc * sizeof *no);
        if (!no) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", what);
        q->offerings = no;
        q->cap = nc;
    }
    q->offerings[q->n++] = o;
    return 0;
}

int aws_ec2_parse_blocks_page(const char *xml, size_t len, ec2_block_query *q, char **next, ib_error *err)
{
    static const ec2_xml_spec spec = {.root = "DescribeCapacityBlockOfferingsResponse",
                                      .item = "capacityBlockOfferingSet/item",
                                      .fields = {"capacityBlockOfferingId", "instanceType", "availabilityZone",
                                                 "instanceCount", "startDate", "endDate", "capacityBlockDurationHours",
                                                 "capacityBlockDurationMinutes", "upfrontFee", "currencyCode",
                                                 "tenancy", "ultraserverType", "ultraserverCount"},
                                      .on_item = block_item,
                                      .what = "EC2 DescribeCapacityBlockOfferings"};
    return ec2_xml_parse(&spec, q, xml, len, next, err);
}

char *aws_ec2_blocks_request_body(const ec2_block_query *q, const char *token)
{
    char *body = NULL, num[32], when[32];
    size_t len = 0, cap = 0;
    int bad = aws_query_append(&body, &len, &cap, "Action", "DescribeCapacityBlockOfferings") ||
              aws_query_append(&body, &len, &cap, "Version", EC2_API_VERSION);
    /* an UltraServer is asked by its type and count alone: its instances are what it is made of */
    snprintf(num, sizeof num, "%d", q->ultraserver_type ? q->ultraserver_count : q->instance_count);
    if (q->ultraserver_type)
        bad = bad || aws_query_append(&body, &len, &cap, "UltraserverType", q->ultraserver_type) ||
              aws_query_append(&body, &len, &cap, "UltraserverCount", num);
    else
        bad = bad || aws_query_append(&body, &len, &cap, "InstanceType", q->instance_type) ||
              aws_query_append(&body, &len, &cap, "InstanceCount", num);
    if (!bad && q->start_after) {
        util_utc_iso8601(q->start_after, when);
        bad = aws_query_append(&body, &len, &cap, "StartDateRange", when);
    }
    if (!bad && q->end_before) {
        util_utc_iso8601(q->end_before, when);
        bad = aws_query_append(&body, &len, &cap, "EndDateRange", when);
    }
    snprintf(num, sizeof num, "%d", q->duration_hours);
    bad = bad || aws_query_append(&body, &len, &cap, "CapacityDurationHours", num) ||
          aws_query_append(&body, &len, &cap, "MaxResults", "1000");
    if (token) bad = bad || aws_query_append(&body, &len, &cap, "NextToken", token);
    if (bad) {
        free(body);
        return NULL;
    }
    return body;
}

static int blocks_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body,
                        ib_error *err)
{
    ec2_block_query *q = &((ec2_block_query *)ctx)[i];
    if (!(*body = aws_ec2_blocks_request_body(q, token)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeCapacityBlockOfferings: out of memory");
    return ec2_request(q->region, *body, req, url, err, "EC2 DescribeCapacityBlockOfferings");
}

static int blocks_parse(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err)
{
    return aws_ec2_parse_blocks_page(body, len, &((ec2_block_query *)ctx)[i], next, err);
}

int aws_ec2_blocks_pager(ec2_block_query *qs, aws_pager *out, ib_error *err)
{
    (void)err;
    aws_pager p = {.ctx = qs,
                   .what = "EC2 DescribeCapacityBlockOfferings",
                   .build = blocks_build,
                   .parse = blocks_parse,
                   .max_body = BLOCKS_MAX_PAGE};
    *out = p;
    return 0;
}

void ec2_block_query_free(ec2_block_query *q)
{
    free(q->offerings);
    q->offerings = NULL;
    q->n = q->cap = 0;
}
