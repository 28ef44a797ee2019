/* progress: one status line on stderr for commands that run for more than a moment, rewritten
 * in place with a carriage return:
 *
 *   run: 41%, 6.3e+06 of 1.54e+07 events, simulated 21.38 s, 0:02 elapsed, ETA 0:03
 *
 * It is shown only when stderr is a terminal and --quiet was not given, so files, pipes and
 * CI logs get nothing extra and every output stays byte-identical. Updates are throttled to a
 * few per second of wall time; the line is erased before anything goes to stdout and at the
 * end. Wall time never reaches a result.
 */
#ifndef TS_PROGRESS_H
#define TS_PROGRESS_H

#include <stdbool.h>

#include "../sim/simulate.h"

typedef struct ts_progress {
  bool is_on;
  double start_s; /* wall time at init (monotonic clock) */
  double last_s; /* wall time of the last update shown; < 0: none yet */
  int shown_chars; /* length of the line on the terminal, to erase it */
  char label[96]; /* what is running, e.g. "run" or "scale: point 2 of 7, 1024 GPUs" */
} ts_progress;

/* Starts the clock; the line is shown when stderr is a terminal and !is_quiet. */
void ts_progress_init(ts_progress *p, const char *label, bool is_quiet);
/* Shows the label, the share done when 0 < done <= total, `what`, the time elapsed and, with
 * the share, an ETA extrapolated from the pace so far. Skipped when the last update shown is
 * under 0.2 s old. */
void ts_progress_show(ts_progress *p, double done, double total, const char *what);
/* Whether a show now would print (on, and the last update old enough): callers that format
 * their text at a high rate ask first. */
bool ts_progress_is_due(const ts_progress *p);
/* Erases the line (call before printing to stdout); the next show prints again at once. */
void ts_progress_clear(ts_progress *p);

/* For ts_engine_opts.on_progress (ctx: a ts_progress_engine): shows the events played against
 * the events of the whole job, and the simulated time reached. */
typedef struct ts_progress_engine {
  ts_progress *progress;
  double total_events;
} ts_progress_engine;
void ts_progress_engine_cb(void *ctx, double events_played, double simulated_s);
/* Hooks a simulation's progress to pe's line (when it is on): "building the platform" once the
 * job's events are counted, then the events played against them. */
void ts_progress_follow(ts_progress_engine *pe, ts_simulate_opts *opts);

#endif
