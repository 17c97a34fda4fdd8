/* cmd/sweep_run: `instbench sweep run|status|cleanup`.  The flags are read here; the work is
 * src/sweep/ (state.c, executor.c, cleanup.c).  `run` refuses before anything is created when the
 * worst case exceeds --max-cost, then hands the plan to sweep_execute, which terminates
 * everything it launched whatever happens; results are ranked through `rank`'s own command. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/aws.h"
#include "instbench/names.h"
#include "instbench/output.h"
#include "instbench/prices.h"
#include "instbench/sweep.h"
#include "cmd/cmd_sweep_setup.h"

#define DEFAULT_POLL_S 15.0
#define DEFAULT_CLEANUP_POLL_S 5.0 /* cleanup only waits for terminations: it asks more often */
#define DEFAULT_TERMINATE_WAIT_S 600.0

static volatile int stop_signal; /* the signal that asked the sweep to stop; 0: none */

/* First signal: stop launching and watching, terminate everything, exit 128+N.  Later ones while
 * terminating are only noted: dying then would leave instances running. */
static void on_signal(int sig)
{
    if (!stop_signal) {
        stop_signal = sig;
        static const char msg[] = "\ninstbench sweep: stopping: terminating every instance of the sweep first\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
    } else {
        static const char msg[] = "instbench sweep: still terminating the sweep's instances; `instbench sweep cleanup` "
                                  "ends them if this process is killed\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
    }
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal must not leave instances either */
}

static double env_seconds(const char *name, double dflt)
{
    const char *v = getenv(name);
    double d;
    if (!v || !v[0]) return dflt;
    if (util_parse_double(v, 0.01, 86400, &d) != 0) {
        ib_warn("%s='%s' is not a number of seconds (0.01 to 86400); using %g", name, v, dflt);
        return dflt;
    }
    return d;
}

/* ---- printing a sweep ------------------------------------------------------------------------- */
static void print_instances(const sweep_state *st, FILE *f)
{
    fprintf(f, "  %-20s %-22s %-5s %-14s %-14s %s\n", "INSTANCE", "CANDIDATE", "NODE", "STATE", "ZONE", "REASON");
    for (size_t i = 0; i < st->n_inst; i++) {
        const sweep_state_instance *in = &st->inst[i];
        util_term_printf(f, "  %-20s %-22s %-5d %-14s %-14s %s", in->id, st->cand[in->candidate].c.spec,
                         in->launch_index, in->state, in->az[0] ? in->az : "-", in->state_reason);
        fputc('\n', f);
    }
}

static void print_candidates(const sweep_state *st, FILE *f)
{
    fprintf(f, "  %-22s %-12s %s\n", "CANDIDATE", "OUTCOME", "RESULT OR REASON");
    for (size_t i = 0; i < st->n_cand; i++) {
        const sweep_state_candidate *c = &st->cand[i];
        util_term_printf(f, "  %-22s %-12s %s", c->c.spec, sweep_outcome_name(c->outcome),
                         c->outcome == SWEEP_RESULT ? c->result_path : c->reason);
        fputc('\n', f);
    }
}

static void print_cost(const sweep_state *st, FILE *f)
{
    size_t unpriced = 0, estimated = 0;
    double usd = sweep_state_cost(st, st->finished ? st->finished : time(NULL), &unpriced, &estimated);
    char money[32];
    output_fmt_usd(money, sizeof money, usd);
    fprintf(f, "  cost of the sweep's instances: %s (instance-seconds x price per node-hour%s)\n", money,
            unpriced ? "; some instances have no known price and are not counted" : "");
    if (estimated)
        fprintf(f,
                "  %zu instance%s end is not known from EC2: counted until now, at most launch + --max-minutes "
                "(%g min)\n",
                estimated, estimated == 1 ? "'s" : "s'", st->max_minutes);
    /* a block's fee was paid before the sweep: committed, said apart, never in the sweep's cost */
    for (size_t i = 0; i < st->n_cand; i++)
        if (st->cand[i].c.block)
            util_term_printf(f,
                             "  committed: %s ran in Capacity Block %s, whose fee was paid when it was bought "
                             "(not in the sweep's cost)\n",
                             st->cand[i].c.spec, st->cand[i].c.reservation);
}

