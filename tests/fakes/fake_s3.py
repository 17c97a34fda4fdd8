"""S3 inside the fake AWS (tests/fakes/aws_fake_http.py routes every request signed for service "s3"
here, after checking its signature with botocore's S3SigV4Auth): what moto does not do.

Path-style requests only (a custom endpoint is path style):
  HEAD /BUCKET                 200 with x-amz-bucket-region, 404 without a body for a missing bucket
  PUT  /BUCKET/KEY             stores the body (x-amz-content-sha256 must be the body's SHA-256)
  GET  /BUCKET/KEY             the object, 404 NoSuchKey / NoSuchBucket
  DELETE /BUCKET/KEY           removes it (204, also when absent, as S3)
  GET  /BUCKET?list-type=2     ListObjectsV2: prefix, max-keys (default 1000), continuation-token,
                               encoding-type=url (keys %-encoded as S3 does, '+' kept literal here)
Buckets live in one region each (--s3-bucket NAME:REGION, repeatable, or control "s3_buckets"):
a request signed for another region is answered 301 PermanentRedirect with x-amz-bucket-region,
or 400 AuthorizationHeaderMalformed when control "s3_redirect" is "400".
Presigned URLs (no Authorization header, X-Amz-Signature in the query): the signature is
recomputed with botocore's S3SigV4QueryAuth at the URL's X-Amz-Date and X-Amz-Expires; a wrong
signature is 403 SignatureDoesNotMatch, an expired URL 403 AccessDenied "Request has expired".
S3's older query-string form (AWSAccessKeyId, Signature, Expires: boto3's generate_presigned_url
with signature_version "s3") is recomputed with botocore's HmacV1QueryAuth, whose string to sign holds
the request's Content-Type and Content-MD5 as S3's does; the bucket's own region serves it.
Control (POST /__control): "s3_objects": {"BUCKET/KEY": "text" | {"size": N}} stores objects
(a size makes N bytes of 'x'); "s3_endless": true makes every listing page truncated with a fresh
continuation token; "s3_redirect": "301" | "400"; "s3_max_keys": N, the page size when a listing
asks for none (S3's is 1000; moto's MOTO_S3_DEFAULT_MAX_KEYS does the same); "s3_list_any_prefix":
true, a misbehaving endpoint whose listings name every key of the bucket whatever the prefix;
"s3_moved": {"BUCKET": {"status": 301 | 302 | 307, "location": URL, "region": REGION}} answers every
request to BUCKET with that redirect (Location and x-amz-bucket-region when given, S3's error
body but for HEAD), whatever region it was signed for, counted as "moved".
Faults (kinds of aws_fake_server.py, service "s3"): throttle (503 SlowDown), 500, 503, denied
(403 AccessDenied), truncate / cut / malformed (applied to a 200 answer)."""
import datetime
import hashlib
import time
import urllib.parse
from xml.sax.saxutils import escape

from botocore.auth import HmacV1QueryAuth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest, HTTPHeaders
from botocore.credentials import Credentials


def setup(state, args):
    state.s3_buckets = {}
    state.s3_objects = {}
    state.s3_endless = False
    state.s3_redirect = "301"
    state.s3_max_keys = 1000
    state.s3_list_any_prefix = False
    state.s3_moved = {}
    for spec in getattr(args, "s3_bucket", None) or []:
        name, _, region = spec.partition(":")
        state.s3_buckets[name] = region or "us-east-1"
        state.s3_objects[name] = {}


def control(state, c):
    for name, region in c.get("s3_buckets", {}).items():
        state.s3_buckets[name] = region
        state.s3_objects.setdefault(name, {})
    for path, v in c.get("s3_objects", {}).items():
        bucket, _, key = path.partition("/")
        data = b"x" * int(v["size"]) if isinstance(v, dict) else v.encode()
        state.s3_objects.setdefault(bucket, {})[key] = data
    if "s3_endless" in c:
        state.s3_endless = bool(c["s3_endless"])
    if "s3_redirect" in c:
        state.s3_redirect = str(c["s3_redirect"])
    if "s3_max_keys" in c:
        state.s3_max_keys = int(c["s3_max_keys"])
    if "s3_list_any_prefix" in c:
        state.s3_list_any_prefix = bool(c["s3_list_any_prefix"])
    if "s3_moved" in c:
        state.s3_moved = dict(c["s3_moved"])


def error_xml(code, msg):
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message>"
            "<RequestId>fake</RequestId></Error>" % (code, escape(msg)))


