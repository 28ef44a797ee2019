/* run: `trainsim run WORKLOAD [options]`, one configuration simulated and reported (summary on
 * stdout, result.json, and on request timeline.json and report.html). `memory` reads the same
 * arguments, so their parsing and the loading of the inputs they name live here too.
 */
#ifndef TS_RUN_H
#define TS_RUN_H

#include <stdbool.h>

#include "../sim/engine/coll.h"
#include "../sim/network/placement.h"
#include "../sim/network/platform.h"
#include "../sim/simulate.h"
#include "../workloads/err.h"
#include "../workloads/result.h"
#include "../workloads/workload.h"
#include "args.h"
#include "digest.h"

/* The arguments of `run` (and of `memory`, a subset). */
typedef struct ts_run_args {
  const char *workload;
  const char *platform;
  const char *out_dir;
  ts_fidelity fidelity;
  bool ignore_memory;
  bool is_forced;
  bool is_playing_every_rank; /* --play-every-rank: no node play (sim/engine/engine.h) */
  bool is_periodic; /* --periodic: periodic play kept whatever its estimate (sim/simulate.h) */
  bool is_every_microbatch; /* --play-every-microbatch: no periodic play */
  bool is_quiet; /* --quiet: no progress line */
  bool is_timeline;
  bool is_report;
  bool is_explain; /* --explain: `trainsim explain` on the result, once written */
  bool is_window_set, is_seed_set;
  const char *timeline_ranks;
  double window_start_s, window_end_s; /* --timeline-window; end INFINITY when not given */
  double overlap_slowdown; /* < 0: the platform's collectives.overlap_slowdown */
  ts_coll_algo collectives;
  ts_placement placement;
  long seed;
  ts_overrides ov;
} ts_run_args;

/* `run` in the command table (args.h), and its inputs group (--platform, --gpus, --dp), which
 * the commands that read run's layout share. */
extern const ts_command ts_run_command;
extern const ts_flag ts_run_input_flags[];

/* Parses the arguments of command c (run, or one taking a subset of run's flags: memory,
 * profile) into *a; returns 1 when help was printed, 0 to go on, -1 with an error. */
int ts_run_parse(const ts_command *c, int argc, char **argv, ts_run_args *a, ts_err *err);
/* Parses the arguments result.json records (ts_run_info.arguments) back into *a (registering
 * their --set overrides); 0, or -1 with an error. */
int ts_run_parse_recorded(int n, char **arguments, ts_run_args *a, ts_err *err);
/* The platform and the resolved workload the arguments name, checked against each other (the
 * layout's GPUs exist, the GPU has a peak for the workload's precision). */
int ts_run_load_inputs(const ts_run_args *a, ts_platform *pf, ts_workload *wl, ts_err *err);

/* The job pipeline's options a run's arguments give (the outputs' spans included). */
ts_simulate_opts ts_run_simulate_opts(const ts_run_args *a);

/* Digests the files a's run reads (workload, platform or the built-in one, kernel table) into
 * d: what a stored result depends on besides the flags and the binary. */
void ts_run_digest_inputs(const ts_run_args *a, const ts_platform *pf, ts_digest *d);

/* For the commands that read run's layout flags and simulate nothing (memory, profile): parses
 * argv by c's tables, loads and checks the inputs into *pf and *wl. Returns 0 to go on, -1 when
 * help was printed, or the exit status after printing the error. */
int ts_run_load_layout(const ts_command *c, int argc, char **argv, ts_platform *pf,
                       ts_workload *wl);

/* Runs `trainsim run ...` (argv after "run"); returns the exit status. */
int ts_run_main(int argc, char **argv);

#endif
