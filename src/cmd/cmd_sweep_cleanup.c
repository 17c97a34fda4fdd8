/* cmd/sweep_cleanup: `instbench sweep cleanup`.  The flags and the passes are here; the work is
 * src/sweep/ (cleanup.c: ending a sweep's resources by tag; lock.c: the state file's lock; stop.c:
 * stopping a live `sweep run` for --force).  The state files are locked before they are written,
 * so a live `sweep run`'s file is left to it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "cmd/cmd_sweep_report.h"
#include "instbench/aws.h"
#include "instbench/names.h"
#include "instbench/prices.h"
#include "instbench/sweep.h"

static struct {
    int all;
    const char *region;
    double wait_s;
    int force;
} C;

static const arg_spec cleanup_specs[] = {
    {"--all", 0, ARG_FLAG, &C.all, NULL,
     "every sweep's instances, placement groups, Elastic IPs and\n"
     "security groups (any value of the\n"
     "instbench:sweep tag) in the regions of the state files here and --region.\n"
     "The state files are listed again at the end: a sweep started since whose\n"
     "`sweep run` is alive is named (exit 1); with --force it is ended as the\n"
     "listed ones were, its run stopped, in a further pass (3 passes at most)"},
    {"--region", 0, ARG_STRING, &C.region, "R",
     "look in R too (the state file's region, where the sweep ran, is always\n"
     "searched; without a state file: R, else AWS_REGION / the profile's region)",
     .check = names_region_problem, .suggest = prices_suggest_region},
    {"--wait", 0, ARG_DOUBLE, &C.wait_s, "SECONDS",
     "how long to wait for EC2 to confirm each instance terminated\n"
     "(default 600); with --force, also how long a live `sweep run` asked to\n"
     "stop is waited for",
     1, 86400},
    {"--force", 0, ARG_FLAG, &C.force, NULL,
     "end a sweep whose `sweep run` is still alive here, that run included\n"
     "(without --force such a sweep is refused, and --all refuses, before\n"
     "anything is ended): the run gets SIGINT, as from Ctrl-C, launches nothing\n"
     "more, terminates what it launched and exits 130; cleanup waits up to\n"
     "--wait seconds for it to let go of the state file (not once another\n"
     "`sweep cleanup` holds the file: that one writes it), then ends by tag\n"
     "whatever is left.  A holder it does not signal (not that sweep's run,\n"
     "another user's, one whose lock file does not name it) or that does not\n"
     "let go: named, instances ended by tag, exit 1 (docs/usage.md, \"The lock\")"},
    {0},
};

const arg_command cmd_sweep_cleanup_args = {
    "sweep cleanup",
    "ID|--all [--region R] [--wait SECONDS] [--force]",
    "Terminates every instance tagged instbench:sweep=ID, waits until EC2 confirms each terminated,\n"
    "then releases every Elastic IP and deletes every security group and placement group with that tag.  Instances are "
    "found by their tag\n"
    "(DescribeInstances), not from the state file, so it works after a crash or with the state file\n"
    "gone; `sweep run` names this command when it could not confirm everything ended.  The state\n"
    "file gets what EC2 showed, an instance found by tag that it did not record included (then its\n"
    "cost counts); an instance it records that EC2 shows nowhere is left as recorded.  A sweep whose\n"
    "`sweep run` is still alive (it holds the state file's lock) is refused unless --force, which\n"
    "stops that run first.\n"
    "Ctrl-C does not cut it short; a closed terminal or pipe does not stop it.",
    "environment: AWS credentials and region as for `prices`; for tests only:\n"
    "INSTBENCH_SWEEP_POLL_S (the poll interval in seconds, default 5), INSTBENCH_SWEEP_HOLDER_WAIT_S\n"
    "(how long a held lock's file may go without naming its holder, default 2).\n"
    "\n"
    "exit status: 0 nothing of the sweep is left running, 1 something could not be confirmed\n"
    "terminated or deleted, an instance of the state file not seen ended, a state file that cannot\n"
    "be read (run it again, with --region where it ran), a sweep whose `sweep run` is alive\n"
    "(without --force; nothing ended), or (--force) one whose live holder could not be stopped (its\n"
    "instances ended by tag all the same), or (--all) a sweep started while it ran whose `sweep run`\n"
    "is alive (with --force: still new after the third pass), 2 an ID that is not a sweep's.\n",
    cleanup_specs,
    "ID",
    .examples =
        (const arg_example[]){
            {"whatever any sweep left in us-east-1", "instbench sweep cleanup --all --region us-east-1"}, {0}},
};

/* The pid of another `sweep cleanup` that holds SID's lock now (the run let go, or was gone before
 * this one came), else 0.  That cleanup ends the same instances by tag and writes the state file,
 * so leaving the file to it leaves nothing undone. */
