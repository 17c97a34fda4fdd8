/* util_hostile_text: the three rules issue 33 gave every reader of untrusted text (src/util/):
 * util_json_escaped_nul (a \u0000 escape inside a JSON string or key, which cJSON cuts and Python
 * keeps), util_utf8_name (a machine's name as --price takes it: UTF-8 kept, controls refused) and
 * util_read_regular_file (a regular file only, never more than its cap read); util_read_file, the
 * same bound for the files people name (a prices file, a reference, AWS's config), where the old
 * reader read /dev/zero until the memory ran out; and the numbers every flag takes, plain
 * decimals only (strtod's hex, "+" and "inf" refused).  Expected values are worked out by hand
 * here. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "scratch.h"
#include "instbench/util.h"

static void escaped_nul(void)
{
    static const struct {
        const char *json;
        size_t at;
    } cases[] = {
        {"{\"a\": \"x\\u0000y\"}", 9},       /* in a value: the offset of its backslash, + 1 */
        {"{\"a\\u0000b\": 1}", 4},           /* in a key */
        {"{\"a\": \"x\\\\u0000\"}", 0},      /* an escaped backslash, then the text u0000 */
        {"{\"a\": \"\\\\\\u0000\"}", 10},    /* \\ then \u0000: the second is an escape */
        {"{\"a\": \"\\\"\\u0000\"}", 10},    /* \" does not end the string */
        {"{\"a\": \"x\\u00001\"}", 9},       /* \u0000 followed by a digit */
        {"{\"a\": \"\\u0001 \\u00e9\"}", 0}, /* other escapes pass */
        {"{\"a\": 1} \\u0000", 0},           /* outside any string: not this rule's (invalid JSON) */
        {"{\"a\": \"\\u000", 0},             /* cut short */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t got = util_json_escaped_nul(cases[i].json, strlen(cases[i].json));
        CHECK(got == cases[i].at, "[%s]: %zu, want %zu", cases[i].json, got, cases[i].at);
    }
}

