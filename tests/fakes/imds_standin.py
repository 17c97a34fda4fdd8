"""A local IMDSv2 stand-in for the measure tests (AWS_EC2_METADATA_SERVICE_ENDPOINT): like EC2's,
it hands out a session token on PUT /latest/api/token and answers GETs only when they carry it.
Imds.meta maps a path under /latest/meta-data/ to its answer (str or bytes); Imds.log records
every request as (method, path, token).  start(meta) serves its own META and log instead (the sweep's
instance simulator runs one per instance): the server's RequestHandlerClass.meta / .log.
Silent is the metadata address that accepts and never answers, counting what reached it."""
import http.server
import socket
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


class Silent:
    """A server that accepts every connection, reads the request and never answers, as a metadata
    address black-holed past the handshake does.  It counts what the client tried (.connections,
    .request_lines: the first line of each request), so a test can tell one attempt that waited out
    its timeout from several, without a clock."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)   # how often the accept loop looks at _stop
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.connections = 0
        self.request_lines = []
        self._held = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with self._lock:
                self.connections += 1
                self._held.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn):
        data = b""
        try:
            while b"\r\n" not in data and len(data) < 4096:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        if data:
            with self._lock:
                self.request_lines.append(data.split(b"\r\n", 1)[0].decode("latin-1"))

    def reset(self):
        """Forgets what it saw (and drops the connections it held)."""
        with self._lock:
            for c in self._held:
                c.close()
            self._held, self.connections, self.request_lines = [], 0, []

    def close(self):
        self._stop.set()
        self._thread.join()
        self.reset()
        self.sock.close()
