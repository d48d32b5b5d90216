#include "chart.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_cause.h"

/* Geometry of the plot area inside the CHART_WIDTH × CHART_HEIGHT canvas. */
#define PLOT_L 64.0
#define PLOT_R 1180.0
#define PLOT_T 64.0
#define PLOT_B 350.0
#define PLOT_W (PLOT_R - PLOT_L)
#define PLOT_H (PLOT_B - PLOT_T)
#define CHAR_W 6.5 /* advance of one character at font-size 10, bold included */
#define X_TICKS 8
#define CHART_MAX_BUDGET_US ((int64_t)1000000000000) /* 11.6 days: keeps the y arithmetic small */

static const char *const band_fills[] = {"#e8eef9", "#e6f4e6", "#f1e9f7", "#fbf3dc"};

/* ---- a growing text buffer; a failed allocation sticks (checked once) -- */

typedef struct {
  char *p;
  size_t len, cap;
  int oom;
} sbuf_t;

static int sb_reserve(sbuf_t *b, size_t more) {
  if (b->oom) return -1;
  if (b->len + more + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 16384;
  while (cap < b->len + more + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

static void sb_put(sbuf_t *b, const char *s, size_t n) {
  if (sb_reserve(b, n) < 0) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void sb_puts(sbuf_t *b, const char *s) {
  sb_put(b, s, strlen(s));
}

static void sb_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf_t *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    sb_put(b, tmp, (size_t)n);
    return;
  }
  if (sb_reserve(b, (size_t)n) < 0) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Decodes one UTF-8 character at s (NUL-terminated); returns its length and
 * the code point, or length 1 and -1 for a byte that starts no valid one. */
static size_t utf8_next(const unsigned char *s, long *cp) {
  unsigned c = s[0];
  size_t len;
  long v, min;
  if (c < 0x80) return *cp = (long)c, 1;
  if ((c & 0xE0) == 0xC0)
    len = 2, v = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0)
    len = 3, v = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0)
    len = 4, v = c & 0x07, min = 0x10000;
  else
    return *cp = -1, 1;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return *cp = -1, 1;
    v = (v << 6) | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return *cp = -1, 1;
  return *cp = v, len;
}

/* Appends s as XML character data (fit for attribute values too), at most
 * max_chars characters ("…" marks a cut). Names come from the app: markup
 * characters are escaped, and what XML 1.0 cannot carry at all (control
 * characters, broken UTF-8, U+FFFE/U+FFFF) becomes U+FFFD. */
static void sb_escape(sbuf_t *b, const char *s, size_t max_chars) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  for (size_t chars = 0; *p; chars++) {
    if (chars == max_chars) {
      sb_puts(b, "\xE2\x80\xA6");
      return;
    }
    long cp;
    size_t len = utf8_next(p, &cp);
    switch (cp) {
      case '&':
        sb_puts(b, "&amp;");
        break;
      case '<':
        sb_puts(b, "&lt;");
        break;
      case '>':
        sb_puts(b, "&gt;");
        break;
      case '"':
        sb_puts(b, "&quot;");
        break;
      case '\'':
        sb_puts(b, "&#39;");
        break;
      default:
        if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF)
          sb_puts(b, "\xEF\xBF\xBD");
        else
          sb_put(b, (const char *)p, len);
    }
    p += len;
  }
}

/* ---- the chart --------------------------------------------------------- */

int chart_is_janky(const frame_t *f, int64_t budget_us) {
  return f->build_us > budget_us || f->raster_us > budget_us;
}

static int64_t frame_worst(const frame_t *f) {
  return f->build_us > f->raster_us ? f->build_us : f->raster_us;
}

/* The block with the most self time, or NULL when the frame has none. */
static const char *top_block(const frame_t *f) {
  const record_block_t *best = NULL;
  for (size_t i = 0; i < f->nblocks; i++)
    if (!best || f->blocks[i].self_micros > best->self_micros) best = &f->blocks[i];
  return best ? best->name : NULL;
}

/* One column: frames [lo, hi) of the input, their maxima. */
typedef struct {
  size_t lo, hi;
  int64_t build_us, raster_us;
} slot_t;

typedef struct {
  sbuf_t b;
  const frame_t *frames;
  size_t n, nslots;
  slot_t *slots;
  int64_t budget_us, ymax_us, step_us;
  double slot_w;
} chart_t;

static double slot_x(const chart_t *c, size_t s) {
  return PLOT_L + c->slot_w * (double)s;
}

static double value_y(const chart_t *c, int64_t us) {
  if (us > c->ymax_us) us = c->ymax_us;
  if (us < 0) us = 0;
  return PLOT_B - (double)us / (double)c->ymax_us * PLOT_H;
}