static long other_cleanup(const char *sid)
{
    char who[64];
    long pid = 0;
    return sweep_state_held_by(sid, who, sizeof who, &pid) && !strcmp(who, "sweep cleanup") ? pid : 0;
}

/* --force, for one sweep whose lock is held: asks its live `sweep run` to stop as Ctrl-C does
 * (sweep_run_stop: only when the process is that run).  *PID: the pid signalled (0: none);
 * otherwise the holder is waited for as any holder is (a `status --refresh` that lets go), and when
 * it still holds the lock the reason nothing was signalled is said.  The lock's answer (0: *FD
 * holds it now; 1: still held; 2: held by another `sweep cleanup`). */
static int force_stop(const char *sid, double hold_wait_s, long *pid, int *fd)
{
    ib_error why = {0}, err = {0};
    if (sweep_run_stop(sid, pid, &why) == 0) {
        ib_info("sweep %s: stopping its `instbench sweep run` (pid %ld) as Ctrl-C would: waiting up to %g s (--wait) "
                "for it to terminate what it launched and let go of its state file",
                sid, *pid, C.wait_s);
        return 1;
    }
    *pid = 0;
    int l = sweep_state_lock(sid, "sweep cleanup", hold_wait_s, fd, &err);
    long other = l == 1 ? other_cleanup(sid) : 0;
    if (other)
        util_term_printf(stderr,
                         "instbench sweep cleanup: %s: another `instbench sweep cleanup` (pid %ld) holds its state "
                         "file: its instances are ended by tag here too, the state file is left to it\n",
                         sid, other);
    else if (l == 1)
        util_term_printf(stderr,
                         "instbench sweep cleanup: %s; its instances are ended by tag, its state file is left to "
                         "its holder\n",
                         why.msg);
    if (l < 0) ib_warn("%s: going on without it", err.msg);
    return other ? 2 : l;
}

/* After --wait for SID's signalled run (pid RUN) ended with the lock held: who holds it now is
 * said.  2: another `sweep cleanup` (the run stopped; that cleanup writes the file); 1: the run
 * itself, or another process; 3 (nothing said): no one holds it any more (let go just now). */
static int held_after_stop(const char *sid, long run)
{
    char who[64];
    long pid = 0;
    const int held = sweep_state_held_by(sid, who, sizeof who, &pid);
    if (!held) return 3;
    if (pid <= 0) {
        util_term_printf(stderr,
                         "instbench sweep cleanup: %s: its `instbench sweep run` (pid %ld) was asked to stop; its "
                         "state file is still held after %g s (--wait), by a process that has not named itself in "
                         "its lock file (holder unknown): its instances are ended by tag, its state file is left to "
                         "its holder\n",
                         sid, run, C.wait_s);
        return 1;
    }
    if (!strcmp(who, "sweep run") && pid == run) {
        util_term_printf(stderr,
                         "instbench sweep cleanup: %s: its `instbench sweep run` (pid %ld) was asked to stop but did "
                         "not let go of its state file within %g s (--wait): its instances are ended by tag, its "
                         "state file is left to it\n",
                         sid, run, C.wait_s);
        return 1;
    }
    int cleanup = !strcmp(who, "sweep cleanup");
    util_term_printf(stderr,
                     "instbench sweep cleanup: %s: its `instbench sweep run` (pid %ld) stopped; %s`instbench %s` "
                     "(pid %ld) holds its state file now: its instances are ended by tag here too, the state file "
                     "is left to it\n",
                     sid, run, cleanup ? "another " : "", who, pid);
    return cleanup ? 2 : 1;
}

