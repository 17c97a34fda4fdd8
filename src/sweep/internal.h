/* sweep/internal.h: what the executor's files (executor.c, collect.c, cleanup.c, network.c) share,
 * and what lock.c tells stop.c of the lock. */
#ifndef INSTBENCH_SWEEP_INTERNAL_H
#define INSTBENCH_SWEEP_INTERNAL_H

#include "instbench/aws.h"
#include "instbench/aws_services.h"
#include "instbench/sweep.h"

/* One running `sweep run`: the state it keeps on disk and the AWS sessions it talks through. */
typedef struct sweep_ctx {
    sweep_state *st;
    const sweep_exec_options *o;
    aws_client *client;
    aws_s3 *s3;
    aws_credentials cred; /* for presigning only; wiped at the end */
    ec2_subnet *subnets;  /* the default VPC's, one per zone */
    size_t n_subnets;
    char sg_id[32]; /* the default VPC's default group */
    char vpc_id[32];
    char efa_sg[32];      /* the group EFA candidates launch in ("" until decided) */
    char source_key[600]; /* PREFIX/sources/<sha256>.tar.gz */
    char source_sha256[65];
    int *ended_polls;    /* per candidate: polls since a node of it was seen ended without an outcome */
    double *ended_since; /* per candidate: when that was first seen (0: not) */
    char *lost;          /* per candidate: 1 when a launch got no answer and not all its nodes were
                             found by ClientToken (the end then says needs-cleanup) */
} sweep_ctx;

/* The EC2 states that mean the instance is gone or going. */
int sweep_instance_ending(const char *state);
/* The same, or stopping / stopped: a node in any of them no longer runs its candidate's measure. */
int sweep_instance_down(const char *state);
/* 1 when *stop is set (a signal arrived). */
static inline int sweep_stopped(const volatile int *stop) { return stop && *stop; }
/* Sleeps SECONDS in short slices, returning early when *stop is set. */
void sweep_sleep(double seconds, const volatile int *stop);
/* st->inst[i] from what DescribeInstances says of it (state, zone, address, reason, end time). */
void sweep_instance_update(sweep_state_instance *in, const ec2_instance *e);
/* DescribeInstances of the instances of V not known terminated (an id EC2 does not know yet is
 * left as it was: eventual consistency); V updated from the answer.  -1 when the call failed. */
int sweep_instances_refresh(aws_client *c, const char *region, sweep_state_instance *v, size_t n, ib_error *err);
/* Saves ST; a failure is warned about (once) and marks st->save_failed: the file on disk is then
 * behind what the sweep does, so `run` launches nothing more and ends what it launched. */
void sweep_save_or_warn(sweep_state *st);

/* collect.c: one look at S3 under the sweep's prefix: results downloaded into o->results_dir,
 * failures' log tails read; candidates' outcomes set.  Returns how many candidates changed. */
int sweep_collect(sweep_ctx *x, ib_error *err);
/* the key PREFIX/sweep-<id>/<kind>/<rest> into OUT */
void sweep_key(const sweep_state *st, const char *kind, const char *rest, char *out, size_t len);
/* What candidate I's instances deliver, one builder for the URLs presigned and the keys looked
 * for: NODE < 0, its result (results/<name>.json); else node NODE's log (logs/<name>-node<k>.log). */
void sweep_delivery_key(const sweep_state *st, size_t i, int node, char *out, size_t len);

/* network.c: the sweep's tags (instbench:sweep=<id>, and instbench:candidate=CANDIDATE unless NULL)
 * into TAGS, their count into *n. */
void sweep_tags(const sweep_state *st, const char *candidate, ec2_tag tags[2], size_t *n);
/* What an EFA candidate adds to a launch and its end.
 * The group EFA candidates launch in: the default one when it already allows all traffic to and
 * from itself (DescribeSecurityGroupRules), else one the sweep creates (its name recorded in the
 * state before, its id after), once per sweep. */
int sweep_efa_group(sweep_ctx *x, ib_error *err);
/* An Elastic IP for each instance of candidate I (recorded in the state as soon as EC2 names it;
 * tagged, so cleanup finds one whose answer was lost); -1 when one could not be had. */
int sweep_eips_allocate(sweep_ctx *x, size_t i, ib_error *err);
/* Each allocated, not yet associated Elastic IP onto its instance's primary interface, when that
 * interface is attached (tried again every poll until then; an ended instance is skipped). */
void sweep_eips_associate(sweep_ctx *x);
/* After the instances are confirmed terminated: every Elastic IP of the state released (a few
 * tries while EC2 still counts it associated); -1 with err naming what is left. */
int sweep_eips_release(sweep_ctx *x, ib_error *err);
/* The sweep's own EFA security group deleted (tries while EC2 still counts terminated
 * instances' interfaces in it); -1 with err when it is left. */
int sweep_efa_group_delete(sweep_ctx *x, ib_error *err);

/* lock.c: sweep_state_held_by, and the lock file's identity in *FILE (to find it among a
 * process's open files): 0 when a live process holds ID's lock and the file names it, WHO ("sweep
 * run") and *PID; 1 when one holds it but the file never named it while it did (WHO and *PID: what
 * the file says, perhaps empty, perhaps an earlier holder); -1 when none holds it or the file
 * cannot be opened or is no regular file.  Named is still only a name: stop.c checks it. */
struct stat;
int sweep_state_lock_holder(const char *id, char *who, size_t len, long *pid, struct stat *file);
/* lock.c: whether PID has FILE, ID's lock file, open (one of /proc/PID/fd is it: the same device
 * and inode).  Only an entry whose link names a file called as the lock file is (symlinks and bind
 * mounts change the folder the kernel shows, never the name) is stat'ed: a stat follows the link
 * into the file's own file system, which for another of the process's files may be a hung NFS
 * mount.  *DENIED: /proc/PID/fd could not be read (another user's process). */
int sweep_lock_open_by(long pid, const char *id, const struct stat *file, int *denied);

/* cleanup.c: TerminateInstances for every instance of V not confirmed terminated (a failed call is
 * tried again next round), then DescribeInstances until each is "terminated" or WAIT_S passed.
 * Updates V as EC2 answers; CHANGED (may be NULL) is called after each round.  Returns how many
 * are not confirmed terminated. */
size_t sweep_terminate_confirm(aws_client *c, const char *region, sweep_state_instance *v, size_t n, double wait_s,
                               double poll_s, void (*changed)(void *), void *ctx);
/* By tag, for `sweep cleanup` and the end of `run`: every Elastic IP tagged instbench:sweep=ID
 * disassociated and released, then every security group so tagged deleted.  Returns how many are
 * left (err says the first). */
size_t sweep_network_cleanup_region(aws_client *c, const char *region, const char *id, double poll_s, ib_error *err);
/* ReleaseAddress, and DeleteSecurityGroup, tried again every POLL_S while EC2 still counts a
 * terminated instance's interface (a dozen tries); 0 when gone (already gone counts). */
int sweep_release_address(aws_client *c, const char *region, const char *allocation_id, double poll_s, ib_error *err);
int sweep_delete_group(aws_client *c, const char *region, const char *id, double poll_s, ib_error *err);
/* Terminates only (no wait): the instances of candidate CAND still alive; errors are warned. */
void sweep_terminate_candidate(sweep_ctx *x, int cand);

#endif
