/* The sweep's timings that only tests shorten or lengthen (INSTBENCH_SWEEP_POLL_S, ..._LOOKUP_S,
 * ..._NODE_GRACE_S, ..._TERMINATE_WAIT_S, ..._HOLDER_WAIT_S; docs/usage.md): one reader, so every one
 * is bounded, and warned about, alike. */
#include "instbench/sweep.h"
#include "instbench/util.h"

#include <stdlib.h>

double sweep_env_seconds(const char *name, double dflt)
{
    const char *v = getenv(name);
    double d;
    if (!v || !v[0]) return dflt;
    if (util_parse_double(v, 0.01, 86400, &d) != 0) {
        ib_warn("%s='%s' is not a number of seconds (0.01 to 86400); using %g", name, v, dflt);
        return dflt;
    }
    return d;
}
