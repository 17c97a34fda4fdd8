/* prices_json: the instbench.prices/v1 reader accepts the documented format (the objects-with-null
 * form instbench writes and the null objects of older files and the snapshot), rejects each kind
 * of malformed input with a reason naming the offending field, and survives a write/read round
 * trip; zones are typed by AWS's documented forms.  A prices file (`rank --source FILE`) is read
 * bounded: /dev/zero, a FIFO or a directory is refused at once, a file over PRICES_FILE_MAX_BYTES
 * from its size (the old reader read /dev/zero until the memory ran out). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instbench/prices.h"

#include "scratch.h"

static int failures;
#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
            failures++;                                                           \
        }                                                                         \
    } while (0)

static const char *valid =
    "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"2026-11-22T00:10:45Z\",\n"
    " \"snapshot\": {\"date\": \"2026-11-21\", \"source\": \"test data\"},\n"
    " \"prices\": [\n"
    "  {\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\",\n"
    "   \"on_demand\": {\"usd_per_hour\": 1.006, \"source\": \"live\", \"as_of\": \"2026-11-22T00:00:00Z\"},\n"
    "   \"spot\": {\"source\": \"live\", \"as_of\": \"2026-11-22T00:00:01Z\", \"zones\": [\n"
    "      {\"availability_zone\": \"us-east-1a\", \"usd_per_hour\": 0.41, \"timestamp\": \"2026-11-21T23:00:00Z\"},\n"
    "      {\"availability_zone\": \"us-east-1b\", \"usd_per_hour\": 0.3921, \"timestamp\": "
    "\"2026-11-21T22:00:00.000Z\", \"placement_score\": 9}]},\n"
    "   \"interruption\": {\"bucket\": 0, \"label\": \"<5%\", \"savings_pct\": 70},\n"
    "   \"placement_score\": 7},\n"
    "  {\"instance_type\": \"p5.48xlarge\", \"region\": \"eu-west-1\", \"on_demand\": null, \"spot\": null,\n"
    "   \"interruption\": null, \"placement_score\": null}]}";

/* What instbench writes now where there is no data: objects holding null scalars, an empty zone
 * list, derived fields (ignored when read, even when they contradict the prices). */
static const char *written =
    "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"2026-11-22T00:10:45Z\",\n"
    " \"snapshot\": {\"date\": null, \"source\": null},\n"
    " \"prices\": [\n"
    "  {\"instance_type\": \"p5.4xlarge\", \"region\": \"us-east-1\", \"nodes\": 3, \"total_accelerators\": null,\n"
    "   \"on_demand\": {\"usd_per_hour\": null, \"source\": null, \"as_of\": null, \"usd_per_accelerator_hour\": "
    "null,\n"
    "                 \"total_usd_per_hour\": null},\n"
    "   \"spot\": {\"source\": null, \"as_of\": null, \"min_usd_per_hour\": null, \"min_availability_zone\": null,\n"
    "            \"max_usd_per_hour\": null, \"zones\": []},\n"
    "   \"interruption\": {\"bucket\": null, \"label\": null, \"savings_pct\": null},\n"
    "   \"placement_score\": null,\n"
    "   \"instance\": {\"vcpus\": null, \"memory_gib\": null, \"accelerator\": null, \"accelerator_count\": null,\n"
    "                \"accelerator_memory_gib\": null}},\n"
    "  {\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\", \"nodes\": 4, \"total_accelerators\": 4,\n"
    "   \"on_demand\": {\"usd_per_hour\": 1.006, \"source\": \"snapshot\", \"as_of\": \"2026-11-21T00:00:00Z\",\n"
    "                 \"usd_per_accelerator_hour\": 99, \"total_usd_per_hour\": 99},\n"
    "   \"spot\": {\"source\": \"snapshot\", \"as_of\": \"2026-11-21T00:00:00Z\", \"min_usd_per_hour\": 99,\n"
    "            \"min_availability_zone\": \"use1-az9\", \"zones\": [\n"
    "      {\"availability_zone\": \"use1-atl2-az1\", \"zone_type\": \"availability-zone\", \"usd_per_hour\": 0.2,\n"
    "       \"timestamp\": \"2026-11-21T00:00:00Z\", \"placement_score\": null},\n"
    "      {\"availability_zone\": \"use1-az2\", \"usd_per_hour\": 0.4246, \"timestamp\": "
    "\"2026-11-21T00:00:00Z\"}]},\n"
    "   \"interruption\": {\"bucket\": 4, \"label\": \">20%\", \"savings_pct\": 59},\n"
    "   \"placement_score\": null,\n"
    "   \"instance\": {\"vcpus\": 4, \"memory_gib\": 16, \"accelerator\": \"A10G\", \"accelerator_count\": 1,\n"
    "                \"accelerator_memory_gib\": 22.352}}]}";

