/* vm_wire: the VM service's messages as bytes and JSON, with no socket: the
 * allowlist, the streaming id scanner, the bounded reassembly buffer and the
 * reply/event classification (vm_wire.h). */
#include "vm_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After a big reply, give the memory back rather than keep it as capacity. */
#define RX_KEEP_CAP (1u << 20)

static const char *const allowed_methods[] = {
    "getVersion",
    "getVM",
    "getIsolate",
    "streamListen",
    "streamCancel",
    "_flutter.listViews",
    "ext.telescope.frames",
    "ext.flutter.profileWidgetBuilds",
    "ext.flutter.profileRenderObjectLayouts",
    "ext.flutter.profileRenderObjectPaints",
    "ext.flutter.inspector.trackRebuildDirtyWidgets",
    /* Only when a rebuilt widget's location id came without its location. */
    "ext.flutter.inspector.widgetLocationIdMap",
    /* Without the watcher: the probe asks Flutter's own frame request. */
    "ext.ui.window.scheduleFrame",
    /* The VM timeline, read-only but for the recorded streams, which a
     * session sets and restores exactly; never clearVMTimeline (shared). */
    "getVMTimelineFlags",
    "setVMTimelineFlags",
    "getVMTimeline",
    "getVMTimelineMicros",
    /* Where to edit: the UI isolate's CPU samples over janky frames (read only). */
    "getCpuSamples",
    /* Only after getVM was unknown: is it a Dart Tooling Daemon (read only)? */
    "getRegisteredServices",
};

int vm_client_method_allowed(const char *method) {
  if (!method) return 0;
  for (size_t i = 0; i < sizeof allowed_methods / sizeof *allowed_methods; i++)
    if (strcmp(method, allowed_methods[i]) == 0) return 1;
  return 0;
}


void vm_idscan_feed(vm_idscan_t *s, const char *p, size_t n) {
  for (size_t i = 0; i < n && !s->found; i++) {
    char c = p[i];
    if (s->in_str) {
      if (s->esc) {
        s->esc = 0;
      } else if (c == '\\') {
        s->esc = 1;
        continue;
      } else if (c == '"') {
        s->in_str = 0;
        if (s->str_role == 1) s->after_key = 1;
        if (s->str_role == 2) s->found = 1;
        continue;
      }
      if (s->str_role == 1) {
        if (s->klen < sizeof s->key - 1)
          s->key[s->klen++] = c;
        else
          s->key_long = 1;
      } else if (s->str_role == 2 && s->idlen < sizeof s->id - 1) {
        s->id[s->idlen++] = c;
      }
      continue;
    }
    if (s->in_num) {
      if ((c >= '0' && c <= '9') || c == '-') {
        if (s->idlen < sizeof s->id - 1) s->id[s->idlen++] = c;
        continue;
      }
      s->in_num = 0;
      s->found = 1;
      break;
    }
    switch (c) {
      case '"':
        s->in_str = 1;
        s->str_role = 0;
        if (s->depth == 1 && s->expect_key) {
          s->str_role = 1;
          s->klen = 0;
          s->key_long = 0;
          s->expect_key = 0;
        } else if (s->depth == 1 && s->want_value) {
          s->str_role = 2;
          s->idlen = 0;
        }
        s->want_value = 0;
        break;
      case '{':
      case '[':
        s->depth++;
        if (s->depth == 1 && c == '{') s->expect_key = 1;
        s->want_value = 0;
        break;
      case '}':
      case ']':
        s->depth--;
        break;
      case ':':
        if (s->depth == 1 && s->after_key) {
          s->key[s->klen] = '\0';
          s->want_value = !s->key_long && strcmp(s->key, "id") == 0;
          s->after_key = 0;
        }
        break;
      case ',':
        if (s->depth == 1) s->expect_key = 1;
        break;
      case ' ':
      case '\t':
      case '\r':
      case '\n':
        break;
      default:
        if (s->want_value && ((c >= '0' && c <= '9') || c == '-')) {
          s->in_num = 1;
          s->idlen = 0;
          s->id[s->idlen++] = c;
        }
        s->want_value = 0;
        break;
    }
  }
  s->id[s->idlen] = '\0';
}



