/* aws_values: the numbers and times of an AWS answer, held to the shapes AWS writes them in.
 *
 * Whatever an endpoint answers (a proxy, an AWS_ENDPOINT_URL override, a corrupted page) is hostile
 * input: strtod would read "0x10" as 16, " 100" as 100 and "1e-300" as a fee, and strptime plus
 * timegm would turn 2026-02-30 into 2026-03-02.  AWS writes prices, fees and rates as plain
 * decimals ("21345.12", "0.4410000000") and times as ISO 8601 UTC, so anything else is refused
 * rather than read some other way.  Every AWS answer parser that reads a number or a time uses
 * these (Capacity Block offerings, Savings Plan rates, the price list, spot prices). */
#ifndef INSTBENCH_AWS_VALUES_H
#define INSTBENCH_AWS_VALUES_H

#include <time.h>

/* S is digits, optionally a point and at least one more digit, and nothing else (no sign, no
 * exponent, no hex, no whitespace, no inf/nan), and its value lies in [MIN, MAX].  0 with *OUT set,
 * -1 otherwise (*OUT untouched). */
int util_aws_decimal(const char *s, double min, double max, double *out);

/* S is YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM) naming a day and a time that exist (month
 * 1..12, the month's days with leap years, hour 0..23, minute and second 0..59).  0 with *OUT the
 * UTC time, -1 otherwise. */
int util_aws_time(const char *s, time_t *out);

#endif