def list_objects(state, bucket, params):
    objs = state.s3_objects[bucket]
    prefix = params.get("prefix", "")
    keys = sorted(k for k in objs if k.startswith(prefix) or state.s3_list_any_prefix)
    max_keys = min(int(params.get("max-keys", state.s3_max_keys)), 1000)
    start = int(params.get("continuation-token", "0").split("-")[-1] or 0) if params.get("continuation-token") else 0
    page = keys[start:start + max_keys]
    truncated = start + max_keys < len(keys) or state.s3_endless
    url = params.get("encoding-type") == "url"
    out = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">",
           "<Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>%d</MaxKeys>"
           % (bucket, escape(urllib.parse.quote(prefix, safe="/") if url else prefix), len(page), max_keys)]
    if url:
        out.append("<EncodingType>url</EncodingType>")
    out.append("<IsTruncated>%s</IsTruncated>" % ("true" if truncated else "false"))
    for k in page:
        out.append("<Contents><Key>%s</Key><LastModified>2026-11-25T00:00:00.000Z</LastModified>"
                   "<ETag>\"0\"</ETag><Size>%d</Size><StorageClass>STANDARD</StorageClass></Contents>"
                   % (escape(urllib.parse.quote(k, safe="/") if url else k), len(objs[k])))
    if truncated:
        nxt = start + max_keys if not state.s3_endless else start + 1
        out.append("<NextContinuationToken>tok-%d</NextContinuationToken>" % nxt)
    out.append("</ListBucketResult>")
    return "".join(out)


def serve(handler, method, body, region, fault, presigned=False):
    """One verified S3 request (region: its signing region; fault: the fault taken, or None)."""
    st = handler.server.state
    parts = urllib.parse.urlsplit(handler.path)
    params = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    segs = parts.path.lstrip("/").split("/", 1)
    bucket = urllib.parse.unquote(segs[0])
    key = urllib.parse.unquote(segs[1]) if len(segs) > 1 else None
    op = {"HEAD": "HeadBucket", "PUT": "PutObject", "DELETE": "DeleteObject"}.get(method) or \
        ("GetObject" if key is not None else "ListObjectsV2")
    st.count("by_operation", op)

    def fail(status, code, msg, extra=None):
        if method == "HEAD":
            handler.send(status, b"", "application/xml", extra)
        else:
            handler.send(status, error_xml(code, msg), "application/xml", extra)

    if fault == "throttle":
        return fail(503, "SlowDown", "Please reduce your request rate.")
    if fault == "500":
        return fail(500, "InternalError", "We encountered an internal error. Please try again.")
    if fault == "503":
        return fail(503, "ServiceUnavailable", "Service is unable to handle request.")
    if fault == "denied":
        return fail(403, "AccessDenied", "Access Denied")
    moved = st.s3_moved.get(bucket)
    if moved:
        st.count("by_operation", "moved")
        extra = {k: moved[h] for k, h in (("Location", "location"), ("x-amz-bucket-region", "region")) if h in moved}
        status = int(moved.get("status", 301))
        code = {301: "PermanentRedirect", 307: "TemporaryRedirect"}.get(status, "Found")
        return fail(status, code, "Please re-send this request to the specified temporary endpoint. Continue to "
                    "use the original request endpoint for future requests." if status == 307 else
                    "The bucket you are attempting to access must be addressed using the specified endpoint.",
                    extra)
    if bucket not in st.s3_buckets:
        return fail(404, "NoSuchBucket", "The specified bucket does not exist")
    home = st.s3_buckets[bucket]
    if region != home:
        st.count("by_operation", "redirect")
        if st.s3_redirect == "400":
            return fail(400, "AuthorizationHeaderMalformed",
                        "The authorization header is malformed; the region '%s' is wrong; expecting '%s'"
                        % (region, home), {"x-amz-bucket-region": home})
        return fail(301, "PermanentRedirect", "The bucket you are attempting to access must be addressed "
                    "using the specified endpoint.", {"x-amz-bucket-region": home})
    mode = fault if fault in ("cut", "truncate", "malformed") else None
    if method == "HEAD":
        return handler.send(200, b"", "application/xml", {"x-amz-bucket-region": home})
    if method == "PUT":
        if not presigned and handler.headers.get("x-amz-content-sha256") != hashlib.sha256(body).hexdigest():
            return fail(400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header "
                        "does not match what was computed.")
        st.s3_objects[bucket][key] = body
        return handler.send(200, b"", "application/xml", {"ETag": "\"%s\"" % hashlib.md5(body).hexdigest()})
    if method == "DELETE":
        st.s3_objects[bucket].pop(key, None)
        return handler.send(204, b"", "application/xml")
    if key is None:
        return handler.send(200, list_objects(st, bucket, params), "application/xml", mode=mode)
    if key not in st.s3_objects[bucket]:
        return fail(404, "NoSuchKey", "The specified key does not exist.")
    return handler.send(200, st.s3_objects[bucket][key], "application/octet-stream", mode=mode)


