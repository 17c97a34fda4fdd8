/* rank/parse.c: one "instbench.result/v1" JSON document -> rank_result, or a one-line reason.
 *
 * Strict on what enters the money arithmetic (samples/s, nodes), lenient on descriptive fields:
 * extra fields are ignored, unknown descriptive fields stay "" / -1.  Reasons never echo more
 * than a short, printable excerpt of the input, so hostile files cannot garble the terminal. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "instbench/names.h"
#include "instbench/rank.h"
#include "rank/internal.h"

static int fail(char *reason, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *reason, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A printable excerpt of untrusted text for messages: at most 40 chars, others as '?'. */
static void excerpt(const char *s, char out[48])
{
    size_t i = 0;
    for (; s[i] && i < 40; i++) out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    out[i] = '\0';
    if (s[i]) strcpy(out + (i > 37 ? 37 : i), "...");
}

/* Characters allowed in identifiers we print and look up (instance types, regions, AZs...). */
static int ident_ok(const char *s, const char *extra)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s)) return 0;
    return 1;
}

/* Optional string field: absent or null -> "" (ok).  Wrong type, too long or (with EXTRA) odd
 * characters -> -1 with a reason naming PATH. */
static int get_str(const cJSON *obj, const char *key, const char *path, char *dst, size_t cap, const char *extra,
                   char *reason, size_t rlen)
{
    dst[0] = '\0';
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsString(v) || !v->valuestring) return fail(reason, rlen, "%s is not a string", path);
    if (strlen(v->valuestring) >= cap) return fail(reason, rlen, "%s is too long", path);
    if (extra && !ident_ok(v->valuestring, extra)) {
        char ex[48];
        excerpt(v->valuestring, ex);
        return fail(reason, rlen, "%s has unexpected characters (\"%s\")", path, ex);
    }
    /* Descriptive text (GPU names) reaches terminals, CSV and SVG: keep it printable ASCII. */
    size_t i = 0;
    for (const char *s = v->valuestring; *s; s++) dst[i++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    dst[i] = '\0';
    return 0;
}

/* A hostname --price could not take (a space, a control character, malformed UTF-8, too long):
 * its name characters kept, each other byte '_', then '-' and 8 hex digits of the raw name's
 * SHA-256, so two such machines stay two configurations ("my laptop" and "gpu box" were one
 * "(unknown type)" row, one median over both) and --price can name each ("my_laptop-688692c4"). */
static int host_stand_in(const char *raw, char *dst, size_t cap)
{
    unsigned char md[32];
    unsigned int n = 0;
    if (cap < 16 || EVP_Digest(raw, strlen(raw), md, &n, EVP_sha256(), NULL) != 1 || n != sizeof md) return -1;
    size_t i = 0, room = cap - 10; /* '-', 8 hex digits, NUL */
    for (const char *p = raw; *p && i < room;) {
        size_t k = util_utf8_name_char(p);
        if (k && i + k <= room) memcpy(dst + i, p, k), i += k, p += k;
        else if (k) break;
        else dst[i++] = '_', p++;
    }
    snprintf(dst + i, cap - i, "-%02x%02x%02x%02x", md[0], md[1], md[2], md[3]);
    return 0;
}

/* instance.hostname as it is: a configuration's key and its --price name, so never a lossy
 * rendering ("büro" and "béro" are two machines, not one "b??ro"); shown escaped.  A name --price
 * could not take gets host_stand_in's; an absent or empty one leaves the machine unnamed. */
static int get_host(const cJSON *inst, char *dst, size_t cap)
{
    dst[0] = '\0';
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(inst, "hostname");
    if (!cJSON_IsString(v) || !v->valuestring || !v->valuestring[0]) return -1;
    size_t n = strlen(v->valuestring);
    if (n >= cap || !util_utf8_name(v->valuestring, n)) return host_stand_in(v->valuestring, dst, cap);
    memcpy(dst, v->valuestring, n + 1);
    return 0;
}

/* Optional integer field in [MIN, MAX]: absent or null -> *out = DFLT. */
static int get_long(const cJSON *obj, const char *key, const char *path, long min, long max, long dflt, long *out,
                    char *reason, size_t rlen)
{
    *out = dflt;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v)) return fail(reason, rlen, "%s is not a number", path);
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < (double)min || d > (double)max)
        return fail(reason, rlen, "%s = %.6g is not an integer in [%ld, %ld]", path, d, min, max);
    *out = (long)d;
    return 0;
}

