/* rank/type_filter.c: --instance-types.  Each name or pattern must match a configuration of the
 * workload ranked: one that matches none is a typo (or a machine of another workload), refused
 * with the names present and the nearest. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "instbench/names.h"
#include "instbench/rank.h"
#include "instbench/suggest.h"

int rank_filter_types(char *const *types, size_t n_types, rank_config *c, size_t *n, ib_error *err)
{
    if (!n_types) return 0;
    const char **names = calloc(*n ? *n : 1, sizeof *names);
    unsigned char *keep = calloc(*n ? *n : 1, 1);
    int rc = 0;
    if (!names || !keep) {
        free(names), free(keep);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    for (size_t i = 0; i < *n; i++) names[i] = rank_config_name(&c[i]);
    for (size_t k = 0; k < n_types && !rc; k++) {
        const char *want = types[k];
        int hit = 0;
        for (size_t i = 0; i < *n; i++)
            if (names[i][0] && (prices_is_pattern(want) ? !fnmatch(want, names[i], 0) : !strcasecmp(want, names[i])))
                keep[i] = hit = 1;
        if (hit) continue;
        /* the names present, in natural order, for the message and the suggestion */
        size_t m = 0;
        for (size_t i = 0; i < *n; i++) {
            int dup = !names[i][0];
            for (size_t j = 0; j < m && !dup; j++) dup = !strcmp(names[j], names[i]);
            if (!dup) names[m++] = names[i];
        }
        qsort(names, m, sizeof *names, names_instance_type_qsort_cmp);
        char list[400] = "", dym[128];
        for (size_t i = 0, u = 0; i < m && u + 80 < sizeof list; i++)
            u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", names[i]);
        rc = ib_error_set(err, IB_EXIT_USAGE,
                          "--instance-types: '%s' matches no configuration of this workload "
                          "(present: %s)%s",
                          want, m ? list : "none",
                          suggest_did_you_mean(suggest_closest(want, names, m), dym, sizeof dym));
    }
    size_t kept = 0;
    for (size_t i = 0; i < *n && !rc; i++)
        if (keep[i]) c[kept++] = c[i];
    if (!rc) *n = kept;
    free(names);
    free(keep);
    return rc;
}
