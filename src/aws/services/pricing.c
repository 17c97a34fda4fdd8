/* pricing: on-demand hourly prices from the AWS Price List Query API (GetProducts).
 *
 * Protocol: AWS JSON 1.1, POST / to https://api.pricing.us-east-1.amazonaws.com (or its
 * AWS_ENDPOINT_URL[_PRICING] override), X-Amz-Target: AWSPriceListService.GetProducts, signed for
 * service "pricing" in us-east-1.  Response: {"FormatVersion": "aws_v1", "NextToken": "...",
 * "PriceList": ["<a whole JSON document, as a string>", ...]}; each document is one product:
 * {"product": {"attributes": {...}}, "terms": {"OnDemand": {OFFER: {"priceDimensions":
 *   {DIM: {"unit": "Hrs", "pricePerUnit": {"USD": "1.0060000000"}}}}}, "Reserved": {...}}}.
 *
 * EC2 (service code AmazonEC2), TERM_MATCH filters: instanceType, regionCode,
 *   operatingSystem=Linux, tenancy=Shared, preInstalledSw=NA, capacitystatus=Used
 *   (capacitystatus "Used" is the price of a running instance, as opposed to the "UnusedCapacityReservation"
 *   and "AllocatedCapacityReservation" rows of the same SKU family).  Products whose attributes say
 *   marketoption other than OnDemand (capacity blocks) or an operation other than RunInstances
 *   (RunInstances is plain Linux/UNIX; suffixed operations are licensed variants) are skipped.
 *   Two products left after all of that at different prices are an ambiguity the answer cannot
 *   settle: the query fails naming both SKUs (so nothing is cached, and auto falls back to the
 *   cache or the snapshot) rather than taking whichever the server listed first.
 * SageMaker (service code AmazonSageMaker, types "ml.*"): products of productFamily "ML Instance"
 *   carry attributes instanceName ("ml.g5.xlarge"), regionCode and component ("Training",
 *   "Hosting", "Notebook", "Processing", ...; usagetype reads e.g. "USE1-Train:ml.g5.xlarge").
 *   Filters: instanceName, regionCode, component=Training -> the training job's per-instance
 *   hourly rate.  Verified (2026-11-25) against public code that queries this API: productFamily
 *   "ML Instance", the attributes instanceName and component, and component values "Hosting"
 *   (elC0mpa/aws-doctor PR #136, a test pinning instanceName/component/productFamily) and
 *   "Notebook" (vantage-sh/ec2instances.info PR #981).  The value "Training" and the usagetype
 *   form "USE1-Train:ml..." were not seen in such an example in that check: they follow AWS's
 *   bills ("Training Job" usage lines) and the Hosting/Notebook pattern, and are what the fake
 *   server's recorded-shape answers (tests/data/prices/get_products_sagemaker.json) assume.  A
 *   wrong value shows as "no price" for ml.* types, never as another component's price
 *   (product_matches checks the component).  SageMaker managed spot training publishes no hourly
 *   price: ml.* rows have no spot record (rank prices one at the user's --price TYPE:spot=USD).
 */
#include "instbench/aws_services.h"
#include "instbench/aws_values.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/instance_type.h"
#define PRICING_SIGNING_REGION "us-east-1"
#define MAX_SANE_USD_PER_HOUR 2000.0
/* The most one answer may be, so that a hostile endpoint holds (requests in flight: 64) x this, not
 * 64 MiB each: over twice a page of 100 products (MaxResults) of 16 KB, an EC2 product with every
 * Reserved offer (about 12 KB as a PriceList string); the filters leave a few products, tens of KB. */
#define PRICING_MAX_PAGE ((size_t)4 << 20)
/* The most products an honest answer to one query holds.  Public Terraform configurations ask for
 * one EC2 price with these same filters (location for regionCode) through aws_pricing_product,
 * which fails on more than one product: they leave one, and a type also sold as a Capacity Block
 * one more (marketoption CapacityBlock, which product_matches skips); SageMaker's three filters
 * (name, region, component Training) leave a few at most.  16 is over five times that, so a page
 * bound on it refuses no honest answer yet stops an endless one at --page-size 1 after 32 pages,
 * not 200. */
#define PRICING_MOST_PRODUCTS 16
/* Pages on top of those the products fill: room for pages an endpoint sends short or empty. */
#define PRICING_SPARE_PAGES 16

/* MaxResults as sent: GetProducts takes 1..100. */
static int pricing_page_size(int page_size) { return page_size > 0 && page_size <= 100 ? page_size : 100; }

static void add_filter(cJSON *filters, const char *field, const char *value)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "Type", "TERM_MATCH");
    cJSON_AddStringToObject(f, "Field", field);
    cJSON_AddStringToObject(f, "Value", value);
    cJSON_AddItemToArray(filters, f);
}

