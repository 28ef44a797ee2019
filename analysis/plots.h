/* plots: the SVG figures of a report (DESIGN.md, "Outputs"): time breakdown bars, memory per
 * pipeline stage against HBM, a pipeline Gantt chart of one iteration, and scaling curves with
 * the ideal line. Each writes one complete <svg> element to out.
 */
#ifndef TS_PLOTS_H
#define TS_PLOTS_H

#include <stdbool.h>
#include <stdio.h>

#include "../workloads/memory.h"
#include "../workloads/result.h"
#include "../workloads/schedule.h"
#include "../workloads/workload.h"

/* Fill colour of each time category, the same in every figure. */
extern const char *const ts_plot_category_colors[TS_CAT_COUNT];

/* Horizontal stacked bars, one per label: secs[bar * TS_CAT_COUNT + category]. */
void ts_plot_breakdown(FILE *out, const char *title, int n_bars, const char *const *labels,
                       const double *secs);

/* Stacked bars of weights, gradients, optimizer states and activations per stage (GiB) with
 * what of the HBM the framework can allocate as a dashed line. */
void ts_plot_memory(FILE *out, long n_stages, const ts_memory *stage_memory, double limit_bytes);

/* One row per pipeline stage of data-parallel replica 0 (tensor rank 0): forward, backward,
 * recomputation, communication and optimizer spans; empty stretches are bubbles and waits.
 * Rows whose rank was not traced (no spans) are left out. Drawn by pixel column (the kind that
 * filled most of it), so the figure stays small for any number of microbatches. */
void ts_plot_gantt(FILE *out, const ts_workload *wl, const ts_job *job, const ts_sim_result *sim);

/* Speed-up over the first point against GPUs (both log2), with the ideal line N / N0 and
 * each point's efficiency written next to it. speedup[0] is 1. */
void ts_plot_scaling(FILE *out, bool is_weak, int n_points, const long *gpus, const double *speedup,
                     const double *efficiency);

/* A sweep along one axis: y (a rate) against the axis's values, placed evenly in the order
 * given (categories: numbers, sizes or words), one line per series (the other axes' values);
 * y[s * n_x + x] is NAN where that point did not run. At most 10 series are drawn. */
void ts_plot_sweep(FILE *out, const char *title, const char *x_title, const char *y_title, int n_x,
                   const char *const *x_labels, int n_series, const char *const *series_labels,
                   const double *y);

#endif