/* What one cleanup has taken up, over its passes: the state files it locked (or found held) and
 * loaded, and for --all the ids its listings had. */
typedef struct {
    sweep_state *states;
    int *owned; /* per state: 1 this cleanup may write it (its lock is ours, or no lock file can exist
                   there), 2 another `sweep cleanup` holds it (it writes it), 0 a live process still
                   holds it */
    int *fds;   /* per state: the lock's descriptor, -1 when none */
    size_t n;
    int unreadable, unstopped;
    char **listed; /* --all: every id a listing had, taken up or not */
    size_t n_listed;
    int unlisted; /* --all: a listing of the state files failed (said as it happened) */
} cleanup_set;

/* Room in S for CAP states; 0 when there is none. */
static int set_grow(cleanup_set *s, size_t cap)
{
    sweep_state *st = realloc(s->states, (cap ? cap : 1) * sizeof *st);
    if (st) s->states = st;
    int *o = st ? realloc(s->owned, (cap ? cap : 1) * sizeof *o) : NULL;
    if (o) s->owned = o;
    int *f = o ? realloc(s->fds, (cap ? cap : 1) * sizeof *f) : NULL;
    if (f) s->fds = f;
    return f != NULL;
}

/* Waits until UNTIL for SID's signalled run to let go of its lock: 0 taken (*FD), -1 the lock
 * failed, 1 still held at UNTIL, or as soon as another `sweep cleanup` holds it: the run has let
 * go then, and that cleanup writes the file; waiting on would only wait for its pass by tag, which
 * ends what this one's ends. */
static int wait_for_run(const char *sid, double until, int *fd, ib_error *err)
{
    for (;;) {
        double left = until - util_now_seconds();
        double slice = left > 1.0 ? 1.0 : left > 0 ? left : 0;
        int l = sweep_state_lock(sid, "sweep cleanup", slice, fd, err);
        if (l != 1 || slice >= left || other_cleanup(sid)) return l;
    }
}

/* The state files of one pass taken up into S: ID's, else those of IDS (N_IDS of them), each
 * locked first and then loaded (so what it reads is what the last writer left), before anything is
 * asked of AWS, so what EC2 says can be written into them.  A live `sweep run` holding one is
 * refused without --force; with it, it is stopped (force_stop, every one before any is waited
 * for) and its lock waited for up to --wait seconds from then.  S->unstopped counts those a live
 * process still holds; unreadable ones are warned about, counted in S->unreadable and left alone.
 * -1 after saying so when a live run holds one and --force is not given (nothing is to be ended
 * then), else 0. */
