/* measure_dry_run: `measure --dry-run`'s report, once measure_run.c has resolved and checked the
 * run: what would be measured, where, on which rendezvous and identity, where the result and the
 * checkpoint would go, and how long it would take (one probe step, bench/probe.c, scaled). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws.h"
#include "instbench/backend.h"
#include "instbench/bench.h"
#include "instbench/model.h"
#include "instbench/util.h"
#include "measure_ctx.h"

/* SECONDS as "~N s" below a minute and a half, "~N min" below an hour and a half, else "~N.N h". */
static const char *estimate_text(double seconds, char *buf, size_t n)
{
    if (seconds < 90) snprintf(buf, n, "~%.0f s", seconds < 1 ? 1 : seconds);
    else if (seconds < 90 * 60) snprintf(buf, n, "~%.0f min", seconds / 60);
    else snprintf(buf, n, "~%.1f h", seconds / 3600);
    return buf;
}

/* The dry run's "estimated time" lines: one step of the run's configuration timed on this
 * process's first device (bench_probe_step) and scaled to the run's batch and planned steps
 * (bench_estimate_run).  A probe that cannot run says why, and the rest of the report stands.
 * -1: interrupted. */
static int dry_run_estimate(const measure_ctx *c, const volatile sig_atomic_t *stop, char *out, size_t n)
{
    const bench_measure_options *o = c->o;
    double target = 0.25; /* seconds a probe step may reach before its batch stops growing */
    const char *env = getenv("INSTBENCH_PROBE_SECONDS");
    if (env && !strcmp(env, "off")) { /* where one step takes minutes: a simulated GPU */
        snprintf(out, n, "  estimated time: none (INSTBENCH_PROBE_SECONDS=off: no probe step)\n");
        return 0;
    }
    if (env && env[0] && util_parse_double(env, 0, 60, &target) != 0) {
        ib_warn("INSTBENCH_PROBE_SECONDS: '%s' is neither off nor a number of seconds from 0 to 60: 0.25 used", env);
        target = 0.25;
    }
    ib_train_config probe = c->train; /* this process's first GPU, as the runner assigns them */
    probe.device = c->is_cpu ? 0 : c->first_gpu;
    bench_probe p;
    ib_error err = {0};
    if (bench_probe_step(c->backend, &probe, target, stop, &p, &err) != 0) {
        if (*stop) return -1;
        snprintf(out, n, "  estimated time: none (the probe step failed: %s)\n", err.msg);
        return 0;
    }
    ib_debug("dry-run probe: batch %d, forward+backward %.9g s, optimizer %.9g s", p.batch, p.forward_backward_s,
             p.optimizer_s);
    bench_estimate e;
    bench_estimate_run(&p, probe.batch_size, o->warmup, o->steps, o->duration_s, o->min_steps, &e);
    char total[32], scaled[48] = "";
    if (p.batch < probe.batch_size) snprintf(scaled, sizeof scaled, ", scaled to batch %d", probe.batch_size);
    snprintf(out, n,
             "  estimated time: %s (%d warm-up + %d timed steps of ~%.3g s, from a probe step at batch %d%s)\n"
             "    not counted: %sstart-up (building the model, the GEMM-rate measurement)%s%s%s\n",
             estimate_text(e.total_s, total, sizeof total), e.warmup_steps, e.timed_steps, e.step_s, p.batch, scaled,
             o->warmup < 0 ? "more warm-up while the step time has not settled (up to 30 steps), " : "",
             o->data == BENCH_DATA_HOST ? ", the host data pipeline" : "",
             c->rdv.world_size > 1 ? ", averaging the gradients between ranks" : "",
             c->rdv.rank == 0 && o->checkpoint ? ", the checkpoint" : "");
    return 0;
}

/* Everything has been checked; say what a run would do and how long it would take. */
int measure_dry_run(const measure_ctx *c, const char *checkpoint_dir, const volatile sig_atomic_t *stop)
{
    const bench_measure_options *o = c->o;
    const ib_train_config *train = &c->train;
    const bench_rendezvous *rdv = &c->rdv;
    const bench_identity *id = &c->id;
    char estimate[2048]; /* two lines, the second naming what is left out; or why there is none */
    if (dry_run_estimate(c, stop, estimate, sizeof estimate) != 0) return -1;
    const double gib =
        (double)memfit_rank_bytes(c->backend, train, o->data) * (c->is_cpu ? c->ranks : 1) / 1073741824.0;
    printf("would measure %s (%s, batch %d per device x %d rank%s here, %d in all) on backend %s\n", train->model.name,
           backend_precision_name(train->precision), train->batch_size, c->ranks, c->ranks == 1 ? "" : "s",
           rdv->world_size, c->backend->name);
    printf("  memory: about %.2f GiB %s\n", gib, c->is_cpu ? "of host memory" : "per GPU");
    printf("  data: %s", o->data == BENCH_DATA_HOST ? "host, " : "device\n");
    if (o->data == BENCH_DATA_HOST) printf("%d worker thread%s per rank\n", c->workers, c->workers == 1 ? "" : "s");
    if (o->steps > 0) printf("  timing: %d steps after warm-up\n", o->steps);
    else printf("  timing: %g s window after warm-up (at least %d steps)\n", o->duration_s, o->min_steps);
    printf("  nodes: %d (%s rendezvous), this is node %d\n", rdv->nnodes, strcmp(rdv->kind, "none") ? rdv->kind : "no",
           rdv->node_rank);
    if (strcmp(rdv->kind, "none") != 0)
        printf("  rendezvous: global rank %d of %d; rank 0 serves the NCCL unique id on %s:%d (waiting at most %g s "
               "for the others)\n",
               rdv->rank, rdv->world_size, rdv->master_addr, rdv->id_port, rdv->timeout_s);
    printf("  identity: %s, region %s, market %s, count %d (%s%s)\n", id->type[0] ? id->type : "unknown type",
           id->region[0] ? id->region : "unknown", id->market[0] ? id->market : "unknown", id->count,
           strcmp(id->source, "unknown") ? "from " : "no instance metadata, no --instance-type",
           strcmp(id->source, "unknown") ? id->source : "");
    char diff[sizeof id->differences + 16];
    if (id->mismatch > 0)
        printf("  identity check: not this machine, recorded as a mismatch (--identity-mismatch ok): %s\n",
               identity_differences_text(id, diff, sizeof diff));
    else if (id->mismatch == 0 && !strcmp(id->source, "flag"))
        printf("  identity check: %s has this run's accelerators and vCPUs\n", id->type);
    else if (id->mismatch < 0 && id->type[0])
        printf("  identity check: none (the price snapshot has no hardware for %s)\n", id->type);
    char shown[1024]; /* a presigned --output's signature is never printed */
    if (rdv->rank == 0)
        printf("  result: %s%s%s\n",
               !o->output                ? "a new file in ./instbench-results/"
               : !strcmp(o->output, "-") ? "stdout"
                                         : aws_url_for_display(o->output, shown, sizeof shown),
               o->append ? ", appended to " : "", o->append ? o->append : "");
    else printf("  result: written by global rank 0, not here\n");
    if (rdv->rank == 0 && o->checkpoint)
        printf("  checkpoint: one save of the training state (%.1f MiB) timed in %s\n",
               checkpoint_state_bytes(model_param_count(&train->model), train->precision) / 1048576.0, checkpoint_dir);
    fputs(estimate, stdout);
    return 0;
}
