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

#define DEFAULT_POLL_S 15.0
#define DEFAULT_TERMINATE_WAIT_S 600.0

static volatile int stop_signal;   /* the signal that asked the sweep to stop; 0: none */

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
    sigaction(SIGHUP, &sa, NULL);   /* a closed terminal must not leave instances either */
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
    size_t unpriced = 0;
    double usd = sweep_state_cost(st, st->finished ? st->finished : time(NULL), &unpriced);
    char money[32];
    output_fmt_usd(money, sizeof money, usd);
    fprintf(f, "  cost of the sweep's instances: %s (instance-seconds x price per node-hour%s)\n", money,
            unpriced ? "; some instances have no known price and are not counted" : "");
}

/* ---- status ----------------------------------------------------------------------------------- */
static struct {
    int refresh;
    int format;   /* 0 table, 1 json */
} S;
static const char *const status_formats[] = {"table", "json", NULL};

static const arg_spec status_specs[] = {
    {"--refresh", 0, ARG_FLAG, &S.refresh, NULL, "ask EC2 for each instance's state now (DescribeInstances) and update\n"
     "the state file; without it the states are the last ones recorded"},
    {"--format", 0, ARG_CHOICE, &S.format, NULL, "table (default) or json: the state file itself", .choices = status_formats},
    {0},
};

const arg_command cmd_sweep_status_args = {
    "sweep status", "[ID] [--refresh] [--format table|json]",
    "Lists the sweeps started from this machine (their state files, $XDG_STATE_HOME/instbench/sweeps,\n"
    "else ~/.local/state/instbench/sweeps): id, region, phase, each candidate's outcome; with ID,\n"
    "every instance too, with its state, zone and the reason EC2 gave when it ended, and the sweep's\n"
    "cost so far.",
    "exit status: 0 listed, 1 a state file that cannot be read or EC2 unreachable (--refresh), 2 an\n"
    "ID that is not a sweep's (no state file).\n",
    status_specs, "ID",
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
            k += (size_t)snprintf(outcomes + k, sizeof outcomes - k, "%s%zu %s", k ? ", " : "", counts[o], sweep_outcome_name(o));
    printf("%-20s  %-14s  %-13s  %2zu candidates (%s); %zu instance%s not known terminated\n", st->id, st->region,
           st->phase, st->n_cand, outcomes, alive, alive == 1 ? "" : "s");
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
            return args_usage_error(&cmd_sweep_status_args, "'%s' is not a sweep ID (like 20261125-213005-9f3a)", pos[0]);
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
            if (json) printf("%s%s", i ? "," : "", json);
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
    {"--all", 0, ARG_FLAG, &C.all, NULL, "every sweep's instances and placement groups (any value of the\n"
     "instbench:sweep tag) in the regions of the state files here and --region"},
    {"--region", 0, ARG_STRING, &C.region, "R", "where to look (default: the state file's region; without a state file\n"
     "AWS_REGION / the profile's region)", .check = names_region_problem, .suggest = prices_suggest_region},
    {"--wait", 0, ARG_DOUBLE, &C.wait_s, "SECONDS", "how long to wait for EC2 to confirm each instance terminated\n"
     "(default 600)", 1, 86400},
    {0},
};

const arg_command cmd_sweep_cleanup_args = {
    "sweep cleanup", "ID|--all [--region R]",
    "Terminates every instance tagged instbench:sweep=ID, waits until EC2 confirms each terminated,\n"
    "and deletes every placement group with that tag.  Instances are found by their tag\n"
    "(DescribeInstances), not from the state file, so it works after a crash or with the state file\n"
    "gone; `sweep run` names this command when it could not confirm everything ended.",
    "exit status: 0 nothing of the sweep is left running, 1 something could not be confirmed\n"
    "terminated or deleted (run it again), 2 an ID that is not a sweep's.\n",
    cleanup_specs, "ID",
    .examples = (const arg_example[]){{"whatever any sweep left in us-east-1", "instbench sweep cleanup --all --region us-east-1"},
                                      {0}},
};

