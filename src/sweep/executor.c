/* sweep/executor: `sweep run`'s work on AWS.  The order is the cost discipline:
 *   1. the state file exists before anything is created (the caller saved it; saved again here at
 *      every change);
 *   2. the source archive is uploaded once under its content-addressed key;
 *   3. per candidate: presigned URLs, the user data, for an EFA candidate its security group
 *      (network.c, once per sweep), a cluster placement group for N > 1 nodes (its name recorded
 *      before it is created), RunInstances with a ClientToken (and the EFA interfaces) in the
 *      default subnets one zone after another on capacity errors, an Elastic IP per node of
 *      several interfaces, node 0's address to the rendezvous key;
 *   4. polls of EC2 and S3 until every candidate has an outcome or its --max-minutes passed (the
 *      Elastic IPs associated as their interfaces attach);
 *   5. whatever happened: every instance terminated and confirmed, then the Elastic IPs released,
 *      the EFA security group and the placement groups deleted.
 * A signal only sets *o->stop; every loop here looks at it and goes to step 5. */
#include "sweep/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instbench/prices.h"
#include "instbench/util.h"

#define URL_MARGIN_S 3600 /* presigned URLs outlive the instance's own timer by an hour */
#define ENDED_POLLS 3     /* polls that see a node ended before its candidate fails (S3 may lag) */

static const char *const capacity_codes[] = {"InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded",
                                             "Unsupported", "SpotMaxPriceTooLow", NULL};
static const char *const quota_codes[] = {"VcpuLimitExceeded", "InstanceLimitExceeded", NULL};
/* Refusals that are the account's or its credentials', not the candidate's: every other launch
 * would be refused the same way, so they stop the sweep.  Any other code refuses this candidate's
 * request alone (an interface layout its type does not take, an AMI it cannot boot): it fails, and
 * the others go on. */
static const char *const account_codes[] = {"AuthFailure",
                                            "Blocked",
                                            "OptInRequired",
                                            "PendingVerification",
                                            "RequestExpired",
                                            "ExpiredToken",
                                            "InvalidClientTokenId",
                                            "SignatureDoesNotMatch",
                                            NULL};
/* EC2's own failures, after the transport's retries: the launch may have happened unanswered, so
 * they stop the sweep as a lost answer does (the end's pass by tag finds what was launched). */
static const char *const server_codes[] = {"InternalError", "InternalFailure",      "ServiceUnavailable",
                                           "Unavailable",   "RequestLimitExceeded", NULL};

static int code_in(const char *code, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(code, *list)) return 1;
    return 0;
}

static void save_cb(void *ctx) { sweep_save_or_warn(ctx); }

/* ---- set-up ----------------------------------------------------------------------------------- */
static int connect_aws(sweep_ctx *x, ib_error *err)
{
    /* Throttling (RequestLimitExceeded) is retried by the transport with full-jitter backoff; a
     * sweep may hit it while polling, so it gets more attempts than a one-shot command. */
    aws_client_options opt = {.refresh = aws_credentials_refresh, .max_attempts = 8};
    if (x->o->client) { /* the sweep's one client, whose credentials the plan resolved */
        x->client = x->o->client;
        x->cred = *x->o->cred;
    } else if (aws_credentials_resolve(&x->cred, err) != 0 || aws_client_create(&opt, &x->cred, &x->client, err) != 0) {
        return -1;
    }
    if (aws_s3_open(x->client, x->st->region, &x->s3, err) != 0) return -1;
    if (x->o->n_subnets) {
        /* the plan's: one lookup per sweep */
        if (!(x->subnets = malloc(x->o->n_subnets * sizeof *x->subnets)))
            return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        memcpy(x->subnets, x->o->subnets, x->o->n_subnets * sizeof *x->subnets);
        x->n_subnets = x->o->n_subnets;
        snprintf(x->sg_id, sizeof x->sg_id, "%s", x->o->security_group_id ? x->o->security_group_id : "");
        snprintf(x->vpc_id, sizeof x->vpc_id, "%s", x->o->vpc_id ? x->o->vpc_id : "");
        return 0;
    }
    return aws_ec2_default_network(x->client, x->st->region, x->vpc_id, x->sg_id, &x->subnets, &x->n_subnets, err);
}

/* The source archive under PREFIX/sources/<sha256>.tar.gz, uploaded only when the key is not there
 * (content-addressed: the same source is uploaded once across sweeps).  It is the build's
 * instbench-src.tar.gz, some 600 KB; one that is hundreds of MiB is not that archive. */
