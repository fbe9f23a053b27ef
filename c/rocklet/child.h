/* child.h: what every process the rocklet starts does between fork and
 * exec, written once for bash sessions (bash.c), jobs (jobs.c) and
 * /execute (exec.c): signal mask and dispositions back to defaults, a
 * session and process group of its own, the caller's environment, its cwd;
 * and how it tells the parent why it could not start (an errno on a status
 * pipe). /execute starts its argv with rock__child_spawn instead: vfork
 * and the same preamble with no copy of the rocklet's memory. */
#ifndef ROCK_ROCKLET_CHILD_H
#define ROCK_ROCKLET_CHILD_H

#include <sys/types.h>

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

/* Start argv directly, with no shell and no fork of the rocklet's memory:
 * vfork, then in the child the preamble above (die_with_parent on), fds
 * 0, 1, 2 from fd0, fd1, fd2, chdir(cwd) if cwd, and execve of argv[0]
 * searched on envp's PATH as execvp searches (relative to cwd; a file that
 * is not an executable format is run by /bin/sh, as execvp does). envp is
 * the whole environment (child_env builds it). Signals are blocked in the
 * rocklet meanwhile, so none of its handlers runs in the child. Returns
 * the pid, or -1 with *err the errno of what failed (vfork, dup2, chdir,
 * exec: the child is then gone, reaped as any child). */
pid_t rock__child_spawn(char *const *argv, char *const *envp, const char *cwd, int fd0,
                        int fd1, int fd2, int *err);
/* The environment for rock__child_spawn: the rocklet's with env = {key,
 * value, ..., NULL} on top (NULL: the rocklet's own, not copied). One
 * malloc'ed block: free it with free(). NULL if out of memory. */
char **rock__child_env(const char *const *env);

#endif
