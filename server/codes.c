#include "codes.h"

#include <string.h>

const char *rpc_error_message(int code) {
  switch (code) {
#define XX(name, c, msg) \
  case c:                \
    return msg;
    RPC_ERROR_MAP(XX)
#undef XX
  }
  return "Unknown error";
}

static const struct {
  const char *name, *message, *hint;
  int is_error;
} diag_table[DIAG__COUNT] = {
    [DIAG_NONE] = {NULL, NULL, NULL, 0},
#define XX(n, wire, is_err, msg, hint) [DIAG_##n] = {wire, msg, hint, is_err},
    DIAG_MAP(XX)
#undef XX
};

static int diag_valid(diag_code_t c) { return c > DIAG_NONE && c < DIAG__COUNT; }

const char *diag_name(diag_code_t c) { return diag_valid(c) ? diag_table[c].name : NULL; }
const char *diag_message(diag_code_t c) { return diag_valid(c) ? diag_table[c].message : NULL; }
const char *diag_hint(diag_code_t c) { return diag_valid(c) ? diag_table[c].hint : NULL; }
int diag_is_error(diag_code_t c) { return diag_valid(c) && diag_table[c].is_error; }

diag_code_t diag_from_name(const char *name) {
  for (int c = DIAG_NONE + 1; c < DIAG__COUNT; c++)
    if (name && strcmp(diag_table[c].name, name) == 0) return (diag_code_t)c;
  return DIAG_NONE;
}
