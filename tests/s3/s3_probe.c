/* A driver for src/aws/services/s3.c, used by the S3 tests (moto, the fake AWS, botocore).
 * Credentials, region and endpoint come from the environment as for instbench itself.
 *   s3_probe [-v] COMMAND ...
 *     presign METHOD BUCKET KEY EXPIRES_S WHEN   the presigned URL of s3://BUCKET/KEY at time WHEN (Unix
 *                                                seconds); the URI checked as `presign` checks it
 *     put BUCKET KEY FILE                        PutObject with FILE's bytes
 *     put-many BUCKET PREFIX N                   N small objects PREFIX00000.json ... (one each)
 *     get BUCKET KEY MAX_BYTES                   GetObject; the body on stdout
 *     list BUCKET PREFIX PAGE_SIZE MAX_PAGES     ListObjectsV2; JSON {"pages", "keys": [...]}
 *     region BUCKET                              HeadBucket; the bucket's region
 *     twice-get BUCKET KEY                       two GetObjects (a learnt region is kept)
 * Exit 0 when it succeeded, else the error's code (message on stderr, one line). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws.h"
#include "instbench/aws_services.h"

static int die(const ib_error *e)
{
    fprintf(stderr, "s3_probe: %s\n", e->msg);
    return e->code ? e->code : 1;
}

int main(int argc, char **argv)
{
    int a = 1;
    if (a < argc && !strcmp(argv[a], "-v")) {
        ib_log_level = 2;
        a++;
    }
    if (a >= argc) return 2;
    const char *cmd = argv[a++];
    ib_error err = {0};
    aws_credentials cred;
    char region[32], from[4200];
    if (aws_credentials_resolve(&cred, &err) != 0) return die(&err);
    if (aws_region_resolve_from(region, from, sizeof from, &err) != 0) return die(&err);
    aws_client *c = NULL;
    aws_client_options opt = {.refresh = aws_credentials_refresh};
    if (aws_client_create(&opt, &cred, &c, &err) != 0) return die(&err);
    aws_s3 *s = NULL;
    if (aws_s3_open(c, region, &s, &err) != 0) return die(&err);
    aws_s3_set_region_var(s, !strcmp(from, "AWS_DEFAULT_REGION") ? from : "AWS_REGION"); /* as aws_s3_connect */
    int rc = 0;
    if (!strcmp(cmd, "presign") && argc - a == 5) {
        char *url = NULL, *uri = malloc(strlen(argv[a + 1]) + strlen(argv[a + 2]) + 7), bucket[64], *key = NULL;
        if (!uri) return 1;
        sprintf(uri, "s3://%s/%s", argv[a + 1], argv[a + 2]);
        rc = aws_s3_parse_uri(uri, bucket, &key, &err);
        if (rc == 0)
            rc = aws_s3_presign(s, &cred, argv[a], bucket, key, atol(argv[a + 3]), (time_t)atoll(argv[a + 4]), &url,
                                &err);
        if (rc == 0) printf("%s\n", url);
        free(url);
        free(key);
        free(uri);
    } else if (!strcmp(cmd, "put") && argc - a == 3) {
        char *data = NULL;
        size_t len = 0;
        rc = util_read_file(argv[a + 2], (size_t)1 << 30, &data, &len, &err);
        if (rc == 0) rc = aws_s3_put_object(s, argv[a], argv[a + 1], data, len, "application/json", &err);
        free(data);
    } else if (!strcmp(cmd, "put-many") && argc - a == 3) {
        for (long i = 0; rc == 0 && i < atol(argv[a + 2]); i++) {
            char key[512], body[64];
            snprintf(key, sizeof key, "%s%05ld.json", argv[a + 1], i);
            snprintf(body, sizeof body, "{\"i\": %ld}", i);
            rc = aws_s3_put_object(s, argv[a], key, body, strlen(body), "application/json", &err);
        }
    } else if (!strcmp(cmd, "get") && argc - a == 3) {
        char *body = NULL;
        size_t len = 0;
        rc = aws_s3_get_object(s, argv[a], argv[a + 1], (size_t)atoll(argv[a + 2]), &body, &len, &err);
        if (rc == 0) fwrite(body, 1, len, stdout);
        free(body);
    } else if (!strcmp(cmd, "twice-get") && argc - a == 2) {
        for (int i = 0; rc == 0 && i < 2; i++) {
            char *body = NULL;
            size_t len = 0;
            rc = aws_s3_get_object(s, argv[a], argv[a + 1], 1 << 20, &body, &len, &err);
            if (rc == 0) fwrite(body, 1, len, stdout);
            free(body);
        }
    } else if (!strcmp(cmd, "list") && argc - a == 4) {
        aws_s3_listing l;
        rc = aws_s3_list_objects(s, argv[a], argv[a + 1], atoi(argv[a + 2]), atoi(argv[a + 3]), 0, &l, &err);
        if (rc == 0) {
            cJSON *j = cJSON_CreateObject(), *keys = cJSON_AddArrayToObject(j, "keys");
            cJSON_AddNumberToObject(j, "pages", l.pages);
            for (size_t i = 0; i < l.n; i++) cJSON_AddItemToArray(keys, cJSON_CreateString(l.objs[i].key));
            char *t = cJSON_PrintUnformatted(j);
            printf("%s\n", t);
            free(t);
            cJSON_Delete(j);
            aws_s3_listing_free(&l);
        }
    } else if (!strcmp(cmd, "region") && argc - a == 1) {
        char r[32];
        rc = aws_s3_bucket_region(s, argv[a], r, &err);
        if (rc == 0) printf("%s\n", r);
    } else {
        fprintf(stderr, "s3_probe: bad command\n");
        rc = -1;
        err.code = 2;
    }
    aws_s3_close(s);
    aws_client_destroy(c);
    return rc == 0 ? 0 : die(&err);
}
