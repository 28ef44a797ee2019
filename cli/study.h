/* study: configurations simulated in child processes, for commands that simulate several
 * (SimGrid runs one simulation per process). Each child checks memory and the event limit,
 * builds the schedule, runs the engine and sends back the figures a study tabulates. */
#ifndef TS_STUDY_H
#define TS_STUDY_H

#include "../analysis/scaling.h"
#include "../sim/engine/engine.h"
#include "../sim/network/placement.h"
#include "../sim/network/platform.h"
#include "../workloads/workload.h"

/* How a point is simulated beyond its inputs: run's options. */
typedef struct ts_study_opts {
  ts_fidelity fidelity;
  ts_placement placement;
  long seed; /* of a random placement */
  ts_coll_algo collectives;
  double overlap_slowdown; /* < 0: the platform's collectives.overlap_slowdown */
  /* Analytic fidelity only: one pipeline (tensor rank 0 of replica 0) plays for all, the
   * others sharing its timeline: exact but for route latencies when the job is symmetric, and
   * much faster (search's estimates; docs/performance.md). */
  bool is_one_pipeline;
  bool ignore_memory; /* simulate a layout that does not fit (run's --ignore-memory) */
  bool is_forced; /* no event limit (run's --force) */
  bool is_playing_every_rank; /* run's --play-every-rank */
} ts_study_opts;

/* The ranks' representatives when one pipeline plays (ts_engine_opts.representative): a new
 * array of wl->n_gpus ranks, each tensor rank 0 of replica 0 of its stage. */
long *ts_study_one_pipeline(const ts_workload *wl);

/* A pool of points simulated in up to `jobs` child processes at once. load runs in a point's
 * child (after fork: it may load files and register --set overrides for itself alone) and
 * fills its platform, workload and options (given as run's defaults: hybrid, contiguous,
 * auto), or returns -1 with an error; done runs in the
 * parent as each point ends (rc 0 with *point, or -1 with *err), in the order they end. A
 * signal (SIGINT, SIGTERM, SIGHUP) stops the points running and launches no more: the return
 * value is then that signal (0: all ran), and the caller reports what finished and calls
 * ts_study_stopped. */
typedef int (*ts_study_load_fn)(void *ctx, int i, ts_platform *pf, ts_workload *wl,
                                ts_study_opts *opts, ts_err *err);
typedef void (*ts_study_done_fn)(void *ctx, int i, int rc, const ts_scaling_point *point,
                                 const ts_err *err);
/* label (may be NULL: no progress line) names point i on the progress line, which only a
 * pool of one job shows (points running side by side would share a terminal line). */
typedef void (*ts_study_label_fn)(void *ctx, int i, char *out, size_t size);
int ts_study_pool(int n, const int *pending, int jobs, ts_study_load_fn load, ts_study_done_fn done,
                  ts_study_label_fn label, void *ctx);
/* For done callbacks that stop at the first failure: keeps point i's error when no point before
 * it failed (points end in any order). *failed is -1 until one fails. */
void ts_study_keep_first_failure(int i, const ts_err *err, int *failed, ts_err *kept);
/* Says on stderr that a study stopped by signal sig while simulating `what`, and ends the
 * process by that signal. */
_Noreturn void ts_study_stopped(int sig, const char *what);

#endif
