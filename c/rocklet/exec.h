/* exec.h: one process outside any session, libuv-shaped, no HTTP inside.
 * The process gets its own session and process group (child.c), stdin
 * /dev/null, stdout and stderr on pipes (each captured within a cap, head
 * and tail kept), optional cwd and env on top of the rocklet's, and a
 * timeout after which its whole tree is killed. done_cb runs once, after
 * exit and both pipes' EOF (or a short drain past exit, when a background
 * grandchild keeps them open). routes_exec.c puts it on the wire. */
#ifndef ROCK_ROCKLET_EXEC_H
#define ROCK_ROCKLET_EXEC_H

#include <uv.h>

#include "../core/buf.h"
#include "../core/err.h"

typedef struct rock_exec rock_exec_t;

typedef struct {
  char *const *argv;       /* argv[0] searched on PATH; NULL-ended */
  const char *cwd;         /* NULL: the rocklet's */
  const char *const *env;  /* {key, value, ..., NULL} or NULL */
  double timeout;          /* seconds, 0 = none, <= ROCK_SESSION_MAX_TIMEOUT */
  size_t max_output;       /* bytes kept per stream */
  int raw;                 /* out and err as the bytes came, not cleaned */
} rock_exec_opts_t;

typedef struct {
  rock_buf_t out, err;     /* cleaned, capped stdout and stderr (raw: the
                            * bytes, head and tail joined past the cap) */
  uint64_t out_dropped, err_dropped; /* bytes left out past the cap */
  int exit_code;           /* or 128 + signal */
  const char *failure_reason; /* "", "timeout", "cancelled" */
} rock_exec_result_t;

/* done_cb may take r->out and r->err (zeroing them): they are freed after. */
typedef void (*rock_exec_done_fn)(rock_exec_result_t *r, void *data);

/* Start the process. Returns 0 (done_cb follows; *out, if out is not NULL,
 * identifies the job until then), or an error at once with msg filled:
 * SPAWN_FAILED (pipe, vfork, exec, cwd: the child's errno), NO_MEMORY,
 * INVALID_ARGUMENT. */
rock_err rock_exec_run(uv_loop_t *loop, const rock_exec_opts_t *o,
                       rock_exec_done_fn done_cb, void *data,
                       rock_exec_t **out, char *msg, size_t msg_cap);
/* Kill the job's whole tree now; it ends with failure_reason reason. */
void rock_exec_kill(rock_exec_t *j, const char *reason);

#endif
