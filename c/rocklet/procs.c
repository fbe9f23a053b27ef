/* procs.c: reaping children and walking process trees (see procs.h).
 * Tree walks read /proc/<pid>/stat once per call; they run on stop and
 * timeout only, never per command. */
#include "procs.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The watched pids: a table that grows as needed (no fixed limit: a
 * watch that cannot be recorded is refused, and the caller answers so). */
typedef struct {
  pid_t pid;
  rock_exit_fn fn;
  void *data;
} watch_t;
static watch_t *watches;
static size_t nwatch, capwatch;
static uv_signal_t sigchld;

static watch_t *lookup(pid_t pid) {
  for (size_t i = 0; i < nwatch; i++)
    if (watches[i].pid == pid) return &watches[i];
  return NULL;
}

static void reap(uv_signal_t *h, int sig) {
  (void)h;
  (void)sig;
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    watch_t *w = lookup(pid);
    if (!w) continue; /* an orphan we adopted */
    rock_exit_fn fn = w->fn;
    void *data = w->data;
    *w = watches[--nwatch]; /* fn may watch others */
    fn(data, pid, st);
  }
}

int rock_procs_init(uv_loop_t *loop) {
  uv_signal_init(loop, &sigchld);
  uv_unref((uv_handle_t *)&sigchld);
  return uv_signal_start(&sigchld, reap, SIGCHLD);
}

void rock_procs_close(void) {
  uv_close((uv_handle_t *)&sigchld, NULL);
  free(watches);
  watches = NULL;
  nwatch = capwatch = 0;
}

int rock_procs_watch(pid_t pid, rock_exit_fn fn, void *data) {
  if (nwatch == capwatch) {
    size_t cap = capwatch ? capwatch * 2 : 64;
    watch_t *w = realloc(watches, cap * sizeof *w);
    if (!w) return -ENOMEM;
    watches = w;
    capwatch = cap;
  }
  watches[nwatch++] = (watch_t){pid, fn, data};
  return 0;
}

typedef struct {
  pid_t pid, ppid, pgrp, sid;
} proc_t;

/* Snapshot of every process: pid, parent, process group. */
static int scan(proc_t **out) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  int n = 0, cap = 256;
  proc_t *v = malloc(cap * sizeof *v);
  struct dirent *e;
  while (v && (e = readdir(d))) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "re");
    if (!f) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *rp = strrchr(buf, ')'); /* comm may hold spaces and parens */
    int ppid, pgrp, sid;
    char state;
    if (!rp || sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
      continue;
    if (state == 'Z') continue;
    if (n == cap) {
      proc_t *nv = realloc(v, (cap *= 2) * sizeof *v);
      if (!nv) break;
      v = nv;
    }
    v[n++] = (proc_t){atoi(e->d_name), ppid, pgrp, sid};
  }
  closedir(d);
  *out = v;
  return v ? n : 0;
}

static int listed(const pid_t *out, int n, pid_t p) {
  for (int i = 0; i < n; i++)
    if (out[i] == p) return 1;
  return 0;
}

int rock_procs_collect(pid_t pgrp, pid_t sid, pid_t root, pid_t exclude,
                       pid_t *out, int max) {
  proc_t *v = NULL;
  int nv = scan(&v), n = 0;
  for (int i = 0; i < nv && n < max; i++)
    if (((pgrp > 0 && v[i].pgrp == pgrp) || (sid > 0 && v[i].sid == sid)) &&
        v[i].pid != exclude)
      out[n++] = v[i].pid;
  /* grow the set by children until it stops growing */
  for (int changed = 1; changed && n < max;) {
    changed = 0;
    for (int i = 0; i < nv && n < max; i++) {
      pid_t p = v[i].pid;
      if (p == exclude || listed(out, n, p)) continue;
      if ((root > 0 && v[i].ppid == root) || listed(out, n, v[i].ppid)) {
        out[n++] = p;
        changed = 1;
      }
    }
  }
  free(v);
  return n;
}

void rock_procs_signal(const pid_t *pids, int n, int sig) {
  for (int i = 0; i < n; i++)
    if (pids[i] > 1) kill(pids[i], sig);
}

void rock_procs_kill_all(void) {
  pid_t self = getpid(), pids[4096];
  if (self == 1) { /* in a container: everything else is ours */
    kill(-1, SIGKILL);
  }
  for (int round = 0; round < 50; round++) {
    int n = rock_procs_collect(0, 0, self, self, pids, 4096);
    if (n == 0) break;
    rock_procs_signal(pids, n, SIGKILL);
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0) {
    }
    usleep(2000);
  }
  int st;
  while (waitpid(-1, &st, WNOHANG) > 0) {
  }
}
