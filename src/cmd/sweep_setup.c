/* cmd/sweep_setup: the part of `sweep plan` and `sweep run` before any launch (contract in
 * cmd/sweep_setup.h). */
#include "cmd/sweep_setup.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "instbench/instance_type.h"
#include "instbench/aws_ids.h"
#include "instbench/output.h"
#include "instbench/suggest.h"

const char *const sweep_formats[] = {"table", "json", "csv", NULL};   /* csv: run's ranking only */
const char *const sweep_efa_modes[] = {"auto", "off", NULL};

int sweep_take_candidates(void *dst, const char *flag, const char *value, ib_error *err)
{
    sweep_flags *f = dst;
    (void)flag;
    return sweep_candidates_add(value, &f->cands, &f->n_cands, err);
}

void sweep_flags_init(sweep_flags *f)
{
    memset(f, 0, sizeof *f);
    f->max_minutes = SWEEP_DEFAULT_MAX_MINUTES;
    f->max_cost_usd = NAN;
    f->prices = PRICES_SOURCE_AUTO;
    f->format = -1;
}

void sweep_flags_free(sweep_flags *f)
{
    free(f->cands);
    free(f->s3_prefix);
    f->cands = NULL;
    f->s3_prefix = NULL;
}

int sweep_flags_split(int argc, char **argv, sweep_flags *f)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            f->measure_args = argv + i + 1;
            f->n_measure_args = argc - i - 1;
            return i;
        }
    return argc;
}

/* measure flags the sweep sets itself on each instance: who it is (instance metadata), the
 * cluster's shape (the rendezvous), where the result goes (a presigned URL). */
static const char *const sweep_sets[] = {"--instance-type", "--region", "--market", "--count", "--nnodes",
                                         "--node-rank", "--master-addr", "--master-port", "--output", "-o",
                                         "--append", "--create-dirs", "--dry-run", "--format", NULL};

static int check_measure_args(const arg_command *cmd, const sweep_flags *f)
{
    for (int i = 0; i < f->n_measure_args; i++) {
        const char *a = f->measure_args[i];
        for (const char *const *s = sweep_sets; *s; s++) {
            size_t n = strlen(*s);
            int short_flag = (*s)[1] != '-';
            if (!strncmp(a, *s, n) && (a[n] == '\0' || a[n] == '=' || short_flag))
                return args_usage_error(cmd, "measure flag %s after --: the sweep sets it on each instance itself "
                                        "(identity from instance metadata, the cluster from the candidate, the "
                                        "result to S3)", *s);
        }
    }
    /* measure's own parser, as measure would run it on the instance: its message, exit 2 */
    char **argv = calloc((size_t)f->n_measure_args + 2, sizeof *argv);
    if (!argv) return IB_EXIT_RUNTIME;
    argv[0] = "measure";
    for (int i = 0; i < f->n_measure_args; i++) argv[i + 1] = f->measure_args[i];
    int rc = cmd_measure_check_args(f->n_measure_args + 1, argv);
    free(argv);
    if (rc) fprintf(stderr, "instbench %s: the measure flags after -- are refused by measure (above)\n", cmd->name);
    return rc;
}

