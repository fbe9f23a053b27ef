/* rocklet.h: what the rocklet's endpoint families share: the loop, the
 * work dir, the limits and defaults of the wire, and the families' entry
 * points (routes_session.c, routes_exec.c, routes_jobs.c, files.c), which routes.c routes
 * to. Answers go through reply.h. main.c fills `rocklet` and owns the
 * socket, signals and shutdown. */
#ifndef ROCK_ROCKLET_H
#define ROCK_ROCKLET_H

#include <jansson.h>
#include <uv.h>

#include "../core/err.h"
#include "../http/server.h"
#include "reply.h"

#define ROCKLET_VERSION "0.1.0"
#define ROCKLET_DEFAULT_MAX_OUTPUT (1u << 20)
/* create_session's startup_timeout when the caller gives none (seconds) */
#define ROCKLET_DEFAULT_STARTUP_TIMEOUT 60.0

typedef struct {
  uv_loop_t *loop;
  char dir[1024];     /* work dir: session files, spilled outputs */
  int shutting_down;
  /* set by main.c */
  void (*shutdown)(const char *why); /* kill every process we started, exit */
  double (*lease_left)(void);        /* seconds of the idle lease, -1: none */
  void (*touch)(void);               /* renew the idle lease */
} rocklet_t;

extern rocklet_t rocklet;

/* Endpoint families. Each takes ownership of req and answers it once. */
void session_create(rock_http_req_t *req, json_t *args);
void session_run(rock_http_req_t *req, json_t *args);
void session_interrupt(rock_http_req_t *req, json_t *args);
void session_close(rock_http_req_t *req, json_t *args);
/* Shutdown: answer what waits, kill every session. */
void sessions_close_all(void);
void exec_run(rock_http_req_t *req, json_t *args);
void files_read(rock_http_req_t *req, json_t *args);
void files_write(rock_http_req_t *req, json_t *args);
/* /file (bytes.c): GET/HEAD streams a file's bytes, PUT ends upload.c's
 * streamed body; it reads its arguments from the query string. */
void bytes_file(rock_http_req_t *req);
/* The editor (routes_editor.c): args is NULL, the body is parsed off the
 * loop. editor_close_all answers the calls that have not started and
 * calls done (on the loop) once none runs: at once when none does. */
void editor_run(rock_http_req_t *req, json_t *args);
void editor_close_all(void (*done)(void));
/* Background jobs (routes_jobs.c); jobs_close_all answers their waiters. */
void jobs_start(rock_http_req_t *req, json_t *args);
/* routes_env.c: process environments */
void env_start(rock_http_req_t *req, json_t *args);
void env_call(rock_http_req_t *req, json_t *args);
void env_stop(rock_http_req_t *req, json_t *args);
void jobs_wait(rock_http_req_t *req, json_t *args);
void jobs_list(rock_http_req_t *req, json_t *args);
void jobs_kill(rock_http_req_t *req, json_t *args);
void jobs_close_all(void);
#include "upload.h" /* /upload: upload_on_headers (the server's on_headers), upload_run */

/* The router (routes.c), main.c's server handler. */
void routes_handle(rock_http_req_t *req, void *data);
/* A request body as every endpoint takes it: a JSON object (an empty body
 * is {}) whose strings hold no NUL but in the field any_nul (may be NULL).
 * NULL on error, with the code and message for the answer. Thread-safe. */
json_t *routes_parse(const char *body, size_t len, const char *any_nul, rock_err *code,
                     char *msg, size_t msg_size);

#endif
