/* cmd/sweep_setup: the flags `sweep plan` and `sweep run` share and the plan's printing (contract
 * in cmd/cmd_sweep_setup.h); what they ask AWS before a launch is sweep/prepare.c's. */
#include "cmd/cmd_sweep_setup.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "instbench/instance_type.h"
#include "instbench/aws_ids.h"
#include "instbench/output.h"
#include "instbench/precision.h"
#include "instbench/suggest.h"

const char *const sweep_formats[] = {"table", "json", "csv", NULL}; /* csv: run's ranking only */
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
static const char *const sweep_sets[] = {"--instance-type", "--region",      "--market",      "--count",  "--nnodes",
                                         "--node-rank",     "--master-addr", "--master-port", "--output", "-o",
                                         "--append",        "--create-dirs", "--dry-run",     "--format", NULL};

static int check_measure_args(const arg_command *cmd, const sweep_flags *f)
{
    for (int i = 0; i < f->n_measure_args; i++) {
        const char *a = f->measure_args[i];
        for (const char *const *s = sweep_sets; *s; s++) {
            size_t n = strlen(*s);
            int short_flag = (*s)[1] != '-';
            if (!strncmp(a, *s, n) && (a[n] == '\0' || a[n] == '=' || short_flag))
                return args_usage_error(cmd,
                                        "measure flag %s after --: the sweep sets it on each instance itself "
                                        "(identity from instance metadata, the cluster from the candidate, the "
                                        "result to S3)",
                                        *s);
        }
    }
    /* measure's own parser, as measure would run it on the instance, exit 2: its message as this
       command's, saying the flag was measure's, after -- (measure's help lists them) */
    char **argv = calloc((size_t)f->n_measure_args + 2, sizeof *argv);
    if (!argv) return IB_EXIT_RUNTIME;
    argv[0] = "measure";
    for (int i = 0; i < f->n_measure_args; i++) argv[i + 1] = f->measure_args[i];
    util_usage_forwarded(cmd->name, "measure flags after --: ");
    int gpu_bf16 = 0;
    int rc = cmd_measure_check_args(f->n_measure_args + 1, argv, &gpu_bf16);
    util_usage_forwarded(NULL, NULL);
    free(argv);
    if (rc == ARGS_HELP)
        return args_usage_error(cmd, "measure flags after --: -h/--help printed measure's help (above); after -- "
                                     "go the flags each instance's measure runs with");
    /* measure on the instance would refuse it (exit 2) after the instance was paid for: refused here,
     * before anything is launched */
    for (size_t i = 0; !rc && gpu_bf16 && i < f->n_cands; i++) {
        instance_type_facts t;
        if (instance_type_facts_get(f->cands[i].type, &t) == 0 && t.compute_capability > 0 &&
            t.compute_capability < IB_BF16_MIN_COMPUTE_CAPABILITY)
            return args_usage_error(cmd,
                                    "%s: its %s GPUs (compute capability %d.%d) have no bf16 matmuls, and measure "
                                    "would run bf16 there (its default, or --precision bf16 after --): give -- "
                                    "--precision fp32, or leave %s out",
                                    f->cands[i].spec, t.accelerator, t.compute_capability / 10,
                                    t.compute_capability % 10, f->cands[i].type);
    }
    return rc;
}

