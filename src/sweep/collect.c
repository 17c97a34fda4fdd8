/* sweep/collect: what the instances delivered to S3.  Node 0 of a candidate PUTs its result to
 * results/<name>.json; any node that fails PUTs the last 64 KiB of its log to
 * logs/<name>-node<k>.log.  One ListObjectsV2 under the sweep's prefix per poll says which arrived;
 * a result is downloaded into the results directory (written whole), a log's last lines become the
 * candidate's reason. */
#include "sweep/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instbench/util.h"

#define RESULT_MAX_BYTES (4u << 20)
#define LOG_MAX_BYTES (128u << 10) /* the script sends 64 KiB; room for a slightly larger tail */
#define LOG_LINES 8                /* the last lines quoted as the reason */

void sweep_key(const sweep_state *st, const char *kind, const char *rest, char *out, size_t len)
{
    snprintf(out, len, "%ssweep-%s/%s/%s", st->s3_prefix, st->id, kind, rest);
}

void sweep_delivery_key(const sweep_state *st, size_t i, int node, char *out, size_t len)
{
    char name[160], file[200];
    sweep_candidate_key_name(st, i, name, sizeof name);
    if (node < 0) snprintf(file, sizeof file, "%s.json", name);
    else snprintf(file, sizeof file, "%s-node%d.log", name, node);
    sweep_key(st, node < 0 ? "results" : "logs", file, out, len);
}

/* The last LOG_LINES non-empty lines of TEXT, joined by " | " (escaped when shown). */
static void log_tail(const char *text, size_t len, char *out, size_t cap)
{
    size_t end = len, lines = 0, start = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) end--;
    start = end;
    while (start > 0 && lines < LOG_LINES) {
        start--;
        if (text[start] == '\n') lines++;
    }
    if (start < end && text[start] == '\n') start++;
    size_t k = 0;
    for (size_t i = start; i < end && k + 4 < cap; i++) {
        if (text[i] == '\r') continue;
        if (text[i] == '\n') {
            if (k && out[k - 1] != ' ') memcpy(out + k, " | ", 3), k += 3;
            continue;
        }
        out[k++] = text[i];
    }
    out[k] = '\0';
}

/* KEY is in the listing. */
static int has_key(const aws_s3_listing *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->objs[i].key, key)) return 1;
    return 0;
}

static void finish(sweep_state_candidate *c, sweep_outcome o, time_t now)
{
    c->outcome = o;
    if (!c->ended) c->ended = now;
}

/* Node 0's result: downloaded and written whole into the results directory. */
static int take_result(sweep_ctx *x, size_t i, const char *key, const char *name, ib_error *err)
{
    sweep_state_candidate *c = &x->st->cand[i];
    char *body = NULL, path[512];
    size_t len = 0;
    if (aws_s3_get_object(x->s3, x->st->s3_bucket, key, RESULT_MAX_BYTES, &body, &len, err) != 0) return -1;
    snprintf(path, sizeof path, "%s/%s.json", x->o->results_dir, name);
    int rc = util_write_file_atomic(path, body, len, err);
    free(body);
    if (rc != 0) return -1;
    snprintf(c->result_path, sizeof c->result_path, "%s", path);
    c->reason[0] = '\0';
    finish(c, SWEEP_RESULT, time(NULL));
    ib_info("%s: result in (%s)", c->c.spec, path);
    return 0;
}

static void take_log(sweep_ctx *x, size_t i, const char *key, int node)
{
    sweep_state_candidate *c = &x->st->cand[i];
    char *body = NULL, tail[700] = "";
    size_t len = 0;
    ib_error err = {0};
    if (aws_s3_get_object(x->s3, x->st->s3_bucket, key, LOG_MAX_BYTES, &body, &len, &err) == 0)
        log_tail(body, len, tail, sizeof tail);
    else snprintf(tail, sizeof tail, "(its log could not be read: %.600s)", err.msg);
    free(body);
    snprintf(c->reason, sizeof c->reason, "failed on node %d: %s", node, tail);
    finish(c, SWEEP_FAILED, time(NULL));
    ib_warn("%s: %s", c->c.spec, c->reason);
}

int sweep_collect(sweep_ctx *x, ib_error *err)
{
    sweep_state *st = x->st;
    char prefix[700];
    snprintf(prefix, sizeof prefix, "%ssweep-%s/", st->s3_prefix, st->id);
    aws_s3_listing l = {0};
    if (aws_s3_list_objects(x->s3, st->s3_bucket, prefix, 0, 0, 100000, &l, err) != 0) {
        aws_s3_listing_free(&l);
        return -1;
    }
    int changed = 0;
    for (size_t i = 0; i < st->n_cand; i++) {
        sweep_state_candidate *c = &st->cand[i];
        if (c->outcome != SWEEP_RUNNING) continue;
        char name[160], key[1024];
        sweep_candidate_key_name(st, i, name, sizeof name);
        sweep_delivery_key(st, i, -1, key, sizeof key);
        if (has_key(&l, key)) {
            ib_error e = {0};
            /* the instances power off by themselves after delivering; ending them now saves the wait */
            if (take_result(x, i, key, name, &e) == 0) changed++, sweep_terminate_candidate(x, (int)i);
            else ib_warn("%s: its result could not be downloaded yet: %s", c->c.spec, e.msg);
            continue;
        }
        for (int k = 0; k < c->c.nodes; k++) {
            sweep_delivery_key(st, i, k, key, sizeof key);
            if (has_key(&l, key)) {
                take_log(x, i, key, k);
                sweep_terminate_candidate(x, (int)i);
                changed++;
                break;
            }
        }
    }
    aws_s3_listing_free(&l);
    return changed;
}