/* Milliseconds with one decimal ("16.7"). */
static void fmt_ms(char *out, size_t len, int64_t us) {
  snprintf(out, len, "%.1f", (double)us / 1000.0);
}

/* The y range: the tallest bar with a quarter of headroom (room for the
 * worst-frame labels above it), at least the
 * budget, at most CHART_CLIP_BUDGETS budgets (so one frozen frame does not
 * flatten everything else), rounded up to a 1-2-5 tick step of ≤ 6 ticks. */
static void scale_y(chart_t *c) {
  int64_t top = c->budget_us;
  for (size_t i = 0; i < c->n; i++)
    if (frame_worst(&c->frames[i]) > top) top = frame_worst(&c->frames[i]);
  int64_t cap = c->budget_us * CHART_CLIP_BUDGETS;
  if (top > cap) top = cap;
  top += top / 4;
  if (top > cap) top = cap;
  static const int64_t mult[] = {1, 2, 5};
  int64_t step = top; /* never kept: the budget bound makes a 1-2-5 step exist */
  for (int64_t decade = 100; decade < INT64_MAX / 100; decade *= 10) {
    int done = 0;
    for (int k = 0; k < 3 && !done; k++)
      if (top / (decade * mult[k]) < 6) step = decade * mult[k], done = 1;
    if (done) break;
  }
  c->step_us = step;
  c->ymax_us = (top + step - 1) / step * step;
}

static int build_slots(chart_t *c) {
  c->nslots = c->n <= CHART_MAX_SLOTS ? c->n : CHART_MAX_SLOTS;
  if (c->nslots == 0) return 0;
  c->slots = calloc(c->nslots, sizeof *c->slots);
  if (!c->slots) return -1;
  c->slot_w = PLOT_W / (double)c->nslots;
  for (size_t s = 0; s < c->nslots; s++) {
    slot_t *sl = &c->slots[s];
    sl->lo = s * c->n / c->nslots;
    sl->hi = (s + 1) * c->n / c->nslots;
    for (size_t i = sl->lo; i < sl->hi; i++) {
      const frame_t *f = &c->frames[i];
      if (f->build_us > sl->build_us) sl->build_us = f->build_us;
      if (f->raster_us > sl->raster_us) sl->raster_us = f->raster_us;
    }
  }
  return 0;
}

static const char *slot_interaction(const chart_t *c, size_t s) {
  return c->frames[c->slots[s].lo].interaction_id;
}

/* A shaded band per run of columns whose (first) frame carries the same
 * interactionId, labelled when wide enough; the full id is its tooltip. */
static void draw_bands(chart_t *c) {
  size_t k = 0;
  for (size_t s = 0; s < c->nslots;) {
    const char *id = slot_interaction(c, s);
    size_t e = s + 1;
    while (e < c->nslots && id && slot_interaction(c, e) && strcmp(slot_interaction(c, e), id) == 0)
      e++;
    if (id) {
      double x0 = slot_x(c, s), w = slot_x(c, e) - x0;
      sb_printf(&c->b,
                "<rect class=\"band\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" "
                "fill=\"%s\"><title>interaction ",
                x0, PLOT_T, w, PLOT_H, band_fills[k++ % 4]);
      sb_escape(&c->b, id, RECORD_MAX_INTERACTION);
      sb_puts(&c->b, "</title></rect>\n");
      size_t room = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0;
      if (room > CHART_LABEL_CHARS) room = CHART_LABEL_CHARS;
      if (room >= 3) {
        sb_printf(&c->b, "<text class=\"band-label\" x=\"%.2f\" y=\"%.0f\" fill=\"#555\">", x0 + 3,
                  PLOT_T + 11);
        sb_escape(&c->b, id, room);
        sb_puts(&c->b, "</text>\n");
      }
    }
    s = e;
  }
}

static void draw_grid(chart_t *c) {
  char ms[32];
  int decimals = c->step_us % 1000 ? 1 : 0;
  for (int64_t v = 0; v <= c->ymax_us; v += c->step_us) {
    double y = value_y(c, v);
    sb_printf(&c->b,
              "<line class=\"grid\" x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\" "
              "stroke=\"#e3e3e3\"/>\n",
              PLOT_L, y, PLOT_R, y);
    snprintf(ms, sizeof ms, "%.*f", decimals, (double)v / 1000.0);
    sb_printf(&c->b,
              "<text class=\"tick\" x=\"%.0f\" y=\"%.2f\" text-anchor=\"end\">%s ms</text>\n",
              PLOT_L - 6, y + 3.5, ms);
  }
}

