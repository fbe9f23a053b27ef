/* routes_env.c: process environments on the wire (envproc.c holds them):
 *   /env/start {command: [argv...] | env_id, env?, cwd?} -> {env, pid}
 *     env_id names a shipped environment: this rocklet's own `gem ENV_ID`
 *   /env/call {env, request: {...}, timeout?} -> the environment's answer,
 *     the JSON object it printed, as it is; timeout is above 0 (a call
 *     never waits forever: a step must not hang its caller)
 *   /env/stop {env} -> {stopped: true}
 * A client that goes away during a call stops waiting; its answer is
 * dropped when it comes. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envproc.h"
#include "gem/gem.h"
#include "rocklet.h"

#define ENV_DEFAULT_TIMEOUT 60.0
#define ENV_MAX_TIMEOUT 86400.0

static rock_envproc_t *env_arg(rock_http_req_t *req, json_t *args) {
  json_t *v = json_object_get(args, "env");
  if (!json_is_integer(v) || json_integer_value(v) <= 0) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT,
                "field 'env' must be an environment's id (an integer > 0, from /env/start)");
    return NULL;
  }
  rock_envproc_t *p = rock_envproc_find((unsigned long)json_integer_value(v));
  if (!p)
    reply_error(req, ROCK_E_NOT_FOUND, "no environment %lld (never started, or stopped)",
                (long long)json_integer_value(v));
  return p;
}

void env_start(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  json_t *cmd = json_object_get(args, "command");
  const char *env_id = arg_string(args, "env_id", 0, &err);
  const char *cwd = arg_string(args, "cwd", 0, &err);
  const char **env = arg_env(args, "env", &err);
  char *argv[258] = {0};
  char self[PATH_MAX];
  if (!err && !!cmd == !!env_id)
    err = strdup("give one of 'command' (a list of strings) and 'env_id' (a shipped environment)");
  if (!err && env_id) {
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!gem_make_known(env_id)) {
      reply_error(req, ROCK_E_NOT_FOUND, "no shipped environment '%s' (rocklet gem --list)",
                  env_id);
      free(env);
      return;
    }
    if (n <= 0) err = strdup("cannot find the rocklet's own binary (/proc/self/exe)");
    else self[n] = 0, argv[0] = self, argv[1] = "gem", argv[2] = (char *)env_id;
  } else if (!err) {
    size_t n = json_is_array(cmd) ? json_array_size(cmd) : 0;
    if (!n || n > 256) err = strdup("field 'command' must be a list of 1 to 256 strings");
    for (size_t i = 0; !err && i < n; i++)
      if (!(argv[i] = (char *)json_string_value(json_array_get(cmd, i))))
        err = strdup("field 'command' must be a list of strings");
  }
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    free(env);
    return;
  }
  rock_envproc_t *p;
  char msg[PATH_MAX + 256];
  rock_err rc = rock_envproc_start(argv, env, cwd, &p, msg, sizeof msg);
  free(env);
  if (rc) reply_error(req, rc, "%s", msg);
  else
    reply_json(req, json_pack("{s:I, s:i}", "env", (json_int_t)rock_envproc_id(p), "pid",
                              (int)rock_envproc_pid(p)));
}

static void call_done(void *data, json_t *answer, rock_err code, const char *msg) {
  rock_http_req_t *req = data;
  if (answer) reply_json(req, answer);
  else reply_error(req, code, "%s", msg);
}

static void call_aborted(rock_http_req_t *req) {
  rock_envproc_t *p = rock_envproc_find((unsigned long)(uintptr_t)req->abort_arg);
  if (p) rock_envproc_forget(p);
  reply_error(req, ROCK_E_CANCELLED, "the client went away"); /* frees the orphan */
}

void env_call(rock_http_req_t *req, json_t *args) {
  rock_envproc_t *p = env_arg(req, args);
  if (!p) return;
  char *err = NULL;
  double timeout = arg_seconds(args, "timeout", ENV_DEFAULT_TIMEOUT, ENV_MAX_TIMEOUT, &err);
  if (!err && !(timeout > 0))
    err = strdup("field 'timeout' must be a number of seconds above 0, up to 86400: a call always has one");
  json_t *r = json_object_get(args, "request");
  if (!err && !json_is_object(r)) err = strdup("field 'request' must be a JSON object");
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  char *line = json_dumps(r, JSON_COMPACT);
  if (!line) {
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for the request");
    return;
  }
  req->abort_arg = (void *)(uintptr_t)rock_envproc_id(p);
  req->on_abort = call_aborted;
  rock_envproc_call(p, line, strlen(line), timeout, call_done, req);
  free(line);
}

void env_stop(rock_http_req_t *req, json_t *args) {
  rock_envproc_t *p = env_arg(req, args);
  if (!p) return;
  rock_envproc_stop(p);
  reply_json(req, json_pack("{s:b}", "stopped", 1));
}
