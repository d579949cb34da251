#!/usr/bin/python3
"""The fake internet's web servers: HTTP on port 80 and HTTPS on port 443 of every address of the network
namespace it runs in (tests/host/run starts it there). Each answer is one JSON line naming the address
that was asked, so a test knows which fake host it reached; 169.254.169.254 answers as a stand-in for a
cloud metadata service. Every request is remembered, and GET /_ajh/requests on any server returns them,
so a test can prove that a refused request never arrived; GET /_ajh/bytes/N answers N zero bytes (the
benchmarks' large reads). A model API's key headers (x-api-key, authorization) are remembered by their
SHA-256 only, so that no answer hands a key to whoever asked; a path ending in /_ajh/sse answers three
server-sent events, a second apart, as a streaming model API does; an answer below a /v1/ path states its
usage as a model API does (input_tokens and output_tokens: 3 and 2, the stream's 11 and 7). Below /git/ every server is a read-only git
smart-HTTP server (git http-backend, upload-pack only) of the repositories in GIT_ROOT. On 203.0.113.53
UDP port 53 a resolver answers the fake names with their addresses and every other name with NXDOMAIN;
each question is remembered as {"server": "dns", "name": ..., "answer": ...}, so a test can prove one
never arrived, or what it was answered.
A name below rebind.fake.test rebinds, as an attacker's DNS would: for REBIND_AFTER seconds from its first
question it is www.fake.test's address, then 127.0.0.1; every answer with a TTL of 0.

usage: fake-server.py CERT KEY READY_FILE GIT_ROOT
"""
import hashlib
import json
import socket
import time
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAMES = {
    "203.0.113.10": "www.fake.test",
    "203.0.113.20": "upload.fake.test",
    # A real registry's name, so that requests the check makes of it (npm's audit) meet the proxy as they
    # would on a runner: resolved, and answered by a certificate of the fake authority.
    "203.0.113.40": "registry.npmjs.org",
    "198.51.100.30": "other.fake.test",
    "169.254.169.254": "metadata",
}
DNS_ADDRESS = "203.0.113.53"
REBIND_ZONE = ".rebind.fake.test"
REBIND_AFTER = 20
rebind_first = {}
MAX_BODY = 1 << 20
GIT_BACKEND = "/usr/lib/git-core/git-http-backend"
git_root = None
seen = []
seen_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: with Nagle, a client past TCP's quick-ACK start (a
    # proxy's kept-alive connection) waits 40 ms for each answer, which timings would measure.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while len(body) <= MAX_BODY:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
            return body
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(min(length, MAX_BODY)) if length > 0 else b""

    def git(self, body):
        """git http-backend as a CGI program; receive-pack stays off (no REMOTE_USER)."""
        path, _, query = self.path.partition("?")
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": git_root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path[len("/git"):],
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "REMOTE_ADDR": self.client_address[0],
        }
        try:
            out = subprocess.run([GIT_BACKEND], input=body, env=env, capture_output=True, timeout=60).stdout
        except subprocess.TimeoutExpired:
            out = b""
        head, sep, payload = out.partition(b"\r\n\r\n")
        if not sep:
            head, sep, payload = out.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        if not sep:
            status, headers, payload = 502, [("Content-Type", "text/plain")], b"git http-backend failed\n"
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-length", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def zero_bytes(self, count):
        """GET /_ajh/bytes/N: N zero bytes (at most 1 GiB), for the benchmarks' large reads."""
        n = int(count) if count.isdigit() else -1
        if not 0 <= n <= 1 << 30:
            self.send_error(400)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        chunk = bytes(1 << 20)
        while n > 0:
            self.wfile.write(chunk[: min(n, len(chunk))])
            n -= min(n, len(chunk))

    def events(self):
        """Three server-sent events a second apart, the connection closed after the last."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        usage = {1: ', "usage": {"input_tokens": 11, "output_tokens": 1}', 2: "", 3: ', "usage": {"output_tokens": 7}'}
        for n in range(1, 4):
            self.wfile.write(f"event: part\ndata: {{\"n\": {n}, \"at\": {time.time():.3f}{usage[n]}}}\n\n".encode())
            self.wfile.flush()
            if n < 3:
                time.sleep(1)

    def answer(self):
        local = self.connection.getsockname()[0]
        body = self.read_body()
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
        if "/v1/" in self.path:
            # As a model API's answer states what it used (the key broker counts it).
            record["usage"] = {"input_tokens": 3, "output_tokens": 2}
        for header in ("x-api-key", "authorization"):
            value = self.headers.get(header)
            if value is not None:
                record[header + "-sha256"] = hashlib.sha256(value.encode()).hexdigest()
        if self.command == "GET" and self.path.startswith("/_ajh/bytes/"):
            self.zero_bytes(self.path[len("/_ajh/bytes/"):])
            return
        if self.command == "GET" and self.path == "/_ajh/requests":
            with seen_lock:
                out = "".join(json.dumps(r) + "\n" for r in seen).encode()
        else:
            with seen_lock:
                seen.append(record)
            if self.path.startswith("/git/"):
                self.git(body)
                return
            if self.path.endswith("/_ajh/sse"):
                self.events()
                return
            out = (json.dumps(record) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = answer


def dns_question(query):
    """The first question's name (lower case) and type, and where the question ends; None if malformed."""
    if len(query) < 12 or query[2] & 0x80 or int.from_bytes(query[4:6], "big") < 1:
        return None
    labels, i = [], 12
    while i < len(query) and query[i] != 0:
        n = query[i]
        if n > 63 or i + 1 + n > len(query):
            return None
        labels.append(query[i + 1:i + 1 + n].decode("ascii", "replace").lower())
        i += 1 + n
    if i + 5 > len(query):
        return None
    return ".".join(labels), int.from_bytes(query[i + 1:i + 3], "big"), i + 5


def dns_serve():
    by_name = {name: address for address, name in NAMES.items() if "." in name}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((DNS_ADDRESS, 53))
    while True:
        query, peer = sock.recvfrom(512)
        q = dns_question(query)
        if q is None:
            continue
        name, qtype, end = q
        address, ttl = by_name.get(name), 60
        if name.endswith(REBIND_ZONE):
            first = rebind_first.setdefault(name, time.monotonic())
            address, ttl = "203.0.113.10" if time.monotonic() - first < REBIND_AFTER else "127.0.0.1", 0
        with seen_lock:
            seen.append({"server": "dns", "address": DNS_ADDRESS, "name": name, "type": qtype,
                         "answer": address if qtype == 1 else None})
        answer = b""
        if address and qtype == 1:
            answer = b"\xc0\x0c" + (1).to_bytes(2, "big") + (1).to_bytes(2, "big") + ttl.to_bytes(4, "big")
            answer += (4).to_bytes(2, "big") + socket.inet_aton(address)
        # A response: the id, QR and RD copied, RA; NOERROR where the name is known, else NXDOMAIN.
        flags = 0x8000 | (query[2] & 0x01) << 8 | 0x0080 | (0 if address else 3)
        header = query[0:2] + flags.to_bytes(2, "big") + (1).to_bytes(2, "big")
        header += (1 if answer else 0).to_bytes(2, "big") + bytes(4)
        sock.sendto(header + query[12:end] + answer, peer)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global git_root
    cert, key, ready, git_root = sys.argv[1:5]
    plain = Server(("0.0.0.0", 80), Handler)
    secure = Server(("0.0.0.0", 443), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    threading.Thread(target=dns_serve, daemon=True).start()
    with open(ready, "w") as f:
        f.write("ready\n")
    secure.serve_forever()


if __name__ == "__main__":
    main()
