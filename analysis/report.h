/* report: a run's results for people (a short summary on stdout) and for programs
 * (result.json, schema_version 1). Output files are written whole or not at all: to a
 * temporary name in the same directory, then renamed.
 */
#ifndef TS_REPORT_H
#define TS_REPORT_H

#include <stdio.h>

#include "../workloads/err.h"
#include "../workloads/kernels.h"
#include "../workloads/power.h"
#include "metrics.h"

#define TS_RESULT_SCHEMA_VERSION 1

typedef struct ts_run_info {
  const char *platform_name;
  const char *gpu_model;
  const char *fidelity;
  const char *placement; /* "contiguous", "spread", "random" */
  long seed; /* of a random placement; -1 otherwise */
  long n_events, n_merged_events, n_transfers, n_links, n_routes;
  long n_ranks, n_played_ranks; /* node or rail play: fewer ranks played than the job has */
  const char *shortcut; /* ts_sim_result's; NULL: every rank played its own */
  long n_ring_collectives, n_hierarchical_collectives, n_tree_collectives;
  double overlap_slowdown; /* the one the engine applied */
  /* Compute x this: the job's slowest GPU against a typical one (gpu.speed_spread) */
  double slowest_gpu_slowdown;
  double speed_spread;
  /* The collective library and release the collectives were priced as ("rccl 2.17.1"; "ideal"
   * for a platform without a library) */
  const char *collectives;
  /* The kernels of one layer (forward and backward), the embedding, the head and the optimizer
   * step, by what priced them (ts_cost_kernel_sources). */
  long n_kernels_by_source[TS_KERNEL_SRC_COUNT];
  /* The platform's kernel table: where its times come from, and its file (NULL: none) */
  ts_kernel_provenance kernels_provenance;
  const char *kernels_path;
  /* What rebuilds the run (trainsim explain): its arguments, output options left out and paths
   * made absolute, then its --set overrides; digests (16 hex digits) of the files it read and
   * of the binary that simulated it. */
  int n_arguments;
  char **arguments;
  const char *files_digest, *binary_digest;
  long played_microbatches; /* periodic play (sim/simulate.h): microbatches played; 0: all */
  double periodic_error_s; /* periodic play's error estimate */
  double periodic_declined_error_s; /* a declined periodic play's estimate (0: none) */
  double periodic_declined_iteration_s; /* and the iteration it carried on to */
  /* The clock the GPU's power limit leaves its work, as a share of the boost clock, and each
   * power class's time over its time at the boost clock (workloads/power.h); power_clock 0:
   * the platform has no power model */
  double power_clock, power_stretch[TS_POWER_CLASS_COUNT];
  /* Attention dropout inside fused attention that the platform gives no price for
   * (gpu.attention_dropout): left out of the times */
  bool attention_dropout_unpriced;
} ts_run_info;

void ts_report_summary(FILE *out, const ts_workload *wl, const ts_run_info *info,
                       const ts_metrics *m);

/* What a user would want to be told about a run, each a sentence (the summary prints them as
 * "warning:" lines, result.json lists them): fewer microbatches per pipeline than stages (the
 * bubble is most of the iteration), a kernel table derived or modelled rather than measured,
 * attention dropout inside fused attention that the platform does not price.
 * Fills out (at most max) and returns how many. */
#define TS_REPORT_WARNING_SIZE 320
int ts_report_warnings(const ts_workload *wl, const ts_run_info *info,
                       char (*out)[TS_REPORT_WARNING_SIZE], int max);

/* The summary's figures as label and value, said the same way on stdout and in report.html.
 * Fills rows and returns how many (at most TS_REPORT_MAX_ROWS). */
#define TS_REPORT_MAX_ROWS 16
typedef struct ts_report_row {
  char label[48];
  char value[160];
} ts_report_row;
int ts_report_summary_rows(const ts_workload *wl, const ts_metrics *m, ts_report_row *rows);
/* Prints the per-stage memory table and the verdict (used when a layout does not fit). */
void ts_report_memory(FILE *out, const ts_workload *wl, const ts_metrics *m);
/* Creates dir if missing and checks that it is a writable directory (an input error on the
 * --out flag otherwise), so a long run does not end unable to write. */
int ts_report_prepare_dir(const char *dir, ts_err *err);
/* Output files are trainsim's only where it wrote them: each directory it writes into keeps
 * the names it wrote there in TS_REPORT_OWNED (one a line; updated under a lock on
 * TS_REPORT_OWNED.lock, so that a study's processes may write into one directory at once).
 * A file there that trainsim did not write (a user's own, or one left by another program), a
 * symbolic link or anything but a regular file is never overwritten or removed. */
#define TS_REPORT_OWNED ".trainsim-outputs"
/* Removes dir/name if trainsim wrote it there: an output an earlier run left that this run does
 * not write, which would otherwise sit beside the new results. A file of that name trainsim
 * did not write stays. Returns -1 with an error when it cannot remove its own. */
int ts_report_remove_stale(const char *dir, const char *name, ts_err *err);
/* Checks before a command runs that it may write each of names (NULL-terminated) into dir:
 * absent, or trainsim's own regular file there; an input error on --out otherwise. */
int ts_report_check_outputs(const char *dir, const char *const *names, ts_err *err);
/* Writes dir/name whole or not at all: through `write` into a temporary file in dir, then
 * renamed, with SIGINT/SIGTERM/SIGHUP held back meanwhile. An input error (on --out) when
 * dir/name exists and trainsim did not write it, or is a link or not a regular file. */
typedef void (*ts_report_writer)(FILE *f, const void *ctx);
int ts_report_write_file(const char *dir, const char *name, ts_report_writer write, const void *ctx,
                         ts_err *err);
/* Writes result.json into dir (created if missing). */
int ts_report_write_json(const char *dir, const ts_workload *wl, const ts_run_info *info,
                         const ts_metrics *m, ts_err *err);

/* What `trainsim explain` reads back from a result.json: the figures, and what rebuilds the run
 * (ts_run_info's arguments and digests). */
typedef struct ts_report_record {
  double iteration_s, breakdown_s[TS_CAT_COUNT];
  double slowest_gpu_slowdown; /* simulation.slowest_gpu_slowdown; 1 where absent */
  long n_stages;
  double *stage_work_s; /* [stage]: compute and recomputation, mean over the stage's ranks */
  int n_arguments;
  char **arguments;
  char files_digest[17], binary_digest[17];
} ts_report_record;
/* Reads dir/result.json into *out (free with ts_report_record_fini). An input error names the
 * file and what is missing or out of range: no result.json, one written before `explain`
 * existed, a truncated, tampered or foreign one. */
int ts_report_read_json(const char *dir, ts_report_record *out, ts_err *err);
void ts_report_record_fini(ts_report_record *r);

#endif