int sweep_flags_check(const arg_command *cmd, sweep_flags *f)
{
    char dym[128];
    ib_error err = {0};
    if (f->n_cands == 0)
        return args_usage_error(cmd, "give the configurations to measure: --candidates SPEC[,SPEC...]");
    char from[4200] = ""; /* where the region came from without --region: what a message about it names */
    if (!f->region) {
        if (aws_region_resolve_from(f->region_buf, from, sizeof from, &err) != 0)
            return args_usage_error(cmd, "give --region (no region is configured: %s)", err.msg);
        f->region = f->region_buf;
    }
    if (!aws_region_known(f->region) && !prices_catalogue_has_region(f->region))
        return args_usage_error(cmd, "%s: '%s' is not an AWS region instbench knows%s%s", from[0] ? from : "--region",
                                f->region, from[0] ? " (fix it or give --region)" : "",
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
            return args_usage_error(cmd,
                                    "--capacity-reservation: '%s' is not a Capacity Reservation ID like "
                                    "cr-0123456789abcdef0",
                                    id);
        if (blocks != 1)
            return args_usage_error(cmd,
                                    "--capacity-reservation needs exactly one candidate on the capacity-block "
                                    "market (e.g. 2xp5.48xlarge:capacity-block), %zu given",
                                    blocks);
    } else if (blocks) {
        return args_usage_error(cmd, "a :capacity-block candidate launches into a block the account already bought: "
                                     "name it with --capacity-reservation cr-... (instbench never purchases one)");
    }
    if (f->s3) {
        if (aws_s3_parse_uri(f->s3, f->s3_bucket, &f->s3_prefix, &err) != 0)
            return args_usage_error(cmd, "--s3: %s", err.msg);
        size_t pl = strlen(f->s3_prefix);
        if (pl && f->s3_prefix[pl - 1] != '/') { /* a prefix is a folder: the sweep adds keys below it */
            char *p = realloc(f->s3_prefix, pl + 2);
            if (!p) return IB_EXIT_RUNTIME;
            memcpy(p + pl, "/", 2);
            f->s3_prefix = p;
        }
    }
    return check_measure_args(cmd, f);
}

