/* util/suggest.c: the distance behind every "did you mean X?" (instbench/suggest.h). */
#include "instbench/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int same(char a, char b) { return tolower((unsigned char)a) == tolower((unsigned char)b); }

size_t suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN) return (la > lb ? la - lb : lb - la) + SUGGEST_MAX_LEN;
    /* Three rows of the dynamic-programming table are enough: a swap looks two rows back. */
    size_t rows[3][SUGGEST_MAX_LEN + 1];
    size_t *back2 = rows[0], *back1 = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++) back1[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = back1[j - 1] + !same(a[i - 1], b[j - 1]); /* keep or substitute */
            if (back1[j] + 1 < best) best = back1[j] + 1;           /* delete a[i-1] */
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;       /* insert b[j-1] */
            if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) && back2[j - 2] + 1 < best)
                best = back2[j - 2] + 1; /* swap two neighbours */
            cur[j] = best;
        }
        size_t *t = back2;
        back2 = back1;
        back1 = cur;
        cur = t;
    }
    return back1[lb];
}

size_t suggest_max_distance(size_t len) { return len < 4 ? 0 : len < 8 ? 1 : 2; }

const char *suggest_closest(const char *word, const char *const *candidates, size_t n)
{
    if (!word) return NULL;
    size_t limit = suggest_max_distance(strlen(word)), best_d = limit + 1;
    const char *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i]) continue;
        if (!strcmp(word, candidates[i])) return NULL; /* known: nothing to suggest */
        size_t d = suggest_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

const char *suggest_did_you_mean(const char *suggestion, char *buf, size_t len)
{
    if (!suggestion) return "";
    snprintf(buf, len, "; did you mean %s?", suggestion);
    return buf;
}
