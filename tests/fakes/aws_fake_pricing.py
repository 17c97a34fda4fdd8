"""The fake AWS's price lists (aws_fake_server.py's docstring says what they serve): the Pricing
API's GetProducts, built from the price records with the distractors a careless filter would pick,
and Savings Plans' DescribeSavingsPlansOfferingRates from --savings-plan-rates."""
import base64
import hashlib
import json
import uuid

from aws_fake_state import offset_of, token_for


# ---- Pricing ------------------------------------------------------------------------------------

def sku_of(*parts):
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16].upper()


def price_doc(service_code, family, attrs, usd, sku):
    term = "JRTCKXETXF"
    ondemand = {"%s.%s" % (sku, term): {
        "priceDimensions": {"%s.%s.6YS6EN2CT7" % (sku, term): {
            "unit": "Hrs", "endRange": "Inf", "beginRange": "0", "appliesTo": [],
            "rateCode": "%s.%s.6YS6EN2CT7" % (sku, term),
            "description": "$%s per On Demand %s %s Instance Hour" % (usd, attrs.get("operatingSystem", ""),
                                                                       attrs.get("instanceType", "")),
            "pricePerUnit": {"USD": "%.10f" % usd}}},
        "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "offerTermCode": term, "termAttributes": {}}}
    reserved = {"%s.38NPMPTW36" % sku: {
        "priceDimensions": {"%s.38NPMPTW36.2TG2D8R56U" % sku: {
            "unit": "Quantity", "description": "Upfront Fee", "appliesTo": [],
            "rateCode": "%s.38NPMPTW36.2TG2D8R56U" % sku, "pricePerUnit": {"USD": "%.0f" % (usd * 3000)}}},
        "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "offerTermCode": "38NPMPTW36",
        "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "standard",
                           "PurchaseOption": "Partial Upfront"}}}
    attrs = dict(attrs)
    attrs["servicecode"] = service_code
    return json.dumps({"product": {"productFamily": family, "attributes": attrs, "sku": sku},
                       "serviceCode": service_code, "terms": {"OnDemand": ondemand, "Reserved": reserved},
                       "version": "20261120000000", "publicationDate": "2026-11-20T00:00:00Z"})


def lowered(attrs, service_code):
    d = {k.lower(): v.lower() for k, v in attrs.items()}
    d["servicecode"] = service_code.lower()
    return d


def products(state):
    """Every product the endpoint knows, as (attributes, PriceList string)."""
    if getattr(state, "_products", None) is not None:
        return state._products
    out = []
    for r in state.records:
        if r["on_demand"] is None:
            continue
        t, reg, usd = r["instance_type"], r["region"], float(r["on_demand"])
        if t.startswith("ml."):
            for comp, mult in (("Training", 1.0), ("Hosting", 1.17)):
                a = {"instanceName": t, "component": comp, "regionCode": reg, "location": reg,
                     "usagetype": "%s-%s:%s" % (reg, "Train" if comp == "Training" else "Host", t),
                     "operation": "RunInstance", "instanceType": "%s-%s" % (t, comp)}
                out.append((lowered(a, "AmazonSageMaker"), price_doc("AmazonSageMaker", "ML Instance", a,
                                                                      round(usd * mult, 4), sku_of(t, reg, comp))))
            continue
        variants = [("Linux", "Shared", "NA", "Used", 1.0), ("Windows", "Shared", "NA", "Used", 1.5),
                    ("Linux", "Dedicated", "NA", "Used", 1.1), ("Linux", "Shared", "SQL Web", "Used", 1.3),
                    ("Linux", "Shared", "NA", "UnusedCapacityReservation", 1.0001)]
        for os_, ten, sw, cap, mult in variants:
            a = {"instanceType": t, "regionCode": reg, "location": reg, "operatingSystem": os_, "tenancy": ten,
                 "preInstalledSw": sw, "capacitystatus": cap, "licenseModel": "No License required",
                 "usagetype": "%s-BoxUsage:%s" % (reg, t), "operation": "RunInstances", "marketoption": "OnDemand"}
            out.append((lowered(a, "AmazonEC2"), price_doc("AmazonEC2", "Compute Instance", a, round(usd * mult, 4),
                                                           sku_of(t, reg, os_, ten, sw, cap))))
    state._products = out
    return out


INDEXED = ("instancetype", "instancename")


def candidates(state, filters):
    """The products an exact instance type filter can match (all of them without one): a query
    scanning all ~2,600 took ~7 ms of Python, which 20 concurrent queries pay one after another
    (the GIL), so the server, not the client, dominated the latency benchmark.  Every filter is
    still applied to what this returns."""
    if getattr(state, "_index", None) is None:
        index = {}
        for prod in products(state):
            for field in INDEXED:
                if field in prod[0]:
                    index.setdefault((field, prod[0][field]), []).append(prod)
        state._index = index
    for f in filters:
        field = f.get("Field", "").lower()
        if field in INDEXED and f.get("Type", "TERM_MATCH") in ("TERM_MATCH", "EQUALS"):
            return state._index.get((field, str(f.get("Value", "")).lower()), [])
    return products(state)


def filter_match(attrs, f):
    """attrs: lower-cased attribute name -> lower-cased value (servicecode included)."""
    field, value, typ = f.get("Field", "").lower(), str(f.get("Value", "")).lower(), f.get("Type", "TERM_MATCH")
    hv = attrs.get(field)
    if hv is None:
        return typ == "NONE_OF"
    if typ in ("TERM_MATCH", "EQUALS"):
        return hv == value
    if typ == "ANY_OF":
        return hv in [v.strip() for v in value.split(",")]
    if typ == "NONE_OF":
        return hv not in [v.strip() for v in value.split(",")]
    if typ == "CONTAINS":
        return value in hv
    raise ValueError(typ)


def get_products(state, body):
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        return 400, {"__type": "SerializationException", "message": "request body is not JSON"}
    code = req.get("ServiceCode")
    if not code:
        return 400, {"__type": "ValidationException", "message": "ServiceCode is required"}
    if req.get("FormatVersion", "aws_v1") != "aws_v1":
        return 400, {"__type": "InvalidParameterException", "message": "FormatVersion must be aws_v1"}
    filters = req.get("Filters") or []
    for f in filters:
        if f.get("Type", "TERM_MATCH") not in ("TERM_MATCH", "EQUALS", "ANY_OF", "NONE_OF", "CONTAINS"):
            return 400, {"__type": "InvalidParameterException", "message": "bad filter type %r" % f.get("Type")}
    items = [doc for a, doc in candidates(state, filters)
             if a["servicecode"] == code.lower() and all(filter_match(a, f) for f in filters)]
    page = state.args.page_size
    if req.get("MaxResults"):
        page = min(page, int(req["MaxResults"]))
    start = 0
    if req.get("NextToken"):
        try:
            start = int(base64.b64decode(req["NextToken"]).decode().split(":")[1])
        except Exception:
            return 400, {"__type": "InvalidNextTokenException", "message": "The NextToken is invalid."}
    resp = {"FormatVersion": "aws_v1", "PriceList": items[start:start + page]}
    if start + page < len(items):
        resp["NextToken"] = base64.b64encode(("pricing:%d:%s" % (start + page, uuid.uuid4().hex)).encode()).decode()
    return 200, resp


def describe_savings_plans_offering_rates(state, req):
    def allows(key, value):
        return key not in req or value in req[key]
    try:
        page = min(int(req.get("maxResults", 1000)), state.args.sp_page_size)
        off = offset_of(req["nextToken"], "sp") if req.get("nextToken") else 0
        filters = {f["name"]: f["values"] for f in req.get("filters", [])}
    except (ValueError, KeyError, TypeError):
        return 400, {"__type": "ValidationException", "message": "the request is malformed"}
    rows = []
    for r in state.sp_rates:
        o, props = r["savingsPlanOffering"], {p["name"]: p["value"] for p in r.get("properties", [])}
        if (allows("savingsPlanTypes", o["planType"]) and allows("savingsPlanPaymentOptions", o["paymentOption"]) and
                allows("products", r.get("productType")) and allows("serviceCodes", r.get("serviceCode")) and
                allows("operations", r.get("operation")) and allows("usageTypes", r.get("usageType")) and
                all(props.get(k) in v for k, v in filters.items())):
            rows.append(r)
    out = {"searchResults": rows[off:off + page]}
    if off + page < len(rows):
        out["nextToken"] = token_for("sp", off + page)
    return 200, out
