/* plots: SVG figures; see plots.h. */
#include "plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/err.h"
#include "../workloads/layout.h"
#include "svg.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define WIDTH_PX 960
#define LEFT_PX 130.0
#define RIGHT_PX 30.0

/* Tableau 10 colours: distinct, and readable by most colour-blind viewers. */
const char *const ts_plot_category_colors[TS_CAT_COUNT] = {
    "#4e79a7", /* compute */
    "#edc948", /* recompute */
    "#b07aa1", /* optimizer */
    "#f28e2b", /* tp */
    "#e15759", /* pp */
    "#76b7b2", /* dp */
    "#9c755f", /* ep */
    "#ff9da7", /* cp */
    "#bab0ac", /* bubble */
    "#e8e8e8", /* idle */
};

static const char *const mem_colors[TS_MEM_COUNT] = {"#4e79a7", "#59a14f", "#b07aa1", "#f28e2b",
                                                     "#9c755f"};

void ts_plot_breakdown(FILE *out, const char *title, int n_bars, const char *const *labels,
                       const double *secs) {
  double bar_px = n_bars > 24 ? 10 : 20, top_px = 50;
  int height = (int)(top_px + n_bars * (bar_px + 4) + 60);
  double max_s = 0;
  for (int b = 0; b < n_bars; b++) {
    double total = 0;
    for (int c = 0; c < TS_CAT_COUNT; c++)
      total += secs[b * TS_CAT_COUNT + c];
    max_s = fmax(max_s, total);
  }
  ts_svg_frame f = {LEFT_PX,
                    top_px,
                    WIDTH_PX - LEFT_PX - RIGHT_PX,
                    n_bars * (bar_px + 4),
                    0,
                    ts_svg_nice_max(max_s),
                    0,
                    1,
                    false,
                    false};
  ts_svg_open(out, WIDTH_PX, height, title);
  ts_svg_text(out, WIDTH_PX / 2.0, 18, "middle", "title", title);
  for (int c = 0; c < TS_CAT_COUNT; c++)
    ts_svg_legend_item(out, LEFT_PX + c * 98.0, 40, ts_plot_category_colors[c],
                       ts_category_names[c]);
  double ticks[12];
  int n_ticks = ts_svg_ticks(0, f.x_hi, false, ticks, 8);
  ts_svg_axes(out, &f, ticks, n_ticks, NULL, 0, "seconds", "");
  for (int b = 0; b < n_bars; b++) {
    double y = top_px + b * (bar_px + 4) + 2, t = 0;
    for (int c = 0; c < TS_CAT_COUNT; c++) {
      double s = secs[b * TS_CAT_COUNT + c];
      if (s <= 0)
        continue;
      char tip[160];
      snprintf(tip, sizeof tip, "%s: %s %.4g s", labels[b], ts_category_names[c], s);
      ts_svg_rect(out, ts_svg_x(&f, t), y, ts_svg_x(&f, t + s) - ts_svg_x(&f, t), bar_px,
                  ts_plot_category_colors[c], tip);
      t += s;
    }
    ts_svg_text(out, LEFT_PX - 6, y + bar_px - 3, "end", bar_px < 12 ? "small" : "tick", labels[b]);
  }
  ts_svg_close(out);
}

