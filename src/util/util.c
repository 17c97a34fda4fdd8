/* util: errors, logging, files, time, strings.  See include/instbench/util.h. */
#define _GNU_SOURCE /* strptime, timegm: without it strptime is implicitly declared and its pointer truncated */
#include "instbench/util.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ib_log_level = 1;
const char *ib_build_revision;

void util_revision_short(const char *rev, char *out, size_t len)
{
    if (!rev || !rev[0]) snprintf(out, len, "unknown");
    else snprintf(out, len, "%.12s%s", rev, strstr(rev, "-dirty") ? "-dirty" : "");
}

int ib_error_set(ib_error *err, int code, const char *fmt, ...)
{
    if (err) {
        char raw[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        util_term_escape(raw, err->msg, sizeof err->msg);
        err->code = code;
    }
    return -1;
}

void ib_error_clear(ib_error *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

void ib_log(int level, const char *fmt, ...)
{
    if (level > ib_log_level) return;
    va_list ap;
    va_start(ap, fmt);
    util_term_vprintf(stderr, fmt, ap);
    va_end(ap);
    size_t n = strlen(fmt);
    if (n == 0 || fmt[n - 1] != '\n') fputc('\n', stderr);
}

int util_isatty_stdout(void) { return isatty(STDOUT_FILENO); }
int util_isatty_stderr(void) { return isatty(STDERR_FILENO); }

int util_stderr_color(void)
{
    const char *nc = getenv("NO_COLOR");
    if (nc && nc[0]) return 0;
    return util_isatty_stderr();
}

/* CAP as people read it: "8 GiB", "16 MiB", "64 KiB", else "N bytes". */
static void size_text(size_t cap, char *out, size_t len)
{
    if (cap >= (1u << 30) && cap % (1u << 30) == 0) snprintf(out, len, "%zu GiB", cap >> 30);
    else if (cap >= (1u << 20) && cap % (1u << 20) == 0) snprintf(out, len, "%zu MiB", cap >> 20);
    else if (cap >= 1024 && cap % 1024 == 0) snprintf(out, len, "%zu KiB", cap >> 10);
    else snprintf(out, len, "%zu bytes", cap);
}

/* The one bounded reader of whole files (util_read_file, util_read_regular_file).  The buffer is
 * sized from what fstat says (a 300 KB file under an 8 GiB cap takes 300 KB), grown only if the
 * file grows while read, and never past CAP + 1 bytes: a file longer than CAP is refused, however
 * it got that long. */
static int read_capped(const char *path, size_t cap, int nofollow, char **data, size_t *len, ib_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        int e = errno;
        ib_error_set(err, IB_EXIT_RUNTIME, "cannot open %s: %s", path,
                     nofollow && e == ELOOP ? "it is a symbolic link" : strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    const char *why = NULL;
    int too_large = 0;
    if (fstat(fd, &st) != 0) why = strerror(errno);
    else if (S_ISDIR(st.st_mode)) why = "it is a directory";
    else if (!S_ISREG(st.st_mode)) why = "it is not a regular file"; /* a FIFO, device or socket */
    else if ((unsigned long long)st.st_size > cap) too_large = 1;
    /* room: what may be read before the buffer grows (the size, plus one byte that shows growth) */
    size_t room = !why && !too_large ? (size_t)st.st_size + 1 : 0, n = 0;
    char *buf = room ? malloc(room + 1) : NULL;
    if (room && !buf) why = "out of memory";
    while (buf && !why && !too_large) {
        if (n == room) { /* the file grew while read */
            if (room > cap) {
                too_large = 1;
                break;
            }
            size_t grown = room <= cap / 2 ? room * 2 : cap + 1;
            char *nb = realloc(buf, grown + 1);
            if (!nb) {
                why = "out of memory";
                break;
            }
            buf = nb, room = grown;
        }
        ssize_t got = read(fd, buf + n, room - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) why = strerror(errno);
        if (got <= 0) break;
        n += (size_t)got;
        if (n > cap) too_large = 1;
    }
    close(fd);
    if (why || too_large) {
        free(buf);
        char limit[48];
        size_text(cap, limit, sizeof limit);
        if (too_large) ib_error_set(err, IB_EXIT_RUNTIME, "cannot read %s: it is over %s", path, limit);
        else ib_error_set(err, IB_EXIT_RUNTIME, "cannot read %s: %s", path, why);
        errno = EINVAL;
        return -1;
    }
    buf[n] = '\0';
    *data = buf;
    if (len) *len = n;
    return 0;
}

int util_read_regular_file(const char *path, size_t cap, char **data, size_t *len, ib_error *err)
{
    return read_capped(path, cap, 1, data, len, err);
}

int util_read_file(const char *path, size_t cap, char **data, size_t *len, ib_error *err)
{
    return read_capped(path, cap, 0, data, len, err);
}

int util_mkdir_p(const char *dir, ib_error *err)
{
    char buf[PATH_MAX];
    if (!dir || !dir[0]) return 0;
    if (strlen(dir) >= sizeof buf) return ib_error_set(err, IB_EXIT_RUNTIME, "path too long: %s", dir);
    strcpy(buf, dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot create directory %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot create directory %s: %s", buf, strerror(errno));
    return 0;
}

double util_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The year is written with four digits by hand: strftime's %Y gives "565" for the year 565, which
 * util_parse_iso8601 (four digits) would refuse, so a value read from a file would not survive
 * being written back.  The reader keeps years to 1970-9999, the range this writes exactly. */
void util_utc_iso8601(time_t t, char out[32])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[96]; /* room for any int fields, so the compiler sees no truncation; 20 chars in practice */
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec);
    size_t n = strnlen(buf, 31);
    memcpy(out, buf, n);
    out[n] = '\0';
}

void util_utc_spreadsheet(time_t t, char out[32])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
}

void util_fmt_double(char *out, size_t len, double v)
{
    out[0] = '\0';
    if (!isfinite(v)) return;
    /* 17 significant digits always round-trip; the first shorter one that does is the shortest
     * (a double within half an ulp of a 15-digit decimal prints as that decimal at %.15g). */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, len, "%.*g", digits, v);
        if (strtod(out, NULL) == v) return;
    }
}

