/* AWS answers held to AWS's own shapes (issue 39): every number an answer parser reads is a plain
 * decimal as AWS writes it ("21345.12", "0.4410", "1.0060000000") and every time a calendar-valid
 * ISO 8601 UTC time; anything else fails the page, naming the field, rather than being read some
 * other way.  The hostile shapes: hex ("0x10" would be read as 16 by strtod), whitespace (" 100"),
 * exponents and subnormal fees ("1e-300"), inf/nan, signs, impossible dates (2026-02-30,
 * 2026-11-31, 25:00).  One answer per parser (Capacity Block offerings, Savings Plan rates, the
 * price list, spot prices, the sweep's DescribeInstances launch time) with the field replaced; the same answer with AWS's own text parses to
 * the figure written (the control, so a refusal is the field's and not the template's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"
#include "instbench/aws_values.h"

static int failures;
#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
            failures++;                                                           \
        }                                                                         \
    } while (0)

/* ---- Capacity Block offerings (EC2 XML) ---- */

static int block(const char *fee, const char *count, const char *start, const char *end, double *out_fee, char *msg,
                 size_t msglen)
{
    char xml[2048];
    snprintf(xml, sizeof xml,
             "<DescribeCapacityBlockOfferingsResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
             "<capacityBlockOfferingSet><item><capacityBlockOfferingId>cb-0123456789abcdef0</capacityBlockOfferingId>"
             "<instanceType>p5.48xlarge</instanceType><availabilityZone>us-east-1a</availabilityZone>"
             "<instanceCount>%s</instanceCount><startDate>%s</startDate><endDate>%s</endDate>"
             "<capacityBlockDurationHours>72</capacityBlockDurationHours>"
             "<capacityBlockDurationMinutes>0</capacityBlockDurationMinutes><upfrontFee>%s</upfrontFee>"
             "<currencyCode>USD</currencyCode><tenancy>default</tenancy></item></capacityBlockOfferingSet>"
             "</DescribeCapacityBlockOfferingsResponse>",
             count, start, end, fee);
    ec2_block_query q = {.instance_type = "p5.48xlarge", .instance_count = 2, .duration_hours = 72};
    strcpy(q.region, "us-east-1");
    char *next = NULL;
    ib_error err = {0};
    int rc = aws_ec2_parse_blocks_page(xml, strlen(xml), &q, &next, &err);
    if (rc == 0 && q.n != 1) rc = 1;
    if (rc == 0 && out_fee) *out_fee = q.offerings[0].upfront_fee;
    if (msg) snprintf(msg, msglen, "%s", err.msg);
    free(next);
    ec2_block_query_free(&q);
    return rc;
}

