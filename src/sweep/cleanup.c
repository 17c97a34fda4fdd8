/* sweep/cleanup: ending what a sweep launched, confirmed by EC2.  `sweep run` ends here whatever
 * happened, and `sweep cleanup` finds a sweep's instances, placement groups, Elastic IPs and
 * security groups by their tag alone, so a sweep whose process died (SIGKILL, a closed laptop) or
 * whose state file is gone is still cleaned up. */
#include "sweep/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instbench/util.h"

static int ec2_client(aws_client **c, ib_error *err);

void sweep_save_or_warn(sweep_state *st)
{
    ib_error err = {0};
    if (sweep_state_save(st, &err) == 0) return;
    if (!st->save_failed) {
        snprintf(st->save_error, sizeof st->save_error, "%.250s", err.msg);
        ib_warn("the sweep's state file could not be written: %s: nothing more is launched, and what runs is "
                "terminated (the file would not know it)",
                err.msg);
    }
    st->save_failed = 1;
}

int sweep_instance_ending(const char *state) { return !strcmp(state, "terminated") || !strcmp(state, "shutting-down"); }

int sweep_instance_down(const char *state)
{
    return sweep_instance_ending(state) || !strcmp(state, "stopping") || !strcmp(state, "stopped");
}

int sweep_state_adopt(sweep_state *st, const ec2_instance *e)
{
    for (size_t i = 0; i < st->n_inst; i++)
        if (!strcmp(st->inst[i].id, e->id)) return 0;
    int cand = -1;
    for (size_t k = 0; k < st->n_cand && cand < 0; k++)
        if (!strcmp(st->cand[k].c.spec, e->candidate_tag)) cand = (int)k;
    if (cand < 0 || e->launch_index < 0 || e->launch_index >= SWEEP_NODES_MAX) {
        util_term_printf(stderr,
                         "warning: instance %s carries sweep %s's tag but names no candidate of it (%s): not "
                         "recorded (`instbench sweep cleanup %s` ends it all the same)\n",
                         e->id, st->id, e->candidate_tag, st->id);
        return -1;
    }
    ib_error err = {0};
    sweep_state_instance *in = sweep_state_add_instance(st, &err);
    if (!in) {
        ib_warn("instance %s of sweep %s not recorded: %s", e->id, st->id, err.msg);
        return -1;
    }
    snprintf(in->id, sizeof in->id, "%s", e->id);
    in->candidate = cand;
    in->launch_index = e->launch_index;
    in->launched = e->launch_time > 0 ? e->launch_time : time(NULL);
    sweep_instance_update(in, e);
    sweep_state_candidate *c = &st->cand[cand];
    if (c->outcome == SWEEP_PENDING) {
        /* its launch happened but was never written down (the process killed before its save, or
           the file could not be written): the instance says it was launched */
        c->outcome = SWEEP_RUNNING;
        if (!c->launched || c->launched > in->launched) c->launched = in->launched;
        snprintf(c->reason, sizeof c->reason,
                 "launched, found by the sweep's tag: the sweep's process never recorded the launch");
    }
    return 1;
}

void sweep_sleep(double seconds, const volatile int *stop)
{
    double end = util_now_seconds() + seconds;
    while (!sweep_stopped(stop)) {
        double left = end - util_now_seconds();
        if (left <= 0) break;
        double slice = left < 0.05 ? left : 0.05;
        struct timespec ts = {(time_t)slice, (long)((slice - (double)(time_t)slice) * 1e9)};
        nanosleep(&ts, NULL); /* a signal cuts it short: the caller looks at *stop */
    }
}

void sweep_instance_update(sweep_state_instance *in, const ec2_instance *e)
{
    snprintf(in->state, sizeof in->state, "%s", e->state);
    if (e->az[0]) snprintf(in->az, sizeof in->az, "%s", e->az);
    if (e->private_ip[0]) snprintf(in->private_ip, sizeof in->private_ip, "%s", e->private_ip);
    if (e->state_reason_code[0]) snprintf(in->state_reason, sizeof in->state_reason, "%s", e->state_reason_code);
    /* The end is EC2's (StateTransitionReason's time) or our TerminateInstances', never the time
     * we happened to look: a look days later would bill days.  Unknown stays 0 (cost: capped). */
    if (sweep_instance_ending(e->state) && !in->ended) {
        if (e->transition_time > 0 && e->transition_time >= in->launched) in->ended = e->transition_time;
        else if (in->terminate_sent) in->ended = in->terminate_sent;
    }
}

