/* analytic: the `analytic` fidelity, the job's programs played without SimGrid.
 *
 * Each rank runs its program in order on its own clock, as the engine does, but nothing shares
 * a link: a collective ends when its last member arrives plus the alpha-beta time of the
 * algorithm the engine would pick (ts_coll_estimate_s: the group's routes' slowest hop and
 * largest latency), a pipeline message arrives latency + bytes / bottleneck after its send,
 * and a collective posted to the communication stream runs after the stream's previous one,
 * timed from this rank's post. Without contention it agrees with the other fidelities on
 * uncontended cases (the closed forms of tests/unit/test_engine.c); with contention it is
 * optimistic. It costs a few operations per event, for searches over many configurations.
 */
#ifndef TS_ANALYTIC_H
#define TS_ANALYTIC_H

#include "../../workloads/result.h"
#include "../../workloads/schedule.h"
#include "../network/platform.h"
#include "engine.h"

/* Plays job on pf analytically; fills *out like ts_engine_run (no SimGrid transfers, links or
 * routes are created: those counts are 0). */
int ts_analytic_run(const ts_platform *pf, const ts_job *job, const ts_engine_opts *opts,
                    ts_sim_result *out, ts_err *err);

#endif
