/* rank/revision.c: which builds of instbench measured the configurations ranked (tool.revision).
 * One release number spans months of changes that moved a GPU's step time by 10-30%
 * (docs/benchmarks.md), so rows measured by different builds may differ by the code as much as by
 * the hardware, and runs of one configuration from different builds share a median: the ranking
 * stays as it is and says so (the warning here, JSON's inputs.revisions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/rank.h"
#include "rank/internal.h"

int rank_revision_cmp(const char *a, const char *b)
{
    if (!a[0] || !b[0]) return !a[0] - !b[0];
    return strcmp(a, b);
}

static int cmp_text(const void *a, const void *b)
{
    return rank_revision_cmp(*(const char *const *)a, *(const char *const *)b);
}

long rank_revisions(const rank_config *c, size_t n, const char ***out)
{
    *out = NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += c[i].n_revisions;
    if (!total) return 0;
    const char **all = malloc(total * sizeof *all);
    if (!all) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < c[i].n_revisions; j++) all[k++] = c[i].revisions[j].text;
    qsort(all, total, sizeof *all, cmp_text);
    size_t distinct = 0;
    for (size_t i = 0; i < total; i++)
        if (!distinct || strcmp(all[distinct - 1], all[i])) all[distinct++] = all[i];
    *out = all;
    return (long)distinct;
}

/* Appends TEXT to the list in OUT (", " between) while room is left for a closing " and N more";
 * 1 when it was. */
static int list_add(char *out, size_t len, const char *text)
{
    size_t used = strlen(out);
    if (used + strlen(text) + 2 + 32 >= len) return 0;
    snprintf(out + used, len - used, "%s%s", used ? ", " : "", text);
    return 1;
}

static void list_close(char *out, size_t len, size_t shown, size_t total)
{
    if (shown < total) snprintf(out + strlen(out), len - strlen(out), " and %zu more", total - shown);
}

void rank_warn_revisions(const rank_config *c, size_t n)
{
    const char **revs = NULL;
    long count = rank_revisions(c, n, &revs);
    if (count > 1) {
        char builds[400] = "", mixed[400] = "";
        size_t shown = 0, mixed_n = 0, mixed_shown = 0;
        for (long i = 0; i < count; i++) {
            char s[32];
            util_revision_short(revs[i], s, sizeof s);
            if (shown == (size_t)i) shown += list_add(builds, sizeof builds, s);
        }
        list_close(builds, sizeof builds, shown, (size_t)count);
        for (size_t i = 0; i < n; i++) {
            if (c[i].n_revisions < 2) continue;
            const char *name = rank_config_name(&c[i]);
            char label[256];
            snprintf(label, sizeof label, "%ld x %s%s%s%s", c[i].nodes, name[0] ? name : "(unknown type)",
                     c[i].variant[0] ? " (" : "", c[i].variant, c[i].variant[0] ? ")" : "");
            if (mixed_shown == mixed_n++) mixed_shown += list_add(mixed, sizeof mixed, label);
        }
        list_close(mixed, sizeof mixed, mixed_shown, mixed_n);
        ib_warn("the rows ranked were measured by %ld builds of instbench (tool.revision: %s): a difference between "
                "rows may be the code's, not the hardware's; measure every candidate with one build%s%s",
                count, builds, mixed_n ? "; runs of different builds share a median in " : "", mixed);
    }
    free(revs);
}
