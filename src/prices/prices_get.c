/* prices_get: resolves each (instance type, region) from live AWS -> cache -> snapshot.
 * Temporary: the sources land in the next commits. */
#include "instbench/prices.h"
#include <string.h>

int prices_get(const prices_query *q, price_set *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    return ib_error_set(err, IB_EXIT_RUNTIME, "prices: sources not built yet");
}