static int take_up(cleanup_set *s, const char *id, char *const *ids, size_t n_ids)
{
    ib_error err = {0};
    size_t want = id ? 1 : n_ids;
    int *held = NULL, *fds = NULL;
    long *pids = NULL;
    if (want && (!set_grow(s, s->n + want) || !(held = calloc(want, sizeof *held)) ||
                 !(fds = calloc(want, sizeof *fds)) || !(pids = calloc(want, sizeof *pids)))) {
        ib_warn("out of memory reading the state files (looking by tag only)");
        s->unreadable += (int)want;
        want = 0;
    }
    int rc = 0;
    /* --all looks at many: a holder that lets go within a second is waited for, a live run is not */
    double hold_wait_s = id ? SWEEP_LOCK_WAIT_S : 1.0;
    for (size_t i = 0; i < want; i++) {
        const char *sid = id ? id : ids[i];
        /* --force: a run is stopped at once, not after the wait for a holder that lets go */
        held[i] = sweep_state_lock(sid, "sweep cleanup", C.force ? 0 : hold_wait_s, &fds[i], &err);
        long other = held[i] == 1 && !C.force ? other_cleanup(sid) : 0;
        if (other) {
            util_term_printf(stderr,
                             "instbench sweep cleanup: %s: another `instbench sweep cleanup` (pid %ld) is ending it "
                             "now: nothing ended here (run this again once it is done)\n",
                             sid, other);
            rc = -1;
        } else if (held[i] == 1 && !C.force) {
            util_term_printf(stderr,
                             "instbench sweep cleanup: %s: it ends its instances itself; ending them under it needs "
                             "--force (which stops it too)%s: nothing ended\n",
                             err.msg, id ? "" : " (--all would end them too)");
            rc = -1;
        } else if (held[i] == 1) {
            held[i] = force_stop(sid, hold_wait_s, &pids[i], &fds[i]);
        } else if (held[i] < 0) {
            ib_warn("%s: going on without it", err.msg);
        }
    }
    double until = util_now_seconds() + C.wait_s;
    for (size_t i = 0; !rc && i < want; i++) {
        const char *sid = id ? id : ids[i];
        if (held[i] == 1 && pids[i]) {
            held[i] = wait_for_run(sid, until, &fds[i], &err);
            if (held[i] == 1 && !sweep_state_locked(sid, NULL, 0)) /* let go just after the wait */
                held[i] = sweep_state_lock(sid, "sweep cleanup", 0, &fds[i], &err);
            if (held[i] == 1) {
                /* 3: let go between the look at the lock and the read of its holder: take it, else
                 * who took it meanwhile is said (a few tries: each race is microseconds) */
                int h = held_after_stop(sid, pids[i]);
                for (int tries = 0; h == 3 && tries < 3; tries++) {
                    held[i] = sweep_state_lock(sid, "sweep cleanup", 0, &fds[i], &err);
                    h = held[i] == 1 ? held_after_stop(sid, pids[i]) : held[i];
                }
                if (h == 3)
                    util_term_printf(stderr,
                                     "instbench sweep cleanup: %s: its state file was taken and let go again while "
                                     "this cleanup looked: its instances are ended by tag, the file is left\n",
                                     sid);
                held[i] = h == 3 ? 1 : h;
            }
            if (held[i] == 1 || held[i] == 2) {
                /* said by held_after_stop */
            } else if (held[i] == 0)
                ib_info("sweep %s: its `instbench sweep run` (pid %ld) stopped and let go of its state file", sid,
                        pids[i]);
            else ib_warn("%s: going on without it", err.msg); /* the lock itself failed: as in the first pass */
        }
        s->unstopped += held[i] == 1;
        int ld = sweep_state_load(sid, &s->states[s->n], &err);
        if (ld == 0) {
            s->owned[s->n] = held[i] == 2 ? 2 : held[i] != 1;
            s->fds[s->n++] = fds[i];
            continue;
        }
        sweep_state_unlock(fds[i]);
        if (ld < 0) ib_warn("%s%s", err.msg, id ? " (looking by tag only)" : ""), s->unreadable++;
    }
    if (rc)
        for (size_t i = 0; i < want; i++) sweep_state_unlock(fds[i]);
    free(held);
    free(fds);
    free(pids);
    return rc;
}

/* Where to look: every loaded state file's region (where its sweep ran) and --region, once each;
 * with neither, AWS_REGION / the profile's. */
static size_t cleanup_regions(const sweep_state *states, size_t n_states, char regions[][32], size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i <= n_states && n < cap; i++) {
        const char *r = i < n_states ? states[i].region : C.region;
        if (!r || !r[0]) continue;
        int seen = 0;
        for (size_t k = 0; k < n; k++) seen |= !strcmp(regions[k], r);
        if (!seen) snprintf(regions[n++], 32, "%s", r);
    }
    ib_error err = {0};
    if (!n && aws_region_resolve(regions[0], &err) == 0) n = 1;
    return n;
}

/* After the regions were searched: each state file gets what EC2 showed, and only that.  An instance
 * it records that was seen neither running nor ended is left as recorded and named: the cleanup
 * cannot say it is gone (another region, another account, or EC2 forgot it).  A sweep found all
 * clean is done: its candidates that never got an outcome (its process died) get "not run".  A
 * state file another process holds (OWNED 0 or 2) is not written.  Returns how many were unseen. */