void vm_rxbuf_reset(vm_rxbuf_t *rx) {
  if (rx->cap > RX_KEEP_CAP) {
    free(rx->buf);
    rx->buf = NULL;
    rx->cap = 0;
  }
  rx->len = 0;
  rx->active = 0;
  rx->overflow = 0;
  rx->total = 0;
}

void vm_rxbuf_free(vm_rxbuf_t *rx) {
  free(rx->buf);
  memset(rx, 0, sizeof *rx);
}

/* Feeds one fragment; final says it ends the message. VM_RX_MESSAGE: rx->buf
 * holds rx->len bytes plus a NUL. VM_RX_OVERSIZE: rx->scan.id names the reply's
 * id if it was found. Call vm_rxbuf_reset after either. */
vm_rx_status_t vm_rxbuf_feed(vm_rxbuf_t *rx, const char *data, size_t n, int final) {
  if (!rx->active) {
    rx->active = 1;
    rx->len = 0;
    rx->total = 0;
    rx->overflow = 0;
    memset(&rx->scan, 0, sizeof rx->scan);
  }
  rx->total += n;
  if (!rx->overflow && rx->len + n > rx->limit) {
    rx->overflow = 1;
    vm_idscan_feed(&rx->scan, rx->buf, rx->len);
    free(rx->buf);
    rx->buf = NULL;
    rx->cap = 0;
    rx->len = 0;
  }
  if (rx->overflow) {
    vm_idscan_feed(&rx->scan, data, n);
  } else {
    if (rx->len + n + 1 > rx->cap) {
      size_t cap = rx->cap ? rx->cap : 4096;
      while (cap < rx->len + n + 1) cap *= 2;
      if (cap > rx->limit + 1) cap = rx->limit + 1;
      char *nb = realloc(rx->buf, cap);
      if (!nb) {
        rx->overflow = 1; /* treat as too large: drop the rest */
        vm_idscan_feed(&rx->scan, rx->buf, rx->len);
        free(rx->buf);
        rx->buf = NULL;
        rx->cap = rx->len = 0;
        vm_idscan_feed(&rx->scan, data, n);
        if (final) return VM_RX_NOMEM;
        return VM_RX_MORE;
      }
      rx->buf = nb;
      rx->cap = cap;
    }
    memcpy(rx->buf + rx->len, data, n);
    rx->len += n;
    rx->buf[rx->len] = '\0';
  }
  if (!final) return VM_RX_MORE;
  return rx->overflow ? VM_RX_OVERSIZE : VM_RX_MESSAGE;
}


/* Classifies msg; for a reply writes its id (string, or integer printed) to
 * id. Pure. */
vm_msg_kind_t vm_msg_classify(json_t *msg, char *id, size_t idlen) {
  if (!json_is_object(msg)) return VM_MSG_OTHER;
  json_t *jid = json_object_get(msg, "id");
  const char *method = json_string_value(json_object_get(msg, "method"));
  if ((!jid || json_is_null(jid)) && method && strcmp(method, "streamNotify") == 0) {
    json_t *params = json_object_get(msg, "params");
    /* The VM service wraps its event in params.event; the Dart Tooling
     * Daemon puts eventKind and eventData beside streamId (dart-lang/sdk
     * pkg/dtd_impl/dtd_protocol.md, "streamNotify"). */
    if (json_is_string(json_object_get(params, "streamId")) &&
        (json_is_object(json_object_get(params, "event")) ||
         json_is_string(json_object_get(params, "eventKind"))))
      return VM_MSG_EVENT;
    return VM_MSG_OTHER;
  }
  if (!json_object_get(msg, "result") && !json_object_get(msg, "error")) return VM_MSG_OTHER;
  if (json_is_string(jid))
    snprintf(id, idlen, "%s", json_string_value(jid));
  else if (json_is_integer(jid))
    snprintf(id, idlen, "%" JSON_INTEGER_FORMAT, json_integer_value(jid));
  else
    return VM_MSG_OTHER;
  return VM_MSG_REPLY;
}