static const cJSON *get_obj(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsObject(v) ? v : NULL;
}

/* workload.optimizer -> "adam lr 0.001" (" wd X" when X is not 0) for the workload list; only a
 * label (the fingerprint decides what is comparable), so anything odd leaves it "" or unsaid. */
static void describe_optimizer(const cJSON *opt, char *dst, size_t cap)
{
    dst[0] = '\0';
    if (!opt) return;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(opt, "name");
    const cJSON *lr = cJSON_GetObjectItemCaseSensitive(opt, "lr");
    const cJSON *wd = cJSON_GetObjectItemCaseSensitive(opt, "weight_decay");
    if (!cJSON_IsString(name) || !name->valuestring || !name->valuestring[0] || strlen(name->valuestring) > 16 ||
        !ident_ok(name->valuestring, "_-"))
        return;
    size_t n = (size_t)snprintf(dst, cap, "%s", name->valuestring);
    if (cJSON_IsNumber(lr) && isfinite(lr->valuedouble) && n < cap)
        n += (size_t)snprintf(dst + n, cap - n, " lr %.6g", lr->valuedouble);
    if (cJSON_IsNumber(wd) && isfinite(wd->valuedouble) && wd->valuedouble != 0 && n < cap)
        snprintf(dst + n, cap - n, " wd %.6g", wd->valuedouble);
}

/* The optional "price" the user recorded with measure --hourly-cost.  It enters the money
 * arithmetic, so it is held to what rank accepts of any price; a bad one rejects the file. */
static int parse_price(const cJSON *root, rank_result *r, char *reason, size_t rlen)
{
    r->user_usd_per_hour = NAN;
    r->user_market = RANK_ON_DEMAND;
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(root, "price");
    if (!pr || cJSON_IsNull(pr)) return 0;
    if (!cJSON_IsObject(pr)) return fail(reason, rlen, "\"price\" is not an object");
    const cJSON *usd = cJSON_GetObjectItemCaseSensitive(pr, "usd_per_hour");
    if (!cJSON_IsNumber(usd)) return fail(reason, rlen, "price.usd_per_hour is missing or not a number");
    double v = usd->valuedouble;
    if (!isfinite(v) || v < RANK_MIN_USD_PER_HOUR || v > RANK_MAX_USD_PER_HOUR)
        return fail(reason, rlen, "price.usd_per_hour = %.6g is not a price per node-hour in [%g, %g]", v,
                    RANK_MIN_USD_PER_HOUR, RANK_MAX_USD_PER_HOUR);
    char market[16];
    if (get_str(pr, "market", "price.market", market, sizeof market, "-", reason, rlen)) return -1;
    if (!strcmp(market, "spot")) r->user_market = RANK_SPOT;
    else if (market[0] && strcmp(market, "on-demand"))
        return fail(reason, rlen, "price.market \"%s\" is not on-demand or spot", market);
    r->user_usd_per_hour = v;
    return 0;
}

/* The optional "checkpoint" measure timed: only its write time enters rank (the spot model's
 * measured checkpoint cost), so a bad or missing one is "not measured", never a rejected file. */
static void parse_checkpoint(const cJSON *root, rank_result *r)
{
    r->checkpoint_s = NAN;
    const cJSON *ck = get_obj(root, "checkpoint");
    const cJSON *w = ck ? cJSON_GetObjectItemCaseSensitive(ck, "write_s") : NULL;
    if (!cJSON_IsNumber(w) || !isfinite(w->valuedouble) || w->valuedouble < 0 ||
        w->valuedouble > RANK_SPOT_MAX_CHECKPOINT_S)
        return;
    /* a tiny model's checkpoint can take less than the model's smallest delta (Daly's interval
     * needs one above zero) */
    r->checkpoint_s = w->valuedouble < RANK_SPOT_MIN_CHECKPOINT_S ? RANK_SPOT_MIN_CHECKPOINT_S : w->valuedouble;
}

/* measurement.gemm_share (how close the step came to the GEMM rate measured in situ; absent in
 * older results).  Descriptive: a bad value leaves it unknown, never rejects the result. */
