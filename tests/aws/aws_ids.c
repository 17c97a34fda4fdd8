/* aws_ids: the shapes of the identifiers AWS issues (src/aws/ids.c), which the command line, the
 * sweep's state reader and the EC2 answer parsers all ask.  Expected verdicts are worked out by
 * hand from AWS's documented shapes (a prefix and 8 or 17 lowercase hex digits: EC2 User Guide,
 * "Resource IDs"; moto's generators make the 17-digit form), RFC 791's dotted quad and RFC 1123's
 * host names; issue 39's hostile values are among them. */
#include <string.h>

#include "check.h"
#include "instbench/aws_ids.h"

int main(void)
{
    static const struct {
        int (*fn)(const char *);
        const char *s;
        int ok;
    } cases[] = {
        {aws_instance_id_valid, "i-0123456789abcdef0", 1},
        {aws_instance_id_valid, "i-12345678", 1},
        {aws_instance_id_valid, "i-0123456789ab", 0} /* 12 hex digits: AWS issues 8 or 17 */,
        {aws_instance_id_valid, "i-0123456789ABCDEF0", 0},
        {aws_instance_id_valid, "i-", 0},
        {aws_instance_id_valid, "i-0123456789abcdef0 ", 0},
        {aws_instance_id_valid, "x-0123456789abcdef0", 0},
        {aws_instance_id_valid, "i-0123456789abcdef00", 0},
        {aws_instance_id_valid, "", 0},
        {aws_security_group_id_valid, "sg-0123456789abcdef0", 1},
        {aws_security_group_id_valid, "sg-", 0},
        {aws_security_group_id_valid, "sg-ZZZZ:..__", 0},
        {aws_security_group_id_valid, "sg-0fake", 0},
        {aws_eip_allocation_id_valid, "eipalloc-0123456789abcdef0", 1},
        {aws_eip_allocation_id_valid, "eipalloc-", 0},
        {aws_eip_allocation_id_valid, "eipalloc-0123456789abcdef0x", 0},
        {aws_capacity_reservation_id_valid, "cr-0123456789abcdef0", 1},
        {aws_capacity_reservation_id_valid, "cr-;rm -rf / $(id)", 0},
        {aws_capacity_reservation_id_valid, "", 0},
        {aws_capacity_reservation_id_valid, "cr-xyz", 0},
        {aws_subnet_id_valid, "subnet-0123456789abcdef0", 1},
        {aws_subnet_id_valid, "subnet-us-east-1a", 0},
        {aws_ami_id_valid, "ami-0123456789abcdef0", 1},
        {aws_ami_id_valid, "ami-12c6146b", 1},
        {aws_ami_id_valid, "ami-0abc", 0},
        {aws_ami_id_valid, "ami-gpu", 0},
        {aws_placement_group_name_valid, "instbench-20261125-213005-9f3a-0", 1},
        {aws_placement_group_name_valid, "", 0},
        {aws_placement_group_name_valid, "a b", 0},
        {aws_placement_group_name_valid, "a\x1b[2J", 0},
        {aws_ipv4_valid, "10.0.0.1", 1},
        {aws_ipv4_valid, "255.255.255.255", 1},
        {aws_ipv4_valid, "0.0.0.0", 1},
        {aws_ipv4_valid, "999.999.999.999", 0},
        {aws_ipv4_valid, "256.0.0.1", 0},
        {aws_ipv4_valid, "10.0.0", 0},
        {aws_ipv4_valid, "10.0.0.1.", 0},
        {aws_ipv4_valid, "010.0.0.1", 0} /* octal to inet_aton */,
        {aws_ipv4_valid, "+1.0.0.1", 0},
        {aws_ipv4_valid, "1.0.0.1 ", 0},
        {aws_ipv4_valid, "1..0.1", 0},
        {aws_ipv4_valid, "::1", 0},
        {aws_host_valid, "node-1.cluster.local", 1},
        {aws_host_valid, "ip-10-0-0-1", 1},
        {aws_host_valid, "10.0.0.1", 1},
        {aws_host_valid, "::1", 1},
        {aws_host_valid, "fe80::1", 1},
        {aws_host_valid, "3com.example", 1},
        {aws_host_valid, "a b", 0},
        {aws_host_valid, "a b\x1b]52;c;aGk=\a\x1b[2J", 0},
        {aws_host_valid, "-a", 0},
        {aws_host_valid, "a-", 0},
        {aws_host_valid, "a..b", 0},
        {aws_host_valid, "", 0},
        {aws_host_valid, "999.999.999.999", 0},
        {aws_host_valid, "a_b", 0},
        {aws_host_valid, ":::", 0},
        {aws_host_valid, "b\xc3\xbcro", 0} /* not an RFC 1123 name (IDNA would be xn--bro-hoa) */,
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK(cases[i].fn(cases[i].s) == cases[i].ok, "case %zu '%s': want %d", i, cases[i].s, cases[i].ok);
    char label[80], name[300];
    memset(label, 'a', 63), label[63] = '\0';
    CHECK(aws_host_valid(label), "a 63-letter label is a host name");
    memset(label, 'a', 64), label[64] = '\0';
    CHECK(!aws_host_valid(label), "a 64-letter label is not");
    for (int k = 0; k < 4; k++) memset(name + 64 * k, 'a', 63), name[64 * k + 63] = '.';
    name[253] = '\0'; /* 253 bytes: the longest name */
    CHECK(aws_host_valid(name), "a 253-byte name is a host name");
    name[253] = 'a', name[254] = '\0';
    CHECK(!aws_host_valid(name), "a 254-byte name is not");
    memset(name, 'a', 255), name[255] = '\0';
    CHECK(aws_placement_group_name_valid(name), "255 characters is a placement group name");
    name[255] = 'a', name[256] = '\0';
    CHECK(!aws_placement_group_name_valid(name), "256 characters is not");
    return failures != 0;
}
