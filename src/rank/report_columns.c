/* rank/report_columns.c: the one set of column names of rank's table, CSV and JSON.
 *
 * Each column reads one value off a row (a number, text, a flag or a list; NONE when unknown or
 * not applicable), which the CSV writes plain, the JSON typed (null for NONE) and the table, where
 * the column has a `show`, in the people's style (money, durations, grouping).  `--columns` names
 * these keys in every format; the key is the CSV header and the JSON row key, so a jq filter, a
 * pandas column and a spreadsheet header all read the same word. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "instbench/output.h"
#include "instbench/rank.h"
#include "rank/internal.h"

#define CFG(r, row) (&(r)->configs[(row)->config])

static void num(rank_value *v, double x)
{
    if (isfinite(x)) v->kind = RANK_V_NUMBER, v->number = x;
}
static void text(rank_value *v, const char *s)
{
    if (s && s[0]) v->kind = RANK_V_TEXT, v->text = s;
}
static void flag(rank_value *v, int f) { v->kind = RANK_V_BOOL, v->flag = f != 0; }
static int is_spot(const rank_row *row) { return row->market == RANK_SPOT; }

/* ---- what each column reads ---- */

static void get_rank(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->rank);
}
static void get_configuration(const rank_report *r, const rank_row *row, rank_value *v)
{
    rank_config_label(CFG(r, row), row->market, v->buf, sizeof v->buf);
    text(v, v->buf);
}
static void get_instance_type(const rank_report *r, const rank_row *row, rank_value *v)
{
    text(v, CFG(r, row)->instance_type);
}
static void get_host(const rank_report *r, const rank_row *row, rank_value *v) { text(v, CFG(r, row)->host); }
static void get_nodes(const rank_report *r, const rank_row *row, rank_value *v) { num(v, (double)CFG(r, row)->nodes); }
static void get_measured_nodes(const rank_report *r, const rank_row *row, rank_value *v)
{
    num(v, (double)CFG(r, row)->measured_nodes);
}
static void get_extrapolated(const rank_report *r, const rank_row *row, rank_value *v)
{
    flag(v, CFG(r, row)->extrapolated);
}
static void get_market(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    text(v, rank_market_name(row->market));
}
static void get_region(const rank_report *r, const rank_row *row, rank_value *v) { text(v, CFG(r, row)->region); }
static void get_model(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)row;
    text(v, r->group->model);
}
static void get_precision(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)row;
    text(v, r->group->precision);
}
static void get_batch(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)row;
    if (r->group->batch_per_device > 0) num(v, (double)r->group->batch_per_device);
}
static void get_data(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)row;
    text(v, r->group->data);
}
static void get_fingerprint(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)row;
    text(v, r->group->fingerprint);
}
static void get_backend(const rank_report *r, const rank_row *row, rank_value *v) { text(v, CFG(r, row)->backend); }
static void get_attention(const rank_report *r, const rank_row *row, rank_value *v) { text(v, CFG(r, row)->attention); }
static void get_accelerator(const rank_report *r, const rank_row *row, rank_value *v)
{
    text(v, CFG(r, row)->accelerator);
}
static void get_acc_per_node(const rank_report *r, const rank_row *row, rank_value *v)
{
    num(v, (double)CFG(r, row)->accelerator_count);
}
static void get_acc_total(const rank_report *r, const rank_row *row, rank_value *v)
{
    num(v, (double)(CFG(r, row)->accelerator_count * CFG(r, row)->nodes));
}
static void get_accelerators(const rank_report *r, const rank_row *row, rank_value *v)
{
    rank_accelerator_label(CFG(r, row), v->buf, sizeof v->buf);
    text(v, v->buf);
}
static void get_usd_per_hour(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->usd_per_hour);
}
static void get_usd_per_node(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->price_per_node);
}
static void get_sps(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    num(v, row->samples_per_second);
}
static void get_spd(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->samples_per_dollar);
}
static void get_target(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)row;
    if (r->opts->target_samples > 0) num(v, r->opts->target_samples);
}
static void get_hours(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->hours_to_target);
}
static void get_cost(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->cost_to_target);
}
static void get_runs(const rank_report *r, const rank_row *row, rank_value *v) { num(v, (double)CFG(r, row)->runs); }
static void get_sps_min(const rank_report *r, const rank_row *row, rank_value *v) { num(v, CFG(r, row)->sps_min); }
static void get_sps_max(const rank_report *r, const rank_row *row, rank_value *v) { num(v, CFG(r, row)->sps_max); }
static void get_cv(const rank_report *r, const rank_row *row, rank_value *v) { num(v, CFG(r, row)->cv_max); }
static void get_warnings(const rank_report *r, const rank_row *row, rank_value *v)
{
    v->kind = RANK_V_LIST;
    for (unsigned b = 0; b < RANK_WARN_N; b++)
        if (CFG(r, row)->warnings & (1u << b)) v->items[v->n_items++] = rank_warning_codes[b];
}
static void get_identity_mismatch(const rank_report *r, const rank_row *row, rank_value *v)
{
    flag(v, CFG(r, row)->identity_mismatch);
}
static void get_spot_az(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row)) text(v, row->az);
}
/* The kind of zone priced (a Local or Wavelength Zone only with --include-local-zones): EC2's
 * ZoneType words; null for a median or a user's price, which name no zone. */
