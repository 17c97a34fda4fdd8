/* sweep/candidates: "[N x]TYPE[:on-demand|spot|capacity-block]" specs, checked against the price catalogue, and
 * which AMI each type needs.  Grammar (spaces allowed around the 'x', as rank prints "4 x g5.xlarge"):
 *   SPEC   = [COUNT WS* ('x'|'X') WS*] TYPE [':' MARKET]
 *   COUNT  = 1..SWEEP_MAX_NODES (decimal)      MARKET = on-demand | spot
 * A type may itself start with 'x' (x2idn.16xlarge): the count is only read when digits lead. */
#include "instbench/sweep.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/instance_type.h"
#include "instbench/names.h"
#include "instbench/suggest.h"
#include "instbench/util.h"

static const char *const markets[] = {"on-demand", "spot", "capacity-block"};

static int parse_count(const char *spec, const char **p, int *nodes, ib_error *err)
{
    const char *s = *p;
    if (!isdigit((unsigned char)*s)) {
        *nodes = 1;
        return 0;
    }
    long v = 0;
    while (isdigit((unsigned char)*s) && v <= 100000) v = v * 10 + (*s++ - '0');
    while (*s == ' ') s++;
    if (*s != 'x' && *s != 'X')
        return ib_error_set(err, IB_EXIT_USAGE,
                            "candidate '%s': a count is written Nx before the type "
                            "(4xg5.xlarge or 4 x g5.xlarge)",
                            spec);
    s++;
    while (*s == ' ') s++;
    if (v < 1)
        return ib_error_set(err, IB_EXIT_USAGE, "candidate '%s': 0 nodes (a candidate has 1 to %d)", spec,
                            SWEEP_MAX_NODES);
    if (v > SWEEP_MAX_NODES)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "candidate '%s': %ld nodes is more than the %d a sweep launches "
                            "per candidate",
                            spec, v, SWEEP_MAX_NODES);
    *nodes = (int)v;
    *p = s;
    return 0;
}

/* TYPE must be a catalogue type: its hardware picks the AMI, its prices bound the cost.  A size
 * the instance-type catalogue knows passes without a price (p6e-gb200, sold only as UltraServer
 * Capacity Blocks, has no public one): its plan line is unpriced, and says so. */
static int check_type(const char *spec, const char *type, ib_error *err)
{
    char buf[128], list[512];
    const char *problem = names_instance_type_size_problem(type);
    if (problem)
        return ib_error_set(err, IB_EXIT_USAGE, "candidate '%s': '%s' %s%s", spec, type, problem,
                            suggest_did_you_mean(prices_suggest_type(type), buf, sizeof buf));
    instance_type_facts facts;
    if (prices_catalogue_has_type(type) || (instance_type_facts_get(type, &facts) == 0 && facts.size_known &&
                                            facts.accel_kind != INSTANCE_ACCEL_NONE && !facts.sagemaker))
        return 0;
    const char *near;
    if (prices_catalogue_size_list(type, list, sizeof list, &near))
        return ib_error_set(err, IB_EXIT_USAGE,
                            "candidate '%s': '%s' is not one of the sizes the price snapshot "
                            "lists for its family (%s)%s",
                            spec, type, list, suggest_did_you_mean(near, buf, sizeof buf));
    return ib_error_set(err, IB_EXIT_USAGE,
                        "candidate '%s': '%s' is not in the price catalogue (a sweep needs the "
                        "type's hardware and price: `instbench prices` lists the types it knows)%s",
                        spec, type, suggest_did_you_mean(prices_suggest_type(type), buf, sizeof buf));
}

int sweep_candidate_parse(const char *spec, sweep_candidate *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    const char *p = spec;
    while (*p == ' ') p++;
    if (parse_count(spec, &p, &out->nodes, err) != 0) return -1;
    size_t tl = strcspn(p, ":");
    while (tl && p[tl - 1] == ' ') tl--;
    if (tl == 0) return ib_error_set(err, IB_EXIT_USAGE, "candidate '%s' names no instance type", spec);
    if (tl >= sizeof out->type)
        return ib_error_set(err, IB_EXIT_USAGE, "candidate '%.60s...': the instance type is too long", spec);
    memcpy(out->type, p, tl);
    out->type[tl] = '\0';
    const char *colon = strchr(p, ':');
    if (colon) {
        char m[32];
        const char *mv = colon + 1;
        while (*mv == ' ') mv++;
        size_t ml = strlen(mv);
        while (ml && mv[ml - 1] == ' ') ml--;
        snprintf(m, sizeof m, "%.*s", (int)(ml < 31 ? ml : 31), mv);
        if (!strcmp(m, "spot")) out->spot = 1;
        else if (!strcmp(m, "capacity-block")) out->block = 1;
        else if (strcmp(m, "on-demand") != 0) {
            char buf[64];
            return ib_error_set(err, IB_EXIT_USAGE,
                                "candidate '%s': unknown market '%s' (on-demand, spot, or "
                                "capacity-block with --capacity-reservation)%s",
                                spec, m, suggest_did_you_mean(suggest_closest(m, markets, 3), buf, sizeof buf));
        }
    }
    if (check_type(spec, out->type, err) != 0) return -1;
    const char *market = sweep_candidate_market(out);
    if (out->nodes > 1) snprintf(out->spec, sizeof out->spec, "%dx%s:%s", out->nodes, out->type, market);
    else snprintf(out->spec, sizeof out->spec, "%s:%s", out->type, market);
    return 0;
}

