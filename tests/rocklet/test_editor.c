/* test_editor.c: unit tests for the rocklet's str_replace_editor
 * (c/rocklet/editor.c, editor_text.c, editor_dir.c, editor_args.c) through
 * its C API, in a temp dir: every SWE-agent message and code
 * (shared/SWE-FACTS.md), tabs, Unicode, latin-1, CRLF, clipping, undo
 * levels and the history bound, non-regular and too-large files, the
 * directory listing compared with the real `find`; argparse's int() and
 * Python's repr(); the bounds on every answer (100,000 matches, long
 * old_str, a huge directory); and a 30 MB file edited in well under a
 * second of CPU (a looser bound under ASan, skipped under valgrind). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "rocklet/editor.h"
#include "rocklet/editor_args.h"

#include "check.h"

static char dir[256];
static char cmd_buf[4096];
static rock_editor_t *ed;
static int code;     /* the last call's exit code */
static char *output; /* the last call's output */

static const char *at(const char *fmt, ...) {
  static char bufs[64][4096]; /* a path stays valid for 63 more calls */
  static int k;
  char *b = bufs[k++ % 64];
  int n = snprintf(b, sizeof bufs[0], "%s/", dir);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b + n, sizeof bufs[0] - n, fmt, ap);
  va_end(ap);
  return b;
}

/* Run q against ed; the output lands in `output`, the code in `code`. */
static const char *run_req(rock_editor_t *e, rock_editor_req_t q) {
  rock_buf_t out = {0};
  code = rock_editor_run(e, &q, &out);
  free(output);
  output = out.data ? out.data : strdup("");
  return output;
}

static const char *run(const char *command, const char *path) {
  return run_req(ed, (rock_editor_req_t){.command = command, .path = path});
}

static void put(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  REQUIRE(f != NULL);
  fwrite(data, 1, n, f);
  fclose(f);
}

/* a literal's bytes, NULs included */
#define PUTL(path, lit) put(path, lit, sizeof(lit) - 1)

static char *get(const char *path, size_t *n) {
  static char *last;
  free(last);
  last = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  rock_buf_t b = {0};
  char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) rock_buf_append(&b, chunk, k);
  fclose(f);
  if (!b.data) rock_buf_append(&b, "", 0);
  if (n) *n = b.len;
  return last = b.data;
}

static int same(const char *got, const char *want) {
  if (!strcmp(got, want)) return 1;
  fprintf(stderr, "got:  [%s]\nwant: [%s]\n", got, want);
  return 0;
}

#define STR(...) (snprintf(want, sizeof want, __VA_ARGS__), want)
static char want[65536];

static void test_path_checks(void) {
  PUTL(at("f"), "x\n");
  run_req(ed, (rock_editor_req_t){.command = "view", .path = "rel/f", .cwd = "/srv/repo"});
  CHECK(code == 6 && same(output, "The path rel/f is not an absolute path, it should start with "
                                  "`/`. Maybe you meant /srv/repo/rel/f?"));
  run("view", "rel//./f/"); /* normalized as pathlib does; cwd defaults to / */
  CHECK(code == 6 && same(output, "The path rel/f is not an absolute path, it should start with "
                                  "`/`. Maybe you meant /rel/f?"));
  run("view", at("missing"));
  CHECK(code == 7 && same(output, STR("The path %s does not exist. Please provide a valid "
                                      "path.", at("missing"))));
  run("str_replace", at("missing"));
  CHECK(code == 7);
  run_req(ed, (rock_editor_req_t){.command = "create", .path = at("f"), .file_text = "y"});
  CHECK(code == 8 && same(output, STR("File already exists at: %s. Cannot overwrite files "
                                      "using command `create`.", at("f"))));
  CHECK(same(get(at("f"), NULL), "x\n"));
  run("str_replace", dir);
  CHECK(code == 9 && same(output, STR("The path %s is a directory and only the `view` command "
                                      "can be used on directories", dir)));
  run("undo_edit", dir);
  CHECK(code == 9);
  run("bogus", at("f"));
  CHECK(code == 5 && same(output, "Unrecognized command bogus. The allowed commands for the "
                                  "str_replace_editor tool are: \"view\", \"create\", "
                                  "\"str_replace\", \"insert\", \"undo_edit\""));
  run("view", at("f//"));
  CHECK(code == 0 && strstr(output, STR("on %s:\n", at("f"))));
}

static void test_create(void) {
  const char *p = at("new.py");
  run("create", p);
  CHECK(code == 1 && same(output, "Parameter `file_text` is required for command: create"));
  run_req(ed, (rock_editor_req_t){.command = "create", .path = p, .file_text = "a\tb\n"});
  CHECK(code == 0 && same(output, STR("File created successfully at: %s", p)));
  CHECK(same(get(p, NULL), "a\tb\n")); /* create writes the text as given */
  run_req(ed, (rock_editor_req_t){.command = "create", .path = at("no/such/x"), .file_text = ""});
  CHECK(code == 21 && same(output, STR("The parent directory %s does not exist. Please create "
                                       "it first.", at("no/such"))));
  CHECK(access(at("no"), F_OK) != 0);
  run_req(ed, (rock_editor_req_t){.command = "create", .path = at("new.py/x"), .file_text = ""});
  CHECK(code == 20 && strstr(output, "Not a directory") && strstr(output, "while trying to write"));
  /* undo after create restores the created text (SWE-agent's history) */
  run("undo_edit", p);
  CHECK(code == 0 && strstr(output, "Last edit to ") && same(get(p, NULL), "a\tb\n"));
  run("undo_edit", p);
  CHECK(code == 18 && same(output, STR("No edit history found for %s.", p)));
}

