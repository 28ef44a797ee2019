/* html: report.html; see html.h. */
#include "html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plots.h"
#include "svg.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
/* Under every table of figures: the two fractions of peak each table carries (metrics.h). */
#define TS_HTML_PEAK_NOTE                                                                          \
  "TFLOPS/GPU and MFU count the model's FLOPs; Megatron % is Megatron-DeepSpeed's formula "        \
  "(recomputation counted), the figure the Frontier study reports as % of peak."

static const char css[] =
    "body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#222}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:8px 0}"
    "th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "p.sub{color:#555}dt{font-weight:600;margin-top:6px}dd{margin-left:20px}"
    "svg{display:block;margin:8px 0}"
    "svg text{font-family:system-ui,sans-serif;fill:#222}"
    "svg .title{font-size:15px;font-weight:600}svg .tick{font-size:11px}"
    "svg .small{font-size:8px}svg .axis{font-size:12px}svg .legend{font-size:12px}"
    "svg .bar{font-size:9px;fill:#fff}";

static void open_page(FILE *f, const char *title) {
  fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
        "<meta charset=\"utf-8\"/>\n<title>",
        f);
  ts_svg_escape(f, title);
  fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
  ts_svg_escape(f, title);
  fputs("</h1>\n", f);
}

static void close_page(FILE *f) {
  fputs("</body>\n</html>\n", f);
}

/* A <tr> of a key and a formatted value, both escaped. */
static void kv_row(FILE *f, const char *key, const char *fmt, ...) {
  char value[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(value, sizeof value, fmt, ap);
  va_end(ap);
  fputs("<tr><th>", f);
  ts_svg_escape(f, key);
  fputs("</th><td>", f);
  ts_svg_escape(f, value);
  fputs("</td></tr>\n", f);
}

static void heading(FILE *f, const char *text) {
  fputs("<h2>", f);
  ts_svg_escape(f, text);
  fputs("</h2>\n", f);
}

static void paragraph(FILE *f, const char *text) {
  fputs("<p>", f);
  ts_svg_escape(f, text);
  fputs("</p>\n", f);
}

/* The definitions of DESIGN.md's metrics, as metrics.h computes them. */
static void definitions(FILE *f, double gpu_power_w) {
  static const char *const terms[][2] = {
      {"iteration time", "Simulated time from the start of the iteration until the last rank "
                         "finishes its optimizer step."},
      {"tokens/s", "global batch x sequence length / iteration time."},
      {"model TFLOPS per GPU, MFU",
       "Model FLOPs per iteration, 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) (no recomputation, "
       "unpadded vocabulary), / iteration time / GPUs; MFU = that / the GPU's peak at the "
       "training precision."},
      {"hardware TFLOPS per GPU, HFU",
       "Matrix FLOPs the simulation executed (recomputation and the vocabulary as the framework "
       "pads it included) / iteration time / GPUs; HFU = that / peak."},
      {"Megatron-DeepSpeed % of peak",
       "Megatron-DeepSpeed's throughput formula, 24 k B s l h^2 (1 + s/(6h) + V/(16 l h)) with "
       "k = 4 under full recomputation (3 otherwise) and the padded vocabulary, / iteration "
       "time / GPUs / peak: the figure the Frontier study reports as % of peak."},
      {"compute, recompute, optimizer",
       "Time a rank's GPU spends on forward and backward kernels, on recomputing activations, "
       "and on the optimizer step."},
      {"tp, pp, dp", "Exposed communication: tensor-parallel collectives, pipeline transfers "
                     "(once the sender has posted), gradient synchronisation."},
      {"bubble", "Waiting for another pipeline stage to produce an activation or gradient."},
      {"idle", "Finished, waiting for the slowest rank to end the iteration."},
      {"breakdown", "Each category's mean over ranks; they sum to the iteration time."},
      {"memory", "Per GPU: weights, gradients and optimizer states (mixed-precision Adam, as "
                 "sharded by the ZeRO stage) and activations of the microbatches in flight "
                 "(Korthikanti et al. 2022, Table 2)."},
      {"weak-scaling efficiency",
       "Model FLOP/s per GPU at N / at the first point N0; for one model whose batch grows "
       "with N this is the tokens/s per GPU ratio."},
      {"strong-scaling efficiency", "(T(N0) x N0) / (T(N) x N), the batch fixed."},
      {"time to train", "training.train_tokens / tokens/s; GPU-hours = that x GPUs."},
  };
  heading(f, "Definitions");
  fputs("<dl>\n", f);
  for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
    fputs("<dt>", f);
    ts_svg_escape(f, terms[i][0]);
    fputs("</dt><dd>", f);
    ts_svg_escape(f, terms[i][1]);
    fputs("</dd>\n", f);
  }
  if (gpu_power_w <= 0) {
    fputs("</dl>\n", f);
    return;
  }
  fputs("<dt>GPU energy</dt><dd>", f);
  char text[512];
  snprintf(text, sizeof text,
           "GPUs x gpu.power of the platform file (%.0f W here) x time. An assumption: every GPU "
           "draws that power the whole time (the platform file cites where the figure comes "
           "from, e.g. a TDP, an upper bound); CPUs, memory, network and cooling are not "
           "counted.",
           gpu_power_w);
  ts_svg_escape(f, text);
  fputs("</dd>\n</dl>\n", f);
}

