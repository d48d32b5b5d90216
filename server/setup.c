#include "setup.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "config.h"

typedef enum { FORM_COMMAND, FORM_JSON, FORM_TOML } form_t;

/* One client: how its entry is written and where it goes. The locations
 * are each client's documented ones (docs/install.md cites them). */
typedef struct {
  const char *name;
  form_t form;
  const char *servers_key; /* JSON: the object holding the servers */
  const char *extra;       /* JSON: further fields of the entry, as JSON; NULL if none */
  const char *on_linux, *on_macos, *on_windows;
} client_t;

/* capture may record for up to 120 s: the clients whose tool timeout is
 * configured per server get 180 s (examples/clients does the same). */
static const client_t clients[] = {
    {"claude-code", FORM_COMMAND, NULL, NULL, "~/.claude.json (written by the command)",
     "~/.claude.json (written by the command)",
     "run the command inside WSL, where Claude Code runs"},
    {"claude-desktop", FORM_JSON, "mcpServers", NULL,
     "none: Claude Desktop has no Linux build (use claude-code)",
     "~/Library/Application Support/Claude/claude_desktop_config.json",
     "%APPDATA%\\Claude\\claude_desktop_config.json"},
    {"cursor", FORM_JSON, "mcpServers", NULL,
     "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
     "~/.cursor/mcp.json (or .cursor/mcp.json in a project)", "%USERPROFILE%\\.cursor\\mcp.json"},
    {"vscode", FORM_JSON, "servers", "{\"type\": \"stdio\"}",
     "~/.config/Code/User/mcp.json (or .vscode/mcp.json in a workspace)",
     "~/Library/Application Support/Code/User/mcp.json (or .vscode/mcp.json in a workspace)",
     "%APPDATA%\\Code\\User\\mcp.json (a WSL window: .vscode/mcp.json, as printed)"},
    {"codex", FORM_TOML, NULL, NULL, "~/.codex/config.toml", "~/.codex/config.toml",
     "%USERPROFILE%\\.codex\\config.toml (the wsl.exe form below), or as printed in "
     "~/.codex/config.toml inside WSL when Codex runs there"},
    {"gemini", FORM_JSON, "mcpServers", "{\"timeout\": 180000, \"trust\": false}",
     "~/.gemini/settings.json (or .gemini/settings.json in a project)",
     "~/.gemini/settings.json (or .gemini/settings.json in a project)",
     "%USERPROFILE%\\.gemini\\settings.json (the wsl.exe form below), or as printed in "
     "~/.gemini/settings.json inside WSL when Gemini CLI runs there"},
};

/* A shell word that means s: s itself when it holds only safe characters,
 * else single-quoted with each ' written as '\''. */
static void put_shell_word(FILE *out, const char *s) {
  if (*s && strspn(s,
                   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                   "_-./:=@%+,") == strlen(s)) {
    fputs(s, out);
    return;
  }
  fputc('\'', out);
  for (; *s; s++) {
    if (*s == '\'')
      fputs("'\\''", out);
    else
      fputc(*s, out);
  }
  fputc('\'', out);
}

/* A TOML basic string. Only escapes TOML and JSON share are used, so the
 * same text is also a JSON string: \" and \\, and \uXXXX for the control
 * characters and DEL, which TOML forbids raw. */
