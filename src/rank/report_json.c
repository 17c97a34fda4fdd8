/* rank/report_json.c: the "instbench.rank/v2" JSON document.
 *
 * Schema (schemas/rank-v2.json holds the machine-checkable version, tests/rank/rank_schema.py
 * checks it):
 * {
 *   "schema": "instbench.rank/v2",
 *   "generated_at": ISO 8601 UTC,
 *   "workload": {"fingerprint", "model", "precision", "batch_size_per_device", "global_batch_size",
 *                "data", "results"},                    -- the group ranked
 *   "workloads": [{"fingerprint", "model", "precision", "results", "selected"}],  -- every group found
 *   "inputs": {"files_read", "results", "skipped", "duplicates", "superseded",
 *              "revisions": [revision|null]},   -- the builds the ranked runs came from
 *   "prices": {"summary", "origin", "region_override", "spot_price": "lowest|median|az", "az"},
 *   "target": {"samples", "epochs", "dataset_size"} | null,
 *   "filters": {"markets": "on-demand|spot|both|capacity-block|savings-plan|all", "deadline_hours", "budget_usd", "max_hourly_usd",
 *               "pareto_only"},                        -- null where not given
 *   "savings_plan": {"plan", "term_hours", "utilisation"} | null,  -- with a savings-plan market: the
 *                   plan priced and --plan-utilisation, the view its rows' cost_to_target_usd takes
 *   "sort": "samples-per-dollar|throughput|cost|time",
 *   "removed": {"max_hourly", "deadline", "budget", "pareto"},   -- rows dropped by each filter
 *   "columns": [keys],                                  -- the keys every row has, in order
 *   "rows": [{KEY: value, ...}]                         -- ranked best first, then the unpriced
 * }
 * A row's keys are the column keys (src/rank/report_columns.c; the CSV header, `--columns`):
 * numbers, strings, booleans, and `warnings` an array (empty when none); a value that is unknown
 * or does not apply (a spot AZ on an on-demand row, a price on an unpriced row) is null, never
 * NaN, and never an object or array that could be null. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "instbench/output.h"
#include "instbench/rank.h"

static cJSON *str_or_null(const char *s) { return s && s[0] ? cJSON_CreateString(s) : cJSON_CreateNull(); }
static cJSON *int_or_null(long v, long min) { return v >= min ? cJSON_CreateNumber((double)v) : cJSON_CreateNull(); }

static cJSON *time_or_null(time_t t)
{
    if (t <= 0) return cJSON_CreateNull();
    char b[32];
    util_utc_iso8601(t, b);
    return cJSON_CreateString(b);
}

static cJSON *value_json(const rank_value *v)
{
    switch (v->kind) {
    case RANK_V_NUMBER: return output_json_number(v->number);
    case RANK_V_TEXT: return cJSON_CreateString(v->text);
    case RANK_V_BOOL: return cJSON_CreateBool(v->flag);
    case RANK_V_TIME: return time_or_null((time_t)v->number);
    case RANK_V_LIST: {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; a && i < v->n_items; i++) cJSON_AddItemToArray(a, cJSON_CreateString(v->items[i]));
        return a;
    }
    default: return cJSON_CreateNull();
    }
}

static cJSON *limit(double v) { return isnan(v) ? cJSON_CreateNull() : output_json_number(v); }

/* "spot_risk": the model's assumptions for every spot row (docs/design.md, "Spot risk"): what the
 * table's legend line says, for machines. */
