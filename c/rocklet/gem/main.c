/* main.c: `rocklet gem ENV_ID` (and `rocklet gem --list`): one shipped
 * environment as a process environment. Reads one JSON object per line on
 * stdin and answers one per line on stdout (docs/environments.md):
 *   {"op":"reset","seed":N}     -> {"observation","info"}
 *   {"op":"step","action":TEXT} -> {"observation","reward","terminated","truncated","info"}
 *   {"op":"close"}              -> {"closed":true}, then exits 0
 * anything else -> {"error":MESSAGE}, and the process goes on. A reset
 * without a seed takes one from /dev/urandom. As GEM's environments reset
 * when made, the game is reset with such a seed at start: a step before
 * any reset plays that episode. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gem.h"

const char *const gem_env_ids[] = {
    "game:GuessTheNumber-v0-easy", "game:GuessTheNumber-v0-hard", "game:GuessTheNumber-v0-random",
    "game:Sokoban-v0-easy",        "game:Sokoban-v0-hard",        "game:Sokoban-v0-random",
    NULL};

gem_env *gem_make(const char *id) {
  for (int i = 0; gem_env_ids[i]; i++)
    if (!strcmp(id, gem_env_ids[i])) return i < 3 ? gem_guess_make(i) : gem_sokoban_make(i - 3);
  return NULL;
}

int gem_make_known(const char *id) {
  for (int i = 0; gem_env_ids[i]; i++)
    if (!strcmp(id, gem_env_ids[i])) return 1;
  return 0;
}

char *gem_fmt(const char *fmt, ...) {
  va_list ap;
  char probe[1]; /* a real buffer: GCC's -Wformat-truncation dislikes NULL here */
  va_start(ap, fmt);
  int n = vsnprintf(probe, sizeof probe, fmt, ap);
  va_end(ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  if (!s) abort();
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

int gem_last_boxed(const char *a, int (*ok)(const char *, size_t), char *out, size_t cap) {
  static const char tag[] = "\\boxed{";
  int found = 0;
  for (const char *p = strstr(a, tag); p; p = strstr(p + 1, tag)) {
    const char *s = p + sizeof tag - 1, *e = strchr(s, '}');
    if (!e) break;
    size_t n = (size_t)(e - s);
    if (n < cap && ok(s, n)) {
      memcpy(out, s, n);
      out[n] = 0;
      found = 1;
    }
  }
  return found;
}

static void answer(json_t *o) {
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  fputs(s ? s : "{\"error\":\"out of memory\"}", stdout);
  fputc('\n', stdout);
  fflush(stdout);
  free(s);
}

static void error(const char *msg) { answer(json_pack("{s:s}", "error", msg)); }

static uint64_t fresh_seed(void) {
  uint64_t s = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (read(fd, &s, sizeof s) != (ssize_t)sizeof s) s ^= (uint64_t)clock();
    close(fd);
  }
  return s;
}

int gem_main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[2], "--list")) {
    for (int i = 0; gem_env_ids[i]; i++) puts(gem_env_ids[i]);
    return 0;
  }
  gem_env *env = argc == 3 ? gem_make(argv[2]) : NULL;
  if (!env) {
    fprintf(stderr, "usage: rocklet gem ENV_ID | --list\n");
    if (argc == 3) fprintf(stderr, "rocklet gem: unknown environment %s\n", argv[2]);
    return 2;
  }
  gem_rng first = {fresh_seed()}; /* GEM's __init__ calls reset() */
  free(env->reset(env, &first));
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, stdin) >= 0) {
    json_error_t jerr;
    json_t *req = json_loads(line, 0, &jerr);
    const char *op = req ? json_string_value(json_object_get(req, "op")) : NULL;
    if (!req || !json_is_object(req)) {
      error("each line must be one JSON object");
    } else if (!op) {
      error("op must be a string: reset, step or close");
    } else if (!strcmp(op, "reset")) {
      json_t *js = json_object_get(req, "seed");
      if (js && !json_is_null(js) && !json_is_integer(js)) {
        error("seed must be an integer or null");
      } else {
        gem_rng rng = {js && json_is_integer(js) ? (uint64_t)json_integer_value(js)
                                                  : fresh_seed()};
        char *obs = env->reset(env, &rng);
        answer(json_pack("{s:s, s:{s:s}}", "observation", obs, "info", "suffix", env->suffix));
        free(obs);
      }
    } else if (!strcmp(op, "step")) {
      const char *action = json_string_value(json_object_get(req, "action"));
      if (!action) error("step wants action, a string");
      else {
        gem_step_t r;
        env->step(env, action, &r);
        answer(json_pack("{s:s, s:f, s:b, s:b, s:{s:s}}", "observation", r.observation, "reward",
                         r.reward, "terminated", r.terminated, "truncated", r.truncated, "info",
                         "suffix", env->suffix));
        free(r.observation);
      }
    } else if (!strcmp(op, "close")) {
      json_decref(req);
      answer(json_pack("{s:b}", "closed", 1));
      break;
    } else {
      error("unknown op: want reset, step or close");
    }
    json_decref(req);
  }
  free(line);
  env->free(env);
  return 0;
}
