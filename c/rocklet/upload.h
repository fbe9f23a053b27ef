/* upload.h: the /upload endpoint (upload.c). It needs the server's
 * on_headers hook (http/server.h) to pick its body sink before the body
 * is read: main.c sets rock_http_server_opts_t.on_headers to
 * upload_on_headers; routes.c maps /upload to upload_run. */
#ifndef ROCK_ROCKLET_UPLOAD_H
#define ROCK_ROCKLET_UPLOAD_H

#include <jansson.h>

#include "../http/server.h"

/* on_headers for every request: for /upload, open the temp file next to
 * the target and make it the body's sink (or answer the error at once);
 * other requests are left alone. */
void upload_on_headers(rock_http_req_t *req, void *data);
/* The complete /upload request: rename the file into place and answer
 * like /write_file ({success=true, message}). */
void upload_run(rock_http_req_t *req, json_t *args);

#endif
