/* s3_presign: presigned S3 URLs (GET or PUT), signed in the query (SigV4) for the bucket's region
 * and style as s3.c would send the request (s3_internal.h's s3_url).  Its own file to keep s3.c
 * under the 800-line limit. */
#include "instbench/aws_services.h"
#include "s3_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int aws_s3_presign(aws_s3 *s, const aws_credentials *cred, const char *method, const char *bucket, const char *key,
                   long expires_s, time_t when, char **url, ib_error *err)
{
    *url = NULL;
    if (strcmp(method, "GET") && strcmp(method, "PUT"))
        return ib_error_set(err, IB_EXIT_USAGE, "a presigned URL is for GET or PUT, not '%s'", method);
    const char *region = s3_bucket_region(s, bucket);
    char host[1200], *base = NULL, *query = NULL;
    if (s3_url(s, bucket, key, region, NULL, &base, host, sizeof host, err) != 0) return -1;
    const char *path = strstr(base, "://") + 3;
    path += strcspn(path, "/");
    aws_presign_input in = {.method = method,
                            .host = host,
                            .path = path,
                            .service = "s3",
                            .region = region,
                            .when = when,
                            .expires_s = expires_s};
    if (aws_sigv4_presign(&in, cred, &query, err) != 0) {
        free(base);
        return -1;
    }
    size_t n = strlen(base) + strlen(query) + 2;
    *url = malloc(n);
    if (*url) snprintf(*url, n, "%s?%s", base, query);
    free(base);
    free(query);
    return *url ? 0 : ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
}