static void blocks(void)
{
    const char *S = "2026-12-01T11:30:00Z", *E = "2026-12-04T11:30:00Z";
    double fee = 0;
    char msg[1024];
    CHECK(block("21345.12", "2", S, E, &fee, msg, sizeof msg) == 0 && fee == 21345.12);
    CHECK(block("16", "2", S, E, &fee, msg, sizeof msg) == 0 && fee == 16);
    static const char *const bad_fees[] = {"0x10", " 100",  "100 ", "\t100",  "+100",  "-100",  "1e-300",
                                           "1E3",  "inf",   "nan",  "0",      "0.00",  "0.001", ".5",
                                           "5.",   "1,000", "١٠٠",  "1e9999", "0x1p4", "100\n", "1000000001"};
    for (size_t i = 0; i < sizeof bad_fees / sizeof *bad_fees; i++) {
        msg[0] = '\0';
        int rc = block(bad_fees[i], "2", S, E, NULL, msg, sizeof msg);
        if (rc != -1 || !strstr(msg, "upfrontFee")) fprintf(stderr, "fee \"%s\": rc %d, %s\n", bad_fees[i], rc, msg);
        CHECK(rc == -1 && strstr(msg, "upfrontFee"));
    }
    static const char *const bad_counts[] = {" 2", "+2", "0x2", "2.0", "2e0", "02 "};
    for (size_t i = 0; i < sizeof bad_counts / sizeof *bad_counts; i++) {
        msg[0] = '\0';
        CHECK(block("100.00", bad_counts[i], S, E, NULL, msg, sizeof msg) == -1 && strstr(msg, "instanceCount"));
    }
    /* dates: each impossible one refused, not moved to the next month */
    static const char *const bad_dates[] = {"2026-02-30T11:30:00Z", "2026-11-31T11:30:00Z",  "2025-02-29T11:30:00Z",
                                            "2026-13-01T11:30:00Z", "2026-12-01T24:00:00Z",  "2026-12-01T11:60:00Z",
                                            "2026-12-01T11:30:60Z", " 2026-12-01T11:30:00Z", "2026-12-01",
                                            "2026-12-1T11:30:00Z",  "2026-12-01T11:30:00",   "2026-12-01T11:30:00Zjunk",
                                            "2026-00-10T11:30:00Z", "2026-12-00T11:30:00Z"};
    for (size_t i = 0; i < sizeof bad_dates / sizeof *bad_dates; i++) {
        msg[0] = '\0';
        int rc = block("100.00", "2", bad_dates[i], "2027-03-04T11:30:00Z", NULL, msg, sizeof msg);
        if (rc != -1) fprintf(stderr, "start \"%s\" accepted\n", bad_dates[i]);
        CHECK(rc == -1 && strstr(msg, "startDate"));
    }
    /* a leap day exists in a leap year; offsets and fractions are ISO 8601 */
    CHECK(block("100.00", "2", "2028-02-29T11:30:00Z", "2028-03-03T11:30:00Z", &fee, msg, sizeof msg) == 0);
    CHECK(block("100.00", "2", "2026-12-01T11:30:00.000Z", "2026-12-04T12:30:00+01:00", &fee, msg, sizeof msg) == 0);
}

/* ---- Savings Plan rates (JSON) ---- */

static int plan_rate(const char *rate, double *out)
{
    char body[2048];
    snprintf(
        body, sizeof body,
        "{\"searchResults\": [{\"savingsPlanOffering\": {\"offeringId\": \"x\", \"paymentOption\": \"No Upfront\", "
        "\"planType\": \"Compute\", \"durationSeconds\": 31536000, \"currency\": \"USD\"}, \"rate\": \"%s\", "
        "\"unit\": \"Hrs\", \"usageType\": \"USE1-BoxUsage:g5.xlarge\", \"operation\": \"RunInstances\", "
        "\"properties\": [{\"name\": \"region\", \"value\": \"us-east-1\"}, {\"name\": \"instanceType\", "
        "\"value\": \"g5.xlarge\"}, {\"name\": \"tenancy\", \"value\": \"shared\"}, {\"name\": "
        "\"productDescription\", \"value\": \"Linux/UNIX\"}]}]}",
        rate);
    sp_query s = {.instance_type = "g5.xlarge",
                  .region = "us-east-1",
                  .plan_type = "Compute",
                  .payment = "No Upfront",
                  .duration_s = 31536000};
    char *next = NULL;
    ib_error err = {0};
    int rc = aws_savingsplans_parse_page(body, strlen(body), &s, &next, &err);
    if (rc == 0 && s.n != 1) rc = 1;
    if (rc == 0) *out = s.rates[0].usd_per_hour;
    if (rc == -1 && !strstr(err.msg, "rate")) rc = 2;
    free(next);
    sp_query_free(&s);
    return rc;
}

