/* ssm: GetParameter, for the public parameters that name the current AMIs
 * (/aws/service/deeplearning/..., /aws/service/canonical/...).
 *
 * Protocol: AWS JSON 1.1, POST / to https://ssm.REGION.amazonaws.com (or AWS_ENDPOINT_URL[_SSM]),
 * X-Amz-Target: AmazonSSM.GetParameter, body {"Name": NAME}, signed for "ssm" in REGION.
 * Answer: {"Parameter": {"Name": ..., "Type": "String", "Value": "ami-0abc...", "Version": 12,
 * "LastModifiedDate": 1.7e9, "ARN": ..., "DataType": "aws:ec2:image"}}; an unknown name is
 * HTTP 400 {"__type": "ParameterNotFound"}. */
#include "instbench/aws_services.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A parameter's value is at most 4 KiB (8 KiB advanced); the answer carries it plus metadata. */
#define SSM_MAX_BODY (64 * 1024)

static const aws_header ssm_headers[] = {
    {"Content-Type", "application/x-amz-json-1.1"},
    {"X-Amz-Target", "AmazonSSM.GetParameter"},
};

/* The value inside an answer; -1 (err) when the answer is not GetParameter's shape. */
static int parse_value(const char *body, size_t len, const char *name, char *value, size_t value_len, ib_error *err)
{
    cJSON *j = cJSON_ParseWithLength(body, len);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "Parameter");
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "Value"));
    int rc = 0;
    if (!v || !v[0])
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "SSM GetParameter %s: answer without Parameter.Value", name);
    else if (strlen(v) >= value_len)
        rc =
            ib_error_set(err, IB_EXIT_RUNTIME, "SSM GetParameter %s: value longer than %zu bytes", name, value_len - 1);
    else memcpy(value, v, strlen(v) + 1);
    cJSON_Delete(j);
    return rc;
}

int aws_ssm_get_parameter(aws_client *c, const char *region, const char *name, char *value, size_t value_len,
                          ib_error *err)
{
    char ep[512], url[520];
    char why[200];
    if (aws_endpoint_url("SSM", region, ep, sizeof ep) != 0 || !ep[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "SSM GetParameter: no endpoint for region %s: %s", region,
                            aws_endpoint_problem("SSM", region, sizeof ep, why, sizeof why));
    snprintf(url, sizeof url, "%s%s", ep, ep[strlen(ep) - 1] == '/' ? "" : "/");
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "Name", name)) {
        cJSON_Delete(o);
        return ib_error_set(err, IB_EXIT_RUNTIME, "SSM GetParameter: out of memory");
    }
    char *body = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!body) return ib_error_set(err, IB_EXIT_RUNTIME, "SSM GetParameter: out of memory");
    aws_request req = {.method = "POST",
                       .service = "ssm",
                       .region = region,
                       .url = url,
                       .headers = ssm_headers,
                       .n_headers = 2,
                       .body = body,
                       .body_len = strlen(body),
                       .max_body = SSM_MAX_BODY};
    aws_response resp;
    int rc = aws_client_send(c, &req, &resp, err);
    free(body);
    if (rc != 0) {
        if (!strcmp(resp.error_code, "ParameterNotFound")) {
            ib_error_set(err, IB_EXIT_RUNTIME, "SSM parameter %s does not exist in %s", name, region);
            rc = 1;
        } else {
            rc = -1;
        }
    } else {
        rc = parse_value(resp.body, resp.body_len, name, value, value_len, err);
    }
    aws_response_free(&resp);
    return rc;
}
