/* sweep/state: the sweep's state file, $XDG_STATE_HOME/instbench/sweeps/<id>.json.
 *
 * It is written (atomically, through util_write_file_atomic) before the first RunInstances and
 * after every change, so whatever happens to the process, the instances it launched, their ids
 * and candidates, the placement groups and the results so far are on disk.  `sweep status` and
 * `sweep cleanup` read it back as hostile input: every string is length- and shape-checked, every
 * count bounded; a file that fails a check is refused, never half-used. */
#include "instbench/sweep.h"
#include "sweep/internal.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "instbench/aws.h"
#include "instbench/aws_ids.h"
#include "instbench/names.h"
#include "instbench/prices.h"
#include "instbench/util.h"

#define STATE_MAX_BYTES (4u << 20) /* 64 candidates x 64 nodes fit with room to spare */
#define STATE_MAX_INSTANCES (SWEEP_MAX_CANDIDATES * SWEEP_NODES_MAX * 4) /* relaunches in other zones */

static const char *const outcome_names[SWEEP_OUTCOME_COUNT] = {"pending",     "running",     "result",    "failed",
                                                               "interrupted", "no capacity", "timed out", "not run"};

const char *sweep_outcome_name(sweep_outcome o) { return o >= 0 && o < SWEEP_OUTCOME_COUNT ? outcome_names[o] : "?"; }

int sweep_state_dir(char *out, size_t len, ib_error *err)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    int n;
    /* XDG: a relative XDG_STATE_HOME is invalid and must be ignored. */
    if (xdg && xdg[0] == '/') n = snprintf(out, len, "%s/instbench/sweeps", xdg);
    else if (home && home[0]) n = snprintf(out, len, "%s/.local/state/instbench/sweeps", home);
    else
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "sweep: neither XDG_STATE_HOME nor HOME is set: nowhere to keep the state file");
    if (n < 0 || (size_t)n >= len)
        return ib_error_set(err, IB_EXIT_RUNTIME, "sweep: the state directory's path is too long");
    return 0;
}

int sweep_state_path(const char *id, char *out, size_t len, ib_error *err)
{
    if (!sweep_id_valid(id))
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' is not a sweep id (like 20261125-213005-9f3a)", id);
    char dir[1024];
    if (sweep_state_dir(dir, sizeof dir, err) != 0) return -1;
    int n = snprintf(out, len, "%s/%s.json", dir, id);
    if (n < 0 || (size_t)n >= len)
        return ib_error_set(err, IB_EXIT_RUNTIME, "sweep: the state file's path is too long");
    return 0;
}

void sweep_candidate_key_name(const sweep_state *st, size_t i, char *out, size_t len)
{
    char spec[sizeof st->cand[i].c.spec];
    snprintf(spec, sizeof spec, "%s", st->cand[i].c.spec);
    for (char *p = spec; *p; p++)
        if (*p == ':') *p = '-';
    snprintf(out, len, "%zu-%s", i, spec);
}

sweep_state_instance *sweep_state_add_instance(sweep_state *st, ib_error *err)
{
    if (st->n_inst == st->cap_inst) {
        size_t cap = st->cap_inst ? 2 * st->cap_inst : 16;
        sweep_state_instance *v = realloc(st->inst, cap * sizeof *v);
        if (!v) {
            ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            return NULL;
        }
        st->inst = v;
        st->cap_inst = cap;
    }
    sweep_state_instance *in = &st->inst[st->n_inst++];
    memset(in, 0, sizeof *in);
    snprintf(in->state, sizeof in->state, "unknown");
    return in;
}

void sweep_state_free(sweep_state *st)
{
    free(st->cand);
    free(st->inst);
    memset(st, 0, sizeof *st);
}