static void get_zone_type(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row) && row->az[0] && strncmp(row->az, "median", 6) && strcmp(row->price_source, "user"))
        text(v, prices_zone_kind_name(prices_zone_kind_of(row->az)));
}
/* "use1-atl2-az1 (LZ)": a zone that needs an opt-in is marked where it is shown. */
static void show_spot_az(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    if (!is_spot(row) || !row->az[0]) {
        snprintf(out, len, "-");
        return;
    }
    snprintf(out, len, "%s%s", row->az, prices_zone_marker(row->az));
}
static void get_bucket(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row) && row->interruption_bucket >= 0) num(v, row->interruption_bucket);
}
static void get_interruption(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row) && row->interruption_bucket >= 0) text(v, prices_interruption_label(row->interruption_bucket));
}
static void get_placement(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row) && row->placement_score > 0) num(v, row->placement_score);
}
static void get_network(const rank_report *r, const rank_row *row, rank_value *v)
{
    if (CFG(r, row)->network[0]) text(v, CFG(r, row)->network);
}
static void get_socket_on_efa(const rank_report *r, const rank_row *row, rank_value *v)
{
    flag(v, CFG(r, row)->socket_on_efa);
}
/* nccl-tests' bus bandwidth of the run's allreduce (multi-node rows measured on all their nodes). */
static void get_busbw(const rank_report *r, const rank_row *row, rank_value *v)
{
    if (!isnan(CFG(r, row)->busbw_gbps)) num(v, CFG(r, row)->busbw_gbps);
}
static void show_busbw(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    double bw = CFG(r, row)->busbw_gbps;
    if (isnan(bw)) snprintf(out, len, "-");
    else snprintf(out, len, "%.1f GB/s", bw);
}
/* The step's share of the GEMM rate its machine reached in situ on the model's shapes (issue 37):
 * low where the run took a slow path, whatever the datasheet says. */
static void get_gemm_share(const rank_report *r, const rank_row *row, rank_value *v)
{
    if (!isnan(CFG(r, row)->gemm_share)) num(v, CFG(r, row)->gemm_share);
}
static void show_gemm_share(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    double g = CFG(r, row)->gemm_share;
    if (isnan(g)) snprintf(out, len, "-");
    else snprintf(out, len, "%.0f%%", 100 * g);
}
/* What a placement score answers: TargetCapacity (instances), how many types, which zone. */
static void get_placement_capacity(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row) && row->placement_score > 0) num(v, row->placement_capacity);
}
static void get_placement_types(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row) && row->placement_score > 0) num(v, row->placement_types);
}
static void get_placement_zone(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (is_spot(row) && row->placement_score > 0 && row->placement_zone[0]) text(v, row->placement_zone);
}
/* Spot risk (spot_risk.c): null on on-demand rows and on spot rows the model does not cover
 * (--spot-risk off, no Advisor bucket and no --interruption-rate). */
