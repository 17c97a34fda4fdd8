/* rank/internal.h: helpers shared between the files of src/rank/ only. */
#ifndef INSTBENCH_RANK_INTERNAL_H
#define INSTBENCH_RANK_INTERNAL_H

#include <stddef.h>
#include "instbench/rank.h"

/* parse.c: TREE is a cJSON* already parsed (an element of an array of results). */
int rank_parse_result_tree(const void *tree, rank_result *out, char *reason, size_t rlen);

/* Median of V[0..N) (N > 0); reorders V.  Even N: mean of the two middle values. */
double rank_median(double *v, size_t n);

#endif