#define SOURCE_ARCHIVE_MAX_BYTES ((size_t)256 << 20)
static int upload_source(sweep_ctx *x, ib_error *err)
{
    char path[1024];
    if (sweep_source_archive(path, sizeof path, x->source_sha256, err) != 0) return -1;
    snprintf(x->source_key, sizeof x->source_key, "%ssources/%s.tar.gz", x->st->s3_prefix, x->source_sha256);
    aws_s3_listing l = {0};
    int there = 0;
    /* ListObjectsV2 with the key as prefix stands for HEAD: one key, no body */
    if (aws_s3_list_objects(x->s3, x->st->s3_bucket, x->source_key, 1, 1, 1, &l, err) != 0) {
        aws_s3_listing_free(&l);
        return -1;
    }
    for (size_t i = 0; i < l.n; i++) there |= !strcmp(l.objs[i].key, x->source_key);
    aws_s3_listing_free(&l);
    if (there) {
        ib_info("source archive already in s3://%s/%s", x->st->s3_bucket, x->source_key);
        return 0;
    }
    char *data = NULL;
    size_t len = 0;
    if (util_read_file(path, SOURCE_ARCHIVE_MAX_BYTES, &data, &len, err) != 0) return -1;
    int rc = aws_s3_put_object(x->s3, x->st->s3_bucket, x->source_key, data, len, "application/gzip", err);
    free(data);
    if (rc == 0) ib_info("uploaded the source archive (%zu bytes) to s3://%s/%s", len, x->st->s3_bucket, x->source_key);
    return rc;
}

/* ---- launching one candidate ------------------------------------------------------------------ */
typedef struct urls {
    char *source, *result, *rendezvous;
    char *logs[SWEEP_NODES_MAX];
    int nodes;
} urls;

static void urls_free(urls *u)
{
    free(u->source);
    free(u->result);
    free(u->rendezvous);
    for (int k = 0; k < u->nodes; k++) free(u->logs[k]);
    memset(u, 0, sizeof *u);
}

static int presign(sweep_ctx *x, const char *method, const char *key, char **url, ib_error *err)
{
    long expires = (long)ceil(x->st->max_minutes * 60) + URL_MARGIN_S;
    if (expires > 604800) expires = 604800;
    static int warned;
    time_t now = time(NULL);
    /* A URL signed with temporary credentials (SSO, an assumed role) dies with them, whatever
     * X-Amz-Expires says: an instance that finishes later could not deliver its result. */
    if (!warned && x->cred.expiration > 0 && x->cred.expiration < now + expires) {
        warned = 1;
        ib_warn("the credentials (%s) expire in %ld min, sooner than the %ld min the instances' presigned URLs "
                "are made for (--max-minutes and an hour): what an instance delivers after that, S3 refuses "
                "(use credentials that last longer)",
                x->cred.source, (long)(x->cred.expiration - now) / 60, expires / 60);
    }
    return aws_s3_presign(x->s3, &x->cred, method, x->st->s3_bucket, key, expires, time(NULL), url, err);
}

static int make_urls(sweep_ctx *x, size_t i, urls *u, ib_error *err)
{
    const sweep_state_candidate *c = &x->st->cand[i];
    char key[1024], idx[24];
    u->nodes = c->c.nodes;
    if (presign(x, "GET", x->source_key, &u->source, err) != 0) return -1;
    sweep_delivery_key(x->st, i, -1, key, sizeof key);
    if (presign(x, "PUT", key, &u->result, err) != 0) return -1;
    for (int k = 0; k < c->c.nodes; k++) {
        sweep_delivery_key(x->st, i, k, key, sizeof key);
        if (presign(x, "PUT", key, &u->logs[k], err) != 0) return -1;
    }
    if (c->c.nodes > 1) {
        snprintf(idx, sizeof idx, "%zu", i);
        sweep_key(x->st, "rendezvous", idx, key, sizeof key);
        if (presign(x, "GET", key, &u->rendezvous, err) != 0) return -1;
    }
    return 0;
}

static int render(sweep_ctx *x, size_t i, const urls *u, char **script, ib_error *err)
{
    const sweep_state_candidate *c = &x->st->cand[i];
    sweep_userdata_vars v = {
        .sweep_id = x->st->id,
        .candidate_spec = c->c.spec,
        .nodes = c->c.nodes,
        .max_minutes = x->st->max_minutes,
        .region = x->st->region,
        /* measure's --market knows on-demand and spot; a block's instance is billed by the block, and
           the sweep prices it as committed, so the result's own market only tells spot apart */
        .market = c->c.spot ? "spot" : "on-demand",
        .source_url = u->source,
        .source_sha256 = x->source_sha256,
        .result_url = u->result,
        .log_urls = (const char *const *)u->logs,
        .rendezvous_url = u->rendezvous,
        .efa_devices = c->efa.devices,
        .measure_args = x->o->measure_args,
        .n_measure_args = x->o->n_measure_args,
    };
    return sweep_userdata_render(&v, script, err);
}

