/* prices --market capacity-block | savings-plan (prices_market.c), called by prices.c once the
 * flags are parsed and checked. */
#ifndef INSTBENCH_CMD_PRICES_MARKET_H
#define INSTBENCH_CMD_PRICES_MARKET_H

#include <stdio.h>
#include <time.h>

#include "instbench/prices.h"

enum { PRICES_MARKET_BLOCK = 3, PRICES_MARKET_PLAN = 4 };   /* prices' --market choice indexes */

typedef struct prices_market_args {
    int market;
    char *const *types; size_t n_types;      /* expanded, natural order */
    char *const *regions; size_t n_regions;
    int (*nodes_of)(const char *type);        /* --nodes for TYPE */
    int duration_hours;                        /* capacity-block */
    time_t start_after, end_before;            /* capacity-block, 0: not given */
    int term_years;                            /* savings-plan: 1 or 3 */
    markets_payment payment;
    const char *plan_type;                     /* "Compute", "EC2Instance", "SageMaker" */
    const char *plan_label;                    /* "Compute", "EC2 Instance", "SageMaker" */
    prices_source source;
    double timeout_s;
    const char *format;                        /* "table", "json", "csv" */
} prices_market_args;

/* --columns keys of each market's table, NULL-terminated. */
extern const char *const prices_block_keys[], *const prices_plan_keys[];

/* Writes the market's rows to OUT: 0, or -1 with ERR (exit 1: nothing found, AWS failed). */
int prices_market_run(const prices_market_args *a, FILE *out, ib_error *err);

#endif
