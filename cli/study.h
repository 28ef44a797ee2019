/* study: one configuration simulated in a child process, for commands that simulate several
 * (SimGrid runs one simulation per process). The child checks memory and the event limit,
 * builds the schedule, runs the engine and sends back the figures a study tabulates. */
#ifndef TS_STUDY_H
#define TS_STUDY_H

#include "../analysis/scaling.h"
#include "../sim/engine/engine.h"
#include "../sim/network/placement.h"
#include "../sim/network/platform.h"
#include "../workloads/workload.h"

/* Simulates wl (resolved) on pf in a child process. Returns 0 with *out filled (all but
 * efficiency and speed-up), or -1 with the child's error (input errors such as a layout that
 * does not fit). With a progress_label, the child shows its progress under that label
 * (progress.h: only on a terminal); NULL shows none. */
int ts_study_point(const ts_platform *pf, const ts_workload *wl, ts_fidelity fidelity,
                   const char *progress_label, ts_scaling_point *out, ts_err *err);

#endif
