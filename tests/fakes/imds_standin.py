"""A local IMDSv2 stand-in for the measure tests (AWS_EC2_METADATA_SERVICE_ENDPOINT): like EC2's,
it hands out a session token on PUT /latest/api/token and answers GETs only when they carry it.
Imds.meta maps a path under /latest/meta-data/ to its answer (str or bytes); Imds.log records
every request as (method, path, token).  start(meta) serves its own META and log instead (the sweep's
instance simulator runs one per instance): the server's RequestHandlerClass.meta / .log."""
import http.server
import threading

TOKEN = "AQAEAtest-token=="


class Imds(http.server.BaseHTTPRequestHandler):
    meta = {}
    log = []

    def log_message(self, *a):
        pass

    def _send(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        self.log.append(("PUT", self.path, None))
        if self.path != "/latest/api/token" or "X-aws-ec2-metadata-token-ttl-seconds" not in self.headers:
            return self._send(400)
        self._send(200, TOKEN.encode())

    def do_GET(self):
        tok = self.headers.get("X-aws-ec2-metadata-token")
        self.log.append(("GET", self.path, tok))
        if tok != TOKEN:
            return self._send(401)
        key = self.path[len("/latest/meta-data/"):] if self.path.startswith("/latest/meta-data/") else None
        if key in self.meta:
            v = self.meta[key]
            return self._send(200, v if isinstance(v, bytes) else v.encode())
        self._send(404)


def start(meta=None):
    """Starts the server in a daemon thread; returns (server, endpoint URL).  Without META it serves
    Imds.meta (shared by every such server), with META a copy of its own."""
    handler = Imds if meta is None else type("ImdsOwn", (Imds,), {"meta": dict(meta), "log": []})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"