static const rank_spot_risk *risk_of(const rank_row *row) { return row->priced && row->risk.valid ? &row->risk : NULL; }
#define RISK(row) risk_of(row)
#define RISK_NUM(name, field)                                                  \
    static void name(const rank_report *r, const rank_row *row, rank_value *v) \
    {                                                                          \
        (void)r;                                                               \
        if (RISK(row)) num(v, RISK(row)->field);                               \
    }
RISK_NUM(get_spot_rate, rate_per_node_hour)
RISK_NUM(get_job_rate, job_rate_per_hour)
RISK_NUM(get_checkpoint_s, checkpoint_s)
RISK_NUM(get_restart_s, restart_s)
RISK_NUM(get_interval_s, interval_s)
RISK_NUM(get_efficiency, efficiency)
RISK_NUM(get_eff_sps, samples_per_second)
/* spot: the risk-adjusted figure; a row bought ahead, with a target: samples per dollar of what the
 * target costs there (what it ranks by, score.c) */
static void get_eff_spd(const rank_report *r, const rank_row *row, rank_value *v)
{
    if (RISK(row)) num(v, RISK(row)->samples_per_dollar);
    else if (rank_row_ranks_by_target_cost(row, r->opts)) num(v, row->rank_samples_per_dollar);
}
RISK_NUM(get_exp_hours, expected_hours)
RISK_NUM(get_p90_hours, p90_hours)
RISK_NUM(get_exp_cost, expected_cost)
RISK_NUM(get_p90_cost, p90_cost)
RISK_NUM(get_p_none, p_no_interruption)
static void get_rate_source(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (RISK(row)) text(v, RISK(row)->rate_source);
}
static void get_checkpoint_source(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (RISK(row)) text(v, RISK(row)->checkpoint_source);
}
/* null: "never" (still ahead at 1 per node-hour) or no on-demand row to break even against */
static void get_breakeven(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (RISK(row) && RISK(row)->breakeven_against >= 0) num(v, RISK(row)->breakeven_rate);
}
static void get_breakeven_against(const rank_report *r, const rank_row *row, rank_value *v)
{
    if (!RISK(row) || RISK(row)->breakeven_against < 0) return;
    rank_config_label(&r->configs[RISK(row)->breakeven_against], RISK(row)->breakeven_against_market, v->buf,
                      sizeof v->buf);
    text(v, v->buf);
}
static void get_price_source(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) text(v, row->price_source);
}
static void get_price_as_of(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced && row->price_as_of > 0) v->kind = RANK_V_TIME, v->number = (double)row->price_as_of;
}
static void get_pareto(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) flag(v, row->pareto);
}
static void get_unpriced(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (!row->priced) text(v, row->unpriced_reason);
}

/* The markets bought ahead: NONE on the other markets' rows. */
static void get_block_hours(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->block_hours);
}
static void get_block_fee(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->block_fee_usd);
}
static void get_blocks(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->blocks_to_target);
}
static void get_wait(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->wait_hours);
}
static void get_commitment(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->plan_commitment_usd_per_hour);
}
static void get_term_usd(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    if (row->priced) num(v, row->plan_term_usd);
}
/* A plan's break-even share: above 1 (the rate above the alternative's) the plan never pays, and
 * says so in every format rather than as a share above 100%. */
static void plan_share(const rank_row *row, double x, rank_value *v)
{
    if (!row->priced) return;
    if (isfinite(x) && x > 1) text(v, "never");
    else num(v, x);
}
static void get_plan_be_od(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    plan_share(row, row->plan_break_even_on_demand, v);
}
static void get_plan_be_spot(const rank_report *r, const rank_row *row, rank_value *v)
{
    (void)r;
    plan_share(row, row->plan_break_even_spot, v);
}

