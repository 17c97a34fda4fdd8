/* libFuzzer target: the JSON price parsers.  Input goes to the GetProducts page parser
 * (aws/pricing.c: a JSON document whose PriceList holds JSON documents inside strings, from any
 * server an endpoint override points at) and to the instbench.prices/v1 reader (prices_json.c:
 * cache files and `rank --source` files on disk).  No input may crash, leak or read out of
 * bounds; whatever the v1 reader accepts must survive a write/read round trip, its prices, the
 * hardware it states and the Spot Advisor's bucket and savings alike. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"
#include "instbench/prices.h"

static int same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* The hardware a record states survives the round trip (none is stated without its vCPUs). */
static int same_hardware(const price_record *a, const price_record *b)
{
    if (a->hw.vcpus != b->hw.vcpus) return 0;
    return !prices_hardware_known(a) ||
           (!strcmp(a->hw.accelerator, b->hw.accelerator) && a->hw.accelerator_count == b->hw.accelerator_count &&
            same(a->hw.memory_gib, b->hw.memory_gib) &&
            same(a->hw.accelerator_memory_gib, b->hw.accelerator_memory_gib));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    static const char *const types[] = {"g5.xlarge", "ml.g5.xlarge"};
    for (int k = 0; k < 2; k++) {
        pricing_item it = {0};
        strcpy(it.instance_type, types[k]);
        strcpy(it.region, "us-east-1");
        it.usd_per_hour = NAN;
        char *next = NULL;
        ib_error err = {0};
        if (aws_pricing_parse_page(text, size, &it, &next, &err) == 0) {
            if (next) (void)strlen(next);
            if (!isnan(it.usd_per_hour) && !(it.usd_per_hour > 0 && it.usd_per_hour <= 2000)) abort();
        }
        free(next);
    }

    price_set s;
    ib_error err = {0};
    if (prices_parse_json(text, size, "fuzz", &s, &err) == 0) {
        char *out = prices_to_json(&s);
        if (out) {
            price_set s2;
            if (prices_parse_json(out, strlen(out), "roundtrip", &s2, &err) != 0 || s2.n != s.n) abort();
            for (size_t i = 0; i < s.n; i++)
                if (s2.items[i].n_spot != s.items[i].n_spot ||
                    (!isnan(s.items[i].on_demand_usd_per_hour) &&
                     s2.items[i].on_demand_usd_per_hour != s.items[i].on_demand_usd_per_hour) ||
                    !same_hardware(&s.items[i], &s2.items[i]) ||
                    s2.items[i].interruption_bucket != s.items[i].interruption_bucket ||
                    s2.items[i].savings_pct != s.items[i].savings_pct)
                    abort();
            prices_free(&s2);
            free(out);
        }
        prices_free(&s);
    }
    return 0;
}
