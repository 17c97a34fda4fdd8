/* cmd/presign: `instbench presign s3://BUCKET/KEY` prints a presigned S3 URL: a GET to hand out a
 * result, or a PUT that lets a machine without credentials deliver one (what the launch-and-measure
 * sweep gives its instances).  Nothing is sent: the URL is computed from the credentials and the
 * region alone (src/aws/services/s3.c, SigV4 query signing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/aws.h"
#include "instbench/aws_services.h"
#include "instbench/prices.h"

#define PRESIGN_MAX_S 604800L /* S3's limit for SigV4 presigned URLs: 7 days */

static struct {
    int method;
    long expires_s;
    const char *region;
} O = {.expires_s = 3600};

enum { METHOD_GET, METHOD_PUT };
static const char *const methods[] = {"GET", "PUT", NULL};

/* "90", "90s", "30m", "6h", "7d": whole seconds, 1 s to 7 days. */
static int parse_expires(void *dst, const char *flag, const char *value, ib_error *err)
{
    /* a plain decimal, then the unit: strtod alone would take "+90", "0x5A" and " 90" */
    char *end = (char *)value + util_decimal_prefix(value);
    double v = end != value ? strtod(value, NULL) : 0;
    double unit = 1;
    if (end && *end && !end[1]) {
        switch (*end) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: end = NULL;
        }
        if (end) end++;
    }
    if (!end || end == value || *end || !(v == v) || v * unit < 1 || v * unit > PRESIGN_MAX_S ||
        v * unit != (double)(long)(v * unit))
        return ib_error_set(err, IB_EXIT_USAGE,
                            "%s: '%s' is not a duration from 1 s to 7 days (604800 s), like 90, 30m, 6h or 7d", flag,
                            value);
    *(long *)dst = (long)(v * unit);
    return 0;
}

static const arg_spec presign_args[] = {
    {"--method", 0, ARG_CHOICE, &O.method, NULL, "GET (default: download) or PUT (upload, e.g. curl -T FILE URL)",
     .choices = methods},
    {"--expires", 0, ARG_FN, &O.expires_s, "DURATION",
     "how long the URL works: 90 (seconds), 30m, 6h, 7d; 1 s to\n"
     "7 days (default 1h).  A URL made with temporary credentials (a session\n"
     "token: SSO, an assumed role, an instance role) stops working when they\n"
     "expire, whatever --expires says; instbench warns when it knows that is sooner",
     .fn = parse_expires},
    {"--region", 0, ARG_STRING, &O.region, "R",
     "the bucket's region (default: AWS_REGION, the profile's region, IMDS);\n"
     "nothing is sent to look it up",
     .check = names_region_problem},
    {0},
};

const arg_command cmd_presign_args = {
    "presign",
    "s3://BUCKET/KEY [--method GET|PUT] [--expires DURATION] [--region R]",
    "Prints a presigned URL for one S3 object: anyone holding it may GET (download) or PUT\n"
    "(upload) that object until it expires, without AWS credentials of their own.  Computed\n"
    "locally from your credentials (SigV4 query signing, UNSIGNED-PAYLOAD); nothing is sent.\n"
    "Virtual-hosted style (https://BUCKET.s3.REGION.amazonaws.com/KEY) unless AWS_ENDPOINT_URL_S3 /\n"
    "AWS_ENDPOINT_URL names another endpoint, the profile says `s3 = addressing_style = path`, or\n"
    "the bucket name has dots: then path style.",
    "environment: AWS credentials and region as for `prices` (AWS_ACCESS_KEY_ID, AWS_PROFILE,\n"
    "AWS_REGION, ...), AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL.\n"
    "\n"
    "exit status: 0 the URL is printed; 1 no credentials, or no region (no --region, and none from\n"
    "AWS_REGION, AWS_DEFAULT_REGION, the profile or instance metadata); 2 bad input (no bucket, an\n"
    "invalid bucket name, no key, a region instbench does not know (--region's or theirs), --expires\n"
    "out of range).\n",
    presign_args,
    "s3://BUCKET/KEY",
    .examples =
        (const arg_example[]){
            {"an upload URL for one result in a us-east-1 bucket, valid 6 hours (the machine holding it runs "
             "curl -T FILE URL)",
             "instbench presign s3://my-results/sweep-1/g5.xlarge.json --method PUT --expires 6h --region us-east-1"},
            {"a download link for a colleague, valid 7 days, signed for the region AWS_REGION or the profile names "
             "(none: exit 1; give --region when the bucket lives in another)",
             "instbench presign s3://my-results/sweep-1/rank.csv --expires 7d"},
            {0}},
};

