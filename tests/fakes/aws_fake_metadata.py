"""The fake AWS's credential endpoints (aws_fake_server.py's docstring says what they serve): EC2's
instance metadata service (IMDSv2, or v1 with --imds-v1-only), the container credentials
endpoint and IAM Identity Center's portal (GetRoleCredentials); the credentials they hand out are
minted by State.mint and accepted for signing."""
import json
import time
import uuid

from aws_fake_state import iso


def imds(handler, method, path):
    st, a = handler.server.state, handler.server.state.args
    if a.imds_v1_only and path == "/latest/api/token":
        return handler.send(404, "", "text/plain")
    if path == "/latest/api/token":
        if method != "PUT":
            return handler.send(405, "", "text/plain")
        ttl = handler.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        if not ttl or not ttl.isdigit() or not (1 <= int(ttl) <= 21600):
            return handler.send(400, "", "text/plain")
        st.count("imds_token_requests")
        tok = "IMDSTOKEN" + uuid.uuid4().hex
        with st.lock:
            st.imds_tokens.add(tok)
        return handler.send(200, tok, "text/plain", {"X-aws-ec2-metadata-token-ttl-seconds": ttl})
    tok = handler.headers.get("X-aws-ec2-metadata-token")
    with st.lock:
        ok = tok in st.imds_tokens
    if not ok and not a.imds_v1_only:
        return handler.send(401, "", "text/plain")
    role = a.imds_role
    ident = {"instanceId": "i-0123456789abcdef0", "instanceType": a.imds_instance_type, "region": a.imds_region,
             "availabilityZone": a.imds_az, "architecture": "x86_64", "imageId": "ami-0123456789abcdef0",
             "pendingTime": "2026-11-21T00:00:00Z", "accountId": "123456789012", "version": "2017-09-30"}
    md = {"/latest/meta-data/instance-id": ident["instanceId"],
          "/latest/meta-data/instance-type": a.imds_instance_type,
          "/latest/meta-data/placement/region": a.imds_region,
          "/latest/meta-data/placement/availability-zone": a.imds_az,
          "/latest/meta-data/instance-life-cycle": a.imds_lifecycle,
          "/latest/dynamic/instance-identity/document": json.dumps(ident, indent=2)}
    if path in md:
        return handler.send(200, md[path], "text/plain")
    if path == "/latest/meta-data/iam/security-credentials/" and role:
        return handler.send(200, role, "text/plain")
    if role and path == "/latest/meta-data/iam/security-credentials/" + role:
        st.count("imds_credential_fetches")
        c = st.mint("imds", a.imds_cred_ttl)
        doc = dict(Code="Success", LastUpdated=iso(time.time()), Type="AWS-HMAC", **c)
        return handler.send(200, json.dumps(doc, indent=2), "text/plain")
    return handler.send(404, "", "text/plain")


def container(handler):
    st, a = handler.server.state, handler.server.state.args
    if a.container_auth_token and handler.headers.get("Authorization") != a.container_auth_token:
        return handler.send_json(403, {"code": "AccessDenied", "message": "bad authorization token"}, "application/json")
    st.count("container_credential_fetches")
    c = st.mint("container", a.container_cred_ttl)
    c["RoleArn"] = "arn:aws:iam::123456789012:role/instbench-test"
    return handler.send_json(200, c, "application/json")


def sso_portal(handler):
    """GET /federation/credentials?account_id=A&role_name=R with x-amz-sso_bearer_token: the token
    must be --sso-access-token (else 401 UnauthorizedException, as the portal answers); every
    request's (account, role, token) is kept in stats "sso_requests"."""
    import urllib.parse
    st, a = handler.server.state, handler.server.state.args
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(handler.path).query)
    token = handler.headers.get("x-amz-sso_bearer_token")
    with st.lock:
        st.stats.setdefault("sso_requests", []).append(
            {"account_id": q.get("account_id", [None])[0], "role_name": q.get("role_name", [None])[0],
             "token_ok": bool(a.sso_access_token) and token == a.sso_access_token, "method": handler.command})
    if not a.sso_access_token or token != a.sso_access_token:
        return handler.send_json(401, {"__type": "UnauthorizedException",
                                       "message": "Session token not found or invalid"}, "application/json")
    c = st.mint("sso", 3600)
    exp_ms = int(time.time() + 3600) * 1000
    return handler.send_json(200, {"roleCredentials": {"accessKeyId": c["AccessKeyId"],
                                                       "secretAccessKey": c["SecretAccessKey"],
                                                       "sessionToken": c["Token"], "expiration": exp_ms}},
                             "application/json")