double sweep_state_cost(const sweep_state *st, time_t now, size_t *unpriced, size_t *estimated)
{
    double usd = 0;
    size_t np = 0, ne = 0;
    for (size_t i = 0; i < st->n_inst; i++) {
        const sweep_state_instance *in = &st->inst[i];
        if (!in->launched || in->candidate < 0 || (size_t)in->candidate >= st->n_cand) continue;
        double price = st->cand[in->candidate].usd_per_hour;
        double s;
        if (in->ended) {
            s = in->ended > in->launched ? (double)(in->ended - in->launched) : 0;
        } else {
            /* The end is unknown (the process died, EC2 forgot the instance): its own shutdown
             * timer ended it by launch + the bound the plan used (its timer's whole minutes and the
             * boot allowance), so the cost is never counted past that. */
            double cap =
                isfinite(st->max_minutes) && st->max_minutes > 0 ? sweep_billed_minutes_max(st->max_minutes) * 60 : 0;
            s = now > in->launched ? (double)(now - in->launched) : 0;
            if (s > cap) s = cap;
            ne++;
        }
        if (isfinite(price)) usd += s * price / 3600.0;
        else np++;
    }
    if (unpriced) *unpriced = np;
    if (estimated) *estimated = ne;
    return usd;
}

/* ---- writing ---------------------------------------------------------------------------------- */
static void add_time(cJSON *o, const char *key, time_t t)
{
    if (!t) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    char iso[32];
    util_utc_iso8601(t, iso);
    cJSON_AddStringToObject(o, key, iso);
}

static void add_number(cJSON *o, const char *key, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

char *sweep_state_json(const sweep_state *st)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    cJSON_AddStringToObject(doc, "schema", "instbench.sweep-state/v1");
    cJSON_AddStringToObject(doc, "id", st->id);
    cJSON_AddStringToObject(doc, "region", st->region);
    cJSON_AddStringToObject(doc, "s3_bucket", st->s3_bucket);
    cJSON_AddStringToObject(doc, "s3_prefix", st->s3_prefix);
    add_number(doc, "max_minutes", st->max_minutes);
    add_number(doc, "max_cost_usd", st->max_cost_usd);
    add_time(doc, "created", st->created);
    add_time(doc, "finished", st->finished);
    cJSON_AddStringToObject(doc, "phase", st->phase);
    cJSON_AddStringToObject(doc, "note", st->note);
    if (st->sg_name[0]) {
        cJSON *g = cJSON_AddObjectToObject(doc, "security_group");
        cJSON_AddStringToObject(g, "name", st->sg_name);
        cJSON_AddStringToObject(g, "id", st->sg_id);
        cJSON_AddBoolToObject(g, "deleted", st->sg_deleted);
    } /* absent when the sweep made none: a state file of an older sweep reads and writes the same */
    cJSON *cands = cJSON_AddArrayToObject(doc, "candidates");
    for (size_t i = 0; cands && i < st->n_cand; i++) {
        const sweep_state_candidate *c = &st->cand[i];
        cJSON *o = cJSON_CreateObject();
        if (!o) break;
        cJSON_AddItemToArray(cands, o);
        sweep_candidate_json(o, &c->c);
        cJSON_AddStringToObject(o, "ami", c->ami);
        add_number(o, "usd_per_hour_per_node", c->usd_per_hour);
        cJSON_AddStringToObject(o, "price_source", c->price_source);
        cJSON_AddStringToObject(o, "outcome", sweep_outcome_name(c->outcome));
        cJSON_AddStringToObject(o, "reason", c->reason);
        cJSON_AddStringToObject(o, "placement_group", c->placement_group);
        cJSON_AddBoolToObject(o, "placement_group_deleted", c->placement_group_deleted);
        add_time(o, "launched", c->launched);
        add_time(o, "ended", c->ended);
        cJSON_AddStringToObject(o, "result_path", c->result_path);
        if (c->efa.n) {
            cJSON *e = cJSON_AddObjectToObject(o, "efa");
            cJSON *ifs = cJSON_AddArrayToObject(e, "interfaces");
            for (int k = 0; ifs && k < c->efa.n; k++) {
                cJSON *x = cJSON_CreateObject();
                if (!x) break;
                cJSON_AddItemToArray(ifs, x);
                cJSON_AddNumberToObject(x, "network_card", c->efa.nic[k].card);
                cJSON_AddNumberToObject(x, "device_index", c->efa.nic[k].device);
                cJSON_AddStringToObject(x, "interface_type", c->efa.nic[k].type);
                cJSON_AddBoolToObject(x, "public_ip", c->efa.nic[k].public_ip);
            }
        }
    }
    cJSON *insts = cJSON_AddArrayToObject(doc, "instances");
    for (size_t i = 0; insts && i < st->n_inst; i++) {
        const sweep_state_instance *in = &st->inst[i];
        cJSON *o = cJSON_CreateObject();
        if (!o) break;
        cJSON_AddItemToArray(insts, o);
        cJSON_AddStringToObject(o, "id", in->id);
        cJSON_AddNumberToObject(o, "candidate", in->candidate);
        cJSON_AddNumberToObject(o, "launch_index", in->launch_index);
        cJSON_AddStringToObject(o, "state", in->state);
        cJSON_AddStringToObject(o, "az", in->az);
        cJSON_AddStringToObject(o, "private_ip", in->private_ip);
        cJSON_AddStringToObject(o, "state_reason", in->state_reason);
        add_time(o, "launched", in->launched);
        add_time(o, "ended", in->ended);
        if (in->eip_allocation[0]) {
            cJSON *e = cJSON_AddObjectToObject(o, "elastic_ip");
            cJSON_AddStringToObject(e, "allocation_id", in->eip_allocation);
            cJSON_AddStringToObject(e, "public_ip", in->eip_public_ip);
            cJSON_AddBoolToObject(e, "associated", in->eip_associated);
            cJSON_AddBoolToObject(e, "released", in->eip_released);
        }
    }
    char *text = (cands && insts) ? util_json_print(doc) : NULL;
    cJSON_Delete(doc);
    return text;
}

