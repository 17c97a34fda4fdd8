/* sweep/prepare: what a plan needs from AWS before anything is launched (contract in
 * instbench/sweep.h): the catalogue's refusals first, then one client for the whole sweep, the
 * block, prices, DescribeInstanceTypes, the AMIs, the default network and the plan.  Deciding is
 * plan.c's; this only asks, and creates nothing. */
#include "sweep/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instbench/instance_type.h"
#include "instbench/prices.h"
#include "instbench/util.h"

static int fetch_prices(const sweep_prepare_input *f, sweep_context *ctx, ib_error *err)
{
    prices_query q = {0};
    char *types[SWEEP_MAX_CANDIDATES], *regions[1] = {(char *)f->region};
    for (size_t i = 0; i < f->n_cands; i++) {
        int seen = 0;
        for (size_t k = 0; k < q.n_types && !seen; k++) seen = !strcmp(types[k], f->cands[i].type);
        if (!seen) types[q.n_types++] = (char *)f->cands[i].type;
    }
    q.instance_types = types;
    q.regions = regions;
    q.n_regions = 1;
    q.want_on_demand = 1;
    q.want_spot = 1;
    q.source = f->source;
    q.skip_placement_scores = 1;
    if (prices_get(&q, &ctx->prices, err) != 0) return -1;
    ctx->per_cand = calloc(f->n_cands, sizeof *ctx->per_cand);
    if (!ctx->per_cand) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < f->n_cands; i++) ctx->per_cand[i] = prices_find(&ctx->prices, f->cands[i].type, f->region);
    return 0;
}

/* --ami: it must exist and suit every candidate's architecture (EC2's answer, else the catalogue's;
 * one known to neither is not checked: the image is the user's word). */
static int check_override(const sweep_prepare_input *f, sweep_context *ctx, ib_error *err)
{
    char arch[16];
    if (aws_ec2_image_arch(ctx->client, f->region, f->ami, arch, err) != 0) return -1;
    for (size_t i = 0; i < f->n_cands; i++) {
        const char *want = instance_type_arch(f->cands[i].type, ctx->ec2_arch[i], NULL);
        if (want && strcmp(arch, want) != 0)
            return ib_error_set(err, IB_EXIT_USAGE, "--ami %s is %s, but %s needs %s", f->ami, arch, f->cands[i].spec,
                                want);
    }
    snprintf(ctx->override.id, sizeof ctx->override.id, "%s", f->ami);
    snprintf(ctx->override.source, sizeof ctx->override.source, "--ami");
    return 0;
}

/* The current AMI of each kind the candidates need, from its SSM public parameter. */
static int resolve_amis(const sweep_prepare_input *f, sweep_context *ctx, const int *need, ib_error *err)
{
    for (int k = 0; k < SWEEP_AMI_KINDS; k++) {
        if (!need[k]) continue;
        const char *param = sweep_ami_parameter((sweep_ami_kind)k);
        sweep_ami *a = &ctx->amis[k];
        int rc = aws_ssm_get_parameter(ctx->client, f->region, param, a->id, sizeof a->id, err);
        if (rc == 1)
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "%s: no current %s AMI there (SSM parameter %s not found); "
                                "pass --ami",
                                f->region, sweep_ami_kind_arch((sweep_ami_kind)k), param);
        if (rc != 0) return -1;
        snprintf(a->source, sizeof a->source, "%s", param);
    }
    return 0;
}

/* --capacity-reservation: EC2's own description of the block decides.  It must be a Capacity Block
 * (not an on-demand Capacity Reservation), active now (a block not yet started is refused with its
 * start), for the candidate's type with room for its nodes, and outlast --max-minutes; the
 * candidate then launches in the block's zone only.  Exit 2 for each: the user picks another. */