/* What an EFA candidate added besides instances, and whether it is gone. */
static void print_network(const sweep_state *st, FILE *f)
{
    size_t eips = 0, released = 0;
    for (size_t i = 0; i < st->n_inst; i++)
        if (st->inst[i].eip_allocation[0]) eips++, released += st->inst[i].eip_released != 0;
    if (eips)
        fprintf(f, "  Elastic IPs (EFA nodes with several interfaces): %zu allocated, %zu released%s\n", eips, released,
                released < eips ? ": `instbench sweep cleanup ID` releases the others" : "");
    if (st->sg_name[0])
        util_term_printf(f, "  EFA security group %s (%s): %s\n", st->sg_name, st->sg_id[0] ? st->sg_id : "id unknown",
                         st->sg_deleted ? "deleted" : "not known deleted: `instbench sweep cleanup ID` deletes it");
}

/* ---- status ----------------------------------------------------------------------------------- */
static struct {
    int refresh;
    int format; /* 0 table, 1 json */
} S;
static const char *const status_formats[] = {"table", "json", NULL};

static const arg_spec status_specs[] = {
    {"--refresh", 0, ARG_FLAG, &S.refresh, NULL,
     "ask EC2 for each instance's state now (DescribeInstances) and update\n"
     "the state file; without it the states are the last ones recorded"},
    {"--format", 0, ARG_CHOICE, &S.format, NULL, "table (default) or json: the state file itself",
     .choices = status_formats},
    {0},
};

const arg_command cmd_sweep_status_args = {
    "sweep status",
    "[ID] [--refresh] [--format table|json]",
    "Lists the sweeps started from this machine (their state files, $XDG_STATE_HOME/instbench/sweeps,\n"
    "else ~/.local/state/instbench/sweeps): id, region, phase, each candidate's outcome; with ID,\n"
    "every instance too, with its state, zone and the reason EC2 gave when it ended, and the sweep's\n"
    "cost so far.",
    "exit status: 0 listed, 1 a state file that cannot be read or EC2 unreachable (--refresh), 2 an\n"
    "ID that is not a sweep's (no state file).\n",
    status_specs,
    "ID",
    .examples = (const arg_example[]){{"every sweep started here", "instbench sweep status"}, {0}},
};

