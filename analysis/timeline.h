/* timeline: timeline.json in the Chrome trace event format, for ui.perfetto.dev and
 * chrome://tracing.
 *
 * One process per node, one thread per GPU stream (compute, tp, pp, dp) of each traced rank.
 * Spans are named by pass and microbatch (F12 = forward of microbatch 12, B12 backward, R12
 * its recomputation, "sync" the end-of-iteration gradient sync and optimizer step), layer and
 * piece ("F12 L3 attn"); collectives carry their operation, bytes, group size and algorithm,
 * receives the time spent waiting for the sender (bubble). Pipeline transfers are drawn as a
 * send slice on the sender's pp thread and a receive slice on the receiver's, joined by a flow
 * arrow (flow_out / flow_in with a bind_id) when both ranks are written. Times in microseconds.
 * A subset of ranks and a time window keep the file of a large run usable.
 */
#ifndef TS_TIMELINE_H
#define TS_TIMELINE_H

#include "../workloads/err.h"
#include "../workloads/result.h"
#include "../workloads/schedule.h"
#include "../workloads/workload.h"

/* What to keep of the traced ranks' spans. */
typedef struct ts_timeline_opts {
  const bool *is_shown; /* [rank]: write this rank (if traced); NULL = every traced rank */
  double window_start_s, window_end_s; /* spans overlapping this window only */
} ts_timeline_opts;

/* Writes dir/timeline.json from the spans of sim's traced ranks that opts selects. */
int ts_timeline_write(const char *dir, const ts_workload *wl, const ts_job *job,
                      const ts_sim_result *sim, int gpus_per_node, const ts_timeline_opts *opts,
                      ts_err *err);

#endif