char *aws_pricing_request_body(const pricing_item *it, int page_size, const char *token)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON *filters;
    if (instance_type_is_sagemaker(it->instance_type)) {
        cJSON_AddStringToObject(o, "ServiceCode", "AmazonSageMaker");
        filters = cJSON_AddArrayToObject(o, "Filters");
        add_filter(filters, "instanceName", it->instance_type);
        add_filter(filters, "regionCode", it->region);
        add_filter(filters, "component", "Training");
    } else {
        cJSON_AddStringToObject(o, "ServiceCode", "AmazonEC2");
        filters = cJSON_AddArrayToObject(o, "Filters");
        add_filter(filters, "instanceType", it->instance_type);
        add_filter(filters, "regionCode", it->region);
        add_filter(filters, "operatingSystem", "Linux");
        add_filter(filters, "tenancy", "Shared");
        add_filter(filters, "preInstalledSw", "NA");
        add_filter(filters, "capacitystatus", "Used");
    }
    cJSON_AddStringToObject(o, "FormatVersion", "aws_v1");
    cJSON_AddNumberToObject(o, "MaxResults", pricing_page_size(page_size));
    if (token) cJSON_AddStringToObject(o, "NextToken", token);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static const char *attr(const cJSON *attrs, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(attrs, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Does this product describe what we asked for?  Filters did most of the work server-side; this
 * guards against a server (or a proxy) that ignores a filter. */
static int product_matches(const cJSON *attrs, const pricing_item *it)
{
    const char *region = attr(attrs, "regionCode");
    if (region && strcmp(region, it->region) != 0) return 0;
    if (instance_type_is_sagemaker(it->instance_type)) {
        const char *name = attr(attrs, "instanceName"), *comp = attr(attrs, "component");
        if (!name || strcmp(name, it->instance_type) != 0) return 0;
        return !comp || !strcmp(comp, "Training");
    }
    const char *type = attr(attrs, "instanceType");
    if (!type || strcmp(type, it->instance_type) != 0) return 0;
    const char *os = attr(attrs, "operatingSystem"), *ten = attr(attrs, "tenancy");
    const char *sw = attr(attrs, "preInstalledSw"), *cap = attr(attrs, "capacitystatus");
    const char *mkt = attr(attrs, "marketoption"), *op = attr(attrs, "operation");
    if ((os && strcmp(os, "Linux")) || (ten && strcmp(ten, "Shared")) || (sw && strcmp(sw, "NA")) ||
        (cap && strcmp(cap, "Used")))
        return 0;
    if (mkt && strcmp(mkt, "OnDemand") != 0) return 0;
    return !op || !strcmp(op, "RunInstances");
}

/* The hourly USD price in terms.OnDemand, or NAN (*zero set when an hourly price of $0 was all
 * there was).  Returns -1 on a malformed price string. */
static int on_demand_hourly(const cJSON *doc, double *out, int *zero, ib_error *err)
{
    *out = NAN;
    *zero = 0;
    const cJSON *terms = cJSON_GetObjectItemCaseSensitive(doc, "terms");
    const cJSON *od = cJSON_GetObjectItemCaseSensitive(terms, "OnDemand");
    const cJSON *offer;
    cJSON_ArrayForEach(offer, od)
    {
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(offer, "priceDimensions");
        const cJSON *dim;
        cJSON_ArrayForEach(dim, dims)
        {
            const cJSON *unit = cJSON_GetObjectItemCaseSensitive(dim, "unit");
            if (!cJSON_IsString(unit) || strcmp(unit->valuestring, "Hrs") != 0) continue;
            const cJSON *ppu = cJSON_GetObjectItemCaseSensitive(dim, "pricePerUnit");
            const cJSON *usd = cJSON_GetObjectItemCaseSensitive(ppu, "USD");
            if (!cJSON_IsString(usd))
                return ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: hourly price without a USD string");
            /* a plain decimal ("3.0600000000"): hex, whitespace or an exponent is no price AWS lists */
            double v;
            if (util_aws_decimal(usd->valuestring, 0, MAX_SANE_USD_PER_HOUR, &v) != 0 || (v > 0 && v < 1e-6))
                return ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: implausible price \"%.40s\" USD/h",
                                    usd->valuestring);
            if (v > 0) { /* $0 rows exist for reservations' covered hours; they are not a price */
                *out = v;
                *zero = 0;
                return 0;
            }
            *zero = 1;
        }
    }
    return 0;
}

int aws_pricing_parse_page(const char *body, size_t len, pricing_item *it, char **next, ib_error *err)
{
    *next = NULL;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: response is not a JSON object (truncated?)");
    }
    int rc = -1;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "PriceList");
    if (!cJSON_IsArray(list)) {
        ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: response has no PriceList array");
        goto done;
    }
    const cJSON *entry;
    cJSON_ArrayForEach(entry, list)
    {
        /* Each entry is a JSON document serialised into a string. */
        if (!cJSON_IsString(entry)) {
            ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: PriceList entry is not a string");
            goto done;
        }
        cJSON *doc = cJSON_Parse(entry->valuestring);
        if (!doc) {
            ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: PriceList entry is not valid JSON");
            goto done;
        }
        const cJSON *attrs =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "product"), "attributes");
        double v = NAN;
        int bad = 0, zero = 0;
        if (cJSON_IsObject(attrs) && product_matches(attrs, it)) bad = on_demand_hourly(doc, &v, &zero, err);
        const cJSON *sku = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "product"), "sku");
        char sku_s[sizeof it->sku];
        snprintf(sku_s, sizeof sku_s, "%s", cJSON_IsString(sku) && sku->valuestring[0] ? sku->valuestring : "?");
        cJSON_Delete(doc);
        if (bad) goto done;
        it->n_zero += zero;
        if (isnan(v)) continue;
        it->n_products++;
        if (isnan(it->usd_per_hour)) {
            it->usd_per_hour = v;
            snprintf(it->sku, sizeof it->sku, "%s", sku_s);
        } else if (v != it->usd_per_hour) {
            /* Two products pass every filter (instance type, region, Linux, shared tenancy, no
             * pre-installed software, capacity Used, on-demand, RunInstances) at different prices:
             * nothing left tells which one a launch is billed at, and the server's order must not
             * decide.  The query fails (so nothing is cached) naming both. */
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "Pricing GetProducts: %s in %s: two products pass every filter at different prices "
                         "(SKU %.60s at $%.10g/h, SKU %.60s at $%.10g/h): ambiguous, so AWS's price is not used",
                         it->instance_type, it->region, it->sku, it->usd_per_hour, sku_s, v);
            goto done;
        }
    }
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(root, "NextToken");
    if (cJSON_IsString(tok) && tok->valuestring[0]) {
        *next = strdup(tok->valuestring);
        if (!*next) {
            ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: out of memory");
            goto done;
        }
    }
    it->pages++;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

