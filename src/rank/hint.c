/* rank/hint.c: when no configuration could be priced, the one line saying how to get a priced
 * row (the report above it gives each configuration's own reason). */
#include <stdio.h>
#include <time.h>

#include "instbench/rank.h"

void rank_nothing_priced_hint(const char *source, const rank_options *o, const rank_config *c, size_t n, size_t n_rows,
                              char *out, size_t len)
{
    const rank_config *known = NULL;
    if (n_rows == 0 && !(o->markets & (RANK_MARKETS_ON_DEMAND | RANK_MARKETS_SPOT)) && n) {
        /* Only the markets bought ahead, and no configuration is an EC2 type they are sold for
         * (rank_score lists no row for a machine off EC2 or a SageMaker ml.* type there). */
        const rank_config *first = &c[0];
        const char *name = rank_config_name(first);
        int same = 1; /* every configuration the same kind as the first: off EC2, or SageMaker's */
        for (size_t i = 1; i < n; i++) same &= !c[i].instance_type[0] == !first->instance_type[0];
        const char *others = n == 1 ? ""
                             : same ? " (like every configuration here)"
                                    : " (every other configuration here is SageMaker's or off EC2)";
        if (first->instance_type[0])
            snprintf(out, len,
                     "no configuration to rank: Capacity Blocks and Savings Plans are sold for EC2 instance types, "
                     "and %s%s is SageMaker's (its plans: instbench prices --market savings-plan): rank it "
                     "--market on-demand or spot",
                     name, others);
        else
            snprintf(out, len,
                     "no configuration to rank: Capacity Blocks and Savings Plans are sold for EC2 instance types, "
                     "and %s%s was measured off EC2: rank it on-demand at its price per hour, rank --price %s=USD "
                     "--market on-demand",
                     name[0] ? name : "this machine", others, name[0] ? name : "NAME");
        return;
    }
    if (n_rows == 0) { /* every configuration yields a row on the markets it is sold on */
        snprintf(out, len, "no configuration to rank: check the filters (--instance-types, --market)");
        return;
    }
    if (o->spot_mode == RANK_SPOT_AZ && o->markets == RANK_MARKETS_SPOT) {
        snprintf(out, len,
                 "no configuration could be priced: no spot price in %s%s%s%s for any of them; rank "
                 "without --az (the lowest spot price across the region's zones), or --market both",
                 o->az, o->az_alt[0] ? " (" : "", o->az_alt, o->az_alt[0] ? ")" : "");
        return;
    }
    /* One piece of advice, the one that works for the first configuration it applies to (the same
     * as the report's reason for that row): a machine off EC2 is priced by its hostname, a type
     * without a region by --region. */
    const rank_config *off_ec2 = NULL, *no_region = NULL;
    for (size_t i = 0; i < n; i++) {
        if (c[i].instance_type[0] && c[i].region[0] && !known) known = &c[i];
        if (!c[i].instance_type[0] && c[i].host[0] && !off_ec2) off_ec2 = &c[i];
        if (c[i].instance_type[0] && !c[i].region[0] && !no_region) no_region = &c[i];
    }
    if (!known && off_ec2 && !(o->markets & RANK_MARKETS_ON_DEMAND)) {
        /* its rows are spot rows: a plain --price NAME=USD is on-demand's and would not price them */
        double usd;
        time_t as_of;
        if (rank_user_price_for(off_ec2, RANK_ON_DEMAND, o, &usd, &as_of))
            snprintf(out, len,
                     "no configuration could be priced: %s has a price for on-demand only, and it is not an EC2 "
                     "instance type (measured off EC2), so AWS has no spot price for it: give its spot price, "
                     "rank --price %s:spot=USD, or rank it on-demand (--market on-demand)",
                     off_ec2->host, off_ec2->host);
        else
            snprintf(out, len,
                     "no configuration could be priced: %s is not an EC2 instance type (measured off EC2), so AWS "
                     "cannot price it: give its spot price per hour, rank --price %s:spot=USD (or record it: "
                     "measure --market spot --hourly-cost USD)",
                     off_ec2->host, off_ec2->host);
        return;
    }
    if (!known && off_ec2) {
        snprintf(out, len,
                 "no configuration could be priced: %s is not an EC2 instance type (measured off EC2), so "
                 "AWS cannot price it: give its price per hour, rank --price %s=USD (or record it: measure "
                 "--hourly-cost USD)",
                 off_ec2->host, off_ec2->host);
        return;
    }
    if (!known && no_region) {
        snprintf(out, len,
                 "no configuration could be priced: no result says which region %s ran in: rank with "
                 "--region R (e.g. --region us-east-1), or give a price, --price %s=USD",
                 no_region->instance_type, no_region->instance_type);
        return;
    }
    if (!known) {
        snprintf(out, len,
                 "no configuration could be priced: no result names its instance type or hostname: record "
                 "each machine's price per hour when measuring (measure --hourly-cost USD)");
        return;
    }
    if (!(o->markets & (RANK_MARKETS_ON_DEMAND | RANK_MARKETS_SPOT))) {
        /* a prices file cannot help: the markets bought ahead are quoted by live AWS only */
        const int b = (o->markets & RANK_MARKETS_BLOCK) != 0, p = (o->markets & RANK_MARKETS_PLAN) != 0;
        snprintf(out, len,
                 "no configuration could be priced: %s%s%s come from live AWS only and none was found here (each row "
                 "says why): rank again with AWS reachable and credentials, or --market all for on-demand and spot "
                 "beside them",
                 b ? "Capacity Block offerings" : "", b && p ? " and " : "", p ? "Savings Plan rates" : "");
        return;
    }
    snprintf(out, len,
             "no configuration could be priced (e.g. %s in %s, with --source %s): get prices with "
             "`instbench prices --instance-types %s --region %s -o prices.json` (live AWS needs "
             "credentials) and pass --source prices.json, or pick a --region or --market that has them",
             known->instance_type, known->region, source ? source : "auto", known->instance_type, known->region);
}