int sweep_state_save(const sweep_state *st, ib_error *err)
{
    char path[1200];
    if (sweep_state_path(st->id, path, sizeof path, err) != 0) return -1;
    char *text = sweep_state_json(st);
    if (!text) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    int rc = util_write_file_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}

/* ---- reading (hostile input) ------------------------------------------------------------------ */
typedef struct reader {
    ib_error *err;
    const char *where; /* "candidates[2]" for messages */
    int bad;
} reader;

static void bad(reader *r, const char *key, const char *why)
{
    if (!r->bad) ib_error_set(r->err, IB_EXIT_RUNTIME, "%s.%s %s", r->where, key, why);
    r->bad = 1;
}

/* A string of at most CAP-1 bytes without control characters; "" when absent and OPTIONAL. */
static void get_str(reader *r, const cJSON *o, const char *key, char *out, size_t cap, int optional)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    out[0] = '\0';
    if (!v || cJSON_IsNull(v)) {
        if (!optional) bad(r, key, "is missing");
        return;
    }
    if (!cJSON_IsString(v)) return bad(r, key, "is not a string");
    size_t n = strlen(v->valuestring);
    if (n >= cap) return bad(r, key, "is too long");
    for (size_t i = 0; i < n; i++) /* the reason and note may quote a log's lines; they are escaped when shown */
        if ((unsigned char)v->valuestring[i] < 0x20 && strcmp(key, "reason") && strcmp(key, "note"))
            return bad(r, key, "has control characters");
    memcpy(out, v->valuestring, n + 1);
}

static double get_num(reader *r, const cJSON *o, const char *key, double lo, double hi, int nullable)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (nullable && (!v || cJSON_IsNull(v))) return NAN;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi) {
        bad(r, key, "is not a number in range");
        return NAN;
    }
    return v->valuedouble;
}

/* A whole number in [LO, HI]: 1.7 is no network card (a cast would make it card 1 silently). */
static int get_int(reader *r, const cJSON *o, const char *key, int lo, int hi)
{
    double v = get_num(r, o, key, lo, hi, 0);
    if (!r->bad && v != (double)(int)v) bad(r, key, "is not a whole number");
    return r->bad ? 0 : (int)v;
}

/* The earliest time a state file may hold: instbench wrote none before it (0, the epoch, is how
 * the state says "not yet", written as null, so a time there is no time it wrote either). */
#define STATE_EARLIEST_TIME 1577836800 /* 2020-01-01T00:00:00Z */