def is_presigned(params):
    return ("X-Amz-Signature" in params and "/s3/aws4_request" in params.get("X-Amz-Credential", "")) or \
        all(k in params for k in ("AWSAccessKeyId", "Signature", "Expires"))


def serve_presigned_v2(handler, method, body, parts, params, deny):
    """S3's query-string form, verified with botocore's HmacV1QueryAuth at the URL's Expires."""
    st = handler.server.state
    try:
        ak, expires = params["AWSAccessKeyId"], int(params["Expires"])
    except ValueError:
        return deny("AuthorizationQueryParametersError", "malformed presigned URL")
    known = st.creds.get(ak)
    if not known:
        return deny("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
    secret, token, _ = known
    if time.time() > expires:
        return deny("AccessDenied", "Request has expired")
    headers = HTTPHeaders()
    for name in ("Content-Type", "Content-MD5"):
        if handler.headers.get(name) is not None:
            headers[name] = handler.headers.get(name)
    for k, v in params.items():
        if k.lower().startswith("x-amz-"):
            headers[k] = v
    class AtExpires(HmacV1QueryAuth):
        def _get_date(self):   # the string to sign's date line is the URL's Expires
            return str(expires)

    want = AtExpires(Credentials(ak, secret, token)).get_signature(method, parts, headers, auth_path=parts.path)
    if want != params["Signature"] or token != params.get("x-amz-security-token"):
        return deny("SignatureDoesNotMatch", "The request signature we calculated does not match the "
                    "signature you provided. Check your key and signing method.")
    st.count("by_operation", "presigned")
    bucket = urllib.parse.unquote(parts.path.lstrip("/").split("/", 1)[0])
    return serve(handler, method, body, st.s3_buckets.get(bucket, "us-east-1"), None, presigned=True)


def serve_presigned(handler, method, body):
    """A request through a presigned URL: verified here (see the module's docstring), then served."""
    st = handler.server.state
    parts = urllib.parse.urlsplit(handler.path)
    params = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))

    def deny(code, msg):
        st.count("signature_failures")
        handler.send(403, error_xml(code, msg), "application/xml")

    if "X-Amz-Signature" not in params:
        return serve_presigned_v2(handler, method, body, parts, params, deny)
    try:
        ak, date, region, svc, term = params["X-Amz-Credential"].split("/")
        amz_date, expires = params["X-Amz-Date"], int(params["X-Amz-Expires"])
        t = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except (KeyError, ValueError):
        return deny("AuthorizationQueryParametersError", "malformed presigned URL")
    known = st.creds.get(ak)
    if not known:
        return deny("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
    secret, token, _ = known
    if not 1 <= expires <= 604800:
        return deny("AuthorizationQueryParametersError", "X-Amz-Expires must be 1..604800")
    if time.time() > t.timestamp() + expires:
        return deny("AccessDenied", "Request has expired")
    signer = S3SigV4QueryAuth(Credentials(ak, secret, params.get("X-Amz-Security-Token")), svc, region,
                              expires=expires)
    req = AWSRequest(method=method, url="http://%s%s" % (handler.headers.get("Host", ""), parts.path))
    req.context["timestamp"] = amz_date
    signer._modify_request_before_signing(req)
    want = signer.signature(signer.string_to_sign(req, signer.canonical_request(req)), req)
    sent = {k: v for k, v in params.items() if k != "X-Amz-Signature"}
    made = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(req.url).query, keep_blank_values=True))
    if want != params["X-Amz-Signature"] or sent != made or token != params.get("X-Amz-Security-Token"):
        return deny("SignatureDoesNotMatch", "The request signature we calculated does not match the "
                    "signature you provided. Check your key and signing method.")
    st.count("by_operation", "presigned")
    # a presigned PUT's payload is UNSIGNED-PAYLOAD: serve() must not ask for its hash
    return serve(handler, method, body, region, None, presigned=True)