typedef struct run_ctx {
  const ts_workload *wl;
  const ts_run_info *info;
  const ts_metrics *m;
  const ts_job *job;
  const ts_sim_result *sim;
} run_ctx;

static void run_configuration(FILE *f, const ts_workload *wl, const ts_run_info *info) {
  const ts_model *md = &wl->model;
  heading(f, "Configuration");
  fputs("<table>\n", f);
  kv_row(f, "platform", "%s, %ld x %s", info->platform_name, wl->n_gpus, info->gpu_model);
  kv_row(f, "model", "%s: %ld layers, hidden %ld, %ld heads, sequence %ld, vocabulary %ld",
         wl->name, md->n_layers, md->hidden, md->n_heads, md->seq, md->vocab);
  char layout[128];
  ts_workload_layout_label(wl, layout, sizeof layout);
  kv_row(f, "layout", "%s", layout);
  kv_row(f, "batch", "global %ld sequences, micro-batch %ld, %ld microbatches per pipeline",
         wl->global_batch, wl->micro_batch, ts_workload_microbatches(wl));
  char schedule[64];
  ts_workload_schedule_label(wl, schedule, sizeof schedule);
  kv_row(f, "schedule", "%s, recompute %s, ZeRO-%d, sequence parallel %s", schedule,
         ts_recompute_names[wl->recompute], wl->zero_stage, wl->sequence_parallel ? "on" : "off");
  char fusions[160];
  ts_fusions_describe(wl->fusions, fusions, sizeof fusions);
  char eager[256];
  ts_workload_eager_describe(wl, eager, sizeof eager);
  kv_row(f, "stack", "%s, attention %s%s, fused kernels: %s%s", ts_framework_names[wl->framework],
         ts_attention_names[wl->attention], wl->is_unpad_input ? " behind unpad_input" : "",
         fusions, eager);
  kv_row(f, "precision", "%s", ts_precision_names[wl->precision]);
  char shared[96] = "";
  if (info->shortcut != NULL && info->n_played_ranks < info->n_ranks)
    snprintf(shared, sizeof shared, " (the others shared a player's timeline: %s)", info->shortcut);
  kv_row(f, "simulation",
         "fidelity %s, placement %s; %ld events, %ld transfers; %ld of %ld ranks played%s",
         info->fidelity, info->placement, info->n_events, info->n_transfers, info->n_played_ranks,
         info->n_ranks, shared);
  kv_row(f, "collectives", "%ld ring, %ld hierarchical, %ld tree", info->n_ring_collectives,
         info->n_hierarchical_collectives, info->n_tree_collectives);
  fputs("</table>\n", f);
}

