/* routes_exec.c: /execute on the wire. command is a list (run as is, PATH
 * searched) or a string (run by /bin/sh -c); the process itself is
 * exec.c's. A client that goes away before the answer has the process
 * tree killed. With `Accept: application/octet-stream` the answer is raw
 * (a byte route): stdout's bytes then stderr's as the body, uncleaned,
 * the rest in X- headers (exit code, failure reason, stdout's length,
 * bytes dropped past max_output), one buffer from the pipe to the socket.
 * With `Accept: text/plain` the same answer carries the cleaned text (the
 * JSON answer's strings, byte for byte) with no JSON around it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "rocklet.h"
#include "session.h"

/* req->abort_arg for a raw answer, and for a text one */
static char raw_mark, text_mark;

/* The raw answer (or the text one: the same, the streams cleaned as the
 * JSON answer's are): stdout then stderr in stdout's own buffer. */
static void done_raw(rock_exec_result_t *r, rock_http_req_t *req, const char *type) {
  rock_buf_t body = r->out;
  r->out = (rock_buf_t){0};
  size_t out_len = body.len;
  if (r->err.len && rock_buf_append(&body, r->err.data, r->err.len)) {
    rock_buf_free(&body);
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for the answer");
    return;
  }
  char h[512];
  snprintf(h, sizeof h,
           "Content-Type: %s\r\nX-Exit-Code: %d\r\n"
           "X-Failure-Reason: %s\r\nX-Stdout-Length: %zu\r\n"
           "X-Stdout-Dropped: %" PRIu64 "\r\nX-Stderr-Dropped: %" PRIu64 "\r\n",
           type, r->exit_code, r->failure_reason, out_len, r->out_dropped, r->err_dropped);
  char *b = body.data ? body.data : strdup("");
  if (!b) {
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for the answer");
    return;
  }
  rock_http_respond_headers_take(req, 200, h, b, body.len);
  if (rocklet.touch) rocklet.touch();
}

static void done(rock_exec_result_t *r, void *data) {
  rock_http_req_t *req = data;
  if (req->abort_arg == &raw_mark || req->abort_arg == &text_mark) {
    done_raw(r, req, req->abort_arg == &raw_mark ? "application/octet-stream" : ROCKLET_TEXT_TYPE);
    return;
  }
  json_t *o = json_object();
  json_object_set_new(o, "exit_code", json_integer(r->exit_code));
  json_object_set_new(o, "failure_reason", json_string(r->failure_reason));
  const char *keys[] = {"stdout", "stderr"}, *texts[] = {r->out.data, r->err.data};
  size_t lens[] = {r->out.len, r->err.len};
  reply_json_texts(req, o, 2, keys, texts, lens); /* escaped once, not by jansson */
}

static void aborted(rock_http_req_t *req) { rock_exec_kill(req->user, "cancelled"); }

void exec_run(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  json_t *command = json_object_get(args, "command");
  rock_exec_opts_t o = {0};
  o.timeout = arg_seconds(args, "timeout", 0, ROCK_SESSION_MAX_TIMEOUT, &err);
  o.max_output = arg_size(args, "max_output", ROCKLET_DEFAULT_MAX_OUTPUT,
                          ROCK_SESSION_MIN_OUTPUT, ROCK_SESSION_MAX_OUTPUT, &err);
  o.cwd = arg_string(args, "cwd", 0, &err);
  const char **env = arg_env(args, "env", &err);
  o.env = env;
  if (!err && !json_is_string(command) &&
      !(json_is_array(command) && json_array_size(command) > 0))
    err = strdup("field 'command' must be a string or a non-empty list");
  size_t argc = json_is_array(command) ? json_array_size(command) : 3;
  char **argv = err ? NULL : calloc(argc + 1, sizeof *argv);
  if (!err && !argv) {
    free(env);
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for the command");
    return;
  }
  if (!err && json_is_array(command)) {
    for (size_t i = 0; i < argc; i++) {
      json_t *a = json_array_get(command, i);
      if (!json_is_string(a)) {
        err = strdup("every item of 'command' must be a string");
        break;
      }
      argv[i] = (char *)json_string_value(a);
    }
  } else if (!err) {
    argv[0] = "/bin/sh";
    argv[1] = "-c";
    argv[2] = (char *)json_string_value(command);
  }
  if (err) {
    free(argv);
    free(env);
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  o.argv = argv;
  int as = rocklet_answer_as(req);
  o.raw = as == ROCKLET_RAW;
  req->abort_arg = as == ROCKLET_RAW ? &raw_mark : as == ROCKLET_TEXT ? &text_mark : NULL;
  char msg[512];
  rock_exec_t *job;
  rock_err rc = rock_exec_run(rocklet.loop, &o, done, req, &job, msg, sizeof msg);
  free(argv);
  free(env);
  if (rc) {
    reply_error(req, rc, "%s", msg);
    return;
  }
  req->user = job;
  req->on_abort = aborted;
}
