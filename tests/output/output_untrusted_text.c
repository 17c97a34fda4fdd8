/* Untrusted text shown to people: the escaping helper on hand-worked cases (C0, DEL, C1 as UTF-8,
 * bidirectional overrides, invalid and overlong UTF-8, truncation), and every renderer that shows
 * names from files and services: the text table, the prices table and its notes, warnings
 * (ib_warn), error messages (ib_error_set) and measure's result summary.  "Safe" below means: no
 * byte below 0x20 other than the renderer's own newlines, no DEL, no ESC, no BEL. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "instbench/bench.h"
#include "instbench/output.h"
#include "instbench/prices.h"

#include "check.h"
#include "scratch.h"

static const char *const OSC52 = "\x1b]52;c;aGVsbG8=\x07"; /* writes the clipboard */
static const char *const CLEAR = "\x1b[2J";                /* clears the screen */

static int safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f) return 0;
    return 1;
}

static void test_escape(void)
{
    static const char *const cases[][2] = {
        {"us-east-1a", "us-east-1a"},
        {"\x1b]52;c;aGVsbG8=\x07", "\\x1b]52;c;aGVsbG8=\\x07"},
        {"\x1b[2J", "\\x1b[2J"},
        {"tab\there\nnl\rcr\x7f", "tab\\x09here\\x0anl\\x0dcr\\x7f"},
        {"c1 \xc2\x9b"
         "31m",
         "c1 \\u009b31m"}, /* CSI as a UTF-8 C1 control */
        {"bidi \xe2\x80\xae"
         "gnp.exe",
         "bidi \\u202egnp.exe"},                                                    /* right-to-left override */
        {"NVIDIA A10G \xe2\x84\xa2 \xc3\xa9", "NVIDIA A10G \xe2\x84\xa2 \xc3\xa9"}, /* real UTF-8 stays */
        {"bad \xff\xfe", "bad \\xff\\xfe"},
        {"raw c1 \x9b", "raw c1 \\x9b"}, /* an 8-bit C1 byte alone */
        {"overlong \xc0\xaf", "overlong \\xc0\\xaf"},
        {"cut \xe2\x84", "cut \\xe2\\x84"},
        {"surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80"},
        {"back\\slash", "back\\slash"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[128];
        size_t need = util_term_escape(cases[i][0], out, sizeof out);
        CHECK(!strcmp(out, cases[i][1]), "escape %zu: got [%s] want [%s]", i, out, cases[i][1]);
        CHECK(need == strlen(cases[i][1]), "escape %zu: length %zu", i, need);
        char twice[128];
        util_term_escape(out, twice, sizeof twice);
        CHECK(!strcmp(out, twice), "escape %zu is not idempotent: [%s]", i, twice);
    }
    /* A short buffer holds whole units only: never half of "\x1b". */
    char small[6];
    util_term_escape("ab\x1b"
                     "cd",
                     small, sizeof small);
    CHECK(!strcmp(small, "ab"), "truncated: [%s]", small);
    char *d = util_term_escape_dup(OSC52);
    CHECK(d && safe(d) && strstr(d, "\\x1b]52"), "dup: [%s]", d ? d : "(null)");
    free(d);
}

static char *capture_table(const output_table *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    output_table_write_text(t, f);
    fclose(f);
    return buf;
}

static void test_table(void)
{
    const char *hdr[] = {"zone", "$/h"};
    const output_align al[] = {OUTPUT_LEFT, OUTPUT_RIGHT};
    output_table t;
    CHECK(output_table_init(&t, 2, hdr, al) == 0, "init");
    const char *r1[] = {OSC52, "0.41"};
    const char *r2[] = {CLEAR, "1.006"};
    output_table_add_row(&t, r1);
    output_table_add_row(&t, r2);
    char *got = capture_table(&t);
    CHECK(safe(got), "table carries control characters:\n%s", got);
    CHECK(strstr(got, "\\x1b]52;c;aGVsbG8=\\x07") && strstr(got, "\\x1b[2J"), "escaped cells missing:\n%s", got);
    /* Widths follow what is shown: every line of the table is equally long. */
    size_t first = strcspn(got, "\n");
    for (const char *p = got; *p; p += strcspn(p, "\n") + 1)
        CHECK(strcspn(p, "\n") == first, "misaligned line [%.*s]", (int)strcspn(p, "\n"), p);
    free(got);
    output_table_free(&t);
}

static void test_prices_table(void)
{
    spot_price z = {.usd_per_hour = 0.41, .placement_score = -1};
    snprintf(z.az, sizeof z.az, "%s", CLEAR);
    price_record r;
    price_record_init(&r);
    snprintf(r.instance_type, sizeof r.instance_type, "g5.xlarge");
    snprintf(r.region, sizeof r.region, "us-east-1");
    r.spot = &z;
    r.n_spot = 1;
    /* a snapshot price: only then does the table quote the snapshot's (hostile) source */
    snprintf(r.spot_source, sizeof r.spot_source, "snapshot");
    price_set s = {.items = &r, .n = 1};
    snprintf(s.snapshot_date, sizeof s.snapshot_date, "2026-11-21");
    snprintf(s.snapshot_source, sizeof s.snapshot_source, "%s", OSC52);
    snprintf(s.placement_note, sizeof s.placement_note, "note %s", CLEAR);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    prices_view v = {.format = "table", .want_on_demand = 1, .want_spot = 1};
    prices_write(&s, &v, f);
    fclose(f);
    CHECK(safe(buf), "prices table carries control characters:\n%s", buf);
    CHECK(strstr(buf, "\\x1b[2J") && strstr(buf, "\\x1b]52"), "escaped zone or notes missing:\n%s", buf);
    free(buf);
}

/* stderr into a file while FN runs; returns what was written. */
static char *capture_stderr(void (*fn)(void))
{
    char path[256];
    int fd = scratch_template(path, sizeof path, "instbench-untrusted") ? mkstemp(path) : -1;
    if (fd < 0) {
        CHECK(0, "a scratch file %s: %s", path, strerror(errno));
        return calloc(1, 1);
    }
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *buf = calloc(1, 4096);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, 4095);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return buf;
}