static void parse_gemm_share(const cJSON *root, rank_result *r)
{
    r->gemm_share = NAN;
    const cJSON *ms = get_obj(root, "measurement");
    const cJSON *g = ms ? cJSON_GetObjectItemCaseSensitive(ms, "gemm_share") : NULL;
    if (cJSON_IsNumber(g) && g->valuedouble >= 0 && g->valuedouble < 100) r->gemm_share = g->valuedouble;
}

/* tool.revision: the build that measured the run, descriptive (a run of an unknown build still
 * ranks): anything but 40 lower-case hex digits, optionally "-dirty", is unknown. */
static void parse_revision(const cJSON *root, rank_result *r)
{
    const cJSON *tool = get_obj(root, "tool");
    const cJSON *v = tool ? cJSON_GetObjectItemCaseSensitive(tool, "revision") : NULL;
    const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
    size_t n = s ? strspn(s, "0123456789abcdef") : 0;
    if (n == 40 && (!s[40] || !strcmp(s + 40, "-dirty"))) snprintf(r->revision.text, sizeof r->revision.text, "%s", s);
}

/* The optional "communication" measure timed (allreduce sizes ascending): the bus bandwidth at the
 * largest size a DDP bucket (25 MiB) holds, the figure the gradients' allreduces move at, else at
 * the smallest.  Descriptive: a bad entry leaves it unknown, never rejects the result. */
static void parse_busbw(const cJSON *root, rank_result *r)
{
    r->busbw_gbps = NAN;
    const cJSON *cm = get_obj(root, "communication");
    const cJSON *ar = cm ? cJSON_GetObjectItemCaseSensitive(cm, "allreduce") : NULL;
    if (!cJSON_IsArray(ar) || cJSON_GetArraySize(ar) > 64) return;
    double pick = NAN, pick_bytes = 0, small = NAN, small_bytes = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, ar)
    {
        const cJSON *b = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "bytes") : NULL;
        const cJSON *bw = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "busbw_gbps") : NULL;
        if (!cJSON_IsNumber(b) || !cJSON_IsNumber(bw) || !(b->valuedouble > 0) || !isfinite(b->valuedouble) ||
            !(bw->valuedouble >= 0) || !(bw->valuedouble < 1e6))
            return;
        if (b->valuedouble <= 25.0 * 1048576 && b->valuedouble >= pick_bytes) {
            pick = bw->valuedouble;
            pick_bytes = b->valuedouble;
        }
        if (isnan(small) || b->valuedouble < small_bytes) {
            small = bw->valuedouble;
            small_bytes = b->valuedouble;
        }
    }
    r->busbw_gbps = isnan(pick) ? small : pick;
}