static void draw_bar(chart_t *c, const char *kind, double x, double w, int64_t us) {
  int jank = us > c->budget_us;
  double y = value_y(c, us);
  sb_printf(&c->b,
            "<rect class=\"%s%s%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
            "fill=\"%s\"/>",
            kind, jank ? " jank" : "", us > c->ymax_us ? " clipped" : "", x, y, w, PLOT_B - y,
            jank ? CHART_COLOR_JANK
                 : (strcmp(kind, "build") == 0 ? CHART_COLOR_BUILD : CHART_COLOR_RASTER));
}

/* One <g> per column: its two bars and a tooltip with the numbers. */
/* A frame as every answer names it: by the engine's frame number (seq when
 * the app gave none), so the chart, the text and the trace agree. */
static int64_t label_of(const frame_t *f) { return f->frame_number > 0 ? f->frame_number : f->seq; }

static void draw_frames(chart_t *c) {
  double gap = c->slot_w >= 4 ? c->slot_w * 0.15 : 0;
  double bw = (c->slot_w - gap) / 2;
  char b[32], r[32];
  for (size_t s = 0; s < c->nslots; s++) {
    const slot_t *sl = &c->slots[s];
    const frame_t *first = &c->frames[sl->lo], *last = &c->frames[sl->hi - 1];
    int jank = sl->build_us > c->budget_us || sl->raster_us > c->budget_us;
    fmt_ms(b, sizeof b, sl->build_us);
    fmt_ms(r, sizeof r, sl->raster_us);
    if (sl->hi - sl->lo == 1)
      sb_printf(&c->b,
                "<g class=\"frame%s\" data-seq=\"%lld\"><title>frame %lld: build %s ms, raster "
                "%s ms</title>",
                jank ? " jank" : "", (long long)first->seq, (long long)label_of(first), b, r);
    else
      sb_printf(&c->b,
                "<g class=\"frame%s\" data-seq=\"%lld-%lld\"><title>frames %lld to %lld (%zu): "
                "max build %s ms, max raster %s ms</title>",
                jank ? " jank" : "", (long long)first->seq, (long long)last->seq,
                (long long)label_of(first), (long long)label_of(last), sl->hi - sl->lo, b, r);
    double x = slot_x(c, s) + gap / 2;
    draw_bar(c, "build", x, bw, sl->build_us);
    draw_bar(c, "raster", x + bw, bw, sl->raster_us);
    sb_puts(&c->b, "</g>\n");
  }
}

static void draw_budget(chart_t *c) {
  char ms[32];
  fmt_ms(ms, sizeof ms, c->budget_us);
  double y = value_y(c, c->budget_us);
  sb_printf(&c->b,
            "<line id=\"budget\" x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\" stroke=\"#333\" "
            "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n"
            "<text class=\"budget-label\" x=\"%.0f\" y=\"%.2f\" text-anchor=\"end\" "
            "font-weight=\"bold\" fill=\"#333\" stroke=\"#fff\" stroke-width=\"3\" "
            "paint-order=\"stroke\">%s ms budget</text>\n",
            PLOT_L, y, PLOT_R, y, PLOT_R - 4, y - 4, ms);
}

/* The labels of frames idx[0..nw): each janky one's own cause (frame_cause.h,
 * as the text's worst-frame lines; "build" of a frame without blocks says no
 * more than its bar), else its top self-time block. */
typedef char label_t[4 * CHART_LABEL_CHARS + 8];
static void worst_names(const chart_t *c, const size_t *idx, size_t nw, label_t *out) {
  frame_cause_t fc[CHART_WORST];
  const frame_t **all = malloc((c->n ? c->n : 1) * sizeof *all);
  int ok = all != NULL;
  for (size_t i = 0; ok && i < c->n; i++) all[i] = &c->frames[i];
  ok = ok && frame_cause_of(all, c->n, NULL, c->budget_us, idx, nw, fc) == 0;
  free(all);
  for (size_t k = 0; k < nw; k++) {
    const char *top = top_block(&c->frames[idx[k]]);
    if (ok && fc[k].kind && strcmp(fc[k].kind, "build"))
      snprintf(out[k], sizeof out[k], "%.*s", (int)fc[k].len, fc[k].name);
    else
      snprintf(out[k], sizeof out[k], "%s", top ? top : "");
  }
}

/* The worst frames (by max(build, raster), as summary's worstFrames), each
 * labelled "#frameNumber name 24.1 ms" in the first of CHART_WORST rows at the top of
 * the plot where it overlaps no other label, with a line down to its bar.
 * Labels carry a white halo, so a tall bar behind one does not hide it. */
