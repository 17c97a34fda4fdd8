/* aws/ids: the shapes of AWS identifiers and of host addresses (see instbench/aws_ids.h). */
#include "instbench/aws_ids.h"

#include <arpa/inet.h>
#include <string.h>

int aws_id_has_shape(const char *s, const char *prefix)
{
    size_t p = strlen(prefix);
    if (!s || strncmp(s, prefix, p) || s[p] != '-') return 0;
    const char *hex = s + p + 1;
    size_t n = strspn(hex, "0123456789abcdef");
    return hex[n] == '\0' && (n == 8 || n == 17);
}

int aws_instance_id_valid(const char *s) { return aws_id_has_shape(s, "i"); }
int aws_security_group_id_valid(const char *s) { return aws_id_has_shape(s, "sg"); }
int aws_eip_allocation_id_valid(const char *s) { return aws_id_has_shape(s, "eipalloc"); }
int aws_capacity_reservation_id_valid(const char *s) { return aws_id_has_shape(s, "cr"); }
int aws_subnet_id_valid(const char *s) { return aws_id_has_shape(s, "subnet"); }
int aws_ami_id_valid(const char *s) { return aws_id_has_shape(s, "ami"); }

int aws_placement_group_name_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 1 && n <= 255 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:") == n;
}

int aws_ipv4_valid(const char *s)
{
    if (!s) return 0;
    for (int octet = 0; octet < 4; octet++) {
        if (octet && *s++ != '.') return 0;
        size_t d = strspn(s, "0123456789");
        if (d < 1 || d > 3 || (d > 1 && s[0] == '0')) return 0; /* "010" reads as octal to inet_aton */
        int v = 0;
        for (size_t i = 0; i < d; i++) v = v * 10 + (s[i] - '0');
        if (v > 255) return 0;
        s += d;
    }
    return *s == '\0';
}

int aws_host_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 253) return 0;
    if (strchr(s, ':')) {
        unsigned char a[16];
        return inet_pton(AF_INET6, s, a) == 1;
    }
    if (strspn(s, "0123456789.") == n) return aws_ipv4_valid(s); /* 999.999.999.999 is no name */
    for (const char *label = s;;) {
        size_t len = strspn(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
        if (len < 1 || len > 63 || label[0] == '-' || label[len - 1] == '-') return 0;
        if (label[len] == '\0') return 1;
        if (label[len] != '.') return 0;
        label += len + 1;
    }
}