void ts_plot_memory(FILE *out, long n_stages, const ts_memory *stage_memory, double limit_bytes) {
  const char *title = "Memory per GPU by pipeline stage";
  double max_gib = limit_bytes / GIB;
  for (long s = 0; s < n_stages; s++)
    max_gib = fmax(max_gib, stage_memory[s].total_bytes / GIB);
  ts_svg_frame f = {70,
                    50,
                    WIDTH_PX - 70 - RIGHT_PX,
                    260,
                    -0.5,
                    (double)n_stages - 0.5,
                    0,
                    ts_svg_nice_max(max_gib * 1.05),
                    false,
                    false};
  ts_svg_open(out, WIDTH_PX, 360, title);
  ts_svg_text(out, WIDTH_PX / 2.0, 18, "middle", "title", title);
  for (int c = 0; c < TS_MEM_COUNT; c++)
    ts_svg_legend_item(out, 70 + c * 110.0, 40, mem_colors[c], ts_mem_category_names[c]);
  ts_svg_legend_item(out, 70 + TS_MEM_COUNT * 110.0, 40, "#000000", "allocatable HBM (dashed)");
  double x_ticks[16], y_ticks[12];
  int n_x = 0;
  long stride = n_stages <= 16 ? 1 : (n_stages + 15) / 16;
  for (long s = 0; s < n_stages && n_x < 16; s += stride)
    x_ticks[n_x++] = (double)s;
  int n_y = ts_svg_ticks(0, f.y_hi, false, y_ticks, 7);
  ts_svg_axes(out, &f, x_ticks, n_x, y_ticks, n_y, "pipeline stage", "GiB per GPU");
  double slot = f.w_px / (double)n_stages, bar = fmax(1, slot * 0.7);
  for (long s = 0; s < n_stages; s++) {
    double x = ts_svg_x(&f, (double)s) - bar / 2, gib = 0;
    for (int c = 0; c < TS_MEM_COUNT; c++) {
      double part = stage_memory[s].bytes[c] / GIB;
      char tip[128];
      snprintf(tip, sizeof tip, "stage %ld: %s %.2f GiB (total %.2f GiB)", s,
               ts_mem_category_names[c], part, stage_memory[s].total_bytes / GIB);
      ts_svg_rect(out, x, ts_svg_y(&f, gib + part), bar,
                  ts_svg_y(&f, gib) - ts_svg_y(&f, gib + part), mem_colors[c], tip);
      gib += part;
    }
    double step = stage_memory[s].step_bytes - stage_memory[s].bytes[TS_MEM_ACTIVATIONS];
    if (step > 0) { /* the optimizer step's temporaries, beyond the activations they replace */
      char tip[128];
      snprintf(tip, sizeof tip,
               "stage %ld: the optimizer step's temporaries %.2f GiB (total %.2f GiB)", s,
               stage_memory[s].step_bytes / GIB, stage_memory[s].total_bytes / GIB);
      ts_svg_rect(out, x, ts_svg_y(&f, gib + step / GIB), bar,
                  ts_svg_y(&f, gib) - ts_svg_y(&f, gib + step / GIB), mem_colors[TS_MEM_OPTIMIZER],
                  tip);
    }
  }
  double hbm_y = ts_svg_y(&f, limit_bytes / GIB);
  ts_svg_line(out, f.x0_px, hbm_y, f.x0_px + f.w_px, hbm_y, "#000000", 1.5, true);
  ts_svg_close(out);
}

/* ---- pipeline Gantt ---- */

/* G_WGRAD: the zero-bubble schedules' weight-gradient passes (W), apart from the backward's
 * input gradients; G_FB: dualpipe's steps of one microbatch's forward with another's backward */
enum gantt_kind { G_FORWARD, G_BACKWARD, G_RECOMPUTE, G_COMM, G_OPTIMIZER, G_WGRAD, G_FB, G_KINDS };
static const char *const gantt_names[G_KINDS] = {
    "forward",   "backward",         "recomputation",        "communication",
    "optimizer", "weight gradients", "forward with backward"};
static const char *const gantt_colors[G_KINDS] = {"#4e79a7", "#59a14f", "#edc948", "#e15759",
                                                  "#b07aa1", "#9c755f", "#76b7b2"};

/* One row is rendered by pixel column, as trace viewers do: each column takes the kind that
 * filled most of its time, or stays empty (a bubble or a wait) when spans fill less than half
 * of it; neighbouring columns of one kind make one bar. The figure's size is then bounded by
 * its width, whatever the number of microbatches and layers. */
typedef struct gantt_column {
  double busy_s[G_KINDS];
  int block_first[G_KINDS], block_last[G_KINDS];
} gantt_column;

typedef struct gantt_row {
  const ts_svg_frame *f;
  const long *steps; /* the stage's pass order (ts_schedule_order) */
  long n_chunks;
  int n_blocks;
  long stage;
  int n_columns;
  gantt_column *columns;
} gantt_row;

/* "F12", "B3", "F12c1" or "sync" (the end-of-iteration block). */
static void block_name(const gantt_row *row, int block, char *out, size_t size) {
  if (block >= row->n_blocks - 1) {
    snprintf(out, size, "sync");
    return;
  }
  ts_schedule_step_name(row->steps[block], row->n_chunks, 0, out, size);
}

