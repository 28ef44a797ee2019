/* html: report.html, one self-contained page per run or study: configuration, summary table,
 * SVG plots (plots.h) and the definition of every metric. Inline CSS and SVG only, no scripts
 * and nothing fetched at view time. The page is well-formed XML (XHTML-compatible HTML5), so
 * an XML parser can check it; written whole or not at all (ts_report_write_file).
 */
#ifndef TS_HTML_H
#define TS_HTML_H

#include <stdbool.h>

#include "../workloads/err.h"
#include "../workloads/result.h"
#include "../workloads/schedule.h"
#include "metrics.h"
#include "report.h"
#include "scaling.h"

/* dir/report.html for one simulated iteration. The Gantt chart shows the pipeline ranks of
 * replica 0 that were traced (sim spans); none traced, no Gantt. */
int ts_html_run_report(const char *dir, const ts_workload *wl, const ts_run_info *info,
                       const ts_metrics *m, const ts_job *job, const ts_sim_result *sim,
                       ts_err *err);

/* dir/report.html for a scaling study of n points (GPU counts ascending). `study` describes
 * it in one line (scale.csv's first line). */
int ts_html_scale_report(const char *dir, const char *study, bool is_weak, const char *platform,
                         int n_points, const ts_scaling_point *points, ts_err *err);

/* One candidate of a layout search, as report.html shows it. */
typedef struct ts_html_candidate {
  char layout[96]; /* e.g. "TP8 PP16 DP8 mbs 1 v 1 full ZeRO-1" */
  /* the estimate, its MFU and Megatron-DeepSpeed fraction of peak */
  double analytic_s, analytic_mfu, analytic_fraction;
  double simulated_s, simulated_mfu, simulated_fraction; /* 0 when not simulated */
  double peak_bytes;
  double breakdown_s[TS_CAT_COUNT]; /* of the estimate, mean over ranks */
} ts_html_candidate;

/* dir/report.html for a layout search: the candidates in order (the first n_shown of them),
 * the counts of rejected ones, a time breakdown per shown candidate, definitions. */
int ts_html_search_report(const char *dir, const char *title, const char *summary, int n_shown,
                          const ts_html_candidate *shown, ts_err *err);

/* A sweep: its axes, each point's values ([point * n_axes + axis], "" where unset) and result
 * (is_ok false: errors[point] says why, or NULL when it did not run). */
typedef struct ts_html_sweep {
  const char *title, *subtitle;
  int n_axes, n_points;
  const char *const *axes;
  const char *const *values;
  const ts_scaling_point *results;
  const bool *is_ok;
  const char *const *errors;
} ts_html_sweep;

/* dir/report.html for a sweep: every point, then along each axis with two values or more,
 * tokens/s per GPU, one line per combination of the other axes' values. */
int ts_html_sweep_report(const char *dir, const ts_html_sweep *s, ts_err *err);

#endif