static void put_toml_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20 || c == 0x7f)
      fprintf(out, "\\u%04X", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void put_toml_array(FILE *out, const json_t *arr) {
  size_t i;
  json_t *v;
  fputc('[', out);
  json_array_foreach(arr, i, v) {
    if (i) fputs(", ", out);
    put_toml_string(out, json_string_value(v));
  }
  fputc(']', out);
}

/* The entry for a client on Windows: wsl.exe runs the server inside the
 * default WSL distribution (-e: with no shell in between). */
static json_t *wsl_args(const char *exe, const json_t *args) {
  json_t *a = json_pack("[ss]", "-e", exe);
  if (a && json_array_extend(a, (json_t *)args) != 0) {
    json_decref(a);
    return NULL;
  }
  return a;
}

static int print_json(const client_t *c, const char *exe, json_t *args, FILE *out, FILE *err) {
  json_t *entry = json_object();
  json_t *extra = c->extra ? json_loads(c->extra, 0, NULL) : json_object();
  int rc = 2;
  if (!entry || !extra || json_object_set_new(entry, "command", json_string(exe)) ||
      json_object_set(entry, "args", args) || json_object_update(entry, extra))
    goto done;
  json_t *root = json_pack("{s{sO}}", c->servers_key, "telescope", entry);
  char *text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
  json_t *wsl = json_pack("{ssso}", "command", "wsl.exe", "args", wsl_args(exe, args));
  char *wsl_text = wsl ? json_dumps(wsl, JSON_COMPACT) : NULL;
  if (text && wsl_text) {
    fprintf(out, "%s\n", text);
    fprintf(err, "Merge it into \"%s\" of:\n  Linux:   %s\n  macOS:   %s\n  Windows: %s\n",
            c->servers_key, c->on_linux, c->on_macos, c->on_windows);
    fprintf(err,
            "A client running on Windows starts the server inside WSL: in its entry use\n"
            "  %s\n",
            wsl_text);
    rc = 0;
  }
  free(text);
  free(wsl_text);
  json_decref(root);
  json_decref(wsl);
done:
  json_decref(entry);
  json_decref(extra);
  return rc;
}

static int print_toml(const client_t *c, const char *exe, json_t *args, FILE *out, FILE *err) {
  json_t *wsl = wsl_args(exe, args);
  if (!wsl) return 2;
  fputs("[mcp_servers.telescope]\ncommand = ", out);
  put_toml_string(out, exe);
  fputs("\nargs = ", out);
  put_toml_array(out, args);
  fputs("\nstartup_timeout_sec = 10\ntool_timeout_sec = 180\n", out);
  fprintf(err, "Add it to:\n  Linux:   %s\n  macOS:   %s\n  Windows: %s\n", c->on_linux,
          c->on_macos, c->on_windows);
  fputs(
      "A client running on Windows starts the server inside WSL: in its table use\n"
      "  command = \"wsl.exe\"\n  args = ",
      err);
  put_toml_array(err, wsl);
  fputc('\n', err);
  json_decref(wsl);
  return 0;
}

static int print_command(const client_t *c, const char *exe, char *const *args, int nargs,
                         FILE *out, FILE *err) {
  /* Options go before the server's name, its command after `--`. */
  fputs("claude mcp add --transport stdio --scope user telescope -- ", out);
  put_shell_word(out, exe);
  for (int i = 0; i < nargs; i++) {
    fputc(' ', out);
    put_shell_word(out, args[i]);
  }
  fputc('\n', out);
  fprintf(err,
          "Run it in a shell; it registers telescope for every project in %s\n"
          "(--scope project writes .mcp.json in the project instead).\nWindows: %s.\n",
          "~/.claude.json", c->on_windows);
  return 0;
}

int setup_print(const char *client, const char *exe, char *const *args, int nargs, FILE *out,
                FILE *err) {
  const client_t *c = NULL;
  for (size_t i = 0; i < sizeof clients / sizeof clients[0]; i++)
    if (strcmp(clients[i].name, client) == 0) c = &clients[i];
  if (!c) {
    fprintf(err, "telescope-mcp: --setup: unknown client '%s' (%s)\n", client, SETUP_CLIENTS);
    return 2;
  }
  /* jansson refuses a string that is not UTF-8; no client would take one. */
  json_t *jargs = json_array();
  for (int i = 0; jargs && i < nargs; i++) {
    if (json_array_append_new(jargs, json_string(args[i])) != 0) {
      fprintf(err, "telescope-mcp: --setup: argument %d is not UTF-8\n", i + 1);
      json_decref(jargs);
      return 2;
    }
  }
  json_t *jexe = json_string(exe);
  if (!jargs || !jexe) {
    fprintf(err, "telescope-mcp: --setup: this executable's path is not UTF-8\n");
    json_decref(jargs);
    return 2;
  }
  json_decref(jexe);
  int rc;
  switch (c->form) {
    case FORM_COMMAND:
      rc = print_command(c, exe, args, nargs, out, err);
      break;
    case FORM_TOML:
      rc = print_toml(c, exe, jargs, out, err);
      break;
    default:
      rc = print_json(c, exe, jargs, out, err);
      break;
  }
  json_decref(jargs);
  return rc;
}

int setup_main(const char *client, char **args, int nargs) {
  /* The arguments must be a command line the server accepts: a typo found
   * now is not a client that silently fails to start it later. */
  char **argv = calloc((size_t)nargs + 2, sizeof *argv);
  if (!argv) return 1;
  argv[0] = "telescope-mcp";
  for (int i = 0; i < nargs; i++) argv[i + 1] = args[i];
  config_t cfg;
  config_result_t r = config_parse(&cfg, nargs + 1, argv, stderr, stderr);
  config_close(&cfg);
  free(argv);
  if (r != CONFIG_RUN) {
    fprintf(stderr,
            "telescope-mcp: --setup: the arguments after it are not a server command "
            "line (see --help)\n");
    return 2;
  }
  /* uv_exepath resolves the running binary on every platform libuv runs on
   * (/proc/self/exe, _NSGetExecutablePath, ...), symlinks followed. */
  char exe[4096];
  size_t size = sizeof exe;
  if (uv_exepath(exe, &size) != 0 || exe[0] != '/') {
    fprintf(stderr, "telescope-mcp: --setup: cannot find this executable's absolute path\n");
    return 1;
  }
  return setup_print(client, exe, args, nargs, stdout, stderr);
}
