/* util_dates: the one date parser (util_parse_iso8601) refuses what the calendar does not have
 * instead of rolling it over (timegm makes 2026-02-30 the 2nd of March), and reads the forms the
 * flags, state files and AWS answers use.  Expected epoch seconds come from Python's
 * calendar.timegm, worked out once by hand; leap years by the Gregorian rule. */
#include <string.h>
#include <time.h>

#include "check.h"
#include "instbench/util.h"

int main(void)
{
    static const struct {
        const char *s;
        long long want;
    } ok[] = {
        {"2026-12-01", 1796083200},
        {"2026-12-01T00:00:00Z", 1796083200},
        {"2026-12-01T00:00:00", 1796083200},
        {"2026-12-01T01:30:00+01:30", 1796083200},
        {"2026-11-30T23:00:00-01:00", 1796083200},
        {"2026-11-22T00:10:45.123Z", 1795306245},
        {"2024-02-29T23:59:59Z", 1709251199},
        {"2000-02-29T00:00:00Z", 951782400},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        time_t t = 0;
        CHECK(util_parse_iso8601(ok[i].s, &t) == 0 && (long long)t == ok[i].want, "%s: %lld, want %lld", ok[i].s,
              (long long)t, ok[i].want);
    }
    static const char *const bad[] = {
        "2026-11-31",
        "2026-02-30",
        "2026-02-29" /* 2026 is no leap year */,
        "1900-02-29" /* nor is 1900 */,
        "2026-02-30T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-13-01",
        "2026-00-10",
        "2026-01-00",
        "2026-01-32",
        "2026-12-01T24:00:00Z",
        "2026-12-01T23:60:00Z",
        "2026-12-01T23:59:60Z",
        "2026-1-01",
        "2026-01-1",
        " 2026-12-01",
        "2026-12-01 ",
        "+2026-12-01",
        "2026-12-01T",
        "2026-12-01T00:00",
        "2026-12-01T00:00:00.Z",
        "2026-12-01T00:00:00+25:00",
        "2026-12-01T00:00:00+01:60",
        "2026-12-01T00:00:00Zjunk",
        "2026-12-01x",
        "",
        "2026-11-30T23:00:00-0100",
        "0565-11-21T23:00:00.000Z" /* a fuzzer's find: before the epoch */,
        "1969-12-31T23:59:59Z",
        "1970-01-01T00:30:00+01:00",
        "0000-01-01",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        time_t t = 0;
        CHECK(util_parse_iso8601(bad[i], &t) != 0, "'%s' must be refused (read as %lld)", bad[i], (long long)t);
    }
    /* the writer's four-digit year is what the reader takes back (strftime's %Y is not) */
    static const char *const round[] = {"1970-01-01T00:00:00Z", "2026-11-22T00:10:45Z", "9999-12-31T23:59:59Z"};
    for (size_t i = 0; i < sizeof round / sizeof *round; i++) {
        time_t t = 0;
        char back[32];
        CHECK(util_parse_iso8601(round[i], &t) == 0, "%s must parse", round[i]);
        util_utc_iso8601(t, back);
        CHECK(strcmp(back, round[i]) == 0, "%s came back as %s", round[i], back);
    }
    CHECK(util_days_in_month(2024, 2) == 29 && util_days_in_month(2100, 2) == 28 && util_days_in_month(2000, 2) == 29 &&
              util_days_in_month(2026, 4) == 30 && util_days_in_month(2026, 13) == 0,
          "days in month");
    return failures != 0;
}
