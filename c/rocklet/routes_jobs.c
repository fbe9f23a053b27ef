/* routes_jobs.c: /jobs/start, /jobs/wait, /jobs and /jobs/kill on the
 * wire, and the callers waiting for a job to end. The jobs themselves are
 * jobs.c's. A waiting client that goes away stops waiting; its job goes on.
 * At shutdown every waiter is answered (jobs_close_all). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "rocklet.h"
#include "session.h"

/* One caller of /jobs/wait on a running job, until it ends or the
 * timeout. Freed in its timer's close callback. */
typedef struct waiter {
  struct waiter *next;
  rock_http_req_t *req;
  unsigned long id;
  size_t max_output;
  uv_timer_t timer;
} waiter_t;

static waiter_t *waiters;
static int hooked;

static json_t *record_json(const rock_job_t *j) {
  json_t *o = json_object();
  json_object_set_new(o, "job_id", json_integer((json_int_t)j->id));
  json_object_set_new(o, "pid", json_integer(j->pid));
  json_object_set_new(o, "running", json_boolean(j->running));
  json_object_set_new(o, "exit_code", j->running ? json_null() : json_integer(j->exit_code));
  json_object_set_new(o, "output_file", json_string(j->output_file));
  json_object_set_new(o, "command", json_string(j->command));
  json_object_set_new(o, "started_at", json_real(j->started_at));
  json_object_set_new(o, "ended_at", j->running ? json_null() : json_real(j->ended_at));
  return o;
}

/* Answer req with the job's record and its output. */
static void answer(rock_http_req_t *req, const rock_job_t *j, size_t max_output) {
  rock_buf_t out = {0};
  uint64_t dropped, total;
  if (rock_jobs_output(j, max_output, &out, &dropped, &total)) {
    rock_buf_free(&out);
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for the output of job %lu", j->id);
    return;
  }
  json_t *o = record_json(j);
  json_object_set_new(o, "truncated", json_boolean(dropped > 0));
  json_object_set_new(o, "dropped_bytes", json_integer((json_int_t)dropped));
  json_object_set_new(o, "output_bytes", json_integer((json_int_t)total));
  const char *key = "output", *text = out.data;
  size_t len = out.len;
  reply_json_texts(req, o, 1, &key, &text, &len); /* escaped once, not by jansson */
  rock_buf_free(&out);
}

static void waiter_free(uv_handle_t *h) { free(h->data); }

/* Take w off the list and close it; its request was answered. */
static void waiter_drop(waiter_t *w) {
  waiter_t **pp = &waiters;
  while (*pp && *pp != w) pp = &(*pp)->next;
  if (*pp) *pp = w->next;
  uv_close((uv_handle_t *)&w->timer, waiter_free);
}

static void on_end(rock_job_t *j) {
  for (waiter_t *w = waiters, *next; w; w = next) {
    next = w->next;
    if (w->id != j->id) continue;
    answer(w->req, j, w->max_output);
    waiter_drop(w);
  }
}

static void on_timeout(uv_timer_t *t) {
  waiter_t *w = t->data;
  rock_job_t *j = rock_jobs_find(w->id); /* running: never dropped */
  if (j) answer(w->req, j, w->max_output);
  else reply_error(w->req, ROCK_E_NOT_FOUND, "no job %lu", w->id);
  waiter_drop(w);
}

static void wait_aborted(rock_http_req_t *req) {
  waiter_t *w = req->user;
  reply_error(req, ROCK_E_CANCELLED, "the client went away"); /* frees the orphan */
  waiter_drop(w);
}

/* The job a call names, or NULL (answered). */
static rock_job_t *job_arg(rock_http_req_t *req, json_t *args) {
  json_t *v = json_object_get(args, "job_id");
  if (!json_is_integer(v) || json_integer_value(v) <= 0) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "field 'job_id' must be a job's id (an integer > 0)");
    return NULL;
  }
  rock_job_t *j = rock_jobs_find((unsigned long)json_integer_value(v));
  if (!j)
    reply_error(req, ROCK_E_NOT_FOUND, "no job %lld (never started, or its record was dropped)",
                (long long)json_integer_value(v));
  return j;
}

