/* rank/score.c: configuration x market x price -> one rank_row with the money figures.
 *
 * Throughput does not depend on the market a run happened to use, so every configuration gets a
 * row per requested market.  SageMaker ml.* types have no spot market of their own (managed spot
 * training bills differently), so they get on-demand rows only.  A machine without an instance
 * type (off EC2, named by its hostname) has no AWS market at all: it gets rows only for the markets
 * the user priced.  A row without a usable price is kept with the reason, never dropped silently.
 * A user price (user_price.c) beats every AWS price, for its market only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/instance_type.h"
#include "instbench/rank.h"
#include "rank/internal.h"

void rank_options_init(rank_options *o)
{
    memset(o, 0, sizeof *o);
    o->markets = RANK_MARKETS_BOTH;
    o->spot_mode = RANK_SPOT_LOWEST;
    o->target_samples = 0;
    o->deadline_hours = NAN;
    o->budget_usd = NAN;
    o->max_hourly_usd = NAN;
    o->sort = RANK_SORT_SAMPLES_PER_DOLLAR;
    o->now = time(NULL);
    o->spot.rate_per_node_hour = NAN;
    o->spot.checkpoint_s = RANK_SPOT_CHECKPOINT_S_UNKNOWN;
    o->spot.checkpoint_source = "default";
    o->spot.restart_s = RANK_SPOT_RESTART_S;
    o->spot.interval_s = NAN;
    o->versus_config = -1;
}

const char *rank_market_name(rank_market m)
{
    static const char *const names[RANK_N_MARKETS] = {"on-demand", "spot", "capacity-block", "savings-plan"};
    return m >= 0 && m < RANK_N_MARKETS ? names[m] : "on-demand";
}

const char *const rank_sort_names[] = {"samples-per-dollar", "throughput", "cost", "time", NULL};

const char *rank_sort_key_name(rank_sort_key k) { return rank_sort_names[k]; }

void rank_config_label(const rank_config *c, rank_market m, char *out, size_t len)
{
    const char *name = rank_config_name(c);
    snprintf(out, len, "%ld x %s %s%s%s%s", c->nodes, name[0] ? name : "(unknown type)", rank_market_name(m),
             c->variant[0] ? " (" : "", c->variant, c->variant[0] ? ")" : "");
}

void rank_accelerator_label(const rank_config *c, char *out, size_t len)
{
    if (c->accelerator_count > 0) {
        long total = c->nodes * c->accelerator_count;
        const char *name = c->accelerator[0] ? c->accelerator : "GPU";
        if (c->nodes > 1) snprintf(out, len, "%ld x %s (%ld nodes x %ld)", total, name, c->nodes, c->accelerator_count);
        else snprintf(out, len, "%ld x %s", total, name);
    } else if (c->vcpus > 0) {
        snprintf(out, len, "%ld x %ld vCPU", c->nodes, c->vcpus);
    } else {
        snprintf(out, len, "%ld x CPU", c->nodes);
    }
}

/* A usable $/h: positive and within what any instance could cost.  The floor keeps samples per
 * dollar finite for any accepted throughput (<= 1e12 samples/s). */
static int price_ok(double p) { return isfinite(p) && p >= RANK_MIN_USD_PER_HOUR && p <= RANK_MAX_USD_PER_HOUR; }

/* Zone I of PR counts for a lowest or median spot price: a usable price, in an Availability Zone
 * unless Local and Wavelength Zones were asked for (they need an opt-in per account). */
static int spot_zone_counts(const price_record *pr, size_t i, const rank_options *o)
{
    return price_ok(pr->spot[i].usd_per_hour) && prices_zone_counts(pr->spot[i].az, o->include_local_zones);
}

/* Spot price per node by MODE; fills the AZ (or "median of N AZs") and, when one AZ is priced,
 * that AZ's placement score (-1 when unknown or several AZs).  0 ok, -1 with a reason. */