static const char *str_at(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

static double num_at(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* rank_result.run_key: SHA-256 of the fields that tell one run from another, one per line.  Two
 * runs never share them all (a run takes seconds; throughput is measured to full precision), and
 * a copy of a run, pretty-printed or as a JSON line, shares every one. */
static void run_key(const cJSON *root, const rank_result *r, unsigned char key[RANK_KEY_BYTES])
{
    const cJSON *inst = cJSON_GetObjectItemCaseSensitive(root, "instance");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "measurement");
    char nums[160];
    snprintf(nums, sizeof nums, "%ld\n%.17g\n%.17g\n%.17g", r->nodes, r->samples_per_second, num_at(ms, "steps"),
             num_at(ms, "duration_s"));
    const char *fields[] = {r->fingerprint,
                            str_at(root, "timestamp"),
                            str_at(inst, "hostname"),
                            r->instance_type,
                            r->region,
                            r->backend,
                            r->accelerator,
                            nums};
    unsigned int n = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    for (size_t i = 0; ok && i < sizeof fields / sizeof *fields; i++)
        ok = EVP_DigestUpdate(ctx, fields[i], strlen(fields[i]) + 1) == 1; /* the NUL separates */
    ok = ok && EVP_DigestFinal_ex(ctx, key, &n) == 1 && n == RANK_KEY_BYTES;
    EVP_MD_CTX_free(ctx);
    if (!ok) memset(key, 0, RANK_KEY_BYTES);
}

/* The run's zone name and ID (instance.availability_zone, .availability_zone_id; the ID only in
 * results written since it was recorded).  They only map a name the user gives to the ID prices
 * use, so a pair that does not hold together (a name outside the run's region, an ID not shaped
 * like one) is left out rather than trusted, and never rejects the result. */
static void zone_pair(const cJSON *inst, rank_result *r)
{
    char name[32], id[32], ignored[64];
    if (get_str(inst, "availability_zone", "", name, sizeof name, "-", ignored, sizeof ignored) ||
        get_str(inst, "availability_zone_id", "", id, sizeof id, "-", ignored, sizeof ignored))
        return;
    if (names_zone_in_region(name, r->region) && names_zone_is_id(id)) {
        memcpy(r->az, name, sizeof r->az);
        memcpy(r->az_id, id, sizeof r->az_id);
    }
}

const char *const rank_warning_codes[RANK_WARN_N] = {"cv_high", "drift",          "mfu_over_100",  "other_processes",
                                                     "steal",   "shared_machine", "gemm_fallback", "other"};

/* Results older than measurement.warning_codes carry only the texts: their fixed openings (as
 * src/bench/result.c has always written them) map to the codes. */
static unsigned warning_from_text(const char *t)
{
    static const struct {
        const char *prefix;
        unsigned bit;
    } map[] = {
        {"step-time CV", RANK_WARN_CV_HIGH},        {"step time drifted", RANK_WARN_DRIFT},
        {"MFU above 100%", RANK_WARN_MFU_OVER_100}, {"other processes used", RANK_WARN_OTHER_PROCESSES},
        {"hypervisor steal", RANK_WARN_STEAL},      {"load average above", RANK_WARN_SHARED_MACHINE},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strncmp(t, map[i].prefix, strlen(map[i].prefix))) return map[i].bit;
    return RANK_WARN_OTHER;
}

static unsigned warning_from_code(const char *c)
{
    for (unsigned b = 0; b + 1 < RANK_WARN_N; b++)
        if (!strcmp(c, rank_warning_codes[b])) return 1u << b;
    return RANK_WARN_OTHER;
}

/* Run quality (descriptive: a malformed field leaves it unknown, never loses the result): the
 * step-time CV and the warnings, by code where the result has them, else by text.  An MFU above
 * 1 is flagged whatever the warnings say: it means the timing or the peak is wrong. */
static void quality(const cJSON *ms, rank_result *r)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(ms, "step_time_s");
    const cJSON *cv = cJSON_IsObject(st) ? cJSON_GetObjectItemCaseSensitive(st, "cv") : NULL;
    r->cv = cJSON_IsNumber(cv) && isfinite(cv->valuedouble) && cv->valuedouble >= 0 ? cv->valuedouble : NAN;
    r->warnings = 0;
    const cJSON *codes = cJSON_GetObjectItemCaseSensitive(ms, "warning_codes");
    const cJSON *texts = cJSON_GetObjectItemCaseSensitive(ms, "warnings");
    const cJSON *w;
    if (cJSON_IsArray(codes)) {
        cJSON_ArrayForEach(w, codes) if (cJSON_IsString(w) && w->valuestring) r->warnings |=
            warning_from_code(w->valuestring);
    } else if (cJSON_IsArray(texts)) {
        cJSON_ArrayForEach(w, texts) if (cJSON_IsString(w) && w->valuestring) r->warnings |=
            warning_from_text(w->valuestring);
    }
    const cJSON *mfu = cJSON_GetObjectItemCaseSensitive(ms, "mfu");
    if (cJSON_IsNumber(mfu) && mfu->valuedouble > 1) r->warnings |= RANK_WARN_MFU_OVER_100;
}

