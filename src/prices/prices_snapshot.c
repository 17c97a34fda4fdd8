/* prices_snapshot: the price snapshot compiled into the binary (src/prices/snapshot_data.c,
 * generated from configs/prices-snapshot.json by scripts/data/make_price_snapshot.py), so
 * `instbench prices` works from any directory and install location without a data file. */
#include "prices/internal.h"

#include <pthread.h>
#include <stddef.h>

extern const char prices_snapshot_json[];
extern const size_t prices_snapshot_json_len;

static price_set snap;
static int state; /* 1 ok, -1 broken */
static ib_error saved;
/* Parsed once, from whichever thread asks first: prices_get parses it while live requests are in
 * flight, and a later call waits for that parse instead of repeating it. */
static pthread_once_t parsed = PTHREAD_ONCE_INIT;

static void parse(void)
{
    state =
        prices_parse_json(prices_snapshot_json, prices_snapshot_json_len, "embedded price snapshot", &snap, &saved) == 0
            ? 1
            : -1;
}

const price_set *prices_snapshot(ib_error *err)
{
    pthread_once(&parsed, parse);
    if (state < 0) {
        if (err) *err = saved;
        return NULL;
    }
    return &snap;
}
