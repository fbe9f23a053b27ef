/* users.c: looking users up in /etc/passwd and /etc/group ourselves (see
 * users.h). Lines are "name:pw:uid:gid:gecos:home:shell" and
 * "name:pw:gid:member,member"; comments, NIS "+"/"-" lines and malformed
 * lines are skipped. */
#include "users.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Split line at ':' into at most max fields (the newline removed). */
static int split(char *line, char **f, int max) {
  line[strcspn(line, "\n")] = 0;
  int n = 0;
  for (char *p = line; n < max;) {
    f[n++] = p;
    char *c = strchr(p, ':');
    if (!c) break;
    *c = 0;
    p = c + 1;
  }
  return n;
}

/* A whole decimal number below 2^32 - 1 (-1 is "no id"), or -1. */
static long long id_of(const char *s) {
  if (!*s) return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno || v >= 0xffffffffULL || *s == '-' || *s == '+') return -1;
  return (long long)v;
}

static void add_group(rock_user_t *u, gid_t g) {
  for (int i = 0; i < u->ngroups; i++)
    if (u->groups[i] == g) return;
  if (u->ngroups < ROCK_USER_MAX_GROUPS) u->groups[u->ngroups++] = g;
}

static int member(char *list, const char *name) {
  for (char *save = NULL, *m = strtok_r(list, ",", &save); m; m = strtok_r(NULL, ",", &save))
    if (!strcmp(m, name)) return 1;
  return 0;
}

int rock_user_lookup(const char *name, const char *passwd, const char *group,
                     rock_user_t *u) {
  memset(u, 0, sizeof *u);
  if (!*name || strlen(name) >= sizeof u->name || strchr(name, ':')) return -ENOENT;
  FILE *f = fopen(passwd, "re");
  if (!f) return -errno;
  char *line = NULL, *fl[8];
  size_t cap = 0;
  int found = 0;
  while (!found && getline(&line, &cap, f) > 0) {
    if (line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
    if (split(line, fl, 7) < 6 || strcmp(fl[0], name)) continue;
    long long uid = id_of(fl[2]), gid = id_of(fl[3]);
    if (uid < 0 || gid < 0) continue;
    snprintf(u->name, sizeof u->name, "%s", name);
    u->uid = (uid_t)uid;
    u->gid = (gid_t)gid;
    snprintf(u->home, sizeof u->home, "%s", *fl[5] ? fl[5] : "/");
    found = 1;
  }
  fclose(f);
  if (!found) {
    free(line);
    return -ENOENT;
  }
  add_group(u, u->gid);
  if ((f = fopen(group, "re"))) {
    while (getline(&line, &cap, f) > 0) {
      if (line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
      if (split(line, fl, 4) < 4) continue;
      long long gid = id_of(fl[2]);
      if (gid >= 0 && member(fl[3], name)) add_group(u, (gid_t)gid);
    }
    fclose(f);
  }
  free(line);
  return 0;
}
