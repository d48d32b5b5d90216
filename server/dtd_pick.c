#include "dtd_pick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"
#include "vm_uri.h"

#define SHOWN "\xe2\x80\xa6redacted\xe2\x80\xa6" /* what an answer shows for a token */

/* The normalised ws URI of a DTD-listed app (what bind_app compares). */
static int normalised(const char *uri, char *out, size_t n) {
  vm_uri_t u;
  if (!uri || vm_uri_parse(uri, 1, &u, NULL, 0) != VM_URI_OK) return -1;
  snprintf(out, n, "%s", u.ws);
  return 0;
}

/* "the app 'demo' unregistered …" when the latest change says the list
 * emptied because an app left; NULL otherwise. */
static const char *why_empty(const json_t *dtd, char *buf, size_t n) {
  const json_t *changes = json_object_get(dtd, "changes");
  const json_t *last = json_array_get(changes, json_array_size(changes) - 1);
  const char *ev = json_string_value(json_object_get(last, "event"));
  if (!ev || strcmp(ev, "unregistered")) return NULL;
  const char *name = json_string_value(json_object_get(last, "name"));
  snprintf(buf, n,
           "%s%s%s unregistered from the Dart Tooling Daemon: it stopped, or the IDE detached "
           "from it",
           name ? "the app '" : "the app at ",
           name ? name : json_string_value(json_object_get(last, "vmServiceUri")), name ? "'" : "");
  return buf;
}

/* 1 when the app in use (a normalised ws URI) is among the listed apps. */
static int listed(const json_t *apps, const char *in_use) {
  char u[VM_URI_MAX];
  size_t i;
  json_t *a;
  json_array_foreach(apps, i, a) {
    if (!normalised(json_string_value(json_object_get(a, "uri")), u, sizeof u) && !strcmp(u, in_use))
      return 1;
  }
  return 0;
}

/* The URI of the one listed app called name (NULL: none, or several). */
static const char *named(const json_t *apps, const char *name) {
  const char *uri = NULL;
  size_t i, k = 0;
  json_t *a;
  json_array_foreach(apps, i, a) {
    const char *n = json_string_value(json_object_get(a, "name"));
    if (n && !strcmp(n, name)) k++, uri = json_string_value(json_object_get(a, "uri"));
  }
  return k == 1 ? uri : NULL;
}

