/* cmd/sweep_report: what `sweep run`, `status` and `cleanup` share (cmd/cmd_sweep_report.h): a
 * sweep's report (its instances, candidates, network, cost and leftovers, from its state), and
 * the signals and outputs of the commands that outlive their terminal (run, cleanup): a signal
 * only sets sweep_stop_signal, SIGPIPE is ignored, and an output whose reader went away is given
 * /dev/null. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd_sweep_report.h"
#include "instbench/output.h"
#include "instbench/util.h"

volatile sig_atomic_t sweep_stop_signal;     /* the signal that asked the sweep to stop; 0: none */
volatile sig_atomic_t sweep_stop_by_cleanup; /* 1: that signal was `sweep cleanup --force`'s */
static int devnull_fd = -1;                  /* /dev/null, put in place of an output whose reader is gone */
volatile sig_atomic_t sweep_stdout_lost;     /* stdout's reader went away: the ranking is not printed there */

/* Standard output or error whose reader is gone (the read end of its pipe closed: `| tee log`
 * killed by the same Ctrl-C, `2>&1 | less` quit, an ssh session dropped) is given /dev/null in its
 * place: every line written there would fail, and nobody reads it any more.  SIGPIPE is ignored
 * (sweep_ignore_sigpipe), so such a write fails with EPIPE instead of killing the process: the
 * sweep goes on and terminates what it launched whatever became of its terminal.  Called at every
 * poll, before the final report, and from the signal handler when its own message meets EPIPE. */
void sweep_drop_dead_outputs(void)
{
    if (devnull_fd < 0) return;
    for (int fd = 1; fd <= 2; fd++) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        /* a pipe without a reader (or a socket whose peer left) polls POLLERR; a hung-up terminal POLLHUP */
        if (poll(&p, 1, 0) != 1 || !(p.revents & (POLLERR | POLLHUP))) continue;
        if (fd == 1) sweep_stdout_lost = 1;
        dup2(devnull_fd, fd);
    }
}

/* One message from the signal handler (async-signal-safe: write, dup2). */
static void say(const char *msg, size_t len)
{
    int e = errno;
    if (write(2, msg, len) < 0 && errno == EPIPE && devnull_fd >= 0) dup2(devnull_fd, 2);
    errno = e;
}

/* First signal: stop launching and watching, terminate everything, exit 128+N.  Later ones while
 * terminating are only noted: dying then would leave instances running.  `sweep cleanup --force`
 * sends its SIGINT with a value of its own (sweep/stop.c), so the run can say who stopped it. */
static void on_signal(int sig, siginfo_t *si, void *context)
{
    (void)context;
    if (!sweep_stop_signal) {
        int by_cleanup = si && si->si_code == SI_QUEUE && si->si_value.sival_int == SWEEP_STOP_BY_CLEANUP;
        sweep_stop_by_cleanup = by_cleanup; /* before the signal: whoever sees it set sees this too */
        sweep_stop_signal = sig;
        static const char msg[] = "\ninstbench sweep: stopping: terminating every instance of the sweep first\n";
        static const char cleanup_msg[] = "\ninstbench sweep: stopped by `instbench sweep cleanup --force`: "
                                          "terminating every instance of the sweep first\n";
        if (by_cleanup) say(cleanup_msg, sizeof cleanup_msg - 1);
        else say(msg, sizeof msg - 1);
    } else {
        static const char msg[] = "instbench sweep: still terminating the sweep's instances; `instbench sweep cleanup` "
                                  "ends them if this process is killed\n";
        say(msg, sizeof msg - 1);
    }
}

/* `run` and `cleanup` outlive their terminal: a write to a pipe nobody reads fails (EPIPE) rather
 * than kill the process with instances still running. */
void sweep_ignore_sigpipe(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
    if (devnull_fd < 0) devnull_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
}

