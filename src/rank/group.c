/* rank/group.c: results -> workload groups (by fingerprint) -> configurations (repeated runs of
 * one configuration combined: median samples/s, run count, min-max spread).
 *
 * Different workloads are never ranked against each other: a fingerprint hashes every workload
 * dimension (model, precision, batch, data mode), so equal fingerprints mean comparable runs. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "instbench/instance_type.h"
#include "instbench/names.h"
#include "instbench/rank.h"
#include "rank/internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rank_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double rank_whole_units(double amount, double unit)
{
    double n = ceil(amount / unit * (1 - 1e-12));
    return n < 1 ? 1 : n;
}

/* Sort result indices by fingerprint so groups are contiguous runs (O(n log n) for 10^4+ files). */
static const rank_results *sort_ctx;
static int cmp_by_fp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(sort_ctx->items[i].fingerprint, sort_ctx->items[j].fingerprint);
    return c ? c : (i > j) - (i < j);
}

static int cmp_group(const void *a, const void *b)
{
    const rank_group *x = a, *y = b;
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    if (x->newest != y->newest) return x->newest > y->newest ? -1 : 1;
    return strcmp(x->fingerprint, y->fingerprint);
}

int rank_group_by_workload(const rank_results *r, rank_group **groups, size_t *n_groups, ib_error *err)
{
    *groups = NULL;
    *n_groups = 0;
    if (r->n == 0) return 0;
    size_t *order = malloc(r->n * sizeof *order);
    if (!order) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory grouping results");
    for (size_t i = 0; i < r->n; i++) order[i] = i;
    sort_ctx = r;
    qsort(order, r->n, sizeof *order, cmp_by_fp);

    size_t ng = 0;
    for (size_t i = 0; i < r->n; i++)
        if (i == 0 || strcmp(r->items[order[i]].fingerprint, r->items[order[i - 1]].fingerprint)) ng++;
    rank_group *g = calloc(ng, sizeof *g);
    if (!g) {
        free(order);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory grouping results");
    }
    size_t k = 0, start = 0;
    for (size_t i = 1; i <= r->n; i++) {
        if (i < r->n && !strcmp(r->items[order[i]].fingerprint, r->items[order[start]].fingerprint)) continue;
        rank_group *G = &g[k++];
        const rank_result *first = &r->items[order[start]];
        strcpy(G->fingerprint, first->fingerprint);
        strcpy(G->model, first->model);
        strcpy(G->precision, first->precision);
        strcpy(G->data, first->data);
        strcpy(G->optimizer, first->optimizer);
        G->batch_per_device = first->batch_per_device;
        G->global_batch = first->global_batch;
        G->params = first->params;
        G->n = i - start;
        G->idx = malloc(G->n * sizeof *G->idx);
        if (!G->idx) {
            free(order);
            rank_groups_free(g, k);
            return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory grouping results");
        }
        memcpy(G->idx, order + start, G->n * sizeof *G->idx);
        for (size_t j = 0; j < G->n; j++)
            if (r->items[G->idx[j]].timestamp > G->newest) G->newest = r->items[G->idx[j]].timestamp;
        start = i;
    }
    free(order);
    qsort(g, ng, sizeof *g, cmp_group);
    *groups = g;
    *n_groups = ng;
    return 0;
}

void rank_groups_free(rank_group *g, size_t n)
{
    if (!g) return;
    for (size_t i = 0; i < n; i++) free(g[i].idx);
    free(g);
}

/* One group's line in the list: every workload dimension a result names (the model's own
 * dimensions under "custom" and Adam's betas and eps are hashed too but not named). */
static void group_label(const rank_group *g, char *out, size_t cap)
{
    snprintf(out, cap, "%s %s batch %ld/device%s%s%s%s", g->model[0] ? g->model : "?", g->precision,
             g->batch_per_device, g->data[0] ? ", data " : "", g->data, g->optimizer[0] ? ", " : "", g->optimizer);
}

