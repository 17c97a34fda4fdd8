/* aws_services' private pieces shared by its EC2 files (ec2.c: prices' calls, ec2_launch.c: the
 * sweep's): the EC2 query-API request, and one expat reader for EC2's XML answers. */
#ifndef INSTBENCH_AWS_SERVICES_INTERNAL_H
#define INSTBENCH_AWS_SERVICES_INTERNAL_H

#include "instbench/aws_services.h"

#define EC2_API_VERSION "2016-11-15"

/* POST / to EC2's endpoint for REGION (or AWS_ENDPOINT_URL[_EC2]) with the form BODY (borrowed;
 * it must outlive the send), signed for "ec2" in REGION.  *url is malloc'd. */
int ec2_request(const char *region, char *body, aws_request *req, char **url, ib_error *err, const char *what);

/* ---- the reader ------------------------------------------------------------------------------
 * EC2 answers are <ROOT>...<LIST><item>...</item>...</LIST>[<nextToken/>]</ROOT>, the items at a
 * fixed path below the root ("spotPriceHistorySet/item", "reservationSet/item/instancesSet/item").
 * The reader calls on_item once per item with the text of each field, named by its path below the
 * item ("instanceId", "instanceState/name"), "" when absent; a field element given twice keeps the
 * last.  One list nested in an item (sub: "tagSet/item") calls on_sub per entry with that entry's
 * sub_fields, before the item's on_item.  Bounded: values of at most EC2_XML_VALUE_MAX-1 bytes (a
 * tag value is 256 characters, up to 1 KiB of UTF-8), nextToken 4 KiB, 32 levels and 512 bytes of
 * path; beyond any bound the answer is an error, never a truncation. */
#define EC2_XML_FIELDS 14
#define EC2_XML_VALUE_MAX 1024

typedef struct ec2_xml_spec {
    const char *root;                          /* expected root element */
    const char *item;                          /* path of each item below the root */
    const char *fields[EC2_XML_FIELDS];        /* NULL-terminated when fewer */
    int (*on_item)(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err);
    const char *sub;                           /* optional list inside an item */
    const char *sub_fields[2];
    int (*on_sub)(void *ctx, char sub[][EC2_XML_VALUE_MAX], ib_error *err);
    const char *what;                          /* "EC2 DescribeSpotPriceHistory": error messages */
} ec2_xml_spec;

/* Parses a whole answer; *next (malloc'd) gets nextToken when next is given and one is present.
 * A document whose root is not spec->root is an error. */
int ec2_xml_parse(const ec2_xml_spec *spec, void *ctx, const char *xml, size_t len, char **next, ib_error *err);

#endif
