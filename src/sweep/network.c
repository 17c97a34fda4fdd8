/* sweep/network: what an EFA candidate adds to a sweep and takes away at its end (contract in
 * sweep/internal.h): the security group that lets EFA's traffic flow between the nodes, and the
 * Elastic IPs that give nodes with several interfaces (and so no public IPv4 address) their way
 * out to S3.  Each is recorded in the state file as soon as it exists and carries the sweep's tag,
 * so `sweep cleanup` finds it even when the state file is gone. */
#include "sweep/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/util.h"

void sweep_tags(const sweep_state *st, const char *candidate, ec2_tag tags[2], size_t *n)
{
    snprintf(tags[0].key, sizeof tags[0].key, "%s", SWEEP_TAG_SWEEP);
    snprintf(tags[0].value, sizeof tags[0].value, "%s", st->id);
    *n = 1;
    if (candidate) {
        snprintf(tags[1].key, sizeof tags[1].key, "%s", SWEEP_TAG_CANDIDATE);
        snprintf(tags[1].value, sizeof tags[1].value, "%s", candidate);
        *n = 2;
    }
}

int sweep_efa_group(sweep_ctx *x, ib_error *err)
{
    sweep_state *st = x->st;
    if (x->efa_sg[0]) return 0;
    if (st->sg_id[0] && !st->sg_deleted) { /* created earlier in this sweep */
        snprintf(x->efa_sg, sizeof x->efa_sg, "%s", st->sg_id);
        return 0;
    }
    int in_self = 0, out_self = 0;
    if (x->sg_id[0] && aws_ec2_group_self_rules(x->client, st->region, x->sg_id, &in_self, &out_self, err) != 0)
        return -1;
    if (in_self && out_self) {
        snprintf(x->efa_sg, sizeof x->efa_sg, "%s", x->sg_id);
        ib_info("EFA: the default security group %s allows all traffic to and from itself", x->sg_id);
        return 0;
    }
    if (!x->vpc_id[0]) return ib_error_set(err, IB_EXIT_RUNTIME, "no VPC known to create the EFA security group in");
    /* recorded before it exists: a crash between the two leaves a name (and the tag) to find it by */
    snprintf(st->sg_name, sizeof st->sg_name, "instbench-efa-%s", st->id);
    sweep_save_or_warn(st);
    ec2_tag tags[2];
    size_t n;
    sweep_tags(st, NULL, tags, &n);
    char id[32];
    /* the description without spaces: moto re-encodes a form before it checks its signature, and
       a space comes back as '+' (AWS itself takes either) */
    if (aws_ec2_create_self_group(x->client, st->region, x->vpc_id, st->sg_name,
                                  "instbench-sweep-EFA-all-traffic-to-and-from-itself", tags, n, id, err) != 0)
        return -1;
    snprintf(st->sg_id, sizeof st->sg_id, "%s", id);
    sweep_save_or_warn(st);
    snprintf(x->efa_sg, sizeof x->efa_sg, "%s", id);
    ib_info("EFA: created security group %s (%s): the default one %s does not allow all traffic to and from itself", id,
            st->sg_name, x->sg_id);
    return 0;
}

int sweep_eips_allocate(sweep_ctx *x, size_t i, ib_error *err)
{
    sweep_state *st = x->st;
    ec2_tag tags[2];
    size_t n;
    sweep_tags(st, st->cand[i].c.spec, tags, &n);
    for (size_t k = 0; k < st->n_inst; k++) {
        sweep_state_instance *in = &st->inst[k];
        if (in->candidate != (int)i || in->eip_allocation[0] || sweep_instance_ending(in->state)) continue;
        ec2_address a;
        if (aws_ec2_allocate_address(x->client, st->region, tags, n, &a, err) != 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "%s (a region holds 5 Elastic IPs unless its quota, \"EC2-VPC "
                                "Elastic IPs\", was raised)",
                                msg);
        }
        snprintf(in->eip_allocation, sizeof in->eip_allocation, "%s", a.allocation_id);
        snprintf(in->eip_public_ip, sizeof in->eip_public_ip, "%s", a.public_ip);
        sweep_save_or_warn(st);
        ib_info("%s: node %d (%s) gets Elastic IP %s", st->cand[i].c.spec, in->launch_index, in->id, a.public_ip);
    }
    sweep_eips_associate(x);
    return 0;
}

void sweep_eips_associate(sweep_ctx *x)
{
    sweep_state *st = x->st;
    for (size_t k = 0; k < st->n_inst; k++) {
        sweep_state_instance *in = &st->inst[k];
        if (!in->eip_allocation[0] || in->eip_associated || in->eip_released || sweep_instance_ending(in->state))
            continue;
        char eni[32], code[64];
        ib_error e = {0};
        int r = aws_ec2_primary_interface(x->client, st->region, in->id, in->private_ip, eni, &e);
        if (r < 0) ib_warn("%s: its network interfaces could not be listed (tried again next poll): %s", in->id, e.msg);
        if (r != 0) continue;
        if (aws_ec2_associate_address(x->client, st->region, in->eip_allocation, eni, code, &e) != 0) {
            ib_warn("%s: Elastic IP %s not associated yet (tried again next poll): %s", in->id, in->eip_public_ip,
                    e.msg);
            continue;
        }
        in->eip_associated = 1;
        sweep_save_or_warn(st);
    }
}

int sweep_eips_release(sweep_ctx *x, ib_error *err)
{
    sweep_state *st = x->st;
    int rc = 0;
    for (size_t k = 0; k < st->n_inst; k++) {
        sweep_state_instance *in = &st->inst[k];
        if (!in->eip_allocation[0] || in->eip_released) continue;
        ib_error e = {0};
        /* a terminated instance's address is disassociated by EC2 itself, a moment later */
        in->eip_released = sweep_release_address(x->client, st->region, in->eip_allocation,
                                                 x->o->poll_s > 0 ? x->o->poll_s : 1, &e) == 0;
        sweep_save_or_warn(st);
        if (!in->eip_released) {
            if (!rc)
                ib_error_set(err, IB_EXIT_RUNTIME, "Elastic IP %s (%s) not released: %s", in->eip_public_ip,
                             in->eip_allocation, e.msg);
            rc = -1;
        }
    }
    return rc;
}

int sweep_efa_group_delete(sweep_ctx *x, ib_error *err)
{
    sweep_state *st = x->st;
    if (!st->sg_id[0] || st->sg_deleted) return 0;
    ib_error e = {0};
    st->sg_deleted = sweep_delete_group(x->client, st->region, st->sg_id, x->o->poll_s > 0 ? x->o->poll_s : 1, &e) == 0;
    sweep_save_or_warn(st);
    if (!st->sg_deleted)
        return ib_error_set(err, IB_EXIT_RUNTIME, "security group %s (%s) not deleted: %s", st->sg_id, st->sg_name,
                            e.msg);
    ib_info("deleted security group %s", st->sg_id);
    return 0;
}