static void add_spot_risk(cJSON *doc, const rank_spot_options *so)
{
    cJSON *k = cJSON_AddObjectToObject(doc, "spot_risk");
    cJSON_AddStringToObject(k, "mode", so->off ? "off" : "on");
    cJSON_AddStringToObject(k, "rate_source", isfinite(so->rate_per_node_hour) ? "user" : "advisor");
    cJSON_AddItemToObject(k, "rate_per_node_hour", limit(so->rate_per_node_hour));
    cJSON *shares = cJSON_AddArrayToObject(k, "advisor_bucket_shares");
    for (int b = 0; b < 5; b++) cJSON_AddItemToArray(shares, output_json_number(prices_interruption_share[b]));
    cJSON_AddItemToObject(k, "advisor_window_hours", output_json_number(RANK_SPOT_ADVISOR_WINDOW_H));
    cJSON_AddItemToObject(k, "checkpoint_cost_s", output_json_number(so->checkpoint_s));
    cJSON_AddStringToObject(k, "checkpoint_cost_source", so->checkpoint_source);
    cJSON_AddItemToObject(k, "restart_s", output_json_number(so->restart_s));
    cJSON_AddItemToObject(k, "checkpoint_interval_s", limit(so->interval_s));
    cJSON_AddStringToObject(k, "checkpoint_interval", isfinite(so->interval_s) ? "user" : "daly");
}