static void run_summary(FILE *f, const ts_workload *wl, const ts_metrics *m) {
  heading(f, "Summary");
  fputs("<table>\n", f);
  ts_report_row rows[TS_REPORT_MAX_ROWS];
  int n = ts_report_summary_rows(wl, m, rows);
  for (int i = 0; i < n; i++)
    kv_row(f, rows[i].label, "%s", rows[i].value);
  fputs("</table>\n", f);
}

static void breakdown_table(FILE *f, const double *secs, double iteration_s) {
  fputs("<table>\n<tr><th>category</th><th>seconds</th><th>share</th></tr>\n", f);
  for (int c = 0; c < TS_CAT_COUNT; c++)
    fprintf(f, "<tr><td>%s</td><td class=\"n\">%.4f</td><td class=\"n\">%.1f%%</td></tr>\n",
            ts_category_names[c], secs[c], 100 * secs[c] / iteration_s);
  fputs("</table>\n", f);
}

static void write_run(FILE *f, const void *ctx) {
  const run_ctx *c = ctx;
  const ts_metrics *m = c->m;
  char title[160];
  snprintf(title, sizeof title, "trainsim: %s on %s, %ld GPUs", c->wl->name, c->info->platform_name,
           c->wl->n_gpus);
  open_page(f, title);
  run_configuration(f, c->wl, c->info);
  run_summary(f, c->wl, m);

  heading(f, "Where the time goes");
  breakdown_table(f, m->breakdown_s, m->iteration_s);
  long n_bars = m->n_stages + 1;
  char(*names)[32] = calloc((size_t)n_bars, sizeof *names);
  const char **labels = calloc((size_t)n_bars, sizeof *labels);
  double *secs = calloc((size_t)n_bars * TS_CAT_COUNT, sizeof(double));
  TS_ASSERT(names != NULL && labels != NULL && secs != NULL);
  snprintf(names[0], sizeof names[0], "mean");
  for (int k = 0; k < TS_CAT_COUNT; k++)
    secs[k] = m->breakdown_s[k];
  for (long s = 0; s < m->n_stages; s++) {
    snprintf(names[s + 1], sizeof names[s + 1], "stage %ld", s);
    for (int k = 0; k < TS_CAT_COUNT; k++)
      secs[(s + 1) * TS_CAT_COUNT + k] = m->stage_breakdown_s[s * TS_CAT_COUNT + k];
  }
  for (long b = 0; b < n_bars; b++)
    labels[b] = names[b];
  ts_plot_breakdown(f, "Time breakdown: mean over all ranks, then each pipeline stage", (int)n_bars,
                    labels, secs);
  free(secs);
  free(labels);
  free(names);

  heading(f, "Pipeline");
  bool traced = false;
  for (long r = 0; r < c->sim->n_ranks; r++)
    traced = traced || c->sim->ranks[r].spans != NULL;
  if (traced)
    ts_plot_gantt(f, c->wl, c->job, c->sim);
  else
    paragraph(f, "No rank was traced, so there is no Gantt chart.");

  heading(f, "Memory");
  ts_plot_memory(f, m->n_stages, m->stage_memory, m->usable_bytes);
  definitions(f, m->gpu_power_w);
  close_page(f);
}

int ts_html_run_report(const char *dir, const ts_workload *wl, const ts_run_info *info,
                       const ts_metrics *m, const ts_job *job, const ts_sim_result *sim,
                       ts_err *err) {
  run_ctx c = {wl, info, m, job, sim};
  return ts_report_write_file(dir, "report.html", write_run, &c, err);
}

typedef struct scale_ctx {
  const char *study, *platform;
  bool is_weak;
  int n_points;
  const ts_scaling_point *points;
} scale_ctx;

