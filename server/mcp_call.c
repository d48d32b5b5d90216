#include "mcp_call.h"

#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "json_put.h"
#include "jsonrpc.h"
#include "mcp_version.h"

#define TEXT_CAP (64 * 1024)

struct tool_call {
  mcp_calls_t *s;         /* NULL once cancelled: the call is detached */
  json_t *id;             /* request id, owned */
  json_t *progress_token; /* owned, NULL without one */
  double last_progress;
  int sent_progress;
  const char *version; /* static string: the revision of the request */
  batch_t *batch;      /* NULL outside a batch */
  void (*cancel_cb)(void *arg);
  void *cancel_arg;
  /* The tool's text renderer (a static function, so a detached call may keep
   * it); NULL: the text block is the compact JSON. */
  char *(*render_text)(const json_t *structured, int is_error);
  int cancelled;
  int in_hook;
  tool_call_t *prev, *next; /* the session's in-flight list */
};

static void push(json_t *a, int *bad, json_t *value) {
  if (json_array_append_new(a, value) != 0) *bad = 1;
}

static void call_unlink(tool_call_t *c) {
  mcp_calls_t *s = c->s;
  if (!s) return;
  if (c->prev)
    c->prev->next = c->next;
  else
    s->head = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  s->n--;
}

static void call_free(tool_call_t *c) {
  json_decref(c->id);
  json_decref(c->progress_token);
  free(c);
}

/* Runs the cancel path: detach, release the batch slot, run the hook. */
void mcp_call_cancel(tool_call_t *c) {
  const mcp_out_t *out = c->s ? c->s->out : NULL;
  call_unlink(c);
  c->s = NULL;
  c->cancelled = 1;
  if (c->batch) mcp_out_batch_release(out, c->batch), c->batch = NULL;
  if (c->cancel_cb) {
    c->in_hook = 1;
    c->cancel_cb(c->cancel_arg);
    call_free(c);
  }
}

void mcp_calls_cancel_all(mcp_calls_t *s) {
  while (s->head) mcp_call_cancel(s->head);
}

tool_call_t *mcp_calls_find(const mcp_calls_t *s, const json_t *id) {
  for (tool_call_t *c = s->head; c; c = c->next)
    if (json_equal(c->id, (json_t *)id)) return c;
  return NULL;
}

void tool_call_on_cancel(tool_call_t *c, void (*cb)(void *arg), void *arg) {
  c->cancel_cb = cb;
  c->cancel_arg = arg;
}

const char *tool_call_protocol_version(const tool_call_t *c) {
  return c->version;
}
int tool_call_cancelled(const tool_call_t *c) {
  return c->cancelled;
}

void tool_call_progress(tool_call_t *c, double progress, double total, const char *message) {
  if (!c->progress_token || c->cancelled) return;
  if (c->sent_progress && progress <= c->last_progress) return;
  c->sent_progress = 1;
  c->last_progress = progress;
  int bad = 0;
  json_t *p = json_object();
  json_put(p, &bad, "progressToken", json_deep_copy(c->progress_token));
  json_put(p, &bad, "progress", json_real(progress));
  if (total > 0) json_put(p, &bad, "total", json_real(total));
  /* `message` arrived with 2025-03-26. */
  if (message && mcp_version_at_least(c->version, "2025-03-26"))
    json_put(p, &bad, "message", json_string(message));
  if (bad) { /* a notification that lost a member is not sent */
    json_decref(p);
    return;
  }
  /* Progress goes out at once even inside a batch: it is a notification. */
  mcp_out_json(c->s->out, jsonrpc_notification_new("notifications/progress", p));
}

/* Cuts text to at most TEXT_CAP bytes on a UTF-8 boundary, marking the cut. */
/* 1 when s is UTF-8 jansson accepts (no overlong forms, surrogates or code
 * points above U+10FFFF), so a failed json_string can be told apart: bad
 * text, or out of memory. */