/* The regions to search with --all: each state file's and --region, once each. */
static size_t cleanup_regions(char regions[][32], size_t cap)
{
    size_t n = 0;
    if (C.region) snprintf(regions[n++], 32, "%s", C.region);
    char **ids = NULL;
    size_t nid = 0;
    ib_error err = {0};
    if (sweep_state_list(&ids, &nid, &err) != 0) ib_warn("%s", err.msg);
    for (size_t i = 0; i < nid && n < cap; i++) {
        sweep_state st;
        if (sweep_state_load(ids[i], &st, &err) != 0) {
            ib_warn("%s", err.msg);
            continue;
        }
        int seen = 0;
        for (size_t k = 0; k < n; k++) seen |= !strcmp(regions[k], st.region);
        if (!seen) snprintf(regions[n++], 32, "%s", st.region);
        sweep_state_free(&st);
    }
    util_free_strv(ids, nid);
    if (!n) {
        char r[32];
        if (aws_region_resolve(r, &err) == 0) snprintf(regions[n++], 32, "%s", r);
    }
    return n;
}

/* After a cleanup confirmed: the state file (when there is one) says so. */
static void mark_cleaned(const char *id)
{
    sweep_state st;
    ib_error err = {0};
    if (sweep_state_load(id, &st, &err) != 0) return;
    time_t now = time(NULL);
    for (size_t i = 0; i < st.n_inst; i++)
        if (strcmp(st.inst[i].state, "terminated")) {
            snprintf(st.inst[i].state, sizeof st.inst[i].state, "terminated");
            if (!st.inst[i].ended) st.inst[i].ended = now;
        }
    for (size_t i = 0; i < st.n_cand; i++)
        if (st.cand[i].placement_group[0]) st.cand[i].placement_group_deleted = 1;
    snprintf(st.phase, sizeof st.phase, "done");
    if (!st.finished) st.finished = now;
    if (sweep_state_save(&st, &err) != 0) ib_warn("%s", err.msg);
    sweep_state_free(&st);
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
    install_handlers();   /* a Ctrl-C must not cut a cleanup short: it is noted, the cleanup goes on */
    ib_error err = {0};
    char regions[64][32];
    size_t n_regions = 0;
    int have_state = 0;
    if (C.all) {
        n_regions = cleanup_regions(regions, 64);
    } else {
        sweep_state st;
        int l = sweep_state_load(pos[0], &st, &err);
        if (l == 0) {
            snprintf(regions[n_regions++], 32, "%s", C.region ? C.region : st.region);
            have_state = 1;
            sweep_state_free(&st);
        } else if (l < 0) {
            ib_warn("%s (looking by tag only)", err.msg);
        }
        if (!n_regions) {
            if (C.region) snprintf(regions[n_regions++], 32, "%s", C.region);
            else if (aws_region_resolve(regions[n_regions], &err) == 0) n_regions++;
        }
    }
    if (!n_regions) {
        fprintf(stderr, "instbench sweep cleanup: no region to look in: give --region R\n");
        return IB_EXIT_USAGE;
    }
    size_t total = 0;
    rc = IB_EXIT_OK;
    for (size_t r = 0; r < n_regions; r++) {
        size_t found = 0;
        ib_info("looking for %s's instances in %s", C.all ? "every sweep" : pos[0], regions[r]);
        if (sweep_cleanup_region(regions[r], C.all ? "*" : pos[0], C.wait_s, &stop_signal, &found, &err) != 0) {
            fprintf(stderr, "instbench sweep cleanup: %s: %s\n", regions[r], err.msg);
            rc = IB_EXIT_RUNTIME;
        }
        total += found;
    }
    if (rc == IB_EXIT_OK && !C.all && !have_state && total == 0) {
        fprintf(stderr, "instbench sweep cleanup: no sweep %s: no state file here and nothing tagged %s=%s in %s\n", pos[0],
                SWEEP_TAG_SWEEP, pos[0], regions[0]);
        return IB_EXIT_USAGE;
    }
    if (rc == IB_EXIT_OK) {
        if (C.all) {
            char **ids = NULL;
            size_t nid = 0;
            if (sweep_state_list(&ids, &nid, &err) == 0)
                for (size_t i = 0; i < nid; i++) mark_cleaned(ids[i]);
            util_free_strv(ids, nid);
        } else {
            mark_cleaned(pos[0]);
        }
        ib_info("%zu instance%s terminated; nothing of %s is left running", total, total == 1 ? "" : "s",
                C.all ? "any sweep" : pos[0]);
    }
    return rc;
}