double util_floor_millionths(double v)
{
    double x = v * 1e6, whole = nearbyint(x);
    /* a decimal of at most six places lands within a few ulps of a whole number of millionths:
     * the double nearest the decimal, then the product's own rounding */
    if (fabs(x - whole) <= 4 * DBL_EPSILON * fabs(x)) return whole / 1e6;
    return floor(x) / 1e6;
}

/* N digits at *P into *V, advancing *P; 0 when there are not N digits. */
static int digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9') return 0;
        *v = *v * 10 + (**p - '0');
    }
    return 1;
}

int util_days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12) return 0;
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return days[month - 1] + (month == 2 && leap);
}

/* The one reader of dates and times (flags, state files, AWS answers): YYYY-MM-DD, optionally
 * THH:MM:SS with a fraction, then Z, +HH:MM, -HH:MM or nothing (UTC).  Every field must be a
 * date the calendar has: timegm would quietly make 2026-02-30 the 2nd of March and 2026-11-31
 * the 1st of December, so a typo would become another real day.  Years before 1970 are refused:
 * no AWS answer, price or state file dates from then, and a time_t before the epoch is how a
 * hostile file's "0565-11-21" would otherwise pass as a date. */
int util_parse_iso8601(const char *s, time_t *out)
{
    int y, mo, d, h = 0, mi = 0, sec = 0;
    if (!s || !digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-' || !digits(&s, 2, &d)) return -1;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > util_days_in_month(y, mo)) return -1;
    if (*s == 'T') {
        s++;
        if (!digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &mi) || *s++ != ':' || !digits(&s, 2, &sec)) return -1;
        if (h > 23 || mi > 59 || sec > 59) return -1;
        if (*s == '.') {
            s++;
            if (*s < '0' || *s > '9') return -1;
            while (*s >= '0' && *s <= '9') s++;
        }
    }
    long off = 0;
    if (*s == 'Z') s++;
    else if (*s == '+' || *s == '-') {
        int sign = *s++ == '-' ? -1 : 1, oh, om = 0;
        if (!digits(&s, 2, &oh)) return -1;
        if (*s == ':' && (s++, !digits(&s, 2, &om))) return -1;
        if (oh > 23 || om > 59) return -1;
        off = sign * (oh * 3600L + om * 60L);
    }
    if (*s != '\0') return -1;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    time_t t = timegm(&tm) - off;
    if (t < 0) return -1; /* 1970-01-01T00:30:00+01:00 */
    *out = t;
    return 0;
}

char *util_strdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int is_space(char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }

int util_space_around(const char *v, int list)
{
    size_t n = strlen(v);
    if (n && (is_space(v[0]) || is_space(v[n - 1]))) return 1;
    for (const char *comma = list ? strchr(v, ',') : NULL; comma; comma = strchr(comma + 1, ','))
        if ((comma > v && is_space(comma[-1])) || is_space(comma[1])) return 1;
    return 0;
}

int util_split_csv(const char *s, char ***items, size_t *n)
{
    *items = NULL;
    *n = 0;
    if (!s) return 0;
    size_t cap = 0;
    const char *p = s;
    while (1) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *a = p, *b = p + len;
        while (a < b && (*a == ' ' || *a == '\t')) a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
        if (b > a) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 8;
                char **ni = realloc(*items, cap * sizeof *ni);
                if (!ni) goto oom;
                *items = ni;
            }
            char *it = malloc((size_t)(b - a) + 1);
            if (!it) goto oom;
            memcpy(it, a, (size_t)(b - a));
            it[b - a] = '\0';
            (*items)[(*n)++] = it;
        }
        if (!e) break;
        p = e + 1;
    }
    return 0;
oom:
    util_free_strv(*items, *n);
    *items = NULL;
    *n = 0;
    return -1;
}

void util_free_strv(char **items, size_t n)
{
    for (size_t i = 0; i < n; i++) free(items[i]);
    free(items);
}