static void plans(void)
{
    double v = 0;
    CHECK(plan_rate("0.6", &v) == 0 && v == 0.6);
    CHECK(plan_rate("0.4410000000", &v) == 0 && v == 0.441);
    static const char *const bad[] = {"0x1", " 100", "100 ", "1e-300",    "1E1", "+0.6",   "-0.6",   "inf",
                                      "NaN", "",     "0",    "0.0000001", ".6",  "0.6\\n", "0x1p-2", "2000.01"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = plan_rate(bad[i], &v);
        if (rc != -1) fprintf(stderr, "rate \"%s\": rc %d\n", bad[i], rc);
        CHECK(rc == -1);
    }
}

/* ---- the price list (Pricing GetProducts: a JSON document inside a string) ---- */

static int list_price(const char *usd, double *out)
{
    char body[4096];
    snprintf(
        body, sizeof body,
        "{\"FormatVersion\": \"aws_v1\", \"PriceList\": [\"{\\\"product\\\": {\\\"productFamily\\\": \\\"Compute "
        "Instance\\\", \\\"attributes\\\": {\\\"instanceType\\\": \\\"g5.xlarge\\\", \\\"regionCode\\\": "
        "\\\"us-east-1\\\", \\\"operatingSystem\\\": \\\"Linux\\\", \\\"tenancy\\\": \\\"Shared\\\", "
        "\\\"preInstalledSw\\\": \\\"NA\\\", \\\"capacitystatus\\\": \\\"Used\\\", \\\"operation\\\": "
        "\\\"RunInstances\\\", \\\"marketoption\\\": \\\"OnDemand\\\"}, \\\"sku\\\": \\\"LNX1\\\"}, \\\"terms\\\": "
        "{\\\"OnDemand\\\": {\\\"LNX1.JRTCKXETXF\\\": {\\\"priceDimensions\\\": {\\\"LNX1.JRTCKXETXF.6YS6EN2CT7\\\": "
        "{\\\"unit\\\": \\\"Hrs\\\", \\\"pricePerUnit\\\": {\\\"USD\\\": \\\"%s\\\"}}}}}}}\"]}",
        usd);
    pricing_item it = {.instance_type = "g5.xlarge", .region = "us-east-1", .usd_per_hour = NAN};
    char *next = NULL;
    ib_error err = {0};
    int rc = aws_pricing_parse_page(body, strlen(body), &it, &next, &err);
    if (rc == 0) *out = it.usd_per_hour;
    if (rc == -1 && !strstr(err.msg, "price")) rc = 2;
    free(next);
    return rc;
}

static void price_list(void)
{
    double v = 0;
    CHECK(list_price("1.0060000000", &v) == 0 && v == 1.006);
    CHECK(list_price("0.0000000000", &v) == 0 && isnan(v)); /* a $0 row is no price, not an error */
    static const char *const bad[] = {"0x1",    " 1.006", "1.006 ", "1e-300", "1.006E0",
                                      "+1.006", "-1",     "inf",    "nan",    "0.0000000001"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = list_price(bad[i], &v);
        if (rc != -1) fprintf(stderr, "list price \"%s\": rc %d\n", bad[i], rc);
        CHECK(rc == -1);
    }
}

/* ---- spot prices (EC2 DescribeSpotPriceHistory XML) ---- */

static int spot_price(const char *price, const char *when, double *out)
{
    char xml[1024];
    snprintf(
        xml, sizeof xml,
        "<DescribeSpotPriceHistoryResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><spotPriceHistorySet>"
        "<item><instanceType>g5.xlarge</instanceType><productDescription>Linux/UNIX</productDescription>"
        "<spotPrice>%s</spotPrice><timestamp>%s</timestamp><availabilityZone>us-east-1a</availabilityZone></item>"
        "</spotPriceHistorySet></DescribeSpotPriceHistoryResponse>",
        price, when);
    char *types[] = {"g5.xlarge"};
    ec2_spot_query q = {.region = "us-east-1", .instance_types = types, .n_types = 1};
    char *next = NULL;
    ib_error err = {0};
    int rc = aws_ec2_parse_spot_page(xml, strlen(xml), &q, &next, &err);
    if (rc == 0 && q.n_entries != 1) rc = 1;
    if (rc == 0) *out = q.entries[0].usd_per_hour;
    free(next);
    ec2_spot_query_free(&q);
    return rc;
}

