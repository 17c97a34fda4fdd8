/* aws_values: strict decimals and calendar-valid times for AWS answers (include/instbench/aws_values.h). */
#include "instbench/aws_values.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/util.h"

/* Longer than any price AWS writes ("0.0000000000" is 12); a longer run of digits is no price. */
#define DECIMAL_MAX_CHARS 40

static int digit(char c) { return c >= '0' && c <= '9'; }

int util_aws_decimal(const char *s, double min, double max, double *out)
{
    if (!s || !digit(s[0])) return -1;
    size_t i = 0;
    while (digit(s[i])) i++;
    if (s[i] == '.') {
        if (!digit(s[++i])) return -1;
        while (digit(s[i])) i++;
    }
    if (s[i] != '\0' || i > DECIMAL_MAX_CHARS) return -1;
    /* only digits and one point remain, which strtod reads as the decimal it is */
    double v = strtod(s, NULL);
    if (!isfinite(v) || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static int field(const char *s, int n, int lo, int hi, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!digit(s[i])) return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

int util_aws_time(const char *s, time_t *out)
{
    int y, mo, d, h, mi, se, oh, om;
    if (!s || strlen(s) < 20) return -1;
    /* YYYY-MM-DDTHH:MM:SS */
    if (field(s, 4, 1970, 9999, &y) || s[4] != '-' || field(s + 5, 2, 1, 12, &mo) || s[7] != '-' ||
        field(s + 8, 2, 1, 31, &d) || d > days_in_month(y, mo) || s[10] != 'T' || field(s + 11, 2, 0, 23, &h) ||
        s[13] != ':' || field(s + 14, 2, 0, 59, &mi) || s[16] != ':' || field(s + 17, 2, 0, 59, &se))
        return -1;
    const char *p = s + 19;
    if (*p == '.') {
        if (!digit(*++p)) return -1;
        while (digit(*p)) p++;
    }
    if (p[0] == 'Z' && p[1] == '\0') {
        /* nothing more */
    } else if ((p[0] == '+' || p[0] == '-') && strlen(p) == 6 && !field(p + 1, 2, 0, 23, &oh) && p[3] == ':' &&
               !field(p + 4, 2, 0, 59, &om)) {
        /* an offset: the parser below applies it */
    } else {
        return -1;
    }
    /* the form is checked; util_parse_iso8601 turns it into seconds (fraction dropped, offset applied) */
    return util_parse_iso8601(s, out);
}
