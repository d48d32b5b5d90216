/* chart: the SVG text checked as a reviewer's browser would need it —
 * well-formed XML (a small checker: balanced tags, quoted attributes, only
 * known entities), app names escaped — and as a reader would read it: one
 * red bar per over-budget bar, the budget line at the budget's height, the
 * worst frames labelled with their own cause (else their top self-time
 * block), interaction bands,
 * bucketing past the pixel width, bounded size; then the file shell. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chart.h"
#include "chart_file.h"

#define BUDGET 16667

/* ---- a minimal XML well-formedness check -------------------------------- */

static int entity_ok(const char *p) {
  static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;", NULL};
  for (const char *const *e = ents; *e; e++)
    if (!strncmp(p, *e, strlen(*e))) return (int)strlen(*e);
  return 0;
}

/* 1 when doc is one well-formed element (after an optional XML declaration)
 * whose character data and attribute values use only the five entities. */
static int xml_well_formed(const char *doc, char *why, size_t n) {
  const char *stack[64];
  size_t lens[64], depth = 0;
  int roots = 0;
  const char *p = doc;
  if (!strncmp(p, "<?xml", 5)) {
    p = strstr(p, "?>");
    if (!p) return snprintf(why, n, "unterminated declaration"), 0;
    p += 2;
  }
  while (*p) {
    if (*p == '&') {
      int l = entity_ok(p);
      if (!l) return snprintf(why, n, "bad entity at %.20s", p), 0;
      p += l;
    } else if (*p == '>') {
      return snprintf(why, n, "raw > in text at %.20s", p), 0;
    } else if (*p != '<') {
      if (depth == 0 && !strchr(" \n\r\t", *p)) return snprintf(why, n, "text outside root"), 0;
      p++;
    } else if (p[1] == '/') {
      const char *name = p + 2;
      size_t l = strcspn(name, " >");
      if (!depth || lens[depth - 1] != l || strncmp(stack[depth - 1], name, l))
        return snprintf(why, n, "mismatched </%.*s>", (int)l, name), 0;
      depth--;
      p = name + l;
      if (*p != '>') return snprintf(why, n, "bad end tag"), 0;
      p++;
    } else {
      const char *name = p + 1;
      size_t l = strcspn(name, " />\n");
      if (!l) return snprintf(why, n, "empty tag name"), 0;
      if (depth == 0 && roots++) return snprintf(why, n, "two roots"), 0;
      p = name + l;
      for (;;) {
        while (*p == ' ' || *p == '\n') p++;
        if (*p == '>' || (p[0] == '/' && p[1] == '>')) break;
        size_t al = strcspn(p, "= />");
        if (!al || p[al] != '=' || p[al + 1] != '"')
          return snprintf(why, n, "bad attribute in <%.*s> at %.20s", (int)l, name, p), 0;
        p += al + 2;
        while (*p != '"') {
          if (!*p || *p == '<') return snprintf(why, n, "bad attribute value"), 0;
          if (*p == '&') {
            int el = entity_ok(p);
            if (!el) return snprintf(why, n, "bad entity in attribute at %.20s", p), 0;
            p += el;
          } else {
            p++;
          }
        }
        p++;
      }
      if (*p == '/') {
        p += 2;
        if (depth == 0) roots += 0;
      } else {
        if (depth == 64) return snprintf(why, n, "too deep"), 0;
        stack[depth] = name;
        lens[depth++] = l;
        p++;
      }
    }
  }
  if (depth) return snprintf(why, n, "unclosed <%.*s>", (int)lens[depth - 1], stack[depth - 1]), 0;
  if (roots != 1) return snprintf(why, n, "%d roots", roots), 0;
  return 1;
}

static void assert_xml(const char *svg) {
  char why[200] = "";
  ck_assert_msg(xml_well_formed(svg, why, sizeof why), "not well-formed: %s", why);
}

static size_t count(const char *hay, const char *needle) {
  size_t c = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) c++;
  return c;
}

