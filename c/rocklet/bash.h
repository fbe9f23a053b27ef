/* bash.h: starting an interactive bash on a new PTY for a session.
 * bash gets the PTY as its controlling terminal and as stdout/stderr
 * (prompts and job notices, read and dropped by session.c), commands on a
 * pipe as its stdin, and the write end of the output pipe twice: at
 * ROCK_BASH_OUT_FD (commands write there) and ROCK_BASH_MARK_FD (only the
 * end marker uses it, and every line restores the first from it, so a
 * command that closes its output fd cannot stop the session answering).
 * session.c drives it; child.c holds the preamble shared with exec.c. */
#ifndef ROCK_ROCKLET_BASH_H
#define ROCK_ROCKLET_BASH_H

#include <stddef.h>
#include <sys/types.h>

#include "users.h"

/* A session of another user (remote_user) reads its command file through
 * this fd (as /proc/self/fd/252): no dir on the file's path need be open
 * to that user. */
#define ROCK_BASH_CMD_FD 252
#define ROCK_BASH_OUT_FD 253
#define ROCK_BASH_MARK_FD 254

typedef struct {
  pid_t pid;  /* bash: also its process group and session */
  int master; /* the PTY's master, non-blocking */
  int cmd_w;  /* the command pipe's write end (bash's stdin), non-blocking */
  int out_r;  /* the output pipe's read end, non-blocking */
} rock_bash_t;

/* Find bash on PATH (or the default path). Returns buf or NULL. */
const char *rock_bash_find(char *buf, size_t cap);
/* Start bash (path) with env pairs {k, v, ..., NULL} over the defaults
 * (PAGER=cat, TERM=dumb, ...) in cwd (NULL: ours). With user (else NULL)
 * bash runs as that user (child.c), owns its terminal, gets HOME, USER and
 * LOGNAME (env still wins), and cmd_fd at ROCK_BASH_CMD_FD. Returns 0 or
 * -errno; a cwd bash cannot enter is reported here (its errno), not as a
 * bash that exits at once. */
int rock_bash_spawn(rock_bash_t *b, const char *path, const char *const *env,
                    const char *cwd, const rock_user_t *user, int cmd_fd);

#endif
