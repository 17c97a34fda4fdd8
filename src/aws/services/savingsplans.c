/* savingsplans: DescribeSavingsPlansOfferingRates, what a Savings Plan charges per instance-hour.
 *
 * Protocol: REST-JSON, POST /DescribeSavingsPlansOfferingRates to https://savingsplans.amazonaws.com
 * (one global endpoint, signed for "savingsplans" in us-east-1) or AWS_ENDPOINT_URL[_SAVINGSPLANS],
 * Content-Type application/json, body
 *   {"savingsPlanTypes": [PLAN], "savingsPlanPaymentOptions": [PAYMENT], "products": ["EC2"],
 *    "serviceCodes": ["AmazonEC2"], "operations": ["RunInstances"],
 *    "filters": [{"name": "instanceType", "values": [TYPE]}, {"name": "region", "values": [REGION]},
 *                {"name": "tenancy", "values": ["shared"]},
 *                {"name": "productDescription", "values": ["Linux/UNIX"]}],
 *    "maxResults": 1000[, "nextToken": ...]}
 * (SageMaker: products ["SageMaker"], serviceCodes ["AmazonSageMaker"], no operation, tenancy or
 * product description).  Answer: {"searchResults": [{"savingsPlanOffering": {"offeringId",
 * "paymentOption", "planType", "durationSeconds", "currency"}, "rate": "12.5", "unit": "Hrs",
 * "usageType": "USE1-BoxUsage:p5.48xlarge", "operation": "RunInstances", "properties": [{"name",
 * "value"}...]}...], "nextToken": ...}.  The rates API has no term filter, so both terms come back;
 * only the asked one is kept, and only what the filters asked for (Linux on shared hosts, the
 * type and region asked, USD per hour): a rate for anything else is a distractor, not an error. */
#include "instbench/aws_services.h"
#include "instbench/aws_values.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SP_WHAT "Savings Plans DescribeSavingsPlansOfferingRates"
/* The most one answer may be: over 10 times AWS's largest, 1,000 rates (maxResults) of about 600
 * bytes each, so that a hostile endpoint holds (requests in flight) x this, not 64 MiB each. */
#define SP_MAX_PAGE ((size_t)8 << 20)

static const aws_header sp_headers[] = {{"Content-Type", "application/json"}};

static int is_sagemaker(const sp_query *q) { return !strcmp(q->plan_type, "SageMaker"); }

static cJSON *one_of(const char *v)
{
    cJSON *a = cJSON_CreateArray();
    if (a && !cJSON_AddItemToArray(a, cJSON_CreateString(v))) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

static int add_filter(cJSON *filters, const char *name, const char *value)
{
    cJSON *f = cJSON_CreateObject();
    if (!f || !cJSON_AddStringToObject(f, "name", name) || !cJSON_AddItemToObject(f, "values", one_of(value)) ||
        !cJSON_AddItemToArray(filters, f)) {
        cJSON_Delete(f);
        return -1;
    }
    return 0;
}

char *aws_savingsplans_request_body(const sp_query *q, const char *token)
{
    int sm = is_sagemaker(q);
    cJSON *o = cJSON_CreateObject(), *filters = cJSON_CreateArray();
    int bad =
        !o || !filters || !cJSON_AddItemToObject(o, "savingsPlanTypes", one_of(q->plan_type)) ||
        !cJSON_AddItemToObject(o, "savingsPlanPaymentOptions", one_of(q->payment)) ||
        !cJSON_AddItemToObject(o, "products", one_of(sm ? "SageMaker" : "EC2")) ||
        !cJSON_AddItemToObject(o, "serviceCodes", one_of(sm ? "AmazonSageMaker" : "AmazonEC2")) ||
        (!sm && !cJSON_AddItemToObject(o, "operations", one_of("RunInstances"))) ||
        add_filter(filters, "instanceType", q->instance_type) || add_filter(filters, "region", q->region) ||
        (!sm && (add_filter(filters, "tenancy", "shared") || add_filter(filters, "productDescription", "Linux/UNIX")));
    if (!bad) {
        bad = !cJSON_AddItemToObject(o, "filters", filters);
        filters = NULL;
    }
    bad = bad || !cJSON_AddNumberToObject(o, "maxResults", 1000) ||
          (token && !cJSON_AddStringToObject(o, "nextToken", token));
    char *body = bad ? NULL : cJSON_PrintUnformatted(o);
    cJSON_Delete(filters);
    cJSON_Delete(o);
    return body;
}

static const char *str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

static const char *property(const cJSON *props, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, props) if (!strcmp(str(p, "name"), name)) return str(p, "value");
    return NULL;
}