/* Launch outcome of one RunInstances round over the zones. */
enum { LAUNCHED = 0, NO_CAPACITY = 1, QUOTA = 2, LAUNCH_ERROR = 3, STOPPED = 4, REFUSED = 5, SAVE_FAILED = 6 };

/* EC2 refused candidate I's launch for a reason of its own: it failed, its placement group (nothing
 * else was made for it alone; the instances were never launched) is deleted now, not at the end. */
static int refused(sweep_ctx *x, size_t i, const char *code, const char *msg)
{
    sweep_state_candidate *c = &x->st->cand[i];
    snprintf(c->reason, sizeof c->reason, "launch refused: %.60s: %.900s", code, msg);
    c->outcome = SWEEP_FAILED;
    c->ended = time(NULL);
    ib_warn("%s: %s (the other candidates go on)", c->c.spec, c->reason);
    sweep_terminate_candidate(x, (int)i); /* none launched; a stray one goes with the sweep's tag at the end */
    ib_error e = {0};
    if (c->placement_group[0] && !c->placement_group_deleted) {
        if (aws_ec2_delete_placement_group(x->client, x->st->region, c->placement_group, &e) == 0)
            c->placement_group_deleted = 1;
        else
            ib_warn("%s: placement group %s not deleted yet (tried again at the end): %s", c->c.spec,
                    c->placement_group, e.msg);
    }
    sweep_save_or_warn(x->st);
    return REFUSED;
}

static void record_launch(sweep_ctx *x, size_t i, const ec2_instances *got, ib_error *err)
{
    /* (a launch found by its ClientToken may be seen in several looks: each instance once) */
    time_t now = time(NULL);
    for (size_t k = 0; k < got->n; k++) {
        int known = 0;
        for (size_t j = 0; j < x->st->n_inst && !known; j++) known = !strcmp(x->st->inst[j].id, got->v[k].id);
        if (known) continue;
        sweep_state_instance *in = sweep_state_add_instance(x->st, err);
        if (!in) return;
        snprintf(in->id, sizeof in->id, "%s", got->v[k].id);
        in->candidate = (int)i;
        in->launch_index = got->v[k].launch_index;
        in->launched = got->v[k].launch_time > 0 ? got->v[k].launch_time : now;
        sweep_instance_update(in, &got->v[k]);
        if (!in->state[0]) snprintf(in->state, sizeof in->state, "pending");
    }
    x->st->cand[i].launched = now;
    x->st->cand[i].outcome = SWEEP_RUNNING;
}

/* Node 0's private IP to PREFIX/sweep-<id>/rendezvous/<i>: the other nodes poll it. */
static int put_rendezvous(sweep_ctx *x, size_t i, const ec2_instances *got, ib_error *err)
{
    const char *ip = NULL;
    for (size_t k = 0; k < got->n; k++)
        if (got->v[k].launch_index == 0) ip = got->v[k].private_ip;
    if (!ip || !ip[0]) return ib_error_set(err, IB_EXIT_RUNTIME, "RunInstances named no private address for node 0");
    char key[1024], idx[24], line[64];
    snprintf(idx, sizeof idx, "%zu", i);
    sweep_key(x->st, "rendezvous", idx, key, sizeof key);
    int n = snprintf(line, sizeof line, "%s\n", ip);
    return aws_s3_put_object(x->s3, x->st->s3_bucket, key, line, (size_t)n, "text/plain", err);
}

static size_t instances_of(const sweep_state *st, size_t cand)
{
    size_t n = 0;
    for (size_t k = 0; k < st->n_inst; k++) n += st->inst[k].candidate == (int)cand;
    return n;
}

/* A RunInstances whose answer never came (the transport gave up, or EC2 answered a failure of its
 * own): EC2 may have launched it all the same, and nothing of ours names those instances.  They
 * carry the ClientToken the launch was sent with and the sweep's tag, so they are looked for by
 * both (DescribeInstances, filter client-token) until all of the candidate's nodes are seen or
 * o->lookup_s passed: a new instance can stay out of DescribeInstances' answers for a while (EC2's
 * eventual consistency).  A signal does not cut this short: what it finds is what the end
 * terminates.  What is found is recorded as the launch; returns how many of its nodes are known. */