static void status_line(const sweep_state *st)
{
    size_t counts[SWEEP_OUTCOME_COUNT] = {0}, alive = 0;
    for (size_t i = 0; i < st->n_cand; i++) counts[st->cand[i].outcome]++;
    for (size_t i = 0; i < st->n_inst; i++) alive += strcmp(st->inst[i].state, "terminated") != 0;
    char outcomes[256] = "";
    size_t k = 0;
    for (int o = 0; o < SWEEP_OUTCOME_COUNT; o++)
        if (counts[o] && k < sizeof outcomes)
            k += (size_t)snprintf(outcomes + k, sizeof outcomes - k, "%s%zu %s", k ? ", " : "", counts[o],
                                  sweep_outcome_name(o));
    /* the phase and region came from a file: escaped as every such string is (C1 controls too) */
    util_term_printf(stdout, "%-20s  %-14s  %-13s  %2zu candidates (%s); %zu instance%s not known terminated\n", st->id,
                     st->region, st->phase, st->n_cand, outcomes, alive, alive == 1 ? "" : "s");
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
        if (S.refresh && sweep_state_refresh(&st, &err) != 0) {
            fprintf(stderr, "instbench sweep status: %s\n", err.msg);
            sweep_state_free(&st);
            return IB_EXIT_RUNTIME;
        }
        if (S.format == 1) {
            char *json = sweep_state_json(&st);
            if (json) fputs(json, stdout);
            free(json);
        } else {
            status_line(&st);
            if (st.note[0]) util_term_printf(stdout, "  stopped early: %s\n", st.note);
            print_candidates(&st, stdout);
            print_instances(&st, stdout);
            print_network(&st, stdout);
            print_cost(&st, stdout);
        }
        sweep_state_free(&st);
        return IB_EXIT_OK;
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
        if (S.refresh && sweep_state_refresh(&st, &err) != 0) {
            fprintf(stderr, "instbench sweep status: %s: %s\n", ids[i], err.msg);
            rc = IB_EXIT_RUNTIME;
        }
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

/* ---- cleanup ---------------------------------------------------------------------------------- */
static struct {
    int all;
    const char *region;
    double wait_s;
} C;

static const arg_spec cleanup_specs[] = {
    {"--all", 0, ARG_FLAG, &C.all, NULL,
     "every sweep's instances, placement groups, Elastic IPs and\n"
     "security groups (any value of the\n"
     "instbench:sweep tag) in the regions of the state files here and --region"},
    {"--region", 0, ARG_STRING, &C.region, "R",
     "look in R too (the state file's region, where the sweep ran, is always\n"
     "searched; without a state file: R, else AWS_REGION / the profile's region)",
     .check = names_region_problem, .suggest = prices_suggest_region},
    {"--wait", 0, ARG_DOUBLE, &C.wait_s, "SECONDS",
     "how long to wait for EC2 to confirm each instance terminated\n"
     "(default 600)",
     1, 86400},
    {0},
};

const arg_command cmd_sweep_cleanup_args = {
    "sweep cleanup",
    "ID|--all [--region R]",
    "Terminates every instance tagged instbench:sweep=ID, waits until EC2 confirms each terminated,\n"
    "then releases every Elastic IP and deletes every security group and placement group with that tag.  Instances are "
    "found by their tag\n"
    "(DescribeInstances), not from the state file, so it works after a crash or with the state file\n"
    "gone; `sweep run` names this command when it could not confirm everything ended.  The state\n"
    "file gets only what EC2 showed: an instance it records that EC2 shows nowhere is left as recorded.",
    "exit status: 0 nothing of the sweep is left running, 1 something could not be confirmed\n"
    "terminated or deleted, an instance of the state file not seen ended, or a state file that cannot\n"
    "be read (run it again, with --region where it ran), 2 an ID that is not a sweep's.\n",
    cleanup_specs,
    "ID",
    .examples =
        (const arg_example[]){
            {"whatever any sweep left in us-east-1", "instbench sweep cleanup --all --region us-east-1"}, {0}},
};

/* The state files the cleanup is about (every one with --all, else ID's, when it has one), loaded
 * before anything is asked so what EC2 says can be written into them; unreadable ones are warned
 * about, counted in *UNREADABLE and left alone.  *STATES is malloc'd (NULL when none). */
static size_t cleanup_states(const char *id, sweep_state **states, int *unreadable)
{
    size_t n = 0;
    ib_error err = {0};
    *states = NULL;
    *unreadable = 0;
    char **ids = NULL;
    size_t nid = 0;
    if (!id && sweep_state_list(&ids, &nid, &err) != 0) ib_warn("%s", err.msg);
    size_t want = id ? 1 : nid;
    if (want && !(*states = calloc(want, sizeof **states))) {
        ib_warn("out of memory reading the state files (looking by tag only)");
        *unreadable = (int)want;
        want = 0;
    }
    for (size_t i = 0; i < want; i++) {
        int l = sweep_state_load(id ? id : ids[i], &(*states)[n], &err);
        if (l == 0) n++;
        else if (l < 0) ib_warn("%s%s", err.msg, id ? " (looking by tag only)" : ""), (*unreadable)++;
    }
    util_free_strv(ids, nid);
    return n;
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
 * cannot say it is gone (another region, another account, or EC2 forgot it).  Returns how many. */
static size_t cleanup_record(sweep_state *states, size_t n_states, int all_clean, char regions[][32], size_t n_regions)
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
        if (!left && all_clean) {
            for (size_t i = 0; i < st->n_cand; i++)
                if (st->cand[i].placement_group[0]) st->cand[i].placement_group_deleted = 1;
            snprintf(st->phase, sizeof st->phase, "done");
            if (!st->finished) st->finished = now;
        }
        ib_error err = {0};
        if (sweep_state_save(st, &err) != 0) ib_warn("%s", err.msg);
    }
    return unseen;
}

