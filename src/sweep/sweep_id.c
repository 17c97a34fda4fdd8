/* sweep_id: the id every resource, state file and S3 key of one sweep is named by. */
#include "instbench/sweep.h"

#include <stdio.h>
#include <string.h>

int sweep_id_new(time_t now, char out[SWEEP_ID_MAX], ib_error *err)
{
    struct tm tm;
    if (!gmtime_r(&now, &tm)) return ib_error_set(err, IB_EXIT_RUNTIME, "sweep: the clock is unusable");
    char rnd[5];
    util_random_hex(rnd, 4);
    /* UTC first so `ls` and `sweep status` list sweeps in the order they started. */
    char id[64];
    int n = snprintf(id, sizeof id, "%04d%02d%02d-%02d%02d%02d-%s", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, rnd);
    if (n < 0 || n >= SWEEP_ID_MAX || !sweep_id_valid(id)) /* a year past 9999 */
        return ib_error_set(err, IB_EXIT_RUNTIME, "sweep: the clock is unusable");
    memcpy(out, id, (size_t)n + 1);
    return 0;
}

int sweep_id_valid(const char *id)
{
    /* "YYYYMMDD-HHMMSS-xxxx": digits, '-', digits, '-', lower-case hex. */
    static const char shape[] = "dddddddd-dddddd-xxxx";
    if (!id || strlen(id) != sizeof shape - 1) return 0;
    for (size_t i = 0; shape[i]; i++) {
        char c = id[i];
        if (shape[i] == '-' && c != '-') return 0;
        if (shape[i] == 'd' && !(c >= '0' && c <= '9')) return 0;
        if (shape[i] == 'x' && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
    }
    return 1;
}