static int parse_tree(const cJSON *root, rank_result *r, char *reason, size_t rlen)
{
    char ex[48];
    memset(r, 0, sizeof *r);
    if (!cJSON_IsObject(root)) return fail(reason, rlen, "not a JSON object");
    /* cJSON would read the first of two equal keys, jq and Python the last: refuse the file. */
    char dup[256];
    if (util_json_duplicate_key(root, dup, sizeof dup)) {
        excerpt(dup, ex);
        return fail(reason, rlen, "key \"%s\" is given twice (JSON readers disagree on which counts)", ex);
    }

    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!schema) return fail(reason, rlen, "no \"schema\" field: not an instbench result");
    if (!cJSON_IsString(schema) || !schema->valuestring) return fail(reason, rlen, "\"schema\" is not a string");
    if (strcmp(schema->valuestring, RANK_RESULT_SCHEMA) != 0) {
        excerpt(schema->valuestring, ex);
        if (!strncmp(schema->valuestring, "instbench.result/", 17))
            return fail(reason, rlen, "unsupported result schema \"%s\" (this build reads %s)", ex, RANK_RESULT_SCHEMA);
        return fail(reason, rlen, "not an instbench result (schema \"%s\")", ex);
    }

    const cJSON *wl = get_obj(root, "workload");
    if (!wl) return fail(reason, rlen, "missing \"workload\" object");
    if (get_str(wl, "fingerprint", "workload.fingerprint", r->fingerprint, sizeof r->fingerprint, "", reason, rlen))
        return -1;
    if (!r->fingerprint[0]) return fail(reason, rlen, "missing workload.fingerprint");
    if (get_str(wl, "model", "workload.model", r->model, sizeof r->model, "._-", reason, rlen) ||
        get_str(wl, "precision", "workload.precision", r->precision, sizeof r->precision, "._-", reason, rlen) ||
        get_str(wl, "data", "workload.data", r->data, sizeof r->data, "._-", reason, rlen) ||
        get_long(wl, "batch_size_per_device", "workload.batch_size_per_device", 1, 1L << 40, -1, &r->batch_per_device,
                 reason, rlen) ||
        get_long(wl, "global_batch_size", "workload.global_batch_size", 1, 1L << 50, -1, &r->global_batch, reason,
                 rlen))
        return -1;
    describe_optimizer(get_obj(wl, "optimizer"), r->optimizer, sizeof r->optimizer);
    /* the parameter count only sizes rank's default checkpoint cost: a bad one is unknown, not fatal */
    char ignored[128];
    if (get_long(wl, "params", "workload.params", 1, 1L << 50, -1, &r->params, ignored, sizeof ignored)) r->params = -1;

    const cJSON *ms = get_obj(root, "measurement");
    if (!ms) return fail(reason, rlen, "missing \"measurement\" object");
    const cJSON *sps = cJSON_GetObjectItemCaseSensitive(ms, "samples_per_second");
    if (!sps || cJSON_IsNull(sps)) return fail(reason, rlen, "missing measurement.samples_per_second");
    if (!cJSON_IsNumber(sps)) return fail(reason, rlen, "measurement.samples_per_second is not a number");
    double v = sps->valuedouble;
    if (!isfinite(v)) return fail(reason, rlen, "measurement.samples_per_second is not finite");
    if (v <= 0) return fail(reason, rlen, "measurement.samples_per_second = %.6g is not positive", v);
    if (v < RANK_MIN_SAMPLES_PER_SECOND)
        return fail(reason, rlen, "measurement.samples_per_second = %.6g is implausibly small", v);
    if (v > RANK_MAX_SAMPLES_PER_SECOND)
        return fail(reason, rlen, "measurement.samples_per_second = %.6g is implausibly large", v);
    r->samples_per_second = v;

    const cJSON *topo = get_obj(root, "topology");
    if (!topo) return fail(reason, rlen, "missing \"topology\" object");
    long nodes = 0, count = 0;
    if (get_long(topo, "nodes", "topology.nodes", 1, RANK_MAX_NODES, 0, &nodes, reason, rlen)) return -1;
    if (nodes == 0) return fail(reason, rlen, "missing topology.nodes");
    /* descriptive: an odd transport is "not recorded", never a rejected result */
    r->network[0] = '\0';
    const cJSON *nw = cJSON_GetObjectItemCaseSensitive(topo, "network");
    const cJSON *tr = cJSON_IsObject(nw) ? cJSON_GetObjectItemCaseSensitive(nw, "transport") : NULL;
    if (cJSON_IsString(tr) && tr->valuestring) {
        static const char *const known[] = {"efa", "infiniband", "socket", "other", "unknown"};
        for (size_t k = 0; k < sizeof known / sizeof *known; k++)
            if (!strcmp(tr->valuestring, known[k])) snprintf(r->network, sizeof r->network, "%s", known[k]);
    }

    const cJSON *inst = cJSON_GetObjectItemCaseSensitive(root, "instance");
    if (!inst) return fail(reason, rlen, "missing \"instance\" object");
    if (!cJSON_IsNull(inst)) {
        if (!cJSON_IsObject(inst)) return fail(reason, rlen, "\"instance\" is not an object");
        if (get_str(inst, "type", "instance.type", r->instance_type, sizeof r->instance_type, ".-", reason, rlen) ||
            get_str(inst, "region", "instance.region", r->region, sizeof r->region, "-", reason, rlen) ||
            get_str(inst, "market", "instance.market", r->market, sizeof r->market, "-", reason, rlen) ||
            get_long(inst, "count", "instance.count", 1, RANK_MAX_NODES, 1, &count, reason, rlen))
            return -1;
        /* Descriptive (it names machines off EC2): an odd or overlong hostname is renamed, an
         * absent one leaves the machine unnamed, instead of losing the result. */
        if (get_host(inst, r->host, sizeof r->host)) r->host[0] = '\0';
        zone_pair(inst, r);
    }
    /* count records an N-node cluster when identity could not be read on every node. */
    r->nodes = nodes > count ? nodes : count;
    r->measured_nodes = nodes;
    r->identity_mismatch = -1;
    const cJSON *mm = cJSON_IsObject(inst) ? cJSON_GetObjectItemCaseSensitive(inst, "identity_mismatch") : NULL;
    if (cJSON_IsBool(mm)) r->identity_mismatch = cJSON_IsTrue(mm);
    quality(ms, r);
    if (parse_price(root, r, reason, rlen)) return -1;

    r->accelerator_count = 0;
    r->vcpus = -1;
    const cJSON *hw = get_obj(root, "hardware");
    if (hw) {
        if (get_str(hw, "backend", "hardware.backend", r->backend, sizeof r->backend, "_-", reason, rlen) ||
            get_long(hw, "accelerator_count", "hardware.accelerator_count", 0, 4096, 0, &r->accelerator_count, reason,
                     rlen) ||
            get_long(hw, "vcpus", "hardware.vcpus", 1, 1L << 20, -1, &r->vcpus, reason, rlen))
            return -1;
        /* the attention kernels are the same work done differently, not other work (the
         * fingerprint leaves them out), but a fused and an unfused run are not one median */
        if (get_str(hw, "attention", "hardware.attention", r->attention, sizeof r->attention, "_-", reason, rlen))
            return -1;
        /* cuDNN's non-deterministic backward is another kernel than its deterministic one (issue
         * 37): marked, so the two are never one median and a row says which it ran */
        const cJSON *cd = cJSON_GetObjectItemCaseSensitive(hw, "cudnn");
        if (!strcmp(r->attention, "cudnn") && cJSON_IsObject(cd) &&
            cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cd, "deterministic")))
            snprintf(r->attention, sizeof r->attention, "cudnn-nondet");
        const cJSON *devs = cJSON_GetObjectItemCaseSensitive(hw, "devices");
        const cJSON *d0 = cJSON_IsArray(devs) ? cJSON_GetArrayItem(devs, 0) : NULL;
        if (cJSON_IsObject(d0) &&
            get_str(d0, "name", "hardware.devices[0].name", r->accelerator, sizeof r->accelerator, NULL, reason, rlen))
            return -1;
    }

    parse_revision(root, r);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(root, "timestamp");
    if (cJSON_IsString(ts) && ts->valuestring && util_parse_iso8601(ts->valuestring, &r->timestamp) != 0)
        r->timestamp = 0;
    parse_checkpoint(root, r);
    parse_busbw(root, r);
    parse_gemm_share(root, r);
    run_key(root, r, r->run_key);
    return 0;
}

int rank_parse_result(const char *json, size_t len, rank_result *out, char *reason, size_t rlen)
{
    if (len == 0) return fail(reason, rlen, "empty");
    if (memchr(json, '\0', len)) return fail(reason, rlen, "binary data, not JSON");
    size_t nul = util_json_escaped_nul(json, len);
    if (nul)
        return fail(reason, rlen, "\\u0000 in a string near byte %zu (JSON readers disagree on what follows it)",
                    nul - 1);
    if (util_json_depth(json, len) > UTIL_JSON_MAX_DEPTH)
        return fail(reason, rlen, "nested deeper than %d levels (no result is)", UTIL_JSON_MAX_DEPTH);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        size_t at = end && end >= json ? (size_t)(end - json) : 0;
        return fail(reason, rlen, "invalid JSON (truncated or corrupt near byte %zu)", at);
    }
    for (const char *p = end; p && p < json + len; p++)
        if (!isspace((unsigned char)*p)) {
            cJSON_Delete(root);
            return fail(reason, rlen, "trailing data after the JSON document (byte %zu)", (size_t)(p - json));
        }
    int rc = parse_tree(root, out, reason, rlen);
    cJSON_Delete(root);
    return rc;
}