static time_t get_time(reader *r, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return 0;
    time_t t;
    if (!cJSON_IsString(v) || util_parse_iso8601(v->valuestring, &t) != 0) {
        bad(r, key, "is not a UTC time like 2026-11-25T21:30:05Z");
        return 0;
    }
    if (t < STATE_EARLIEST_TIME) {
        bad(r, key, "is before 2020: not a time instbench wrote (a time not known yet is null)");
        return 0;
    }
    return t;
}

static int name_valid(const char *s)
{
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:") == strlen(s);
}

static sweep_outcome outcome_of(const char *s)
{
    for (int i = 0; i < SWEEP_OUTCOME_COUNT; i++)
        if (!strcmp(s, outcome_names[i])) return (sweep_outcome)i;
    return SWEEP_OUTCOME_COUNT;
}

static int get_bool(reader *r, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsBool(v)) bad(r, key, "is not true or false");
    return cJSON_IsTrue(v);
}

/* "efa": null, or {"interfaces": [{network_card, device_index, interface_type, public_ip}]}: the
 * layout the launch sends, so every entry is checked as EC2 would take it. */
static void read_efa(reader *r, const cJSON *o, sweep_efa *e)
{
    memset(e, 0, sizeof *e);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "efa");
    if (!v || cJSON_IsNull(v)) return;
    const cJSON *ifs = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "interfaces") : NULL;
    if (!cJSON_IsArray(ifs) || cJSON_GetArraySize(ifs) < 1 || cJSON_GetArraySize(ifs) > EC2_NICS_MAX)
        return bad(r, "efa", "is not a list of 1 to 64 interfaces");
    for (const cJSON *x = ifs->child; x && !r->bad; x = x->next) {
        ec2_nic *n = &e->nic[e->n++];
        if (!cJSON_IsObject(x)) return bad(r, "efa", "has an interface that is not an object");
        n->card = get_int(r, x, "network_card", 0, EC2_CARDS_MAX - 1);
        n->device = get_int(r, x, "device_index", 0, 1);
        for (int k = 0; !r->bad && k < e->n - 1; k++) /* EC2 takes one interface per (card, device) */
            if (e->nic[k].card == n->card && e->nic[k].device == n->device)
                return bad(r, "efa", "gives two interfaces the same network_card and device_index");
        get_str(r, x, "interface_type", n->type, sizeof n->type, 0);
        n->public_ip = get_bool(r, x, "public_ip");
        if (!r->bad && strcmp(n->type, "interface") && strcmp(n->type, "efa") && strcmp(n->type, "efa-only"))
            return bad(r, "efa", "has an interface type EC2 does not take");
        if (strcmp(n->type, "interface")) e->devices++;
    }
    e->elastic_ip = e->n > 1;
}

static void read_candidate(reader *r, const cJSON *o, sweep_state_candidate *c)
{
    char market[16], outcome[24];
    get_str(r, o, "spec", c->c.spec, sizeof c->c.spec, 0);
    get_str(r, o, "instance_type", c->c.type, sizeof c->c.type, 0);
    c->c.nodes = get_int(r, o, "nodes", 1, SWEEP_NODES_MAX);
    get_str(r, o, "market", market, sizeof market, 0);
    c->c.spot = !strcmp(market, "spot");
    c->c.block = !strcmp(market, "capacity-block");
    if (!r->bad && !c->c.spot && !c->c.block && strcmp(market, "on-demand"))
        bad(r, "market", "is neither spot, on-demand nor capacity-block");
    if (c->c.block) {
        get_str(r, o, "capacity_reservation", c->c.reservation, sizeof c->c.reservation, 0);
        if (!r->bad && !aws_capacity_reservation_id_valid(c->c.reservation))
            bad(r, "capacity_reservation", "is not a Capacity Reservation id like cr-0123456789abcdef0");
        get_str(r, o, "capacity_reservation_az", c->c.reservation_az, sizeof c->c.reservation_az, 0);
        if (!r->bad && (!c->c.reservation_az[0] || !name_valid(c->c.reservation_az)))
            bad(r, "capacity_reservation_az", "is not an availability zone");
    }
    get_str(r, o, "ami", c->ami, sizeof c->ami, 1);
    if (!r->bad && c->ami[0] && !aws_ami_id_valid(c->ami)) bad(r, "ami", "is not an AMI id like ami-0123456789abcdef0");
    c->usd_per_hour = get_num(r, o, "usd_per_hour_per_node", 0, 1e6, 1);
    get_str(r, o, "price_source", c->price_source, sizeof c->price_source, 1);
    get_str(r, o, "outcome", outcome, sizeof outcome, 0);
    if (!r->bad && (c->outcome = outcome_of(outcome)) == SWEEP_OUTCOME_COUNT) bad(r, "outcome", "is not an outcome");
    get_str(r, o, "reason", c->reason, sizeof c->reason, 1);
    get_str(r, o, "placement_group", c->placement_group, sizeof c->placement_group, 1);
    if (!r->bad && c->placement_group[0] && !aws_placement_group_name_valid(c->placement_group))
        bad(r, "placement_group", "is not a placement group name");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "placement_group_deleted");
    c->placement_group_deleted = cJSON_IsTrue(d);
    c->launched = get_time(r, o, "launched");
    c->ended = get_time(r, o, "ended");
    get_str(r, o, "result_path", c->result_path, sizeof c->result_path, 1);
    read_efa(r, o, &c->efa);
    if (!r->bad && !name_valid(c->c.spec)) bad(r, "spec", "has characters no candidate spec has");
    if (!r->bad && !name_valid(c->c.type)) bad(r, "instance_type", "has characters no instance type has");
}

