/* util/names.c: syntax of AWS instance types, regions and availability zones (instbench/names.h). */
#include "instbench/names.h"

#include <string.h>

#include "instbench/instance_type.h"

static int lower(char c) { return c >= 'a' && c <= 'z'; }
static int digit(char c) { return c >= '0' && c <= '9'; }

/* [a-z0-9-]+ starting with a letter, up to (not including) END. */
static int word_ok(const char *s, const char *end)
{
    if (s >= end || !lower(*s)) return 0;
    for (; s < end; s++)
        if (!lower(*s) && !digit(*s) && *s != '-') return 0;
    return 1;
}

int names_instance_type_ok(const char *s)
{
    if (!s || strlen(s) >= 64) return 0;
    s = instance_type_ec2_name(s);
    const char *dot = strchr(s, '.');
    if (!dot || strchr(dot + 1, '.') || !word_ok(s, dot)) return 0;
    const char *size = dot + 1, *end = size + strlen(size);
    if (size == end) return 0;
    for (const char *p = size; p < end; p++)
        if (!lower(*p) && !digit(*p) && *p != '-') return 0;
    return 1;
}

int names_region_ok(const char *s)
{
    if (!s || strlen(s) >= 32) return 0;
    size_t words = 0;
    const char *p = s;
    while (lower(*p)) { /* word- word- ... */
        while (lower(*p)) p++;
        if (*p != '-') return 0;
        p++;
        words++;
    }
    if (words < 2 || !digit(*p)) return 0;
    while (digit(*p)) p++;
    return *p == '\0';
}

const char *names_instance_type_problem(const char *s)
{
    return names_instance_type_ok(s) ? NULL : "is not an instance type like g5.xlarge or ml.g5.xlarge";
}

const char *names_region_problem(const char *s) { return names_region_ok(s) ? NULL : "is not a region like us-east-1"; }

int names_zone_ok(const char *s)
{
    if (!s || strlen(s) >= 32 || !lower(s[0])) return 0;
    int words = 1, digits = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '-') {
            if (p[1] == '\0' || p[1] == '-') return 0;
            words++;
        } else if (digit(*p)) {
            digits++;
        } else if (!lower(*p)) {
            return 0;
        }
    }
    return words >= 2 && digits > 0;
}

int names_zone_in_region(const char *zone, const char *region)
{
    size_t n = region ? strlen(region) : 0;
    if (!names_zone_ok(zone) || !names_region_ok(region) || strncmp(zone, region, n)) return 0;
    const char *rest = zone + n;
    return (lower(rest[0]) && rest[1] == '\0') || (rest[0] == '-' && rest[1]);
}

int names_region_of_zone(const char *zone, char *out, size_t len)
{
    /* Up to the first word that starts with a digit, keeping that word's digits:
     * us-east-1a -> us-east-1, us-west-2-lax-1a -> us-west-2. */
    if (!names_zone_ok(zone)) return -1;
    const char *p = zone;
    while (*p && !digit(*p)) p++;
    if (p == zone || p[-1] != '-') return -1;
    while (digit(*p)) p++;
    size_t n = (size_t)(p - zone);
    if (n >= len) return -1;
    memcpy(out, zone, n);
    out[n] = '\0';
    return names_zone_in_region(zone, out) ? 0 : -1;
}

int names_zone_is_id(const char *zone)
{
    if (!names_zone_ok(zone)) return 0;
    for (const char *p = zone; *p && *p != '-'; p++)
        if (digit(*p)) return 1;
    return 0;
}

const char *names_zone_problem(const char *s)
{
    return names_zone_ok(s) ? NULL : "is not an availability zone like us-east-1a or a zone ID like use1-az2";
}

/* ---- instance sizes and the order of type names ---------------------------------------------- */

/* What a size says, for validation and ordering: CLASS 0 for the named sizes (RANK: nano 0 ...
 * large 4), 1 for xlarge and <N>xlarge (RANK: N), 2 for metal (0) and metal-<N>xl (N); -1 when it
 * is none of these. */
