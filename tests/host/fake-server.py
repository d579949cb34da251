#!/usr/bin/python3
"""The fake internet's web servers: HTTP on port 80 and HTTPS on port 443 of every address of the network
namespace it runs in (tests/host/run starts it there). Each answer is one JSON line naming the address
that was asked, so a test knows which fake host it reached; 169.254.169.254 answers as a stand-in for a
cloud metadata service. Every request is remembered, and GET /_ajh/requests on any server returns them,
so a test can prove that a refused request never arrived.

usage: fake-server.py CERT KEY READY_FILE
"""
import json
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAMES = {
    "203.0.113.10": "www.fake.test",
    "203.0.113.20": "upload.fake.test",
    "198.51.100.30": "other.fake.test",
    "169.254.169.254": "metadata",
}
MAX_BODY = 1 << 20
seen = []
seen_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: with Nagle, a client past TCP's quick-ACK start (a
    # proxy's kept-alive connection) waits 40 ms for each answer, which timings would measure.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def answer(self):
        local = self.connection.getsockname()[0]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, MAX_BODY)) if length > 0 else b""
        tls = isinstance(self.connection, ssl.SSLSocket)
        record = {
            "server": NAMES.get(local, local),
            "address": local,
            "tls": tls,
            "method": self.command,
            "host": self.headers.get("Host", ""),
            "path": self.path,
            "body_bytes": len(body),
        }
        if self.command == "GET" and self.path == "/_ajh/requests":
            with seen_lock:
                out = "".join(json.dumps(r) + "\n" for r in seen).encode()
        else:
            with seen_lock:
                seen.append(record)
            out = (json.dumps(record) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = answer


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    cert, key, ready = sys.argv[1:4]
    plain = Server(("0.0.0.0", 80), Handler)
    secure = Server(("0.0.0.0", 443), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    with open(ready, "w") as f:
        f.write("ready\n")
    secure.serve_forever()


if __name__ == "__main__":
    main()
