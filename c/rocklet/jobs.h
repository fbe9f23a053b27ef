/* jobs.h: background jobs, outside any session (ROCK's arun(mode="nohup"),
 * done right), with no HTTP or JSON inside. A job is `bash -c command`
 * (/bin/sh without bash) in its own session and process group (child.c),
 * stdin /dev/null, stdout and stderr to one output file. The rocklet is
 * its parent: procs.c reaps it and tells us how it ended (no polling), so
 * its real exit code is known. Records are kept in start order; finished
 * ones past ROCK_JOBS_KEEP are dropped, oldest first. routes_jobs.c puts
 * jobs on the wire and keeps the callers waiting for them. */
#ifndef ROCK_ROCKLET_JOBS_H
#define ROCK_ROCKLET_JOBS_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/buf.h"
#include "../core/err.h"

#define ROCK_JOBS_KEEP 1000        /* finished records kept */
#define ROCK_JOBS_COMMAND_KEPT 4096 /* bytes of a command kept in its record */

typedef struct rock_job rock_job_t;
struct rock_job {
  /* read-only */
  unsigned long id;            /* 1, 2, ... for the rocklet's life */
  pid_t pid;                   /* also its process group and session */
  int running;
  int exit_code;               /* once ended: its status, or 128 + signal */
  double started_at, ended_at; /* unix seconds; ended_at 0 while running */
  char output_file[PATH_MAX];
  char *command;               /* its first ROCK_JOBS_COMMAND_KEPT bytes */
  /* private */
  int own_file;                /* the default output file: removed with the record */
  rock_job_t *prev, *next;
};

typedef struct {
  const char *command;         /* run by bash -c (or /bin/sh -c) */
  const char *cwd;             /* NULL: the rocklet's */
  const char *const *env;      /* {key, value, ..., NULL} or NULL */
  const char *output_file;     /* NULL: DIR/jobs/<id>.out; else created
                                * with its parents (relative: to cwd) */
  const char *dir;             /* the rocklet's work dir */
} rock_job_opts_t;

/* Called once when a job ends (its record is up to date), before any
 * record is dropped. */
void rock_jobs_set_on_end(void (*on_end)(rock_job_t *j));
/* Start a job. Returns 0 and *out, or an error with msg filled:
 * SPAWN_FAILED (the command cannot start: a bad cwd, fork), IO (the output
 * file cannot be made), NO_MEMORY, INVALID_ARGUMENT (a path too long). */
rock_err rock_jobs_start(const rock_job_opts_t *o, rock_job_t **out, char *msg,
                         size_t msg_cap);
/* The job with this id, or NULL (never started, or its record dropped). */
rock_job_t *rock_jobs_find(unsigned long id);
/* The oldest record (then follow ->next), or NULL. */
rock_job_t *rock_jobs_first(void);
/* Send sig to every process of a running job (its group, its session and
 * its descendants). Returns 1, or 0 when it is not running. */
int rock_jobs_kill(rock_job_t *j, int sig);
/* Append the job's output so far to out, as a run's output reads: cleaned,
 * and past max_output bytes its head, a note naming the file, its tail.
 * *dropped gets the bytes left out, *total the file's size. An output file
 * that is gone or not a regular file reads as empty. Returns 0 or -ENOMEM. */
int rock_jobs_output(const rock_job_t *j, size_t max_output, rock_buf_t *out,
                     uint64_t *dropped, uint64_t *total);
/* Forget every record (at exit; the processes are killed by procs.c). */
void rock_jobs_free_all(void);

#endif
