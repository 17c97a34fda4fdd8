/* cmd/sweep_status: `instbench sweep status` (`sweep cleanup` is cmd_sweep_cleanup.c).  The flags
 * are read here; the work is src/sweep/ (state.c: the state file; lock.c: its lock; cleanup.c:
 * refreshing from EC2).  `--refresh` takes the state file's lock before it writes the file, so a
 * live `sweep run`'s file is left to it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "cmd/cmd_sweep_report.h"
#include "instbench/sweep.h"

/* ---- status ----------------------------------------------------------------------------------- */
static struct {
    int refresh;
    int format; /* 0 table, 1 json */
} S;
static const char *const status_formats[] = {"table", "json", NULL};

static const arg_spec status_specs[] = {
    {"--refresh", 0, ARG_FLAG, &S.refresh, NULL,
     "ask EC2 for each instance's state now (DescribeInstances), find the\n"
     "instances tagged with the sweep that the file does not record, and\n"
     "update the state file; without it the states are the last ones\n"
     "recorded.  A sweep whose `sweep run` is still alive is not refreshed:\n"
     "its state file is that process's (it holds the file's lock)"},
    {"--format", 0, ARG_CHOICE, &S.format, NULL, "table (default) or json: the state file itself",
     .choices = status_formats},
    {0},
};

const arg_command cmd_sweep_status_args = {
    "sweep status",
    "[ID] [--refresh] [--format table|json]",
    "Lists the sweeps started from this machine (their state files, $XDG_STATE_HOME/instbench/sweeps,\n"
    "else ~/.local/state/instbench/sweeps): id, region, phase, each candidate's outcome, and what the\n"
    "sweep may have left (instances not known terminated, Elastic IPs not known released, security\n"
    "and placement groups not known deleted: `sweep cleanup ID` removes them); with ID, every\n"
    "instance too, with its state, zone and the reason EC2 gave when it ended, and the sweep's cost\n"
    "so far.",
    "environment: for tests only: INSTBENCH_SWEEP_HOLDER_WAIT_S (how long a held lock's file may go\n"
    "without naming its holder, default 2).\n"
    "\n"
    "exit status: 0 listed, 1 a state file that cannot be read or written, EC2 unreachable, or\n"
    "(--refresh ID) a sweep whose `sweep run` is still alive, 2 an ID that is not a sweep's (no\n"
    "state file).\n",
    status_specs,
    "ID",
    .examples = (const arg_example[]){{"every sweep started here", "instbench sweep status"}, {0}},
};

static void status_line(const sweep_state *st)
{
    size_t counts[SWEEP_OUTCOME_COUNT] = {0};
    for (size_t i = 0; i < st->n_cand; i++) counts[st->cand[i].outcome]++;
    sweep_leftovers l = sweep_leftovers_of(st);
    size_t alive = l.instances;
    char outcomes[256] = "", left[256] = "", holder[128] = "";
    int k2 = 0;
    if (l.eips)
        k2 += snprintf(left + k2, sizeof left - (size_t)k2, "%s%zu Elastic IP%s", k2 ? ", " : "", l.eips,
                       l.eips == 1 ? "" : "s");
    if (l.groups) k2 += snprintf(left + k2, sizeof left - (size_t)k2, "%s%zu security group", k2 ? ", " : "", l.groups);
    if (l.placement)
        k2 += snprintf(left + k2, sizeof left - (size_t)k2, "%s%zu placement group%s", k2 ? ", " : "", l.placement,
                       l.placement == 1 ? "" : "s");
    int live = sweep_state_locked(st->id, holder, sizeof holder);
    size_t k = 0;
    for (int o = 0; o < SWEEP_OUTCOME_COUNT; o++)
        if (counts[o] && k < sizeof outcomes)
            k += (size_t)snprintf(outcomes + k, sizeof outcomes - k, "%s%zu %s", k ? ", " : "", counts[o],
                                  sweep_outcome_name(o));
    /* the phase and region came from a file: escaped as every such string is (C1 controls too) */
    util_term_printf(stdout, "%-20s  %-14s  %-13s  %2zu candidates (%s); %zu instance%s not known terminated%s%s%s",
                     st->id, st->region, st->phase, st->n_cand, outcomes, alive, alive == 1 ? "" : "s",
                     left[0] ? "; not known removed: " : "", left, live ? "; live: " : "");
    if (live) util_term_printf(stdout, "%s", holder);
    else if (alive || left[0]) util_term_printf(stdout, ": `instbench sweep cleanup %s`", st->id);
    fputc('\n', stdout);
}

/* `status --refresh` of one loaded sweep, under its lock: EC2 asked, what it shows recorded and
 * saved.  A live `sweep run` holding the lock is left alone.  0 refreshed; 1 not (held: said);
 * -1 an error (said). */
