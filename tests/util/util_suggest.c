/* util_suggest: the edit distance behind "did you mean X?" (src/util/suggest.c), the instance size
 * grammar and the one order of instance type names (src/util/names.c).  Expected values are worked
 * out by hand here, not taken from the code's own output. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "instbench/names.h"
#include "instbench/suggest.h"

static void distances(void)
{
    static const struct {
        const char *a, *b;
        size_t d;
    } cases[] = {
        {"", "", 0},
        {"", "abc", 3},
        {"abc", "", 3},
        {"kitten", "sitting", 3},      /* k->s, e->i, +g */
        {"us-esat-1", "us-east-1", 1}, /* one swap of neighbours */
        {"ca", "abc", 3},              /* optimal string alignment: a swapped pair is not edited again */
        {"g5.xlarg", "g5.xlarge", 1},
        {"g55.xlarge", "g5.xlarge", 1},
        {"G5.XLARGE", "g5.xlarge", 0}, /* case does not count */
        {"us-east-9", "us-east-1", 1},
        {"mars-1", "me-south-1", 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t d = suggest_distance(cases[i].a, cases[i].b), back = suggest_distance(cases[i].b, cases[i].a);
        CHECK(d == cases[i].d, "distance(%s, %s) = %zu, want %zu", cases[i].a, cases[i].b, d, cases[i].d);
        CHECK(back == d, "distance is not symmetric for %s, %s", cases[i].a, cases[i].b);
    }
    char long_a[300], long_b[300];
    memset(long_a, 'a', sizeof long_a - 1), long_a[sizeof long_a - 1] = '\0';
    memset(long_b, 'a', 150), long_b[150] = '\0';
    CHECK(suggest_distance(long_a, long_b) > SUGGEST_MAX_LEN, "over-long words must never read as close");
}

static void closest(void)
{
    const char *regions[] = {"eu-west-1", "us-east-1", "us-east-2", "us-west-2"};
    const char *types[] = {"g5.xlarge", "g5.2xlarge", "g6.xlarge", "p4d.24xlarge"};
    const char *s;
    CHECK((s = suggest_closest("us-esat-1", regions, 4)) && !strcmp(s, "us-east-1"), "us-esat-1 -> %s", s ? s : "NULL");
    /* us-east-9 is one edit from both us-east-1 and us-east-2: the first in the order given */
    CHECK((s = suggest_closest("us-east-9", regions, 4)) && !strcmp(s, "us-east-1"), "us-east-9 -> %s", s ? s : "NULL");
    CHECK((s = suggest_closest("US-WEST-2", regions, 4)) && !strcmp(s, "us-west-2"), "US-WEST-2 -> %s", s ? s : "NULL");
    CHECK(!suggest_closest("mars-1", regions, 4), "mars-1 is close to nothing");
    CHECK(!suggest_closest("us-east-1", regions, 4), "a known name gets no suggestion");
    CHECK((s = suggest_closest("g5.xlarg", types, 4)) && !strcmp(s, "g5.xlarge"), "g5.xlarg -> %s", s ? s : "NULL");
    CHECK((s = suggest_closest("p4d.24xlareg", types, 4)) && !strcmp(s, "p4d.24xlarge"), "p4d.24xlareg -> %s",
          s ? s : "NULL");
    CHECK(!suggest_closest("zz9.large", types, 4), "zz9.large is close to nothing");
    const char *markets[] = {"on-demand", "spot", "both"};
    CHECK((s = suggest_closest("spto", markets, 3)) && !strcmp(s, "spot"), "spto -> %s", s ? s : "NULL");
    CHECK(!suggest_closest("sp", markets, 3), "two letters are too short to guess from");
    CHECK(suggest_max_distance(3) == 0 && suggest_max_distance(4) == 1 && suggest_max_distance(7) == 1 &&
              suggest_max_distance(8) == 2,
          "thresholds");
    CHECK(!suggest_closest(NULL, types, 4) && !suggest_closest("g5.xlarg", NULL, 0), "no word, no candidates");
}

