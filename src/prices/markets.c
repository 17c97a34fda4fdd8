/* markets: the arithmetic of the two markets bought ahead, Capacity Blocks for ML and Savings
 * Plans: which blocks AWS sells, what a block or a plan costs per hour, and when a plan pays. */
#include "instbench/prices.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int markets_block_duration_ok(int hours)
{
    if (hours <= 0 || hours % 24) return 0;
    int days = hours / 24;
    return days <= 14 || (days % 7 == 0 && days <= 182);
}

const char *markets_block_duration_problem(const char *v, int *hours)
{
    static char why[256];
    char *end;
    /* digits first: strtol would also take " 3d" and "+3d", which no other flag takes */
    long n = v[0] >= '0' && v[0] <= '9' ? strtol(v, &end, 10) : 0;
    int per = 1;
    if (n == 0) end = (char *)v;
    if (end == v || n <= 0 || n > 182 * 24 || (*end && strcmp(end, "h") && strcmp(end, "d")))
        return "is not a duration like 3d, 14d or 72h (days, or hours with h or no unit)";
    if (!strcmp(end, "d")) per = 24;
    long h = n * per;
    if (h > 182 * 24) return "is longer than the longest block AWS sells (182d)";
    if (markets_block_duration_ok((int)h)) {
        *hours = (int)h;
        return NULL;
    }
    /* the nearest durations sold on either side */
    long below = 0, above = 0;
    for (long d = 1; d <= 182; d++) {
        if (!markets_block_duration_ok((int)d * 24)) continue;
        if (d * 24 < h) below = d;
        if (d * 24 > h && !above) above = d;
    }
    char near[64];
    if (below && above) snprintf(near, sizeof near, "%ldd or %ldd", below, above);
    else snprintf(near, sizeof near, "%ldd", below ? below : above);
    snprintf(why, sizeof why,
             "is %ld hours, not a duration AWS sells (1 to 14 days in 1-day steps, then "
             "7-day steps up to 182 days): %s",
             h, near);
    return why;
}

static void day_of(time_t t, char out[32]) { util_utc_iso8601(t, out); }

int markets_block_window_check(time_t now, time_t start_after, time_t end_before, int hours, char *why, size_t len)
{
    char a[32], b[32];
    /* a few minutes of clock difference are no reason to refuse "now" */
    if (start_after && start_after < now - 600) {
        day_of(start_after, a);
        snprintf(why, len, "--start-after %s is in the past", a);
        return -1;
    }
    if (start_after && start_after > now + MARKETS_BLOCK_MAX_LEAD_S) {
        day_of(start_after, a);
        day_of(now + MARKETS_BLOCK_MAX_LEAD_S, b);
        snprintf(why, len, "--start-after %s is more than 8 weeks ahead: AWS sells blocks that start by %s", a, b);
        return -1;
    }
    if (!end_before) return 0;
    time_t from = start_after > now ? start_after : now;
    if (end_before <= from) {
        day_of(end_before, a);
        snprintf(why, len, "--end-before %s is not after %s", a, start_after ? "--start-after" : "now");
        return -1;
    }
    if (end_before - from < (time_t)hours * 3600) {
        day_of(end_before, a);
        snprintf(why, len, "--end-before %s leaves less than the block's %d days after %s", a, hours / 24,
                 start_after ? "--start-after" : "now");
        return -1;
    }
    if (end_before > now + MARKETS_BLOCK_MAX_LEAD_S + (time_t)hours * 3600) {
        day_of(end_before, a);
        day_of(now + MARKETS_BLOCK_MAX_LEAD_S + (time_t)hours * 3600, b);
        snprintf(why, len, "--end-before %s is past 8 weeks and the block's %d days: no block AWS sells ends after %s",
                 a, hours / 24, b);
        return -1;
    }
    return 0;
}

double markets_block_usd_per_instance_hour(double fee, int instances, double hours)
{
    return instances > 0 && hours > 0 ? fee / (instances * hours) : NAN;
}

double markets_block_usd_per_accelerator_hour(double fee, int instances, int accelerators, double hours)
{
    return accelerators > 0 ? markets_block_usd_per_instance_hour(fee, instances, hours) / accelerators : NAN;
}

void markets_plan_money_of(double rate, long long duration_s, markets_payment pay, int nodes, markets_plan_money *out)
{
    double share = pay == MARKETS_PAY_ALL ? 1.0 : pay == MARKETS_PAY_PARTIAL ? 0.5 : 0.0;
    out->term_hours = duration_s / 3600.0;
    out->commitment_usd_per_hour = rate * nodes;
    out->upfront_usd = share * out->commitment_usd_per_hour * out->term_hours;
    out->recurring_usd_per_hour = (1.0 - share) * out->commitment_usd_per_hour;
    out->amortised_usd_per_hour = out->upfront_usd / out->term_hours + out->recurring_usd_per_hour;
    out->term_usd = out->upfront_usd + out->recurring_usd_per_hour * out->term_hours;
}

double markets_break_even_utilisation(double rate, double alt_usd_per_hour)
{
    return isfinite(alt_usd_per_hour) && alt_usd_per_hour > 0 && isfinite(rate) ? rate / alt_usd_per_hour : NAN;
}
