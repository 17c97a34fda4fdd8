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
 * sub_fields, before the item's on_item; a sub field whose path ends "/item" is itself a list of
 * strings ("interfaceTypeSet/item"), its entries joined by single spaces (EC2's enum values have
 * none).  An empty item path makes the root the one item (a flat
 * answer: CreateSecurityGroupResponse/groupId).  Bounded: values of at most EC2_XML_VALUE_MAX-1 bytes (a
 * tag value is 256 characters, up to 1 KiB of UTF-8), nextToken 4 KiB, 32 levels and 512 bytes of
 * path; beyond any bound the answer is an error, never a truncation. */
#define EC2_XML_FIELDS 14
#define EC2_XML_VALUE_MAX 1024

typedef struct ec2_xml_spec {
    const char *root;                   /* expected root element */
    const char *item;                   /* path of each item below the root */
    const char *fields[EC2_XML_FIELDS]; /* NULL-terminated when fewer */
    int (*on_item)(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err);
    const char *sub; /* optional list inside an item */
    const char *sub_fields[3];
    int (*on_sub)(void *ctx, char sub[][EC2_XML_VALUE_MAX], ib_error *err);
    const char *what; /* "EC2 DescribeSpotPriceHistory": error messages */
} ec2_xml_spec;

/* Parses a whole answer; *next (malloc'd) gets nextToken when next is given and one is present.
 * A document whose root is not spec->root is an error. */
int ec2_xml_parse(const ec2_xml_spec *spec, void *ctx, const char *xml, size_t len, char **next, ib_error *err);


/* ---- request forms (ec2_form.c) --------------------------------------------------------------- */
typedef struct ec2_form {
    char *s;
    size_t len, cap;
    int bad; /* out of memory: reported once, at the end */
} ec2_form;
/* A form with Action=NAME and the API version. */
ec2_form ec2_action(const char *name);
void ec2_add(ec2_form *f, const char *name, const char *value);
/* A parameter whose name is formatted ("TagSpecification.1.Tag.3.Key"). */
void ec2_addf(ec2_form *f, const char *value, const char *name_fmt, ...);
/* Filter.N.Name = NAME, Filter.N.Value.1 = VALUE. */
void ec2_filter(ec2_form *f, int n, const char *name, const char *value);
/* TagSpecification.N for RESOURCE_TYPE with TAGS. */
void ec2_tag_spec(ec2_form *f, int n, const char *resource_type, const ec2_tag *tags, size_t n_tags);
/* One request, sent.  0: resp holds the answer; -1: err says why and aws_code (when given) gets
 * AWS's error code ("" for a transport failure).  Takes f's body. */
int ec2_call(aws_client *c, const char *region, const char *what, ec2_form *f, aws_response *resp, char aws_code[64],
             ib_error *err);
/* Every page of N queries (bodies[i]: the form without NextToken), each page read by SPEC into
 * out.  The first failure's message goes to err. */
int ec2_describe_all(aws_client *c, const char *region, char *const *bodies, size_t n, const ec2_xml_spec *spec,
                     void *out, ib_error *err);
/* One request whose answer is not read.  0: EC2 took it, or answered a code of DONE (NULL-terminated,
 * may be NULL: the codes that mean "already so", InvalidGroup.NotFound for a delete); -1: err says
 * why and code (may be NULL) gets AWS's code ("" for a transport failure).  Takes f's body. */
int ec2_send(aws_client *c, const char *region, const char *what, ec2_form *f, const char *const *done, char code[64],
             ib_error *err);
/* ACTION with N filters (FILTERS: name, value pairs as Filter.1..N), every page read by SPEC into out. */
int ec2_describe_where(aws_client *c, const char *region, const char *action, const char *const *filters, size_t n,
                       const ec2_xml_spec *spec, void *out, ib_error *err);
/* ACTION of what carries the tag TAG_KEY = TAG_VALUE (Filter tag:KEY; "*" matches any value). */
int ec2_describe_tagged(aws_client *c, const char *region, const char *action, const char *tag_key,
                        const char *tag_value, const ec2_xml_spec *spec, void *out, ib_error *err);
/* A form's text for ec2_describe_all, or NULL (out of memory; the form is freed). */
char *ec2_form_text(ec2_form *f);
/* SRC into DST (cap bytes) with control characters as '?': the text is the server's.  Longer than
 * cap-1: an error naming FIELD. */
int ec2_put(char *dst, size_t cap, const char *src, const char *what, const char *field, ib_error *err);

/* s3_list_page.c: S3's own limit on a key's length, in bytes; and appends KEY (malloc'd; L owns
 * it from here, also on failure) to a listing: 0, or -1 out of memory. */
#define S3_MAX_KEY 1024
int s3_listing_push(aws_s3_listing *l, char *key, long long size);

#endif
