"""The fake AWS's signature check: every service request's SigV4 signature recomputed with botocore
over the request as received (aws_fake_server.py's docstring says how)."""
import datetime
import sys
import time

from botocore.auth import S3SigV4Auth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

CLOCK_SKEW_S = 15 * 60


def verify(handler, method, body, service):
    """Returns (region, None) or (None, (code, message))."""
    st = handler.server.state
    auth = handler.headers.get("Authorization") or ""
    amz_date = handler.headers.get("X-Amz-Date") or ""
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        st.count("auth_failures")
        return None, ("MissingAuthenticationToken", "Request is missing Authentication Token")
    fields = {}
    for part in auth[len("AWS4-HMAC-SHA256 "):].split(","):
        k, _, v = part.strip().partition("=")
        fields[k] = v
    try:
        ak, date, region, svc, term = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        given = fields["Signature"]
    except (KeyError, ValueError):
        st.count("auth_failures")
        return None, ("IncompleteSignature", "Authorization header is malformed")
    with st.lock:
        if ak not in st.stats["access_key_ids"]:
            st.stats["access_key_ids"].append(ak)
        known = st.creds.get(ak)
    if not known:
        st.count("auth_failures")
        return None, ("UnrecognizedClientException" if service == "pricing" else "AuthFailure",
                      "The security token included in the request is invalid.")
    secret, token, expires = known
    sent_token = handler.headers.get("X-Amz-Security-Token")
    if sent_token and sent_token in st.expired_tokens:
        st.count("auth_failures")
        return None, ("ExpiredTokenException" if service == "pricing" else "ExpiredToken",
                      "The security token included in the request is expired")
    if token != sent_token:
        st.count("auth_failures")
        return None, ("UnrecognizedClientException" if service == "pricing" else "AuthFailure",
                      "The security token included in the request is invalid.")
    if expires is not None and time.time() > expires:
        st.count("auth_failures")
        return None, ("ExpiredTokenException" if service == "pricing" else "ExpiredToken",
                      "The security token included in the request is expired")
    if svc != service or term != "aws4_request" or "host" not in signed or "x-amz-date" not in signed:
        st.count("signature_failures")
        return None, ("SignatureDoesNotMatch", "Credential should be scoped to correct service: '%s'." % service)
    try:
        t = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        st.count("signature_failures")
        return None, ("SignatureDoesNotMatch", "X-Amz-Date is missing or malformed")
    if abs(t.timestamp() - time.time()) > CLOCK_SKEW_S or date != amz_date[:8]:
        st.count("signature_failures")
        return None, ("SignatureDoesNotMatch", "Signature expired: %s is outside the 15 minute window" % amz_date)
    if sent_token and "x-amz-security-token" not in signed:
        st.count("signature_failures")
        return None, ("SignatureDoesNotMatch", "X-Amz-Security-Token must be signed")
    # botocore recomputes the signature over exactly the headers the client said it signed.
    hdrs = {}
    for name in signed:
        vals = handler.headers.get_all(name)
        if vals is None:
            st.count("signature_failures")
            return None, ("SignatureDoesNotMatch", "signed header %s is missing" % name)
        hdrs[name] = ",".join(vals) if len(vals) > 1 else vals[0]
    url = "http://%s%s" % (handler.headers.get("Host", ""), handler.path)
    req = AWSRequest(method=method, url=url, headers=hdrs, data=body)
    req.context["timestamp"] = amz_date
    signer = (S3SigV4Auth if svc == "s3" else SigV4Auth)(Credentials(ak, secret, token), svc, region)
    cr = signer.canonical_request(req)
    sts = signer.string_to_sign(req, cr)
    want = signer.signature(sts, req)
    if want != given:
        st.count("signature_failures")
        if st.args.verbose:
            sys.stderr.write("endpoint: signature mismatch; canonical request was:\n%s\n" % cr)
        return None, ("SignatureDoesNotMatch",
                      "The request signature we calculated does not match the signature you provided. "
                      "Check your AWS Secret Access Key and signing method.")
    return region, None
