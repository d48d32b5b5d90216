/* vm_wire: the VM service's messages as bytes and JSON, with no socket: the
 * allowlist, the streaming id scanner, the bounded reassembly buffer, the
 * reply/event classification and the records' cut (vm_wire.h). */
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
    /* Without the watcher, a workload the agent asked for (issue 32): only
     * the scroll, tap and waitUntilNoTransientCallbacks commands
     * workload.c builds from its checked steps, only when the app itself
     * called enableFlutterDriverExtension(); never a command an agent names. */
    "ext.flutter.driver",
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
 * holds rx->len bytes plus a NUL. After VM_RX_MESSAGE and VM_RX_OVERSIZE
 * alike, rx->scan.id is the message's top-level id when rx->scan.found.
 * Call vm_rxbuf_reset after either. */
vm_rx_status_t vm_rxbuf_feed(vm_rxbuf_t *rx, const char *data, size_t n, int final) {
  if (!rx->active) {
    rx->active = 1;
    rx->len = 0;
    rx->total = 0;
    rx->overflow = 0;
    memset(&rx->scan, 0, sizeof rx->scan);
  }
  rx->total += n;
  /* The id is found as the message streams in, a fragment per loop turn:
   * never one pass over a whole large reply at its end (the VM puts "id"
   * last, after a getCpuSamples result of tens of megabytes). */
  vm_idscan_feed(&rx->scan, data, n);
  if (!rx->overflow && rx->len + n > rx->limit) {
    rx->overflow = 1;
    free(rx->buf);
    rx->buf = NULL;
    rx->cap = 0;
    rx->len = 0;
  }
  if (!rx->overflow) {
    if (rx->len + n + 1 > rx->cap) {
      size_t cap = rx->cap ? rx->cap : 4096;
      while (cap < rx->len + n + 1) cap *= 2;
      if (cap > rx->limit + 1) cap = rx->limit + 1;
      char *nb = realloc(rx->buf, cap);
      if (!nb) {
        rx->overflow = 1; /* treat as too large: drop the rest */
        free(rx->buf);
        rx->buf = NULL;
        rx->cap = rx->len = 0;
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

int vm_wire_records_span(const char *p, size_t n, size_t *at, size_t *len) {
  /* Member names matter at depth 1 (the message) and at depth 2 inside
   * "result"; everything deeper is only counted. */
  enum { K_NONE, K_RESULT, K_RECORDS };
  int depth = 0, in_str = 0, esc = 0, name_esc = 0;
  int results = 0, records = 0;
  int in_result = 0;  /* depth 2 is the result object */
  int expect = 0;     /* a member name of interest comes next */
  int naming = 0;     /* the string being read is that member name */
  int key = K_NONE;   /* the name just read, until its ':' */
  int value = K_NONE; /* ':' came after it: its value starts next */
  int rec_open = 0;   /* inside the records array */
  size_t name_at = 0, start = 0, end = 0;
  /* Deeper than the result's members, with no name pending, only strings
   * and nesting change anything: the rest (most of a reply: the records'
   * numbers) is passed over in a tight loop, as are a string's plain bytes. */
  static const unsigned char deep[256] = {['"'] = 1, ['['] = 1, [']'] = 1, ['{'] = 1, ['}'] = 1};
  static const unsigned char quoted[256] = {['"'] = 1, ['\\'] = 1};
  for (size_t i = 0; i < n; i++) {
    if (in_str && !esc)
      while (i < n && !quoted[(unsigned char)p[i]]) i++;
    else if (depth > 2 && key == K_NONE && value == K_NONE)
      while (i < n && !deep[(unsigned char)p[i]]) i++;
    if (i == n) break;
    char c = p[i];
    if (in_str) {
      if (esc) {
        esc = 0;
      } else if (c == '\\') {
        esc = name_esc = 1;
      } else if (c == '"') {
        in_str = 0;
        if (naming) {
          size_t nl = i - name_at;
          naming = 0;
          if (name_esc) return 0;
          if (depth == 1 && nl == 6 && !memcmp(p + name_at, "result", 6)) key = K_RESULT;
          if (depth == 2 && nl == 7 && !memcmp(p + name_at, "records", 7)) key = K_RECORDS;
        }
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (value == K_RESULT) {
      results++;
      in_result = c == '{';
    } else if (value == K_RECORDS) {
      records++;
      if (c != '[') return 0;
      rec_open = 1;
      start = i;
    }
    value = K_NONE;
    switch (c) {
      case '"':
        in_str = 1;
        naming = expect;
        name_esc = 0;
        name_at = i + 1;
        expect = 0;
        break;
      case '{':
      case '[':
        depth++;
        expect = c == '{' && (depth == 1 || (depth == 2 && in_result));
        break;
      case '}':
      case ']':
        if (--depth < 0) return 0;
        if (rec_open && depth == 2) {
          rec_open = 0;
          end = i + 1;
        }
        if (depth == 1) in_result = 0; /* the object at depth 2 closed */
        expect = 0;
        break;
      case ':':
        value = key;
        key = K_NONE;
        break;
      case ',':
        expect = depth == 1 || (depth == 2 && in_result);
        break;
      default:
        break;
    }
  }
  if (depth != 0 || in_str || results != 1 || records != 1 || !end) return 0;
  *at = start;
  *len = end - start;
  return 1;
}

char *vm_wire_cut_records(const char *p, size_t n, size_t *rest, size_t *len) {
  size_t at, rl;
  if (vm_wire_records_span(p, n, &at, &rl) != 1) return NULL;
  size_t restlen = n - rl + 2; /* the message with "[]" for its records */
  char *b = malloc(rl + restlen);
  if (!b) return NULL;
  memcpy(b, p + at, rl);
  memcpy(b + rl, p, at);
  memcpy(b + rl + at, "[]", 2);
  memcpy(b + rl + at + 2, p + at + rl, n - at - rl);
  *rest = restlen;
  *len = rl;
  return b;
}

/* A reply handed over as text, read: its message and result, or why not (vm_wire.h). */
json_t *vm_wire_read_text(char *text, size_t len, const json_t **result, int *rpc, char *err,
                          size_t errlen) {
  json_error_t jerr;
  json_t *msg = json_loadb(text, len, 0, &jerr);
  const json_t *error = json_object_get(msg, "error");
  free(text);
  *result = NULL;
  *rpc = 0;
  err[0] = '\0';
  if (!msg) {
    snprintf(err, errlen, "the reply was not valid JSON (%.100s)", jerr.text);
  } else if (error) {
    const char *m = json_string_value(json_object_get(error, "message"));
    *rpc = (int)json_integer_value(json_object_get(error, "code"));
    snprintf(err, errlen, "%.150s", m ? m : "an error without a message");
  } else if (!(*result = json_object_get(msg, "result"))) {
    snprintf(err, errlen, "the reply had no result");
  }
  return msg;
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