static void read_instance(reader *r, const cJSON *o, sweep_state_instance *in, size_t n_cand)
{
    get_str(r, o, "id", in->id, sizeof in->id, 0);
    if (!r->bad && !aws_instance_id_valid(in->id)) bad(r, "id", "is not an EC2 instance id like i-0123456789abcdef0");
    if (!n_cand) return bad(r, "candidate", "names a candidate but the state has none");
    in->candidate = get_int(r, o, "candidate", 0, (int)n_cand - 1);
    in->launch_index = get_int(r, o, "launch_index", 0, SWEEP_NODES_MAX - 1);
    get_str(r, o, "state", in->state, sizeof in->state, 0);
    get_str(r, o, "az", in->az, sizeof in->az, 1);
    get_str(r, o, "private_ip", in->private_ip, sizeof in->private_ip, 1);
    if (!r->bad && in->private_ip[0] && !aws_ipv4_valid(in->private_ip))
        bad(r, "private_ip", "is not an IPv4 address like 10.0.0.1");
    get_str(r, o, "state_reason", in->state_reason, sizeof in->state_reason, 1);
    in->launched = get_time(r, o, "launched");
    in->ended = get_time(r, o, "ended");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "elastic_ip");
    if (e && !cJSON_IsNull(e)) {
        if (!cJSON_IsObject(e)) return bad(r, "elastic_ip", "is not an object");
        get_str(r, e, "allocation_id", in->eip_allocation, sizeof in->eip_allocation, 0);
        get_str(r, e, "public_ip", in->eip_public_ip, sizeof in->eip_public_ip, 1);
        in->eip_associated = get_bool(r, e, "associated");
        in->eip_released = get_bool(r, e, "released");
        if (!r->bad && !aws_eip_allocation_id_valid(in->eip_allocation))
            bad(r, "elastic_ip.allocation_id", "is not an Elastic IP allocation id like eipalloc-0123456789abcdef0");
        if (!r->bad && in->eip_public_ip[0] && !aws_ipv4_valid(in->eip_public_ip))
            bad(r, "elastic_ip.public_ip", "is not an IPv4 address like 203.0.113.7");
    }
    if (!r->bad && !name_valid(in->state)) bad(r, "state", "has characters EC2 never sends");
    if (!r->bad && !name_valid(in->az)) bad(r, "az", "has characters EC2 never sends");
    if (!r->bad && !name_valid(in->state_reason)) bad(r, "state_reason", "has characters EC2 never sends");
}

/* The same id twice would count one instance's cost and addresses twice (five copies of one
 * instance: five addresses, five times its cost), or release one Elastic IP twice: refused.
 * Sorted copies keep this O(n log n) for the 16384 instances a state may hold. */