int sweep_flags_check(const arg_command *cmd, sweep_flags *f)
{
    char dym[128];
    ib_error err = {0};
    if (f->n_cands == 0) return args_usage_error(cmd, "give the configurations to measure: --candidates SPEC[,SPEC...]");
    if (!f->region) {
        if (aws_region_resolve(f->region_buf, &err) != 0)
            return args_usage_error(cmd, "give --region (no region is configured: %s)", err.msg);
        f->region = f->region_buf;
    }
    if (!aws_region_known(f->region) && !prices_catalogue_has_region(f->region))
        return args_usage_error(cmd, "--region: '%s' is not an AWS region instbench knows%s", f->region,
                                args_did_you_mean(prices_suggest_region(f->region), dym, sizeof dym));
    if (f->ami) {
        if (!aws_ami_id_valid(f->ami))
            return args_usage_error(cmd, "--ami: '%s' is not an AMI ID like ami-0123456789abcdef0", f->ami);
    }
    size_t blocks = 0;
    for (size_t i = 0; i < f->n_cands; i++) blocks += f->cands[i].block;
    if (f->capacity_reservation) {
        const char *id = f->capacity_reservation;
        if (!aws_capacity_reservation_id_valid(id))
            return args_usage_error(cmd, "--capacity-reservation: '%s' is not a Capacity Reservation ID like "
                                    "cr-0123456789abcdef0", id);
        if (blocks != 1)
            return args_usage_error(cmd, "--capacity-reservation needs exactly one candidate on the capacity-block "
                                    "market (e.g. 2xp5.48xlarge:capacity-block), %zu given", blocks);
    } else if (blocks) {
        return args_usage_error(cmd, "a :capacity-block candidate launches into a block the account already bought: "
                                "name it with --capacity-reservation cr-... (instbench never purchases one)");
    }
    if (f->s3) {
        if (aws_s3_parse_uri(f->s3, f->s3_bucket, &f->s3_prefix, &err) != 0)
            return args_usage_error(cmd, "--s3: %s", err.msg);
        size_t pl = strlen(f->s3_prefix);
        if (pl && f->s3_prefix[pl - 1] != '/') {   /* a prefix is a folder: the sweep adds keys below it */
            char *p = realloc(f->s3_prefix, pl + 2);
            if (!p) return IB_EXIT_RUNTIME;
            memcpy(p + pl, "/", 2);
            f->s3_prefix = p;
        }
    }
    return check_measure_args(cmd, f);
}

/* ---- prices, AMIs, network ----------------------------------------------------------------- */

static int fetch_prices(const sweep_flags *f, sweep_context *ctx, ib_error *err)
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
    q.source = (prices_source)f->prices;
    q.skip_placement_scores = 1;
    if (prices_get(&q, &ctx->prices, err) != 0) return -1;
    ctx->per_cand = calloc(f->n_cands, sizeof *ctx->per_cand);
    if (!ctx->per_cand) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < f->n_cands; i++) ctx->per_cand[i] = prices_find(&ctx->prices, f->cands[i].type, f->region);
    return 0;
}

/* --ami: it must exist and suit every candidate's architecture (EC2's answer, else the catalogue's;
 * one known to neither is not checked: the image is the user's word). */
static int check_override(const sweep_flags *f, sweep_context *ctx, ib_error *err)
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
static int resolve_amis(const sweep_flags *f, sweep_context *ctx, const int *need, ib_error *err)
{
    for (int k = 0; k < SWEEP_AMI_KINDS; k++) {
        if (!need[k]) continue;
        const char *param = sweep_ami_parameter((sweep_ami_kind)k);
        sweep_ami *a = &ctx->amis[k];
        int rc = aws_ssm_get_parameter(ctx->client, f->region, param, a->id, sizeof a->id, err);
        if (rc == 1)
            return ib_error_set(err, IB_EXIT_RUNTIME, "%s: no current %s AMI there (SSM parameter %s not found); "
                                "pass --ami", f->region, sweep_ami_kind_arch((sweep_ami_kind)k), param);
        if (rc != 0) return -1;
        snprintf(a->source, sizeof a->source, "%s", param);
    }
    return 0;
}

/* --capacity-reservation: EC2's own description of the block decides.  It must be a Capacity Block
 * (not an on-demand Capacity Reservation), active now (a block not yet started is refused with its
 * start), for the candidate's type with room for its nodes, and outlast --max-minutes; the
 * candidate then launches in the block's zone only.  Exit 2 for each: the user picks another. */
