/* Unit tests of rank/ and output/ pieces on hand-worked cases: CSV quoting (RFC 4180 section 2),
 * text-table alignment, result parsing reasons, median, Pareto with ties, filter order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"
#include "instbench/rank.h"
#include "rank/internal.h"

#include "check.h"

static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, arg);
    fclose(f);
    return buf;
}

static void csv_one(FILE *f, const void *s) { output_csv_field(f, s); }

static void test_csv(void)
{
    static const char *const cases[][2] = {
        {"plain", "plain"},
        {"a,b", "\"a,b\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"two\nlines", "\"two\nlines\""},
        {"cr\r", "\"cr\r\""},
        {"", ""},
        {"1234.5", "1234.5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = capture(csv_one, cases[i][0]);
        CHECK(!strcmp(got, cases[i][1]), "csv field %zu: got [%s] want [%s]", i, got, cases[i][1]);
        free(got);
    }
}

static void table_text(FILE *f, const void *t) { output_table_write_text(t, f); }

static void test_table(void)
{
    const char *hdr[] = {"name", "$/h"};
    const output_align al[] = {OUTPUT_LEFT, OUTPUT_RIGHT};
    output_table t;
    CHECK(output_table_init(&t, 2, hdr, al) == 0, "init");
    const char *r1[] = {"g5.xlarge", "1.006"};
    const char *r2[] = {"p4d", "32.770"};
    const char *r3[] = {NULL, "x"};
    output_table_add_row(&t, r1);
    output_table_add_row(&t, r2);
    output_table_add_row(&t, r3);
    char *got = capture(table_text, &t);
    const char *want = "name          $/h\n"
                       "---------  ------\n"
                       "g5.xlarge   1.006\n"
                       "p4d        32.770\n"
                       "                x\n";
    CHECK(!strcmp(got, want), "table:\n%s\nwant:\n%s", got, want);
    free(got);
    output_table_free(&t);
}

static void test_parse(void)
{
    rank_result r;
    char why[256];
    const char *ok =
        "{\"schema\":\"instbench.result/v1\",\"instance\":{\"type\":\"g5.xlarge\",\"region\":\"us-east-1\","
        "\"count\":4},\"workload\":{\"fingerprint\":\"ab\"},\"topology\":{\"nodes\":2},"
        "\"measurement\":{\"samples_per_second\":12.5},\"extra\":[1,2,{\"x\":null}]}";
    CHECK(rank_parse_result(ok, strlen(ok), &r, why, sizeof why) == 0, "valid result rejected: %s", why);
    CHECK(r.nodes == 4, "nodes = max(topology.nodes, instance.count): got %ld", r.nodes);
    CHECK(r.samples_per_second == 12.5 && !strcmp(r.instance_type, "g5.xlarge"), "fields");
    CHECK(r.accelerator_count == 0 && r.vcpus == -1 && r.accelerator[0] == 0, "defaults for absent hardware");

    static const char *const bad[][2] = {
        {"", "empty"},
        {"{\"schema\":\"instbench.result/v1\"", "invalid JSON"},
        {"[]", "not a JSON object"},
        {"{\"schema\":\"instbench.result/v1\"}", "workload"},
        {"{\"schema\":1}", "not a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = rank_parse_result(bad[i][0], strlen(bad[i][0]), &r, why, sizeof why);
        CHECK(rc == -1 && strstr(why, bad[i][1]), "bad %zu: rc %d reason [%s] lacks [%s]", i, rc, why, bad[i][1]);
    }
}

/* rank --price NAME[:MARKET]=USD and the result's recorded "price", on hand-worked cases. */
static void test_user_price(void)
{
    rank_user_price p;
    char why[256];
    CHECK(rank_parse_user_price("g5.xlarge=0.8", &p, why, sizeof why) == 0 && !strcmp(p.name, "g5.xlarge") &&
              p.market == RANK_ON_DEMAND && p.usd_per_hour == 0.8,
          "plain NAME=USD is on-demand: %s", why);
    CHECK(rank_parse_user_price("my-box_1:spot=1e-2", &p, why, sizeof why) == 0 && !strcmp(p.name, "my-box_1") &&
              p.market == RANK_SPOT && p.usd_per_hour == 0.01,
          "NAME:spot=USD: %s", why);
    CHECK(rank_parse_user_price("h:on-demand=100000", &p, why, sizeof why) == 0 && p.market == RANK_ON_DEMAND,
          "NAME:on-demand at the ceiling: %s", why);
    static const char *const bad[][2] = {
        {"g5.xlarge=abc", "not a price"},
        {"=3", "names no machine"},
        {"x=-1", "not a price"},
        {"x=nan", "not a price"},
        {"x=0", "not a price"},
        {"x=100001", "not a price"},
        {"x", "NAME=USD"},
        {"x:Spot=1", "on-demand or spot"},
        {"a b=1", "not an instance type"},
        {"x=1=2", "not a price"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = rank_parse_user_price(bad[i][0], &p, why, sizeof why);
        CHECK(rc == -1 && strstr(why, bad[i][1]), "--price %s: rc %d reason [%s] lacks [%s]", bad[i][0], rc, why,
              bad[i][1]);
    }

    rank_result r;
    const char *head = "{\"schema\":\"instbench.result/v1\",\"instance\":{\"type\":null,\"hostname\":\"ws1\"},"
                       "\"workload\":{\"fingerprint\":\"ab\"},\"topology\":{\"nodes\":2},"
                       "\"measurement\":{\"samples_per_second\":10}";
    char doc[512];
    snprintf(doc, sizeof doc, "%s}", head);
    CHECK(rank_parse_result(doc, strlen(doc), &r, why, sizeof why) == 0 && isnan(r.user_usd_per_hour) &&
              !strcmp(r.host, "ws1"),
          "no price: NAN, host read: %s", why);
    snprintf(doc, sizeof doc, "%s,\"price\":{\"usd_per_hour\":0.35,\"market\":\"spot\",\"source\":\"user\"}}", head);
    CHECK(rank_parse_result(doc, strlen(doc), &r, why, sizeof why) == 0 && r.user_usd_per_hour == 0.35 &&
              r.user_market == RANK_SPOT,
          "recorded spot price: %s", why);
    snprintf(doc, sizeof doc, "%s,\"price\":{\"usd_per_hour\":0}}", head);
    CHECK(rank_parse_result(doc, strlen(doc), &r, why, sizeof why) == -1 && strstr(why, "price.usd_per_hour"),
          "zero price accepted: [%s]", why);

    /* Precedence on one configuration: flag, then recorded, then nothing. */
    rank_config c;
    memset(&c, 0, sizeof c);
    strcpy(c.host, "ws1");
    c.recorded_usd_per_hour[RANK_ON_DEMAND] = 0.5;
    c.recorded_usd_per_hour[RANK_SPOT] = NAN;
    c.recorded_as_of[RANK_ON_DEMAND] = 1000;
    rank_options o;
    rank_options_init(&o);
    double usd;
    time_t t;
    CHECK(rank_user_price_for(&c, RANK_ON_DEMAND, &o, &usd, &t) == 1 && usd == 0.5 && t == 1000, "recorded");
    CHECK(rank_user_price_for(&c, RANK_SPOT, &o, &usd, &t) == 0, "spot: no user price");
    rank_user_price flags[2];
    rank_parse_user_price("WS1=0.25", &flags[0], why, sizeof why);
    rank_parse_user_price("other=9", &flags[1], why, sizeof why);
    o.user_prices = flags;
    o.n_user_prices = 2;
    CHECK(rank_user_price_for(&c, RANK_ON_DEMAND, &o, &usd, &t) == 1 && usd == 0.25 && t == 0,
          "the flag beats the recorded price (hostnames match in any case)");
    strcpy(c.instance_type, "g5.xlarge"); /* a typed configuration is named by its type only */
    CHECK(rank_user_price_for(&c, RANK_ON_DEMAND, &o, &usd, &t) == 1 && usd == 0.5, "host flag on a typed config");
}

static void test_median(void)
{
    double a[] = {5, 1, 3};
    double b[] = {4, 1, 3, 2};
    CHECK(rank_median(a, 3) == 3, "odd median");
    CHECK(rank_median(b, 4) == 2.5, "even median");
}

static rank_row row(double sps, double spd)
{
    rank_row r;
    memset(&r, 0, sizeof r);
    r.priced = 1;
    r.samples_per_second = r.rank_samples_per_second = sps;
    r.samples_per_dollar = r.rank_samples_per_dollar = spd;
    return r;
}

static void test_pareto(void)
{
    /* A: fast and cheap; B: slower, cheaper per sample; C: beaten by A on both; D: equal to A (tie
     * keeps both); E: as fast as A but less per dollar (beaten). */
    rank_row r[5] = {row(100, 50), row(50, 80), row(90, 40), row(100, 50), row(100, 49)};
    rank_pareto_mark(r, 5);
    int want[5] = {1, 1, 0, 1, 0};
    for (int i = 0; i < 5; i++) CHECK(r[i].pareto == want[i], "pareto row %d: %d", i, r[i].pareto);
    size_t np = 5, n = 5;
    rank_pareto_keep(r, &np, &n, NULL);
    CHECK(np == 3 && n == 3, "pareto keep: %zu/%zu", np, n);
}

static void test_filter(void)
{
    rank_options o;
    rank_options_init(&o);
    o.max_hourly_usd = 2;
    o.deadline_hours = 10;
    rank_row r[4] = {row(1, 1), row(1, 1), row(1, 1), row(1, 1)};
    r[0].usd_per_hour = 1, r[0].rank_hours_to_target = 10; /* kept: limits are inclusive */
    r[1].usd_per_hour = 3, r[1].rank_hours_to_target = 1;  /* over max-hourly */
    r[2].priced = 0;                                       /* unpriced: kept at the end */
    r[3].usd_per_hour = 1, r[3].rank_hours_to_target = 11; /* misses the deadline: the ranking figure
                                                                (a spot row's expected time) counts */
    r[3].hours_to_target = 9;
    size_t n = 4;
    rank_filter_stats st;
    size_t priced = rank_filter(r, &n, &o, &st);
    CHECK(priced == 1 && n == 2 && !r[1].priced, "filter: %zu priced of %zu", priced, n);
    CHECK(st.by_max_hourly == 1 && st.by_deadline == 1 && st.unpriced == 1, "filter stats");
}

/* The spot model's pieces at hand-checked points (the full model: rank_spot_risk.py). */
static void test_spot_model(void)
{
    /* >20%: p = 0.25, lambda = ln(4/3) / 720 */
    CHECK(fabs(rank_spot_bucket_rate(4) - log(4.0 / 3) / 720) < 1e-18, "bucket rate");
    CHECK(isnan(rank_spot_bucket_rate(5)) && isnan(rank_spot_bucket_rate(-1)), "bucket out of range");
    /* delta >= 2M: tau = M; else Daly: delta = 0.02, M = 1: x = 0.01, sqrt(0.04)(1 + 0.1/3 + 0.01/9) - 0.02 */
    CHECK(rank_spot_daly_interval(3, 1) == 1, "daly cap");
    CHECK(fabs(rank_spot_daly_interval(0.02, 1) - (0.2 * (1 + 0.1 / 3 + 0.01 / 9) - 0.02)) < 1e-15, "daly");
    /* no restart, tau + delta = 1, Lambda = 1: tau / (e - 1) */
    CHECK(fabs(rank_spot_efficiency(1, 0.5, 0, 0.5) - 0.5 / (exp(1) - 1)) < 1e-15, "efficiency");
    /* the series and the closed form meet at x = 0.1 (both sides of the switch) */
    rank_spot_moments a = rank_spot_segment_moments(1, 0.1 - 1e-15, 0),
                      b = rank_spot_segment_moments(1, 0.1 + 1e-15, 0);
    CHECK(fabs(a.var - b.var) < 1e-12 * b.var && fabs(a.k3 - b.k3) < 1e-9 * b.k3,
          "moments continuous at the switch: %.17g %.17g, %.17g %.17g", a.var, b.var, a.k3, b.k3);
    double r;
    char why[200];
    CHECK(rank_spot_parse_rate("20d", &r, why, sizeof why) == 0 && fabs(r - 1.0 / 480) < 1e-18, "20d");
    CHECK(rank_spot_parse_rate("500h", &r, why, sizeof why) == 0 && fabs(r - 0.002) < 1e-18, "500h");
    CHECK(rank_spot_parse_rate("0.01", &r, why, sizeof why) == 0 && r == 0.01, "0.01");
    CHECK(rank_spot_parse_rate("5m", &r, why, sizeof why) != 0, "5m refused");
    /* the default checkpoint: 1e9 bf16 parameters x 14 B at 125 MB/s */
    CHECK(fabs(rank_spot_default_checkpoint_s(1000000000, "bf16") - 112) < 1e-9, "default checkpoint");
}

int main(void)
{
    test_csv();
    test_table();
    test_parse();
    test_user_price();
    test_median();
    test_pareto();
    test_filter();
    test_spot_model();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("rank unit: all checks passed\n");
    return 0;
}