/* Whitespace is never part of a number: strtol/strtod would skip it in front and "' 4'" would
 * pass while "'4 '" failed. */
static int has_space(const char *s)
{
    for (; *s; s++)
        if (*s == ' ' || (*s >= '\t' && *s <= '\r')) return 1;
    return 0;
}

size_t util_decimal_prefix(const char *s)
{
    size_t i = s[0] == '-', digits = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++) digits++;
    if (s[i] == '.')
        for (i++; s[i] >= '0' && s[i] <= '9'; i++) digits++;
    if (!digits) return 0;
    if (s[i] == 'e' || s[i] == 'E') { /* an exponent only with its digits: "5e" is 5 then "e" */
        size_t k = i + 1 + (s[i + 1] == '+' || s[i + 1] == '-');
        if (s[k] >= '0' && s[k] <= '9') {
            while (s[k] >= '0' && s[k] <= '9') k++;
            i = k;
        }
    }
    return i;
}

/* What makes any text no number before it is parsed: 0, or the UTIL_NUM_* code. */
static int not_a_number(const char *s)
{
    if (!s || !*s) return UTIL_NUM_EMPTY;
    if (has_space(s)) return UTIL_NUM_SPACE;
    if (*s == '+') return UTIL_NUM_SYNTAX; /* one spelling per number: "+2" is refused as " 2" is */
    if (util_decimal_prefix(s) == strlen(s)) return 0;
    /* what strtod alone takes: "inf", "nan" (not finite), hex "0x10" and "0x1p4" (not decimal) */
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return *end == '\0' && !isfinite(v) && errno != ERANGE ? UTIL_NUM_NONFINITE : UTIL_NUM_SYNTAX;
}

int util_parse_int(const char *s, long min, long max, long *out)
{
    int bad = not_a_number(s);
    if (bad) return bad;
    if (strspn(s + (s[0] == '-'), "0123456789") != strlen(s + (s[0] == '-')))
        return UTIL_NUM_FRACTION; /* "4.5", "1e3": a number, but not a whole one written in digits */
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno == ERANGE) return v < 0 ? UTIL_NUM_LOW : UTIL_NUM_HIGH;
    if (v < min) return UTIL_NUM_LOW;
    if (v > max) return UTIL_NUM_HIGH;
    *out = v;
    return 0;
}

int util_parse_double(const char *s, double min, double max, double *out)
{
    int bad = not_a_number(s);
    if (bad) return bad;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0') return UTIL_NUM_SYNTAX;
    if (errno == ERANGE && fabs(v) > 1) return v < 0 ? UTIL_NUM_LOW : UTIL_NUM_HIGH; /* 1e999 */
    if (v < min) return UTIL_NUM_LOW;
    if (v > max) return UTIL_NUM_HIGH;
    *out = v;
    return 0;
}

const char *util_number_error(const char *s, int code, double min, double max, char *buf, size_t len)
{
    char safe[64];
    size_t i = 0;
    for (; s && s[i] && i + 4 < sizeof safe; i++) safe[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    safe[i] = '\0';
    if (s && s[i]) snprintf(safe + i, sizeof safe - i, "...");
    switch (code) {
    case UTIL_NUM_EMPTY: snprintf(buf, len, "an empty value is not a number"); break;
    case UTIL_NUM_SPACE:
        snprintf(buf, len, "'%s' has whitespace in it, which is not part of a number: give the number alone", safe);
        break;
    case UTIL_NUM_FRACTION: snprintf(buf, len, "'%s' is not a whole number", safe); break;
    case UTIL_NUM_NONFINITE: snprintf(buf, len, "'%s' is not a finite number", safe); break;
    case UTIL_NUM_LOW: snprintf(buf, len, "'%s' is below the minimum, %.15g", safe, min); break;
    case UTIL_NUM_HIGH: snprintf(buf, len, "'%s' is above the maximum, %.15g", safe, max); break;
    default: {
        /* hex ("0x10", "0x1p4") reads as a number to strtod, and to people who write C: say why not */
        char *end;
        double v = s ? strtod(s, &end) : 0;
        (void)v;
        if (s && s[0] && s[0] != '+' && end != s && *end == '\0')
            snprintf(buf, len, "'%s' is not a plain decimal number", safe);
        else snprintf(buf, len, "'%s' is not a number", safe);
        break;
    }
    }
    return buf;
}

void util_hex(const unsigned char *in, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[in[i] >> 4];
        out[2 * i + 1] = hx[in[i] & 15];
    }
    out[2 * n] = '\0';
}

long util_proc_read(long pid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/%s", pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t n = 0;
    for (ssize_t k; n + 1 < cap && (k = read(fd, buf + n, cap - 1 - n)) > 0;) n += (size_t)k;
    close(fd);
    buf[n] = '\0';
    return (long)n;
}

const char *util_cmdline_command(const char *cmd, size_t len)
{
    const char *end = cmd + len, *a = cmd + strnlen(cmd, len) + 1; /* past the executable */
    while (a < end && a[0] == '-' && a[1]) a += strlen(a) + 1;
    return a < end ? a : NULL;
}