static size_t cleanup_record(sweep_state *states, const int *owned, size_t n_states, int all_clean, char regions[][32],
                             size_t n_regions)
{
    size_t unseen = 0;
    time_t now = time(NULL);
    for (size_t k = 0; k < n_states; k++) {
        sweep_state *st = &states[k];
        size_t left = 0;
        for (size_t i = 0; i < st->n_inst; i++) {
            if (!strcmp(st->inst[i].state, "terminated")) continue;
            left++;
            util_term_printf(stderr,
                             "instbench sweep cleanup: %s: instance %s (recorded %s) was not seen in %s%s: "
                             "left as recorded\n",
                             st->id, st->inst[i].id, st->inst[i].state, regions[0],
                             n_regions > 1 ? " or the other regions searched" : "");
        }
        unseen += left;
        if (owned[k] != 1) {
            ib_info("sweep %s: its state file is %s: not written", st->id,
                    owned[k] == 2 ? "another `instbench sweep cleanup`'s" : "its live `sweep run`'s");
            continue;
        }
        if (!left && all_clean) {
            for (size_t i = 0; i < st->n_cand; i++) {
                sweep_state_candidate *c = &st->cand[i];
                if (c->placement_group[0]) c->placement_group_deleted = 1;
                if (c->outcome != SWEEP_PENDING && c->outcome != SWEEP_RUNNING) continue;
                snprintf(
                    c->reason, sizeof c->reason, "%s",
                    c->outcome == SWEEP_PENDING
                        ? "not launched: the sweep's process ended first"
                        : "stopped before a result: the sweep's process ended; `sweep cleanup` ended its instances");
                c->outcome = SWEEP_NOT_RUN;
                if (!c->ended) c->ended = now;
            }
            snprintf(st->phase, sizeof st->phase, "done");
            if (!st->finished) st->finished = now;
        }
        ib_error err = {0};
        if (sweep_state_save(st, &err) != 0)
            util_term_printf(stderr,
                             "warning: sweep %s: what the cleanup found and ended could not be written into its state "
                             "file (%s): the file still shows the sweep as it was; what EC2 showed is above\n",
                             st->id, err.msg);
    }
    return unseen;
}

/* --all: the ids of the state files here that S's listings did not have (sweeps started since),
 * into *FRESH (malloc'd, also added to S->listed); how many.  LOST: what a listing that fails
 * costs, for its warning (the first listing's and a later one's differ). */
static size_t listed_since(cleanup_set *s, char ***fresh, const char *lost)
{
    char **ids = NULL;
    size_t n = 0, k = 0;
    ib_error err = {0};
    *fresh = NULL;
    if (sweep_state_list(&ids, &n, &err) != 0) {
        ib_warn("%s: %s", err.msg, lost);
        s->unlisted = 1;
        return 0;
    }
    char **grown = realloc(s->listed, (s->n_listed + n + 1) * sizeof *grown);
    if (grown) s->listed = grown;
    for (size_t i = 0; i < n; i++) {
        int known = 0;
        for (size_t j = 0; j < s->n_listed && !known; j++) known = !strcmp(ids[i], s->listed[j]);
        if (known || !grown) {
            free(ids[i]);
            continue;
        }
        ids[k++] = s->listed[s->n_listed++] = ids[i]; /* S->listed owns it */
    }
    if (!k) free(ids);
    else *fresh = ids;
    return k;
}

/* --all, at its end: a sweep whose state file no listing had (started while this cleanup ran) and
 * whose `sweep run` is alive was neither stopped nor refused, and may still be launching (its
 * instances found by tag were ended, later ones were not): named, with what to do.  Returns how
 * many. */
static int started_since(cleanup_set *s)
{
    char **ids = NULL, who[64];
    size_t n = listed_since(s, &ids, "a sweep started while this cleanup ran would not be seen");
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        long pid = 0;
        if (!sweep_state_held_by(ids[i], who, sizeof who, &pid) || strcmp(who, "sweep run")) continue;
        util_term_printf(stderr,
                         "instbench sweep cleanup: sweep %s was started while this cleanup ran (after it listed the "
                         "state files%s) and its `instbench sweep run` (pid %ld) is alive: not stopped, it may go on "
                         "launching: run `instbench sweep cleanup %s --force`\n",
                         ids[i], C.force ? " for its last pass" : "", pid, ids[i]);
        found++;
    }
    free(ids); /* the strings are S->listed's */
    return found;
}