void rank_groups_list(const rank_group *g, size_t n, size_t chosen, int explicit)
{
    ib_info("%zu workloads found; results of different workloads are never ranked together:", n);
    for (size_t i = 0; i < n; i++) {
        char label[256], other[256];
        group_label(&g[i], label, sizeof label);
        /* two lines alike would read as one workload split in two: say that more differs */
        int alike = 0;
        for (size_t j = 0; j < n && !alike; j++)
            if (j != i) group_label(&g[j], other, sizeof other), alike = !strcmp(label, other);
        ib_info("  %s %.16s  %s%s: %zu result%s", i == chosen ? "->" : "  ", g[i].fingerprint, label,
                alike ? " (and settings the line does not name: see workload in the files)" : "", g[i].n,
                g[i].n == 1 ? "" : "s");
    }
    if (!explicit) ib_info("ranking the largest group; pick another with --workload FINGERPRINT (a prefix is enough)");
}

int rank_group_pick(const rank_group *g, size_t n, const char *prefix, size_t *chosen, ib_error *err)
{
    size_t len = strlen(prefix), hits = 0, which = 0;
    if (len == 0) return ib_error_set(err, IB_EXIT_USAGE, "--workload needs a fingerprint (or a prefix of one)");
    for (size_t i = 0; i < n; i++) {
        if (!strcasecmp(g[i].fingerprint, prefix)) { /* an exact match wins over longer ones */
            *chosen = i;
            return 0;
        }
        if (!strncasecmp(g[i].fingerprint, prefix, len)) {
            hits++;
            which = i;
        }
    }
    if (hits == 1) {
        *chosen = which;
        return 0;
    }
    /* No fingerprint matches: a model name picks its group when only one group has that model. */
    if (hits == 0) {
        for (size_t i = 0; i < n; i++)
            if (!strcmp(g[i].model, prefix)) {
                hits++;
                which = i;
            }
        if (hits == 1) {
            *chosen = which;
            return 0;
        }
        if (hits > 1) {
            char list[700] = "";
            for (size_t i = 0, used = 0; i < n && used + 80 < sizeof list; i++)
                if (!strcmp(g[i].model, prefix))
                    used += (size_t)snprintf(list + used, sizeof list - used, "%s%.16s (%s %s, batch %ld)",
                                             used ? ", " : "", g[i].fingerprint, g[i].model, g[i].precision,
                                             g[i].batch_per_device);
            return ib_error_set(err, IB_EXIT_USAGE,
                                "--workload %s: %zu workloads use that model, pick a fingerprint: %s", prefix, hits,
                                list);
        }
    }
    char list[700] = "";
    for (size_t i = 0, used = 0; i < n && used + 80 < sizeof list; i++) {
        if (hits && strncasecmp(g[i].fingerprint, prefix, len)) continue;
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s (%s)", used ? ", " : "", g[i].fingerprint,
                                 g[i].model[0] ? g[i].model : "?");
    }
    if (hits) return ib_error_set(err, IB_EXIT_USAGE, "--workload %s is ambiguous: matches %s", prefix, list);
    return ib_error_set(err, IB_EXIT_USAGE, "--workload %s matches no workload; present: %s", prefix,
                        n ? list : "none");
}

/* ---- configurations ---- */

typedef struct keyed {
    char key[384];
    size_t result;
} keyed;

/* Configurations in the natural order of their instance types (g5.2xlarge before g5.12xlarge),
 * then by the rest of the key. */
static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    char tx[72], ty[72];
    snprintf(tx, sizeof tx, "%.*s", (int)strcspn(x->key, "|"), x->key);
    snprintf(ty, sizeof ty, "%.*s", (int)strcspn(y->key, "|"), y->key);
    int c = names_instance_type_cmp(tx, ty);
    if (!c) c = strcmp(x->key, y->key);
    return c ? c : (x->result > y->result) - (x->result < y->result);
}

/* A run's recorded hourly cost: the newest run's counts (a price is not averaged: a median of two
 * prices is a price nobody gave); differing ones are flagged for a warning. */
static void record_price(rank_config *C, const rank_result *x)
{
    if (isnan(x->user_usd_per_hour)) return;
    int m = x->user_market;
    double *have = &C->recorded_usd_per_hour[m];
    if (!isnan(*have) && *have != x->user_usd_per_hour) C->recorded_prices_differ = 1;
    if (isnan(*have) || x->timestamp >= C->recorded_as_of[m]) {
        *have = x->user_usd_per_hour;
        C->recorded_as_of[m] = x->timestamp;
    }
}

