/* result: the instbench.result/v1 document (schemas/result-v1.json) and its human summary.
 * Throughput figures are for the whole job: model_tflops = global samples/s x training FLOPs per
 * sample, and peak_tflops is the peak of every device in the job, so mfu is their ratio. */
#include "instbench/bench.h"
#include "instbench/output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v && v[0]) cJSON_AddStringToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

/* Runs of plain numeric fields, in the schema's order: keys[i] = the i-th value (as many values
 * as keys, checked at compile time). */
#define ADD_NUMBERS(o, keys, ...)                                                                               \
    do {                                                                                                        \
        _Static_assert(sizeof((const double[]){__VA_ARGS__}) / sizeof(double) == sizeof(keys) / sizeof *(keys), \
                       "one value per key");                                                                    \
        add_numbers((o), (keys), (const double[]){__VA_ARGS__}, sizeof(keys) / sizeof *(keys));                 \
    } while (0)
static void add_numbers(cJSON *o, const char *const *keys, const double *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) cJSON_AddNumberToObject(o, keys[i], vals[i]);
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

/* The market a user's --hourly-cost is for: the run's own (a spot instance's price is a spot
 * price), on-demand when the run does not know its market (own hardware: a fixed hourly cost). */
static const char *price_market(const bench_report *r)
{
    return !strcmp(r->identity.market, "spot") ? "spot" : "on-demand";
}

static double model_tflops(const bench_report *r)
{
    return r->m->samples_per_second * r->train_flops_per_sample / 1e12;
}

/* The thresholds: a CV above 5% and other processes above 10% of the CPUs mean a noisy figure;
 * steal above 5% a busy host; a load average above the vCPUs a shared machine before the start. */
/* Some GEMM shape of the step left cuBLASLt's own road (hardware.gemm): the gemm_fallback warning. */
static int gemm_off_road(const bench_result *m)
{
    return m->have_gemm_paths && (m->gemm_paths.cublas_fallback > 0 || m->gemm_paths.bias_kernel > 0);
}

size_t result_warnings(const bench_report *r, result_warning out[RESULT_MAX_WARNINGS])
{
    const bench_result *m = r->m;
    size_t n = 0;
#define RESULT_WARN(c, ...) (out[n].code = (c), snprintf(out[n].text, sizeof out[n].text, __VA_ARGS__), n++)
    if (m->step_time.cv > 0.05) RESULT_WARN("cv_high", "step-time CV %.1f%% > 5%%", 100 * m->step_time.cv);
    if (m->drift) RESULT_WARN("drift", "step time drifted up >10%% during the window");
    if (r->peak_tflops > 0 && model_tflops(r) > r->peak_tflops)
        RESULT_WARN("mfu_over_100", "MFU above 100%%: the peak figure is too low (a measured peak disturbed by "
                                    "other load?)");
    if (r->others_share > 0.10)
        RESULT_WARN("other_processes", "other processes used %.0f%% of the CPUs during the run", 100 * r->others_share);
    if (r->steal_share > 0.05)
        RESULT_WARN("steal", "hypervisor steal %.0f%% of the CPUs during the run", 100 * r->steal_share);
    if (r->sys->loadavg1 > r->sys->vcpus)
        RESULT_WARN("shared_machine", "load average above vCPUs before the run (shared machine?)");
    if (gemm_off_road(m))
        RESULT_WARN("gemm_fallback",
                    "GEMM shapes off cuBLASLt's fast road: %d of %d ran through cuBLAS, %d added their bias by a "
                    "kernel (hardware.gemm)",
                    m->gemm_paths.cublas_fallback, m->gemm_paths.shapes, m->gemm_paths.bias_kernel);
#undef RESULT_WARN
    return n;
}

/* long: the instbench.result/v1 document (schemas/result-v1.json) written top to bottom in the
 * schema's own order, one object after another, so that it reads against the schema line by line;
 * there is no logic here to split, only the fields. */