static void test_view_file(void) {
  const char *p = at("v.txt");
  PUTL(p, "one\n\ttwo\nthree"); /* no trailing newline */
  run("view", p);
  CHECK(code == 0 && same(output, STR("Here's the result of running `cat -n` on %s:\n"
                                      "     1\tone\n     2\t        two\n     3\tthree\n", p)));
  PUTL(p, "one\ntwo\n"); /* a trailing newline is an empty last line */
  run("view", p);
  CHECK(same(output, STR("Here's the result of running `cat -n` on %s:\n     1\tone\n"
                         "     2\ttwo\n     3\t\n", p)));
  PUTL(p, "");
  run("view", p);
  CHECK(code == 0 && same(output, STR("Here's the result of running `cat -n` on %s:\n     1\t\n", p)));

  PUTL(p, "1\n2\n3\n4\n5");
  rock_editor_req_t q = {.command = "view", .path = p, .view_range_set = 1, .view_range = {2, 3}};
  run_req(ed, q);
  CHECK(code == 0 && same(output, STR("Here's the result of running `cat -n` on %s:\n     2\t2\n"
                                      "     3\t3\n", p)));
  q.view_range[0] = 4, q.view_range[1] = -1;
  run_req(ed, q);
  CHECK(code == 0 && same(output, STR("Here's the result of running `cat -n` on %s:\n     4\t4\n"
                                      "     5\t5\n", p)));
  q.view_range[0] = 5, q.view_range[1] = 5;
  run_req(ed, q);
  CHECK(code == 0 && strstr(output, "     5\t5\n"));
  q.view_range[0] = 0, q.view_range[1] = 2;
  run_req(ed, q);
  CHECK(code == 12 && same(output, "Invalid `view_range`: [0, 2]. Its first element `0` should "
                                   "be within the range of lines of the file: [1, 5]"));
  q.view_range[0] = 6, q.view_range[1] = -1;
  run_req(ed, q);
  CHECK(code == 12 && strstr(output, "[6, -1]. Its first element `6`"));
  q.view_range[0] = 2, q.view_range[1] = 6;
  run_req(ed, q);
  CHECK(code == 13 && same(output, "Invalid `view_range`: [2, 6]. Its second element `6` should "
                                   "be smaller than the number of lines in the file: `5`"));
  q.view_range[0] = 3, q.view_range[1] = 2;
  run_req(ed, q);
  CHECK(code == 14 && same(output, "Invalid `view_range`: [3, 2]. Its second element `2` should "
                                   "be larger or equal than its first `3`"));
  q.view_range[1] = -2;
  run_req(ed, q);
  CHECK(code == 14 && strstr(output, "[3, -2]"));
  q.view_range_set = -1;
  run_req(ed, q);
  CHECK(code == 11 && same(output, "Invalid `view_range`. It should be a list of two integers."));
}

/* the listing, compared with what find prints for the same dir */
static void test_view_dir(void) {
  const char *d = at("tree");
  mkdir(d, 0755);
  const char *dirs[] = {"a", "a/b", "a/b/c", ".hid", ".hid/x", "a/.h2", "z", "a/b2"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) mkdir(at("tree/%s", dirs[i]), 0755);
  const char *files[] = {"f1", "a/f2", "a/b/f3", "a/b/c/f4", ".dot", ".hid/y", "z/q r",
                         "a/.h2/in", "m\xff.txt"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) put(at("tree/%s", files[i]), "", 0);
  symlink(at("tree/a"), at("tree/link")); /* not followed */
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "find %s -maxdepth 2 -not -path '*/\\.*'", d);
  FILE *f = popen(cmd, "r");
  REQUIRE(f != NULL);
  rock_buf_t found = {0};
  char line[4096];
  while (fgets(line, sizeof line, f)) rock_buf_puts(&found, line);
  CHECK(pclose(f) == 0);
  /* find prints the raw byte; the editor shows U+FFFD for it */
  char *ff = strstr(found.data, "m\xff.txt");
  REQUIRE(ff != NULL);
  rock_buf_t fixed = {0};
  rock_buf_append(&fixed, found.data, ff + 1 - found.data);
  rock_buf_puts(&fixed, "\xef\xbf\xbd");
  rock_buf_puts(&fixed, ff + 2);
  run("view", d);
  CHECK(code == 0 && same(output, STR("Here's the files and directories up to 2 levels deep in "
                                      "%s, excluding hidden items:\n%s\n", d, fixed.data)));
  CHECK(strstr(output, "/a/b\n") && !strstr(output, "/a/b/c\n") && !strstr(output, ".hid"));
  rock_editor_req_t q = {.command = "view", .path = d, .view_range_set = 1, .view_range = {1, 2}};
  run_req(ed, q);
  CHECK(code == 10 && same(output, "The `view_range` parameter is not allowed when `path` points "
                                   "to a directory."));
  rock_buf_free(&found);
  rock_buf_free(&fixed);
  /* a hidden dir itself: find prints nothing at all */
  run("view", at("tree/.hid"));
  CHECK(code == 0 && same(output, STR("Here's the files and directories up to 2 levels deep in "
                                      "%s, excluding hidden items:\n\n", at("tree/.hid"))));
}

