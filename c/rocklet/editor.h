/* editor.h: SWE-agent's str_replace_editor (view, create, str_replace,
 * insert, undo_edit) in plain C, with no HTTP: the texts a model reads are
 * SWE-agent's, byte for byte (shared/SWE-FACTS.md), and bounded: a text
 * echoed (old_str, new_str) is cut at ROCK_EDITOR_CLIP characters, the
 * lines of several matches at ROCK_EDITOR_MAX_LINES_LISTED, a directory
 * listing at ROCK_EDITOR_MAX_LISTING bytes. Every call is linear in the
 * file's size. The edit history lives in a rock_editor_t, bounded in bytes;
 * a rock_editor_t serves one call at a time (any thread, not two at once:
 * routes_editor.c runs the calls one by one on libuv's thread pool).
 * routes_editor.c serves it as POST /editor; docs/rocklet-api.md says what
 * it does. */
#ifndef ROCK_ROCKLET_EDITOR_H
#define ROCK_ROCKLET_EDITOR_H

#include <stddef.h>

#include "../core/buf.h"

/* The largest file the editor opens: read_file's limit (files.c). */
#define ROCK_EDITOR_MAX_FILE ((size_t)32 << 20)
/* A view shows this many characters (code points) of content at most. */
#define ROCK_EDITOR_CLIP 16000
/* The default bound on the bytes the undo history keeps (all files). */
#define ROCK_EDITOR_HISTORY_MAX ((size_t)32 << 20)
/* "Multiple occurrences ... in lines [...]" names this many lines at most;
 * the rest are counted ("and N more lines"). */
#define ROCK_EDITOR_MAX_LINES_LISTED 100
/* A directory listing stops after this many bytes (whole lines), followed
 * by a "<response clipped>" line: a command's default max_output. */
#define ROCK_EDITOR_MAX_LISTING ((size_t)1 << 20)
/* The mark after a text cut short (SWE-agent's, the start of its NOTE). */
#define ROCK_EDITOR_CLIPPED "<response clipped>"

/* Exit codes of the failures SWE-agent has no code for (its own: 1..21). */
#define ROCK_EDITOR_E_READ 19  /* the file cannot be read (or is too large) */
#define ROCK_EDITOR_E_WRITE 20 /* the file cannot be written: it is unchanged */

/* The editor and its history. Allocated by rock_editor_new, freed by
 * rock_editor_free, which frees the history too. */
typedef struct rock_editor_s rock_editor_t;

/* One call. Strings are borrowed for the call, NUL-terminated, UTF-8. */
typedef struct {
  const char *command;   /* "view" | "create" | "str_replace" | "insert" | "undo_edit" */
  const char *path;      /* absolute; required */
  const char *file_text; /* create; NULL: absent */
  const char *old_str;   /* str_replace; NULL: absent */
  const char *new_str;   /* str_replace (NULL = ""), insert; NULL: absent */
  int view_range_set;    /* 0: absent, 1: view_range holds two integers,
                            -1: given but not two integers */
  long long view_range[2];
  int insert_line_set;  /* 0: absent, 1: insert_line holds it, -1: given but
                           not an integer: SWE-agent's argparse refuses it
                           (exit code 2, before anything else) */
  long long insert_line;
  /* -1: the value as argparse names it (Python's repr of the string it
   * got, e.g. '1.5'); 1: NULL, or the integer's digits when it does not
   * fit a long long (insert_line is then LLONG_MIN or LLONG_MAX). */
  const char *insert_line_text;
  const char *cwd; /* for the relative-path hint only; NULL: "/" */
} rock_editor_req_t;

/* A new editor whose history keeps at most history_max bytes (0: the
 * default, ROCK_EDITOR_HISTORY_MAX). NULL when out of memory. */
rock_editor_t *rock_editor_new(size_t history_max);
void rock_editor_free(rock_editor_t *ed);
/* The bytes the history holds now (texts, paths and bookkeeping). */
size_t rock_editor_history_bytes(const rock_editor_t *ed);

/* Run one call: out receives the text a model reads (appended). Returns
 * the tool's exit code: 0 on success, SWE-agent's code for a tool error
 * (1..21, 161; the file is then unchanged), or -1 when out of memory.
 * Never blocks on a FIFO or device. */
int rock_editor_run(rock_editor_t *ed, const rock_editor_req_t *req, rock_buf_t *out);

#endif
