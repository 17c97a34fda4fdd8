/* A prices file (`rank --source FILE`, prices_load_file) whose times lie ahead of this clock: its
 * generated_at, an on-demand or a spot as_of more than the clock skew the price cache tolerates
 * (5 minutes) in the future is refused, the message naming the file, the field and the time
 * (9999-12-31 was read and shown as "<1 min" old); a few minutes ahead and any past time pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instbench/prices.h"
#include "instbench/util.h"

#include "scratch.h"

static int failures;
#define CHECK(c, ...)                                            \
    do {                                                         \
        if (!(c)) {                                              \
            fprintf(stderr, "%s:%d: FAIL ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            failures++;                                          \
        }                                                        \
    } while (0)

static char dir[200];

/* A prices file with these three times (ISO 8601), one record priced on both markets; its path. */
static const char *file_with(const char *generated_at, const char *od_as_of, const char *spot_as_of)
{
    static char path[256];
    static int k;
    snprintf(path, sizeof path, "%s/p%d.json", dir, k++);
    FILE *f = fopen(path, "w");
    if (!f) return path;
    fprintf(f,
            "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"%s\", \"snapshot\": null,\n"
            " \"prices\": [{\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\",\n"
            "   \"on_demand\": {\"usd_per_hour\": 1.006, \"source\": \"live\", \"as_of\": \"%s\"},\n"
            "   \"spot\": {\"source\": \"live\", \"as_of\": \"%s\", \"zones\": [\n"
            "      {\"availability_zone\": \"us-east-1a\", \"usd_per_hour\": 0.41, \"timestamp\": \"%s\"}]},\n"
            "   \"interruption\": null, \"placement_score\": null}]}\n",
            generated_at, od_as_of, spot_as_of, spot_as_of);
    fclose(f);
    return path;
}

static void iso_in(long seconds, char out[32]) { util_utc_iso8601(time(NULL) + seconds, out); }

int main(void)
{
    if (!scratch_template(dir, sizeof dir, "prices-file-times") || !mkdtemp(dir)) {
        fprintf(stderr, "no scratch folder %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char past[32], soon[32], ahead[32];
    iso_in(-3600, past);
    iso_in(4 * 60, soon);   /* within the skew the cache tolerates */
    iso_in(10 * 60, ahead); /* past it */
    static const struct {
        const char *field;
        int which; /* 0 generated_at, 1 on-demand, 2 spot */
    } fields[] = {{"generated_at", 0}, {"prices[0].on_demand.as_of", 1}, {"prices[0].spot.as_of", 2}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const char *bad_times[] = {"9999-12-31T00:00:00Z", ahead};
        for (size_t b = 0; b < 2; b++) {
            const char *t[3] = {past, past, past};
            t[fields[i].which] = bad_times[b];
            const char *path = file_with(t[0], t[1], t[2]);
            price_set s;
            ib_error err = {0};
            int rc = prices_load_file(path, &s, &err);
            CHECK(rc == -1, "%s = %s: accepted", fields[i].field, bad_times[b]);
            if (rc == 0) {
                prices_free(&s);
                continue;
            }
            CHECK(strstr(err.msg, path) && strstr(err.msg, fields[i].field) && strstr(err.msg, bad_times[b]) &&
                      strstr(err.msg, "in the future"),
                  "%s = %s: the message does not name the file, the field, the time and why: %s", fields[i].field,
                  bad_times[b], err.msg);
        }
        const char *t[3] = {past, past, past};
        t[fields[i].which] = soon;
        const char *path = file_with(t[0], t[1], t[2]);
        price_set s;
        ib_error err = {0};
        int rc = prices_load_file(path, &s, &err);
        CHECK(rc == 0, "%s 4 minutes ahead (clock skew): refused: %s", fields[i].field, err.msg);
        if (rc == 0) prices_free(&s);
    }
    /* a record without an on-demand price or spot says nothing of when: its null as_of is no time */
    char path[256];
    snprintf(path, sizeof path, "%s/nulls.json", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f,
                "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"%s\", \"snapshot\": null,\n"
                " \"prices\": [{\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\", \"on_demand\": null,\n"
                "   \"spot\": null, \"interruption\": null, \"placement_score\": null}]}\n",
                past);
        fclose(f);
    }
    price_set s;
    ib_error err = {0};
    int rc = prices_load_file(path, &s, &err);
    CHECK(rc == 0, "a record without prices refused: %s", err.msg);
    if (rc == 0) prices_free(&s);

    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("prices_file_times: all checks passed\n");
    return failures ? 1 : 0;
}