static void add_span(gantt_row *row, int kind, double t0_s, double t1_s, int block) {
  if (t1_s <= t0_s)
    return;
  double col_s = (row->f->x_hi - row->f->x_lo) / row->n_columns;
  int c0 = (int)fmin(t0_s / col_s, row->n_columns - 1);
  int c1 = (int)fmin(t1_s / col_s, row->n_columns - 1);
  for (int c = c0; c <= c1; c++) {
    gantt_column *col = &row->columns[c];
    double overlap = fmin(t1_s, (c + 1) * col_s) - fmax(t0_s, c * col_s);
    if (overlap <= 0)
      continue;
    if (col->busy_s[kind] == 0)
      col->block_first[kind] = block;
    col->busy_s[kind] += overlap;
    col->block_last[kind] = block;
  }
}

/* What a span shows as: TP collectives belong to the pass they serve; a receive shows only
 * its transfer (the wait before the sender posted is a bubble, left empty). */
static void add_event(gantt_row *row, const ts_event *ev, const ts_span *sp) {
  bool is_sync = sp->block >= row->n_blocks - 1;
  char step = is_sync ? 'B' : ts_schedule_step_pass(row->steps[sp->block]);
  int pass = step == 'F' ? G_FORWARD : step == 'W' ? G_WGRAD : step == 'X' ? G_FB : G_BACKWARD;
  switch ((ts_event_kind)ev->kind) {
  case TS_EV_COMPUTE:
    add_span(row,
             ev->category == TS_CAT_OPTIMIZER   ? G_OPTIMIZER
             : ev->category == TS_CAT_RECOMPUTE ? G_RECOMPUTE
                                                : pass,
             sp->start_s, sp->end_s, sp->block);
    break;
  case TS_EV_COLL: /* one overlapped with compute does not hold the compute stream */
    if (!ev->is_async)
      add_span(row, ts_group_is_in_pass(ev->group) ? pass : G_COMM, sp->start_s, sp->end_s,
               sp->block);
    break;
  case TS_EV_WAIT:
    add_span(row, G_COMM, sp->start_s, sp->end_s, sp->block);
    break;
  default:
    add_span(row, G_COMM, fmax(sp->start_s, sp->sent_s), sp->end_s, sp->block);
  }
}

/* The kind shown in column c, or -1 for none. */
static int column_kind(const gantt_row *row, int c) {
  const gantt_column *col = &row->columns[c];
  double col_s = (row->f->x_hi - row->f->x_lo) / row->n_columns, total = 0;
  int best = 0;
  for (int k = 0; k < G_KINDS; k++) {
    total += col->busy_s[k];
    if (col->busy_s[k] > col->busy_s[best])
      best = k;
  }
  return total >= 0.5 * col_s ? best : -1;
}

static void draw_row(FILE *out, const gantt_row *row, double y_px, double h_px) {
  double col_px = row->f->w_px / row->n_columns, col_s = row->f->x_hi / row->n_columns;
  for (int c = 0; c < row->n_columns;) {
    int kind = column_kind(row, c), end = c + 1;
    while (end < row->n_columns && column_kind(row, end) == kind)
      end++;
    if (kind >= 0) {
      int first = row->columns[c].block_first[kind], last = row->columns[end - 1].block_last[kind];
      char a[24], b[24], tip[160];
      block_name(row, first, a, sizeof a);
      block_name(row, last, b, sizeof b);
      snprintf(tip, sizeof tip, "stage %ld %s%s%s %s, %.6g-%.6g s", row->stage, a,
               first == last ? "" : "..", first == last ? "" : b, gantt_names[kind], c * col_s,
               end * col_s);
      double x = row->f->x0_px + c * col_px, w = (end - c) * col_px;
      ts_svg_rect(out, x, y_px, w, h_px, gantt_colors[kind], tip);
      if (first == last && kind != G_COMM && w >= 7.0 * (double)strlen(a) + 4)
        ts_svg_text(out, x + w / 2, y_px + h_px - 3, "middle", "bar", a);
    }
    c = end;
  }
}

