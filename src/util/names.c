/* util/names.c: syntax of AWS instance types, regions and availability zones (instbench/names.h). */
#include "instbench/names.h"

#include <string.h>

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
    if (!strncmp(s, "ml.", 3)) s += 3;
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
    while (lower(*p)) {   /* word- word- ... */
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

const char *names_region_problem(const char *s)
{
    return names_region_ok(s) ? NULL : "is not a region like us-east-1";
}

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