static int check_block(const sweep_prepare_input *f, sweep_context *ctx, time_t now, ib_error *err)
{
    ec2_capacity_reservation *b = &ctx->block;
    const char *id = f->capacity_reservation;
    if (aws_ec2_capacity_reservation(ctx->client, f->region, id, b, err) != 0) return -1;
    sweep_candidate *c = NULL;
    for (size_t i = 0; i < f->n_cands && !c; i++)
        if (ctx->cands[i].block) c = &ctx->cands[i];
    char when[32], end[32];
    util_utc_iso8601(b->start, when);
    util_utc_iso8601(b->end, end);
    if (strcmp(b->reservation_type, "capacity-block") != 0)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--capacity-reservation %s is not a Capacity Block (its reservation "
                            "type is %s): instbench launches only into a Capacity Block for ML",
                            id, b->reservation_type[0] ? b->reservation_type : "not given");
    if (!strcmp(b->state, "scheduled") || !strcmp(b->state, "payment-pending") || (b->start && b->start > now))
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s is not active yet: it starts at %s (%s)", id,
                            b->start ? when : "a time EC2 did not give", b->state);
    if (strcmp(b->state, "active") != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s is %s, not active", id, b->state);
    if (strcmp(b->instance_type, c->type) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s holds %s, not %s (%s)", id, b->instance_type,
                            c->type, c->spec);
    if (b->available < c->nodes)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--capacity-reservation %s has %d of its %d instances free, %s needs %d", id, b->available,
                            b->total, c->spec, c->nodes);
    if (b->end && now + (time_t)ceil(f->max_minutes * 60) > b->end)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--max-minutes %g runs past the end of Capacity Block %s at %s: at "
                            "most %.0f minutes are left",
                            f->max_minutes, id, end, floor(difftime(b->end, now) / 60));
    snprintf(c->reservation, sizeof c->reservation, "%s", b->id);
    snprintf(c->reservation_az, sizeof c->reservation_az, "%s", b->az);
    return 0;
}

/* DescribeInstanceTypes, once per type, for the types of the multi-node candidates (their network:
 * one node has no traffic between nodes, and --efa off asks none) and for those whose family the
 * instance-type catalogue lacks (their architecture). */
