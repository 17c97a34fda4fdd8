/* DescribeSpotPriceHistory from a hostile server: 100 pages of 1,000 items naming 50,000 distinct
 * (type, AZ) pairs, each twice, the second time newer for half of them and older for the rest,
 * across two asked types sharing every zone name.  The query keeps the newest price per pair, as
 * a reference computed here from the same construction says, in time linear in the answer.
 * Linear is judged against the run itself, not a clock bound (machines and qemu-user differ ten
 * times over): the first pass's last 5 pages, whose items each are new beside 45,000 to 50,000
 * entries, may take at most 4 times as long as its first 5, beside at most 5,000.  A scan per item
 * (the parser before: about 10 s for the whole answer in the release build) makes that about 19
 * times.  Then the entries sorted, and the first page read again: each item found as the entry it
 * repeats (the parser's index made anew, for every entry kept). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "instbench/aws_services.h"
#include "instbench/util.h"

#define PAGES 100
#define PER_PAGE 1000
#define ZONES 25000 /* x 2 types: 50,000 pairs, each in two items */

/* Item K (0 .. PAGES * PER_PAGE - 1): the first pass names pair K, the second pass pair
 * (2 * ZONES - 1 - (K - 2 * ZONES)), so a pair's two items are pages apart. */
static void item(size_t k, int *type, int *zone, int *when, int *cents)
{
    size_t pair = k < 2 * ZONES ? k : 2 * ZONES - 1 - (k - 2 * ZONES);
    *type = (int)(pair % 2);
    *zone = (int)(pair / 2);
    int second = k >= 2 * ZONES, newer = *zone % 2 == 0;
    *when = !second ? 0 : newer ? 60 : -60;
    *cents = !second ? 100 + *zone % 50 : newer ? 300 : 900;
}

static char *page_xml(int p, size_t *len)
{
    size_t cap = (size_t)PER_PAGE * 320 + 512, n = 0;
    char *x = malloc(cap);
    if (!x) return NULL;
    n += (size_t)snprintf(x + n, cap - n,
                          "<DescribeSpotPriceHistoryResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
                          "<spotPriceHistorySet>");
    for (size_t i = 0; i < PER_PAGE; i++) {
        int type, zone, when, cents;
        item((size_t)p * PER_PAGE + i, &type, &zone, &when, &cents);
        n += (size_t)snprintf(x + n, cap - n,
                              "<item><instanceType>%s</instanceType><productDescription>Linux/UNIX</productDescription>"
                              "<spotPrice>%d.%02d0000</spotPrice><timestamp>2026-11-21T23:%02d:00.000Z</timestamp>"
                              "<availabilityZone>us-east-1-z%05d</availabilityZone></item>",
                              type ? "g6.xlarge" : "g5.xlarge", cents / 100, cents % 100, 30 + when / 60, zone);
    }
    n += (size_t)snprintf(x + n, cap - n, "</spotPriceHistorySet>%s</DescribeSpotPriceHistoryResponse>",
                          p + 1 < PAGES ? "<nextToken>more</nextToken>" : "");
    *len = n;
    return x;
}

int main(void)
{
    char *types[] = {"g5.xlarge", "g6.xlarge"};
    ec2_spot_query q = {.region = "us-east-1", .instance_types = types, .n_types = 2};
    char *xml[PAGES];
    size_t len[PAGES];
    for (int p = 0; p < PAGES; p++)
        if (!(xml[p] = page_xml(p, &len[p]))) return 1;
    double first = 0, last = 0; /* seconds the first pass's first and last SPAN pages took */
    enum { SPAN = 5, PASS = 2 * ZONES / PER_PAGE };
    for (int p = 0; p < PAGES; p++) {
        char *next = NULL;
        ib_error err = {0};
        const double t0 = util_now_seconds();
        int rc = aws_ec2_parse_spot_page(xml[p], len[p], &q, &next, &err);
        const double dt = util_now_seconds() - t0;
        if (p < SPAN) first += dt;
        if (p >= PASS - SPAN && p < PASS) last += dt;
        CHECK(rc == 0 && (next != NULL) == (p + 1 < PAGES), "page %d: rc %d %s", p, rc, err.msg);
        free(next);
    }
    CHECK(last < 4 * first + 0.01,
          "pages %d-%d took %.3f s, the first %d %.3f s: matching grows with the entries kept, not linear in the "
          "answer",
          PASS - SPAN, PASS - 1, last, SPAN, first);
    CHECK(q.n_entries == 2 * ZONES && q.pages == PAGES, "%zu entries, %d pages", q.n_entries, q.pages);
    /* each pair once, with the newest of its two prices */
    char *seen = calloc(2 * ZONES, 1);
    size_t wrong = 0;
    for (size_t i = 0; seen && i < q.n_entries; i++) {
        const ec2_spot_entry *e = &q.entries[i];
        int type = !strcmp(e->instance_type, "g6.xlarge"), zone = atoi(e->az + strlen("us-east-1-z"));
        size_t pair = (size_t)zone * 2 + (size_t)type;
        int newer = zone % 2 == 0;
        double want = newer ? 3.0 : (100 + zone % 50) / 100.0;
        if (pair >= 2 * ZONES || seen[pair]++ || e->usd_per_hour != want) wrong++;
    }
    CHECK(seen && wrong == 0, "%zu entries duplicated or without their newest price", wrong);
    free(seen);
    /* Sorted (which drops the parser's index), then given the first page again: the index is made
     * anew for the 50,000 entries kept, each item found as the entry it repeats, none added.  One
     * made at its first size, 64 slots, would leave a probe no empty slot to stop at: the parser
     * would never return, and the alarm, a hang guard, ends the test. */
    ec2_spot_query_sort(&q);
    int sorted = 1;
    for (size_t i = 1; i < q.n_entries; i++)
        sorted &= strcmp(q.entries[i - 1].instance_type, q.entries[i].instance_type) < 0 ||
                  (!strcmp(q.entries[i - 1].instance_type, q.entries[i].instance_type) &&
                   strcmp(q.entries[i - 1].az, q.entries[i].az) < 0);
    CHECK(sorted, "the entries are not in (type, zone) order after ec2_spot_query_sort");
    alarm(120);
    char *next = NULL;
    ib_error err = {0};
    int rc = aws_ec2_parse_spot_page(xml[0], len[0], &q, &next, &err);
    alarm(0);
    free(next);
    CHECK(rc == 0 && q.n_entries == 2 * ZONES, "a page again after the sort: rc %d, %zu entries, want %d: %s", rc,
          q.n_entries, 2 * ZONES, err.msg);
    ec2_spot_query_free(&q);
    for (int p = 0; p < PAGES; p++) free(xml[p]);
    return failures != 0;
}