int sweep_states_note(sweep_state *states, size_t n_states, const ec2_instance *e)
{
    int hit = 0;
    for (size_t k = 0; k < n_states; k++)
        for (size_t i = 0; i < states[k].n_inst; i++) {
            sweep_state_instance *in = &states[k].inst[i];
            if (strcmp(in->id, e->id) || !strcmp(in->state, "terminated")) continue;
            sweep_instance_update(in, e);
            hit = 1;
        }
    return hit;
}

int sweep_instances_refresh(aws_client *c, const char *region, sweep_state_instance *v, size_t n, ib_error *err)
{
    char **ids = malloc((n ? n : 1) * sizeof *ids);
    size_t k = 0;
    if (!ids) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].state, "terminated")) ids[k++] = v[i].id;
    int rc = 0;
    if (k) {
        ec2_instances out = {0};
        rc = aws_ec2_describe_instances(c, region, ids, k, NULL, NULL, &out, err);
        for (size_t j = 0; rc == 0 && j < out.n; j++)
            for (size_t i = 0; i < n; i++)
                if (!strcmp(v[i].id, out.v[j].id)) sweep_instance_update(&v[i], &out.v[j]);
        ec2_instances_free(&out);
    }
    free(ids);
    return rc;
}

/* The instances IDS (pointing into V's ids) were taken by TerminateInstances now: the latest their
 * end can be when EC2 names no time of its own. */
static void mark_terminate_sent(sweep_state_instance *v, size_t n, char *const *ids, size_t k)
{
    time_t now = time(NULL);
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < n; i++)
            if (ids[j] == v[i].id && !v[i].terminate_sent) v[i].terminate_sent = now;
}

size_t sweep_terminate_confirm(aws_client *c, const char *region, sweep_state_instance *v, size_t n, double wait_s,
                               double poll_s, void (*changed)(void *), void *ctx)
{
    double end = util_now_seconds() + wait_s;
    char **ids = malloc((n ? n : 1) * sizeof *ids);
    size_t left = n;
    if (!ids) return n;
    for (int round = 0;; round++) {
        /* Terminate what is not terminated yet: on the first round everything, later what a failed
         * call or a slow EC2 left (TerminateInstances of a terminating instance is harmless). */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(v[i].state, "terminated") && (round == 0 || strcmp(v[i].state, "shutting-down")))
                ids[k++] = v[i].id;
        ib_error err = {0};
        if (k && aws_ec2_terminate_instances(c, region, ids, k, &err) != 0)
            ib_warn("TerminateInstances failed (tried again): %s", err.msg);
        else if (k) mark_terminate_sent(v, n, ids, k);
        if (sweep_instances_refresh(c, region, v, n, &err) != 0)
            ib_warn("DescribeInstances failed (tried again): %s", err.msg);
        left = 0;
        for (size_t i = 0; i < n; i++) left += strcmp(v[i].state, "terminated") != 0;
        if (changed) changed(ctx);
        if (!left || util_now_seconds() >= end) break;
        sweep_sleep(poll_s, NULL); /* signals do not cut the wait short: the instances matter more */
    }
    free(ids);
    return left;
}

void sweep_terminate_candidate(sweep_ctx *x, int cand)
{
    sweep_state *st = x->st;
    char **ids = malloc((st->n_inst ? st->n_inst : 1) * sizeof *ids);
    size_t k = 0;
    if (!ids) return;
    for (size_t i = 0; i < st->n_inst; i++)
        if (st->inst[i].candidate == cand && strcmp(st->inst[i].state, "terminated")) ids[k++] = st->inst[i].id;
    ib_error err = {0};
    if (k && aws_ec2_terminate_instances(x->client, st->region, ids, k, &err) != 0)
        ib_warn("TerminateInstances for %s failed (tried again at the end): %s", st->cand[cand].c.spec, err.msg);
    else if (k) mark_terminate_sent(st->inst, st->n_inst, ids, k);
    free(ids);
}

/* Every placement group tagged ID (or any sweep's, ID "*") deleted; -1 when one is left. */
static int delete_groups(aws_client *c, const char *region, const char *id, ib_error *err)
{
    ec2_placement_group *g = NULL;
    size_t n = 0;
    if (aws_ec2_placement_groups_by_tag(c, region, SWEEP_TAG_SWEEP, id, &g, &n, err) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(g[i].state, "deleted")) continue;
        ib_error e = {0};
        if (aws_ec2_delete_placement_group(c, region, g[i].name, &e) != 0) {
            if (!rc) ib_error_set(err, IB_EXIT_RUNTIME, "placement group %s: %s", g[i].name, e.msg);
            rc = -1;
        } else {
            ib_info("deleted placement group %s", g[i].name);
        }
    }
    free(g);
    return rc;
}