static size_t find_lost_launch(sweep_ctx *x, size_t i, const char *token)
{
    sweep_state *st = x->st;
    const sweep_state_candidate *c = &st->cand[i];
    double end = util_now_seconds() + x->o->lookup_s;
    double step = x->o->poll_s > 0 && x->o->poll_s < 5 ? x->o->poll_s : 5;
    ib_warn("%s: RunInstances got no answer: EC2 may have launched it; looking for its instances by their "
            "ClientToken %s for up to %g s",
            c->c.spec, token, x->o->lookup_s);
    for (;;) {
        ec2_instances got = {0};
        ib_error e = {0};
        if (aws_ec2_instances_by_client_token(x->client, st->region, token, SWEEP_TAG_SWEEP, st->id, &got, &e) == 0) {
            size_t before = st->n_inst;
            if (got.n) record_launch(x, i, &got, &e);
            if (st->n_inst != before) {
                ib_warn("%s: found %zu instance%s launched by the unanswered RunInstances: recorded", c->c.spec,
                        st->n_inst - before, st->n_inst - before == 1 ? "" : "s");
                sweep_save_or_warn(st);
            }
        } else {
            ib_warn("%s: DescribeInstances (client-token %s) failed (tried again): %s", c->c.spec, token, e.msg);
        }
        ec2_instances_free(&got);
        if (instances_of(st, i) >= (size_t)c->c.nodes || util_now_seconds() >= end) break;
        sweep_sleep(step, NULL);
    }
    return instances_of(st, i);
}

/* RunInstances in each default subnet in turn until one has capacity.  Every attempt has its own
 * ClientToken (the same token in another subnet would be an IdempotentParameterMismatch); the
 * transport's retries of one attempt reuse it, so a retried request never launches twice. */
