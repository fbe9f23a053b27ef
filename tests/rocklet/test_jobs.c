/* test_jobs.c: background jobs (c/rocklet/jobs.h) on a real uv loop, and
 * the /etc/passwd and /etc/group reader (c/rocklet/users.h) on files made
 * here: exit codes, the output's head and tail read from its file, kill,
 * the bound on finished records (the oldest dropped, with its own file),
 * bad output paths; users found, groups collected, malformed lines
 * skipped, unknown users. Every handle is closed; uv_loop_close() must
 * return 0. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "rocklet/jobs.h"
#include "rocklet/procs.h"
#include "rocklet/users.h"

#include "check.h"

static uv_loop_t loop;
static char base[PATH_MAX];
static int ended, last_code;
static unsigned long last_id;

static void on_end(rock_job_t *j) {
  ended++;
  last_id = j->id; /* the record may be dropped right after this */
  last_code = j->exit_code;
}

static void on_guard(uv_timer_t *t) { (void)t; }

/* Run the loop until ended >= want (or 30 s). */
static void wait_ended(int want) {
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  uv_timer_start(&guard, on_guard, 30000, 0);
  uint64_t until = uv_now(&loop) + 30000;
  while (ended < want && uv_now(&loop) < until) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&guard, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
}

static rock_job_t *start(const char *cmd, const char *out_file) {
  rock_job_opts_t o = {.command = cmd, .dir = base, .output_file = out_file};
  rock_job_t *j = NULL;
  char msg[512];
  rock_err rc = rock_jobs_start(&o, &j, msg, sizeof msg);
  if (rc) fprintf(stderr, "start %s: %s\n", cmd, msg);
  return rc ? NULL : j;
}

static char *output(rock_job_t *j, size_t max, uint64_t *dropped, uint64_t *total) {
  rock_buf_t b = {0};
  CHECK(rock_jobs_output(j, max, &b, dropped, total) == 0);
  return b.data ? b.data : strdup("");
}

static void test_jobs(void) {
  int e0 = ended;
  rock_job_t *j = start("echo out; echo err >&2; exit 3", NULL);
  REQUIRE(j && j->running && j->pid > 0 && j->id == 1);
  wait_ended(e0 + 1);
  CHECK(!j->running && j->exit_code == 3 && j->ended_at >= j->started_at);
  uint64_t dropped, total;
  char *o = output(j, 1 << 20, &dropped, &total);
  CHECK(!strcmp(o, "out\nerr\n") && dropped == 0 && total == 8);
  free(o);
  char want[PATH_MAX + 32];
  snprintf(want, sizeof want, "%s/jobs/1.out", base);
  CHECK(!strcmp(j->output_file, want));

  /* head and tail past the cap, the note naming the file */
  j = start("seq 1 100000", NULL);
  REQUIRE(j);
  wait_ended(e0 + 2);
  o = output(j, 100, &dropped, &total);
  CHECK(total == 588895 && dropped == total - 100);
  CHECK(!strncmp(o, "1\n2\n3\n", 6) && strstr(o, "99999\n100000\n"));
  CHECK(strstr(o, "bytes dropped; full output: ") && strstr(o, j->output_file));
  free(o);

  /* kill: the whole tree, 128 + signal */
  j = start("sleep 100 & sleep 100; wait", NULL);
  REQUIRE(j);
  CHECK(rock_jobs_kill(j, SIGKILL) == 1);
  wait_ended(e0 + 3);
  CHECK(j->exit_code == 137 && rock_jobs_kill(j, SIGKILL) == 0);

  /* an output file of the caller's, parents made; a bad one refused */
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/a/b/c.log", base);
  j = start("echo mine", path);
  REQUIRE(j);
  wait_ended(e0 + 4);
  o = output(j, 1 << 20, &dropped, &total);
  CHECK(!strcmp(o, "mine\n") && !strcmp(j->output_file, path));
  free(o);
  snprintf(path, sizeof path, "%s/a/b/c.log/under-a-file", base);
  CHECK(start("true", path) == NULL);
  rock_job_opts_t bad = {.command = "true", .dir = base, .cwd = "/nonexistent-dir"};
  char msg[512];
  CHECK(rock_jobs_start(&bad, &j, msg, sizeof msg) == ROCK_E_SPAWN_FAILED && !j);
  CHECK(strstr(msg, "/nonexistent-dir") != NULL);

  /* the bound: finished records past ROCK_JOBS_KEEP go, oldest first,
   * with their own output files; a running job is never dropped */
  rock_job_t *keep = start("sleep 100", NULL);
  REQUIRE(keep);
  int n0 = ended;
  for (int i = 0; i < ROCK_JOBS_KEEP; i++) REQUIRE(start("exit 0", NULL));
  wait_ended(n0 + ROCK_JOBS_KEEP);
  CHECK(rock_jobs_find(1) == NULL && rock_jobs_find(2) == NULL);
  snprintf(want, sizeof want, "%s/jobs/1.out", base);
  struct stat st;
  CHECK(stat(want, &st) != 0 && errno == ENOENT);
  CHECK(rock_jobs_find(keep->id) == keep && keep->running);
  int count = 0, finished = 0;
  for (rock_job_t *r = rock_jobs_first(); r; r = r->next) count++, finished += !r->running;
  CHECK(finished == ROCK_JOBS_KEEP && count == ROCK_JOBS_KEEP + 1);
  unsigned long keep_id = keep->id;
  rock_jobs_kill(keep, SIGKILL);
  wait_ended(n0 + ROCK_JOBS_KEEP + 1);
  CHECK(last_id == keep_id && last_code == 137);
  /* now the oldest finished record: dropped at once */
  CHECK(rock_jobs_find(keep_id) == NULL);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  REQUIRE(f);
  fputs(text, f);
  fclose(f);
}