static int describe_networks(const sweep_prepare_input *f, sweep_context *ctx, ib_error *err)
{
    if (!(ctx->nets = calloc(f->n_cands, sizeof *ctx->nets)) ||
        !(ctx->net_of = calloc(f->n_cands, sizeof *ctx->net_of)) ||
        !(ctx->ec2_arch = calloc(f->n_cands, sizeof *ctx->ec2_arch)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    char *types[SWEEP_MAX_CANDIDATES];
    size_t n = 0;
    for (size_t i = 0; i < f->n_cands; i++) {
        int network = ctx->cands[i].nodes > 1 && !f->efa_off;
        if (!network && instance_type_arch(ctx->cands[i].type, NULL, NULL)) continue;
        int seen = 0;
        for (size_t k = 0; k < n && !seen; k++) seen = !strcmp(types[k], ctx->cands[i].type);
        if (!seen) types[n++] = ctx->cands[i].type;
    }
    if (!n) return 0;
    ec2_type_network got[SWEEP_MAX_CANDIDATES];
    if (aws_ec2_type_networks(ctx->client, f->region, types, n, got, err) != 0) return -1;
    for (size_t i = 0; i < f->n_cands; i++)
        for (size_t k = 0; k < n; k++)
            if (!strcmp(types[k], ctx->cands[i].type)) {
                ctx->nets[i] = got[k];
                if (ctx->cands[i].nodes > 1 && !f->efa_off) ctx->net_of[i] = &ctx->nets[i];
                if (ctx->nets[i].arch[0]) ctx->ec2_arch[i] = ctx->nets[i].arch;
            }
    return 0;
}

int sweep_prepare(const sweep_prepare_input *f, sweep_context *ctx, ib_error *err)
{
    memset(ctx, 0, sizeof *ctx);
    /* what the catalogue alone can refuse, before any request (a type whose architecture only EC2
     * can tell is checked once DescribeInstanceTypes has answered) */
    for (size_t i = 0; i < f->n_cands; i++) {
        sweep_ami_kind k;
        if (!instance_type_arch(f->cands[i].type, NULL, NULL)) {
            const char *why = instance_type_not_measurable(f->cands[i].type);
            if (why)
                return ib_error_set(err, IB_EXIT_USAGE, "%s: instbench does not measure it: %s", f->cands[i].spec, why);
            continue;
        }
        if (sweep_type_ami_kind(f->cands[i].type, NULL, &k, NULL, err) != 0) return -1;
        /* A CPU-only type measures one node: cross-process data parallelism is the CUDA backend's
         * (NCCL); the CPU backend averages between ranks of one process only. */
        if (f->cands[i].nodes > 1 && (k == SWEEP_AMI_CPU_X86_64 || k == SWEEP_AMI_CPU_ARM64))
            return ib_error_set(err, IB_EXIT_USAGE,
                                "%s: %s has no GPU, and the CPU backend measures one node only (across nodes "
                                "instbench trains through CUDA's NCCL): give %s alone",
                                f->cands[i].spec, f->cands[i].type, f->cands[i].type);
    }
    if (aws_credentials_resolve(&ctx->cred, err) != 0) return -1;
    /* as many attempts as the executor: throttling (RequestLimitExceeded) backs off, it does not end the sweep */
    aws_client_options opt = {.refresh = aws_credentials_refresh, .max_attempts = 8};
    if (aws_client_create(&opt, &ctx->cred, &ctx->client, err) != 0) return -1;
    if (!(ctx->cands = calloc(f->n_cands, sizeof *ctx->cands)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    memcpy(ctx->cands, f->cands, f->n_cands * sizeof *ctx->cands);
    if (f->capacity_reservation && check_block(f, ctx, time(NULL), err) != 0) return -1;
    if (fetch_prices(f, ctx, err) != 0) return -1;
    /* EC2's word on the types before the AMIs: its architecture picks the image */
    if (describe_networks(f, ctx, err) != 0) return -1;
    int need[SWEEP_AMI_KINDS] = {0};
    for (size_t i = 0; i < f->n_cands; i++) {
        sweep_ami_kind k;
        if (sweep_type_ami_kind(f->cands[i].type, ctx->ec2_arch[i], &k, NULL, err) != 0) return -1;
        need[k] = 1;
    }
    if (f->ami ? check_override(f, ctx, err) : resolve_amis(f, ctx, need, err)) return -1;
    if (aws_ec2_default_network(ctx->client, f->region, ctx->vpc_id, ctx->sg_id, &ctx->subnets, &ctx->n_subnets, err) !=
        0)
        return -1;
    sweep_plan_input in = {.region = f->region,
                           .cands = ctx->cands,
                           .n = f->n_cands,
                           .prices = ctx->per_cand,
                           .amis = ctx->amis,
                           .ami_override = f->ami ? &ctx->override : NULL,
                           .max_minutes = f->max_minutes,
                           .max_cost_usd = f->max_cost_usd,
                           .nets = ctx->net_of,
                           .ec2_archs = (const char *const *)ctx->ec2_arch,
                           .efa_off = f->efa_off};
    if (sweep_plan_build(&in, &ctx->plan, err) != 0) return -1;
    for (size_t i = 0; i < ctx->plan.n; i++) ctx->efa_wanted |= ctx->plan.lines[i].efa.n > 0;
    if (ctx->efa_wanted) {
        int in_self = 0, out_self = 0;
        if (aws_ec2_group_self_rules(ctx->client, f->region, ctx->sg_id, &in_self, &out_self, err) != 0) return -1;
        ctx->default_sg_efa_ready = in_self && out_self;
    }
    return 0;
}

void sweep_context_free(sweep_context *ctx)
{
    sweep_plan_free(&ctx->plan);
    free(ctx->subnets);
    free(ctx->per_cand);
    free(ctx->cands);
    free(ctx->nets);
    free(ctx->net_of);
    free(ctx->ec2_arch);
    prices_free(&ctx->prices);
    aws_client_destroy(ctx->client);
    memset(ctx, 0, sizeof *ctx);
}
