/* child.h: what every process the rocklet starts does between fork and
 * exec, written once for bash sessions (bash.c) and /execute (exec.c):
 * signal mask and dispositions back to defaults, a session and process
 * group of its own, the caller's environment, its cwd; and how it tells the
 * parent why it could not start (an errno on a status pipe). */
#ifndef ROCK_ROCKLET_CHILD_H
#define ROCK_ROCKLET_CHILD_H

#include "users.h"

/* In the child: empty signal mask, default dispositions, setsid(). With
 * die_with_parent, SIGKILL when the rocklet dies, even by kill -9 (bash
 * needs none: the PTY's hangup ends it and its jobs). */
void rock__child_preamble(int die_with_parent);
/* In the child: setenv each pair of env = {key, value, key, value, ...,
 * NULL} (env may be NULL), then chdir(cwd) if cwd. Returns 0 or errno. */
int rock__child_setup(const char *const *env, const char *cwd);
/* In the child: become user u (NULL: stay as we are): its groups, gid and
 * uid (root is needed, unless u is already who we are), and HOME, USER,
 * LOGNAME. Returns 0 or errno. */
int rock__child_become(const rock_user_t *u);
/* In the child: write err to status_fd, then _exit as a shell would
 * (127 for ENOENT, else 126). Never returns. */
void rock__child_fail(int status_fd, int err) __attribute__((noreturn));
/* In the parent, after closing its copy of the status pipe's write end:
 * wait for exec (EOF: returns 0) or the child's errno. */
int rock__child_status(int status_fd);

#endif
