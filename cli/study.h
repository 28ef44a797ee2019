/* study: configurations simulated in child processes, for commands that simulate several
 * (SimGrid runs one simulation per process). Each child runs its point through the job
 * pipeline (sim/simulate.h) and sends back the figures a study tabulates. */
#ifndef TS_STUDY_H
#define TS_STUDY_H

#include "../analysis/scaling.h"
#include "../sim/network/platform.h"
#include "../sim/simulate.h"
#include "../workloads/workload.h"

/* A pool of points simulated in up to `jobs` child processes at once. load runs in a point's
 * child (after fork: it may load files and register --set overrides for itself alone) and
 * fills its platform, workload and options (given as ts_simulate_defaults), or returns -1
 * with an error; done runs in the
 * parent as each point ends (rc 0 with *point, or -1 with *err), in the order they end. A
 * signal (SIGINT, SIGTERM, SIGHUP) stops the points running and launches no more: the return
 * value is then that signal (0: all ran), and the caller reports what finished and calls
 * ts_study_stopped. */
typedef int (*ts_study_load_fn)(void *ctx, int i, ts_platform *pf, ts_workload *wl,
                                ts_simulate_opts *opts, ts_err *err);
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