static void write_scale(FILE *f, const void *ctx) {
  const scale_ctx *c = ctx;
  const ts_scaling_point *p = c->points;
  bool one_model = true;
  for (int i = 1; i < c->n_points; i++)
    one_model = one_model && strcmp(p[i].workload, p[0].workload) == 0;
  char title[160];
  snprintf(title, sizeof title, "trainsim: %s scaling %s %s on %s", c->is_weak ? "weak" : "strong",
           one_model ? "of" : "by model size,", one_model ? p[0].workload : "several models",
           c->platform);
  open_page(f, title);
  fputs("<p class=\"sub\">", f);
  ts_svg_escape(f, c->study);
  fputs("</p>\n", f);
  heading(f, "Points");
  fputs("<table>\n<tr><th>model</th><th>GPUs</th><th>TP x PP x DP</th><th>batch</th>"
        "<th>iteration s</th><th>tokens/s</th><th>TFLOPS/GPU</th><th>MFU</th>"
        "<th>Megatron %</th><th>peak GiB</th><th>efficiency</th><th>goodput</th></tr>\n",
        f);
  for (int i = 0; i < c->n_points; i++) {
    fputs("<tr><td>", f);
    ts_svg_escape(f, p[i].workload);
    fprintf(f,
            "</td><td class=\"n\">%ld</td><td>%ldx%ldx%ld</td><td class=\"n\">%ld</td>"
            "<td class=\"n\">%.4f</td><td class=\"n\">%.0f</td><td class=\"n\">%.1f</td>"
            "<td class=\"n\">%.2f%%</td><td class=\"n\">%.2f%%</td><td class=\"n\">%.2f</td>"
            "<td class=\"n\">%.2f%%</td>",
            p[i].gpus, p[i].tp, p[i].pp, p[i].dp, p[i].global_batch, p[i].iteration_s,
            p[i].tokens_per_s, p[i].model_tflops_per_gpu, p[i].mfu_percent, p[i].megatron_percent,
            p[i].peak_memory_gib, 100 * p[i].efficiency);
    if (p[i].goodput >= 0) /* the platform models failures (workloads/reliability.h) */
      fprintf(f, "<td class=\"n\">%.2f%%</td></tr>\n", 100 * p[i].goodput);
    else
      fputs("<td>-</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  paragraph(f, TS_HTML_PEAK_NOTE);

  heading(f, "Scaling curve");
  long gpus[64];
  double speedup[64], efficiency[64];
  int n = c->n_points < 64 ? c->n_points : 64;
  for (int i = 0; i < n; i++) {
    gpus[i] = p[i].gpus;
    speedup[i] = p[i].speedup;
    efficiency[i] = p[i].efficiency;
  }
  ts_plot_scaling(f, c->is_weak, n, gpus, speedup, efficiency);

  heading(f, "Where the time goes");
  char names[64][96];
  const char *labels[64];
  double secs[64 * TS_CAT_COUNT];
  for (int i = 0; i < n; i++) {
    snprintf(names[i], sizeof names[i], "%ld GPUs", p[i].gpus);
    labels[i] = names[i];
    for (int k = 0; k < TS_CAT_COUNT; k++)
      secs[i * TS_CAT_COUNT + k] = p[i].breakdown_s[k];
  }
  ts_plot_breakdown(f, "Time breakdown per point (mean over ranks)", n, labels, secs);
  definitions(f, 0);
  close_page(f);
}

int ts_html_scale_report(const char *dir, const char *study, bool is_weak, const char *platform,
                         int n_points, const ts_scaling_point *points, ts_err *err) {
  scale_ctx c = {study, platform, is_weak, n_points, points};
  return ts_report_write_file(dir, "report.html", write_scale, &c, err);
}

typedef struct search_ctx {
  const char *title, *summary;
  int n;
  const ts_html_candidate *c;
} search_ctx;

static void write_search(FILE *f, const void *ctx) {
  const search_ctx *x = ctx;
  open_page(f, x->title);
  paragraph(f, x->summary);
  heading(f, "Best candidates");
  fputs("<table>\n<tr><th>rank</th><th>layout</th><th>analytic s</th><th>MFU</th>"
        "<th>Megatron %</th><th>simulated s</th><th>MFU</th><th>Megatron %</th>"
        "<th>peak GiB</th></tr>\n",
        f);
  for (int i = 0; i < x->n; i++) {
    const ts_html_candidate *c = &x->c[i];
    fprintf(f, "<tr><td class=\"n\">%d</td><td>", i + 1);
    ts_svg_escape(f, c->layout);
    fprintf(f,
            "</td><td class=\"n\">%.4f</td><td class=\"n\">%.2f%%</td><td class=\"n\">%.2f%%</td>",
            c->analytic_s, 100 * c->analytic_mfu, 100 * c->analytic_fraction);
    if (c->simulated_s > 0)
      fprintf(f, "<td class=\"n\">%.4f</td><td class=\"n\">%.2f%%</td><td class=\"n\">%.2f%%</td>",
              c->simulated_s, 100 * c->simulated_mfu, 100 * c->simulated_fraction);
    else
      fputs("<td></td><td></td><td></td>", f);
    fprintf(f, "<td class=\"n\">%.2f</td></tr>\n", c->peak_bytes / GIB);
  }
  fputs("</table>\n", f);
  paragraph(f, "analytic: the analytic fidelity (no contention, eager pipeline messages: "
               "optimistic); simulated: the full engine, for the best of them. " TS_HTML_PEAK_NOTE);
  heading(f, "Where the time goes (analytic estimate)");
  char(*names)[16] = calloc((size_t)x->n, sizeof *names);
  const char **labels = calloc((size_t)x->n, sizeof *labels);
  double *secs = calloc((size_t)x->n * TS_CAT_COUNT, sizeof(double));
  TS_ASSERT(names != NULL && labels != NULL && secs != NULL);
  for (int i = 0; i < x->n; i++) { /* by rank: the table above names the layouts */
    snprintf(names[i], sizeof names[i], "#%d", i + 1);
    labels[i] = names[i];
    memcpy(secs + i * TS_CAT_COUNT, x->c[i].breakdown_s, sizeof x->c[i].breakdown_s);
  }
  ts_plot_breakdown(f, "Estimated time breakdown per candidate (by rank)", x->n, labels, secs);
  free(names);
  free(labels);
  free(secs);
  definitions(f, 0);
  close_page(f);
}

int ts_html_search_report(const char *dir, const char *title, const char *summary, int n_shown,
                          const ts_html_candidate *shown, ts_err *err) {
  search_ctx c = {title, summary, n_shown, shown};
  return ts_report_write_file(dir, "report.html", write_search, &c, err);
}

/* The distinct values of axis a, in point order. */
static int distinct(const ts_html_sweep *s, int a, const char **out, int max) {
  int n = 0;
  for (int i = 0; i < s->n_points; i++) {
    const char *v = s->values[i * s->n_axes + a];
    bool seen = false;
    for (int k = 0; k < n && !seen; k++)
      seen = strcmp(out[k], v) == 0;
    if (!seen && n < max)
      out[n++] = v;
  }
  return n;
}

/* "tp=2, mbs=1": point i's values of every axis but a. */
static void others(const ts_html_sweep *s, int i, int a, char *out, size_t size) {
  size_t n = 0;
  out[0] = '\0';
  for (int k = 0; k < s->n_axes && n < size; k++)
    if (k != a)
      n += (size_t)snprintf(out + n, size - n, "%s%s=%s", n > 0 ? ", " : "", s->axes[k],
                            s->values[i * s->n_axes + k]);
}

/* Tokens/s per GPU along axis a, one series per combination of the other axes. */
static void sweep_plot(FILE *f, const ts_html_sweep *s, int a) {
  enum { MAX_X = 64, MAX_SERIES = 10 };
  const char *x[MAX_X];
  int n_x = distinct(s, a, x, MAX_X);
  if (n_x < 2)
    return;
  static char keys[MAX_SERIES][256];
  const char *labels[MAX_SERIES];
  double y[MAX_SERIES * MAX_X];
  int n_series = 0;
  for (int i = 0; i < MAX_SERIES * MAX_X; i++)
    y[i] = NAN;
  for (int i = 0; i < s->n_points; i++) {
    char key[256];
    others(s, i, a, key, sizeof key);
    int series = 0;
    while (series < n_series && strcmp(keys[series], key) != 0)
      series++;
    if (series == n_series) {
      if (n_series == MAX_SERIES)
        continue;
      snprintf(keys[n_series], sizeof keys[0], "%s", key[0] != '\0' ? key : "all");
      labels[n_series] = keys[n_series];
      n_series++;
    }
    const char *v = s->values[i * s->n_axes + a];
    for (int k = 0; k < n_x; k++)
      if (strcmp(x[k], v) == 0 && s->is_ok[i])
        y[series * n_x + k] = s->results[i].tokens_per_s / (double)s->results[i].gpus;
  }
  char title[160];
  snprintf(title, sizeof title, "Tokens/s per GPU along %s", s->axes[a]);
  ts_plot_sweep(f, title, s->axes[a], "tokens/s per GPU", n_x, x, n_series, labels, y);
}

static void write_sweep(FILE *f, const void *ctx) {
  const ts_html_sweep *s = ctx;
  open_page(f, s->title);
  fputs("<p class=\"sub\">", f);
  ts_svg_escape(f, s->subtitle);
  fputs("</p>\n", f);
  heading(f, "Points");
  fputs("<table>\n<tr><th>point</th>", f);
  for (int a = 0; a < s->n_axes; a++) {
    fputs("<th>", f);
    ts_svg_escape(f, s->axes[a]);
    fputs("</th>", f);
  }
  fputs("<th>GPUs</th><th>iteration s</th><th>tokens/s per GPU</th><th>TFLOPS/GPU</th>"
        "<th>MFU</th><th>Megatron %</th><th>peak GiB</th></tr>\n",
        f);
  for (int i = 0; i < s->n_points; i++) {
    fprintf(f, "<tr><td class=\"n\">%d</td>", i + 1);
    for (int a = 0; a < s->n_axes; a++) {
      fputs("<td>", f);
      ts_svg_escape(f, s->values[i * s->n_axes + a]);
      fputs("</td>", f);
    }
    const ts_scaling_point *r = &s->results[i];
    if (s->is_ok[i]) {
      fprintf(f,
              "<td class=\"n\">%ld</td><td class=\"n\">%.4f</td><td class=\"n\">%.1f</td>"
              "<td class=\"n\">%.1f</td><td class=\"n\">%.2f%%</td><td class=\"n\">%.2f%%</td>"
              "<td class=\"n\">%.2f</td>",
              r->gpus, r->iteration_s, r->tokens_per_s / (double)r->gpus, r->model_tflops_per_gpu,
              r->mfu_percent, r->megatron_percent, r->peak_memory_gib);
    } else {
      fputs("<td colspan=\"7\">", f);
      ts_svg_escape(f, s->errors[i] != NULL ? s->errors[i] : "not run");
      fputs("</td>", f);
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
  paragraph(f, TS_HTML_PEAK_NOTE);
  heading(f, "Along each axis");
  for (int a = 0; a < s->n_axes; a++)
    sweep_plot(f, s, a);
  definitions(f, 0);
  close_page(f);
}

int ts_html_sweep_report(const char *dir, const ts_html_sweep *s, ts_err *err) {
  return ts_report_write_file(dir, "report.html", write_sweep, s, err);
}