/* ---- the table's text where it differs from the plain value ---- */

int rank_config_noisy(const rank_config *c)
{
    return c->warnings || (c->runs > 1 && c->sps_max - c->sps_min > RANK_SPREAD_LIMIT * c->samples_per_second);
}

/* "4 x g5.xlarge spot ^!~": the marks the legend under the table explains. */
static void show_configuration(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    const rank_config *c = CFG(r, row);
    char label[256];
    rank_config_label(c, row->market, label, sizeof label);
    int any = c->extrapolated || c->identity_mismatch || rank_config_noisy(c) || c->socket_on_efa;
    snprintf(out, len, "%s%s%s%s%s%s", label, any ? " " : "", c->extrapolated ? "^" : "",
             c->identity_mismatch ? "!" : "", rank_config_noisy(c) ? "~" : "", c->socket_on_efa ? "#" : "");
}
static void show_rank(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    snprintf(out, len, "%d%s", row->rank, r->opts->pareto_only || !row->pareto ? "" : "*");
}
static void show_usd(double usd, char *out, size_t len) { output_fmt_usd(out, len, usd); }
static void show_usd_per_hour(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    show_usd(row->usd_per_hour, out, len);
}
static void show_usd_per_node(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    show_usd(row->price_per_node, out, len);
}
static void show_cost(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    show_usd(r->opts->target_samples > 0 ? row->cost_to_target : NAN, out, len);
}
void rank_fmt_samples_per_second(double sps, char *out, size_t len)
{
    output_fmt_grouped(out, len, sps, sps < 100 ? 2 : 1);
}
static void show_sps(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    rank_fmt_samples_per_second(row->samples_per_second, out, len);
}
static void show_spd(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    output_fmt_grouped(out, len, row->samples_per_dollar, 0);
}
static void show_hours(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    output_fmt_duration(out, len, r->opts->target_samples > 0 ? row->hours_to_target * 3600 : NAN);
}
static void show_runs(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    const rank_config *c = CFG(r, row);
    if (c->runs > 1)
        snprintf(out, len, "%zu (%.1f%%)", c->runs, 100.0 * (c->sps_max - c->sps_min) / c->samples_per_second);
    else snprintf(out, len, "%zu", c->runs);
}
static void show_cv(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    double cv = CFG(r, row)->cv_max;
    if (isnan(cv)) snprintf(out, len, "-");
    else snprintf(out, len, "%.1f%%", 100 * cv);
}
static void show_placement(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    if (is_spot(row) && row->placement_score > 0) snprintf(out, len, "%d/10", row->placement_score);
    else snprintf(out, len, "%s", is_spot(row) ? "?" : "-");
}
static void show_interruption(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    const char *l = row->interruption_bucket >= 0 ? prices_interruption_label(row->interruption_bucket) : NULL;
    snprintf(out, len, "%s", !is_spot(row) ? "-" : l ? l : "?");
}
/* The table compares every row on the figure it is ranked by: on-demand rows (never interrupted)
 * and spot rows ranked raw show their SAMPLES/$ again. */
static void show_eff_spd(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    output_fmt_grouped(out, len, row->rank_samples_per_dollar, 0);
}
/* "1 per 310 h": a node reclaimed more often than once every H hours puts the row behind the
 * best on-demand row; "never" ahead at any rate, "behind" at every rate. */
static void show_breakeven(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    const rank_spot_risk *k = RISK(row);
    if (!k || k->breakeven_against < 0) snprintf(out, len, "-");
    else if (isnan(k->breakeven_rate)) snprintf(out, len, "never");
    else if (k->breakeven_rate <= 0) snprintf(out, len, "behind");
    else {
        char h[48];
        rank_fmt_every_hours(k->breakeven_rate, h, sizeof h);
        snprintf(out, len, "1 per %s h", h);
    }
}

