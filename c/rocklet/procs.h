/* procs.h: the rocklet's children and their trees.
 * One SIGCHLD watcher reaps every child (the rocklet is a subreaper, or PID 1
 * in a container, so orphans land here too) and tells the owner of a
 * watched pid how it ended. The /proc walkers find process trees so a stop
 * or timeout can kill descendants that left their process group. */
#ifndef ROCK_ROCKLET_PROCS_H
#define ROCK_ROCKLET_PROCS_H

#include <sys/types.h>
#include <uv.h>

typedef void (*rock_exit_fn)(void *data, pid_t pid, int wstatus);

int rock_procs_init(uv_loop_t *loop);
void rock_procs_close(void);
/* Call fn once when pid is reaped. pid must be our child, watched before
 * the loop next runs. Returns 0 or -ENOMEM (then fn is never called: the
 * caller kills the child and reports the failure). */
int rock_procs_watch(pid_t pid, rock_exit_fn fn, void *data);

/* Fill out with the pids in process group pgrp (if > 0) or session sid
 * (if > 0), the descendants of root (if > 0) and of every pid found,
 * transitively; exclude is never listed. Returns the count (<= max). */
int rock_procs_collect(pid_t pgrp, pid_t sid, pid_t root, pid_t exclude,
                       pid_t *out, int max);
/* Send sig to every pid of the list. */
void rock_procs_signal(const pid_t *pids, int n, int sig);
/* SIGKILL every descendant of this process until none is left. */
void rock_procs_kill_all(void);

#endif