/* One search result: 1 kept, 0 not what was asked, -1 malformed (err). */
static int take(sp_query *q, const cJSON *r, ib_error *err)
{
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(r, "savingsPlanOffering");
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(r, "properties");
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(off, "durationSeconds");
    if (!cJSON_IsObject(off) || !cJSON_IsNumber(dur) || (props && !cJSON_IsArray(props)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: a result without savingsPlanOffering.durationSeconds", SP_WHAT);
    const char *type = property(props, "instanceType"), *region = property(props, "region");
    const char *tenancy = property(props, "tenancy"), *desc = property(props, "productDescription");
    const char *usage = str(r, "usageType");
    if (strcmp(str(off, "planType"), q->plan_type) || strcmp(str(off, "paymentOption"), q->payment) ||
        dur->valuedouble != (double)q->duration_s || !type || strcmp(type, q->instance_type) || !region ||
        strcmp(region, q->region))
        return 0;
    if (is_sagemaker(q) ? !strstr(usage, "Train")
                        : (strcmp(str(r, "operation"), "RunInstances") || !strstr(usage, "BoxUsage:") ||
                           (tenancy && strcmp(tenancy, "shared")) || (desc && strcmp(desc, "Linux/UNIX"))))
        return 0;
    const char *currency = str(off, "currency"), *unit = str(r, "unit"), *rate = str(r, "rate");
    if (strcmp(currency, "USD") || strcmp(unit, "Hrs"))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: a rate for %s in %.8s per %.8s, not USD per hour", SP_WHAT,
                            q->instance_type, currency, unit);
    /* a plain decimal (AWS writes "12.5"; "0x1", " 100" or "1e-300" is no rate it sends), within what
     * any instance-hour costs (rank's own floor and ceiling) */
    double v;
    if (util_aws_decimal(rate, 1e-6, 2000, &v) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: implausible rate \"%.40s\" for %s", SP_WHAT, rate,
                            q->instance_type);
    if (q->n == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 4;
        if (nc > 4096) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: more than 4096 matching rates", SP_WHAT);
        sp_rate *nr = realloc(q->rates, nc * sizeof *nr);
        if (!nr) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", SP_WHAT);
        q->rates = nr;
        q->cap = nc;
    }
    sp_rate *out = &q->rates[q->n++];
    memset(out, 0, sizeof *out);
    out->usd_per_hour = v;
    out->duration_s = q->duration_s;
    snprintf(out->offering_id, sizeof out->offering_id, "%s", str(off, "offeringId"));
    snprintf(out->usage_type, sizeof out->usage_type, "%s", usage);
    return 1;
}

int aws_savingsplans_parse_page(const char *body, size_t len, sp_query *q, char **next, ib_error *err)
{
    *next = NULL;
    cJSON *j = cJSON_ParseWithLength(body, len);
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(j, "searchResults");
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(j, "nextToken");
    int rc = 0;
    if (!cJSON_IsObject(j) || !cJSON_IsArray(results)) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: the answer is not JSON with searchResults", SP_WHAT);
    } else {
        const cJSON *r;
        cJSON_ArrayForEach(r, results) if (take(q, r, err) < 0)
        {
            rc = -1;
            break;
        }
    }
    const char *t = cJSON_GetStringValue(tok);
    if (!rc && t && t[0]) {
        if (strlen(t) > 4096) rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: nextToken longer than 4 KiB", SP_WHAT);
        else if (!(*next = strdup(t))) rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", SP_WHAT);
    }
    cJSON_Delete(j);
    return rc;
}

static int sp_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body, ib_error *err)
{
    sp_query *q = &((sp_query *)ctx)[i];
    char ep[512];
    int over = aws_endpoint_override("SAVINGSPLANS", ep, sizeof ep);
    char why[200];
    if (over < 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: no endpoint: %s", SP_WHAT,
                            aws_endpoint_problem("SAVINGSPLANS", "us-east-1", sizeof ep, why, sizeof why));
    if (!over) snprintf(ep, sizeof ep, "https://savingsplans.amazonaws.com");
    size_t n = strlen(ep) + 40;
    if (!(*url = malloc(n)) || !(*body = aws_savingsplans_request_body(q, token)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", SP_WHAT);
    snprintf(*url, n, "%s/DescribeSavingsPlansOfferingRates", ep);
    memset(req, 0, sizeof *req);
    req->method = "POST";
    req->service = "savingsplans";
    req->region = "us-east-1";
    req->url = *url;
    req->headers = sp_headers;
    req->n_headers = 1;
    req->body = *body;
    req->body_len = strlen(*body);
    return 0;
}

static int sp_parse(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err)
{
    return aws_savingsplans_parse_page(body, len, &((sp_query *)ctx)[i], next, err);
}

int aws_savingsplans_pager(sp_query *qs, aws_pager *out, ib_error *err)
{
    (void)err;
    aws_pager p = {.ctx = qs, .what = SP_WHAT, .build = sp_build, .parse = sp_parse, .max_body = SP_MAX_PAGE};
    *out = p;
    return 0;
}

void sp_query_free(sp_query *q)
{
    free(q->rates);
    q->rates = NULL;
    q->n = q->cap = 0;
}