static int launch_in_zones(sweep_ctx *x, size_t i, const char *user_data, ib_error *err)
{
    sweep_state_candidate *c = &x->st->cand[i];
    ec2_tag tags[2];
    size_t n_tags;
    sweep_tags(x->st, c->c.spec, tags, &n_tags);
    char zones[512] = "", token[64], code[64];
    size_t zl = 0;
    int price_low = 0; /* a zone answered SpotMaxPriceTooLow: its spot price is above our MaxPrice */
    for (size_t z = 0; z < (x->n_subnets ? x->n_subnets : 1); z++) {
        if (sweep_stopped(x->o->stop)) return STOPPED;
        if (x->st->save_failed) return SAVE_FAILED; /* what it would launch could not be recorded */
        const ec2_subnet *sn = x->n_subnets ? &x->subnets[z] : NULL;
        /* a Capacity Block lives in one zone: only that zone's subnet can take it */
        if (c->c.block && sn && strcmp(sn->az, c->c.reservation_az) != 0) continue;
        snprintf(token, sizeof token, "%s-%u-%u", x->st->id, (unsigned)i, (unsigned)z);
        ec2_launch l = {.region = x->st->region,
                        .instance_type = c->c.type,
                        .image_id = c->ami,
                        .count = c->c.nodes,
                        .spot = c->c.spot,
                        /* the price the worst case used: EC2 interrupts or refuses rather than bill more */
                        .spot_max_price = c->c.spot ? c->usd_per_hour : 0,
                        .subnet_id = sn ? sn->id : NULL,
                        .capacity_reservation = c->c.block ? c->c.reservation : NULL,
                        .security_group_id = c->efa.n && x->efa_sg[0] ? x->efa_sg
                                             : x->sg_id[0]            ? x->sg_id
                                                                      : NULL,
                        .nics = c->efa.n ? c->efa.nic : NULL,
                        .n_nics = (size_t)c->efa.n,
                        .placement_group = c->placement_group[0] ? c->placement_group : NULL,
                        .user_data = user_data,
                        .client_token = token,
                        .tags = tags,
                        .n_tags = n_tags};
        ec2_instances got = {0};
        ib_error e = {0};
        code[0] = '\0';
        ib_info("%s: launching %d x %s (%s)%s%s", c->c.spec, c->c.nodes, c->c.type, sweep_candidate_market(&c->c),
                sn ? " in " : "", sn ? sn->az : "");
        if (aws_ec2_run_instances(x->client, &l, &got, code, &e) == 0) {
            record_launch(x, i, &got, err);
            sweep_save_or_warn(x->st);
            int rc = LAUNCHED;
            if (c->efa.elastic_ip && sweep_eips_allocate(x, i, &e) != 0) {
                snprintf(c->reason, sizeof c->reason,
                         "its nodes have several network interfaces, so no public "
                         "address, and an Elastic IP could not be had: %.850s",
                         e.msg);
                c->outcome = SWEEP_FAILED;
                c->ended = time(NULL);
                ib_warn("%s: %s", c->c.spec, c->reason);
                sweep_terminate_candidate(x, (int)i);
                ec2_instances_free(&got);
                return rc;
            }
            if (c->c.nodes > 1 && put_rendezvous(x, i, &got, &e) != 0) {
                snprintf(c->reason, sizeof c->reason, "node 0's address could not be handed to the others: %.900s",
                         e.msg);
                c->outcome = SWEEP_FAILED;
                c->ended = time(NULL);
                sweep_terminate_candidate(x, (int)i);
            }
            ec2_instances_free(&got);
            return rc;
        }
        ec2_instances_free(&got);
        if (code_in(code, capacity_codes)) {
            ib_info("%s: %s in %s", c->c.spec, code, sn ? sn->az : "the region");
            price_low |= !strcmp(code, "SpotMaxPriceTooLow");
            zl += (size_t)snprintf(zones + zl, zl < sizeof zones ? sizeof zones - zl : 0, "%s%s", zl ? ", " : "",
                                   sn ? sn->az : x->st->region);
            if (zl >= sizeof zones) zl = sizeof zones - 1;
            continue;
        }
        if (code_in(code, quota_codes)) {
            const price_record *hw = prices_catalogue_hardware(c->c.type);
            int vcpus = hw && hw->hw.vcpus > 0 ? hw->hw.vcpus * c->c.nodes : -1;
            char asked[64] = "";
            if (vcpus > 0) snprintf(asked, sizeof asked, " (%d vCPUs asked)", vcpus);
            snprintf(c->reason, sizeof c->reason, "quota %s%s: %.800s", code, asked, e.msg);
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "%s: the account's quota stops the sweep: %s for %s %s instances%s; ask for more in the "
                         "Service Quotas console (EC2, \"Running %s %s instances\")",
                         c->c.spec, code, c->c.spot ? "spot" : "on-demand", c->c.type, asked,
                         c->c.spot ? "Spot" : "On-Demand", c->c.type);
            return QUOTA;
        }
        if (code[0] && !code_in(code, account_codes) && !code_in(code, server_codes)) return refused(x, i, code, e.msg);
        /* no answer or EC2's own failure (the transport gave up: the next launch would fare no better),
           or the account's */
        snprintf(c->reason, sizeof c->reason, "launch refused: %.900s", e.msg);
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: RunInstances: %s", c->c.spec, e.msg);
        if (!code_in(code, account_codes) && e.code != IB_EXIT_USAGE) {
            /* the request may have reached EC2: whatever it launched is found and recorded, or said */
            size_t found = find_lost_launch(x, i, token);
            /* the sweep stops on it (EC2 failed this request after every retry): what was found of
               it is terminated with the rest, and the candidate says what became of its launch */
            c->outcome = SWEEP_NOT_RUN;
            c->ended = time(NULL);
            if (found >= (size_t)c->c.nodes) {
                snprintf(c->reason, sizeof c->reason,
                         "RunInstances got no answer (%.600s), but EC2 had launched its %d instance%s (found by "
                         "their ClientToken): stopped with the sweep",
                         e.msg, c->c.nodes, c->c.nodes == 1 ? "" : "s");
            } else {
                x->lost[i] = 1;
                snprintf(c->reason, sizeof c->reason,
                         "RunInstances got no answer (%.500s); %zu of its %d instance%s found by their ClientToken "
                         "%s within %g s: one may still appear (EC2's eventual consistency): run `instbench sweep "
                         "cleanup %s`",
                         e.msg, found, c->c.nodes, c->c.nodes == 1 ? "" : "s", token, x->o->lookup_s, x->st->id);
                ib_warn("%s: %s", c->c.spec, c->reason);
            }
        }
        return LAUNCH_ERROR;
    }
    char when[32];
    util_utc_iso8601(time(NULL), when);
    if (price_low)
        snprintf(c->reason, sizeof c->reason,
                 "no capacity at %s in %s (SpotMaxPriceTooLow: the spot price is above the MaxPrice $%.6g/h that the "
                 "worst case used; --source live fetches the current prices)",
                 when, zones[0] ? zones : x->st->region, c->usd_per_hour);
    else snprintf(c->reason, sizeof c->reason, "no capacity at %s in %s", when, zones[0] ? zones : x->st->region);
    c->outcome = SWEEP_NO_CAPACITY;
    c->ended = time(NULL);
    ib_warn("%s: %s", c->c.spec, c->reason);
    return NO_CAPACITY;
}

