/* identity: which instance this result stands for.  EC2 instance metadata (IMDSv2) unless the
 * flags give all of type, region and market; flags override what IMDS says.  Off EC2 the lookup
 * costs at most about a second (aws/imds.c); what it answers is checked there, and a malformed
 * answer is an error rather than an identity. */
#include "instbench/bench.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "instbench/aws.h"
#include "instbench/imds.h"

/* No IMDS: a SageMaker training container?  0 yes or not there; -1 its resource config refused. */
static int from_sagemaker(bench_identity *id, ib_error *err)
{
    int rc = sagemaker_identity(&id->sagemaker, err);
    if (rc < 0) return -1;
    if (rc > 0) return 0;
    const bench_sagemaker *sm = &id->sagemaker;
    ib_debug("identity: SageMaker training job, %s, host %s (node %d of %d)", sm->instance_type, sm->current_host,
             sm->node_rank, sm->nodes);
    snprintf(id->type, sizeof id->type, "%s", sm->instance_type);
    const char *region = getenv("AWS_REGION");
    if (region && aws_region_known(region)) snprintf(id->region, sizeof id->region, "%s", region);
    strcpy(id->source, "sagemaker");
    return 0;
}

int identity_resolve(const char *type, const char *region, const char *market, int count, bench_identity *id,
                     ib_error *err)
{
    memset(id, 0, sizeof *id);
    strcpy(id->source, "unknown");
    id->mismatch = -1;
    id->count = count > 0 ? count : 1;
    if (!(type && region && market)) {
        aws_instance_identity imds;
        ib_error ierr = {0};
        double t0 = util_now_seconds();
        ib_debug("identity: reading EC2 instance metadata (IMDSv2)");
        int rc = aws_imds_identity(&imds, &ierr);
        /* A malformed answer is not "off EC2": a result must not carry, nor rank later reject, it. */
        if (rc == -2)
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "instance identity: %s (--instance-type, --region and "
                                "--market together skip instance metadata)",
                                ierr.msg);
        if (rc == 0) {
            ib_debug("identity: instance metadata answered in %.2f s", util_now_seconds() - t0);
            snprintf(id->type, sizeof id->type, "%s", imds.instance_type);
            snprintf(id->region, sizeof id->region, "%s", imds.region);
            snprintf(id->availability_zone, sizeof id->availability_zone, "%s", imds.availability_zone);
            snprintf(id->availability_zone_id, sizeof id->availability_zone_id, "%s", imds.availability_zone_id);
            /* "scheduled" and other lifecycles are not markets `rank` prices: leave them unknown */
            if (!strcmp(imds.lifecycle, "spot") || !strcmp(imds.lifecycle, "on-demand"))
                snprintf(id->market, sizeof id->market, "%s", imds.lifecycle);
            strcpy(id->source, "imds");
        } else {
            ib_debug("identity: instance metadata not available (%.2f s): %s", util_now_seconds() - t0, ierr.msg);
            if (from_sagemaker(id, err) < 0) return -1;
        }
    }
    /* The source names where the instance type came from. */
    if (type) {
        snprintf(id->type, sizeof id->type, "%s", type);
        strcpy(id->source, "flag");
    }
    if (region) {
        /* An AZ read from IMDS belongs to IMDS's region only. */
        if (strcmp(id->region, region) != 0) id->availability_zone[0] = id->availability_zone_id[0] = '\0';
        snprintf(id->region, sizeof id->region, "%s", region);
    }
    if (market) snprintf(id->market, sizeof id->market, "%s", market);
    if (!strcmp(id->source, "unknown") && (region || market)) strcpy(id->source, "flag");
    return 0;
}

/* WORD (LEN bytes) occurs in TEXT, ignoring case, with no letter or digit right before or after. */
static int has_word(const char *text, const char *word, size_t len)
{
    for (const char *p = text; len && *p; p++) {
        if (strncasecmp(p, word, len) != 0) continue;
        int open = p == text || !isalnum((unsigned char)p[-1]);
        int closed = !isalnum((unsigned char)p[len]);
        if (open && closed) return 1;
    }
    return 0;
}

