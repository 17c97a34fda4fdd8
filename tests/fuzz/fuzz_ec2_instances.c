/* libFuzzer target: the sweep's EC2 instance answers (aws/services/ec2_launch.c through the shared
 * reader in ec2_xml.c): RunInstances and DescribeInstances, nested items with a tag list inside
 * each, and DescribeInstanceTypes' network info (ec2_network.c, a card list inside each item).
 * No input may crash, leak or overflow a fixed-size field; every accepted instance has an id,
 * NUL-terminated fields without control characters, and a launch index in 0..1e6; every accepted
 * type's counts are within the bounds the EFA layout relies on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"

static void check_text(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap) abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int run = 0; run < 2; run++) {
        ec2_instances l = {0};
        char *next = NULL;
        ib_error err = {0};
        if (aws_ec2_parse_instances((const char *)data, size, run, &l, &next, &err) == 0) {
            for (size_t i = 0; i < l.n; i++) {
                const ec2_instance *in = &l.v[i];
                if (!in->id[0] || in->launch_index < 0 || in->launch_index > 1000000) abort();
                check_text(in->id, sizeof in->id);
                check_text(in->state, sizeof in->state);
                check_text(in->private_ip, sizeof in->private_ip);
                check_text(in->state_reason_message, sizeof in->state_reason_message);
                check_text(in->sweep_tag, sizeof in->sweep_tag);
                check_text(in->candidate_tag, sizeof in->candidate_tag);
            }
            if (next) (void)strlen(next);
        }
        free(next);
        ec2_instances_free(&l);
    }
    char *types[] = {"p5.48xlarge", "g5.xlarge"};
    ec2_type_network net[2];
    int seen[2] = {0, 0};
    ib_error err = {0};
    memset(net, 0, sizeof net);
    if (aws_ec2_parse_type_networks((const char *)data, size, types, 2, net, seen, &err) == 0)
        for (int k = 0; k < 2; k++) {
            if (!seen[k]) continue;
            if (net[k].max_efa_interfaces < 0 || net[k].max_efa_interfaces > EC2_CARDS_MAX ||
                net[k].max_network_cards < 1 || net[k].max_network_cards > EC2_CARDS_MAX ||
                strcmp(net[k].type, types[k]))
                abort();
            for (int c = 0; c < EC2_CARDS_MAX; c++)
                if (net[k].card_max_interfaces[c] < 0 || net[k].card_max_interfaces[c] > 1000) abort();
            /* the architecture picks an AMI: only the two instbench knows, or none */
            check_text(net[k].arch, sizeof net[k].arch);
            if (net[k].arch[0] && strcmp(net[k].arch, "x86_64") && strcmp(net[k].arch, "arm64")) abort();
        }
    return 0;
}