void rank_fmt_every_hours(double rate, char *out, size_t len)
{
    output_fmt_grouped(out, len, 1 / rate, 1 / rate < 10 ? 1 : 0);
}
static void show_p90_hours(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    output_fmt_duration(out, len, RISK(row) ? RISK(row)->p90_hours * 3600 : NAN);
}
static void show_p_none(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    if (RISK(row) && isfinite(RISK(row)->p_no_interruption))
        output_fmt_probability(out, len, RISK(row)->p_no_interruption);
    else snprintf(out, len, "-");
}

/* "2 x 3d" (blocks to the target, each of the block's length), "1 x 3d" without a target. */
static void show_blocks(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    if (!row->priced || row->market != RANK_CAPACITY_BLOCK) {
        snprintf(out, len, "-");
        return;
    }
    char d[32];
    output_fmt_duration(d, sizeof d, row->block_hours * 3600);
    snprintf(out, len, "%.0f x %s", isfinite(row->blocks_to_target) ? row->blocks_to_target : 1, d);
}
static void show_wait(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    if (!row->priced || row->market != RANK_CAPACITY_BLOCK) snprintf(out, len, "-");
    else if (row->wait_hours <= 0) snprintf(out, len, "now");
    else output_fmt_duration(out, len, row->wait_hours * 3600);
}
static void show_share(double x, char *out, size_t len)
{
    if (isfinite(x) && x > 1) snprintf(out, len, "never");
    else if (isfinite(x)) snprintf(out, len, "%.0f%%", 100 * x);
    else snprintf(out, len, "-");
}
static void show_plan_be_od(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    show_share(row->plan_break_even_on_demand, out, len);
}
static void show_plan_be_spot(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    show_share(row->plan_break_even_spot, out, len);
}
static void show_commitment(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    (void)r;
    show_usd(row->plan_commitment_usd_per_hour, out, len);
}

/* "snapshot 4d 2h": the price's source and how old it is. */
static void show_price_source(const rank_report *r, const rank_row *row, char *out, size_t len)
{
    const char *src = row->price_source[0] ? row->price_source : "?";
    if (row->price_as_of <= 0) {
        snprintf(out, len, "%s", src);
        return;
    }
    double s = difftime(r->opts->now, row->price_as_of);
    char age[48];
    output_fmt_duration(age, sizeof age, s < 0 ? 0 : s);
    snprintf(out, len, "%s %s", src, age);
}

/* Priorities: a narrow terminal keeps rank, configuration, samples/s, samples/$ and $/h longest
 * (output_fit_set); columns outside the default table show only when --columns asks. */
