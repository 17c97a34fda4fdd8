/* rank/report_json.c: the "instbench.rank/v1" JSON document.
 *
 * Schema (schemas/rank-v1.json holds the machine-checkable version, tests/rank_schema.py checks it):
 * {
 *   "schema": "instbench.rank/v1",
 *   "generated_at": ISO 8601 UTC,
 *   "workload": {"fingerprint", "model", "precision", "batch_size_per_device", "global_batch_size",
 *                "data", "results"},                    -- the group ranked
 *   "workloads": [{"fingerprint", "model", "precision", "results", "selected"}],  -- every group found
 *   "inputs": {"files_read", "results", "skipped", "duplicates"},   -- results: each counted once
 *   "prices": {"summary", "origin", "region_override", "spot_price": "lowest|median|az", "az"},
 *   "target": {"samples", "epochs", "dataset_size"} | null,
 *   "filters": {"markets": "on-demand|spot|both", "deadline_hours", "budget_usd", "max_hourly_usd",
 *               "pareto_only"},                        -- null where not given
 *   "sort": "samples-per-dollar|throughput|cost|time",
 *   "removed": {"max_hourly", "deadline", "budget", "pareto"},   -- rows dropped by each filter
 *   "rows": [{                                          -- ranked, best first
 *      "rank", "configuration", "instance_type", "host", "nodes", "market", "region",
 *      "accelerator": {"name", "per_node", "total", "label"},
 *      "usd_per_hour", "usd_per_hour_per_node",
 *      "samples_per_second",                            -- median over runs
 *      "runs": {"count", "samples_per_second_min", "samples_per_second_max"},
 *      "samples_per_dollar", "hours_to_target", "cost_to_target_usd",   -- null without a target
 *      "spot": {"az", "interruption_bucket", "interruption_label", "placement_score"} | null,
 *      "price": {"source": "live|cache|snapshot|file|user", "as_of"},
 *      "pareto": bool}],
 *   "unpriced": [{"configuration", "instance_type", "host", "nodes", "market", "region",
 *                 "samples_per_second", "runs", "reason"}]
 * }
 * Unknown numbers are null, never NaN.  "host" names a machine without an instance type (off EC2;
 * null otherwise); such rows are priced by the user (source "user"), and a user's spot price has
 * no AZ (spot.az null). */
#include <math.h>
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

/* The fields a ranked row and an unpriced one share: which configuration, on which market.
 * A ranked row leads with its rank. */
static cJSON *config_object(const rank_report *r, const rank_row *row, int with_rank)
{
    const rank_config *c = &r->configs[row->config];
    cJSON *o = cJSON_CreateObject();
    char label[256];
    rank_config_label(c, row->market, label, sizeof label);
    if (with_rank) cJSON_AddItemToObject(o, "rank", cJSON_CreateNumber(row->rank));
    cJSON_AddStringToObject(o, "configuration", label);
    cJSON_AddItemToObject(o, "instance_type", str_or_null(c->instance_type));
    cJSON_AddItemToObject(o, "host", str_or_null(c->host));
    cJSON_AddNumberToObject(o, "nodes", (double)c->nodes);
    cJSON_AddStringToObject(o, "market", rank_market_name(row->market));
    cJSON_AddItemToObject(o, "region", str_or_null(c->region));
    return o;
}