static int pick_spot(const price_record *pr, const rank_options *o, double *price, char *az, size_t azlen,
                     int *az_score, char *reason, size_t rlen)
{
    *az_score = -1;
    size_t valid = 0, counted = 0;
    for (size_t i = 0; i < pr->n_spot; i++) valid += price_ok(pr->spot[i].usd_per_hour);
    for (size_t i = 0; i < pr->n_spot; i++) counted += spot_zone_counts(pr, i, o);
    if (valid == 0) {
        snprintf(reason, rlen, pr->n_spot ? "no valid spot price for %s in %s" : "no spot price for %s in %s",
                 pr->instance_type, pr->region);
        return -1;
    }
    if (o->spot_mode == RANK_SPOT_AZ) {
        /* the zone as the user named it, or the same zone in the form these prices use */
        for (size_t i = 0; i < pr->n_spot; i++)
            if (!strcmp(pr->spot[i].az, o->az) || (o->az_alt[0] && !strcmp(pr->spot[i].az, o->az_alt))) {
                if (!price_ok(pr->spot[i].usd_per_hour)) break;
                *price = pr->spot[i].usd_per_hour;
                *az_score = pr->spot[i].placement_score;
                snprintf(az, azlen, "%s", pr->spot[i].az);
                return 0;
            }
        snprintf(reason, rlen, "no spot price for %s in %s%s%s%s", pr->instance_type, o->az, o->az_alt[0] ? " (" : "",
                 o->az_alt, o->az_alt[0] ? ")" : "");
        return -1;
    }
    if (counted == 0) {
        snprintf(reason, rlen,
                 "spot prices for %s in %s only in Local or Wavelength Zones (--include-local-zones "
                 "counts them)",
                 pr->instance_type, pr->region);
        return -1;
    }
    if (o->spot_mode == RANK_SPOT_MEDIAN) {
        double *v = malloc(counted * sizeof *v);
        if (!v) {
            snprintf(reason, rlen, "out of memory");
            return -1;
        }
        size_t k = 0;
        for (size_t i = 0; i < pr->n_spot; i++)
            if (spot_zone_counts(pr, i, o)) v[k++] = pr->spot[i].usd_per_hour;
        *price = rank_median(v, k);
        free(v);
        snprintf(az, azlen, "median of %zu AZs", k);
        return 0;
    }
    size_t best = (size_t)-1;
    for (size_t i = 0; i < pr->n_spot; i++) {
        if (!spot_zone_counts(pr, i, o)) continue;
        /* Ties go to the alphabetically first AZ so output is stable. */
        if (best == (size_t)-1 || pr->spot[i].usd_per_hour < pr->spot[best].usd_per_hour ||
            (pr->spot[i].usd_per_hour == pr->spot[best].usd_per_hour && strcmp(pr->spot[i].az, pr->spot[best].az) < 0))
            best = i;
    }
    *price = pr->spot[best].usd_per_hour;
    *az_score = pr->spot[best].placement_score;
    snprintf(az, azlen, "%s", pr->spot[best].az);
    return 0;
}

/* Why a machine without an instance type has no price, and how to give it one. */
static void unnamed_reason(const rank_config *c, rank_market m, char *why, size_t wl)
{
    if (c->host[0])
        snprintf(why, wl,
                 "not an EC2 instance type (no IMDS, no --instance-type), so AWS cannot price it: "
                 "give its price per hour with --price %s%s=USD (or measure --hourly-cost USD)",
                 c->host, m == RANK_SPOT ? ":spot" : "");
    else
        snprintf(why, wl,
                 "instance type and hostname unknown: record its price per hour with measure "
                 "--hourly-cost USD");
}

