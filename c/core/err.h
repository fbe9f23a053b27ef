/* err.h: rock's error codes, shared by the host and the rocklet.
 * One table (ROCK_ERR_MAP) gives each error its enum, its stable snake_case
 * code (part of the API: add, never rename) and a default message.
 * See err.c for the lookups and log.c for how errors are reported. */
#ifndef ROCK_CORE_ERR_H
#define ROCK_CORE_ERR_H

#define ROCK_ERR_MAP(XX)                                                       \
  XX(OK, "ok", "success")                                                      \
  XX(INVALID_ARGUMENT, "invalid_argument", "invalid argument")                 \
  XX(BAD_REQUEST, "bad_request", "malformed request")                          \
  XX(NOT_FOUND, "not_found", "not found")                                      \
  XX(SESSION_NOT_FOUND, "session_not_found", "session not found")              \
  XX(SESSION_EXISTS, "session_exists", "session already exists")               \
  XX(SESSION_BUSY, "session_busy", "session is running another command")       \
  XX(SESSION_ENDED, "session_ended", "session ended")                          \
  XX(TIMEOUT, "timeout", "timed out")                                          \
  XX(IO, "io_error", "i/o error")                                              \
  XX(NO_BASH, "bash_not_found", "bash not found in the sandbox")               \
  XX(SPAWN_FAILED, "spawn_failed", "could not start process")                  \
  XX(NO_MEMORY, "no_memory", "out of memory")                                  \
  XX(CONNECTION, "connection_failed", "connection failed")                     \
  XX(HTTP, "http_error", "http error")                                         \
  XX(SANDBOX_NOT_ALIVE, "sandbox_not_alive", "sandbox is not alive")           \
  XX(SANDBOX_START_FAILED, "sandbox_start_failed", "sandbox failed to start")  \
  XX(NOT_IN_TASK, "not_in_task", "call must run inside a task")                \
  XX(CANCELLED, "cancelled", "operation cancelled")                            \
  XX(ENGINE_UNAVAILABLE, "engine_unavailable", "container engine unreachable") \
  XX(ENGINE_ERROR, "engine_error", "container engine error")                   \
  XX(IMAGE_NOT_FOUND, "image_not_found", "image not found")                    \
  XX(CONFLICT, "conflict", "conflict with the current state")                  \
  XX(INTERNAL, "internal", "internal error")                                   \
  XX(ENV_ERROR, "env_error", "the environment answered an error")

typedef enum {
#define XX(name, code, msg) ROCK_E_##name,
  ROCK_ERR_MAP(XX)
#undef XX
  ROCK_E__COUNT
} rock_err;

/* Stable short code ("timeout") and default message of an error. */
const char *rock_err_name(rock_err e);
const char *rock_err_message(rock_err e);

#endif
