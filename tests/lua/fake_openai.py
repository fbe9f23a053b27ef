#!/usr/bin/env python3
"""fake_openai.py SCRIPT.json REQUESTS_LOG.jsonl: a scripted OpenAI-compatible
endpoint for tests (python3 stdlib only), on 127.0.0.1 at a free port, which
it prints alone on stdout's first line.

SCRIPT is a JSON list of responses, served in order, one per request, to
any path and method:
  {"status": 200, "headers": {...}, "body": <object or raw string>,
   "body_base64": the body's exact bytes, in base64 (any bytes, UTF-8 or not),
   "delay": seconds before answering, "drop": true (close the connection
   without answering), "truncate": N (announce the whole body's length, send
   only its first N bytes, close)}
Every field is optional (status 200, body {}). When the script runs out the
answer is 500 {"error": {"message": "script exhausted"}}.

Each request is appended to REQUESTS_LOG before it is answered, one JSON
object a line: {"n": 1-based index, "method", "path", "headers" (lowercased
names), "body" (the parsed JSON, or null), "raw" (the body text when it is
not JSON), "utf8" (whether the body's bytes are valid UTF-8: strict, as an
endpoint decoding JSON reads them; body and raw read bad bytes as U+FFFD)}. Every answer closes its connection, so a client never has a
dead kept-alive connection to retry behind the script's back.
Used by tests/lua/fake_openai.lua (the Lua side) and the LLM tests."""
import base64
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
log_path = sys.argv[2]
lock = threading.Lock()
served = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the requests log says it all
        pass

    def answer(self):
        global served
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        text = raw.decode("utf-8", "replace")
        try:
            raw.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
        try:
            body = json.loads(text) if text else None
            keep_raw = None
        except ValueError:
            body, keep_raw = None, text
        with lock:
            served += 1
            n = served
            entry = script[n - 1] if n <= len(script) else None
            with open(log_path, "a") as f:
                f.write(json.dumps({
                    "n": n, "method": self.command, "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body, "raw": keep_raw, "utf8": utf8}) + "\n")
                f.flush()
        if entry is None:
            entry = {"status": 500, "body": {"error": {
                "message": "script exhausted", "type": "server_error", "code": None}}}
        if entry.get("delay"):
            time.sleep(entry["delay"])
        self.close_connection = True
        if entry.get("drop"):
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        out = entry.get("body", {})
        data = (out if isinstance(out, str) else json.dumps(out)).encode("utf-8")
        if "body_base64" in entry:
            data = base64.b64decode(entry["body_base64"])
        self.send_response(entry.get("status", 200))
        headers = {"Content-Type": "application/json"}
        headers.update(entry.get("headers") or {})
        for k, v in headers.items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        if "truncate" in entry:
            self.wfile.write(data[:int(entry["truncate"])])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(data)

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True  # the client gave up (its timeout)

    do_POST = do_GET = do_PUT = do_DELETE = answer


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that went away is not news


srv = Server(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