/* Parts of a catalogue name ("A100-80GB": 2; "RTX PRO Server 6000", g7e's as DescribeInstanceTypes
 * names it: 4, found in any order in "NVIDIA RTX PRO 6000 Blackwell Server Edition") when every one
 * is a word of DEVICE, else 0. */
static int parts_matched(const char *device, const char *name)
{
    int parts = 0;
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "- ");
        if (n && !has_word(device, p, n)) return 0;
        parts += n > 0;
        p += n + (p[n] != '\0');
    }
    return parts;
}

const char *identity_device_kind(const char *device, const char *const *known, size_t n_known)
{
    const char *best = NULL;
    int best_parts = 0;
    for (size_t i = 0; device && i < n_known; i++) {
        int parts = parts_matched(device, known[i]);
        if (parts > best_parts) best = known[i], best_parts = parts;
    }
    return best;
}

static void add_difference(bench_identity *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_difference(bench_identity *id, const char *fmt, ...)
{
    if (id->n_differences >= IDENTITY_MAX_DIFFERENCES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(id->differences[id->n_differences++], sizeof id->differences[0], fmt, ap);
    va_end(ap);
}

/* "accelerators: g5.12xlarge has 4 x A10G, this run has none (cpu backend)": the kind and the
 * count of the devices together, since either wrong makes the row another machine. */
static void check_accelerators(bench_identity *id, const bench_type_hardware *hw, const bench_run_hardware *run)
{
    const int type_has = hw->accelerator && hw->accelerator[0] && hw->accelerator_count > 0;
    const char *kind = run->accelerators > 0
                           ? identity_device_kind(run->device_name, hw->known_accelerators, hw->n_known_accelerators)
                           : NULL;
    if (!type_has && run->accelerators == 0) return;
    if (type_has && run->accelerators == hw->accelerator_count && kind && !strcmp(kind, hw->accelerator)) return;
    char has[128], runs[192];
    if (type_has) snprintf(has, sizeof has, "%d x %s", hw->accelerator_count, hw->accelerator);
    else snprintf(has, sizeof has, "none");
    if (run->accelerators == 0) snprintf(runs, sizeof runs, "none (%s backend)", run->backend);
    else
        snprintf(runs, sizeof runs, "%d x %s", run->accelerators,
                 run->device_name ? run->device_name : "unnamed device");
    add_difference(id, "accelerators: %s has %s, this run has %s", id->type, has, runs);
}

/* vCPUs must be equal: on EC2 the kernel sees exactly the type's vCPUs (the online CPUs, which a
 * container's CPU quota does not change), so any other count is another machine, or one launched
 * with fewer cores or threads per core than the type has, whose data pipeline and CPU backend are
 * not the type's. */
static void check_vcpus(bench_identity *id, const bench_type_hardware *hw, const bench_run_hardware *run)
{
    if (hw->vcpus >= 1 && run->vcpus >= 1 && hw->vcpus != run->vcpus)
        add_difference(id, "vcpus: %s has %d, this machine has %d", id->type, hw->vcpus, run->vcpus);
}

const char *identity_differences_text(const bench_identity *id, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0, u = 0; i < id->n_differences && (size_t)u < n; i++)
        u += snprintf(buf + u, n - (size_t)u, "%s%s", i ? "; " : "", id->differences[i]);
    return buf;
}

int identity_check(bench_identity *id, const bench_type_hardware *hw, const bench_run_hardware *run)
{
    id->n_differences = 0;
    /* the machine's own answer (instance metadata, SageMaker's resource config): never refused */
    if (!strcmp(id->source, "imds") || !strcmp(id->source, "sagemaker")) return id->mismatch = 0;
    if (!id->type[0] || !hw) return id->mismatch = -1;
    check_accelerators(id, hw, run);
    check_vcpus(id, hw, run);
    return id->mismatch = id->n_differences > 0;
}
