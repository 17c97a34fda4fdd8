/* ListObjectsV2's <Size> is S3's decimal byte count: one page holding one object is parsed with
 * each size a hostile or broken server might send.  Sizes S3 writes are kept exactly (up to
 * LLONG_MAX); a sign, whitespace, another base or an overflow is refused with a message naming
 * the object and the size, which ends the listing (as an object without a key does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "instbench/aws_services.h"

static int parse(const char *size, aws_s3_listing *l, ib_error *err)
{
    char xml[512], *next = NULL;
    snprintf(xml, sizeof xml,
             "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
             "<Contents><Key>ok.json</Key><Size>1</Size></Contents>"
             "<Contents><Key>run%%201.json</Key><Size>%s</Size></Contents></ListBucketResult>",
             size);
    memset(l, 0, sizeof *l);
    memset(err, 0, sizeof *err);
    int rc = aws_s3_parse_list_page(xml, strlen(xml), l, &next, err);
    free(next);
    return rc;
}

int main(void)
{
    static const struct {
        const char *text;
        long long value;
    } good[] = {{"0", 0},
                {"5", 5},
                {"0005", 5},
                {"5497558138880", 5497558138880LL},
                {"9223372036854775807", 9223372036854775807LL}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        aws_s3_listing l;
        ib_error err;
        int rc = parse(good[i].text, &l, &err);
        CHECK(rc == 0 && l.n == 2 && l.objs[1].size == good[i].value && !strcmp(l.objs[1].key, "run 1.json"),
              "size '%s': rc %d, %zu objects: %s", good[i].text, rc, l.n, err.msg);
        aws_s3_listing_free(&l);
    }
    static const char *const bad[] = {"+5",
                                      " 5",
                                      "5 ",
                                      "\t5",
                                      "-5",
                                      "-0",
                                      "0x10",
                                      "5e3",
                                      "5.0",
                                      "",
                                      "9223372036854775808",
                                      "18446744073709551621",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        aws_s3_listing l;
        ib_error err;
        int rc = parse(bad[i], &l, &err);
        CHECK(rc != 0 && err.code == IB_EXIT_RUNTIME, "size '%s': taken (rc %d, %zu objects)", bad[i], rc, l.n);
        char want[80];
        snprintf(want, sizeof want, "size '%s' is not a byte count", bad[i][0] == '\t' ? "\\x095" : bad[i]);
        CHECK(strstr(err.msg, "run%201.json") && strstr(err.msg, want), "size '%s': message: %s", bad[i], err.msg);
        aws_s3_listing_free(&l);
    }
    return failures != 0;
}