/* Adds REV to the *N distinct revisions in SET, kept sorted (rank_revision_cmp: unknown last). */
static void add_revision(rank_revision *set, size_t *n, const rank_revision *rev)
{
    size_t at = 0;
    while (at < *n && rank_revision_cmp(set[at].text, rev->text) < 0) at++;
    if (at < *n && !strcmp(set[at].text, rev->text)) return;
    memmove(set + at + 1, set + at, (*n - at) * sizeof *set);
    set[at] = *rev;
    (*n)++;
}

static int same_place(const rank_config *a, const rank_config *b)
{
    /* the name a label shows: the instance type, or the hostname of a machine without one */
    return !strcmp(rank_config_name(a), rank_config_name(b)) && a->nodes == b->nodes && !strcmp(a->region, b->region);
}

/* Configurations of one type, nodes and region differ by backend, device or attention kernels:
 * say what tells each apart from every other in their labels ("cpu", "cuda NVIDIA A10G" when
 * another one has the same backend on another device, "cuda, unfused attention" when another one
 * differs only by that, "cuda NVIDIA H200, cudnn attention" when both). */
static void name_variants(rank_config *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int clash = 0, other_device = 0, same_device = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i && same_place(&c[i], &c[j])) {
                clash = 1;
                if (strcmp(c[i].backend, c[j].backend)) continue;
                if (strcmp(c[i].accelerator, c[j].accelerator)) other_device = 1;
                else same_device = 1;
            }
        if (!clash) continue;
        char device[80] = "", attention[48] = "";
        if (other_device) snprintf(device, sizeof device, " %s", c[i].accelerator[0] ? c[i].accelerator : "device?");
        if (same_device)
            snprintf(attention, sizeof attention, ", %s attention", c[i].attention[0] ? c[i].attention : "unrecorded");
        snprintf(c[i].variant, sizeof c[i].variant, "%s%s%s", c[i].backend[0] ? c[i].backend : "backend?", device,
                 attention);
    }
}

