/* upload.c: POST (or PUT) /upload?path=<url-encoded path> and PUT
 * /file?path=..., the file's bytes as the raw body. The body is streamed as it arrives to a temp file next to the
 * target (replace.c), never held in memory, and renamed into place once
 * complete; parents are created. A client that goes away mid-body leaves
 * nothing behind. Small contents can also go through /write_file (files.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replace.h"
#include "reply.h"
#include "upload.h"

static void upload_drop(rock_http_req_t *req) {
  rock_replace_t *r = req->user;
  req->user = NULL;
  if (!r) return;
  rock_replace_abort(r);
  free(r);
}

void upload_on_headers(rock_http_req_t *req, void *data) {
  (void)data;
  int file = !strcmp(req->path, "/file");
  if (file && strcmp(req->method, "PUT")) return; /* GET, HEAD: bytes.c */
  if (!file && strcmp(req->path, "/upload")) return;
  if (strcmp(req->method, "POST") && strcmp(req->method, "PUT")) {
    reply_error(req, ROCK_E_BAD_REQUEST, "upload takes POST, not %s", req->method);
    return;
  }
  char *path = query_arg(req->query, "path");
  if (!path || !*path) {
    free(path);
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s needs ?path=<url-encoded path>",
                file ? "PUT /file" : "upload");
    return;
  }
  rock_replace_t *r = malloc(sizeof *r);
  int rc = r ? rock_replace_open(r, path) : -ENOMEM;
  if (rc) {
    free(r);
    reply_replace_error(req, "upload", path, rc);
    free(path);
    return;
  }
  free(path);
  req->user = r;
  req->body_fd = r->fd;
  req->max_body = UINT64_MAX; /* bounded by the disk, not by memory */
  req->on_drop = upload_drop;
}

void upload_run(rock_http_req_t *req, json_t *args) {
  (void)args;
  rock_replace_t *r = req->user;
  if (!r) { /* the server was started without upload_on_headers */
    reply_error(req, ROCK_E_INTERNAL, "upload: the body was not streamed");
    return;
  }
  req->user = NULL;
  int rc = -req->body_err;
  if (rc) rock_replace_abort(r);
  else rc = rock_replace_commit(r);
  if (rc) {
    reply_error(req, ROCK_E_IO, "upload %s: %s", r->path, strerror(-rc));
    free(r);
    return;
  }
  char msg[PATH_MAX + 48];
  snprintf(msg, sizeof msg, "wrote %llu bytes to %s",
           (unsigned long long)req->body_bytes, r->path);
  free(r);
  reply_json(req, json_pack("{s:b, s:s}", "success", 1, "message", msg));
}