char *result_to_json(const bench_report *r, int pretty)
{
    const bench_sysinfo *s = r->sys;
    const bench_result *m = r->m;
    const vit_config *mc = &r->workload.model;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "instbench.result/v1");
    cJSON *tool = cJSON_AddObjectToObject(root, "tool");
    cJSON_AddStringToObject(tool, "name", "instbench");
    cJSON_AddStringToObject(tool, "version", INSTBENCH_VERSION);
    add_str_or_null(tool, "revision", ib_build_revision); /* the exact code: one version spans months */
    cJSON_AddStringToObject(root, "timestamp", r->timestamp);

    cJSON *inst = cJSON_AddObjectToObject(root, "instance");
    add_str_or_null(inst, "type", r->identity.type);
    add_str_or_null(inst, "region", r->identity.region);
    add_str_or_null(inst, "availability_zone", r->identity.availability_zone);
    add_str_or_null(inst, "availability_zone_id", r->identity.availability_zone_id);
    add_str_or_null(inst, "market", r->identity.market);
    cJSON_AddStringToObject(inst, "source", r->identity.source);
    /* null: not checked (no type, or one the catalogue has no hardware for) */
    if (r->identity.mismatch >= 0) cJSON_AddBoolToObject(inst, "identity_mismatch", r->identity.mismatch);
    else cJSON_AddNullToObject(inst, "identity_mismatch");
    cJSON *diffs = cJSON_AddArrayToObject(inst, "identity_differences");
    for (int i = 0; i < r->identity.n_differences; i++)
        cJSON_AddItemToArray(diffs, cJSON_CreateString(r->identity.differences[i]));
    cJSON_AddNumberToObject(inst, "count", r->identity.count);
    cJSON_AddStringToObject(inst, "hostname", s->hostname);

    /* Absent unless the user gave --hourly-cost, so results without a price look as they always did. */
    if (r->hourly_cost_usd > 0) {
        cJSON *pr = cJSON_AddObjectToObject(root, "price");
        cJSON_AddNumberToObject(pr, "usd_per_hour", r->hourly_cost_usd);
        cJSON_AddStringToObject(pr, "market", price_market(r));
        cJSON_AddStringToObject(pr, "source", "user");
    }

    cJSON *hw = cJSON_AddObjectToObject(root, "hardware");
    cJSON_AddStringToObject(hw, "backend", r->backend);
    cJSON_AddNumberToObject(hw, "accelerator_count", r->accelerator_count);
    cJSON *devs = cJSON_AddArrayToObject(hw, "devices");
    for (int i = 0; i < r->accelerator_count && i < s->gpu_count; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "name", s->gpus[i].name);
        cJSON_AddNumberToObject(d, "memory_bytes", (double)s->gpus[i].memory_bytes);
        add_str_or_null(d, "compute_capability", s->gpus[i].compute_capability);
        cJSON_AddItemToArray(devs, d);
    }
    add_str_or_null(hw, "driver", s->driver);
    add_str_or_null(hw, "cuda", s->cuda);
    add_str_or_null(hw, "nccl", s->nccl);
    add_str_or_null(hw, "cpu_model", s->cpu_model);
    cJSON_AddNumberToObject(hw, "vcpus", s->vcpus);
    cJSON_AddNumberToObject(hw, "memory_bytes", (double)s->memory_bytes);
    add_str_or_null(hw, "os", s->os);
    add_str_or_null(hw, "kernel", s->kernel);
    add_str_or_null(hw, "cpu_bf16", r->cpu_bf16);
    if (r->attention) cJSON_AddStringToObject(hw, "attention", r->attention);
    if (r->attention_library) { /* what cuDNN was loaded, and why attention does not use it if not */
        const ib_attention_library *a = r->attention_library;
        cJSON *cd = cJSON_AddObjectToObject(hw, "cudnn");
        add_str_or_null(cd, "version", a->version[0] ? a->version : NULL);
        add_str_or_null(cd, "library", a->path[0] ? a->path : NULL);
        add_str_or_null(cd, "fallback", a->fallback[0] ? a->fallback : NULL);
        if (a->deterministic >= 0) cJSON_AddBoolToObject(cd, "deterministic", a->deterministic);
        else cJSON_AddNullToObject(cd, "deterministic");
    }
    if (r->gemm_tflops > 0) cJSON_AddNumberToObject(hw, "gemm_tflops_measured", r->gemm_tflops);
    else cJSON_AddNullToObject(hw, "gemm_tflops_measured");
    if (m->have_gemm_paths) { /* the roads the step's GEMMs took (cuda/gemm.h cuda_gemm_paths) */
        cJSON *gp = cJSON_AddObjectToObject(hw, "gemm");
        static const char *const gemm_keys[] = {"shapes", "cublas_fallback", "bias_kernel", "tuned"};
        ADD_NUMBERS(gp, gemm_keys, m->gemm_paths.shapes, m->gemm_paths.cublas_fallback, m->gemm_paths.bias_kernel,
                    m->gemm_paths.tuned);
    }
    if (r->cuda_graphs >= 0) cJSON_AddBoolToObject(hw, "cuda_graphs", r->cuda_graphs);
    else cJSON_AddNullToObject(hw, "cuda_graphs");
    cJSON *dn = cJSON_AddObjectToObject(hw, "onednn");
    add_str_or_null(dn, "version", s->onednn_version);
    add_str_or_null(dn, "isa", s->onednn_isa);
    cJSON_AddStringToObject(dn, "isa_source", s->onednn_isa_source);
    add_str_or_null(dn, "max_cpu_isa", s->onednn_max_isa_env);

    cJSON *wl = cJSON_AddObjectToObject(root, "workload");
    cJSON_AddStringToObject(wl, "model", mc->name);
    static const char *const model_keys[] = {
        "img_size",  "patch_size", "in_chans",    "embed_dim", "depth",
        "num_heads", "mlp_ratio",  "num_classes", "params",    "train_flops_per_sample"};
    ADD_NUMBERS(wl, model_keys, mc->img_size, mc->patch_size, mc->in_chans, mc->embed_dim, mc->depth, mc->num_heads,
                mc->mlp_ratio, mc->num_classes, (double)r->params, r->train_flops_per_sample);
    cJSON_AddStringToObject(wl, "precision", r->workload.precision == IB_PREC_BF16 ? "bf16" : "fp32");
    cJSON *opt = cJSON_AddObjectToObject(wl, "optimizer");
    const ib_optim_config *o = &r->workload.optim;
    cJSON_AddStringToObject(opt, "name", o->kind == IB_OPT_ADAMW ? "adamw" : "adam");
    /* Hyperparameters are floats in the engine; %.9g of the float keeps "0.001" readable. */
    char buf[64];
    const char *keys[] = {"lr", "beta1", "beta2", "eps", "weight_decay"};
    const float vals[] = {o->lr, o->beta1, o->beta2, o->eps, o->weight_decay};
    for (int i = 0; i < 5; i++) {
        snprintf(buf, sizeof buf, "%.7g", (double)vals[i]);
        cJSON_AddNumberToObject(opt, keys[i], strtod(buf, NULL));
    }
    cJSON_AddNumberToObject(wl, "batch_size_per_device", r->workload.batch_size_per_device);
    cJSON_AddNumberToObject(wl, "global_batch_size", r->global_batch_size);
    cJSON_AddStringToObject(wl, "data", r->workload.data == BENCH_DATA_DEVICE ? "device" : "host");
    char fp[65];
    fingerprint_compute(&r->workload, fp);
    cJSON_AddStringToObject(wl, "fingerprint", fp);

    cJSON *tp = cJSON_AddObjectToObject(root, "topology");
    static const char *const topo_keys[] = {"nodes", "world_size", "local_world_size"};
    ADD_NUMBERS(tp, topo_keys, r->topology.nnodes, r->topology.world_size, r->topology.local_world_size);
    cJSON_AddStringToObject(tp, "rendezvous", r->topology.kind);
    cJSON_AddNumberToObject(tp, "node_rank", r->topology.node_rank);
    if (strcmp(r->topology.kind, "none") != 0) {
        cJSON_AddStringToObject(tp, "master_addr", r->topology.master_addr);
        cJSON_AddNumberToObject(tp, "master_port", r->topology.master_port);
        cJSON_AddNumberToObject(tp, "nccl_id_port", r->topology.id_port);
    }
    if (r->m->network[0]) {
        cJSON *nw = cJSON_AddObjectToObject(tp, "network");
        cJSON_AddStringToObject(nw, "transport", r->m->network);
        add_str_or_null(nw, "nccl_net", r->m->nccl_net[0] ? r->m->nccl_net : NULL);
    }

    cJSON *ms = cJSON_AddObjectToObject(root, "measurement");
    static const char *const run_keys[] = {"warmup_steps", "steps", "duration_s", "samples_per_second",
                                           "samples_per_second_per_device"};
    ADD_NUMBERS(ms, run_keys, m->warmup_steps, m->steps, m->duration_s, m->samples_per_second,
                m->samples_per_second_per_device);
    static const char *const step_keys[] = {"median", "p10", "p90", "mean", "stdev", "cv"};
    const bench_stats *t = &m->step_time;
    ADD_NUMBERS(cJSON_AddObjectToObject(ms, "step_time_s"), step_keys, t->median, t->p10, t->p90, t->mean, t->stdev,
                t->cv);
    static const char *const part_keys[] = {"data", "compute", "communication"};
    ADD_NUMBERS(cJSON_AddObjectToObject(ms, "breakdown_s"), part_keys, m->data_s, m->compute_s, m->comm_s);
    double mt = model_tflops(r);
    cJSON_AddNumberToObject(ms, "model_tflops", mt);
    if (r->peak_tflops > 0) {
        cJSON_AddNumberToObject(ms, "peak_tflops", r->peak_tflops);
        add_str_or_null(ms, "peak_source", r->peak_source);
        cJSON_AddNumberToObject(ms, "mfu", mt / r->peak_tflops);
    } else {
        cJSON_AddNullToObject(ms, "peak_tflops");
        cJSON_AddNullToObject(ms, "peak_source");
        cJSON_AddNullToObject(ms, "mfu");
    }
    /* the step's share of what the GEMM library reached here on the step's own shapes: a row that
     * took a slow path shows low even where no datasheet figure is known */
    if (r->gemm_tflops > 0 && r->gemm_devices > 0)
        cJSON_AddNumberToObject(ms, "gemm_share", mt / (r->gemm_tflops * r->gemm_devices));
    else cJSON_AddNullToObject(ms, "gemm_share");
    add_num_or_null(ms, "first_loss", m->first_loss);
    add_num_or_null(ms, "last_loss", m->last_loss);
    if (r->workload.data == BENCH_DATA_HOST && m->pipeline_sps > 0)
        cJSON_AddNumberToObject(ms, "data_pipeline_samples_per_second", m->pipeline_sps);
    else cJSON_AddNullToObject(ms, "data_pipeline_samples_per_second");
    cJSON *hl = cJSON_AddObjectToObject(ms, "host_load");
    cJSON_AddNumberToObject(hl, "loadavg_1m_before", r->sys->loadavg1);
    if (r->others_share >= 0) cJSON_AddNumberToObject(hl, "other_processes_cpu_share", r->others_share);
    else cJSON_AddNullToObject(hl, "other_processes_cpu_share");
    if (r->steal_share >= 0) cJSON_AddNumberToObject(hl, "steal_share", r->steal_share);
    else cJSON_AddNullToObject(hl, "steal_share");
    result_warning w[RESULT_MAX_WARNINGS];
    size_t nw = result_warnings(r, w);
    cJSON *warn = cJSON_AddArrayToObject(ms, "warnings"), *codes = cJSON_AddArrayToObject(ms, "warning_codes");
    for (size_t i = 0; i < nw; i++) {
        cJSON_AddItemToArray(warn, cJSON_CreateString(w[i].text));
        cJSON_AddItemToArray(codes, cJSON_CreateString(w[i].code));
    }

    /* the run's own communicator, timed after the window (runner.c): nccl-tests' figures */
    if (m->n_allreduce > 0) {
        cJSON *comm = cJSON_AddObjectToObject(root, "communication");
        /* how the times were taken (runner.c, bench_time_allreduce): results before it timed one
         * synchronised operation at a time and kept rank 0's median, which reads lower */
        cJSON *how = cJSON_AddObjectToObject(comm, "timing");
        cJSON_AddStringToObject(how, "method", "nccl-tests");
        cJSON_AddNumberToObject(how, "warmup", BENCH_ALLREDUCE_WARMUP);
        cJSON_AddNumberToObject(how, "operations", BENCH_ALLREDUCE_ITERS);
        cJSON_AddStringToObject(how, "average", "ranks");
        cJSON *ar = cJSON_AddArrayToObject(comm, "allreduce");
        for (size_t k = 0; k < m->n_allreduce; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "bytes", m->allreduce[k].bytes);
            cJSON_AddNumberToObject(e, "time_s", m->allreduce[k].time_s);
            cJSON_AddNumberToObject(e, "algbw_gbps", bench_algbw_gbps(m->allreduce[k].bytes, m->allreduce[k].time_s));
            cJSON_AddNumberToObject(
                e, "busbw_gbps",
                bench_allreduce_busbw_gbps(m->allreduce[k].bytes, m->allreduce[k].time_s, r->topology.world_size));
            cJSON_AddItemToArray(ar, e);
        }
    }

    /* one checkpoint of this run's state, timed (checkpoint.c); null when off, skipped or not rank 0 */
    const bench_checkpoint *ck = r->checkpoint;
    if (ck && ck->measured) {
        cJSON *c = cJSON_AddObjectToObject(root, "checkpoint");
        static const char *const ck_keys[] = {"bytes", "write_s", "read_s"};
        ADD_NUMBERS(c, ck_keys, (double)ck->bytes, ck->write_s, ck->read_s);
        cJSON_AddStringToObject(c, "dir_fs", ck->dir_fs);
    } else {
        cJSON_AddNullToObject(root, "checkpoint");
    }

    char *out = pretty ? util_json_print(root) : util_json_print_compact(root);
    cJSON_Delete(root);
    return out;
}