static int launch_candidate(sweep_ctx *x, size_t i, ib_error *err)
{
    sweep_state_candidate *c = &x->st->cand[i];
    urls u = {0};
    char *script = NULL;
    int rc = LAUNCH_ERROR;
    if (make_urls(x, i, &u, err) != 0 || render(x, i, &u, &script, err) != 0) {
        snprintf(c->reason, sizeof c->reason, "not launched: %.900s", err->msg);
        goto out;
    }
    if (c->efa.n && sweep_efa_group(x, err) != 0) {
        snprintf(c->reason, sizeof c->reason, "not launched: EFA security group: %.880s", err->msg);
        goto out;
    }
    /* a Capacity Block's instances are placed by the block itself (EC2 co-locates them): a cluster
       placement group of ours could not hold them */
    if (c->c.nodes > 1 && !c->c.block) {
        /* recorded before it exists: a crash between the two leaves a name cleanup can try */
        snprintf(c->placement_group, sizeof c->placement_group, "instbench-%s-%zu", x->st->id, i);
        sweep_save_or_warn(x->st);
        if (x->st->save_failed) { /* its name is not on file: it is not created */
            snprintf(c->reason, sizeof c->reason, "not launched: the state file could not be written: %.850s",
                     x->st->save_error);
            rc = SAVE_FAILED;
            goto out;
        }
        ec2_tag tags[2];
        size_t n_tags;
        sweep_tags(x->st, NULL, tags, &n_tags);
        if (aws_ec2_create_placement_group(x->client, x->st->region, c->placement_group, tags, n_tags, err) != 0) {
            snprintf(c->reason, sizeof c->reason, "not launched: placement group: %.900s", err->msg);
            goto out;
        }
    }
    rc = launch_in_zones(x, i, script, err);
out:
    free(script);
    urls_free(&u);
    sweep_save_or_warn(x->st);
    return rc;
}

/* ---- watching --------------------------------------------------------------------------------- */
/* DescribeInstances of every live instance; candidates whose instances ended get their outcome. */
static void watch_instances(sweep_ctx *x)
{
    sweep_state *st = x->st;
    ib_error err = {0};
    time_t now = time(NULL);
    if (sweep_instances_refresh(x->client, st->region, st->inst, st->n_inst, &err) != 0)
        ib_warn("DescribeInstances failed (tried again next poll): %s", err.msg);
    for (size_t i = 0; i < st->n_inst; i++) {
        sweep_state_instance *in = &st->inst[i];
        sweep_state_candidate *c = &st->cand[in->candidate];
        if (c->outcome != SWEEP_RUNNING) continue;
        if (!strcmp(in->state_reason, "Server.SpotInstanceTermination")) {
            c->outcome = SWEEP_INTERRUPTED;
            c->ended = now;
            snprintf(c->reason, sizeof c->reason, "spot instance %s (node %d) reclaimed by EC2 in %s", in->id,
                     in->launch_index, in->az[0] ? in->az : st->region);
            ib_warn("%s: interrupted: %s", c->c.spec, c->reason);
            sweep_terminate_candidate(x, in->candidate);
        }
    }
    /* A node ended (terminated, shutting-down, stopping or stopped: a hardware failure, a click in
     * the console, its own power-off after a failure whose log never came) before its candidate
     * had an outcome: the candidate cannot finish, and its other nodes would wait for it until
     * --max-minutes.  It fails, naming the node, and its other nodes are terminated, unless its
     * outcome is still on the way: node 0 PUT its result or log before it powered off, so one more
     * look at S3 is all it needs (ENDED_POLLS); another node's end says nothing of node 0's result,
     * which may be seconds behind it (every node powers off when measure ends), so that waits
     * o->node_grace_s too. */
    for (size_t ci = 0; ci < st->n_cand; ci++) {
        sweep_state_candidate *c = &st->cand[ci];
        if (c->outcome != SWEEP_RUNNING) continue;
        const sweep_state_instance *down = NULL;
        for (size_t i = 0; i < st->n_inst; i++) {
            const sweep_state_instance *in = &st->inst[i];
            if (in->candidate == (int)ci && sweep_instance_down(in->state) &&
                (!down || in->launch_index < down->launch_index))
                down = in;
        }
        if (!down) continue;
        if (!x->ended_since[ci]) x->ended_since[ci] = util_now_seconds();
        if (++x->ended_polls[ci] < ENDED_POLLS) continue;
        if (down->launch_index != 0 && util_now_seconds() - x->ended_since[ci] < x->o->node_grace_s) continue;
        c->outcome = SWEEP_FAILED;
        c->ended = now;
        if (down->launch_index == 0)
            snprintf(c->reason, sizeof c->reason, "node 0 (%s) ended (%s%s%s) without a result or a log", down->id,
                     down->state, down->state_reason[0] ? ", " : "", down->state_reason);
        else
            snprintf(c->reason, sizeof c->reason,
                     "node %d of %d (%s) ended (%s%s%s) before a result or a log: its other nodes terminated",
                     down->launch_index, c->c.nodes, down->id, down->state, down->state_reason[0] ? ", " : "",
                     down->state_reason);
        ib_warn("%s: %s", c->c.spec, c->reason);
        sweep_terminate_candidate(x, (int)ci);
    }
}

static void check_timeouts(sweep_ctx *x)
{
    time_t now = time(NULL);
    for (size_t i = 0; i < x->st->n_cand; i++) {
        sweep_state_candidate *c = &x->st->cand[i];
        if (c->outcome != SWEEP_RUNNING || (double)(now - c->launched) < x->st->max_minutes * 60) continue;
        c->outcome = SWEEP_TIMED_OUT;
        c->ended = now;
        snprintf(c->reason, sizeof c->reason, "timed out: no result within --max-minutes %g", x->st->max_minutes);
        ib_warn("%s: %s", c->c.spec, c->reason);
        sweep_terminate_candidate(x, (int)i);
    }
}

