/* cmd/sweep_report: what `sweep run` (cmd_sweep_run.c), `status` and `cleanup`
 * (cmd_sweep_status.c) share: printing a sweep from its state, and the handling of signals and of
 * outputs whose reader went away (cmd_sweep_report.c). */
#ifndef INSTBENCH_CMD_SWEEP_REPORT_H
#define INSTBENCH_CMD_SWEEP_REPORT_H

#include <signal.h>
#include <stdio.h>

#include "instbench/sweep.h"

#define SWEEP_DEFAULT_POLL_S 15.0
#define SWEEP_DEFAULT_CLEANUP_POLL_S 5.0 /* cleanup only waits for terminations: it asks more often */
#define SWEEP_DEFAULT_TERMINATE_WAIT_S 600.0
#define SWEEP_DEFAULT_LOOKUP_S 60.0     /* a launch without an answer: how long its instances are looked for */
#define SWEEP_DEFAULT_NODE_GRACE_S 30.0 /* a node other than node 0 ended: how long node 0's result may lag */

/* The signal that asked the sweep to stop (0: none), set by the handlers sweep_install_handlers
 * installs for SIGINT, SIGTERM, SIGHUP and SIGQUIT: the first stops launching and watching (the
 * loops look at it) and everything is terminated; later ones are only noted. */
extern volatile sig_atomic_t sweep_stop_signal;
/* 1 when that signal was `sweep cleanup --force`'s (SIGINT carrying SWEEP_STOP_BY_CLEANUP). */
extern volatile sig_atomic_t sweep_stop_by_cleanup;
/* 1 once stdout's reader went away (sweep_drop_dead_outputs): the ranking is not printed there. */
extern volatile sig_atomic_t sweep_stdout_lost;
/* SIGPIPE ignored: a write to a pipe nobody reads fails (EPIPE) instead of killing the process
 * with instances running.  `run` calls it first thing; sweep_install_handlers calls it too. */
void sweep_ignore_sigpipe(void);
void sweep_install_handlers(void);
/* stdout or stderr whose reader is gone (a pipe's read end closed, a socket's peer gone, a
 * terminal hung up) replaced by /dev/null: nothing written there is read any more. */
void sweep_drop_dead_outputs(void);

void sweep_print_instances(const sweep_state *st, FILE *f);
void sweep_print_candidates(const sweep_state *st, FILE *f);
void sweep_print_cost(const sweep_state *st, FILE *f);
/* What an EFA or multi-node candidate added besides instances, and whether it is gone. */
void sweep_print_network(const sweep_state *st, FILE *f);

/* What a sweep may have left on AWS, from its state file: instances not known terminated, Elastic
 * IPs not known released (an EFA node's, billed by the hour while allocated), its security group
 * and placement groups not known deleted. */
typedef struct sweep_leftovers {
    size_t instances, eips, groups, placement;
} sweep_leftovers;
sweep_leftovers sweep_leftovers_of(const sweep_state *st);

#endif