typedef struct keyed {
    const char *key;
    size_t i;
} keyed;
static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static void refuse_duplicates(reader *r, const sweep_state *st)
{
    static const char *const keys[] = {"id", "elastic_ip.allocation_id"};
    if (st->n_inst < 2) return;
    keyed *v = malloc(st->n_inst * sizeof *v);
    if (!v) return bad(r, "instances", "does not fit in memory");
    for (int f = 0; f < 2 && !r->bad; f++) {
        for (size_t i = 0; i < st->n_inst; i++) v[i] = (keyed){f ? st->inst[i].eip_allocation : st->inst[i].id, i};
        qsort(v, st->n_inst, sizeof *v, cmp_keyed);
        for (size_t k = 1; k < st->n_inst && !r->bad; k++) {
            if (!v[k].key[0] || strcmp(v[k].key, v[k - 1].key)) continue;
            char where[96], why[96];
            snprintf(where, sizeof where, "instances[%zu]", v[k].i);
            snprintf(why, sizeof why, "is the same as instances[%zu]'s", v[k - 1].i);
            r->where = where;
            bad(r, keys[f], why);
        }
    }
    free(v);
}

int sweep_state_parse(const char *json, size_t len, sweep_state *st, ib_error *err)
{
    memset(st, 0, sizeof *st);
    if (len > STATE_MAX_BYTES)
        return ib_error_set(err, IB_EXIT_RUNTIME, "the state file is over %u bytes", STATE_MAX_BYTES);
    if (util_json_escaped_nul(json, len))
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "the state file has \\u0000 in a string (readers would disagree on it)");
    if (util_json_depth(json, len) > UTIL_JSON_MAX_DEPTH)
        return ib_error_set(err, IB_EXIT_RUNTIME, "the state file is nested deeper than %d levels (a state is 5)",
                            UTIL_JSON_MAX_DEPTH);
    cJSON *doc = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return ib_error_set(err, IB_EXIT_RUNTIME, "the state file is not a JSON object");
    }
    char dup[256];
    if (util_json_duplicate_key(doc, dup, sizeof dup)) {
        cJSON_Delete(doc);
        return ib_error_set(err, IB_EXIT_RUNTIME, "the state file gives the key %s twice", dup);
    }
    reader r = {err, "state", 0};
    char schema[64];
    get_str(&r, doc, "schema", schema, sizeof schema, 0);
    if (!r.bad && strcmp(schema, "instbench.sweep-state/v1")) bad(&r, "schema", "is not instbench.sweep-state/v1");
    st->version = SWEEP_STATE_VERSION;
    get_str(&r, doc, "id", st->id, sizeof st->id, 0);
    if (!r.bad && !sweep_id_valid(st->id)) bad(&r, "id", "is not a sweep id");
    get_str(&r, doc, "region", st->region, sizeof st->region, 0);
    /* the check --region has (sweep_flags_check): cleanup asks EC2 there, status names it */
    if (!r.bad &&
        (!names_region_ok(st->region) || (!aws_region_known(st->region) && !prices_catalogue_has_region(st->region)))) {
        char why[128];
        snprintf(why, sizeof why, "'%s' is not an AWS region instbench knows (--region refuses it too)", st->region);
        bad(&r, "region", why);
    }
    get_str(&r, doc, "s3_bucket", st->s3_bucket, sizeof st->s3_bucket, 1);
    get_str(&r, doc, "s3_prefix", st->s3_prefix, sizeof st->s3_prefix, 1);
    st->max_minutes = get_num(&r, doc, "max_minutes", 0, 1e7, 0);
    st->max_cost_usd = get_num(&r, doc, "max_cost_usd", 0, 1e12, 1);
    st->created = get_time(&r, doc, "created");
    st->finished = get_time(&r, doc, "finished");
    get_str(&r, doc, "phase", st->phase, sizeof st->phase, 0);
    if (!r.bad && (!st->phase[0] || !name_valid(st->phase))) bad(&r, "phase", "is not a phase");
    get_str(&r, doc, "note", st->note, sizeof st->note, 1);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(doc, "security_group");
    if (!r.bad && g && !cJSON_IsNull(g)) {
        if (!cJSON_IsObject(g)) bad(&r, "security_group", "is not an object");
        r.where = "state.security_group"; /* messages name the field: state.security_group.id */
        get_str(&r, g, "name", st->sg_name, sizeof st->sg_name, 0);
        if (!r.bad && (!st->sg_name[0] || !name_valid(st->sg_name))) bad(&r, "name", "is not a security group name");
        get_str(&r, g, "id", st->sg_id, sizeof st->sg_id, 1);
        if (!r.bad && st->sg_id[0] && !aws_security_group_id_valid(st->sg_id))
            bad(&r, "id", "is not a security group id like sg-0123456789abcdef0");
        st->sg_deleted = get_bool(&r, g, "deleted");
        r.where = "state";
    }
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(doc, "candidates");
    const cJSON *insts = cJSON_GetObjectItemCaseSensitive(doc, "instances");
    if (!r.bad && (!cJSON_IsArray(cands) || !cJSON_IsArray(insts))) bad(&r, "candidates", "or instances is not a list");
    size_t nc = r.bad ? 0 : (size_t)cJSON_GetArraySize(cands), ni = r.bad ? 0 : (size_t)cJSON_GetArraySize(insts);
    if (!r.bad && (nc > SWEEP_MAX_CANDIDATES || ni > STATE_MAX_INSTANCES))
        bad(&r, "candidates", "or instances has too many entries");
    if (!r.bad && nc && !(st->cand = calloc(nc, sizeof *st->cand))) bad(&r, "candidates", "does not fit in memory");
    char where[64];
    size_t k = 0;
    for (const cJSON *o = cands ? cands->child : NULL; !r.bad && o && k < nc; o = o->next, k++) {
        snprintf(where, sizeof where, "candidates[%zu]", k);
        r.where = where;
        if (!cJSON_IsObject(o)) bad(&r, "", "is not an object");
        else read_candidate(&r, o, &st->cand[k]);
    }
    st->n_cand = r.bad ? 0 : nc;
    k = 0;
    for (const cJSON *o = insts ? insts->child : NULL; !r.bad && o && k < ni; o = o->next, k++) {
        snprintf(where, sizeof where, "instances[%zu]", k);
        r.where = where;
        sweep_state_instance *in = sweep_state_add_instance(st, err);
        if (!in) r.bad = 1;
        else if (!cJSON_IsObject(o)) bad(&r, "", "is not an object");
        else read_instance(&r, o, in, nc);
    }
    if (!r.bad) refuse_duplicates(&r, st);
    cJSON_Delete(doc);
    if (r.bad) {
        sweep_state_free(st);
        return -1;
    }
    return 0;
}