void ts_plot_gantt(FILE *out, const ts_workload *wl, const ts_job *job, const ts_sim_result *sim) {
  const char *title = "Pipeline of one iteration, data-parallel replica 0 (tensor rank 0)";
  long *steps = malloc((size_t)(ts_schedule_n_blocks(wl) - 1) * sizeof(long));
  TS_ASSERT(steps != NULL);
  long n_rows = 0;
  for (long s = 0; s < wl->pp; s++)
    n_rows += sim->ranks[ts_layout_rank(wl, (ts_coords){0, 0, s})].spans != NULL;
  double row_px = n_rows > 32 ? 9 : n_rows > 16 ? 14 : 20, top_px = 50;
  int height = (int)(top_px + (double)n_rows * (row_px + 2) + 60);
  ts_svg_frame f = {LEFT_PX,
                    top_px,
                    WIDTH_PX - LEFT_PX - RIGHT_PX,
                    (double)n_rows * (row_px + 2),
                    0,
                    sim->iteration_s,
                    0,
                    1,
                    false,
                    false};
  ts_svg_open(out, WIDTH_PX, height, title);
  ts_svg_text(out, WIDTH_PX / 2.0, 18, "middle", "title", title);
  bool zero_bubble = wl->schedule == TS_SCHED_ZB_H1 || wl->schedule == TS_SCHED_ZB_V ||
                     wl->schedule == TS_SCHED_DUALPIPE;
  double legend_x = LEFT_PX; /* each item as wide as its label (about 7 px a character) */
  for (int k = 0; k < G_KINDS; k++)
    if ((k != G_WGRAD || zero_bubble) && (k != G_FB || wl->schedule == TS_SCHED_DUALPIPE)) {
      ts_svg_legend_item(out, legend_x, 40, gantt_colors[k], gantt_names[k]);
      legend_x += 34.0 + 7.0 * (double)strlen(gantt_names[k]);
    }
  double ticks[12];
  int n_ticks = ts_svg_ticks(0, sim->iteration_s, false, ticks, 9);
  ts_svg_axes(out, &f, ticks, n_ticks, NULL, 0, "seconds (gaps: pipeline bubbles and waits)", "");
  gantt_row row = {
      .f = &f, .steps = steps, .n_chunks = ts_workload_chunks(wl), .n_columns = (int)f.w_px};
  row.columns = malloc((size_t)row.n_columns * sizeof *row.columns);
  TS_ASSERT(row.columns != NULL);
  long row_index = 0;
  for (long s = 0; s < wl->pp; s++) {
    long rank = ts_layout_rank(wl, (ts_coords){0, 0, s});
    const ts_rank_result *res = &sim->ranks[rank];
    if (res->spans == NULL)
      continue;
    ts_schedule_order(wl->schedule, wl->pp, ts_workload_chunks(wl), s, ts_workload_microbatches(wl),
                      steps);
    row.n_blocks = job->programs[rank].n_blocks;
    row.stage = s;
    memset(row.columns, 0, (size_t)row.n_columns * sizeof *row.columns);
    for (long i = 0; i < res->n_spans; i++) {
      const ts_span *sp = &res->spans[i];
      add_event(&row, &job->programs[rank].blocks[sp->block].events[sp->event], sp);
    }
    double y = top_px + (double)row_index * (row_px + 2) + 1;
    draw_row(out, &row, y, row_px);
    char label[48];
    snprintf(label, sizeof label, "stage %ld (rank %ld)", s, rank);
    ts_svg_text(out, LEFT_PX - 6, y + row_px - 2, "end", row_px < 12 ? "small" : "tick", label);
    row_index++;
  }
  free(row.columns);
  free(steps);
  ts_svg_close(out);
}