static void add_row(cJSON *arr, const rank_report *r, const rank_row *row)
{
    const rank_config *c = &r->configs[row->config];
    cJSON *o = config_object(r, row, 1);
    char label[256];
    cJSON *acc = cJSON_AddObjectToObject(o, "accelerator");
    rank_accelerator_label(c, label, sizeof label);
    cJSON_AddItemToObject(acc, "name", str_or_null(c->accelerator));
    cJSON_AddNumberToObject(acc, "per_node", (double)c->accelerator_count);
    cJSON_AddNumberToObject(acc, "total", (double)(c->accelerator_count * c->nodes));
    cJSON_AddStringToObject(acc, "label", label);
    cJSON_AddItemToObject(o, "usd_per_hour", output_json_number(row->usd_per_hour));
    cJSON_AddItemToObject(o, "usd_per_hour_per_node", output_json_number(row->price_per_node));
    cJSON_AddItemToObject(o, "samples_per_second", output_json_number(row->samples_per_second));
    cJSON *runs = cJSON_AddObjectToObject(o, "runs");
    cJSON_AddNumberToObject(runs, "count", (double)c->runs);
    cJSON_AddItemToObject(runs, "samples_per_second_min", output_json_number(c->sps_min));
    cJSON_AddItemToObject(runs, "samples_per_second_max", output_json_number(c->sps_max));
    cJSON_AddItemToObject(o, "samples_per_dollar", output_json_number(row->samples_per_dollar));
    cJSON_AddItemToObject(o, "hours_to_target", output_json_number(row->hours_to_target));
    cJSON_AddItemToObject(o, "cost_to_target_usd", output_json_number(row->cost_to_target));
    if (row->market == RANK_SPOT) {
        cJSON *s = cJSON_AddObjectToObject(o, "spot");
        cJSON_AddItemToObject(s, "az", str_or_null(row->az));
        cJSON_AddItemToObject(s, "interruption_bucket", int_or_null(row->interruption_bucket, 0));
        const char *l = row->interruption_bucket >= 0 ? prices_interruption_label(row->interruption_bucket) : NULL;
        cJSON_AddItemToObject(s, "interruption_label", str_or_null(l));
        cJSON_AddItemToObject(s, "placement_score", int_or_null(row->placement_score, 1));
    } else {
        cJSON_AddNullToObject(o, "spot");
    }
    cJSON *p = cJSON_AddObjectToObject(o, "price");
    cJSON_AddItemToObject(p, "source", str_or_null(row->price_source));
    cJSON_AddItemToObject(p, "as_of", time_or_null(row->price_as_of));
    cJSON_AddBoolToObject(o, "pareto", row->pareto);
    cJSON_AddItemToArray(arr, o);
}

static void add_unpriced(cJSON *arr, const rank_report *r, const rank_row *row)
{
    const rank_config *c = &r->configs[row->config];
    cJSON *o = config_object(r, row, 0);
    cJSON_AddItemToObject(o, "samples_per_second", output_json_number(row->samples_per_second));
    cJSON_AddNumberToObject(o, "runs", (double)c->runs);
    cJSON_AddStringToObject(o, "reason", row->unpriced_reason);
    cJSON_AddItemToArray(arr, o);
}

static cJSON *limit(double v) { return isnan(v) ? cJSON_CreateNull() : output_json_number(v); }

int rank_report_write_json(const rank_report *r, FILE *out, ib_error *err)
{
    const rank_options *op = r->opts;
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    cJSON_AddStringToObject(doc, "schema", "instbench.rank/v1");
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
    cJSON_AddStringToObject(f, "markets", op->markets == RANK_MARKETS_BOTH ? "both"
                                          : op->markets == RANK_MARKETS_SPOT ? "spot" : "on-demand");
    cJSON_AddItemToObject(f, "deadline_hours", limit(op->deadline_hours));
    cJSON_AddItemToObject(f, "budget_usd", limit(op->budget_usd));
    cJSON_AddItemToObject(f, "max_hourly_usd", limit(op->max_hourly_usd));
    cJSON_AddBoolToObject(f, "pareto_only", op->pareto_only);
    cJSON_AddStringToObject(doc, "sort", rank_sort_key_name(op->sort));
    cJSON *rm = cJSON_AddObjectToObject(doc, "removed");
    cJSON_AddNumberToObject(rm, "max_hourly", (double)r->removed.by_max_hourly);
    cJSON_AddNumberToObject(rm, "deadline", (double)r->removed.by_deadline);
    cJSON_AddNumberToObject(rm, "budget", (double)r->removed.by_budget);
    cJSON_AddNumberToObject(rm, "pareto", (double)r->removed.by_pareto);

    cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
    for (size_t i = 0; i < r->n_priced; i++) add_row(rows, r, &r->rows[i]);
    cJSON *up = cJSON_AddArrayToObject(doc, "unpriced");
    for (size_t i = r->n_priced; i < r->n_rows; i++) add_unpriced(up, r, &r->rows[i]);

    int rc = output_json_write(out, doc, err);
    cJSON_Delete(doc);
    return rc;
}