/* ---- batch driver -------------------------------------------------------------------------- */

typedef struct pricing_ctx {
    pricing_item *items;
    int page_size;
    char endpoint[512];
} pricing_ctx;

static const aws_header pricing_headers[] = {
    {"Content-Type", "application/x-amz-json-1.1"},
    {"X-Amz-Target", "AWSPriceListService.GetProducts"},
};

static int pricing_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body,
                         ib_error *err)
{
    pricing_ctx *pc = ctx;
    *body = aws_pricing_request_body(&pc->items[i], pc->page_size, token);
    size_t n = strlen(pc->endpoint) + 2;
    *url = malloc(n);
    if (!*body || !*url) return ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: out of memory");
    /* The JSON protocol posts to the root path. */
    snprintf(*url, n, "%s%s", pc->endpoint, pc->endpoint[strlen(pc->endpoint) - 1] == '/' ? "" : "/");
    req->method = "POST";
    req->service = "pricing";
    req->region = PRICING_SIGNING_REGION;
    req->url = *url;
    req->headers = pricing_headers;
    req->n_headers = sizeof pricing_headers / sizeof pricing_headers[0];
    req->body = *body;
    req->body_len = strlen(*body);
    return 0;
}

static int pricing_parse(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err)
{
    pricing_ctx *pc = ctx;
    return aws_pricing_parse_page(body, len, &pc->items[i], next, err);
}

int aws_pricing_pager(pricing_item *items, size_t n, int page_size, aws_pager *out, ib_error *err)
{
    pricing_ctx *pc = calloc(1, sizeof *pc);
    if (!pc) return ib_error_set(err, IB_EXIT_RUNTIME, "Pricing GetProducts: out of memory");
    pc->items = items;
    pc->page_size = page_size;
    for (size_t i = 0; i < n; i++) {
        items[i].usd_per_hour = NAN;
        items[i].n_products = items[i].n_zero = items[i].pages = 0;
        items[i].sku[0] = '\0';
    }
    if (aws_endpoint_url("PRICING", PRICING_SIGNING_REGION, pc->endpoint, sizeof pc->endpoint) != 0 ||
        !pc->endpoint[0]) {
        char why[200];
        free(pc);
        return ib_error_set(
            err, IB_EXIT_RUNTIME, "Pricing GetProducts: no endpoint: %s",
            aws_endpoint_problem("PRICING", PRICING_SIGNING_REGION, sizeof pc->endpoint, why, sizeof why));
    }
    /* A query's pages follow its question, as the spot history's do: the products it can hold at
     * the page size, plus spare pages. */
    int ps = pricing_page_size(page_size);
    aws_pager p = {.ctx = pc,
                   .what = "Pricing GetProducts",
                   .build = pricing_build,
                   .parse = pricing_parse,
                   .max_pages = (PRICING_MOST_PRODUCTS + ps - 1) / ps + PRICING_SPARE_PAGES,
                   .max_body = PRICING_MAX_PAGE};
    *out = p;
    return 0;
}