/* What the cleanup itself saw of V (terminated, when, why) into the state that records it. */
static void note_seen(sweep_state *states, size_t n_states, const sweep_state_instance *v)
{
    for (size_t k = 0; k < n_states; k++)
        for (size_t i = 0; i < states[k].n_inst; i++) {
            sweep_state_instance *in = &states[k].inst[i];
            if (strcmp(in->id, v->id) || !strcmp(in->state, "terminated")) continue;
            snprintf(in->state, sizeof in->state, "%s", v->state);
            if (v->state_reason[0]) snprintf(in->state_reason, sizeof in->state_reason, "%s", v->state_reason);
            if (!in->ended && v->ended) in->ended = v->ended;
        }
}

/* EC2 frees a terminated instance's interfaces, and with them its Elastic IP and its security
 * group, within a minute or two: a release or delete refused meanwhile is tried again */
#define DELETE_TRIES 12

int sweep_release_address(aws_client *c, const char *region, const char *allocation_id, double poll_s, ib_error *err)
{
    char code[64];
    for (int t = 0; t < DELETE_TRIES; t++) {
        if (t) sweep_sleep(poll_s, NULL);
        if (aws_ec2_release_address(c, region, allocation_id, code, err) == 0) return 0;
    }
    return -1;
}

int sweep_delete_group(aws_client *c, const char *region, const char *id, double poll_s, ib_error *err)
{
    char code[64];
    for (int t = 0; t < DELETE_TRIES; t++) {
        if (t) sweep_sleep(poll_s, NULL);
        if (aws_ec2_delete_security_group(c, region, id, code, err) == 0) return 0;
        if (strcmp(code, "DependencyViolation") && strcmp(code, "InvalidGroup.InUse")) break;
    }
    return -1;
}

size_t sweep_network_cleanup_region(aws_client *c, const char *region, const char *id, double poll_s, ib_error *err)
{
    size_t left = 0;
    ec2_address *a = NULL;
    size_t na = 0;
    if (aws_ec2_addresses_by_tag(c, region, SWEEP_TAG_SWEEP, id, &a, &na, err) != 0) return 1;
    for (size_t i = 0; i < na; i++) {
        ib_error e = {0};
        /* cleanup runs after the instances are confirmed terminated: an association still there
           is EC2 not having caught up, or an instance of no sweep's: either way the address is ours */
        if (a[i].association_id[0] && aws_ec2_disassociate_address(c, region, a[i].association_id, &e) != 0)
            ib_warn("Elastic IP %s: %s", a[i].public_ip, e.msg);
        if (sweep_release_address(c, region, a[i].allocation_id, poll_s, &e) == 0) {
            ib_info("released Elastic IP %s (%s)", a[i].public_ip, a[i].allocation_id);
        } else {
            if (!left)
                ib_error_set(err, IB_EXIT_RUNTIME, "Elastic IP %s (%s) not released: %s", a[i].public_ip,
                             a[i].allocation_id, e.msg);
            left++;
        }
    }
    free(a);
    char(*g)[32] = NULL;
    size_t ng = 0;
    ib_error e = {0};
    if (aws_ec2_security_groups_by_tag(c, region, SWEEP_TAG_SWEEP, id, &g, &ng, &e) != 0) {
        if (!left) *err = e;
        return left + 1;
    }
    for (size_t i = 0; i < ng; i++) {
        if (sweep_delete_group(c, region, g[i], poll_s, &e) == 0) {
            ib_info("deleted security group %s", g[i]);
        } else {
            if (!left) ib_error_set(err, IB_EXIT_RUNTIME, "security group %s not deleted: %s", g[i], e.msg);
            left++;
        }
    }
    free(g);
    return left;
}

/* What the pass by tag ID (any sweep's for "*") removed in REGION, written into the states of
 * those sweeps: NETWORK, their Elastic IPs released and security group deleted; PLACEMENT, their
 * placement groups deleted. */
static void note_tagged_gone(sweep_state *states, size_t n_states, const char *region, const char *id, int network,
                             int placement)
{
    for (size_t k = 0; k < n_states; k++) {
        sweep_state *st = &states[k];
        if (strcmp(st->region, region) || (strcmp(id, "*") && strcmp(st->id, id))) continue;
        for (size_t i = 0; network && i < st->n_inst; i++)
            if (st->inst[i].eip_allocation[0]) st->inst[i].eip_released = 1;
        if (network && st->sg_name[0]) st->sg_deleted = 1;
        for (size_t i = 0; placement && i < st->n_cand; i++)
            if (st->cand[i].placement_group[0]) st->cand[i].placement_group_deleted = 1;
    }
}

