/* sweep/dry_run: the last checks before `sweep run` launches, made on the sweep's one client:
 * RunInstances with DryRun=true per candidate of the plan (a missing permission shows before
 * anything is spent) and the bucket's region (contract in instbench/sweep.h). */
#include "sweep/internal.h"

#include <stdio.h>
#include <string.h>

#include "instbench/util.h"

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
        ec2_launch launch = {.region = region,
                             .instance_type = l->cand.type,
                             .image_id = l->ami.id,
                             .count = l->cand.nodes,
                             .spot = l->cand.spot,
                             .spot_max_price = l->cand.spot ? l->spot_max_price : 0, /* as run sends it */
                             .tags = tags,
                             .n_tags = 2,
                             .dry_run = 1,
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
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "EC2 RunInstances DryRun for %s: not permitted (%s): these "
                            "credentials need ec2:RunInstances and ec2:CreateTags (docs/usage.md, \"Sweep\", lists "
                            "the whole policy)",
                            spec, dry[refused]);
    return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 RunInstances DryRun for %s: %s", spec, first.msg);
}

int sweep_check_bucket(sweep_context *ctx, const char *sweep_region, const char *bucket, ib_error *err)
{
    aws_s3 *s3 = NULL;
    char region[32] = "";
    if (aws_s3_open(ctx->client, sweep_region, &s3, err) != 0) return -1;
    int rc = aws_s3_bucket_region(s3, bucket, region, err);
    aws_s3_close(s3);
    if (rc != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "--s3 s3://%s/: %s", bucket, err->msg);
    if (strcmp(region, sweep_region) != 0)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--s3: bucket %s is in %s, the sweep runs in %s: give a bucket in %s (the instances "
                            "would pay cross-region transfer for the sources and results, and their URLs would "
                            "be signed for another region)",
                            bucket, region, sweep_region, sweep_region);
    return 0;
}