static size_t running(const sweep_state *st)
{
    size_t n = 0;
    for (size_t i = 0; i < st->n_cand; i++) n += st->cand[i].outcome == SWEEP_RUNNING;
    return n;
}

static void watch(sweep_ctx *x)
{
    snprintf(x->st->phase, sizeof x->st->phase, "watching");
    sweep_save_or_warn(x->st);
    /* a state file that cannot be written stops the sweep: what it does next would be on no file */
    while (running(x->st) && !sweep_stopped(x->o->stop) && !x->st->save_failed) {
        if (x->o->tick) x->o->tick();
        sweep_sleep(x->o->poll_s, x->o->stop);
        if (sweep_stopped(x->o->stop)) break;
        ib_error err = {0};
        if (sweep_collect(x, &err) < 0)
            ib_warn("listing the sweep's results failed (tried again next poll): %s", err.msg);
        watch_instances(x);
        sweep_eips_associate(x);
        check_timeouts(x);
        sweep_save_or_warn(x->st);
    }
}

/* ---- the end: whatever happened ---------------------------------------------------------------- */
static int delete_placement_groups(sweep_ctx *x, ib_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < x->st->n_cand; i++) {
        sweep_state_candidate *c = &x->st->cand[i];
        if (!c->placement_group[0] || c->placement_group_deleted) continue;
        ib_error e = {0};
        /* EC2 may still count just-terminated instances as members for a moment: a few tries */
        for (int t = 0; t < 5; t++) {
            if (aws_ec2_delete_placement_group(x->client, x->st->region, c->placement_group, &e) == 0) {
                c->placement_group_deleted = 1;
                break;
            }
            sweep_sleep(x->o->poll_s, NULL);
        }
        if (!c->placement_group_deleted) {
            if (!rc)
                ib_error_set(err, IB_EXIT_RUNTIME, "placement group %s not deleted: %s", c->placement_group, e.msg);
            rc = -1;
        }
    }
    return rc;
}

static int terminate_everything(sweep_ctx *x, ib_error *err)
{
    sweep_state *st = x->st;
    snprintf(st->phase, sizeof st->phase, "terminating");
    sweep_save_or_warn(st);
    for (size_t i = 0; i < st->n_cand; i++)
        if (st->cand[i].outcome == SWEEP_RUNNING) {
            /* stopped before its result: the signal or the stop's reason says why */
            st->cand[i].outcome = SWEEP_NOT_RUN;
            st->cand[i].ended = time(NULL);
            snprintf(st->cand[i].reason, sizeof st->cand[i].reason, "stopped before a result: %s",
                     st->note[0] ? st->note : "the sweep was stopped");
        }
    size_t left = 0;
    if (st->n_inst) {
        ib_info("terminating %zu instance%s", st->n_inst, st->n_inst == 1 ? "" : "s");
        left = sweep_terminate_confirm(x->client, st->region, st->inst, st->n_inst, x->o->terminate_wait_s,
                                       x->o->poll_s > 0 ? x->o->poll_s : 1, save_cb, st);
    }
    int rc = 0;
    if (left) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME,
                          "%zu instance%s not confirmed terminated: run `instbench sweep cleanup %s`", left,
                          left == 1 ? "" : "s", st->id);
    } else {
        /* Then by tag: an instance EC2 launched but whose RunInstances answer never arrived (every
         * retry lost) is in no list of ours, yet carries the sweep's tag; EC2's eventual consistency
         * may still hide one launched seconds ago: its own shutdown timer is the last net.  The same
         * pass releases the Elastic IPs and deletes the groups (every one tagged when created), once
         * their instances are gone, and records that in the state. */
        size_t strays = 0;
        ib_error e = {0};
        if (sweep_cleanup_region(x->client, st->region, st->id, x->o->terminate_wait_s,
                                 x->o->poll_s > 0 ? x->o->poll_s : 1, st, 1, &strays, &e) != 0)
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: run `instbench sweep cleanup %s`", e.msg, st->id);
        else if (strays)
            ib_warn("%zu instance%s tagged with sweep %s that no launch answer named (an answer lost on the "
                    "way): terminated",
                    strays, strays == 1 ? "" : "s", st->id);
        /* what the state records that the pass by tag did not show (it marks what it removed) */
        if (!rc && (sweep_eips_release(x, &e) != 0 || sweep_efa_group_delete(x, &e) != 0 ||
                    delete_placement_groups(x, &e) != 0))
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: run `instbench sweep cleanup %s`", e.msg, st->id);
    }
    /* A launch that got no answer and whose instances were not all found (by ClientToken, then by
     * the pass by tag, which records what it finds): nothing says they do not exist. */
    for (size_t i = 0; !rc && i < st->n_cand; i++)
        if (x->lost[i] && instances_of(st, i) < (size_t)st->cand[i].c.nodes)
            rc = ib_error_set(err, IB_EXIT_RUNTIME,
                              "%s: RunInstances got no answer, and %zu of its %d instance%s could be found (by its "
                              "ClientToken, then by the sweep's tag): one may still be starting, unseen yet: run "
                              "`instbench sweep cleanup %s` in a few minutes",
                              st->cand[i].c.spec, instances_of(st, i), st->cand[i].c.nodes,
                              st->cand[i].c.nodes == 1 ? "" : "s", st->id);
    if (!rc && st->save_failed)
        rc = ib_error_set(err, IB_EXIT_RUNTIME,
                          "the state file could not be written (%s): the sweep launched nothing more and terminated "
                          "what it had launched, but the file on disk is behind: once it can be written, run "
                          "`instbench sweep cleanup %s` (it looks by tag and records what it finds)",
                          st->save_error, st->id);
    st->finished = time(NULL);
    snprintf(st->phase, sizeof st->phase, "%s", rc ? "needs-cleanup" : "done");
    sweep_save_or_warn(st);
    return rc;
}