enum { L = 0, R = 1, K = OUTPUT_KEEP };
/* a table, laid out by hand: */
/* clang-format off */
const rank_column rank_columns[] = {
    {"rank", "RANK", R, K, get_rank, show_rank},
    {"configuration", "CONFIGURATION", L, K, get_configuration, show_configuration},
    {"instance_type", "INSTANCE TYPE", L, 3, get_instance_type, NULL},
    {"host", "HOST", L, 3, get_host, NULL},
    {"nodes", "NODES", R, 3, get_nodes, NULL},
    {"measured_nodes", "MEASURED NODES", R, 3, get_measured_nodes, NULL},
    {"extrapolated", "EXTRAPOLATED", L, 3, get_extrapolated, NULL},
    {"market", "MARKET", L, 3, get_market, NULL},
    {"region", "REGION", L, 3, get_region, NULL},
    {"model", "MODEL", L, 3, get_model, NULL},
    {"precision", "PRECISION", L, 3, get_precision, NULL},
    {"batch_size_per_device", "BATCH/DEVICE", R, 3, get_batch, NULL},
    {"data", "DATA", L, 3, get_data, NULL},
    {"backend", "BACKEND", L, 3, get_backend, NULL},
    {"attention", "ATTENTION", L, 3, get_attention, NULL},
    {"fingerprint", "WORKLOAD FINGERPRINT", L, 1, get_fingerprint, NULL},
    {"accelerators", "ACCELERATORS", L, 2, get_accelerators, NULL},
    {"accelerator", "ACCELERATOR", L, 2, get_accelerator, NULL},
    {"accelerators_per_node", "ACCELERATORS/NODE", R, 2, get_acc_per_node, NULL},
    {"accelerators_total", "ACCELERATORS TOTAL", R, 2, get_acc_total, NULL},
    {"usd_per_hour", "$/h", R, 9, get_usd_per_hour, show_usd_per_hour},
    {"usd_per_hour_per_node", "$/h PER NODE", R, 8, get_usd_per_node, show_usd_per_node},
    {"samples_per_second", "SAMPLES/s", R, K, get_sps, show_sps},   /* the measurement: kept as long as what is derived from it */
    {"samples_per_dollar", "SAMPLES/$", R, K, get_spd, show_spd},
    {"effective_samples_per_dollar", "EFF. SAMPLES/$", R, K, get_eff_spd, show_eff_spd},
    {"target_samples", "TARGET SAMPLES", R, 2, get_target, NULL},
    {"hours_to_target", "TIME", R, 6, get_hours, show_hours},
    {"cost_to_target_usd", "COST", R, 8, get_cost, show_cost},
    {"runs", "RUNS (SPREAD)", R, 2, get_runs, show_runs},
    {"samples_per_second_min", "SAMPLES/s MIN", R, 2, get_sps_min, NULL},
    {"samples_per_second_max", "SAMPLES/s MAX", R, 2, get_sps_max, NULL},
    {"cv", "WORST CV", R, 2, get_cv, show_cv},
    {"busbw_gbps", "BUSBW", R, 2, get_busbw, show_busbw},
    {"gemm_share", "GEMM SHARE", R, 2, get_gemm_share, show_gemm_share},
    {"network", "NETWORK", L, 2, get_network, NULL},
    {"socket_on_efa", "SOCKETS ON EFA TYPE", L, 1, get_socket_on_efa, NULL},
    {"warnings", "WARNINGS", L, 2, get_warnings, NULL},
    {"identity_mismatch", "IDENTITY MISMATCH", L, 2, get_identity_mismatch, NULL},
    {"spot_az", "SPOT AZ", L, 4, get_spot_az, show_spot_az},
    {"spot_zone_type", "SPOT ZONE TYPE", L, 1, get_zone_type, NULL},
    {"interruption_bucket", "INTERRUPTION BUCKET", R, 5, get_bucket, NULL},
    {"interruption_label", "INTERRUPTION", L, 5, get_interruption, show_interruption},
    {"placement_score", "PLACEMENT", R, 1, get_placement, show_placement},
    {"placement_target_capacity", "PLACEMENT NODES", R, 1, get_placement_capacity, NULL},
    {"placement_instance_types", "PLACEMENT TYPES", R, 1, get_placement_types, NULL},
    {"placement_zone", "PLACEMENT ZONE", L, 1, get_placement_zone, NULL},
    {"spot_rate_per_node_hour", "RATE/NODE-h", R, 1, get_spot_rate, NULL},
    {"spot_rate_source", "RATE SOURCE", L, 1, get_rate_source, NULL},
    {"spot_job_rate_per_hour", "JOB RATE/h", R, 1, get_job_rate, NULL},
    {"checkpoint_cost_s", "CHECKPOINT s", R, 1, get_checkpoint_s, NULL},
    {"checkpoint_cost_source", "CHECKPOINT SOURCE", L, 1, get_checkpoint_source, NULL},
    {"restart_s", "RESTART s", R, 1, get_restart_s, NULL},
    {"checkpoint_interval_s", "INTERVAL s", R, 1, get_interval_s, NULL},
    {"spot_efficiency", "EFFICIENCY", R, 1, get_efficiency, NULL},
    {"effective_samples_per_second", "EFF. SAMPLES/s", R, 1, get_eff_sps, NULL},
    {"expected_hours_to_target", "EXPECTED TIME", R, 1, get_exp_hours, NULL},
    {"p90_hours_to_target", "P90 TIME", R, 2, get_p90_hours, show_p90_hours},
    {"expected_cost_to_target_usd", "EXPECTED COST", R, 1, get_exp_cost, NULL},
    {"p90_cost_to_target_usd", "P90 COST", R, 1, get_p90_cost, NULL},
    {"p_no_interruption", "P(NO INTERRUPTION)", R, 2, get_p_none, show_p_none},
    {"breakeven_rate_per_node_hour", "BREAK-EVEN", R, 6, get_breakeven, show_breakeven},
    {"breakeven_against", "BREAK-EVEN AGAINST", L, 1, get_breakeven_against, NULL},
    {"blocks_to_target", "BLOCKS", R, 4, get_blocks, show_blocks},
    {"block_hours", "BLOCK HOURS", R, 1, get_block_hours, NULL},
    {"block_fee_usd", "BLOCK FEE", R, 1, get_block_fee, NULL},
    {"wait_hours", "WAIT", R, 4, get_wait, show_wait},
    {"plan_commitment_usd_per_hour", "COMMITMENT $/h", R, 3, get_commitment, show_commitment},
    {"plan_term_usd", "PLAN TERM $", R, 1, get_term_usd, NULL},
    {"plan_break_even_on_demand", "PLAN PAYS vs OD", R, 4, get_plan_be_od, show_plan_be_od},
    {"plan_break_even_spot", "PLAN PAYS vs SPOT", R, 3, get_plan_be_spot, show_plan_be_spot},
    {"price_source", "PRICE SOURCE, AGE", L, 5, get_price_source, show_price_source},
    {"price_as_of_utc", "PRICE AS OF (UTC)", L, 1, get_price_as_of, NULL},
    {"pareto", "PARETO", L, 1, get_pareto, NULL},
    {"unpriced_reason", "UNPRICED REASON", L, 1, get_unpriced, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};
/* clang-format on */

const char *const rank_table_keys[] = {"rank",
                                       "configuration",
                                       "region",
                                       "accelerators",
                                       "usd_per_hour",
                                       "samples_per_second",
                                       "samples_per_dollar",
                                       "effective_samples_per_dollar",
                                       "hours_to_target",
                                       "cost_to_target_usd",
                                       "p90_hours_to_target",
                                       "p_no_interruption",
                                       "spot_az",
                                       "interruption_label",
                                       "breakeven_rate_per_node_hour",
                                       "blocks_to_target",
                                       "wait_hours",
                                       "plan_break_even_on_demand",
                                       "plan_break_even_spot",
                                       "placement_score",
                                       "price_source",
                                       "runs",
                                       NULL};

/* The table's keys before version 2 named the same columns differently: still accepted. */
static const char *const aliases[][2] = {
    {"config", "configuration"},
    {"samples_per_s", "samples_per_second"},
    {"samples_per_usd", "samples_per_dollar"},
    {"hours", "hours_to_target"},
    {"cost", "cost_to_target_usd"},
    {"interruption", "interruption_label"},
    {"placement", "placement_score"},
    {"price", "price_source"},
    {"price_as_of", "price_as_of_utc"},
};

const rank_column *rank_column_find(const char *key)
{
    for (size_t a = 0; a < sizeof aliases / sizeof *aliases; a++)
        if (!strcmp(key, aliases[a][0])) key = aliases[a][1];
    for (const rank_column *c = rank_columns; c->key; c++)
        if (!strcmp(c->key, key)) return c;
    return NULL;
}

size_t rank_report_columns(const rank_report *r, const char *const *defaults, const rank_column **out, size_t cap)
{
    size_t n = 0;
    if (r->n_columns) {
        for (size_t i = 0; i < r->n_columns && n < cap; i++)
            if ((out[n] = rank_column_find(r->columns[i]))) n++;
    } else if (defaults) {
        for (size_t i = 0; defaults[i] && n < cap; i++)
            if ((out[n] = rank_column_find(defaults[i]))) n++;
    } else {
        for (const rank_column *c = rank_columns; c->key && n < cap; c++) out[n++] = c;
    }
    return n;
}
