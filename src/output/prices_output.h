/* prices_output: renders a price_set for people (aligned table) and spreadsheets (CSV).  JSON is
 * prices_to_json (the instbench.prices/v1 file format). */
#ifndef INSTBENCH_PRICES_OUTPUT_H
#define INSTBENCH_PRICES_OUTPUT_H

#include <stdio.h>
#include <time.h>
#include "instbench/prices.h"

/* want_od / want_spot pick the columns; now dates the "age" column. */
int prices_write_table(const price_set *s, int want_od, int want_spot, time_t now, FILE *out);
/* Fixed columns whatever the market (empty cells for what was not asked), plain numbers. */
int prices_write_csv(const price_set *s, FILE *out);

#endif
