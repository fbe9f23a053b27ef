/* err.c: names and messages for the codes of err.h.
 * Both lookups come from the one ROCK_ERR_MAP table, as uv_err_name and
 * uv_strerror do in libuv. */
#include "err.h"

const char *rock_err_name(rock_err e) {
  switch (e) {
#define XX(name, code, msg)                                                    \
  case ROCK_E_##name:                                                          \
    return code;
    ROCK_ERR_MAP(XX)
#undef XX
  default:
    return "unknown";
  }
}

const char *rock_err_message(rock_err e) {
  switch (e) {
#define XX(name, code, msg)                                                    \
  case ROCK_E_##name:                                                          \
    return msg;
    ROCK_ERR_MAP(XX)
#undef XX
  default:
    return "unknown error";
  }
}