static int check_block(const sweep_flags *f, sweep_context *ctx, time_t now, ib_error *err)
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
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s is not a Capacity Block (its reservation "
                            "type is %s): instbench launches only into a Capacity Block for ML", id,
                            b->reservation_type[0] ? b->reservation_type : "not given");
    if (!strcmp(b->state, "scheduled") || !strcmp(b->state, "payment-pending") || (b->start && b->start > now))
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s is not active yet: it starts at %s (%s)",
                            id, b->start ? when : "a time EC2 did not give", b->state);
    if (strcmp(b->state, "active") != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s is %s, not active", id, b->state);
    if (strcmp(b->instance_type, c->type) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s holds %s, not %s (%s)", id,
                            b->instance_type, c->type, c->spec);
    if (b->available < c->nodes)
        return ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s has %d of its %d instances free, %s needs %d",
                            id, b->available, b->total, c->spec, c->nodes);
    if (b->end && now + (time_t)ceil(f->max_minutes * 60) > b->end)
        return ib_error_set(err, IB_EXIT_USAGE, "--max-minutes %g runs past the end of Capacity Block %s at %s: at "
                            "most %.0f minutes are left", f->max_minutes, id, end, floor(difftime(b->end, now) / 60));
    snprintf(c->reservation, sizeof c->reservation, "%s", b->id);
    snprintf(c->reservation_az, sizeof c->reservation_az, "%s", b->az);
    return 0;
}

/* DescribeInstanceTypes, once per type, for the types of the multi-node candidates (their network:
 * one node has no traffic between nodes, and --efa off asks none) and for those whose family the
 * instance-type catalogue lacks (their architecture). */
