/* aws/regions: the AWS regions instbench knows by name (commercial, GovCloud, China, the European
 * Sovereign Cloud), so that a typo such as us-east-9 can be told apart from a real region that
 * merely has no price, and be answered with the nearest real one. */
#include <string.h>

#include "instbench/aws.h"

static const char *const regions[] = {
    "af-south-1",     "ap-east-1",      "ap-east-2",      "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
    "ap-south-1",     "ap-south-2",     "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
    "ap-southeast-5", "ap-southeast-6", "ap-southeast-7", "ca-central-1",   "ca-west-1",      "cn-north-1",
    "cn-northwest-1", "eu-central-1",   "eu-central-2",   "eu-north-1",     "eu-south-1",     "eu-south-2",
    "eu-west-1",      "eu-west-2",      "eu-west-3",      "eusc-de-east-1", "il-central-1",   "me-central-1",
    "me-south-1",     "mx-central-1",   "sa-east-1",      "us-east-1",      "us-east-2",      "us-gov-east-1",
    "us-gov-west-1",  "us-west-1",      "us-west-2",
};

/* GovCloud, China and the European Sovereign Cloud are partitions of their own: an account of the
 * commercial partition (the one "all regions" means) reaches none of them. */
static int commercial(const char *region)
{
    return strncmp(region, "us-gov-", 7) && strncmp(region, "cn-", 3) && strncmp(region, "eusc-", 5);
}

size_t aws_regions_list(int commercial_only, const char **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++)
        if (!commercial_only || commercial(regions[i])) {
            if (n < cap) out[n] = regions[i];
            n++;
        }
    return n;
}

int aws_region_known(const char *region)
{
    if (!region) return 0;
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++)
        if (!strcmp(region, regions[i])) return 1;
    return 0;
}
