/* libFuzzer target: the S3 ListObjectsV2 parser (aws/services/s3.c, expat), over pages appended to
 * one listing as a paginated read does.  No input may crash, leak or overflow; every object kept
 * has a key (1..1024 bytes once url-decoded) and a size >= 0; a continuation token is returned
 * only for a page that says it is truncated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws_services.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    aws_s3_listing l = {0};
    for (int page = 0; page < 2; page++) {
        char *next = NULL;
        ib_error err = {0};
        if (aws_s3_parse_list_page((const char *)data, size, &l, &next, &err) == 0 && next) (void)strlen(next);
        free(next);
    }
    for (size_t i = 0; i < l.n; i++)
        if (!l.objs[i].key || strlen(l.objs[i].key) > 3 * 1024 || l.objs[i].size < 0) abort();
    aws_s3_listing_free(&l);
    return 0;
}