static void looked(void *arg, diag_code_t diag, const char *detail) {
  op_t *op = arg;
  tool_ctx_t *ctx = op->ctx;
  const json_t *apps = dtd_apps(ctx->dtd);
  size_t n = json_array_size(apps);
  char one[VM_URI_MAX] = "", why[400];
  op->look = NULL;
  if (diag == DIAG_NONE && op->a.uri && strstr(op->a.uri, SHOWN)) {
    /* vmServiceUri as status listed it, token redacted: the app it names. */
    const char *full = dtd_find_app(ctx->dtd, op->a.uri);
    if (!full) {
      op->dtd_json = dtd_to_json(ctx->dtd, NULL);
      op_fail_diag(op, DIAG_APP_CHOICE, "vmServiceUri is a redacted URI that names none of the "
                                        "apps the Dart Tooling Daemon lists now");
      return;
    }
    free(op->a.uri);
    if (!(op->a.uri = strdup(full))) {
      op_fail_text(op, "internal error: out of memory");
      return;
    }
  }
  if (diag == DIAG_NONE && op->a.app && !apps_find(ctx, op->a.app)) {
    /* app: a name the daemon lists: the call goes to that app's URI. */
    const char *full = strstr(op->a.app, SHOWN) ? dtd_find_app(ctx->dtd, op->a.app)
                                                 : named(apps, op->a.app);
    if (full) {
      free(op->a.app);
      if (!(op->a.app = strdup(full))) {
        op_fail_text(op, "internal error: out of memory");
        return;
      }
    }
  }
  if (op->a.app) { /* the call named its app: the DTD's list is information */
    if (op->action == A_STATUS) op->dtd_json = dtd_to_json(ctx->dtd, NULL);
    op->after_pick(op);
    return;
  }
  if (diag == DIAG_NONE && n == 1)
    normalised(json_string_value(json_object_get(json_array_get(apps, 0), "uri")), one, sizeof one);
  /* The one app connected or measured stays in use while the daemon lists
   * it among others (a second app launched mid-session must not break its
   * stop), or while the daemon cannot be asked (the IDE that hosted it went
   * away). */
  const appref_t *active = apps_only_active(ctx);
  const char *in_use = active && active->uri[0] ? active->uri : NULL;
  if (!op->a.uri && in_use && ((diag == DIAG_NONE && n > 1 && listed(apps, in_use)) ||
                               diag != DIAG_NONE)) {
    if (diag != DIAG_NONE)
      op_warn(op, "the Dart Tooling Daemon could not be asked (%s); the app in use was kept", detail);
    else
      op_warn(op, "the Dart Tooling Daemon lists %zu apps; the one in use was kept (pass vmServiceUri "
                  "to measure another)", n);
    snprintf(one, sizeof one, "%s", in_use);
  }
  if (op->a.uri) { /* the call named its app: the DTD's list is information */
    vm_uri_t u;
    const char *named = vm_uri_parse(op->a.uri, 1, &u, NULL, 0) == VM_URI_OK ? u.ws : NULL;
    if (op->action == A_STATUS) op->dtd_json = dtd_to_json(ctx->dtd, named);
    op->after_pick(op);
    return;
  }
  if (one[0]) {
    if (op->action == A_STATUS) op->dtd_json = dtd_to_json(ctx->dtd, one);
    if (!(op->a.uri = strdup(one))) {
      op_fail_text(op, "internal error: out of memory");
      return;
    }
    op->after_pick(op);
    return;
  }
  op->dtd_json = dtd_to_json(ctx->dtd, ctx->app && ctx->app->uri[0] ? ctx->app->uri : NULL);
  if (diag != DIAG_NONE) {
    op_fail_diag(op, diag, detail);
    return;
  }
  op_fail_diag(op, n ? DIAG_APP_CHOICE : DIAG_NO_APP,
               n ? NULL : why_empty(op->dtd_json, why, sizeof why));
}

int dtd_pick(op_t *op, void (*then)(op_t *op)) {
  tool_ctx_t *ctx = op->ctx;
  const char *uri = op->a.dtd_uri ? op->a.dtd_uri : ctx->dtd ? NULL : ctx->cfg->dtd_uri;
  char err[256];
  if (!uri && !(ctx->dtd && dtd_has_uri(ctx->dtd))) return 0;
  if (op->a.uri && op->action != A_STATUS && !op->a.dtd_uri && !strstr(op->a.uri, SHOWN)) return 0;
  /* An app the server knows by that name, or a full URI, needs no look (as
   * vmServiceUri above); a redacted one, or a name, is resolved from the list. */
  vm_uri_t u;
  if (op->a.app && op->action != A_STATUS && !op->a.dtd_uri &&
      (apps_find(ctx, op->a.app) || (!strstr(op->a.app, SHOWN) &&
                                     vm_uri_parse(op->a.app, 1, &u, NULL, 0) == VM_URI_OK)))
    return 0;
  if (!ctx->dtd &&
      !(ctx->dtd = dtd_new(ctx->loop, (int)ctx->cfg->call_timeout_ms, ctx->cfg->allow_remote))) {
    op_fail_text(op, "internal error: out of memory");
    return 1;
  }
  if (uri && dtd_set_uri(ctx->dtd, uri, err, sizeof err) != 0) {
    op_fail_diag(op, DIAG_DTD_UNUSABLE, err); /* refused before anything is dialled */
    return 1;
  }
  op->after_pick = then;
  if (!(op->look = dtd_look(ctx->dtd, looked, op)))
    op_fail_text(op, "internal error: out of memory");
  return 1;
}
