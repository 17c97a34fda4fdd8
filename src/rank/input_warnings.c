/* rank/input_warnings.c: what the configurations ranked say about the inputs that is worth a
 * warning before the ranking: --price flags naming no configuration of the workload (a typo, or a
 * machine measured on another workload), runs that recorded different prices, rows measured
 * with different attention paths, and runs measured by different builds (revision.c). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "instbench/rank.h"
#include "rank/internal.h"

const char *const rank_attention_paths[RANK_ATTENTION_PATHS] = {"cudnn", "cudnn-nondet", "unfused", "fused"};

static void check_user_prices(const rank_config *c, size_t n, const rank_options *o)
{
    for (size_t k = 0; k < o->n_user_prices; k++) {
        const rank_user_price *p = &o->user_prices[k];
        int used = 0;
        for (size_t i = 0; i < n && !used; i++) used = !strcasecmp(rank_config_name(&c[i]), p->name);
        if (used) continue;
        char names[400] = "";
        for (size_t i = 0, u = 0; i < n && u + 80 < sizeof names; i++) {
            const char *nm = rank_config_name(&c[i]);
            int dup = !nm[0];
            for (size_t j = 0; j < i && !dup; j++) dup = !strcmp(rank_config_name(&c[j]), nm);
            if (!dup) u += (size_t)snprintf(names + u, sizeof names - u, "%s%s", u ? ", " : "", nm);
        }
        ib_warn("--price %s: no configuration of this workload is named %s (names: %s)", p->name, p->name,
                names[0] ? names : "none");
    }
    for (size_t i = 0; i < n; i++)
        if (c[i].recorded_prices_differ)
            ib_warn("%s: its runs recorded different hourly costs (measure --hourly-cost); the newest run's counts",
                    rank_config_name(&c[i])[0] ? rank_config_name(&c[i]) : "a machine without a name");
}

/* Says when the configurations ran attention more than one way (cudnn, cudnn-nondet: its
 * non-deterministic backward, unfused, and fused in results of versions before issue 37): the
 * same GPU runs the paths at different speeds (docs/benchmarks.md), so rows measured differently
 * compare the kernels as much as the hardware. */
static void check_attention_paths(const rank_config *c, size_t n)
{
    size_t count[RANK_ATTENTION_PATHS] = {0};
    int paths = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < RANK_ATTENTION_PATHS; k++) count[k] += !strcmp(c[i].attention, rank_attention_paths[k]);
    char how[160] = "";
    const char *const *names = rank_attention_paths;
    for (int k = 0; k < RANK_ATTENTION_PATHS; k++)
        if (count[k]) {
            const size_t len = strlen(how);
            snprintf(how + len, sizeof how - len, "%s%zu %s", paths++ ? ", " : "", count[k], names[k]);
        }
    if (paths > 1)
        ib_warn("configurations ran attention more than one way (%s; hardware.attention): one GPU runs the paths at "
                "different speeds, so those rows compare kernels as well as hardware; measure every candidate with "
                "the same INSTBENCH_CUDA_ATTENTION%s",
                how, count[RANK_ATTN_CUDNN_NONDET] ? " and INSTBENCH_CUDNN_NONDETERMINISTIC" : "");
}

void rank_warn_inputs(const rank_config *c, size_t n, const rank_options *o)
{
    check_user_prices(c, n, o);
    check_attention_paths(c, n);
    rank_warn_revisions(c, n);
}
