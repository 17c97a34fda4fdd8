/* rank/versus.c: --versus CONFIG, the row every spot row's break-even is against.  CONFIG is
 * "N x TYPE MARKET" as rank labels a row (with its "(variant)" where configurations of one type
 * differ by backend, device or attention), or "[Nx]TYPE[:MARKET]" as sweep takes a candidate
 * (market: on-demand when none); the configuration must be one of those ranked and the market
 * one a break-even can be against (not spot). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "instbench/rank.h"

int rank_resolve_versus(const char *versus, const rank_config *c, size_t n, rank_options *o, ib_error *err)
{
    if (!versus) return 0;
    /* a label as the table prints it, variant and all ("1 x vm on-demand (cuda, unfused attention)") */
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < RANK_N_MARKETS; k++) {
            char l[256];
            rank_config_label(&c[i], (rank_market)k, l, sizeof l);
            if (k == RANK_SPOT || !(o->markets & (1 << k)) || strcasecmp(l, versus)) continue;
            o->versus_config = (long)i;
            o->versus_market = (rank_market)k;
            return 0;
        }
    char name[96] = "", market[32] = "on-demand";
    long nodes = 1;
    const char *v = versus;
    char *end;
    long x = v[0] >= '0' && v[0] <= '9' ? strtol(v, &end, 10) : 0; /* a count in digits ("+4 x" is no count) */
    if (!x) end = (char *)v;
    if (end != v && x > 0) { /* "4 x g5.xlarge ..." or "4xg5.xlarge..." */
        while (*end == ' ') end++;
        if (*end == 'x' || *end == 'X') nodes = x, v = end + 1;
        while (*v == ' ') v++;
    }
    size_t tl = strcspn(v, " :");
    if (!tl || tl >= sizeof name)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--versus '%s' names no configuration (e.g. '1 x g5.12xlarge "
                            "on-demand')",
                            versus);
    memcpy(name, v, tl);
    const char *m = v + tl;
    while (*m == ' ' || *m == ':') m++;
    if (*m) snprintf(market, sizeof market, "%s", m);
    int mk = -1;
    for (int k = 0; k < RANK_N_MARKETS; k++)
        if (!strcasecmp(market, rank_market_name((rank_market)k))) mk = k;
    if (mk < 0 || mk == RANK_SPOT)
        return ib_error_set(
            err, IB_EXIT_USAGE, "--versus '%s': %s", versus,
            mk == RANK_SPOT ? "a spot row cannot be what spot breaks even against (name an on-demand, capacity-block "
                              "or savings-plan row)"
                            : "the market must be on-demand, capacity-block or savings-plan");
    if (!(o->markets & (1 << mk)))
        return ib_error_set(err, IB_EXIT_USAGE, "--versus '%s': the %s market is not ranked (--market)", versus,
                            market);
    long hit = -1;
    size_t hits = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].nodes == nodes && !strcasecmp(rank_config_name(&c[i]), name)) hit = (long)i, hits++;
    if (hits == 1) {
        o->versus_config = hit;
        o->versus_market = (rank_market)mk;
        return 0;
    }
    char list[640] = "";
    for (size_t i = 0, u = 0; i < n && u < sizeof list - 80; i++) {
        char l[256];
        rank_config_label(&c[i], RANK_ON_DEMAND, l, sizeof l);
        u += (size_t)snprintf(list + u, sizeof list - u, "%s'%s'", i ? ", " : "", l);
    }
    return ib_error_set(err, IB_EXIT_USAGE, "--versus '%s' %s: %s", versus,
                        hits ? "matches several configurations (they differ in variant: name one as labelled)"
                             : "is none of the configurations ranked",
                        list);
}