static void spot(void)
{
    double v = 0;
    const char *T = "2026-11-21T23:00:00.000Z";
    CHECK(spot_price("0.410500", T, &v) == 0 && v == 0.4105);
    static const char *const bad[] = {"0x1", " 0.41", "0.41 ", "1e-300", "4.1e-1", "+0.41", "inf", "0.0000000001"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK(spot_price(bad[i], T, &v) == -1);
    CHECK(spot_price("0.410500", "2026-02-30T23:00:00.000Z", &v) == -1);
    CHECK(spot_price("0.410500", "2026-11-21T23:00:00.000", &v) == -1);
}

/* ---- the sweep's DescribeInstances (EC2 XML): a launch time that exists or the answer refused ---- */

static int launch_time(const char *when, time_t *out)
{
    char xml[1024];
    snprintf(xml, sizeof xml,
             "<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><reservationSet><item>"
             "<instancesSet><item><instanceId>i-0123456789abcdef0</instanceId><instanceType>g5.xlarge</instanceType>"
             "<instanceState><code>16</code><name>running</name></instanceState><launchTime>%s</launchTime></item>"
             "</instancesSet></item></reservationSet></DescribeInstancesResponse>",
             when);
    ec2_instances l = {0};
    char *next = NULL;
    ib_error err = {0};
    int rc = aws_ec2_parse_instances(xml, strlen(xml), 0, &l, &next, &err);
    if (rc == 0 && l.n != 1) rc = 1;
    if (rc == 0) *out = l.v[0].launch_time;
    if (rc == -1 && !strstr(err.msg, "launchTime")) rc = 2;
    free(next);
    ec2_instances_free(&l);
    return rc;
}

static void instances(void)
{
    time_t t = 0;
    CHECK(launch_time("2026-11-21T23:00:00.000Z", &t) == 0 && t == 1795302000);
    CHECK(launch_time("2026-02-30T10:00:00.000Z", &t) == -1);
    CHECK(launch_time("2026-11-31T10:00:00.000Z", &t) == -1);
    CHECK(launch_time(" 2026-11-21T23:00:00.000Z", &t) == -1);
}

/* ---- the shared parsers themselves, against values worked out by hand ---- */

static void values(void)
{
    double v;
    time_t t;
    CHECK(util_aws_decimal("12.5", 0, 100, &v) == 0 && v == 12.5);
    CHECK(util_aws_decimal("007", 0, 100, &v) == 0 && v == 7);
    CHECK(util_aws_decimal("12.5", 13, 100, &v) == -1 && util_aws_decimal("12.5", 0, 12, &v) == -1);
    CHECK(util_aws_time("1970-01-01T00:00:00Z", &t) == 0 && t == 0);
    CHECK(util_aws_time("2028-02-29T12:00:00Z", &t) == 0 && t == 1835438400); /* date -u -d 2028-02-29T12:00Z +%s */
    CHECK(util_aws_time("2026-11-21T23:00:00.123Z", &t) == 0 && t == 1795302000);
    CHECK(util_aws_time("2026-11-22T00:30:00+01:30", &t) == 0 && t == 1795302000);
    CHECK(util_aws_time("2000-02-29T00:00:00Z", &t) == 0);  /* divisible by 400: a leap year */
    CHECK(util_aws_time("2100-02-29T00:00:00Z", &t) == -1); /* by 100, not 400: not one */
    CHECK(util_aws_time("2026-04-31T00:00:00Z", &t) == -1);
    CHECK(util_aws_time("2026-11-21T23:00:00.Z", &t) == -1);
    CHECK(util_aws_time("2026-11-21T23:00:00+1:30", &t) == -1);
}

int main(void)
{
    values();
    blocks();
    plans();
    price_list();
    spot();
    instances();
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