/* An AWS price for the row's market; 0 ok (P, source, as-of and spot details set), -1 with WHY. */
static int aws_price(const rank_config *c, const price_set *prices, const rank_options *o, rank_row *row, double *p)
{
    char *why = row->unpriced_reason;
    size_t wl = sizeof row->unpriced_reason;
    if (!c->region[0]) {
        snprintf(why, wl, "region of %s unknown (pass --region, or give a price: --price %s=USD)", c->instance_type,
                 c->instance_type);
        return -1;
    }
    const price_record *pr = prices ? prices_find(prices, c->instance_type, c->region) : NULL;
    if (!pr) {
        snprintf(why, wl, "no price for %s in %s (give one: --price %s=USD)", c->instance_type, c->region,
                 c->instance_type);
        return -1;
    }
    if (row->market == RANK_ON_DEMAND) {
        *p = pr->on_demand_usd_per_hour;
        if (isnan(*p)) {
            snprintf(why, wl, "no on-demand price for %s in %s", c->instance_type, c->region);
            return -1;
        }
        if (!price_ok(*p)) {
            snprintf(why, wl, "invalid on-demand price %.6g for %s in %s", *p, c->instance_type, c->region);
            return -1;
        }
        snprintf(row->price_source, sizeof row->price_source, "%s", pr->on_demand_source);
        row->price_as_of = pr->on_demand_as_of;
    } else {
        int az_score;
        if (pick_spot(pr, o, p, row->az, sizeof row->az, &az_score, why, wl) != 0) return -1;
        snprintf(row->price_source, sizeof row->price_source, "%s", pr->spot_source);
        row->price_as_of = pr->spot_as_of;
        /* Interruption frequency and placement score describe the spot market only. */
        row->interruption_bucket =
            pr->interruption_bucket >= 0 && pr->interruption_bucket <= 4 ? pr->interruption_bucket : -1;
        /* The priced AZ's own placement score when known, else the region's.  Those ask for one
         * instance: they answer a 1-node row only (rank_placement_plan asks for the others). */
        int score = az_score >= 1 && az_score <= 10 ? az_score : pr->placement_score;
        row->placement_score = score >= 1 && score <= 10 && c->nodes == 1 ? score : -1;
        if (row->placement_score > 0) {
            row->placement_capacity = row->placement_types = 1;
            if (az_score >= 1 && az_score <= 10)
                snprintf(row->placement_zone, sizeof row->placement_zone, "%s", row->az);
        }
    }
    return 0;
}

/* Why no quote of a market bought ahead reached row C: the gap rank_load_quotes left for its
 * region, else the one for every region, else the caller's QUOTES_MISSING; NULL when it was asked. */
static const char *quote_gap(const rank_config *c, const rank_options *o, rank_market m)
{
    const char *any = NULL;
    size_t n = m == RANK_CAPACITY_BLOCK ? o->n_blocks : o->n_plans;
    for (size_t i = 0; i < n; i++) {
        const char *why = m == RANK_CAPACITY_BLOCK ? o->blocks[i].why : o->plans[i].why;
        const char *region = m == RANK_CAPACITY_BLOCK ? o->blocks[i].region : o->plans[i].region;
        if (!why[0]) continue;
        if (!strcmp(region, c->region)) return why;
        if (!region[0] && !any) any = why;
    }
    if (any) return any;
    return o->quotes_missing && o->quotes_missing[0] ? o->quotes_missing : NULL;
}

/* The hours C's configuration trains to reach the target (NAN without one): a row's TIME. */
static double target_hours(const rank_config *c, const rank_options *o)
{
    return o->target_samples > 0 ? o->target_samples / c->samples_per_second / 3600.0 : NAN;
}

static double block_wait_hours(const rank_block_quote *q, time_t now)
{
    return q->start > now ? difftime(q->start, now) / 3600 : 0;
}

/* A capacity-block row: the cheapest offering per hour for exactly this many nodes of this type in
 * this region (ties: the earliest start).  The block is paid whole: the target takes as many
 * blocks as its hours need, each paid in full, and the wait until it starts is shown apart.
 * With --deadline (and a target), the cheapest of the blocks that let the job finish in time: the
 * cheapest of all may start weeks after one a little dearer, and the row was then filtered out
 * (filter.c) while an offering met the deadline.  When none does, the cheapest, which the filter
 * removes.  Prices vary by start date, so this is a real choice, not a tie. */
