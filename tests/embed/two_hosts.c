/* two_hosts.c: two rock hosts in one process (rock.h allows it), each with
 * an HTTP request in flight to a server in a child process; freeing the
 * first host must leave the second's request alone, which then completes
 * (issue 7, item 3: the request list was a C static shared by every host,
 * so the first host's shutdown released the second's callbacks). */
#include <lauxlib.h>
#include <rock.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Answer every request on every connection with "ok", until killed. */
static void serve(const struct sockaddr_un *a, int up) {
  static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (lfd < 0 || bind(lfd, (const struct sockaddr *)a, sizeof *a) || listen(lfd, 16) ||
      write(up, "L", 1) != 1)
    _exit(2);
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) _exit(0);
    char buf[4096];
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0) {
      n += r;
      buf[n] = 0;
      if (strstr(buf, "\r\n\r\n")) {
        if (write(fd, answer, sizeof answer - 1) < 0) break;
        n = 0;
      }
    }
    close(fd);
  }
}

static const char START[] =
    "local core = require 'rock.core'\n"
    "got = 'nothing yet'\n"
    "core.http_request({ url = 'http://t/', unix_socket = ..., timeout = 20 },\n"
    "  function(res, err) got = res and res.body or tostring(err) end)\n";

static void start(rock_host_t *h, const char *sock) {
  lua_State *L = rock_host_lua(h);
  REQUIRE(luaL_loadstring(L, START) == LUA_OK);
  lua_pushstring(L, sock);
  if (lua_pcall(L, 1, 0, 0)) {
    fprintf(stderr, "FAIL: %s\n", lua_tostring(L, -1));
    exit(1);
  }
}

int main(void) {
  char dir[] = "/tmp/rock-test-hosts.XXXXXX";
  REQUIRE(mkdtemp(dir));
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s/s.sock", dir);
  int up[2];
  REQUIRE(!pipe(up));
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(up[0]);
    serve(&a, up[1]);
  }
  close(up[1]);
  char b;
  REQUIRE(read(up[0], &b, 1) == 1);

  const char *err;
  rock_host_t *first = rock_host_new(&err), *second = rock_host_new(&err);
  REQUIRE(first && second);
  start(first, a.sun_path);
  start(second, a.sun_path);
  rock_host_free(first); /* its request is dropped; the second's is not */
  uv_run(rock_host_loop(second), UV_RUN_DEFAULT);
  lua_State *L = rock_host_lua(second);
  lua_getglobal(L, "got");
  const char *got = lua_tostring(L, -1);
  if (!got || strcmp(got, "ok")) {
    fprintf(stderr, "FAIL: the second host's request got %s\n", got ? got : "(nil)");
    return 1;
  }
  lua_pop(L, 1);
  rock_host_free(second);
  kill(child, SIGTERM);
  int status;
  waitpid(child, &status, 0);
  unlink(a.sun_path);
  rmdir(dir);
  printf("ok   two hosts: freeing one leaves the other's request to complete\n");
  return check_report();
}