int cmd_sweep_cleanup(int argc, char **argv)
{
    memset(&C, 0, sizeof C);
    C.wait_s = DEFAULT_TERMINATE_WAIT_S;
    char *pos[argc + 1];
    int npos = 0, rc = args_parse(&cmd_sweep_cleanup_args, argc, argv, pos, &npos);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    if (C.all == (npos == 1) || npos > 1)
        return args_usage_error(&cmd_sweep_cleanup_args, "give one sweep ID or --all");
    if (npos == 1 && !sweep_id_valid(pos[0]))
        return args_usage_error(&cmd_sweep_cleanup_args, "'%s' is not a sweep ID (like 20261125-213005-9f3a)", pos[0]);
    install_handlers(); /* a Ctrl-C must not cut a cleanup short: it is noted, the cleanup goes on */
    sweep_state *states = NULL;
    int unreadable = 0;
    size_t n_states = cleanup_states(C.all ? NULL : pos[0], &states, &unreadable);
    char regions[64][32]; /* distinct regions: AWS has fewer */
    size_t n_regions = cleanup_regions(states, n_states, regions, 64);
    if (!n_regions) {
        fprintf(stderr, "instbench sweep cleanup: no region to look in: give --region R\n");
        rc = IB_EXIT_USAGE;
        goto out;
    }
    /* With a state file, its region is searched whatever --region says: the sweep ran there. */
    if (!C.all && n_states && C.region && strcmp(C.region, states[0].region))
        ib_warn("sweep %s ran in %s (its state file), not %s: looking in both", pos[0], states[0].region, C.region);
    size_t total = 0;
    rc = IB_EXIT_OK;
    ib_error err = {0};
    for (size_t r = 0; r < n_regions; r++) {
        size_t found = 0;
        ib_info("looking for %s's instances in %s", C.all ? "every sweep" : pos[0], regions[r]);
        if (sweep_cleanup_region(NULL, regions[r], C.all ? "*" : pos[0], C.wait_s,
                                 env_seconds("INSTBENCH_SWEEP_POLL_S", DEFAULT_CLEANUP_POLL_S), states, n_states,
                                 &found, &err) != 0) {
            util_term_printf(stderr, "instbench sweep cleanup: %s: %s\n", regions[r], err.msg);
            rc = IB_EXIT_RUNTIME;
        }
        total += found;
    }
    if (rc == IB_EXIT_OK && !C.all && unreadable && total == 0) {
        fprintf(stderr,
                "instbench sweep cleanup: nothing tagged %s=%s in %s, and its state file cannot be read (above): "
                "whatever it records is unknown\n",
                SWEEP_TAG_SWEEP, pos[0], regions[0]);
        rc = IB_EXIT_RUNTIME;
        goto out;
    }
    if (rc == IB_EXIT_OK && !C.all && !n_states && total == 0) {
        fprintf(stderr, "instbench sweep cleanup: no sweep %s: no state file here and nothing tagged %s=%s in %s\n",
                pos[0], SWEEP_TAG_SWEEP, pos[0], regions[0]);
        rc = IB_EXIT_USAGE;
        goto out;
    }
    size_t unseen = cleanup_record(states, n_states, rc == IB_EXIT_OK, regions, n_regions);
    if (rc == IB_EXIT_OK && C.all && unreadable) {
        /* its region is unknown, so "nothing left" cannot be said for its sweep */
        fprintf(stderr,
                "instbench sweep cleanup: %d state file%s could not be read (above): %s sweep%s may have run "
                "in a region not searched (give --region)\n",
                unreadable, unreadable == 1 ? "" : "s", unreadable == 1 ? "its" : "their", unreadable == 1 ? "" : "s");
        rc = IB_EXIT_RUNTIME;
    }
    if (rc == IB_EXIT_OK && unseen) {
        fprintf(stderr,
                "instbench sweep cleanup: %zu instance%s recorded in the state file%s not seen ended: not "
                "marked terminated (give --region where it ran, or look in the EC2 console)\n",
                unseen, unseen == 1 ? "" : "s", C.all ? "s" : "");
        rc = IB_EXIT_RUNTIME;
    }
    if (rc == IB_EXIT_OK)
        ib_info("%zu instance%s terminated; nothing of %s is left running", total, total == 1 ? "" : "s",
                C.all ? "any sweep" : pos[0]);
out:
    for (size_t i = 0; i < n_states; i++) sweep_state_free(&states[i]);
    free(states);
    return rc;
}

