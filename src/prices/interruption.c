/* interruption: what the Spot Instance Advisor's interruption bucket means as a rate, the one
 * mapping `prices --nodes` and rank's spot-risk model share (docs/design.md, "Spot risk").
 *
 * The Advisor publishes, per type and region, the share of spot capacity reclaimed over the
 * trailing month as a bucket: <5%, 5-10%, 10-15%, 15-20%, >20%.  Assumed: the bucket stands for
 * its midpoint p (25% for >20%, which has no upper end), and a node is reclaimed as a Poisson
 * process that spares it over the 720-hour month with probability 1 - p, so its rate is
 * lambda = -ln(1 - p) / 720 per node-hour.  N nodes reclaimed independently stop a data-parallel
 * job at N lambda, and it runs T hours uninterrupted with probability e^(-N lambda T). */
#include "instbench/prices.h"

#include <math.h>

const double prices_interruption_share[5] = {0.025, 0.075, 0.125, 0.175, 0.25};

double prices_interruption_rate(int bucket)
{
    if (bucket < 0 || bucket > 4) return NAN;
    return -log1p(-prices_interruption_share[bucket]) / PRICES_ADVISOR_WINDOW_H;
}

double prices_job_interruption_rate(const price_record *r)
{
    return prices_nodes(r) * prices_interruption_rate(r->interruption_bucket);
}

double prices_p_uninterrupted(const price_record *r, double hours)
{
    return exp(-prices_job_interruption_rate(r) * hours);
}
