/* timeline: timeline.json in the Chrome trace event format, for ui.perfetto.dev and
 * chrome://tracing.
 *
 * One process per node, one thread per GPU stream (compute, tp, pp, dp) of each traced rank.
 * Spans are named by pass and microbatch (F12 = forward of microbatch 12, B12 backward, R12
 * its recomputation, "sync" the end-of-iteration gradient sync and optimizer step), layer and
 * piece ("F12 L3 attn"); collectives carry their operation, bytes, group size and algorithm,
 * receives the time spent waiting for the sender (bubble). Pipeline transfers are drawn as a
 * send slice on the sender's pp thread and a receive slice on the receiver's, joined by a flow
 * arrow (flow_out / flow_in with a bind_id) when both ranks are traced. Times in microseconds.
 */
#ifndef TS_TIMELINE_H
#define TS_TIMELINE_H

#include "../workloads/err.h"
#include "../workloads/result.h"
#include "../workloads/schedule.h"
#include "../workloads/workload.h"

/* Writes dir/timeline.json from the spans of the traced ranks of sim. */
int ts_timeline_write(const char *dir, const ts_workload *wl, const ts_job *job,
                      const ts_sim_result *sim, int gpus_per_node, ts_err *err);

#endif
