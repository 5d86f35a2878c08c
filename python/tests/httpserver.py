"""Real HTTP(S) servers for the remote tests, on loopback: nginx (Debian)
serving a folder over plain HTTP and over TLS with a certificate made here
(so verification stays on), and a small fault-injecting proxy in front of
it (503s, bodies cut short, stalls) for the retry tests."""

import http.client
import os
import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Nginx:
    """basic_auth (user, password): /private/ under www asks for them
    (HTTP basic auth, on both ports)."""

    def __init__(self, root, www, basic_auth=None):
        self.root, self.www = str(root), str(www)
        self.basic_auth = basic_auth
        self.proc = None

    def start(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(nginx):
            raise RuntimeError("nginx not found (apt-get install nginx)")
        os.makedirs(self.root, exist_ok=True)
        self.cert = os.path.join(self.root, "cert.pem")
        key = os.path.join(self.root, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", self.cert],
                       check=True, capture_output=True)
        self.port, self.tls_port = free_port(), free_port()
        private = ""
        if self.basic_auth:
            name, password = self.basic_auth
            hashed = subprocess.run(["openssl", "passwd", "-apr1", password],
                                    check=True, capture_output=True,
                                    text=True).stdout.strip()
            users = os.path.join(self.root, "htpasswd")
            with open(users, "w") as f:
                f.write("%s:%s\n" % (name, hashed))
            private = ('location /private/ { auth_basic "sluice"; '
                       'auth_basic_user_file %s; }' % users)
        user = "user root;" if os.geteuid() == 0 else ""
        conf = os.path.join(self.root, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""%s
daemon off; worker_processes 1; pid %s/nginx.pid;
error_log %s/error.log;
events { worker_connections 64; }
http {
  access_log %s/access.log;
  client_body_temp_path %s/tmp; proxy_temp_path %s/tmp;
  fastcgi_temp_path %s/tmp; uwsgi_temp_path %s/tmp; scgi_temp_path %s/tmp;
  server { listen 127.0.0.1:%d; root %s; %s }
  server { listen 127.0.0.1:%d ssl; root %s; %s
           ssl_certificate %s; ssl_certificate_key %s; }
}
""" % (user, self.root, self.root, self.root, *([self.root] * 5),
               self.port, self.www, private, self.tls_port, self.www, private,
               self.cert, key))
        os.makedirs(os.path.join(self.root, "tmp"), exist_ok=True)
        self.proc = subprocess.Popen([nginx, "-p", self.root, "-c", conf],
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                socket.create_connection(("127.0.0.1", self.tls_port),
                                         1).close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("nginx did not start: see %s/error.log" % self.root)

    def requests(self):
        """Lines of the access log: one per request nginx answered."""
        try:
            with open(os.path.join(self.root, "access.log")) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None


class FaultProxy:
    """Forwards GETs to upstream (host, port), breaking some answers: the
    first `fail` requests of each path get a 503, then `cut` of them have
    their body cut short after half its bytes (the connection closed).
    rate (bytes a second, None: as fast as it goes) slows every body;
    kill() stops answering at once, mid-body too (a server gone).
    no_range: Range headers are dropped (a server that ignores them)."""

    def __init__(self, upstream_port, fail=0, cut=0, status=503, rate=None,
                 no_range=False):
        self.upstream = upstream_port
        self.no_range = no_range
        self.fail, self.cut, self.status = fail, cut, status
        self.rate = rate
        self.seen = {}
        self.aborted = 0  # bodies the client stopped reading mid-way
        self.lock = threading.Lock()
        self.dead = threading.Event()

    def start(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                with proxy.lock:
                    n = proxy.seen.get(self.path, 0)
                    proxy.seen[self.path] = n + 1
                if n < proxy.fail:
                    body = b"<Error><Code>SlowDown</Code></Error>"
                    self.send_response(proxy.status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                c = http.client.HTTPConnection("127.0.0.1", proxy.upstream)
                hdrs = {k: v for k, v in self.headers.items()
                        if k.lower() in ("range",) and not proxy.no_range}
                c.request("GET", self.path, headers=hdrs)
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() in ("content-length", "content-range",
                                     "etag", "content-type"):
                        self.send_header(k, v)
                self.end_headers()
                if n < proxy.fail + proxy.cut and len(data) > 1:
                    self.wfile.write(data[:len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                step = 8192
                for at in range(0, len(data), step):
                    if proxy.dead.is_set():
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    try:
                        self.wfile.write(data[at:at + step])
                    except (BrokenPipeError, ConnectionResetError):
                        with proxy.lock:  # the client gave up mid-body
                            proxy.aborted += 1
                        self.close_connection = True
                        return
                    if proxy.rate:
                        time.sleep(step / proxy.rate)

        class Server(ThreadingHTTPServer):
            # Range reads open dozens of connections at once: the default
            # backlog of 5 drops their SYNs (retried after 1, 3, 7 s...).
            request_queue_size = 256

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.dead.set()
        self.server.shutdown()
        self.server.server_close()

    def kill(self):
        """The server gone: the listening socket closed, bodies cut."""
        self.stop()