int sweep_state_load(const char *id, sweep_state *st, ib_error *err)
{
    char path[1200];
    memset(st, 0, sizeof *st);
    if (sweep_state_path(id, path, sizeof path, err) != 0) return -1;
    char *text = NULL;
    size_t len = 0;
    if (util_read_regular_file(path, STATE_MAX_BYTES, &text, &len, err) != 0) {
        if (errno == ENOENT) {
            ib_error_set(err, IB_EXIT_USAGE, "no sweep %s here (no %s); `instbench sweep status` lists the sweeps", id,
                         path);
            return 1;
        }
        return -1;
    }
    int rc = sweep_state_parse(text, len, st, err);
    free(text);
    if (rc != 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", path, msg);
    }
    if (strcmp(st->id, id)) {
        sweep_state_free(st);
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: the file names another sweep", path);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int sweep_state_list(char ***ids, size_t *n, ib_error *err)
{
    *ids = NULL;
    *n = 0;
    char dir[1024];
    if (sweep_state_dir(dir, sizeof dir, err) != 0) return -1;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", dir, strerror(errno));
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char id[SWEEP_ID_MAX];
        size_t len = strlen(e->d_name);
        if (len < 6 || len - 5 >= sizeof id || strcmp(e->d_name + len - 5, ".json")) continue;
        memcpy(id, e->d_name, len - 5);
        id[len - 5] = '\0';
        if (!sweep_id_valid(id)) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(*ids, cap * sizeof *v);
            if (!v) break;
            *ids = v;
        }
        if (!((*ids)[*n] = util_strdup(id))) break;
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(*ids, *n, sizeof **ids, cmp_str); /* ids start with the UTC time: oldest first */
    return 0;
}