/* One pass by tag (ID, "*" for --all) in every region of S's state files and --region, S's states
 * getting what EC2 showed; *TOTAL grows by the instances found.  IB_EXIT_OK, or IB_EXIT_RUNTIME
 * when a region's pass failed (said). */
static int pass_by_tag(cleanup_set *s, const char *id, char regions[][32], size_t n_regions, size_t *total)
{
    int rc = IB_EXIT_OK;
    ib_error err = {0};
    for (size_t r = 0; r < n_regions; r++) {
        size_t found = 0;
        ib_info("looking for %s's instances in %s", strcmp(id, "*") ? id : "every sweep", regions[r]);
        if (sweep_cleanup_region(NULL, regions[r], id, C.wait_s,
                                 sweep_env_seconds("INSTBENCH_SWEEP_POLL_S", SWEEP_DEFAULT_CLEANUP_POLL_S), s->states,
                                 s->n, &found, &err) != 0) {
            util_term_printf(stderr, "instbench sweep cleanup: %s: %s\n", regions[r], err.msg);
            rc = IB_EXIT_RUNTIME;
        }
        *total += found;
    }
    return rc;
}

/* --all --force: a sweep started while the cleanup ran (its state file in no listing yet) is
 * taken up as the listed ones were (its run stopped, waited for, its instances ended by tag, its
 * state written), and the state files listed again, until a listing has no new one; at most this
 * many passes in all, then what is still new is named (started_since). */
#define CLEANUP_PASSES 3