/* ---- run -------------------------------------------------------------------------------------- */
/* (run: below) */
static struct {
    double max_cost;
    int max_cost_given;
    int yes;
    int format;             /* index into run_formats */
} R;
static const char *const run_formats[] = {"table", "json", "csv", NULL};

/* The y/N question on a terminal; anything but y/yes is no. */
static int confirmed(const sweep_state *st, double worst)
{
    if (R.yes) return 1;
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
        char *argv[] = {"rank", (char *)dir, "--format", (char *)run_formats[R.format], NULL};
        fflush(stdout);
        rc = cmd_rank(4, argv);
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

/* The state of a new sweep from the plan's lines: nothing launched yet. */
static int run_sweep(sweep_state *st, char *const *measure_args, size_t n_measure_args, double worst)
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
    sweep_exec_options o = {.measure_args = measure_args, .n_measure_args = n_measure_args, .results_dir = dir,
                            .poll_s = env_seconds("INSTBENCH_SWEEP_POLL_S", DEFAULT_POLL_S),
                            .terminate_wait_s = env_seconds("INSTBENCH_SWEEP_TERMINATE_WAIT_S", DEFAULT_TERMINATE_WAIT_S),
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
        fprintf(stderr, "instbench sweep run: something may still be running: run `instbench sweep cleanup %s`\n", st->id);
    if (stop_signal) return 128 + stop_signal;
    return rc;
}

/* ---- PROVISIONAL until sweep-plan is merged: the plan's flags and lines (candidates, AMI, price)
 * come from PLAN's exported parser and plan; this stand-in reads the same flags so the executor can
 * be tested end to end.  Replaced at the merge. */
static struct {
    args_list candidates;
    const char *region, *s3, *ami;
    double max_minutes;
} P;

static const arg_spec run_specs[] = {
    {"--candidates", 0, ARG_LIST, &P.candidates, "SPEC,...", "[Nx]TYPE[:on-demand|spot], comma-separated, repeatable", .group = "what"},
    {"--region", 0, ARG_STRING, &P.region, "R", "the sweep's region", .check = names_region_problem, .suggest = prices_suggest_region},
    {"--s3", 0, ARG_STRING, &P.s3, "s3://BUCKET/PREFIX/", "where sources, results and logs go"},
    {"--ami", 0, ARG_STRING, &P.ami, "AMI", "the image every candidate boots"},
    {"--max-minutes", 0, ARG_DOUBLE, &P.max_minutes, "M", "each instance's life at most (default 30)", 0.01, 1440},
    {"--max-cost", 0, ARG_DOUBLE, &R.max_cost, "USD", "required: the worst case (every node billed for --max-minutes) must\n"
     "not exceed it, or nothing is launched", 0, 1e9, .given = &R.max_cost_given, .group = "bounds"},
    {"--yes", 'y', ARG_FLAG, &R.yes, NULL, "launch without asking (a terminal is asked y/N; without one, --yes is needed)"},
    {"--format", 0, ARG_CHOICE, &R.format, NULL, "the ranking at the end: table (default), json or csv", .choices = run_formats,
     .group = "output"},
    {0},
};

const arg_command cmd_sweep_run_args = {
    "sweep run", "--candidates SPEC,... --region R --s3 s3://BUCKET/PREFIX/ --max-cost USD [options] [-- MEASURE FLAGS]",
    "Launches every candidate, measures it on the instances, collects the results from S3, terminates\n"
    "everything it launched whatever happens (results in, --max-minutes, an error, Ctrl-C), and ranks.\n"
    "Refused, nothing launched, when the worst case exceeds --max-cost.",
    "environment: AWS credentials and region as for `prices`; INSTBENCH_SWEEP_POLL_S (tests only).\n"
    "exit status: 0 done and ranked, 1 runtime error or something left to clean up (the message names\n"
    "`instbench sweep cleanup ID`), 2 bad input or --max-cost exceeded, 130/143 stopped by SIGINT/SIGTERM\n"
    "after terminating everything.\n",
    run_specs, "MEASURE FLAGS",
};

static int parse_spec(const char *s, sweep_candidate *c)
{
    memset(c, 0, sizeof *c);
    c->nodes = 1;
    const char *x = strchr(s, 'x'), *colon = strchr(s, ':');
    if (x && x > s && strspn(s, "0123456789") == (size_t)(x - s)) c->nodes = atoi(s), s = x + 1;
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (!n || n >= sizeof c->type || c->nodes < 1 || c->nodes > SWEEP_NODES_MAX) return -1;
    memcpy(c->type, s, n);
    if (colon && strcmp(colon + 1, "spot") && strcmp(colon + 1, "on-demand")) return -1;
    c->spot = colon && !strcmp(colon + 1, "spot");
    snprintf(c->spec, sizeof c->spec, "%s%d%s%s:%s", "", c->nodes, "x", c->type, c->spot ? "spot" : "on-demand");
    if (c->nodes == 1) snprintf(c->spec, sizeof c->spec, "%s:%s", c->type, c->spot ? "spot" : "on-demand");
    return 0;
}

int cmd_sweep_run(int argc, char **argv)
{
    memset(&P, 0, sizeof P);
    memset(&R, 0, sizeof R);
    P.max_minutes = 30;
    stop_signal = 0;
    /* the measure flags after `--` are the instance's, not ours */
    int own = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            own = i;
            break;
        }
    int rc = args_parse(&cmd_sweep_run_args, own, argv, NULL, NULL);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    if (!R.max_cost_given) return args_usage_error(&cmd_sweep_run_args, "--max-cost USD is required (there is no default)");
    if (!P.candidates.n || !P.region || !P.s3 || !P.ami)
        return args_usage_error(&cmd_sweep_run_args, "--candidates, --region, --s3 and --ami are needed");
    sweep_state st = {0};
    ib_error err = {0};
    char *key = NULL;
    if (aws_s3_parse_uri(P.s3, st.s3_bucket, &key, &err) != 0) return args_usage_error(&cmd_sweep_run_args, "%s", err.msg);
    snprintf(st.s3_prefix, sizeof st.s3_prefix, "%s%s", key, key[0] && key[strlen(key) - 1] != '/' ? "/" : "");
    free(key);
    if (!(st.cand = calloc(P.candidates.n, sizeof *st.cand))) return IB_EXIT_RUNTIME;
    st.n_cand = P.candidates.n;
    const price_set *snap = prices_snapshot(&err);
    double worst = 0;
    for (size_t i = 0; i < P.candidates.n; i++) {
        sweep_state_candidate *c = &st.cand[i];
        if (parse_spec(P.candidates.v[i], &c->c) != 0) {
            sweep_state_free(&st);
            return args_usage_error(&cmd_sweep_run_args, "'%s' is not [Nx]TYPE[:on-demand|spot]", P.candidates.v[i]);
        }
        snprintf(c->ami, sizeof c->ami, "%s", P.ami);
        const price_record *r = snap ? prices_find(snap, c->c.type, P.region) : NULL;
        c->usd_per_hour = r ? r->on_demand_usd_per_hour : NAN;
        snprintf(c->price_source, sizeof c->price_source, "snapshot");
        worst += c->c.nodes * c->usd_per_hour * P.max_minutes / 60;
    }
    snprintf(st.region, sizeof st.region, "%s", P.region);
    st.version = SWEEP_STATE_VERSION;
    st.max_minutes = P.max_minutes;
    st.max_cost_usd = R.max_cost;
    st.created = time(NULL);
    if (!(worst <= R.max_cost)) {
        char w[32], m[32];
        output_fmt_usd(w, sizeof w, worst);
        output_fmt_usd(m, sizeof m, R.max_cost);
        sweep_state_free(&st);
        fprintf(stderr, "instbench sweep run: the worst case, %s, exceeds --max-cost %s: nothing launched\n", w, m);
        return IB_EXIT_USAGE;
    }
    if (sweep_id_new(st.created, st.id, &err) != 0) {
        sweep_state_free(&st);
        return IB_EXIT_RUNTIME;
    }
    rc = run_sweep(&st, argv + own + (own < argc), (size_t)(argc - own - (own < argc)), worst);
    sweep_state_free(&st);
    return rc;
}
