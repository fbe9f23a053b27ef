#!/usr/bin/env python3
"""registry.py: a minimal Docker registry (HTTP API v2, pull only) on
127.0.0.1, serving the one image of a `docker save` tar under any name, so
the tests can pull for real with no registry reachable. Engines treat
127.0.0.0/8 registries as insecure, so plain HTTP is accepted.

  registry.py SAVE.tar [--fail-first N]
Prints the port it listens on, then serves until killed. --fail-first
answers the first N manifest requests with 500 (to exercise retries).
"""
import gzip, hashlib, http.server, json, sys, tarfile

MANIFEST_V2 = "application/vnd.docker.distribution.manifest.v2+json"


def load(path):
    blobs = {}
    with tarfile.open(path) as t:
        m = json.load(t.extractfile("manifest.json"))[0]
        config = t.extractfile(m["Config"]).read()
        layers = []
        for name in m["Layers"]:
            gz = gzip.compress(t.extractfile(name).read(), mtime=0)
            d = "sha256:" + hashlib.sha256(gz).hexdigest()
            blobs[d] = gz
            layers.append({"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                           "size": len(gz), "digest": d})
    cd = "sha256:" + hashlib.sha256(config).hexdigest()
    blobs[cd] = config
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": MANIFEST_V2,
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                   "size": len(config), "digest": cd},
        "layers": layers}).encode()
    return manifest, blobs


def main():
    manifest, blobs = load(sys.argv[1])
    fail = int(sys.argv[sys.argv.index("--fail-first") + 1]) if "--fail-first" in sys.argv else 0
    mdigest = "sha256:" + hashlib.sha256(manifest).hexdigest()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, code, body=b"", ctype="application/json", extra=None):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self):
            nonlocal fail
            p = self.path.split("?")[0]
            if p in ("/v2/", "/v2"):
                return self.reply(200, b"{}")
            if "/manifests/" in p:
                if fail > 0:
                    fail -= 1
                    return self.reply(500, b'{"errors":[{"code":"UNKNOWN","message":"failing on purpose"}]}')
                return self.reply(200, manifest, MANIFEST_V2, {"Docker-Content-Digest": mdigest})
            if "/blobs/" in p:
                d = p.rsplit("/", 1)[1]
                if d in blobs:
                    return self.reply(200, blobs[d], "application/octet-stream",
                                      {"Docker-Content-Digest": d})
            return self.reply(404, b'{"errors":[{"code":"NAME_UNKNOWN","message":"not here"}]}')

        do_HEAD = do_GET

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
