/* reply.h: how every endpoint family answers and reads its arguments.
 * Answers are JSON objects or {code, message} errors whose code is the
 * host's (core/err.h); argument readers check type and range and say what
 * is wrong. routes.c routes requests here; the families (routes_*.c,
 * files.c) use this file and their mechanism, never each other. */
#ifndef ROCK_ROCKLET_REPLY_H
#define ROCK_ROCKLET_REPLY_H

#include <jansson.h>
#include <stddef.h>

#include "../core/err.h"
#include "../http/server.h"

/* Answer with a JSON object (stolen) or with an error {code, message}. */
void reply_json(rock_http_req_t *req, json_t *obj);
/* The same with n big text fields first: keys[i] (plain names) holding
 * texts[i] (lens[i] bytes of valid UTF-8), each escaped once straight into
 * the answer (core/jsonstr.h): jansson never holds them. */
void reply_json_texts(rock_http_req_t *req, json_t *obj, size_t n, const char *const *keys,
                      const char *const *texts, const size_t *lens);
void reply_error(rock_http_req_t *req, rock_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The error of a file that could not be replaced (replace.h's -errno rc):
 * "<op> <path>: why". A FIFO, device or socket (-EINVAL) and a directory
 * are bad input, a missing parent not_found, the rest an I/O failure. */
void reply_replace_error(rock_http_req_t *req, const char *op, const char *path, int rc);
/* The same with an explicit HTTP status (405 for a wrong method). */
void reply_error_status(rock_http_req_t *req, int status, rock_err e,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same with header lines of its own ("Name: value\r\n" each) besides
 * the JSON Content-Type (416's Content-Range). */
void reply_error_headers(rock_http_req_t *req, int status, const char *headers,
                         rock_err e, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Called after every answer (main.c renews the idle lease there). */
void reply_set_hook(void (*after_answer)(void));

/* The value of key in a URL's query string q, percent-decoded ('+' is a
 * space): malloc'ed, or NULL if absent or malformed (a bad escape, %00). */
char *query_arg(const char *q, const char *key);

/* Argument readers: set *err (malloc'd, if not already set) when a field
 * is missing, has the wrong type or is out of range; return a default
 * when it is absent and optional. */
const char *arg_string(json_t *o, const char *key, int required, char **err);
double arg_number(json_t *o, const char *key, double dflt, char **err);
/* A duration in seconds: 0 <= v <= max. */
double arg_seconds(json_t *o, const char *key, double dflt, double max, char **err);
/* A byte count: min <= v <= max. */
size_t arg_size(json_t *o, const char *key, size_t dflt, size_t min, size_t max,
                char **err);
/* An object of strings as {key, value, ..., NULL}, borrowed from o (valid
 * while o is); non-string values are skipped. NULL when absent; on error
 * *err is set. */
const char **arg_env(json_t *o, const char *key, char **err);

/* How a command's answer is asked for by its Accept header (reply.c):
 * JSON (the default), raw (application/octet-stream: the bytes as they
 * came) or text (text/plain: the cleaned text JSON would carry, as the
 * body, the other fields in headers). */
enum { ROCKLET_JSON, ROCKLET_RAW, ROCKLET_TEXT };
#define ROCKLET_TEXT_TYPE "text/plain; charset=utf-8"
int rocklet_answer_as(const rock_http_req_t *req);

#endif
