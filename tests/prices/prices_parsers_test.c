/* Service response parsers against hand-written responses in AWS's documented formats
 * (tests/data/prices/): GetProducts pages (JSON documents inside strings, distractor products,
 * NextToken), SageMaker training vs hosting, DescribeSpotPriceHistory (latest per AZ, other
 * products and types ignored, nextToken), placement scores, availability zones; plus broken input:
 * every truncation of every fixture is rejected or parsed without crashing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"

static int failures;
#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
            failures++;                                                           \
        }                                                                         \
    } while (0)

static char *load(const char *name, size_t *len)
{
    char path[256], *text = NULL;
    ib_error err = {0};
    snprintf(path, sizeof path, "data/prices/%s", name);
    if (util_read_file(path, (size_t)64 << 20, &text, len, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    return text;
}

static void pricing(void)
{
    size_t n;
    pricing_item it = {.instance_type = "g5.xlarge", .region = "us-east-1", .usd_per_hour = NAN};
    char *next = NULL;
    ib_error err = {0};
    char *p1 = load("get_products_page1.json", &n);
    CHECK(aws_pricing_parse_page(p1, n, &it, &next, &err) == 0);
    CHECK(it.usd_per_hour == 1.006); /* the Windows distractor comes first and is skipped */
    CHECK(it.n_products == 1);
    CHECK(next && !strcmp(next, "eyJwYWdlIjoyfQ==:tok2"));
    free(next);
    char *p2 = load("get_products_page2.json", &n);
    CHECK(aws_pricing_parse_page(p2, n, &it, &next, &err) == 0);
    CHECK(next == NULL && it.n_products == 1 && it.usd_per_hour == 1.006); /* unused reservation, capacity block */
    CHECK(it.pages == 2);
    /* a different region in the document than asked: not ours */
    pricing_item other = {.instance_type = "g5.xlarge", .region = "eu-west-1", .usd_per_hour = NAN};
    CHECK(aws_pricing_parse_page(p1, strlen(p1), &other, &next, &err) == 0 && isnan(other.usd_per_hour));
    free(next);

    char *sm = load("get_products_sagemaker.json", &n);
    pricing_item ml = {.instance_type = "ml.g5.xlarge", .region = "us-east-1", .usd_per_hour = NAN};
    CHECK(aws_pricing_parse_page(sm, n, &ml, &next, &err) == 0 && ml.usd_per_hour == 1.41 && ml.n_products == 1);

    /* request bodies carry the documented filters */
    char *body = aws_pricing_request_body(&it, 10, "tok");
    CHECK(body && strstr(body, "\"ServiceCode\":\"AmazonEC2\"") &&
          strstr(body, "\"Field\":\"capacitystatus\",\"Value\":\"Used\"") &&
          strstr(body, "\"Field\":\"preInstalledSw\",\"Value\":\"NA\"") &&
          strstr(body, "\"Field\":\"tenancy\",\"Value\":\"Shared\"") &&
          strstr(body, "\"Field\":\"operatingSystem\",\"Value\":\"Linux\"") && strstr(body, "\"NextToken\":\"tok\"") &&
          strstr(body, "\"MaxResults\":10"));
    free(body);
    body = aws_pricing_request_body(&ml, 0, NULL);
    CHECK(body && strstr(body, "AmazonSageMaker") && strstr(body, "\"Field\":\"component\",\"Value\":\"Training\"") &&
          strstr(body, "\"Field\":\"instanceName\",\"Value\":\"ml.g5.xlarge\"") && !strstr(body, "NextToken"));
    free(body);

    /* broken: not JSON, entry not a string, implausible price */
    const char *bad[] = {
        "",
        "{",
        "[]",
        "{\"PriceList\": 5}",
        "{\"PriceList\": [5]}",
        "{\"PriceList\": [\"{oops\"]}",
        "{\"PriceList\": [\"{\\\"product\\\":{\\\"attributes\\\":{\\\"instanceType\\\":\\\"g5.xlarge\\\"}},"
        "\\\"terms\\\":{\\\"OnDemand\\\":{\\\"a\\\":{\\\"priceDimensions\\\":{\\\"b\\\":{\\\"unit\\\":\\\"Hrs\\\","
        "\\\"pricePerUnit\\\":{\\\"USD\\\":\\\"-1\\\"}}}}}}}\"]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pricing_item b = {.instance_type = "g5.xlarge", .region = "us-east-1", .usd_per_hour = NAN};
        err.msg[0] = '\0';
        int rc = aws_pricing_parse_page(bad[i], strlen(bad[i]), &b, &next, &err);
        if (rc == 0) fprintf(stderr, "accepted bad input %zu\n", i);
        CHECK(rc != 0 && strstr(err.msg, "Pricing GetProducts"));
    }
    for (size_t cut = 0; cut + 1 < strlen(p1); cut += 7) {
        pricing_item b = {.instance_type = "g5.xlarge", .region = "us-east-1", .usd_per_hour = NAN};
        CHECK(aws_pricing_parse_page(p1, cut, &b, &next, &err) != 0);
    }
    free(p1);
    free(p2);
    free(sm);
}