static rock_editor_req_t sr(const char *p, const char *old, const char *new) {
  return (rock_editor_req_t){.command = "str_replace", .path = p, .old_str = old, .new_str = new};
}

static void test_str_replace(void) {
  const char *p = at("s.py");
  PUTL(p, "l1\nl2\nl3\nl4\nl5\nfoo = 1\nl7\nl8\nl9\nl10\nl11\n");
  run("str_replace", p);
  CHECK(code == 2 && same(output, "Parameter `old_str` is required for command: str_replace"));
  run_req(ed, sr(p, "nope", "x"));
  CHECK(code == 15 && same(output, STR("No replacement was performed, old_str `nope` did not "
                                       "appear verbatim in %s.", p)));
  run_req(ed, sr(p, "l1", "x")); /* l1, l10, l11 */
  CHECK(code == 16 && same(output, "No replacement was performed. Multiple occurrences of "
                                   "old_str `l1` in lines [1, 10, 11]. Please ensure it is unique"));
  run_req(ed, sr(p, "foo", "foo"));
  CHECK(code == 161 && same(output, "No replacement was performed, old_str `foo` is the same as "
                                    "new_str `foo`."));
  run_req(ed, sr(p, "foo = 1", "foo = 2\nbar = 3"));
  CHECK(code == 0 &&
        same(output, STR("The file %s has been edited. Here's the result of running `cat -n` on "
                         "a snippet of %s:\n     2\tl2\n     3\tl3\n     4\tl4\n     5\tl5\n"
                         "     6\tfoo = 2\n     7\tbar = 3\n     8\tl7\n     9\tl8\n    10\tl9\n"
                         "    11\tl10\nReview the changes and make sure they are as expected. "
                         "Edit the file again if necessary.", p, p)));
  CHECK(same(get(p, NULL), "l1\nl2\nl3\nl4\nl5\nfoo = 2\nbar = 3\nl7\nl8\nl9\nl10\nl11\n"));
  run_req(ed, sr(p, "l2\n", NULL)); /* new_str absent: deleted; snippet from line 1 */
  CHECK(code == 0 && strstr(output, "a snippet of") && strstr(output, ":\n     1\tl1\n     2\tl3\n"));
  CHECK(same(get(p, NULL), "l1\nl3\nl4\nl5\nfoo = 2\nbar = 3\nl7\nl8\nl9\nl10\nl11\n"));
  /* several occurrences on one line, and one spanning lines, count as in Python */
  PUTL(p, "aaa\nb\n");
  run_req(ed, sr(p, "aa", "c")); /* non-overlapping: "aaa" holds "aa" once */
  CHECK(code == 0 && same(get(p, NULL), "ca\nb\n"));
  PUTL(p, "x x\ny\n");
  run_req(ed, sr(p, "x", "z"));
  CHECK(code == 16 && strstr(output, "in lines [1]."));

  /* tabs: the file, old_str and new_str are expanded; the file is written expanded */
  PUTL(p, "def f():\n\treturn 1\n");
  run_req(ed, sr(p, "\treturn 1", "\treturn 2"));
  CHECK(code == 0 && same(get(p, NULL), "def f():\n        return 2\n"));
  run_req(ed, sr(p, "        return 2", "\treturn 3"));
  CHECK(code == 0 && same(get(p, NULL), "def f():\n        return 3\n"));
  run_req(ed, sr(p, "\treturn 3", "        return 3"));
  CHECK(code == 161);
  PUTL(p, "x\ty = 1\n"); /* expanded to the next column of 8 */
  run_req(ed, sr(p, "x       y", "xy"));
  CHECK(code == 0 && same(get(p, NULL), "xy = 1\n"));
  PUTL(p, "\xc3\xa9\ty\n"); /* é is one column */
  run_req(ed, sr(p, "\xc3\xa9       y", "e"));
  CHECK(code == 0 && same(get(p, NULL), "e\n"));

  /* multi-byte characters in old_str and new_str */
  PUTL(p, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80\n");
  run_req(ed, sr(p, "\xe2\x9c\x93 \xf0\x9f\x9a\x80", "\xc3\xbc"));
  CHECK(code == 0 && same(get(p, NULL), "caf\xc3\xa9 \xc3\xbc\n"));
  CHECK(strstr(output, "     1\tcaf\xc3\xa9 \xc3\xbc\n"));
}

static void test_insert(void) {
  const char *p = at("i.txt");
  PUTL(p, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10");
  rock_editor_req_t q = {.command = "insert", .path = p, .new_str = "x"};
  run_req(ed, q);
  CHECK(code == 3 && same(output, "Parameter `insert_line` is required for command: insert"));
  q.insert_line_set = 1, q.insert_line = 2, q.new_str = NULL;
  run_req(ed, q);
  CHECK(code == 4 && same(output, "Parameter `new_str` is required for command: insert"));
  q.new_str = "x", q.insert_line = 11;
  run_req(ed, q);
  CHECK(code == 17 && same(output, "Invalid `insert_line` parameter: 11. It should be within the "
                                   "range of lines of the file: [0, 10]"));
  q.insert_line = -1;
  run_req(ed, q);
  CHECK(code == 17 && strstr(output, "parameter: -1."));
  q.insert_line = 6, q.new_str = "a\n\tb";
  run_req(ed, q);
  CHECK(code == 0 &&
        same(output, STR("The file %s has been edited. Here's the result of running `cat -n` on "
                         "a snippet of the edited file:\n     3\t3\n     4\t4\n     5\t5\n     6\t6\n"
                         "     7\ta\n     8\t        b\n     9\t7\n    10\t8\n    11\t9\n    12\t10\n"
                         "Review the changes and make sure they are as expected (correct "
                         "indentation, no duplicate lines, etc). Edit the file again if necessary.",
                         p)));
  CHECK(same(get(p, NULL), "1\n2\n3\n4\n5\n6\na\n        b\n7\n8\n9\n10"));
  q.insert_line = 0, q.new_str = "top";
  run_req(ed, q);
  CHECK(code == 0 && strstr(output, "edited file:\n     1\ttop\n     2\t1\n     3\t2\n     4\t3\n"
                                    "     5\t4\nReview"));
  CHECK(same(get(p, NULL), "top\n1\n2\n3\n4\n5\n6\na\n        b\n7\n8\n9\n10"));
  q.insert_line = 13, q.new_str = "end";
  run_req(ed, q);
  CHECK(code == 0 && strstr(output, "edited file:\n    10\t7\n    11\t8\n    12\t9\n    13\t10\n"
                                    "    14\tend\nReview"));
  CHECK(same(get(p, NULL), "top\n1\n2\n3\n4\n5\n6\na\n        b\n7\n8\n9\n10\nend"));
  PUTL(p, "a\n"); /* after the empty last line, as SWE-agent does */
  q.insert_line = 2, q.new_str = "b";
  run_req(ed, q);
  CHECK(code == 0 && same(get(p, NULL), "a\n\nb"));
  PUTL(p, "");
  q.insert_line = 0, q.new_str = "only";
  run_req(ed, q);
  CHECK(code == 0 && same(get(p, NULL), "only\n"));
}

static void test_undo(void) {
  const char *p = at("u.txt");
  PUTL(p, "v0\tkeep\n");
  chmod(p, 0751);
  run("undo_edit", p);
  CHECK(code == 18 && same(output, STR("No edit history found for %s.", p)));
  run_req(ed, sr(p, "v0", "v1"));
  run_req(ed, sr(p, "v1", "v2"));
  run_req(ed, (rock_editor_req_t){.command = "insert", .path = p, .insert_line_set = 1,
                                  .insert_line = 0, .new_str = "v3"});
  CHECK(code == 0 && same(get(p, NULL), "v3\nv2      keep\n"));
  struct stat st;
  CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0751); /* the mode survives a write */
  run("undo_edit", p);
  CHECK(code == 0 && same(output, STR("Last edit to %s undone successfully. Here's the result of "
                                      "running `cat -n` on %s:\n     1\tv2      keep\n     2\t\n",
                                      p, p)));
  CHECK(same(get(p, NULL), "v2      keep\n"));
  run("undo_edit", p);
  CHECK(code == 0 && same(get(p, NULL), "v1      keep\n"));
  run("undo_edit", p); /* the original bytes: the tab is back */
  CHECK(code == 0 && same(get(p, NULL), "v0\tkeep\n"));
  CHECK(strstr(output, "     1\tv0      keep\n")); /* shown expanded, as SWE-agent shows it */
  run("undo_edit", p);
  CHECK(code == 18);
  /* the history is per file */
  const char *p2 = at("u2.txt");
  PUTL(p2, "x\n");
  run_req(ed, sr(p, "v0", "w"));
  run_req(ed, sr(p2, "x", "y"));
  run("undo_edit", p);
  CHECK(code == 0 && same(get(p, NULL), "v0\tkeep\n") && same(get(p2, NULL), "y\n"));
  run("undo_edit", p2);
  CHECK(code == 0 && same(get(p2, NULL), "x\n"));
  /* a symlink is edited through: the link stays, its target changes */
  symlink(p2, at("u.link"));
  run_req(ed, sr(at("u.link"), "x", "z"));
  struct stat lst;
  CHECK(code == 0 && lstat(at("u.link"), &lst) == 0 && S_ISLNK(lst.st_mode));
  CHECK(same(get(p2, NULL), "z\n"));
}

/* the history keeps at most its bound: the oldest steps go first, and an
 * undo never skips an edit */
static void test_history_bound(void) {
  rock_editor_t *small = rock_editor_new(4096);
  REQUIRE(small != NULL);
  const char *p = at("h.txt");
  char text[1100]; /* 1098 'a', '\n': each undo step costs ~1.2 KB, 3 fit in 4 KB */
  memset(text, 'a', sizeof text - 2);
  text[sizeof text - 2] = '\n';
  text[sizeof text - 1] = 0;
  put(p, text, strlen(text));
  char from[3] = "a\n", to[3] = "0\n";
  for (int i = 0; i < 6; i++) { /* the last character becomes 0, 1, ... 5 */
    run_req(small, sr(p, from, to));
    CHECK(code == 0);
    CHECK(rock_editor_history_bytes(small) <= 4096);
    from[0] = to[0]++;
  }
  CHECK(strstr(get(p, NULL), "a5\n") != NULL);
  int undone = 0;
  while (run_req(small, (rock_editor_req_t){.command = "undo_edit", .path = p}), code == 0)
    undone++;
  CHECK(code == 18 && undone == 3);
  CHECK(strstr(get(p, NULL), "a2\n") != NULL); /* three steps back from 5 */
  CHECK(rock_editor_history_bytes(small) == 0);
  rock_editor_free(small);

  /* a step larger than the whole bound drops the file's older steps too */
  rock_editor_t *tiny = rock_editor_new(512);
  REQUIRE(tiny != NULL);
  PUTL(p, "short\n");
  run_req(tiny, sr(p, "short", "s2"));
  CHECK(code == 0 && rock_editor_history_bytes(tiny) > 0);
  put(p, text, strlen(text));
  run_req(tiny, sr(p, "a\n", "b\n"));
  CHECK(code == 0 && rock_editor_history_bytes(tiny) == 0);
  run_req(tiny, (rock_editor_req_t){.command = "undo_edit", .path = p});
  CHECK(code == 18); /* not "short": that would skip the last edit */
  rock_editor_free(tiny);
}

static void test_encodings(void) {
  const char *p = at("l1.txt");
  PUTL(p, "caf\xe9 foo\nna\xefve\n"); /* latin-1 */
  run("view", p);
  CHECK(code == 0 && strstr(output, "     1\tcaf\xc3\xa9 foo\n     2\tna\xc3\xafve\n"));
  run_req(ed, sr(p, "caf\xc3\xa9", "\xc3\xa0 la"));
  CHECK(code == 0);
  size_t n;
  char *b = get(p, &n); /* written back in latin-1 */
  CHECK(n == 15 && !memcmp(b, "\xe0 la foo\nna\xefve\n", 15));
  run_req(ed, sr(p, "foo", "\xe2\x9c\x93"));
  CHECK(code == 20 && same(output, STR("Ran into 'latin-1' codec can't encode character '\\u2713' "
                                       "in position 5: ordinal not in range(256) while trying to "
                                       "write to %s", p)));
  b = get(p, &n);
  CHECK(n == 15 && !memcmp(b, "\xe0 la foo\nna\xefve\n", 15)); /* unchanged */
  run_req(ed, sr(p, "foo", "\xf0\x9f\x9a\x80\xf0\x9f\x9a\x80"));
  CHECK(code == 20 && strstr(output, "can't encode characters in position 5-6:"));
  run("undo_edit", p);
  CHECK(code == 0 && same(get(p, NULL), "caf\xe9 foo\nna\xefve\n"));

  /* CRLF: read as \n, written back with \r\n */
  p = at("crlf.txt");
  PUTL(p, "a\r\nfoo\r\nb\r\n");
  run("view", p);
  CHECK(code == 0 && strstr(output, "     1\ta\n     2\tfoo\n     3\tb\n     4\t\n") &&
        !strchr(output, '\r'));
  run_req(ed, sr(p, "a\nfoo", "a\nbar\nbaz"));
  CHECK(code == 0 && same(get(p, NULL), "a\r\nbar\r\nbaz\r\nb\r\n"));
  PUTL(p, "mixed\r\nlf\nlone\rcr"); /* not all CRLF: newlines become \n */
  run_req(ed, sr(p, "lf", "LF"));
  CHECK(code == 0 && same(get(p, NULL), "mixed\nLF\nlone\ncr"));
  run("undo_edit", p);
  CHECK(same(get(p, NULL), "mixed\r\nlf\nlone\rcr"));
}

static void test_clip(void) {
  const char *p = at("big.txt");
  rock_buf_t b = {0};
  for (int i = 0; i < 15998; i++) rock_buf_append(&b, "\xc3\xa9", 2); /* é: 2 bytes, 1 char */
  rock_buf_append(&b, "\nXYZ", 4);                                     /* chars 15999..16002 */
  put(p, b.data, b.len);
  run("view", p);
  static const char note[] =
      "<response clipped><NOTE>To save on context only part of this file has been shown to "
      "you. You should retry this tool after you have searched inside the file with `grep -n` "
      "in order to find the line numbers of what you are looking for.</NOTE>";
  CHECK(code == 0);
  /* 16000 characters: 15998 é, the newline, X; then the NOTE on that line */
  CHECK(same(strstr(output, "     2\t"), STR("     2\tX%s\n", note)));
  b.len = 0;
  for (int i = 0; i < 15999; i++) rock_buf_append(&b, "\xc3\xa9", 2);
  rock_buf_append(&b, "\n", 1); /* exactly 16000: not clipped */
  put(p, b.data, b.len);
  run("view", p);
  CHECK(code == 0 && !strstr(output, "<response clipped>") && strstr(output, "     2\t\n"));
  rock_buf_free(&b);
}

static void test_special_files(void) {
  const char *fifo = at("fifo");
  REQUIRE(mkfifo(fifo, 0644) == 0);
  run("view", fifo); /* must not block waiting for a writer */
  CHECK(code == ROCK_EDITOR_E_READ && strstr(output, "is not a regular file"));
  run_req(ed, sr(fifo, "a", "b"));
  CHECK(code == ROCK_EDITOR_E_READ);
  struct stat st;
  CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
  run("view", "/dev/null");
  CHECK(code == ROCK_EDITOR_E_READ && strstr(output, "not a regular file"));
  /* larger than the read limit (sparse) */
  const char *big = at("huge");
  int fd = open(big, O_WRONLY | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  CHECK(ftruncate(fd, (off_t)ROCK_EDITOR_MAX_FILE + 1) == 0);
  close(fd);
  run("view", big);
  CHECK(code == ROCK_EDITOR_E_READ && same(output, STR("The file %s is larger than 32 MiB, the "
                                                       "most this editor opens. Read and edit it "
                                                       "in parts with shell commands (`grep -n`, "
                                                       "`sed -n`).", big)));
  unlink(big);
  /* NUL bytes are text like any other */
  const char *z = at("nul");
  PUTL(z, "a\0b\nfoo\n");
  run_req(ed, sr(z, "foo", "bar"));
  size_t n;
  char *got = get(z, &n);
  CHECK(code == 0 && n == 8 && !memcmp(got, "a\0b\nbar\n", 8));
}

/* Python's int() as argparse's type=int applies it (editor_args.c); the
 * expected values are Python 3.11's. */
static void test_py_int(void) {
  static const struct {
    const char *s;
    int ok;
    long long v;
  } cases[] = {
      {"1", 1, 1},           {" 1 ", 1, 1},          {"+1", 1, 1},        {"-1", 1, -1},
      {"1_0", 1, 10},        {"007", 1, 7},          {"-0", 1, 0},        {"-0_0", 1, 0},
      {"\t\n12\v\f\r", 1, 12}, {"\xc2\xa0" "1\xe3\x80\x80", 1, 1}, /* U+00A0, U+3000 */
      {"\xc2\x85" "1", 1, 1},  {"1\xe2\x80\xa8", 1, 1}, /* U+0085, U+2028 */
      {"9223372036854775807", 1, 9223372036854775807LL},
      {"-9223372036854775808", 1, -9223372036854775807LL - 1},
      {"1__0", 0, 0},        {"1.0", 0, 0},          {"abc", 0, 0},       {"", 0, 0},
      {" ", 0, 0},           {"0x1", 0, 0},          {"+", 0, 0},         {"_1", 0, 0},
      {"1_", 0, 0},          {"+_1", 0, 0},          {"+ 1", 0, 0},       {"1 2", 0, 0},
      {"--1", 0, 0},         {"\x1c" "1", 0, 0},     {"\xe2\x80\x8b" "1", 0, 0}, /* U+200B */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    long long v = 42;
    rock_buf_t big = {0};
    int ok = rock__py_int(cases[i].s, strlen(cases[i].s), &v, &big);
    if (ok != cases[i].ok || (ok && v != cases[i].v) || big.len)
      fprintf(stderr, "py_int case %zu [%s]: ok %d v %lld\n", i, cases[i].s, ok, v);
    CHECK(ok == cases[i].ok && (!ok || v == cases[i].v) && !big.len);
    rock_buf_free(&big);
  }
  /* past a long long: saturated, with the digits as Python prints them */
  long long v;
  rock_buf_t big = {0};
  CHECK(rock__py_int(" 000099_999999999999999999 ", 27, &v, &big) == 1 && v == LLONG_MAX &&
        same(big.data, "99999999999999999999"));
  big.len = 0;
  CHECK(rock__py_int("-9223372036854775809", 20, &v, &big) == 1 && v == LLONG_MIN &&
        same(big.data, "-9223372036854775809"));
  rock_buf_free(&big);
}

static const char *py_repr(const char *s) {
  static rock_buf_t b;
  b.len = 0;
  CHECK(rock__py_repr(&b, s, strlen(s)) == 0);
  return b.data ? b.data : "";
}

static const char *py_float(double x) {
  static rock_buf_t b;
  b.len = 0;
  CHECK(rock__py_float(&b, x) == 0);
  return b.data ? b.data : "";
}

/* Python's repr() of a str and of a float (Python 3.11's texts). */
static void test_py_repr(void) {
  CHECK(same(py_repr("1.5"), "'1.5'"));
  CHECK(same(py_repr(""), "''"));
  CHECK(same(py_repr("it's"), "\"it's\""));
  CHECK(same(py_repr("a'\"b"), "'a\\'\"b'"));
  CHECK(same(py_repr("a\nb\tc\r\\"), "'a\\nb\\tc\\r\\\\'"));
  CHECK(same(py_repr("\x01\x1b\x7f"), "'\\x01\\x1b\\x7f'"));
  CHECK(same(py_repr("caf\xc3\xa9 \xf0\x9f\x98\x80"), "'caf\xc3\xa9 \xf0\x9f\x98\x80'"));
  CHECK(same(py_repr("\xc2\x85\xc2\xa0\xc2\xad"), "'\\x85\\xa0\\xad'"));
  CHECK(same(py_repr("\xe2\x80\x83\xe2\x80\x8b\xef\xbb\xbf"), "'\\u2003\\u200b\\ufeff'"));
  CHECK(same(py_repr("\xee\x80\x80\xf3\xb0\x80\x80"), "'\\ue000\\U000f0000'"));
  CHECK(same(py_repr("\xff"), "'\\xff'")); /* not UTF-8 (never from JSON) */
  CHECK(same(py_float(1.5), "1.5"));
  CHECK(same(py_float(1.0), "1.0"));
  CHECK(same(py_float(-42.0), "-42.0"));
  CHECK(same(py_float(-0.0), "-0.0"));
  CHECK(same(py_float(0.1 + 0.2), "0.30000000000000004"));
  CHECK(same(py_float(123.456), "123.456"));
  CHECK(same(py_float(1e15), "1000000000000000.0"));
  CHECK(same(py_float(1e16), "1e+16"));
  CHECK(same(py_float(1e300), "1e+300"));
  CHECK(same(py_float(0.0001), "0.0001"));
  CHECK(same(py_float(0.00012345), "0.00012345"));
  CHECK(same(py_float(1e-05), "1e-05"));
  CHECK(same(py_float(2.5e-7), "2.5e-07"));
  CHECK(same(py_float(9.223372036854776e18), "9.223372036854776e+18"));
}

/* An insert_line argparse refuses is its error (exit code 2), before any
 * other check; one past a long long is named by its digits. */
static void test_argparse(void) {
  static const char usage[] =
      "usage: str_replace_editor [-h] [--file_text FILE_TEXT]\n"
      "                          [--view_range VIEW_RANGE VIEW_RANGE]\n"
      "                          [--old_str OLD_STR] [--new_str NEW_STR]\n"
      "                          [--insert_line INSERT_LINE]\n"
      "                          command path\n"
      "str_replace_editor: error: argument --insert_line: invalid int value: ";
  const char *p = at("ap.txt");
  PUTL(p, "a\nb\n");
  rock_editor_req_t q = {.command = "insert", .path = p, .new_str = "x", .insert_line_set = -1,
                         .insert_line_text = "'1.5'"};
  run_req(ed, q);
  CHECK(code == 2 && same(output, STR("%s'1.5'", usage)));
  q.path = "rel/x", q.command = "view"; /* before the path's checks, whatever the command */
  run_req(ed, q);
  CHECK(code == 2 && same(output, STR("%s'1.5'", usage)));
  CHECK(same(get(p, NULL), "a\nb\n"));
  q = (rock_editor_req_t){.command = "insert", .path = p, .new_str = "x", .insert_line_set = 1,
                          .insert_line = LLONG_MAX, .insert_line_text = "99999999999999999999"};
  run_req(ed, q);
  CHECK(code == 17 && same(output, "Invalid `insert_line` parameter: 99999999999999999999. It "
                                   "should be within the range of lines of the file: [0, 3]"));
}

/* Every answer is bounded: the lines of many matches, an echoed old_str
 * or new_str, a directory listing. */
static void test_bounds(void) {
  const char *p = at("many.txt");
  rock_buf_t b = {0}, w = {0};
  for (int i = 0; i < 200000; i++) /* 100,000 lines hold "m" (twice): the even ones */
    rock_buf_puts(&b, i % 2 ? "xm m\n" : "y\n");
  put(p, b.data, b.len);
  run_req(ed, sr(p, "m", "n"));
  rock_buf_puts(&w, "No replacement was performed. Multiple occurrences of old_str `m` in lines [");
  for (int k = 1; k <= ROCK_EDITOR_MAX_LINES_LISTED; k++)
    rock_buf_printf(&w, "%s%d", k > 1 ? ", " : "", 2 * k);
  rock_buf_printf(&w, "] and %d more lines. Please ensure it is unique",
                  100000 - ROCK_EDITOR_MAX_LINES_LISTED);
  CHECK(code == 16 && same(output, w.data));
  run_req(ed, sr(p, "", "n")); /* "" is in every line */
  CHECK(code == 16 && strstr(output, "lines [1, 2, 3, ") &&
        strstr(output, STR(", 100] and %d more lines.", 200001 - 100)));
  PUTL(p, "ab\nab\n");
  run_req(ed, sr(p, "", "n"));
  CHECK(code == 16 && strstr(output, "in lines [1, 2, 3]. Please"));

  /* old_str and new_str are echoed up to 16000 characters */
  b.len = w.len = 0;
  for (int i = 0; i < 20000; i++) rock_buf_append(&b, "\xc3\xa9", 2); /* 20000 chars */
  rock_buf_t cut = {0};
  rock_buf_append(&cut, b.data, 2 * ROCK_EDITOR_CLIP);
  rock_buf_puts(&cut, "<response clipped>");
  run_req(ed, sr(p, b.data, "x"));
  CHECK(code == 15 && same(output, STR("No replacement was performed, old_str `%s` did not appear "
                                       "verbatim in %s.", cut.data, p)));
  put(p, b.data, b.len);
  run_req(ed, sr(p, b.data, b.data));
  rock_buf_printf(&w, "No replacement was performed, old_str `%s` is the same as new_str `%s`.",
                  cut.data, cut.data);
  CHECK(code == 161 && same(output, w.data));
  rock_buf_free(&cut);

  /* a directory of 12,000 entries of 100 characters: cut at the bound */
  const char *d = at("wide");
  REQUIRE(mkdir(d, 0755) == 0);
  char name[4096];
  int made = 0;
  for (int i = 0; i < 12000; i++) {
    snprintf(name, sizeof name, "%s/%05d%095d", d, i, 0);
    int fd = open(name, O_WRONLY | O_CREAT, 0644);
    made += fd >= 0;
    if (fd >= 0) close(fd);
  }
  REQUIRE(made == 12000);
  run("view", d);
  const char *list = strchr(output, '\n') + 1, *end = output + strlen(output);
  size_t line = strlen(d) + 1 + 100 + 1, root = strlen(d) + 1;
  CHECK(code == 0 && end - list > 2 && !strcmp(end - 20, "<response clipped>\n\n"));
  size_t listed = (size_t)(end - 20 - list);
  CHECK(listed <= ROCK_EDITOR_MAX_LISTING && listed > ROCK_EDITOR_MAX_LISTING - line);
  CHECK((listed - root) % line == 0); /* whole lines */
  snprintf(cmd_buf, sizeof cmd_buf, "rm -rf '%s'", d);
  CHECK(system(cmd_buf) == 0);
  rock_buf_free(&b);
  rock_buf_free(&w);
}

static double cpu_now(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* A 30 MB file: every pass is linear, the answers stay small. The bound
 * is the ("well under a second"); ASan's checks cost ~5x. */
static void test_big_file(void) {
  if (RUNNING_ON_VALGRIND) return; /* minutes there; the rest is what valgrind checks */
#ifdef __SANITIZE_ADDRESS__
  const double limit = 5.0;
#else
  const double limit = 1.0;
#endif
  const char *p = at("big30.txt");
  rock_buf_t b = {0};
  for (int i = 0; i < 7500000; i++) rock_buf_append(&b, "foo\n", 4); /* 30 MB, 7.5M matches */
  rock_buf_puts(&b, "UNIQUE\n");
  put(p, b.data, b.len);
  double t = cpu_now();
  run_req(ed, sr(p, "foo", "bar"));
  double many = cpu_now() - t;
  CHECK(code == 16 && strlen(output) < 1000 && strstr(output, "] and 7499900 more lines."));
  t = cpu_now();
  run_req(ed, sr(p, "UNIQUE", "DONE"));
  double one = cpu_now() - t;
  CHECK(code == 0 && strlen(output) < 1000 && strstr(output, "7500001\tDONE\n"));
  t = cpu_now();
  run("undo_edit", p);
  double undo = cpu_now() - t;
  size_t n;
  char *got = get(p, &n);
  CHECK(code == 0 && n == b.len && !memcmp(got, b.data, n));
  CHECK(strlen(output) < 100000); /* 16000 characters, numbered */
  fprintf(stderr, "30 MB: %.3f s (7.5M matches), %.3f s (edit), %.3f s (undo) of CPU\n", many,
          one, undo);
  CHECK(many < limit && one < limit && undo < limit);
  get("/nonexistent", NULL);
  unlink(p);
  rock_buf_free(&b);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/rock-editor-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  REQUIRE(mkdtemp(dir) != NULL);
  ed = rock_editor_new(0);
  REQUIRE(ed != NULL);
  test_path_checks();
  test_create();
  test_view_file();
  test_view_dir();
  test_str_replace();
  test_insert();
  test_undo();
  test_history_bound();
  test_encodings();
  test_clip();
  test_special_files();
  test_py_int();
  test_py_repr();
  test_argparse();
  test_bounds();
  test_big_file();
  rock_editor_free(ed);
  free(output);
  get("/nonexistent", NULL);
  snprintf(cmd_buf, sizeof cmd_buf, "rm -rf '%s'", dir);
  CHECK(system(cmd_buf) == 0);
  return check_report();
}
