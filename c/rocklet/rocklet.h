/* rocklet.h: what the rocklet's files share. routes.c turns HTTP requests
 * into calls of the endpoint families (session.c, exec.c, files.c); each
 * answers through the reply helpers below, now or when its work is done.
 * main.c owns the loop, the socket, signals and shutdown. */
#ifndef ROCK_ROCKLET_H
#define ROCK_ROCKLET_H

#include <jansson.h>
#include <uv.h>

#include "../core/err.h"
#include "../http/server.h"

#define ROCKLET_VERSION "0.1.0"
#define ROCKLET_DEFAULT_MAX_OUTPUT (1u << 20)

typedef struct {
  uv_loop_t *loop;
  char dir[1024];     /* work dir: session files, spilled outputs */
  int shutting_down;
} rocklet_t;

extern rocklet_t rocklet;

/* Answer with a JSON object (stolen) or with an error {code, message}. */
void reply_json(rock_http_req_t *req, json_t *obj);
void reply_error(rock_http_req_t *req, rock_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Argument readers: set *err (if not already set) when a field is missing
 * or has the wrong type; return a default when it is absent and optional. */
const char *arg_string(json_t *o, const char *key, int required, char **err);
double arg_number(json_t *o, const char *key, double dflt, char **err);

/* Endpoint families. Each takes ownership of req and answers it once. */
void session_create(rock_http_req_t *req, json_t *args);
void session_run(rock_http_req_t *req, json_t *args);
void session_interrupt(rock_http_req_t *req, json_t *args);
void session_close(rock_http_req_t *req, json_t *args);
void sessions_close_all(void);
void exec_run(rock_http_req_t *req, json_t *args);
void files_read(rock_http_req_t *req, json_t *args);
void files_write(rock_http_req_t *req, json_t *args);
#include "upload.h" /* /upload: upload_on_headers (the server's on_headers), upload_run */

/* Shutdown (main.c): kill every process we started and exit. */
void rocklet_shutdown(const char *why);
/* Renew the idle lease (main.c). */
void rocklet_touch(void);
/* Seconds left of the idle lease; -1 when there is none. */
double rocklet_lease_left(void);

#endif