/* ---- run -------------------------------------------------------------------------------------- */
/* (run: below) */
static sweep_flags F; /* the flags plan and run share (cmd/cmd_sweep_setup.h) */
static int yes;       /* --yes */

/* The y/N question on a terminal; anything but y/yes is no. */
static int confirmed(const sweep_state *st, double worst)
{
    if (yes) return 1;
    if (!isatty(0) || !util_isatty_stderr()) return 0;
    size_t n = 0;
    for (size_t i = 0; i < st->n_cand; i++) n += (size_t)st->cand[i].c.nodes;
    char money[32];
    output_fmt_usd(money, sizeof money, worst);
    fprintf(stderr, "launch %zu instance%s in %s, worst case %s? [y/N] ", n, n == 1 ? "" : "s", st->region, money);
    fflush(stderr);
    char line[16] = "";
    if (!fgets(line, sizeof line, stdin)) return 0;
    return !strcmp(line, "y\n") || !strcmp(line, "Y\n") || !strcmp(line, "yes\n");
}

/* Every instance's final state and the sweep's cost, on stderr (stdout carries the ranking). */
static void print_final(const sweep_state *st)
{
    fprintf(stderr, "sweep %s: final state of every instance it launched:\n", st->id);
    if (st->n_inst) print_instances(st, stderr);
    else fprintf(stderr, "  (none launched)\n");
    print_network(st, stderr);
    print_cost(st, stderr);
}

/* The downloaded results ranked by `rank` itself (its command, so every rule of rank applies),
 * then the candidates without a result and why. */
static int rank_results(const sweep_state *st, const char *dir)
{
    size_t with = 0;
    for (size_t i = 0; i < st->n_cand; i++) with += st->cand[i].outcome == SWEEP_RESULT;
    int rc = IB_EXIT_RUNTIME;
    if (with) {
        /* --format as the sweep got it; none: rank's own default (table on a terminal, else JSON) */
        char *argv[] = {"rank", (char *)dir, "--format", F.format >= 0 ? (char *)sweep_formats[F.format] : NULL, NULL};
        fflush(stdout);
        rc = cmd_rank(F.format >= 0 ? 4 : 2, argv);
    } else {
        fprintf(stderr, "instbench sweep run: no candidate delivered a result: nothing to rank\n");
    }
    for (size_t i = 0; i < st->n_cand; i++) {
        const sweep_state_candidate *c = &st->cand[i];
        if (c->outcome == SWEEP_RESULT) continue;
        util_term_printf(stderr, "no result: %s: %s: %s", c->c.spec, sweep_outcome_name(c->outcome), c->reason);
        fputc('\n', stderr);
    }
    return rc;
}

/* Asks (or --yes), writes the state file, runs the sweep, prints every instance's end and the cost,
 * ranks; the exit status (128 + the signal when one stopped it). */