static int block_price(const rank_config *c, const rank_options *o, rank_row *row)
{
    const double need = target_hours(c, o);
    const int judge = !isnan(o->deadline_hours) && isfinite(need);
    const rank_block_quote *best = NULL;
    int best_fits = 0;
    for (size_t i = 0; i < o->n_blocks; i++) {
        const rank_block_quote *q = &o->blocks[i];
        if (q->why[0] || strcmp(q->instance_type, c->instance_type) || strcmp(q->region, c->region) ||
            q->nodes != c->nodes || !(q->hours > 0) || !price_ok(q->fee_usd / q->hours / (double)c->nodes))
            continue;
        int fits = !judge || rank_within_limit(block_wait_hours(q, o->now) + need, o->deadline_hours);
        double a = q->fee_usd / q->hours, b = best ? best->fee_usd / best->hours : 0;
        if (!best || fits > best_fits || (fits == best_fits && (a < b || (a == b && q->start < best->start))))
            best = q, best_fits = fits;
    }
    if (!best) {
        const char *gap = quote_gap(c, o, RANK_CAPACITY_BLOCK);
        if (c->nodes > MARKETS_BLOCK_MAX_INSTANCES)
            snprintf(row->unpriced_reason, sizeof row->unpriced_reason,
                     "a Capacity Block holds 1 to %d instances, not "
                     "%ld",
                     MARKETS_BLOCK_MAX_INSTANCES, c->nodes);
        else if (gap) snprintf(row->unpriced_reason, sizeof row->unpriced_reason, "%s", gap);
        else
            snprintf(row->unpriced_reason, sizeof row->unpriced_reason,
                     "no Capacity Block of %.0f days is offered now "
                     "for %ld x %s in %s",
                     o->block_hours / 24, c->nodes, c->instance_type, c->region);
        return -1;
    }
    row->block_hours = best->hours;
    row->block_fee_usd = best->fee_usd;
    row->wait_hours = block_wait_hours(best, o->now);
    row->usd_per_hour = best->fee_usd / best->hours;
    row->price_per_node = row->usd_per_hour / (double)c->nodes;
    snprintf(row->az, sizeof row->az, "%s", best->az);
    snprintf(row->price_source, sizeof row->price_source, "live");
    row->price_as_of = o->now;
    return 0;
}

/* A savings-plan row: the plan's rate per node-hour; the commitment is owed for the whole term. */
static int plan_price(const rank_config *c, const price_set *prices, const rank_options *o, rank_row *row)
{
    const rank_plan_quote *q = NULL;
    for (size_t i = 0; i < o->n_plans && !q; i++)
        if (!o->plans[i].why[0] && !strcmp(o->plans[i].instance_type, c->instance_type) &&
            !strcmp(o->plans[i].region, c->region) && price_ok(o->plans[i].usd_per_hour))
            q = &o->plans[i];
    if (!q) {
        const char *gap = quote_gap(c, o, RANK_SAVINGS_PLAN);
        if (gap) snprintf(row->unpriced_reason, sizeof row->unpriced_reason, "%s", gap);
        else
            snprintf(row->unpriced_reason, sizeof row->unpriced_reason, "AWS has no %s Savings Plan rate for %s in %s",
                     o->plan_label ? o->plan_label : "", c->instance_type, c->region);
        return -1;
    }
    row->price_per_node = q->usd_per_hour;
    row->usd_per_hour = (double)c->nodes * q->usd_per_hour;
    row->plan_commitment_usd_per_hour = row->usd_per_hour;
    row->plan_term_usd = row->usd_per_hour * o->plan_term_hours;
    /* against the on-demand price the on-demand row would pay: the user's, else AWS's */
    double od = NAN;
    time_t od_as_of;
    if (!rank_user_price_for(c, RANK_ON_DEMAND, o, &od, &od_as_of)) {
        const price_record *pr = prices ? prices_find(prices, c->instance_type, c->region) : NULL;
        od = pr ? pr->on_demand_usd_per_hour : NAN;
    }
    row->plan_break_even_on_demand = price_ok(od) ? markets_break_even_utilisation(q->usd_per_hour, od) : NAN;
    snprintf(row->price_source, sizeof row->price_source, "live");
    row->price_as_of = o->now;
    return 0;
}

/* What reaching the target costs on a plan: the commitment is owed for every hour of each term the
 * target starts, trained or not (rank.h states it); the hours the target leaves idle count at the
 * share the rest of the fleet does not use (--plan-utilisation). */
