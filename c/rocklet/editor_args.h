/* editor_args.h: the editor's integer arguments as SWE-agent takes them.
 * SWE-agent renders a model's tool arguments into a shell command that
 * argparse parses with type=int, so `insert_line` and the elements of
 * `view_range` may come as strings Python's int() reads ("1", " +1 ",
 * "1_000"), and a value int() refuses is named in argparse's error as
 * Python prints it ('1.5', "it's"). These helpers say what int() takes and
 * print values as Python's repr() does; routes_editor.c applies them to
 * the JSON it gets. Pure functions on buffers. */
#ifndef ROCK_ROCKLET_EDITOR_ARGS_H
#define ROCK_ROCKLET_EDITOR_ARGS_H

#include <stddef.h>

#include "../core/buf.h"

/* Python's int() of the str s[0..n) (UTF-8): Python's whitespace around,
 * one optional sign, ASCII digits with single underscores between them.
 * Returns 1 and the value in *v, 0 when int() refuses s, -1 when out of
 * memory. A value past a long long is saturated (LLONG_MIN, LLONG_MAX)
 * and big, when not NULL, gets its digits as Python prints the int
 * ("-12", no leading zeros).
 * Python's int() also reads the decimal digits of other scripts ("١");
 * these are refused here. */
int rock__py_int(const char *s, size_t n, long long *v, rock_buf_t *big);

/* Append Python's repr() of the str s[0..n) (UTF-8; a byte that is not
 * valid UTF-8 prints as \xNN): quoted with ' (with " when s holds ' and
 * no "), the control characters escaped, and the non-printable ones
 * (separators, format characters, private use) as \xNN, \uNNNN or
 * \UNNNNNNNN. Code points unassigned in Unicode, which Python escapes too,
 * print as themselves. 0 or -1. */
int rock__py_repr(rock_buf_t *out, const char *s, size_t n);

/* Append Python's repr() of the float x: the shortest digits that read
 * back as x, in fixed notation for exponents -4..15 ("1.5", "100.0") and
 * scientific otherwise ("1e+16", "1.5e-05"); "inf", "-inf", "nan". 0 or -1. */
int rock__py_float(rock_buf_t *out, double x);

#endif