int rank_combine_runs(const rank_results *r, const rank_group *g, const char *region_override, rank_config **configs,
                      size_t *n_configs, ib_error *err)
{
    *configs = NULL;
    *n_configs = 0;
    if (g->n == 0) return 0;
    keyed *k = malloc(g->n * sizeof *k);
    double *sps = malloc(g->n * sizeof *sps), *bw = malloc(g->n * sizeof *bw);
    /* the configurations, then their runs' revisions (at most one per run): one block, so the
     * callers' free(configs) frees both, and --instance-types moving configurations keeps each
     * one's pointer */
    rank_config *c = calloc(1, g->n * (sizeof *c + sizeof(rank_revision)));
    rank_revision *revs = c ? (rank_revision *)(c + g->n) : NULL;
    size_t n_revs = 0;
    if (!k || !sps || !bw || !c) {
        free(k), free(sps), free(bw), free(c);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory combining runs");
    }
    const char *ovr = region_override && region_override[0] ? region_override : NULL;
    for (size_t i = 0; i < g->n; i++) {
        const rank_result *x = &r->items[g->idx[i]];
        /* What ran matters as much as where: a CPU run and a CUDA run on one instance type (or two
         * GPU models) never share a median.  Unknown type: keep machines apart by their hostname
         * and what the run saw too, so two workstations, or an A10G box and a CPU box, never share
         * a median (nor a price: --price names the hostname). */
        if (x->instance_type[0])
            snprintf(k[i].key, sizeof k[i].key, "%s|%ld|%s|%s|%s|%s", x->instance_type, x->nodes, ovr ? ovr : x->region,
                     x->backend, x->accelerator, x->attention);
        else
            snprintf(k[i].key, sizeof k[i].key, "?|%ld|%s|%s|%s|%s|%ld|%ld|%s", x->nodes, ovr ? ovr : x->region,
                     x->host, x->backend, x->accelerator, x->accelerator_count, x->vcpus, x->attention);
        k[i].result = g->idx[i];
    }
    qsort(k, g->n, sizeof *k, cmp_keyed);
    size_t nc = 0, start = 0;
    for (size_t i = 1; i <= g->n; i++) {
        if (i < g->n && !strcmp(k[i].key, k[start].key)) continue;
        rank_config *C = &c[nc++];
        const rank_result *first = &r->items[k[start].result];
        strcpy(C->instance_type, first->instance_type);
        if (!first->instance_type[0]) strcpy(C->host, first->host);
        C->recorded_usd_per_hour[0] = C->recorded_usd_per_hour[1] = NAN;
        snprintf(C->region, sizeof C->region, "%s", ovr ? ovr : first->region);
        C->nodes = first->nodes;
        strcpy(C->accelerator, first->accelerator);
        C->accelerator_count = first->accelerator_count;
        C->vcpus = first->vcpus;
        strcpy(C->backend, first->backend);
        strcpy(C->attention, first->attention);
        /* A real run on all NODES beats an extrapolation to them: the measure --count runs of a
         * configuration that also has measured ones are left out (counted as superseded). */
        int real = 0;
        for (size_t j = start; j < i; j++) real |= r->items[k[j].result].measured_nodes >= C->nodes;
        C->runs = 0;
        C->measured_nodes = C->nodes;
        C->cv_max = NAN;
        size_t ng = 0; /* the runs' GEMM shares, in bw (free until the network's below) */
        for (size_t j = start; j < i; j++) {
            const rank_result *x = &r->items[k[j].result];
            if (real && x->measured_nodes < C->nodes) {
                C->superseded++;
                continue;
            }
            /* Linear scaling from the nodes that ran to the nodes the row prices: the one
             * assumption an extrapolated row makes (no communication cost), and it says so. */
            double v = x->samples_per_second * (double)C->nodes / (double)x->measured_nodes;
            if (!C->runs || v < C->sps_min) C->sps_min = v;
            if (!C->runs || v > C->sps_max) C->sps_max = v;
            sps[C->runs++] = v;
            if (x->measured_nodes < C->measured_nodes) C->measured_nodes = x->measured_nodes;
            C->identity_mismatch |= x->identity_mismatch == 1;
            if (!isnan(x->cv) && (isnan(C->cv_max) || x->cv > C->cv_max)) C->cv_max = x->cv;
            if (!isnan(x->gemm_share)) bw[ng++] = x->gemm_share;
            C->warnings |= x->warnings;
            add_revision(revs + n_revs, &C->n_revisions, &x->revision);
            /* Fill descriptive gaps from later runs (one run may have lacked device info). */
            if (C->vcpus < 0) C->vcpus = x->vcpus;
            if (!C->accelerator_count) C->accelerator_count = x->accelerator_count;
            record_price(C, x);
        }
        C->revisions = revs + n_revs;
        n_revs += C->n_revisions;
        C->extrapolated = C->measured_nodes < C->nodes;
        C->samples_per_second = rank_median(sps, C->runs);
        /* The share of the in-situ GEMM rate: the median of the counted runs that measured one (a
         * superseded extrapolation is left out of this figure as of every other) */
        C->gemm_share = ng ? rank_median(bw, ng) : NAN;
        /* The network between nodes: only runs that spanned all of them say anything about it. */
        C->busbw_gbps = NAN;
        if (C->nodes > 1) {
            size_t nb = 0;
            for (size_t j = start; j < i; j++) {
                const rank_result *x = &r->items[k[j].result];
                if (x->measured_nodes == C->nodes && !isnan(x->busbw_gbps)) bw[nb++] = x->busbw_gbps;
            }
            if (nb) C->busbw_gbps = rank_median(bw, nb);
            C->network[0] = '\0';
            for (size_t j = start; j < i; j++) {
                const rank_result *x = &r->items[k[j].result];
                if (x->measured_nodes != C->nodes || !x->network[0] || !strcmp(x->network, "unknown")) continue;
                if (!C->network[0] || !strcmp(x->network, "socket")) strcpy(C->network, x->network);
            }
            C->socket_on_efa = !strcmp(C->network, "socket") && instance_type_efa(C->instance_type) == 1;
        }
        start = i;
    }
    free(k);
    free(sps);
    free(bw);
    name_variants(c, nc);
    *configs = c;
    *n_configs = nc;
    return 0;
}