static void names(void)
{
    static const struct {
        const char *s;
        int ok;
    } cases[] = {
        {"g5.xlarge", 1},
        {"lab-box_2", 1},
        {"b\xc3\xbcro", 1} /* büro */,
        {"b\xc3\xa9ro", 1} /* béro */,
        {"\xe6\x9d\xb1\xe4\xba\xac", 1} /* 東京 */,
        {"my host", 0},
        {"a=b", 0},
        {"a:spot", 0},
        {"tab\t", 0},
        {"del\x7f", 0},
        {"c1\xc2\x9b", 0} /* U+009B, CSI */,
        {"bidi\xe2\x80\xae", 0} /* U+202E */,
        {"bad\xc3", 0} /* cut sequence */,
        {"over\xc0\xaf", 0} /* overlong '/' */,
        {"\xff", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK(util_utf8_name(cases[i].s, strlen(cases[i].s)) == cases[i].ok, "name [%s]: want %d", cases[i].s,
              cases[i].ok);
    CHECK(util_utf8_name_char("\xc3\xbc") == 2 && util_utf8_name_char("a") == 1 && util_utf8_name_char("") == 0,
          "one character's length");
}

static void regular_files(void)
{
    char dir[200];
    if (!scratch_template(dir, sizeof dir, "util-hostile") || !mkdtemp(dir)) {
        CHECK(0, "a scratch folder %s: %s", dir, strerror(errno));
        return;
    }
    char path[256], fifo[256], link[256], big[256], missing[256];
    snprintf(path, sizeof path, "%s/f.json", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(big, sizeof big, "%s/big", dir);
    snprintf(missing, sizeof missing, "%s/nonexistent/x.json", dir); /* never made: /nonexistent can exist */
    FILE *f = fopen(path, "w");
    fputs("0123456789", f);
    fclose(f);
    char *data = NULL;
    size_t len = 0;
    ib_error err = {0};
    CHECK(util_read_regular_file(path, 10, &data, &len, &err) == 0 && len == 10 && !strcmp(data, "0123456789"),
          "a file of exactly the cap is read whole: %s", err.msg);
    free(data);
    data = NULL;
    CHECK(util_read_regular_file(path, 9, &data, &len, &err) != 0 && strstr(err.msg, "over 9 bytes") && !data,
          "one byte over the cap is refused: %s", err.msg);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    CHECK(util_read_regular_file(fifo, 100, &data, &len, &err) != 0 && strstr(err.msg, "not a regular file"),
          "a FIFO is refused without blocking: %s", err.msg);
    CHECK(symlink(path, link) == 0, "symlink");
    CHECK(util_read_regular_file(link, 100, &data, &len, &err) != 0 && strstr(err.msg, "symbolic link"),
          "a link, even to a good file, is refused: %s", err.msg);
    CHECK(util_read_regular_file("/dev/zero", 100, &data, &len, &err) != 0, "/dev/zero is refused");
    int fd = open(big, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 300L << 20) == 0, "a 300 MB sparse file");
    close(fd);
    CHECK(util_read_regular_file(big, 4 << 20, &data, &len, &err) != 0 && strstr(err.msg, "over"),
          "a 300 MB file is refused from its size: %s", err.msg);
    errno = 0;
    CHECK(util_read_regular_file(missing, 100, &data, &len, &err) != 0 && errno == ENOENT,
          "a missing file keeps ENOENT (errno %d)", errno);
    unlink(path), unlink(fifo), unlink(link), unlink(big), rmdir(dir);
}

/* util_read_file: the files people name.  Links are followed; anything but a regular file is
 * refused at once; a file over the cap is refused from its size, and never held whole. */
static void named_files(void)
{
    char dir[200];
    if (!scratch_template(dir, sizeof dir, "util-named") || !mkdtemp(dir)) {
        CHECK(0, "a scratch folder %s: %s", dir, strerror(errno));
        return;
    }
    char path[256], fifo[256], link[256], big[256], empty[256], missing[256];
    snprintf(path, sizeof path, "%s/f.json", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(big, sizeof big, "%s/big", dir);
    snprintf(empty, sizeof empty, "%s/empty", dir);
    snprintf(missing, sizeof missing, "%s/nonexistent/x.json", dir);
    FILE *f = fopen(path, "w");
    fputs("0123456789", f);
    fclose(f);
    fclose(fopen(empty, "w"));
    char *data = NULL;
    size_t len = 0;
    ib_error err = {0};
    CHECK(util_read_file(path, 10, &data, &len, &err) == 0 && len == 10 && !strcmp(data, "0123456789"),
          "a file of exactly the cap is read whole: %s", err.msg);
    free(data);
    data = NULL;
    CHECK(util_read_file(path, 9, &data, &len, &err) != 0 && strstr(err.msg, path) && strstr(err.msg, "over 9 bytes") &&
              !data,
          "one byte over the cap is refused, naming the file and the cap: %s", err.msg);
    CHECK(symlink(path, link) == 0, "symlink");
    CHECK(util_read_file(link, 100, &data, &len, &err) == 0 && len == 10, "a link to a file is followed: %s", err.msg);
    free(data);
    data = NULL;
    CHECK(util_read_file(empty, 100, &data, &len, &err) == 0 && len == 0 && data && !data[0], "an empty file: %s",
          err.msg);
    free(data);
    data = NULL;
    /* /dev/zero never ends: the old reader doubled its buffer until malloc failed (32 GiB asked) */
    CHECK(util_read_file("/dev/zero", (size_t)8 << 30, &data, &len, &err) != 0 && strstr(err.msg, "/dev/zero") &&
              strstr(err.msg, "not a regular file") && !data,
          "/dev/zero is refused: %s", err.msg);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    CHECK(util_read_file(fifo, 100, &data, &len, &err) != 0 && strstr(err.msg, "not a regular file"),
          "a FIFO is refused without waiting for a writer: %s", err.msg);
    CHECK(util_read_file(dir, 100, &data, &len, &err) != 0 && strstr(err.msg, "is a directory"),
          "a directory is refused: %s", err.msg);
    int fd = open(big, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0 && ftruncate(fd, (16L << 20) + 1) == 0, "a sparse file one byte over 16 MiB");
    close(fd);
    CHECK(util_read_file(big, (size_t)16 << 20, &data, &len, &err) != 0 && strstr(err.msg, "over 16 MiB"),
          "over 16 MiB is refused from its size, the cap named: %s", err.msg);
    CHECK(util_read_file(big, (size_t)8 << 30, &data, &len, &err) == 0 && len == (16u << 20) + 1,
          "under a cap of 8 GiB it is read: %s", err.msg);
    free(data);
    data = NULL;
    CHECK(util_read_file(path, (size_t)64 << 10, &data, &len, &err) == 0, "%s", err.msg);
    free(data);
    data = NULL;
    CHECK(util_read_file(big, (size_t)64 << 10, &data, &len, &err) != 0 && strstr(err.msg, "over 64 KiB"),
          "KiB caps are named in KiB: %s", err.msg);
    /* a file whose size says 0 but that has content (/proc): the buffer grows as it is read */
    CHECK(util_read_file("/proc/self/status", 1 << 20, &data, &len, &err) == 0 && len > 100 && strstr(data, "Pid:"),
          "/proc/self/status is read whole although its size is 0: %s", err.msg);
    free(data);
    data = NULL;
    CHECK(util_read_file("/proc/self/status", 10, &data, &len, &err) != 0 && strstr(err.msg, "over 10 bytes"),
          "and refused past the cap, however it grows: %s", err.msg);
    errno = 0;
    CHECK(util_read_file(missing, 100, &data, &len, &err) != 0 && errno == ENOENT && strstr(err.msg, missing),
          "a missing file keeps ENOENT (errno %d): %s", errno, err.msg);
    errno = 0;
    CHECK(util_read_file("/dev/zero", 100, &data, &len, &err) != 0 && errno == EINVAL,
          "a refused file is EINVAL (errno %d)", errno);
    unlink(path), unlink(fifo), unlink(link), unlink(big), unlink(empty), rmdir(dir);
}

/* Numbers as docs/usage.md has them: plain decimals, one spelling each.  strtod also takes hex
 * ("0x10" = 16, "0x1p4" = 16), a leading '+', "inf"/"nan" and leading whitespace. */
static void numbers(void)
{
    static const struct {
        const char *s;
        int dbl, in; /* util_parse_double's and util_parse_int's codes over [-1e18, 1e18] */
    } cases[] = {
        {"16", 0, 0},
        {"-3", 0, 0},
        {"0", 0, 0},
        {"1.5", 0, UTIL_NUM_FRACTION},
        {".5", 0, UTIL_NUM_FRACTION},
        {"5.", 0, UTIL_NUM_FRACTION},
        {"1e6", 0, UTIL_NUM_FRACTION},
        {"1E+6", 0, UTIL_NUM_FRACTION},
        {"2.5e-3", 0, UTIL_NUM_FRACTION},
        {"0x10", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"0X10", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"0x1p4", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"-0x10", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"0x", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"+2", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"+0.5", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {" 4", UTIL_NUM_SPACE, UTIL_NUM_SPACE},
        {"4 ", UTIL_NUM_SPACE, UTIL_NUM_SPACE},
        {"\t4", UTIL_NUM_SPACE, UTIL_NUM_SPACE},
        {"inf", UTIL_NUM_NONFINITE, UTIL_NUM_NONFINITE},
        {"-Infinity", UTIL_NUM_NONFINITE, UTIL_NUM_NONFINITE},
        {"nan", UTIL_NUM_NONFINITE, UTIL_NUM_NONFINITE},
        {"nan(1)", UTIL_NUM_NONFINITE, UTIL_NUM_NONFINITE},
        {"1e", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"1e+", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"1.2.3", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {".", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"-", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"--1", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"1_000", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"10h", UTIL_NUM_SYNTAX, UTIL_NUM_SYNTAX},
        {"", UTIL_NUM_EMPTY, UTIL_NUM_EMPTY},
        {"1e300", UTIL_NUM_HIGH, UTIL_NUM_FRACTION},
        {"1e999", UTIL_NUM_HIGH, UTIL_NUM_FRACTION},
        {"99999999999999999999", UTIL_NUM_HIGH, UTIL_NUM_HIGH},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double d = -1;
        long l = -1;
        int rd = util_parse_double(cases[i].s, -1e18, 1e18, &d),
            ri = util_parse_int(cases[i].s, -1000000000000000000L, 1000000000000000000L, &l);
        CHECK(rd == cases[i].dbl, "util_parse_double(\"%s\") = %d, want %d", cases[i].s, rd, cases[i].dbl);
        CHECK(ri == cases[i].in, "util_parse_int(\"%s\") = %d, want %d", cases[i].s, ri, cases[i].in);
        if (!cases[i].dbl) CHECK(d == strtod(cases[i].s, NULL), "util_parse_double(\"%s\") = %g", cases[i].s, d);
    }
    char buf[160];
    CHECK(strstr(util_number_error("0x10", UTIL_NUM_SYNTAX, 0, 1, buf, sizeof buf), "not a plain decimal"),
          "hex is named as not decimal: %s", buf);
    CHECK(strstr(util_number_error("abc", UTIL_NUM_SYNTAX, 0, 1, buf, sizeof buf), "'abc' is not a number"), "%s", buf);
    /* the number before a unit ("500h", "7d"): its length */
    static const struct {
        const char *s;
        size_t n;
    } prefixes[] = {{"500h", 3}, {"20d", 2}, {"1.5m", 3}, {"1e3h", 3}, {"5eh", 1}, {"5e", 1}, {"0x10h", 1},
                    {"+90", 0},  {" 90", 0}, {"h", 0},    {"-2d", 2},  {".5h", 2}, {"", 0}};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        CHECK(util_decimal_prefix(prefixes[i].s) == prefixes[i].n, "util_decimal_prefix(\"%s\") = %zu, want %zu",
              prefixes[i].s, util_decimal_prefix(prefixes[i].s), prefixes[i].n);
}

int main(void)
{
    escaped_nul();
    names();
    regular_files();
    named_files();
    numbers();
    if (!failures) printf("util_hostile_text: ok\n");
    return failures != 0;
}