static void spot(void)
{
    size_t n;
    char *xml = load("describe_spot_price_history.xml", &n);
    char *types[] = {"g5.xlarge"};
    ec2_spot_query q = {.region = "us-east-1", .instance_types = types, .n_types = 1};
    char *next = NULL;
    ib_error err = {0};
    CHECK(aws_ec2_parse_spot_page(xml, n, &q, &next, &err) == 0);
    if (err.msg[0]) fprintf(stderr, "%s\n", err.msg);
    CHECK(q.n_entries == 2);
    for (size_t i = 0; i < q.n_entries; i++) {
        const ec2_spot_entry *e = &q.entries[i];
        CHECK(!strcmp(e->instance_type, "g5.xlarge"));
        if (!strcmp(e->az, "us-east-1a"))
            CHECK(e->usd_per_hour == 0.4105 && e->timestamp == 1795302000); /* 2026-11-21T23:00Z */
        else CHECK(!strcmp(e->az, "us-east-1b") && e->usd_per_hour == 0.3921);
    }
    CHECK(next && !strcmp(next, "AAEAAQ+nextpage/token=="));
    free(next);
    /* a second page adds to the same query and keeps the newest price */
    CHECK(aws_ec2_parse_spot_page(xml, n, &q, &next, &err) == 0 && q.n_entries == 2 && q.pages == 2);
    free(next);
    ec2_spot_query_free(&q);

    for (size_t cut = 0; cut + 1 < n; cut += 5) {
        ec2_spot_query b = {.region = "us-east-1", .instance_types = types, .n_types = 1};
        CHECK(aws_ec2_parse_spot_page(xml, cut, &b, &next, &err) != 0);
        ec2_spot_query_free(&b);
    }
    const char *bad[] = {
        "<Response><Errors/></Response>", "<DescribeSpotPriceHistoryResponse>",
        "<DescribeSpotPriceHistoryResponse><spotPriceHistorySet><item><instanceType>g5.xlarge</instanceType>"
        "<spotPrice>abc</spotPrice><timestamp>2026-11-21T23:00:00Z</timestamp><availabilityZone>a</availabilityZone>"
        "</item></spotPriceHistorySet></DescribeSpotPriceHistoryResponse>",
        "<DescribeSpotPriceHistoryResponse><spotPriceHistorySet><item><instanceType>g5.xlarge</instanceType>"
        "<spotPrice>NaN</spotPrice><timestamp>2026-11-21T23:00:00Z</timestamp><availabilityZone>a</availabilityZone>"
        "</item></spotPriceHistorySet></DescribeSpotPriceHistoryResponse>"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ec2_spot_query b = {.region = "us-east-1", .instance_types = types, .n_types = 1};
        err.msg[0] = '\0';
        CHECK(aws_ec2_parse_spot_page(bad[i], strlen(bad[i]), &b, &next, &err) != 0 &&
              strstr(err.msg, "DescribeSpotPriceHistory"));
        ec2_spot_query_free(&b);
    }
    free(xml);
}

static void scores_and_zones(void)
{
    size_t n;
    char *xml = load("get_spot_placement_scores.xml", &n);
    ec2_score_query q = {.instance_type = "g5.xlarge"};
    char *next = NULL;
    ib_error err = {0};
    CHECK(aws_ec2_parse_scores_page(xml, n, &q, &next, &err) == 0 && next == NULL);
    CHECK(q.n_scores == 3);
    if (q.n_scores == 3) {
        CHECK(!strcmp(q.scores[0].region, "us-east-1") && !strcmp(q.scores[0].az_id, "use1-az1") &&
              q.scores[0].score == 9);
        CHECK(!strcmp(q.scores[2].region, "eu-west-1") && q.scores[2].az_id[0] == '\0' && q.scores[2].score == 7);
    }
    ec2_score_query_free(&q);
    const char *bad = "<GetSpotPlacementScoresResponse><spotPlacementScoreSet><item><region>us-east-1</region>"
                      "<score>11</score></item></spotPlacementScoreSet></GetSpotPlacementScoresResponse>";
    ec2_score_query b = {.instance_type = "g5.xlarge"};
    CHECK(aws_ec2_parse_scores_page(bad, strlen(bad), &b, &next, &err) != 0);
    ec2_score_query_free(&b);
    free(xml);

    xml = load("describe_availability_zones.xml", &n);
    ec2_zone_map m = {.region = "us-east-1"};
    CHECK(aws_ec2_parse_zones(xml, n, &m, &err) == 0 && m.n == 2);
    CHECK(!strcmp(m.zones[0].name, "us-east-1a") && !strcmp(m.zones[0].id, "use1-az4"));
    CHECK(!strcmp(m.zones[1].name, "us-east-1b") && !strcmp(m.zones[1].id, "use1-az1"));
    free(xml);
}

static void query_encoding(void)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    CHECK(aws_query_append(&buf, &len, &cap, "Action", "DescribeSpotPriceHistory") == 0);
    CHECK(aws_query_append(&buf, &len, &cap, "ProductDescription.1", "Linux/UNIX") == 0);
    CHECK(aws_query_append(&buf, &len, &cap, "StartTime", "2026-11-22T00:10:45Z") == 0);
    CHECK(aws_query_append(&buf, &len, &cap, "NextToken", "a+b/c= d~") == 0);
    CHECK(buf && !strcmp(buf, "Action=DescribeSpotPriceHistory&ProductDescription.1=Linux%2FUNIX"
                              "&StartTime=2026-11-22T00%3A10%3A45Z&NextToken=a%2Bb%2Fc%3D%20d~"));
    free(buf);
}

int main(void)
{
    pricing();
    spot();
    scores_and_zones();
    query_encoding();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
