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

#endif