/* The value of attribute attr in the first element after marker. */
static double attr_after(const char *svg, const char *marker, const char *attr) {
  const char *p = strstr(svg, marker);
  ck_assert_msg(p != NULL, "no %s", marker);
  char key[32];
  snprintf(key, sizeof key, " %s=\"", attr);
  p = strstr(p, key);
  ck_assert_ptr_nonnull(p);
  return strtod(p + strlen(key), NULL);
}

/* ---- frames ------------------------------------------------------------- */

static record_block_t build_blocks[] = {{(char *)"BUILD", 30000, 1000, 1},
                                        {(char *)"SlowWidget", 25000, 25000, 1},
                                        {(char *)"ProductCard", 4000, 4000, 3}};

static frame_t frame(int64_t seq, int64_t build, int64_t raster) {
  frame_t f;
  memset(&f, 0, sizeof f);
  f.seq = seq;
  f.frame_number = seq + 100;
  f.build_us = build;
  f.raster_us = raster;
  f.total_span_us = build + raster;
  return f;
}

static frame_t *frames_new(size_t n) {
  frame_t *fs = calloc(n, sizeof *fs);
  ck_assert_ptr_nonnull(fs);
  for (size_t i = 0; i < n; i++) fs[i] = frame((int64_t)i + 1, 3000 + (int64_t)(i % 5) * 500, 2000);
  return fs;
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(jank_bars_red) {
  frame_t *fs = frames_new(20);
  fs[3].build_us = 20000;
  fs[7].build_us = 30000;
  fs[12].build_us = 25000;
  fs[15].raster_us = 18000;
  fs[18].build_us = BUDGET; /* at the budget is not over it */
  char *svg = chart_svg(fs, 20, BUDGET, "capture s1");
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_uint_eq(count(svg, "<g class=\"frame"), 20);
  ck_assert_uint_eq(count(svg, "<g class=\"frame jank\""), 4);
  ck_assert_uint_eq(count(svg, "class=\"build jank\""), 3);
  ck_assert_uint_eq(count(svg, "class=\"raster jank\""), 1);
  /* Red is used by the four over-budget bars and the legend swatch only. */
  ck_assert_uint_eq(count(svg, "fill=\"" CHART_COLOR_JANK "\""), 4 + 1);
  ck_assert_ptr_nonnull(strstr(svg, "capture s1 \xE2\x80\x94 20 frames, 4 janky"));
  ck_assert_ptr_nonnull(strstr(svg, "16.7 ms budget"));
  ck_assert_int_eq(chart_is_janky(&fs[15], BUDGET), 1);
  ck_assert_int_eq(chart_is_janky(&fs[18], BUDGET), 0);
  free(svg);
  free(fs);
}
END_TEST

START_TEST(budget_line_height) {
  frame_t *fs = frames_new(10);
  fs[4].build_us = BUDGET; /* its bar top is the budget line */
  fs[6].build_us = 2 * BUDGET;
  char *svg = chart_svg(fs, 10, BUDGET, NULL);
  ck_assert_ptr_nonnull(svg);
  double line_y = attr_after(svg, "id=\"budget\"", "y1");
  double bar_y = attr_after(svg, "data-seq=\"5\"", "y");
  ck_assert_double_eq_tol(line_y, bar_y, 0.01);
  /* Twice the budget stands twice as high above the axis. */
  double axis =
      attr_after(svg, "data-seq=\"5\"", "y") + attr_after(svg, "data-seq=\"5\"", "height");
  double top2 = attr_after(svg, "data-seq=\"7\"", "y");
  ck_assert_double_eq_tol(axis - top2, 2 * (axis - line_y), 0.02);
  ck_assert_double_gt(axis - line_y, 50); /* and the budget is clearly visible */
  free(svg);
  free(fs);
}
END_TEST

START_TEST(worst_frames_labelled) {
  frame_t *fs = frames_new(50);
  int64_t worst[] = {40000, 35000, 30000, 26000, 22000, 21000}; /* the 6th is not labelled */
  size_t at[] = {10, 44, 2, 30, 31, 20};
  for (size_t k = 0; k < 6; k++) {
    fs[at[k]].build_us = worst[k];
    fs[at[k]].blocks = build_blocks;
    fs[at[k]].nblocks = 3;
  }
  fs[44].raster_us = 35000, fs[44].build_us = 1000; /* worst by raster counts too */
  char *svg = chart_svg(fs, 50, BUDGET, NULL);
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_uint_eq(count(svg, "<text class=\"worst\""), 5);
  for (size_t k = 0; k < 5; k++) {
    char want[64];
    snprintf(want, sizeof want, "<text class=\"worst\" data-seq=\"%zu\"", at[k] + 1);
    const char *p = strstr(svg, want);
    ck_assert_msg(p != NULL, "frame %zu not labelled", at[k] + 1);
    const char *end = strstr(p, "</text>");
    char label[256];
    snprintf(label, sizeof label, "%.*s", (int)(end - p), p);
    snprintf(want, sizeof want, ">#%zu <tspan", at[k] + 1 + 100); /* its frame number */
    ck_assert_msg(strstr(label, want), "%s", label);
    /* The top self-time block, not the top inclusive one (BUILD). */
    ck_assert_msg(strstr(label, ">SlowWidget</tspan>"), "%s", label);
    snprintf(want, sizeof want, " %.1f ms", worst[k] / 1000.0);
    ck_assert_msg(strstr(label, want), "%s", label);
  }
  ck_assert_ptr_null(strstr(svg, "<text class=\"worst\" data-seq=\"21\""));
  free(svg);
  free(fs);
}
END_TEST

/* A label names the frame's own cause (frame_cause.h), as the text does:
 * frame 854 of the real world-clock recording builds as long as calm frames
 * do and paints 4 ms more, so it is PAINT, not its largest block, BUILD. */
static record_block_t calm_blocks[] = {{(char *)"BUILD", 7500, 7500, 1},
                                       {(char *)"PAINT", 500, 500, 1}};
static record_block_t f854_blocks[] = {{(char *)"BUILD", 8433, 8433, 1},
                                       {(char *)"PAINT", 4582, 4582, 1}};
START_TEST(worst_label_is_the_frames_own_cause) {
  frame_t *fs = frames_new(20);
  for (size_t i = 0; i < 20; i++) fs[i].blocks = calm_blocks, fs[i].nblocks = 2;
  fs[9].build_us = 17367, fs[9].blocks = f854_blocks;
  char *svg = chart_svg(fs, 20, BUDGET, NULL);
  ck_assert_ptr_nonnull(svg);
  const char *p = strstr(svg, "<text class=\"worst\" data-seq=\"10\"");
  ck_assert_ptr_nonnull(p);
  const char *end = strstr(p, "</text>");
  char label[256];
  snprintf(label, sizeof label, "%.*s", (int)(end - p), p);
  ck_assert_msg(strstr(label, ">PAINT</tspan>"), "%s", label);
  free(svg);
  free(fs);
}
END_TEST

START_TEST(names_escaped) {
  frame_t *fs = frames_new(30);
  record_block_t evil[] = {{(char *)"<script>&\"'x\x01\xff</script>", 90000, 90000, 1}};
  fs[5].build_us = 90000;
  fs[5].blocks = evil;
  fs[5].nblocks = 1;
  for (size_t i = 0; i < 30; i++) fs[i].interaction_id = (char *)"a<b&c\"d";
  char *svg = chart_svg(fs, 30, BUDGET, "t<i>&tle");
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_ptr_null(strstr(svg, "<script>"));
  ck_assert_ptr_null(strstr(svg, "<i>"));
  ck_assert_ptr_nonnull(strstr(svg, "&lt;script&gt;&amp;&quot;&#39;x\xEF\xBF\xBD\xEF\xBF\xBD&lt;"));
  ck_assert_ptr_nonnull(strstr(svg, "a&lt;b&amp;c&quot;d"));
  ck_assert_ptr_nonnull(strstr(svg, "t&lt;i&gt;&amp;tle"));
  free(svg);
  free(fs);
}
END_TEST

START_TEST(interaction_bands) {
  frame_t *fs = frames_new(40);
  for (size_t i = 0; i < 20; i++) fs[i].interaction_id = (char *)"scroll-feed";
  for (size_t i = 30; i < 40; i++) fs[i].interaction_id = (char *)"tap-buy";
  char *svg = chart_svg(fs, 40, BUDGET, NULL);
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_uint_eq(count(svg, "<rect class=\"band\""), 2);
  ck_assert_ptr_nonnull(strstr(svg, ">scroll-feed</text>"));
  ck_assert_ptr_nonnull(strstr(svg, ">tap-buy</text>"));
  /* The first band spans exactly the first half of the plot. */
  double x = attr_after(svg, "<rect class=\"band\"", "x");
  double w = attr_after(svg, "<rect class=\"band\"", "width");
  double x1 = attr_after(svg, "data-seq=\"1\"", "x"), x21 = attr_after(svg, "data-seq=\"21\"", "x");
  ck_assert_double_le(x, x1);
  ck_assert_double_ge(x + w, attr_after(svg, "data-seq=\"20\"", "x"));
  ck_assert_double_le(x + w, x21);
  free(svg);
  free(fs);
}
END_TEST

START_TEST(bucketed_past_the_pixels) {
  size_t n = 3000;
  frame_t *fs = frames_new(n);
  fs[1234].build_us = 50000;
  char *svg = chart_svg(fs, n, BUDGET, NULL);
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_uint_eq(count(svg, "<g class=\"frame"), CHART_MAX_SLOTS);
  ck_assert_uint_eq(count(svg, "<g class=\"frame jank\""), 1); /* the bucket holding it */
  ck_assert_ptr_nonnull(strstr(svg, "3000 frames, 1 janky (up to 6 frames per column"));
  /* The bucket's bar is the maximum of its frames. */
  ck_assert_ptr_nonnull(strstr(svg, "max build 50.0 ms"));
  free(svg);
  svg = chart_svg(fs, CHART_MAX_SLOTS, BUDGET, NULL);
  ck_assert_uint_eq(count(svg, "<g class=\"frame"), CHART_MAX_SLOTS);
  ck_assert_ptr_null(strstr(svg, "per column"));
  free(svg);
  free(fs);
}
END_TEST

START_TEST(size_bounded) {
  /* The worst case for size: every frame janky, long names everywhere,
   * a new interaction every frame. */
  size_t n = 1000;
  frame_t *fs = frames_new(n);
  char longname[RECORD_MAX_NAME], ids[2][RECORD_MAX_INTERACTION + 1];
  memset(longname, '&', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  memset(ids[0], '<', RECORD_MAX_INTERACTION), ids[0][RECORD_MAX_INTERACTION] = '\0';
  memset(ids[1], '>', RECORD_MAX_INTERACTION), ids[1][RECORD_MAX_INTERACTION] = '\0';
  record_block_t b[] = {{longname, 1, 1, 1}};
  for (size_t i = 0; i < n; i++) {
    fs[i].build_us = fs[i].raster_us = 20000 + (int64_t)i;
    fs[i].blocks = b, fs[i].nblocks = 1;
    fs[i].interaction_id = ids[i % 2];
  }
  char *svg = chart_svg(fs, n, BUDGET, NULL);
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_uint_lt(strlen(svg), 1u << 20);
  free(svg);
  free(fs);
}
END_TEST

START_TEST(clipped_at_five_budgets) {
  frame_t *fs = frames_new(10);
  fs[2].build_us = 700000; /* frozen */
  char *svg = chart_svg(fs, 10, BUDGET, NULL);
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_ptr_nonnull(strstr(svg, "class=\"build jank clipped\""));
  ck_assert_ptr_nonnull(strstr(svg, "are cut at the top"));
  ck_assert_ptr_nonnull(strstr(svg, ">#103 700.0 ms</text>")); /* the label tells the truth */
  /* The budget line stays well clear of the axis. */
  double line_y = attr_after(svg, "id=\"budget\"", "y1");
  ck_assert_double_lt(line_y, 350 - 286 / 6.0);
  free(svg);
  free(fs);
}
END_TEST

START_TEST(extreme_values) {
  /* Nothing overflows: the budget and the bars are clamped before the
   * arithmetic (run under UBSan in the sanitizer build). */
  frame_t *fs = frames_new(4);
  fs[0].build_us = INT64_MAX;
  fs[1].raster_us = INT64_MAX / 3;
  fs[2].build_us = -5;
  int64_t budgets[] = {INT64_MAX, 1, 0, -1};
  for (size_t k = 0; k < 4; k++) {
    char *svg = chart_svg(fs, 4, budgets[k], NULL);
    ck_assert_ptr_nonnull(svg);
    assert_xml(svg);
    ck_assert_ptr_null(strstr(svg, "nan"));
    ck_assert_ptr_null(strstr(svg, "inf"));
    ck_assert_uint_eq(count(svg, "<g class=\"frame"), 4);
    free(svg);
  }
  free(fs);
}
END_TEST

START_TEST(empty_says_no_frames) {
  char *svg = chart_svg(NULL, 0, BUDGET, "stop s2");
  ck_assert_ptr_nonnull(svg);
  assert_xml(svg);
  ck_assert_ptr_nonnull(strstr(svg, ">no frames</text>"));
  ck_assert_ptr_nonnull(strstr(svg, "0 frames, 0 janky"));
  ck_assert_ptr_nonnull(strstr(svg, "id=\"budget\""));
  ck_assert_uint_eq(count(svg, "<g class=\"frame"), 0);
  free(svg);
}
END_TEST

START_TEST(file_written_atomically) {
  char base[] = "/tmp/telescope-chart-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(base));
  char dir[256], bad[400], path[4352], err[512] = "", path2[4352];
  snprintf(dir, sizeof dir, "%s/a b/c", base);
  ck_assert_int_eq(chart_file_write(dir, "x.svg", "<svg/>", path, sizeof path, err, sizeof err), 0);
  char want[300];
  snprintf(want, sizeof want, "%s/x.svg", dir);
  ck_assert_str_eq(path, want);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  char got[16] = "";
  ck_assert_ptr_nonnull(fgets(got, sizeof got, f));
  fclose(f);
  ck_assert_str_eq(got, "<svg/>");
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0644);
  /* The same name again: not replaced, numbered. */
  ck_assert_int_eq(chart_file_write(dir, "x.svg", "2", path2, sizeof path2, err, sizeof err), 0);
  snprintf(want, sizeof want, "%s/x-2.svg", dir);
  ck_assert_str_eq(path2, want);
  /* Nothing left behind but the two charts. */
  char cmd[600];
  snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
  ck_assert_int_eq(system(cmd), 0);
  /* A file where the directory should be: a clear error. */
  snprintf(bad, sizeof bad, "%s/x.svg/sub", want);
  ck_assert_int_eq(chart_file_write(bad, "y.svg", "", path, sizeof path, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "cannot create directory") != NULL, "%s", err);
  char uri[256];
  ck_assert_int_eq(chart_file_uri("/t/a b%/\xC3\xA9.svg", uri, sizeof uri), 0);
  ck_assert_str_eq(uri, "file:///t/a%20b%25/%C3%A9.svg");
  ck_assert_int_eq(chart_file_uri("/long/path", uri, 12), -1);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("chart");
  TCase *tc = tcase_create("chart");
  tcase_add_test(tc, jank_bars_red);
  tcase_add_test(tc, budget_line_height);
  tcase_add_test(tc, worst_frames_labelled);
  tcase_add_test(tc, worst_label_is_the_frames_own_cause);
  tcase_add_test(tc, names_escaped);
  tcase_add_test(tc, interaction_bands);
  tcase_add_test(tc, bucketed_past_the_pixels);
  tcase_add_test(tc, size_bounded);
  tcase_add_test(tc, clipped_at_five_budgets);
  tcase_add_test(tc, extreme_values);
  tcase_add_test(tc, empty_says_no_frames);
  tcase_add_test(tc, file_written_atomically);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