/* Replaces the first occurrence of FROM in BASE by TO, and expects rejection with a message
 * containing WHY. */
static void expect_reject_in(const char *base, const char *from, const char *to, const char *why)
{
    const char *at = strstr(base, from);
    if (!at) {
        fprintf(stderr, "bad test: %s not in document\n", from);
        failures++;
        return;
    }
    size_t n = strlen(base) - strlen(from) + strlen(to) + 1;
    char *doc = malloc(n);
    snprintf(doc, n, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
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

/* The objects-with-null form reads as "unknown"; derived fields are ignored; Local Zones are typed
 * and left out of the lowest unless asked; what is written reads back the same. */
static void check_written_form(void)
{
    price_set s;
    ib_error err = {0};
    CHECK(prices_parse_json(written, strlen(written), "w.json", &s, &err) == 0);
    if (err.msg[0]) fprintf(stderr, "%s\n", err.msg);
    const price_record *p = prices_find(&s, "p5.4xlarge", "us-east-1"), *g = prices_find(&s, "g5.xlarge", "us-east-1");
    CHECK(!s.snapshot_date[0]);
    CHECK(p && isnan(p->on_demand_usd_per_hour) && !p->on_demand_source[0] && !p->spot_source[0] && p->n_spot == 0 &&
          p->interruption_bucket == -1 && p->savings_pct == PRICES_SAVINGS_UNKNOWN && !prices_hardware_known(p) &&
          p->nodes == 1);
    CHECK(g && g->on_demand_usd_per_hour == 1.006 && g->n_spot == 2 && g->interruption_bucket == 4 && g->nodes == 1);
    if (g) {
        /* the Local Zone is cheaper, but not the lowest unless Local Zones count */
        CHECK(prices_lowest_spot(g, 0) == 0.4246 && !strcmp(prices_cheapest_zone(g, 0)->az, "use1-az2"));
        CHECK(prices_lowest_spot(g, 1) == 0.2 && prices_highest_spot(g, 0) == 0.4246 &&
              prices_highest_spot(g, 1) == 0.4246);
        CHECK(prices_zones_left_out(g, 0) == 1 && prices_zones_left_out(g, 1) == 0);
        CHECK(fabs(prices_spot_savings_pct(g, 0) - 100 * (1 - 0.4246 / 1.006)) < 1e-12);
        CHECK(prices_per_accelerator_hour(g, 1.006) == 1.006);
    }
    if (p) CHECK(isnan(prices_per_accelerator_hour(p, 1.0)) && isnan(prices_lowest_spot(p, 1)));
    /* written and read back: the same figures, objects where there is nothing */
    char *txt = prices_to_json(&s);
    price_set s2;
    CHECK(txt && prices_parse_json(txt, strlen(txt), "again", &s2, &err) == 0);
    if (txt) {
        CHECK(!strstr(txt, "\"spot\": null") && !strstr(txt, "\"on_demand\": null") &&
              !strstr(txt, "\"interruption\": null") && !strstr(txt, "\"instance\": null"));
        CHECK(strstr(txt, "\"zone_type\": \"local-zone\"") && strstr(txt, "\"min_availability_zone\": \"use1-az2\""));
        const price_record *g2 = prices_find(&s2, "g5.xlarge", "us-east-1"),
                           *p2 = prices_find(&s2, "p5.4xlarge", "us-east-1");
        CHECK(g2 && g2->n_spot == 2 && g2->spot[0].usd_per_hour == 0.2 && g2->hw.accelerator_count == 1);
        CHECK(p2 && isnan(p2->on_demand_usd_per_hour) && p2->n_spot == 0 && !p2->spot_source[0] &&
              !prices_hardware_known(p2));
        prices_free(&s2);
    }
    free(txt);
    prices_free(&s);
    /* hostile: a price claimed where the form says there is none */
    expect_reject_in(written, "\"zones\": []",
                     "\"zones\": [{\"availability_zone\": \"use1-az1\", \"usd_per_hour\": 1, "
                     "\"timestamp\": \"2026-11-21T00:00:00Z\"}]",
                     "zones without a spot source");
    expect_reject_in(written, "\"zones\": []", "\"zones\": 5", "must be an array");
    expect_reject_in(written, "\"bucket\": null, \"label\": null", "\"bucket\": null, \"label\": \"<5%\"",
                     "given without a bucket");
    expect_reject_in(written, "\"savings_pct\": null}", "\"savings_pct\": 500}", "savings_pct");
    expect_reject_in(written, "\"usd_per_hour\": 1.006, \"source\": \"snapshot\"",
                     "\"usd_per_hour\": 1.006, \"source\": null", "on_demand.source");
    /* \u0000 ends cJSON's string ("snapshot") where Python keeps the rest: refused (issue 33) */
    expect_reject_in(written, "\"source\": \"snapshot\"", "\"source\": \"snapshot\\u0000<x>\"", "\\u0000");
}

/* An instance object whose memory is null (or absent) while its vCPUs are given, as the format
 * allows for any hardware scalar: the memory stays unknown.  Written, it is null again and reads
 * back (it was written as 0, which the reader refuses as no positive size, so `prices --format json`
 * of such a record gave a file `rank --source` refused); the table shows "-" and the CSV an empty
 * cell, not a machine of 0 GiB.  (Found by fuzz_pricing_json.) */
static void check_unknown_memory(void)
{
    static const char *doc =
        "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"2026-11-22T00:10:45Z\", \"prices\": [\n"
        "  {\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\", \"on_demand\": null, \"spot\": null,\n"
        "   \"instance\": {\"vcpus\": 4, \"memory_gib\": null, \"accelerator\": \"A10G\", \"accelerator_count\": 1}},\n"
        "  {\"instance_type\": \"g5.2xlarge\", \"region\": \"us-east-1\", \"on_demand\": null, \"spot\": null,\n"
        "   \"instance\": {\"vcpus\": 8}}]}";
    price_set s, s2;
    ib_error err = {0};
    if (prices_parse_json(doc, strlen(doc), "m.json", &s, &err) != 0) {
        fprintf(stderr, "unknown memory: %s\n", err.msg);
        failures++;
        return;
    }
    char *txt = prices_to_json(&s);
    CHECK(txt && strstr(txt, "\"vcpus\": 4,\n        \"memory_gib\": null,"));
    CHECK(txt && strstr(txt, "\"vcpus\": 8,\n        \"memory_gib\": null,"));
    int back = txt && prices_parse_json(txt, strlen(txt), "again", &s2, &err) == 0;
    if (!back) fprintf(stderr, "unknown memory, read back: %s\n", err.msg);
    CHECK(back);
    if (back) {
        CHECK(s2.n == 2 && s2.items[0].hw.vcpus == 4 && s2.items[1].hw.vcpus == 8);
        prices_free(&s2);
    }
    free(txt);
    char *cols[] = {"instance_type", "vcpus", "memory_gib"};
    for (int csv = 0; csv < 2; csv++) {
        prices_view v = {
            .format = csv ? "csv" : "table", .want_on_demand = 1, .want_spot = 1, .columns = cols, .n_columns = 3};
        char *out = NULL, cell[32] = "";
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        CHECK(f && prices_write(&s, &v, f) == 0);
        if (f) fclose(f);
        const char *row = out ? strstr(out, "\ng5.xlarge") : NULL, *head = out ? strstr(out, "MEM GiB") : NULL;
        if (row && csv) sscanf(row + 1, "g5.xlarge,4,%31[^\r\n]", cell);
        if (row && !csv && head) { /* right-aligned: the cell ends where its header does */
            const size_t end = (size_t)(head - out) + strlen("MEM GiB");
            const char *c = row + 1 + end;
            while (c > row + 1 && c[-1] != ' ') c--;
            snprintf(cell, sizeof cell, "%.*s", (int)(row + 1 + end - c), c);
        }
        CHECK(!strcmp(cell, csv ? "" : "-"));
        if (strcmp(cell, csv ? "" : "-")) fprintf(stderr, "unknown memory, %s: '%s'\n%s\n", v.format, cell, out);
        free(out);
    }
    prices_free(&s);
}

/* AWS's forms (Local Zones and Wavelength user guides): names and IDs of each kind. */
static void check_zone_kinds(void)
{
    static const struct {
        const char *zone;
        prices_zone_kind kind;
    } cases[] = {
        {"use1-az2", PRICES_ZONE_AVAILABILITY},
        {"us-east-1a", PRICES_ZONE_AVAILABILITY},
        {"usw2-az4", PRICES_ZONE_AVAILABILITY},
        {"us-gov-west-1a", PRICES_ZONE_AVAILABILITY},
        {"apne1-az1", PRICES_ZONE_AVAILABILITY},
        {"eu-central-1c", PRICES_ZONE_AVAILABILITY},
        {"use1-atl2-az1", PRICES_ZONE_LOCAL},
        {"usw2-lax1-az2", PRICES_ZONE_LOCAL},
        {"us-east-1-atl-2a", PRICES_ZONE_LOCAL},
        {"us-west-2-lax-1a", PRICES_ZONE_LOCAL},
        {"use1-qro1-az1", PRICES_ZONE_LOCAL},
        {"use1-wl1-bos-wlz1", PRICES_ZONE_WAVELENGTH},
        {"us-east-1-wl1-bos-wlz-1", PRICES_ZONE_WAVELENGTH},
        {"apne1-wl1-nrt-wlz1", PRICES_ZONE_WAVELENGTH},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        prices_zone_kind k = prices_zone_kind_of(cases[i].zone);
        if (k != cases[i].kind) {
            fprintf(stderr, "%s: %s, want %s\n", cases[i].zone, prices_zone_kind_name(k),
                    prices_zone_kind_name(cases[i].kind));
            failures++;
        }
        CHECK(prices_zone_counts(cases[i].zone, 0) == (cases[i].kind == PRICES_ZONE_AVAILABILITY));
        CHECK(prices_zone_counts(cases[i].zone, 1));
    }
}

/* Replaces the first occurrence of `from` in the valid document by `to`, and expects rejection
 * with a message containing `why`. */
static void expect_reject(const char *from, const char *to, const char *why) { expect_reject_in(valid, from, to, why); }

static void check_load_bounds(void)
{
    char dir[200];
    if (!scratch_template(dir, sizeof dir, "prices-load") || !mkdtemp(dir)) {
        fprintf(stderr, "no scratch folder %s: %s\n", dir, strerror(errno));
        failures++;
        return;
    }
    char ok[256], fifo[256], big[256];
    snprintf(ok, sizeof ok, "%s/p.json", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(big, sizeof big, "%s/big.json", dir);
    FILE *f = fopen(ok, "w");
    fputs(valid, f);
    fclose(f);
    price_set s;
    ib_error err = {0};
    CHECK(prices_load_file(ok, &s, &err) == 0 && s.n == 2);
    if (s.n == 2) prices_free(&s);
    CHECK(mkfifo(fifo, 0600) == 0);
    f = fopen(big, "w");
    CHECK(f && ftruncate(fileno(f), (off_t)PRICES_FILE_MAX_BYTES + 1) == 0); /* sparse */
    fclose(f);
    const struct {
        const char *path, *why;
    } refused[] = {{"/dev/zero", "not a regular file"},
                   {fifo, "not a regular file"},
                   {dir, "is a directory"},
                   {big, "over 256 MiB"}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        int rc = prices_load_file(refused[i].path, &s, &err);
        CHECK(rc != 0 && strstr(err.msg, refused[i].path) && strstr(err.msg, refused[i].why));
        if (rc == 0) prices_free(&s);
    }
    unlink(ok), unlink(fifo), unlink(big), rmdir(dir);
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
        CHECK(g->on_demand_as_of == 1795305600); /* date -u -d 2026-11-22T00:00:00Z +%s */
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
    expect_reject("\"p5.48xlarge\", \"region\": \"eu-west-1\"", "\"g5.xlarge\", \"region\": \"us-east-1\"",
                  "listed twice");
    expect_reject("\"on_demand\": null, ", "", "on_demand: missing");
    expect_reject("null}]}", "null}]", "not valid JSON");
    expect_reject("\"prices\": [", "\"prices\": 5, \"x\": [", "$.prices: must be an array");

    check_written_form();
    check_unknown_memory();
    check_zone_kinds();
    check_load_bounds();

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