static double plan_cost_to_target(double hours, double usd_per_hour, const rank_options *o)
{
    double terms = o->plan_term_hours > 0 ? rank_whole_units(hours, o->plan_term_hours) : 0;
    double idle = terms * o->plan_term_hours - hours;
    double unused = 1 - (isfinite(o->plan_utilisation) ? o->plan_utilisation : 0);
    return hours * usd_per_hour + (idle > 0 ? idle : 0) * usd_per_hour * unused;
}

static void score_row(const rank_config *c, const price_set *prices, const rank_options *o, rank_row *row)
{
    row->priced = 0;
    row->interruption_bucket = -1;
    row->placement_score = -1;
    row->price_per_node = row->usd_per_hour = row->samples_per_dollar = NAN;
    row->hours_to_target = row->cost_to_target = NAN;
    row->block_hours = row->block_fee_usd = row->blocks_to_target = row->wait_hours = NAN;
    row->plan_commitment_usd_per_hour = row->plan_term_usd = NAN;
    row->plan_break_even_on_demand = row->plan_break_even_spot = NAN;
    row->samples_per_second = c->samples_per_second;
    double p;
    if (row->market == RANK_CAPACITY_BLOCK || row->market == RANK_SAVINGS_PLAN) {
        if (!c->region[0]) {
            snprintf(row->unpriced_reason, sizeof row->unpriced_reason, "region of %s unknown (pass --region)",
                     c->instance_type);
            return;
        }
        if ((row->market == RANK_CAPACITY_BLOCK ? block_price(c, o, row) : plan_price(c, prices, o, row)) != 0) return;
        row->priced = 1;
        row->unpriced_reason[0] = '\0';
        row->samples_per_dollar = c->samples_per_second * 3600.0 / row->usd_per_hour;
        if (o->target_samples > 0) {
            row->hours_to_target = target_hours(c, o);
            if (row->market == RANK_CAPACITY_BLOCK) {
                /* every block is paid whole, however little of the last one the target uses */
                row->blocks_to_target = rank_whole_units(row->hours_to_target, row->block_hours);
                row->cost_to_target = row->blocks_to_target * row->block_fee_usd;
            } else {
                row->cost_to_target = plan_cost_to_target(row->hours_to_target, row->usd_per_hour, o);
            }
        }
        return;
    }
    if (rank_user_price_for(c, row->market, o, &p, &row->price_as_of)) {
        /* The user's own figure: no AZ, and AWS's interruption and placement data describe
         * AWS's spot market, not whatever the user priced. */
        snprintf(row->price_source, sizeof row->price_source, "user");
    } else if (!c->instance_type[0]) {
        unnamed_reason(c, row->market, row->unpriced_reason, sizeof row->unpriced_reason);
        return;
    } else if (aws_price(c, prices, o, row, &p) != 0) {
        return;
    }
    row->priced = 1;
    row->unpriced_reason[0] = '\0';
    row->price_per_node = p;
    row->usd_per_hour = (double)c->nodes * p;
    row->samples_per_dollar = c->samples_per_second * 3600.0 / row->usd_per_hour;
    if (o->target_samples > 0) {
        row->hours_to_target = target_hours(c, o);
        row->cost_to_target = row->hours_to_target * row->usd_per_hour;
    }
}

static int has_user_price(const rank_config *c, rank_market m, const rank_options *o)
{
    double p;
    time_t t;
    return rank_user_price_for(c, m, o, &p, &t);
}

int rank_row_ranks_by_target_cost(const rank_row *row, const rank_options *o)
{
    return row->priced && o->target_samples > 0 &&
           (row->market == RANK_CAPACITY_BLOCK || row->market == RANK_SAVINGS_PLAN) && row->cost_to_target > 0 &&
           isfinite(row->cost_to_target);
}

/* After the spot model: a block's cost to target stays whole blocks, and a plan's break-even against
 * spot uses the same configuration's spot row at its risk-adjusted efficiency: spot costs
 * price / efficiency per useful node-hour, so the plan pays once the nodes train more than
 * rate x efficiency / spot price of the term's hours. */
