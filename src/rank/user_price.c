/* rank/user_price.c: prices the user gives, for machines AWS cannot price (own hardware, another
 * cloud) and to override AWS's (a negotiated discount).
 *
 * Two ways in, in order of precedence:
 *   1. rank --price NAME[:MARKET]=USD: per node-hour, NAME an instance type or, for results
 *      without one, the hostname they recorded; plain NAME=USD is the on-demand price (the fixed
 *      hourly cost of a machine you own or rent is what on-demand means: no interruptions).
 *   2. measure --hourly-cost USD, recorded in the result for the run's market.
 * Both beat live, cached, snapshot and file prices.  A user price is never turned into the other
 * market's: a market the user did not price keeps AWS's price, or has none. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "instbench/rank.h"

/* Names are instance types (g5.xlarge, ml.g5.xlarge) or hostnames: letters, digits, '.', '-', '_',
 * and UTF-8 beyond ASCII (a hostname as its result recorded it, "büro"). */
static int name_ok(const char *s, size_t n) { return util_utf8_name(s, n); }

int rank_parse_user_price(const char *spec, rank_user_price *out, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    const char *eq = strchr(spec, '=');
    if (!eq) {
        snprintf(why, len, "--price needs NAME=USD (e.g. --price g5.xlarge=0.80 or --price myhost=0.35), got '%.40s'",
                 spec);
        return -1;
    }
    const char *colon = memchr(spec, ':', (size_t)(eq - spec));
    size_t name_len = (size_t)((colon ? colon : eq) - spec);
    if (name_len == 0) {
        snprintf(why, len, "--price '%.40s' names no machine: NAME=USD, NAME an instance type or a hostname", spec);
        return -1;
    }
    if (name_len >= sizeof out->name || !name_ok(spec, name_len)) {
        snprintf(why, len, "--price: '%.*s' is not an instance type or hostname (letters, digits, '.', '-', '_')",
                 (int)(name_len < 40 ? name_len : 40), spec);
        return -1;
    }
    memcpy(out->name, spec, name_len);
    out->name[name_len] = '\0';
    out->market = RANK_ON_DEMAND;
    if (colon) {
        size_t ml = (size_t)(eq - colon - 1);
        if (ml == 9 && !strncmp(colon + 1, "on-demand", 9)) out->market = RANK_ON_DEMAND;
        else if (ml == 4 && !strncmp(colon + 1, "spot", 4)) out->market = RANK_SPOT;
        else {
            snprintf(why, len, "--price %s: the market after ':' must be on-demand or spot, not '%.*s'", out->name,
                     (int)(ml < 20 ? ml : 20), colon + 1);
            return -1;
        }
    }
    if (util_parse_double(eq + 1, RANK_MIN_USD_PER_HOUR, RANK_MAX_USD_PER_HOUR, &out->usd_per_hour) != 0) {
        snprintf(why, len,
                 "--price %s: '%.40s' is not a price in US dollars per node-hour (a number from 0.000001 to 100000)",
                 out->name, eq + 1);
        return -1;
    }
    return 0;
}

const char *rank_config_name(const rank_config *c) { return c->instance_type[0] ? c->instance_type : c->host; }

int rank_user_price_for(const rank_config *c, rank_market m, const rank_options *o, double *usd, time_t *as_of)
{
    const char *name = rank_config_name(c);
    if (m != RANK_ON_DEMAND && m != RANK_SPOT) return 0; /* blocks and plans: AWS's quotes only */
    /* Hostnames are case-insensitive; instance types are lower case anyway. */
    for (size_t i = 0; name[0] && i < o->n_user_prices; i++)
        if (o->user_prices[i].market == m && !strcasecmp(o->user_prices[i].name, name)) {
            *usd = o->user_prices[i].usd_per_hour;
            *as_of = 0;
            return 1;
        }
    if (!isnan(c->recorded_usd_per_hour[m])) {
        *usd = c->recorded_usd_per_hour[m];
        *as_of = c->recorded_as_of[m];
        return 1;
    }
    return 0;
}