const char *sweep_candidate_market(const sweep_candidate *c) { return markets[c->block ? 2 : c->spot]; }

void sweep_candidate_json(cJSON *o, const sweep_candidate *c)
{
    cJSON_AddStringToObject(o, "spec", c->spec);
    cJSON_AddStringToObject(o, "instance_type", c->type);
    cJSON_AddNumberToObject(o, "nodes", c->nodes);
    cJSON_AddStringToObject(o, "market", sweep_candidate_market(c));
    if (c->block) {
        cJSON_AddStringToObject(o, "capacity_reservation", c->reservation);
        cJSON_AddStringToObject(o, "capacity_reservation_az", c->reservation_az);
    }
}

int sweep_candidates_add(const char *arg, sweep_candidate **v, size_t *n, ib_error *err)
{
    const char *p = arg;
    /* the one trimming rule every list flag keeps ('g5.xlarge, g5.12xlarge' is refused, as
     * `prices --instance-types` refuses it); the spaces inside a spec ("4 x g5.xlarge") are its own */
    if (util_space_around(arg, 1))
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--candidates: '%s' has whitespace around it or an item: give the values alone", arg);
    do {
        size_t len = strcspn(p, ",");
        char spec[160];
        if (len >= sizeof spec) return ib_error_set(err, IB_EXIT_USAGE, "candidate '%.60s...' is too long", p);
        memcpy(spec, p, len);
        spec[len] = '\0';
        sweep_candidate c;
        if (sweep_candidate_parse(spec, &c, err) != 0) return -1;
        for (size_t i = 0; i < *n; i++)
            if (!strcmp((*v)[i].spec, c.spec))
                return ib_error_set(err, IB_EXIT_USAGE, "candidate '%s' is listed twice (as %s)", spec, c.spec);
        if (*n >= SWEEP_MAX_CANDIDATES)
            return ib_error_set(err, IB_EXIT_USAGE, "more than %d candidates in one sweep", SWEEP_MAX_CANDIDATES);
        sweep_candidate *nv = realloc(*v, (*n + 1) * sizeof *nv);
        if (!nv) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        *v = nv;
        nv[(*n)++] = c;
        p += len;
    } while (*p++ == ',');
    return 0;
}

/* ---- AMIs ---------------------------------------------------------------------------------- */

static const struct {
    const char *parameter, *arch;
} amis[SWEEP_AMI_KINDS] = {
    [SWEEP_AMI_GPU_X86_64] =
        {"/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id", "x86_64"},
    [SWEEP_AMI_GPU_ARM64] =
        {"/aws/service/deeplearning/ami/arm64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id", "arm64"},
    [SWEEP_AMI_CPU_X86_64] = {"/aws/service/canonical/ubuntu/server/22.04/stable/current/amd64/hvm/ebs-gp2/ami-id",
                              "x86_64"},
    [SWEEP_AMI_CPU_ARM64] = {"/aws/service/canonical/ubuntu/server/22.04/stable/current/arm64/hvm/ebs-gp2/ami-id",
                             "arm64"},
};

const char *sweep_ami_parameter(sweep_ami_kind kind) { return amis[kind].parameter; }
const char *sweep_ami_kind_arch(sweep_ami_kind kind) { return amis[kind].arch; }

int sweep_type_ami_kind(const char *type, const char *ec2_arch, sweep_ami_kind *kind, const char **arch_source,
                        ib_error *err)
{
    /* what the type carries: the instance-type catalogue's, else (a type only a live price answer
     * or the cache knows) the price catalogue's hardware */
    instance_type_facts f;
    int gpu;
    if (instance_type_facts_get(type, &f) == 0) {
        if (f.not_measurable)
            return ib_error_set(err, IB_EXIT_USAGE,
                                "%s is priced, but instbench does not measure it: %s; pick an "
                                "NVIDIA GPU or a CPU type",
                                type, f.not_measurable);
        gpu = f.accel_kind == INSTANCE_ACCEL_NVIDIA;
    } else {
        const price_record *hw = prices_catalogue_hardware(type);
        if (!hw)
            return ib_error_set(err, IB_EXIT_USAGE,
                                "%s: neither the instance-type catalogue nor the price catalogue "
                                "states its hardware",
                                type);
        if (hw->hw.accelerator[0])
            return ib_error_set(err, IB_EXIT_USAGE,
                                "%s carries %s accelerators, a family the instance-type "
                                "catalogue does not know: instbench cannot tell whether its backends (CUDA, CPU) "
                                "run there",
                                type, hw->hw.accelerator);
        gpu = 0;
    }
    const char *src = NULL;
    const char *arch = instance_type_arch(type, ec2_arch, &src);
    if (!arch)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "%s: its CPU architecture is not known (the instance-type catalogue "
                            "lacks its family and EC2 did not say)",
                            type);
    if (arch_source) *arch_source = src;
    int arm = !strcmp(arch, "arm64");
    *kind =
        gpu ? (arm ? SWEEP_AMI_GPU_ARM64 : SWEEP_AMI_GPU_X86_64) : (arm ? SWEEP_AMI_CPU_ARM64 : SWEEP_AMI_CPU_X86_64);
    return 0;
}