static void rank_markets_fill(rank_row *rows, size_t n, const rank_options *o)
{
    for (size_t i = 0; i < n; i++) {
        rank_row *row = &rows[i];
        /* With a target, a row bought ahead ranks by what the job gets for what it costs: a plan
         * at a cheap rate whose idle commitment makes the target cost 100x spot's ranked first
         * by its rate alone, a block by its fee as if every hour of the last block trained. */
        if (rank_row_ranks_by_target_cost(row, o))
            row->rank_samples_per_dollar = o->target_samples / row->cost_to_target;
        if (!row->priced || row->market != RANK_SAVINGS_PLAN) continue;
        for (size_t k = 0; k < n; k++) {
            const rank_row *s = &rows[k];
            if (s->config != row->config || s->market != RANK_SPOT || !s->priced) continue;
            double eff = s->risk.valid ? s->risk.efficiency : 1.0;
            row->plan_break_even_spot = markets_break_even_utilisation(row->price_per_node, s->price_per_node / eff);
        }
    }
}

int rank_score(const rank_config *configs, size_t n_configs, const price_set *prices, const rank_options *o,
               rank_row **rows, size_t *n_rows, ib_error *err)
{
    *rows = NULL;
    *n_rows = 0;
    rank_row *r = calloc(n_configs * RANK_N_MARKETS + 1, sizeof *r);
    if (!r) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory scoring configurations");
    size_t n = 0;
    for (size_t i = 0; i < n_configs; i++) {
        for (int m = 0; m < RANK_N_MARKETS; m++) {
            if (!(o->markets & (1 << m))) continue;
            if (m >= RANK_CAPACITY_BLOCK) {
                /* bought ahead from AWS: neither exists for a machine off EC2, and no block is sold
                 * for SageMaker's ml.* types (a SageMaker plan is `prices --market savings-plan`'s) */
                const rank_config *c = &configs[i];
                if (!c->instance_type[0] || instance_type_is_sagemaker(c->instance_type)) continue;
                rank_row *row = &r[n++];
                row->config = i;
                row->market = (rank_market)m;
                score_row(c, prices, o, row);
                continue;
            }
            /* SageMaker managed spot training has no published hourly price (AWS reports the
             * saving after the job): ranked only at the user's --price NAME:spot=USD.  Without
             * one, with both markets the on-demand row stands for the type; asked for spot alone,
             * the row says why it is missing instead of being dropped. */
            int sagemaker_spot = m == RANK_SPOT && instance_type_is_sagemaker(configs[i].instance_type) &&
                                 !has_user_price(&configs[i], RANK_SPOT, o);
            if (sagemaker_spot && (o->markets & RANK_MARKETS_ON_DEMAND)) continue;
            const rank_config *c = &configs[i];
            /* Off EC2 there is no AWS market: a machine without an instance type has only the
             * markets the user priced.  A market it lacks is left out when the other is ranked
             * too and is priced (or, unpriced, is on-demand: the one plain --price NAME=USD
             * fills, so the machine is listed once); otherwise it is listed with how to price it. */
            int off_aws_unpriced = !c->instance_type[0] && !has_user_price(c, (rank_market)m, o);
            int other_market_only = off_aws_unpriced && has_user_price(c, (rank_market)!m, o);
            if (off_aws_unpriced && (o->markets & (1 << !m)) && (other_market_only || m == RANK_SPOT)) continue;
            rank_row *row = &r[n++];
            row->config = i;
            row->market = (rank_market)m;
            score_row(c, prices, o, row);
            if (other_market_only) {
                const char *name = rank_config_name(c), *mine = rank_market_name((rank_market)m);
                snprintf(row->unpriced_reason, sizeof row->unpriced_reason,
                         "%s has a user price for %s only (give one for %s: --price %s:%s=USD)",
                         name[0] ? name : "this machine", rank_market_name((rank_market)!m), mine,
                         name[0] ? name : "NAME", mine);
            }
            if (sagemaker_spot) {
                row->priced = 0;
                row->interruption_bucket = row->placement_score = -1;
                snprintf(
                    row->unpriced_reason, sizeof row->unpriced_reason,
                    "SageMaker managed spot for %s is not published per hour (give your rate: --price %s:spot=USD)",
                    configs[i].instance_type, configs[i].instance_type);
            }
        }
    }
    rank_spot_risk_fill(r, n, configs, o);
    rank_markets_fill(r, n, o);
    *rows = r;
    *n_rows = n;
    return 0;
}