/* Temporary credentials end the URL's life with theirs: say so, with the time when it is known. */
static void warn_temporary(const aws_credentials *cred, time_t now, long expires_s)
{
    if (!cred->session_token[0]) return;
    if (cred->expiration > 0 && cred->expiration < now + expires_s) {
        char when[32];
        struct tm tm;
        gmtime_r(&cred->expiration, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
        ib_warn("the credentials (%s) are temporary and expire at %s, in %ld min: the URL stops working then, "
                "not after --expires",
                cred->source, when, (long)(cred->expiration - now) / 60);
    } else if (cred->expiration <= 0) {
        ib_warn("the credentials (%s) are temporary (a session token): the URL stops working when they expire, "
                "whatever --expires says",
                cred->source);
    }
}

int cmd_presign(int argc, char **argv)
{
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int npos = 0;
    if (!pos) return IB_EXIT_RUNTIME;
    int rc = args_parse(&cmd_presign_args, argc, argv, pos, &npos);
    if (rc != 0) {
        free(pos);
        return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    }
    char dym[128];
    if (O.region && !aws_region_known(O.region) && !prices_catalogue_has_region(O.region)) {
        free(pos);
        return args_usage_error(&cmd_presign_args, "--region: '%s' is not an AWS region instbench knows%s", O.region,
                                args_did_you_mean(prices_suggest_region(O.region), dym, sizeof dym));
    }
    if (npos != 1) {
        free(pos);
        return args_usage_error(&cmd_presign_args, "one s3://BUCKET/KEY is needed (got %d)", npos);
    }
    char bucket[64], *key = NULL;
    ib_error err = {0};
    if (aws_s3_parse_uri(pos[0], bucket, &key, &err) != 0) {
        free(pos);
        return args_usage_error(&cmd_presign_args, "%s", err.msg);
    }
    if (!key[0]) {
        rc = args_usage_error(&cmd_presign_args, "'%s' names no object: s3://BUCKET/KEY", pos[0]);
        free(key);
        free(pos);
        return rc;
    }
    free(pos);

    aws_credentials cred;
    char region[32];
    aws_client *client = NULL;
    aws_s3 *s3 = NULL;
    char *url = NULL;
    rc = IB_EXIT_RUNTIME;
    if (aws_credentials_resolve(&cred, &err) != 0) goto fail;
    if (O.region) snprintf(region, sizeof region, "%s", O.region);
    else {
        char from[4200]; /* where the region came from: what a message about its value names */
        int rr = aws_region_resolve_from(region, from, sizeof from, &err);
        if (rr < 0 && err.code == IB_EXIT_USAGE) { /* configured, but not shaped like a region */
            rc = args_usage_error(&cmd_presign_args, "%s: fix it or give --region", err.msg);
            goto out;
        }
        if (rr != 0) {
            /* where it looked says why; the flag says what to do (a URL is signed for one region) */
            fprintf(stderr,
                    "instbench presign: %s; give the bucket's region with --region REGION (e.g. --region "
                    "us-east-1)\n",
                    err.msg);
            rc = err.code ? err.code : IB_EXIT_RUNTIME;
            goto out;
        }
        /* the same check as --region's, whichever source named it: a URL signed for a region that
         * does not exist works nowhere */
        if (!aws_region_known(region) && !prices_catalogue_has_region(region)) {
            rc = args_usage_error(&cmd_presign_args,
                                  "%s: '%s' is not an AWS region instbench knows (fix it or give "
                                  "--region)%s",
                                  from, region, args_did_you_mean(prices_suggest_region(region), dym, sizeof dym));
            goto out;
        }
    }
    if (aws_client_create(NULL, &cred, &client, &err) != 0 || aws_s3_open(client, region, &s3, &err) != 0) goto fail;
    time_t now = time(NULL);
    if (aws_s3_presign(s3, &cred, methods[O.method], bucket, key, O.expires_s, now, &url, &err) != 0) goto fail;
    warn_temporary(&cred, now, O.expires_s);
    printf("%s\n", url);
    rc = IB_EXIT_OK;
    goto out;
fail:
    fprintf(stderr, "instbench presign: %s\n", err.msg);
    rc = err.code ? err.code : IB_EXIT_RUNTIME;
out:
    memset(&cred, 0, sizeof cred);
    free(url);
    free(key);
    aws_s3_close(s3);
    aws_client_destroy(client);
    return rc;
}
