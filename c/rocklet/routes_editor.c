/* routes_editor.c: /editor on the wire: the JSON request becomes a
 * rock_editor_req_t for editor.c, whose answer comes back as {output,
 * error, exit_code} with HTTP 200 (a tool error is an observation for the
 * model). Only a request of the wrong shape (command or path missing, a
 * field of the wrong JSON type) is a 400. The history lives as long as the
 * rocklet. */
#include <stdlib.h>
#include <string.h>

#include "editor.h"
#include "editor_text.h"
#include "rocklet.h"

static rock_editor_t *editor; /* made on the first call, kept for life */

/* view_range: absent (or []) -> 0; two integers -> 1; anything else -> -1
 * (SWE-agent's "should be a list of two integers", a tool error). */
static int view_range(json_t *v, long long r[2]) {
  if (!v || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0)) return 0;
  if (!json_is_array(v) || json_array_size(v) != 2) return -1;
  for (int i = 0; i < 2; i++) {
    json_t *x = json_array_get(v, i);
    if (!json_is_integer(x)) return -1;
    r[i] = json_integer_value(x);
  }
  return 1;
}

void editor_run(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  rock_editor_req_t q = {0};
  q.command = arg_string(args, "command", 1, &err);
  q.path = arg_string(args, "path", 1, &err);
  q.file_text = arg_string(args, "file_text", 0, &err);
  q.old_str = arg_string(args, "old_str", 0, &err);
  q.new_str = arg_string(args, "new_str", 0, &err);
  q.cwd = arg_string(args, "cwd", 0, &err);
  json_t *il = json_object_get(args, "insert_line");
  if (il && !json_is_null(il)) {
    if (json_is_integer(il)) q.insert_line_set = 1, q.insert_line = json_integer_value(il);
    else if (!err) err = strdup("field 'insert_line' must be an integer");
  }
  q.view_range_set = view_range(json_object_get(args, "view_range"), q.view_range);
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  if (!editor && !(editor = rock_editor_new(0))) {
    reply_error(req, ROCK_E_NO_MEMORY, "editor: out of memory");
    return;
  }
  rock_buf_t out = {0};
  int rc = rock_editor_run(editor, &q, &out);
  json_t *o = rc < 0 ? NULL : json_object();
  if (o) {
    json_t *text = json_stringn(out.data ? out.data : "", out.len);
    rock_buf_t clean = {0}; /* never needed: every part of out is UTF-8 */
    if (!text && !rock__utf8_clean(&clean, out.data, out.len))
      text = json_stringn(clean.data, clean.len);
    rock_buf_free(&clean);
    if (!text || json_object_set_new(o, "output", text)) json_decref(o), o = NULL;
  }
  if (o) {
    json_object_set_new(o, "error", json_boolean(rc != 0));
    json_object_set_new(o, "exit_code", json_integer(rc));
  }
  rock_buf_free(&out);
  if (!o) {
    reply_error(req, ROCK_E_NO_MEMORY, "editor: out of memory");
    return;
  }
  reply_json(req, o);
}
