/* envproc.h: process environments (docs/environments.md): a command in
 * the sandbox that answers one JSON line on stdout for each JSON line on
 * its stdin. The rocklet starts it, keeps it, relays one call at a time
 * with a timeout, and reports its death with its exit status and the tail
 * of its stderr. Its stdout carries answers only: a line that is not a
 * JSON object, a line nobody asked for, or a line longer than
 * ROCK_ENV_MAX_LINE breaks the protocol; the environment is then killed
 * and the call (and every later one) fails saying which line it was, so a
 * flood of garbage costs at most ROCK_ENV_MAX_LINE of memory. A call past
 * its timeout kills it too (its answer could no longer be told from the
 * next one's). */
#ifndef ROCK_ROCKLET_ENVPROC_H
#define ROCK_ROCKLET_ENVPROC_H

#include <jansson.h>
#include <sys/types.h>

#include "../core/err.h"

#define ROCK_ENV_MAX_LINE (8u << 20)
#define ROCK_ENV_MAX_LINE_TEXT "8 MiB"
#define ROCK_ENV_MAX (4096)
#define ROCK_ENV_STDERR_TAIL 2048

typedef struct rock_envproc rock_envproc_t;
/* The end of a call: answer (stolen) or NULL with code and msg. */
typedef void (*rock_envproc_fn)(void *data, json_t *answer, rock_err code, const char *msg);

/* Start argv (argv[0] searched on PATH) with env pairs on top of the
 * rocklet's ({k, v, ..., NULL}, may be NULL) in cwd (may be NULL). */
rock_err rock_envproc_start(char *const *argv, const char *const *env, const char *cwd,
                            rock_envproc_t **out, char *msg, size_t cap);
rock_envproc_t *rock_envproc_find(unsigned long id);
unsigned long rock_envproc_id(const rock_envproc_t *p);
pid_t rock_envproc_pid(const rock_envproc_t *p);
/* Send one line (a JSON object's text, without newline) and call fn with
 * the answer, once; past timeout seconds (> 0: the caller checks) it is
 * killed. A call already under way: ROCK_E_CONFLICT, at once. */
void rock_envproc_call(rock_envproc_t *p, const char *line, size_t len, double timeout,
                       rock_envproc_fn fn, void *data);
/* The caller of the call under way went away: its answer is dropped. */
void rock_envproc_forget(rock_envproc_t *p);
/* Kill it (its whole tree) and forget it; a call under way ends cancelled. */
void rock_envproc_stop(rock_envproc_t *p);
void rock_envproc_stop_all(void);
int rock_envproc_count(void);

#endif