static int utf8_valid(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned c = *p++, n, cp;
    if (c < 0x80) continue;
    if (c >= 0xC2 && c <= 0xDF)
      n = 1, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
      n = 2, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
      n = 3, cp = c & 0x07;
    else
      return 0;
    for (unsigned k = 0; k < n; k++, p++) {
      if ((*p & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (*p & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
  }
  return 1;
}

/* One text block; NULL when it could not be built. Text over TEXT_CAP bytes
 * is cut on a UTF-8 boundary, the cut marked. */
static json_t *text_block(const char *text) {
  static const char mark[] = "\xe2\x80\xa6 (truncated)";
  size_t len = strlen(text);
  int bad = 0;
  json_t *b = json_object();
  json_put(b, &bad, "type", json_string("text"));
  if (len <= TEXT_CAP) {
    json_t *t = json_string(text);
    /* Never send a block without text: invalid UTF-8 would be our bug. */
    if (!t && !utf8_valid(text)) t = json_string("(text was not valid UTF-8)");
    json_put(b, &bad, "text", t);
  } else {
    size_t keep = TEXT_CAP - sizeof mark + 1;
    while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80) keep--;
    char *cut = malloc(keep + sizeof mark);
    if (cut) {
      memcpy(cut, text, keep);
      memcpy(cut + keep, mark, sizeof mark);
    }
    json_put(b, &bad, "text", cut ? json_string(cut) : NULL);
    free(cut);
  }
  if (bad) {
    json_decref(b);
    return NULL;
  }
  return b;
}

static void call_answer(tool_call_t *c, json_t *result, int bad) {
  const mcp_out_t *out = c->s ? c->s->out : NULL;
  batch_t *b = c->batch;
  call_unlink(c);
  mcp_out_result(out, b, c->id, c->version, result, bad);
  if (b) mcp_out_batch_release(out, b);
  call_free(c);
}

void tool_call_finish(tool_call_t *c, json_t *structured, int is_error, json_t *extra_content) {
  if (c->cancelled) {
    json_decref(structured);
    json_decref(extra_content);
    if (!c->in_hook) call_free(c);
    return;
  }
  int bad = 0;
  json_t *content = json_array();
  /* structuredContent arrived with 2025-06-18; earlier clients get the data
   * only as JSON text, so the renderer is for clients that have both. */
  int with_structured =
      structured && json_is_object(structured) && mcp_version_at_least(c->version, "2025-06-18");
  if (structured) {
    char *text = NULL;
    if (with_structured && c->render_text) text = c->render_text(structured, is_error);
    if (!text) text = mcp_out_dump(structured, JSON_COMPACT | JSON_REAL_PRECISION(15));
    push(content, &bad, text ? text_block(text) : NULL);
    free(text);
  }
  if (json_is_array(extra_content) && json_array_extend(content, extra_content) != 0) bad = 1;
  json_decref(extra_content);
  json_t *result = json_object();
  json_put(result, &bad, "content", content);
  if (with_structured)
    json_put(result, &bad, "structuredContent", structured);
  else
    json_decref(structured);
  if (is_error) json_put(result, &bad, "isError", json_true());
  call_answer(c, result, bad);
}

void tool_call_finish_text_error(tool_call_t *c, const char *text) {
  if (c->cancelled) {
    if (!c->in_hook) call_free(c);
    return;
  }
  int bad = 0;
  json_t *content = json_array();
  push(content, &bad, text_block(text));
  json_t *result = json_object();
  json_put(result, &bad, "content", content);
  json_put(result, &bad, "isError", json_true());
  call_answer(c, result, bad);
}

tool_call_t *mcp_call_new(mcp_calls_t *s, batch_t *b, const json_t *id, const json_t *token,
                          const char *version, char *(*render_text)(const json_t *, int)) {
  tool_call_t *c = calloc(1, sizeof *c);
  if (!c) {
    mcp_out_error(s->out, b, id, RPC_INTERNAL_ERROR, NULL, NULL);
    return NULL;
  }
  c->id = json_deep_copy(id);
  c->progress_token = token ? json_deep_copy(token) : NULL;
  if (!c->id || (token && !c->progress_token)) {
    call_free(c);
    mcp_out_error(s->out, b, id, RPC_INTERNAL_ERROR, MCP_OUT_OOM_MESSAGE, NULL);
    return NULL;
  }
  c->s = s;
  c->version = version;
  c->render_text = render_text;
  c->batch = b;
  if (c->batch) c->batch->pending++;
  c->next = s->head;
  if (s->head) s->head->prev = c;
  s->head = c;
  s->n++;
  return c;
}