static void draw_worst(chart_t *c) {
  size_t idx[CHART_WORST], nw = 0;
  for (size_t i = 0; i < c->n; i++) {
    int64_t v = frame_worst(&c->frames[i]);
    size_t at = nw;
    while (at > 0 && frame_worst(&c->frames[idx[at - 1]]) < v) at--;
    if (at >= CHART_WORST) continue;
    if (nw < CHART_WORST) nw++;
    memmove(idx + at + 1, idx + at, (nw - 1 - at) * sizeof *idx);
    idx[at] = i;
  }
  label_t names[CHART_WORST];
  worst_names(c, idx, nw, names);
  /* Place every label first and draw the lines, so no line crosses a label. */
  double px0[CHART_WORST], px1[CHART_WORST];
  size_t prow[CHART_WORST];
  for (size_t k = 0; k < nw; k++) {
    const frame_t *f = &c->frames[idx[k]];
    size_t s = idx[k] * c->nslots / c->n;
    while (s + 1 < c->nslots && c->slots[s + 1].lo <= idx[k]) s++;
    while (s > 0 && c->slots[s].lo > idx[k]) s--;
    const char *name = names[k][0] ? names[k] : NULL;
    size_t chars = name ? record_utf8_length(name) + 1 : 0;
    if (chars > CHART_LABEL_CHARS + 2) chars = CHART_LABEL_CHARS + 2;
    chars += (size_t)snprintf(NULL, 0, "#%lld %.1f ms", (long long)label_of(f),
                              (double)frame_worst(f) / 1000.0);
    double w = (double)chars * CHAR_W, cx = slot_x(c, s) + c->slot_w / 2;
    double x0 = cx - w / 2;
    if (x0 + w > PLOT_R) x0 = PLOT_R - w;
    if (x0 < PLOT_L) x0 = PLOT_L;
    size_t row = 0;
    for (int clash = 1; clash && row < CHART_WORST - 1;) {
      clash = 0;
      for (size_t j = 0; j < k && !clash; j++)
        clash = prow[j] == row && x0 < px1[j] + CHAR_W && px0[j] < x0 + w + CHAR_W;
      if (clash) row++;
    }
    px0[k] = x0, px1[k] = x0 + w, prow[k] = row;
    double y = PLOT_T + 26 + 12 * (double)row, top = value_y(c, frame_worst(f));
    if (top > y + 3)
      sb_printf(&c->b,
                "<line class=\"worst-tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                "stroke=\"#888\"/>\n",
                cx, y + 3, cx, top);
  }
  for (size_t k = 0; k < nw; k++) {
    const frame_t *f = &c->frames[idx[k]];
    const char *name = names[k][0] ? names[k] : NULL;
    char ms[32];
    fmt_ms(ms, sizeof ms, frame_worst(f));
    sb_printf(&c->b,
              "<text class=\"worst\" data-seq=\"%lld\" x=\"%.2f\" y=\"%.2f\" fill=\"#111\" "
              "stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">#%lld ",
              (long long)f->seq, px0[k], PLOT_T + 26 + 12 * (double)prow[k],
              (long long)label_of(f));
    if (name) {
      sb_puts(&c->b, "<tspan font-weight=\"bold\">");
      sb_escape(&c->b, name, CHART_LABEL_CHARS);
      sb_puts(&c->b, "</tspan> ");
    }
    sb_printf(&c->b, "%s ms</text>\n", ms);
  }
}

static void draw_axes(chart_t *c) {
  sb_printf(&c->b,
            "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#333\"/>"
            "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
            "stroke=\"#333\"/>\n",
            PLOT_L, PLOT_T, PLOT_L, PLOT_B, PLOT_L, PLOT_B, PLOT_R, PLOT_B);
  size_t ticks = c->nslots < X_TICKS ? c->nslots : X_TICKS;
  for (size_t k = 0; k < ticks; k++) {
    size_t s = ticks > 1 ? k * (c->nslots - 1) / (ticks - 1) : 0;
    double x = slot_x(c, s) + c->slot_w / 2;
    sb_printf(&c->b,
              "<line class=\"xtick\" x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" "
              "stroke=\"#333\"/><text class=\"tick\" x=\"%.2f\" y=\"%.0f\" "
              "text-anchor=\"middle\">#%lld</text>\n",
              x, PLOT_B, x, PLOT_B + 4, x, PLOT_B + 15,
              (long long)label_of(&c->frames[c->slots[s].lo]));
  }
  sb_printf(&c->b,
            "<text class=\"axis-title\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">frames "
            "(frame number), oldest left</text>\n",
            PLOT_L + PLOT_W / 2, PLOT_B + 34);
}