/* Milliseconds with the decimals that still say something (12.34, 123.4, 12346): a slow CPU
 * step of seconds keeps the step-time line inside 80 columns. */
static void fmt_ms(char out[16], double seconds)
{
    double ms = 1e3 * seconds;
    snprintf(out, 16, "%.*f", ms < 100 ? 2 : ms < 1000 ? 1 : 0, ms);
}

void result_print_summary(FILE *f, const bench_report *r, int color)
{
    const bench_result *m = r->m;
    const char *b = color ? "\033[1m" : "", *n = color ? "\033[0m" : "";
    const bench_identity *id = &r->identity;
    /* Fits 80 columns: the lines that quote long names or sources wrap (output_note, which also
     * escapes them); the others stay short. */
    char rev[32];
    util_revision_short(ib_build_revision, rev, sizeof rev);
    fprintf(f, "%sinstbench measure%s  %s  backend %s  rev %s\n", b, n, r->timestamp, r->backend, rev);
    if (id->type[0])
        output_note(f, "  machine      %s x%d  %s  %s  (identity: %s)", id->type, id->count,
                    id->region[0] ? id->region : "region unknown", id->market[0] ? id->market : "market unknown",
                    id->source);
    else output_note(f, "  machine      host %s (type unknown: not EC2, no --instance-type)", r->sys->hostname);
    for (int i = 0; i < id->n_differences; i++)
        output_note(f, "  %-12s %s", i ? "" : "mismatch", id->differences[i]); /* --identity-mismatch ok */
    if (r->hourly_cost_usd > 0) {
        char usd[64];
        output_fmt_usd(usd, sizeof usd, r->hourly_cost_usd);
        fprintf(f, "  price        %s per node-hour, %s (--hourly-cost)\n", usd, price_market(r));
    }
    output_note(f, "  workload     %s  %s  batch %d/device x %d = %d  data %s  %s", r->workload.model.name,
                r->workload.precision == IB_PREC_BF16 ? "bf16" : "fp32", r->workload.batch_size_per_device,
                r->topology.world_size, r->global_batch_size, r->workload.data == BENCH_DATA_DEVICE ? "device" : "host",
                r->workload.optim.kind == IB_OPT_ADAMW ? "adamw" : "adam");
    fprintf(f, "  throughput   %s%.2f samples/s%s  (%.2f per device)\n", b, m->samples_per_second, n,
            m->samples_per_second_per_device);
    fprintf(f, "  steps        %d timed in %.2f s, after %d warm-up\n", m->steps, m->duration_s, m->warmup_steps);
    char med[16], p10[16], p90[16], sd[16], dt[16], co[16], cm[16];
    fmt_ms(med, m->step_time.median), fmt_ms(p10, m->step_time.p10), fmt_ms(p90, m->step_time.p90);
    fmt_ms(sd, m->step_time.stdev), fmt_ms(dt, m->data_s), fmt_ms(co, m->compute_s), fmt_ms(cm, m->comm_s);
    fprintf(f, "  step time    median %s ms  p10 %s  p90 %s  stdev %s  cv %.1f%%\n", med, p10, p90, sd,
            100 * m->step_time.cv);
    fprintf(f, "  breakdown    data %s ms  compute %s ms  comm %s ms  (medians)\n", dt, co, cm);
    double mt = model_tflops(r);
    if (r->peak_tflops > 0) {
        fprintf(f, "  model FLOPs  %.3f TFLOP/s  MFU %.1f%% of %.3f TFLOP/s\n", mt, 100 * mt / r->peak_tflops,
                r->peak_tflops);
        output_note(f, "  peak         %s", r->peak_source ? r->peak_source : "");
    } else {
        fprintf(f, "  model FLOPs  %.3f TFLOP/s  (no known peak: MFU not computed)\n", mt);
    }
    if (r->gemm_tflops > 0 && r->gemm_devices > 0)
        output_note(f,
                    "  GEMM share   %.1f%% of %.3f TFLOP/s x %d device%s, what its GEMM library reached here on "
                    "this model's shapes",
                    100 * mt / (r->gemm_tflops * r->gemm_devices), r->gemm_tflops, r->gemm_devices,
                    r->gemm_devices == 1 ? "" : "s");
    if (m->have_gemm_paths) {
        const ib_gemm_paths *g = &m->gemm_paths;
        if (!gemm_off_road(m))
            fprintf(f, "  GEMM roads   %d shapes, all on cuBLASLt's own algorithms (biases in its epilogue)\n",
                    g->shapes);
        else
            fprintf(f,
                    "  GEMM roads   %d shapes: %d through cuBLAS, %d with a bias kernel (slower roads: measure -v)\n",
                    g->shapes, g->cublas_fallback, g->bias_kernel);
        if (g->tuned > 0)
            fprintf(f,
                    "  GEMM tuning  %d shape%s ran another of cuBLASLt's algorithms than its heuristic's first, "
                    "as timed (INSTBENCH_GEMM_TUNE=1)\n",
                    g->tuned, g->tuned == 1 ? "" : "s");
    }
    if (r->workload.data == BENCH_DATA_HOST && m->pipeline_sps > 0)
        fprintf(f, "  data pipe    can make %.1f samples/s\n", m->pipeline_sps);
    fprintf(f, "  loss         %.4f -> %.4f\n", m->first_loss, m->last_loss);
    if (m->n_allreduce > 0) {
        const size_t k = m->n_allreduce - 1; /* the whole gradient */
        fprintf(f, "  allreduce    %.1f MiB in %.3f ms: busbw %.2f GB/s, algbw %.2f GB/s (%d ranks)\n",
                m->allreduce[k].bytes / 1048576.0, 1e3 * m->allreduce[k].time_s,
                bench_allreduce_busbw_gbps(m->allreduce[k].bytes, m->allreduce[k].time_s, r->topology.world_size),
                bench_algbw_gbps(m->allreduce[k].bytes, m->allreduce[k].time_s), r->topology.world_size);
    }
}

int result_append_line(const char *path, const char *json, ib_error *err)
{
    size_t n = strlen(json);
    char *line = malloc(n + 2);
    if (!line) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    memcpy(line, json, n);
    line[n] = '\n';
    /* one write(2) on an O_APPEND descriptor: runs appending to one file together do not interleave */
    int rc = util_append_file(path, line, n + 1, err);
    free(line);
    return rc;
}
