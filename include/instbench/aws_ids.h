/* aws/ids: the shapes of the identifiers AWS issues, one check per shape (src/aws/ids.c).
 *
 * Every place that takes one from outside (the command line, a sweep's state file, an EC2 answer)
 * asks these, so a value the command line refuses is never taken from a file or a server.  The
 * shapes are those AWS issues and botocore's/moto's generators produce: a prefix and 8 (older
 * resources) or 17 lowercase hex digits, "i-0123456789abcdef0". */
#ifndef INSTBENCH_AWS_IDS_H
#define INSTBENCH_AWS_IDS_H

/* "PREFIX-" and 8 or 17 lowercase hex digits, nothing else (PREFIX without the dash). */
int aws_id_has_shape(const char *s, const char *prefix);
int aws_instance_id_valid(const char *s);             /* i-... */
int aws_security_group_id_valid(const char *s);       /* sg-... */
int aws_eip_allocation_id_valid(const char *s);       /* eipalloc-... */
int aws_capacity_reservation_id_valid(const char *s); /* cr-... */
int aws_subnet_id_valid(const char *s);               /* subnet-... */
int aws_ami_id_valid(const char *s);                  /* ami-... */
/* A placement group's name: 1 to 255 of the characters instbench's own names use (letters,
 * digits, '.', '-', '_', ':'); EC2 takes any ASCII, instbench writes only these. */
int aws_placement_group_name_valid(const char *s);
/* IPv4 in dotted-quad form: four decimal octets 0-255, no leading zeros, no sign, nothing else. */
int aws_ipv4_valid(const char *s);
/* A launcher's address (MASTER_ADDR, a Slurm node name, --master-addr): an RFC 1123 host name
 * (labels of 1-63 letters, digits and '-', not starting or ending with '-', 253 at most), an IPv4
 * dotted quad (a name made only of digits and dots must be one), or an IPv6 literal. */
int aws_host_valid(const char *s);

#endif
