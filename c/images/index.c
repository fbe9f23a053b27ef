/* index.c: the image cache's LRU index (see index.h). Every change reads
 * index.json, edits it and writes it back by rename, under an exclusive
 * flock of index.lock, so hosts sharing the cache dir never lose an entry. */
#include "index.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int rock_images_tar_path(char *buf, size_t cap, const char *dir, const char *image) {
  size_t n = (size_t)snprintf(buf, cap, "%s/", dir);
  for (const char *p = image; *p && n + 1 < cap; p++) {
    char c = *p;
    /* '/' and ':' would make paths; '%' escapes them, so the map is 1:1 */
    const char *esc = c == '/' ? "%2F" : c == ':' ? "%3A" : c == '%' ? "%25" : NULL;
    if (esc) {
      if (n + 3 >= cap) break;
      memcpy(buf + n, esc, 3);
      n += 3;
    } else {
      buf[n++] = c;
    }
  }
  return n + (size_t)snprintf(buf + n, n < cap ? cap - n : 0, ".tar");
}

static int lock_dir(const char *dir, const char **why) {
  char path[4096];
  snprintf(path, sizeof path, "%s/index.lock", dir);
  mkdir(dir, 0755);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || flock(fd, LOCK_EX) < 0) {
    if (fd >= 0) close(fd);
    *why = "cannot lock the image cache index";
    return -1;
  }
  return fd;
}

static json_t *load(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/index.json", dir);
  json_t *j = json_load_file(path, 0, NULL);
  if (!json_is_object(j)) {
    json_decref(j);
    j = json_object();
  }
  return j;
}

static rock_err save(const char *dir, json_t *j, const char **why) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/index.json", dir);
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  if (json_dump_file(j, tmp, JSON_INDENT(1) | JSON_SORT_KEYS) || rename(tmp, path)) {
    unlink(tmp);
    *why = "cannot write the image cache index";
    return ROCK_E_IO;
  }
  return ROCK_E_OK;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

rock_err rock_images_touch(const char *dir, const char *image, double engine_size,
                           double tar_size, const char **why) {
  int fd = lock_dir(dir, why);
  if (fd < 0) return ROCK_E_IO;
  json_t *j = load(dir);
  json_t *e = json_object_get(j, image);
  if (!e) {
    e = json_pack("{s:f, s:f}", "engine_size", 0.0, "tar_size", 0.0);
    json_object_set_new(j, image, e);
  }
  json_object_set_new(e, "last_used", json_real(now()));
  if (engine_size >= 0) json_object_set_new(e, "engine_size", json_real(engine_size));
  if (tar_size >= 0) json_object_set_new(e, "tar_size", json_real(tar_size));
  rock_err r = save(dir, j, why);
  json_decref(j);
  close(fd);
  return r;
}

rock_err rock_images_forget(const char *dir, const char *image, const char **why) {
  int fd = lock_dir(dir, why);
  if (fd < 0) return ROCK_E_IO;
  json_t *j = load(dir);
  rock_err r = ROCK_E_OK;
  if (json_object_get(j, image)) {
    json_object_del(j, image);
    r = save(dir, j, why);
  }
  json_decref(j);
  close(fd);
  return r;
}

rock_err rock_images_read(const char *dir, json_t **out, const char **why) {
  int fd = lock_dir(dir, why);
  if (fd < 0) return ROCK_E_IO;
  *out = load(dir);
  close(fd);
  return ROCK_E_OK;
}

static double size_of(json_t *e) {
  return json_number_value(json_object_get(e, "engine_size")) +
         json_number_value(json_object_get(e, "tar_size"));
}

typedef struct {
  const char *name;
  double last_used;
} lru_t;

static int by_age(const void *a, const void *b) {
  double x = ((const lru_t *)a)->last_used, y = ((const lru_t *)b)->last_used;
  return x < y ? -1 : x > y;
}

rock_err rock_images_plan(const char *dir, double budget,
                          const char *const *keep, json_t **out, const char **why) {
  json_t *j;
  rock_err r = rock_images_read(dir, &j, why);
  if (r != ROCK_E_OK) return r;
  size_t n = json_object_size(j), k = 0;
  lru_t *list = calloc(n ? n : 1, sizeof *list);
  if (!list) {
    json_decref(j);
    return ROCK_E_NO_MEMORY;
  }
  double total = 0;
  const char *name;
  json_t *e;
  json_object_foreach(j, name, e) {
    total += size_of(e);
    int kept = 0;
    for (const char *const *p = keep; p && *p; p++) kept |= !strcmp(*p, name);
    if (!kept)
      list[k++] = (lru_t){name, json_number_value(json_object_get(e, "last_used"))};
  }
  qsort(list, k, sizeof *list, by_age);
  *out = json_array();
  for (size_t i = 0; i < k && total > budget; i++) {
    total -= size_of(json_object_get(j, list[i].name));
    json_array_append_new(*out, json_string(list[i].name));
  }
  free(list);
  json_decref(j);
  return ROCK_E_OK;
}