int rank_report_write_json(const rank_report *r, FILE *out, ib_error *err)
{
    const rank_options *op = r->opts;
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    cJSON_AddStringToObject(doc, "schema", "instbench.rank/v2");
    cJSON_AddItemToObject(doc, "generated_at", time_or_null(op->now));

    const rank_group *g = r->group;
    cJSON *w = cJSON_AddObjectToObject(doc, "workload");
    cJSON_AddStringToObject(w, "fingerprint", g->fingerprint);
    cJSON_AddItemToObject(w, "model", str_or_null(g->model));
    cJSON_AddItemToObject(w, "precision", str_or_null(g->precision));
    cJSON_AddItemToObject(w, "batch_size_per_device", int_or_null(g->batch_per_device, 1));
    cJSON_AddItemToObject(w, "global_batch_size", int_or_null(g->global_batch, 1));
    cJSON_AddItemToObject(w, "data", str_or_null(g->data));
    cJSON_AddNumberToObject(w, "results", (double)g->n);

    cJSON *ws = cJSON_AddArrayToObject(doc, "workloads");
    for (size_t i = 0; i < r->n_groups; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "fingerprint", r->groups[i].fingerprint);
        cJSON_AddItemToObject(o, "model", str_or_null(r->groups[i].model));
        cJSON_AddItemToObject(o, "precision", str_or_null(r->groups[i].precision));
        cJSON_AddNumberToObject(o, "results", (double)r->groups[i].n);
        cJSON_AddBoolToObject(o, "selected", &r->groups[i] == g);
        cJSON_AddItemToArray(ws, o);
    }

    cJSON *in = cJSON_AddObjectToObject(doc, "inputs");
    cJSON_AddNumberToObject(in, "files_read", (double)r->files_read);
    cJSON_AddNumberToObject(in, "results", (double)r->results);
    cJSON_AddNumberToObject(in, "skipped", (double)r->skipped);
    cJSON_AddNumberToObject(in, "duplicates", (double)r->duplicates);
    cJSON_AddNumberToObject(in, "superseded", (double)r->superseded);
    const char **revs = NULL;
    long n_revs = rank_revisions(r->configs, r->n_configs, &revs);
    if (n_revs < 0) {
        cJSON_Delete(doc);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    cJSON *rv = cJSON_AddArrayToObject(in, "revisions");
    for (long i = 0; i < n_revs; i++) cJSON_AddItemToArray(rv, str_or_null(revs[i]));
    free(revs);

    char summary[160];
    rank_report_price_summary(r, summary, sizeof summary);
    cJSON *pr = cJSON_AddObjectToObject(doc, "prices");
    cJSON_AddStringToObject(pr, "summary", summary);
    cJSON_AddItemToObject(pr, "origin", str_or_null(r->prices_origin));
    cJSON_AddItemToObject(pr, "region_override", str_or_null(r->region_override));
    static const char *const modes[] = {"lowest", "median", "az"};
    cJSON_AddStringToObject(pr, "spot_price", modes[op->spot_mode]);
    cJSON_AddItemToObject(pr, "az", str_or_null(op->spot_mode == RANK_SPOT_AZ ? op->az : NULL));

    if (op->target_samples > 0) {
        cJSON *t = cJSON_AddObjectToObject(doc, "target");
        cJSON_AddItemToObject(t, "samples", output_json_number(op->target_samples));
        cJSON_AddItemToObject(t, "epochs", r->epochs > 0 ? output_json_number(r->epochs) : cJSON_CreateNull());
        cJSON_AddItemToObject(t, "dataset_size",
                              r->epochs > 0 ? output_json_number(r->dataset_size) : cJSON_CreateNull());
    } else {
        cJSON_AddNullToObject(doc, "target");
    }
    cJSON *f = cJSON_AddObjectToObject(doc, "filters");
    cJSON_AddStringToObject(f, "markets",
                            op->markets == RANK_MARKETS_ALL     ? "all"
                            : op->markets == RANK_MARKETS_BOTH  ? "both"
                            : op->markets == RANK_MARKETS_SPOT  ? "spot"
                            : op->markets == RANK_MARKETS_BLOCK ? "capacity-block"
                            : op->markets == RANK_MARKETS_PLAN  ? "savings-plan"
                                                                : "on-demand");
    cJSON_AddItemToObject(f, "deadline_hours", limit(op->deadline_hours));
    cJSON_AddItemToObject(f, "budget_usd", limit(op->budget_usd));
    cJSON_AddItemToObject(f, "max_hourly_usd", limit(op->max_hourly_usd));
    cJSON_AddBoolToObject(f, "pareto_only", op->pareto_only);
    /* which view a savings-plan row's cost_to_target_usd is (rank.h): the plan asked and the share
     * of the term's other hours the rest of the fleet uses (--plan-utilisation) */
    if (op->markets & RANK_MARKETS_PLAN) {
        cJSON *sp = cJSON_AddObjectToObject(doc, "savings_plan");
        cJSON_AddItemToObject(sp, "plan", str_or_null(op->plan_label));
        cJSON_AddItemToObject(sp, "term_hours", output_json_number(op->plan_term_hours));
        cJSON_AddItemToObject(sp, "utilisation",
                              output_json_number(isfinite(op->plan_utilisation) ? op->plan_utilisation : 0));
    } else {
        cJSON_AddNullToObject(doc, "savings_plan");
    }
    add_spot_risk(doc, &op->spot);
    cJSON_AddStringToObject(doc, "sort", rank_sort_key_name(op->sort));
    cJSON *rm = cJSON_AddObjectToObject(doc, "removed");
    cJSON_AddNumberToObject(rm, "max_hourly", (double)r->removed.by_max_hourly);
    cJSON_AddNumberToObject(rm, "deadline", (double)r->removed.by_deadline);
    cJSON_AddNumberToObject(rm, "budget", (double)r->removed.by_budget);
    cJSON_AddNumberToObject(rm, "pareto", (double)r->removed.by_pareto);

    const rank_column *cols[RANK_MAX_COLUMNS];
    size_t nc = rank_report_columns(r, NULL, cols, RANK_MAX_COLUMNS); /* the CSV's choice */
    cJSON *keys = cJSON_AddArrayToObject(doc, "columns");
    for (size_t c = 0; c < nc; c++) cJSON_AddItemToArray(keys, cJSON_CreateString(cols[c]->key));
    cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
    for (size_t i = 0; i < r->n_rows; i++) {
        cJSON *o = cJSON_CreateObject();
        for (size_t c = 0; c < nc; c++) {
            rank_value v = {0};
            cols[c]->get(r, &r->rows[i], &v);
            cJSON_AddItemToObject(o, cols[c]->key, value_json(&v));
        }
        cJSON_AddItemToArray(rows, o);
    }

    int rc = output_json_write(out, doc, err);
    cJSON_Delete(doc);
    return rc;
}