typedef struct size_order {
    int cls;
    unsigned long rank;
} size_order;

/* Digits from S up to END, no leading zero, at most 6 of them; 0 when they are not that. */
static unsigned long small_number(const char *s, const char *end)
{
    if (s >= end || end - s > 6 || *s == '0') return 0;
    unsigned long n = 0;
    for (; s < end; s++) {
        if (!digit(*s)) return 0;
        n = n * 10 + (unsigned long)(*s - '0');
    }
    return n;
}

static size_order size_of(const char *size)
{
    static const char *const named[] = {"nano", "micro", "small", "medium", "large"};
    size_order o = {-1, 0};
    size_t len = strlen(size);
    for (unsigned long i = 0; i < sizeof named / sizeof *named; i++)
        if (!strcmp(size, named[i])) return (size_order){0, i};
    if (!strcmp(size, "xlarge")) return (size_order){1, 1};
    if (len > 6 && !strcmp(size + len - 6, "xlarge") && (o.rank = small_number(size, size + len - 6)) >= 2)
        return (size_order){1, o.rank};
    if (!strcmp(size, "metal")) return (size_order){2, 0};
    if (len > 8 && !strncmp(size, "metal-", 6) && !strcmp(size + len - 2, "xl") &&
        (o.rank = small_number(size + 6, size + len - 2)) >= 1)
        return (size_order){2, o.rank};
    return (size_order){-1, 0};
}

int names_instance_size_ok(const char *type)
{
    const char *dot = type ? strrchr(type, '.') : NULL;
    return dot && size_of(dot + 1).cls >= 0;
}

const char *names_instance_type_size_problem(const char *type)
{
    const char *p = names_instance_type_problem(type);
    if (p) return p;
    return names_instance_size_ok(type) ? NULL
                                        : "names no instance size AWS uses (nano, micro, small, medium, large, "
                                          "xlarge, 2xlarge ... 48xlarge, metal, metal-24xl ...)";
}

/* Natural order of two strings of lengths LA and LB: runs of digits compare as numbers. */
static int natural_cmp(const char *a, size_t la, const char *b, size_t lb)
{
    size_t i = 0, j = 0;
    while (i < la && j < lb) {
        if (digit(a[i]) && digit(b[j])) {
            while (i < la && a[i] == '0') i++; /* leading zeros do not make a number bigger */
            while (j < lb && b[j] == '0') j++;
            size_t si = i, sj = j;
            while (i < la && digit(a[i])) i++;
            while (j < lb && digit(b[j])) j++;
            if (i - si != j - sj) return i - si < j - sj ? -1 : 1;
            int c = strncmp(a + si, b + sj, i - si);
            if (c) return c;
            continue;
        }
        if (a[i] != b[j]) return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
        i++, j++;
    }
    return (i < la) - (j < lb);
}

int names_instance_type_cmp(const char *a, const char *b)
{
    const char *da = strrchr(a, '.'), *db = strrchr(b, '.');
    size_t fa = da ? (size_t)(da - a) : strlen(a), fb = db ? (size_t)(db - b) : strlen(b);
    int c = natural_cmp(a, fa, b, fb);
    if (c) return c;
    size_order sa = size_of(da ? da + 1 : ""), sb = size_of(db ? db + 1 : "");
    int ca = sa.cls < 0 ? 3 : sa.cls, cb = sb.cls < 0 ? 3 : sb.cls; /* unknown sizes last */
    if (ca != cb) return ca < cb ? -1 : 1;
    if (ca != 3 && sa.rank != sb.rank) return sa.rank < sb.rank ? -1 : 1;
    return strcmp(a, b);
}

int names_instance_type_qsort_cmp(const void *a, const void *b)
{
    return names_instance_type_cmp(*(char *const *)a, *(char *const *)b);
}