static int run_sweep(sweep_state *st, const sweep_context *ctx, double worst)
{
    char dir[128];
    snprintf(dir, sizeof dir, "instbench-results/sweep-%s", st->id);
    ib_error err = {0};
    if (!confirmed(st, worst)) {
        fprintf(stderr, "instbench sweep run: not confirmed: nothing launched (--yes answers for a script)\n");
        return IB_EXIT_USAGE;
    }
    if (util_mkdir_p(dir, &err) != 0 || sweep_state_save(st, &err) != 0) {
        fprintf(stderr, "instbench sweep run: %s: nothing launched\n", err.msg);
        return IB_EXIT_RUNTIME;
    }
    char path[1200] = "";
    sweep_state_path(st->id, path, sizeof path, &err);
    ib_info("sweep %s: state in %s; results into %s/", st->id, path, dir);
    sweep_exec_options o = {.measure_args = F.measure_args,
                            .n_measure_args = (size_t)F.n_measure_args,
                            .results_dir = dir,
                            .subnets = ctx->subnets,
                            .n_subnets = ctx->n_subnets,
                            .security_group_id = ctx->sg_id,
                            .vpc_id = ctx->vpc_id,
                            .client = ctx->client,
                            .cred = &ctx->cred,
                            .poll_s = env_seconds("INSTBENCH_SWEEP_POLL_S", DEFAULT_POLL_S),
                            .terminate_wait_s =
                                env_seconds("INSTBENCH_SWEEP_TERMINATE_WAIT_S", DEFAULT_TERMINATE_WAIT_S),
                            .stop = &stop_signal};
    install_handlers();
    int xrc = sweep_execute(st, &o, &err);
    print_final(st);
    int rc = rank_results(st, dir);
    if (xrc != 0) {
        fprintf(stderr, "instbench sweep run: %s\n", err.msg);
        if (!strcmp(st->phase, "needs-cleanup")) rc = IB_EXIT_RUNTIME;
        else if (!stop_signal) rc = IB_EXIT_RUNTIME;
    }
    if (!strcmp(st->phase, "needs-cleanup"))
        fprintf(stderr, "instbench sweep run: something may still be running: run `instbench sweep cleanup %s`\n",
                st->id);
    if (stop_signal) return 128 + stop_signal;
    return rc;
}


static const arg_spec run_specs[] = {
    SWEEP_COMMON_SPECS(&F),
    {"--yes", 'y', ARG_FLAG, &yes, NULL,
     "launch without asking (on a terminal the plan is shown and y/N asked;\n"
     "without a terminal, nothing is launched without --yes)"},
    {0},
};

const arg_command cmd_sweep_run_args = {
    "sweep run",
    "--candidates SPEC[,SPEC...] --s3 s3://BUCKET/PREFIX/ --max-cost USD [options] [-- MEASURE FLAGS]",
    "Launches every candidate on EC2 (tagged instbench:sweep=ID), measures it there, collects the results\n"
    "from S3 into instbench-results/sweep-ID/, terminates everything it launched whatever happens\n"
    "(results in, --max-minutes, a launch error, a quota, Ctrl-C or SIGTERM), waits until EC2 confirms\n"
    "each instance terminated, prints every instance's final state and the sweep's cost, and ranks the\n"
    "results as `rank` does, listing the candidates without one and why.  --max-cost is required:\n"
    "when the worst case (every node billed for --max-minutes) exceeds it, nothing is launched.\n"
    "The state file ($XDG_STATE_HOME/instbench/sweeps/ID.json) is written before the first launch and at\n"
    "every change; `sweep status` reads it, `sweep cleanup ID` ends whatever is left, by tag.",
    "environment: AWS credentials and region as for `prices`; INSTBENCH_SWEEP_POLL_S (tests only: the\n"
    "poll interval in seconds, default 15).\n"
    "exit status: 0 everything terminated and results ranked, 1 a runtime error, a quota, no result, or\n"
    "something not confirmed terminated (the message names `instbench sweep cleanup ID`), 2 bad input,\n"
    "no --max-cost, a worst case over it or not confirmed (nothing launched), 130/143 stopped by\n"
    "SIGINT/SIGTERM after terminating everything.\n",
    run_specs,
    "MEASURE FLAGS",
    .examples =
        (const arg_example[]){
            {"four small spot nodes against one big on-demand one, at most $20",
             "instbench sweep run --s3 s3://my-bucket/sweeps/ --max-cost 20 --candidates 4xg5.xlarge:spot,g5.12xlarge"},
            {0}},
};

