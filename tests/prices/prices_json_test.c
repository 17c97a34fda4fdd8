/* prices_json: the instbench.prices/v1 reader accepts the documented format, rejects each kind of
 * malformed input with a reason naming the offending field, and survives a write/read round trip. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "instbench/prices.h"

static int failures;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); failures++; } } while (0)

static const char *valid =
    "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"2026-11-22T00:10:45Z\",\n"
    " \"snapshot\": {\"date\": \"2026-11-21\", \"source\": \"test data\"},\n"
    " \"prices\": [\n"
    "  {\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\",\n"
    "   \"on_demand\": {\"usd_per_hour\": 1.006, \"source\": \"live\", \"as_of\": \"2026-11-22T00:00:00Z\"},\n"
    "   \"spot\": {\"source\": \"live\", \"as_of\": \"2026-11-22T00:00:01Z\", \"zones\": [\n"
    "      {\"availability_zone\": \"us-east-1a\", \"usd_per_hour\": 0.41, \"timestamp\": \"2026-11-21T23:00:00Z\"},\n"
    "      {\"availability_zone\": \"us-east-1b\", \"usd_per_hour\": 0.3921, \"timestamp\": \"2026-11-21T22:00:00.000Z\", \"placement_score\": 9}]},\n"
    "   \"interruption\": {\"bucket\": 0, \"label\": \"<5%\", \"savings_pct\": 70},\n"
    "   \"placement_score\": 7},\n"
    "  {\"instance_type\": \"p5.48xlarge\", \"region\": \"eu-west-1\", \"on_demand\": null, \"spot\": null,\n"
    "   \"interruption\": null, \"placement_score\": null}]}";

/* Replaces the first occurrence of `from` in the valid document by `to`, and expects rejection
 * with a message containing `why`. */
static void expect_reject(const char *from, const char *to, const char *why)
{
    const char *at = strstr(valid, from);
    if (!at) { fprintf(stderr, "bad test: %s not in document\n", from); failures++; return; }
    size_t n = strlen(valid) - strlen(from) + strlen(to) + 1;
    char *doc = malloc(n);
    snprintf(doc, n, "%.*s%s%s", (int)(at - valid), valid, to, at + strlen(from));
    price_set s;
    ib_error err = {0};
    int rc = prices_parse_json(doc, strlen(doc), "t.json", &s, &err);
    if (rc == 0 || !strstr(err.msg, why)) {
        fprintf(stderr, "replace [%s] -> [%s]: rc %d, message '%s', wanted '%s'\n", from, to, rc, err.msg, why);
        failures++;
        if (rc == 0) prices_free(&s);
    }
    free(doc);
}

int main(void)
{
    price_set s;
    ib_error err = {0};
    CHECK(prices_parse_json(valid, strlen(valid), "t.json", &s, &err) == 0);
    if (err.msg[0]) fprintf(stderr, "%s\n", err.msg);
    CHECK(s.n == 2);
    const price_record *g = prices_find(&s, "g5.xlarge", "us-east-1");
    CHECK(g != NULL);
    CHECK(prices_find(&s, "g5.xlarge", "eu-west-1") == NULL);
    if (g) {
        CHECK(fabs(g->on_demand_usd_per_hour - 1.006) < 1e-12);
        CHECK(!strcmp(g->on_demand_source, "live"));
        CHECK(g->on_demand_as_of == 1795305600);   /* date -u -d 2026-11-22T00:00:00Z +%s */
        CHECK(g->n_spot == 2);
        CHECK(!strcmp(g->spot[1].az, "us-east-1b") && fabs(g->spot[1].usd_per_hour - 0.3921) < 1e-12);
        CHECK(g->spot[1].placement_score == 9 && g->spot[0].placement_score == -1);
        CHECK(g->interruption_bucket == 0 && g->savings_pct == 70 && g->placement_score == 7);
    }
    const price_record *p = prices_find(&s, "p5.48xlarge", "eu-west-1");
    CHECK(p && isnan(p->on_demand_usd_per_hour) && p->n_spot == 0 && p->interruption_bucket == -1);
    CHECK(!strcmp(s.snapshot_date, "2026-11-21"));
    CHECK(!strcmp(prices_interruption_label(4), ">20%") && !strcmp(prices_interruption_label(9), "unknown"));

    /* round trip */
    char *txt = prices_to_json(&s);
    CHECK(txt != NULL);
    price_set s2;
    CHECK(prices_parse_json(txt, strlen(txt), "roundtrip", &s2, &err) == 0);
    CHECK(s2.n == s.n && s2.generated_at == s.generated_at);
    const price_record *g2 = prices_find(&s2, "g5.xlarge", "us-east-1");
    CHECK(g2 && g && g2->on_demand_usd_per_hour == g->on_demand_usd_per_hour && g2->n_spot == 2 &&
          g2->spot[0].timestamp == g->spot[0].timestamp && g2->spot[1].usd_per_hour == g->spot[1].usd_per_hour &&
          g2->savings_pct == 70 && g2->spot[1].placement_score == 9);
    free(txt);
    prices_free(&s2);
    prices_free(&s);

    expect_reject("instbench.prices/v1", "instbench.prices/v2", "schema");
    expect_reject("\"schema\": \"instbench.prices/v1\",", "", "schema");
    expect_reject("1.006", "-1.006", "not positive");
    expect_reject("1.006", "0", "not positive");
    expect_reject("1.006", "NaN", "not valid JSON");
    expect_reject("1.006", "1e308", "absurd");
    expect_reject("1.006", "\"1.006\"", "must be a number");
    expect_reject("0.41", "-0.41", "zones[0].usd_per_hour");
    expect_reject("\"region\": \"us-east-1\",", "", "prices[0].region: missing");
    expect_reject("\"as_of\": \"2026-11-22T00:00:00Z\"", "\"as_of\": \"yesterday\"", "ISO 8601");
    expect_reject("\"bucket\": 0", "\"bucket\": 7", "out of range");
    expect_reject("\"savings_pct\": 70", "\"savings_pct\": 101", "savings_pct");
    expect_reject("\"label\": \"<5%\"", "\"label\": \">20%\"", "does not match");
    expect_reject("\"placement_score\": 7", "\"placement_score\": 11", "placement_score");
    expect_reject("\"source\": \"live\"", "\"source\": \"guess\"", "source must be");
    expect_reject("us-east-1b", "us-east-1a", "listed twice");
    expect_reject("\"p5.48xlarge\", \"region\": \"eu-west-1\"", "\"g5.xlarge\", \"region\": \"us-east-1\"", "listed twice");
    expect_reject("\"on_demand\": null, ", "", "on_demand: missing");
    expect_reject("null}]}", "null}]", "not valid JSON");
    expect_reject("\"prices\": [", "\"prices\": 5, \"x\": [", "$.prices: must be an array");

    /* truncated at every length: never crashes, never accepted */
    size_t n = strlen(valid);
    for (size_t cut = 0; cut < n - 1; cut++) {
        price_set t;
        if (prices_parse_json(valid, cut, "cut", &t, &err) == 0) {
            fprintf(stderr, "truncated at %zu accepted\n", cut);
            failures++;
            prices_free(&t);
        }
    }
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