static void draw_head(chart_t *c, const char *title, size_t janky) {
  sb_printf(&c->b,
            "<text class=\"title\" x=\"%.0f\" y=\"24\" font-size=\"16\" "
            "font-weight=\"bold\">",
            PLOT_L);
  if (title && *title) {
    sb_escape(&c->b, title, 120);
    sb_puts(&c->b, " \xE2\x80\x94 ");
  }
  sb_printf(&c->b, "%zu frames, %zu janky", c->n, janky);
  if (c->n > c->nslots && c->nslots)
    sb_printf(&c->b, " (up to %zu frames per column, their maximum shown)",
              (c->n + c->nslots - 1) / c->nslots);
  sb_puts(&c->b, "</text>\n");
  /* Legend. */
  static const struct {
    const char *color, *text;
  } legend[] = {{CHART_COLOR_BUILD, "build (left bar)"},
                {CHART_COLOR_RASTER, "raster (right bar)"},
                {CHART_COLOR_JANK, "over budget (janky frame)"}};
  double x = PLOT_L;
  for (size_t i = 0; i < sizeof legend / sizeof *legend; i++) {
    sb_printf(&c->b,
              "<rect class=\"legend\" x=\"%.0f\" y=\"36\" width=\"10\" height=\"10\" "
              "fill=\"%s\"/><text class=\"legend\" x=\"%.0f\" y=\"45\">%s</text>\n",
              x, legend[i].color, x + 14, legend[i].text);
    x += 14 + (double)strlen(legend[i].text) * CHAR_W + 18;
  }
  sb_printf(&c->b,
            "<rect class=\"legend\" x=\"%.0f\" y=\"36\" width=\"10\" height=\"10\" "
            "fill=\"%s\" stroke=\"#bbb\"/><text class=\"legend\" x=\"%.0f\" "
            "y=\"45\">interaction</text>\n",
            x, band_fills[0], x + 14);
}

char *chart_svg(const frame_t *frames, size_t n, int64_t budget_us, const char *title) {
  chart_t c;
  memset(&c, 0, sizeof c);
  c.frames = frames;
  c.n = frames ? n : 0;
  /* Bounded so five budgets and the tick arithmetic cannot overflow. */
  c.budget_us = budget_us <= 0                    ? 16667
                : budget_us > CHART_MAX_BUDGET_US ? CHART_MAX_BUDGET_US
                                                  : budget_us;
  if (build_slots(&c) < 0) return NULL;
  scale_y(&c);
  size_t janky = 0;
  for (size_t i = 0; i < c.n; i++) janky += (size_t)chart_is_janky(&frames[i], c.budget_us);

  sb_printf(&c.b,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"10\">\n<title>",
            CHART_WIDTH, CHART_HEIGHT, CHART_WIDTH, CHART_HEIGHT);
  sb_escape(&c.b, title && *title ? title : "telescope frame chart", 120);
  sb_printf(&c.b,
            "</title>\n<rect class=\"background\" width=\"%d\" height=\"%d\" "
            "fill=\"#ffffff\"/>\n",
            CHART_WIDTH, CHART_HEIGHT);
  draw_head(&c, title, janky);
  draw_bands(&c);
  draw_grid(&c);
  if (c.n == 0)
    sb_printf(&c.b,
              "<text class=\"empty\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" "
              "font-size=\"20\" fill=\"#777\">no frames</text>\n",
              PLOT_L + PLOT_W / 2, PLOT_T + PLOT_H / 2);
  draw_frames(&c);
  draw_budget(&c);
  draw_worst(&c);
  if (c.n)
    draw_axes(&c);
  else
    sb_printf(&c.b,
              "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
              "stroke=\"#333\"/><line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" "
              "y2=\"%.0f\" stroke=\"#333\"/>\n",
              PLOT_L, PLOT_T, PLOT_L, PLOT_B, PLOT_L, PLOT_B, PLOT_R, PLOT_B);
  for (size_t i = 0; i < c.n; i++)
    if (frame_worst(&frames[i]) > c.ymax_us) {
      char ms[32];
      fmt_ms(ms, sizeof ms, c.ymax_us);
      sb_printf(&c.b,
                "<text class=\"note\" x=\"%.0f\" y=\"24\" text-anchor=\"end\" fill=\"#555\">bars "
                "above %s ms are cut at the top</text>\n",
                PLOT_R, ms);
      break;
    }
  sb_puts(&c.b, "</svg>\n");
  free(c.slots);
  if (c.b.oom) {
    free(c.b.p);
    return NULL;
  }
  return c.b.p;
}