static void sizes(void)
{
    const char *ok[] = {"t3.nano",    "t3.micro",       "t3.small",        "t3.medium",
                        "g5.large",   "g5.xlarge",      "g5.2xlarge",      "u7i-12tb.224xlarge",
                        "g4dn.metal", "m7i.metal-24xl", "ml.p4d.24xlarge", "mac2-m2.metal"};
    const char *bad[] = {"g5.xlarg",     "g5.1xlarge", "g5.02xlarge", "g5.xlargee", "g5.metal-xl",
                         "g5.metal-0xl", "g5.huge",    "g5",          "g5.",        "g5.1234567xlarge"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        CHECK(names_instance_size_ok(ok[i]), "%s has a size AWS uses", ok[i]);
        CHECK(!names_instance_type_size_problem(ok[i]), "%s: %s", ok[i], names_instance_type_size_problem(ok[i]));
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(!names_instance_size_ok(bad[i]), "%s must not pass", bad[i]);
        CHECK(names_instance_type_size_problem(bad[i]) != NULL, "%s must have a problem", bad[i]);
    }
}

static void natural_order(void)
{
    /* the order a person expects, written out by hand */
    const char *want[] = {"g4dn.xlarge",    "g4dn.2xlarge", "g4dn.4xlarge", "g4dn.12xlarge", "g4dn.metal",
                          "g5.large",       "g5.xlarge",    "g5.2xlarge",   "g5.12xlarge",   "g5.48xlarge",
                          "g5g.medium",     "g6.xlarge",    "g6e.xlarge",   "m7i.metal",     "m7i.metal-24xl",
                          "m7i.metal-48xl", "ml.g5.xlarge", "p3.2xlarge",   "p3dn.24xlarge", "p4d.24xlarge",
                          "p5.4xlarge",     "p5.48xlarge",  "p5e.48xlarge", "p5en.48xlarge", "t3.nano",
                          "t3.micro",       "t3.small",     "t3.medium",    "trn1.2xlarge",  "trn1.32xlarge",
                          "trn1n.32xlarge"};
    enum { N = sizeof want / sizeof *want };
    const char *v[N];
    /* a fixed shuffle: reversed, then every third swapped forward */
    for (size_t i = 0; i < N; i++) v[i] = want[N - 1 - i];
    for (size_t i = 2; i < N; i += 3) {
        const char *t = v[i];
        v[i] = v[i - 2];
        v[i - 2] = t;
    }
    qsort(v, N, sizeof *v, names_instance_type_qsort_cmp);
    for (size_t i = 0; i < N; i++) CHECK(!strcmp(v[i], want[i]), "position %zu: %s, want %s", i, v[i], want[i]);
    for (size_t i = 0; i + 1 < N; i++)
        CHECK(names_instance_type_cmp(want[i], want[i + 1]) < 0 && names_instance_type_cmp(want[i + 1], want[i]) > 0,
              "%s before %s", want[i], want[i + 1]);
    CHECK(names_instance_type_cmp("g5.xlarge", "g5.xlarge") == 0, "equal names");
    /* sizes it does not know go after the ones it does, in plain string order */
    CHECK(names_instance_type_cmp("g5.metal", "g5.huge") < 0 && names_instance_type_cmp("g5.huge", "g5.zz") < 0,
          "unknown sizes last");
}

static void zones(void)
{
    const char *ids[] = {"use1-az2", "usw2-lax1-az1", "apne1-az4", "use1-wl1-bos-wlz1"};
    const char *names[] = {"us-east-1a", "us-west-2-lax-1a", "ap-northeast-1c"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) CHECK(names_zone_is_id(ids[i]), "%s is an ID", ids[i]);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        CHECK(!names_zone_is_id(names[i]) && names_zone_ok(names[i]), "%s is a name", names[i]);
    CHECK(!names_zone_is_id("use1 az2") && names_zone_problem("us east 1a") != NULL, "malformed zones");
}

int main(void)
{
    distances();
    closest();
    sizes();
    natural_order();
    zones();
    if (!failures) printf("util_suggest: ok\n");
    return failures != 0;
}
