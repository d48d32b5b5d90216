/* budgets: a session summary judged against the limits a caller sets
 * (`budgets` on stop/capture, the --budgets file of `check`; docs/tool.md
 * "Budgets"). Pure: JSON in, JSON out.
 *
 *   jankRatioMax    jank.ratio      ≤ limit passes
 *   buildP90MsMax   buildUs.p90/1000 (ms)
 *   rasterP90MsMax  rasterUs.p90/1000 (ms)
 *   frozenMax       jank.frozen
 *
 * A value equal to its limit passes: a limit is the worst value accepted. */
#ifndef TELESCOPE_BUDGETS_H
#define TELESCOPE_BUDGETS_H

#include <jansson.h>
#include <stddef.h>

/* 0 when `budgets` is an object holding only the four names above, each a
 * number in range (ratios 0–1, times > 0, frozenMax an integer ≥ 0) and at
 * least one of them; else -1 with the offending member named in err
 * ("budgets.jankRatioMax: must be a number from 0 to 1"). */
int budgets_validate(const json_t *budgets, char *err, size_t errlen);

/* {verdict: "pass"|"fail", failed: [{name, limit, actual}], checked: [name]}
 * for a validated `budgets` against `summary` (both borrowed; the summary as
 * schema/telescope_frames.output.json has it). A summary of 0 frames fails
 * nothing, and says so in "note"; a metric the summary lacks is listed in
 * "unmeasured" instead of failing. New reference; NULL when out of memory. */
json_t *budgets_eval(const json_t *budgets, const json_t *summary);

/* The verdict of budgets_eval as one line, the words `check` prints and the
 * text block of stop/capture shows: "budgets: PASS (4 checked)" or
 * "budgets: FAIL jankRatioMax 0.35 > 0.1; buildP90MsMax 22.4 > 16 (1 of 4
 * passed)", then what went unmeasured. No trailing newline. Returns what
 * snprintf returns (the line is cut to fit len). */
int budgets_format(const json_t *verdict, char *buf, size_t len);

#endif