int sweep_execute(sweep_state *st, const sweep_exec_options *o, ib_error *err)
{
    sweep_ctx x = {.st = st, .o = o};
    int rc = 0;
    ib_error stop_err = {0};
    size_t nc = st->n_cand ? st->n_cand : 1;
    x.ended_polls = calloc(nc, sizeof *x.ended_polls);
    x.ended_since = calloc(nc, sizeof *x.ended_since);
    x.lost = calloc(nc, sizeof *x.lost);
    if (!x.ended_polls || !x.ended_since || !x.lost) {
        free(x.ended_polls);
        free(x.ended_since);
        free(x.lost);
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        return -1;
    }
    snprintf(st->phase, sizeof st->phase, "launching");
    sweep_save_or_warn(st);
    if (st->save_failed) {
        rc = ib_error_set(&stop_err, IB_EXIT_RUNTIME, "the state file could not be written: %s", st->save_error);
    } else if (connect_aws(&x, &stop_err) != 0 || upload_source(&x, &stop_err) != 0) {
        rc = -1;
    } else {
        for (size_t i = 0; i < st->n_cand && !rc; i++) {
            if (sweep_stopped(o->stop)) break;
            /* a launch the file could not record would be invisible to `status` and to this sweep's
               own record: none is made once a save failed */
            int l = st->save_failed ? SAVE_FAILED : launch_candidate(&x, i, &stop_err);
            if (l == QUOTA || l == LAUNCH_ERROR) rc = -1;
            if (l == SAVE_FAILED)
                rc = ib_error_set(&stop_err, IB_EXIT_RUNTIME,
                                  "the state file could not be written: %s: nothing more launched", st->save_error);
        }
        if (!rc && !sweep_stopped(o->stop)) watch(&x);
        if (!rc && st->save_failed)
            rc = ib_error_set(&stop_err, IB_EXIT_RUNTIME, "the state file could not be written: %s", st->save_error);
    }
    if (rc) snprintf(st->note, sizeof st->note, "%.500s", stop_err.msg);
    else if (sweep_stopped(o->stop) && o->stop_by_cleanup && *o->stop_by_cleanup)
        snprintf(st->note, sizeof st->note, "stopped by `instbench sweep cleanup --force`");
    else if (sweep_stopped(o->stop)) snprintf(st->note, sizeof st->note, "stopped by signal %d", *o->stop);
    for (size_t i = 0; i < st->n_cand; i++)
        if (st->cand[i].outcome == SWEEP_PENDING) {
            st->cand[i].outcome = SWEEP_NOT_RUN;
            if (!st->cand[i].reason[0])
                snprintf(st->cand[i].reason, sizeof st->cand[i].reason, "not launched: %s",
                         st->note[0] ? st->note : "the sweep stopped");
        }
    ib_error term_err = {0};
    int trc = x.client ? terminate_everything(&x, &term_err) : 0;
    if (!x.client) {
        st->finished = time(NULL);
        snprintf(st->phase, sizeof st->phase, "done");
        sweep_save_or_warn(st);
    }
    if (trc) *err = term_err;
    else if (rc) *err = stop_err;
    free(x.ended_polls);
    free(x.ended_since);
    free(x.lost);
    free(x.subnets);
    aws_s3_close(x.s3);
    if (x.client != o->client) aws_client_destroy(x.client);
    memset(&x.cred, 0, sizeof x.cred);
    return trc || rc ? -1 : 0;
}