static void warn_hostile(void)
{
    ib_warn("ignoring price cache file %s: zone %s", CLEAR, OSC52);
    ib_info("placement scores: %s", "a\nfake line");
}

static void test_log(void)
{
    char *got = capture_stderr(warn_hostile);
    CHECK(safe(got), "ib_warn/ib_info carry control characters: [%s]", got);
    CHECK(strstr(got, "warning: ignoring price cache file \\x1b[2J: zone \\x1b]52;c;aGVsbG8=\\x07\n"),
          "warning not escaped as expected: [%s]", got);
    CHECK(strstr(got, "placement scores: a\\x0afake line\n"), "an argument's newline starts a line: [%s]", got);
    free(got);
    ib_error err;
    ib_error_set(&err, IB_EXIT_RUNTIME, "IMDS placement/availability-zone '%s'", OSC52);
    CHECK(safe(err.msg) && strstr(err.msg, "'\\x1b]52;c;aGVsbG8=\\x07'"), "error message: [%s]", err.msg);
}

static void test_summary(void)
{
    bench_sysinfo sys;
    memset(&sys, 0, sizeof sys);
    snprintf(sys.hostname, sizeof sys.hostname, "host%s", CLEAR);
    bench_result m;
    memset(&m, 0, sizeof m);
    m.samples_per_second = 10, m.steps = 1, m.duration_s = 1;
    bench_report r;
    memset(&r, 0, sizeof r);
    r.timestamp = "2026-11-21T10:00:00Z";
    r.sys = &sys;
    r.m = &m;
    r.backend = "cpu";
    r.peak_tflops = 1;
    r.peak_source = OSC52;
    snprintf(r.workload.model.name, sizeof r.workload.model.name, "vit%s", OSC52);
    strcpy(r.identity.source, "unknown");
    for (int with_type = 0; with_type < 2; with_type++) {
        if (with_type) {
            snprintf(r.identity.type, sizeof r.identity.type, "g5.%s", CLEAR);
            snprintf(r.identity.region, sizeof r.identity.region, "%s", OSC52);
        }
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        result_print_summary(f, &r, 0);
        fclose(f);
        CHECK(safe(buf), "result summary carries control characters:\n%s", buf);
        CHECK(strstr(buf, with_type ? "g5.\\x1b[2J" : "host\\x1b[2J") && strstr(buf, "vit\\x1b]52"),
              "summary names not escaped:\n%s", buf);
        free(buf);
    }
    /* A host name is not a file name either. */
    char path[256];
    const struct timespec when = {1763719200, 0}; /* 2025-11-21T10:00:00Z */
    result_default_path("", "h\x1b[2J/../x", &when, path, sizeof path);
    CHECK(!strncmp(path, "instbench-results/h__2J_.._x-", 29) && strstr(path, "-20251121T100000.000Z.json") &&
              !strchr(path + 18, '/'),
          "default path [%s]", path);
}

static void svg_text(FILE *f, const char *s) { output_xml_escape(f, s); }

static void test_svg(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    svg_text(f, "a<b>&\"'\x1b[2J\x07\x7f\xc2\x9bz");
    fclose(f);
    CHECK(!strcmp(buf, "a&lt;b&gt;&amp;&quot;&apos;[2J??z"), "xml escape: [%s]", buf);
    free(buf);
}

int main(void)
{
    test_escape();
    test_table();
    test_prices_table();
    test_log();
    test_summary();
    test_svg();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("untrusted text: all checks passed\n");
    return 0;
}
