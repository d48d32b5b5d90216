#include "vm_uri.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REDACTED "\xe2\x80\xa6redacted\xe2\x80\xa6"

static void set_err(char *err, size_t errlen, const char *msg) {
  if (err && errlen) snprintf(err, errlen, "%s", msg);
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Copies [b, e) into dst (size n); 0 when it did not fit. */
static int copy_span(char *dst, size_t n, const char *b, const char *e) {
  size_t len = (size_t)(e - b);
  if (len + 1 > n) return 0;
  memcpy(dst, b, len);
  dst[len] = '\0';
  return 1;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Percent-decodes in place; a '%' not followed by two hex digits stays, and
 * '+' stays '+'. Not libwebsockets' lws_urldecode, which differs in three
 * ways (lib/core/libwebsockets.c:651-697 at v4.1.6, the same on Debian's
 * 4.1.6 library): it form-decodes '+' to a space (664-668), so a raw
 * "?uri=http://…/a+b=/" would be refused for a space; it silently drops an
 * escape cut short at the end ("T%3" gives "T", rc 0); and at a '%' before a
 * non-hex digit it returns -1 with its output unterminated (674-676,
 * 683-685). test_vm_uri's devtools_uri_escapes pins the rule. */
static void percent_decode(char *s) {
  char *o = s;
  for (const char *p = s; *p; p++) {
    if (p[0] == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
      *o++ = (char)(hexval(p[1]) * 16 + hexval(p[2]));
      p += 2;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
}

/* The URI a JSON value names: "uri" of the VM's --write-service-info file
 * ({"uri":"http://127.0.0.1:P/T=/"}: dart-lang/sdk
 * sdk/lib/_internal/vm/bin/vmservice_server.dart, _dumpServiceInfoToFile),
 * "wsUri" of flutter run --machine's app.debugPort event, which the daemon
 * prints as [{"event":"app.debugPort","params":{"wsUri":…}}] (flutter/flutter
 * packages/flutter_tools/lib/src/commands/daemon.dart, _sendAppEvent
 * 'debugPort'), or the same object bare. NULL when it names none. */
static const char *json_named_uri(json_t *v) {
  if (json_is_array(v)) {
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
      const char *u = json_named_uri(x);
      if (u) return u;
    }
    return NULL;
  }
  if (!json_is_object(v)) return NULL;
  const char *u = json_string_value(json_object_get(v, "wsUri"));
  if (!u) u = json_string_value(json_object_get(v, "uri"));
  if (!u) u = json_string_value(json_object_get(json_object_get(v, "params"), "wsUri"));
  return u;
}

/* Input that is JSON (one value, or a daemon log of one JSON line per event
 * with other lines between): the first line naming a URI wins. Returns 1
 * (dst filled), 0 (not JSON: treat as text), -1 (JSON naming no URI, or too
 * long). */
static int extract_json(const char *b, const char *e, char *dst, size_t n) {
  int parsed = 0;
  json_t *whole = *b == '{' || *b == '[' ? json_loadb(b, (size_t)(e - b), JSON_DECODE_ANY, NULL)
                                         : NULL;
  if (whole) {
    const char *u = json_named_uri(whole);
    int rc = u ? (copy_span(dst, n, u, u + strlen(u)) ? 1 : -1) : -1;
    json_decref(whole);
    return rc;
  }
  for (const char *l = b; l < e;) {
    const char *le = memchr(l, '\n', (size_t)(e - l));
    if (!le) le = e;
    while (l < le && is_space(*l)) l++;
    if (l < le && (*l == '{' || *l == '[')) {
      json_t *v = json_loadb(l, (size_t)(le - l), JSON_DECODE_ANY, NULL);
      if (v) {
        parsed = 1;
        const char *u = json_named_uri(v);
        int rc = u ? (copy_span(dst, n, u, u + strlen(u)) ? 1 : -1) : 0;
        json_decref(v);
        if (rc) return rc;
      }
    }
    l = le < e ? le + 1 : e;
  }
  return parsed ? -1 : 0;
}

/* Finds the URI inside pasted text: JSON naming one (extract_json), the
 * token after "at:" of a flutter run line (both wordings), else the first
 * whitespace-separated word holding "://", else the whole trimmed text.
 * Returns 1, 0 (empty), -1 (too long) or -2 (JSON without a URI). */
static int extract_candidate(const char *input, char *dst, size_t n) {
  const char *b = input, *e = input + strlen(input);
  while (b < e && is_space(*b)) b++;
  while (e > b && is_space(e[-1])) e--;
  if (b == e) return 0;
  int js = extract_json(b, e, dst, n);
  if (js == 1) return 1;
  if (js < 0) return -2;
  const char *marker = NULL;
  const char *m;
  if ((m = strstr(b, "Dart VM Service")) || (m = strstr(b, "Dart VM service")) ||
      (m = strstr(b, "Observatory")))
    marker = strstr(m, "at:");
  /* The phrase comes before the URI it announces; the same words inside a
   * URI's path are the path's (a normal form must normalise to itself). */
  const char *first_uri = strstr(b, "://");
  if (marker && first_uri && first_uri < marker) marker = NULL;
  if (marker && marker < e) {
    const char *w = marker + 3;
    while (w < e && is_space(*w)) w++;
    const char *we = w;
    while (we < e && !is_space(*we)) we++;
    /* Only a word that is a URI. */
    const char *s = strstr(w, "://");
    if (we > w && s && s < we) return copy_span(dst, n, w, we) ? 1 : -1;
  }
  int has_space = 0;
  for (const char *p = b; p < e; p++)
    if (is_space(*p)) has_space = 1;
  if (has_space) {
    for (const char *w = b; w < e;) {
      while (w < e && is_space(*w)) w++;
      const char *we = w;
      while (we < e && !is_space(*we)) we++;
      const char *s = strstr(w, "://");
      if (s && s < we) return copy_span(dst, n, w, we) ? 1 : -1;
      w = we;
    }
  }
  return copy_span(dst, n, b, e) ? 1 : -1;
}

/* A DevTools URL carries the VM-service URI in its uri= query parameter
 * (possibly after a "#/" route); replace cand by that value, decoded. */
static void unwrap_devtools(char *cand) {
  char *q = NULL;
  for (char *p = cand; (p = strstr(p, "uri=")) != NULL; p += 4)
    if (p > cand && (p[-1] == '?' || p[-1] == '&')) {
      q = p + 4;
      break;
    }
  if (!q) return;
  size_t len = strcspn(q, "&#");
  memmove(cand, q, len);
  cand[len] = '\0';
  percent_decode(cand);
}

int vm_uri_host_is_loopback(const char *host) {
  if (!host || !*host) return 0;
  if (strcasecmp(host, "localhost") == 0) return 1;
  struct in_addr a4;
  if (inet_pton(AF_INET, host, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  struct in6_addr a6;
  if (inet_pton(AF_INET6, host, &a6) == 1) {
    static const unsigned char lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a6.s6_addr, lo, 16) == 0) return 1;
    if (memcmp(a6.s6_addr, mapped, 12) == 0 && a6.s6_addr[12] == 127) return 1;
  }
  return 0;
}

static int valid_name_host(const char *h) {
  for (const char *p = h; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_') return 0;
  return 1;
}

vm_uri_status_t vm_uri_parse(const char *input, int allow_remote, vm_uri_t *out, char *err,
                             size_t errlen) {
  char cand[VM_URI_MAX];
  memset(out, 0, sizeof *out);
  if (!input) {
    set_err(err, errlen, "empty VM-service URI");
    return VM_URI_MALFORMED;
  }
  int got = extract_candidate(input, cand, sizeof cand);
  if (got == 0) {
    set_err(err, errlen, "empty VM-service URI");
    return VM_URI_MALFORMED;
  }
  if (got == -2) {
    set_err(err, errlen,
            "JSON without a VM-service URI: expected {\"uri\": …} (--write-service-info) or "
            "an app.debugPort event with \"wsUri\" (flutter run --machine)");
    return VM_URI_MALFORMED;
  }
  if (got < 0) {
    set_err(err, errlen, "VM-service URI too long");
    return VM_URI_MALFORMED;
  }
  unwrap_devtools(cand);

  const char *sep = strstr(cand, "://");
  if (!sep || sep == cand) {
    set_err(err, errlen,
            "VM-service URI has no scheme: expected http://, https://, ws:// or wss:// "
            "(paste the URI `flutter run` prints)");
    return VM_URI_MALFORMED;
  }
  size_t slen = (size_t)(sep - cand);
  if ((slen == 4 && strncasecmp(cand, "http", 4) == 0) ||
      (slen == 2 && strncasecmp(cand, "ws", 2) == 0))
    out->secure = 0;
  else if ((slen == 5 && strncasecmp(cand, "https", 5) == 0) ||
           (slen == 3 && strncasecmp(cand, "wss", 3) == 0))
    out->secure = 1;
  else {
    set_err(err, errlen, "VM-service URI scheme must be http, https, ws or wss");
    return VM_URI_MALFORMED;
  }

  const char *auth = sep + 3;
  const char *auth_end = auth + strcspn(auth, "/?#");
  for (const char *p = auth; p < auth_end; p++) {
    if (*p == '@') {
      set_err(err, errlen, "VM-service URI must not carry user info (user@host)");
      return VM_URI_MALFORMED;
    }
    if ((unsigned char)*p <= ' ') {
      set_err(err, errlen, "VM-service URI host contains whitespace or control characters");
      return VM_URI_MALFORMED;
    }
  }
  const char *host_b = auth, *host_e, *port_b = NULL;
  int bracketed = 0;
  if (*auth == '[') {
    const char *close = memchr(auth, ']', (size_t)(auth_end - auth));
    if (!close) {
      set_err(err, errlen, "VM-service URI has an unclosed '[' in its host");
      return VM_URI_MALFORMED;
    }
    host_b = auth + 1;
    host_e = close;
    bracketed = 1;
    if (close + 1 < auth_end) {
      if (close[1] != ':') {
        set_err(err, errlen, "VM-service URI has junk after its IPv6 host");
        return VM_URI_MALFORMED;
      }
      port_b = close + 2;
    }
  } else {
    const char *colon = memchr(auth, ':', (size_t)(auth_end - auth));
    host_e = colon ? colon : auth_end;
    if (colon) port_b = colon + 1;
    if (colon && memchr(colon + 1, ':', (size_t)(auth_end - colon - 1))) {
      /* An IPv6 address without brackets ("http://::1:8181/T=/", as some
       * tools print it): accept it when everything before the last colon is
       * an IPv6 address and the rest a port; anything else is ambiguous. */
      const char *last = auth_end - 1;
      while (*last != ':') last--;
      char v6[INET6_ADDRSTRLEN + 1];
      struct in6_addr a6;
      size_t hl = (size_t)(last - auth);
      if (hl >= sizeof v6 || !copy_span(v6, sizeof v6, auth, last) ||
          inet_pton(AF_INET6, v6, &a6) != 1) {
        set_err(err, errlen, "VM-service URI has an IPv6 host without [brackets]");
        return VM_URI_MALFORMED;
      }
      host_e = last;
      port_b = last + 1;
      bracketed = 1;
    }
  }
  if (host_e == host_b) {
    set_err(err, errlen, "VM-service URI has no host");
    return VM_URI_MALFORMED;
  }
  if (!copy_span(out->host, sizeof out->host, host_b, host_e)) {
    set_err(err, errlen, "VM-service URI host too long");
    return VM_URI_MALFORMED;
  }
  for (char *p = out->host; *p; p++) *p = (char)tolower((unsigned char)*p);
  if (bracketed) {
    struct in6_addr a6;
    if (inet_pton(AF_INET6, out->host, &a6) != 1) {
      set_err(err, errlen, "VM-service URI has an invalid IPv6 address");
      return VM_URI_MALFORMED;
    }
  } else if (!valid_name_host(out->host)) {
    set_err(err, errlen, "VM-service URI host has invalid characters");
    return VM_URI_MALFORMED;
  }

  if (port_b) {
    if (port_b == auth_end) {
      set_err(err, errlen, "VM-service URI has an empty port");
      return VM_URI_MALFORMED;
    }
    long port = 0;
    for (const char *p = port_b; p < auth_end; p++) {
      if (!isdigit((unsigned char)*p) || port > 65535) {
        set_err(err, errlen, "VM-service URI has a bad port (expected 1-65535)");
        return VM_URI_MALFORMED;
      }
      port = port * 10 + (*p - '0');
    }
    if (port < 1 || port > 65535) {
      set_err(err, errlen, "VM-service URI has a bad port (expected 1-65535)");
      return VM_URI_MALFORMED;
    }
    out->port = (int)port;
  } else {
    out->port = out->secure ? 443 : 80;
  }

  /* Path: verbatim up to the query or fragment, trailing '/' stripped. */
  const char *path_b = auth_end, *path_e = auth_end + strcspn(auth_end, "?#");
  for (const char *p = path_b; p < path_e; p++)
    if ((unsigned char)*p <= ' ' || *p == '"' || *p == '\\' || (unsigned char)*p == 0x7f) {
      set_err(err, errlen, "VM-service URI path contains a space, quote or control character");
      return VM_URI_MALFORMED;
    }
  while (path_e > path_b && path_e[-1] == '/') path_e--;
  size_t plen = (size_t)(path_e - path_b);
  int ends_ws = plen >= 3 && memcmp(path_e - 3, "/ws", 3) == 0;
  if (plen + 4 > sizeof out->path) {
    set_err(err, errlen, "VM-service URI path too long");
    return VM_URI_MALFORMED;
  }
  memcpy(out->path, path_b, plen);
  strcpy(out->path + plen, ends_ws ? "" : "/ws");

  int n = snprintf(out->ws, sizeof out->ws, "%s://%s%s%s:%d%s", out->secure ? "wss" : "ws",
                   bracketed ? "[" : "", out->host, bracketed ? "]" : "", out->port, out->path);
  if (n < 0 || (size_t)n >= sizeof out->ws) {
    set_err(err, errlen, "VM-service URI too long");
    return VM_URI_MALFORMED;
  }
  out->loopback = vm_uri_host_is_loopback(out->host);
  if (!out->loopback && !allow_remote) {
    if (err && errlen)
      snprintf(err, errlen,
               "VM-service host %s is not loopback (127.0.0.0/8, ::1, localhost); refused "
               "without --allow-remote",
               out->host);
    return VM_URI_REMOTE;
  }
  return VM_URI_OK;
}

void vm_uri_redact(const char *ws_uri, char *dst, size_t n) {
  if (!n) return;
  dst[0] = '\0';
  if (!ws_uri) return;
  const char *sep = strstr(ws_uri, "://");
  if (!sep) {
    /* Not a URI we produced: say nothing rather than risk the token. */
    snprintf(dst, n, "%s", REDACTED);
    return;
  }
  const char *path = sep + 3 + strcspn(sep + 3, "/?#");
  const char *end = path + strlen(path);
  const char *tail = end;
  if (end - path >= 3 && memcmp(end - 3, "/ws", 3) == 0) tail = end - 3;
  if (tail <= path + 1) { /* no token: "/ws" or "" */
    snprintf(dst, n, "%s", ws_uri);
    return;
  }
  snprintf(dst, n, "%.*s/%s%s", (int)(path - ws_uri), ws_uri, REDACTED, tail);
}