static int refresh_one(sweep_state *st, double wait_s)
{
    ib_error err = {0};
    int fd = -1;
    int l = sweep_state_lock(st->id, "sweep status --refresh", wait_s, &fd, &err);
    if (l == 1) {
        util_term_printf(stderr,
                         "instbench sweep status: %s: not refreshed (its state file is that process's to write; "
                         "shown as it recorded)\n",
                         err.msg);
        return 1;
    }
    if (l < 0) ib_warn("%s: refreshing without it", err.msg);
    /* the file as it is now that the lock is ours (a run that just ended wrote it last) */
    sweep_state fresh;
    if (sweep_state_load(st->id, &fresh, &err) == 0) {
        sweep_state_free(st);
        *st = fresh;
    }
    size_t found = 0;
    int rc = 0;
    if (sweep_state_refresh(st, 0, &found, &err) != 0) {
        util_term_printf(stderr, "instbench sweep status: %s: %s\n", st->id, err.msg);
        rc = -1;
    } else {
        if (found)
            ib_warn("%s: %zu instance%s tagged with the sweep that its state file did not record (a launch its "
                    "process never wrote down): recorded now",
                    st->id, found, found == 1 ? "" : "s");
        if (sweep_state_save(st, &err) != 0) {
            util_term_printf(stderr, "instbench sweep status: %s: what EC2 showed could not be written: %s\n", st->id,
                             err.msg);
            rc = -1;
        }
    }
    sweep_state_unlock(fd);
    return rc;
}

int cmd_sweep_status(int argc, char **argv)
{
    memset(&S, 0, sizeof S);
    char *pos[argc + 1];
    int npos = 0, rc = args_parse(&cmd_sweep_status_args, argc, argv, pos, &npos);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    if (npos > 1) return args_usage_error(&cmd_sweep_status_args, "at most one sweep ID (got %d)", npos);
    ib_error err = {0};
    sweep_state st;
    if (npos == 1) {
        if (!sweep_id_valid(pos[0]))
            return args_usage_error(&cmd_sweep_status_args, "'%s' is not a sweep ID (like 20261125-213005-9f3a)",
                                    pos[0]);
        if ((rc = sweep_state_load(pos[0], &st, &err)) != 0) {
            fprintf(stderr, "instbench sweep status: %s\n", err.msg);
            return err.code ? err.code : IB_EXIT_RUNTIME;
        }
        int refreshed = S.refresh ? refresh_one(&st, SWEEP_LOCK_WAIT_S) : 0;
        if (refreshed == 1) { /* a live run's: refused, the recorded state is what plain status shows */
            fprintf(stderr,
                    "instbench sweep status: `instbench sweep status %s` (without --refresh) shows what it has "
                    "recorded\n",
                    st.id);
            sweep_state_free(&st);
            return IB_EXIT_RUNTIME;
        }
        rc = refreshed < 0 ? IB_EXIT_RUNTIME : IB_EXIT_OK;
        if (S.format == 1) {
            char *json = sweep_state_json(&st);
            if (json) fputs(json, stdout);
            free(json);
        } else {
            status_line(&st);
            if (st.note[0]) util_term_printf(stdout, "  stopped early: %s\n", st.note);
            sweep_print_candidates(&st, stdout);
            sweep_print_instances(&st, stdout);
            sweep_print_network(&st, stdout);
            sweep_print_cost(&st, stdout);
        }
        sweep_state_free(&st);
        return rc;
    }
    char **ids = NULL;
    size_t n = 0;
    if (sweep_state_list(&ids, &n, &err) != 0) {
        fprintf(stderr, "instbench sweep status: %s\n", err.msg);
        return IB_EXIT_RUNTIME;
    }
    if (!n) ib_info("no sweeps started here");
    rc = IB_EXIT_OK;
    if (S.format == 1) printf("[");
    size_t printed = 0; /* the separator follows what was printed: a skipped file prints nothing */
    for (size_t i = 0; i < n; i++) {
        if (sweep_state_load(ids[i], &st, &err) != 0) {
            fprintf(stderr, "instbench sweep status: %s\n", err.msg);
            rc = IB_EXIT_RUNTIME;
            continue;
        }
        if (S.refresh && refresh_one(&st, 1.0) < 0) rc = IB_EXIT_RUNTIME;
        if (S.format == 1) {
            char *json = sweep_state_json(&st);
            if (json) printf("%s%s", printed++ ? "," : "", json);
            free(json);
        } else {
            status_line(&st);
        }
        sweep_state_free(&st);
    }
    if (S.format == 1) printf("]\n");
    util_free_strv(ids, n);
    return rc;
}