static int describe_networks(const sweep_flags *f, sweep_context *ctx, ib_error *err)
{
    if (!(ctx->nets = calloc(f->n_cands, sizeof *ctx->nets)) || !(ctx->net_of = calloc(f->n_cands, sizeof *ctx->net_of)) ||
        !(ctx->ec2_arch = calloc(f->n_cands, sizeof *ctx->ec2_arch)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    char *types[SWEEP_MAX_CANDIDATES];
    size_t n = 0;
    for (size_t i = 0; i < f->n_cands; i++) {
        int network = ctx->cands[i].nodes > 1 && f->efa != 1;
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
                if (ctx->cands[i].nodes > 1 && f->efa != 1) ctx->net_of[i] = &ctx->nets[i];
                if (ctx->nets[i].arch[0]) ctx->ec2_arch[i] = ctx->nets[i].arch;
            }
    return 0;
}

int sweep_prepare(const sweep_flags *f, sweep_context *ctx, ib_error *err)
{
    memset(ctx, 0, sizeof *ctx);
    /* what the catalogue alone can refuse, before any request (a type whose architecture only EC2
     * can tell is checked once DescribeInstanceTypes has answered) */
    for (size_t i = 0; i < f->n_cands; i++) {
        sweep_ami_kind k;
        if (!instance_type_arch(f->cands[i].type, NULL, NULL)) {
            const char *why = instance_type_not_measurable(f->cands[i].type);
            if (why) return ib_error_set(err, IB_EXIT_USAGE, "%s: instbench does not measure it: %s", f->cands[i].spec, why);
            continue;
        }
        if (sweep_type_ami_kind(f->cands[i].type, NULL, &k, NULL, err) != 0) return -1;
        /* A CPU-only type measures one node: cross-process data parallelism is the CUDA backend's
         * (NCCL); the CPU backend averages between ranks of one process only. */
        if (f->cands[i].nodes > 1 && (k == SWEEP_AMI_CPU_X86_64 || k == SWEEP_AMI_CPU_ARM64))
            return ib_error_set(err, IB_EXIT_USAGE,
                                "%s: %s has no GPU, and the CPU backend measures one node only (across nodes "
                                "instbench trains through CUDA's NCCL): give %s alone", f->cands[i].spec,
                                f->cands[i].type, f->cands[i].type);
    }
    if (aws_credentials_resolve(&ctx->cred, err) != 0) return -1;
    /* as many attempts as the executor: throttling (RequestLimitExceeded) backs off, it does not end the sweep */
    aws_client_options opt = {.refresh = aws_credentials_refresh, .max_attempts = 8};
    if (aws_client_create(&opt, &ctx->cred, &ctx->client, err) != 0) return -1;
    if (!(ctx->cands = calloc(f->n_cands, sizeof *ctx->cands))) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
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
    if (aws_ec2_default_network(ctx->client, f->region, ctx->vpc_id, ctx->sg_id, &ctx->subnets, &ctx->n_subnets,
                                err) != 0)
        return -1;
    sweep_plan_input in = {.region = f->region, .cands = ctx->cands, .n = f->n_cands, .prices = ctx->per_cand,
                           .amis = ctx->amis, .ami_override = f->ami ? &ctx->override : NULL,
                           .max_minutes = f->max_minutes, .max_cost_usd = f->max_cost_usd,
                           .nets = ctx->net_of, .ec2_archs = (const char *const *)ctx->ec2_arch,
                           .efa_off = f->efa == 1};
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

/* ---- printing -------------------------------------------------------------------------------- */

static const char *verdict_text(const sweep_plan *p)
{
    switch (p->verdict) {
    case SWEEP_WITHIN: return "within";
    case SWEEP_OVER: return "over";
    case SWEEP_UNPRICED: return "unpriced";
    default: return "no ceiling";
    }
}

static void print_json(const sweep_flags *f, const sweep_context *ctx, const char (*dry)[64], FILE *out)
{
    const sweep_plan *p = &ctx->plan;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "instbench.sweep-plan/v1");
    cJSON_AddStringToObject(o, "region", f->region);
    cJSON_AddNumberToObject(o, "max_minutes", p->max_minutes);
    if (isnan(p->max_cost_usd)) cJSON_AddNullToObject(o, "max_cost_usd");
    else cJSON_AddNumberToObject(o, "max_cost_usd", p->max_cost_usd);
    cJSON *a = cJSON_AddArrayToObject(o, "candidates");
    for (size_t i = 0; i < p->n; i++) {
        const sweep_plan_line *l = &p->lines[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "spec", l->cand.spec);
        cJSON_AddStringToObject(j, "instance_type", l->cand.type);
        cJSON_AddNumberToObject(j, "nodes", l->cand.nodes);
        cJSON_AddStringToObject(j, "market", l->cand.block ? "capacity-block" : l->cand.spot ? "spot" : "on-demand");
        if (l->cand.block) {
            cJSON_AddStringToObject(j, "capacity_reservation", l->cand.reservation);
            cJSON_AddStringToObject(j, "capacity_reservation_az", l->cand.reservation_az);
        }
        cJSON_AddBoolToObject(j, "committed", l->committed);
        cJSON_AddStringToObject(j, "architecture", sweep_ami_kind_arch(l->kind));
        cJSON_AddStringToObject(j, "architecture_source", l->arch_source ? l->arch_source : "instance-type catalogue");
        cJSON_AddStringToObject(j, "ami", l->ami.id);
        cJSON_AddStringToObject(j, "ami_source", l->ami.source);
        if (isnan(l->usd_per_node_hour)) cJSON_AddNullToObject(j, "usd_per_node_hour");
        else cJSON_AddNumberToObject(j, "usd_per_node_hour", l->usd_per_node_hour);
        cJSON_AddStringToObject(j, "price_source", l->price_source);
        cJSON_AddBoolToObject(j, "spot_at_on_demand", l->spot_at_on_demand);
        if (isnan(l->worst_case_usd)) cJSON_AddNullToObject(j, "worst_case_usd");
        else cJSON_AddNumberToObject(j, "worst_case_usd", l->worst_case_usd);
        if (l->efa.n) {
            cJSON *e = cJSON_AddObjectToObject(j, "efa");
            cJSON *ifs = cJSON_AddArrayToObject(e, "interfaces");
            for (int k = 0; k < l->efa.n; k++) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddNumberToObject(x, "network_card", l->efa.nic[k].card);
                cJSON_AddNumberToObject(x, "device_index", l->efa.nic[k].device);
                cJSON_AddStringToObject(x, "interface_type", l->efa.nic[k].type);
                cJSON_AddBoolToObject(x, "public_ip", l->efa.nic[k].public_ip);
                cJSON_AddItemToArray(ifs, x);
            }
            cJSON_AddNumberToObject(e, "devices", l->efa.devices);
            cJSON_AddBoolToObject(e, "elastic_ip", l->efa.elastic_ip);
        } else {
            cJSON_AddNullToObject(j, "efa");
            cJSON_AddStringToObject(j, "efa_reason", l->efa.why);
        }
        if (dry) cJSON_AddStringToObject(j, "dry_run", dry[i][0] ? dry[i] : "not run");
        cJSON_AddItemToArray(a, j);
    }
    cJSON_AddNumberToObject(o, "instances", p->instances);
    if (isnan(p->total_usd)) cJSON_AddNullToObject(o, "total_usd");
    else cJSON_AddNumberToObject(o, "total_usd", p->total_usd);
    cJSON_AddStringToObject(o, "verdict", verdict_text(p));
    cJSON *net = cJSON_AddObjectToObject(o, "network");
    cJSON_AddStringToObject(net, "vpc", ctx->vpc_id);
    cJSON_AddStringToObject(net, "security_group", ctx->sg_id);
    /* EFA candidates: "default" (it already allows all traffic to and from itself), "created" (the
       run creates one, tagged, and deletes it at the end), null when no candidate gets EFA */
    if (ctx->efa_wanted) cJSON_AddStringToObject(net, "efa_security_group", ctx->default_sg_efa_ready ? "default" : "created");
    else cJSON_AddNullToObject(net, "efa_security_group");
    cJSON_AddNumberToObject(net, "elastic_ips", p->elastic_ips);
    cJSON *zones = cJSON_AddArrayToObject(net, "zones");
    for (size_t i = 0; i < ctx->n_subnets; i++) cJSON_AddItemToArray(zones, cJSON_CreateString(ctx->subnets[i].az));
    ib_error err = {0};
    if (output_json_write(out, o, &err) != 0) ib_warn("sweep plan: %s", err.msg);   /* the project's one JSON layout */
    cJSON_Delete(o);
}

/* The one money format (output_fmt_usd): a few minutes' worst case keeps its figures ("$0.0367"). */
static void money(double v, char *out, size_t len)
{
    if (isnan(v)) snprintf(out, len, "unpriced");
    else output_fmt_usd(out, len, v);
}

static void print_table(const sweep_flags *f, const sweep_context *ctx, const char (*dry)[64], FILE *out)
{
    const sweep_plan *p = &ctx->plan;
    char m[32], h[32];
    fprintf(out, "sweep plan: %zu candidate%s, %d instance%s in %s, each at most %g min\n\n", p->n,
            p->n == 1 ? "" : "s", p->instances, p->instances == 1 ? "" : "s", f->region, p->max_minutes);
    fprintf(out, "%-26s %9s  %-9s  %-21s  %10s  %-10s  %s\n", "CANDIDATE", "INSTANCES", "MARKET", "AMI", "$/NODE-H",
            "WORST CASE", "PRICE SOURCE");
    for (size_t i = 0; i < p->n; i++) {
        const sweep_plan_line *l = &p->lines[i];
        money(l->worst_case_usd, m, sizeof m);
        money(l->usd_per_node_hour, h, sizeof h);
        fprintf(out, "%-26s %9d  %-9s  %-21s  %10s  %-10s  %s\n", l->cand.spec, l->cand.nodes,
                l->cand.block ? "block" : l->cand.spot ? "spot" : "on-demand", l->ami.id, h, m,
                l->price_source[0] ? l->price_source : "-");
    }
    money(p->total_usd, m, sizeof m);
    fprintf(out, "%-26s %9d  %-9s  %-21s  %10s  %-10s\n", "TOTAL", p->instances, "", "", "", m);
    fprintf(out, "\nAMIs:\n");
    for (size_t i = 0; i < p->n; i++) {
        int first = 1;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(p->lines[k].ami.id, p->lines[i].ami.id) || strcmp(p->lines[k].ami.source, p->lines[i].ami.source);
        if (first)
            fprintf(out, "  %s  %s (%s)\n", p->lines[i].ami.id, p->lines[i].ami.source,
                    sweep_ami_kind_arch(p->lines[i].kind));
    }
    fprintf(out, "network: default VPC %s, its default security group %s, %zu zone%s:", ctx->vpc_id, ctx->sg_id,
            ctx->n_subnets, ctx->n_subnets == 1 ? "" : "s");
    for (size_t i = 0; i < ctx->n_subnets; i++) fprintf(out, " %s", ctx->subnets[i].az);
    fprintf(out, "\n");
    for (size_t i = 0; i < p->n; i++) {
        char text[600];
        if (p->lines[i].cand.nodes < 2) continue;
        sweep_efa_text(&p->lines[i].efa, text, sizeof text);
        fprintf(out, "interfaces per node of %s: %s\n", p->lines[i].cand.spec, text);
    }
    if (ctx->efa_wanted)
        fprintf(out, "EFA security group: %s\n", ctx->default_sg_efa_ready
                ? "the default one (it allows all traffic to and from itself)"
                : "created by the run (all traffic to and from itself; the default one does not allow it), tagged, "
                  "deleted at the end");
    if (p->elastic_ips > SWEEP_EIP_DEFAULT_QUOTA)
        fprintf(out, "note: %d Elastic IPs at once (one per EFA node with several interfaces): a region's default "
                "quota is %d (Service Quotas, EC2, \"EC2-VPC Elastic IPs\")\n", p->elastic_ips, SWEEP_EIP_DEFAULT_QUOTA);
    for (size_t i = 0; i < p->n; i++)
        if (p->lines[i].committed) {
            char end[32];
            util_utc_iso8601(ctx->block.end, end);
            fprintf(out, "committed: %s runs in Capacity Block %s (%s, ends %s): its fee is already paid, counted as "
                    "committed spend, not in the worst case\n", p->lines[i].cand.spec, p->lines[i].cand.reservation,
                    p->lines[i].cand.reservation_az, end);
        }
    for (size_t i = 0; i < p->n; i++)
        if (p->lines[i].spot_at_on_demand)
            fprintf(out, "note: %s has no spot price in %s: its worst case is at the on-demand price\n",
                    p->lines[i].cand.spec, f->region);
    if (dry) {
        fprintf(out, "EC2 DryRun (RunInstances):");
        for (size_t i = 0; i < p->n; i++)
            fprintf(out, "%s %s %s", i ? "," : "", p->lines[i].cand.spec, dry[i][0] ? dry[i] : "not run");
        fprintf(out, "\n");
    }
    char cap[32];
    money(p->max_cost_usd, cap, sizeof cap);
    if (p->verdict == SWEEP_WITHIN)
        fprintf(out, "worst case %s is within --max-cost %s\n", m, cap);
    else if (p->verdict == SWEEP_OVER)
        fprintf(out, "worst case %s is OVER --max-cost %s: `sweep run` would refuse (lower --max-minutes or drop "
                     "candidates)\n", m, cap);
    else if (p->verdict == SWEEP_UNPRICED)
        fprintf(out, "some candidates have no price in %s: `sweep run` would refuse (try --source snapshot)\n",
                f->region);
}

void sweep_plan_print(const sweep_flags *f, const sweep_context *ctx, const char (*dry)[64], FILE *out)
{
    int json = f->format >= 0 ? f->format == 1 : !util_isatty_stdout();
    if (json) print_json(f, ctx, dry, out);
    else print_table(f, ctx, dry, out);
}

/* ---- the DryRun ------------------------------------------------------------------------------- */

int sweep_dry_run(sweep_context *ctx, const char *region, char (*dry)[64], ib_error *err)
{
    const sweep_plan *p = &ctx->plan;
    int refused = -1;
    ib_error first = {0};
    for (size_t i = 0; i < p->n && i < SWEEP_MAX_CANDIDATES; i++) {
        const sweep_plan_line *l = &p->lines[i];
        ec2_tag tags[2];
        snprintf(tags[0].key, sizeof tags[0].key, "%s", SWEEP_TAG_SWEEP);
        snprintf(tags[0].value, sizeof tags[0].value, "plan");
        snprintf(tags[1].key, sizeof tags[1].key, "%s", SWEEP_TAG_CANDIDATE);
        snprintf(tags[1].value, sizeof tags[1].value, "%s", l->cand.spec);
        ec2_launch launch = {.region = region, .instance_type = l->cand.type, .image_id = l->ami.id,
                             .count = l->cand.nodes, .spot = l->cand.spot, .tags = tags, .n_tags = 2, .dry_run = 1,
                             .capacity_reservation = l->cand.block ? l->cand.reservation : NULL};
        if (l->efa.n && ctx->n_subnets) {
            /* the interfaces as run sends them, in a default subnet (the block's zone for a block) and
               the default group (run's own EFA group does not exist yet) */
            const ec2_subnet *sn = &ctx->subnets[0];
            for (size_t k = 0; k < ctx->n_subnets && l->cand.block; k++)
                if (!strcmp(ctx->subnets[k].az, l->cand.reservation_az)) sn = &ctx->subnets[k];
            launch.nics = l->efa.nic;
            launch.n_nics = (size_t)l->efa.n;
            launch.subnet_id = sn->id;
            launch.security_group_id = ctx->sg_id[0] ? ctx->sg_id : NULL;
        }
        ec2_instances none = {0};
        ib_error e = {0};
        char code[64];
        if (aws_ec2_run_instances(ctx->client, &launch, &none, code, &e) == 0) {
            snprintf(dry[i], 64, "permitted");
            continue;
        }
        snprintf(dry[i], 64, "%s", code[0] ? code : "failed");
        if (refused < 0) {
            refused = (int)i;
            first = e;
        }
    }
    if (refused < 0) return 0;
    const char *spec = p->lines[refused].cand.spec;
    /* UnauthorizedOperation is EC2's word; AccessDenied what IAM-enforcing stand-ins (moto) answer */
    if (!strcmp(dry[refused], "UnauthorizedOperation") || !strcmp(dry[refused], "AccessDenied"))
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 RunInstances DryRun for %s: not permitted (%s): these "
                            "credentials need ec2:RunInstances and ec2:CreateTags (docs/usage.md, \"Sweep\", lists "
                            "the whole policy)", spec, dry[refused]);
    return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 RunInstances DryRun for %s: %s", spec, first.msg);
}

/* ---- the bucket ------------------------------------------------------------------------------ */
int sweep_check_bucket(const sweep_flags *f, sweep_context *ctx, ib_error *err)
{
    aws_s3 *s3 = NULL;
    char region[32] = "";
    if (aws_s3_open(ctx->client, f->region, &s3, err) != 0) return -1;
    int rc = aws_s3_bucket_region(s3, f->s3_bucket, region, err);
    aws_s3_close(s3);
    if (rc != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "--s3 s3://%s/: %s", f->s3_bucket, err->msg);
    if (strcmp(region, f->region) != 0)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--s3: bucket %s is in %s, the sweep runs in %s: give a bucket in %s (the instances "
                            "would pay cross-region transfer for the sources and results, and their URLs would "
                            "be signed for another region)", f->s3_bucket, region, f->region, f->region);
    return 0;
}