void sweep_install_handlers(void)
{
    sweep_ignore_sigpipe();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);  /* a closed terminal or a dropped ssh session must not leave instances */
    sigaction(SIGQUIT, &sa, NULL); /* Ctrl-\ as Ctrl-C: no core dump with instances running */
}

/* ---- printing a sweep ------------------------------------------------------------------------- */
void sweep_print_instances(const sweep_state *st, FILE *f)
{
    fprintf(f, "  %-20s %-22s %-5s %-14s %-14s %s\n", "INSTANCE", "CANDIDATE", "NODE", "STATE", "ZONE", "REASON");
    for (size_t i = 0; i < st->n_inst; i++) {
        const sweep_state_instance *in = &st->inst[i];
        util_term_printf(f, "  %-20s %-22s %-5d %-14s %-14s %s", in->id, st->cand[in->candidate].c.spec,
                         in->launch_index, in->state, in->az[0] ? in->az : "-", in->state_reason);
        fputc('\n', f);
    }
}

void sweep_print_candidates(const sweep_state *st, FILE *f)
{
    fprintf(f, "  %-22s %-12s %s\n", "CANDIDATE", "OUTCOME", "RESULT OR REASON");
    for (size_t i = 0; i < st->n_cand; i++) {
        const sweep_state_candidate *c = &st->cand[i];
        util_term_printf(f, "  %-22s %-12s %s", c->c.spec, sweep_outcome_name(c->outcome),
                         c->outcome == SWEEP_RESULT ? c->result_path : c->reason);
        fputc('\n', f);
    }
}

void sweep_print_cost(const sweep_state *st, FILE *f)
{
    size_t unpriced = 0, estimated = 0;
    double usd = sweep_state_cost(st, st->finished ? st->finished : time(NULL), &unpriced, &estimated);
    char money[32];
    output_fmt_usd(money, sizeof money, usd);
    fprintf(f, "  cost of the sweep's instances: %s (instance-seconds x price per node-hour%s)\n", money,
            unpriced ? "; some instances have no known price and are not counted" : "");
    if (estimated)
        fprintf(f,
                "  %zu instance%s end is not known from EC2: counted until now, at most launch + %g min (its own "
                "timer, --max-minutes %g rounded up, + %d for boot and halt)\n",
                estimated, estimated == 1 ? "'s" : "s'", sweep_billed_minutes_max(st->max_minutes), st->max_minutes,
                SWEEP_BOOT_ALLOWANCE_MINUTES);
    /* a block's fee was paid before the sweep: committed, said apart, never in the sweep's cost */
    for (size_t i = 0; i < st->n_cand; i++)
        if (st->cand[i].c.block)
            util_term_printf(f,
                             "  committed: %s ran in Capacity Block %s, whose fee was paid when it was bought "
                             "(not in the sweep's cost)\n",
                             st->cand[i].c.spec, st->cand[i].c.reservation);
}

/* What an EFA candidate added besides instances, and whether it is gone. */
void sweep_print_network(const sweep_state *st, FILE *f)
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
    for (size_t i = 0; i < st->n_cand; i++)
        if (st->cand[i].placement_group[0] && !st->cand[i].placement_group_deleted)
            util_term_printf(f,
                             "  placement group %s (%s): not known deleted: `instbench sweep cleanup ID` deletes it\n",
                             st->cand[i].placement_group, st->cand[i].c.spec);
}

sweep_leftovers sweep_leftovers_of(const sweep_state *st)
{
    sweep_leftovers l = {0};
    for (size_t i = 0; i < st->n_inst; i++) {
        l.instances += strcmp(st->inst[i].state, "terminated") != 0;
        l.eips += st->inst[i].eip_allocation[0] && !st->inst[i].eip_released;
    }
    l.groups = st->sg_name[0] && !st->sg_deleted;
    for (size_t i = 0; i < st->n_cand; i++)
        l.placement += st->cand[i].placement_group[0] && !st->cand[i].placement_group_deleted;
    return l;
}
