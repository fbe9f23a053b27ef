/* engine.h: a Docker Engine API (v1.41) client over a unix socket, on the
 * shared libcurl client and libuv loop. The same calls drive podman's
 * Docker-compatible socket (`podman system service`).
 *
 * Each call is one named operation from a table (engine.c): its method, its
 * path template and whether its 404 means "no such image". Parameters fill
 * the path's {placeholders}; the rest become the query string. Bodies are
 * JSON text the caller encodes (Lua does, with cjson), or files for image
 * save/load. The answer's status becomes a rock_err with the engine's own
 * message, so callers never parse HTTP. lua_engine.c is the Lua face. */
#ifndef ROCK_ENGINE_H
#define ROCK_ENGINE_H

#include <stddef.h>

#include "../http/client.h"

/* Engine API version every path is prefixed with. */
#define ROCK_ENGINE_API "v1.41"

typedef struct {
  const char *socket;        /* the engine's unix socket; required */
  const char *op;            /* "container_create", ... (see engine.c) */
  const char *const *params; /* name, value, name, value, ..., NULL */
  const char *body;          /* JSON text, or NULL */
  size_t body_len;
  const char *body_file;     /* image_load: the tar to send */
  const char *out_file;      /* image_save: where the tar goes */
  void (*on_chunk)(void *data, const char *p, size_t n); /* image_pull */
  double timeout;            /* seconds; 0 = none */
  const char *headers[4];    /* filled by rock_engine_request */
} rock_engine_call_t;

typedef struct {
  rock_err err;        /* OK for 2xx and 304; else why */
  const char *message; /* set when err != OK: the engine's own words */
  long status;         /* HTTP status; 0 when the engine was not reached */
  const char *body;
  size_t body_len;
  char message_buf[512];
} rock_engine_result_t;

/* Fill req (and *url, to free after rock_http_client_request) for call.
 * The caller then runs req on its client, keeping its own context, and
 * reads the response with rock_engine_result. Returns ROCK_E_OK, or
 * invalid_argument (unknown op, a missing path parameter) with a reason
 * in *why. */
rock_err rock_engine_request(const rock_engine_call_t *call,
                             rock_http_request_t *req, char **url,
                             const char **why);

/* Turn a response to op into a result: 2xx/304 ok; 404 image_not_found
 * or not_found; 409 conflict; no answer engine_unavailable; else
 * engine_error; message from the engine's {"message": ...}. */
void rock_engine_result(const char *op, const rock_http_response_t *res,
                        rock_engine_result_t *out);

#endif