void jobs_start(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  if (!hooked) {
    rock_jobs_set_on_end(on_end);
    hooked = 1;
  }
  rock_job_opts_t o = {.dir = rocklet.dir};
  o.command = arg_string(args, "command", 1, &err);
  o.cwd = arg_string(args, "cwd", 0, &err);
  o.output_file = arg_string(args, "output_file", 0, &err);
  const char **env = arg_env(args, "env", &err);
  o.env = env;
  if (!err && o.output_file && !*o.output_file)
    err = strdup("field 'output_file' must be a path (or absent)");
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    free(env);
    return;
  }
  rock_job_t *j;
  char msg[PATH_MAX + 256];
  rock_err rc = rock_jobs_start(&o, &j, msg, sizeof msg);
  free(env);
  if (rc) reply_error(req, rc, "%s", msg);
  else reply_json(req, record_json(j));
}

void jobs_wait(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  json_t *tv = json_object_get(args, "timeout");
  int forever = !tv || json_is_null(tv);
  double timeout = arg_seconds(args, "timeout", 0, ROCK_SESSION_MAX_TIMEOUT, &err);
  size_t max_output = arg_size(args, "max_output", ROCKLET_DEFAULT_MAX_OUTPUT,
                               ROCK_SESSION_MIN_OUTPUT, ROCK_SESSION_MAX_OUTPUT, &err);
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  rock_job_t *j = job_arg(req, args);
  if (!j) return;
  if (!j->running || (!forever && timeout == 0)) {
    answer(req, j, max_output);
    return;
  }
  waiter_t *w = calloc(1, sizeof *w);
  if (!w) {
    reply_error(req, ROCK_E_NO_MEMORY, "no memory to wait for job %lu", j->id);
    return;
  }
  w->req = req;
  w->id = j->id;
  w->max_output = max_output;
  uv_timer_init(rocklet.loop, &w->timer);
  w->timer.data = w;
  if (!forever) uv_timer_start(&w->timer, on_timeout, (uint64_t)(timeout * 1000), 0);
  w->next = waiters;
  waiters = w;
  req->user = w;
  req->on_abort = wait_aborted;
}

void jobs_list(rock_http_req_t *req, json_t *args) {
  (void)args;
  json_t *list = json_array();
  for (rock_job_t *j = rock_jobs_first(); j; j = j->next) json_array_append_new(list, record_json(j));
  reply_json(req, json_pack("{s:o}", "jobs", list));
}

static const struct {
  const char *name;
  int sig;
} signals[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT}, {"HUP", SIGHUP},
               {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"STOP", SIGSTOP},
               {"CONT", SIGCONT}};

/* "TERM", "SIGTERM" or a number from 1 to 64; SIGTERM when absent; 0 when bad. */
static int signal_arg(json_t *v) {
  if (!v || json_is_null(v)) return SIGTERM;
  if (json_is_integer(v)) {
    json_int_t n = json_integer_value(v);
    return n >= 1 && n <= 64 ? (int)n : 0;
  }
  if (!json_is_string(v)) return 0;
  const char *s = json_string_value(v);
  if (!strncmp(s, "SIG", 3)) s += 3;
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (!strcmp(s, signals[i].name)) return signals[i].sig;
  return 0;
}

void jobs_kill(rock_http_req_t *req, json_t *args) {
  int sig = signal_arg(json_object_get(args, "signal"));
  if (!sig) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT,
                "field 'signal' must be a signal name (TERM, KILL, INT, HUP, QUIT, USR1, USR2, "
                "STOP, CONT, with or without SIG) or a number from 1 to 64");
    return;
  }
  rock_job_t *j = job_arg(req, args);
  if (!j) return;
  int sent = rock_jobs_kill(j, sig);
  reply_json(req, json_pack("{s:I, s:b, s:b}", "job_id", (json_int_t)j->id, "signalled", sent,
                            "running", j->running));
}

void jobs_close_all(void) {
  while (waiters) {
    waiter_t *w = waiters;
    reply_error(w->req, ROCK_E_SANDBOX_NOT_ALIVE, "rocklet is shutting down");
    waiter_drop(w);
  }
}