static void test_users(void) {
  char pw[PATH_MAX + 16], gr[PATH_MAX + 16];
  snprintf(pw, sizeof pw, "%s/passwd", base);
  snprintf(gr, sizeof gr, "%s/group", base);
  write_file(pw, "root:x:0:0:root:/root:/bin/bash\n"
                 "# a comment\n"
                 "+nis\n"
                 "broken:x:notanumber:1:::\n"
                 "short:x:5\n"
                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                 "dev:x:1000:1000::/home/dev:/bin/sh\n"
                 "nohome:x:1001:1001:::/bin/sh");
  write_file(gr, "root:x:0:\n"
                 "nogroup:x:65534:\n"
                 "dev:x:1000:\n"
                 "docker:x:999:dev,other\n"
                 "audio:x:29:other,dev\n"
                 "video:x:44:developer\n");
  rock_user_t u;
  CHECK(rock_user_lookup("nobody", pw, gr, &u) == 0);
  CHECK(u.uid == 65534 && u.gid == 65534 && !strcmp(u.home, "/nonexistent"));
  CHECK(u.ngroups == 1 && u.groups[0] == 65534);
  CHECK(rock_user_lookup("dev", pw, gr, &u) == 0);
  CHECK(u.uid == 1000 && u.ngroups == 3 && u.groups[0] == 1000 && u.groups[1] == 999 &&
        u.groups[2] == 29); /* not video: "developer" is another name */
  CHECK(rock_user_lookup("nohome", pw, gr, &u) == 0 && !strcmp(u.home, "/"));
  CHECK(rock_user_lookup("broken", pw, gr, &u) == -ENOENT);
  CHECK(rock_user_lookup("short", pw, gr, &u) == -ENOENT);
  CHECK(rock_user_lookup("nis", pw, gr, &u) == -ENOENT);
  CHECK(rock_user_lookup("+nis", pw, gr, &u) == -ENOENT);
  CHECK(rock_user_lookup("", pw, gr, &u) == -ENOENT);
  CHECK(rock_user_lookup("root:x", pw, gr, &u) == -ENOENT);
  CHECK(rock_user_lookup("nobody2", pw, gr, &u) == -ENOENT);
  CHECK(rock_user_lookup("root", pw, "/nonexistent/group", &u) == 0 && u.ngroups == 1);
  CHECK(rock_user_lookup("root", "/nonexistent/passwd", gr, &u) == -ENOENT);
  unlink(pw);
  unlink(gr);
}

int main(void) {
  snprintf(base, sizeof base, "/tmp/rock-test-jobs.XXXXXX");
  REQUIRE(mkdtemp(base));
  uv_loop_init(&loop);
  rock_procs_init(&loop);
  rock_jobs_set_on_end(on_end);
  test_jobs();
  test_users();
  rock_procs_close();
  rock_jobs_free_all();
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf %s", base);
  CHECK(system(cmd) == 0);
  return check_report();
}