int cmd_sweep_cleanup(int argc, char **argv)
{
    memset(&C, 0, sizeof C);
    C.wait_s = SWEEP_DEFAULT_TERMINATE_WAIT_S;
    char *pos[argc + 1];
    int npos = 0, rc = args_parse(&cmd_sweep_cleanup_args, argc, argv, pos, &npos);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    if (C.all == (npos == 1) || npos > 1)
        return args_usage_error(&cmd_sweep_cleanup_args, "give one sweep ID or --all");
    if (npos == 1 && !sweep_id_valid(pos[0]))
        return args_usage_error(&cmd_sweep_cleanup_args, "'%s' is not a sweep ID (like 20261125-213005-9f3a)", pos[0]);
    sweep_install_handlers(); /* a Ctrl-C must not cut a cleanup short, nor a closed pipe: noted, the cleanup goes on */
    cleanup_set set = {0};
    char **ids = NULL;
    size_t n_ids = C.all ? listed_since(&set, &ids,
                                        C.force ? "no state file is read: no live `sweep run` is stopped, no state "
                                                  "file written, and only --region (else AWS_REGION) is searched"
                                                : "no state file is read")
                         : 0;
    if (set.unlisted && !C.force) {
        /* whether a `sweep run` is alive here is unknown: ending its instances under it is --force's */
        fprintf(stderr,
                "instbench sweep cleanup: without the state files it cannot tell whether a `sweep run` is "
                "alive here, so nothing is ended: make that folder readable, or end everything tagged "
                "anyway (only --region, else AWS_REGION, is searched): instbench sweep cleanup --all --force\n");
        rc = IB_EXIT_RUNTIME;
        goto out;
    }
    int taken = take_up(&set, C.all ? NULL : pos[0], ids, n_ids);
    free(ids);
    if (taken != 0) {
        rc = IB_EXIT_RUNTIME;
        goto out;
    }
    char regions[64][32]; /* distinct regions: AWS has fewer */
    size_t n_regions = cleanup_regions(set.states, set.n, regions, 64);
    if (!n_regions) {
        rc = args_usage_error(&cmd_sweep_cleanup_args, "no region to look in: give --region R");
        goto out;
    }
    /* With a state file, its region is searched whatever --region says: the sweep ran there. */
    if (!C.all && set.n && C.region && strcmp(C.region, set.states[0].region))
        ib_warn("sweep %s ran in %s (its state file), not %s: looking in both", pos[0], set.states[0].region, C.region);
    size_t total = 0;
    rc = pass_by_tag(&set, C.all ? "*" : pos[0], regions, n_regions, &total);
    for (int pass = 2; C.all && C.force && pass <= CLEANUP_PASSES; pass++) {
        size_t n_fresh = listed_since(&set, &ids, "a sweep started while this cleanup ran would not be seen");
        if (!n_fresh) break;
        ib_info("%zu sweep%s started while this cleanup ran: ending %s too (pass %d of at most %d)", n_fresh,
                n_fresh == 1 ? "" : "s", n_fresh == 1 ? "it" : "them", pass, CLEANUP_PASSES);
        take_up(&set, NULL, ids, n_fresh); /* --force: nothing refused */
        free(ids);
        n_regions = cleanup_regions(set.states, set.n, regions, 64);
        if (pass_by_tag(&set, "*", regions, n_regions, &total) != IB_EXIT_OK) rc = IB_EXIT_RUNTIME;
    }
    if (rc == IB_EXIT_OK && !C.all && set.unreadable && total == 0) {
        fprintf(stderr,
                "instbench sweep cleanup: nothing tagged %s=%s in %s, and its state file cannot be read (above): "
                "whatever it records is unknown\n",
                SWEEP_TAG_SWEEP, pos[0], regions[0]);
        rc = IB_EXIT_RUNTIME;
        goto out;
    }
    if (rc == IB_EXIT_OK && !C.all && !set.n && total == 0) {
        fprintf(stderr, "instbench sweep cleanup: no sweep %s: no state file here and nothing tagged %s=%s in %s\n",
                pos[0], SWEEP_TAG_SWEEP, pos[0], regions[0]);
        rc = IB_EXIT_USAGE;
        goto out;
    }
    sweep_drop_dead_outputs();
    size_t unseen = cleanup_record(set.states, set.owned, set.n, rc == IB_EXIT_OK, regions, n_regions);
    if (rc == IB_EXIT_OK && C.all && set.unreadable) {
        /* its region is unknown, so "nothing left" cannot be said for its sweep */
        fprintf(stderr,
                "instbench sweep cleanup: %d state file%s could not be read (above): %s sweep%s may have run "
                "in a region not searched (give --region)\n",
                set.unreadable, set.unreadable == 1 ? "" : "s", set.unreadable == 1 ? "its" : "their",
                set.unreadable == 1 ? "" : "s");
        rc = IB_EXIT_RUNTIME;
    }
    if (rc == IB_EXIT_OK && set.unlisted) {
        /* no state file was read, so a sweep that ran in a region not searched is unknown */
        fprintf(stderr,
                "instbench sweep cleanup: %zu instance%s terminated in the region%s searched, but the state "
                "files could not be listed (above): a sweep that ran elsewhere is not known\n",
                total, total == 1 ? "" : "s", n_regions == 1 ? "" : "s");
        rc = IB_EXIT_RUNTIME;
    }
    if (rc == IB_EXIT_OK && unseen) {
        fprintf(stderr,
                "instbench sweep cleanup: %zu instance%s recorded in the state file%s not seen ended: not "
                "marked terminated (give --region where it ran, or look in the EC2 console)\n",
                unseen, unseen == 1 ? "" : "s", C.all ? "s" : "");
        rc = IB_EXIT_RUNTIME;
    }
    if (rc == IB_EXIT_OK && set.unstopped) {
        /* its instances are gone, but the process that holds its state file may launch again */
        fprintf(stderr,
                "instbench sweep cleanup: %zu instance%s terminated, but %d sweep%s still held by a live process "
                "not stopped (above): stop it, then run `instbench sweep cleanup %s` again\n",
                total, total == 1 ? "" : "s", set.unstopped, set.unstopped == 1 ? " is" : "s are",
                C.all ? "--all" : pos[0]);
        rc = IB_EXIT_RUNTIME;
    }
    /* never "nothing left" while a run this cleanup did not stop may still be launching */
    if (C.all && started_since(&set)) rc = IB_EXIT_RUNTIME;
    if (rc == IB_EXIT_OK)
        ib_info("%zu instance%s terminated; nothing of %s is left running", total, total == 1 ? "" : "s",
                C.all ? "any sweep" : pos[0]);
out:
    for (size_t i = 0; i < set.n; i++) {
        sweep_state_free(&set.states[i]);
        sweep_state_unlock(set.fds[i]);
    }
    free(set.states);
    free(set.owned);
    free(set.fds);
    util_free_strv(set.listed, set.n_listed);
    return rc;
}