sweep_prepare_input sweep_flags_input(const sweep_flags *f)
{
    return (sweep_prepare_input){.region = f->region,
                                 .cands = f->cands,
                                 .n_cands = f->n_cands,
                                 .source = (prices_source)f->prices,
                                 .ami = f->ami,
                                 .capacity_reservation = f->capacity_reservation,
                                 .max_minutes = f->max_minutes,
                                 .max_cost_usd = f->max_cost_usd,
                                 .efa_off = f->efa == 1};
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
    cJSON_AddNumberToObject(o, "timer_minutes", sweep_timer_minutes(p->max_minutes));
    cJSON_AddNumberToObject(o, "billed_minutes_max", p->billed_minutes_max);
    if (isnan(p->max_cost_usd)) cJSON_AddNullToObject(o, "max_cost_usd");
    else cJSON_AddNumberToObject(o, "max_cost_usd", p->max_cost_usd);
    cJSON *a = cJSON_AddArrayToObject(o, "candidates");
    for (size_t i = 0; i < p->n; i++) {
        const sweep_plan_line *l = &p->lines[i];
        cJSON *j = cJSON_CreateObject();
        sweep_candidate_json(j, &l->cand);
        cJSON_AddBoolToObject(j, "committed", l->committed);
        cJSON_AddStringToObject(j, "architecture", sweep_ami_kind_arch(l->kind));
        cJSON_AddStringToObject(j, "architecture_source", l->arch_source ? l->arch_source : "instance-type catalogue");
        cJSON_AddStringToObject(j, "ami", l->ami.id);
        cJSON_AddStringToObject(j, "ami_source", l->ami.source);
        if (isnan(l->usd_per_node_hour)) cJSON_AddNullToObject(j, "usd_per_node_hour");
        else cJSON_AddNumberToObject(j, "usd_per_node_hour", l->usd_per_node_hour);
        cJSON_AddStringToObject(j, "price_source", l->price_source);
        cJSON_AddBoolToObject(j, "spot_at_on_demand", l->spot_at_on_demand);
        if (isnan(l->spot_max_price)) cJSON_AddNullToObject(j, "spot_max_price_usd");
        else cJSON_AddNumberToObject(j, "spot_max_price_usd", util_floor_millionths(l->spot_max_price));
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
    if (ctx->efa_wanted)
        cJSON_AddStringToObject(net, "efa_security_group", ctx->default_sg_efa_ready ? "default" : "created");
    else cJSON_AddNullToObject(net, "efa_security_group");
    cJSON_AddNumberToObject(net, "elastic_ips", p->elastic_ips);
    cJSON *zones = cJSON_AddArrayToObject(net, "zones");
    for (size_t i = 0; i < ctx->n_subnets; i++) cJSON_AddItemToArray(zones, cJSON_CreateString(ctx->subnets[i].az));
    ib_error err = {0};
    if (output_json_write(out, o, &err) != 0) ib_warn("sweep plan: %s", err.msg); /* the project's one JSON layout */
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
    fprintf(out,
            "sweep plan: %zu candidate%s, %d instance%s in %s, each at most %g min; its own timer %d min, billed at "
            "most %g min (with %d for boot and halt)\n\n",
            p->n, p->n == 1 ? "" : "s", p->instances, p->instances == 1 ? "" : "s", f->region, p->max_minutes,
            sweep_timer_minutes(p->max_minutes), p->billed_minutes_max, SWEEP_BOOT_ALLOWANCE_MINUTES);
    fprintf(out, "%-26s %9s  %-9s  %-21s  %10s  %-10s  %s\n", "CANDIDATE", "INSTANCES", "MARKET", "AMI", "$/NODE-H",
            "WORST CASE", "PRICE SOURCE");
    for (size_t i = 0; i < p->n; i++) {
        const sweep_plan_line *l = &p->lines[i];
        money(l->worst_case_usd, m, sizeof m);
        money(l->usd_per_node_hour, h, sizeof h);
        fprintf(out, "%-26s %9d  %-9s  %-21s  %10s  %-10s  %s\n", l->cand.spec, l->cand.nodes,
                l->cand.block  ? "block"
                : l->cand.spot ? "spot"
                               : "on-demand",
                l->ami.id, h, m, l->price_source[0] ? l->price_source : "-");
    }
    money(p->total_usd, m, sizeof m);
    fprintf(out, "%-26s %9d  %-9s  %-21s  %10s  %-10s\n", "TOTAL", p->instances, "", "", "", m);
    fprintf(out, "\nAMIs:\n");
    for (size_t i = 0; i < p->n; i++) {
        int first = 1;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(p->lines[k].ami.id, p->lines[i].ami.id) ||
                    strcmp(p->lines[k].ami.source, p->lines[i].ami.source);
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
        fprintf(out, "EFA security group: %s\n",
                ctx->default_sg_efa_ready
                    ? "the default one (it allows all traffic to and from itself)"
                    : "created by the run (all traffic to and from itself; the default one does not allow it), tagged, "
                      "deleted at the end");
    if (p->elastic_ips > SWEEP_EIP_DEFAULT_QUOTA)
        fprintf(out,
                "note: %d Elastic IPs at once (one per EFA node with several interfaces): a region's default "
                "quota is %d (Service Quotas, EC2, \"EC2-VPC Elastic IPs\")\n",
                p->elastic_ips, SWEEP_EIP_DEFAULT_QUOTA);
    for (size_t i = 0; i < p->n; i++)
        if (p->lines[i].committed) {
            char end[32];
            util_utc_iso8601(ctx->block.end, end);
            fprintf(out,
                    "committed: %s runs in Capacity Block %s (%s, ends %s): its fee is already paid, counted as "
                    "committed spend, not in the worst case\n",
                    p->lines[i].cand.spec, p->lines[i].cand.reservation, p->lines[i].cand.reservation_az, end);
        }
    for (size_t i = 0; i < p->n; i++)
        if (!isnan(p->lines[i].spot_max_price)) {
            money(util_floor_millionths(p->lines[i].spot_max_price), h, sizeof h);
            fprintf(out,
                    "spot: %s launches with MaxPrice %s/h, the price its worst case uses (EC2 interrupts or refuses "
                    "the launch rather than bill more)\n",
                    p->lines[i].cand.spec, h);
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
    if (p->verdict == SWEEP_WITHIN) fprintf(out, "worst case %s is within --max-cost %s\n", m, cap);
    else if (p->verdict == SWEEP_OVER)
        fprintf(out,
                "worst case %s is OVER --max-cost %s: `sweep run` would refuse (lower --max-minutes or drop "
                "candidates)\n",
                m, cap);
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
