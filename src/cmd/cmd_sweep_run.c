/* cmd/sweep_run: `instbench sweep run`.  The flags are read here; the work is src/sweep/
 * (state.c, executor.c, cleanup.c).  `run` refuses before anything is created when the worst case
 * exceeds --max-cost, then, holding the state file's lock, hands the plan to sweep_execute, which
 * terminates everything it launched whatever happens; results are ranked through `rank`'s own
 * command.  `status` and `cleanup` are cmd/cmd_sweep_status.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "cmd/cmd_sweep_report.h"
#include "instbench/aws.h"
#include "instbench/names.h"
#include "instbench/output.h"
#include "instbench/prices.h"
#include "instbench/sweep.h"
#include "cmd/cmd_sweep_setup.h"

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
    if (st->n_inst) sweep_print_instances(st, stderr);
    else fprintf(stderr, "  (none launched)\n");
    sweep_print_network(st, stderr);
    sweep_print_cost(st, stderr);
}

/* The downloaded results ranked by `rank` itself (its command, so every rule of rank applies),
 * then the candidates without a result and why. */
static int rank_results(const sweep_state *st, const char *dir)
{
    size_t with = 0;
    for (size_t i = 0; i < st->n_cand; i++) with += st->cand[i].outcome == SWEEP_RESULT;
    int rc = IB_EXIT_RUNTIME;
    if (with && sweep_stdout_lost) {
        /* nobody reads stdout any more: the results are on disk, ranked by the command named */
        fprintf(stderr,
                "instbench sweep run: stdout was closed (its reader went away): the ranking is not printed; "
                "`instbench rank %s` prints it\n",
                dir);
    } else if (with) {
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
    /* The handlers before the lock: from the moment `cleanup --force` can see this process hold it,
       its SIGINT must take this run's own end, not kill it before its state file says so. */
    sweep_install_handlers();
    /* The state file's lock, held for the whole run: `status --refresh` and `cleanup` leave the file
       to this process while it lives (the lock goes with it, however it ends). */
    int lock_fd = -1;
    if (sweep_state_lock(st->id, "sweep run", 1.0, &lock_fd, &err) != 0) {
        fprintf(stderr, "instbench sweep run: %s: nothing launched\n", err.msg);
        return IB_EXIT_RUNTIME;
    }
    if (util_mkdir_p(dir, &err) != 0 || sweep_state_save(st, &err) != 0) {
        fprintf(stderr, "instbench sweep run: %s: nothing launched\n", err.msg);
        sweep_state_unlock(lock_fd);
        return IB_EXIT_RUNTIME;
    }
    char path[1200] = "";
    sweep_state_path(st->id, path, sizeof path, &err);
    ib_info("sweep %s: state in %s; results into %s/", st->id, path, dir);
    sweep_exec_options o = {
        .measure_args = F.measure_args,
        .n_measure_args = (size_t)F.n_measure_args,
        .results_dir = dir,
        .subnets = ctx->subnets,
        .n_subnets = ctx->n_subnets,
        .security_group_id = ctx->sg_id,
        .vpc_id = ctx->vpc_id,
        .client = ctx->client,
        .cred = &ctx->cred,
        .poll_s = sweep_env_seconds("INSTBENCH_SWEEP_POLL_S", SWEEP_DEFAULT_POLL_S),
        .terminate_wait_s = sweep_env_seconds("INSTBENCH_SWEEP_TERMINATE_WAIT_S", SWEEP_DEFAULT_TERMINATE_WAIT_S),
        .lookup_s = sweep_env_seconds("INSTBENCH_SWEEP_LOOKUP_S", SWEEP_DEFAULT_LOOKUP_S),
        .node_grace_s = sweep_env_seconds("INSTBENCH_SWEEP_NODE_GRACE_S", SWEEP_DEFAULT_NODE_GRACE_S),
        .tick = sweep_drop_dead_outputs,
        .stop = &sweep_stop_signal,
        .stop_by_cleanup = &sweep_stop_by_cleanup};
    int xrc = sweep_execute(st, &o, &err);
    sweep_drop_dead_outputs();
    print_final(st);
    int rc = rank_results(st, dir);
    if (xrc != 0) {
        fprintf(stderr, "instbench sweep run: %s\n", err.msg);
        if (!strcmp(st->phase, "needs-cleanup")) rc = IB_EXIT_RUNTIME;
        else if (!sweep_stop_signal) rc = IB_EXIT_RUNTIME;
    }
    if (!strcmp(st->phase, "needs-cleanup"))
        fprintf(stderr, "instbench sweep run: something may still be running: run `instbench sweep cleanup %s`\n",
                st->id);
    sweep_state_unlock(lock_fd);
    if (sweep_stop_signal) return 128 + sweep_stop_signal;
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
    "(results in, --max-minutes, a launch error, a quota, a state file that cannot be written, Ctrl-C,\n"
    "Ctrl-\\, SIGTERM or SIGHUP; a closed terminal or pipe does not stop it), waits until EC2 confirms\n"
    "each instance terminated, prints every instance's final state and the sweep's cost, and ranks the\n"
    "results as `rank` does, listing the candidates without one and why.  --max-cost is required:\n"
    "when the worst case exceeds it, nothing is launched.  The worst case is what the instances can\n"
    "cost if this process dies: every node for its own timer (--max-minutes rounded up to whole\n"
    "minutes) plus 5 minutes for its boot and halt; spot nodes with that price as their MaxPrice.\n"
    "The state file ($XDG_STATE_HOME/instbench/sweeps/ID.json) is written before the first launch and at\n"
    "every change, under a lock this process holds; `sweep status` reads it, `sweep cleanup ID` ends\n"
    "whatever is left, by tag.",
    "environment: AWS credentials and region as for `prices`; for tests only: INSTBENCH_SWEEP_POLL_S\n"
    "(the poll interval in seconds, default 15), INSTBENCH_SWEEP_TERMINATE_WAIT_S (default 600),\n"
    "INSTBENCH_SWEEP_LOOKUP_S (how long a launch without an answer is looked for, default 60),\n"
    "INSTBENCH_SWEEP_NODE_GRACE_S (a node other than node 0 ended: how long node 0's result may\n"
    "still take, default 30).\n"
    "\n"
    "exit status: 0 everything terminated and results ranked, 1 a runtime error, a quota, no result, a\n"
    "state file that could not be written, or something not confirmed terminated (the message names\n"
    "`instbench sweep cleanup ID`), 2 bad input, no --max-cost, a worst case over it or not\n"
    "confirmed (nothing launched), 129/130/131/143 stopped by SIGHUP/SIGINT/SIGQUIT/SIGTERM (130\n"
    "too when `sweep cleanup ID --force` stopped it) after terminating everything.\n",
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
    sweep_ignore_sigpipe(); /* from the start: the plan on a closed stderr must not kill it mid-launch */
    sweep_flags_init(&F);
    yes = 0;
    sweep_stop_signal = sweep_stop_by_cleanup = 0;
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
