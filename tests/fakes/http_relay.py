"""One request relayed as it came to another loopback server, for the tests' proxies in front of
moto (tests/sweep/moto_sweep.py's router, tests/aws/aws_assume_role.py's recorder): its method,
path and headers untouched (the Host header too, so the SigV4 signature moto checks is the one
instbench made), the answer relayed with its own length."""
import http.client


def relay(handler, port, method, body, host="127.0.0.1"):
    """Sends HANDLER's request (a BaseHTTPRequestHandler's path and headers, with BODY) to
    HOST:PORT and writes the answer back through HANDLER; a client gone away mid-answer (a test
    killing instbench mid-request) is no error."""
    conn = http.client.HTTPConnection(host, port, timeout=60)
    try:
        conn.putrequest(method, handler.path, skip_host=True, skip_accept_encoding=True)
        for k, v in handler.headers.items():
            conn.putheader(k, v)
        conn.endheaders(body)
        r = conn.getresponse()
        data = r.read()
        handler.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        if method != "HEAD":
            handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        conn.close()
