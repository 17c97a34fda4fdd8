/* prices/zone_kind: what kind of zone a spot price is for, from the shape of the zone's name or ID
 * alone (no AWS call: the snapshot, the cache and live prices all name zones one of these ways). */
#include "instbench/prices.h"
#include "instbench/names.h"

#include <string.h>

/* Forms (AWS Local Zones and Wavelength user guides; the snapshot's use1-atl2-az1, usw2-lax1-az1):
 *   Availability Zone  use1-az2           us-east-1a
 *   Local Zone         use1-atl2-az1      us-east-1-atl-2a    (a city word between region and zone)
 *   Wavelength Zone    use1-wl1-bos-wlz1  us-east-1-wl1-bos-wlz-1
 * A zone ID's region is its first word (use1); a name's region ends in a word of digits alone
 * (us-east-1), which only a Local or Wavelength Zone's name has words after. */
prices_zone_kind prices_zone_kind_of(const char *zone)
{
    size_t words = 0;
    int digits_word_inside = 0;
    for (const char *w = zone; *w;) {
        size_t len = strcspn(w, "-");
        if (len >= 3 && w[0] == 'w' && w[1] == 'l' && w[2] >= '0' && w[2] <= '9') return PRICES_ZONE_WAVELENGTH;
        if (len && strspn(w, "0123456789") == len && w[len] == '-') digits_word_inside = 1;
        words++;
        w += len;
        if (*w) w++;
    }
    if (names_zone_is_id(zone)) return words > 2 ? PRICES_ZONE_LOCAL : PRICES_ZONE_AVAILABILITY;
    return digits_word_inside ? PRICES_ZONE_LOCAL : PRICES_ZONE_AVAILABILITY;
}

const char *prices_zone_kind_name(prices_zone_kind k)
{
    return k == PRICES_ZONE_LOCAL        ? "local-zone"
           : k == PRICES_ZONE_WAVELENGTH ? "wavelength-zone"
                                         : "availability-zone";
}

const char *prices_zone_marker(const char *zone)
{
    prices_zone_kind k = prices_zone_kind_of(zone);
    return k == PRICES_ZONE_LOCAL ? " (LZ)" : k == PRICES_ZONE_WAVELENGTH ? " (WLZ)" : "";
}

int prices_zone_counts(const char *zone, int with_local)
{
    return with_local || prices_zone_kind_of(zone) == PRICES_ZONE_AVAILABILITY;
}
