/* names: AWS names that arrive from outside (price files, the price cache, instance metadata),
 * checked before they are shown, stored or used in a path.  Syntax only: a well-formed name that
 * AWS happens not to use passes; anything with other characters or shapes does not. */
#ifndef INSTBENCH_NAMES_H
#define INSTBENCH_NAMES_H

#include <stddef.h>

/* g5.xlarge, u-6tb1.56xlarge, ml.p4d.24xlarge: [ml.]family.size, lower-case letters, digits and
 * '-', the family starting with a letter; shorter than 64. */
int names_instance_type_ok(const char *s);
/* us-east-1, us-gov-west-1, eusc-de-east-1: two or more words of letters, then a number;
 * shorter than 32. */
int names_region_ok(const char *s);
/* The same rules as a phrase for messages: NULL when S is well-formed, else what is wrong with it
 * ("is not a region like us-east-1"), so every caller says it the same way. */
const char *names_instance_type_problem(const char *s);
const char *names_region_problem(const char *s);
/* Zone names and zone IDs: us-east-1a, us-west-2-lax-1a, us-east-1-wl1-bos-wlz-1, use1-az1,
 * usw2-lax1-az1: '-'-separated words of lower-case letters and digits, starting with a letter,
 * with a digit somewhere; shorter than 32. */
int names_zone_ok(const char *s);
/* ZONE is a zone name (not an ID) of REGION: REGION then one letter (us-east-1a) or REGION, '-'
 * and a local or Wavelength zone's suffix (us-west-2-lax-1a). */
int names_zone_in_region(const char *zone, const char *region);
/* The region of a zone name (us-west-2-lax-1a -> us-west-2); -1 when ZONE has none. */
int names_region_of_zone(const char *zone, char *out, size_t len);
/* ZONE is shaped like a zone ID (use1-az2, usw2-lax1-az1), not a zone name: its first word has a
 * digit, where a name's first word is the region's (us-).  Which ID a name stands for differs per
 * AWS account, so the two are told apart by shape and mapped only through AWS
 * (DescribeAvailabilityZones) or an instance's own metadata. */
int names_zone_is_id(const char *zone);
const char *names_zone_problem(const char *s); /* the phrase for messages, as above */

/* The size of an instance type (the part after its last '.') is one AWS uses: nano, micro, small,
 * medium, large, xlarge, <N>xlarge, metal or metal-<N>xl.  A syntactically fine "g5.xlarg" fails
 * here, offline, before any lookup. */
int names_instance_size_ok(const char *type);
/* The phrase for messages: NULL when TYPE is an instance type with a known size, else what is
 * wrong ("is not an instance type like g5.xlarge", "names no instance size AWS uses (...)"). */
const char *names_instance_type_size_problem(const char *type);
/* The one order of instance type names, wherever they are listed: family first, with numbers
 * compared as numbers (g4dn < g5 < g5g < g6 < p4d), then size, smallest first (nano < micro <
 * small < medium < large < xlarge < 2xlarge < ... < 48xlarge < metal < metal-24xl), so
 * g4dn.2xlarge comes before g4dn.12xlarge.  A qsort comparator over char * is below. */
int names_instance_type_cmp(const char *a, const char *b);
int names_instance_type_qsort_cmp(const void *a, const void *b); /* a, b: char *const * */

#endif