static void print_instance(const sweep_state_instance *in)
{
    ib_info("  %s  %-14s %s%s", in->id, in->state, in->state_reason[0] ? "reason " : "", in->state_reason);
}

int sweep_cleanup_region(aws_client *client, const char *region, const char *id, double wait_s, double poll_s,
                         sweep_state *states, size_t n_states, size_t *found, ib_error *err)
{
    *found = 0;
    aws_client *c = client;
    if (!c && ec2_client(&c, err) != 0) return -1;
    ec2_instances all = {0};
    int rc = aws_ec2_describe_instances(c, region, NULL, 0, SWEEP_TAG_SWEEP, id, &all, err);
    sweep_state_instance *v = NULL;
    size_t n = 0;
    if (rc == 0 && all.n && !(v = calloc(all.n, sizeof *v))) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; rc == 0 && i < all.n; i++) {
        /* an instance of a sweep whose state does not record it (its launch answer or its save was
           lost) is recorded there first: what the cleanup ends and what it cost is then on file */
        for (size_t k = 0; k < n_states; k++)
            if (!strcmp(states[k].region, region) && !strcmp(states[k].id, all.v[i].sweep_tag) &&
                sweep_state_adopt(&states[k], &all.v[i]) == 1)
                ib_info("%s: %s was not in sweep %s's state file: recorded", region, all.v[i].id, states[k].id);
        sweep_states_note(states, n_states, &all.v[i]); /* an end EC2 shows, terminated ones included */
        if (!strcmp(all.v[i].state, "terminated")) continue;
        snprintf(v[n].id, sizeof v[n].id, "%s", all.v[i].id);
        sweep_instance_update(&v[n], &all.v[i]);
        ib_info("%s: %s (%s, sweep %s, %s)", region, all.v[i].id, all.v[i].state, all.v[i].sweep_tag,
                all.v[i].candidate_tag);
        n++;
    }
    ec2_instances_free(&all);
    *found = n;
    if (rc == 0 && n) {
        size_t left = sweep_terminate_confirm(c, region, v, n, wait_s, poll_s, NULL, NULL);
        for (size_t i = 0; i < n; i++) {
            print_instance(&v[i]);
            note_seen(states, n_states, &v[i]);
        }
        if (left)
            rc = ib_error_set(err, IB_EXIT_RUNTIME,
                              "%zu instance%s in %s not confirmed terminated yet; run the cleanup again", left,
                              left == 1 ? "" : "s", region);
    }
    /* Elastic IPs, security groups and placement groups only once their instances are gone: EC2
       refuses to delete a group an interface or an instance still holds. */
    if (rc == 0) {
        ib_error e = {0};
        size_t left = sweep_network_cleanup_region(c, region, id, poll_s, &e);
        rc = delete_groups(c, region, id, err);
        note_tagged_gone(states, n_states, region, id, !left, rc == 0);
        if (left && rc == 0) rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s", e.msg);
    }
    free(v);
    if (c != client) aws_client_destroy(c);
    return rc;
}

/* A client for one command's EC2 calls: the credential chain (refreshed as it expires), more
 * attempts than the default so throttling (RequestLimitExceeded) backs off instead of failing. */
static int ec2_client(aws_client **c, ib_error *err)
{
    aws_credentials cred;
    aws_client_options opt = {.refresh = aws_credentials_refresh, .max_attempts = 8};
    int rc = aws_credentials_resolve(&cred, err) != 0 || aws_client_create(&opt, &cred, c, err) != 0 ? -1 : 0;
    memset(&cred, 0, sizeof cred);
    return rc;
}

int sweep_state_refresh(sweep_state *st, int save, size_t *found, ib_error *err)
{
    aws_client *c = NULL;
    size_t adopted = 0;
    if (found) *found = 0;
    if (ec2_client(&c, err) != 0) return -1;
    int rc = sweep_instances_refresh(c, st->region, st->inst, st->n_inst, err);
    /* and by the sweep's tag, as cleanup looks: an instance whose launch the file never got */
    ec2_instances tagged = {0};
    if (rc == 0) rc = aws_ec2_describe_instances(c, st->region, NULL, 0, SWEEP_TAG_SWEEP, st->id, &tagged, err);
    for (size_t i = 0; rc == 0 && i < tagged.n; i++) {
        if (strcmp(tagged.v[i].sweep_tag, st->id)) continue;
        if (sweep_state_adopt(st, &tagged.v[i]) == 1) adopted++;
        else sweep_states_note(st, 1, &tagged.v[i]);
    }
    ec2_instances_free(&tagged);
    aws_client_destroy(c);
    if (found) *found = adopted;
    if (rc == 0 && save && sweep_state_save(st, err) != 0) rc = -1;
    return rc;
}