void ts_plot_scaling(FILE *out, bool is_weak, int n_points, const long *gpus, const double *speedup,
                     const double *efficiency) {
  const char *title = is_weak ? "Weak scaling: throughput relative to the first point"
                              : "Strong scaling: speed-up over the first point";
  double n0 = (double)gpus[0], hi_x = (double)gpus[n_points - 1] / n0, hi_y = hi_x;
  for (int i = 0; i < n_points; i++)
    hi_y = fmax(hi_y, speedup[i]);
  /* Log2 axes need a positive range; a single point gets a range of one doubling. */
  double x_lo = n0 / 1.2, x_hi = fmax((double)gpus[n_points - 1] * 1.2, n0 * 2);
  ts_svg_frame f = {LEFT_PX, 50,      WIDTH_PX - LEFT_PX - RIGHT_PX, 300,  x_lo,
                    x_hi,    1 / 1.2, fmax(hi_y * 1.3, 2),           true, true};
  ts_svg_open(out, WIDTH_PX, 410, title);
  ts_svg_text(out, WIDTH_PX / 2.0, 18, "middle", "title", title);
  ts_svg_legend_item(out, LEFT_PX, 40, "#4e79a7", "simulated (labels: efficiency)");
  ts_svg_legend_item(out, LEFT_PX + 260, 40, "#888888", "ideal, N / N0 (dashed)");
  double x_ticks[64], y_ticks[16];
  for (int i = 0; i < n_points; i++)
    x_ticks[i] = (double)gpus[i];
  int n_y = ts_svg_ticks(1, f.y_hi, true, y_ticks, 12);
  ts_svg_axes(out, &f, x_ticks, n_points, y_ticks, n_y, "GPUs (log scale)",
              is_weak ? "throughput / throughput at N0" : "T(N0) / T(N)");
  ts_svg_line(out, ts_svg_x(&f, n0), ts_svg_y(&f, 1), ts_svg_x(&f, n0 * hi_x), ts_svg_y(&f, hi_x),
              "#888888", 1.5, true);
  for (int i = 1; i < n_points; i++)
    ts_svg_line(out, ts_svg_x(&f, (double)gpus[i - 1]), ts_svg_y(&f, speedup[i - 1]),
                ts_svg_x(&f, (double)gpus[i]), ts_svg_y(&f, speedup[i]), "#4e79a7", 2, false);
  for (int i = 0; i < n_points; i++) {
    double x = ts_svg_x(&f, (double)gpus[i]), y = ts_svg_y(&f, speedup[i]);
    char label[32];
    fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"#4e79a7\"><title>", x, y);
    snprintf(label, sizeof label, "%ld GPUs: x%.3f", gpus[i], speedup[i]);
    ts_svg_escape(out, label);
    fputs("</title></circle>\n", out);
    snprintf(label, sizeof label, "%.1f%%", 100 * efficiency[i]);
    ts_svg_text(out, x, y + 18, "middle", "tick", label);
  }
  ts_svg_close(out);
}

void ts_plot_sweep(FILE *out, const char *title, const char *x_title, const char *y_title, int n_x,
                   const char *const *x_labels, int n_series, const char *const *series_labels,
                   const double *y) {
  static const char *const colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  int shown = n_series < 10 ? n_series : 10;
  double hi = 0;
  for (int i = 0; i < shown * n_x; i++)
    if (isfinite(y[i]))
      hi = fmax(hi, y[i]);
  size_t longest = 0; /* long labels get a row each */
  for (int i = 0; i < shown; i++)
    longest = strlen(series_labels[i]) > longest ? strlen(series_labels[i]) : longest;
  int columns = longest > 38 ? 1 : 3, legend_rows = (shown + columns - 1) / columns;
  double top = 40 + 18.0 * legend_rows;
  ts_svg_frame f = {LEFT_PX,   top, WIDTH_PX - LEFT_PX - RIGHT_PX,    280,   -0.5,
                    n_x - 0.5, 0,   ts_svg_nice_max(hi > 0 ? hi : 1), false, false};
  ts_svg_open(out, WIDTH_PX, (int)(top + 350), title);
  ts_svg_text(out, WIDTH_PX / 2.0, 18, "middle", "title", title);
  for (int s = 0; s < shown; s++)
    ts_svg_legend_item(out, LEFT_PX + 270.0 * (s % columns), 40 + 18.0 * (s / columns), colors[s],
                       series_labels[s]);
  double y_ticks[16];
  int n_y = ts_svg_ticks(0, f.y_hi, false, y_ticks, 8);
  ts_svg_axes(out, &f, NULL, 0, y_ticks, n_y, x_title, y_title);
  for (int x = 0; x < n_x; x++)
    ts_svg_text(out, ts_svg_x(&f, x), f.y0_px + f.h_px + 16, "middle", "tick", x_labels[x]);
  for (int s = 0; s < shown; s++) {
    const double *v = y + s * n_x;
    for (int x = 1; x < n_x; x++)
      if (isfinite(v[x - 1]) && isfinite(v[x]))
        ts_svg_line(out, ts_svg_x(&f, x - 1), ts_svg_y(&f, v[x - 1]), ts_svg_x(&f, x),
                    ts_svg_y(&f, v[x]), colors[s], 2, false);
    for (int x = 0; x < n_x; x++)
      if (isfinite(v[x]))
        fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>\n", ts_svg_x(&f, x),
                ts_svg_y(&f, v[x]), colors[s]);
  }
  ts_svg_close(out);
}
