/* users.h: the users of the sandbox, for create_session's remote_user.
 * The rocklet is static and must not use NSS: it reads the sandbox's own
 * /etc/passwd and /etc/group. child.c switches a child to a user between
 * fork and exec; bash.c does so for a session's shell. */
#ifndef ROCK_ROCKLET_USERS_H
#define ROCK_ROCKLET_USERS_H

#include <limits.h>
#include <sys/types.h>

#define ROCK_USER_MAX_GROUPS 64

typedef struct {
  char name[256];
  uid_t uid;
  gid_t gid;
  char home[PATH_MAX];
  int ngroups;                          /* gid first, then supplementary */
  gid_t groups[ROCK_USER_MAX_GROUPS];
} rock_user_t;

/* Find name in passwd (e.g. "/etc/passwd") and its groups in group (e.g.
 * "/etc/group"; a missing group file gives the primary group only).
 * Returns 0, -ENOENT (no such user) or -errno (passwd cannot be read). */
int rock_user_lookup(const char *name, const char *passwd, const char *group,
                     rock_user_t *u);

#endif