/* The state of a new sweep: the plan's lines, nothing launched yet. */
static int state_from_plan(const sweep_context *ctx, sweep_state *st, ib_error *err)
{
    memset(st, 0, sizeof *st);
    const sweep_plan *p = &ctx->plan;
    if (!(st->cand = calloc(p->n ? p->n : 1, sizeof *st->cand)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    st->n_cand = p->n;
    for (size_t i = 0; i < p->n; i++) {
        sweep_state_candidate *c = &st->cand[i];
        c->c = p->lines[i].cand;
        snprintf(c->ami, sizeof c->ami, "%s", p->lines[i].ami.id);
        c->usd_per_hour = p->lines[i].usd_per_node_hour;
        snprintf(c->price_source, sizeof c->price_source, "%s", p->lines[i].price_source);
        c->efa = p->lines[i].efa;
    }
    st->version = SWEEP_STATE_VERSION;
    snprintf(st->region, sizeof st->region, "%s", F.region);
    snprintf(st->s3_bucket, sizeof st->s3_bucket, "%s", F.s3_bucket);
    snprintf(st->s3_prefix, sizeof st->s3_prefix, "%s", F.s3_prefix ? F.s3_prefix : "");
    st->max_minutes = F.max_minutes;
    st->max_cost_usd = F.max_cost_usd;
    st->created = time(NULL);
    return sweep_id_new(st->created, st->id, err);
}

int cmd_sweep_run(int argc, char **argv)
{
    sweep_flags_init(&F);
    yes = 0;
    stop_signal = 0;
    int own = sweep_flags_split(argc, argv, &F);
    int rc = args_parse(&cmd_sweep_run_args, own, argv, NULL, NULL);
    if (!rc && !F.max_cost_given)
        rc = args_usage_error(&cmd_sweep_run_args, "--max-cost USD is required: the most the sweep may cost at worst "
                                                   "(there is no default)");
    if (!rc && !F.s3)
        rc = args_usage_error(&cmd_sweep_run_args, "--s3 s3://BUCKET/PREFIX/ is required: where results come back");
    if (!rc) rc = sweep_flags_check(&cmd_sweep_run_args, &F);
    if (rc) {
        sweep_flags_free(&F);
        return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    }
    sweep_context ctx;
    ib_error err = {0};
    sweep_state st = {0};
    sweep_prepare_input in = sweep_flags_input(&F);
    if (sweep_prepare(&in, &ctx, &err) != 0) {
        fprintf(stderr, "instbench sweep run: %s: nothing launched\n", err.msg);
        rc = err.code ? err.code : IB_EXIT_RUNTIME;
        goto out;
    }
    /* the plan as a table on stderr: stdout is for the ranking at the end */
    int format = F.format;
    F.format = 0;
    sweep_plan_print(&F, &ctx, NULL, stderr);
    F.format = format;
    char dry[SWEEP_MAX_CANDIDATES][64] = {{0}};
    char total[32], ceiling[32];
    output_fmt_usd(total, sizeof total, ctx.plan.total_usd);
    output_fmt_usd(ceiling, sizeof ceiling, F.max_cost_usd);
    if (ctx.plan.verdict == SWEEP_UNPRICED) {
        fprintf(stderr, "instbench sweep run: a candidate has no price, so the worst case is unknown: nothing launched "
                        "(see the plan above; --source names another source)\n");
        rc = IB_EXIT_USAGE;
    } else if (ctx.plan.verdict != SWEEP_WITHIN) {
        fprintf(stderr, "instbench sweep run: the worst case, %s, exceeds --max-cost %s: nothing launched\n", total,
                ceiling);
        rc = IB_EXIT_USAGE;
    } else if (sweep_dry_run(&ctx, F.region, dry, &err) != 0) {
        /* the permission check plan makes, again here: a missing action found before any money is spent */
        fprintf(stderr, "instbench sweep run: %s: nothing launched\n", err.msg);
        rc = IB_EXIT_RUNTIME;
    } else if (sweep_check_bucket(&ctx, F.region, F.s3_bucket, &err) != 0) {
        fprintf(stderr, "instbench sweep run: %s: nothing launched\n", err.msg);
        rc = err.code ? err.code : IB_EXIT_RUNTIME;
    } else if (state_from_plan(&ctx, &st, &err) != 0) {
        fprintf(stderr, "instbench sweep run: %s\n", err.msg);
        rc = IB_EXIT_RUNTIME;
    } else {
        rc = run_sweep(&st, &ctx, ctx.plan.total_usd);
    }
    sweep_state_free(&st);
out:
    sweep_context_free(&ctx);
    sweep_flags_free(&F);
    return rc;
}
